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
  used        with ``exact_size`` (a program that can push the size up, ``polarity``):
              p[q, k] <= sum_b g[b, q, k], a leaf receives rows (so no split has an empty
              side: w.l.o.g., such a split decodes to its other side, which fits too)
Objective handles: errors(G) = sum_b sum_k W[b, k] * (1 - sum_q g[b, q, k]) (eq. 18, first
term, with the mismatch penalty phi = 0/1 and row weights); leaves = sum p; nodes =
leaves - 1 = sum s (the paper's regulariser counts activated internal nodes). Without
``used``, sum p may count leaves no row reaches, which the decoded tree drops: exact only
where the program pushes the size down.

Given binary s, p, e every bucket has one path, so the flows are integral (the paper's
Theorem 1); they are continuous variables, which keeps the branch-and-bound small.

Multivariate splits (S6) use the paper's hyperplanes: a[q] in [-1, 1]^d, b[q] in [-1, 1]
over the inputs normalised to [0, 1] (numeric columns raw, categorical columns one-hot),
the level variables lambda[b, l] (eqs 4-5) and the split rows (13)-(14) written with
big-M on the flows: a.z + eps <= b + M (1 - f-) and a.z >= b - M (1 - f+), where
M = sum_j z_bj + 1 + eps is the largest |a.z - b| the bounds allow for bucket b, and
eps = 1e-4 as in the paper.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterator

import numpy as np

from ..ir import ModelBuilder, Origin, VarKind
from .tree_paths import Bucket

ONE = Fraction(1)
EPS = Fraction(1, 10**4)


@dataclass(frozen=True)
class HyperplaneInputs:
    """The inputs of multivariate splits: one dimension per numeric column (raw value) or
    per category of a categorical column, each scaled to [0, 1] by (x - lo) / (hi - lo)."""

    dims: tuple[tuple[str, str | None], ...]  # (column, category or None)
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    Z: np.ndarray  # rows x dims, in [0, 1]

    @staticmethod
    def of(data, allowed: np.ndarray) -> "HyperplaneInputs":
        dims, lo, hi, cols = [], [], [], []
        seen = set()
        for f in _allowed_kinds(data, allowed):
            if (f.column, f.category) in seen:
                continue
            if f.kind == "category":
                seen.add((f.column, f.category))
                dims.append((f.column, f.category))
                lo.append(0.0)
                hi.append(1.0)
                cols.append((data.table.strings(f.column) == f.category).astype(float))
            elif (f.column, None) not in seen:
                seen.add((f.column, None))
                v = data.table.numbers(f.column)
                if v.max() > v.min():
                    dims.append((f.column, None))
                    lo.append(float(v.min()))
                    hi.append(float(v.max()))
                    cols.append((v - v.min()) / (v.max() - v.min()))
        Z = np.column_stack(cols) if cols else np.zeros((data.n_rows, 0))
        return HyperplaneInputs(tuple(dims), tuple(lo), tuple(hi), Z)


def _allowed_kinds(data, allowed: np.ndarray) -> Iterator:
    """The allowed features, but of a column's threshold block only its first allowed one
    (its raw column is one input however many cuts it has)."""
    from ..data import ThresholdBlock

    for start, block in data.features.blocks():
        if isinstance(block, ThresholdBlock):
            hits = np.flatnonzero(allowed[start:start + len(block)])
            if hits.size:
                yield block.feature(int(hits[0]))
            continue
        yield from (f for j, f in enumerate(block, start) if allowed[j])


def oblique_feature(P: HyperplaneInputs, a: np.ndarray, b: float, zb: np.ndarray, sides: np.ndarray):
    """The oblique ``Feature`` of a solved hyperplane ``a.z >= b`` (z in [0, 1]^d), in raw
    units, that routes the solver's buckets exactly as the solver did: ``zb`` holds the
    inputs of the buckets reaching the node, ``sides`` their side (True = positive). The
    threshold is re-centred between the largest a.z on the negative side and the smallest
    on the positive side (the solver's b is used only when no bucket reaches the node)."""
    from ..data import Feature

    d = len(P.dims)
    proj = zb @ a if zb.size else np.zeros(0)
    neg, pos = proj[~sides], proj[sides]
    if neg.size and pos.size:
        thr = (neg.max() + pos.min()) / 2
    elif pos.size:
        thr = pos.min() - 0.5
    else:
        thr = (neg.max() + 0.5) if neg.size else b
    scale = [hi - lo for lo, hi in zip(P.lo, P.hi)]
    coefs = [a[j] / scale[j] for j in range(d)]
    shift = sum(a[j] * P.lo[j] / scale[j] for j in range(d))
    norm = max((abs(c) for c in coefs), default=1.0) or 1.0  # a positive rescaling: same test
    terms = tuple((col, cat, float(c / norm)) for (col, cat), c in zip(P.dims, coefs) if abs(c) > 1e-12 * norm)
    return Feature("+".join(dict.fromkeys(col for col, _, _ in terms)), "oblique",
                   threshold=float((thr + shift) / norm), terms=terms)


def hyperplane_rows(row, bk: Bucket, tag: tuple, neg: int, pos: int, active: int, a: list[int], hb: int) -> None:
    """Florio's (13)-(14) for one bucket at one node, with the tightest big-M of the bounds
    (a in [-1, 1]^d, b in [-1, 1], z in [0, 1]^d): a.z + eps <= b + M (1 - w-) and
    a.z >= b - M (1 - w+), M = sum_j z_j + 1 + eps; and no flow through an inactive node
    (w- + w+ <= active). ``neg``/``pos`` are the flow variables of the two sides, ``a``
    the coefficient variables, ``hb`` the offset variable; ``tag`` ends the row roles."""
    z = [Fraction(repr(float(v))) for v in bk.x]
    big_m = sum(z, Fraction(0)) + 1 + EPS
    plane = [(zj, a[j]) for j, zj in enumerate(z) if zj != 0] + [(-1, hb)]
    row(plane + [(big_m, neg)], "<=", big_m - EPS, ("split-",) + tag)  # a.z + eps <= b + M(1 - w-)
    row(plane + [(-big_m, pos)], ">=", -big_m, ("split+",) + tag)  # a.z >= b - M(1 - w+)
    row([(1, neg), (1, pos), (-1, active)], "<=", 0, ("split",) + tag)


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
    planes: HyperplaneInputs | None = None
    a: dict[tuple[int, int], int] | None = None  # hyperplane coefficients (S6)
    b: dict[int, int] | None = None
    lam: dict[tuple[int, int], int] | None = None  # lambda[bucket, level] (eqs 4-5)
    f: dict[tuple[int, int], int] | None = None  # (bucket, node >= 2) -> flow f[b, q] (structure handles)
    merge_leaves: bool = True  # decode: merge sibling leaves of one class (off under structure constraints)

    @property
    def n_nodes(self) -> int:
        return (1 << (self.depth + 1)) - 1

    def errors(self, rows_mask: np.ndarray | None = None) -> tuple[list[tuple[Fraction, int]], Fraction]:
        return flow_errors(self.buckets, rows_mask,
                           lambda b, k: [self.g[b, q, k] for q in range(1, self.n_nodes + 1)])

    def prediction(self, u: int, k: int) -> tuple[list[tuple[Fraction, int]], Fraction]:
        """"Bucket u is predicted class k": its flow into terminal k (integral, Theorem 1)."""
        return [(ONE, self.g[u, q, k]) for q in range(1, self.n_nodes + 1)], Fraction(0)

    def leaves(self) -> tuple[list[tuple[Fraction, int]], Fraction]:
        return [(ONE, v) for v in self.p.values()], Fraction(0)

    def decode(self, values, data, input_columns):
        from ..classifiers import Leaf, Split
        from ..classifiers.tree_build import BOTTOM, finish

        def on(var: int) -> bool:
            return float(values[var]) > 0.5

        internal = (1 << self.depth) - 1
        features = [data.features[f] for f in self.features]
        planes = self._hyperplanes(values) if self.planes is not None else {}

        def build(q: int):
            if q <= internal and on(self.s[q]):
                if q in planes:
                    features.append(planes[q])
                    j = len(features) - 1
                else:
                    j = next((j for j in range(len(self.features)) if on(self.e[q, j])), BOTTOM)
                return Split(j, build(2 * q + 1), build(2 * q))
            return Leaf(next((k for k in range(self.n_classes) if on(self.p[q, k])), 0))

        rows = np.array(sorted(r for bk in self.buckets for r in bk.rows), dtype=np.int64)
        root = build(1)
        cols = tuple(dict.fromkeys(list(input_columns) + [c for c, _ in (self.planes.dims if self.planes else ())]))
        return finish(root, features, data, rows, cols, merge=self.merge_leaves)

    def _hyperplanes(self, values) -> dict:
        """One oblique Feature per splitting node, in raw units. The solver's routing (by
        lambda) is kept exactly: the threshold is re-centred between the largest value of
        a.z on the negative side and the smallest on the positive side."""
        assert self.planes is not None and self.a is not None and self.b is not None and self.lam is not None
        P = self.planes
        d = len(P.dims)
        internal = (1 << self.depth) - 1
        at: dict[int, list[tuple[int, bool]]] = {}
        for bi in range(len(self.buckets)):
            q = 1
            for level in range(self.depth):
                if q > internal or float(values[self.s[q]]) < 0.5:
                    break
                side = float(values[self.lam[bi, level]]) > 0.5
                at.setdefault(q, []).append((bi, side))
                q = 2 * q + int(side)
        out = {}
        for q in range(1, internal + 1):
            if float(values[self.s[q]]) < 0.5:
                continue
            a = np.array([float(values[self.a[q, j]]) for j in range(d)])
            zb = np.array([self.buckets[bi].x for bi, _ in at.get(q, [])]).reshape(-1, d)
            sides = np.array([side for _, side in at.get(q, [])], dtype=bool)
            out[q] = oblique_feature(P, a, float(values[self.b[q]]), zb, sides)
        return out


def flow_errors(buckets: tuple[Bucket, ...], rows_mask: np.ndarray | None,
                into: Callable[[int, int], list[int]]) -> tuple[list[tuple[Fraction, int]], Fraction]:
    """Florio's eq. (18), first term, with row weights: sum over the buckets in G and their
    classes k of W[b, k] * (1 - the flows ``into(b, k)`` that end at a class-k terminal)."""
    terms: list[tuple[Fraction, int]] = []
    constant = Fraction(0)
    for b, bk in enumerate(buckets):
        if rows_mask is not None and not rows_mask[bk.rows[0]]:
            continue
        for k, w in bk.class_weight:
            constant += w
            terms.extend((-w, v) for v in into(b, k))
    return terms, constant


def encode_tree_flow(b: ModelBuilder, depth: int, features: list[int], buckets: tuple[Bucket, ...],
                     n_classes: int, planes: HyperplaneInputs | None = None,
                     exact_size: bool = False) -> TreeFlowEncoding:
    """Add the flow formulation to ``b``. With ``planes`` the splits are hyperplanes over
    ``planes`` (then each bucket's ``x`` holds its row of ``planes.Z``). With
    ``exact_size`` every leaf receives rows (the ``used`` rows), so ``leaves`` is the
    decoded tree's number of leaves in both directions."""
    internal = (1 << depth) - 1
    n_nodes = (1 << (depth + 1)) - 1
    s = {q: b.new_bool(("s", q)) for q in range(1, internal + 1)}
    p = {(q, k): b.new_bool(("p", q, k)) for q in range(1, n_nodes + 1) for k in range(n_classes)}
    e = {} if planes is not None else \
        {(q, j): b.new_bool(("e", q, j)) for q in range(1, internal + 1) for j in range(len(features))}
    a: dict[tuple[int, int], int] = {}
    hb: dict[int, int] = {}
    lam: dict[tuple[int, int], int] = {}
    if planes is not None:
        d = len(planes.dims)
        a = {(q, j): b.new_var(("a", q, j), VarKind.REAL, -1.0, 1.0) for q in range(1, internal + 1) for j in range(d)}
        hb = {q: b.new_var(("b", q), VarKind.REAL, -1.0, 1.0) for q in range(1, internal + 1)}
        lam = {(bi, l): b.new_bool(("lambda", bi, l)) for bi in range(len(buckets)) for l in range(depth)}

    def row(terms, op, rhs, role):
        b.linear([(Fraction(c), v) for c, v in terms], op, Fraction(rhs), Origin(role))

    for q in range(1, n_nodes + 1):  # structure: a node exists iff its parent splits
        here = [(1, p[q, k]) for k in range(n_classes)] + ([(1, s[q])] if q <= internal else [])
        if q == 1:
            row(here, "==", 1, ("node", q))
        else:
            row(here + [(-1, s[q // 2])], "==", 0, ("node", q))
    for q in range(1, internal + 1):  # (15)
        if planes is None:
            row([(1, e[q, j]) for j in range(len(features))] + [(-1, s[q])], "==", 0, ("select", q))

    g: dict[tuple[int, int, int], int] = {}
    flows: dict[tuple[int, int], int] = {}
    for bi, bk in enumerate(buckets):
        f = {q: b.new_var(("f", bi, q), VarKind.REAL, 0.0, 1.0) for q in range(2, n_nodes + 1)}
        flows.update(((bi, q), v) for q, v in f.items())
        for q in range(1, n_nodes + 1):
            for k in range(n_classes):
                g[bi, q, k] = b.new_var(("g", bi, q, k), VarKind.REAL, 0.0, 1.0)
                row([(1, g[bi, q, k]), (-1, p[q, k])], "<=", 0, ("sink", bi, q, k))
        for q in range(1, n_nodes + 1):  # (1)-(3): conservation
            outflow = [(1, g[bi, q, k]) for k in range(n_classes)]
            if q <= internal:
                outflow += [(1, f[2 * q]), (1, f[2 * q + 1])]
                if planes is None:
                    ones = [(-1, e[q, j]) for j in range(len(features)) if bk.x[j]]
                    zeros = [(-1, e[q, j]) for j in range(len(features)) if not bk.x[j]]
                    row([(1, f[2 * q + 1])] + ones, "<=", 0, ("route+", bi, q))
                    row([(1, f[2 * q])] + zeros, "<=", 0, ("route-", bi, q))
                else:
                    hyperplane_rows(row, bk, (bi, q), f[2 * q], f[2 * q + 1], s[q],
                                    [a[q, j] for j in range(len(planes.dims))], hb[q])
            if q == 1:
                row(outflow, "==", 1, ("flow", bi, q))
            else:
                row(outflow + [(-1, f[q])], "==", 0, ("flow", bi, q))
        if planes is not None:  # (4)-(5): one side per level
            for level in range(depth):
                nodes = range(1 << level, 1 << (level + 1))
                row([(1, f[2 * q]) for q in nodes] + [(1, lam[bi, level])], "<=", 1, ("lambda-", bi, level))
                row([(1, f[2 * q + 1]) for q in nodes] + [(-1, lam[bi, level])], "<=", 0, ("lambda+", bi, level))
    if exact_size and buckets:  # used: a leaf receives rows
        for q in range(1, n_nodes + 1):
            for k in range(n_classes):
                row([(1, p[q, k])] + [(-1, g[bi, q, k]) for bi in range(len(buckets))], "<=", 0, ("used", q, k))
    elif exact_size and internal:  # no row: the decoded tree is one leaf
        row([(1, s[1])], "==", 0, ("used", 1))
    return TreeFlowEncoding(depth, tuple(features), n_classes, buckets, s, p, e, g, planes, a or None, hb or None,
                            lam or None, flows)

