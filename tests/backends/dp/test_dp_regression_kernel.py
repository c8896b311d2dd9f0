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


def _tree_value(tree, B, st, task, c):
    """``error + c * nodes`` of a kernel's depth-two tree (root, split where it fails, where
    it holds; -1 a leaf), re-evaluated in numpy."""
    f, g_false, g_true = (int(v) for v in tree)
    if f < 0:
        return float(task.costs(st.sum(axis=0)[None])[0])
    total = c
    for side, g in ((~B[:, f], g_false), (B[:, f], g_true)):
        if g < 0:
            total += float(task.costs(st[side].sum(axis=0)[None])[0])
        else:
            total += c + sum(float(task.costs(st[side & part].sum(axis=0)[None])[0]) for part in (B[:, g], ~B[:, g]))
    return total


@pytest.mark.parametrize("seed", range(40))
def test_the_compiled_depth_two_tree_has_the_solvers_value(seed):
    rng, B, st, task, m = _case(seed)
    min_leaf, min_node = float(rng.integers(1, 4)), float(rng.integers(1, 6))
    c = [0.0, 0.5, 3.0][seed % 3]
    k = int(rng.integers(0, 4))
    unit = bool(np.all(st[:, 0] == 1.0))
    leaf_err = float(task.costs(st.sum(axis=0)[None])[0])
    E, _, _, _ = kernels_sq.squared_two(B, st, np.ones(m, dtype=bool), NONE, NONE, min_leaf, min_node, leaf_err, unit)
    want = min(E[i] + c * i for i in range(k + 1))
    tree = kernels_sq.squared_two_tree(B, st, k, c, min_leaf, min_node, unit)
    assert _tree_value(tree, B, st, task, c) == pytest.approx(want, rel=1e-9, abs=1e-9)
    f, g_false, g_true = (int(v) for v in tree)
    if f >= 0:  # the sizes hold and the budget too
        assert (B[:, f].sum() >= min_leaf) and ((~B[:, f]).sum() >= min_leaf)
        assert 1 + (g_false >= 0) + (g_true >= 0) <= k


def _three_by_enumeration(B, st, task, k, c, min_leaf, min_node):
    """The least ``error + c * nodes`` of a tree of depth at most three and at most ``k``
    nodes: each root candidate with the solver's exact depth-two vectors of its sides."""
    s, m = B.shape
    leaf = float(task.costs(st.sum(axis=0)[None])[0])
    best = leaf
    if k == 0 or s < min_node:
        return best
    for f in range(m):
        sides = (~B[:, f], B[:, f])
        if min(int(sides[0].sum()), int(sides[1].sum())) < max(min_leaf, 1.0):
            continue
        V = []
        for side in sides:
            Bs, ss = B[side], st[side]
            e = float(task.costs(ss.sum(axis=0)[None])[0])
            E, _, _, _ = kernels_sq.squared_two(Bs, ss, np.ones(m, dtype=bool), NONE, NONE, max(min_leaf, 1.0), min_node,
                                                e, bool(np.all(ss[:, 0] == 1.0)))
            V.append(np.minimum.accumulate(E + c * np.arange(4)))
        for kl in range(0, min(3, k - 1) + 1):
            kr = k - 1 - kl
            if kr > 3:
                continue
            best = min(best, V[0][kl] + V[1][kr] + c)
    return best


@pytest.mark.parametrize("seed", range(40))
def test_the_compiled_depth_three_search_equals_enumeration(seed):
    rng, B, st, task, m = _case(seed)
    min_leaf, min_node = float(rng.integers(0, 4)), float(rng.integers(1, 6))
    c = [0.0, 0.5, 3.0][seed % 3]
    k = int(rng.integers(1, 8))
    unit = bool(np.all(st[:, 0] == 1.0))
    by_difference = bool(np.all(st[:, 0] == np.round(st[:, 0])))
    want = _three_by_enumeration(B, st, task, k, c, min_leaf, min_node)
    s = B.shape[0]
    bufs = (np.zeros((m, m, 4)), np.zeros((m, m, 4)), np.zeros((m, m, 4)), np.zeros((s, m), dtype=bool), np.zeros((s, 3)))
    cand = rng.permutation(m).astype(np.int64)
    best, f, kl, kr, lb = kernels_sq.squared_three(B, st, cand, k, np.inf, c, 0.0, min_leaf, min_node, 1e-9, unit,
                                                   by_difference, *bufs)
    assert best == pytest.approx(want, rel=1e-9, abs=1e-9)
    if f >= 0:
        assert kl + kr + 1 <= k
    # with an upper bound below the optimum: nothing is found and the bound returned is above it
    if want > 1e-6:
        ub = want * 0.5
        best2, f2, _, _, lb2 = kernels_sq.squared_three(B, st, cand, k, ub, c, 0.0, min_leaf, min_node, 1e-9, unit,
                                                        by_difference, *bufs)
        assert f2 < 0 or best2 <= ub
        assert min(best2, lb2) <= want + 1e-9 * (1 + want)  # a lower bound, never above the optimum


@pytest.mark.parametrize("seed", range(12))
def test_a_regression_solve_with_the_compiled_depth_three_equals_the_python_search(monkeypatch, seed):
    from odt.backends.dp.streed import bounded

    rng = np.random.default_rng(300 + seed)
    n, m = 80, 8
    data: dict = {f"b{j}": rng.integers(0, 2, size=n) for j in range(m)}
    data["y"] = (data["b0"] * 3.0 + data["b1"] * data["b2"] * 2.0 + data["b3"] * data["b4"] + rng.normal(size=n)).round(2)
    weight = ""
    if seed % 3:
        data["w"] = rng.integers(1, 3, size=n) if seed % 3 == 1 else rng.uniform(0.5, 2.0, size=n).round(3)
        weight = "\n weight w"
    depth = 3 + seed % 2
    model = [f"tree(depth <= {depth})", f"tree(depth <= {depth}, nodes <= 5)"][seed % 2]
    extra = ["", " + 0.5 * nodes", "\nsubject to { every leaf: samples >= 4 }", "\nsubject to { every node: samples >= 20 }"][seed % 4]
    text = f"data {{ target y{weight} }}\nmodel {model}\nminimize squared_error{extra}\n"
    monkeypatch.setenv("ODT_KERNELS", "compile")
    a = odt.compile(text, data=data).solve(backend="dp")
    monkeypatch.setattr(bounded, "SQUARED_THREE_WORK", -1.0)  # every depth-three node by ``_splits``
    b = odt.compile(text, data=data).solve(backend="dp")
    assert a.status == b.status == "optimal"
    assert a.objective == pytest.approx(b.objective, rel=1e-9, abs=1e-9)
