"""The compiled read-out of an optimal tree of depth at most two (the bounded search's
decoding, ``bounded.BoundedSearch.decode_best``).

The branch and bound keeps only the values of depth-two subproblems (``kernels.depth_two_values``);
reading their trees back through the numpy recursion of ``solve.py`` costs a few dozen
small array operations per subtree, most of a small solve. Here the same choice is made in
one call from the same pair frequencies: MurTree's depth-two solver (Demirović et al., JMLR
2022, Sec. 4.4; STreeD, van der Linden et al., NeurIPS 2023, Sec. 4.5), whose root
candidate and child budgets per node budget are ``kernels.depth_two_tail``'s, and then each
child's best depth-one split read off the frequencies as ``kernels.best_child_splits``
weighs it (the first least candidate, a split only when strictly better than the leaf, as
``Search._depth_one``). Rows of one integral weight per class (``cw``), every candidate
allowed: the conditions of the compiled depth three.
"""
from __future__ import annotations

import numpy as np

from .kernels import _leaf_err, class_bitsets, depth_two_tail, njit, popcount


@njit(cache=True, nogil=True)
def _label(t, K):  # pragma: no cover
    """The heaviest class of class weights ``t`` (the lowest index on ties)."""
    best = 0
    for k in range(1, K):
        if t[k] > t[best]:
            best = k
    return best


@njit(cache=True, nogil=True)
def _child(C1, C2, counts, total, f, right, nS, K, m, min_leaf, min_node, out, at):  # pragma: no cover
    """The best tree of depth at most one of the ``nS`` rows where candidate ``f`` holds
    (``right``) or fails: ``out[at]`` its split candidate (-1: a leaf), ``out[at + 1]`` /
    ``out[at + 2]`` the labels of its leaves where the split fails / holds (a leaf's label
    twice)."""
    side = np.empty(K)
    a = np.empty(K)
    b = np.empty(K)
    for k in range(K):
        side[k] = C1[k, f] if right else total[k] - C1[k, f]
    leaf = _leaf_err(side, K)
    best, arg = np.inf, -1
    if nS >= min_node:
        for g in range(m):
            lo = f if f < g else g
            hi = g if f < g else f
            nA = counts[lo, hi] if right else counts[g, g] - counts[lo, hi]  # the side where g holds
            if not (nA >= min_leaf and nS - nA >= min_leaf):
                continue
            for k in range(K):
                a[k] = C2[k, lo, hi] if right else C1[k, g] - C2[k, lo, hi]
                b[k] = side[k] - a[k]
            v = _leaf_err(a, K) + _leaf_err(b, K)
            if v < best:
                best, arg = v, g
    if arg >= 0 and best < leaf:
        g = arg
        lo = f if f < g else g
        hi = g if f < g else f
        for k in range(K):
            a[k] = C2[k, lo, hi] if right else C1[k, g] - C2[k, lo, hi]
            b[k] = side[k] - a[k]
        out[at], out[at + 1], out[at + 2] = g, _label(b, K), _label(a, K)
    else:
        lab = _label(side, K)
        out[at], out[at + 1], out[at + 2] = -1, lab, lab


@njit(cache=True, nogil=True)
def decode_two(indptr, indices, label, S, m, K, c, top, min_leaf, min_node, cw):  # pragma: no cover
    """The tree the bounded search values for rows ``S`` with at most ``top`` (<= 3) nodes,
    as ``(node budget, root candidate or -1, the left child's candidate or -1 and its two
    labels, the right child's candidate or -1 and its two labels)``; a root leaf's label in
    slot 3. A child of budget 0 is a leaf (``min_node`` infinite for it).
    The node budget is the least of ``argmin_i E[i] + c * i`` (``BoundedSearch._small``)."""
    n = S.shape[0]
    P = class_bitsets(indptr, indices, label, S, m, K)
    W = P.shape[2]
    counts = np.zeros((m, m))
    C1 = np.zeros((K, m))
    C2 = np.zeros((K, m, m))
    total = np.zeros(K)
    s = 0.0
    for i in range(n):
        total[label[S[i]]] += 1.0
        s += 1.0
    for k in range(K):
        total[k] *= cw[k]
        for a in range(m):
            for b in range(a, m):
                t = 0
                for w in range(W):
                    t += popcount(P[k, a, w] & P[k, b, w])
                C2[k, a, b] = t * cw[k]
                counts[a, b] += t
            C1[k, a] = C2[k, a, a]
    every = np.zeros((0, 0), dtype=np.bool_)
    ok_root = np.ones(m, dtype=np.bool_)
    E, F, BL, BR = depth_two_tail(C1, C2, total, counts, s, min_leaf, min_node, ok_root, every, every,
                                  _leaf_err(total, K), K == 2)
    best, i_best = np.inf, 0
    for i in range(top + 1):
        v = E[i] + c * i
        if v < best:
            best, i_best = v, i
    out = np.full(8, -1, dtype=np.int64)
    f = F[i_best]
    out[0] = i_best
    out[1] = f
    if f < 0:
        out[3] = _label(total, K)
        return out
    _child(C1, C2, counts, total, f, False, s - counts[f, f], K, m, min_leaf, min_node if BL[i_best] > 0 else np.inf,
           out, 2)
    _child(C1, C2, counts, total, f, True, counts[f, f], K, m, min_leaf, min_node if BR[i_best] > 0 else np.inf,
           out, 5)
    return out
