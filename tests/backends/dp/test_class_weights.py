"""The compiled bitset kernels with one weight per class (issue 26: a cost matrix, balanced
accuracy and F1's steps are misclassification with class weights): the depth-two
frequencies and the compiled depth three scale each class's popcounts by its weight.
Checked against two independent routes: the same rows repeated (a row of weight k is k
rows of weight one, the kernels' unit case) and the numpy engine without the kernels."""
from __future__ import annotations

import re

import numpy as np
import pytest

import odt
from odt.backends.dp.streed import kernels, root


def _data(seed: int) -> tuple[dict, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(30, 70)), int(rng.integers(5, 9))
    X = rng.integers(0, 2, (n, p))
    y = ((X[:, 0] & X[:, 1]) | (rng.random(n) < 0.3)).astype(int)
    return {f"x{j}": X[:, j].tolist() for j in range(p)} | {"class": y.tolist()}, X, y


@pytest.mark.parametrize("seed", range(16))
def test_class_weighted_kernels_equal_repeated_rows_and_numpy(seed, monkeypatch):
    data, X, y = _data(seed)
    a, b = 1 + seed % 3, 2 + seed % 4  # fp costs a, fn costs b
    depth = 3 + seed % 2
    prog = odt.compile(f"data {{ target class }}\nmodel tree(depth <= {depth})\nminimize {a} * fp + {b} * fn", data=data)
    got = prog.solve(backend="dp")
    assert got.status == "optimal" and got.verified
    assert re.search(r"'depth_two_in_three': [1-9]", got.log), got.log  # the compiled depth three ran
    reps = np.where(y == 1, b, a)  # errors on repeated rows: each fp a times, each fn b times
    rep = {k: [v for v, r in zip(vals, reps) for _ in range(r)] for k, vals in data.items()}
    plain = odt.compile(f"data {{ target class }}\nmodel tree(depth <= {depth})\nminimize errors", data=rep).solve(
        backend="dp")
    assert got.objective == plain.objective
    monkeypatch.setattr(kernels, "AVAILABLE", False)
    monkeypatch.setattr(root, "DISTINCT", False)
    assert odt.compile(f"data {{ target class }}\nmodel tree(depth <= {depth})\nminimize {a} * fp + {b} * fn",
                       data=data).solve(backend="dp").objective == got.objective


@pytest.mark.parametrize("seed", range(40))
def test_the_class_weights_are_found_exactly_when_each_class_has_one_whole_positive_weight(seed):
    """``_class_weights``: each class's one weight when every row of the class has that
    weight and it is a whole number above 0, else None (a class without rows weighs
    nothing the kernels count); against the definition, class by class."""
    from odt.backends.dp.streed.solve import _class_weights

    rng = np.random.default_rng(seed)
    K, n = int(rng.integers(2, 5)), int(rng.integers(0, 30))
    y = rng.integers(0, K - (seed % 2), n)  # odd seeds: the last class has no row
    per = rng.choice([1.0, 2.0, 3.0, 0.5, 0.0], K)
    w = per[y].copy()
    if seed % 3 == 0 and n:
        w[int(rng.integers(n))] += 1.0  # one row of its class off its class's weight
    want: np.ndarray | None = np.ones(K)
    for k in range(K):
        wk = w[y == k]
        if wk.size and (not (wk == wk[0]).all() or wk[0] != round(wk[0]) or wk[0] <= 0):
            want = None
            break
        if wk.size and want is not None:
            want[k] = wk[0]
    got = _class_weights(y, w, K)
    assert (got is None) == (want is None)
    if want is not None:
        present = np.bincount(y, minlength=K) > 0
        assert np.array_equal(got[present], want[present])
