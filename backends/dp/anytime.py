"""The one anytime driver of the dp tree engines, their one result and their one tree format.

Every engine (ConTree on raw thresholds, the STreeD-style searches on 0/1 columns, with
or without Pareto fronts) hands the backend an ``EngineResult``: the tree as nested tuples
over the search matrix's dimensions, ``("leaf", class)`` / ``("split", dim, threshold,
left, right)`` with ``left`` the rows where ``x[dim] <= threshold``; the training errors,
the decision nodes, the value of every objective level, a proven lower bound on the first
level and the status. ``deepen`` is the root loop the STreeD-style engines share:
iterative deepening over the depths 0..D with the cache shared (STreeD, van der Linden et
al., NeurIPS 2023, Sec. 4.3; MurTree, Demirović et al., JMLR 2022, Sec. 4.7), each depth's
optimum an incumbent feasible for depth D, a time limit or a stop (``Timeout``) ending it
with the best so far; a small search (``depths``) skips the depths between 0 and D. ``finish`` turns the incumbent into the result.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Generic, TypeVar

from odt.compiler.search import TreeSearch


class Timeout(Exception):
    """A dp engine passed its deadline or was asked to stop (``limits.halted``)."""


@dataclass(frozen=True)
class EngineResult:
    """What a dp tree engine found; ``tree`` is None when nothing was found."""

    tree: tuple | None
    errors: Fraction
    nodes: int
    levels: tuple[Fraction, ...]
    lower_bound: Fraction | None
    status: str  # "optimal", "feasible" (stopped with an incumbent), "infeasible", "unknown"
    stats: dict = field(default_factory=dict)


C = TypeVar("C")


@dataclass
class Incumbent(Generic[C]):
    """The best candidate so far: its key (objective levels, least first) and what the
    engine needs to decode it."""

    key: tuple
    depth: int
    payload: C


#: a search of at most this many rows x candidates x 2^depth goes from depth 0 straight to the
#: full depth: it ends in milliseconds, where the intermediate incumbents only cost time
SMALL = 1 << 18


def depths(problem: TreeSearch, candidates: int) -> range | tuple[int, ...]:
    """The depths ``deepen`` solves: 0..D, or 0 and D for a small search (``SMALL``).

    >>> import numpy as np
    >>> from odt.compiler.search import SplitDim, TreeSearch
    >>> p = TreeSearch(np.zeros((4, 1)), (SplitDim("x"),), np.zeros(4, dtype=int), np.ones(4), np.arange(4), (0, 1),
    ...                ("x",), 3)
    >>> depths(p, 1), depths(p, 10**6)
    ((0, 3), range(0, 4))
    """
    if problem.depth >= 2 and problem.X.shape[0] * candidates << problem.depth <= SMALL:
        return (0, problem.depth)
    return range(problem.depth + 1)


def deepen(problem: TreeSearch, search: Any, deadline: float | None,
           solve: Callable[[int, "Incumbent | None"], "Incumbent | None"],
           improved: Callable[["Incumbent"], None] | None = None,
           at: range | tuple[int, ...] | None = None) -> tuple["Incumbent | None", bool]:
    """Iterative deepening: ``solve(d, best)`` for d = 0..depth (or the depths ``at``,
    increasing, from 0 to the depth), keeping the least key; ``improved(best)`` after each
    better incumbent below the full depth. Depth 0 (one leaf) runs with no deadline
    (``search.deadline = None``), so a feasible program always has a first incumbent; the
    deadline holds from depth 1 on. Returns (the best, whether a ``Timeout`` ended it);
    ``search.deadline`` is None again on return (decoding re-reads solved entries only)."""
    best: Incumbent | None = None
    timed_out = False
    search.deadline = None
    try:
        for d in at if at is not None else range(problem.depth + 1):
            got = solve(d, best)
            search.deadline = deadline
            if got is not None and (best is None or got.key < best.key):
                best = got
                if improved is not None and d < problem.depth:
                    improved(best)
    except Timeout:
        timed_out = True
    search.deadline = None
    return best, timed_out


def finish(problem: TreeSearch, tree: tuple | None, errors: Fraction, timed_out: bool, start: float, stats: dict,
           on_progress: Callable[..., None] | None = None, note: str | None = None) -> EngineResult:
    """The result of a search that found ``tree`` (dimensions, not candidates) with these
    training ``errors``, or nothing (None). Its levels are computed from the tree; the
    bound is the first level's when the search finished, else the trivial bound (every
    quantity is at least 0, every coefficient too: the first level's constant)."""
    bound0 = problem.levels[0].constant
    stats = {**stats, "timed_out": timed_out}
    if tree is None:
        return EngineResult(None, Fraction(0), 0, (), bound0 if timed_out else None,
                            "unknown" if timed_out else "infeasible", stats)
    nodes = size(tree)
    levels = tuple(lv.errors * errors + lv.nodes * nodes + lv.constant for lv in problem.levels)
    status = "feasible" if timed_out else "optimal"
    bound = bound0 if timed_out else levels[0]
    if on_progress is not None:
        args = (time.perf_counter() - start, levels[0], bound) + ((note,) if note is not None else ())
        on_progress(*args)
    return EngineResult(tree, errors, nodes, levels, bound, status, stats)


def size(tree: tuple) -> int:
    """The decision nodes of a tree."""
    return 0 if tree[0] == "leaf" else size(tree[3]) + size(tree[4]) + 1


def exact(x: float) -> Fraction:
    """A float sum of weights as the fraction it stands for (an integral float as its
    integer at once: ``limit_denominator`` keeps it, at 10x the cost)."""
    if float(x).is_integer():
        return Fraction(int(x))
    return Fraction(x).limit_denominator(10**9)
