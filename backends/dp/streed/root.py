"""The root of the DP: the objective levels and the caps checked on the root's entries.

Input: a ``TreeSearch``. Output: an ``EngineResult``, the optimal tree and its quantities.
STreeD (van der Linden et al., NeurIPS 2023, Sec. 4.3) checks the constraints that bound
an additive quantity (here ``nodes <= K``, ``errors <= k``) at the root: the root's entry
holds the least error for every node budget, so every level ``a*errors + b*nodes + c``
(cost-complexity, Breiman; ``leaves`` folded in as ``nodes + 1``), every lexicographic
order of such levels (Avellaneda's DT_size: the smallest tree within the error cap) and
every cap is a minimum over the budgets. Anytime: ``anytime.deepen`` solves the depths
0..D in turn (iterative deepening, the cache shared), each giving an incumbent that is
feasible for depth D; on the time limit the best incumbent is returned with the trivial
bound (errors and nodes at least 0).
"""
from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from odt.compiler.search import TreeSearch

from .binarize import binarize, distinct_partitions
from .branch import ingredients
from ..anytime import EngineResult, Incumbent, deepen, depths, exact, finish
from ..task import Misclassification, task_of
from .bounded import BoundedSearch
from .solve import INF, Search

#: cost complexity and node budgets by branch and bound (``bounded.py``); off: the vectors of ``solve.py``
BOUNDED = True
#: one candidate per partition of the rows (``binarize.distinct_partitions``) where no path constraint
#: tells candidates apart; off: every candidate (the tests' plain reference)
DISTINCT = True


def candidates(problem: TreeSearch) -> tuple[Any, Any]:
    """The candidate splits of ``problem`` (``binarize``; one per partition of the rows,
    ``distinct_partitions``, where no path constraint tells candidates apart) and their
    branch ingredients. They read the matrix, its dimensions and the path constraints
    only, not the rows' classes or weights: searches that differ in those alone (F1's
    Dinkelbach steps) share them."""
    cand = binarize(problem.X, problem.dims)
    ingr = ingredients(problem, cand.dim)
    if DISTINCT and ingr.trivial:  # no path constraint tells candidates apart: one per partition of the rows
        cand = distinct_partitions(cand)
        ingr = ingredients(problem, cand.dim)
    return cand, ingr


def optimal_constrained_tree(problem: TreeSearch, time_limit: float | None = None,
                             on_progress: Callable[..., None] | None = None,
                             prepared: tuple[Any, Any] | None = None) -> EngineResult:
    """The optimal tree of ``problem`` under every constraint of the search IR;
    ``prepared``: its ``candidates``, when already made (for a search that differs only in
    its rows' classes or weights).

    >>> import numpy as np
    >>> from odt.compiler.search import SplitDim, TreeSearch
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 1, 0, 1])
    >>> p = TreeSearch(X, (SplitDim("x"),), y, np.ones(4), np.arange(4), (0, 1), ("x",), 2, max_nodes=1)
    >>> r = optimal_constrained_tree(p); (r.status, r.errors, r.nodes)
    ('optimal', Fraction(1, 1), 1)
    """
    start = time.perf_counter()
    deadline = math.inf if time_limit is None else start + time_limit  # None: a phase no stop may cut
    cand, ingr = prepared if prepared is not None else candidates(problem)
    if BOUNDED and _one_level(problem):
        return _bounded(problem, cand, ingr, start, deadline, on_progress)
    counting = problem.max_nodes is not None or any(lv.nodes != 0 for lv in problem.levels)
    pairs = np.array([(s.first, s.second) for s in problem.same_leaf], dtype=np.int64).reshape(-1, 2)
    search = Search(cand.B, problem.y, problem.weights, task_of(problem), ingr, problem.min_leaf, problem.min_node,
                    pairs, counting, deadline)
    rows = np.arange(problem.X.shape[0], dtype=np.int64)
    state0 = ingr.initial()
    cap = problem.max_nodes if problem.max_nodes is not None else (1 << problem.depth) - 1

    def pick(d: int, best: Incumbent | None) -> Incumbent | None:
        k = min(cap, (1 << d) - 1)
        entry = search.solve(rows, d, k, state0)
        out = None
        for i in range(min(entry.budget, k) + 1):
            e = float(entry.E[i])
            if e == INF or (problem.max_errors is not None and e > float(problem.max_errors) + 1e-9):
                continue
            key = tuple(round(float(lv.errors) * e + float(lv.nodes) * i + float(lv.constant), 9)
                        for lv in problem.levels)
            if out is None or key < out.key:
                out = Incumbent(key, d, (k, i))
        return out

    best, timed_out = deepen(problem, search, deadline, pick, _shown(problem, start, on_progress),
                             depths(problem, int(cand.B.shape[1])))
    tree, errors = None, Fraction(0)
    if best is not None:
        k, i = best.payload
        raw = search.decode(rows, best.depth, k, state0, i)
        tree, errors = _tree(raw, cand), exact(_errors(raw, search, rows))
    stats = {"subproblems": search.calls, "cache": len(search.cache), "candidates": int(cand.B.shape[1])}
    return finish(problem, tree, errors, timed_out, start, stats, on_progress)


def _shown(problem: TreeSearch, start: float, on_progress: Callable[..., None] | None,
           note: Callable[[], str] | None = None) -> Callable[[Incumbent], None] | None:
    """The progress line of a new incumbent (its first level; the trivial bound)."""
    if on_progress is None:
        return None
    level, bound0 = problem.levels[0], problem.levels[0].constant

    def show(best: Incumbent) -> None:
        value = best.key[0] if not isinstance(best.key[0], float) else exact(best.key[0])
        args = (time.perf_counter() - start, value, bound0) + ((note(),) if note is not None else ())
        on_progress(*args)

    return show


def _tree(raw: tuple, cand) -> tuple:
    """Candidates replaced by (dimension, threshold)."""
    if raw[0] == "leaf":
        return raw
    _, f, left, right = raw
    return ("split", int(cand.dim[f]), float(cand.threshold[f]), _tree(left, cand), _tree(right, cand))


def _one_level(problem: TreeSearch) -> bool:
    """One objective level ``a * errors + b * nodes + const`` with ``a > 0``, ``b >= 0``, no
    error cap: the value ``errors + (b / a) * nodes`` of ``bounded.py``."""
    return len(problem.levels) == 1 and problem.max_errors is None and problem.levels[0].errors > 0 \
        and problem.levels[0].nodes >= 0


def _bounded(problem: TreeSearch, cand, ingr, start: float, deadline: float | None,
             on_progress: Callable[..., None] | None) -> EngineResult:
    level = problem.levels[0]
    c = Fraction(level.nodes) / Fraction(level.errors)
    task = task_of(problem)
    # values differ by at least 1/q only where a leaf's cost is a sum of row weights (misclassification;
    # not regression's squared or absolute error) and those are integers (the search knows: ``gap``)
    steps = isinstance(task, Misclassification) and c.denominator <= 10**6
    pairs = np.array([(s.first, s.second) for s in problem.same_leaf], dtype=np.int64).reshape(-1, 2)
    search = BoundedSearch(cand.B, problem.y, problem.weights, task, ingr, problem.min_leaf,
                           problem.min_node, pairs, True, None, c=float(c),
                           gap=1.0 / c.denominator if steps else 0.0, table=4 if problem.depth <= 2 else None)
    rows = np.arange(problem.X.shape[0], dtype=np.int64)
    state0 = ingr.initial()
    cap = problem.max_nodes if problem.max_nodes is not None else (1 << problem.depth) - 1

    def pick(d: int, best: Incumbent | None) -> Incumbent | None:
        k = min(cap, (1 << d) - 1)
        ub = INF if best is None else best.payload - search.gap
        v, ok = search.best(rows, d, k, state0, ub)
        if not ok or v >= INF:
            return None
        return Incumbent((exact(float(level.errors) * v) + level.constant,), d, v)  # payload: errors + c * nodes

    best, timed_out = deepen(problem, search, deadline, pick, _shown(problem, start, on_progress),
                             depths(problem, int(cand.B.shape[1])))
    tree, errors = None, Fraction(0)
    if best is not None:
        k = min(cap, (1 << best.depth) - 1)
        raw = search.decode_best(rows, best.depth, k, state0)
        # errors alone with integral weights: the value is the tree's errors, an exact float sum
        # (the result is verified against the program either way, ``Program._result``)
        counted = best.payload if search.gap > 0 and c == 0 else _errors(raw, search, rows)
        tree, errors = _tree(raw, cand), exact(counted)
    stats = {"subproblems": search.calls, "cache": len(search.cache) + len(search.recs),
             "candidates": int(cand.B.shape[1]), "pruned": search.pruned,
             "depth_two_in_three": search.depth_two_solves}
    return finish(problem, tree, errors, timed_out, start, stats, on_progress)


def _errors(raw: tuple, search: Search, S: np.ndarray) -> float:
    """The weighted errors of a decoded tree (candidates) on rows ``S``."""
    if raw[0] == "leaf":
        return search.task.leaf_cost_of(search.class_totals(S), raw[1])
    col = search.B[S, raw[1]]
    return _errors(raw[2], search, S[~col]) + _errors(raw[3], search, S[col])
