"""Worker processes of a dp search (issues 24 and 27): forked helpers that belong to their
solve.

A worker starts with SIGINT ignored (the terminal's Ctrl-C reaches the whole process group;
the parent decides), SIGTERM at its default action (so ending it is one signal), the
parent's wakeup pipe and handlers already dropped at the fork (``limits._forget_in_child``)
and ``PR_SET_PDEATHSIG``, so it dies with its parent whatever ends the parent. A stop of
the parent (a signal, its hard deadline) reaches it through a shared flag it polls.

``Team`` keeps workers alive across the commands of one search (their caches persist:
the deep search sends one command per discrepancy iteration): ``ask(payloads)`` hands each
worker its payload and waits for every answer, ticking now and then; after a stop it gives
the workers ``ANSWER_WITHIN`` seconds, then ends them and reports the missing answers as
None. ``close()`` ends and reaps every worker; leaving the ``with`` block does it too.
"""
from __future__ import annotations

import multiprocessing as mp
import multiprocessing.connection
import os
import signal
import time
from typing import Any, Callable

from odt.compiler import limits

ANSWER_WITHIN = 0.5  # seconds a worker has to answer once asked to stop


def start_worker(parent: int) -> None:
    """A worker's first act, in a ``Team`` and in the BDD search's pool: the terminal's
    Ctrl-C (sent to the whole process group) is the parent's to handle, SIGTERM
    (``Pool.terminate``) ends the worker at once, and the worker ends with its parent,
    whatever ends the parent (Linux).

    ``parent`` is the pid the parent read before forking. ``PR_SET_PDEATHSIG`` only covers a
    death after the call: a parent killed between the fork and it (the worker may still be
    importing ``ctypes``) leaves the worker adopted by init, and such an orphan would wait
    on its task queue forever, holding whatever pipes it inherited (a caller reading the
    parent's output then never sees it end). The pid compared after the call is the
    parent's own, not one read in the child, which could already be init's."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() != parent:  # pragma: no cover - the parent died before prctl
        os._exit(1)


def cores() -> int:
    """Processes a search may use: the cores this process may run on, at most 2 (the
    shared machine); 1 inside a daemonic process (a ``multiprocessing.Pool`` worker), which
    may not have children: forking there fails with "daemonic processes are not allowed to
    have children"."""
    if mp.current_process().daemon:
        return 1
    try:
        return max(1, min(2, len(os.sched_getaffinity(0))))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, min(2, os.cpu_count() or 1))


class Team:
    """``n`` forked workers, each running ``serve(part, payload) -> answer`` for every
    payload sent to it; ``stop_flag`` (a shared byte) is set when the parent stops."""

    def __init__(self, n: int, serve: Callable[[int, Any], Any]) -> None:
        ctx = mp.get_context("fork")
        self.stop_flag = ctx.RawValue("b", 0)
        self.conns: list[Any] = []
        self.procs: list[Any] = []
        for part in range(n):
            here, there = ctx.Pipe()
            proc = ctx.Process(target=_loop, args=(there, part, serve, self.stop_flag, os.getpid()),
                               daemon=True)
            proc.start()
            there.close()
            self.conns.append(here)
            self.procs.append(proc)

    def ask(self, payloads: list[Any], deadline: float | None = None,
            tick: Callable[[], None] | None = None) -> list[Any]:
        """Each worker's answer to its payload (None for a worker ended before it
        answered); ``deadline`` a ``time.perf_counter`` instant after which the workers
        are asked to stop."""
        for conn, payload in zip(self.conns, payloads):
            conn.send(payload)
        answers: list[Any] = [None] * len(payloads)
        waiting = set(range(len(payloads)))
        give_up: float | None = None
        ticked = time.perf_counter()
        while waiting:
            ready = mp.connection.wait([self.conns[i] for i in waiting], timeout=0.1)
            for conn in ready:
                i = next(j for j in waiting if self.conns[j] is conn)
                try:
                    answers[i] = self.conns[i].recv()
                except (EOFError, OSError):
                    answers[i] = None
                waiting.discard(i)
            now = time.perf_counter()
            if give_up is None and (limits.halted() or (deadline is not None and now > deadline)):
                self.stop_flag.value = 1
                give_up = now + ANSWER_WITHIN
            if give_up is not None and now > give_up and waiting:
                for i in waiting:
                    self.procs[i].terminate()
                break
            if tick is not None and now - ticked > 0.5:
                ticked = now
                tick()
        return answers

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        for proc in self.procs:
            proc.join(timeout=0.2)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        for conn in self.conns:
            conn.close()

    def __enter__(self) -> "Team":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _loop(conn, part: int, serve: Callable[[int, Any], Any], stop_flag, parent: int) -> None:
    start_worker(parent)
    global _STOP
    _STOP = stop_flag
    while True:
        try:
            payload = conn.recv()
        except (EOFError, OSError):
            return
        if payload is None:
            return
        conn.send(serve(part, payload))


_STOP: Any = None  # in a worker: the team's stop flag


def stop_requested() -> bool:
    """In a worker: whether the parent asked the team to stop."""
    return _STOP is not None and _STOP.value != 0
