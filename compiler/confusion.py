"""Confusion quantities over every row (issue 26): misclassification cost matrices,
balanced accuracy, F1 and the confusion counts without a group.

Input: the checker's ``Scope`` and the expression or cost table a program writes. Output:
``QuantityRef``s of kind ``misclassification_cost`` carrying their matrix (``matrix[a][p]``:
the cost of predicting class index ``p`` for a row of class index ``a``), and ``f1``; and,
for the lowerings, ``label_matrix``: the part of a linear form that is a sum over rows of
``weight * M[actual][predicted]`` (errors, predicted(c), tp/fp/tn/fn and
misclassification costs, all of every row) as one matrix.

Invariants: a cost table lists either columns (test costs, C8) or class pairs
(``<actual> as <predicted>: <cost>``), never both; unlisted misclassifications cost the
table's ``*`` default, 1 without one (as ``errors`` counts them), and unlisted correct
predictions cost 0. Balanced accuracy is ``1 - misclassification_cost(B)`` with
``B[a][p] = 1 / (K * N_a)`` for ``p != a`` (``N_a``: the weight of class ``a``, K the classes
with rows): linear, so it is a cost matrix too. The positive class of tp, fp, tn, fn and
f1 is the second class in the data's order (index 1), as for the group forms, unless
a class is named: ``tp(c)``, ``fp(c, G)``, ``f1(c)``.
"""
from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from . import ast
from .checked import LinearForm, QuantityRef
from .errors import Collector, OdtNameError, OdtTypeError, did_you_mean
from .source import Span

if TYPE_CHECKING:
    from .check_exprs import Scope

Matrix = tuple[tuple[Fraction, ...], ...]

#: quantities that are a sum over rows of weight * M[actual][predicted] (without a group)
LABEL_KINDS = frozenset({"errors", "predicted", "tp", "fp", "tn", "fn", "misclassification_cost"})
#: the index of the positive class of tp, fp, tn, fn and f1
POSITIVE = 1


def check_pairs(scope: "Scope", table: ast.CostTable, errs: Collector) -> None:
    """A table of class pairs names known classes and lists no column."""
    if not table.pairs:
        return
    if table.entries:
        errs.add(OdtTypeError, "a cost table lists either columns (test costs) or class pairs (misclassification "
                 "costs), not both", table.entries[0][0].span, "write two tables")
    seen: set[tuple[str, str]] = set()
    for pair in table.pairs:
        for label in (pair.actual, pair.predicted):
            if scope.data is not None and label.text not in _labels(scope):
                errs.add(OdtNameError, f"unknown class {label.text!r}", label.span,
                         did_you_mean(label.text, _labels(scope), "class"))
        key = (pair.actual.text, pair.predicted.text)
        if key in seen:
            errs.add(OdtNameError, f"the cost of {key[0]} as {key[1]} is given twice", pair.span)
        seen.add(key)
        if ast.resolved(pair.cost) < 0:
            errs.add(OdtTypeError, "a misclassification cost is at least 0", pair.span,
                     "a negative cost rewards a prediction: give the other predictions a higher cost instead")


def _labels(scope: "Scope") -> list[str]:
    assert scope.data is not None
    return [str(c) for c in scope.data.classes]


def table_matrix(scope: "Scope", table: ast.CostTable, span: Span) -> Matrix:
    """The matrix of a table of class pairs (labels already checked by ``check_pairs``)."""
    if not table.pairs:
        raise OdtTypeError("misclassification_cost takes a table of class pairs, e.g. cost T = { 0 as 1: 5, * : 1 }",
                           span, "a table of columns is a test cost table: use it with 'with cost'")
    if scope.data is None:
        return ((Fraction(0),),)
    labels = _labels(scope)
    K = len(labels)
    default = Fraction(ast.resolved(table.default)) if table.default is not None else Fraction(1)
    M = [[Fraction(0) if a == p else default for p in range(K)] for a in range(K)]
    for pair in table.pairs:
        if pair.actual.text not in labels or pair.predicted.text not in labels:
            continue  # reported by ``check_pairs``
        M[labels.index(pair.actual.text)][labels.index(pair.predicted.text)] = Fraction(ast.resolved(pair.cost))
    return tuple(tuple(r) for r in M)


def quantity(scope: "Scope", kind: str, args: tuple[ast.Expr, ...], span: Span) -> LinearForm:
    """``misclassification_cost(T)``, ``balanced_accuracy`` or ``f1`` as a linear form."""
    if kind == "misclassification_cost":
        a = args[0]
        name = a.name.text if isinstance(a, ast.Quantity) else None
        if name is None or name not in scope.costs:
            raise OdtNameError(f"unknown cost table '{name}'" if name else "expected the name of a cost table",
                               getattr(a, "span", span), did_you_mean(name, scope.costs, "cost table") if name else None)
        return LinearForm.of(QuantityRef(kind, matrix=table_matrix(scope, scope.costs[name], a.span), span=span))
    if kind == "balanced_accuracy":
        if scope.data is None:
            return LinearForm.const(Fraction(1))
        return LinearForm.const(Fraction(1)).plus(
            LinearForm.of(QuantityRef("misclassification_cost", matrix=balanced_matrix(scope), span=span)).scale(
                Fraction(-1)))
    assert kind == "f1"
    if scope.data is not None and len(scope.data.classes) != 2:
        raise OdtTypeError(f"'f1' needs two classes; the target has {len(scope.data.classes)}", span,
                           "use balanced_accuracy or a cost matrix for several classes")
    return LinearForm.of(QuantityRef("f1", span=span))


def with_positive(scope: "Scope", kind: str, args: tuple[ast.Expr, ...], span: Span) -> LinearForm:
    """``tp(c)``, ``fp(c, G)``, ``f1(c)``...: the confusion count or F1 with ``c`` the positive
    class (a label of the data); without it, the second class (index 1)."""
    from .check_exprs import class_arg, group_arg

    limit = 1 if kind == "f1" else 2
    if len(args) > limit:
        raise OdtTypeError(f"'{kind}' takes [positive class]{'' if kind == 'f1' else ', [group]'}; got {len(args)} "
                           "argument(s)", span)
    if scope.data is not None and len(scope.data.classes) != 2:
        raise OdtTypeError(f"'{kind}' needs two classes; the target has {len(scope.data.classes)}", span,
                           "use predicted(c, G) and errors(G), or balanced_accuracy, for several classes")
    klass = class_arg(scope, args[0])
    group = group_arg(scope, args[1]) if len(args) == 2 else None
    return LinearForm.of(QuantityRef(kind, group, klass, span=span))


def positive(q: QuantityRef) -> int:
    """The positive class index of a confusion count or F1: its class argument, else 1."""
    return POSITIVE if q.klass is None else q.klass


def balanced_matrix(scope: "Scope") -> Matrix:
    """``B[a][p] = 1 / (K * N_a)`` off the diagonal: the loss of balanced accuracy (mean recall
    over the K classes with rows; sklearn's ``balanced_accuracy_score``)."""
    assert scope.data is not None
    data = scope.data
    w = data.row_weights()
    K = len(data.classes)
    totals = [Fraction(float(w[data.y == c].sum())).limit_denominator(10**9) for c in range(K)]
    present = sum(1 for t in totals if t > 0)
    return tuple(tuple(Fraction(0) if a == p or totals[a] == 0 else 1 / (present * totals[a]) for p in range(K))
                 for a in range(K))


def matrix_of(q: QuantityRef, K: int) -> Matrix:
    """The matrix of one label quantity (of every row): its value is the sum over rows of
    ``weight * M[actual][predicted]``."""
    M = [[Fraction(0)] * K for _ in range(K)]
    if q.kind == "misclassification_cost":
        assert q.matrix is not None
        return q.matrix
    pos = positive(q)
    for a in range(K):
        for p in range(K):
            hit = {"errors": a != p, "predicted": p == q.klass,
                   "tp": a == pos and p == pos, "fp": a != pos and p == pos,
                   "tn": a != pos and p != pos, "fn": a == pos and p != pos}[q.kind]
            M[a][p] = Fraction(int(hit))
    return tuple(tuple(r) for r in M)


def label_matrix(form: LinearForm, K: int) -> tuple[Matrix | None, LinearForm]:
    """The label quantities of ``form`` (of every row) as one matrix, and the rest of it
    (None: it has none).

    >>> f = LinearForm(((QuantityRef("fp"), Fraction(5)), (QuantityRef("fn"), Fraction(1))))
    >>> label_matrix(f, 2)[0]
    ((Fraction(0, 1), Fraction(5, 1)), (Fraction(1, 1), Fraction(0, 1)))
    """
    label = [t for t in form.terms if t[0].kind in LABEL_KINDS and t[0].group is None]
    if len(label) == 1 and label[0][1] == 1:  # one matrix as written (``misclassification_cost(C)``): no sums
        return matrix_of(label[0][0], K), LinearForm(tuple(t for t in form.terms if t is not label[0]), form.constant)
    acc = [[Fraction(0)] * K for _ in range(K)]
    rest = []
    found = False
    for q, coef in form.terms:
        if q.kind in LABEL_KINDS and q.group is None:
            found = True
            M = matrix_of(q, K)
            for a in range(K):
                for p in range(K):
                    acc[a][p] += coef * M[a][p]
        else:
            rest.append((q, coef))
    return (tuple(tuple(r) for r in acc) if found else None), LinearForm(tuple(rest), form.constant)


def is_cost_level(form: LinearForm) -> bool:
    """A level dp reads as a cost matrix: a label quantity other than ``errors`` of every row
    (errors alone is plain misclassification)."""
    return any(q.kind in LABEL_KINDS - {"errors"} and q.group is None for q, _ in form.terms)
