"""Re-verification of a classifier against its program, in plain numpy (E2).

Input: a ``CheckedProgram`` and a decoded classifier. Output: an ``Evaluation`` with every
quantity the program mentions recomputed from the classifier's predictions on the
training rows, the value of each objective level, and each constraint's value, bound and
whether it holds. The solver is not consulted: this is the independent witness.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .classifier import Tree
from .program_types import CheckedProgram, LinearConstraint, LinearForm, QuantityRef
from .source import Span

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


def quantity_value(program: CheckedProgram, tree: Tree, pred: np.ndarray, q: QuantityRef) -> float:
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


def form_value(program: CheckedProgram, tree: Tree, pred: np.ndarray, form: LinearForm) -> float:
    total = Fraction(form.constant)
    value = float(total)
    for q, c in form.terms:
        value += float(c) * quantity_value(program, tree, pred, q)
    return value


def train_predictions(program: CheckedProgram, tree: Tree) -> np.ndarray:
    """Class indices the tree predicts for the training rows (through its own binarisation)."""
    from .data import Binarizer

    Xb = Binarizer(tree.features).transform(program.dataset.table)
    return tree.predict_binary(Xb)


def evaluate(program: CheckedProgram, tree: Tree) -> Evaluation:
    pred = train_predictions(program, tree)
    data = program.dataset
    errors = float(data.row_weights()[pred != data.y].sum())
    objective = tuple(form_value(program, tree, pred, lvl) for lvl in program.objective.levels)
    checks = []
    for c in program.constraints:
        if not isinstance(c, LinearConstraint) or c.scope is not None:
            continue
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


def _walk_rows(tree: Tree, Xb: np.ndarray, rows: np.ndarray):
    """(node, rows reaching it, columns tested above it) for every node, pre-order."""
    from .classifier import Leaf

    out = []

    def go(node, rows, above):
        out.append((node, rows, above))
        if isinstance(node, Leaf):
            return
        col = tree.features[node.feature].columns
        hit = Xb[rows, node.feature]
        go(node.if_true, rows[hit], above + list(col))
        go(node.if_false, rows[~hit], above + list(col))

    go(tree.root, rows, [])
    return out


def _structure_checks(program: CheckedProgram, tree: Tree) -> list[ConstraintCheck]:
    """C3, C5-C10 re-checked on the decoded tree (rows of positive weight are counted)."""
    from . import ast
    from .classifier import Leaf
    from .data import Binarizer
    from .program_types import StructuralConstraint

    data = program.dataset
    Xb = Binarizer(tree.features).transform(data.table)
    rows = np.flatnonzero(data.row_weights() > 0)
    walked = _walk_rows(tree, Xb, rows)
    leaf_of = np.full(data.n_rows, -1)
    for i, (node, r, _) in enumerate(walked):
        if isinstance(node, Leaf):
            leaf_of[r] = i
    checks = []

    def column_of(name: str) -> str:
        if name in data.table.columns:
            return name
        return next((f.column for f in data.features if f.name == name), name)

    for c in program.constraints:
        line = c.span.line if c.span else 0
        text = _quote(c.span)
        if isinstance(c, LinearConstraint) and c.scope in ("leaf", "node"):
            nodes = [(n, r) for n, r, _ in walked if isinstance(n, Leaf) == (c.scope == "leaf")]
            sides = [(_scoped_value(c.left, len(r)), _scoped_value(c.right, len(r))) for _, r in nodes]
            diffs = [a - b for a, b in sides]
            holds = all({"<=": d <= _TOL, ">=": d >= -_TOL, "==": abs(d) <= _TOL}[c.op] for d in diffs)
            worst = (min if c.op == ">=" else max)(range(len(diffs)), key=lambda i: diffs[i]) if diffs else None
            value, bound = sides[worst] if worst is not None else (0.0, 0.0)
            checks.append(ConstraintCheck(text, line, value, c.op, bound, holds))
        elif isinstance(c, LinearConstraint) and c.scope == "path":
            assert c.costs is not None
            paths = [above for n, _, above in walked if isinstance(n, Leaf)]
            costs = [sum(float(c.costs.of(col)) for col in above) for above in paths]
            bound = -float(c.form.constant) / float(c.form.terms[0][1]) if c.form.terms else 0.0
            worst = max(costs) if costs else 0.0
            checks.append(ConstraintCheck(text, line, worst, c.op, bound, worst <= bound + _TOL))
        elif isinstance(c, StructuralConstraint):
            node = c.node
            if isinstance(node, ast.Every) and isinstance(node.body, ast.OrderOnPath):
                a, b = column_of(node.body.first.text), column_of(node.body.second.text)
                bad = 0
                for n, _, above in walked:
                    if not isinstance(n, Leaf) and b in tree.features[n.feature].columns and a not in above:
                        bad += 1
                checks.append(ConstraintCheck(text, line, float(bad), "==", 0.0, bad == 0))
            elif isinstance(node, ast.Every) and isinstance(node.body, ast.PathExclusion):
                cols = {column_of(x.text) for x in node.body.names}
                bad = sum(1 for n, _, above in walked if isinstance(n, Leaf) and cols <= set(above))
                checks.append(ConstraintCheck(text, line, float(bad), "==", 0.0, bad == 0))
            elif isinstance(node, ast.UsesConstraint):
                used = {col for f in (tree.features[n.feature] for n, _ in tree.walk() if not isinstance(n, Leaf))
                        for col in f.columns}
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


def _skeleton_checks(program: CheckedProgram, tree: Tree) -> list[ConstraintCheck]:
    """The skeleton's own limits (S1, S2) re-checked on the decoded tree."""
    from .program_types import TreeSkeleton

    sk = program.skeleton
    if not isinstance(sk, TreeSkeleton):
        return []
    line = sk.span.line if sk.span else 0
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
