"""Compiled kernel of the depth-two solver (``depth_two.py``): for every root candidate f,
the best child split of each side, from the pairwise class frequencies (MurTree,
Demirović et al., JMLR 2022, Sec. 4.4, Eq. 4 per leaf). It computes exactly what the
numpy path of ``depth_two`` computes, in one pass without temporaries. Compiled with
numba (``@njit(cache=True)``: the machine code is kept on disk) when numba imports;
otherwise ``AVAILABLE`` is False and ``depth_two`` stays on numpy.
"""
from __future__ import annotations

import numpy as np

try:  # pragma: no cover - depends on the environment
    from numba import njit

    AVAILABLE = True
except ImportError:  # pragma: no cover
    AVAILABLE = False

    def njit(*args, **kwargs):  # type: ignore[no-redef]
        if args and callable(args[0]):
            return args[0]
        return lambda fn: fn


@njit(cache=True, nogil=True)
def best_child_splits(C1, C2, total, counts, s, min_leaf, min_node, ok_left, ok_right):  # pragma: no cover
    """(left_one, right_one): per root candidate f, the least error of a depth-one split
    of the rows where f fails / holds (inf where none is allowed by the sizes or by
    ``ok_left[f, g]`` / ``ok_right[f, g]``, the branch's allowed candidates)."""
    K, m = C1.shape
    left_one = np.full(m, np.inf)
    right_one = np.full(m, np.inf)
    for f in range(m):
        nR = counts[f, f]
        nL = s - nR
        for g in range(m):
            nRR = counts[f, g]
            nRL = nR - nRR
            nLR = counts[g, g] - nRR
            nLL = nL - nLR
            if ok_right[f, g] and nR >= min_node and nRR >= min_leaf and nRL >= min_leaf:
                t1 = 0.0
                m1 = -1.0
                t2 = 0.0
                m2 = -1.0
                for c in range(K):
                    a = C2[c, f, g]
                    b = C1[c, f] - a
                    t1 += a
                    t2 += b
                    if a > m1:
                        m1 = a
                    if b > m2:
                        m2 = b
                v = (t1 - m1) + (t2 - m2)
                if v < right_one[f]:
                    right_one[f] = v
            if ok_left[f, g] and nL >= min_node and nLR >= min_leaf and nLL >= min_leaf:
                t1 = 0.0
                m1 = -1.0
                t2 = 0.0
                m2 = -1.0
                for c in range(K):
                    a = C1[c, g] - C2[c, f, g]
                    b = total[c] - C1[c, f] - a
                    t1 += a
                    t2 += b
                    if a > m1:
                        m1 = a
                    if b > m2:
                        m2 = b
                v = (t1 - m1) + (t2 - m2)
                if v < left_one[f]:
                    left_one[f] = v
    return left_one, right_one


@njit(cache=True, nogil=True)
def pair_frequencies(B, Wc):  # pragma: no cover
    """(counts, C1, C2): rows where f and g both hold (m, m), class weights where f holds
    (C, m) and where f and g hold (C, m, m), by one pass over the rows and the pairs of
    their true candidates (no BLAS call: its threads cost more than these small products)."""
    s, m = B.shape
    K = Wc.shape[1]
    counts = np.zeros((m, m))
    C1 = np.zeros((K, m))
    C2 = np.zeros((K, m, m))
    idx = np.empty(m, dtype=np.int64)
    for r in range(s):
        n = 0
        for f in range(m):
            if B[r, f]:
                idx[n] = f
                n += 1
        c = -1
        for k in range(K):
            if Wc[r, k] != 0.0:
                c = k
        w = Wc[r, c] if c >= 0 else 0.0
        for i in range(n):
            a = idx[i]
            if c >= 0:
                C1[c, a] += w
            for j in range(i, n):  # a <= b: the lower triangle is mirrored below
                b = idx[j]
                counts[a, b] += 1.0
                if c >= 0:
                    C2[c, a, b] += w
    for a in range(m):
        for b in range(a + 1, m):
            counts[b, a] = counts[a, b]
            for k in range(K):
                C2[k, b, a] = C2[k, a, b]
    return counts, C1, C2


@njit(cache=True, nogil=True)
def update_frequencies(indptr, indices, label, weight, rows, sign, counts, C1, C2):  # pragma: no cover
    """Add (``sign`` 1) or remove (-1) the rows ``rows`` to the pair frequencies of
    ``pair_frequencies`` in place, upper triangle only (``mirror`` fills the lower):
    MurTree's incremental frequency counting (Sec. 4.5) between similar subproblems. Row r
    holds the candidates ``indices[indptr[r]:indptr[r + 1]]`` (ascending) and has class
    ``label[r]`` (-1: weight zero) with weight ``weight[r]``."""
    for r in rows:
        lo, hi = indptr[r], indptr[r + 1]
        c = label[r]
        w = weight[r] * sign
        for i in range(lo, hi):
            a = indices[i]
            if c >= 0:
                C1[c, a] += w
            for j in range(i, hi):
                b = indices[j]
                counts[a, b] += sign
                if c >= 0:
                    C2[c, a, b] += w


@njit(cache=True, nogil=True)
def mirror(counts, C2):  # pragma: no cover
    """The lower triangles of ``counts`` and ``C2`` from their upper ones, in place."""
    m = counts.shape[0]
    K = C2.shape[0]
    for a in range(m):
        for b in range(a + 1, m):
            counts[b, a] = counts[a, b]
            for k in range(K):
                C2[k, b, a] = C2[k, a, b]
