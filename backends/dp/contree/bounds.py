"""Bounds of one search node: the incumbent with its tie-aware inclusive bounds (which
splits may still improve on it), the result of a bounded sub-problem, the per-feature state
of Alg. 1's interval search (numpy path) and the time-out signal."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .tree import DPNode

class _Timeout(Exception):
    """Raised inside the search when the time limit is reached."""


@dataclass(slots=True)
class _Res:
    """Result of a bounded sub-problem search ``CT(D, d, B)``.

    ``tree``/``cost`` hold the best tree if one with cost <= B was found (then it is
    optimal up to the node's gap); ``lb`` is a proven lower bound on the optimum. With a
    minimum leaf size, ``free`` is a proven lower bound on the optimum of the same
    sub-problem without it (the bound a growing side needs in Alg. 1, see
    ``search._Solver.branch``); 0 when unknown.
    """

    cost: float
    tree: Optional[DPNode]
    lb: float
    free: float = 0.0


class _FeatState:
    """Per-feature state of Alg. 1 inside the batched depth-two search."""

    __slots__ = ("f", "cuts", "wc", "V", "th", "thL", "thR", "ML", "MR")

    def __init__(self, f: int, cuts: np.ndarray, wc: np.ndarray) -> None:
        self.f = f
        self.cuts = cuts
        self.wc = wc
        self.V: list[int] = []
        self.th: dict[int, float] = {}
        self.thL: dict[int, float] = {}
        self.thR: dict[int, float] = {}
        self.ML = 0
        self.MR = cuts.shape[0] - 1


class _Incumbent:
    """Best tree found at one node plus the tie-aware inclusive bounds derived from it.

    A candidate split (feature ``f``, threshold index ``s``) improves on the incumbent if
    its cost is strictly lower, or equal while being earlier in (feature, threshold)
    order; a leaf incumbent is never replaced by an equally good split.
    """

    __slots__ = ("cost", "tree", "f", "s", "outer", "d_strict", "d_tie", "active")

    def __init__(self, outer: float, d_strict: float, d_tie: float) -> None:
        self.cost = math.inf
        self.tree: Optional[DPNode] = None
        self.f = -1
        self.s = -1
        self.outer = outer  # caller's inclusive bound B
        self.d_strict = d_strict
        self.d_tie = d_tie
        self.active = False

    def set(self, cost: float, tree: Optional[DPNode], f: int, s: int) -> None:
        self.cost, self.tree, self.f, self.s = cost, tree, f, s
        self.active = True

    def bounds(self, gap: float) -> tuple[float, float, int, int]:
        """``(strict, tie, f, s)`` so that ``bound_for(f', s') - gap`` is ``tie`` when
        ``(f', s') < (f, s)`` lexicographically and ``strict`` otherwise."""
        if not self.active:
            return self.outer - gap, self.outer - gap, -1, -1
        return self.cost - self.d_strict - gap, self.cost + self.d_tie - gap, self.f, self.s

    def bound_for(self, f: int, s: int) -> float:
        """Largest cost that a split (f, s) may have to improve on the incumbent."""
        if not self.active:
            return self.outer
        if f < self.f or (f == self.f and s < self.s):
            return self.cost + self.d_tie
        return self.cost - self.d_strict
