"""The bounded errors-only subset enumeration (``backends/dp/bdd/neighbours``, on one or
two processes): the similarity bound it prunes with is valid, and it finds the same least
errors and the same (first in the original numbering) subset as a direct count of every
subset, while counting only a part of them on data with a dominant feature."""
from __future__ import annotations

import multiprocessing as mp
from itertools import combinations
from math import comb

import numpy as np
import pytest

from odt.backends.dp.bdd import neighbours
from odt.backends.dp.bdd.counts import Rows, cell_weights, merge_rows, prefix_errors, prefixes


def _errors(rows: Rows, subset: tuple[int, ...]) -> float:
    W = cell_weights(rows, subset)
    return float((W.sum(axis=1) - W.max(axis=1)).sum())


def _direct(rows: Rows, h: int) -> tuple[float, tuple[int, ...]]:
    return min((_errors(rows, s), s) for s in combinations(range(rows.X.shape[1]), h))


def _rows(seed: int, n: int, p: int, classes: int, near: int = 0) -> Rows:
    """Random rows; with ``near``, features 1..near are copies of feature 0 with a few
    cells flipped (a cluster), and feature 0 nearly decides the class."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p)).astype(bool)
    y = rng.integers(0, classes, size=n)
    if near:
        y = np.where(rng.random(n) < 0.8, X[:, 0].astype(int) % classes, y)
        for f in range(1, near + 1):
            X[:, f] = X[:, 0] ^ (rng.random(n) < 0.03)
    return merge_rows(X, y, rng.integers(1, 3, size=n).astype(float), classes)


def test_the_distance_bounds_the_change_of_errors_when_one_feature_is_replaced():
    rows = _rows(0, 60, 8, 2)
    D = neighbours.distances(rows)
    rng = np.random.default_rng(1)
    for _ in range(200):
        S = tuple(rng.choice(8, size=3, replace=False))
        f = int(rng.integers(8))
        if f in S:
            continue
        replaced = (f,) + S[1:]
        assert abs(_errors(rows, S) - _errors(rows, replaced)) <= D[S[0], f] + 1e-9


def test_a_complement_is_at_distance_zero():
    X = np.array([[1, 0, 1], [0, 1, 1], [1, 0, 0], [0, 1, 0]], bool)
    rows = merge_rows(X, np.array([0, 1, 1, 0]), np.ones(4), 2)
    assert neighbours.distances(rows)[0, 1] == 0


def test_every_feature_is_within_its_clusters_radius_of_its_centre():
    rows = _rows(2, 80, 20, 2, near=6)
    D = neighbours.distances(rows)
    cent, owner, dist = neighbours.farthest_centres(D, 5)
    assert len(cent) == 5 and cent[0] == 0
    assert (owner[cent] == np.arange(5)).all()
    assert np.allclose(dist, D[np.arange(20), cent[owner]])
    assert (dist <= D[:, cent].min(axis=1) + 1e-9).all()  # the nearest centre


@pytest.mark.parametrize("seed, h, classes, near", [(0, 3, 2, 0), (1, 3, 3, 0), (2, 4, 2, 0), (3, 3, 2, 5),
                                                    (4, 4, 2, 5), (5, 4, 3, 4), (6, 5, 2, 4)])
@pytest.mark.parametrize("parts", [1, 2])
def test_the_bounded_enumeration_equals_the_direct_count(seed, h, classes, near, parts, monkeypatch):
    monkeypatch.setattr(neighbours, "_PARALLEL_FROM", 0.0)  # fork whenever parts > 1
    rows = _rows(seed, 70, 11, classes, near)
    errors, subset, complete, stats, lower = neighbours.least_errors(rows, h, None, -1.0, parts)
    assert complete and lower == errors
    best, first = _direct(rows, h)
    assert errors == pytest.approx(best)
    assert subset == first
    assert ("processes" in stats) == (parts > 1)


def test_thresholds_of_few_attributes_with_a_decisive_one_leave_most_subsets_uncounted():
    """Binarised numeric data (each attribute's thresholds are near one another, so
    clusters are tight) where one attribute nearly decides the class."""
    rng = np.random.default_rng(7)
    values = rng.random((200, 3))
    X = np.column_stack([values[:, a] <= t for a in range(3) for t in np.linspace(0.02, 0.98, 30)])
    y = (values[:, 0] > 0.5).astype(int)
    y[:12] = 1 - y[:12]
    rows = merge_rows(X, y, np.ones(len(y)), 2)
    errors, subset, complete, stats, _ = neighbours.least_errors(rows, 3, None, -1.0)
    serial = min((float(E.min()), q + tuple(start + int(i) for i in np.unravel_index(int(np.argmin(E)), E.shape)))
                 for q in prefixes(rows.X.shape[1], 3) for start, E in [prefix_errors(rows, q)])
    assert complete and (errors, subset) == serial
    counted = int(stats.split(", ")[1].split(" of ")[0])
    assert counted < comb(rows.X.shape[1], 3) / 2


def test_a_deadline_in_the_past_returns_what_it_has_as_incomplete():
    rows = _rows(8, 70, 12, 2)
    errors, subset, complete, _, lower = neighbours.least_errors(rows, 3, 0.0, -1.0)
    assert not complete and lower == -1.0  # stage 1 did not finish: the given floor


@pytest.mark.parametrize("h, stop_after", [(3, 2), (3, 5), (4, 3), (4, 20)])
def test_a_search_stopped_midway_bounds_the_optimum_from_below(h, stop_after, monkeypatch):
    rows = _rows(9, 80, 12, 2, near=4)
    calls = [0]

    def out_of_time(self) -> bool:
        if self.level:  # stage 2: stop after a few prefixes
            calls[0] += 1
        return calls[0] > stop_after

    monkeypatch.setattr(neighbours._Search, "out_of_time", out_of_time)
    errors, subset, complete, _, lower = neighbours.least_errors(rows, h, None, -1.0)
    best, _ = _direct(rows, h)
    assert not complete
    assert -1.0 <= lower <= best + 1e-9 <= errors + 1e-9


def _solve_bdd(parallel_from: float | None) -> tuple[int, float]:
    """A small BDD solve; ``parallel_from = 0`` sends it to the forked stage 2."""
    import odt
    from odt.backends.dp.bdd import parallel

    if parallel_from is not None:
        neighbours._PARALLEL_FROM = parallel_from
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(60, 10))
    data = {f"f{j}": X[:, j] for j in range(10)}
    data["class"] = (X[:, 0] ^ X[:, 1] ^ (rng.random(60) < 0.1)).astype(int)
    res = odt.compile("model bdd(depth = 3)\nminimize errors", data=data).solve(backend="dp")
    return parallel.workers(), float(res.objective)


def test_a_pool_worker_enumerates_in_its_own_process():
    # A multiprocessing.Pool worker is daemonic and may not start processes: the
    # enumeration stays in it instead of failing (it did, inside bench/diagrams.py's pool).
    with mp.get_context("spawn").Pool(1) as pool:
        n, objective = pool.map(_solve_bdd, [0.0])[0]
    assert n == 1
    assert objective == _solve_bdd(None)[1]


@pytest.mark.parametrize("objective", ["errors + 0.5 * nodes", "errors then nodes",
                                       "errors\nsubject to { nodes <= 4 }"])
@pytest.mark.parametrize("seed, depth", [(0, 3), (1, 4), (2, 3)])
def test_bdds_with_sizes_in_two_processes_equal_one_process(objective, seed, depth, monkeypatch):
    """The sized enumeration (``visit_subsets``) forked into two parts: each worker sizes
    the subsets of its share against its own incumbent and hands it back; the best of
    them has the same objective as the search in one process."""
    import odt
    from odt.backends.dp.bdd import parallel

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(90, 11))
    X[:, 1] = X[:, 0] ^ (rng.random(90) < 0.05)  # a cluster
    data = {f"f{j}": X[:, j] for j in range(11)}
    data["class"] = np.where(rng.random(90) < 0.8, X[:, 0] ^ X[:, 2], rng.integers(0, 2, 90))
    program = odt.compile(f"model bdd(depth = {depth})\nminimize {objective}", data=data)
    monkeypatch.setattr(neighbours, "_PARALLEL_FROM", 0.0)
    monkeypatch.setattr(parallel, "workers", lambda: 1)
    one = program.solve(backend="dp")
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    two = program.solve(backend="dp")
    assert one.status == two.status == "optimal" and one.verified and two.verified
    assert two.objective_levels == one.objective_levels
    assert "in 2 processes" in two.log and "processes" not in one.log
