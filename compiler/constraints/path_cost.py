"""``every path: cost <= tau with cost {...}`` (Nanfack 4.2, C8): the tests on each
root-to-leaf path cost at most tau, each test paying its column's cost. Lowered as a
potential along the arcs that carry rows (``skeletons/dag_structure.cost_on_paths``): no
path is enumerated.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable

from ..checked import LinearConstraint
from ..ir import ModelBuilder
from ..skeletons.dag_structure import cost_on_paths
from ..skeletons.interface import Structure
from .base import Constraint, Family, LowerContext, SearchParts, line, quote
from .view import ClassifierView, ConstraintCheck


def _cost_weight(c: Constraint) -> Fraction:
    assert isinstance(c, LinearConstraint)
    return sum((coef for qty, coef in c.form.terms if qty.kind == "cost"), Fraction(0))


def _bounded_above(c: Constraint) -> bool:
    a = _cost_weight(c)
    assert isinstance(c, LinearConstraint)
    return a > 0 and c.op == "<=" or a < 0 and c.op == ">="


class PathCost(Family):
    key = "C8p"
    per = {"path": frozenset({"cost"})}

    def claims(self, c: Constraint) -> bool:
        return isinstance(c, LinearConstraint) and c.scope == "path"

    def support_keys(self, c: Constraint) -> tuple[str, ...]:
        return ("C8p",) if _bounded_above(c) else ("C8x",)

    def columns(self, c: Constraint, column_of: Callable[[str], str]) -> set[str]:
        assert isinstance(c, LinearConstraint) and c.costs is not None
        return {col for col, _ in c.costs.costs} | ({"*"} if c.costs.default else set())

    def lower(self, b: ModelBuilder, st: Structure, c: Constraint, ctx: LowerContext) -> None:
        assert isinstance(c, LinearConstraint) and c.costs is not None
        a = _cost_weight(c)
        assert _bounded_above(c), "internal: the support table refuses a path cost bounded from below (C8x)"
        costs = {col: c.costs.of(col) for col in ctx.columns}
        cost_on_paths(b, st, costs, -c.form.constant / a)

    def search(self, c: Constraint, parts: SearchParts) -> None:
        assert isinstance(c, LinearConstraint) and c.costs is not None and _bounded_above(c)
        parts.path_costs.append(c)

    def check(self, c: Constraint, view: ClassifierView) -> ConstraintCheck:
        assert isinstance(c, LinearConstraint) and c.costs is not None
        costs = [sum(float(c.costs.of(col)) for test in path for col in test) for path in view.shape.paths]
        bound = -float(c.form.constant) / float(c.form.terms[0][1]) if c.form.terms else 0.0
        worst = max(costs) if costs else 0.0
        return ConstraintCheck(quote(c), line(c), worst, c.op, bound, worst <= bound + 1e-9)
