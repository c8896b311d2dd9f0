"""``features_used`` in a side constraint, e.g. ``features_used <= 3`` (Florio et al.,
the feature count of eq. 18; also ``uses``-style sparsity in Nanfack 4.6): the number of
distinct data columns the classifier tests. Each column contributes the shared literal
"some decision node tests it" (``LowerContext.uses_literal``, the same one ``uses``
reads), so the quantity is ``sum_col U_col`` over the structure's ``T`` handles — on trees,
diagrams and BDDs alike. Other terms of the constraint are ordinary quantities."""
from __future__ import annotations

from fractions import Fraction
from typing import Callable

from ..checked import LinearConstraint
from ..ir import ModelBuilder
from ..skeletons.interface import Structure
from .base import Constraint, Family, LowerContext, decided, holds, line, merge, origin, quote
from .view import ClassifierView, ConstraintCheck


def mentions(c: Constraint) -> bool:
    return isinstance(c, LinearConstraint) and c.scope is None and "features_used" in c.form.kinds()


class FeaturesUsed(Family):
    key = "O2f"

    def claims(self, c: Constraint) -> bool:
        return mentions(c) and "expected_cost" not in c.form.kinds()  # type: ignore[union-attr]

    def columns(self, c: Constraint, column_of: Callable[[str], str]) -> set[str]:
        return {"*"}

    def lower(self, b: ModelBuilder, st: Structure, c: Constraint, ctx: LowerContext) -> None:
        assert isinstance(c, LinearConstraint)
        terms: list[tuple[Fraction, int]] = []
        constant = c.form.constant
        for q, coef in c.form.terms:
            qt, qc = ctx.quantity(q)
            terms.extend((coef * w, lit) for w, lit in qt)
            constant += coef * qc
        terms = merge(terms)
        if not terms:
            decided(b, constant, c.op)
            return
        b.linear(terms, c.op, -constant, origin(c))

    def check(self, c: Constraint, view: ClassifierView) -> ConstraintCheck:
        assert isinstance(c, LinearConstraint)
        from ..checked import LinearForm
        from ..values import form_value

        def side(form: LinearForm | None) -> float:
            return 0.0 if form is None else form_value(view.program, view.classifier, view.predictions, form)

        ok = holds(side(c.form), c.op)
        if c.left is not None and c.right is not None:
            return ConstraintCheck(quote(c), line(c), side(c.left), c.op, side(c.right), ok)
        value = side(LinearForm(c.form.terms, Fraction(0)))
        return ConstraintCheck(quote(c), line(c), value, c.op, float(-c.form.constant), ok)


def quantity(b: ModelBuilder, st: Structure, ctx: LowerContext) -> list[tuple[Fraction, int]]:
    """``features_used`` as terms: one uses-literal per feature column of the structure."""
    return [(Fraction(1), ctx.uses_literal(b, st, col)) for col in ctx.feature_columns]
