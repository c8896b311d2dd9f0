"""Exact search for the best ordered BDD of a ``BddSearch``: enumeration of feature
subsets with bounds (issue 16; Hu, Huguet & Siala, IJCAI 2022).

Input: a ``BddSearch`` (0/1 matrix, classes, weights, depth H, bias, objective levels,
limits ``nodes <= K`` / ``errors <= k``), a time limit, a progress callback. Output: a
``BddResult``: the ordered features, the truth table in that order, the objective key,
the status and a proven lower bound on the first level.

Method. With h = min(H, useful features) levels, every BDD is a truth table over an
ordered h-subset S. Its errors are at least errors(S), the majority errors of S
(``counts``), with equality for the majority table; its size is at least 1 unless it is
constant (the constant classifier is the incumbent seeded first). So:
  * errors only (``minimize errors``, ``maximize accuracy``, with ``errors <= k``): the
    optimum is the subset with the least errors(S); for h >= 3 ``neighbours`` counts
    only the subsets that its similarity bound over clusters of features cannot rule
    out (on both cores when the work is large), for h <= 2 every subset is counted;
    the enumeration stops early when it meets the lower bound of all features (rows
    identical on every feature with different classes);
  * with sizes (``+ a * nodes``, ``then nodes``, ``nodes <= K``, ``minimize nodes``):
    a subset is examined (``size.best_on_subset``: every labelling in nondecreasing
    errors, every one of its h! orderings) only if its bound (the objective levels at
    errors(S) and one node) is lexicographically below the incumbent; for h >= 3 the
    subsets come from ``neighbours`` (those within reach of the incumbent's errors), on
    both cores when the work is large: each worker sizes its share's subsets against its
    own incumbent, and the best of the workers' wins (the first part among equal keys, so
    which of several optimal BDDs is returned may depend on the number of processes).
Anytime: on a time-out the incumbent is returned with the bound min(incumbent, the
first level at the all-features lower bound of the errors), status ``feasible``.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import Callable

import numpy as np

from odt.compiler import limits
from odt.compiler.search_bdd import BddSearch

from ..blas import one_thread
from . import neighbours, parallel
from .counts import (Rows, bayes_errors, cell_weights, merge_rows, prefix_errors, prefixes, single_errors,
                     subset_errors)
from .size import Key, best_on_subset, decoded_size, permute_cells, smallest_order

_TOL = 1e-9
#: at most this many subsets are counted directly (``counts.subset_errors``), without
#: Gram products or bounds (corral, H = 3: 0.2 ms instead of 1.1 ms)
_DIRECT = 64


def _work(rows: Rows, h: int) -> float:
    p = rows.X.shape[1]
    n = rows.X.shape[0]
    # sum over prefixes of m^2 ~ C(p, h - 2) * (p / (h - 1))^2 ... within a factor of 2
    return n * comb(p, h - 2) * (p / max(1, h - 1)) ** 2


@dataclass(frozen=True)
class BddResult:
    status: str  # "optimal", "feasible" (time-out with an incumbent), "infeasible", "unknown"
    key: Key | None  # objective level values of the incumbent
    levels: tuple[int, ...]  # feature positions (columns of the search matrix), level 0 first
    table: tuple[int, ...]  # class of each cell, level 0 feature = most significant bit
    errors: float
    size: int
    bound: float | None  # proven lower bound on the first level
    stats: str


class _Objective:
    """The key of a (errors, size) pair under the levels and limits of a problem."""

    def __init__(self, problem: BddSearch):
        self.coefs = [(float(l.errors), float(l.nodes), float(l.constant)) for l in problem.levels]
        self.max_nodes = problem.max_nodes
        self.max_errors = None if problem.max_errors is None else float(problem.max_errors)

    def key(self, errors: float, size: int) -> Key | None:
        if self.max_nodes is not None and size > self.max_nodes:
            return None
        if self.max_errors is not None and errors > self.max_errors + _TOL:
            return None
        return tuple(a * errors + b * size + c for a, b, c in self.coefs)

    def bound(self, errors: float, size: int = 0) -> Key:
        """A lexicographic lower bound of the key of every BDD with at least these errors
        and this size (+inf when the errors break ``errors <= k``)."""
        if self.max_errors is not None and errors > self.max_errors + _TOL:
            return tuple(float("inf") for _ in self.coefs)
        return tuple(a * errors + b * size + c for a, b, c in self.coefs)


def optimal_bdd(problem: BddSearch, time_limit: float | None = None,
                on_progress: Callable[[float, float, float], None] | None = None,
                smallest: bool = True) -> BddResult:
    """The best BDD of ``problem`` (see the module). ``on_progress(elapsed, incumbent,
    bound)`` reports the first level now and then. With an errors-only objective the
    winning subset is decoded in the order of least size (``smallest``: h! orders sized),
    else in its own order (a caller that wants the bound only, such as the diagram bounds)."""
    clock = time.perf_counter()
    deadline = None if time_limit is None else clock + time_limit
    rows = merge_rows(problem.X, problem.y, problem.weights, problem.n_classes)
    p = rows.X.shape[1]
    h = min(problem.depth, p)
    obj = _Objective(problem)
    with_size = not problem.errors_only
    floor = bayes_errors(rows)
    totals = rows.class_totals()
    const_class = int(np.argmax(totals)) if len(totals) else 0
    const_errors = rows.total - (float(totals.max()) if len(totals) else 0.0)
    best_key = obj.key(const_errors, 0)
    best: tuple[tuple[int, ...], list[int], float, int] | None = ((), [const_class], const_errors, 0) \
        if best_key is not None else None
    examined = 0
    bounded = ""  # the bounded enumeration's account of its work
    last_report = [clock]

    def report(force: bool = False) -> None:
        now = time.perf_counter()
        if on_progress is not None and best_key is not None and (force or now - last_report[0] > 0.5) \
                and not parallel.in_worker():
            last_report[0] = now
            on_progress(now - clock, best_key[0], min(best_key[0], obj.bound(floor)[0]))

    def out_of_time() -> bool:
        return deadline is not None and time.perf_counter() > deadline or limits.halted()

    def visit(errs: np.ndarray, subsets: list[tuple[int, ...]]) -> None:
        consider(subsets, errs)
        report()

    def errors_cap() -> float:
        """The most errors a subset may have and still give a key below the incumbent
        (at least one node: the constant classifier is the first incumbent)."""
        a1, b1, c1 = obj.coefs[0]
        cap = float("inf") if obj.max_errors is None else obj.max_errors
        if best_key is not None and a1 > 0:
            cap = min(cap, (best_key[0] - b1 - c1) / a1)
        return cap

    def consider(subsets: list[tuple[int, ...]], errs: np.ndarray) -> None:
        """Subsets with their majority errors: keep the best (errors only), or examine
        those whose bound beats the incumbent (sizes)."""
        nonlocal best_key, best, examined
        if not with_size:
            i = int(np.argmin(errs))
            k = obj.key(float(errs[i]), 1)
            if k is not None and (best_key is None or k < best_key):
                best_key, best = k, (subsets[i], [], float(errs[i]), -1)
            return
        for i in np.argsort(errs, kind="stable"):
            if best_key is not None and obj.bound(float(errs[i]), 1) >= best_key or out_of_time():
                break
            W = cell_weights(rows, subsets[i])
            examined += 1
            got = best_on_subset(W, problem.bias, obj.key, lambda e: obj.bound(e, 0), best_key, out_of_time)
            if got is not None:
                k, order, table = got
                best_key = k
                errors = _errors_of(W, order, table)
                best = (tuple(subsets[i][o] for o in order), table, errors, decoded_size(table, permute_cells(W, order),
                                                                                        problem.bias))

    def run_prefixes() -> bool:
        """Every prefix in turn; False when the time limit stopped it."""
        for q in prefixes(p, h):
            if out_of_time():
                return False
            if not with_size and best is not None and best[2] <= floor + _TOL:
                return True  # nothing beats the all-features bound
            start, E = prefix_errors(rows, q)
            if not with_size:  # the least errors of the prefix only
                x, y = np.unravel_index(int(np.argmin(E)), E.shape)
                consider([q + (start + int(x), start + int(y))], E[x:x + 1, y])
            else:  # the completions whose first-level bound reaches the incumbent
                a1, b1, c1 = obj.coefs[0]
                room = np.isfinite(E)
                if best_key is not None:
                    room &= a1 * np.where(room, E, 0.0) + b1 + c1 <= best_key[0] + _TOL
                a, b = np.nonzero(room)
                consider([q + (start + int(x), start + int(y)) for x, y in zip(a, b)], E[a, b])
            report()
        return True

    complete = True
    if h == 1:
        consider([(f,) for f in range(p)], single_errors(rows))
    elif comb(p, h) <= _DIRECT:  # a few subsets: counted one by one
        every = list(combinations(range(p), h))
        consider(every, subset_errors(rows, np.array(every, np.int64)))
    elif h >= 3 and not with_size and p <= neighbours.MAX_FEATURES:
        remaining = None if deadline is None else time.time() + (deadline - time.perf_counter())
        with _one_blas_thread(_work(rows, h)):
            errors, subset, complete, bounded, floor = neighbours.least_errors(
                rows, h, remaining, floor, parallel.workers(),
                None if on_progress is None else lambda e: on_progress(time.perf_counter() - clock, e, floor))
        if subset:
            consider([subset], np.array([errors]))
    elif h >= 3 and p <= neighbours.MAX_FEATURES:  # with sizes: every subset whose errors can still win
        remaining = None if deadline is None else time.time() + (deadline - time.perf_counter())
        with _one_blas_thread(_work(rows, h)):
            complete, bounded, states = neighbours.visit_subsets(
                rows, h, remaining, errors_cap, visit, parallel.workers(),
                lambda: (best_key, best, examined), lambda: report(force=True))
        forked_at = examined  # the workers count on from here
        for state in states:  # the workers' incumbents: the first part wins ties
            if state is None:  # a worker ended before it answered (a stop): its share is unfinished
                complete = False
                continue
            key, found, count = state
            examined += count - forked_at
            if key is not None and (best_key is None or key < best_key):
                best_key, best = key, found
    elif h >= 2:
        with _one_blas_thread(_work(rows, h)):
            complete = run_prefixes()
    if with_size and out_of_time():

        complete = False
    if best is not None and best[3] < 0:  # errors only: the order with the smallest BDD
        subset = best[0]
        W = cell_weights(rows, subset)
        table = [int(c) for c in W.argmax(axis=1)]
        if smallest:
            order, table, nodes = smallest_order(W, table, problem.bias)
        else:
            order, nodes = tuple(range(len(subset))), decoded_size(table, W, problem.bias)
        best = (tuple(subset[o] for o in order), table, best[2], nodes)
    seconds = time.perf_counter() - clock
    stats = (f"{p} useful features, {h} levels, {rows.X.shape[0]} distinct rows; "
             f"{bounded + '; ' if bounded else ''}{examined} subsets sized; {seconds:.2f} s")
    report(force=True)
    if best is None or best_key is None:
        return BddResult("infeasible" if complete else "unknown", None, (), (), 0.0, 0,
                         None if complete else obj.bound(floor)[0], stats)
    bound = best_key[0] if complete else min(best_key[0], obj.bound(floor)[0])
    return BddResult("optimal" if complete else "feasible", best_key, best[0], tuple(best[1]), best[2], best[3],
                     bound, stats)


def _one_blas_thread(work: float) -> contextlib.AbstractContextManager:
    """BLAS held to one thread while the small Gram products run (``blas.one_thread``):
    OpenBLAS's threads spin against each other on a loaded machine (mushroom, H = 3, one
    prefix: 139 ms with its default threads on 2 busy cores, 4.4 ms with one; hypothyroid,
    H = 2, its one 3247 x 44 product: 104 ms against 0.2 ms). Only the tiniest enumerations
    skip it (finding the BLAS library costs about 3 ms, once per process)."""
    return contextlib.nullcontext() if work < 1e5 else one_thread()


def _errors_of(W: np.ndarray, order: tuple[int, ...], table: list[int]) -> float:
    Wo = permute_cells(W, order)
    return float(Wo.sum() - Wo[np.arange(len(table)), table].sum())
