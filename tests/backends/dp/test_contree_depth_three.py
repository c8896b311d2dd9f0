"""The compiled depth-three nodes (``depth_three.DepthThree.solve_d3``, kernel
``kernels_root.d3_search``: ConTree's Alg. 1 with NB / IS / SP at a node with three levels
left, its depth-two children solved inside the kernel) give what the Python interval loop
(``_Solver.branch``) gives: the same optimum, the same canonical tree, and the optimum of
the search with every pruning rule off -- so an unsound rule in the kernel fails here. An
interrupted compiled root still answers a tree and a lower bound no larger than the
optimum."""
from __future__ import annotations

import numpy as np
import pytest

from odt.backends.dp.contree import kernels
from odt.backends.dp.contree.bounds import _Timeout
from odt.backends.dp.contree.depth_three import D3_WORK, DepthThree
from odt.backends.dp.contree.search import PruningRules, _Solver, errors, optimal_tree

pytestmark = pytest.mark.skipif(not kernels.AVAILABLE, reason="numba not installed")

NO_PRUNING = PruningRules(neighbourhood=False, interval_shrinking=False, sub_interval=False)


def _data(rng: np.random.Generator, weights: str):
    """A small continuous dataset with repeated values, duplicate rows and ties."""
    n = int(rng.integers(4, 70))
    p = int(rng.integers(1, 5))
    K = int(rng.integers(2, 4))
    X = rng.integers(0, int(rng.integers(2, 12)), size=(n, p)).astype(float)
    if rng.random() < 0.5:
        X = X + rng.normal(0, 0.3, size=(n, p)).round(1)
    if n > 8 and rng.random() < 0.5:  # duplicate rows, some with another class
        k = int(rng.integers(1, n // 3))
        X[-k:] = X[:k]
    y = rng.integers(0, K, size=n)
    if rng.random() < 0.6:  # a learnable target, so that pure sides and small costs occur
        y = np.where(X[:, 0] > np.median(X[:, 0]), y % 2, (y + 1) % K)
    w = None
    if weights == "integral":
        w = rng.integers(1, 4, size=n).astype(float)
    elif weights == "fractional":
        w = rng.uniform(0.1, 2.0, size=n).round(3)
    return X, y, w, K


def _solve(monkeypatch, compiled: bool, X, y, w, K, depth, **kw):
    calls = []
    original = DepthThree.solve_d3

    def spy(self, *args):
        calls.append(args[-1])
        return original(self, *args)

    monkeypatch.setattr(DepthThree, "solve_d3", spy)
    if not compiled:
        monkeypatch.setattr(DepthThree, "d3_fits", lambda self, node: False)
    res = optimal_tree(X, y, depth, weights=w, n_classes=K, **kw)
    monkeypatch.undo()
    return res, calls


@pytest.mark.parametrize("weights", ["unit", "integral", "fractional"])
@pytest.mark.parametrize("seed", range(4))
def test_compiled_depth_three_equals_the_python_loop_and_the_search_without_pruning(seed, weights, monkeypatch):
    rng = np.random.default_rng(1000 * seed + len(weights))
    used = 0
    for _ in range(12):
        X, y, w, K = _data(rng, weights)
        for depth in (3, 4):
            new, calls = _solve(monkeypatch, True, X, y, w, K, depth)
            used += len(calls)
            old, none = _solve(monkeypatch, False, X, y, w, K, depth)
            assert not none
            full, _ = _solve(monkeypatch, False, X, y, w, K, depth, pruning=NO_PRUNING)
            assert new.status == old.status == full.status == "optimal"
            assert new.cost == pytest.approx(old.cost, abs=1e-9)
            assert new.cost == pytest.approx(full.cost, abs=1e-9)
            assert new.cost == pytest.approx(errors(new.tree, X, y, np.ones(len(y)) if w is None else w), abs=1e-9)
            if weights != "fractional":  # fractional ties hold up to the tolerance: the root keeps
                # the first of two equal trees whose float sums differ in the last bit when it is
                # reported between them (the Python loop reports every improvement)
                canon_new, _ = _solve(monkeypatch, True, X, y, w, K, depth, canonical_ties=True)
                canon_old, _ = _solve(monkeypatch, False, X, y, w, K, depth, canonical_ties=True)
                assert canon_new.tree == canon_old.tree
    assert used > 0  # the compiled nodes were reached (most sets are not pure at the root)


@pytest.mark.parametrize("stop_after", [1, 2, 4, 8])
def test_an_interrupted_compiled_root_answers_a_tree_and_a_valid_lower_bound(stop_after, monkeypatch):
    rng = np.random.default_rng(stop_after)
    X = rng.normal(size=(60, 3)).round(1)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int) ^ (rng.random(60) < 0.2)
    best = optimal_tree(X, y, 3)
    seen = []

    def clock(self):  # the time limit, reached after ``stop_after`` checks
        seen.append(1)
        if len(seen) > stop_after:
            raise _Timeout

    init = _Solver.__init__

    def small_budget(self, *args, **kw):  # a time check after every root split
        init(self, *args, **kw)
        self.d2_budget = 1

    monkeypatch.setattr(_Solver, "check_time", clock)
    monkeypatch.setattr(_Solver, "__init__", small_budget)
    progress = []
    res = optimal_tree(X, y, 3, on_progress=lambda t, c, lb: progress.append((c, lb)))
    assert res.status == "feasible"
    assert res.lower_bound <= best.cost + 1e-9 <= res.cost + 1e-9
    assert res.cost == errors(res.tree, X, y, np.ones(60))
    assert all(lb <= best.cost + 1e-9 for _, lb in progress)


# ------------------------------------------------- the root with a minimum leaf size


def _solve_ml(monkeypatch, compiled: bool, X, y, w, K, min_leaf, **kw):
    calls = []
    original = DepthThree.solve_d3_min_leaf

    def spy(self, *args):
        calls.append(args)
        return original(self, *args)

    monkeypatch.setattr(DepthThree, "solve_d3_min_leaf", spy)
    if not compiled:
        monkeypatch.setattr(DepthThree, "takes_d3_ml", lambda self, node, level: False)
    res = optimal_tree(X, y, 3, weights=w, n_classes=K, min_leaf=min_leaf, **kw)
    monkeypatch.undo()
    return res, calls


@pytest.mark.parametrize("weights", ["unit", "integral", "fractional"])
@pytest.mark.parametrize("seed", range(3))
def test_compiled_min_leaf_root_evaluates_what_the_python_loop_evaluates(seed, weights, monkeypatch):
    """``solve_d3_min_leaf`` (kernel ``kernels_root_ml.d3_search_ml``) against
    ``_Solver.branch`` with a minimum leaf size: the same optimum, the same number of
    evaluated splits (the root's, the two-phase children's and, in the Python loop, the
    searches without the constraint for children of fewer than 2 m rows; where the loop's
    cache answered no child, which the kernel would solve again), the same relaxed bounds
    tried and pruning, the same canonical tree; and the optimum of the search with every
    rule off. A rule applied differently changes the counts even where the optimum
    survives it."""
    rng = np.random.default_rng(7000 + 100 * seed + len(weights))
    used = 0
    for _ in range(10):
        X, y, w, K = _data(rng, weights)
        n = len(y)
        for min_leaf in sorted({2, int(rng.integers(2, max(3, n // 4 + 1)))}):
            new, calls = _solve_ml(monkeypatch, True, X, y, w, K, min_leaf)
            used += len(calls)
            old, none = _solve_ml(monkeypatch, False, X, y, w, K, min_leaf)
            assert not none
            full = optimal_tree(X, y, 3, weights=w, n_classes=K, min_leaf=min_leaf, pruning=NO_PRUNING)
            assert new.status == old.status == full.status == "optimal"
            assert new.cost == pytest.approx(old.cost, abs=1e-9)
            assert new.cost == pytest.approx(full.cost, abs=1e-9)
            s_new, s_old = new.stats, old.stats
            if calls and s_old["cache_hits"] == s_old["free_cache_hits"] == 0:  # the kernel keeps no cache
                assert s_new["splits_evaluated"] == s_old["splits_evaluated"] + s_old["free_splits_evaluated"]
                for key in ("relaxed_attempts", "relaxed_evals", "intervals_pruned_relaxed"):
                    assert s_new[key] == s_old[key], key
            if weights != "fractional":
                canon_new, _ = _solve_ml(monkeypatch, True, X, y, w, K, min_leaf, canonical_ties=True)
                canon_old, _ = _solve_ml(monkeypatch, False, X, y, w, K, min_leaf, canonical_ties=True)
                assert canon_new.tree == canon_old.tree
    assert used > 0


@pytest.mark.parametrize("stop_after", [1, 3, 9])
def test_an_interrupted_compiled_min_leaf_root_answers_a_tree_and_a_valid_lower_bound(stop_after, monkeypatch):
    rng = np.random.default_rng(40 + stop_after)
    X = rng.normal(size=(90, 3)).round(1)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int) ^ (rng.random(90) < 0.2)
    best = optimal_tree(X, y, 3, min_leaf=6)
    seen = []

    def clock(self):
        seen.append(1)
        if len(seen) > stop_after:
            raise _Timeout

    init = _Solver.__init__

    def small_budget(self, *args, **kw):
        init(self, *args, **kw)
        self.d2_budget = 1

    calls = []
    original = DepthThree.solve_d3_min_leaf
    monkeypatch.setattr(DepthThree, "solve_d3_min_leaf", lambda self, *a: calls.append(1) or original(self, *a))
    monkeypatch.setattr(_Solver, "check_time", clock)
    monkeypatch.setattr(_Solver, "__init__", small_budget)
    res = optimal_tree(X, y, 3, min_leaf=6)
    assert calls and res.status == "feasible"
    assert res.lower_bound <= best.cost + 1e-9 <= res.cost + 1e-9
    assert res.cost == errors(res.tree, X, y, np.ones(90))


def test_the_gate_counts_distinct_values_when_rows_times_columns_is_too_many(monkeypatch):
    """3,000 rows of 8 columns of ten values each: p (m - 1) candidates would not fit one
    compiled call, the 72 there are do; the plain and the minimum-leaf roots then run
    compiled, with the Python loop's optimum."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 10, size=(3000, 8)).astype(float)
    y = ((X[:, 0] > 4) ^ (X[:, 1] > 6) ^ (rng.random(3000) < 0.1)).astype(int)
    for min_leaf in (1, 50):
        S = _Solver(X, y, np.ones(3000), 2, 3, min_leaf, 0.0, float("inf"), PruningRules(), None, 0.0, False)
        root = S.root_node()
        bound = S.p * (root.m - 1)  # the candidates' bound: over the budget
        assert bound * (2 * S.p * root.m + 2 * bound) > D3_WORK
        assert S.takes_d3(root) if min_leaf == 1 else S.takes_d3_ml(root, 0)
    plain_new, calls = _solve(monkeypatch, True, X, y, None, 2, 3)
    plain_old, _ = _solve(monkeypatch, False, X, y, None, 2, 3)
    assert calls and plain_new.cost == plain_old.cost
    ml_new, calls = _solve_ml(monkeypatch, True, X, y, None, 2, 50)
    ml_old, _ = _solve_ml(monkeypatch, False, X, y, None, 2, 50)
    assert calls and ml_new.cost == ml_old.cost
