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
from .checked import CheckedProgram, LinearConstraint, LinearForm
from .constraints import ClassifierView, ConstraintCheck, family_of
from .regression import loss_value, program_loss
from .values import form_value, quantity_value

__all__ = ["ConstraintCheck", "Evaluation", "evaluate", "form_value", "quantity_value", "train_predictions"]
from .source import Span

if TYPE_CHECKING:
    from .classifiers.diagram import Diagram

_TOL = 1e-9


@dataclass(frozen=True, slots=True)
class Evaluation:
    train_errors: float
    objective: tuple[float, ...]
    constraints: tuple[ConstraintCheck, ...]

    @property
    def feasible(self) -> bool:
        return all(c.holds for c in self.constraints)


def train_predictions(program: CheckedProgram, tree: "Tree | Diagram") -> np.ndarray:
    """Class indices the tree predicts for the training rows (through its own binarisation)."""
    from .data import Binarizer

    Xb = Binarizer(tree.features).transform(program.dataset.table)
    return tree.predict_binary(Xb)


def train_leaves(program: CheckedProgram, tree: Tree) -> np.ndarray:
    """The leaf (pre-order index among the leaves) each training row reaches."""
    from .data import Binarizer

    return tree.leaf_index_binary(Binarizer(tree.features).transform(program.dataset.table))


def evaluate(program: CheckedProgram, tree: "Tree | Diagram") -> Evaluation:
    pred = train_predictions(program, tree)
    data = program.dataset
    loss = program_loss(program)  # a regression tree's training "errors" are its loss
    errors = float(data.row_weights()[pred != data.y].sum()) if loss is None else loss_value(program, tree, pred, loss)
    objective = tuple(form_value(program, tree, pred, lvl) for lvl in program.objective.levels)
    checks = []
    view = ClassifierView(program, tree, pred)
    for c in program.constraints:
        family = family_of(c)
        if family is not None:  # the family's own re-check, the same object that lowered it
            checks.append(family.check(c, view))
            continue
        assert isinstance(c, LinearConstraint)
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


def _skeleton_checks(program: CheckedProgram, tree: "Tree | Diagram") -> list[ConstraintCheck]:
    """The skeleton's own limits re-checked on the decoded classifier: depth and size of a
    tree (S1, S2), the layer widths of a diagram (S4), one feature per level of a BDD (S5)."""
    from .checked import BddSkeleton, DiagramSkeleton, TreeSkeleton
    from .classifiers.diagram import Diagram

    sk = program.skeleton
    line = sk.span.line if sk.span else 0
    if isinstance(sk, DiagramSkeleton):
        assert isinstance(tree, Diagram)
        live = tree.reachable()
        per_layer = [sum(1 for i in live if tree.nodes[i].layer == l) for l in range(len(sk.widths))]
        ok = all(n <= w for n, w in zip(per_layer, sk.widths)) and all(tree.nodes[i].layer < len(sk.widths)
                                                                     for i in live)
        worst = max((n - w for n, w in zip(per_layer, sk.widths)), default=0)
        return [ConstraintCheck(f"widths {list(sk.widths)}", line, float(worst), "<=", 0.0, ok)]
    if isinstance(sk, BddSkeleton):
        assert isinstance(tree, Diagram)
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
