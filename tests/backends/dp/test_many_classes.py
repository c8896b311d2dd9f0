"""A target with a class for (almost) every row (issue 24, item 4): 10,000 rows, 10,000
classes and ``--time-limit 5`` was a segfault after 15 s. Every dp engine now works
without a rows x classes table (ConTree's depth-one, greedy and depth-two kernels,
STreeD's class weights, the BDD counts) or refuses clearly (the Pareto-front search),
and the time limit holds for the whole process."""
from __future__ import annotations

import json
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import odt
from odt.compiler.errors import UnsupportedConstruct
from odt.strategies.warm_start import single_leaf

ODTC = Path(sys.executable).parent / "odtc"
N = 5000  # a rows x classes table of float64 is 200 MB


def _columns(n: int, binary: bool, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    cols = {f"f{j}": rng.integers(0, 2, n) for j in range(8)} if binary else \
        {"a": rng.random(n).round(6), "b": rng.random(n).round(6)}
    cols["class"] = np.array([f"c{i}" for i in range(n)], dtype=object)
    return cols


@pytest.mark.parametrize("binary, program, errors", [
    (False, "model tree(depth <= 1)\n", N - 2),  # ConTree, depth one
    (False, "model tree(depth <= 2)\nsolve dp\n", N - 4),  # ConTree, the depth-two search
    (True, "model tree(depth <= 2)\nsubject to { leaves <= 3 }\n", N - 3),  # STreeD
    (True, "model bdd(depth = 1)\n", N - 2),  # the BDD search
])
def test_a_class_per_row_needs_no_rows_by_classes_table(binary, program, errors):
    prog = odt.compile(program, data=_columns(N, binary))
    tracemalloc.start()
    try:
        res = prog.solve(backend="dp", time_limit=60)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.verified and res.train_errors == errors
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB"


def test_the_pareto_front_search_refuses_a_class_per_row_before_building_its_tables():
    prog = odt.compile("group g = f0 == 1\nmodel tree(depth <= 2)\nsubject to { errors(g) <= 100 }\n",
                       data=_columns(3000, True))
    started = time.perf_counter()
    with pytest.raises(UnsupportedConstruct, match=r"Pareto-front search .* 3,000 x 3,000"):
        prog.solve(backend="dp")
    assert time.perf_counter() - started < 5


def test_the_constant_classifier_of_last_resort_is_chosen_among_the_heaviest_classes():
    """It runs after the time limit: one evaluation per class was 20,000 evaluations
    (about 20 s with a group constraint to evaluate)."""
    n = 20_000
    cols = _columns(n, True)
    cols["class"][: n // 2] = "common"
    prog = odt.compile("group g = f0 == 1\nmodel tree(depth <= 2)\nsubject to { errors(g) <= 20000 }\n", data=cols)
    started = time.perf_counter()
    leaf = single_leaf(prog.checked)
    assert time.perf_counter() - started < 2.0
    assert leaf is not None and leaf[0].classes[leaf[0].root.label] == "common"
    assert leaf[1] == n // 2


def _csv(path: Path, n: int, binary: bool) -> Path:
    cols = _columns(n, binary)
    names = list(cols)
    with open(path, "w") as fh:
        fh.write(",".join(names) + "\n")
        for i in range(n):
            fh.write(",".join(str(cols[c][i]) for c in names) + "\n")
    return path


@pytest.mark.slow  # whole odtc processes that run to their limit
@pytest.mark.parametrize("binary, body", [
    (False, "model tree(depth <= 2)\n"),  # the report's program
    (True, "model tree(depth <= 2)\nsubject to { leaves <= 3 }\n"),
    (True, "model tree(depth <= 3)\nminimize errors + 0.01 * nodes\n"),
])
def test_ten_thousand_classes_keep_a_five_second_limit_as_a_whole_process(tmp_path, binary, body):
    _csv(tmp_path / "many.csv", 10_000, binary)
    (tmp_path / "p.odt").write_text('data "many.csv" { target class }\n' + body)
    started = time.perf_counter()
    run = subprocess.run([str(ODTC), "solve", str(tmp_path / "p.odt"), "--time-limit", "5", "--json", "--quiet"],
                         capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - started
    print(f"\n{body.splitlines()[-1]}: {wall:.2f} s wall for --time-limit 5")
    assert run.returncode == 0, run.stderr
    # the README's 5% + 1 s, with room for a machine shared with other test runs (main: a
    # segfault after 15 s on ConTree, 12 s on STreeD, 15 s on the node penalty)
    assert wall <= 5 * 1.5 + 3, f"{wall:.1f} s"
    out = json.loads(run.stdout)
    assert out["status"] in ("optimal", "feasible") and out["verified"] is True
    assert out["train_errors"] <= 9999  # a classifier (how good depends on the machine's load)
