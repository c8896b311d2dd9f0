"""The BDD2 encoding of Hu, Huguet & Siala (IJCAI 2022) for ordered BDDs, as MaxSAT.

Input: the binarised training rows (deduplicated into *buckets* of identical rows, as for
the path encoding), the depth H (the number of levels; each level tests one feature, a
feature appears on at most one level) and the number of classes. Output: IR variables and
clauses, plus the handles (``errors``, ``prediction``) that objectives and constraints are
written against, and ``decode`` (truth table -> reduced ordered BDD by GenBDD).

Variables (paper notation; levels i = 0..H-1, features r = feature positions):
  A[i, r]   a_r^i: feature r is the i-th feature of the ordering
  D[u, i]   d_i^q: the i-th feature of the ordering is 1 for bucket u
  C[j, c]   c_j: cell j (0..2^H-1) of the truth table has class c; cell j is reached by
            the rows whose level-i feature is bit H-1-i of j (rel(i, j) of eq. 4: the
            first feature is the most significant bit). Two classes: one literal per cell
            (C[j, 1], C[j, 0] = -C[j, 1]); more classes: one-hot literals per cell (an
            extension beyond the paper, which is binary).
  ok[u, c]  the rows of bucket u with class c are classified correctly (soft)

Clauses:
  (1)       a feature is on at most one level: sequential counter (Sinz 2005), as the paper
  (2)       exactly one feature per level: one clause + a sequential-counter at-most-one
  (3)       the table is a bead (its root test is useful), relaxed by a literal ``const``
            that forces all cells to one class: Hu's (3) alone forbids the constant
            classifier, which can be the optimum of the MaxSAT variant; every other
            function of H features has an ordering whose first feature is essential, so
            (3) + const only breaks symmetry and keeps the optimum of the brute force.
  (7)       a_r^i -> d_i^u by the value of feature r for bucket u. Written here in the
            equivalent clausal form  d_i^u -> OR{a_r^i : x_u[r] = 1}  and
            not d_i^u -> OR{a_r^i : x_u[r] = 0}: under (2) exactly one a_r^i holds, so
            this defines d_i^u exactly, with K + 2 literals per (bucket, level) instead
            of the 2K of the paper's binary clauses.
  (8), (9)  the cell a bucket reaches has its class: for every cell j,
            [d_u = bits(j)] and ok[u, c] -> C[j, c]. The paper makes the H+1-literal
            clauses (8)-(9) soft; here they are guarded by ok[u, c] and the objective
            counts not ok[u, c] (one soft unit per bucket and class: weighted errors).
            The converse, [d_u = bits(j)] and C[j, c] -> ok[u, c], makes ok exact, so
            errors are right also where a program bounds them from below (issue 24).

Prop. 3 gives the size O(M H (2^H + K)); buckets merge identical rows, so M is the
number of distinct rows. With fewer useful features than levels, the missing levels get
constant pseudo-features (value 0 for every row): their level is decoded away.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..encode import pb
from ..ir import ModelBuilder
from .tree_paths import Bucket, class_literals, leaf_class_clauses, soft_errors

ONE = Fraction(1)
BIASES = ("C", "P", "S")


@dataclass(frozen=True)
class BddLevelsEncoding:
    """Handles of a lowered ordered BDD (what lower.py and the decoder may read)."""

    depth: int
    features: tuple[int, ...]  # kept dataset feature indices; positions >= len are pseudo-features
    n_positions: int  # len(features) + pseudo-features
    n_classes: int
    buckets: tuple[Bucket, ...]
    A: dict[tuple[int, int], int]  # (level, position) -> var
    D: dict[tuple[int, int], int]  # (bucket, level) -> var
    C: dict[tuple[int, int], int]  # (cell, class) -> literal
    ok: dict[tuple[int, int], int]  # (bucket, class) -> var
    P: dict[tuple[int, int], int] | None = None  # (bucket, class) -> literal "predicted class"
    bias: str = "C"  # generalisation bias for cells no training row reaches (bdd_build)
    quasi: bool = False  # decode quasi-reduced (every level on every path): under side constraints

    def errors(self, rows_mask: np.ndarray | None = None) -> tuple[list[tuple[Fraction, int]], Fraction]:
        """errors(G) = sum over buckets in G of weight(u, c) * not ok[u, c]."""
        return soft_errors(self.buckets, self.ok, rows_mask)

    def prediction(self, u: int, k: int) -> tuple[list[tuple[Fraction, int]], Fraction]:
        """"Bucket u is predicted class k" as a linear form (the skeleton's prediction handle)."""
        assert self.P is not None, "lowered without prediction handles"
        return [(ONE, self.P[u, k])], Fraction(0)

    def decode(self, values, data, input_columns):
        """Read the level features and the truth table, then GenBDD (``bdd_build``)."""
        from ..classifiers.bdd_build import diagram_from_table

        def lit(l: int) -> bool:
            return bool(values[l]) if l > 0 else not bool(values[-l])

        order = [next((p for p in range(self.n_positions) if lit(self.A[i, p])), self.n_positions)
                 for i in range(self.depth)]
        table = [next((c for c in range(self.n_classes) if lit(self.C[j, c])), 0) for j in range(1 << self.depth)]
        counts = np.zeros((1 << self.depth, self.n_classes))
        for bk in self.buckets:
            j = cell_of(bk.x, order, self.depth)
            for c, w in bk.class_weight:
                counts[j, c] += float(w)
        k = len(self.features)
        level_features = [data.features[self.features[p]] if p < k else None for p in order]
        return diagram_from_table(table, counts, level_features, data.classes, tuple(input_columns), self.bias,
                                  self.quasi)

    def structure(self, b: ModelBuilder, columns: list[str], feature_columns: list[str]):
        """The structure handles of an ordered BDD decoded quasi-reduced (``quasi``): every
        path tests every level, so the levels form one chain — node i is level i, every
        row passes it, and it tests ``column`` when its feature is of that column
        (``dag_structure``). Path constraints (order, exclusion, per-path cost),
        ``expected_cost`` and ``uses`` are then the tree's and diagram's own clauses."""
        from .dag_structure import DagStructure, define_tests

        true = b.new_bool(("true",))
        b.clause((true,))
        levels = tuple(range(self.depth))
        Z = {i: true for i in levels}
        T = define_tests(b, levels, columns, Z, lambda i, col: [
            self.A[i, p] for p in range(len(self.features)) if feature_columns[p] == col])
        R = {(u, i): true for u in range(len(self.buckets)) for i in levels[1:]}
        arcs = tuple((i, i + 1, true) for i in levels[:-1])
        weights = tuple(sum((w for _, w in bk.class_weight), Fraction(0)) for bk in self.buckets)
        return DagStructure(levels, arcs, Z, T, R, tuple(len(bk.rows) for bk in self.buckets), weights)


def cell_of(x: tuple[bool, ...], order: list[int], depth: int) -> int:
    """The truth-table cell of a row with kept-feature values ``x`` (rel of Hu's eq. 4):
    level i contributes bit H-1-i; a pseudo-feature (position >= len(x)) is 0.

    >>> cell_of((True, False, True), [2, 0], 2)
    3
    """
    j = 0
    for p in order:
        j = 2 * j + (1 if p < len(x) and x[p] else 0)
    return j


def encode_bdd(b: ModelBuilder, depth: int, features: list[int], buckets: tuple[Bucket, ...], n_classes: int,
               predictions: bool = False, bias: str = "C") -> BddLevelsEncoding:
    """Add the BDD2 variables and clauses to ``b``; return the handles.

    Args:
        depth: H >= 1, the number of levels (distinct features) of the ordering.
        features: kept dataset feature indices (the bucket values ``x`` follow this order).
        predictions: also define P[u, k] <-> "bucket u is predicted k" (rates, confusion).
        bias: the value of unreached cells at decoding ("C", "P" or "S", see bdd_build).
    """
    assert depth >= 1 and bias in BIASES
    H, K = depth, len(features)
    n_pos = max(K, H)  # pseudo-features when fewer useful features than levels
    cells = 1 << H

    def new_var() -> int:
        return b.new_aux("bdd card")

    A = {(i, p): b.new_bool(("A", i, p)) for i in range(H) for p in range(n_pos)}
    D = {(u, i): b.new_bool(("D", u, i)) for u in range(len(buckets)) for i in range(H)}
    two = n_classes == 2
    C = class_literals(b, cells, n_classes)  # one class per truth-table cell (multiclass: ours)
    ok = {(u, c): b.new_bool(("ok", u, c)) for u, bk in enumerate(buckets) for c, _ in bk.class_weight}

    for i in range(H):  # (2) exactly one feature per level
        b.clause(A[i, p] for p in range(n_pos))
        b.clauses(pb.at_most([(1, A[i, p]) for p in range(n_pos)], 1, new_var))
    if H > 1:  # (1) a feature on at most one level
        for p in range(n_pos):
            b.clauses(pb.at_most([(1, A[i, p]) for i in range(H)], 1, new_var))

    # (3) the table is a bead, or constant
    half = cells // 2
    const = b.new_bool(("const",))
    differ = [b.new_bool(("bead", j)) for j in range(half)]
    b.clause(differ + [const])
    for j, e in enumerate(differ):
        if two:
            b.clause((-e, C[j, 1], C[j + half, 1]))
            b.clause((-e, -C[j, 1], -C[j + half, 1]))
        else:
            for c in range(n_classes):
                b.clause((-e, -C[j, c], -C[j + half, c]))
    for j in range(1, cells):
        for c in ((1, 0) if two else range(n_classes)):
            b.clause((-const, -C[0, c], C[j, c]))

    P: dict[tuple[int, int], int] | None = None
    if predictions:
        P = {}
        for u in range(len(buckets)):
            if two:
                lit = b.new_bool(("P", u, 1))
                P[u, 1], P[u, 0] = lit, -lit
            else:
                for k in range(n_classes):
                    P[u, k] = b.new_bool(("P", u, k))

    for u, bk in enumerate(buckets):
        ones = [p for p in range(K) if bk.x[p]]
        zeros = [p for p in range(n_pos) if p >= K or not bk.x[p]]
        for i in range(H):  # (7), clausal form
            d = D[u, i]
            b.clause([-d] + [A[i, p] for p in ones])
            b.clause([d] + [A[i, p] for p in zeros])
        for j in range(cells):  # (8), (9) guarded by ok
            guard = tuple(-D[u, i] if (j >> (H - 1 - i)) & 1 else D[u, i] for i in range(H))
            for c, _ in bk.class_weight:  # ok[u, c] <-> C[j, c]: errors exact both ways
                leaf_class_clauses(b, guard, ok[u, c], C[j, c])
            if P is not None:
                for k in ((1,) if two else range(n_classes)):
                    b.clause(guard + (-C[j, k], P[u, k]))
                    b.clause(guard + (C[j, k], -P[u, k]))
    return BddLevelsEncoding(H, tuple(features), n_pos, n_classes, buckets, A, D, C, ok, P, bias)


def cart_features(X: np.ndarray, y: np.ndarray, w: np.ndarray, candidates: list[int], k: int) -> list[int]:
    """Hu's heuristic MaxSAT-BDD (Sec. 4): the features a greedy CART tree tests.

    A Gini tree (Breiman et al. 1984) is grown breadth first from the root, each node
    split on the candidate with the largest weighted Gini decrease, level by level until
    ``k`` distinct features are tested (for k = H that is a tree of depth about H);
    features enter in the order the tree first tests them. If the tree runs out of
    useful splits first, the remaining candidates follow by their Gini decrease at the
    root. Returns at most ``k`` of ``candidates``, in ``candidates`` order.

    >>> X = np.array([[1, 0, 1], [1, 1, 0], [0, 0, 1], [0, 1, 1]], dtype=bool)
    >>> cart_features(X, np.array([1, 1, 0, 0]), np.ones(4), [0, 1, 2], 1)
    [0]
    """
    if k >= len(candidates):
        return list(candidates)
    classes = np.unique(y)
    Y = (y[:, None] == classes[None, :]).astype(float) * w[:, None]  # weighted one-hot labels
    Xc = X[:, candidates]

    def gains(rows: np.ndarray) -> np.ndarray:
        tot = Y[rows].sum(axis=0)
        n = tot.sum()
        if n <= 0:
            return np.zeros(len(candidates))
        right = Xc[rows].T.astype(float) @ Y[rows]  # (features, classes)
        left = tot[None, :] - right
        nr, nl = right.sum(axis=1), left.sum(axis=1)

        def impurity(m: np.ndarray, s: np.ndarray) -> np.ndarray:
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(s > 0, s - (m ** 2).sum(axis=1) / np.where(s > 0, s, 1), 0.0)

        parent = n - (tot ** 2).sum() / n
        return parent - impurity(right, nr) - impurity(left, nl)

    chosen: list[int] = []
    frontier = [np.arange(X.shape[0])]
    while frontier and len(chosen) < k:
        nxt = []
        for rows in frontier:
            g = gains(rows)
            best = int(np.argmax(g))
            if g[best] <= 1e-12:
                continue
            if best not in chosen:
                chosen.append(best)
                if len(chosen) == k:
                    break
            go = Xc[rows, best]
            nxt += [rows[go], rows[~go]]
        frontier = nxt
    if len(chosen) < k:
        for p in np.argsort(-gains(np.arange(X.shape[0])), kind="stable"):
            if int(p) not in chosen:
                chosen.append(int(p))
            if len(chosen) == k:
                break
    return [candidates[p] for p in sorted(chosen)]
