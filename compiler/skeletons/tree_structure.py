"""Structure handles of a tree skeleton: reach, real nodes, tests per column, leaves, paths.

Side constraints on structure and paths (C3, C5-C9) are written against these handles
(``compiler/constraints/``, one module per family), not against the encoding's own variables. Path
constraints read the tree as a DAG (``nodes``, ``out_arcs``, ``tests``), as diagrams are
read, so each is written once, as a potential (``dag_structure``). The handles,
over the perfect tree of depth D in heap order (root 1):

  R[u, q]     bucket u reaches node q (q >= 2; every bucket reaches the root)
  E[q, s]     side s of internal node q receives some row (s = 0 left / 1 right)
  Z[q]        q is a real decision node of the decoded tree: it splits, both sides used
  T[q, col]   q is real and tests a feature of column ``col`` (one feature per node, so
              the column of a node is unique)
  L[u, q]     bucket u ends at leaf q, for q in ``leaf_nodes`` (the nodes that can be leaves)
  O[q]        q is a leaf of the decoded tree: some row ends there
  leaf_errors(q)  the weight of the misclassified rows ending at leaf q, a linear form (C11):
              on the path encoding sum_u,c W[u, c] * M[u, q, c], M[u, q, c] <-> R[u, q] and not
              ok[u, c] (built on first use); on the flow encoding sum_u,k W[u, k] * (L[u, q] -
              g[u, q, k]), no new variable

Two constructors define them on the two tree encodings:

* ``add_structure`` on Avellaneda's path encoding, by clauses over its X and F variables:
  R is the prefix of u's leaf index, a node is real when it is not BOTTOM and both sides
  are used; the leaves are those of the perfect tree, L = R there.
* ``add_structure_flow`` on Florio's flow encoding (``tree_flow``): R[u, q] = f[u, q] and
  L[u, q] = sum_k g[u, q, k] (the flows are integral given the binary s, p, e, the
  paper's Theorem 1, so these are booleans tied to them by one equality row each); a node
  is real when s[q] and both sides used; every node can be a leaf (its long arc).

With these, the decoded tree (which keeps exactly the real nodes, see ``decode.finish``
with merging of same-class leaves off) has the structure the constraints speak about:
its decision nodes are the real nodes, its leaves the nodes q with O[q], and the rows
reaching each are those with R (or L) true.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

from ..ir import ModelBuilder, Origin
from .dag_structure import define_tests
from .interface import Linear
from .tree_flow import TreeFlowEncoding
from .tree_paths import BOTTOM, TreePathsEncoding


@dataclass(frozen=True)
class TreeStructure:
    depth: int
    R: dict[tuple[int, int], int]
    E: dict[tuple[int, int], int]
    Z: dict[int, int]
    T: dict[tuple[int, str], int]
    counts: tuple[int, ...]  # rows per bucket (unweighted)
    L: dict[tuple[int, int], int] = field(default_factory=dict)  # (bucket, leaf node) -> ends there
    O: dict[int, int] = field(default_factory=dict)  # leaf node -> some row ends there
    leaf_nodes: tuple[int, ...] = ()  # the nodes that can be leaves of the decoded tree
    weights: tuple[Fraction, ...] = ()  # total row weight per bucket
    #: (builder, leaf node) -> the misclassified weight ending there (``leaf_errors``)
    errors_at: Callable[[ModelBuilder, int], Linear] | None = None

    @property
    def root(self) -> int:
        return 1

    @property
    def internal(self) -> range:
        return range(1, 1 << self.depth)

    def samples(self, q: int) -> tuple[list[tuple[Fraction, int]], Fraction]:
        """Rows reaching node q, as a linear form (terms, constant) over R."""
        if q == 1:
            return [], Fraction(sum(self.counts))
        return [(Fraction(n), self.R[u, q]) for u, n in enumerate(self.counts) if n], Fraction(0)

    def leaf_samples(self, q: int) -> tuple[list[tuple[Fraction, int]], Fraction]:
        """Rows ending at leaf q (zero when q is no leaf of the decoded tree), over L."""
        return [(Fraction(n), self.L[u, q]) for u, n in enumerate(self.counts) if n], Fraction(0)

    def leaf_errors(self, b: ModelBuilder, q: int) -> Linear:
        """The weight of the misclassified rows ending at leaf q (zero when q is no leaf of
        the decoded tree): exact, whichever way a program pushes it."""
        assert self.errors_at is not None
        return self.errors_at(b, q)

    # the DAG view the path potentials read (``dag_structure``): a tree is a diagram
    # whose arcs are fixed, used when their side receives rows
    @property
    def nodes(self) -> tuple[int, ...]:
        return tuple(self.internal)

    def out_arcs(self, q: int) -> list[tuple[int, int]]:
        """(child, literal "the arc carries rows") for the internal children of q."""
        return [(2 * q + s, self.E[q, s]) for s in (0, 1) if 2 * q + s < (1 << self.depth)]

    def tests(self, q: int, column: str) -> int | None:
        return self.T.get((q, column))


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
    T = define_tests(b, range(1, 1 << D), columns, Z,
                     lambda q, col: [enc.F[q, p] for p, c in enumerate(feature_columns) if c == col])
    counts = tuple(len(bk.rows) for bk in enc.buckets)
    leaves = tuple(range(1 << D, 1 << (D + 1)))
    L = {(u, q): R[u, q] for u in range(len(enc.buckets)) for q in leaves}
    O = {q: E[q // 2, q % 2] for q in leaves}
    made: dict[int, Linear] = {}

    def errors_at(b: ModelBuilder, q: int) -> Linear:
        """M[u, q, c] <-> R[u, q] and not ok[u, c] (ok is exact: Avellaneda's (5)-(6) and their converse)."""
        if q not in made:
            terms = []
            for u, bk in enumerate(enc.buckets):
                for c, w in bk.class_weight:
                    m, r, ok = b.new_aux(f"M_{u}_{q}_{c}"), R[u, q], enc.ok[u, c]
                    b.clauses([(-m, r), (-m, -ok), (-r, ok, m)])
                    terms.append((w, m))
            made[q] = (terms, Fraction(0))
        return made[q]

    return TreeStructure(D, R, E, Z, T, counts, L, O, leaves, _weights(enc.buckets), errors_at)


def add_structure_flow(b: ModelBuilder, enc: TreeFlowEncoding, columns: list[str],
                       feature_columns: list[str]) -> TreeStructure:
    """Define R, E, Z, T, L and O on top of the flow encoding ``enc`` (univariate splits).

    ``feature_columns[j]`` is the column of the encoding's feature position j; ``columns``
    are the columns that constraints mention."""
    assert enc.f is not None and enc.planes is None
    D = enc.depth
    n_nodes = (1 << (D + 1)) - 1
    internal = range(1, 1 << D)
    n_buckets = len(enc.buckets)

    def equal(lit: int, flow: list[int], role: tuple) -> None:
        b.linear([(Fraction(1), lit)] + [(Fraction(-1), v) for v in flow], "==", Fraction(0), Origin(role))

    def either(lit: int, parts: list[int]) -> None:  # lit <-> OR parts
        for r in parts:
            b.clause((-r, lit))
        b.clause([-lit] + parts)

    R: dict[tuple[int, int], int] = {}
    L: dict[tuple[int, int], int] = {}
    for u in range(n_buckets):
        for q in range(2, n_nodes + 1):
            R[u, q] = b.new_bool(("R", u, q))
            equal(R[u, q], [enc.f[u, q]], ("reach", u, q))
        for q in range(1, n_nodes + 1):  # ends at q: its flow into q's class terminals
            L[u, q] = b.new_bool(("L", u, q))
            equal(L[u, q], [enc.g[u, q, k] for k in range(enc.n_classes)], ("ends", u, q))
    E = {}
    for q in internal:
        for side in (0, 1):
            E[q, side] = b.new_bool(("E", q, side))
            either(E[q, side], [R[u, 2 * q + side] for u in range(n_buckets)])
    Z = {}
    for q in internal:
        z = Z[q] = b.new_bool(("Z", q))
        parts = [E[q, 0], E[q, 1], enc.s[q]]
        for p in parts:
            b.clause((-z, p))
        b.clause(tuple(-p for p in parts) + (z,))
    T = define_tests(b, internal, columns, Z,
                     lambda q, col: [enc.e[q, j] for j, c in enumerate(feature_columns) if c == col])
    O = {}
    for q in range(1, n_nodes + 1):
        O[q] = b.new_bool(("O", q))
        either(O[q], [L[u, q] for u in range(n_buckets)])
    counts = tuple(len(bk.rows) for bk in enc.buckets)

    def errors_at(b: ModelBuilder, q: int) -> Linear:
        """Bucket u's class-k weight is wrong at q when u ends at q (L) but not in a class-k terminal (g)."""
        terms: list[tuple[Fraction, int]] = []
        for u, bk in enumerate(enc.buckets):
            for k, w in bk.class_weight:
                terms += [(w, L[u, q]), (-w, enc.g[u, q, k])]
        return terms, Fraction(0)

    return TreeStructure(D, R, E, Z, T, counts, L, O, tuple(range(1, n_nodes + 1)), _weights(enc.buckets),
                         errors_at)


def _weights(buckets) -> tuple[Fraction, ...]:
    return tuple(sum((w for _, w in bk.class_weight), Fraction(0)) for bk in buckets)
