"""The dp backend (ConTree) inside odt: its fragment, routing, and agreement with the
other backends and brute force."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import odt
from odt.compiler.errors import UnsupportedConstruct

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import brute_force_optimum, cases  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@settings(derandomize=True, deadline=None, max_examples=150, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_dp_equals_brute_force_and_maxsat(case):
    for depth in (1, 2):
        text = case.header() + f"model tree(depth <= {depth})\nminimize errors\n"
        prog = odt.compile(text, data=case.data())
        best = brute_force_optimum(case.X, case.y, depth, classes=case.classes, w=case.w)
        dp = prog.solve(backend="dp")
        assert dp.status == "optimal" and dp.verified
        assert dp.objective == float(best.cost)
        assert prog.solve(backend="maxsat").objective == dp.objective


def test_auto_routes_the_fragment_to_dp_and_the_rest_elsewhere():
    data = {"a": [0, 1, 0, 1, 1], "b": [0, 0, 1, 1, 0], "class": [0, 1, 1, 0, 1]}
    assert odt.compile("model tree(depth <= 2)\nminimize errors", data=data).backend_name() == "dp"
    assert odt.compile("model tree(depth <= 2)\nmaximize accuracy", data=data).backend_name() == "dp"
    assert odt.compile("model tree(depth <= 2)\nminimize errors\nsubject to { every leaf: samples >= 2 }",
                       data=data).backend_name() == "dp"
    assert odt.compile("model tree(depth <= 2)\nminimize errors + 0.1 * nodes", data=data).backend_name() == "dp"
    assert odt.compile("model tree(depth <= 2, leaves <= 3)\nminimize errors", data=data).backend_name() == "dp"
    grouped = "group A = a == 1\nmodel tree(depth <= 2)\nsubject to { rate(1, A) >= 0.5 }"
    assert odt.compile(grouped, data=data).backend_name() == "dp"  # Pareto fronts (issue 14)
    sparse = "model tree(depth <= 2)\nminimize errors + features_used"
    assert odt.compile(sparse, data=data).backend_name() != "dp"


def test_dp_refuses_programs_outside_its_fragment():
    data = {"a": [0, 1, 0, 1], "class": [0, 1, 1, 0]}
    prog = odt.compile("model tree(depth <= 2)\nminimize errors + features_used", data=data)
    with pytest.raises(UnsupportedConstruct, match="backend 'dp' does not take features_used in the objective"):
        prog.solve(backend="dp")


def test_min_leaf_agrees_with_the_path_encoding():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, size=(30, 4))
    y = (X[:, 0] ^ X[:, 1]) | (rng.random(30) < 0.2)
    data = {f"f{j}": X[:, j] for j in range(4)} | {"class": y.astype(int)}
    text = "model tree(depth <= 2)\nminimize errors\nsubject to { every leaf: samples >= 6 }"
    prog = odt.compile(text, data=data)
    dp, sat = prog.solve(backend="dp"), prog.solve(backend="maxsat")
    assert dp.verified and sat.verified and dp.objective == sat.objective
    assert dp.constraints[-1].holds


def haberman(rows: int) -> dict:
    lines = (ROOT / "examples" / "data" / "haberman.csv").read_text().split()
    header = lines[0].split(",")
    body = [list(map(int, line.split(","))) for line in lines[1 : rows + 1]]
    return {h: [r[j] for r in body] for j, h in enumerate(header)}


def test_continuous_columns_get_raw_thresholds_and_quantiles_are_respected():
    data = haberman(90)
    raw = "model tree(depth <= 2)\nminimize errors\n"
    binned = ("data { target class\n numeric age, operation_year, positive_axillary_nodes by quantiles(4) }\n"
              "model tree(depth <= 2)\nminimize errors\n")
    r_raw = odt.compile(raw, data=data).solve(backend="dp")
    r_bin_dp = odt.compile(binned, data=data).solve(backend="dp")
    r_bin_sat = odt.compile(binned, data=data).solve(backend="maxsat")
    assert r_raw.verified and r_bin_dp.verified
    assert r_bin_dp.objective == r_bin_sat.objective  # the program's binarisation, not raw values
    assert r_raw.objective <= r_bin_dp.objective
    assert odt.compile(raw, data=data).solve(backend="maxsat").objective == r_raw.objective  # every midpoint == raw


def test_time_limit_returns_a_verified_tree_and_a_bound():
    path = ROOT / "examples" / "data" / "haberman.csv"
    prog = odt.compile(f'data "{path}" {{ target class }}\nmodel tree(depth <= 4)\nminimize errors\n')
    res = prog.solve(backend="dp", time_limit=0.05)
    assert res.verified and res.classifier is not None
    assert res.bound is not None and res.bound <= res.objective + 1e-9
