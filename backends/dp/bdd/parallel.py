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

The workers belong to their solve (issue 24): each starts with SIGINT ignored, SIGTERM at
its default action and the parent's wakeup pipe detached (``limits._forget_in_child``), and
dies with its parent (``PR_SET_PDEATHSIG``). A stop of the parent (a signal, its hard
deadline) reaches them through a shared flag they poll between prefixes; a worker that
has not answered ``_ANSWER_WITHIN`` seconds after that is ended, and its share counts as
unfinished (its stage-1 bound). The pool is terminated and joined on every way out.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from typing import Any, Callable, NamedTuple

from odt.compiler import limits

from ..workers import cores, start_worker

_SEARCH: Any = None  # set in the parent before forking
_COLLECT: Callable[[], Any] | None = None  # visit mode: what a worker hands back, set with _SEARCH
_IN_WORKER = False  # true in a forked worker: it reports no progress of its own
_STOP: Any = None  # a shared byte, set before forking: nonzero once the parent asks the workers to stop
_ANSWER_WITHIN = 0.5  # seconds a worker has to hand back its share once asked to stop


class Share(NamedTuple):
    """What one worker found in its share of the prefixes."""

    errors: float
    subset: tuple[int, ...]
    complete: bool
    counted: int  # subsets this worker counted in its share
    lower: float  # a proven lower bound on the errors of its share's subsets
    state: Any = None  # visit mode: the caller's ``collect()`` in the worker, after its share


def stop_requested() -> bool:
    """In a worker: whether the parent asked the workers to stop (polled with the deadline)."""
    return _STOP is not None and _STOP.value != 0


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
    """Processes the BDD search uses (``workers.cores``; a name of its own, which tests and
    ``bench/bdd_sized.py`` replace to hold the search to one or two processes)."""
    return cores()


def run_parts(search: Any, parts: int, tick: Callable[[], None] | None = None,
              collect: Callable[[], Any] | None = None) -> list[Share]:
    """Stage 2 of ``search`` in ``parts`` forked processes: one ``Share`` per part. The
    search's deadline is a ``time.time()`` instant, shared by all. ``tick()`` runs every
    half second while the parent waits (progress lines). In visit mode the workers' own
    incumbents live in the caller's closures: ``collect()``, run in each worker after its
    share, returns them (picklable) as ``Share.state``. A part whose worker did not answer
    in time after a stop is ``unfinished(part, parts)``: no subset, its stage-1 bound."""
    global _SEARCH, _COLLECT, _STOP
    ctx = mp.get_context("fork")
    _SEARCH, _COLLECT, _STOP = search, collect, ctx.RawValue("b", 0)
    try:
        with ctx.Pool(parts, initializer=start_worker, initargs=(os.getpid(),)) as pool:
            answers = [pool.apply_async(_worker, ((i, parts),)) for i in range(parts)]
            give_up: float | None = None
            ticked = time.time()
            while not all(a.ready() for a in answers):
                answers[next(i for i, a in enumerate(answers) if not a.ready())].wait(0.1)
                now = time.time()
                if give_up is None and (limits.halted() or search.deadline is not None and now > search.deadline):
                    _STOP.value = 1  # the workers stop at their next prefix
                    give_up = now + _ANSWER_WITHIN
                if give_up is not None and now > give_up:
                    break
                if tick is not None and now - ticked > 0.5:
                    ticked = now
                    tick()
            return [a.get() if a.ready() else search.unfinished(i, parts) for i, a in enumerate(answers)]
    finally:  # (leaving the pool's block terminated and joined its workers)
        _SEARCH, _COLLECT, _STOP = None, None, None
