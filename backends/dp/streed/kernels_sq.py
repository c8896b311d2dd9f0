"""Compiled depth-two solver of the squared-error task (regression, issue 26) on 0/1
columns: STreeD's depth-two solver (van der Linden et al., NeurIPS 2023, Sec. 4.4) with
the pair sums of a row's statistics ``(w, w*v, w*v^2)`` in place of class frequencies.

One pass over the rows adds each row's statistics to every pair (f, g), f <= g, of its true
candidates (the upper triangle; the diagonal holds the single sums); then for each root
candidate f the best child split of each side and the best tree with at most 0..3 decision
nodes, by the formulas of the numpy path (``depth_two.depth_two`` with the task's
``stacked_costs``), which stays the fallback and the oracle of the tests. Compiled with
numba (``@njit(cache=True)``) in the ``streed`` kernel group (``jit.py``, ``odt/warmup.py``).
"""
from __future__ import annotations

import numpy as np

from .kernels import AVAILABLE, fill_budgets, njit, offer_root

__all__ = ["AVAILABLE", "difference", "pair_sums", "pair_sums_into", "squared_tail", "squared_two"]


@njit(cache=True, nogil=True)
def _sse(w, s1, s2):  # pragma: no cover
    """A leaf's squared error from its sums (``SquaredError.stacked_costs``)."""
    if w > 0.0:
        v = s2 - s1 * s1 / w
        return v if v > 0.0 else 0.0
    return 0.0


@njit(cache=True, nogil=True)
def pair_sums(B, st, unit):  # pragma: no cover
    """P (m, m, 4): for each pair f <= g (the upper triangle only; the diagonal holds the
    single sums) the number of rows where both hold and the sums of their statistics, by
    one pass over the rows (the four sums of a pair side by side: one cache line).
    ``unit``: every row weighs one, so the count is the sum of weights (copied at the end)."""
    m = B.shape[1]
    return pair_sums_into(B, st, unit, np.zeros((m, m, 4)))


@njit(cache=True, nogil=True)
def pair_sums_into(B, st, unit, P):  # pragma: no cover
    """``pair_sums`` into ``P`` (m, m, 4), whose upper triangle is cleared first (a buffer
    reused between calls: no new pages to fault in)."""
    s, m = B.shape
    for a in range(m):
        for b in range(a, m):
            for k in range(4):
                P[a, b, k] = 0.0
    idx = np.empty(m, dtype=np.int64)
    for r in range(s):
        n = 0
        for f in range(m):
            if B[r, f]:
                idx[n] = f
                n += 1
        a0 = st[r, 0]
        a1 = st[r, 1]
        a2 = st[r, 2]
        if unit:
            for i in range(n):
                a = idx[i]
                for j in range(i, n):
                    b = idx[j]
                    P[a, b, 1] += a0
                    P[a, b, 2] += a1
                    P[a, b, 3] += a2
        else:
            for i in range(n):
                a = idx[i]
                for j in range(i, n):
                    b = idx[j]
                    P[a, b, 0] += 1.0
                    P[a, b, 1] += a0
                    P[a, b, 2] += a1
                    P[a, b, 3] += a2
    if unit:
        for a in range(m):
            for b in range(a, m):
                P[a, b, 0] = P[a, b, 1]
    return P


@njit(cache=True, nogil=True)
def difference(P, Q, out):  # pragma: no cover
    """``out = P - Q`` on the upper triangles (the pair sums of the rows of P not in Q)."""
    m = P.shape[0]
    for a in range(m):
        for b in range(a, m):
            for k in range(4):
                out[a, b, k] = P[a, b, k] - Q[a, b, k]
    return out


@njit(cache=True, nogil=True)
def squared_two(B, st, ok_root, ok_left, ok_right, min_leaf, min_node, leaf_err, unit):  # pragma: no cover
    """The depth-two solver on rows ``B`` (s, m) of 0/1 candidates with statistics ``st``
    (s, 3): ``squared_tail`` on their pair sums (``unit``: every row weighs one)."""
    total = np.zeros(3)
    for r in range(B.shape[0]):
        for j in range(3):
            total[j] += st[r, j]
    return squared_tail(pair_sums(B, st, unit), total, float(B.shape[0]), ok_root, ok_left, ok_right, min_leaf, min_node,
                        leaf_err)


@njit(cache=True, nogil=True)
def squared_tail(P, total, s, ok_root, ok_left, ok_right, min_leaf, min_node, leaf_err):  # pragma: no cover
    """The depth-two solver on the pair sums ``P`` (``pair_sums``) of ``s`` rows whose
    statistics sum to ``total`` (3,): ``E`` (4,), the least squared error with at most 0..3
    nodes, and per budget the root candidate (-1: a leaf) and the node budgets of its
    children, as ``kernels.depth_two_tail``. ``ok_left[f, g]`` / ``ok_right[f, g]``: g
    allowed below f on the side where f fails / holds (0 x 0: every candidate)."""
    m = P.shape[0]
    t0 = total[0]
    t1 = total[1]
    t2 = total[2]
    every = ok_left.shape[0] == 0
    E = np.full(4, leaf_err)
    F = np.full(4, -1, dtype=np.int64)
    BL = np.zeros(4, dtype=np.int64)
    BR = np.zeros(4, dtype=np.int64)
    best = np.full(3, np.inf)
    arg = np.full(3, -1, dtype=np.int64)
    side = np.zeros(m, dtype=np.bool_)
    for f in range(m):
        nR = P[f, f, 0]
        nL = s - nR
        if not (ok_root[f] and nL >= min_leaf and nR >= min_leaf and s >= min_node):
            continue
        r0 = P[f, f, 1]
        r1 = P[f, f, 2]
        r2 = P[f, f, 3]
        right_leaf = _sse(r0, r1, r2)
        left_leaf = _sse(t0 - r0, t1 - r1, t2 - r2)
        right_one = np.inf
        left_one = np.inf
        r_ok = nR >= min_node
        l_ok = nL >= min_node
        for g in range(m):
            lo = f if f < g else g
            hi = g if f < g else f
            nRR = P[lo, hi, 0]
            nRL = nR - nRR
            nLR = P[g, g, 0] - nRR
            nLL = nL - nLR
            q0 = P[lo, hi, 1]
            q1 = P[lo, hi, 2]
            q2 = P[lo, hi, 3]
            if r_ok and (every or ok_right[f, g]) and nRR >= min_leaf and nRL >= min_leaf:
                v = _sse(q0, q1, q2) + _sse(r0 - q0, r1 - q1, r2 - q2)
                if v < right_one:
                    right_one = v
            if l_ok and (every or ok_left[f, g]) and nLR >= min_leaf and nLL >= min_leaf:
                x0 = P[g, g, 1] - q0
                x1 = P[g, g, 2] - q1
                x2 = P[g, g, 3] - q2
                v = _sse(x0, x1, x2) + _sse(t0 - r0 - x0, t1 - r1 - x1, t2 - r2 - x2)
                if v < left_one:
                    left_one = v
        offer_root(f, left_leaf, right_leaf, left_one, right_one, best, arg, side)
    fill_budgets(E, F, BL, BR, best, arg, side)
    return E, F, BL, BR
