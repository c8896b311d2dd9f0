"""The compiled multiclass depth-two evaluation (``kernels_eval._eval_multi_cuts``) skips
candidates whose score cannot beat its side's best and may stop a side at a cap; these
tests hold it to the full evaluation (``_eval_multi``, every candidate scored) on data
large enough for the skips to happen, and the whole search to the numpy path."""
from __future__ import annotations

import numpy as np
import pytest

from odt.backends.dp.contree import kernels, kernels_eval
from odt.backends.dp.contree.search import optimal_tree

pytestmark = pytest.mark.skipif(not kernels.AVAILABLE, reason="numba not installed")


def _prepared(rng, n, p, K, weights):
    X = rng.integers(0, int(rng.integers(5, 400)), size=(n, p)).astype(float)
    y = rng.integers(0, K, size=n)
    if rng.random() < 0.5:  # a learnable class, so that some sides are nearly pure
        y = np.where(X[:, 0] > np.median(X[:, 0]), y % 2, y)
    order = np.ascontiguousarray(np.argsort(X, axis=0, kind="stable").T.astype(np.int32))
    vals = np.take_along_axis(X.T, order, axis=1)
    w = np.ones(n) if weights is None else weights
    wd = w.astype(np.int32) if weights is None else w
    lid = np.zeros(n, dtype=np.int32)
    return kernels.d2_prepare(np.arange(n, dtype=np.int32), order, vals, y, w, wd, wd, K, lid, False), n


@pytest.mark.parametrize("seed", range(4))
def test_skipping_evaluation_equals_the_full_one_and_the_cap_is_a_min(seed):
    rng = np.random.default_rng(seed)
    for trial in range(4):
        K = int(rng.integers(3, 9))
        n = int(rng.integers(200, 1500))
        weights = None if trial % 2 == 0 else rng.integers(1, 4, size=n).astype(float)
        (ordl, posl, valid, wcum, cuts, cstart, wcs, S, Sall, tot, cls, wts, cacc), m = _prepared(
            rng, n, int(rng.integers(1, 5)), K, weights)
        gl = np.empty(m, dtype=wts.dtype)
        goleft = np.empty(m, dtype=np.bool_)
        cl, ca, tl, tr = np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K)
        hs = bool(valid.any())
        for f1 in range(ordl.shape[0]):
            for z in cuts[cstart[f1]:cstart[f1 + 1]][:: max(1, (cstart[f1 + 1] - cstart[f1]) // 12)]:
                full = kernels_eval._eval_multi(ordl, posl, cls, wts, tot, valid, hs, goleft, cl, ca, tl, tr, f1, z)
                fast = kernels_eval._eval_multi_cuts(ordl, posl, cls, wts, tot, cuts, cstart, cacc, hs, gl, cl,
                                                     tl, tr, f1, z)
                assert fast == full
                for cap in (0.0, 3.0, float(rng.integers(0, n // 2)), full[0], full[1]):
                    capped = kernels_eval._eval_multi_cuts(ordl, posl, cls, wts, tot, cuts, cstart, cacc, hs, gl,
                                                           cl, tl, tr, f1, z, cap)
                    assert capped == (min(full[0], cap), min(full[1], cap))


@pytest.mark.parametrize("seed", range(3))
def test_multiclass_depth_two_and_three_equal_the_numpy_path_on_larger_data(seed, monkeypatch):
    rng = np.random.default_rng(40 + seed)
    for trial in range(3):
        n = int(rng.integers(200, 500))
        p = int(rng.integers(2, 5))
        K = int(rng.integers(3, 7))
        X = rng.integers(0, int(rng.integers(20, 300)), size=(n, p)).astype(float)
        y = np.where(X[:, 0] + X[:, 1 % p] > X[:, 0].mean() * 2, rng.integers(0, 2, size=n), rng.integers(0, K, size=n))
        weights = None if trial != 1 else rng.integers(1, 4, size=n).astype(float)
        for depth in (2, 3):
            out = {}
            for active in (True, False):
                monkeypatch.setattr(kernels, "ACTIVE", active)
                out[active] = optimal_tree(X, y, depth, weights=weights, n_classes=K, canonical_ties=True)
            assert out[True].status == out[False].status == "optimal"
            assert out[True].cost == out[False].cost
            assert out[True].tree == out[False].tree
