"""The BDD enumeration's worker processes belong to their solve (issue 24, items 1 and 2).

Each test runs a real ``odtc solve`` in its own process, with the enumeration's stage 2
forced onto forked workers (``neighbours._PARALLEL_FROM = 0``), records the workers it
forks, ends the solve one way — done, time limit, SIGINT, SIGTERM, an exception, SIGKILL —
and checks that no worker outlives it. The signal tests also check that the signal stops
the search (long before its time limit) with the incumbent printed and written, and that
a worker's own end never looks to the parent like a signal of its own (``Pool.terminate``
signalling workers that shared the parent's wakeup pipe stopped the parent's solve).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from helpers import process_alive  # noqa: E402

import pytest

ROOT = Path(__file__).resolve().parents[3]
PIMA = ROOT / "examples" / "data" / "pima-indians-diabetes.csv"
MOUSE = ROOT / "examples" / "data" / "mouse.csv"

# odtc with every enumeration's stage 2 on two forked workers
DRIVER = textwrap.dedent("""
    import sys
    from odt.backends.dp.bdd import neighbours, parallel
    neighbours._PARALLEL_FROM = 0.0
    parallel.workers = lambda: 2
    from odt.cli import main
    sys.exit(main(sys.argv[1:]))
""")

# a Program.solve whose progress callback raises once the workers run
RAISER = textwrap.dedent("""
    import os, sys
    from odt.backends.dp.bdd import neighbours, parallel
    neighbours._PARALLEL_FROM = 0.0
    parallel.workers = lambda: 2
    import odt

    def children():
        return [int(c) for t in os.listdir(f"/proc/{os.getpid()}/task")
                for c in open(f"/proc/{os.getpid()}/task/{t}/children").read().split()]

    def progress(p):
        kids = children()
        if kids:
            print(" ".join(map(str, kids)), flush=True)
            raise RuntimeError("a progress callback failed")

    prog = odt.compile_file(sys.argv[1])
    try:
        prog.solve(time_limit=60, progress=progress)
    except RuntimeError as e:
        print("raised:", e, flush=True)
    print("left:", " ".join(map(str, children())), flush=True)
""")


def _program(tmp_path: Path, data: Path, body: str) -> Path:
    p = tmp_path / "p.odt"
    p.write_text(f'data "{data}" {{ target class }}\n{body}')
    return p


def _children(pid: int) -> set[int]:
    """The processes ``pid`` forked and that still run (zombies excluded)."""
    kids: set[int] = set()
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            kids |= {int(c) for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split()}
    except (FileNotFoundError, ProcessLookupError):
        pass
    return {k for k in kids if process_alive(k)}


_STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _no_process_outlives_its_test():
    """Each solve runs in a session of its own; whatever of it is left when a test ends
    (pass or fail) is killed, so a worker that outlived its parent fails one test instead of
    holding a pipe the run reads forever."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait(timeout=30)


def _start(args: list[str]) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    _STARTED.append(proc)
    return proc


def _finish(proc: subprocess.Popen, seconds: float = 180.0) -> tuple[str, str]:
    """The output of ``proc``, which has ended or is ending; read for at most ``seconds``:
    the pipes stay open while any process that inherited them lives, a worker included."""
    try:
        return proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the solve's pipes were still open {seconds:.0f} s on (exit {proc.poll()}): "
                             f"a process it forked outlived it") from None


def _wait_for_workers(proc: subprocess.Popen, seconds: float = 120.0) -> set[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end and proc.poll() is None:
        kids = _children(proc.pid)
        if kids:
            return kids
        time.sleep(0.02)
    raise AssertionError(f"no worker was forked (exit {proc.poll()}): {proc.stderr.read() if proc.stderr else ''}")


def _gone(pids: set[int], seconds: float = 5.0) -> set[int]:
    """The pids still alive after waiting up to ``seconds`` for them to end."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and any(process_alive(p) for p in pids):
        time.sleep(0.05)
    return {p for p in pids if process_alive(p)}


def _watch_workers(proc: subprocess.Popen) -> set[int]:
    """Every worker ``proc`` forks until it ends (within 5 minutes)."""
    seen: set[int] = set()
    end = time.monotonic() + 300
    while proc.poll() is None:
        assert time.monotonic() < end, "the solve did not end within 5 minutes"
        seen |= _children(proc.pid)
        time.sleep(0.01)
    return seen


def test_a_finished_solve_is_optimal_and_leaves_no_worker(tmp_path):
    prog = _program(tmp_path, MOUSE, "model bdd(depth = 3)\nminimize errors\n")
    proc = _start(["solve", str(prog), "--json", "--quiet"])
    seen = _watch_workers(proc)
    out, err = _finish(proc)
    assert proc.returncode == 0, err
    assert json.loads(out)["status"] == "optimal"  # the workers' ends did not stop it
    assert seen, "the solve forked no worker"
    assert not _gone(seen)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_workers_and_keeps_the_incumbent(tmp_path, sig, code):
    prog = _program(tmp_path, PIMA, "model bdd(depth = 4)\nminimize errors\n")
    model = tmp_path / "m.json"
    proc = _start(["solve", str(prog), "--time-limit", "120", "-o", str(model), "--json", "--quiet"])
    kids = _wait_for_workers(proc)
    started = time.monotonic()
    proc.send_signal(sig)
    out, err = _finish(proc, 60)
    took = time.monotonic() - started
    assert proc.returncode == code, err
    result = json.loads(out)
    assert result["status"] == "interrupted" and result["verified"], result
    assert json.loads(model.read_text())["kind"] == "bdd"  # the incumbent was written
    assert took < 60, f"the signal took {took:.1f} s to stop a 120 s solve"  # stopped by the signal, not the limit
    assert not _gone(kids)


@pytest.mark.slow  # runs to its limit: 25 s, long enough for stage 1 on a loaded machine (3-10 s), far
def test_a_time_limit_in_stage_two_leaves_no_worker(tmp_path):  # short of the enumeration (> 40 s)
    prog = _program(tmp_path, PIMA, "model bdd(depth = 4)\nminimize errors\n")
    proc = _start(["solve", str(prog), "--time-limit", "25", "--json", "--quiet"])
    seen = _watch_workers(proc)
    out, err = _finish(proc)
    assert proc.returncode == 0, err
    assert json.loads(out)["status"] in ("optimal", "feasible")
    assert seen and not _gone(seen)


def test_an_exception_in_the_parent_ends_the_workers(tmp_path):
    prog = _program(tmp_path, PIMA, "model bdd(depth = 4)\nminimize errors\n")
    proc = subprocess.Popen([sys.executable, "-c", RAISER, str(prog)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    _STARTED.append(proc)
    out, err = _finish(proc)
    lines = out.splitlines()
    assert proc.returncode == 0, err
    assert "raised: a progress callback failed" in lines, out
    kids = {int(p) for p in lines[0].split()}
    assert lines[-1].split() == ["left:"]  # no child of the still-running parent
    assert not _gone(kids)


def test_workers_die_with_a_killed_parent(tmp_path):
    prog = _program(tmp_path, PIMA, "model bdd(depth = 4)\nminimize errors\n")
    proc = _start(["solve", str(prog), "--time-limit", "120", "--quiet"])
    kids = _wait_for_workers(proc)
    proc.kill()
    _finish(proc, 60)
    assert not _gone(kids)
