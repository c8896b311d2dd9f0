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

from .kernels import AVAILABLE, budget_values, fill_budgets, njit, offer_root

__all__ = ["AVAILABLE", "difference", "pair_sums", "pair_sums_into", "squared_tail", "squared_three", "squared_two"]


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


@njit(cache=True, nogil=True)
def _gather(BS, st, f, side, rows_B, rows_st, tot):  # pragma: no cover
    """The rows of ``BS`` (and their statistics ``st``) where candidate ``f`` is ``side``,
    copied to the front of ``rows_B`` / ``rows_st``, their statistics summed into ``tot``;
    how many."""
    s, m = BS.shape
    for j in range(3):
        tot[j] = 0.0
    n = 0
    for r in range(s):
        if BS[r, f] == side:
            for g in range(m):
                rows_B[n, g] = BS[r, g]
            for j in range(3):
                rows_st[n, j] = st[r, j]
                tot[j] += st[r, j]
            n += 1
    return n


@njit(cache=True, nogil=True)
def squared_three(BS, st, cand, k, ub, c, gap, min_leaf, min_node, eps, unit, by_difference, PS, PA, PB,
                  rows_B, rows_st):  # pragma: no cover
    """The split search of ``bounded.BoundedSearch._splits`` for a subproblem of depth three
    of the squared-error task, compiled (van der Linden et al., NeurIPS 2023, Sec. 4.5, with
    STreeD's depth-two solver of Sec. 4.4 at each child): rows ``BS`` (s, m) of 0/1
    candidates (``Bq``, every candidate allowed) with statistics ``st`` (s, 3); root
    candidates ``cand`` in their order (``_order``); at most ``k`` nodes, upper bound ``ub``
    and ``c`` per node. Each child is ``squared_tail`` on its pair sums: the smaller side's
    from its rows, the larger side's by difference from the node's (``by_difference``:
    integral weights) or from its rows. The larger side is solved first and a split whose
    larger side alone exceeds the bound skips the smaller side's tail. ``PS``, ``PA``, ``PB``
    (m, m, 4) and ``rows_B`` (s, m), ``rows_st`` (s, 3) are buffers. Returns (best,
    candidate or -1, budget of the side where it fails, where it holds, least bound over the
    splits that did not improve), as ``kernels.depth_three``."""
    s, m = BS.shape
    total = np.zeros(3)
    for r in range(s):
        for j in range(3):
            total[j] += st[r, j]
    pair_sums_into(BS, st, unit, PS)
    leaf = _sse(total[0], total[1], total[2])
    best = leaf
    choice_f, choice_l, choice_r = -1, 0, 0
    lb_split = np.inf
    least = max(min_leaf, 1.0)
    sub = min(3, k - 1)
    lo_kl = max(0, k - 1 - sub)
    ok = np.ones(m, dtype=np.bool_)
    no = np.zeros((0, 0), dtype=np.bool_)
    tot_a = np.zeros(3)
    tot_b = np.zeros(3)
    VA = np.zeros(4)
    VB = np.zeros(4)
    for t in range(cand.shape[0]):
        f = cand[t]
        n_true = PS[f, f, 0]
        n_false = s - n_true
        if n_true < least or n_false < least:
            continue
        u = min(ub, best - gap)
        if c > u + eps * (1.0 + abs(u)):  # two leaves cost nothing more: the split costs c at least
            if c < lb_split:
                lb_split = c
            continue
        small_true = n_true <= n_false  # side A: the smaller; B: the larger
        na = _gather(BS, st, f, small_true, rows_B, rows_st, tot_a)
        pair_sums_into(rows_B[:na], rows_st[:na], unit, PA)
        nb = s - na
        if by_difference:
            difference(PS, PA, PB)
            for j in range(3):
                tot_b[j] = total[j] - tot_a[j]
        else:
            _gather(BS, st, f, not small_true, rows_B, rows_st, tot_b)
            pair_sums_into(rows_B[:nb], rows_st[:nb], unit, PB)
        EB = squared_tail(PB, tot_b, float(nb), ok, no, no, least, min_node, _sse(tot_b[0], tot_b[1], tot_b[2]))[0]
        budget_values(EB, c, VB)
        solved_a = False
        for kl in range(lo_kl, sub + 1):
            kr = k - 1 - kl
            ka = kr if small_true else kl  # kl: the side where f fails; kr: where it holds
            kb = kl if small_true else kr
            u = min(ub, best - gap)
            bound_u = u + eps * (1.0 + abs(u))
            b = VB[kb] + c
            if b > bound_u:
                if b < lb_split:
                    lb_split = b
                continue
            if not solved_a:
                EA = squared_tail(PA, tot_a, float(na), ok, no, no, least, min_node,
                                  _sse(tot_a[0], tot_a[1], tot_a[2]))[0]
                budget_values(EA, c, VA)
                solved_a = True
            v = VA[ka] + VB[kb] + c
            if v > bound_u:  # above the bound: a value to report as a bound, never an optimum
                if v < lb_split:
                    lb_split = v
                continue
            if v < best:
                best = v
                choice_f, choice_l, choice_r = f, kl, kr
            elif v < lb_split:
                lb_split = v
    return best, choice_f, choice_l, choice_r, lb_split


@njit(cache=True, nogil=True)
def _best_one(P, t, s, f, on_true, min_leaf, min_node):  # pragma: no cover
    """The candidate of the best depth-one split of the side of root ``f`` where it holds
    (``on_true``) or fails, from the pair sums ``P`` of the node's ``s`` rows whose
    statistics sum to ``t``: the first least, as ``squared_tail`` scans; -1 where no split
    of that side beats its leaf (or none is allowed by the sizes)."""
    m = P.shape[0]
    nR = P[f, f, 0]
    r0, r1, r2 = P[f, f, 1], P[f, f, 2], P[f, f, 3]
    if on_true:
        n_side, leaf = nR, _sse(r0, r1, r2)
    else:
        n_side, leaf = s - nR, _sse(t[0] - r0, t[1] - r1, t[2] - r2)
    if n_side < min_node:
        return -1
    best = np.inf
    arg = -1
    for g in range(m):
        lo = f if f < g else g
        hi = g if f < g else f
        nRR = P[lo, hi, 0]
        q0, q1, q2 = P[lo, hi, 1], P[lo, hi, 2], P[lo, hi, 3]
        if on_true:
            if nRR < min_leaf or nR - nRR < min_leaf:
                continue
            v = _sse(q0, q1, q2) + _sse(r0 - q0, r1 - q1, r2 - q2)
        else:
            nLR = P[g, g, 0] - nRR
            if nLR < min_leaf or (s - nR) - nLR < min_leaf:
                continue
            x0, x1, x2 = P[g, g, 1] - q0, P[g, g, 2] - q1, P[g, g, 3] - q2
            v = _sse(x0, x1, x2) + _sse(t[0] - r0 - x0, t[1] - r1 - x1, t[2] - r2 - x2)
        if v < best:
            best = v
            arg = g
    return arg if best < leaf else -1


@njit(cache=True, nogil=True)
def squared_two_tree(BS, st, k, c, min_leaf, min_node, unit):  # pragma: no cover
    """The tree of depth at most two and at most ``k`` nodes that the depth-two solver
    values for rows ``BS`` (s, m) with statistics ``st`` (least ``error + c * nodes``, the
    first least budget, as ``bounded.BoundedSearch._small``): (root candidate or -1 for a
    leaf, the split of the side where it fails, where it holds; -1: a leaf), in one call
    instead of the numpy recursion of ``Search.decode``."""
    s, m = BS.shape
    t = np.zeros(3)
    for r in range(s):
        for j in range(3):
            t[j] += st[r, j]
    P = pair_sums(BS, st, unit)
    ok = np.ones(m, dtype=np.bool_)
    no = np.zeros((0, 0), dtype=np.bool_)
    E, F, BL, BR = squared_tail(P, t, float(s), ok, no, no, min_leaf, min_node, _sse(t[0], t[1], t[2]))
    at = 0
    for i in range(1, min(k, 3) + 1):
        if E[i] + c * i < E[at] + c * at:
            at = i
    f = F[at]
    if f < 0:
        return -1, -1, -1
    g_false = _best_one(P, t, float(s), f, False, min_leaf, min_node) if BL[at] > 0 else -1
    g_true = _best_one(P, t, float(s), f, True, min_leaf, min_node) if BR[at] > 0 else -1
    return f, g_false, g_true
