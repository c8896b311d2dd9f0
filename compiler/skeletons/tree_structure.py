"""Structure handles of the path encoding: reach, real nodes, tests per column, paths.

Side constraints on structure and paths (C3, C5-C9) are written against these handles
(``compiler/constraints.py``), not against the encoding's own variables. For the path
encoding of Avellaneda they are defined by extra clauses over its X and F variables:

  R[u, q]     bucket u reaches node q (heap order, leaves included): the prefix of u's
              leaf index equals q's path
  E[q, s]     side s of node q receives some row (s = 0 left / 1 right)
  Z[q]        q is a real decision node of the decoded tree: not BOTTOM, both sides used
  T[q, col]   q is real and tests a feature of column ``col`` (one feature per node is
              enforced, Avellaneda's clause (2), so the column of a node is unique)

With these, the decoded tree (which keeps exactly the real nodes, see ``decode.finish``
with merging of same-class leaves off) has the structure the constraints speak about.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..ir import ModelBuilder
from .tree_paths import BOTTOM, TreePathsEncoding


@dataclass(frozen=True)
class TreeStructure:
    depth: int
    R: dict[tuple[int, int], int]
    E: dict[tuple[int, int], int]
    Z: dict[int, int]
    T: dict[tuple[int, str], int]
    counts: tuple[int, ...]  # rows per bucket (unweighted)

    @property
    def internal(self) -> range:
        return range(1, 1 << self.depth)

    @property
    def leaves(self) -> range:
        return range(1 << self.depth, 1 << (self.depth + 1))

    def samples(self, q: int) -> list[tuple[Fraction, int]]:
        """Rows reaching node q, as a linear form over R."""
        return [(Fraction(n), self.R[u, q]) for u, n in enumerate(self.counts) if n]

    def nonempty(self, q: int) -> int:
        """Literal: some row reaches q (for the root: a tautology via E of both sides)."""
        return self.E[q // 2, q % 2]

    def paths(self) -> list[list[int]]:
        """Internal nodes of every root-to-leaf path of the perfect tree (2^D paths)."""
        out = []
        for leaf in self.leaves:
            path, q = [], leaf // 2
            while q >= 1:
                path.append(q)
                q //= 2
            out.append(path[::-1])
        return out

    def ancestors(self, q: int) -> list[int]:
        out = []
        while q > 1:
            q //= 2
            out.append(q)
        return out


def add_structure(b: ModelBuilder, enc: TreePathsEncoding, columns: list[str], feature_columns: list[str]) -> TreeStructure:
    """Define R, E, Z and T on top of the path encoding ``enc``.

    ``feature_columns[p]`` is the column of the encoding's feature position p; ``columns``
    are the columns that constraints mention."""
    D = enc.depth
    n_nodes = (1 << (D + 1)) - 1
    R: dict[tuple[int, int], int] = {}
    for u in range(len(enc.buckets)):
        for q in range(2, n_nodes + 1):
            R[u, q] = b.new_bool(("R", u, q))
            parent = q // 2
            level = parent.bit_length() - 1
            x = enc.X[u, level] if q % 2 else -enc.X[u, level]
            up = [] if parent == 1 else [R[u, parent]]
            # R[u,q] <-> R[u,parent] and x
            b.clause((-R[u, q], x))
            for lit in up:
                b.clause((-R[u, q], lit))
            b.clause(tuple(-l for l in up) + (-x, R[u, q]))
    E = {}
    for q in range(1, 1 << D):
        for side in (0, 1):
            child = 2 * q + side
            e = E[q, side] = b.new_bool(("E", q, side))
            lits = [R[u, child] for u in range(len(enc.buckets))]
            for r in lits:
                b.clause((-r, e))
            b.clause([-e] + lits)
    Z = {}
    for q in range(1, 1 << D):
        z = Z[q] = b.new_bool(("Z", q))
        parts = [E[q, 0], E[q, 1], -enc.F[q, BOTTOM]]
        for p in parts:
            b.clause((-z, p))
        b.clause(tuple(-p for p in parts) + (z,))
    T = {}
    for q in range(1, 1 << D):
        for col in columns:
            t = T[q, col] = b.new_bool(("T", q, col))
            fs = [enc.F[q, p] for p, c in enumerate(feature_columns) if c == col]
            b.clause((-t, Z[q]))
            b.clause([-t] + fs)
            for f in fs:
                b.clause((-Z[q], -f, t))
    counts = tuple(len(bk.rows) for bk in enc.buckets)
    return TreeStructure(D, R, E, Z, T, counts)
