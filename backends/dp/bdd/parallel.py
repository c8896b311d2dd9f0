"""Stage 2 of the bounded subset enumeration (``neighbours``) split over processes (both
cores of the machine).

Input: a ``neighbours._Search`` whose stage 1 is done (centres, bounds, incumbent) and a
number of parts. Output: per part, its least errors and subset (original numbering),
whether it finished and how many subsets it counted; in visit mode (BDDs with sizes) also
the part's incumbent BDD, which the caller's visit function kept in the worker. The first features of the prefixes
are dealt round-robin (the early ones, the strongest, have the most later features, so
the work is shared evenly); each worker runs with BLAS held to one thread and starts
from the stage-1 incumbent. Forked workers inherit the search; nothing is pickled but
the answers. Every part counts every subset of least errors in its share (only bounds
strictly above an incumbent prune), so the least (errors, subset) over the parts does not
depend on the number of parts (unless a part reaches the all-features bound and stops early).
"""
from __future__ import annotations

import multiprocessing as mp
import os
from typing import Any, Callable, NamedTuple

_SEARCH: Any = None  # set in the parent before forking
_COLLECT: Callable[[], Any] | None = None  # visit mode: what a worker hands back, set with _SEARCH
_IN_WORKER = False  # true in a forked worker: it reports no progress of its own


class Share(NamedTuple):
    """What one worker found in its share of the prefixes."""

    errors: float
    subset: tuple[int, ...]
    complete: bool
    counted: int  # subsets this worker counted in its share
    lower: float  # a proven lower bound on the errors of its share's subsets
    state: Any = None  # visit mode: the caller's ``collect()`` in the worker, after its share


def _worker(job: tuple[int, int]) -> Share:
    global _IN_WORKER
    part, parts = job
    from threadpoolctl import threadpool_limits

    _IN_WORKER = True
    search = _SEARCH
    before = search.counted  # what the parent had counted (stage 1): counted once, there
    with threadpool_limits(1, user_api="blas"):
        done = search.stage_two(part, parts)
    return Share(search.best, search.subset, done, search.counted - before, search.lower_bound(part, parts),
                 None if _COLLECT is None else _COLLECT())


def in_worker() -> bool:
    """Whether this process is a forked worker of ``run_parts`` (its parent reports progress)."""
    return _IN_WORKER


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


def run_parts(search: Any, parts: int, tick: Callable[[], None] | None = None,
              collect: Callable[[], Any] | None = None) -> list[Share]:
    """Stage 2 of ``search`` in ``parts`` forked processes: one ``Share`` per part. The
    search's deadline is a ``time.time()`` instant, shared by all. ``tick()`` runs every
    half second while the parent waits (progress lines). In visit mode the workers' own
    incumbents live in the caller's closures: ``collect()``, run in each worker after its
    share, returns them (picklable) as ``Share.state``."""
    global _SEARCH, _COLLECT
    _SEARCH, _COLLECT = search, collect
    try:
        with mp.get_context("fork").Pool(parts) as pool:
            answer = pool.map_async(_worker, [(i, parts) for i in range(parts)])
            while not answer.ready():
                answer.wait(0.5)
                if tick is not None and not answer.ready():
                    tick()
            return answer.get()
    finally:
        _SEARCH, _COLLECT = None, None
