"""``features_used`` (Florio eq. 18's feature count): the number of distinct columns a
classifier tests, in a side constraint (``features_used <= k``) or in the objective.

Specification: on tiny random binary data, every solver backend's optimum equals the
brute-force optimum over every tree of depth <= 2 whose tests use at most k columns (or
with the penalty in the objective); the decoded classifier's own feature count is
re-checked by the evaluator; dp refuses it with the support table's reason, and auto
routes around dp.
"""
from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import odt
from odt.compiler.errors import InfeasibleProgram, UnsupportedConstruct

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from helpers import brute_force_constrained  # noqa: E402

BACKENDS = ("maxsat", "cp", "milp")


def _data(seed: int, n_rows: int = 10, n_features: int = 4) -> tuple[np.ndarray, list[int], dict]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n_rows, n_features))
    y = [int(v) for v in (X[:, 0] ^ X[:, 1]) ^ (rng.random(n_rows) < 0.15)]
    y[0], y[1] = 0, 1  # two classes
    data = {f"f{j}": X[:, j].tolist() for j in range(n_features)}
    data["class"] = y
    return X, y, data


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 2])
def test_bounded_feature_count_equals_brute_force_on_every_backend(seed, k):
    X, y, data = _data(seed)
    best = brute_force_constrained(X, y, 2, lambda f: sum(a != b for a, b in zip(f.pred, y)),
                                   lambda f: len(f.used) <= k)
    assert best is not None
    prog = odt.compile(f"model tree(depth <= 2)\nminimize errors\nsubject to {{ features_used <= {k} }}", data=data)
    for backend in BACKENDS:
        res = prog.solve(backend=backend, time_limit=60)
        assert res.status == "optimal" and res.verified, backend
        assert Fraction(res.objective).limit_denominator() == best[0], backend
        assert len(res.classifier.features_used()) <= k
        check = next(c for c in res.constraints if "features_used" in c.text)
        assert check.holds and check.value == len(res.classifier.features_used())


@pytest.mark.parametrize("seed", range(4))
def test_feature_penalty_in_the_objective_equals_brute_force(seed):
    X, y, data = _data(seed)
    best = brute_force_constrained(X, y, 2, lambda f: sum(a != b for a, b in zip(f.pred, y)) + Fraction(3, 2) * len(f.used),
                                   lambda f: True)
    prog = odt.compile("model tree(depth <= 2)\nminimize errors + 1.5 * features_used", data=data)
    for backend in BACKENDS:
        res = prog.solve(backend=backend, time_limit=60)
        assert res.status == "optimal" and res.verified
        assert Fraction(res.objective).limit_denominator() == best[0], backend


def test_diagrams_and_bdds_take_it_too():
    _, _, data = _data(1, n_rows=16)
    for model in ("diagram(widths = [1, 2])", "bdd(depth = 2)"):
        prog = odt.compile(f"model {model}\nminimize errors\nsubject to {{ features_used <= 2 }}", data=data)
        values = {prog.solve(backend=b, time_limit=60).objective for b in BACKENDS}
        assert len(values) == 1, model


def test_zero_features_leaves_a_single_leaf():
    _, y, data = _data(2)
    res = odt.compile("model tree(depth <= 2)\nminimize errors\nsubject to { features_used == 0 }", data=data).solve()
    assert res.classifier.n_nodes == 0 and res.objective == min(y.count(0), y.count(1))


def test_a_bdd_tests_every_level_so_fewer_features_than_levels_is_infeasible():
    _, _, data = _data(3)
    with pytest.raises(InfeasibleProgram):
        odt.compile("model bdd(depth = 2)\nminimize errors\nsubject to { features_used <= 1 }",
                    data=data).solve(backend="maxsat")


def test_dp_takes_it_in_a_constraint_and_agrees_with_maxsat():
    _, _, data = _data(0)
    prog = odt.compile("model tree(depth <= 2)\nminimize errors\nsubject to { features_used <= 1 }", data=data)
    dp = prog.solve(backend="dp")
    assert dp.backend == "dp" and dp.verified and dp.status == "optimal"
    assert dp.objective == prog.solve(backend="maxsat").objective


def test_dp_refuses_it_in_the_objective_and_auto_routes_to_a_solver():
    _, _, data = _data(0)
    prog = odt.compile("model tree(depth <= 2)\nminimize errors + features_used", data=data)
    with pytest.raises(UnsupportedConstruct, match="(?s)features_used.*backends that take it: maxsat, cp, milp"):
        prog.solve(backend="dp")
    assert prog.solve().backend != "dp"