"""``every leaf: samples >= m`` (Nanfack 4.4, C5) and ``every node: samples >= S``
(Florio eq. 20, C3): the rows (of positive weight) reaching each leaf / each decision node.

Lowered as one row per node: ``a*samples + c (op) 0`` is homogenised with the node's
"exists" literal e, as ``exists => a*samples + c (op) 0`` with the big-M of the value's
range on the other side, so it holds trivially where the node does not exist.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

from ..checked import LinearConstraint, LinearForm
from ..ir import ModelBuilder, Origin
from ..skeletons.interface import LeafStructure, Linear, Structure
from .base import Constraint, Family, LowerContext, SearchParts, holds, line, origin, quote
from .view import ClassifierView, ConstraintCheck


def min_rows(c: LinearConstraint) -> int | None:
    """The least number of rows ``c`` lets a leaf (or node) hold when it bounds them from
    below (``a * samples + k >= 0`` with ``a > 0``, or the same ``<=`` with ``a < 0``),
    else None (an upper bound or an equality)."""
    (_, a), = c.form.terms
    if c.op == ">=" and a > 0 or c.op == "<=" and a < 0:
        return math.ceil(-c.form.constant / a)
    return None


class Samples(Family):
    key = "C5"
    per = {"leaf": frozenset({"samples"}), "node": frozenset({"samples"})}

    def claims(self, c: Constraint) -> bool:
        return isinstance(c, LinearConstraint) and c.scope in ("leaf", "node") and c.form.kinds() == {"samples"}

    def support_keys(self, c: Constraint) -> tuple[str, ...]:
        assert isinstance(c, LinearConstraint)
        return ("C5" if c.scope == "leaf" else "C3",) + (() if min_rows(c) is not None else ("C5u",))

    def lower(self, b: ModelBuilder, st: Structure, c: Constraint, ctx: LowerContext) -> None:
        assert isinstance(c, LinearConstraint)
        assert all(qty.kind == "samples" for qty, _ in c.form.terms)
        a = sum((coef for _, coef in c.form.terms), Fraction(0))
        k = c.form.constant
        total = sum(st.counts)
        samples: Callable[[int], Linear]
        if c.scope == "leaf":
            assert isinstance(st, LeafStructure), "internal: the support table refuses leaves without a tree (C5)"
            nodes, exists, samples = st.leaf_nodes, st.O, st.leaf_samples
        else:
            nodes, exists, samples = tuple(st.internal), st.Z, st.samples
        for q in nodes:
            s_terms, s_const = samples(q)
            terms = [(a * w, r) for w, r in s_terms if a * w]
            _guarded(b, terms, k + a * s_const, c.op, exists[q], (k, k + a * total), origin(c))

    def search(self, c: Constraint, parts: SearchParts) -> None:
        assert isinstance(c, LinearConstraint)
        m = min_rows(c)
        assert m is not None, "internal: dp takes only lower bounds on samples (C5u)"
        if c.scope == "leaf":
            parts.min_leaf = max(parts.min_leaf, m)
        else:
            parts.min_node = max(parts.min_node, m)

    def check(self, c: Constraint, view: ClassifierView) -> ConstraintCheck:
        assert isinstance(c, LinearConstraint)
        counts = view.shape.leaf_samples if c.scope == "leaf" else view.shape.node_samples
        diffs = [_value(c.form, n) for n in counts]  # the checked form: a strict bound made non-strict
        ok = all(holds(d, c.op) for d in diffs)
        worst = (min if c.op == ">=" else max)(range(len(diffs)), key=lambda i: diffs[i]) if diffs else None
        if worst is None:  # no decision node: nothing to bind
            return ConstraintCheck(quote(c), line(c), 0.0, c.op, 0.0, ok)
        n = counts[worst]
        return ConstraintCheck(quote(c), line(c), _value(c.left, n), c.op, _value(c.right, n), ok)


def _guarded(b: ModelBuilder, terms: list[tuple[Fraction, int]], constant: Fraction, op: str, exists: int,
             value_range: tuple[Fraction, Fraction], where: Origin) -> None:
    """``exists => terms + constant (op) 0``, with the big-M of the value's range on the
    other side (where the node does not exist, its row must hold whatever the value)."""
    lo, hi = min(value_range), max(value_range)
    if op in ("<=", "==") and hi > 0:  # terms + constant <= hi * (1 - exists)
        b.linear(terms + [(hi, exists)], "<=", hi - constant, where)
    if op in (">=", "==") and lo < 0:  # terms + constant >= lo * (1 - exists)
        b.linear(terms + [(lo, exists)], ">=", lo - constant, where)


def _value(form: LinearForm | None, samples: int) -> float:
    if form is None:
        return 0.0
    return float(form.constant) + sum(float(c) * samples for q, c in form.terms if q.kind == "samples")
