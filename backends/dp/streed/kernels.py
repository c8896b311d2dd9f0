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
    from numba import njit, types
    from numba.extending import intrinsic

    AVAILABLE = True

    @intrinsic
    def popcount(typingctx, x):
        """The number of set bits of an integer (LLVM's ctpop: one instruction)."""
        if not isinstance(x, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            fn = builder.module.declare_intrinsic("llvm.ctpop", [args[0].type])
            return builder.call(fn, args)

        return x(x), codegen
except ImportError:  # pragma: no cover
    AVAILABLE = False

    def njit(*args, **kwargs):  # type: ignore[no-redef]
        if args and callable(args[0]):
            return args[0]
        return lambda fn: fn

    def popcount(x):  # type: ignore[no-redef]
        return bin(int(x)).count("1")


@njit(cache=True, nogil=True)
def best_child_splits(C1, C2, total, counts, s, min_leaf, min_node, ok_left, ok_right):  # pragma: no cover
    """(left_one, right_one): per root candidate f, the least error of a depth-one split
    of the rows where f fails / holds (inf where none is allowed by the sizes or by
    ``ok_left[f, g]`` / ``ok_right[f, g]``, the branch's allowed candidates; a 0 x 0
    ``ok_left``: every candidate allowed). Reads the upper triangles of ``counts`` and
    ``C2`` only (index (min, max)): their lower ones may be stale."""
    K, m = C1.shape
    every = ok_left.shape[0] == 0
    left_one = np.full(m, np.inf)
    right_one = np.full(m, np.inf)
    for f in range(m):
        nR = counts[f, f]
        nL = s - nR
        for g in range(m):
            lo = f if f < g else g
            hi = g if f < g else f
            nRR = counts[lo, hi]
            nRL = nR - nRR
            nLR = counts[g, g] - nRR
            nLL = nL - nLR
            if (every or ok_right[f, g]) and nR >= min_node and nRR >= min_leaf and nRL >= min_leaf:
                t1 = 0.0
                m1 = -1.0
                t2 = 0.0
                m2 = -1.0
                for c in range(K):
                    a = C2[c, lo, hi]
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
            if (every or ok_left[f, g]) and nL >= min_node and nLR >= min_leaf and nLL >= min_leaf:
                t1 = 0.0
                m1 = -1.0
                t2 = 0.0
                m2 = -1.0
                for c in range(K):
                    a = C1[c, g] - C2[c, lo, hi]
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
def _leaf_err(total_c, K):  # pragma: no cover
    t = 0.0
    most = -1.0
    for c in range(K):
        t += total_c[c]
        if total_c[c] > most:
            most = total_c[c]
    return t - most


@njit(cache=True, nogil=True)
def depth_two_tail(C1, C2, total, counts, s, min_leaf, min_node, ok_root, ok_left, ok_right, leaf_err):  # pragma: no cover
    """The whole depth-two solver of ``depth_two.py`` on known frequencies: ``E`` (4,),
    the least error with at most 0..3 nodes, and per budget the root candidate (-1: a
    leaf) and the node budgets of its children (the numpy path's choices, ties alike)."""
    K, m = C1.shape
    left_one, right_one = best_child_splits(C1, C2, total, counts, s, min_leaf, min_node, ok_left, ok_right)
    E = np.full(4, leaf_err)
    F = np.full(4, -1, dtype=np.int64)
    BL = np.zeros(4, dtype=np.int64)
    BR = np.zeros(4, dtype=np.int64)
    best = np.full(3, np.inf)
    arg = np.full(3, -1, dtype=np.int64)
    side = np.zeros(m, dtype=np.bool_)
    col = np.empty(K)
    for f in range(m):
        nR = counts[f, f]
        nL = s - nR
        if not (ok_root[f] and nL >= min_leaf and nR >= min_leaf and s >= min_node):
            continue
        for c in range(K):
            col[c] = C1[c, f]
        right_leaf = _leaf_err(col, K)
        for c in range(K):
            col[c] = total[c] - C1[c, f]
        left_leaf = _leaf_err(col, K)
        right_best = min(right_leaf, right_one[f])
        left_best = min(left_leaf, left_one[f])
        o1 = left_leaf + right_leaf
        a2 = left_leaf + right_best
        b2 = left_best + right_leaf
        o2 = min(a2, b2)
        o3 = left_best + right_best
        side[f] = a2 <= b2
        if o1 < best[0]:
            best[0], arg[0] = o1, f
        if o2 < best[1]:
            best[1], arg[1] = o2, f
        if o3 < best[2]:
            best[2], arg[2] = o3, f
    for i in range(1, 4):
        if E[i - 1] <= best[i - 1]:
            E[i], F[i], BL[i], BR[i] = E[i - 1], F[i - 1], BL[i - 1], BR[i - 1]
            continue
        f = arg[i - 1]
        E[i] = best[i - 1]
        F[i] = f
        if i == 2:
            BL[i], BR[i] = (0, 1) if side[f] else (1, 0)
        elif i == 3:
            BL[i], BR[i] = 1, 1
    return E, F, BL, BR


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


@njit(cache=True, nogil=True)
def bit_frequencies(indptr, indices, label, S, m, K):  # pragma: no cover
    """(counts, C1, C2) of ``pair_frequencies`` for rows ``S`` of weight one, upper
    triangles only: each candidate's rows of each class as a bitset over ``S``, a pair's
    frequency the popcount of their intersection (MurTree Sec. 4.4 counts the same; the
    bitsets make it ``m * m * K * |S| / 64`` word operations). Row r holds the candidates
    ``indices[indptr[r]:indptr[r + 1]]`` and has class ``label[r]``."""
    n = S.shape[0]
    W = (n + 63) >> 6
    P = np.zeros((K, m, W), dtype=np.uint64)
    for i in range(n):
        r = S[i]
        c = label[r]
        word = i >> 6
        bit = np.uint64(1) << np.uint64(i & 63)
        for j in range(indptr[r], indptr[r + 1]):
            P[c, indices[j], word] |= bit
    counts = np.zeros((m, m))
    C1 = np.zeros((K, m))
    C2 = np.zeros((K, m, m))
    for c in range(K):
        for a in range(m):
            for b in range(a, m):
                t = 0
                for w in range(W):
                    t += popcount(P[c, a, w] & P[c, b, w])
                C2[c, a, b] = t
                counts[a, b] += t
            C1[c, a] = C2[c, a, a]
    return counts, C1, C2
