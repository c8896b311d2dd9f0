"""The root of the DP: the objective levels and the caps checked on the root's entries.

Input: a ``TreeSearch``. Output: ``StreedResult``, the optimal tree and its quantities.
STreeD (van der Linden et al., NeurIPS 2023, Sec. 4.3) checks the constraints that bound
an additive quantity (here ``nodes <= K``, ``errors <= k``) at the root: the root's entry
holds the least error for every node budget, so every level ``a*errors + b*nodes + c``
(cost-complexity, Breiman; ``leaves`` folded in as ``nodes + 1``), every lexicographic
order of such levels (Avellaneda's DT_size: the smallest tree within the error cap) and
every cap is a minimum over the budgets. Anytime: the depths 0..D are solved in turn
(iterative deepening, the cache shared), each giving an incumbent that is feasible for
depth D; on the time limit the best incumbent is returned with the trivial bound (errors
and nodes at least 0).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

import numpy as np

from odt.compiler.search import TreeSearch

from .binarize import binarize, distinct_partitions
from .branch import ingredients
from .bounded import BoundedSearch
from .solve import INF, Search, Timeout

#: cost complexity and node budgets by branch and bound (``bounded.py``); off: the vectors of ``solve.py``
BOUNDED = True
#: one candidate per partition of the rows (``binarize.distinct_partitions``) where no path constraint
#: tells candidates apart; off: every candidate (the tests' plain reference)
DISTINCT = True


@dataclass(frozen=True)
class StreedResult:
    """``tree``: nested tuples ``("leaf", class)`` / ``("split", dim, threshold, left,
    right)``, left = ``x <= threshold``; None when nothing was found. ``levels``: the
    value of each objective level; ``status``: optimal, feasible, infeasible or unknown."""

    tree: tuple | None
    errors: Fraction
    nodes: int
    levels: tuple[Fraction, ...]
    lower_bound: Fraction | None
    status: str
    stats: dict = field(default_factory=dict)


def _exact(x: float) -> Fraction:
    return Fraction(x).limit_denominator(10**9)


def optimal_constrained_tree(problem: TreeSearch, time_limit: float | None = None,
                             on_progress: Callable[..., None] | None = None) -> StreedResult:
    """The optimal tree of ``problem`` under every constraint of the search IR.

    >>> import numpy as np
    >>> from odt.compiler.search import SplitDim, TreeSearch
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 1, 0, 1])
    >>> p = TreeSearch(X, (SplitDim("x"),), y, np.ones(4), np.arange(4), (0, 1), ("x",), 2, max_nodes=1)
    >>> r = optimal_constrained_tree(p); (r.status, r.errors, r.nodes)
    ('optimal', Fraction(1, 1), 1)
    """
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    cand = binarize(problem.X, problem.dims)
    ingr = ingredients(problem, cand.dim)
    if DISTINCT and ingr.trivial:  # no path constraint tells candidates apart: one per partition of the rows
        cand = distinct_partitions(cand)
        ingr = ingredients(problem, cand.dim)
    if BOUNDED and _one_level(problem):
        return _bounded(problem, cand, ingr, start, deadline, on_progress)
    counting = problem.max_nodes is not None or any(lv.nodes != 0 for lv in problem.levels)
    pairs = np.array([(s.first, s.second) for s in problem.same_leaf], dtype=np.int64).reshape(-1, 2)
    search = Search(cand.B, problem.y, problem.weights, problem.n_classes, ingr, problem.min_leaf, problem.min_node,
                    pairs, counting, deadline)
    rows = np.arange(problem.X.shape[0], dtype=np.int64)
    state0 = ingr.initial()
    cap = problem.max_nodes if problem.max_nodes is not None else (1 << problem.depth) - 1
    bound0 = problem.levels[0].constant  # every quantity is >= 0 and every coefficient too
    best: tuple | None = None  # (key, depth, budget, errors)

    def pick(d: int) -> tuple | None:
        k = min(cap, (1 << d) - 1)
        entry = search.solve(rows, d, k, state0)
        out = None
        for i in range(min(entry.budget, k) + 1):
            e = float(entry.E[i])
            if e == INF or (problem.max_errors is not None and e > float(problem.max_errors) + 1e-9):
                continue
            key = tuple(round(float(lv.errors) * e + float(lv.nodes) * i + float(lv.constant), 9)
                        for lv in problem.levels)
            if out is None or key < out[0]:
                out = (key, d, k, i, e)
        return out

    timed_out = False
    search.deadline = None  # the single leaf (depth 0) is always solved: the first incumbent
    try:
        for d in range(problem.depth + 1):
            got = pick(d)
            search.deadline = deadline
            if got is not None and (best is None or got[0] < best[0]):
                best = got
                if on_progress is not None and d < problem.depth:
                    on_progress(time.perf_counter() - start, _exact(best[0][0]), bound0)
    except Timeout:
        timed_out = True
    stats = {"subproblems": search.calls, "cache": len(search.cache), "candidates": int(cand.B.shape[1]),
             "timed_out": timed_out}
    if best is None:
        return StreedResult(None, Fraction(0), 0, (), bound0 if timed_out else None,
                            "unknown" if timed_out else "infeasible", stats)
    _, d, k, i, e = best
    search.deadline = None  # decoding re-reads solved entries only
    raw = search.decode(rows, d, k, state0, i)
    tree, nodes = _tree(raw, cand)
    errors = _exact(e)
    levels = tuple(lv.errors * errors + lv.nodes * nodes + lv.constant for lv in problem.levels)
    status = "feasible" if timed_out else "optimal"
    bound = bound0 if timed_out else levels[0]
    if on_progress is not None:
        on_progress(time.perf_counter() - start, levels[0], bound)
    return StreedResult(tree, errors, nodes, levels, bound, status, stats)


def _tree(raw: tuple, cand) -> tuple[tuple, int]:
    """Candidates replaced by (dimension, threshold); the number of decision nodes."""
    if raw[0] == "leaf":
        return raw, 0
    _, f, left, right = raw
    lt, ln = _tree(left, cand)
    rt, rn = _tree(right, cand)
    return ("split", int(cand.dim[f]), float(cand.threshold[f]), lt, rt), ln + rn + 1


def _one_level(problem: TreeSearch) -> bool:
    """One objective level ``a * errors + b * nodes + const`` with ``a > 0``, ``b >= 0``, no
    error cap: the value ``errors + (b / a) * nodes`` of ``bounded.py``."""
    return len(problem.levels) == 1 and problem.max_errors is None and problem.levels[0].errors > 0 \
        and problem.levels[0].nodes >= 0


def _bounded(problem: TreeSearch, cand, ingr, start: float, deadline: float | None,
             on_progress: Callable[..., None] | None) -> StreedResult:
    level = problem.levels[0]
    c = Fraction(level.nodes) / Fraction(level.errors)
    w = np.asarray(problem.weights, dtype=np.float64)
    integral = bool(np.all(w == np.round(w))) and c.denominator <= 10**6
    pairs = np.array([(s.first, s.second) for s in problem.same_leaf], dtype=np.int64).reshape(-1, 2)
    search = BoundedSearch(cand.B, problem.y, problem.weights, problem.n_classes, ingr, problem.min_leaf,
                           problem.min_node, pairs, True, None, c=float(c),
                           gap=1.0 / c.denominator if integral else 0.0)
    rows = np.arange(problem.X.shape[0], dtype=np.int64)
    state0 = ingr.initial()
    cap = problem.max_nodes if problem.max_nodes is not None else (1 << problem.depth) - 1
    bound0 = level.constant
    best: tuple[float, int, int] | None = None  # (value, depth, budget)
    timed_out = False
    try:
        for d in range(problem.depth + 1):
            k = min(cap, (1 << d) - 1)
            ub = INF if best is None else best[0] - search.gap
            v, ok = search.best(rows, d, k, state0, ub)
            search.deadline = deadline  # the single leaf (depth 0) is always solved: the first incumbent
            if ok and v < INF and (best is None or v < best[0]):
                best = (v, d, k)
                if on_progress is not None and d < problem.depth:
                    on_progress(time.perf_counter() - start, _exact(float(level.errors) * v) + level.constant, bound0)
    except Timeout:
        timed_out = True
    stats = {"subproblems": search.calls, "cache": len(search.cache) + len(search.recs),
             "candidates": int(cand.B.shape[1]), "pruned": search.pruned,
             "depth_two_in_three": search.depth_two_solves, "timed_out": timed_out}
    if best is None:
        return StreedResult(None, Fraction(0), 0, (), bound0 if timed_out else None,
                            "unknown" if timed_out else "infeasible", stats)
    _, d, k = best
    search.deadline = None
    raw = search.decode_best(rows, d, k, state0)
    errors = _exact(_errors(raw, search, rows))
    tree, nodes = _tree(raw, cand)
    levels = (level.errors * errors + level.nodes * nodes + level.constant,)
    status = "feasible" if timed_out else "optimal"
    bound = bound0 if timed_out else levels[0]
    if on_progress is not None:
        on_progress(time.perf_counter() - start, levels[0], bound)
    return StreedResult(tree, errors, nodes, levels, bound, status, stats)


def _errors(raw: tuple, search: Search, S: np.ndarray) -> float:
    """The weighted errors of a decoded tree (candidates) on rows ``S``."""
    if raw[0] == "leaf":
        counts = search.class_totals(S)
        return float(counts.sum() - counts[raw[1]])
    col = search.B[S, raw[1]]
    return _errors(raw[2], search, S[~col]) + _errors(raw[3], search, S[col])
