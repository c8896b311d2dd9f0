"""Training errors of every H-subset of 0/1 features, by pair-count (Gram) matrices.

Input: a 0/1 matrix (rows x features), class indices and row weights. Output: for every
set S of H features, the weighted errors of the best ordered BDD over S, which is the
majority class of each of its 2^H truth-table cells (Hu, Huguet & Siala, IJCAI 2022,
eq. 4: a row reaches the cell whose bits are its values of the ordered features; the
order changes the BDD's size, never its function, so the errors depend on S alone):

    errors(S) = sum over cells j of ( W(j) - max_c W(j, c) ).

The enumeration fixes a *prefix* Q (the H-2 smallest features of S), splits the rows by
their Q-cell k and class c, and reads every completion {f, g} (f < g, both after Q) from
one weighted Gram matrix per (k, c): N11 = X^T diag(w) X, N10 = diag - N11, N01, N00 by
inclusion-exclusion. So a prefix costs one n x m x m product for its m later features,
and the whole enumeration sum_Q n m_Q^2 multiply-adds instead of C(p, H) cell counts.
Rows with equal features and class are merged first (their weights add up).

Invariants: ``prefix_errors`` yields each H-subset exactly once, in lexicographic order
of (Q, f, g); errors are exact for integer weights below 2^24 (float32), else float64.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Iterator

import numpy as np

#: more classes than this: ``single_errors`` counts per feature instead of multiplying by
#: the rows x classes weight matrix
WIDE_CLASSES = 64


@dataclass(frozen=True)
class Rows:
    """Distinct (features, class) rows with summed weights, and the class weights."""

    X: np.ndarray  # (n, p) bool
    y: np.ndarray  # (n,) int64
    w: np.ndarray  # (n,) float64
    n_classes: int

    @property
    def total(self) -> float:
        return float(self.w.sum())

    def class_totals(self) -> np.ndarray:
        return np.bincount(self.y, weights=self.w, minlength=self.n_classes)


def merge_rows(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> Rows:
    """Rows with equal features and class as one row of their summed weight.

    >>> r = merge_rows(np.array([[1, 0], [1, 0], [0, 1]], bool), np.array([1, 1, 0]), np.ones(3), 2)
    >>> sorted(zip(r.w.tolist(), r.y.tolist()))
    [(1.0, 0), (2.0, 1)]
    """
    if X.shape[0] == 0:
        return Rows(X.astype(bool), y.astype(np.int64), w.astype(np.float64), n_classes)
    _, first, inverse = np.unique(row_keys(np.column_stack([X, _bits(y, n_classes)])), return_index=True,
                                  return_inverse=True)
    inverse = inverse.reshape(-1)
    weights = np.bincount(inverse, weights=w, minlength=len(first))
    return Rows(X[first].astype(bool), y[first].astype(np.int64), weights, n_classes)


def _bits(y: np.ndarray, n_classes: int) -> np.ndarray:
    width = max(1, int(n_classes - 1).bit_length())
    return ((y.astype(np.int64)[:, None] >> np.arange(width)) & 1).astype(bool)


def row_keys(M: np.ndarray) -> np.ndarray:
    """One hashable scalar per row of a 0/1 matrix (equal rows, equal keys): the packed
    bits as a uint64 when they fit, else as one opaque byte string; ``np.unique`` on
    these is a 1-D sort, much cheaper than ``np.unique(axis=0)``."""
    packed = np.packbits(M.astype(bool), axis=1) if M.shape[1] else np.zeros((M.shape[0], 1), np.uint8)
    if packed.shape[1] <= 8:
        out = np.zeros((packed.shape[0], 8), np.uint8)
        out[:, :packed.shape[1]] = packed
        return out.view(np.uint64).reshape(-1)
    packed = np.ascontiguousarray(packed)
    return packed.view(np.dtype((np.void, packed.shape[1]))).reshape(-1)


def cell_index(X: np.ndarray, subset: tuple[int, ...]) -> np.ndarray:
    """The truth-table cell of each row for the ordered features ``subset`` (the first
    feature is the most significant bit, Hu's rel of eq. 4).

    >>> cell_index(np.array([[1, 0, 1], [0, 1, 1]], bool), (2, 0)).tolist()
    [3, 2]
    """
    j = np.zeros(X.shape[0], np.int64)
    for f in subset:
        j = 2 * j + X[:, f]
    return j


def cell_weights(rows: Rows, subset: tuple[int, ...]) -> np.ndarray:
    """(2^|subset|, classes): the weight of each class in each cell."""
    cells = 1 << len(subset)
    j = cell_index(rows.X, subset)
    out = np.zeros((cells, rows.n_classes))
    np.add.at(out, (j, rows.y), rows.w)
    return out


def bayes_errors(rows: Rows) -> float:
    """Errors of the best classifier of *all* features (rows equal on every feature but of
    different classes): a lower bound on every BDD's errors."""
    return cell_errors_of_groups(rows, rows.X)


def cell_errors_of_groups(rows: Rows, key: np.ndarray) -> float:
    """Errors of predicting the majority class of each group of equal ``key`` rows; the
    weights are summed per (group, class) present, never in a groups x classes table
    (a class per row would make it rows^2, issue 24)."""
    if rows.X.shape[0] == 0:
        return 0.0
    _, inv = np.unique(row_keys(key), return_inverse=True)
    pair, at = np.unique(inv.reshape(-1).astype(np.int64) * rows.n_classes + rows.y, return_inverse=True)
    weight = np.bincount(at.reshape(-1), weights=rows.w, minlength=len(pair))  # in row order, as np.add.at
    group = pair // rows.n_classes
    largest = np.zeros(int(group[-1]) + 1)
    np.maximum.at(largest, group, weight)
    return float((np.bincount(group, weights=weight) - largest).sum())


def _dtype(rows: Rows) -> type:
    integral = bool(np.all(rows.w == np.round(rows.w))) and rows.total < 2 ** 24
    return np.float32 if integral else np.float64


def subset_errors(rows: Rows, subsets: np.ndarray) -> np.ndarray:
    """(S,): errors of each of the S subsets (rows of ``subsets``, h features each),
    counted directly: every row's cell in every subset, one weighted bincount. For a few
    subsets this costs less than building any Gram product.

    >>> r = merge_rows(np.array([[1, 0], [1, 1], [0, 1]], bool), np.array([1, 0, 0]), np.ones(3), 2)
    >>> subset_errors(r, np.array([[0], [1]])).tolist()
    [1.0, 0.0]
    """
    S, h = subsets.shape
    cells = np.zeros((rows.X.shape[0], S), np.int64)
    for j in range(h):
        cells = 2 * cells + rows.X[:, subsets[:, j]]
    flat = (np.arange(S)[None, :] << h) + cells  # (subset, cell) as one index
    W = np.zeros((S << h, rows.n_classes))
    np.add.at(W, (flat.reshape(-1), np.repeat(rows.y, S)), np.repeat(rows.w, S))
    W = W.reshape(S, 1 << h, rows.n_classes)
    return (W.sum(axis=2) - W.max(axis=2)).sum(axis=1)


def single_errors(rows: Rows) -> np.ndarray:
    """(p,): errors of each one-feature BDD (H = 1): one product with the rows x classes
    weight matrix for a few classes, else one weighted count per feature."""
    if rows.n_classes > WIDE_CLASSES:
        totals = rows.class_totals()
        out = np.empty(rows.X.shape[1])
        for f in range(rows.X.shape[1]):
            col = rows.X[:, f]
            present = np.bincount(rows.y[col], weights=rows.w[col], minlength=rows.n_classes)
            out[f] = rows.total - present.max() - (totals - present).max()
        return out
    Wc = np.zeros((rows.X.shape[0], rows.n_classes))
    Wc[np.arange(len(rows.y)), rows.y] = rows.w
    ones = rows.X.T.astype(float) @ Wc  # (p, C)
    zeros = Wc.sum(axis=0)[None, :] - ones
    return rows.total - ones.max(axis=1) - zeros.max(axis=1)


def prefixes(p: int, h: int) -> Iterator[tuple[int, ...]]:
    """The prefixes Q (h - 2 features) that leave at least two later features."""
    return (q for q in combinations(range(p), h - 2) if (q[-1] if q else -1) < p - 2)


def prefix_errors(rows: Rows, prefix: tuple[int, ...]) -> tuple[int, np.ndarray]:
    """Errors of Q + {f, g} for every f < g after Q: returns (start, E) where
    E[a, b] = errors(Q + (start + a, start + b)) for a < b (other entries: +inf)."""
    start = prefix[-1] + 1 if prefix else 0
    E = pair_errors(rows, prefix, slice(start, None))
    E[np.tril_indices(E.shape[0])] = np.inf
    return start, E


def pair_errors(rows: Rows, prefix: tuple[int, ...], cols: slice | np.ndarray,
                left: slice | np.ndarray | None = None) -> np.ndarray:
    """(l, m) errors of the feature *sets* Q + {f, g} for every f among the l columns
    ``left`` (default: ``cols``) and every g among the m columns ``cols`` (any columns, in
    any order; with f == g it is the errors of Q + {f}, and a feature repeated in Q or the
    columns counts once: its cells are simply empty), from one weighted Gram product per
    Q-cell (and class).

    Two classes take one Gram product per Q-cell, with signed weights (+w for class 0,
    -w for class 1): D = N11(0) - N11(1), and since max(a, b) = (a + b + |a - b|) / 2,
    the cell's majority weight is (its weight + |difference|) / 2 in each sub-cell."""
    dt = _dtype(rows)
    Xr = rows.X[:, cols]
    Xl = Xr if left is None else rows.X[:, left]
    kq = cell_index(rows.X, prefix)
    best: np.ndarray = np.zeros((Xl.shape[1], Xr.shape[1]), dt)  # sum over cells of the max class weight
    if rows.n_classes == 2:
        signed = np.where(rows.y == 0, rows.w, -rows.w)
        for k in np.unique(kq):
            sel = kq == k
            A = Xr[sel].astype(dt)
            L = A if left is None else Xl[sel].astype(dt)
            sw = signed[sel].astype(dt)
            D = (L * sw[:, None]).T @ A
            dl, dr = sw @ L, sw @ A
            t = dt(sw.sum())
            acc = np.abs(D)
            acc += np.abs(dl[:, None] - D)
            acc += np.abs(dr[None, :] - D)
            acc += np.abs(t - dl[:, None] - dr[None, :] + D)
            best += acc
        best = (dt(rows.total) + best) / 2
    else:  # the (Q-cell, class) groups present, in order: no pass per absent class (issue 24)
        order = np.lexsort((rows.y, kq))
        ks, ys = kq[order], rows.y[order]
        cut = np.flatnonzero((ks[1:] != ks[:-1]) | (ys[1:] != ys[:-1])) + 1
        starts, ends = np.r_[0, cut], np.r_[cut, len(order)]
        mx: list = [None] * 4  # per sub-cell of the current Q-cell: the largest class weight so far
        for a, b in zip(starts.tolist(), ends.tolist()):
            sel = order[a:b]
            A = Xr[sel].astype(dt)
            L = A if left is None else Xl[sel].astype(dt)
            wc: np.ndarray = rows.w[sel].astype(dt)
            G = (L * wc[:, None]).T @ A  # N11
            dl, dr, tot = wc @ L, wc @ A, dt(wc.sum())
            for q in range(4):  # the four sub-cells of k: (f, g) in 11, 10, 01, 00
                v = G if q == 0 else dl[:, None] - G if q == 1 else dr[None, :] - G if q == 2 \
                    else tot - dl[:, None] - dr[None, :] + G
                mx[q] = v if mx[q] is None else np.maximum(mx[q], v)
            if b == len(order) or ks[b] != ks[a]:  # the Q-cell is complete
                for q in range(4):
                    best += mx[q]
                mx = [None] * 4
    return (rows.total - best).astype(np.float64)
