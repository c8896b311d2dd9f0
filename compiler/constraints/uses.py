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


def _postorder(e: ast.UsesExpr) -> list[ast.UsesExpr]:
    """The nodes of ``e``, every node after its children (walked with a stack: any depth)."""
    out: list[ast.UsesExpr] = []
    stack: list[tuple[ast.UsesExpr, bool]] = [(e, False)]
    while stack:
        node, ready = stack.pop()
        if ready or isinstance(node, ast.UsesAtom):
            out.append(node)
            continue
        stack.append((node, True))
        stack.extend((i, False) for i in reversed((node.item,) if isinstance(node, ast.UsesNot) else node.items))
    return out


def _literal(b: ModelBuilder, st: Structure, e: ast.UsesExpr, ctx: LowerContext) -> int:
    """A literal equivalent to the formula ``e`` (Tseitin; children before parents)."""
    vals: list[int] = []
    for node in _postorder(e):
        if isinstance(node, ast.UsesAtom):
            vals.append(ctx.uses_literal(b, st, ctx.column_of(node.name.text)))
            continue
        if isinstance(node, ast.UsesNot):
            vals.append(-vals.pop())
            continue
        parts = vals[len(vals) - len(node.items):]
        del vals[len(vals) - len(node.items):]
        lit = b.new_aux("uses_and" if isinstance(node, ast.UsesAnd) else "uses_or")
        if isinstance(node, ast.UsesAnd):
            for p in parts:
                b.clause((-lit, p))
            b.clause([-p for p in parts] + [lit])
        else:
            for p in parts:
                b.clause((-p, lit))
            b.clause([-lit] + parts)
        vals.append(lit)
    return vals[0]


def _value(e: ast.UsesExpr, used: set[str], column_of: Callable[[str], str]) -> bool:
    vals: list[bool] = []
    for node in _postorder(e):
        if isinstance(node, ast.UsesAtom):
            vals.append(column_of(node.name.text) in used)
        elif isinstance(node, ast.UsesNot):
            vals.append(not vals.pop())
        else:
            args = vals[len(vals) - len(node.items):]
            del vals[len(vals) - len(node.items):]
            vals.append(all(args) if isinstance(node, ast.UsesAnd) else any(args))
    return vals[0]
