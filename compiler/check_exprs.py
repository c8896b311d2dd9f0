"""Expressions -> ``LinearForm``: the quantities of objectives and relations (O1-O5, C1-C4).

Input: an ``ast.Expr`` and the ``Scope`` it is read in (the dataset, when there is one, and
the groups and cost tables the program defines). Output: a ``LinearForm`` with exact
coefficients, or an ``OdtError`` naming the first problem of the expression.

Invariants: expressions are walked with an explicit stack, never by recursion, so an
objective of thousands of terms or parentheses nested thousands deep is no
``RecursionError``; only ``abs(...)`` nests a form in a form, at most ``MAX_ABS_NESTING``
deep (deeper is an error at the abs that is too deep); every coefficient of a result lies in ``ranges.MAX_MAGNITUDE``.
Without a dataset (its data failed to load) names and arities are still checked, but not
class labels or group weights.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from . import ast, confusion, regression
from .checked import QUANTITIES, LinearForm, QuantityRef
from .data import Dataset
from .errors import OdtNameError, OdtTypeError, did_you_mean
from .ranges import MAX_MAGNITUDE, out_of_range
from .source import Span

#: Quantities that count whole rows or structure, so their values are integers when the
#: data has integer weights; used to turn ``<`` into ``<= -1``.
#: how deep ``abs(...)`` may nest inside ``abs(...)``: each level is a quantity holding a
#: linear form that every later stage (lowering, the evaluator) reads recursively
MAX_ABS_NESTING = 32

INTEGER_KINDS = {"errors", "nodes", "leaves", "depth", "features_used", "predicted", "tp", "fp", "tn", "fn", "size", "samples"}


@dataclass(frozen=True, slots=True)
class Scope:
    """What names mean where an expression is read: the data (None when it failed to
    load), the groups (row masks; None masks without data) and the named cost tables."""

    data: Dataset | None
    groups: Mapping[str, np.ndarray | None] = field(default_factory=dict)
    costs: Mapping[str, ast.CostTable] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        return list(self.data.table.columns) if self.data is not None else []

    def has_column(self, name: str) -> bool:
        """True when ``name`` is a column, or when there is no data to tell."""
        return self.data is None or name in self.data.table.columns


def form(scope: Scope, e: ast.Expr, depth: int = 0) -> LinearForm:
    """The linear form of ``e`` (``depth``: the abs(...) it lies in); raises ``OdtError``
    at the first problem.

    >>> from odt.compiler.parse import parse_program
    >>> obj = parse_program("minimize 2 * errors + nodes / 4").items[0]
    >>> str(form(Scope(None), obj.levels[0]))
    '2*errors + 1/4*nodes'
    """
    out: list[LinearForm] = []
    stack: list[tuple[Any, bool]] = [(e, False)]
    while stack:
        node, ready = stack.pop()
        if isinstance(node, (ast.BinOp, ast.Neg)) and not ready:
            stack.append((node, True))
            if isinstance(node, ast.BinOp):
                stack.append((node.right, False))
                stack.append((node.left, False))
            else:
                stack.append((node.item, False))
            continue
        match node:
            case ast.Number(value=v):
                out.append(LinearForm.const(v))
            case ast.Neg():
                out.append(out.pop().scale(Fraction(-1)))
            case ast.BinOp(op=op):
                b = out.pop()
                a = out.pop()
                out.append(_combine(op, a, b, node.span))
            case ast.Quantity(name=n):
                out.append(quantity(scope, n, (), node.span))
            case ast.Call(name=n, args=args):
                out.append(quantity(scope, n, args, node.span, depth))
            case ast.StringArg() | ast.ClassArg():
                raise OdtTypeError("a text value cannot stand in an arithmetic expression", node.span)
            case _:
                raise OdtTypeError("unsupported expression", getattr(node, "span", None))
    result = out[0]
    for value in [c for _, c in result.terms] + [result.constant]:
        if abs(value) > MAX_MAGNITUDE:
            raise OdtTypeError(f"a coefficient of this expression is out of range ({out_of_range(value)})",
                               getattr(e, "span", None), "rescale the expression")
    return result


def _combine(op: str, a: LinearForm, b: LinearForm, span: Span) -> LinearForm:
    if op == "+":
        return a.plus(b)
    if op == "-":
        return a.plus(b.scale(Fraction(-1)))
    if op == "*":
        if a.is_constant():
            return b.scale(a.constant)
        if b.is_constant():
            return a.scale(b.constant)
        raise OdtTypeError("a product of two quantities is not linear", span, "multiply quantities by numbers only")
    if not b.is_constant():
        raise OdtTypeError("division by a quantity is not linear", span, "write a >= k * b instead of a / b >= k")
    if b.constant == 0:
        raise OdtTypeError("division by zero", span)
    return a.scale(1 / b.constant)


def quantity(scope: Scope, n: ast.Name, args: tuple[ast.Expr, ...], span: Span, depth: int = 0) -> LinearForm:
    """One quantity reference, ``errors`` or ``rate(1, women)``, as a linear form
    (``depth``: the abs(...) it lies in)."""
    kind = n.text
    if kind in scope.groups and not args:
        raise OdtTypeError(f"'{kind}' is a group, not a quantity", n.span,
                           f"use it as an argument, e.g. errors({kind}) or rate(1, {kind})")
    if kind not in QUANTITIES:
        raise OdtNameError(f"unknown quantity '{kind}'", n.span, did_you_mean(kind, QUANTITIES, "quantity"))
    sig = QUANTITIES[kind]
    if kind in ("tp", "fp", "tn", "fn", "f1") and any(not _is_group(scope, a) for a in args):  # issue 26
        return confusion.with_positive(scope, kind, args, span)
    if kind in ("misclassification_cost", "balanced_accuracy", "f1"):  # issue 26
        if len(args) != len(sig):
            raise OdtTypeError(f"'{kind}' takes {'a cost table' if sig else 'no arguments'}; got {len(args)} "
                               "argument(s)", span)
        return confusion.quantity(scope, kind, args, span)
    required = [s for s in sig if not s.endswith("?")]
    if not len(required) <= len(args) <= len(sig):
        want = ", ".join({"g": "group", "g?": "[group]", "c": "class", "e": "expression"}[s] for s in sig) or "no arguments"
        raise OdtTypeError(f"'{kind}' takes {want}; got {len(args)} argument(s)", span)
    klass = group = None
    inner = None
    for s, a in zip(sig, args):
        if s.startswith("g"):
            group = group_arg(scope, a)
        elif s == "c":
            klass = class_arg(scope, a)
        else:
            if depth >= MAX_ABS_NESTING:
                raise OdtTypeError(f"abs(...) nested more than {MAX_ABS_NESTING} deep", span,
                                   "abs(abs(x)) is abs(x): drop the levels that change nothing")
            inner = form(scope, a, depth + 1)
    if kind == "abs":
        assert inner is not None
        if inner.is_constant():
            return LinearForm.const(abs(inner.constant))
        return LinearForm.of(QuantityRef("abs", inner=inner, span=span))
    if kind == "accuracy":  # accuracy(G) = 1 - errors(G) / weight(G)
        total = group_weight(scope, group)
        return LinearForm.const(Fraction(1)).plus(
            LinearForm.of(QuantityRef("errors", group, span=span)).scale(-1 / total))
    if kind == "rate":  # rate(c, G) = predicted(c, G) / weight(G)
        total = group_weight(scope, group)
        return LinearForm.of(QuantityRef("predicted", group, klass, span=span)).scale(1 / total)
    if kind == "size":
        return LinearForm.const(group_weight(scope, group))
    if kind in regression.DERIVED:
        return regression.derived_form(scope.data, kind, span)
    if kind in ("tp", "fp", "tn", "fn") and scope.data is not None and len(scope.data.classes) != 2:
        raise OdtTypeError(f"'{kind}' needs two classes; the target has {len(scope.data.classes)}", span,
                           "use predicted(c, G) and errors(G) for several classes")
    return LinearForm.of(QuantityRef(kind, group, klass, span=span))


def _is_group(scope: Scope, a: ast.Expr) -> bool:
    return isinstance(a, ast.Quantity) and a.name.text in scope.groups


def group_weight(scope: Scope, group: str | None) -> Fraction:
    """The total row weight of ``group`` (of every row when None); 1 when it is zero or
    there is no data."""
    if scope.data is None:
        return Fraction(1)
    w = scope.data.row_weights()
    mask = scope.groups.get(group) if group is not None else None
    if group is not None and mask is None:
        return Fraction(1)
    total = w.sum() if mask is None else w[mask].sum()
    return Fraction(float(total)).limit_denominator(10**9) if total > 0 else Fraction(1)


def group_arg(scope: Scope, a: ast.Expr) -> str:
    if isinstance(a, ast.Quantity) and a.name.text in scope.groups:
        return a.name.text
    name = a.name.text if isinstance(a, ast.Quantity) else None
    raise OdtNameError(f"unknown group '{name}'" if name else "expected a group name", getattr(a, "span", None),
                       did_you_mean(name, scope.groups, "group") if name else None)


def class_arg(scope: Scope, a: ast.Expr) -> int:
    text = None
    if isinstance(a, ast.Number):
        text = str(a.value.numerator) if a.value.denominator == 1 else str(float(a.value))
    elif isinstance(a, ast.StringArg):
        text = a.value
    elif isinstance(a, ast.Quantity):
        text = a.name.text
    if scope.data is None:
        if text is None:
            raise OdtNameError("expected a class label", getattr(a, "span", None))
        return 0
    labels = [str(c) for c in scope.data.classes]
    if text is None or text not in labels:
        raise OdtNameError(f"unknown class {text!r}" if text else "expected a class label", getattr(a, "span", None),
                           did_you_mean(text or "", labels, "class"))
    return labels.index(text)


def integral(scope: Scope, f: LinearForm) -> bool:
    """True when ``f`` takes only integer values (integer coefficients over counts, and
    integer row weights for the row counts)."""
    w = scope.data.row_weights() if scope.data is not None else np.ones(1)
    weights_integral = bool(np.all(np.equal(np.mod(w, 1), 0)))
    if f.constant.denominator != 1:
        return False
    for q, c in f.terms:
        if c.denominator != 1 or q.kind not in INTEGER_KINDS:
            return False
        if q.kind in ("errors", "predicted", "tp", "fp", "tn", "fn") and not weights_integral:
            return False
    return True
