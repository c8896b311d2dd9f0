"""Exact integer objectives for backends that need them (MaxSAT weights, CP-SAT, MILP gaps).

An IR objective level ``sum(c * lit) + k`` with rational c is rewritten as
``(sum(w * lit') ) / scale + offset`` with positive integer weights w (a negative c is moved
onto the negated literal: ``c*x = c + |c|*(not x)``) and the smallest exact ``scale``.
Lexicographic levels (O3) are combined into one integer sum in which each level's
multiplier exceeds the largest possible value of all less important levels together
(Boolean lexicographic optimisation), so one optimum of the sum is the lexicographic one.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Sequence

from .. import ir


@dataclass(frozen=True, slots=True)
class WeightedSum:
    """level value = sum(w * [lit]) / scale + offset, all w > 0."""

    weights: tuple[tuple[int, int], ...]  # (weight, literal)
    scale: int
    offset: Fraction

    @property
    def total(self) -> int:
        return sum(w for w, _ in self.weights)


def normalise(obj: ir.Objective) -> WeightedSum:
    """>>> normalise(ir.Objective(((Fraction(1, 2), 3), (Fraction(-1), 4)), Fraction(1)))
    WeightedSum(weights=((1, 3), (2, -4)), scale=2, offset=Fraction(0, 1))
    """
    scale = 1
    for c, _ in obj.terms:
        scale = lcm(scale, c.denominator)
    acc: dict[int, int] = {}
    offset = Fraction(obj.constant)
    for c, lit in obj.terms:
        w = c * scale
        if w > 0:
            acc[lit] = acc.get(lit, 0) + int(w)
        elif w < 0:
            acc[-lit] = acc.get(-lit, 0) + int(-w)
            offset += c
    weights = []
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
    return WeightedSum(tuple(weights), scale, offset)


@dataclass(frozen=True, slots=True)
class Combined:
    """One integer objective standing for all lexicographic levels."""

    weights: tuple[tuple[int, int], ...]
    levels: tuple[WeightedSum, ...]
    multipliers: tuple[int, ...]

    def first_level_bound(self, combined_lower_bound: float | int) -> Fraction | None:
        """A proven lower bound on level 0 from a lower bound on the combined sum."""
        if not self.levels:
            return None
        lvl = self.levels[0]
        units = int(combined_lower_bound + 1e-6) // self.multipliers[0]
        return Fraction(units, lvl.scale) + lvl.offset


def combine(objectives: Sequence[ir.Objective]) -> Combined:
    levels = [normalise(o) for o in objectives]
    multipliers = [0] * len(levels)
    m = 1
    for i in range(len(levels) - 1, -1, -1):
        multipliers[i] = m
        m *= levels[i].total + 1
    acc: dict[int, int] = {}
    for lvl, mult in zip(levels, multipliers):
        for w, lit in lvl.weights:
            acc[lit] = acc.get(lit, 0) + w * mult
    return Combined(tuple((w, lit) for lit, w in acc.items() if w), tuple(levels), tuple(multipliers))


def level_values(objectives: Sequence[ir.Objective], values: Sequence[bool]) -> list[Fraction]:
    """The exact value of every objective level under a full assignment."""
    out = []
    for obj in objectives:
        total = Fraction(obj.constant)
        for c, lit in obj.terms:
            if ir.lit_value(values, lit):
                total += c
        out.append(total)
    return out
