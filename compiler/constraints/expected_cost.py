"""``expected_cost <= tau with cost {...}`` (Nanfack 4.3, C8): the weighted mean over the
training rows of the cost of the path each row takes,
``sum_u w_u * sum_q [u reaches q and q tests col] * cost(col) / sum_u w_u``, linearised
with one literal y[u, q, col] per product (y >= R[u, q] and T[q, col] where a lower bound
on the sum suffices, y <= each of them where an upper bound does). The row, with the
constraint's other terms lowered as ordinary quantities, is multiplied by the total
weight W > 0."""
from __future__ import annotations

from fractions import Fraction
from typing import Callable

from ..checked import LinearConstraint, LinearForm
from ..ir import ModelBuilder
from ..skeletons.interface import Structure
from .base import Constraint, Family, LowerContext, decided, holds, line, merge, origin, quote
from .view import ClassifierView, ConstraintCheck


class ExpectedCost(Family):
    key = "C8e"

    def claims(self, c: Constraint) -> bool:
        return isinstance(c, LinearConstraint) and c.scope is None and "expected_cost" in c.form.kinds()

    def columns(self, c: Constraint, column_of: Callable[[str], str]) -> set[str]:
        assert isinstance(c, LinearConstraint) and c.costs is not None
        return {col for col, _ in c.costs.costs} | ({"*"} if c.costs.default else set())

    def lower(self, b: ModelBuilder, st: Structure, c: Constraint, ctx: LowerContext) -> None:
        assert isinstance(c, LinearConstraint) and c.costs is not None
        a = sum((coef for q, coef in c.form.terms if q.kind == "expected_cost"), Fraction(0))
        total = sum(st.weights, Fraction(0)) or Fraction(1)  # no row of positive weight: the cost is 0
        terms: list[tuple[Fraction, int]] = []
        rest_constant = c.form.constant
        for q, coef in c.form.terms:
            if q.kind != "expected_cost":
                qt, qc = ctx.quantity(q)
                terms.extend((total * coef * w, lit) for w, lit in qt)
                rest_constant += coef * qc
        for u, w in enumerate(st.weights):
            for v in st.internal:
                for col in ctx.columns:
                    coef = a * w * c.costs.of(col)
                    if not coef or (v, col) not in st.T:
                        continue
                    if v == st.root:  # every row reaches the root
                        terms.append((coef, st.T[v, col]))
                        continue
                    terms.append((coef, _pays(b, st.R[u, v], st.T[v, col], coef, c.op, f"pays_{u}_{v}_{col}")))
        if not terms:  # decided by the data alone
            decided(b, rest_constant, c.op)
            return
        b.linear(merge(terms), c.op, -total * rest_constant, origin(c))

    def check(self, c: Constraint, view: ClassifierView) -> ConstraintCheck:
        assert isinstance(c, LinearConstraint) and c.costs is not None
        from ..values import form_value

        w = view.program.dataset.row_weights()
        total = float(w[view.rows].sum())
        paid = sum(sum(float(c.costs.of(col)) for col in cols) * float(w[here].sum())
                   for cols, here in view.shape.node_rows)
        expected = paid / total if total else 0.0

        def side(form: LinearForm | None) -> float:
            if form is None:
                return 0.0
            rest = LinearForm(tuple(t for t in form.terms if t[0].kind != "expected_cost"), form.constant)
            coef = float(sum((k for q, k in form.terms if q.kind == "expected_cost"), Fraction(0)))
            return form_value(view.program, view.classifier, view.predictions, rest) + expected * coef

        ok = holds(side(c.form), c.op)
        return ConstraintCheck(quote(c), line(c), side(c.left), c.op, side(c.right), ok)


def _pays(b: ModelBuilder, reach: int, test: int, coef: Fraction, op: str, name: str) -> int:
    """y <-> reach and test, each direction only where the bound needs it."""
    y = b.new_aux(name)
    grows = coef > 0 if op == "<=" else coef < 0 if op == ">=" else True
    shrinks = coef < 0 if op == "<=" else coef > 0 if op == ">=" else True
    if grows:  # y >= r and t
        b.clause((-reach, -test, y))
    if shrinks:  # y <= r, y <= t
        b.clause((-y, reach))
        b.clause((-y, test))
    return y
