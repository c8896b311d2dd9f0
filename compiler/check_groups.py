"""Group definitions -> row masks (C1), and the feature names of cost tables (C8).

Input: the ``group`` and ``cost`` items of a program and the dataset (None when it failed
to load). Output: a mask of rows per group name (None without data) and every problem in
the ``Collector``: a name that is no group or column, a text compared with ``<``, a group
with no row.

Invariants: conditions are evaluated with an explicit stack (``not (`` nested hundreds
deep is fine); a group may only name groups defined before it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import ast, confusion
from .check_exprs import Scope
from .data import Dataset
from .errors import Collector, OdtDataError, OdtError, OdtNameError, OdtTypeError, did_you_mean
from .source import Span


def check_groups(program: ast.Program, data: Dataset | None, errs: Collector) -> Scope:
    """The scope of the program's expressions: its groups (evaluated) and cost tables."""
    groups: dict[str, np.ndarray | None] = {}
    costs: dict[str, ast.CostTable] = {}
    for item in program.items:
        if isinstance(item, ast.GroupDef):
            name = item.name.text
            if name in groups:
                errs.add(OdtNameError, f"group '{name}' is defined twice", item.name.span)
                continue
            groups[name] = _group_mask(item, data, groups, errs)
        elif isinstance(item, ast.CostDef):
            if item.name.text in costs:
                errs.add(OdtNameError, f"cost table '{item.name.text}' is defined twice", item.name.span)
            costs[item.name.text] = item.table
    scope = Scope(data, groups, costs)
    for table in costs.values():
        check_cost_table(scope, table, errs)
    return scope


def _group_mask(item: ast.GroupDef, data: Dataset | None, groups: dict[str, np.ndarray | None],
                errs: Collector) -> np.ndarray | None:
    if data is None:
        return None
    try:
        mask = condition(item.expr, data, groups)
    except OdtError as exc:
        errs.absorb(exc)
        return None
    if not mask.any():
        errs.add(OdtDataError, f"group '{item.name.text}' contains no row of the data", item.span,
                 "check the values it compares against")
    return mask


def condition(e: ast.BoolExpr, data: Dataset, groups: dict[str, np.ndarray | None]) -> np.ndarray:
    """The rows where the condition ``e`` holds; raises ``OdtError`` at its first problem."""
    out: list[np.ndarray] = []
    stack: list[tuple[Any, bool]] = [(e, False)]
    while stack:
        node, ready = stack.pop()
        if isinstance(node, (ast.BoolOr, ast.BoolAnd, ast.BoolNot)) and not ready:
            stack.append((node, True))
            children = (node.item,) if isinstance(node, ast.BoolNot) else node.items
            stack.extend((c, False) for c in reversed(children))
            continue
        match node:
            case ast.BoolOr(items=items):
                parts = out[len(out) - len(items):]
                del out[len(out) - len(items):]
                out.append(np.logical_or.reduce(parts))
            case ast.BoolAnd(items=items):
                parts = out[len(out) - len(items):]
                del out[len(out) - len(items):]
                out.append(np.logical_and.reduce(parts))
            case ast.BoolNot():
                out.append(~out.pop())
            case ast.BoolName(name=n):
                out.append(_named(n, data, groups))
            case ast.Comparison(left=l, op=op, right=r):
                out.append(_compare(data, l, op, r, node.span))
            case ast.Membership(value=v, options=opts):
                out.append(np.logical_or.reduce([_compare(data, v, "==", o, node.span) for o in opts]))
            case _:
                raise OdtTypeError("unsupported condition", getattr(node, "span", None))
    return out[0]


def _named(n: ast.Name, data: Dataset, groups: dict[str, np.ndarray | None]) -> np.ndarray:
    if n.text in groups:
        mask = groups[n.text]
        if mask is None:  # the group itself is in error, reported already
            return np.zeros(data.n_rows, dtype=bool)
        return mask
    if n.text in data.table.columns:
        values = data.table.numbers(n.text)
        if not set(np.unique(values).tolist()) <= {0.0, 1.0}:
            raise OdtTypeError(f"column '{n.text}' is not 0/1, so it cannot stand alone as a condition",
                               n.span, f"compare it, e.g. {n.text} >= 1")
        return values == 1
    raise OdtNameError(f"unknown group or column '{n.text}'", n.span,
                       did_you_mean(n.text, list(groups) + list(data.table.columns)))


def _value(data: Dataset, v: ast.Value) -> tuple[str, Any]:
    """('column', values) | ('number', x) | ('string', s)."""
    match v:
        case ast.ValueClass():
            return "column", np.array([data.classes[k] for k in data.y], dtype=object)
        case ast.ValueName(name=n):
            if n.text in data.table.columns:
                return "column", data.table.columns[n.text]
            raise OdtNameError(f"unknown column '{n.text}'", n.span, did_you_mean(n.text, data.table.columns, "column"))
        case ast.ValueNumber(value=x):
            return "number", float(x)
        case ast.ValueString(value=s):
            return "string", s
    raise AssertionError(v)


def _compare(data: Dataset, left: ast.Value, op: str, right: ast.Value, span: Span) -> np.ndarray:
    lk, lv = _value(data, left)
    rk, rv = _value(data, right)
    if lk != "column" and rk != "column":
        raise OdtTypeError("a condition must mention a column or 'class'", span)
    if lk != "column":
        lk, lv, rk, rv = rk, rv, lk, lv
        op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
    col = np.asarray(lv)
    if rk == "string" or (rk == "column" and np.asarray(rv).dtype.kind == "O"):
        if op not in ("==", "!="):
            raise OdtTypeError(f"'{op}' compares numbers; text values only take == and !=", span)
        a = np.array([_text(x) for x in col], dtype=object)
        b = rv if rk == "string" else np.array([_text(x) for x in np.asarray(rv)], dtype=object)
        return (a == b) if op == "==" else (a != b)
    try:
        a = col.astype(float)
        b = np.asarray(rv).astype(float) if rk == "column" else float(rv)
    except (TypeError, ValueError):
        if op in ("==", "!="):
            a2 = np.array([_text(x) for x in col], dtype=object)
            out = a2 == _text(rv)
            return out if op == "==" else ~out
        raise OdtTypeError(f"'{_quote(left)}' holds text, so '{op}' with a number is not defined", span) from None
    return {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
            "==": np.equal, "!=": np.not_equal}[op](a, b)


def check_cost_table(scope: Scope, table: ast.CostTable, errs: Collector) -> None:
    """Every entry of a cost table names a feature; a table of class pairs names classes."""
    confusion.check_pairs(scope, table, errs)
    for n, _ in table.entries:
        check_feature_name(scope, n, errs)


def check_feature_name(scope: Scope, n: ast.Name, errs: Collector) -> None:
    """A name used as a feature: a column, or the name of one binarised feature."""
    if scope.data is None or n.text in scope.data.table.columns:
        return
    if scope.data.features.find_name(n.text) is None:
        errs.add(OdtNameError, f"unknown feature '{n.text}'", n.span, did_you_mean(n.text, scope.columns, "column"))


def _text(x: Any) -> str:
    if isinstance(x, float):
        return str(int(x)) if x.is_integer() else repr(x)
    return str(x)


def _quote(v: ast.Value) -> str:
    return v.name.text if isinstance(v, ast.ValueName) else "class" if isinstance(v, ast.ValueClass) else str(v)
