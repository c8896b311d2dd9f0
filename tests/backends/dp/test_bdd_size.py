"""The order of a BDD's levels (``backends/dp/bdd/size``): for a fixed truth table the
engine keeps the ordering with the fewest decoded decision nodes, the same count the
decoder and evaluator measure, under every bias for the cells no row reaches."""
from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest

from odt.backends.dp.bdd.size import decoded_size, permute_cells, permute_table, smallest_order


@pytest.mark.parametrize("bias", ["S", "C", "P"])
@pytest.mark.parametrize("seed", range(12))
def test_the_smallest_order_is_the_least_size_over_every_order(bias, seed):
    rng = np.random.default_rng(seed)
    h = int(rng.integers(1, 5))
    W = rng.integers(0, 4, size=(1 << h, 2)).astype(float)
    W[rng.random(1 << h) < 0.3] = 0.0  # some cells no row reaches
    table = [int(c) for c in rng.integers(0, 2, size=1 << h)]
    order, permuted, nodes = smallest_order(W, table, bias)
    sizes = {o: decoded_size(permute_table(table, o), permute_cells(W, o), bias) for o in permutations(range(h))}
    assert nodes == min(sizes.values()) == sizes[order]
    assert permuted == permute_table(table, order)


def test_a_permuted_table_follows_the_permuted_cells():
    W = np.arange(16, dtype=float).reshape(8, 2)
    table = list(range(8))
    for order in permutations(range(3)):
        assert [int(w) // 2 for w in permute_cells(W, order)[:, 0]] == permute_table(table, order)
