"""The errors-only enumeration split over processes (both cores of the machine).

Input: the merged rows, the number of levels h >= 2, a deadline and the all-features
lower bound. Output: the least majority errors over every h-subset and a subset reaching
it, and whether every prefix was counted. Prefixes are dealt round-robin (the early
prefixes have the most later features, so the work is shared evenly); each worker runs
``counts.prefix_errors`` with BLAS held to one thread. Forked workers inherit the rows,
nothing is pickled but the answers. Ties go to the lexicographically first subset, so
the answer does not depend on the number of workers.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import time

import numpy as np

from .counts import Rows, prefix_errors, prefixes

_ROWS: Rows | None = None  # set in the parent before forking


def _worker(job: tuple[int, int, int, float | None, float]) -> tuple[float, tuple[int, ...], bool]:
    part, parts, h, deadline, floor = job
    from threadpoolctl import threadpool_limits

    assert _ROWS is not None
    best, subset = float("inf"), ()  # type: tuple[float, tuple[int, ...]]
    with threadpool_limits(1, user_api="blas"):
        for i, q in enumerate(prefixes(_ROWS.X.shape[1], h)):
            if i % parts != part:
                continue
            if deadline is not None and time.time() > deadline:
                return best, subset, False
            if best <= floor + 1e-9:
                break
            start, E = prefix_errors(_ROWS, q)
            x, y = np.unravel_index(int(np.argmin(E)), E.shape)
            if E[x, y] < best:
                best, subset = float(E[x, y]), q + (start + int(x), start + int(y))
    return best, subset, True


def workers() -> int:
    """Processes to use: the cores this process may run on, at most 2 (the shared machine);
    1 inside a daemonic process (a ``multiprocessing.Pool`` worker), which may not have
    children: forking there fails with "daemonic processes are not allowed to have children"."""
    if mp.current_process().daemon:
        return 1
    try:
        return max(1, min(2, len(os.sched_getaffinity(0))))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, min(2, os.cpu_count() or 1))


def least_errors(rows: Rows, h: int, deadline: float | None, floor: float,
                 parts: int) -> tuple[float, tuple[int, ...], bool]:
    """(least errors, subset, complete) over every h-subset, in ``parts`` processes.
    ``deadline`` is a ``time.time()`` instant (shared by the processes)."""
    global _ROWS
    _ROWS = rows
    try:
        with mp.get_context("fork").Pool(parts) as pool:
            answers = pool.map(_worker, [(i, parts, h, deadline, floor) for i in range(parts)])
    finally:
        _ROWS = None
    complete = all(done for _, _, done in answers)
    best = min(answers, key=lambda a: (a[0], a[1]))
    return best[0], best[1], complete
