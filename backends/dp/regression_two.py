"""Optimal regression trees of depth at most two on raw thresholds (issue 26): every split
of every column at once from prefix sums over the columns' sorted distinct values.

ConTree's depth-two idea (Brita, van der Linden & Demirović, AAAI 2025) with the squared
error's sufficient statistics (w, w*v, w*v^2; Quant-BnB, Mazumder et al., ICML 2022, uses
the same sums): for a root column f and a child column g, ``G[a, b]``, the statistics of
the rows whose f value is among f's ``a`` smallest distinct values and whose g value is
among g's ``b`` smallest, is a two-dimensional prefix sum of a (distinct f x distinct g)
histogram. Every root cut ``a`` and child cut ``b`` then reads its four leaves' statistics
from ``G`` in O(1), so one pair of columns costs O(u_f * u_g) and the whole depth-two
search O(sum over pairs), with no binarisation (a 0/1 column is a column of two values).

Input: a ``TreeSearch`` whose loss is the squared error, of depth <= 2, with one objective
level ``errors + c * nodes`` and at most a minimum leaf size besides (``takes``). Output:
the engines' ``EngineResult``; the tree's thresholds are midpoints between consecutive
distinct values (left: ``x <= t``), its leaves predict their rows' weighted means.
Invariants: exact (sums in float64 of targets centred on their weighted mean); a deadline
or a stop between root columns returns the best tree of the columns searched (status
feasible) with the trivial bound.
"""
from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from odt.compiler import limits
from odt.compiler.search import TreeSearch

from .anytime import EngineResult, exact, finish

INF = math.inf
#: the largest (distinct x distinct) histogram of a pair of columns held at once (cells)
MAX_CELLS = 1 << 22
#: root cuts x child cuts evaluated at once
BLOCK = 1 << 18


def takes(problem: TreeSearch) -> bool:
    """The fragment of this search: squared error, depth <= 2, one level ``a * loss + b *
    nodes + constant`` (a > 0, b >= 0), a minimum leaf size and no other constraint."""
    lv = problem.levels
    return (problem.loss == "squared_error" and problem.depth <= 2 and len(lv) == 1 and lv[0].errors > 0
            and lv[0].nodes >= 0 and lv[0].depth == 0 and problem.min_node <= 1 and problem.max_nodes is None
            and problem.max_errors is None and problem.max_leaf_errors is None
            and not (problem.orders or problem.exclusions or problem.path_costs or problem.same_leaf
                     or problem.globals or problem.uses)
            and all(d.cut_range is None for d in problem.dims) and _largest_pair(problem.X) <= MAX_CELLS)


def _largest_pair(X: np.ndarray) -> int:
    """The cells of the largest histogram of two columns (distinct values squared)."""
    most = max((len(np.unique(X[:, j])) for j in range(X.shape[1])), default=0)
    return most * most


def _sse(t: np.ndarray) -> np.ndarray:
    """The squared error of leaves from their statistics on the last axis (w, wv, wv^2, n)."""
    w, s1, s2 = t[..., 0], t[..., 1], t[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(w > 0, s2 - s1 * s1 / np.where(w > 0, w, 1.0), 0.0)
    return np.maximum(out, 0.0)


class _Columns:
    """Each column's distinct values and each row's rank among them."""

    def __init__(self, X: np.ndarray) -> None:
        self.values: list[np.ndarray] = []
        self.rank: list[np.ndarray] = []
        for j in range(X.shape[1]):
            v, r = np.unique(X[:, j], return_inverse=True)
            self.values.append(v)
            self.rank.append(r.reshape(-1).astype(np.int64))

    def threshold(self, j: int, a: int) -> float:
        """The cut between the a-th and (a+1)-th distinct values (a >= 1), left: x <= t."""
        v = self.values[j]
        return float((v[a - 1] + v[a]) / 2.0)


def optimal_regression_two(problem: TreeSearch, time_limit: float | None = None,
                           on_progress: Callable[..., None] | None = None) -> EngineResult:
    """The optimal tree of ``problem`` (``takes``), see the module."""
    start = time.perf_counter()
    deadline = math.inf if time_limit is None else start + time_limit
    level = problem.levels[0]
    c = float(level.nodes / level.errors)
    w = np.asarray(problem.weights, dtype=np.float64)
    y = np.asarray(problem.target, dtype=np.float64)
    shift = float((w * y).sum() / w.sum())
    v = y - shift
    stats = np.stack([w, w * v, w * v * v, np.ones_like(w)], axis=-1)  # (n, 4)
    total = stats.sum(axis=0)
    cols = _Columns(problem.X)
    m = max(problem.min_leaf, 1)

    def leaf(t: np.ndarray) -> tuple:
        return ("leaf", float(t[1] / t[0]) + shift if t[0] > 0 else shift)

    best_value = float(_sse(total))
    best_tree: tuple = leaf(total)
    timed_out = False
    if problem.depth >= 1 and total[3] >= 2 * m:
        for f in range(len(cols.values)):
            if time.perf_counter() > deadline or limits.halted():
                timed_out = True
                break
            got = _root_column(f, cols, stats, total, problem.depth, c, m)
            if got is not None and got[0] < best_value - 1e-12 * max(1.0, abs(best_value)):
                best_value, best_tree = got[0], _decode(got[1], cols, stats, shift)
    errors = _tree_sse(best_tree, problem.X, y, w)
    stats_out = {"columns": len(cols.values), "distinct": [int(len(u)) for u in cols.values][:8]}
    return finish(problem, best_tree, exact(errors), timed_out, start, stats_out, on_progress)


def _root_column(f: int, cols: _Columns, stats: np.ndarray, total: np.ndarray, depth: int, c: float,
                 m: int) -> tuple[float, tuple] | None:
    """(value, plan) of the best tree whose root cuts column f, or None: plan is (f, a,
    left, right) with each side ``None`` (a leaf) or (g, b) (a depth-one split)."""
    uf = len(cols.values[f])
    if uf < 2:
        return None
    rf = cols.rank[f]
    H = np.zeros((uf, 4))
    np.add.at(H, rf, stats)
    P = np.concatenate([np.zeros((1, 4)), np.cumsum(H, axis=0)])  # P[a]: rows among the a smallest values
    a = np.arange(1, uf)
    left, right = P[a], total[None, :] - P[a]
    ok = (left[:, 3] >= m) & (right[:, 3] >= m)
    if not ok.any():
        return None
    left_best, right_best = _sse(left), _sse(right)
    left_plan: list = [None] * len(a)
    right_plan: list = [None] * len(a)
    if depth >= 2:
        for g in range(len(cols.values)):
            ug = len(cols.values[g])
            if ug < 2:
                continue
            Lg, Rg, Lb, Rb = _child_splits(rf, cols.rank[g], uf, ug, stats, total, m)
            Lg, Rg = Lg + c, Rg + c
            better_l, better_r = Lg < left_best, Rg < right_best
            for i in np.flatnonzero(better_l):
                left_plan[i] = (g, int(Lb[i]))
            for i in np.flatnonzero(better_r):
                right_plan[i] = (g, int(Rb[i]))
            left_best = np.where(better_l, Lg, left_best)
            right_best = np.where(better_r, Rg, right_best)
    value = np.where(ok, left_best + right_best + c, INF)
    at = int(np.argmin(value))
    if not np.isfinite(value[at]):
        return None
    return float(value[at]), (f, int(a[at]), left_plan[at], right_plan[at])


def _child_splits(rf: np.ndarray, rg: np.ndarray, uf: int, ug: int, stats: np.ndarray, total: np.ndarray,
                  m: int) -> tuple[np.ndarray, ...]:
    """For every root cut a of f (a = 1..uf-1): the least squared error of a split on g of
    its left side and of its right side, and the g cut b achieving each (inf / -1: none)."""
    flat = rf * ug + rg
    H = np.stack([np.bincount(flat, weights=stats[:, k], minlength=uf * ug) for k in range(4)], axis=-1)
    G = np.zeros((uf + 1, ug + 1, 4))
    G[1:, 1:] = np.cumsum(np.cumsum(H.reshape(uf, ug, 4), axis=0), axis=1)
    colG = G[uf][None, :, :]  # every row, by g prefix
    out = [np.empty(uf - 1), np.empty(uf - 1), np.empty(uf - 1, dtype=np.int64), np.empty(uf - 1, dtype=np.int64)]
    step = max(1, BLOCK // (ug + 1))
    for lo in range(1, uf, step):  # root cuts in blocks: the temporaries stay small
        hi = min(uf, lo + step)
        A = G[lo:hi]  # the rows left of each root cut of the block
        colL = A[:, ug:ug + 1]  # their total
        LL = A[:, 1:ug]
        LR = colL - LL
        RL = colG[:, 1:ug] - LL
        RR = total[None, None, :] - colL - RL
        okL = (LL[..., 3] >= m) & (LR[..., 3] >= m)
        okR = (RL[..., 3] >= m) & (RR[..., 3] >= m)
        costL = np.where(okL, _sse(LL) + _sse(LR), INF)
        costR = np.where(okR, _sse(RL) + _sse(RR), INF)
        bL, bR = np.argmin(costL, axis=1), np.argmin(costR, axis=1)
        rows = np.arange(hi - lo)
        out[0][lo - 1:hi - 1], out[1][lo - 1:hi - 1] = costL[rows, bL], costR[rows, bR]
        out[2][lo - 1:hi - 1], out[3][lo - 1:hi - 1] = bL + 1, bR + 1
    return tuple(out)


def _decode(plan: tuple, cols: _Columns, stats: np.ndarray, shift: float) -> tuple:
    """The engines' nested tuples of a plan (leaves read from the rows' statistics)."""
    f, a, lp, rp = plan

    def leaf(mask: np.ndarray) -> tuple:
        t = stats[mask].sum(axis=0)
        return ("leaf", float(t[1] / t[0]) + shift if t[0] > 0 else shift)

    def side(mask: np.ndarray, p) -> tuple:
        if p is None:
            return leaf(mask)
        g, b = p
        go = cols.rank[g] < b
        return ("split", g, cols.threshold(g, b), leaf(mask & go), leaf(mask & ~go))

    go = cols.rank[f] < a
    return ("split", f, cols.threshold(f, a), side(go, lp), side(~go, rp))


def _tree_sse(tree: tuple, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """The squared error of a tree over the rows, recomputed from its leaves' values."""
    pred = np.empty(len(y))

    def route(node: tuple, rows: np.ndarray) -> None:
        if node[0] == "leaf":
            pred[rows] = node[1]
            return
        go = X[rows, node[1]] <= node[2]
        route(node[3], rows[go])
        route(node[4], rows[~go])

    route(tree, np.arange(len(y)))
    return float((w * (y - pred) ** 2).sum())
