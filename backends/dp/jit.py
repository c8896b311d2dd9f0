"""Which compiled kernels a dp solve may call now, and filling numba's cache for later
processes (issue 25, item 5).

Input: a kernel group's name, asked by an engine when it starts a solve (``ready``) and
while it runs on numpy (``due``). Output: whether to call the group's numba kernels; as a
side effect, at most one detached warm-up process per group that compiles them into
numba's on-disk cache.

Compiling a group costs 10-15 s of one core (numba's typing and LLVM), once per install:
numba keeps the machine code on disk (``cache=True``), and a later process loads it in a
fraction of a second. A process that finds its group not compiled yet does not wait for it: the
engine runs its numpy paths (the same optima) while a niced process started here
(``python -m odt.warmup``'s ``background``) compiles the group; a solve still running when
that ends stops and starts again on the compiled kernels (``switchable``, the dp backend),
and every later solve and process uses them.

A process that has not loaded numba yet does not load it for a small program either:
loading numba and a group's cached machine code costs 0.6-1.0 s of every process (numba's
import and its target registries), while most small programs finish on numpy in a few
hundredths of a second. Inside a solve (``switchable``), a compiled group first gets a
grace of ``grace_seconds()`` of numpy search (0.3 s; ``ODT_KERNELS_GRACE`` sets it, 0 turns
it off); a solve still running when its process has spent that much on numpy for the group,
and whose time limit leaves at least ``LOAD_SECONDS``, stops, as for a finished warm-up, and starts again on the compiled kernels, which every
later solve of the process then uses (ski rental: at most the grace is lost, where a small
program saves the whole load).

Groups: ``streed`` (``streed/kernels.py``), ``contree`` (``contree/kernels*.py`` with integral
row weights, int32) and ``contree-float`` (the same kernels on fractional weights, float64).

Modes, from the environment variable ``ODT_KERNELS``: ``auto`` (the default, the above),
``compile`` (numba's own behaviour: compile in this process on first use; the tests and
benchmarks), ``numpy`` (never numba).

Invariants:
* a stamp per group (``odt-kernels-<group>.json`` in ``state_dirs()``'s first writable
  folder) records the outcome of a finished warm-up for a fingerprint of the group's
  sources, numba, Python, the machine, ``NUMBA_CACHE_DIR`` and the install's folder; any change of those makes
  the group cold again. ``ok``: compiled and cached; ``nocache``: numba could not write its
  cache (then every process compiles on first use, as numba does); ``failed``: compiling
  raised (then numpy, until the fingerprint changes);
* one warm-up per group at a time: it holds an exclusive ``flock`` on the group's lock file,
  taken by the process that starts it and inherited (so a crashed warm-up frees it);
* a warm-up never outlives ``WARMUP_SECONDS`` and runs at a lower priority (``NICE``); while
  this process lives a thread waits for it (no zombie); it writes only into the state
  folder and numba's cache;
* with no writable state folder nothing is started and the kernels compile in the process
  that needs them (numba's behaviour).
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from odt.compiler import limits

#: kernel group -> the engine folders (beside this file) whose sources make its fingerprint
GROUPS: dict[str, tuple[str, ...]] = {"streed": ("streed",), "contree": ("contree",), "contree-float": ("contree",)}
MODES = ("auto", "compile", "numpy")
#: a warm-up process ends by then whatever it is doing (compiling takes 10-40 s)
WARMUP_SECONDS = 600.0
#: seconds between two looks at the stamp of a group another process compiles
POLL_SECONDS = 0.25
_HERE = Path(__file__).resolve().parent
#: the nice value of a warm-up: it yields to the solve that started it
NICE = 10
#: the warm-up process: a lower priority before anything else, this process's module path,
#: then ``odt.warmup.background(group, fd)``
_BOOT = (f"import json, os, sys; hasattr(os, 'nice') and os.nice({NICE}); "
         "sys.path[:] = json.loads(os.environ.pop('ODT_KERNELS_PATH')); "
         "from odt.warmup import background; background(sys.argv[1], int(sys.argv[2]))")

#: numpy seconds a process spends on a compiled group before it loads numba for it (see above)
GRACE_SECONDS = 0.3
#: about what loading numba and a group's cached kernels costs a process (seconds)
LOAD_SECONDS = 1.0
#: rows x columns from which a solve loads the compiled kernels at once (no grace)
GRACE_CELLS = 1_000_000

_ready: set[str] = set()  # groups this process calls compiled (stamp ok, or compiled here)
_spent: dict[str, float] = {}  # numpy seconds spent in grace, by group, by the closed scopes
_started: set[str] = set()  # groups whose warm-up this process started or found running
_next_poll: dict[str, float] = {}
_fingerprints: dict[tuple, str] = {}
_local = threading.local()


def mode() -> str:
    """``ODT_KERNELS`` (``auto`` when unset; when unknown too, with a warning)."""
    value = os.environ.get("ODT_KERNELS", "").strip().lower() or "auto"
    if value in MODES:
        return value
    _ignored("ODT_KERNELS", value, f"one of {', '.join(MODES)}", "auto")
    return "auto"


@functools.lru_cache(maxsize=None)
def _ignored(name: str, value: str, expected: str, used: str) -> None:
    """Warn once per process and value that an environment setting was not understood."""
    import warnings

    warnings.warn(f"{name}={value!r} is not understood (expected {expected}); using {used}", RuntimeWarning,
                  stacklevel=3)


@functools.lru_cache(maxsize=None)
def numba_installed() -> bool:
    """Whether numba can be imported (looked up once per process: every solve asks)."""
    return importlib.util.find_spec("numba") is not None


def ready(group: str, cells: int = 0) -> bool:
    """Whether a solve starting now calls the compiled kernels of ``group`` (the engine
    still checks its kernels module's own switch, e.g. ``kernels.ACTIVE``). In ``auto``
    mode a cold group starts its warm-up here and answers False: numpy for now; a compiled
    group answers False during its grace when the engine's data has fewer than
    ``GRACE_CELLS`` ``cells`` (rows x columns: above that, numpy cannot end in the grace)."""
    m = mode()
    if m == "numpy" or not numba_installed():
        return False
    if m == "compile" or group in _ready:
        return True
    status = stamp_status(group)
    if status in ("ok", "nocache"):  # nocache: numba compiles on first use, as without odt
        if cells < GRACE_CELLS and _graced(group):  # numpy for a while: small programs end before numba loads
            return False
        _ready.add(group)
        return True
    if status == "failed":
        return False
    if group in _started or _start(group):
        return False
    _ready.add(group)  # nowhere to keep a stamp: compile here, as numba does
    return True


def no_grace(group: str) -> None:
    """For a search that outlasts any grace (the deep search, depth >= 4 under a time limit
    or to a proof): a compiled ``group`` loads at once, where the grace would only cost time
    and its forked workers, which never switch, would stay on numpy to the end. Kept to the
    grace's other rule: not when the time limit is nearer than the load."""
    if mode() == "auto" and numba_installed() and stamp_status(group) in ("ok", "nocache") and _time_to_load():
        _ready.add(group)


def waiting(group: str) -> bool:
    """Whether ``group`` is cold with its warm-up under way, or compiled and in its grace
    (``ready`` said False in ``auto`` mode): a solve that starts on numpy now may switch
    (``due``) later."""
    if mode() != "auto" or group in _ready:
        return False
    switch = _scope()
    return group in _started or (switch is not None and group in switch.graced)


def due(group: str) -> bool:
    """Inside ``switchable``: True once ``group`` (``waiting`` when this thread's solve
    started) is compiled, by the warm-up this process started or another process's, or
    once its grace is spent. Cheap: the engines call it beside their deadline checks."""
    switch = _scope()
    if switch is None:
        return False
    since = switch.graced.get(group)
    if since is not None and group not in _ready:
        if _spent.get(group, 0.0) + time.perf_counter() - since < grace_seconds() or not _time_to_load():
            return False
        _ready.add(group)
    elif group not in _ready:
        now = time.perf_counter()
        if now < _next_poll.get(group, 0.0):
            return False
        _next_poll[group] = now + POLL_SECONDS
        if stamp_status(group) != "ok":
            return False
        _ready.add(group)
    switch.fired = True
    return True


class Switch:
    """``fired``: a solve of this scope stopped early for its kernels being compiled (or
    its grace spent). ``graced``: the compiled groups this scope runs on numpy for now,
    with when it started to; ``pid``: the process that opened the scope (a forked worker
    inherits the thread's scope but cannot restart its parent's solve)."""

    def __init__(self) -> None:
        self.fired = False
        self.graced: dict[str, float] = {}
        self.pid = os.getpid()


@contextmanager
def switchable() -> Iterator[Switch]:
    """A scope whose numpy-path solves stop (as on a deadline) once their kernel group is
    compiled, or their grace is spent, so that the caller can solve again on the compiled
    kernels. On exit, the scope's numpy seconds count against each group's grace."""
    outer = getattr(_local, "switch", None)
    switch = _local.switch = Switch()
    try:
        yield switch
    finally:
        _local.switch = outer
        now = time.perf_counter()
        for group, since in switch.graced.items():
            _spent[group] = _spent.get(group, 0.0) + now - since


def grace_seconds() -> float:
    """``ODT_KERNELS_GRACE`` (seconds, at least 0), else ``GRACE_SECONDS``."""
    value = os.environ.get("ODT_KERNELS_GRACE")
    if value is not None:
        try:
            seconds = float(value)
        except ValueError:
            seconds = math.nan
        if seconds >= 0.0:  # (nan is not)
            return seconds
        _ignored("ODT_KERNELS_GRACE", value, "seconds, at least 0", f"{GRACE_SECONDS:g}")
    return GRACE_SECONDS


def _scope() -> Switch | None:
    """This thread's ``switchable`` scope, if this process opened it."""
    switch = getattr(_local, "switch", None)
    return switch if switch is not None and switch.pid == os.getpid() else None


def numba_loaded() -> bool:
    """Whether this process has imported numba (then a group's kernels load in a fraction of
    the first group's time: no grace)."""
    return "numba" in sys.modules


def _graced(group: str) -> bool:
    """Whether a compiled ``group`` starts on numpy now (see the module docstring): numba not
    loaded yet, and either a time limit too near to load it or, inside a solve's scope, less
    than the grace spent on the group so far."""
    if numba_loaded():
        return False
    switch = _scope()
    if not _time_to_load():  # numpy to the deadline, in a solve's scope or not (a load would overshoot it)
        if switch is not None:
            switch.graced.setdefault(group, time.perf_counter())
        return True
    if switch is None:
        return False
    if group in switch.graced:
        return True
    if _spent.get(group, 0.0) >= grace_seconds():
        return False
    switch.graced[group] = time.perf_counter()
    return True


def _time_to_load() -> bool:
    """Whether the solve's time limit leaves time to load the kernels (``LOAD_SECONDS``):
    with less, numpy goes on to the deadline, which a load would overshoot."""
    left = limits.remaining()
    return left is None or left > LOAD_SECONDS


# ---------------------------------------------------------------------- stamps
def state_dirs() -> list[Path]:
    """Where stamps and locks are looked for, in order: the ``__pycache__`` beside this
    file (numba's own first choice, so an install keeps its kernels and their stamp
    together), the user's cache folder; ``ODT_CACHE_DIR`` alone when it is set."""
    if os.environ.get("ODT_CACHE_DIR"):
        return [Path(os.environ["ODT_CACHE_DIR"])]
    dirs = [_HERE / "__pycache__"]
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    dirs.append(Path(base) / "odt")
    return dirs


def writable_dir() -> Path | None:
    """The first of ``state_dirs()`` this process can write into (created if missing)."""
    for d in state_dirs():
        try:
            d.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=d).close()
            return d
        except OSError:
            continue
    return None


def fingerprint(group: str) -> str:
    """A hash of what the group's compiled code depends on (see the module docstring)."""
    key = (group, os.environ.get("NUMBA_CACHE_DIR", ""))
    if key not in _fingerprints:
        h = hashlib.sha256()
        # the install's folder too: numba caches beside the sources (or under a folder named
        # after their path), so a stamp written by another install of the same sources (a second
        # clone or venv, whose stamp may sit in the shared user cache folder) says nothing here
        for part in (group, sys.version, platform.machine(), _cpu(), key[1], str(_HERE)):
            h.update(part.encode() + b"\0")
        h.update(_numba_version())
        for folder in GROUPS[group]:
            for path in sorted((_HERE / folder).glob("*.py")):
                h.update(path.name.encode() + b"\0" + path.read_bytes())
        _fingerprints[key] = h.hexdigest()
    return _fingerprints[key]


def forget_stale(group: str) -> int:
    """Delete the group's numba cache files older than its newest source; the number deleted.

    numba checks a cached kernel against its own file only: a kernel that calls one of
    another module (``kernels.d2_search`` calls ``kernels_eval``'s) keeps running the old
    callee after that module changes, warm-up or not. A warm-up therefore starts by
    dropping every cache entry that predates a source of the group's folders (an edit, a
    checkout, an upgrade); entries written after them (another group's warm-up of the same
    files, e.g. ``contree`` before ``contree-float``) stay."""
    sources = [p for folder in GROUPS[group] for p in (_HERE / folder).glob("*.py")]
    if not sources:
        return 0
    newest = max(p.stat().st_mtime for p in sources)
    places = [(p.parent / "__pycache__", p.stem) for p in sources]
    extra = os.environ.get("NUMBA_CACHE_DIR")
    removed = 0
    for place, stem in places:
        found = list(place.glob(f"{stem}.*.nb[ic]"))
        if extra:
            found += list(Path(extra).rglob(f"{stem}.*.nb[ic]"))
        for cached in found:
            try:
                if cached.stat().st_mtime < newest:
                    cached.unlink()
                    removed += 1
            except OSError:
                pass
    return removed


def _numba_version() -> bytes:
    """numba's version file (read, not imported: importing numba takes 0.5-1 s, and
    ``importlib.metadata`` 15-20 ms, in a process that may not need it)."""
    spec = importlib.util.find_spec("numba")
    if spec is None or spec.origin is None:
        return b"?"
    try:
        return Path(spec.origin).with_name("_version.py").read_bytes()
    except OSError:
        return b"?"


def _cpu() -> str:
    """The processor model (numba's machine code is specific to it)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def stamp_path(folder: Path, group: str) -> Path:
    return folder / f"odt-kernels-{group}.json"


def stamp_status(group: str) -> str | None:
    """The outcome recorded for the group's current fingerprint, or None (cold)."""
    want = fingerprint(group)
    for d in state_dirs():
        try:
            data = json.loads(stamp_path(d, group).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("fingerprint") == want:
            return str(data.get("status"))
    return None


def write_stamp(folder: Path, group: str, status: str, **info: object) -> None:
    """Record a finished warm-up (atomically: a reader never sees half a stamp)."""
    data = dict(info, group=group, status=status, fingerprint=fingerprint(group), when=time.time())
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".odt-kernels-{group}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh)
        os.chmod(tmp, 0o644)  # readable by every user of a shared install (mkstemp makes it 0600)
        os.replace(tmp, stamp_path(folder, group))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------------- the warm-up process
def lock(folder: Path, group: str, wait: bool = False) -> int | None:
    """An open descriptor holding the group's exclusive lock, or None when another process
    holds it (``wait``: block until it is free). Where ``flock`` is missing (Windows), a
    descriptor without a lock: two warm-ups may then compile at once, harmlessly."""
    fd = os.open(folder / f"odt-kernels-{group}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        os.close(fd)
        return None
    return fd


def _start(group: str) -> bool:
    """Start the group's warm-up (or find one running): True; False with no writable
    state folder (nothing started)."""
    folder = writable_dir()
    if folder is None:
        return False
    _started.add(group)
    try:
        fd = lock(folder, group)
    except OSError:
        return False
    if fd is None:  # another process compiles the group: poll its stamp (``due``)
        return True
    try:
        log = open(folder / f"odt-kernels-{group}.log", "wb")
    except OSError:
        os.close(fd)
        return False
    env = dict(os.environ, ODT_KERNELS="compile", ODT_KERNELS_PATH=json.dumps(sys.path))
    detach: dict = {}
    if os.name == "posix":
        # its own process group (Ctrl-C at the terminal does not reach it) but this session:
        # Linux schedules each session as one group, so a new session would take a share
        # equal to this one's whatever its nice value (measured: the first solve 3x slower)
        detach = {"pass_fds": (fd,), "process_group": 0} if sys.version_info >= (3, 11) else \
            {"pass_fds": (fd,), "preexec_fn": os.setpgrp}
    try:
        proc = subprocess.Popen([sys.executable, "-c", _BOOT, group, str(fd)], env=env, cwd=folder,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, **detach)
    except OSError:
        return False
    finally:
        log.close()
        os.close(fd)  # the warm-up holds the lock now (the same open file)
    threading.Thread(target=proc.wait, name=f"odt-kernels-{group}", daemon=True).start()
    return True
