"""Constraints the data alone makes infeasible, found before any solver runs (C1-C5, O4).

Input: a ``CheckedProgram``. Output: None, or the first linear constraint that no
classifier can satisfy on this data, with the reason: every quantity has a range the data
fixes (``errors(G)`` lies in [0, weight(G)], ``leaves`` >= 1, a leaf's ``samples`` at most
the total row weight, ...), and a constraint whose side cannot reach its bound over those
ranges holds for no classifier. ``every leaf: samples >= 1000`` on 70 rows is the classic
case: each backend would prove it infeasible its own way, or (dp) return a tree that fails
its own verification.

Invariants: sound, not complete — a constraint reported here is infeasible for every
skeleton; a constraint not reported may still be.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .checked import CheckedProgram, LinearConstraint, LinearForm, QuantityRef

_INF = None  # an unbounded end of a range


@dataclass(frozen=True, slots=True)
class DataConflict:
    """A constraint that cannot hold on the data, and why."""

    constraint: LinearConstraint
    reason: str


def data_conflict(program: CheckedProgram) -> DataConflict | None:
    """The first constraint of ``program`` that no classifier satisfies on its data."""
    if not any(isinstance(c, LinearConstraint) and c.scope != "node" for c in program.constraints):
        return None
    weights = program.dataset.row_weights()
    total = _exact(float(weights[weights > 0].sum()))
    for c in program.constraints:
        if not isinstance(c, LinearConstraint) or c.scope == "node":  # a single leaf has no node to bind
            continue
        low, high = _range(c.form, program, total)
        if c.op in ("<=", "==") and low is not _INF and low > 0:
            return DataConflict(c, _reason(c, program, total, "low"))
        if c.op in (">=", "==") and high is not _INF and high < 0:
            return DataConflict(c, _reason(c, program, total, "high"))
    return None


def _reason(c: LinearConstraint, program: CheckedProgram, total: Fraction, side: str) -> str:
    kinds = {q.kind for q, _ in c.form.terms}
    if c.scope is not None and kinds == {"samples"} and side == "high":
        return (f"a {c.scope} would need more rows than the data has ({_number(total)} rows of "
                "positive weight), and a classifier has at least one leaf")
    return ("its left side is always above its right side on this data" if side == "low"
            else "its left side is always below its right side on this data")


def _range(form: LinearForm, program: CheckedProgram, total: Fraction) -> tuple[Fraction | None, Fraction | None]:
    """The smallest and largest value ``form`` can take on the data (None: unbounded)."""
    low: Fraction | None = form.constant
    high: Fraction | None = form.constant
    for q, coef in form.terms:
        q_low, q_high = _quantity_range(q, program, total)
        lo_term, hi_term = (q_low, q_high) if coef > 0 else (q_high, q_low)
        low = None if low is None or lo_term is None else low + coef * lo_term
        high = None if high is None or hi_term is None else high + coef * hi_term
    return low, high


def _quantity_range(q: QuantityRef, program: CheckedProgram, total: Fraction) -> tuple[Fraction | None, Fraction | None]:
    zero = Fraction(0)
    if q.kind in ("errors", "predicted", "tp", "fp", "tn", "fn"):
        if q.group is None:
            return zero, total
        w = program.dataset.row_weights()
        mask = program.groups.get(q.group)
        return zero, (_exact(float(w[mask].sum())) if mask is not None else None)
    if q.kind == "samples":
        return zero, total
    if q.kind == "leaves":
        return Fraction(1), None
    if q.kind in ("nodes", "depth", "features_used", "abs", "cost", "expected_cost"):
        return zero, None
    return None, None


def _exact(x: float) -> Fraction:
    return Fraction(x).limit_denominator(10**9) if np.isfinite(x) else Fraction(0)


def _number(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):g}"
