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
        if not isinstance(c, LinearConstraint):
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
    return Evaluation(errors, objective, tuple(checks))


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
