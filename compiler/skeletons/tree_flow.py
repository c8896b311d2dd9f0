"""A MILP-friendly flow encoding of depth-limited trees, after Florio et al. (AAAI 2023).

It is the decision-diagram MILP of the paper on a *tree* skeleton: every internal node of
the perfect tree of depth D has its own two successors, and every node may instead send
its rows to a class terminal (the paper's long arcs). Input: the training buckets (as in
``tree_paths``), the depth, the number of classes. Output: IR variables and rows, and the
same handles as the path encoding (errors, leaves, decode).

Variables (the paper's names where they exist):
  s[q]        node q splits (the paper's d_v for internal nodes)
  p[q, k]     node q is a leaf of class k (its long arc to terminal k)
  e[q, j]     node q tests binary feature j (eq. 15: sum_j e[q, j] = s[q])
  f[b, q]     flow of bucket b into node q, in [0, 1] (eqs 1-3)
  g[b, q, k]  flow of bucket b from q into terminal k, in [0, 1] (eq. 17)

Rows:
  structure   s[1] + sum_k p[1, k] = 1; for a child c of q: s[c] + sum_k p[c, k] = s[q]
  (15)        sum_j e[q, j] = s[q]
  (1)-(3)     f[b, 1] = 1; f[b, q] = f[b, 2q] + f[b, 2q + 1] + sum_k g[b, q, k]
  (13)-(16)   for 0/1 features the hyperplane of a univariate split is fixed, so the
              indicator rows reduce to routing rows: f[b, 2q + 1] <= sum_{j: x_bj = 1} e[q, j]
              (the positive side) and f[b, 2q] <= sum_{j: x_bj = 0} e[q, j]
  sinks       g[b, q, k] <= p[q, k]
Objective handles: errors(G) = sum_b sum_k W[b, k] * (1 - sum_q g[b, q, k]) (eq. 18, first
term, with the mismatch penalty phi = 0/1 and row weights); leaves = sum p; nodes =
leaves - 1 = sum s (the paper's regulariser counts activated internal nodes).

Given binary s, p, e every bucket has one path, so the flows are integral (the paper's
Theorem 1); they are continuous variables, which keeps the branch-and-bound small.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..ir import ModelBuilder, Origin, VarKind
from .tree_paths import Bucket

ONE = Fraction(1)


@dataclass(frozen=True)
class TreeFlowEncoding:
    depth: int
    features: tuple[int, ...]
    n_classes: int
    buckets: tuple[Bucket, ...]
    s: dict[int, int]
    p: dict[tuple[int, int], int]
    e: dict[tuple[int, int], int]
    g: dict[tuple[int, int, int], int]

    @property
    def n_nodes(self) -> int:
        return (1 << (self.depth + 1)) - 1

    def errors(self, rows_mask: np.ndarray | None = None) -> tuple[list[tuple[Fraction, int]], Fraction]:
        terms: list[tuple[Fraction, int]] = []
        constant = Fraction(0)
        for b, bk in enumerate(self.buckets):
            if rows_mask is not None and not rows_mask[bk.rows[0]]:
                continue
            for k, w in bk.class_weight:
                constant += w
                terms.extend((-w, self.g[b, q, k]) for q in range(1, self.n_nodes + 1))
        return terms, constant

    def leaves(self) -> tuple[list[tuple[Fraction, int]], Fraction]:
        return [(ONE, v) for v in self.p.values()], Fraction(0)

    def decode(self, values, data, input_columns):
        from ..classifier import Leaf, Split
        from ..decode import BOTTOM, finish

        def on(var: int) -> bool:
            return float(values[var]) > 0.5

        internal = (1 << self.depth) - 1

        def build(q: int):
            if q <= internal and on(self.s[q]):
                j = next((j for j in range(len(self.features)) if on(self.e[q, j])), BOTTOM)
                return Split(j, build(2 * q + 1), build(2 * q))
            return Leaf(next((k for k in range(self.n_classes) if on(self.p[q, k])), 0))

        rows = np.array(sorted(r for bk in self.buckets for r in bk.rows), dtype=np.int64)
        return finish(build(1), [data.features[f] for f in self.features], data, rows, input_columns)


def encode_tree_flow(b: ModelBuilder, depth: int, features: list[int], buckets: tuple[Bucket, ...],
                     n_classes: int) -> TreeFlowEncoding:
    internal = (1 << depth) - 1
    n_nodes = (1 << (depth + 1)) - 1
    s = {q: b.new_bool(("s", q)) for q in range(1, internal + 1)}
    p = {(q, k): b.new_bool(("p", q, k)) for q in range(1, n_nodes + 1) for k in range(n_classes)}
    e = {(q, j): b.new_bool(("e", q, j)) for q in range(1, internal + 1) for j in range(len(features))}

    def row(terms, op, rhs, role):
        b.linear([(Fraction(c), v) for c, v in terms], op, Fraction(rhs), Origin(role))

    for q in range(1, n_nodes + 1):  # structure: a node exists iff its parent splits
        here = [(1, p[q, k]) for k in range(n_classes)] + ([(1, s[q])] if q <= internal else [])
        if q == 1:
            row(here, "==", 1, ("node", q))
        else:
            row(here + [(-1, s[q // 2])], "==", 0, ("node", q))
    for q in range(1, internal + 1):  # (15)
        row([(1, e[q, j]) for j in range(len(features))] + [(-1, s[q])], "==", 0, ("select", q))

    g: dict[tuple[int, int, int], int] = {}
    for bi, bk in enumerate(buckets):
        f = {q: b.new_var(("f", bi, q), VarKind.REAL, 0.0, 1.0) for q in range(2, n_nodes + 1)}
        for q in range(1, n_nodes + 1):
            for k in range(n_classes):
                g[bi, q, k] = b.new_var(("g", bi, q, k), VarKind.REAL, 0.0, 1.0)
                row([(1, g[bi, q, k]), (-1, p[q, k])], "<=", 0, ("sink", bi, q, k))
        for q in range(1, n_nodes + 1):  # (1)-(3): conservation
            outflow = [(1, g[bi, q, k]) for k in range(n_classes)]
            if q <= internal:
                outflow += [(1, f[2 * q]), (1, f[2 * q + 1])]
                ones = [(-1, e[q, j]) for j in range(len(features)) if bk.x[j]]
                zeros = [(-1, e[q, j]) for j in range(len(features)) if not bk.x[j]]
                row([(1, f[2 * q + 1])] + ones, "<=", 0, ("route+", bi, q))
                row([(1, f[2 * q])] + zeros, "<=", 0, ("route-", bi, q))
            if q == 1:
                row(outflow, "==", 1, ("flow", bi, q))
            else:
                row(outflow + [(-1, f[q])], "==", 0, ("flow", bi, q))
    return TreeFlowEncoding(depth, tuple(features), n_classes, buckets, s, p, e, g)
