"""``every leaf: errors <= e`` (C11): each leaf of a tree misclassifies at most ``e`` of the
rows that end in it — their weight, with row weights, as ``errors`` counts them. A bound
from above only (``every leaf: errors >= k``, C11x, is refused: a tree has leaves the
training rows barely reach).

A tree construct: a decision diagram's rows end at class terminals shared by many paths,
and a BDD's nodes are made after solving, so neither has leaves of its own to bound (the
support table refuses it there). Lowered as one row per leaf over the tree structure's
``leaf_errors`` handle (exact: the misclassified weight ending in that leaf); dp bounds
each leaf's cost (``TreeSearch.max_leaf_errors``: a leaf above it is infeasible).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..checked import LinearConstraint, LinearForm
from ..ir import ModelBuilder
from ..skeletons.interface import LeafStructure, Structure
from .base import Constraint, Family, LowerContext, SearchParts, holds, line, merge, origin, quote
from .view import ClassifierView, ConstraintCheck


def max_leaf_errors(c: LinearConstraint) -> Fraction | None:
    """``e`` of ``a * errors + k (op) 0`` bounding errors from above (``errors <= -k/a``),
    else None."""
    (_, a), = c.form.terms
    if c.op == "<=" and a > 0 or c.op == ">=" and a < 0:
        return -c.form.constant / a
    return None


class LeafErrors(Family):
    key = "C11"
    per = {"leaf": frozenset({"errors"})}

    def claims(self, c: Constraint) -> bool:
        return isinstance(c, LinearConstraint) and c.scope == "leaf" and c.form.kinds() == {"errors"} \
            and all(q.group is None for q, _ in c.form.terms)

    def support_keys(self, c: Constraint) -> tuple[str, ...]:
        assert isinstance(c, LinearConstraint)
        return ("C11",) if max_leaf_errors(c) is not None else ("C11x",)

    def lower(self, b: ModelBuilder, st: Structure, c: Constraint, ctx: LowerContext) -> None:
        assert isinstance(c, LinearConstraint)
        e = max_leaf_errors(c)
        assert e is not None, "internal: the support table refuses a per-leaf error bound from below (C11x)"
        assert isinstance(st, LeafStructure), "internal: the support table refuses leaves without a tree (C11)"
        for q in st.leaf_nodes:
            terms, constant = st.leaf_errors(b, q)
            terms = merge(terms)
            if terms:
                b.linear(terms, "<=", e - constant, origin(c))
            elif constant > e:
                b.clause(())

    def search(self, c: Constraint, parts: SearchParts) -> None:
        assert isinstance(c, LinearConstraint)
        e = max_leaf_errors(c)
        assert e is not None
        parts.max_leaf_errors = e if parts.max_leaf_errors is None else min(parts.max_leaf_errors, e)

    def check(self, c: Constraint, view: ClassifierView) -> ConstraintCheck:
        assert isinstance(c, LinearConstraint)
        data = view.program.dataset
        wrong = np.where(view.predictions != data.y, data.row_weights(), 0.0)
        leaf_of = view.shape.leaf_of
        per_leaf = np.zeros(len(view.shape.leaf_samples))
        np.add.at(per_leaf, leaf_of[view.rows], wrong[view.rows])
        diffs = [_value(c.form, float(v)) for v in per_leaf]  # the checked form: a strict bound made non-strict
        worst = max(range(len(diffs)), key=lambda i: diffs[i] if c.op == "<=" else -diffs[i]) if diffs else None
        if worst is None:
            return ConstraintCheck(quote(c), line(c), 0.0, c.op, 0.0, True)
        v = float(per_leaf[worst])
        return ConstraintCheck(quote(c), line(c), _value(c.left, v), c.op, _value(c.right, v),
                               all(holds(d, c.op) for d in diffs))


def _value(form: LinearForm | None, errors: float) -> float:
    if form is None:
        return 0.0
    return float(form.constant) + sum(float(k) * errors for q, k in form.terms if q.kind == "errors")
