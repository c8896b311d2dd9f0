"""The value of the program's quantities for a decoded classifier (E2): errors, sizes,
group counts and confusion counts recomputed in numpy from its training predictions.
Read by the evaluator and by the constraint families' re-checks."""
from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .checked import CheckedProgram, LinearForm, QuantityRef
from .regression import loss_value
from .search_confusion import confusion_counts

if TYPE_CHECKING:
    from .classifiers import Tree
    from .classifiers.diagram import Diagram


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
            pos = 1 if q.klass is None else q.klass  # the positive class (issue 26: tp(c))
            positive = pred == pos
            actual = data.y == pos
            sel = {"tp": positive & actual, "fp": positive & ~actual, "tn": ~positive & ~actual,
                   "fn": ~positive & actual}[q.kind]
            return float(w[mask & sel].sum())
        case "squared_error" | "absolute_error":
            return loss_value(program, tree, pred, q.kind)
        case "misclassification_cost":  # issue 26: sum over rows of w * M[actual][predicted]
            assert q.matrix is not None
            M = np.array([[float(v) for v in row] for row in q.matrix])
            return float((w[mask] * M[data.y[mask], pred[mask]]).sum())
        case "f1":
            return float(f1_exact(program, pred, 1 if q.klass is None else q.klass))
        case "abs":
            assert q.inner is not None
            return abs(form_value(program, tree, pred, q.inner))
    raise ValueError(f"quantity {q} cannot be evaluated on a tree")


def f1_exact(program: CheckedProgram, pred: np.ndarray, positive: int = 1) -> Fraction:
    """F1 of the positive class (index 1) over every row, exactly: 2tp / (2tp + fp + fn)
    with the weights read as the fractions they stand for; 0 when tp + fp + fn is 0
    (scikit-learn's ``zero_division=0``... of a set with no positive row and none predicted)."""
    data = program.dataset
    w = data.row_weights()
    tp, fp, fn = confusion_counts(pred == positive, data.y == positive, w)
    return Fraction(0) if tp == 0 else Fraction(2 * tp, 2 * tp + fp + fn)


def form_value(program: CheckedProgram, tree: "Tree | Diagram", pred: np.ndarray, form: LinearForm) -> float:
    total = Fraction(form.constant)
    value = float(total)
    for q, c in form.terms:
        value += float(c) * quantity_value(program, tree, pred, q)
    return value
