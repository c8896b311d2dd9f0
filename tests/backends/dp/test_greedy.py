"""The greedy start (backends/dp/greedy.py; issue 24, item 7): a CART-style tree that
respects the program's depth, minimum leaf size, threshold ranges and caps, is never worse
than scikit-learn's CART of the same depth on real data, and is what a time-limited solve
returns at least."""
from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import odt
from odt.backends.dp.greedy import greedy_tree
from odt.compiler.search import Level, SplitDim, TreeSearch

ROOT = Path(__file__).resolve().parents[3]
PIMA = ROOT / "examples" / "data" / "pima-indians-diabetes.csv"


def _problem(X, y, depth, **kw) -> TreeSearch:
    X = np.ascontiguousarray(X, dtype=np.float64)
    dims = kw.pop("dims", tuple(SplitDim(f"x{j}") for j in range(X.shape[1])))
    classes = tuple(range(int(y.max()) + 1))
    return TreeSearch(X, dims, y.astype(np.int64), kw.pop("weights", np.ones(len(y))), np.arange(len(y)), classes,
                      tuple(f"x{j}" for j in range(X.shape[1])), depth, **kw)


def _route(tree, x) -> tuple:
    while tree[0] != "leaf":
        tree = tree[3] if x[tree[1]] <= tree[2] else tree[4]
    return tree


def _leaves(tree, X, rows=None):
    """(leaf, rows reaching it) for every leaf."""
    rows = np.arange(len(X)) if rows is None else rows
    if tree[0] == "leaf":
        return [(tree, rows)]
    go = X[rows, tree[1]] <= tree[2]
    return _leaves(tree[3], X, rows[go]) + _leaves(tree[4], X, rows[~go])


def _errors(tree, X, y, w=None) -> float:
    w = np.ones(len(y)) if w is None else w
    return float(sum(w[i] for i in range(len(y)) if _route(tree, X[i])[1] != y[i]))


def _nodes(tree) -> int:
    return 0 if tree[0] == "leaf" else 1 + _nodes(tree[3]) + _nodes(tree[4])


def _depth(tree) -> int:
    return 0 if tree[0] == "leaf" else 1 + max(_depth(tree[3]), _depth(tree[4]))


@pytest.mark.parametrize("seed", range(20))
def test_the_tree_respects_depth_minimum_leaf_size_and_node_cap(seed):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(5, 60)), int(rng.integers(1, 5))
    X = rng.integers(0, 6, size=(n, p)).astype(float)
    y = rng.integers(0, 3, size=n)
    depth, m = int(rng.integers(1, 5)), int(rng.integers(1, 6))
    cap = None if seed % 2 else int(rng.integers(0, 5))
    tree = greedy_tree(_problem(X, y, depth, min_leaf=m, max_nodes=cap))
    assert tree is not None
    assert _depth(tree) <= depth
    assert cap is None or _nodes(tree) <= cap
    for leaf, rows in _leaves(tree, X):
        assert tree[0] == "leaf" or len(rows) >= m  # (a single leaf holds every row)
        if len(rows):
            counts = np.bincount(y[rows], minlength=3)
            assert counts[leaf[1]] == counts.max()  # each leaf predicts its majority


def test_binary_and_ordered_dimensions_mix():
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.integers(0, 2, 80), rng.normal(size=80)])
    y = ((X[:, 0] == 1) ^ (X[:, 1] > 0.3)).astype(int)
    from odt.compiler.data import Feature

    dims = (SplitDim("b", Feature("b", "binary")), SplitDim("x1"))
    tree = greedy_tree(_problem(X, y, 2, dims=dims))
    assert _errors(tree, X, y) == 0


def test_a_threshold_range_keeps_every_cut_inside_it():
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 10, size=(100, 1))
    y = (X[:, 0] > 7).astype(int)
    tree = greedy_tree(_problem(X, y, 2, dims=(SplitDim("x0", cut_range=(2.0, 5.0)),)))

    def cuts(t):
        return [] if t[0] == "leaf" else [t[2]] + cuts(t[3]) + cuts(t[4])

    assert cuts(tree) and all(2.0 <= c <= 5.0 for c in cuts(tree))


@pytest.mark.parametrize("alpha", [0.0, 0.5, 2.0, 7.0])
def test_pruning_takes_the_best_subtree_for_the_objective(alpha):
    """errors + alpha * nodes: no pruning of the grown tree (tried by brute force over
    which internal nodes become leaves) is better, and none under a node cap either."""
    rng = np.random.default_rng(11)
    X = rng.integers(0, 4, size=(60, 3)).astype(float)
    y = rng.integers(0, 2, size=60)
    full = greedy_tree(_problem(X, y, 3))
    got = greedy_tree(_problem(X, y, 3, levels=(Level(nodes=Fraction(alpha).limit_denominator(100)),)))

    def prunings(t):
        if t[0] == "leaf":
            yield t
            return
        rows = [i for i in range(len(y)) if _contains(full, t, X[i])]
        counts = np.bincount(y[rows], minlength=2)
        yield ("leaf", int(np.argmax(counts)))
        for a, b in itertools.product(list(prunings(t[3])), list(prunings(t[4]))):
            yield ("split", t[1], t[2], a, b)

    best = min(_errors(t, X, y) + alpha * _nodes(t) for t in prunings(full))
    assert _errors(got, X, y) + alpha * _nodes(got) == pytest.approx(best)
    for cap in range(4):
        capped = greedy_tree(_problem(X, y, 3, max_nodes=cap))
        assert _nodes(capped) <= cap
        assert _errors(capped, X, y) == pytest.approx(min(_errors(t, X, y) for t in prunings(full) if _nodes(t) <= cap))


def _contains(root, node, x) -> bool:
    """Whether row ``x`` passes through ``node`` of ``root``."""
    t = root
    while True:
        if t is node:
            return True
        if t[0] == "leaf":
            return False
        t = t[3] if x[t[1]] <= t[2] else t[4]


@pytest.mark.parametrize("depth", [2, 3, 5])
def test_never_more_errors_than_scikit_learn_cart(depth):
    from sklearn.tree import DecisionTreeClassifier

    raw = np.genfromtxt(PIMA, delimiter=",", skip_header=1)
    X, y = raw[:, :-1], raw[:, -1].astype(int)
    tree = greedy_tree(_problem(X, y, depth))
    cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
    assert _errors(tree, X, y) <= int((cart.predict(X) != y).sum())


def test_a_stopped_dp_solve_returns_at_least_the_greedy_tree():
    """Issue 24's reproduction in small: depth 5 on the Pima data with a 2 s limit gave the
    constant classifier (268 errors) where CART has 125."""
    from sklearn.tree import DecisionTreeClassifier

    prog = odt.compile(f'data "{PIMA}" {{ target class }}\nmodel tree(depth <= 5)\nminimize errors\n')
    res = prog.solve(backend="dp", time_limit=2)
    raw = np.genfromtxt(PIMA, delimiter=",", skip_header=1)
    X, y = raw[:, :-1], raw[:, -1].astype(int)
    cart = int((DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y).predict(X) != y).sum())
    assert res.verified and res.status in ("feasible", "optimal")
    assert res.train_errors <= cart


def test_the_greedy_start_respects_the_program_or_is_not_used():
    """A program whose constraints the greedy tree breaks (a path order) still gets a
    verified answer: the start is re-evaluated and dropped when infeasible."""
    prog = odt.compile(f'data "{PIMA}" {{ target class }}\nmodel tree(depth <= 2)\nminimize errors\n'
                       "subject to { every path: Age before Glucose }\n")
    res = prog.solve(backend="dp", time_limit=20)
    assert res.verified and res.status == "optimal"


@pytest.mark.parametrize("backend", ["maxsat", "cp"])
def test_a_stopped_solver_backend_returns_at_least_the_greedy_tree(backend):
    from sklearn.tree import DecisionTreeClassifier

    prog = odt.compile(f'data "{PIMA}" {{ target class }}\nmodel tree(depth <= 4)\nminimize errors\n')
    res = prog.solve(backend=backend, time_limit=3)
    raw = np.genfromtxt(PIMA, delimiter=",", skip_header=1)
    X, y = raw[:, :-1], raw[:, -1].astype(int)
    cart = int((DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y).predict(X) != y).sum())
    assert res.verified and res.train_errors <= cart
