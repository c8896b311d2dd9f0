"""Florio et al. (AAAI 2023), "Optimal Decision Diagrams for Classification": the MILP of
eqs (1)-(18) on a levelled diagram skeleton (S4, ``model diagram(widths = [...])``).

Input: the layer widths w_0 = 1, w_1, ..., w_{D-1}; the training buckets (identical rows,
``tree_paths.Bucket``); the kept binary features (univariate splits) or the hyperplane
inputs (multivariate splits, ``tree_flow.HyperplaneInputs``); the number of classes.
Output: IR variables and rows in the ``ModelBuilder``, and a ``DiagramFlowEncoding`` with
the handles every skeleton offers (errors, prediction, nodes, decode; a diagram has no
``leaves`` handle: its size is its decision nodes).

The skeleton graph G (paper, "Canonical Formulation"): node u of layer l < D - 1 may link,
on each side, to any node of layer l + 1 or to any class terminal (the long arcs); a node
of the last layer links only to class terminals. Successors are ordered as in the paper
(next-layer nodes by index, then the terminals), which is the order (11) uses. Widths
with w_{l+1} > 2 w_l are accepted: at most 2 w_l nodes of layer l + 1 can have an incoming
arc, so the extra nodes can never be active (w.l.o.g., as the paper notes); they are not
built.

Variables (paper names):
  d[u]          node u is active (eq. 18's d_v); the root may instead be a class leaf:
                d[0] + sum_k p0[k] = 1 (a one-class diagram; the paper fixes d_0 = 1)
  y[u, s, v]    side s (+ / -) of u links to successor v (y+_uv, y-_uv)
  e[u, j, s]    univariate: u tests literal (j, s): its positive side takes the rows with
                x_j = 1 (s = +) or x_j = 0 (s = -); this is (15)-(16) on 0/1 features,
                with a_vj = +1 / -1 and b_v between 0 and 1. Nodes above the last layer
                also offer the constant literal TOP (a_v = 0): all rows on one side, a
                pass-through node, which the paper's univariate hyperplanes allow too.
  a[u, j], b[u] multivariate: the hyperplane a.x >= b (a in [-1, 1]^d, b in [-1, 1])
  w[i, u, s]    flow of bucket i through side s of u (w+_iu, w-_iu)
  z[i, u, s, v] flow of bucket i from side s of u to v (z+_iuv, z-_iuv)
  t[i, k]       flow of bucket i into terminal k (eq. 17's w_iv); r[i, k] its part
                through a class-k root leaf
  lam[i, l]     multivariate only: the side bucket i takes at level l (eqs 4-5)

Rows:
  (1)       w+_i0 + w-_i0 + sum_k r[i, k] = 1;  w+_iv + w-_iv = sum_{u, s} z[i, u, s, v]
  (2)-(3)   w[i, u, s] = sum_v z[i, u, s, v]
  (4)-(5)   sum_{u in layer l} w-_iu <= 1 - lam[i, l];  sum w+_iu <= lam[i, l]  (multivariate)
  (6)       sum_v y+_uv = sum_v y-_uv = d[u]
  (7)       d[v] <= sum_{u, s} y[u, s, v]  (v not the root)
  (8)       y+_uv + y-_uv <= d[v]  (<= 1 for a terminal): the two sides never meet
  (9)-(10)  z[i, u, s, v] <= y[u, s, v];  r[i, k] <= p0[k]
  (11)      sum_{w <= v} y+_uw <= 1 - y-_uv: the negative side links to the smaller
            successor (w.l.o.g.: flip the literal, or negate the hyperplane)
  (12)      in-degree non-increasing along each layer l in {2, ..., D - 1}
  (13)-(14) multivariate: big-M form of w-_iv = 1 => a.x_i + eps <= b_v and
            w+_iv = 1 => a.x_i >= b_v (``tree_flow.hyperplane_rows``, eps = 1e-4)
  (15)-(16) univariate: sum_{j, s} e[u, j, s] = d[u], and routing rows
            w+_iu <= sum of the literals true for i, w-_iu <= sum of those false for i
  (17)      t[i, k] = r[i, k] + sum_{u, s} z[i, u, s, k]

Objective handles (eq. 18): errors(G) = sum_i sum_k W[i, k] (1 - t[i, k]) (phi = 0/1
mismatch, with row weights); nodes = the active nodes that send training rows both
ways (a pass-through node is not a decision: the decoded diagram skips it), counted by
h[u, s] >= w[i, u, s] (side s carries flow) and c[u] = h+_u AND h-_u, built only when
the program reads it. The paper writes (18) as (1/n) errors +
alpha / (|V^I| - 1) * (active non-root nodes): in odt, ``minimize errors + k * nodes``
with k = alpha * n / (|V^I| - 1) has the same minimisers (see docs/language.md).

Given binary d, y, e (and lam) every bucket follows one path, so all flows are integral
(Theorem 1); they are continuous for MILP solvers and BOOL when ``integral`` (CP-SAT has no
continuous variables). Univariate routing rows already make the flows integral, so lambda
(4)-(5) is added for hyperplanes only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..classifiers.diagram import leaf_ref
from ..ir import ModelBuilder, Origin, VarKind
from .tree_flow import HyperplaneInputs, flow_errors, hyperplane_rows, oblique_feature
from .tree_paths import Bucket

ONE = Fraction(1)
SIDES = (1, -1)  # + then -


def effective_widths(widths: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """Validate a skeleton and drop capacity no node can use (w_{l+1} <= 2 w_l).

    >>> effective_widths([1, 2, 8, 3])
    (1, 2, 4, 3)
    """
    widths = tuple(int(w) for w in widths)
    if not widths or widths[0] != 1:
        raise ValueError(f"a diagram skeleton starts with one root: widths must begin with 1, got {list(widths)}")
    if any(w < 1 for w in widths):
        raise ValueError(f"every layer of a diagram skeleton needs a width >= 1, got {list(widths)}")
    out = [1]
    for w in widths[1:]:
        out.append(min(w, 2 * out[-1]))
    return tuple(out)


@dataclass(frozen=True)
class DiagramFlowEncoding:
    """Handles of the diagram MILP (what lower.py and Program may read)."""

    widths: tuple[int, ...]
    features: tuple[int, ...]  # kept dataset feature indices (univariate)
    n_classes: int
    buckets: tuple[Bucket, ...]
    layer: tuple[int, ...]  # node -> layer; nodes are numbered layer by layer, root 0
    succ: dict[int, tuple[int, ...]]  # node -> successor refs (>= 0 node, < 0 class leaf), in (11) order
    d: dict[int, int]
    p0: dict[int, int]  # class -> var "the root is a leaf of this class"
    y: dict[tuple[int, int, int], int]  # (node, side, successor ref) -> var
    e: dict[tuple[int, int, int], int]  # (node, literal position, side) -> var; TOP = len(features)
    w: dict[tuple[int, int, int], int]  # (bucket, node, side) -> flow var
    z: dict[tuple[int, int, int, int], int]  # (bucket, node, side, successor ref) -> flow var
    r: dict[tuple[int, int], int]  # (bucket, class) -> flow into a root leaf
    t: dict[tuple[int, int], int]  # (bucket, class) -> flow into terminal (eq. 17)
    integral: bool
    builder: ModelBuilder = field(repr=False, compare=False)
    planes: HyperplaneInputs | None = None
    a: dict[tuple[int, int], int] | None = None
    b: dict[int, int] | None = None
    lam: dict[tuple[int, int], int] | None = None
    _counts: dict = field(default_factory=dict, repr=False, compare=False)  # lazily built count handles
    reduce: bool = True  # decode: merge equal nodes (off under structure constraints)

    @property
    def n_nodes(self) -> int:
        return len(self.layer)

    @property
    def top(self) -> int:
        """The literal position of the constant test TOP (always true)."""
        return len(self.features)

    # ------------------------------------------------------------------ handles
    def errors(self, rows_mask: np.ndarray | None = None) -> tuple[list[tuple[Fraction, int]], Fraction]:
        """Eq. (18), first term: sum_i sum_k W[i, k] * (1 - t[i, k])."""
        return flow_errors(self.buckets, rows_mask, lambda i, k: [self.t[i, k]])

    def prediction(self, u: int, k: int) -> tuple[list[tuple[Fraction, int]], Fraction]:
        """"Bucket u is predicted class k": its flow into terminal k (integral, Theorem 1)."""
        return [(ONE, self.t[u, k])], Fraction(0)

    def nodes(self) -> tuple[list[tuple[Fraction, int]], Fraction]:
        """Decision nodes that send training rows both ways (eq. 18's regulariser, on the
        decoded diagram: pass-through nodes are skipped by decoding and not counted)."""
        if "nodes" not in self._counts:
            self._counts["nodes"] = [(ONE, c) for c in self._node_counters()]
        return self._counts["nodes"], Fraction(0)

    def _flag(self, role: tuple) -> int:
        if self.integral:
            return self.builder.new_bool(role)
        return self.builder.new_var(role, VarKind.REAL, 0.0, 1.0)

    def _carries(self, role: tuple, flows: list[int]) -> int:
        """A 0/1 handle equal to "some bucket's flow in ``flows`` is 1" (exact at integral flows)."""
        h = self._flag(role)
        for f in flows:
            self.builder.linear([(ONE, f), (-ONE, h)], "<=", Fraction(0), Origin(role + ("lb",)))
        self.builder.linear([(ONE, h)] + [(-ONE, f) for f in flows], "<=", Fraction(0), Origin(role + ("ub",)))
        return h

    def _node_counters(self) -> list[int]:
        out = []
        for u in range(self.n_nodes):
            h = {s: self._carries(("h", u, s), [self.w[i, u, s] for i in range(len(self.buckets))]) for s in SIDES}
            c = self._flag(("c", u))
            row = self.builder.linear
            row([(ONE, h[1]), (ONE, h[-1]), (-ONE, c)], "<=", ONE, Origin(("c", u, "and")))
            row([(ONE, c), (-ONE, h[1])], "<=", Fraction(0), Origin(("c", u, "+")))
            row([(ONE, c), (-ONE, h[-1])], "<=", Fraction(0), Origin(("c", u, "-")))
            out.append(c)
        return out

    # ------------------------------------------------------------------ structure
    def structure(self, b: ModelBuilder, columns: list[str], feature_columns: list[str]):
        """The structure handles (``dag_structure.DagStructure``) on the flows, for side
        constraints (C3, C7-C9), booleans tied to the flows by linear rows and clauses
        (univariate splits; the flows are integral given the binaries, Theorem 1):

          R[i, v]     bucket i passes slot v:  R = w+_iv + w-_iv
          H[v, s]     side s of v carries rows:  H >= w[i, v, s] for each i, H <= their sum
          Z[v]        H+ and H-: v sends rows both ways (what ``nodes`` counts; the
                      decoded diagram keeps exactly these slots as decision nodes)
          arc (v, x)  OR_s (H[v, s] and y[v, s, x]): a row goes from v to slot x, also
                      through a one-sided slot, which the decoded diagram skips
          T[v, col]   Z[v] and v tests a feature of ``col``

        ``feature_columns[j]`` is the column of kept feature j; ``columns`` are the
        columns constraints mention."""
        from .dag_structure import DagStructure, define_tests

        assert self.planes is None, "structure handles are built for univariate splits"
        n_buckets = len(self.buckets)
        slots = tuple(range(self.n_nodes))  # layer by layer: a topological order, root first

        def both(lit: int, parts: list[int]) -> None:  # lit <-> AND parts
            for p in parts:
                b.clause((-lit, p))
            b.clause(tuple(-p for p in parts) + (lit,))

        def either(lit: int, parts: list[int]) -> None:  # lit <-> OR parts
            for p in parts:
                b.clause((-p, lit))
            b.clause([-lit] + parts)

        R: dict[tuple[int, int], int] = {}
        for i in range(n_buckets):
            for v in slots[1:]:
                R[i, v] = b.new_bool(("R", i, v))
                b.linear([(ONE, R[i, v]), (-ONE, self.w[i, v, 1]), (-ONE, self.w[i, v, -1])], "==", Fraction(0),
                         Origin(("reach", i, v)))
        H: dict[tuple[int, int], int] = {}
        for v in slots:
            for s in SIDES:
                h = H[v, s] = b.new_bool(("H", v, s))
                flows = [self.w[i, v, s] for i in range(n_buckets)]
                for f in flows:
                    b.linear([(ONE, f), (-ONE, h)], "<=", Fraction(0), Origin(("side used", v, s, "lb")))
                b.linear([(ONE, h)] + [(-ONE, f) for f in flows], "<=", Fraction(0), Origin(("side used", v, s, "ub")))
        Z = {v: b.new_bool(("Z", v)) for v in slots}
        for v in slots:
            both(Z[v], [H[v, 1], H[v, -1]])
        counted = self._counts.get("nodes")
        if counted is None:  # ``nodes`` counts these same literals
            self._counts["nodes"] = [(ONE, Z[v]) for v in slots]
        else:  # already built on its own handles: tie them to Z
            for v, (_, c) in zip(slots, counted):
                b.linear([(ONE, c), (-ONE, Z[v])], "==", Fraction(0), Origin(("nodes", v)))
        arcs = []
        for v in slots:
            for x in self.succ[v]:
                if x < 0:
                    continue
                sides = []
                for s in SIDES:
                    a = b.new_bool(("arc side", v, s, x))
                    both(a, [H[v, s], self.y[v, s, x]])
                    sides.append(a)
                lit = b.new_bool(("arc", v, x))
                either(lit, sides)
                arcs.append((v, x, lit))
        T = define_tests(b, slots, columns, Z, lambda v, col: [
            self.e[v, j, s] for j, c in enumerate(feature_columns) for s in SIDES if c == col])
        self._no_idle_decisions(b, H, Z)
        counts = tuple(len(bk.rows) for bk in self.buckets)
        weights = tuple(sum((wt for _, wt in bk.class_weight), Fraction(0)) for bk in self.buckets)
        return DagStructure(slots, tuple(arcs), Z, T, R, counts, weights)

    def _no_idle_decisions(self, b: ModelBuilder, H: dict, Z: dict) -> None:
        """Forbid a decision slot whose two sides lead, past one-sided slots, to the same
        decision slot or class: decoding (``compact_diagram``) removes such a slot, so
        its test would count for ``uses``, ``before`` or ``expected_cost`` in the solver
        but not in the returned diagram. N[x, t] ("rows at x next meet t") is forced by
        implications, from the last layer up; the diagram with the slot removed predicts
        the same with one decision fewer, so no optimum is lost to this."""
        order = sorted(range(self.n_nodes), key=lambda v: -v)  # later layers first
        N: dict[tuple[int, int], int] = {}

        def nxt(x: int, t: int) -> int:
            if (x, t) not in N:
                N[x, t] = b.new_aux(f"next_{x}_{t}")
            return N[x, t]

        for x in order:
            b.clause((-Z[x], nxt(x, x)))
            for s in SIDES:
                for w in self.succ[x]:
                    base = (Z[x], -H[x, s], -self.y[x, s, w])
                    if w < 0:
                        b.clause(base + (nxt(x, w),))
                        continue
                    for (u, t), lit in list(N.items()):
                        if u == w:
                            b.clause(base + (-lit, nxt(x, t)))
        for v in range(self.n_nodes):
            side_of: dict[tuple[int, int], int] = {}
            for s in SIDES:
                for w in self.succ[v]:
                    targets = [(w, ())] if w < 0 else [(t, (lit,)) for (u, t), lit in N.items() if u == w]
                    for t, cond in targets:
                        if (s, t) not in side_of:
                            side_of[s, t] = b.new_aux(f"side_{v}_{s}_{t}")
                        b.clause((-self.y[v, s, w],) + tuple(-c for c in cond) + (side_of[s, t],))
            for t in {t for _, t in side_of}:
                if (1, t) in side_of and (-1, t) in side_of:
                    b.clause((-Z[v], -side_of[1, t], -side_of[-1, t]))

    # ------------------------------------------------------------------ decode
    def decode(self, values, data, input_columns):
        """The solver's diagram: active nodes, their tests and arcs, then compacted against
        the bucketed training rows (arcs no row takes go; pass-through nodes vanish), so
        every training row is routed exactly as in the solver's flows."""
        from ..data import Binarizer, Feature
        from ..classifiers.diagram import DNode, Diagram, compact_diagram

        def on(var: int) -> bool:
            return float(values[var]) > 0.5

        cols = tuple(dict.fromkeys(list(input_columns) + [c for c, _ in (self.planes.dims if self.planes else ())]))
        rows = np.array(sorted(r for bk in self.buckets for r in bk.rows), dtype=np.int64)
        root_class = next((k for k, v in self.p0.items() if on(v)), None)
        if root_class is not None or not rows.size:
            return Diagram((), data.classes, (), leaf_ref(root_class or 0), cols)
        active = [u for u in range(self.n_nodes) if on(self.d[u])]
        pos = {u: n for n, u in enumerate(active)}

        def ref(v: int) -> int:
            return v if v < 0 else pos[v]

        def target(u: int, s: int) -> int:
            return ref(next(v for v in self.succ[u] if on(self.y[u, s, v])))

        features: list[Feature] = [data.features[f] for f in self.features]
        planes = self._hyperplanes(values, active) if self.planes is not None else {}
        top_index = None
        nodes = []
        for u in active:
            plus, minus = target(u, 1), target(u, -1)
            if u in planes:  # the oblique test holds on the positive side
                features.append(planes[u])
                nodes.append(DNode(len(features) - 1, plus, minus, self.layer[u]))
                continue
            j, s = next((j, s) for (v, j, s), var in self.e.items() if v == u and on(var))
            if j == self.top:  # a pass-through: a placeholder test, always true, that compaction removes
                if top_index is None:
                    features.append(Feature("<always>", "binary"))
                    top_index = len(features) - 1
                j = top_index
            nodes.append(DNode(j, plus, minus, self.layer[u]) if s == 1 else DNode(j, minus, plus, self.layer[u]))
        real = [f for n, f in enumerate(features) if n != top_index]
        Xb = Binarizer(tuple(real)).transform(data.table) if real else np.zeros((data.n_rows, 0), bool)
        if top_index is not None:
            Xb = np.insert(Xb, top_index, True, axis=1)
        diagram = Diagram(tuple(features), data.classes, tuple(nodes), 0, cols)
        return compact_diagram(diagram, Xb[rows], reduce=self.reduce)

    def _hyperplanes(self, values, active: list[int]) -> dict:
        """One oblique Feature per active node, routing the buckets as the flows did."""
        assert self.planes is not None and self.a is not None and self.b is not None
        d = len(self.planes.dims)
        out = {}
        for u in active:
            here = [(i, float(values[self.w[i, u, 1]]) > 0.5) for i in range(len(self.buckets))
                    if float(values[self.w[i, u, 1]]) + float(values[self.w[i, u, -1]]) > 0.5]
            zb = np.array([self.buckets[i].x for i, _ in here], dtype=float).reshape(-1, d)
            sides = np.array([side for _, side in here], dtype=bool)
            a = np.array([float(values[self.a[u, j]]) for j in range(d)])
            out[u] = oblique_feature(self.planes, a, float(values[self.b[u]]), zb, sides)
        return out


def encode_diagram_flow(b: ModelBuilder, widths: tuple[int, ...], features: list[int], buckets: tuple[Bucket, ...],
                        n_classes: int, planes: HyperplaneInputs | None = None,
                        integral: bool = False) -> DiagramFlowEncoding:
    """Add Florio's diagram MILP to ``b`` and return its handles.

    Args:
        widths: layer widths, the first 1 (``ValueError`` otherwise).
        features: kept binary feature indices (univariate; empty with ``planes``).
        buckets: identical training rows; with ``planes`` each ``x`` is its row of ``planes.Z``.
        planes: hyperplane inputs for multivariate splits, else None.
        integral: flows as BOOL variables (a backend without continuous variables).
    """
    widths = effective_widths(widths)
    depth = len(widths)
    layers: list[list[int]] = []
    layer: list[int] = []
    for l, width in enumerate(widths):
        layers.append(list(range(len(layer), len(layer) + width)))
        layer.extend([l] * width)
    classes = [leaf_ref(k) for k in range(n_classes)]
    succ = {u: tuple((layers[layer[u] + 1] if layer[u] + 1 < depth else []) + classes) for u in range(len(layer))}
    flow_kind = (VarKind.BOOL, 0.0, 1.0) if integral else (VarKind.REAL, 0.0, 1.0)

    def flow(role: tuple) -> int:
        return b.new_bool(role) if integral else b.new_var(role, *flow_kind)

    def row(terms, op, rhs, role):
        b.linear([(Fraction(c), v) for c, v in terms], op, Fraction(rhs), Origin(role))

    n = len(layer)
    d = {u: b.new_bool(("d", u)) for u in range(n)}
    p0 = {k: b.new_bool(("p0", k)) for k in range(n_classes)}
    y = {(u, s, v): b.new_bool(("y", u, s, v)) for u in range(n) for s in SIDES for v in succ[u]}
    literals = {u: [(j, s) for j in range(len(features) + (layer[u] < depth - 1)) for s in SIDES]
                for u in range(n)} if planes is None else {u: [] for u in range(n)}
    e = {(u, j, s): b.new_bool(("e", u, j, s)) for u in range(n) for j, s in literals[u]}
    a = hb = lam = None
    if planes is not None:
        dims = len(planes.dims)
        a = {(u, j): b.new_var(("a", u, j), VarKind.REAL, -1.0, 1.0) for u in range(n) for j in range(dims)}
        hb = {u: b.new_var(("b", u), VarKind.REAL, -1.0, 1.0) for u in range(n)}
        lam = {(i, l): b.new_bool(("lambda", i, l)) for i in range(len(buckets)) for l in range(depth)}

    # topology: the root decides or is a class leaf; (6)-(8), (11), (12), (15)
    row([(1, d[0])] + [(1, v) for v in p0.values()], "==", 1, ("root",))
    for u in range(n):
        for s in SIDES:  # (6)
            row([(1, y[u, s, v]) for v in succ[u]] + [(-1, d[u])], "==", 0, ("arcs", u, s))
        for v in succ[u]:  # (8)
            if v >= 0:
                row([(1, y[u, 1, v]), (1, y[u, -1, v]), (-1, d[v])], "<=", 0, ("target", u, v))
            else:
                row([(1, y[u, 1, v]), (1, y[u, -1, v])], "<=", 1, ("target", u, v))
        for n_v, v in enumerate(succ[u]):  # (11)
            row([(1, y[u, 1, w]) for w in succ[u][:n_v + 1]] + [(1, y[u, -1, v])], "<=", 1, ("symmetry", u, v))
        if planes is None:  # (15)
            row([(1, e[u, j, s]) for j, s in literals[u]] + [(-1, d[u])], "==", 0, ("select", u))
    indegree = {v: [(1, y[u, s, v]) for u in (layers[layer[v] - 1] if layer[v] else []) for s in SIDES]
                for v in range(n)}
    for v in range(1, n):  # (7)
        row([(1, d[v])] + [(-c, x) for c, x in indegree[v]], "<=", 0, ("reached", v))
    for l in range(2, depth):  # (12)
        for u, v in zip(layers[l], layers[l][1:]):
            row(indegree[u] + [(-c, x) for c, x in indegree[v]], ">=", 0, ("indegree", u, v))

    w: dict[tuple[int, int, int], int] = {}
    z: dict[tuple[int, int, int, int], int] = {}
    r: dict[tuple[int, int], int] = {}
    t: dict[tuple[int, int], int] = {}
    for i, bk in enumerate(buckets):
        inflow: dict[int, list[tuple[int, int]]] = {}
        for u in range(n):
            for s in SIDES:
                w[i, u, s] = flow(("w", i, u, s))
                for v in succ[u]:
                    z[i, u, s, v] = flow(("z", i, u, s, v))
                    inflow.setdefault(v, []).append((-1, z[i, u, s, v]))
                    row([(1, z[i, u, s, v]), (-1, y[u, s, v])], "<=", 0, ("arc flow", i, u, s, v))  # (9)-(10)
                row([(1, w[i, u, s])] + [(-1, z[i, u, s, v]) for v in succ[u]], "==", 0, ("out", i, u, s))  # (2)-(3)
        for k in range(n_classes):
            r[i, k] = flow(("r", i, k))
            row([(1, r[i, k]), (-1, p0[k])], "<=", 0, ("root leaf", i, k))
        row([(1, w[i, 0, 1]), (1, w[i, 0, -1])] + [(1, r[i, k]) for k in range(n_classes)], "==", 1, ("in", i, 0))
        for v in range(1, n):  # (1)
            row([(1, w[i, v, 1]), (1, w[i, v, -1])] + inflow.get(v, []), "==", 0, ("in", i, v))
        for k in range(n_classes):  # (17)
            t[i, k] = flow(("t", i, k))
            row([(1, t[i, k]), (-1, r[i, k])] + inflow.get(leaf_ref(k), []), "==", 0, ("terminal", i, k))
        for u in range(n):
            if planes is None:  # (15)-(16) on 0/1 features: routing rows
                true = [(-1, e[u, j, s]) for j, s in literals[u] if (j == len(features) or bk.x[j]) == (s == 1)]
                false = [(-1, e[u, j, s]) for j, s in literals[u] if (j == len(features) or bk.x[j]) != (s == 1)]
                row([(1, w[i, u, 1])] + true, "<=", 0, ("route+", i, u))
                row([(1, w[i, u, -1])] + false, "<=", 0, ("route-", i, u))
            else:  # (13)-(14)
                assert a is not None and hb is not None
                hyperplane_rows(row, bk, (i, u), w[i, u, -1], w[i, u, 1], d[u],
                                [a[u, j] for j in range(len(planes.dims))], hb[u])
        if lam is not None:  # (4)-(5)
            for l in range(depth):
                row([(1, w[i, u, -1]) for u in layers[l]] + [(1, lam[i, l])], "<=", 1, ("lambda-", i, l))
                row([(1, w[i, u, 1]) for u in layers[l]] + [(-1, lam[i, l])], "<=", 0, ("lambda+", i, l))
    return DiagramFlowEncoding(widths, tuple(features), n_classes, buckets, tuple(layer), succ, d, p0, y, e, w, z,
                               r, t, integral, b, planes, a, hb, lam)
