"""Tests of the ConTree dynamic-programming search (backends/dp/contree/search.py).

Real data only: brute-force enumeration on random tiny data, and the continuous benchmark
datasets compared with pycontree (the authors' implementation) and scikit-learn's CART.
"""
from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

try:
    from odt.backends.dp.contree.search import (
        DPLeaf,
        DPResult,
        DPSplit,
        PruningRules,
        errors,
        optimal_tree,
        predict,
    )
except ImportError:  # package mid-refactor: load the module from its file
    _path = Path(__file__).resolve().parents[2] / "backends" / "dp" / "contree" / "search.py"
    _spec = importlib.util.spec_from_file_location("_dp_search_under_test", _path)
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = _mod
    _spec.loader.exec_module(_mod)
    DPLeaf, DPResult, DPSplit, PruningRules = _mod.DPLeaf, _mod.DPResult, _mod.DPSplit, _mod.PruningRules
    errors, optimal_tree, predict = _mod.errors, _mod.optimal_tree, _mod.predict

_REPO = Path(__file__).resolve().parents[2]
CONTINUOUS_FILES = {p.stem: p for d in (_REPO / "examples" / "data", _REPO / "tests" / "fixtures" / "data") for p in d.glob("*.csv")}
ALL_OFF = PruningRules(neighbourhood=False, interval_shrinking=False, sub_interval=False)


# --------------------------------------------------------------------------- helpers


def brute_force(X, y, w, n_classes, rows, depth, min_leaf=1) -> float:
    """Minimum weighted error over every tree of depth <= ``depth`` whose thresholds are
    midpoints between consecutive distinct values among the rows at the node."""
    counts = np.bincount(y[rows], weights=w[rows], minlength=n_classes)
    best = counts.sum() - counts.max()
    if depth == 0:
        return best
    for f in range(X.shape[1]):
        values = np.unique(X[rows, f])
        for a, b in zip(values[:-1], values[1:]):
            go = X[rows, f] <= (a + b) / 2
            left, right = rows[go], rows[~go]
            if len(left) < min_leaf or len(right) < min_leaf:
                continue
            cost = brute_force(X, y, w, n_classes, left, depth - 1, min_leaf)
            cost += brute_force(X, y, w, n_classes, right, depth - 1, min_leaf)
            best = min(best, cost)
    return best


def depth_of(tree) -> int:
    return 0 if isinstance(tree, DPLeaf) else 1 + max(depth_of(tree.left), depth_of(tree.right))


def leaf_sizes(tree, X, rows) -> list[int]:
    if isinstance(tree, DPLeaf):
        return [len(rows)]
    go = X[rows, tree.feature] <= tree.threshold
    return leaf_sizes(tree.left, X, rows[go]) + leaf_sizes(tree.right, X, rows[~go])


def check_thresholds(tree, X, rows) -> None:
    """Every threshold is the midpoint of two consecutive distinct values at its node."""
    if isinstance(tree, DPLeaf):
        return
    v = X[rows, tree.feature]
    go = v <= tree.threshold
    assert go.any() and (~go).any(), "split must separate the rows reaching it"
    a, b = v[go].max(), v[~go].min()
    assert tree.threshold == pytest.approx((a + b) / 2) or tree.threshold == a
    check_thresholds(tree.left, X, rows[go])
    check_thresholds(tree.right, X, rows[~go])


def check_result(res: DPResult, X, y, depth, weights=None) -> None:
    assert isinstance(res, DPResult)
    assert depth_of(res.tree) <= depth
    assert res.cost == pytest.approx(errors(res.tree, X, y, weights), abs=1e-9)
    assert res.lower_bound <= res.cost + 1e-9
    check_thresholds(res.tree, X, np.arange(len(y)))


def load(name: str):
    path = CONTINUOUS_FILES[name]  # shipped in the repository: these tests never skip
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][-1] == "class"
    X = np.array([[float(v) for v in r[:-1]] for r in rows[1:]])
    labels = [r[-1] for r in rows[1:]]
    classes = sorted(set(labels))
    y = np.array([classes.index(v) for v in labels])
    return X, y


# --------------------------------------------------------------------------- (1) brute force


def random_case(rng):
    n = int(rng.integers(1, 11))
    p = int(rng.integers(1, 4))
    k = int(rng.integers(1, 4))
    X = rng.integers(0, int(rng.integers(1, 6)), size=(n, p)).astype(float)
    if rng.random() < 0.3:
        X = X + rng.normal(scale=0.01, size=X.shape)  # distinct continuous values
    y = rng.integers(0, k, size=n)
    return X, y, k


@pytest.mark.parametrize("seed", range(6))
def test_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    for _ in range(250):
        X, y, k = random_case(rng)
        depth = int(rng.integers(0, 3))
        weights = None
        if rng.random() < 0.3:
            weights = rng.integers(0, 4, size=len(y)).astype(float)
        elif rng.random() < 0.2:
            weights = rng.random(len(y))
        w = np.ones(len(y)) if weights is None else weights
        res = optimal_tree(X, y, depth, weights=weights, n_classes=k)
        expected = brute_force(X, y, w, k, np.arange(len(y)), depth)
        assert res.cost == pytest.approx(expected, abs=1e-9)
        assert res.status == "optimal"
        check_result(res, X, y, depth, weights)


def test_matches_brute_force_depth_three():
    rng = np.random.default_rng(42)
    for _ in range(60):
        n = int(rng.integers(4, 12))
        X = rng.integers(0, 5, size=(n, 2)).astype(float)
        y = rng.integers(0, 3, size=n)
        res = optimal_tree(X, y, 3)
        assert res.cost == brute_force(X, y, np.ones(n), 3, np.arange(n), 3)
        check_result(res, X, y, 3)


# --------------------------------------------------------------------------- (2) real data


DATASETS = [
    ("iris", 2), ("iris", 3),
    ("haberman", 2), ("haberman", 3),
    ("lung-cancer", 2), ("lung-cancer", 3),
    ("pima-indians-diabetes", 2),
    ("banknote", 2), ("banknote", 3),
    ("iris", 4), ("lung-cancer", 4), ("haberman", 4),  # depth 4: ConTree's child order and bounds
]


@pytest.mark.parametrize("name,depth", DATASETS)
def test_equals_pycontree_and_beats_cart(name, depth):
    X, y = load(name)
    res = optimal_tree(X, y, depth)
    assert res.status == "optimal"
    check_result(res, X, y, depth)

    from sklearn.tree import DecisionTreeClassifier

    cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
    assert res.cost <= np.count_nonzero(cart.predict(X) != y)

    pycontree = pytest.importorskip("pycontree")
    model = pycontree.ConTree(max_depth=depth, time_limit=120)
    model.fit(X, y)
    assert res.cost == np.count_nonzero(model.predict(X) != y)


# --------------------------------------------------------------------------- (3) pruning rules


RULE_SETS = [
    PruningRules(neighbourhood=False),
    PruningRules(interval_shrinking=False),
    PruningRules(sub_interval=False),
    ALL_OFF,
]


@pytest.mark.parametrize("rules", RULE_SETS, ids=["no-NB", "no-IS", "no-SP", "none"])
def test_pruning_rules_do_not_change_the_result(rules):
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(5, 40))
        p = int(rng.integers(1, 4))
        X = rng.integers(0, int(rng.integers(2, 10)), size=(n, p)).astype(float)
        y = rng.integers(0, int(rng.integers(2, 4)), size=n)
        weights = rng.integers(0, 3, size=n).astype(float) if rng.random() < 0.3 else None
        depth = int(rng.integers(2, 4))
        base = optimal_tree(X, y, depth, weights=weights, canonical_ties=True)
        other = optimal_tree(X, y, depth, weights=weights, pruning=rules, canonical_ties=True)
        assert other.cost == base.cost
        assert other.tree == base.tree  # canonical tie-breaking, whatever the pruning
        fast = optimal_tree(X, y, depth, weights=weights, pruning=rules)  # first optimum proven
        assert fast.cost == base.cost and errors(fast.tree, X, y, weights) == base.cost
    X, y = load("haberman")
    assert optimal_tree(X, y, 3, pruning=rules).cost == optimal_tree(X, y, 3).cost


# --------------------------------------------------------------------------- (4) min_leaf


@pytest.mark.parametrize("min_leaf", [2, 3, 5])
def test_min_leaf(min_leaf):
    rng = np.random.default_rng(min_leaf)
    for _ in range(60):
        n = int(rng.integers(1, 11))
        X = rng.integers(0, 5, size=(n, 2)).astype(float)
        y = rng.integers(0, 2, size=n)
        depth = int(rng.integers(1, 3))
        res = optimal_tree(X, y, depth, min_leaf=min_leaf)
        assert res.cost == brute_force(X, y, np.ones(n), 2, np.arange(n), depth, min_leaf)
        assert min(leaf_sizes(res.tree, X, np.arange(n))) >= min(min_leaf, n)
        check_result(res, X, y, depth)
    X, y = load("iris")
    res = optimal_tree(X, y, 2, min_leaf=20)
    assert min(leaf_sizes(res.tree, X, np.arange(len(y)))) >= 20
    assert res.cost >= optimal_tree(X, y, 2).cost


def min_leaf_case(rng, n_lo, n_hi):
    """Random data for the minimum-leaf tests: few distinct values (ties) or distinct
    continuous ones, two to four classes, no / integral (zeros included) / fractional
    weights."""
    n = int(rng.integers(n_lo, n_hi))
    p = int(rng.integers(1, 4))
    k = int(rng.integers(2, 5))
    X = rng.integers(0, int(rng.integers(2, 12)), size=(n, p)).astype(float)
    if rng.random() < 0.3:
        X = X + rng.normal(scale=0.01, size=X.shape)
    y = rng.integers(0, k, size=n)
    r = rng.random()
    weights = rng.integers(0, 4, size=n).astype(float) if r < 0.3 else rng.random(n) + 0.05 if r < 0.5 else None
    return X, y, k, weights


@pytest.mark.parametrize("seed", range(4))
def test_min_leaf_pruning_equals_the_exhaustive_search(seed):
    """Issue 25: with a minimum leaf size the rules stay on (the growing side of a moved
    threshold bounded by its optimum without the constraint, the relaxed sub-interval
    bound, the two-phase depth-two search); the optimum equals brute force (small data)
    and Alg. 1 with every rule off (``ALL_OFF``, the exhaustive search), at depths 1-3 and
    minimum leaf sizes 1-6, and is never below the optimum without the constraint."""
    rng = np.random.default_rng(2500 + seed)
    for trial in range(70):
        X, y, k, weights = min_leaf_case(rng, 1, 50 if trial % 2 else 16)
        n = len(y)
        w = np.ones(n) if weights is None else weights
        depth = int(rng.integers(1, 4))
        ml = int(rng.integers(1, 7))
        res = optimal_tree(X, y, depth, weights=weights, n_classes=k, min_leaf=ml)
        ref = optimal_tree(X, y, depth, weights=weights, n_classes=k, min_leaf=ml, pruning=ALL_OFF)
        free = optimal_tree(X, y, depth, weights=weights, n_classes=k)
        assert res.status == ref.status == "optimal"
        assert res.cost == pytest.approx(ref.cost, abs=1e-9), (seed, trial, n, depth, ml)
        if n <= 16:
            assert res.cost == pytest.approx(brute_force(X, y, w, k, np.arange(n), depth, ml), abs=1e-9)
        assert res.cost >= free.cost - 1e-9
        assert min(leaf_sizes(res.tree, X, np.arange(n))) >= min(ml, n)
        check_result(res, X, y, depth, weights)


@pytest.mark.parametrize("seed", range(3))
def test_min_leaf_hostile_sizes(seed):
    """Minimum leaf sizes that leave (almost) nothing to search: above n / 2 (only a leaf),
    exactly n / 2 or just below (one balanced cut per feature at most), a quarter of n or
    more at depth three (a depth-two tree at most, the deepest level all leaves), above n
    (the root leaf, allowed whatever its size); with ties, a constant column, weights of
    zero (the rows still count towards a leaf's size) and all-zero weights. The optimum
    equals brute force (small data) and the exhaustive search, and is never below the
    optimum without the constraint."""
    rng = np.random.default_rng(2800 + seed)
    for trial in range(40):
        X, y, k, weights = min_leaf_case(rng, 4, 40 if trial % 2 else 14)
        n = len(y)
        if trial % 7 == 3:
            X[:, 0] = 1.5  # a constant column: no cut
        if trial % 9 == 4:
            weights = np.zeros(n)
        elif trial % 5 == 2:
            weights = np.where(rng.random(n) < 0.5, 0.0, 1.0)
        w = np.ones(n) if weights is None else weights
        depth = int(rng.integers(1, 4))
        ml = int(rng.choice([n // 2, n // 2 + 1, (n + 1) // 2, max(1, n // 2 - 1), n // 4 + 1, n, n + 3]))
        ml = max(ml, 1)
        res = optimal_tree(X, y, depth, weights=weights, n_classes=k, min_leaf=ml)
        ref = optimal_tree(X, y, depth, weights=weights, n_classes=k, min_leaf=ml, pruning=ALL_OFF)
        assert res.status == ref.status == "optimal"
        assert res.cost == pytest.approx(ref.cost, abs=1e-9), (seed, trial, n, depth, ml)
        if n <= 14:
            assert res.cost == pytest.approx(brute_force(X, y, w, k, np.arange(n), depth, ml), abs=1e-9)
        assert res.cost >= optimal_tree(X, y, depth, weights=weights, n_classes=k).cost - 1e-9
        sizes = leaf_sizes(res.tree, X, np.arange(n))
        assert min(sizes) >= min(ml, n)
        if 2 * ml > n:
            assert len(sizes) == 1  # leaf-only
        check_result(res, X, y, depth, weights)


@pytest.mark.parametrize("seed", range(3))
def test_min_leaf_depth_three_on_larger_data(seed):
    """Depth three on 60-160 rows, where the children of the root are depth-two searches of
    their own (the two-phase compiled search, the relaxed sub-interval bound at the root):
    the optimum equals the exhaustive search's, and with canonical ties the tree too."""
    rng = np.random.default_rng(2600 + seed)
    for trial in range(4):
        X, y, k, weights = min_leaf_case(rng, 60, 160)
        if trial % 2:
            weights = None if weights is not None and np.any(weights != np.round(weights)) else weights
        ml = int(rng.integers(2, 16))
        res = optimal_tree(X, y, 3, weights=weights, n_classes=k, min_leaf=ml, canonical_ties=True)
        ref = optimal_tree(X, y, 3, weights=weights, n_classes=k, min_leaf=ml, pruning=ALL_OFF, canonical_ties=True)
        assert res.cost == pytest.approx(ref.cost, abs=1e-9), (seed, trial, ml)
        if weights is None or np.all(weights == np.round(weights)):
            assert res.tree == ref.tree, (seed, trial, ml)
        assert min(leaf_sizes(res.tree, X, np.arange(len(y)))) >= ml
        assert res.cost >= optimal_tree(X, y, 3, weights=weights, n_classes=k).cost


@pytest.mark.parametrize("seed", range(3))
def test_relaxed_bound_stops_only_at_a_tree_within_stop(seed):
    """The weightless relaxation of the root search (``MinLeaf.relaxed``) against the
    exhaustive search of the same problem (the rows in ``zero`` weigh nothing but still
    count towards a leaf): at or below ``stop`` it reports a tree within it (and returns the
    known lower bound), between ``stop`` and ``bound`` the optimum itself, above ``bound`` a
    lower bound above ``bound`` and at most the optimum; whole and fractional weights."""
    kernels = _kernels_module()
    if kernels is None or not kernels.AVAILABLE:
        pytest.skip("the relaxation runs on the compiled kernels")
    from odt.backends.dp.contree.search import _Solver
    import time as _time
    rng = np.random.default_rng(3100 + seed)
    for trial in range(12):
        X, y, _, weights = min_leaf_case(rng, 30, 70)
        y = y % 2  # the relaxation is used on two classes
        n = len(y)
        w = np.ones(n) if weights is None else weights
        ml = int(rng.integers(2, 6))
        S = _Solver(X, y, w, 2, 3, ml, 0.0, float("inf"), PruningRules(), None, _time.perf_counter(), False)
        root = S.root_node()
        f = int(rng.integers(0, X.shape[1]))
        cuts = S.cuts(root, f)
        if cuts.shape[0] < 2:
            continue
        zu, zv = sorted(int(c) for c in rng.choice(cuts, 2, replace=False))
        child, _ = S.children(root, f, zv)
        zero = root.order[f, zu + 1: zv + 1]
        w2 = w.copy()
        w2[zero] = 0.0
        rows = child.rows
        opt = optimal_tree(X[rows], y[rows], 2, weights=w2[rows], n_classes=2, min_leaf=ml, pruning=ALL_OFF).cost
        for stop, bound in ((opt, opt + 2), (opt - 1, opt), (opt - 1, opt + 3), (opt - 2, opt - 1),
                            (opt + 0.5, opt + 1), (-1.0, opt - 0.5)):
            if stop > bound:
                continue
            lb, within = S.relaxed(child, zero, bound, 0.0, stop)
            if opt <= stop + 1e-9:
                assert within and lb == 0.0, (seed, trial, stop, bound, opt)
            elif opt <= bound + 1e-9:
                assert not within and lb == pytest.approx(opt, rel=1e-7), (seed, trial, stop, bound, opt)
            else:
                assert not within and bound < lb <= opt + 1e-6, (seed, trial, stop, bound, opt, lb)


@pytest.mark.parametrize("min_leaf", [5, 20])
def test_min_leaf_on_real_data_equals_the_exhaustive_search(min_leaf):
    X, y = load("haberman")
    res = optimal_tree(X, y, 3, min_leaf=min_leaf)
    ref = optimal_tree(X, y, 3, min_leaf=min_leaf, pruning=ALL_OFF)
    assert res.status == "optimal" and res.cost == ref.cost
    assert min(leaf_sizes(res.tree, X, np.arange(len(y)))) >= min_leaf
    assert res.stats["free_ct_calls"] + res.stats["ct_calls"] < ref.stats["ct_calls"]  # the rules prune


def test_min_leaf_time_limit_gap_and_numpy_path(monkeypatch):
    """The proven lower bound of an interrupted min-leaf search and the results within a
    gap stay below / within the exact optimum; the pure-numpy path (no numba) gives the
    same optima with its own (Python) min-leaf rules."""
    X, y = load("pima-indians-diabetes")
    exact = optimal_tree(X, y, 3, min_leaf=20)
    assert exact.status == "optimal"
    cut = optimal_tree(X, y, 3, min_leaf=20, time_limit=0.3)
    assert cut.lower_bound <= exact.cost <= cut.cost
    for gap in (2.0, 6.0):
        res = optimal_tree(X, y, 3, min_leaf=20, max_gap=gap)
        assert exact.cost <= res.cost <= exact.cost + gap and res.lower_bound <= exact.cost
    kernels = _kernels_module()
    if kernels is None or not kernels.AVAILABLE:
        return
    rng = np.random.default_rng(2700)
    for trial in range(12):
        X, y, k, weights = min_leaf_case(rng, 10, 45)
        depth = 2 + trial % 2
        ml = int(rng.integers(2, 7))
        compiled = optimal_tree(X, y, depth, weights=weights, n_classes=k, min_leaf=ml)
        monkeypatch.setattr(kernels, "ACTIVE", False)
        plain = optimal_tree(X, y, depth, weights=weights, n_classes=k, min_leaf=ml)
        ref = optimal_tree(X, y, depth, weights=weights, n_classes=k, min_leaf=ml, pruning=ALL_OFF)
        monkeypatch.setattr(kernels, "ACTIVE", kernels.AVAILABLE)
        assert compiled.cost == pytest.approx(ref.cost, abs=1e-9)
        assert plain.cost == pytest.approx(ref.cost, abs=1e-9)


def test_an_interrupted_min_leaf_root_bounds_the_optimum_from_below(monkeypatch):
    """The Python root (the compiled one switched off) with a minimum leaf size, stopped at
    each of its time checks in turn: the proven lower bound (the open intervals' bounds,
    with the relaxed bounds they carry) never exceeds the optimum, and the relaxed bounds
    an open interval carries are below both children's constrained optima of each of its
    splits (exact depth-two solves). The data are chosen so that some stops leave intervals
    with relaxed bounds open in the root's last feature."""
    from odt.backends.dp.contree import search as dp
    from odt.backends.dp.contree.bounds import _Timeout
    from odt.backends.dp.contree.depth_three import DepthThree

    rng = np.random.default_rng(11)
    X = rng.normal(size=(200, 3)).round(2)
    y = ((X[:, 0] + 0.7 * X[:, 1] * X[:, 2] + rng.normal(scale=0.7, size=200)) > 0).astype(int)
    monkeypatch.setattr(DepthThree, "takes_d3_ml", lambda self, node, level: False)
    exact = optimal_tree(X, y, 3, min_leaf=15)
    assert exact.status == "optimal" and exact.stats["intervals_pruned_relaxed"] > 0
    calls = {"n": 0, "stop": 0, "relaxed_open": 0}

    def check_time(self):
        calls["n"] += 1
        if calls["n"] == calls["stop"]:
            raise _Timeout

    root_lower_bound = dp._Solver.root_lower_bound

    def checked(self):  # every open interval's relaxed bounds hold for each of its splits' children
        if self.root_branch is not None and self.root_feature >= self.p - 1:
            stop, calls["stop"] = calls["stop"], -1  # the exact solves below run to their end
            f = self.feature_order(self.root)[self.root_feature]
            cuts = self.cuts(self.root, f)
            open_ = list(self.root_branch[0]) + ([self.root_current] if self.root_current else [])
            for i, j, aL, aR in open_:
                if aL > 0 or aR > 0:
                    calls["relaxed_open"] += 1
                    for w in range(i, j + 1):
                        left, right = self.children(self.root, f, int(cuts[w]))
                        assert aL <= optimal_tree(X[left.rows], y[left.rows], 2, min_leaf=15).cost + 1e-9
                        assert aR <= optimal_tree(X[right.rows], y[right.rows], 2, min_leaf=15).cost + 1e-9
            calls["stop"] = stop
        return root_lower_bound(self)

    monkeypatch.setattr(dp._Solver, "check_time", check_time)
    monkeypatch.setattr(dp._Solver, "root_lower_bound", checked)
    for stop in range(1, 400):
        calls["n"], calls["stop"] = 0, stop
        res = optimal_tree(X, y, 3, min_leaf=15)
        assert res.lower_bound <= exact.cost + 1e-9, (stop, res.lower_bound, exact.cost)
        assert res.cost >= exact.cost
        if res.status == "optimal":
            break
    assert calls["relaxed_open"] > 0


# --------------------------------------------------------------------------- (5) time limit


def test_time_limit_returns_valid_tree_and_bound():
    X, y = load("pima-indians-diabetes")
    seen = []
    res = optimal_tree(X, y, 4, time_limit=1.0, on_progress=lambda t, inc, lb: seen.append((t, inc, lb)))
    assert res.status == "feasible" and res.stats["timed_out"]
    assert res.seconds < 5.0
    check_result(res, X, y, 4)
    assert 0 <= res.lower_bound <= res.cost
    incumbents = [inc for _, inc, _ in seen]
    assert incumbents == sorted(incumbents, reverse=True)
    assert incumbents[-1] == res.cost


def test_zero_time_limit_gives_a_leaf_or_better():
    X, y = load("banknote")
    res = optimal_tree(X, y, 3, time_limit=0.0)
    check_result(res, X, y, 3)
    assert res.cost <= len(y) - np.bincount(y).max()


# --------------------------------------------------------------------------- other options


def test_integer_weights_equal_duplicated_rows():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(3, 30))
        X = rng.normal(size=(n, 3)).round(1)
        y = rng.integers(0, 2, size=n)
        w = rng.integers(1, 4, size=n)
        weighted = optimal_tree(X, y, 2, weights=w.astype(float))
        repeated = optimal_tree(np.repeat(X, w, axis=0), np.repeat(y, w), 2)
        assert weighted.cost == repeated.cost


def test_max_gap_stays_within_gap():
    X, y = load("haberman")
    exact = optimal_tree(X, y, 3).cost
    for gap in (1.0, 5.0):
        res = optimal_tree(X, y, 3, max_gap=gap)
        check_result(res, X, y, 3)
        assert exact <= res.cost <= exact + gap
        assert res.lower_bound <= exact


def test_progress_reports_final_optimum():
    X, y = load("iris")
    seen = []
    res = optimal_tree(X, y, 2, on_progress=lambda t, inc, lb: seen.append((inc, lb)))
    assert seen[-1] == (res.cost, res.cost) and res.status == "optimal"


def test_trivial_inputs():
    X = np.array([[1.0], [1.0], [1.0]])
    res = optimal_tree(X, np.array([0, 1, 1]), 3)
    assert res.tree == DPLeaf(1) and res.cost == 1.0
    res = optimal_tree(np.zeros((0, 2)), np.zeros(0, dtype=int), 2)
    assert res.cost == 0.0
    res = optimal_tree(np.array([[0.0], [1.0]]), np.array([1, 0]), 1)
    assert res.tree == DPSplit(0, 0.5, DPLeaf(1), DPLeaf(0))
    assert list(predict(res.tree, np.array([[-1.0], [0.5], [2.0]]))) == [1, 1, 0]
    # equal cost: a leaf beats a split, the lowest class wins
    res = optimal_tree(np.array([[0.0], [1.0]]), np.array([1, 0]), 1, weights=np.array([1.0, 1.0]), min_leaf=2)
    assert res.tree == DPLeaf(0)


# --------------------------------------------------------------------------- compiled kernels


def _kernels_module():
    mod = sys.modules.get(optimal_tree.__module__)
    return getattr(mod, "_kernels", None)


@pytest.mark.parametrize("seed", range(4))
def test_numba_and_numpy_paths_give_identical_trees(seed, monkeypatch):
    """backends/dp/contree/kernels.py (numba) and the pure-numpy kernels: same trees, costs, bounds."""
    kernels = _kernels_module()
    if kernels is None or not kernels.AVAILABLE:
        pytest.skip("numba not installed")
    rng = np.random.default_rng(100 + seed)
    for trial in range(6):
        n = int(rng.integers(20, 120))
        p = int(rng.integers(1, 5))
        k = int(rng.integers(2, 5))
        X = rng.integers(0, int(rng.integers(3, 30)), size=(n, p)).astype(float)
        if trial % 2:
            X = X + rng.normal(scale=0.01, size=X.shape)
        y = rng.integers(0, k, size=n)
        weights = None
        if trial == 3:
            weights = rng.integers(1, 4, size=n).astype(float)
        elif trial == 5:
            weights = rng.random(n) + 0.1
        for depth in (2, 3):
            out = {}
            for active in (True, False):
                monkeypatch.setattr(kernels, "ACTIVE", active)
                out[active] = optimal_tree(X, y, depth, weights=weights, n_classes=k, canonical_ties=True)
            a, b = out[True], out[False]
            assert a.status == b.status == "optimal"
            if trial == 5:
                # fractional weights: costs that are equal in exact arithmetic may differ in
                # the last bits, and the tie rule then holds up to the solver's tolerance,
                # so the two search orders may pick different (equally good) trees
                assert a.cost == pytest.approx(b.cost, abs=1e-9)
                assert errors(a.tree, X, y, weights) == pytest.approx(b.cost, abs=1e-9)
            else:
                assert a.tree == b.tree, (seed, trial, depth)
                assert a.cost == b.cost and a.lower_bound == b.lower_bound
    monkeypatch.setattr(kernels, "ACTIVE", kernels.AVAILABLE)
    # the pruning switches and the anytime callback also go through the compiled search
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    for rules in (PruningRules(), ALL_OFF, PruningRules(neighbourhood=False)):
        trees = []
        for active in (True, False):
            monkeypatch.setattr(kernels, "ACTIVE", active)
            trees.append(optimal_tree(X, y, 2, pruning=rules).tree)
        assert trees[0] == trees[1]


# --------------------------------------------------------------------------- many classes


@pytest.mark.parametrize("seed", range(3))
def test_the_many_class_kernels_give_the_same_trees(seed, monkeypatch):
    """Issue 24: above ``WIDE_CLASSES`` classes the compiled search uses the kernels of
    kernels_wide.py (time and memory independent of the number of classes). Forced on
    for a few classes, they give the per-class kernels' trees (integral weights: the same
    values, so the same steps) at depth one, two and three, with and without a minimum
    leaf size."""
    kernels = _kernels_module()
    if kernels is None or not kernels.AVAILABLE:
        pytest.skip("numba not installed")
    from odt.backends.dp.contree import kernels_wide

    rng = np.random.default_rng(500 + seed)
    for trial in range(5):
        n = int(rng.integers(20, 150))
        p = int(rng.integers(1, 4))
        k = int(rng.integers(3, 7))
        X = rng.integers(0, int(rng.integers(3, 30)), size=(n, p)).astype(float)
        y = rng.integers(0, k, size=n)
        weights = rng.integers(1, 4, size=n).astype(float) if trial == 3 else None
        fractional = trial == 4
        if fractional:
            weights = rng.random(n) + 0.1
        for depth, min_leaf in ((1, 1), (1, 3), (2, 1), (3, 1), (2, 4), (3, 5)):
            out = {}
            for wide in (False, True):
                monkeypatch.setattr(kernels_wide, "WIDE_CLASSES", 2 if wide else 1000)
                out[wide] = optimal_tree(X, y, depth, weights=weights, n_classes=k, min_leaf=min_leaf,
                                         canonical_ties=True)
            a, b = out[False], out[True]
            assert a.status == b.status == "optimal"
            if fractional:
                assert a.cost == pytest.approx(b.cost, abs=1e-9)
                assert errors(b.tree, X, y, weights) == pytest.approx(a.cost, abs=1e-9)
            else:
                assert a.tree == b.tree, (seed, trial, depth, min_leaf)
                assert a.cost == b.cost and a.lower_bound == b.lower_bound


def test_the_greedy_bound_of_many_classes_scores_splits_as_the_tensor_code():
    """``kernels_wide.gini_wide`` against the (K, p, m) numpy formula it replaces."""
    kernels = _kernels_module()
    if kernels is None or not kernels.AVAILABLE:
        pytest.skip("numba not installed")
    from odt.backends.dp.contree.kernels_wide import gini_wide

    rng = np.random.default_rng(7)
    p, m, K = 3, 60, 9
    cls = rng.integers(0, K, size=(p, m))
    wts = rng.integers(1, 4, size=(p, m)).astype(float)
    wts[1:] = wts[0]  # one set of rows in three orders: the same weight per row
    cls[1:] = cls[0]
    for f in (1, 2):
        perm = rng.permutation(m)
        cls[f], wts[f] = cls[0][perm], wts[0][perm]
    tot = np.bincount(cls[0], weights=wts[0], minlength=K)
    C = np.cumsum(np.stack([(cls == k) * wts for k in range(K)]), axis=2)
    nL = C.sum(axis=0)
    nR = tot.sum() - nL
    R = tot[:, None, None] - C
    with np.errstate(divide="ignore", invalid="ignore"):
        want = (C * C).sum(axis=0) / nL + (R * R).sum(axis=0) / nR
    score, gl, gr = gini_wide(cls, wts, tot)
    inner = (nL > 0) & (nR > 0)
    assert np.allclose(score[inner], want[inner]) and np.array_equal(gl, nL) and np.array_equal(gr, nR)


def test_a_class_per_row_is_solved_without_class_sized_work():
    """Issue 24: 10,000 rows, each its own class (1.6 GB of class weights per depth-two
    node and seconds per evaluation before): the optimum of a depth-two tree, its four
    leaves right, in seconds."""
    kernels = _kernels_module()
    if kernels is None or not kernels.AVAILABLE:
        pytest.skip("numba not installed")
    rng = np.random.default_rng(3)
    n = 10_000
    X = rng.random((n, 2))
    y = np.arange(n)
    res = optimal_tree(X, y, 1, n_classes=n)
    assert res.status == "optimal" and res.cost == n - 2
    res = optimal_tree(X[:2000], y[:2000], 2, n_classes=n)
    assert res.status == "optimal" and res.cost == 2000 - 4
    res = optimal_tree(X, y, 2, n_classes=n, time_limit=3)
    assert res.cost == n - 4 and res.lower_bound <= res.cost and res.seconds < 10
