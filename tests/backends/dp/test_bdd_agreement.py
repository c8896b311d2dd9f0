"""dp's ordered-BDD enumeration against the solver encodings (Hu's BDD2 on maxsat and
cp) where they prove their optimum, and its contract as a backend: auto routes BDD
programs to it, it refuses what it does not take (auto then falls back), it is anytime
(incumbent + bound at a time limit), reports progress, honours feature restrictions,
and solves Hu's P_bdd (``bdd(depth in a..b)``, ``minimize depth``, ``errors == 0``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import odt
from odt.compiler.errors import UnsupportedConstruct
from odt.routing import route

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _data(seed: int, n: int = 40, p: int = 6, classes: int = 2) -> dict:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p))
    y = np.where(rng.random(n) < 0.75, (X[:, 1] & X[:, 2]) | X[:, 4], rng.integers(0, classes, n)) % classes
    out = {f"f{j}": X[:, j] for j in range(p)}
    out["class"] = y
    return out


@pytest.mark.parametrize("seed, H, classes", [(0, 2, 2), (1, 3, 2), (2, 2, 3), (3, 3, 2)])
def test_dp_equals_maxsat_and_cp(seed, H, classes):
    prog = odt.compile(f"model bdd(depth = {H})\nminimize errors", data=_data(seed, classes=classes))
    dp = prog.solve(backend="dp")
    assert dp.status == "optimal" and dp.verified
    for backend in ("maxsat", "cp"):
        other = prog.solve(backend=backend, time_limit=60)
        if other.status == "optimal":
            assert other.objective == pytest.approx(dp.objective), backend


@pytest.mark.slow
def test_dp_equals_maxsat_on_monks():
    prog = odt.compile((EXAMPLES / "bdd_monks.odt").read_text().replace("solve maxsat", "solve dp"),
                       base_dir=EXAMPLES)
    dp = prog.solve()
    assert dp.backend == "dp" and dp.status == "optimal" and dp.verified
    other = prog.solve(backend="maxsat", time_limit=60)
    if other.status == "optimal":
        assert other.objective == pytest.approx(dp.objective)


def test_auto_routes_bdd_programs_to_dp_and_the_rest_to_the_solvers():
    data = _data(4)
    take = odt.compile("model bdd(depth = 2)\nminimize errors + 0.5 * nodes\nsubject to { errors <= 20 }", data=data)
    assert route(take.checked) == "dp"
    data["g"] = np.arange(40) % 2
    rest = odt.compile("group G = g == 1\nmodel bdd(depth = 2)\nminimize errors\nsubject to { errors(G) <= 5 }",
                       data=data)
    assert route(rest.checked) in ("maxsat", "cp")
    with pytest.raises(UnsupportedConstruct):
        rest.solve(backend="dp")


def test_features_restriction_is_honoured():
    data = _data(5)
    prog = odt.compile("model bdd(depth = 2) { features f0, f3, f5 }\nminimize errors", data=data)
    res = prog.solve(backend="dp")
    assert res.verified and {f.column for f in res.classifier.features} <= {"f0", "f3", "f5"}
    other = prog.solve(backend="maxsat", time_limit=60)
    if other.status == "optimal":
        assert other.objective == pytest.approx(res.objective)


def test_time_limit_returns_the_incumbent_and_a_bound():
    prog = odt.compile("model bdd(depth = 3)\nminimize errors", data=_data(6, n=60, p=8))
    seen = []
    res = prog.solve(backend="dp", time_limit=1e-9, progress=seen.append)
    assert res.status in ("feasible", "optimal") and res.verified
    assert res.bound is not None and res.bound <= res.objective + 1e-9
    full = prog.solve(backend="dp", progress=seen.append)
    assert full.status == "optimal" and full.objective <= res.objective
    assert seen and all(p.bound is None or p.incumbent is None or p.bound <= p.incumbent + 1e-9 for p in seen)


def test_p_bdd_smallest_depth_with_no_error():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, size=(50, 6))
    data = {f"f{j}": X[:, j] for j in range(6)}
    data["class"] = X[:, 0] ^ X[:, 2] ^ X[:, 5]  # needs three levels
    prog = odt.compile("model bdd(depth in 1..4)\nminimize depth\nsubject to { errors == 0 }", data=data)
    res = prog.solve()
    assert res.backend == "dp" and res.status == "optimal" and res.verified
    assert res.objective == 3 and res.train_errors == 0


def test_p_star_bdd_accuracy_under_a_size_bound():
    prog = odt.compile("model bdd(depth = 3)\nmaximize accuracy\nsubject to { nodes <= 2 }", data=_data(8))
    res = prog.solve()
    assert res.backend == "dp" and res.status == "optimal" and res.verified
    assert res.classifier.n_nodes <= 2
