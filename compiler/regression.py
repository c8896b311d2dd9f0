"""Regression programs (issue 26): a numeric target, a loss to minimise, leaves that predict
a number.

Input: the quantities of a checked objective and its constraints, and the dataset. Output:
whether the program is a regression program and with which loss (``loss_of``), the target
as float64 values per data row (``target_values``), the derived quantities as linear forms
of the two losses (``derived_form``: ``mse``, ``mae``, ``r2``), the checker's refusals
(``check_regression``) and the value of a loss on a classifier (``loss_value``).

Invariants: the losses are ``squared_error`` (sum of w * (y - prediction)^2; a leaf
predicts the weighted mean of its rows) and ``absolute_error`` (sum of w * |y - prediction|;
a leaf predicts a weighted median); ``mse = squared_error / W``, ``mae = absolute_error /
W`` and ``r2 = 1 - squared_error / SST`` (W the total row weight, SST the weighted sum of
squares about the weighted mean), so every derived quantity is linear in a loss and a
bound on it is a bound on the loss. A program is a regression program exactly when its
objective names a loss; a numeric target is a class label otherwise.
"""
from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .checked import CheckedObjective, Constraint, LinearConstraint, LinearForm, QuantityRef
from .errors import Collector, OdtDataError, OdtError, OdtTypeError
from .source import Span

if TYPE_CHECKING:
    from .checked import CheckedProgram
    from .classifiers import Tree
    from .classifiers.diagram import Diagram
    from .data import Dataset

#: the losses a regression program minimises (the ``TreeSearch.loss`` of each)
LOSSES = ("squared_error", "absolute_error")
#: quantities defined from a loss (``derived_form``)
DERIVED = ("mse", "mae", "r2")
#: classification quantities: meaningless on a regression tree
CLASSIFICATION_KINDS = {"errors", "predicted", "tp", "fp", "tn", "fn"}
#: a numeric target with more distinct non-integer values than this, under a classification
#: objective, is refused with the hint to minimise a loss (issue 26)
MANY_VALUES = 20


def _kinds(form: LinearForm) -> set[str]:
    out: set[str] = set()
    for q, _ in form.terms:
        out.add(q.kind)
        if q.inner is not None:
            out |= _kinds(q.inner)
    return out


def loss_of(objective: CheckedObjective) -> str | None:
    """The loss a program minimises: the first of ``LOSSES`` its objective names, or None
    (a classification program).

    >>> loss_of(CheckedObjective("minimize", (LinearForm.of(QuantityRef("squared_error")),), None))
    'squared_error'
    """
    for level in objective.levels:
        for kind in LOSSES:
            if kind in _kinds(level):
                return kind
    return None


def program_loss(program: "CheckedProgram") -> str | None:
    """``loss_of`` the program's objective."""
    return loss_of(program.objective)


def target_values(data: "Dataset") -> np.ndarray:
    """The target as float64 per data row; ``OdtDataError`` naming the first cell that is
    no number (text, or a missing cell: a regression target must be known on every row)."""
    return data.table.numbers(data.target)


def weighted_sst(y: np.ndarray, w: np.ndarray) -> float:
    """The weighted sum of squares about the weighted mean (the SSE of a single leaf)."""
    total = float(w.sum())
    if total <= 0:
        return 0.0
    mean = float((w * y).sum()) / total
    return float((w * (y - mean) ** 2).sum())


def derived_form(data: "Dataset | None", kind: str, span: Span) -> LinearForm:
    """``mse``, ``mae`` or ``r2`` as a linear form of its loss (see the module); without
    data (it failed to load) or a numeric target, the scale 1 stands in (the checker then
    reports the data's or the target's problem)."""
    total, sst = Fraction(1), Fraction(1)
    if data is not None:
        w = data.row_weights()
        if w.sum() > 0:
            total = Fraction(float(w.sum())).limit_denominator(10**9)
        try:
            s = weighted_sst(target_values(data), w)
            if s > 0:
                sst = Fraction(s)
        except OdtError:
            pass
    if kind == "mse":
        return LinearForm.of(QuantityRef("squared_error", span=span)).scale(1 / total)
    if kind == "mae":
        return LinearForm.of(QuantityRef("absolute_error", span=span)).scale(1 / total)
    assert kind == "r2", kind
    return LinearForm.const(Fraction(1)).plus(LinearForm.of(QuantityRef("squared_error", span=span)).scale(-1 / sst))


def check_regression(objective: CheckedObjective, constraints: tuple[Constraint, ...] | list[Constraint],
                     data: "Dataset | None", errs: Collector, target_span: Span | None = None) -> np.ndarray | None:
    """The target values of a regression program (None for a classification program),
    after the checker's refusals: a loss on a target that is not numeric on every row; a
    classification quantity in a regression program or a loss in a classification one;
    two losses; a classification objective on a numeric target with many distinct
    non-integer values (with the hint to minimise a loss)."""
    loss = loss_of(objective)
    in_objective = set().union(*(_kinds(level) for level in objective.levels)) if objective.levels else set()
    if loss is not None and set(LOSSES) <= in_objective:
        errs.add(OdtTypeError, "an objective minimises one loss: squared_error or absolute_error, not both",
                 objective.span, "keep one of them")
    for c in constraints:
        if not isinstance(c, LinearConstraint):
            continue
        kinds = _kinds(c.form)
        if loss is None and kinds & set(LOSSES):
            errs.add(OdtTypeError, f"'{sorted(kinds & set(LOSSES))[0]}' measures a regression tree, but the objective "
                     "classifies", c.span, "minimize squared_error (or mse, absolute_error) to fit a regression tree")
        elif loss is not None and kinds & CLASSIFICATION_KINDS:
            errs.add(OdtTypeError, f"'{sorted(kinds & CLASSIFICATION_KINDS)[0]}' counts misclassified rows, which a "
                     "regression tree does not have", c.span, "bound squared_error, mse, absolute_error or r2 instead")
        elif loss is not None and (kinds & set(LOSSES)) - {loss}:
            errs.add(OdtTypeError, f"this constraint measures '{sorted((kinds & set(LOSSES)) - {loss})[0]}', but the "
                     f"tree's leaves minimise '{loss}'", c.span,
                     "a leaf predicts the mean for squared_error and a median for absolute_error: bound the same loss")
    if loss is not None and in_objective & CLASSIFICATION_KINDS:
        errs.add(OdtTypeError, f"'{sorted(in_objective & CLASSIFICATION_KINDS)[0]}' counts misclassified rows; a "
                 f"regression objective ({loss}) cannot add it", objective.span,
                 "minimize a loss with nodes or leaves, e.g. minimize squared_error + 100 * nodes")
    if data is None:
        return None
    if loss is None:
        _refuse_continuous_classes(objective, data, errs, target_span)
        return None
    try:
        values = target_values(data)
    except OdtDataError as exc:
        cause = exc.diagnostics[0].message if exc.diagnostics else str(exc)
        errs.add(OdtTypeError, f"'{loss}' fits a numeric target, but the target '{data.target}' is not a number on "
                 f"every row ({cause})", objective.span,
                 "a text target is a class label: minimize errors; drop rows whose target is missing")
        return None
    if not np.all(np.isfinite(values)):
        errs.add(OdtTypeError, f"the target '{data.target}' has a value that is not finite", objective.span)
        return None
    return values


def _refuse_continuous_classes(objective: CheckedObjective, data: "Dataset", errs: Collector,
                               target_span: Span | None) -> None:
    """A classification objective on a numeric target of many distinct non-integer values."""
    if len(data.classes) <= MANY_VALUES:
        return
    values = data.table.floats(data.target)
    if values is None or np.all(np.mod(values, 1) == 0):
        return
    errs.add(OdtTypeError, f"the target '{data.target}' is numeric with {len(data.classes)} distinct values; "
             "a classifier would read each value as a class", objective.span or target_span,
             "to fit a regression tree, minimize squared_error (or mse, absolute_error)")


def loss_value(program: "CheckedProgram", tree: "Tree | Diagram", pred: np.ndarray, kind: str) -> float:
    """``squared_error`` or ``absolute_error`` of a regression tree whose training rows
    reach the leaves predicting ``tree.classes[pred]``, recomputed in numpy."""
    if program.target is None:
        raise ValueError(f"quantity {kind} needs a regression program")
    w = program.dataset.row_weights()
    values = np.asarray(tree.classes, dtype=np.float64)[pred]
    diff = program.target - values
    if kind == "squared_error":
        return float((w * diff * diff).sum())
    return float((w * np.abs(diff)).sum())


def objective_keys(objective: CheckedObjective) -> list[str]:
    """The support table's rows of a regression objective (``compiler/support.py``): R1 a
    squared error, R1a an absolute error, Rneg a loss with a negative weight."""
    keys: list[str] = []
    loss = loss_of(objective)
    if loss is None:
        return keys
    keys.append("R1" if loss == "squared_error" else "R1a")
    for level in objective.levels:
        if any(q.kind in LOSSES and c < 0 for q, c in level.terms):
            keys.append("Rneg")
    return keys


#: the families whose dp hook is a Pareto front (``uses``), which keeps no regression loss
FRONT_KEYS = ("C9u",)


def relation_keys(c: LinearConstraint, capped: bool, regression: bool = False) -> list[str]:
    """The rows of a relation in a regression program (``regression``) or over a loss: R2
    a cap on the loss (``squared_error <= k``, ``r2 >= x``: ``capped``, one quantity bounded
    from above), R3 a relation dp would check on Pareto fronts (a loss bounded from below
    or with other quantities, ``features_used <= k``, ``nodes >= k``)."""
    if not _kinds(c.form) & set(LOSSES):
        return ["R3"] if regression and not capped else []
    return ["R2" if capped else "R3"]
