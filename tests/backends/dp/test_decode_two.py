"""The compiled read-out of depth-two trees (``streed/kernels_decode.decode_two``, used by
``BoundedSearch.decode_best``) against the numpy recursion it replaces (``Search.solve`` and
``Search.decode``): on random 0/1 matrices with class weights (a cost matrix's), cost
complexity, node budgets and minimum leaf and node sizes, the tree it reads has the value
``_small`` reports, and that value is the numpy path's."""
from __future__ import annotations

import numpy as np
import pytest

from odt.backends.dp.streed import kernels
from odt.backends.dp.streed.bounded import BoundedSearch
from odt.backends.dp.streed.branch import Ingredients
from odt.backends.dp.task import Misclassification

pytestmark = pytest.mark.skipif(not kernels.AVAILABLE, reason="numba is not installed")


def _value(raw: tuple, search: BoundedSearch, S: np.ndarray, c: float) -> tuple[float, int]:
    """(weighted errors + c * nodes, nodes) of a decoded tree on rows ``S``; inf when a leaf
    is smaller than the minimum leaf size."""
    if raw[0] == "leaf":
        if S.shape[0] < search.min_leaf:
            return float("inf"), 0
        return search.task.leaf_cost_of(search.class_totals(S), raw[1]), 0
    if S.shape[0] < search.min_node:
        return float("inf"), 0
    col = search.B[S, raw[1]]
    (a, na), (b, nb) = _value(raw[2], search, S[~col], c), _value(raw[3], search, S[col], c)
    return a + b + c, na + nb + 1


@pytest.mark.parametrize("seed", range(40))
def test_decode_two_matches_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m, K = int(rng.integers(8, 90)), int(rng.integers(1, 9)), int(rng.choice([2, 2, 3]))
    B = rng.random((n, m)) < rng.uniform(0.2, 0.8)
    y = np.where(rng.random(n) < 0.7, B[:, 0].astype(np.int64) % K, rng.integers(0, K, size=n)).astype(np.int64)
    cw = rng.integers(1, 5, size=K).astype(np.float64)
    w = cw[y]
    c = float(rng.choice([0.0, 0.5, 1.0, 3.0]))
    min_leaf, min_node = int(rng.choice([1, 1, 2, 4])), int(rng.choice([1, 1, 5]))
    ingr = Ingredients(np.zeros(m, np.int64), np.zeros(m, np.int64), (), (), (), ())
    args = (B, y, w, Misclassification(n_classes=K, node_cost=c), ingr, min_leaf, min_node,
            np.zeros((0, 2), np.int64), True, None)
    fast = BoundedSearch(*args, c=c)
    slow = BoundedSearch(*args, c=c)
    assert fast.compiled_three
    slow.compiled_three = False  # the numpy recursion
    for trial in range(4):
        S = np.sort(rng.choice(n, size=int(rng.integers(max(2, n // 3), n + 1)), replace=False)).astype(np.int64)
        if S.shape[0] < min_leaf:
            continue
        for d in (1, 2):
            for k in range((1 << d)):
                want, _ = slow._small(S, d, k, ingr.initial(), decoding=True)
                got, _ = fast._small(S, d, k, ingr.initial())
                assert got == pytest.approx(want, abs=1e-9)
                raw = fast.decode_best(S, d, k, ingr.initial())
                value, nodes = _value(raw, fast, S, c)
                assert nodes <= min(k, (1 << d) - 1)
                assert value == pytest.approx(want, abs=1e-9), (raw, d, k)
