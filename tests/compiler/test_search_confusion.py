"""A cost matrix as reweighted misclassification (``compiler/search_confusion.reweigh``):
every path -- one weight for every row, integral weights, fractional weights -- gives rows
whose weighted errors times ``factor`` are the cost ``sum w * amounts[a] * [wrong]`` of
every labelling, exactly."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from odt.compiler.search import SplitDim, TreeSearch
from odt.compiler.search_confusion import reweigh


def _search(y: np.ndarray, K: int) -> TreeSearch:
    n = len(y)
    return TreeSearch(np.zeros((n, 1)), (SplitDim("x"),), y, np.ones(n), np.arange(n), tuple(range(K)), ("x",), 1)


def _cost(labels_pred: np.ndarray, y: np.ndarray, w: np.ndarray, amounts, labels) -> Fraction:
    """sum over rows of w * amounts[y] where the prediction is not the row's label."""
    return sum((Fraction(float(wi)).limit_denominator(10**9) * Fraction(amounts[a])
                for a, wi, p in zip(y.tolist(), w.tolist(), labels_pred.tolist()) if p != labels[a]), Fraction(0))


@pytest.mark.parametrize("seed", range(40))
def test_the_reweighted_rows_cost_what_the_matrix_says_on_every_path(seed: int) -> None:
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 5))
    n = int(rng.integers(1, 30))
    y = rng.integers(0, K, size=n).astype(np.int64)
    kind = seed % 3
    if kind == 0:  # one weight for every row
        w = np.full(n, float(rng.integers(1, 7)))
    elif kind == 1:  # integral weights
        w = rng.integers(1, 9, size=n).astype(np.float64)
    else:  # fractional weights
        w = rng.choice([0.5, 1.25, 2.0, 3.0], size=n)
    amounts = [Fraction(int(rng.integers(1, 12)), int(rng.integers(1, 7))) for _ in range(K)]
    labels = [int(rng.integers(0, K)) for _ in range(K)]
    new_y, new_w, factor = reweigh(_search(y, K), amounts, labels, y, w)
    assert new_y.tolist() == [labels[a] for a in y.tolist()]
    assert (new_w > 0).all()
    if kind < 2:  # integral weights stay integral (exact float sums)
        assert np.all(new_w == np.round(new_w))
    for _ in range(5):  # any prediction of the rows
        pred = rng.integers(0, K, size=n)
        errors = sum((Fraction(float(v)) for v, yy, p in zip(new_w.tolist(), new_y.tolist(), pred.tolist())
                      if p != yy), Fraction(0))
        assert errors * factor == _cost(pred, y, w, amounts, labels)


def test_one_weight_for_every_row_scales_like_the_integral_path() -> None:
    """The uniform fast path and the per-class path choose the same scale and weights."""
    y = np.array([0, 1, 1, 0, 2])
    amounts = [Fraction(1, 3), Fraction(5, 2), Fraction(0)]
    uniform = reweigh(_search(y, 3), amounts, [0, 1, 2], y, np.full(5, 4.0))
    mixed = reweigh(_search(y, 3), amounts, [0, 1, 2], y, np.array([4.0, 4.0, 4.0, 8.0, 4.0]))
    assert uniform[2] == Fraction(1, 3)
    assert uniform[1].tolist() == [4 / 3 * 3, 10 * 3, 10 * 3, 4 / 3 * 3, 0.0]
    assert mixed[2] == Fraction(1, 3) and mixed[1][3] == 8 / 3 * 3
