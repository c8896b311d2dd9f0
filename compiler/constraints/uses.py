"""``uses a`` and any and/or/not formula of ``uses`` atoms (Nanfack 4.6, C9): whether the
classifier tests a column anywhere. Each atom is the shared literal "some decision node
tests the column" (``LowerContext.uses_literal``); the formula is Tseitin-encoded."""
from __future__ import annotations

from typing import Callable

from .. import ast
from ..checked import StructuralConstraint
from ..ir import ModelBuilder
from ..skeletons.interface import Structure
from .base import Constraint, Family, LowerContext, SearchParts, line, quote
from .view import ClassifierView, ConstraintCheck


def _formula(c: Constraint) -> ast.UsesExpr | None:
    if isinstance(c, StructuralConstraint) and isinstance(c.node, ast.UsesConstraint):
        return c.node.expr
    return None


def atoms(e: ast.UsesExpr) -> list[ast.Name]:
    """The atoms' names in source order (walked with a stack: any depth)."""
    out: list[ast.Name] = []
    stack: list[ast.UsesExpr] = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.UsesAtom):
            out.append(node.name)
        elif isinstance(node, ast.UsesNot):
            stack.append(node.item)
        else:
            stack.extend(reversed(node.items))
    return out


class Uses(Family):
    key = "C9u"

    def claims(self, c: Constraint) -> bool:
        return _formula(c) is not None

    def columns(self, c: Constraint, column_of: Callable[[str], str]) -> set[str]:
        e = _formula(c)
        assert e is not None
        return {column_of(n.text) for n in atoms(e)}

    def lower(self, b: ModelBuilder, st: Structure, c: Constraint, ctx: LowerContext) -> None:
        e = _formula(c)
        assert e is not None
        b.clause((_literal(b, st, e, ctx),))

    def search(self, c: Constraint, parts: SearchParts) -> None:
        e = _formula(c)
        assert e is not None
        parts.uses.append(e)

    def check(self, c: Constraint, view: ClassifierView) -> ConstraintCheck:
        e = _formula(c)
        assert e is not None
        ok = _value(e, view.classifier.features_used(), view.column_of)
        return ConstraintCheck(quote(c), line(c), float(ok), "==", 1.0, ok)


def _literal(b: ModelBuilder, st: Structure, e: ast.UsesExpr, ctx: LowerContext) -> int:
    """A literal equivalent to the formula ``e`` (Tseitin)."""
    sign = 1
    while isinstance(e, ast.UsesNot):  # a chain of nots, however long, without recursion
        e, sign = e.item, -sign
    if isinstance(e, ast.UsesAtom):
        return sign * ctx.uses_literal(b, st, ctx.column_of(e.name.text))
    parts = [_literal(b, st, i, ctx) for i in e.items]
    lit = b.new_aux("uses_and" if isinstance(e, ast.UsesAnd) else "uses_or")
    if isinstance(e, ast.UsesAnd):
        for p in parts:
            b.clause((-lit, p))
        b.clause([-p for p in parts] + [lit])
    else:
        for p in parts:
            b.clause((-p, lit))
        b.clause([-lit] + parts)
    return sign * lit


def _value(e: ast.UsesExpr, used: set[str], column_of: Callable[[str], str]) -> bool:
    negated = False
    while isinstance(e, ast.UsesNot):
        e, negated = e.item, not negated
    if isinstance(e, ast.UsesAtom):
        return (column_of(e.name.text) in used) != negated
    vals = [_value(i, used, column_of) for i in e.items]
    return (all(vals) if isinstance(e, ast.UsesAnd) else any(vals)) != negated
