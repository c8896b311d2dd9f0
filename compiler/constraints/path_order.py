"""``every path: a before b`` (Nanfack 4.1, C7): a node testing b has an ancestor testing
a. Lowered as a potential along the arcs that carry rows
(``skeletons/dag_structure.order_on_paths``)."""
from __future__ import annotations

from typing import Callable

from .. import ast
from ..checked import StructuralConstraint
from ..ir import ModelBuilder
from ..skeletons.dag_structure import order_on_paths
from ..skeletons.interface import Structure
from .base import Constraint, Family, LowerContext, SearchParts, line, quote
from .view import ClassifierView, ConstraintCheck


def _order(c: Constraint) -> ast.OrderOnPath | None:
    if isinstance(c, StructuralConstraint) and isinstance(c.node, ast.Every) \
            and isinstance(c.node.body, ast.OrderOnPath):
        return c.node.body
    return None


class PathOrder(Family):
    key = "C7"

    def claims(self, c: Constraint) -> bool:
        return _order(c) is not None

    def columns(self, c: Constraint, column_of: Callable[[str], str]) -> set[str]:
        o = _order(c)
        assert o is not None
        return {column_of(o.first.text), column_of(o.second.text)}

    def lower(self, b: ModelBuilder, st: Structure, c: Constraint, ctx: LowerContext) -> None:
        o = _order(c)
        assert o is not None
        order_on_paths(b, st, ctx.column_of(o.first.text), ctx.column_of(o.second.text))

    def search(self, c: Constraint, parts: SearchParts) -> None:
        o = _order(c)
        assert o is not None
        parts.orders.append((o.first.text, o.second.text))

    def check(self, c: Constraint, view: ClassifierView) -> ConstraintCheck:
        o = _order(c)
        assert o is not None
        a, b = view.column_of(o.first.text), view.column_of(o.second.text)
        bad = sum(1 for path in view.shape.paths for i, test in enumerate(path)
                  if b in test and not any(a in above for above in path[:i]))
        return ConstraintCheck(quote(c), line(c), float(bad), "==", 0.0, bad == 0)
