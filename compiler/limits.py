"""Time limits and interrupts held by the whole process (issue 18, items 4 and 5).

Input: time limits opened as nested scopes (``time_limit``), native solver calls wrapped
in ``native(stop)``, and the signals SIGINT / SIGTERM once ``install_signal_handlers``
ran (the CLI does). Output: ``remaining()`` seconds for a solver, ``check()`` and the
``Stopped`` exception for Python code past its deadline or interrupted, ``stop_reason()``.

Invariants:
* a scope never outlives its enclosing scope (deadlines only shrink inward);
* while a native solver runs (``native``), nothing is raised into Python code: the stop
  reaches the solver through its own ``stop`` function (CP-SAT ``StopSearch``, RC2
  ``interrupt``, a HiGHS interrupt flag), called by a watcher thread, since Python runs
  no signal handler while the main thread sits in C code;
* outside a native call, Python code past its hard deadline (the limit plus a grace of
  1% + 0.2 s) or interrupted gets ``Stopped`` raised at its next bytecode (SIGALRM;
  the main thread only), so long Python loops in lowering, encoding or a third-party
  model builder stop too;
* one state per process, as signals are per process (the one place this package keeps
  module state, and why).
"""
from __future__ import annotations

import os
import select
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator

#: the stop reasons, and the exit code the CLI gives each
TIME_LIMIT, INTERRUPT, TERMINATE = "time limit", "interrupt", "terminate"
EXIT_CODES = {INTERRUPT: 130, TERMINATE: 143}
_REASON_OF_SIGNAL = {signal.SIGINT: INTERRUPT, signal.SIGTERM: TERMINATE}


class Stopped(Exception):
    """Raised into Python code that passed its hard deadline or was interrupted; the
    solve that catches it returns its best incumbent. Not an ``OdtError``: not a user error."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def reserve(seconds: float) -> float:
    """How long before a time limit the solvers are asked to stop: the time to decode,
    re-verify, print and write the result (and the interpreter's start, which no scope
    sees)."""
    return min(0.02 * seconds + 0.1, 0.5 * seconds)


def grace(seconds: float) -> float:
    """How far past a time limit a solver (or Python code) may run before it is stopped
    from outside; the process ends within 5% + 1 s of the limit (issue 18)."""
    return 0.01 * seconds + 0.2


@dataclass
class _State:
    deadlines: list[float] = field(default_factory=list)  # perf_counter instants, innermost last
    hard: list[float] = field(default_factory=list)  # the matching hard deadlines
    hooks: list[Callable[[], None]] = field(default_factory=list)  # native solvers to stop, innermost last
    reason: str | None = None  # a stop requested by a signal
    delivered: bool = False  # the current native solver was told to stop
    lock: threading.RLock = field(default_factory=threading.RLock)
    wake_w: int | None = None  # the watcher's pipe (also the signal wakeup fd)
    watcher: threading.Thread | None = None


_S = _State()


def remaining() -> float | None:
    """Seconds to the innermost deadline (at least 0), or None without a time limit."""
    if not _S.deadlines:
        return None
    return max(0.0, _S.deadlines[-1] - time.perf_counter())


def budget(limit: float | None) -> float | None:
    """``limit`` cut to what the enclosing scopes leave (None: no limit at all)."""
    left = remaining()
    if limit is None:
        return left
    return limit if left is None else min(limit, left)


def stop_reason() -> str | None:
    """``INTERRUPT`` or ``TERMINATE`` once a signal asked to stop, else None."""
    return _S.reason


def expired() -> bool:
    return _S.reason is not None or (bool(_S.deadlines) and time.perf_counter() >= _S.deadlines[-1])


def check() -> None:
    """Raise ``Stopped`` when interrupted or past the innermost deadline (cooperative checks
    in long loops: cheaper and earlier than the hard stop)."""
    if _S.reason is not None:
        raise Stopped(_S.reason)
    if _S.deadlines and time.perf_counter() >= _S.deadlines[-1]:
        raise Stopped(TIME_LIMIT)


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """A scope that ends ``seconds`` from now, less a ``reserve`` for the wrap-up (or with
    the enclosing one, if sooner); None opens no new deadline. Past the time limit plus
    its ``grace`` the running native solver is stopped and Python code gets ``Stopped``."""
    if seconds is None:
        yield
        return
    now = time.perf_counter()
    seconds = max(0.0, seconds)
    end, hard = now + seconds - reserve(seconds), now + seconds + grace(seconds)
    if _S.deadlines:
        end, hard = min(end, _S.deadlines[-1]), min(hard, _S.hard[-1])
    with _S.lock:
        _S.deadlines.append(end)
        _S.hard.append(hard)
    _arm()
    try:
        yield
    finally:
        with _S.lock:
            _S.deadlines.pop()
            _S.hard.pop()
        _arm()


def _hard_deadline() -> float | None:
    """The instant past which the innermost deadline is enforced from outside."""
    return _S.hard[-1] if _S.hard else None


@contextmanager
def native(stop: Callable[[], None]) -> Iterator[None]:
    """Run a native solver call that ``stop`` (thread-safe, idempotent) ends early; a stop
    already requested is passed on at once."""
    with _S.lock:
        _S.hooks.append(stop)
        _S.delivered = False
        pending = _S.reason is not None
    _ensure_watcher()
    if pending:
        stop()
    _wake()
    try:
        yield
    finally:
        with _S.lock:
            _S.hooks.pop()


def _deliver(reason: str | None) -> bool:
    """Tell the running native solver to stop; True if there was one."""
    with _S.lock:
        if reason is not None and _S.reason is None:
            _S.reason = reason
        hook = _S.hooks[-1] if _S.hooks else None
        if hook is not None:
            _S.delivered = True
    if hook is not None:
        try:
            hook()
        except Exception:  # noqa: BLE001 - a solver that cannot be stopped runs to its own limit
            pass
    return hook is not None


def _on_signal(signum: int, frame) -> None:
    """The Python-level handler (main thread, between bytecodes)."""
    reason = _REASON_OF_SIGNAL.get(signum, TIME_LIMIT)
    if signum == signal.SIGALRM:
        hard = _hard_deadline()
        if hard is None or time.perf_counter() < hard - 1e-3:  # a stale alarm of a closed scope
            _arm()
            return
        reason = None  # the time limit is not a stop reason for the scopes around
    with _S.lock:
        native_running = bool(_S.hooks)
        already = _S.delivered
        if reason is not None and _S.reason is None:
            _S.reason = reason
    if native_running:  # inside a solver callback, or the solver was told already
        if not already:
            _deliver(reason)
        return
    raise Stopped(reason or TIME_LIMIT)


def _arm() -> None:
    """Point SIGALRM (main thread only) and the watcher at the innermost hard deadline."""
    _wake()
    if threading.current_thread() is not threading.main_thread():
        return
    hard = _hard_deadline()
    if hard is not None and hard <= time.perf_counter():
        hard = None  # code that runs on past a hard deadline is wrapping up: checks, no alarm
    try:
        if hard is None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            return
        if signal.getsignal(signal.SIGALRM) not in (_on_signal, signal.SIG_DFL, None):
            return  # the embedding program uses SIGALRM itself: rely on cooperative checks
        signal.signal(signal.SIGALRM, _on_signal)
        signal.setitimer(signal.ITIMER_REAL, max(1e-3, hard - time.perf_counter()))
    except (ValueError, OSError):  # not the main interpreter, or no timers on this platform
        pass


def _wake() -> None:
    if _S.wake_w is not None:
        try:
            os.write(_S.wake_w, b"\0")
        except (BlockingIOError, OSError):
            pass


def _ensure_watcher() -> None:
    """A daemon thread that stops native solvers past their hard deadline or on a signal
    (it reads the signal wakeup pipe, which C-level handlers write while Python waits)."""
    with _S.lock:
        if _S.watcher is not None:
            return
        r, w = os.pipe()
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        _S.wake_w = w
        _S.watcher = threading.Thread(target=_watch, args=(r,), name="odt-limits", daemon=True)
        _S.watcher.start()


def _watch(r: int) -> None:
    while True:
        hard = _hard_deadline()
        now = time.perf_counter()
        idle = hard is None or now >= hard and (_S.delivered or not _S.hooks)
        ready, _, _ = select.select([r], [], [], None if idle else max(0.0, hard - now))
        reason = None
        if ready:
            try:
                data = os.read(r, 512)
            except BlockingIOError:
                data = b""
            for b in data:
                if b in _REASON_OF_SIGNAL.keys():
                    reason = _REASON_OF_SIGNAL[signal.Signals(b)]
        if reason is not None:
            with _S.lock:
                if _S.reason is None:
                    _S.reason = reason
        hard = _hard_deadline()
        late = hard is not None and time.perf_counter() >= hard
        if (late or _S.reason is not None) and _S.hooks and not _S.delivered:
            _deliver(reason)


def install_signal_handlers() -> None:
    """SIGINT and SIGTERM ask the running solve to stop and keep its incumbent (the CLI
    calls this once). The wakeup pipe lets the watcher stop a native solver at once."""
    _ensure_watcher()
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    assert _S.wake_w is not None
    signal.set_wakeup_fd(_S.wake_w, warn_on_full_buffer=False)


def reset() -> None:
    """Forget a stop request (a new solve in the same process, e.g. in tests)."""
    with _S.lock:
        _S.reason = None
        _S.delivered = False

