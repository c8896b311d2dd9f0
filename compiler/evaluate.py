"""Re-verification of a classifier against its program, in plain numpy (E2).

Input: a ``CheckedProgram`` and a decoded classifier. Output: an ``Evaluation`` with every
quantity the program mentions recomputed from the classifier's predictions on the
training rows, the value of each objective level, and each constraint's value, bound and
whether it holds. The solver is not consulted: this is the independent witness.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .classifiers import Tree
from .checked import CheckedProgram, LinearConstraint, LinearForm, QuantityRef
from .source import Span

if TYPE_CHECKING:
    from .classifiers.diagram import Diagram

_TOL = 1e-9


@dataclass(frozen=True, slots=True)
class ConstraintCheck:
    text: str
    line: int
    value: float
    op: str
    bound: float
    holds: bool

    def as_dict(self) -> dict:
        return {"constraint": self.text, "line": self.line, "value": self.value, "op": self.op,
                "bound": self.bound, "holds": self.holds}


@dataclass(frozen=True, slots=True)
class Evaluation:
    train_errors: float
    objective: tuple[float, ...]
    constraints: tuple[ConstraintCheck, ...]

    @property
    def feasible(self) -> bool:
        return all(c.holds for c in self.constraints)


def quantity_value(program: CheckedProgram, tree: "Tree | Diagram", pred: np.ndarray, q: QuantityRef) -> float:
    """The value of one quantity for a classifier whose training predictions are ``pred``."""
    data = program.dataset
    w = data.row_weights()
    mask = program.groups[q.group] if q.group is not None else np.ones(data.n_rows, bool)
    wrong = pred != data.y
    match q.kind:
        case "errors":
            return float(w[mask & wrong].sum())
        case "nodes":
            return float(tree.n_nodes)
        case "leaves":
            return float(tree.n_leaves)
        case "depth":
            return float(tree.depth)
        case "features_used":
            return float(len(tree.features_used()))
        case "predicted":
            return float(w[mask & (pred == q.klass)].sum())
        case "tp" | "fp" | "tn" | "fn":
            positive = pred == 1
            actual = data.y == 1
            sel = {"tp": positive & actual, "fp": positive & ~actual, "tn": ~positive & ~actual,
                   "fn": ~positive & actual}[q.kind]
            return float(w[mask & sel].sum())
        case "abs":
            assert q.inner is not None
            return abs(form_value(program, tree, pred, q.inner))
    raise ValueError(f"quantity {q} cannot be evaluated on a tree")


def form_value(program: CheckedProgram, tree: "Tree | Diagram", pred: np.ndarray, form: LinearForm) -> float:
    total = Fraction(form.constant)
    value = float(total)
    for q, c in form.terms:
        value += float(c) * quantity_value(program, tree, pred, q)
    return value


def train_predictions(program: CheckedProgram, tree: "Tree | Diagram") -> np.ndarray:
    """Class indices the tree predicts for the training rows (through its own binarisation)."""
    from .data import Binarizer

    Xb = Binarizer(tree.features).transform(program.dataset.table)
    return tree.predict_binary(Xb)


def evaluate(program: CheckedProgram, tree: "Tree | Diagram") -> Evaluation:
    pred = train_predictions(program, tree)
    data = program.dataset
    errors = float(data.row_weights()[pred != data.y].sum())
    objective = tuple(form_value(program, tree, pred, lvl) for lvl in program.objective.levels)
    checks = []
    for c in program.constraints:
        if not isinstance(c, LinearConstraint) or c.scope is not None or "expected_cost" in c.form.kinds():
            continue  # per-node/leaf/path forms and expected_cost: _structure_checks
        diff = form_value(program, tree, pred, c.form)
        holds = {"<=": diff <= _TOL, ">=": diff >= -_TOL, "==": abs(diff) <= _TOL}[c.op]
        if c.left is not None and c.right is not None:  # report the sides as written
            value = form_value(program, tree, pred, c.left)
            bound = form_value(program, tree, pred, c.right)
        else:
            value = form_value(program, tree, pred, LinearForm(c.form.terms, Fraction(0)))
            bound = float(-c.form.constant)
        checks.append(ConstraintCheck(_quote(c.span), c.span.line if c.span else 0, value, c.op, bound, holds))
    checks.extend(_skeleton_checks(program, tree))
    checks.extend(_structure_checks(program, tree))
    return Evaluation(errors, objective, tuple(checks))


@dataclass(frozen=True)
class _Shape:
    """What structure and path constraints read from a classifier, for trees and
    diagrams alike: rows (of positive weight) per decision node and per leaf, the leaf of
    each row, each root-to-leaf path as the column tuples of its tests, in order, and per
    decision node its columns and the rows passing it (the cost rows pay, C8)."""

    node_samples: list[int]
    leaf_samples: list[int]
    leaf_of: np.ndarray
    paths: list[list[tuple[str, ...]]]
    node_rows: list[tuple[tuple[str, ...], np.ndarray]]


def _tree_shape(tree: Tree, Xb: np.ndarray, rows: np.ndarray, n_rows: int) -> _Shape:
    from .classifiers import Leaf

    nodes, leaves, paths, node_rows = [], [], [], []
    leaf_of = np.full(n_rows, -1)

    def go(node, rows, above):
        if isinstance(node, Leaf):
            leaf_of[rows] = len(leaves)
            leaves.append(len(rows))
            paths.append(above)
            return
        nodes.append(len(rows))
        hit = Xb[rows, node.feature]
        cols = tree.features[node.feature].columns
        node_rows.append((cols, rows))
        go(node.if_true, rows[hit], above + [cols])
        go(node.if_false, rows[~hit], above + [cols])

    go(tree.root, rows, [])
    return _Shape(nodes, leaves, leaf_of, paths, node_rows)


def _diagram_shape(d, Xb: np.ndarray, rows: np.ndarray, n_rows: int) -> _Shape:
    """The decoded diagram read as Florio's family: its decision nodes are the nodes
    reachable from the root (the slots that split rows, pass-throughs compacted away);
    its paths are the root-to-class paths, enumerated (decoded diagrams are small), each
    arc of which carries training rows. Leaves are its arcs into class leaves (only
    tree-scoped constraints read them, and those are refused on diagrams)."""
    keep = np.zeros(n_rows, bool)
    keep[rows] = True
    _, _, arcs = d.route(Xb)
    live = d.reachable()
    nodes, leaves, node_rows = [], [], []
    leaf_of = np.full(n_rows, -1)
    for i in live:
        n = d.nodes[i]
        mine = np.zeros(n_rows, bool)
        for side, ref in ((True, n.if_true), (False, n.if_false)):
            taken = arcs.get((i, side), np.zeros(n_rows, bool)) & keep
            mine |= taken
            if ref < 0:
                leaf_of[taken] = len(leaves)
                leaves.append(int(taken.sum()))
        nodes.append(int(mine.sum()))
        node_rows.append((d.features[n.feature].columns, np.flatnonzero(mine)))
    if d.root < 0:
        leaf_of[rows] = 0
        leaves.append(len(rows))
    paths = [[d.features[d.nodes[i].feature].columns for i in path] for path, _ in d.paths()]
    return _Shape(nodes, leaves, leaf_of, paths, node_rows)


def _structure_checks(program: CheckedProgram, tree: "Tree | Diagram") -> list[ConstraintCheck]:
    """C3, C5-C10 re-checked on the decoded classifier (rows of positive weight count)."""
    from . import ast
    from .classifiers import Tree as TreeType
    from .data import Binarizer
    from .checked import StructuralConstraint

    data = program.dataset
    Xb = Binarizer(tree.features).transform(data.table)
    rows = np.flatnonzero(data.row_weights() > 0)
    shape = (_tree_shape if isinstance(tree, TreeType) else _diagram_shape)(tree, Xb, rows, data.n_rows)
    leaf_of = shape.leaf_of
    checks = []

    def column_of(name: str) -> str:
        if name in data.table.columns:
            return name
        return next((f.column for f in data.features if f.name == name), name)

    for c in program.constraints:
        line = c.span.line if c.span else 0
        text = _quote(c.span)
        if isinstance(c, LinearConstraint) and c.scope in ("leaf", "node"):
            counts = shape.leaf_samples if c.scope == "leaf" else shape.node_samples
            sides = [(_scoped_value(c.left, n), _scoped_value(c.right, n)) for n in counts]
            diffs = [a - b for a, b in sides]
            holds = all({"<=": d <= _TOL, ">=": d >= -_TOL, "==": abs(d) <= _TOL}[c.op] for d in diffs)
            worst = (min if c.op == ">=" else max)(range(len(diffs)), key=lambda i: diffs[i]) if diffs else None
            value, bound = sides[worst] if worst is not None else (0.0, 0.0)
            checks.append(ConstraintCheck(text, line, value, c.op, bound, holds))
        elif isinstance(c, LinearConstraint) and c.scope == "path":
            assert c.costs is not None
            costs = [sum(float(c.costs.of(col)) for test in path for col in test) for path in shape.paths]
            bound = -float(c.form.constant) / float(c.form.terms[0][1]) if c.form.terms else 0.0
            worst = max(costs) if costs else 0.0
            checks.append(ConstraintCheck(text, line, worst, c.op, bound, worst <= bound + _TOL))
        elif isinstance(c, LinearConstraint) and "expected_cost" in c.form.kinds():
            # Nanfack 4.3: the weighted mean over rows of the cost of the row's path, i.e.
            # each decision node's cost times the weight of the rows passing it
            assert c.costs is not None
            w = data.row_weights()
            total = float(w[rows].sum())
            paid = sum(sum(float(c.costs.of(col)) for col in cols) * float(w[here].sum())
                       for cols, here in shape.node_rows)
            expected = paid / total if total else 0.0
            pred = train_predictions(program, tree)

            def side(form: LinearForm | None) -> float:
                if form is None:
                    return 0.0
                rest = LinearForm(tuple(t for t in form.terms if t[0].kind != "expected_cost"), form.constant)
                return form_value(program, tree, pred, rest) + expected * float(
                    sum((k for q, k in form.terms if q.kind == "expected_cost"), Fraction(0)))

            d = side(c.form)
            holds = {"<=": d <= _TOL, ">=": d >= -_TOL, "==": abs(d) <= _TOL}[c.op]
            checks.append(ConstraintCheck(text, line, side(c.left), c.op, side(c.right), holds))
        elif isinstance(c, StructuralConstraint):
            node = c.node
            if isinstance(node, ast.Every) and isinstance(node.body, ast.OrderOnPath):
                a, b = column_of(node.body.first.text), column_of(node.body.second.text)
                bad = sum(1 for path in shape.paths for i, test in enumerate(path)
                          if b in test and not any(a in above for above in path[:i]))
                checks.append(ConstraintCheck(text, line, float(bad), "==", 0.0, bad == 0))
            elif isinstance(node, ast.Every) and isinstance(node.body, ast.PathExclusion):
                cols = {column_of(x.text) for x in node.body.names}
                bad = sum(1 for path in shape.paths if cols <= {col for test in path for col in test})
                checks.append(ConstraintCheck(text, line, float(bad), "==", 0.0, bad == 0))
            elif isinstance(node, ast.UsesConstraint):
                used = tree.features_used()
                ok = _uses_value(node.expr, used, column_of)
                checks.append(ConstraintCheck(text, line, float(ok), "==", 1.0, ok))
            elif isinstance(node, ast.CallConstraint):
                from .constraints import _row_ref

                ids = {rid: i for i, rid in enumerate(data.ids or ())}
                r1, r2 = (ids.get(_row_ref(a), -1) for a in node.call.args)
                same = r1 >= 0 and r2 >= 0 and (leaf_of[r1] == leaf_of[r2] or data.row_weights()[[r1, r2]].min() == 0)
                checks.append(ConstraintCheck(text, line, float(same), "==", 1.0, bool(same)))
            elif isinstance(node, ast.ThresholdRange):
                lo, hi, col = float(node.low), float(node.high), node.name.text
                ts = [f.threshold for f in tree.features if f.column == col and f.kind == "threshold"]
                ok = all(lo <= t <= hi for t in ts)
                checks.append(ConstraintCheck(text, line, float(len(ts)), ">=", 0.0, ok))
    return checks


def _scoped_value(form: LinearForm | None, samples: int) -> float:
    if form is None:
        return 0.0
    return float(form.constant) + sum(float(c) * samples for q, c in form.terms if q.kind == "samples")


def _uses_value(e, used: set[str], column_of) -> bool:
    from . import ast

    if isinstance(e, ast.UsesAtom):
        return column_of(e.name.text) in used
    if isinstance(e, ast.UsesNot):
        return not _uses_value(e.item, used, column_of)
    vals = [_uses_value(i, used, column_of) for i in e.items]
    return all(vals) if isinstance(e, ast.UsesAnd) else any(vals)


def _skeleton_checks(program: CheckedProgram, tree: "Tree | Diagram") -> list[ConstraintCheck]:
    """The skeleton's own limits re-checked on the decoded classifier: depth and size of a
    tree (S1, S2), the layer widths of a diagram (S4), one feature per level of a BDD (S5)."""
    from .checked import BddSkeleton, DiagramSkeleton, TreeSkeleton

    sk = program.skeleton
    line = sk.span.line if sk.span else 0
    if isinstance(sk, DiagramSkeleton):
        live = tree.reachable()
        per_layer = [sum(1 for i in live if tree.nodes[i].layer == l) for l in range(len(sk.widths))]
        ok = all(n <= w for n, w in zip(per_layer, sk.widths)) and all(tree.nodes[i].layer < len(sk.widths) for i in live)
        worst = max((n - w for n, w in zip(per_layer, sk.widths)), default=0)
        return [ConstraintCheck(f"widths {list(sk.widths)}", line, float(worst), "<=", 0.0, ok)]
    if isinstance(sk, BddSkeleton):
        live = tree.reachable()
        levels: dict[int, set[int]] = {}
        for i in live:
            levels.setdefault(tree.nodes[i].layer, set()).add(tree.nodes[i].feature)
        mixed = sum(1 for fs in levels.values() if len(fs) > 1)
        tested = [tree.features[next(iter(fs))] for fs in levels.values()]
        repeated = len(tested) - len(set(tested))  # read-once: a feature on one level only
        ok = mixed == 0 and repeated == 0 and tree.depth <= sk.depth and all(l < sk.depth for l in levels)
        return [ConstraintCheck(f"bdd(depth = {sk.depth}): one feature per level", line, float(tree.depth), "<=",
                                float(sk.depth), ok)]
    if not isinstance(sk, TreeSkeleton):
        return []
    out = [ConstraintCheck(f"depth <= {sk.depth}", line, float(tree.depth), "<=", float(sk.depth), tree.depth <= sk.depth)]
    if sk.leaves is not None:
        out.append(ConstraintCheck(f"leaves <= {sk.leaves}", line, float(tree.n_leaves), "<=", float(sk.leaves),
                                   tree.n_leaves <= sk.leaves))
    if sk.nodes is not None:
        out.append(ConstraintCheck(f"nodes <= {sk.nodes}", line, float(tree.n_nodes), "<=", float(sk.nodes),
                                   tree.n_nodes <= sk.nodes))
    return out


def _quote(span: Span | None) -> str:
    return span.quote() if span is not None else ""
