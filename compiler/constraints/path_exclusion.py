"""``every path: not (a and b ...)`` (Nanfack 4.6 per branch, C9): no root-to-leaf path
tests all of the named columns. Lowered as a potential over the subsets already tested
(``skeletons/dag_structure.exclusion_on_paths``)."""
from __future__ import annotations

from typing import Callable

from .. import ast
from ..checked import StructuralConstraint
from ..ir import ModelBuilder
from ..skeletons.dag_structure import exclusion_on_paths
from ..skeletons.interface import Structure
from .base import Constraint, Family, LowerContext, SearchParts, line, quote
from .view import ClassifierView, ConstraintCheck


def _exclusion(c: Constraint) -> ast.PathExclusion | None:
    if isinstance(c, StructuralConstraint) and isinstance(c.node, ast.Every) \
            and isinstance(c.node.body, ast.PathExclusion):
        return c.node.body
    return None


class PathExclusion(Family):
    key = "C9x"

    def claims(self, c: Constraint) -> bool:
        return _exclusion(c) is not None

    def columns(self, c: Constraint, column_of: Callable[[str], str]) -> set[str]:
        e = _exclusion(c)
        assert e is not None
        return {column_of(n.text) for n in e.names}

    def lower(self, b: ModelBuilder, st: Structure, c: Constraint, ctx: LowerContext) -> None:
        e = _exclusion(c)
        assert e is not None
        exclusion_on_paths(b, st, [ctx.column_of(n.text) for n in e.names])

    def search(self, c: Constraint, parts: SearchParts) -> None:
        e = _exclusion(c)
        assert e is not None
        parts.exclusions.append(tuple(n.text for n in e.names))

    def check(self, c: Constraint, view: ClassifierView) -> ConstraintCheck:
        e = _exclusion(c)
        assert e is not None
        cols = {view.column_of(x.text) for x in e.names}
        bad = sum(1 for path in view.shape.paths if cols <= {col for test in path for col in test})
        return ConstraintCheck(quote(c), line(c), float(bad), "==", 0.0, bad == 0)
