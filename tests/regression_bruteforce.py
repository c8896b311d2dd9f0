"""A brute-force oracle for regression trees (issue 26): every tree of depth <= 2 over the
cuts of small data, each leaf predicting the weighted mean (squared error) or a weighted
median (absolute error) of its rows, scored under an objective ``loss + a * nodes`` with
a minimum leaf size and an optional cap or floor on the loss.

Cuts: every midpoint between consecutive distinct values of a column (a 0/1 column has
one). A tree is a set of row partitions; its loss is the sum of its leaves' least losses.
"""
from __future__ import annotations

import itertools
from typing import Iterator

import numpy as np


def leaf_loss(y: np.ndarray, w: np.ndarray, loss: str) -> float:
    """The least loss of one leaf over rows with targets ``y`` and weights ``w``."""
    if y.size == 0:
        return 0.0
    if loss == "squared_error":
        mean = float((w * y).sum() / w.sum())
        return float((w * (y - mean) ** 2).sum())
    return min(float((w * np.abs(y - v)).sum()) for v in np.unique(y))  # a median is a target value


def cuts(X: np.ndarray) -> list[tuple[int, float]]:
    out = []
    for j in range(X.shape[1]):
        v = np.unique(X[:, j])
        out += [(j, float(t)) for t in (v[1:] + v[:-1]) / 2]
    return out


def partitions(X: np.ndarray, rows: np.ndarray, depth: int) -> Iterator[tuple[int, list[np.ndarray]]]:
    """(nodes, leaves' rows) of every tree of depth <= ``depth`` over ``rows``."""
    yield 0, [rows]
    if depth == 0:
        return
    for j, t in cuts(X):
        go = X[rows, j] <= t
        left, right = rows[go], rows[~go]
        if left.size == 0 or right.size == 0:
            continue
        for (nl, pl), (nr, pr) in itertools.product(list(partitions(X, left, depth - 1)),
                                                    list(partitions(X, right, depth - 1))):
            yield nl + nr + 1, pl + pr


def best(X: np.ndarray, y: np.ndarray, w: np.ndarray, depth: int, loss: str = "squared_error",
         node_cost: float = 0.0, min_leaf: int = 1, max_loss: float | None = None,
         min_loss: float | None = None, max_nodes: int | None = None) -> float | None:
    """The least ``loss + node_cost * nodes`` of a tree meeting the limits, None if none does."""
    out = None
    for nodes, leaves in partitions(X, np.arange(len(y)), depth):
        if any(r.size < min_leaf for r in leaves) or (max_nodes is not None and nodes > max_nodes):
            continue
        value = sum(leaf_loss(y[r], w[r], loss) for r in leaves)
        if (max_loss is not None and value > max_loss + 1e-9) or (min_loss is not None and value < min_loss - 1e-9):
            continue
        score = value + node_cost * nodes
        if out is None or score < out:
            out = score
    return out
