"""``same_leaf(r1, r2)`` (Nanfack 4.5, C6): the two rows reach the same leaf — a tree
construct (a diagram's rows end at shared class terminals). Each leaf is reached by both
rows or by neither: ``L[u1, q] <-> L[u2, q]``."""
from __future__ import annotations

from .. import ast
from ..checked import StructuralConstraint
from ..ir import ModelBuilder
from ..skeletons.interface import LeafStructure, Structure
from .base import Constraint, Family, LowerContext, SearchParts, line, quote
from .view import ClassifierView, ConstraintCheck


def _call(c: Constraint) -> ast.Call | None:
    if isinstance(c, StructuralConstraint) and isinstance(c.node, ast.CallConstraint) \
            and c.node.call.name.text == "same_leaf":
        return c.node.call
    return None


def row_ref(a: object) -> str:
    """The row id an argument of ``same_leaf`` names."""
    if isinstance(a, ast.Quantity):
        return a.name.text
    if isinstance(a, ast.StringArg):
        return a.value
    if isinstance(a, ast.Number):
        return str(a.value.numerator) if a.value.denominator == 1 else str(float(a.value))
    return str(a)


class SameLeaf(Family):
    key = "C6"

    def claims(self, c: Constraint) -> bool:
        return _call(c) is not None

    def lower(self, b: ModelBuilder, st: Structure, c: Constraint, ctx: LowerContext) -> None:
        call = _call(c)
        assert call is not None
        assert isinstance(st, LeafStructure), "internal: the support table refuses same_leaf without a tree (C6)"
        u1, u2 = (ctx.bucket_of_row(row_ref(a)) for a in call.args)
        if u1 is None or u2 is None or u1 == u2:
            return  # a row of weight 0 is not placed; rows of one bucket share every leaf
        for q in st.leaf_nodes:
            l1, l2 = st.L[u1, q], st.L[u2, q]
            b.clause((-l1, l2))
            b.clause((l1, -l2))

    def search(self, c: Constraint, parts: SearchParts) -> None:
        call = _call(c)
        assert call is not None
        a, b = (row_ref(x) for x in call.args)
        parts.same_leaf.append((a, b))

    def check(self, c: Constraint, view: ClassifierView) -> ConstraintCheck:
        call = _call(c)
        assert call is not None
        data = view.program.dataset
        ids = {rid: i for i, rid in enumerate(data.ids or ())}
        r1, r2 = (ids.get(row_ref(a), -1) for a in call.args)
        leaf_of = view.shape.leaf_of
        same = r1 >= 0 and r2 >= 0 and (leaf_of[r1] == leaf_of[r2] or data.row_weights()[[r1, r2]].min() == 0)
        return ConstraintCheck(quote(c), line(c), float(same), "==", 1.0, bool(same))
