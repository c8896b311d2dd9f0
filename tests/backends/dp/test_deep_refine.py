"""The deep search's subtree re-solving (backends/dp/contree/refine.py; issue 27): it only
ever lowers the cost, what it reports is the tree's cost, and with time every subtree it
visits ends optimal for its rows (ConTree's optimum, itself checked against brute force in
test_contree_*), on one core and on two."""
from __future__ import annotations

import math

import numpy as np
import pytest

from odt.backends.dp.contree import optimal_tree
from odt.backends.dp.contree.deep import _Parallel, _Serial
from odt.backends.dp.contree.lds import _Lds
from odt.backends.dp.contree.refine import improve, positions, splice, subtree_cost
from odt.backends.dp.contree.search import _Solver
from odt.backends.dp.contree.tree import DPLeaf, DPSplit, PruningRules, predict


def _data(seed: int):
    rng = np.random.default_rng(seed)
    n, p, k = int(rng.integers(60, 140)), int(rng.integers(2, 4)), int(rng.integers(2, 4))
    X = rng.integers(0, 9, size=(n, p)).astype(float)
    y = rng.integers(0, k, size=n)
    w = rng.integers(1, 4, size=n).astype(float) if seed % 2 else np.ones(n)
    return X, y, w, k


def _cost(tree, X, y, w) -> float:
    return float(w[predict(tree, X) != y].sum())


def _bad_tree(X: np.ndarray, depth: int, rng) -> DPSplit | DPLeaf:
    """A full tree of random splits, every leaf predicting class 0."""
    if depth == 0:
        return DPLeaf(0)
    f = int(rng.integers(0, X.shape[1]))
    return DPSplit(f, float(rng.integers(0, 9)) + 0.5, _bad_tree(X, depth - 1, rng), _bad_tree(X, depth - 1, rng))


def test_positions_and_splice_address_the_same_subtree():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    tree = DPSplit(0, 1.5, DPSplit(0, 0.5, DPLeaf(0), DPLeaf(1)), DPLeaf(2))
    found = {path: rows.tolist() for path, rows, _ in positions(tree, X, np.arange(4), 1)}
    assert found == {(0,): [0, 1], (1,): [2, 3]}
    assert [p for p, _, _ in positions(tree, X, np.arange(4), 2)] == [(0, 0), (0, 1)]  # the leaf (1,) has no level 2
    new = splice(tree, (0, 1), DPLeaf(7))
    assert predict(new, X).tolist() == [0, 7, 2, 2]


@pytest.mark.parametrize("seed", range(6))
def test_with_time_every_subtree_it_visits_ends_optimal_and_the_cost_is_the_trees(seed):
    X, y, w, k = _data(seed)
    depth = 5
    start = _bad_tree(X, depth, np.random.default_rng(100 + seed))
    cost0 = _cost(start, X, y, w)
    S = _Solver(X, y, w, k, depth, 1, 0.0, math.inf, PruningRules(), None, 0.0)
    S.root = S.root_node()
    run = _Serial(_Lds(S), S.root, depth)
    offered: list[float] = []
    cost, tree = improve(start, cost0, X, y, w, depth, math.inf, run.refine, lambda t: offered.append(t[0]))
    assert cost == pytest.approx(_cost(tree, X, y, w))
    assert cost <= cost0 and offered == sorted(offered, reverse=True)
    if offered:
        assert offered[-1] == pytest.approx(cost)
    # the last round (r = depth - 1 = 4) re-solved the root's children; each is optimal
    for _, rows, sub in positions(tree, X, np.arange(len(y)), 1):
        best = optimal_tree(X[rows], y[rows], depth - 1, weights=w[rows], n_classes=k).cost
        assert subtree_cost(sub, X, y, w, rows) == pytest.approx(best)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("team", [False, True])
def test_from_any_start_the_finish_proves_contrees_optimum(seed, team):
    """The last phase on one core (re-solving, then the complete search) and on two (the
    portfolio: one worker searches at once, the other re-solves and joins it)."""
    X, y, w, k = _data(seed)
    depth = 4
    start = _bad_tree(X, depth, np.random.default_rng(200 + seed))
    cost0 = _cost(start, X, y, w)
    S = _Solver(X, y, w, k, depth, 1, 0.0, math.inf, PruningRules(), None, 0.0)
    S.root = S.root_node()
    shared = ticket = None
    if team:
        import multiprocessing as mp

        shared = mp.get_context("fork").RawValue("d", cost0)
        ticket = mp.get_context("fork").Value("i", 0)
    lds = _Lds(S, shared, ticket)
    run = _Parallel(lds, S.root, depth, math.inf, lambda: None) if team else _Serial(lds, S.root, depth)
    best = [(cost0, start)]

    def offer(found):
        if found is not None and found[0] < best[0][0]:
            best[0] = found

    try:
        proven = run.finish(start, cost0, cost0 - S.d_strict, math.inf, offer, {})
    finally:
        run.close()
    assert proven
    want = optimal_tree(X, y, depth, weights=w, n_classes=k).cost
    assert best[0][0] == pytest.approx(want)
    assert _cost(S.materialise(best[0][1]), X, y, w) == pytest.approx(want)  # (lazy depth-two leaves)


def test_a_share_that_runs_out_keeps_the_incumbent():
    X, y, w, k = _data(3)
    depth = 5
    start = _bad_tree(X, depth, np.random.default_rng(7))
    cost0 = _cost(start, X, y, w)
    S = _Solver(X, y, w, k, depth, 1, 0.0, math.inf, PruningRules(), None, 0.0)
    S.root = S.root_node()
    run = _Serial(_Lds(S), S.root, depth)
    # every task's share has passed before it starts: nothing changes, nothing raises
    stats: dict = {}
    cost, tree = improve(start, cost0, X, y, w, depth, -1.0, run.refine, lambda t: None, 1, stats)
    assert (cost, tree) == (cost0, start)
