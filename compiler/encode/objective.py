"""Exact integer objectives for backends that need them (MaxSAT weights, CP-SAT, MILP gaps).

An IR objective level ``sum(c * lit) + k`` with rational c is rewritten as
``(sum(w * lit') ) / scale + offset`` with positive integer weights w (a negative c is moved
onto the negated literal: ``c*x = c + |c|*(not x)``) and the smallest exact ``scale``.
Lexicographic levels (O3) are combined into one integer sum in which each level's
multiplier exceeds the largest possible value of all less important levels together
(Boolean lexicographic optimisation), so one optimum of the sum is the lexicographic one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Any, Mapping, Sequence

from .. import ir


@dataclass(frozen=True, slots=True)
class WeightedSum:
    """level value = (sum(w * [lit]) + sum(c * var)) / scale + offset; every w > 0.

    ``weights`` are over boolean literals; ``linear`` over integer / continuous variables
    (their coefficients keep their sign, as a variable has no negation), with the range
    ``span`` that the linear part can take."""

    weights: tuple[tuple[int, int], ...]  # (weight, literal)
    scale: int
    offset: Fraction
    linear: tuple[tuple[int, int], ...] = ()  # (coefficient, variable index)
    span: float = 0.0
    low: float = 0.0  # the least value of the linear part

    @property
    def total(self) -> int:
        return sum(w for w, _ in self.weights) + int(self.span + 0.999999)


def normalise(obj: ir.Objective, model: ir.Model | None = None) -> WeightedSum:
    """Positive integer weights over literals, the exact scale and the offset.

    >>> normalise(ir.Objective(((Fraction(1, 2), 3), (Fraction(-1), 4)), Fraction(1)))
    WeightedSum(weights=((1, 3), (2, -4)), scale=2, offset=Fraction(0, 1), linear=(), span=0.0, low=0.0)
    """
    scale = 1
    for c, _ in obj.terms:
        scale = lcm(scale, c.denominator)
    acc: dict[int, int] = {}
    linear: dict[int, int] = {}
    span = 0.0
    offset = Fraction(obj.constant)
    for c, lit in obj.terms:
        if model is not None and model.variables[abs(lit) - 1].kind is not ir.VarKind.BOOL:
            linear[lit] = linear.get(lit, 0) + int(c * scale)
            continue
        scaled = c * scale
        if scaled > 0:
            acc[lit] = acc.get(lit, 0) + int(scaled)
        elif scaled < 0:
            acc[-lit] = acc.get(-lit, 0) + int(-scaled)
            offset += c
    weights: list[tuple[int, int]] = []
    for lit, w in acc.items():  # x and not-x both weighted: w1*x + w2*(1-x) = w2 + (w1-w2)*x
        if -lit in acc and lit > 0:
            continue
        if -lit in acc:
            w_pos, w_neg = acc[-lit], w
            common = min(w_pos, w_neg)
            offset += Fraction(common, scale)
            if w_pos > common:
                weights.append((w_pos - common, -lit))
            if w_neg > common:
                weights.append((w_neg - common, lit))
            continue
        weights.append((w, lit))
    lin = tuple((c, v) for v, c in linear.items() if c)
    low = 0.0
    if model is not None:
        for coef, v in lin:
            var = model.variables[v - 1]
            span += abs(coef) * (var.ub - var.lb)
            low += min(coef * var.lb, coef * var.ub)
    return WeightedSum(tuple(weights), scale, offset, lin, span, low)


@dataclass(frozen=True, slots=True)
class Combined:
    """One integer objective standing for all lexicographic levels."""

    weights: tuple[tuple[int, int], ...]
    levels: tuple[WeightedSum, ...]
    multipliers: tuple[int, ...]
    linear: tuple[tuple[int, int], ...] = ()  # (coefficient, variable) for non-boolean terms

    def first_level_bound(self, combined_lower_bound: float | int) -> Fraction | None:
        """A proven lower bound on level 0 from a lower bound on the combined sum: every
        less important level contributes at most multiplier * (low + total), and level 0
        takes integer values (in units of 1/scale)."""
        if not self.levels:
            return None
        lvl = self.levels[0]
        rest = sum(m * (l.low + l.total) for l, m in zip(self.levels[1:], self.multipliers[1:]))
        units = -((rest - combined_lower_bound + 1e-6) // self.multipliers[0])  # ceil, robust to float noise
        # never below the least value level 0 can take (its weights are positive): a solver's
        # bound of 0 on a sum with less important levels would otherwise come out negative
        return max(Fraction(int(units), lvl.scale), Fraction(math.floor(lvl.low), lvl.scale)) + lvl.offset


def combine(objectives: Sequence[ir.Objective], model: ir.Model | None = None) -> Combined:
    """One integer objective for all levels (``model`` tells boolean from other terms)."""
    levels = [normalise(o, model) for o in objectives]
    multipliers = [0] * len(levels)
    m = 1
    for i in range(len(levels) - 1, -1, -1):
        multipliers[i] = m
        m *= levels[i].total + 1
    acc: dict[int, int] = {}
    lin: dict[int, int] = {}
    for lvl, mult in zip(levels, multipliers):
        for w, lit in lvl.weights:
            acc[lit] = acc.get(lit, 0) + w * mult
        for c, v in lvl.linear:
            lin[v] = lin.get(v, 0) + c * mult
    return Combined(tuple((w, lit) for lit, w in acc.items() if w), tuple(levels), tuple(multipliers),
                    tuple((c, v) for v, c in lin.items() if c))


def describe(combined: Combined, labels: Sequence[str] = ()) -> list[str]:
    """How a solver's integer cost maps back to the program's objective, one line each,
    for the header of an exported file (the cost alone says nothing of scale or offset).

    >>> describe(combine([ir.Objective(((Fraction(1, 100), 3), (Fraction(1), 4)), Fraction(-1, 100))]), ["obj"])
    ['odt objective (obj) = cost / 100 + -1/100']
    """
    if len(combined.levels) == 1:
        lvl = combined.levels[0]
        name = f" ({labels[0]})" if labels else ""
        return [f"odt objective{name} = cost / {lvl.scale} + {lvl.offset}"]
    out = [f"odt lexicographic objective of {len(combined.levels)} levels: cost = "
           + " + ".join(f"{m} * cost_{i + 1}" for i, m in enumerate(combined.multipliers))
           + ", each cost_i between 0 and its total"]
    for i, (lvl, m) in enumerate(zip(combined.levels, combined.multipliers)):
        name = f" ({labels[i]})" if i < len(labels) else ""
        out.append(f"level {i + 1}{name} = cost_{i + 1} / {lvl.scale} + {lvl.offset} "
                   f"(cost_{i + 1} <= {lvl.total}, multiplier {m})")
    return out


def level_values(objectives: Sequence[ir.Objective], values: Sequence[Any] | Mapping[int, Any], model: ir.Model | None = None) -> list[Fraction]:
    """The value of every objective level under a full assignment (exact for booleans;
    continuous values are rounded to the nearest 1e-9)."""
    out = []
    for obj in objectives:
        total = Fraction(obj.constant)
        for c, lit in obj.terms:
            if model is not None and model.variables[abs(lit) - 1].kind is not ir.VarKind.BOOL:
                total += c * Fraction(round(float(values[lit]), 9)).limit_denominator(10**9)
            elif ir.lit_value(values, lit):
                total += c
        out.append(total)
    return out


def strictly_below(combined: Combined, cutoff: Fraction | None) -> int | None:
    """The largest integer value of the combined objective of a solution strictly better
    than ``cutoff`` (a value of the single objective level), or None when there is no
    single level to cut on (B4: a warm start's value handed to a solver as a cutoff)."""
    if cutoff is None or len(combined.levels) != 1:
        return None
    lvl = combined.levels[0]
    units = (Fraction(cutoff) - lvl.offset) * lvl.scale
    return int(-(-units // 1)) - 1  # ceil(units) - 1: integer objective values below the cutoff


def at_least(combined: Combined, floor: Fraction | None) -> int | None:
    """The smallest integer value of the combined objective of a solution worth at least
    ``floor`` (a proven lower bound on the single objective level, e.g. from an optimal
    tree: ``odt.strategies.diagram_bounds``), or None when there is no single level."""
    if floor is None or len(combined.levels) != 1:
        return None
    lvl = combined.levels[0]
    return int(-(-((Fraction(floor) - lvl.offset) * lvl.scale) // 1))  # ceil
