"""Time limits and interrupts held by the whole process (issue 18, items 4 and 5).

Input: time limits opened as nested scopes (``time_limit``), native solver calls wrapped
in ``native(stop)``, and the signals SIGINT / SIGTERM inside ``signals()`` (the CLI
runs its commands there). Output: ``remaining()`` seconds for a solver, ``check()`` and the
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
* scopes are per thread (concurrent solves in threads keep their own deadlines); the
  stop request of a signal is per process, as signals are: the one place this package
  keeps module state, and why.
"""
from __future__ import annotations

import contextlib
import gc
import os
import select
import signal
import sys
import threading
import time
import weakref
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


@dataclass(eq=False)
class _Scopes:
    """One thread's scopes: its deadlines and the native solver it runs."""

    deadlines: list[float] = field(default_factory=list)  # perf_counter instants, innermost last
    hard: list[float] = field(default_factory=list)  # the matching hard deadlines
    hooks: list[Callable[[], None]] = field(default_factory=list)  # native solvers to stop, innermost last
    delivered: bool = False  # the current native solver was told to stop
    main: bool = False  # the main thread's (SIGALRM and signal handlers run there)
    shield: int = 0  # inside ``shielded``: the result is being made or written, nothing is raised


@dataclass
class _State:
    reason: str | None = None  # a stop requested by a signal (for the whole process)
    lock: threading.RLock = field(default_factory=threading.RLock)
    threads: "weakref.WeakSet[_Scopes]" = field(default_factory=weakref.WeakSet)
    local: threading.local = field(default_factory=threading.local)
    wake_w: int | None = None  # the watcher's pipe (also the signal wakeup fd)
    wake_r: int | None = None
    watcher: threading.Thread | None = None
    #: the handlers ``signals()`` replaced (restored on exit, and in a forked child at once)
    replaced: dict = field(default_factory=dict)
    deferred: bool = False  # a signal's stop waits for code that must not be cut (``_unsafe``)
    #: the instant the watcher sleeps until (inf: until woken), set with its view of the scopes
    #: under ``lock``: a new hard deadline before it wakes the watcher, a later one need not
    watch_until: float = float("inf")


_S = _State()
#: files whose code the hard deadline never interrupts (the scopes' own bookkeeping)
_DEFER_IN = {__file__, contextlib.__file__}


def _mine() -> _Scopes:
    scopes = getattr(_S.local, "scopes", None)
    if scopes is None:
        scopes = _S.local.scopes = _Scopes(main=threading.current_thread() is threading.main_thread())
        with _S.lock:
            _S.threads.add(scopes)
    return scopes


def _main_scopes() -> _Scopes | None:
    with _S.lock:
        return next((t for t in _S.threads if t.main), None)


def remaining() -> float | None:
    """Seconds to the innermost deadline (at least 0), or None without a time limit."""
    me = _mine()
    if not me.deadlines:
        return None
    return max(0.0, me.deadlines[-1] - time.perf_counter())


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
    me = _mine()
    return _S.reason is not None or (bool(me.deadlines) and time.perf_counter() >= me.deadlines[-1])


def halted() -> bool:
    """Whether the solve this thread runs must stop now: a signal asked (SIGINT, SIGTERM),
    or the native call it runs was told to stop (its hard deadline passed). The dp engines,
    which run as ``native`` calls of Python code, poll it beside their own deadline."""
    me = _mine()
    return _S.reason is not None or (bool(me.hooks) and me.delivered)


def check() -> None:
    """Raise ``Stopped`` when interrupted or past the innermost deadline (cooperative checks
    in long loops: cheaper and earlier than the hard stop)."""
    me = _mine()
    if me.shield:  # a result is being made or written
        return
    if _S.reason is not None:
        raise Stopped(_S.reason)
    if me.deadlines and time.perf_counter() >= me.deadlines[-1]:
        raise Stopped(TIME_LIMIT)


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """A scope that ends ``seconds`` from now, less a ``reserve`` for the wrap-up (or with
    the enclosing one, if sooner); None opens no new deadline. Past the time limit plus
    its ``grace`` the running native solver is stopped and Python code gets ``Stopped``."""
    if seconds is None:
        yield
        return
    me = _mine()
    now = time.perf_counter()
    seconds = min(max(0.0, seconds), 1e7)  # beyond ~4 months a limit is no limit (timers overflow)
    end, hard = now + seconds - reserve(seconds), now + seconds + grace(seconds)
    if me.deadlines:
        end, hard = min(end, me.deadlines[-1]), min(hard, me.hard[-1])
    with _S.lock:
        me.deadlines.append(end)
        me.hard.append(hard)
        early = hard < _S.watch_until  # the watcher, asleep past this deadline, must look again
    try:
        _ensure_watcher()
        _arm(wake=early)
        yield
    finally:
        with _S.lock:
            me.deadlines.pop()
            me.hard.pop()
        # back in the enclosing scope, whose code makes the result of this one: an alarm due
        # within a second would cut that short (cooperative checks and the watcher still hold)
        # (no wake-up: the watcher sleeps until at most the deadline just closed, no later than
        # the enclosing one, and recomputes from the scopes as they are when it wakes)
        _arm(min_ahead=1.0, wake=False)


#: a native call whose hard deadline is this close (seconds) wakes the watcher at once (``native``)
_WAKE_AHEAD = 0.05


@contextmanager
def native(stop: Callable[[], None]) -> Iterator[None]:
    """Run a native solver call that ``stop`` (thread-safe, idempotent) ends early; a stop
    already requested is passed on at once."""
    me = _mine()
    with _S.lock:
        me.hooks.append(stop)
        me.delivered = False
        pending = _S.reason is not None
    _ensure_watcher()
    if pending:
        stop()
    if me.hard and me.hard[-1] <= time.perf_counter() + _WAKE_AHEAD:
        # the watcher sleeps until every future hard deadline of this thread (a scope that
        # opens one wakes it, ``_arm``), and sees this hook then; only a deadline already
        # (or about to be) past, which it has stopped waiting for, needs it woken for the hook
        _wake()
    try:
        yield
    finally:
        with _S.lock:
            me.hooks.pop()


@contextmanager
def shielded() -> Iterator[None]:
    """Code that makes or writes a result (decoding, re-verifying, printing, writing files):
    neither the hard deadline nor a signal raises into it (a signal's stop request stays,
    for the exit code), so a result found is never lost to its own wrap-up."""
    me = _mine()
    me.shield += 1
    try:
        yield
    finally:
        me.shield -= 1


def _deliver(scopes: _Scopes) -> None:
    """Tell the native solver ``scopes`` runs to stop (if any)."""
    with _S.lock:
        hook = scopes.hooks[-1] if scopes.hooks else None
        if hook is None or scopes.delivered:
            return
        scopes.delivered = True
    try:
        hook()
    except Exception:  # noqa: BLE001 - a solver that cannot be stopped runs to its own limit
        pass


def _on_signal(signum: int, frame) -> None:
    """The Python-level handler (main thread, between bytecodes)."""
    me = _mine()
    if signum == signal.SIGALRM:
        if _S.deferred and _S.reason is not None:  # an interrupt whose stop was put off (``_retry``)
            reason = _S.reason
        else:
            hard = me.hard[-1] if me.hard else None
            if hard is None or time.perf_counter() < hard - 1e-3:  # a stale alarm of a closed scope
                _arm()
                return
            reason = TIME_LIMIT  # not a stop reason for the scopes around: only this one ends
    else:
        reason = _REASON_OF_SIGNAL.get(signal.Signals(signum), INTERRUPT)
        with _S.lock:
            _S.reason = _S.reason or reason
        for t in list(_S.threads):  # solvers in other threads stop too
            if not t.main:
                _deliver(t)
    if me.hooks:  # inside a solver callback, or the solver was told already: never raise there
        _deliver(me)
        return
    if me.shield:  # a result is being made or written
        if signum == signal.SIGALRM:
            _arm()  # the time limit's own alarm, if it is still ahead
        return
    if _unsafe(frame):
        _S.deferred = signum != signal.SIGALRM or _S.deferred
        _retry()
        return
    _S.deferred = False
    raise Stopped(reason)


def _unsafe(frame) -> bool:
    """True when raising into ``frame`` would break the process, so the stop waits a few
    milliseconds (``_retry``): the scopes' own bookkeeping (``_DEFER_IN``); code whose
    exceptions the interpreter drops (``_swallowing``: a gc callback, ``__del__``); an import (a
    lazily loaded solver library or numba kernel half-executed would stay broken in
    ``sys.modules``); numba's own Python code. Numba runs Python while it returns a
    compiled kernel's result (boxing each array calls ``numba.core.serialize``) and does
    not check those calls for an exception: one raised there leaves a NULL in the returned
    tuple and the interpreter crashes on it (issue 24: a signal or the hard deadline during
    a long depth-two kernel was a segfault); a compile or a cache load cut short leaves a
    kernel without its code ("no compiled object yet")."""
    if frame is not None and frame.f_code.co_filename in _DEFER_IN:
        return True
    numba = sys.modules.get("numba")
    where = os.path.dirname(getattr(numba, "__file__", None) or "") or None
    swallowing = _swallowing()
    while frame is not None:
        code = frame.f_code
        name = code.co_filename
        if name.startswith("<frozen importlib._bootstrap"):
            return True
        if where is not None and name.startswith(where + os.sep):
            return True
        if code in swallowing or code.co_name == "__del__" or name == weakref.__file__:
            return True
        frame = frame.f_back
    return False


def _swallowing() -> set:
    """The code of the functions the interpreter calls from C and whose exceptions it
    prints and drops ("Exception ignored in ..."): the garbage collector's callbacks. A
    stop raised inside one of them (or in a ``__del__``, or a ``weakref`` finaliser) would
    be lost, and the solve would run on to its hard deadline; it waits until they return."""
    return {getattr(cb, "__code__", None) for cb in gc.callbacks} - {None}


def _retry() -> None:
    """Deliver the stop again in 5 ms (SIGALRM, whose handler then raises it)."""
    try:
        if signal.getsignal(signal.SIGALRM) not in (_on_signal, signal.SIG_DFL, None):
            return  # the embedding program uses SIGALRM itself: rely on cooperative checks
        signal.signal(signal.SIGALRM, _on_signal)
        signal.setitimer(signal.ITIMER_REAL, 0.005)
    except (ValueError, OSError):  # not the main interpreter
        pass


def _arm(min_ahead: float = 0.0, wake: bool = True) -> None:
    """Point SIGALRM (main thread only) and, with ``wake``, the watcher at the innermost
    hard deadline."""
    if wake:
        _wake()
    if threading.current_thread() is not threading.main_thread():
        return
    me = _mine()
    hard = me.hard[-1] if me.hard else None
    if hard is not None and hard <= time.perf_counter() + min_ahead:
        hard = None  # code that runs on past a hard deadline is wrapping up: checks, no alarm
    try:
        if hard is None:
            if signal.getsignal(signal.SIGALRM) is _on_signal:
                signal.setitimer(signal.ITIMER_REAL, 0)
            return
        if signal.getsignal(signal.SIGALRM) not in (_on_signal, signal.SIG_DFL, None):
            return  # the embedding program uses SIGALRM itself: rely on cooperative checks
        signal.signal(signal.SIGALRM, _on_signal)
        # (an alarm due in over a day is re-armed when it fires early: timers take no larger values
        # everywhere, and a non-finite limit is refused by the caller's validation anyway)
        signal.setitimer(signal.ITIMER_REAL, min(86400.0, max(1e-3, hard - time.perf_counter())))
    except (ValueError, OSError, OverflowError):  # not the main interpreter, or no timers on this platform
        pass


def _wake() -> None:
    if _S.wake_w is not None:
        try:
            os.write(_S.wake_w, b"\0")
        except OSError:  # a full pipe wakes the watcher anyway
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
        _S.wake_r, _S.wake_w = r, w
        _S.watcher = threading.Thread(target=_watch, args=(r,), name="odt-limits", daemon=True)
        _S.watcher.start()


def _watch(r: int) -> None:
    while True:
        now = time.perf_counter()
        with _S.lock:  # the scopes and the instant it sleeps until, as one view (``time_limit`` reads it)
            threads = list(_S.threads)
            pending = [t.hard[-1] for t in threads if t.hard and t.hooks and not t.delivered]
            waiting = [h for t in threads if t.hard for h in [t.hard[-1]] if h > now]
            timeout = min(pending + waiting, default=None)
            _S.watch_until = float("inf") if timeout is None else timeout
        ready, _, _ = select.select([r], [], [], None if timeout is None else max(0.0, timeout - now))
        if ready:
            try:
                data = os.read(r, 512)
            except BlockingIOError:
                data = b""
            for b in data:
                if b in _REASON_OF_SIGNAL.keys():
                    with _S.lock:
                        _S.reason = _S.reason or _REASON_OF_SIGNAL[signal.Signals(b)]
        with _S.lock:  # the threads now: one may have started a native call since (``native`` wakes no one)
            threads = list(_S.threads)
        now = time.perf_counter()
        for t in threads:
            if _S.reason is not None or t.hard and now >= t.hard[-1]:
                _deliver(t)


@contextmanager
def signals() -> Iterator[None]:
    """SIGINT and SIGTERM ask the running solve to stop and keep its incumbent (the CLI
    runs each command inside this); the wakeup pipe lets the watcher stop a native solver
    at once. The previous handlers are restored, and the stop request forgotten, on exit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _ensure_watcher()
    assert _S.wake_w is not None
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with _S.lock:
        _S.reason = None
        _S.deferred = False
    old_fd = signal.set_wakeup_fd(_S.wake_w, warn_on_full_buffer=False)
    for s in before:
        signal.signal(s, _on_signal)
    _S.replaced = {**before, "wakeup_fd": old_fd}
    try:
        yield
    finally:
        _S.replaced = {}
        for s, h in before.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
        signal.set_wakeup_fd(old_fd)
        with _S.lock:
            _S.reason = None
            _S.deferred = False


def _forget_in_child() -> None:
    """A forked child (a dp worker, or any fork of a process that imported this module)
    starts with none of the parent's stop machinery: the handlers ``signals()`` installed
    are put back, the wakeup pipe, which parent and child would share, is detached and
    closed (a signal to the child, say ``Pool.terminate()``'s SIGTERM, would otherwise
    write its number into the parent's pipe and stop the parent's own solve), no alarm
    stays armed, and the state starts afresh (its lock may have been held by a parent
    thread at the fork, which the child does not have)."""
    global _S
    old = _S
    try:
        if old.replaced:
            for s, h in old.replaced.items():
                if s != "wakeup_fd":
                    signal.signal(s, h if h is not None else signal.SIG_DFL)
            signal.set_wakeup_fd(-1)
        if signal.getsignal(signal.SIGALRM) is _on_signal:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
    except (ValueError, OSError):  # pragma: no cover - not the main interpreter
        pass
    for fd in (old.wake_r, old.wake_w):
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
    _S = _State()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def shield(fn: Callable) -> Callable:
    """``fn`` runs ``shielded`` (a decorator for functions that make a result)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with shielded():
            return fn(*args, **kwargs)

    return wrapper
