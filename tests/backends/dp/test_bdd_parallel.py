"""The errors-only enumeration split over two processes (``backends/dp/bdd/parallel``)
finds the same least errors and the same (lexicographically first) subset as the serial
enumeration and as a direct count of every subset."""
from __future__ import annotations

import multiprocessing as mp
from itertools import combinations

import numpy as np
import pytest

from odt.backends.dp.bdd.counts import cell_weights, merge_rows, prefix_errors, prefixes
from odt.backends.dp.bdd.parallel import least_errors, workers


@pytest.mark.parametrize("seed, h, classes", [(0, 2, 2), (1, 3, 2), (2, 3, 3), (3, 4, 2)])
def test_two_processes_equal_the_direct_count(seed, h, classes):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(30, 7)).astype(bool)
    y = rng.integers(0, classes, size=30)
    rows = merge_rows(X, y, rng.integers(1, 3, size=30).astype(float), classes)
    direct = min((float((W.sum(axis=1) - W.max(axis=1)).sum()), s)
                 for s in combinations(range(7), h) for W in [cell_weights(rows, s)])
    serial = min((float(E.min()), q + tuple(start + int(i) for i in np.unravel_index(int(np.argmin(E)), E.shape)))
                 for q in prefixes(7, h) for start, E in [prefix_errors(rows, q)])
    errors, subset, complete = least_errors(rows, h, None, -1.0, 2)
    assert complete
    assert errors == pytest.approx(direct[0]) == pytest.approx(serial[0])
    assert subset == direct[1] == serial[1]


def _solve_bdd(parallel_from: float | None) -> tuple[int, float]:
    """A small BDD solve; ``parallel_from = 0`` sends it to the parallel enumeration."""
    import odt
    from odt.backends.dp.bdd import search

    if parallel_from is not None:
        search._PARALLEL_FROM = parallel_from
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(60, 8))
    data = {f"f{j}": X[:, j] for j in range(8)}
    data["class"] = (X[:, 0] ^ X[:, 1] ^ (rng.random(60) < 0.1)).astype(int)
    res = odt.compile("model bdd(depth = 3)\nminimize errors", data=data).solve(backend="dp")
    return workers(), float(res.objective)


def test_a_pool_worker_enumerates_in_its_own_process():
    # A multiprocessing.Pool worker is daemonic and may not start processes: the
    # enumeration stays in it instead of failing (it did, inside bench/diagrams.py's pool).
    with mp.get_context("spawn").Pool(1) as pool:
        n, objective = pool.map(_solve_bdd, [0.0])[0]
    assert n == 1
    assert objective == _solve_bdd(None)[1]
