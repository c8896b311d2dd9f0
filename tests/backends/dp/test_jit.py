"""The dp kernels' compile policy (backends/dp/jit.py, odt/warmup.py; issue 25 item 5): a
cold group solves on numpy while one warm-up process compiles it into numba's cache, a
solve still running then restarts on the compiled kernels, and later processes compile
nothing. Runs the default mode (``auto``) with its own state and cache folders; the rest
of the suite compiles in-process (``tests/conftest.py``)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import odt
from odt.backends.dp import jit
from odt.compiler import limits

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
HEART = EXAMPLES / "data" / "heart-cleveland.csv"

pytestmark = pytest.mark.skipif(not jit.numba_installed(), reason="numba not installed")


@pytest.fixture
def auto(tmp_path, monkeypatch):
    """``auto`` mode with a fresh state folder and this process's jit memory cleared."""
    monkeypatch.setenv("ODT_KERNELS", "auto")
    monkeypatch.setenv("ODT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(jit, "_ready", set())
    monkeypatch.setattr(jit, "_started", set())
    monkeypatch.setattr(jit, "_next_poll", {})
    monkeypatch.setattr(jit, "_spent", {})
    return tmp_path


@pytest.fixture
def graced(auto, monkeypatch):
    """``auto`` with every group compiled and numba not loaded yet, as in a user's later
    process (the test process has numba loaded: that would skip the grace)."""
    for group in jit.GROUPS:
        jit.write_stamp(auto, group, "ok")
    monkeypatch.setattr(jit, "numba_loaded", lambda: False)
    monkeypatch.delenv("ODT_KERNELS_GRACE", raising=False)
    return auto


def _solve(program: str, mode: str, monkeypatch, **kw):
    monkeypatch.setenv("ODT_KERNELS", mode)
    return odt.compile_file(program).solve(backend="dp", **kw)


@pytest.mark.parametrize("example", ["quickstart.odt", "haberman_quantiles.odt"])
def test_the_numpy_paths_find_the_compiled_optimum(example, monkeypatch):
    compiled = _solve(EXAMPLES / example, "compile", monkeypatch)
    plain = _solve(EXAMPLES / example, "numpy", monkeypatch)
    assert compiled.status == plain.status == "optimal"
    assert plain.objective == compiled.objective and plain.verified
    assert plain.classifier.to_text() == compiled.classifier.to_text()


def test_a_stamp_holds_for_its_fingerprint_only(auto, monkeypatch):
    assert jit.stamp_status("streed") is None
    jit.write_stamp(auto, "streed", "ok", seconds=1.0)
    assert jit.stamp_status("streed") == "ok"
    assert jit.stamp_status("contree") is None  # another group, another stamp
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(auto / "elsewhere"))  # numba's cache moved: cold again
    assert jit.stamp_status("streed") is None


def test_one_warm_up_per_group_holds_the_lock(tmp_path):
    fd = jit.lock(tmp_path, "streed")
    assert fd is not None
    assert jit.lock(tmp_path, "streed") is None  # held
    other = jit.lock(tmp_path, "contree")
    assert other is not None
    os.close(fd)
    os.close(other)
    again = jit.lock(tmp_path, "streed")
    assert again is not None
    os.close(again)


def test_ready_follows_the_mode_and_the_stamp(auto, monkeypatch):
    jit.write_stamp(auto, "streed", "ok")
    jit.write_stamp(auto, "contree-float", "failed")
    assert jit.ready("streed") and not jit.waiting("streed")
    assert not jit.ready("contree-float") and not jit.waiting("contree-float")  # failed: numpy, nothing started
    monkeypatch.setenv("ODT_KERNELS", "numpy")
    assert not jit.ready("streed")
    monkeypatch.setenv("ODT_KERNELS", "compile")
    assert jit.ready("contree-float")
    assert not list(auto.glob("*.log"))  # no warm-up was started


def test_a_cold_group_waits_for_the_warm_up_another_process_runs(auto):
    fd = jit.lock(auto, "contree")  # as a warm-up in another process holds it
    try:
        assert not jit.ready("contree") and jit.waiting("contree")
        assert not list(auto.glob("*.log"))  # found running: none started here
        with jit.switchable():
            assert not jit.due("contree")
            jit.write_stamp(auto, "contree", "ok")
            jit._next_poll.clear()
            assert jit.due("contree")
        assert jit.ready("contree") and not jit.waiting("contree")
        assert not jit.due("contree")  # outside a switchable scope: never
    finally:
        os.close(fd)


@pytest.mark.parametrize("program", [EXAMPLES / "contree_diabetes.odt", "heart"])
def test_a_solve_on_numpy_restarts_on_the_compiled_kernels_once_they_are_ready(program, auto, monkeypatch, tmp_path):
    """The warm-up of another process ends during the solve (its stamp written at the first
    progress report): the solve stops, restarts on the compiled kernels, and keeps their
    optimum; progress stays monotone across the restart, and the restarted search finding
    again what the first had found repeats no report."""
    if program == "heart":
        program = tmp_path / "heart.odt"
        program.write_text(f'data "{HEART}" {{ target class }}\nmodel tree(depth <= 3)\nminimize errors\n')
    group = "contree" if "diabetes" in str(program) else "streed"
    monkeypatch.setenv("ODT_KERNELS", "compile")
    expected = odt.compile_file(program).solve(backend="dp")
    monkeypatch.setenv("ODT_KERNELS", "auto")
    monkeypatch.setattr(jit, "POLL_SECONDS", 0.0)
    fd = jit.lock(auto, group)
    seen = []

    def progress(p):
        if not seen:
            jit.write_stamp(auto, group, "ok")
        seen.append((p.elapsed, p.incumbent, p.bound))

    try:
        res = odt.compile_file(program).solve(backend="dp", progress=progress)
    finally:
        os.close(fd)
    assert "restarted on the compiled kernels" in res.log
    assert res.status == "optimal" and res.objective == expected.objective and res.verified
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)
    incumbents = [s[1] for s in seen if s[1] is not None]
    bounds = [s[2] for s in seen if s[2] is not None]
    assert incumbents == sorted(incumbents, reverse=True) and bounds == sorted(bounds)
    assert all(a[1:] != b[1:] for a, b in zip(seen, seen[1:])), seen


def test_a_compiled_group_runs_on_numpy_for_its_grace_inside_a_solve(graced, monkeypatch):
    assert jit.ready("streed")  # outside a solve's scope: the kernels at once
    jit._ready.clear()
    with jit.switchable() as switch:
        assert not jit.ready("streed") and jit.waiting("streed")
        assert not jit.due("streed")  # within the grace
        assert jit.ready("contree", cells=jit.GRACE_CELLS)  # too large for numpy in the grace: at once
        monkeypatch.setenv("ODT_KERNELS_GRACE", "0")
        assert jit.due("streed") and switch.fired  # the grace is spent: stop and restart on the kernels
    assert jit.ready("streed") and not jit.waiting("streed")


def test_the_grace_is_spent_once_per_process_and_group(graced, monkeypatch):
    monkeypatch.setenv("ODT_KERNELS_GRACE", "0.05")
    with jit.switchable():
        assert not jit.ready("contree")
        time.sleep(0.06)
    assert jit._spent["contree"] >= 0.05
    with jit.switchable():
        assert jit.ready("contree")  # the next solve: the kernels
        assert not jit.ready("streed")  # another group has its own grace


def test_a_forked_worker_does_not_take_its_parents_grace(graced):
    with jit.switchable() as switch:
        switch.pid = -1  # as a forked child sees its parent's scope
        assert jit.ready("streed") and not jit.due("streed")


def test_a_time_limit_too_near_to_load_the_kernels_keeps_numpy_to_the_deadline(graced):
    from odt.compiler import limits

    with limits.time_limit(jit.LOAD_SECONDS / 2):
        assert not jit.ready("streed")  # outside a solve's scope too: the load would overshoot the limit
        with jit.switchable() as switch:
            assert not jit.ready("contree") and jit.waiting("contree")
            switch.graced["contree"] -= 60  # the grace long spent
            assert not jit.due("contree") and not switch.fired
    with limits.time_limit(jit.LOAD_SECONDS * 5), jit.switchable():
        assert jit.ready("contree")  # its grace was spent above; time enough to load


def test_numba_loaded_ends_every_grace(auto, monkeypatch):
    for group in jit.GROUPS:
        jit.write_stamp(auto, group, "ok")
    monkeypatch.setattr(jit, "numba_loaded", lambda: True)
    with jit.switchable():
        assert jit.ready("streed")


@pytest.mark.parametrize("grace, restarted", [("60", False), ("0.001", True)])
def test_a_solve_in_its_grace_ends_on_numpy_or_restarts_on_the_kernels(grace, restarted, graced, monkeypatch,
                                                                         tmp_path):
    """A small program within the grace never loads the kernels; past it, the solve stops
    and restarts on them; the optimum is the compiled one either way."""
    program = tmp_path / "heart.odt"
    program.write_text(f'data "{HEART}" {{ target class }}\nmodel tree(depth <= 3)\nminimize errors\n')
    monkeypatch.setenv("ODT_KERNELS", "compile")
    expected = odt.compile_file(program).solve(backend="dp")
    monkeypatch.setenv("ODT_KERNELS", "auto")
    monkeypatch.setenv("ODT_KERNELS_GRACE", grace)
    jit._ready.clear()
    res = odt.compile_file(program).solve(backend="dp")
    assert ("restarted on the compiled kernels" in res.log) is restarted
    assert ("streed" in jit._ready) is restarted
    assert res.status == "optimal" and res.objective == expected.objective and res.verified


#: a first (cold) process must not even import numba
COLD = """
import json, sys
from odt.cli import main
code = main(["solve", sys.argv[1], "--json", "--quiet"])
print(json.dumps({"code": code, "numba": "numba" in sys.modules}))
"""
#: a later process: the numba compilations its solve runs (none: every kernel from the cache)
WARM = """
import json, sys
from numba.core import event
compiles = []
class Count(event.Listener):
    def on_start(self, e): pass
    def on_end(self, e): compiles.append(e.data["dispatcher"].py_func.__name__)
event.register("numba:compile", Count())
from odt.cli import main
codes = [main(["solve", program, "--json", "--quiet"]) for program in sys.argv[1:]]
print(json.dumps({"code": max(codes), "compiles": compiles}))
"""
DATA = EXAMPLES / "data"
#: later programs of each group: other data, classes and constructs than its first solve's
LATER = {
    "streed": [f'data "{DATA}/heart-cleveland.csv" {{ target class }}\nmodel tree(depth <= 4)\nminimize errors',
               f'data "{DATA}/heart-cleveland.csv" {{ target class }}\nmodel tree(depth <= 3)\nminimize errors\n'
               "subject to { every leaf: samples >= 5 }",
               f'data "{DATA}/mouse.csv" {{ target class }}\nmodel tree(depth <= 4, nodes <= 5)\nminimize errors',
               f'data "{DATA}/mouse.csv" {{ target class }}\nmodel tree(depth <= 3)\nminimize errors + 1/2 * nodes'],
    "contree": [f'data "{DATA}/iris.csv" {{ target class\nnumeric Sepal_length, Sepal_width, Petal_length, '
                "Petal_width by thresholds(all) }\nmodel tree(depth <= 3)\nminimize errors",
                f'data "{DATA}/haberman.csv" {{ target class\nnumeric age, operation_year, positive_axillary_nodes '
                "by thresholds(all) }\nmodel tree(depth <= 2)\nminimize errors\nsubject to { every leaf: samples >= 5 }",
                # depth three with a minimum leaf size: the two-phase depth-two search and the
                # relaxed bound at the root (issue 25 item 2), on sub-problems over the
                # single-call budget of the warm-up's data
                f'data "{DATA}/pima-indians-diabetes.csv" {{ target class\nnumeric Pregnancies, Glucose, '
                "BloodPressure, SkinThickness, Insulin, BMI, DiabetesPedigreeFunction, Age by thresholds(all) }\n"
                "model tree(depth <= 3)\nminimize errors\nsubject to { every leaf: samples >= 20 }"],
}


def _run(script: str, program: Path, env: dict, *more: Path) -> dict:
    """The script's summary (its last line; the solves' --json output comes before)."""
    out = subprocess.run([sys.executable, "-c", script, str(program), *map(str, more)], env=env, capture_output=True,
                         text=True, timeout=600, cwd=str(program.parent))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_later_process_solves_a_small_program_without_loading_numba(tmp_path):
    """Every group compiled (stamps written for this install): the quick start's process
    ends on numpy within the grace (long here, for a loaded machine) and never imports
    numba, whose loading would be most of its time."""
    env = dict(os.environ, ODT_KERNELS="auto", ODT_CACHE_DIR=str(tmp_path), ODT_KERNELS_GRACE="30")
    script = (f"from odt.backends.dp import jit\nfrom pathlib import Path\n"
              f"for g in jit.GROUPS: jit.write_stamp(Path({str(tmp_path)!r}), g, 'ok')\n") + COLD
    got = _run(script, EXAMPLES / "quickstart.odt", env)
    assert got["code"] == 0 and not got["numba"]


def _processes_in(folder: Path) -> list[int]:
    """Live processes whose working directory is ``folder`` (the warm-up's)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == folder:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc")
@pytest.mark.parametrize("example, group", [("quickstart.odt", "streed"), ("contree_diabetes.odt", "contree")])
def test_a_cold_solve_compiles_in_the_background_and_later_processes_compile_nothing(example, group, tmp_path):
    """The first solve runs on numpy and starts the group's one warm-up, which ends and
    leaves no process; a later process then solves the same and other programs of the
    group (other data, classes, constructs) without compiling anything."""
    state, cache = tmp_path / "state", tmp_path / "numba"
    env = dict(os.environ, ODT_KERNELS="auto", ODT_CACHE_DIR=str(state), NUMBA_CACHE_DIR=str(cache))
    program = EXAMPLES / example
    first = _run(COLD, program, env)
    assert first["code"] == 0 and not first["numba"]  # solved on numpy, numba not even imported
    warmups = set(_processes_in(state))
    assert len(warmups) <= 1  # the warm-up (unless it already ended)
    second = _run(COLD, program, env)  # finds the warm-up running (or done): starts none
    assert second["code"] == 0 and set(_processes_in(state)) <= warmups
    deadline = time.monotonic() + jit.WARMUP_SECONDS
    while (fd := jit.lock(state, group)) is None:  # the warm-up holds it until it ends
        assert time.monotonic() < deadline
        time.sleep(0.5)
    os.close(fd)
    stamp = json.loads((state / f"odt-kernels-{group}.json").read_text())
    assert stamp["status"] == "ok", (state / f"odt-kernels-{group}.log").read_text()
    time.sleep(0.5)
    assert not _processes_in(state)  # the warm-up ended and no process of it is left
    later = []
    for i, text in enumerate(LATER[group]):
        later.append(tmp_path / f"later{i}.odt")
        later[-1].write_text(text + "\n")
    warm = _run(WARM, program, env | {"ODT_KERNELS_GRACE": "0"}, *later)  # every program on the kernels
    assert warm["code"] == 0 and warm["compiles"] == []


def test_odtc_warmup_skips_compiled_groups_and_refuses_unknown_ones(auto, capsys):
    from odt.cli import main

    jit.write_stamp(auto, "streed", "ok")
    assert main(["warmup", "streed"]) == 0
    assert "streed: compiled already" in capsys.readouterr().out
    assert main(["warmup", "streed", "nope"]) == 1
    assert "unknown kernel group 'nope'" in capsys.readouterr().err


def test_a_warm_up_drops_cache_entries_older_than_the_groups_sources():
    """numba checks a kernel's cache against its own file only, so an entry that predates
    any source of the group (a callee in another module changed) is deleted before the
    group compiles; an entry newer than every source stays."""
    from odt.backends.dp import jit as jit_module

    cache = Path(jit_module.__file__).parent / "contree" / "__pycache__"
    cache.mkdir(exist_ok=True)
    stale, fresh = cache / "kernels.test_only_stale-1.py0.nbi", cache / "kernels.test_only_fresh-1.py0.nbi"
    try:
        stale.write_bytes(b"")
        fresh.write_bytes(b"")
        os.utime(stale, (0, 0))
        future = time.time() + 3600
        os.utime(fresh, (future, future))
        assert jit_module.forget_stale("contree") >= 1
        assert not stale.exists() and fresh.exists()
    finally:
        stale.unlink(missing_ok=True)
        fresh.unlink(missing_ok=True)


@pytest.mark.parametrize("name, value, call, used", [
    ("ODT_KERNELS", "compiled", jit.mode, "auto"),
    ("ODT_KERNELS_GRACE", "0,5", jit.grace_seconds, jit.GRACE_SECONDS),
    ("ODT_KERNELS_GRACE", "-1", jit.grace_seconds, jit.GRACE_SECONDS),
])
def test_a_setting_not_understood_is_said_once_and_the_default_used(monkeypatch, name, value, call, used):
    jit._ignored.cache_clear()
    monkeypatch.setenv(name, value)
    with pytest.warns(RuntimeWarning, match=f"{name}='{value}' is not understood"):
        assert call() == used
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second read says nothing more
        assert call() == used


@pytest.mark.parametrize("value, want", [("", "auto"), (" Numpy ", "numpy"), ("compile", "compile")])
def test_kernel_modes_read_from_the_environment(monkeypatch, value, want):
    monkeypatch.setenv("ODT_KERNELS", value)
    assert jit.mode() == want


def test_a_search_that_outlasts_the_grace_takes_the_compiled_kernels_at_once(graced):
    """``no_grace`` (the deep search on forked workers, which never switch): inside a
    solve's scope, in its grace, the compiled group is ready at once."""
    with jit.switchable():
        jit.no_grace("contree")
        assert jit.ready("contree", 10)
        assert not jit.ready("streed", 10)  # the other group keeps its grace


def test_no_grace_keeps_numpy_when_the_time_limit_is_too_near_to_load(graced):
    with limits.time_limit(jit.LOAD_SECONDS / 2), jit.switchable():
        jit.no_grace("contree")
        assert not jit.ready("contree", 10)


def test_a_deep_search_on_two_workers_runs_the_compiled_kernels_in_a_graced_solve(graced, monkeypatch):
    """Room depth 5 as a whole process ran its forked workers on numpy for the whole limit
    (10 errors in 60 s against 0, proved in 16 s, without the grace): the deep search now
    asks for the kernels before it forks."""
    from odt.backends.dp.contree import deep

    asked: list[str] = []
    monkeypatch.setattr(jit, "no_grace", lambda group: asked.append(group))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    with jit.switchable():
        deep.deep_tree(X, y, 4, time_limit=5, processes=2)
        assert "contree" in asked
        asked.clear()
        deep.deep_tree(X, y, 4, time_limit=5, processes=1)  # one process switches by itself (``due``)
        assert not asked
