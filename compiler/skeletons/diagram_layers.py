"""A purely clausal encoding of Florio's levelled decision diagrams (the ``paths``
encoding of S4, for MaxSAT and CP-SAT).

Input: the layer widths ``w_0 = 1, w_1, ..., w_{D-1}`` of a diagram skeleton (Florio et al.,
AAAI 2023, "Optimal Decision Diagrams for Classification", Sec. "Canonical formulation"),
the kept binarised features, the buckets of identical training rows
(``tree_paths.Bucket``), the number of classes. Output: boolean IR variables and clauses
only (no linear row), and the handles objectives and side constraints are written against
(architecture seam 2): ``errors``, ``prediction``, ``nodes``, ``structure``, ``decode``.
There is no ``leaves`` handle: a diagram's size is its decision nodes. Florio's model is a
MILP of flows (``diagram_flow``); this is its boolean counterpart, in the spirit of
Avellaneda's path encoding of trees (``tree_paths``): the structure is guessed by a few
variables and each bucket's route through it is propagated by implications.

The family (exactly ``diagram_flow``'s): slots are numbered layer by layer, slot 0 is the
root, alone in layer 0. Each side of a slot of layer l < D - 1 goes to a slot of layer
l + 1 or by a long arc to a class terminal; the slots of the last layer go to terminals
only (no arc skips a layer). A slot tests one feature, and its two sides go to different
targets (Florio's (8)), or it is a pass-through, BOTTOM, which sends every row to its
false side (Florio's constant literal TOP); BOTTOM is offered at every slot above the last
layer, and at the root in any case (Florio's root leaf: a pass-through root whose false
side is a class is the one-class diagram). ``nodes`` counts the slots that send training
rows both ways (Florio's regulariser on the decoded diagram, ``diagram_flow.nodes``).

Variables (u a bucket, v a slot, s a side, go_s = go if s else -go):
  F[v, p]     slot v tests feature position p, or p = BOTTOM; exactly one per slot
  S[v, s, t]  side s of v goes to t (a next-layer slot t >= 0 or the terminal
              ``leaf_ref(c)``); exactly one per side; a BOTTOM slot's unused true side
              is fixed to class 0
  go[u, v]    bucket u takes the true side at v: F[v,p] -> (go <-> x_up), BOTTOM -> -go.
              Unguarded: go is a function of the structure alone.
  R[u, v]     bucket u passes slot v (v > 0; the root is passed by every bucket)
  T[u, c]     bucket u ends at class c (two classes: one literal, T[u, 0] = -T[u, 1])
  A[v]        some bucket passes v (v > 0): A[v] <-> OR_u R[u, v]
  ok[u, c]    "the class-c rows of bucket u are right": T[u, c] itself, except for a
              two-class bucket holding both classes, where ok[u, c] <-> T[u, c] is a
              variable of its own (else its two error terms cancel into a constant, and
              an objective that is all constant is reported merely "feasible" by cp)
Built on the first call of ``nodes`` or ``structure`` (``_counts``):
  p[u, v, s]  <-> R[u, v] & go_s[u, v]  (at the root: go_s itself)
  h[v, s]     <-> OR_u p[u, v, s]        side s of v carries training rows
  Z[v]        <-> h[v, 1] & h[v, 0]      v sends rows both ways: a decision node
and, for ``structure``, q[v, s, w] <-> h[v, s] & S[v, s, w], used[v, w] <-> OR_s q[v, s, w],
T[v, col] <-> Z[v] & OR_{p of col} F[v, p].

Clauses:
  (route)    R[u,v] & go_s & S[v,s,t] -> R[u,t];  R[u,v] & go_s & S[v,s,c] -> T[u,c]
             (R[u, 0] is omitted: true)
  (back)     with the counts: R[u,w] -> OR_{v in layer(w) - 1} R[u,v] and
             R[u,w] & R[u,v] & go_s[u,v] -> S[v,s,w]
  (class)    at most one T[u, c]
  (distinct) -S[v,1,t] | -S[v,0,t] unless v is BOTTOM or unpassed (-A[v])
  (symmetry) in a layer, passed slots come first: A[v] -> A[v-1]; an unpassed slot is
             fixed (first feature, both sides to class 0): no row sees it

Correctness. Fix the structure (F, S). At the root go is determined, so (route) forces
R along the bucket's true route, layer by layer, until a terminal c, where T[u, c] is
forced; "at most one" makes every other T[u, c'] false. So T, ok, ``errors`` and
``prediction`` are exact in every model. (back) makes R exact too: by induction on the
layer, if R[u, .] holds exactly on the route in layer l - 1 (one slot v*, side s*), then
R[u, w] in layer l needs R[u, v*] and S[v*, s*, w], i.e. w is the route's next slot.
Then p, h and Z are exact by their two-way definitions: Z[v] holds iff some bucket passing
v goes true and some goes false, and ``nodes`` = sum Z[v] is the number of slots that
send training rows both ways, both as an objective and in a bound ``nodes <= K``.

Decoding builds the diagram of (F, S), replaces every reference to a BOTTOM slot by its
false side (this yields arcs that skip layers, which ``compiler.diagram`` allows), and
applies ``compact_diagram`` with the bucketed rows: every bucket keeps its route and
class, so training errors are the solver's. Compaction removes the slots whose rows all
take one side (not counted by Z) and merges equal nodes; the decoded ``nodes`` is
therefore at most the solver's, and equal at an optimum where nodes carry positive
weight (two equal counted slots can be merged inside the family: point the parents of one
to the other; a parent whose two sides then meet becomes a pass-through, counting less).

Family equivalence with ``diagram_flow``: Florio's root leaf is a BOTTOM root whose false
side is a class; TOP with either sign is BOTTOM (which side is "true" is immaterial); the
unused side of a pass-through never carries rows, so fixing it loses nothing. Florio's
(11)-(12) are symmetry breaking only. Our symmetry breaking is sound because slots of a
layer can be permuted freely (targets renamed with them), so every diagram has a
representative whose passed slots come first in each layer, and an unpassed slot's
content routes no row and counts no node.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..classifiers.diagram import Diagram, DNode, compact_diagram, leaf_class, leaf_ref
from ..encode.pb import at_most
from ..ir import ModelBuilder
from .dag_structure import DagStructure, define_tests
from .diagram_flow import effective_widths
from .tree_paths import Bucket, soft_errors

BOTTOM = -1  # the pass-through pseudo-feature (every row takes the false side)
ONE = Fraction(1)


@dataclass(frozen=True)
class DiagramLayersEncoding:
    """Handles of a lowered diagram skeleton (what lower.py and Program may read)."""

    widths: tuple[int, ...]  # the widths actually encoded (just the root when no feature splits)
    features: tuple[int, ...]  # kept dataset feature indices, in encoding order
    n_classes: int
    buckets: tuple[Bucket, ...]
    layer_of: tuple[int, ...]  # slot -> layer
    F: dict[tuple[int, int], int]  # (slot, feature position or BOTTOM) -> var
    S: dict[tuple[int, bool, int], int]  # (slot, side, target reference) -> var
    go: dict[tuple[int, int], int]  # (bucket, slot) -> var
    R: dict[tuple[int, int], int]  # (bucket, slot > 0) -> var
    T: dict[tuple[int, int], int]  # (bucket, class) -> literal
    A: dict[int, int]  # slot > 0 -> var "some bucket passes it"
    ok: dict[tuple[int, int], int]  # (bucket, class) -> literal (= T)
    builder: ModelBuilder = field(repr=False, compare=False)
    _counts: dict = field(default_factory=dict, repr=False, compare=False)  # p, h, Z once built
    reduce: bool = True  # decode: merge equal nodes (off under structure constraints)

    @property
    def n_slots(self) -> int:
        return len(self.layer_of)

    def errors(self, rows_mask: np.ndarray | None = None) -> tuple[list[tuple[Fraction, int]], Fraction]:
        """errors(G) = sum over buckets in G of weight(u, c) * not ok[u, c]."""
        return soft_errors(self.buckets, self.ok, rows_mask)

    def prediction(self, u: int, k: int) -> tuple[list[tuple[Fraction, int]], Fraction]:
        """"Bucket u is predicted class k" as a linear form: the literal T[u, k]."""
        return [(ONE, self.T[u, k])], Fraction(0)

    def nodes(self) -> tuple[list[tuple[Fraction, int]], Fraction]:
        """nodes = sum of Z[v]: the slots that send training rows both ways."""
        Z = self._count_handles()["Z"]
        return [(ONE, Z[v]) for v in range(self.n_slots)], Fraction(0)

    def structure(self, b: ModelBuilder, columns: list[str], feature_columns: list[str]) -> DagStructure:
        """The structure handles side constraints read (``dag_structure``), all exact.

        Args:
            b: the model under construction (the one this encoding was built in).
            columns: the columns constraints mention (a literal T[v, col] each).
            feature_columns: ``feature_columns[p]`` is the column of feature position p.
        Returns:
            slots in layer order, arcs "v -> w carries rows", Z, T, R, rows and weights per bucket.
        """
        assert b is self.builder, "structure handles belong to the encoding's own model"
        handles = self._count_handles()
        h, Z = handles["h"], handles["Z"]
        arcs = []
        for v in range(self.n_slots):
            for w in self._targets(v):
                if w < 0:
                    continue
                qs = []
                for side in (True, False):
                    q = b.new_aux(f"carries_{v}_{int(side)}_{w}")  # q <-> h[v, side] & S[v, side, w]
                    b.clauses(((-q, h[v, side]), (-q, self.S[v, side, w]), (-h[v, side], -self.S[v, side, w], q)))
                    qs.append(q)
                used = b.new_aux(f"used_{v}_{w}")
                b.clauses([(-q, used) for q in qs] + [[-used] + qs])
                arcs.append((v, w, used))
        T = define_tests(b, range(self.n_slots), columns, Z,
                         lambda v, col: [self.F[v, p] for p, c in enumerate(feature_columns) if c == col])
        weights = tuple(sum((w for _, w in bk.class_weight), Fraction(0)) for bk in self.buckets)
        return DagStructure(tuple(range(self.n_slots)), tuple(arcs), dict(Z), T, dict(self.R),
                            tuple(len(bk.rows) for bk in self.buckets), weights)

    def _count_handles(self) -> dict:
        """Build (once) the exact-reach clauses (back) and p, h, Z (module docstring)."""
        if self._counts:
            return self._counts
        b = self.builder
        slots, n_b = range(self.n_slots), range(len(self.buckets))
        in_layer = [[v for v in slots if self.layer_of[v] == l] for l in range(len(self.widths))]
        for u in n_b:  # (back): R only on the bucket's own route
            for w in slots:
                if w == 0:
                    continue
                above = in_layer[self.layer_of[w] - 1]
                if self.layer_of[w] > 1:
                    b.clause([-self.R[u, w]] + [self.R[u, v] for v in above])
                for v in above:
                    passed = () if v == 0 else (-self.R[u, v],)
                    for side in (True, False):
                        g = -self.go[u, v] if side else self.go[u, v]  # false when u takes this side
                        b.clause((-self.R[u, w],) + passed + (g, self.S[v, side, w]))
        h: dict[tuple[int, bool], int] = {}
        Z: dict[int, int] = {}
        for v in slots:
            for side in (True, False):
                ps = []
                for u in n_b:
                    g = self.go[u, v] if side else -self.go[u, v]
                    if v == 0:
                        ps.append(g)
                        continue
                    p = b.new_aux(f"p_{u}_{v}_{int(side)}")  # p <-> R[u, v] & go_s[u, v]
                    b.clauses(((-p, self.R[u, v]), (-p, g), (-self.R[u, v], -g, p)))
                    ps.append(p)
                x = h[v, side] = b.new_aux(f"h_{v}_{int(side)}")
                b.clauses([(-p, x) for p in ps] + [[-x] + ps])
            z = Z[v] = b.new_aux(f"Z_{v}")
            b.clauses(((-z, h[v, True]), (-z, h[v, False]), (-h[v, True], -h[v, False], z)))
        self._counts.update(h=h, Z=Z)
        return self._counts

    def decode(self, values, data, input_columns) -> Diagram:
        """The diagram of (F, S), BOTTOM slots bypassed, compacted against the bucketed
        rows (every bucket keeps its route)."""
        from ..data import Binarizer

        def lit(x: int) -> bool:
            return bool(values[x]) if x > 0 else not bool(values[-x])

        def target(v: int, side: bool) -> int:
            return next(t for t in self._targets(v) if lit(self.S[v, side, t]))

        bottom = {v for v in range(self.n_slots) if (v, BOTTOM) in self.F and lit(self.F[v, BOTTOM])}

        def ref(t: int) -> int:  # a pass-through slot is its false side
            while t >= 0 and t in bottom:
                t = target(t, False)
            return t

        root = ref(0)
        features = [data.features[f] for f in self.features]
        if not features or root < 0:  # no decision node: the diagram is one class
            return Diagram((), data.classes, (), root, input_columns)
        nodes = []
        for v in range(self.n_slots):
            if v in bottom:  # never referenced any more: a placeholder that compaction drops
                nodes.append(DNode(0, leaf_ref(0), leaf_ref(0), self.layer_of[v]))
                continue
            p = next(p for p in range(len(self.features)) if lit(self.F[v, p]))
            nodes.append(DNode(p, ref(target(v, True)), ref(target(v, False)), self.layer_of[v]))
        d = Diagram(tuple(features), data.classes, tuple(nodes), root, input_columns)
        rows = np.array(sorted(r for bk in self.buckets for r in bk.rows), dtype=np.int64)
        Xb = Binarizer(tuple(features)).transform(data.table)[rows]
        return compact_diagram(d, Xb, reduce=self.reduce)

    def _targets(self, v: int) -> list[int]:
        return targets_of(v, self.layer_of, self.n_classes)


def targets_of(v: int, layer_of: tuple[int, ...], n_classes: int) -> list[int]:
    """The successor references a slot may take: the slots of the next layer, then the
    class terminals."""
    nxt = [w for w in range(len(layer_of)) if layer_of[w] == layer_of[v] + 1]
    return nxt + [leaf_ref(c) for c in range(n_classes)]


def encode_diagram_layers(b: ModelBuilder, widths: tuple[int, ...], features: list[int], buckets: tuple[Bucket, ...],
                          n_classes: int, count_size: bool = False, predictions: bool = False) -> DiagramLayersEncoding:
    """Add the layer encoding of a diagram skeleton to ``b``; return its handles.

    Args:
        b: the model under construction.
        widths: layer widths, the first one 1 (``ValueError`` otherwise); capacity no slot
            can use (w_{l+1} > 2 w_l) is dropped, as in ``diagram_flow``.
        features: kept dataset feature indices (the bucket vectors ``x`` follow this order).
        buckets: identical training rows, with class weights.
        n_classes: number of classes.
        count_size: build the ``nodes`` handle now (it is otherwise built on first use).
        predictions: unused (the prediction handle is the class literal T, always built).
    Returns:
        The encoding's handles.
    """
    del predictions
    widths = effective_widths(widths) if features else (1,)  # without features only the root is meaningful
    layer_of = tuple(l for l, w in enumerate(widths) for _ in range(w))
    last = len(widths) - 1
    n_slots = len(layer_of)
    n_feat = len(features)
    classes = range(n_classes)

    # --- structure
    F: dict[tuple[int, int], int] = {}
    for v in range(n_slots):
        options = list(range(n_feat)) + ([BOTTOM] if v == 0 or layer_of[v] < last else [])
        for p in options:
            F[v, p] = b.new_bool(("F", v, p))
        lits = [F[v, p] for p in options]
        b.clause(lits)
        b.clauses(at_most([(1, x) for x in lits], 1, lambda: b.new_aux("F_amo")))
    S: dict[tuple[int, bool, int], int] = {}
    for v in range(n_slots):
        tg = targets_of(v, layer_of, n_classes)
        for side in (True, False):
            lits = [b.new_bool(("S", v, side, t)) for t in tg]
            for t, x in zip(tg, lits):
                S[v, side, t] = x
            _exactly_one(b, lits)
        if (v, BOTTOM) in F:  # a pass-through's true side carries no row: fixed
            b.clause((-F[v, BOTTOM], S[v, True, leaf_ref(0)]))
    A = {v: b.new_bool(("A", v)) for v in range(1, n_slots)}

    # --- rows: go, reach, class
    go: dict[tuple[int, int], int] = {}
    R: dict[tuple[int, int], int] = {}
    T: dict[tuple[int, int], int] = {}
    for u, bk in enumerate(buckets):
        for v in range(n_slots):
            g = go[u, v] = b.new_bool(("go", u, v))
            for p in range(n_feat):
                b.clause((-F[v, p], g if bk.x[p] else -g))
            if (v, BOTTOM) in F:
                b.clause((-F[v, BOTTOM], -g))
            if v > 0:
                R[u, v] = b.new_bool(("R", u, v))
        if n_classes == 2:
            t1 = b.new_bool(("T", u, 1))
            T[u, 1], T[u, 0] = t1, -t1
        else:
            for c in classes:
                T[u, c] = b.new_bool(("T", u, c))
            for c1 in classes:  # at most one class per bucket (the route forces at least one)
                for c2 in range(c1 + 1, n_classes):
                    b.clause((-T[u, c1], -T[u, c2]))
        for v in range(n_slots):
            guard = () if v == 0 else (-R[u, v],)
            for side in (True, False):
                g = -go[u, v] if side else go[u, v]  # false when u takes this side
                for t in targets_of(v, layer_of, n_classes):
                    head = R[u, t] if t >= 0 else T[u, leaf_class(t)]
                    b.clause(guard + (g, -S[v, side, t], head))
    ok: dict[tuple[int, int], int] = {}
    for u, bk in enumerate(buckets):
        for c, _ in bk.class_weight:
            if n_classes == 2 and len(bk.class_weight) == 2:  # its own literal: see ok above
                x = ok[u, c] = b.new_bool(("ok", u, c))
                b.clauses(((-x, T[u, c]), (x, -T[u, c])))
            else:
                ok[u, c] = T[u, c]

    # --- passed slots, distinct sides, symmetry
    if not buckets:  # no row: the diagram is class 0, with no node
        b.clause((F[0, BOTTOM],))
        b.clause((S[0, False, leaf_ref(0)],))
    for v in range(1, n_slots):
        for u in range(len(buckets)):
            b.clause((-R[u, v], A[v]))
        b.clause([-A[v]] + [R[u, v] for u in range(len(buckets))])
    for v in range(n_slots):  # Florio's (8): the two sides of a test never meet
        exempt = ((F[v, BOTTOM],) if (v, BOTTOM) in F else ()) + ((-A[v],) if v > 0 else ())
        for t in targets_of(v, layer_of, n_classes):
            b.clause(exempt + (-S[v, True, t], -S[v, False, t]))
    for v in range(1, n_slots):  # passed slots first in each layer; an unpassed slot is fixed
        if layer_of[v - 1] == layer_of[v]:
            b.clause((-A[v], A[v - 1]))
        b.clause((A[v], F[v, 0]))
        for side in (True, False):
            b.clause((A[v], S[v, side, leaf_ref(0)]))
    enc = DiagramLayersEncoding(widths, tuple(features), n_classes, buckets, layer_of, F, S, go, R, T, A, ok, b)
    if count_size:
        enc.nodes()
    return enc


def _exactly_one(b: ModelBuilder, lits: list[int]) -> None:
    """Exactly one of ``lits``: one clause and a pairwise at-most-one (the lists are short:
    next-layer slots plus classes)."""
    b.clause(lits)
    for i in range(len(lits)):
        for j in range(i + 1, len(lits)):
            b.clause((-lits[i], -lits[j]))
