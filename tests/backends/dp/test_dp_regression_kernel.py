"""The compiled depth-two solver of squared error (``streed/kernels_sq.py``) against its
numpy oracle (``depth_two.depth_two`` with the task's ``stacked_costs``) on random 0/1
rows, and whole dp solves with the kernels against the numpy paths (``ODT_KERNELS=numpy``).
Absolute error has no compiled kernel (its numpy path is the one both runs take)."""
from __future__ import annotations

import numpy as np
import pytest

import odt
from odt.backends.dp.streed import kernels_sq
from odt.backends.dp.streed.depth_two import depth_two
from odt.backends.dp.task import SquaredError

pytestmark = pytest.mark.skipif(not kernels_sq.AVAILABLE, reason="numba is not installed")
NONE = np.zeros((0, 0), dtype=bool)


def _case(seed: int):
    rng = np.random.default_rng(seed)
    s, m = int(rng.integers(2, 40)), int(rng.integers(1, 12))
    B = rng.random((s, m)) < rng.uniform(0.1, 0.9)
    values = np.unique(rng.integers(-30, 30, size=s) / 4.0)
    y = rng.integers(0, values.shape[0], size=s)
    w = [np.ones(s), rng.integers(1, 4, size=s).astype(float), rng.uniform(0.1, 3.0, size=s)][seed % 3]
    task = SquaredError(values=values, shift=float(values.mean()))
    return rng, B, task.statistics(y, w), task, m


@pytest.mark.parametrize("seed", range(60))
def test_the_compiled_depth_two_solver_equals_numpy(seed):
    rng, B, st, task, m = _case(seed)
    ok_root = rng.random(m) < 0.9
    min_leaf, min_node = float(rng.integers(1, 4)), float(rng.integers(1, 6))
    leaf_err = float(task.costs(st.sum(axis=0)[None])[0])
    masks = (None, None)
    if seed % 4 == 0:  # branch-dependent child candidates
        masks = (rng.random((m, m)) < 0.7, rng.random((m, m)) < 0.7)
    want, _ = depth_two(B.astype(float), st, ok_root, int(min_leaf), int(min_node), leaf_err, masks[0], masks[1], None,
                        compiled=False, leaf_cost=task.stacked_costs)
    ok_l = NONE if masks[0] is None else masks[0]
    ok_r = NONE if masks[1] is None else masks[1]
    unit = bool(np.all(st[:, 0] == 1.0))
    E, F, BL, BR = kernels_sq.squared_two(B, st, ok_root, ok_l, ok_r, min_leaf, min_node, leaf_err, unit)
    np.testing.assert_allclose(E, want, rtol=1e-9, atol=1e-9)
    for i in range(4):  # every choice is allowed and has the value found
        if F[i] >= 0:
            f = F[i]
            assert ok_root[f] and BL[i] + BR[i] + 1 <= i


@pytest.mark.parametrize("seed", range(20))
def test_pair_sums_by_difference_equal_the_direct_ones(seed):
    rng, B, st, task, m = _case(seed)
    col = rng.random(B.shape[0]) < 0.5
    unit = bool(np.all(st[:, 0] == 1.0))
    whole, part = kernels_sq.pair_sums(B, st, unit), kernels_sq.pair_sums(B[col], st[col], unit)
    upper = np.triu(np.ones(whole.shape[:2], dtype=bool))
    diff = kernels_sq.difference(whole, part, np.zeros_like(whole))
    want = kernels_sq.pair_sums(B[~col], st[~col], False)  # counted, not read off the weights
    np.testing.assert_allclose(diff[upper], want[upper], rtol=1e-9, atol=1e-9)


def _solve(monkeypatch, kernels: str, data: dict, text: str):
    monkeypatch.setenv("ODT_KERNELS", kernels)
    return odt.compile(text, data=data).solve(backend="dp")


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("loss", ["squared_error", "absolute_error"])
def test_a_dp_solve_with_the_kernels_equals_numpy(monkeypatch, seed, loss):
    rng = np.random.default_rng(100 + seed)
    n, m = 60, 7
    data: dict = {f"b{j}": rng.integers(0, 2, size=n) for j in range(m)}
    data["y"] = (data["b0"] * 3.0 + data["b1"] * data["b2"] * 2.0 + rng.normal(size=n)).round(2)
    data["w"] = rng.integers(1, 3, size=n) if seed % 2 else rng.uniform(0.5, 2.0, size=n).round(3)
    depth = 2 + seed % 3
    extra = ["", " + 0.5 * nodes", "\nsubject to { every leaf: samples >= 3 }"][seed % 3]
    text = f"data {{ target y\n weight w }}\nmodel tree(depth <= {depth})\nminimize {loss}{extra}\n"
    a, b = _solve(monkeypatch, "compile", data, text), _solve(monkeypatch, "numpy", data, text)
    assert a.status == b.status == "optimal"
    assert a.objective == pytest.approx(b.objective, rel=1e-9, abs=1e-9)
