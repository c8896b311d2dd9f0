"""The 1-D k-means lower bound of a regression tree's squared error (Quant-BnB, Mazumder,
Meng & Wang, ICML 2022; STreeD's regression bound, van der Linden et al., NeurIPS 2023).

A tree with at most k leaves splits its rows into at most k groups, each predicting one
value, so its squared error is at least that of the best clustering of the rows' targets
into k groups; in one dimension the best clusters are contiguous in sorted order, and a
dynamic program over the sorted distinct targets finds them exactly (rows of one target
value are never split: moving a row to its twin's group never costs more).

Input: each row's index among the sorted distinct targets, the rows' weights, the
distinct targets and the largest k. Output: the least squared error with 1..k groups.
The program is O(k u^2) in the u distinct targets of the rows; above ``MAX_DISTINCT`` (where it
would cost more than the depth-two solves it may save) the bound is not computed (None),
and the search runs without it.
"""
from __future__ import annotations

import numpy as np

MAX_DISTINCT = 300


def cluster_bounds(y: np.ndarray, w: np.ndarray, values: np.ndarray, k: int) -> np.ndarray | None:
    """``out[j]``: the least weighted squared error of the rows' targets in at most j + 1
    contiguous groups (j = 0..k-1), or None with more than ``MAX_DISTINCT`` distinct targets.

    >>> cluster_bounds(np.array([0, 0, 1, 2]), np.ones(4), np.array([0.0, 1.0, 5.0]), 3).round(3).tolist()
    [17.0, 0.667, 0.0]
    """
    hist = np.bincount(y, weights=w, minlength=values.shape[0])
    present = hist > 0
    v, h = values[present], hist[present]
    u = v.shape[0]
    if u > MAX_DISTINCT:
        return None
    v = v - (h * v).sum() / h.sum()  # precision: the error does not move with the targets
    W = np.concatenate([[0.0], np.cumsum(h)])
    S1 = np.concatenate([[0.0], np.cumsum(h * v)])
    S2 = np.concatenate([[0.0], np.cumsum(h * v * v)])
    # cost[t, i]: the squared error of one group holding distinct targets t..i-1 (t < i)
    wt = W[None, :] - W[:, None]
    s1 = S1[None, :] - S1[:, None]
    s2 = S2[None, :] - S2[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        cost = np.where(wt > 0, s2 - s1 * s1 / np.where(wt > 0, wt, 1.0), np.inf)
    cost = np.maximum(cost, 0.0)
    cost[np.tril_indices(u + 1)] = np.inf
    out = np.zeros(k)
    best = cost[0].copy()  # best[i]: the least error of targets 0..i-1 in j + 1 groups
    out[0] = best[u]
    for j in range(1, k):
        if j >= u:
            out[j:] = 0.0
            break
        best = np.min(best[:, None] + cost, axis=0)
        out[j] = min(best[u], out[j - 1])
    return np.maximum(out, 0.0)
