"""The packed two-class relaxation kernel (``kernels_minleaf.relaxed_binary_ml`` with
integral weights: row counts and signed weights in one int64 sum) gives the same bounds as
its general (float) path, on random nodes, root cuts and minimum leaf sizes up to half the
rows; and the relaxed searches seeded with a child's constrained optimum keep the optimum
(``minleaf.MinLeaf.seed_position``, against the exhaustive search)."""
from __future__ import annotations

import numpy as np
import pytest

from odt.backends.dp.contree import search


def _kernels():
    try:
        from odt.backends.dp.contree import kernels, kernels_minleaf
    except ImportError:  # pragma: no cover - numba absent
        return None, None
    return kernels, kernels_minleaf


def _random_node(kernels, rng, n, p, levels, w):
    """The prepared two-class arrays of a random node of ``n`` rows and ``p`` features with
    ``levels`` distinct values at most (ties) and row weights ``w``: ``(ordl, posl, wcum,
    cuts, cstart, S, Sall, tot)`` of ``kernels.d2_prepare``."""
    X = rng.integers(0, levels, size=(n, p)).astype(float)
    y = rng.integers(0, 2, size=n)
    order = np.ascontiguousarray(np.argsort(X, axis=0, kind="stable").T.astype(np.int32))
    vals = np.take_along_axis(X.T, order, axis=1)
    sgn = np.where(y == 1, w, -w)
    prep = kernels.d2_prepare(np.arange(n, dtype=np.int32), order, vals, y, w, w.astype(np.int32),
                              sgn.astype(np.int32), 2, np.zeros(n, dtype=np.int32), False)
    ordl, posl, _, wcum, cuts, cstart, _, S, Sall, tot = prep[:10]
    return ordl, posl, wcum, cuts, cstart, S, Sall, tot


@pytest.mark.parametrize("seed", range(3))
def test_packed_relaxation_equals_the_float_path(seed):
    kernels, km = _kernels()
    if kernels is None or not kernels.AVAILABLE:
        pytest.skip("numba not available")
    rng = np.random.default_rng(4100 + seed)
    for trial in range(25):
        n = int(rng.integers(4, 90))
        p = int(rng.integers(1, 5))
        w = rng.integers(0, 4, size=n).astype(float) if trial % 2 else np.ones(n)
        ordl, posl, wcum, cuts, cstart, S, Sall, tot = _random_node(kernels, rng, n, p, int(rng.integers(2, 15)), w)
        for _ in range(6):
            f1 = int(rng.integers(0, p))
            zu, zv = sorted(int(v) for v in rng.integers(0, n, size=2))
            ml = int(rng.integers(1, max(2, n // 2 + 1)))
            packed = km.relaxed_binary_ml(ordl, posl, S, Sall, cuts, cstart, wcum, tot[0], tot[1],
                                          np.empty(n, dtype=S.dtype), f1, zu, zv, ml)
            plain = km.relaxed_binary_ml(ordl, posl, S.astype(float), Sall.astype(float), cuts, cstart, wcum,
                                         tot[0], tot[1], np.empty(n), f1, zu, zv, ml)
            assert packed == plain, (seed, trial, f1, zu, zv, ml)


@pytest.mark.parametrize("seed", range(2))
def test_seeded_relaxation_keeps_the_optimum(seed):
    """Depth three, two classes, integral weights (the relaxed searches at the root run,
    seeded), minimum leaf sizes from 2 to a third of the rows: the optimum equals Alg. 1
    with every rule off."""
    rng = np.random.default_rng(4200 + seed)
    off = search.PruningRules(False, False, False)
    attempts = 0
    for trial in range(4):
        n = int(rng.integers(60, 140))
        X = rng.normal(size=(n, 3)).round(1)
        y = (X[:, 0] + rng.normal(scale=0.8, size=n) > 0).astype(int)
        ml = int(rng.integers(2, n // 3))
        res = search.optimal_tree(X, y, 3, min_leaf=ml)
        ref = search.optimal_tree(X, y, 3, min_leaf=ml, pruning=off)
        assert res.status == ref.status == "optimal"
        assert res.cost == ref.cost, (seed, trial, n, ml)
        attempts += res.stats["relaxed_attempts"]
    assert attempts > 0  # the relaxed (seeded) searches ran


@pytest.mark.parametrize("seed", range(3))
def test_relaxation_bounds_every_split_from_its_first_to_its_last_position(seed):
    """The relaxation of positions zu..zv (the callers pass the ends of an interval shrunk
    by IS, not its evaluated neighbours) is a lower bound on both constrained depth-one side
    costs of every root split at a position from zu to zv, the ends included, and equals
    them when zu = zv; on random nodes with ties, both weight kinds and minimum leaf sizes
    up to half the rows (exact side costs from ``eval_binary_ml``)."""
    kernels, km = _kernels()
    if kernels is None or not kernels.AVAILABLE:
        pytest.skip("numba not available")
    rng = np.random.default_rng(4300 + seed)
    checked = 0
    for trial in range(20):
        n = int(rng.integers(6, 80))
        p = int(rng.integers(1, 4))
        w = rng.integers(1, 4, size=n).astype(float) if trial % 2 else np.ones(n)
        ordl, posl, wcum, cuts, cstart, S, Sall, tot = _random_node(kernels, rng, n, p, int(rng.integers(2, 20)), w)
        gl = np.empty(n, dtype=S.dtype)
        for _ in range(5):
            f1 = int(rng.integers(0, p))
            own = cuts[cstart[f1]:cstart[f1 + 1]]
            if own.shape[0] == 0:
                continue
            a, b = sorted(int(v) for v in rng.integers(0, own.shape[0], size=2))
            ml = int(rng.integers(1, max(2, n // 2 + 1)))
            rL, rR = km.relaxed_binary_ml(ordl, posl, S, Sall, cuts, cstart, wcum, tot[0], tot[1], gl, f1,
                                          int(own[a]), int(own[b]), ml)
            for z in own[a:b + 1]:
                tL, tR, _, _ = km.eval_binary_ml(ordl, posl, S, Sall, cuts, cstart, wcum, tot[0], tot[1],
                                                 cuts.shape[0] > 0, gl, f1, int(z), ml)
                assert rL <= tL + 1e-9 and rR <= tR + 1e-9, (seed, trial, f1, int(z), ml)
                if a == b:
                    assert (rL, rR) == (tL, tR)
                checked += 1
    assert checked > 100
