"""Compiled kernels of the STreeD-style engine. The depth-two solver (``depth_two.py``):
for every root candidate f, the best child split of each side, from the pairwise class
frequencies (MurTree, Demirović et al., JMLR 2022, Sec. 4.4, Eq. 4 per leaf), exactly what
the numpy path of ``depth_two`` computes, in one pass without temporaries
(``best_child_splits``, ``depth_two_tail``); the frequencies themselves (row by row,
``pair_frequencies``; by difference, ``update_frequencies``; by popcounts of per-class row
bitsets, ``bit_frequencies``); and the depth-three search of ``bounded.py``
(``depth_three``, with its table of depth-two values, ``depth_two_values``). Compiled
with numba (``@njit(cache=True)``: the machine code is kept on disk) when numba imports;
otherwise ``AVAILABLE`` is False and the engine stays on numpy and Python.
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

    def popcount(x):  # type: ignore[no-redef,misc]
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
def best_child_splits_two(C1, C2, total, counts, s, min_leaf, min_node):  # pragma: no cover
    """``best_child_splits`` for two classes of integral weights and every candidate
    allowed: a leaf's error is the lesser class weight (exact on integers)."""
    m = C1.shape[1]
    left_one = np.full(m, np.inf)
    right_one = np.full(m, np.inf)
    t0 = total[0]
    t1 = total[1]
    for f in range(m):
        nR = counts[f, f]
        nL = s - nR
        r_ok = nR >= min_node
        l_ok = nL >= min_node
        if not (r_ok or l_ok):
            continue
        c0f = C1[0, f]
        c1f = C1[1, f]
        best_r = np.inf
        best_l = np.inf
        for g in range(m):
            lo = f if f < g else g
            hi = g if f < g else f
            nRR = counts[lo, hi]
            nRL = nR - nRR
            nLR = counts[g, g] - nRR
            nLL = nL - nLR
            a0 = C2[0, lo, hi]
            a1 = C2[1, lo, hi]
            if r_ok and nRR >= min_leaf and nRL >= min_leaf:
                v = min(a0, a1) + min(c0f - a0, c1f - a1)
                if v < best_r:
                    best_r = v
            if l_ok and nLR >= min_leaf and nLL >= min_leaf:
                x0 = C1[0, g] - a0
                x1 = C1[1, g] - a1
                v = min(x0, x1) + min(t0 - c0f - x0, t1 - c1f - x1)
                if v < best_l:
                    best_l = v
        right_one[f] = best_r
        left_one[f] = best_l
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
def depth_two_tail(C1, C2, total, counts, s, min_leaf, min_node, ok_root, ok_left, ok_right, leaf_err,
                   two):  # pragma: no cover
    """The whole depth-two solver of ``depth_two.py`` on known frequencies: ``E`` (4,),
    the least error with at most 0..3 nodes, and per budget the root candidate (-1: a
    leaf) and the node budgets of its children (the numpy path's choices, ties alike).
    ``two``: two classes, integral weights, every child candidate allowed (the
    specialised ``best_child_splits_two``)."""
    K, m = C1.shape
    if two:
        left_one, right_one = best_child_splits_two(C1, C2, total, counts, s, min_leaf, min_node)
    else:
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
        offer_root(f, left_leaf, right_leaf, left_one[f], right_one[f], best, arg, side)
    fill_budgets(E, F, BL, BR, best, arg, side)
    return E, F, BL, BR


@njit(cache=True, nogil=True, inline="always")
def offer_root(f, left_leaf, right_leaf, left_one, right_one, best, arg, side):  # pragma: no cover
    """Root candidate ``f`` with its sides' leaf costs and best depth-one costs offered for
    the budgets of 1, 2 and 3 nodes (``best``/``arg``); ``side[f]`` whether its two-node
    tree splits the right side (MurTree Sec. 4.4's depth-two table)."""
    right_best = min(right_leaf, right_one)
    left_best = min(left_leaf, left_one)
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


@njit(cache=True, nogil=True, inline="always")
def fill_budgets(E, F, BL, BR, best, arg, side):  # pragma: no cover
    """The depth-two table for budgets 1-3 from the best root candidates: a larger budget
    keeps the smaller one's tree unless it is strictly better; BL/BR the nodes of each side."""
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
    ``pair_frequencies`` in place, upper triangle only (the depth-two kernels read no other):
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
def class_bitsets(indptr, indices, label, S, m, K):  # pragma: no cover
    """(K, m, words): for each class and candidate, the rows of ``S`` (by position) of
    that class where the candidate holds, as a bitset (row r holds the candidates
    ``indices[indptr[r]:indptr[r + 1]]`` and has class ``label[r]``)."""
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
    return P


@njit(cache=True, nogil=True)
def bit_frequencies(indptr, indices, label, S, m, K):  # pragma: no cover
    """(counts, C1, C2) of ``pair_frequencies`` for rows ``S`` of weight one, upper
    triangles only: each candidate's rows of each class as a bitset over ``S``, a pair's
    frequency the popcount of their intersection (MurTree Sec. 4.4 counts the same; the
    bitsets make it ``m * m * K * |S| / 64`` word operations). Row r holds the candidates
    ``indices[indptr[r]:indptr[r + 1]]`` and has class ``label[r]``."""
    n = S.shape[0]
    P = class_bitsets(indptr, indices, label, S, m, K)
    W = P.shape[2]
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


@njit(cache=True, nogil=True)
def _child_values(P, Y, side, K, m, W, c, min_leaf, min_node, counts, C1, C2, every, out, cw):  # pragma: no cover
    """``out[i]``: the least ``errors + c * nodes`` of a depth-two tree with at most i nodes
    over the rows of bitset ``side`` (i = 0..3), by ``depth_two_tail`` on the popcounts
    (each row of class k weighing ``cw[k]``: the class weights of a cost matrix, issue 26)."""
    total = np.zeros(K)
    s = 0.0
    for k in range(K):
        t = 0
        for w in range(W):
            t += popcount(Y[k, w] & side[w])
        total[k] = t * cw[k]
        s += t
    counts[:, :] = 0.0
    Q = np.empty((m, W), dtype=np.uint64)
    for k in range(K):
        for a in range(m):
            for w in range(W):
                Q[a, w] = P[k, a, w] & side[w]
        for a in range(m):
            for b in range(a, m):
                t = 0
                for w in range(W):
                    t += popcount(Q[a, w] & Q[b, w])
                C2[k, a, b] = t * cw[k]
                counts[a, b] += t
            C1[k, a] = C2[k, a, a]
    leaf = _leaf_err(total, K)
    ok_root = np.ones(m, dtype=np.bool_)
    E, _, _, _ = depth_two_tail(C1, C2, total, counts, s, min_leaf, min_node, ok_root, every, every, leaf, K == 2)
    budget_values(E, c, out)


@njit(cache=True, nogil=True)
def budget_values(E, c, V):  # pragma: no cover
    """``V[i]``: the least ``E[j] + c * j`` over j <= i, i = 0..3, from ``E[j]``, the least
    loss of a depth-two tree with at most j nodes (a budget of i nodes need not use them all)."""
    run = np.inf
    for i in range(4):
        v = E[i] + c * i
        if v < run:
            run = v
        V[i] = run


@njit(cache=True, nogil=True)
def _cached_child(P, Y, side, S, K, m, W, c, min_leaf, min_node, counts, C1, C2, every, out,
                  zobrist, table_keys, table_index, stored_bits, stored_vals, n_stored, gbits, cw):  # pragma: no cover
    """``_child_values`` of the rows of ``side`` (local positions into ``S``), from the table
    when these rows were solved before; returns 1 when solved here, else 0."""
    h = np.uint64(0)
    gbits[:] = 0
    for w in range(W):
        x = side[w]
        while x:
            low = x & (~x + np.uint64(1))
            i = w * 64 + popcount(low - np.uint64(1))
            r = S[i]
            h ^= zobrist[r]
            gbits[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
            x ^= low
    key = np.int64(h >> np.uint64(1))
    mask = table_keys.shape[0] - 1
    pos = key & mask
    while table_index[pos] != 0:  # open addressing, linear probing; index 0 = empty
        if table_keys[pos] == key:
            slot = table_index[pos] - 1
            same = True
            for w in range(gbits.shape[0]):
                if stored_bits[slot, w] != gbits[w]:
                    same = False
                    break
            if same:
                for i in range(4):
                    out[i] = stored_vals[slot, i]
                return 0
            pos = -1  # another row set with this hash: solved, not kept
            break
        pos = (pos + 1) & mask
    _child_values(P, Y, side, K, m, W, c, min_leaf, min_node, counts, C1, C2, every, out, cw)
    if pos >= 0 and n_stored[0] < stored_bits.shape[0]:
        slot = n_stored[0]
        n_stored[0] += 1
        table_keys[pos] = key
        table_index[pos] = slot + 1
        for w in range(gbits.shape[0]):
            stored_bits[slot, w] = gbits[w]
        for i in range(4):
            stored_vals[slot, i] = out[i]
    return 1


@njit(cache=True, nogil=True)
def depth_three(indptr, indices, label, S, m, K, k, ub, c, gap, min_leaf, min_node, similarity, eps,
                zobrist, table_keys, table_index, stored_bits, stored_vals, n_stored, cw):  # pragma: no cover
    """The split search of ``bounded.BoundedSearch._splits`` for a subproblem of depth three
    (rows ``S`` of weight one, every candidate allowed), compiled: candidates ordered by
    their depth-one error and one per partition of ``S``; each child a depth-two tree from
    popcounts of the rows' per-class bitsets; the bounds of ``_splits`` (upper bound passed
    down, larger side first, similarity against the last four children when
    ``similarity``). Depth-two children are kept across calls in ``table`` (a Zobrist hash of
    their rows, hashed into ``table_keys`` / ``table_index`` (slot + 1, open addressing), to a slot of ``stored_bits`` (the rows, compared on a hit: exact) and
    ``stored_vals`` (their values); ``n_stored[0]`` slots used). Returns (best, candidate or -1, left budget, right budget, least bound
    over the splits that did not improve, the number of depth-two children solved)."""
    n = S.shape[0]
    solves = 0
    W = (n + 63) >> 6
    P = np.zeros((K, m, W), dtype=np.uint64)
    Y = np.zeros((K, W), dtype=np.uint64)
    full = np.zeros(W, dtype=np.uint64)
    total = np.zeros(K)
    for i in range(n):
        r = S[i]
        cl = label[r]
        word = i >> 6
        bit = np.uint64(1) << np.uint64(i & 63)
        full[word] |= bit
        Y[cl, word] |= bit
        total[cl] += cw[cl]
        for j in range(indptr[r], indptr[r + 1]):
            P[cl, indices[j], word] |= bit
    wmax = 0.0  # a row moved changes a value by at most its weight (the similarity bound)
    for cl in range(K):
        if cw[cl] > wmax:
            wmax = cw[cl]
    A = np.zeros((m, W), dtype=np.uint64)
    for cl in range(K):
        for f in range(m):
            for w in range(W):
                A[f, w] |= P[cl, f, w]
    leaf = _leaf_err(total, K)
    least = max(min_leaf, 1.0)
    n_right = np.zeros(m)
    key = np.full(m, np.inf)
    rc = np.zeros(K)
    for f in range(m):
        t = 0
        for w in range(W):
            t += popcount(A[f, w])
        n_right[f] = t
        if t < least or n - t < least:
            continue
        for cl in range(K):
            u = 0
            for w in range(W):
                u += popcount(P[cl, f, w])
            rc[cl] = u * cw[cl]
        lt = 0.0
        lm = -1.0
        rt = 0.0
        rm = -1.0
        for cl in range(K):
            lt += total[cl] - rc[cl]
            rt += rc[cl]
            if total[cl] - rc[cl] > lm:
                lm = total[cl] - rc[cl]
            if rc[cl] > rm:
                rm = rc[cl]
        key[f] = (lt - lm) + (rt - rm)
    order = np.argsort(key, kind="mergesort")
    kept = np.empty(m, dtype=np.int64)
    q = 0
    canon = np.zeros((m, W), dtype=np.uint64)
    for idx in range(m):
        f = order[idx]
        if key[f] == np.inf:
            break
        flip = (A[f, 0] & np.uint64(1)) != 0
        for w in range(W):
            canon[f, w] = (A[f, w] ^ full[w]) if flip else A[f, w]
        dup = False
        for t in range(q):
            g = kept[t]
            same = True
            for w in range(W):
                if canon[g, w] != canon[f, w]:
                    same = False
                    break
            if same:
                dup = True
                break
        if not dup:
            kept[q] = f
            q += 1
    sub = min(3, k - 1)
    lo_kl = max(0, k - 1 - sub)
    best = leaf
    choice_f, choice_l, choice_r = -1, 0, 0
    lb_split = np.inf
    counts = np.zeros((m, m))
    C1 = np.zeros((K, m))
    C2 = np.zeros((K, m, m))
    every = np.zeros((0, 0), dtype=np.bool_)
    R = 4
    ref_bits = np.zeros((R, W), dtype=np.uint64)
    ref_val = np.zeros((R, 4))
    n_ref = 0
    sides = np.zeros((2, W), dtype=np.uint64)
    gbits = np.zeros(stored_bits.shape[1], dtype=np.uint64)
    lbs = np.zeros((2, 4))
    vals = np.zeros((2, 4))
    for t in range(q):
        f = kept[t]
        big_right = 2.0 * n_right[f] > n
        for w in range(W):
            right = A[f, w]
            left = full[w] & ~right
            sides[0, w] = right if big_right else left
            sides[1, w] = left if big_right else right
        for sd in range(2):
            for i in range(4):
                lbs[sd, i] = 0.0
            if similarity:
                for r in range(n_ref):
                    miss = 0
                    for w in range(W):
                        miss += popcount(ref_bits[r, w] & ~sides[sd, w])
                    for i in range(4):
                        v = ref_val[r, i] - miss * wmax
                        if v > lbs[sd, i]:
                            lbs[sd, i] = v
        solved0 = False
        solved1 = False
        for kl in range(lo_kl, sub + 1):
            kr = k - 1 - kl
            k0 = kr if big_right else kl
            k1 = kl if big_right else kr
            u = min(ub, best - gap)
            bound_u = u + eps * (1.0 + abs(u))
            b = lbs[0, k0] + lbs[1, k1] + c
            if b > bound_u:
                if b < lb_split:
                    lb_split = b
                continue
            if not solved0:
                solves += _cached_child(P, Y, sides[0], S, K, m, W, c, min_leaf, min_node, counts, C1, C2, every,
                                        vals[0], zobrist, table_keys, table_index, stored_bits, stored_vals, n_stored, gbits, cw)
                solved0 = True
                for i in range(4):
                    if vals[0, i] > lbs[0, i]:
                        lbs[0, i] = vals[0, i]
            b = vals[0, k0] + lbs[1, k1] + c
            if b > bound_u:
                if b < lb_split:
                    lb_split = b
                continue
            if not solved1:
                solves += _cached_child(P, Y, sides[1], S, K, m, W, c, min_leaf, min_node, counts, C1, C2, every,
                                        vals[1], zobrist, table_keys, table_index, stored_bits, stored_vals, n_stored, gbits, cw)
                solved1 = True
                for i in range(4):
                    if vals[1, i] > lbs[1, i]:
                        lbs[1, i] = vals[1, i]
            v = vals[0, k0] + vals[1, k1] + c
            if v > bound_u:  # above the bound: a value to report as a bound, never an optimum (the
                if v < lb_split:  # other candidates were pruned against the bound, not against v)
                    lb_split = v
                continue
            if v < best:
                best = v
                choice_f, choice_l, choice_r = f, kl, kr
            elif v < lb_split:
                lb_split = v
        if similarity:
            for sd in range(2):
                for r in range(R - 1, 0, -1):
                    for w in range(W):
                        ref_bits[r, w] = ref_bits[r - 1, w]
                    for i in range(4):
                        ref_val[r, i] = ref_val[r - 1, i]
                for w in range(W):
                    ref_bits[0, w] = sides[sd, w]
                run = 0.0
                for i in range(3, -1, -1):  # a bound at budget i holds for the smaller budgets
                    if lbs[sd, i] > run:
                        run = lbs[sd, i]
                    ref_val[0, i] = run
                n_ref = min(n_ref + 1, R)
    return best, choice_f, choice_l, choice_r, lb_split, solves


@njit(cache=True, nogil=True)
def depth_two_values(indptr, indices, label, S, m, K, c, min_leaf, min_node,
                     zobrist, table_keys, table_index, stored_bits, stored_vals, n_stored, out, cw):  # pragma: no cover
    """``out[i]``: the least ``errors + c * nodes`` of a depth-two tree over rows ``S`` (of
    weight one, every candidate allowed) with at most i nodes, i = 0..3, through the
    depth-two table of ``depth_three``."""
    n = S.shape[0]
    W = (n + 63) >> 6
    P = np.zeros((K, m, W), dtype=np.uint64)
    Y = np.zeros((K, W), dtype=np.uint64)
    full = np.zeros(W, dtype=np.uint64)
    for i in range(n):
        r = S[i]
        cl = label[r]
        word = i >> 6
        bit = np.uint64(1) << np.uint64(i & 63)
        full[word] |= bit
        Y[cl, word] |= bit
        for j in range(indptr[r], indptr[r + 1]):
            P[cl, indices[j], word] |= bit
    counts = np.zeros((m, m))
    C1 = np.zeros((K, m))
    C2 = np.zeros((K, m, m))
    every = np.zeros((0, 0), dtype=np.bool_)
    gbits = np.zeros(stored_bits.shape[1], dtype=np.uint64)
    return _cached_child(P, Y, full, S, K, m, W, c, min_leaf, min_node, counts, C1, C2, every, out,
                         zobrist, table_keys, table_index, stored_bits, stored_vals, n_stored, gbits, cw)
