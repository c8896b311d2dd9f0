"""``subject to`` items -> checked constraints (C1-C10, O4).

Input: the constraints of a program and its ``Scope``. Output: ``LinearConstraint`` values
(strict forms made non-strict, sides kept for reports) and ``StructuralConstraint`` values
(path, uses, same_leaf, threshold forms: kept as their AST), with every problem in the
``Collector``.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from . import ast
from .check_exprs import Scope, form, integral
from .check_groups import check_cost_table, check_feature_name
from .checked import QUANTITIES, CostTable, LinearConstraint, LinearForm, StructuralConstraint
from .constraints.registry import family_of, scoped_quantities
from .errors import Collector, OdtError, OdtNameError, OdtTypeError, did_you_mean
from .source import Span


def safe_form(scope: Scope, e: ast.Expr, errs: Collector) -> LinearForm:
    """``form`` with its error collected (the form is then the constant 0)."""
    try:
        return form(scope, e)
    except OdtError as exc:
        errs.absorb(exc)
        return LinearForm.const(Fraction(0))


def check_constraint(c: ast.Constraint, scope: Scope, errs: Collector) -> list:
    match c:
        case ast.Relation():
            return relation(c, None, scope, errs)
        case ast.Every(scope=where, body=body):
            if isinstance(body, ast.Relation):
                return relation(body, where, scope, errs, c.span)
            if where != "path":
                word = "before" if isinstance(body, ast.OrderOnPath) else "not (...)"
                errs.add(OdtTypeError, f"'{word}' is a path constraint: write 'every path: ...'", c.span)
            names = (body.first, body.second) if isinstance(body, ast.OrderOnPath) else body.names
            for n in names:
                check_feature_name(scope, n, errs)
            return [StructuralConstraint(c, c.span)]
        case ast.UsesConstraint(expr=e):
            for n in uses_names(e):
                check_feature_name(scope, n, errs)
            return [StructuralConstraint(c, c.span)]
        case ast.CallConstraint(call=call):
            if call.name.text != "same_leaf":
                errs.add(OdtTypeError, f"'{call.name.text}(...)' alone is not a constraint", c.span,
                         "compare it, e.g. errors(G) <= 3; the only bare call is same_leaf(r1, r2)")
                return []
            same_leaf(call, scope, errs)
            return [StructuralConstraint(c, c.span)]
        case ast.ThresholdRange(name=n, low=lo_or_param, high=hi_or_param):
            lo, hi = ast.resolved(lo_or_param), ast.resolved(hi_or_param)
            if not scope.has_column(n.text):
                errs.add(OdtNameError, f"unknown column '{n.text}'", n.span, did_you_mean(n.text, scope.columns, "column"))
            elif lo > hi:
                errs.add(OdtTypeError, f"empty range [{lo}, {hi}]", c.span)
            return [StructuralConstraint(c, c.span)]
    raise AssertionError(c)


def same_leaf(call: ast.Call, scope: Scope, errs: Collector) -> None:
    if len(call.args) != 2:
        errs.add(OdtTypeError, f"same_leaf takes two row ids; got {len(call.args)}", call.span)
        return
    if scope.data is None:
        return
    if scope.data.ids is None:
        errs.add(OdtTypeError, "same_leaf needs row ids: add 'id <column>' to the data block", call.span)
        return
    for a in call.args:
        text = a.name.text if isinstance(a, ast.Quantity) else a.value if isinstance(a, ast.StringArg) else \
            str(a.value) if isinstance(a, ast.Number) else None
        if text not in scope.data.ids:
            errs.add(OdtNameError, f"no row has id {text!r}", a.span, did_you_mean(str(text), scope.data.ids, "row id"))


def resolved_costs(r: ast.Relation, scope: Scope) -> CostTable | None:
    if r.cost is None:
        return None
    table = r.cost.table if r.cost.table is not None else scope.costs.get(r.cost.name.text) if r.cost.name else None
    if table is None:
        return None
    if table.pairs:
        raise OdtTypeError("'with cost' takes a table of test costs per column; this one lists class pairs "
                           "(a misclassification cost table)", r.cost.span,
                           "use it as misclassification_cost(T) in the objective or a constraint")
    return CostTable(tuple((column_of(n.text, scope), ast.resolved(c)) for n, c in table.entries),
                     ast.resolved(table.default) if table.default is not None else Fraction(0))


def column_of(name: str, scope: Scope) -> str:
    """A feature name used in a constraint, as the column it tests."""
    if scope.data is None or name in scope.data.table.columns:
        return name
    found = scope.data.features.find_name(name)
    return name if found is None else found.column


def relation(r: ast.Relation, where: str | None, scope: Scope, errs: Collector, span: Span | None = None) -> list:
    before = len(errs.diagnostics)
    forms = [safe_form(scope, p, errs) for p in r.parts]
    costs = resolved_costs(r, scope)
    uses_cost = any(q.kind in ("cost", "expected_cost") for f in forms for q, _ in f.terms)
    if uses_cost and costs is None and (r.cost is None or r.cost.name is None or r.cost.name.text in scope.costs):
        errs.add(OdtTypeError, "a cost constraint needs its cost table", r.span,
                 "add  with cost { feature: 3, *: 1 }  or  with cost <table name>")
    if where is not None:  # the vocabulary of the scope: what the constraint families measure there
        allowed = scoped_quantities(where)
        for name, call in named_quantities(r.parts):
            if name not in allowed:
                errs.add(OdtTypeError, f"'{name}' has no meaning per {where}", r.span,
                         f"inside 'every {where}:' use {', '.join(sorted(allowed))}")
            elif call and QUANTITIES.get(name):  # a group argument (no arguments at all: the arity error)
                errs.add(OdtTypeError, f"'{name}(...)' takes no argument per {where}: it counts the {where}'s own rows",
                         r.span, f"write  every {where}: {name} ...")
    else:
        for f in forms:
            for q, _ in f.terms:
                if q.kind in ("samples", "cost"):
                    errs.add(OdtTypeError, f"'{q.kind}' is measured per node, leaf or path", r.span,
                             f"write  every {'leaf' if q.kind == 'samples' else 'path'}: ...")
    out = []
    for i, op in enumerate(r.ops):
        if op == "!=":
            errs.add(OdtTypeError, "'!=' is not a linear constraint", r.span, "use <= or >=")
            continue
        diff = forms[i].plus(forms[i + 1].scale(Fraction(-1)))
        if op in ("<", ">"):
            if not integral(scope, diff):
                errs.add(OdtTypeError, f"'{op}' needs an integer-valued expression here", r.span,
                         f"use '{op}=' with an explicit margin")
                continue
            diff = diff.plus(LinearForm.const(Fraction(1 if op == "<" else -1)))
            op += "="
        if diff.is_constant():
            holds = {"<=": diff.constant <= 0, ">=": diff.constant >= 0, "==": diff.constant == 0}[op]
            if not holds:
                errs.add(OdtTypeError, "this constraint compares constants and is always false", r.span)
            continue
        checked = LinearConstraint(diff, op, span or r.span, where, forms[i], forms[i + 1], costs)
        if where is not None and family_of(checked) is None and len(errs.diagnostics) == before:
            errs.add(OdtTypeError, f"a constraint per {where} bounds one quantity", r.span,
                     f"write one constraint per quantity, e.g. every {where}: ... <= ...")
            continue
        out.append(checked)
    if r.cost is not None and r.cost.name is not None and r.cost.name.text not in scope.costs:
        errs.add(OdtNameError, f"unknown cost table '{r.cost.name.text}'", r.cost.name.span,
                 did_you_mean(r.cost.name.text, scope.costs, "cost table"))
    if r.cost is not None and r.cost.table is not None:
        check_cost_table(scope, r.cost.table, errs)
    return out


def named_quantities(parts: tuple[ast.Expr, ...]) -> list[tuple[str, bool]]:
    """The quantities an expression names as written (``accuracy``, not the errors it
    stands for), each with whether it is called with arguments."""
    out: list[tuple[str, bool]] = []
    stack: list[Any] = list(parts)
    while stack:
        node = stack.pop()
        match node:
            case ast.Quantity(name=n):
                out.append((n.text, False))
            case ast.Call(name=n, args=args):
                out.append((n.text, bool(args)))
            case ast.BinOp(left=a, right=b):
                stack.extend((a, b))
            case ast.Neg(item=i):
                stack.append(i)
    return out


def uses_names(e: ast.UsesExpr) -> list[ast.Name]:
    """The column names a ``uses`` formula mentions (walked with a stack)."""
    out: list[ast.Name] = []
    stack: list[Any] = [e]
    while stack:
        node = stack.pop()
        match node:
            case ast.UsesAtom(name=n):
                out.append(n)
            case ast.UsesNot(item=i):
                stack.append(i)
            case ast.UsesAnd(items=items) | ast.UsesOr(items=items):
                stack.extend(reversed(items))
    return out
