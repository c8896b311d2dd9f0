"""Program parameters: ``param depth = 3`` and its overrides -> a program without parameters.

Input: an ``ast.Program`` (from ``parse``) and overrides (``odtc -D depth=4``,
``odt.compile(text, params={"depth": 4})``). Output: the same program with every parameter
reference replaced by its number and the ``param`` items removed, so the checker never
sees a parameter.

A parameter's name stands wherever a number does:

* ``ParamRef`` nodes (skeleton bounds and widths, ``quantiles(k)``, explicit thresholds,
  cost tables, ``threshold f in [lo, hi]``) — positions where a name can only be a
  parameter; an undeclared name there is an error;
* a bare name in a linear expression (``alpha * nodes``, ``samples >= m``), in a group
  condition (``age >= cutoff``) or as a solve option value (``threads = n``): it is the
  parameter when one of that name is declared, else what it was (a quantity, a column).

Invariants: every problem is positioned — at the reference in the program, or, for an
override, at its text on the command line or in the ``params`` mapping — and all are
raised together. A parameter named like a quantity (``depth``) cannot stand in an
expression, where the name would be ambiguous; bounds (``tree(depth <= depth)``) take it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Mapping

from . import ast
from .checked import QUANTITIES
from .errors import Diagnostic, OdtError, OdtNameError, OdtTypeError, did_you_mean
from .ranges import MAX_INT, MAX_MAGNITUDE, out_of_range, power
from .source import SourceFile, Span

#: Fields of AST nodes that take an integer (a count or a size), so a parameter standing
#: there must hold an integer.
_INTEGER_FIELDS = {(ast.ParamCompare, "value"), (ast.ParamRange, "low"), (ast.ParamRange, "high"),
                   (ast.Quantiles, "k")}


@dataclass(frozen=True, slots=True)
class Override:
    """One overriding value of a parameter, with where it was written (for errors)."""

    name: str
    value: Fraction | None  # None when the text is no number
    text: str
    span: Span | None = None  # of the value
    name_span: Span | None = None


def overrides_from_cli(items: Iterable[str]) -> list[Override]:
    """``-D name=value`` items as overrides; each positioned in the text of the flags.

    >>> [(o.name, o.value) for o in overrides_from_cli(["depth=4", "alpha=0.01"])]
    [('depth', Fraction(4, 1)), ('alpha', Fraction(1, 100))]
    """
    items = list(items)
    source = SourceFile("<command line>", " ".join(f"-D {it}" for it in items))
    out: list[Override] = []
    col = 1
    for it in items:
        start = col + 3  # after "-D "
        name, eq, value = it.partition("=")
        if not eq:
            out.append(Override(it.strip(), None, "", Span(source, 1, start, 1, start + max(1, len(it)))))
        else:
            vcol = start + len(name) + 1
            out.append(Override(name.strip(), _number(value), value,
                                Span(source, 1, vcol, 1, vcol + max(1, len(value))),
                                Span(source, 1, start, 1, start + max(1, len(name)))))
        col += len(it) + 4
    return out


def overrides_from_mapping(params: Mapping[str, Any]) -> list[Override]:
    """Python ``params={"depth": 4}`` as overrides, positioned in a ``name=value`` text."""
    texts = [f"{k}={_text(v)}" for k, v in params.items()]
    source = SourceFile("<params>", ", ".join(texts))
    out: list[Override] = []
    col = 1
    for (k, v), t in zip(params.items(), texts):
        vcol = col + len(str(k)) + 1
        value = None if isinstance(v, bool) else _number(v)
        out.append(Override(str(k), value, _text(v), Span(source, 1, vcol, 1, vcol + max(1, len(_text(v)))),
                            Span(source, 1, col, 1, col + max(1, len(str(k))))))
        col += len(t) + 2
    return out


def _text(v: Any) -> str:
    return repr(v) if isinstance(v, (str, bool)) or v is None else str(v)


def _number(v: Any) -> Fraction | None:
    """An exact number from an int, a float (its shortest decimal: 0.01 is 1/100), a
    Fraction or a numeric text; None otherwise."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, Fraction)):
        return Fraction(v)
    if isinstance(v, float):
        return Fraction(repr(v)) if v == v and v not in (float("inf"), float("-inf")) else None
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):  # numpy scalars
        return _number(v.item())
    if isinstance(v, str):
        try:
            return Fraction(v.strip())
        except (ValueError, ZeroDivisionError):
            return None
    return None


def declared(program: ast.Program) -> dict[str, Fraction]:
    """The parameters a program declares, with their values in the text."""
    return {p.name.text: p.value for p in program.of(ast.ParamDef)}


def resolve_params(program: ast.Program, overrides: Iterable[Override] = ()) -> ast.Program:
    """The program with every parameter replaced by its (overridden) value.

    Raises:
        OdtNameError / OdtTypeError: an unknown or twice-declared parameter, an override
        of no declared parameter, a value that is no number, or a non-integer where an
        integer is needed — every one positioned, all raised together.

    >>> from odt.compiler.parse import parse_program
    >>> p = parse_program("param d = 2\\nmodel tree(depth <= d)")
    >>> resolve_params(p, overrides_from_mapping({"d": 4})).items[0].skeleton.params[0].value
    4
    """
    diags: list[Diagnostic] = []
    kinds: list[type[OdtError]] = []

    def add(kind: type[OdtError], message: str, span: Span | None, hint: str | None = None) -> None:
        diags.append(Diagnostic(message, span, hint))
        kinds.append(kind)

    values: dict[str, Fraction] = {}
    where: dict[str, str] = {}  # how each value was given, for type errors
    for p in program.of(ast.ParamDef):
        if p.name.text in values:
            add(OdtNameError, f"parameter '{p.name.text}' is declared twice", p.name.span, "keep one declaration")
        values[p.name.text] = p.value
        where[p.name.text] = f"param {p.name.text} = {_fraction_text(p.value)}"
    for o in overrides:
        if o.value is None:
            add(OdtTypeError, f"parameter '{o.name}': '{o.text}' is not a number" if o.text
                else f"'{o.name}' is not an override: write name=value", o.span,
                "e.g. -D depth=4 or params={'depth': 4}")
        elif o.name not in values:
            known = list(values)
            add(OdtNameError, f"the program declares no parameter '{o.name}'", o.name_span or o.span,
                did_you_mean(o.name, known, "parameter") if known else
                f"declare it in the program: param {o.name} = {o.text}")
        elif (problem := out_of_range(o.value)) is not None:
            add(OdtTypeError, f"parameter '{o.name}': {problem}", o.span,
                f"odt takes numbers of magnitude at most {power(MAX_MAGNITUDE)}")
        else:
            values[o.name] = o.value
            where[o.name] = f"overridden by {o.name}={o.text}"
    if not diags and not values and not _has_refs(program):
        return program

    def number(ref: ast.ParamRef, integer: bool) -> Any:
        name = ref.name.text
        if name not in values:
            add(OdtNameError, f"unknown parameter '{name}'", ref.span,
                did_you_mean(name, list(values), "parameter") if values else
                f"declare it: param {name} = <number>")
            return 1 if integer else Fraction(1)
        v = values[name]
        if integer:
            if v.denominator != 1:
                add(OdtTypeError, f"parameter '{name}' is {_fraction_text(v)} ({where[name]}), but an integer "
                    "is needed here", ref.span)
                return 1
            if abs(v) > MAX_INT:
                add(OdtTypeError, f"parameter '{name}' is {_fraction_text(v)} ({where[name]}), larger than "
                    f"{power(MAX_INT)}, the largest integer here", ref.span)
                return 1
            return int(v)
        return v

    def walk(node: Any, integer: bool = False) -> Any:
        if isinstance(node, ast.ParamRef):
            return number(node, integer)
        if isinstance(node, tuple):
            return tuple(walk(x, integer) for x in node)
        if isinstance(node, ast.Quantity) and node.name.text in values:
            if node.name.text in QUANTITIES:
                add(OdtNameError, f"'{node.name.text}' is both a parameter and a quantity, so it cannot stand "
                    "in an expression", node.span, f"rename the parameter, e.g. param max_{node.name.text} = ...")
                return node
            return ast.Number(values[node.name.text], node.span)
        if isinstance(node, ast.ValueName) and node.name.text in values:
            return ast.ValueNumber(values[node.name.text], node.span)
        if isinstance(node, ast.SolveOption) and isinstance(node.value, ast.BareName) and node.value in values:
            return dataclasses.replace(node, value=values[str(node.value)])
        if dataclasses.is_dataclass(node) and not isinstance(node, (ast.Name, type)):
            changes = {}
            for f in dataclasses.fields(node):
                old = getattr(node, f.name)
                new = walk(old, (type(node), f.name) in _INTEGER_FIELDS)
                if new is not old:
                    changes[f.name] = new
            return dataclasses.replace(node, **changes) if changes else node
        return node

    items = tuple(walk(item) for item in program.items if not isinstance(item, ast.ParamDef))
    if diags:
        kind = kinds[0]
        raise kind(diags)
    return dataclasses.replace(program, items=items)


def _has_refs(node: Any) -> bool:
    if isinstance(node, ast.ParamRef):
        return True
    if isinstance(node, tuple):
        return any(_has_refs(x) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, (ast.Name, type)):
        return any(_has_refs(getattr(node, f.name)) for f in dataclasses.fields(node))
    return False


def _fraction_text(v: Fraction) -> str:
    if v.denominator == 1:
        return str(v.numerator)
    f = float(v)
    return repr(f) if Fraction(repr(f)) == v else str(v)
