"""Compiled Alg. 1 at a node with three levels left (``depth_three``), for the plain
program: no minimum leaf size, no gap.

Brita, van der Linden and Demirović (AAAI 2025, "ConTree"), Alg. 1 ``Branch(D, 3, f, UB)``
over every feature ``f`` of the node, with the pruning rules of ``search._Solver.branch``
at ``d == 3`` with ``monotone`` True: interval shrinking (Theorem 2 and Eq. 11),
sub-interval pruning (Theorem 3, Eq. 12) and neighbourhood pruning (Corollary 1, Eq. 9),
the interval queue first in, first out, the larger child first and the second child's
bound ``UB - theta(first) + eta`` (the paper's "Upper bounds" paragraph). Every evaluated
split (Eq. 6) is split with :func:`kernels.split_node` and both children's depth-two
problems are solved by :func:`kernels.d2_quick` (Alg. 1 + Alg. 2 / Eq. 13) with the
bounds ``_Solver._solve`` gives them, so the optimum, the evaluated splits and the
incumbent are those of the Python loop without its sub-problem cache.

The search is resumable: it stops once its work passes a budget (row-feature steps, as
``d2_search``'s) and returns to the caller for its time check.
"""
from __future__ import annotations

import math

import numpy as np

from .jit import njit
from .kernels import _bound_for, d2_quick, leaf_cost, split_node

#: ``st`` fields: the feature searched, the ring's head and length, the IS limits ML/MR
#: (Theorem 2), the feature's number of candidates (-1: not prepared yet)
ST_F, ST_HEAD, ST_LEN, ST_ML, ST_MR, ST_MF = 0, 1, 2, 3, 4, 5
#: ``best`` fields: root feature, position and candidate index; per side (left at 3, right
#: at 7): 1 if a depth-two split else 0 (a leaf), its leaf label, its feature, its position
BEST_F, BEST_Z, BEST_W, BEST_L, BEST_R = 0, 1, 2, 3, 7
#: ``counts`` fields: root splits evaluated, intervals pruned by SP, depth-two problems
#: solved, their splits evaluated, their intervals pruned by SP, improvements of ``inc``
CT_EVALS, CT_SP, CT_CALLS, CT_D2_EVALS, CT_D2_SP, CT_IMPROVED = 0, 1, 2, 3, 4, 5


@njit(cache=True, nogil=True, inline="always")
def _left_of(wc, mf, x):  # pragma: no cover
    """``bisect.bisect_left(wc[:mf], x)``."""
    lo, hi = 0, mf
    while lo < hi:
        mid = (lo + hi) // 2
        if wc[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True, inline="always")
def _right_of(wc, mf, x):  # pragma: no cover
    """``bisect.bisect_right(wc[:mf], x)``."""
    lo, hi = 0, mf
    while lo < hi:
        mid = (lo + hi) // 2
        if x < wc[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo



@njit(cache=True, nogil=True, inline="always")
def _shrink(st, i, j, u, v, wc, mf, tcL, tcR, thL, thR, B, tol):  # pragma: no cover
    """P_IS, Eq. (11), on the interval [i, j] between the evaluated candidates u and v (-1:
    none): the Theorem 2 limits ``st[ST_ML]``/``st[ST_MR]``, then the thresholds within
    the moved weight of a neighbour's bound (right of u: ``thL[u] + tcR[u]``, left of v:
    ``tcL[v] + thR[v]``; theta itself where the sides are monotone, ``thX`` = ``tcX``)."""
    if st[ST_ML] > i:
        i = st[ST_ML]
    if st[ST_MR] < j:
        j = st[ST_MR]
    if u >= 0:
        su = thL[u] + tcR[u]
        if su - B > 0:
            i = max(i, _left_of(wc, mf, wc[u] + (su - B) - tol))
    if v >= 0:
        sv = tcL[v] + thR[v]
        if sv - B > 0:
            j = min(j, _right_of(wc, mf, wc[v] - (sv - B) + tol) - 1)
    return i, j


@njit(cache=True, nogil=True, inline="always")
def _neighbours(inc, f, c, wc, mf, tm, tp, tol):  # pragma: no cover
    """P_NB, Eq. (9): the candidates ``(lo, hi)`` nearest the evaluated c that stay open,
    from the bounds ``tm`` on the splits left of c and ``tp`` on those right of it."""
    lo, hi = c - 1, c + 1
    r = tm - _bound_for(inc, f, c - 1)
    if r > 0:
        lo = min(lo, _right_of(wc, mf, wc[c] - r + tol) - 1)
    r = tp - _bound_for(inc, f, c + 1)
    if r > 0:
        hi = max(hi, _left_of(wc, mf, wc[c] + r - tol))
    return lo, hi


@njit(cache=True, nogil=True, inline="always")
def _enqueue(queue, st, i, j, u, v):  # pragma: no cover
    """Append the interval [i, j] with neighbours u, v to the ring; its slot."""
    t = (st[ST_HEAD] + st[ST_LEN]) % queue.shape[0]
    queue[t, 0] = i
    queue[t, 1] = j
    queue[t, 2] = u
    queue[t, 3] = v
    st[ST_LEN] += 1
    return t

@njit(cache=True, nogil=True)
def _child(rows, order, vals, y, w, wd, sgn, K, lid, bound, d_strict, d_tie, integral, tol, rules,
           out, o, counts):  # pragma: no cover
    """``_Solver.solve(child, 2, bound, level > 0)`` through ``solve_d2_quick``: returns
    ``(exact, cost or lower bound)`` and writes the subtree (leaf label or depth-two root
    split) to ``out[o:o+4]``."""
    counts[CT_CALLS] += 1
    cl, lab = leaf_cost(rows, y, w, K)
    out[o] = 0
    out[o + 1] = lab
    if cl <= 0.0 or rows.shape[0] < 2:
        return True, cl
    has_leaf = cl <= bound
    inc = np.empty(7)
    inc[0] = cl if has_leaf else math.inf
    inc[1] = -1.0
    inc[2] = -1.0
    inc[3] = 1.0 if has_leaf else 0.0
    inc[4] = bound
    inc[5] = d_strict
    inc[6] = d_tie
    # the gate of ``depth_three.DepthThree.d3_fits`` makes every depth-two search finish
    done, bf, bz, n_evals, n_sp = d2_quick(rows, order, vals, y, w, wd, sgn, K, lid, inc, 0.0, tol, rules,
                                           1 << 62, False, 1, 0.0, -1, -1)
    counts[CT_D2_EVALS] += n_evals
    counts[CT_D2_SP] += n_sp
    if bf >= 0:
        out[o] = 1
        out[o + 2] = bf
        out[o + 3] = bz
        return True, inc[0]
    if has_leaf:
        return True, cl
    if integral:  # _Solver.lb_after_fail
        return False, float(math.floor(bound + 1e-9) + 1)
    return False, bound + tol


@njit(cache=True, nogil=True)
def d3_search(rows, order, vals, y, w, wd, sgn, K, lid, mark, inc, integral, canonical, tol, rules, st, queue,
              cuts, wc, tcL, tcR, thL, thR, best, counts, budget):  # pragma: no cover
    """Alg. 1 over the features ``st[ST_F]..p-1`` of a depth-three node (resumable).

    ``inc`` is the incumbent as in ``kernels._bound_for`` (cost, feature, candidate index,
    active, the caller's bound, d_strict, d_tie), updated in place, with the subtrees of
    its split in ``best``. State between calls: ``st``, ``queue`` (a ring of rows (i, j,
    u, v): an interval of candidate indices and its evaluated neighbours, -1 for none),
    the feature's candidate positions ``cuts`` and prefix weights ``wc`` (z(.) of the
    paper), and per evaluated candidate the side costs ``tcL``/``tcR`` (= ``thL``/``thR``:
    exact optima or lower bounds). Returns True when every feature is searched; False
    after ``budget`` row-feature steps.
    """
    p, m = order.shape
    use_nb, use_is, use_sp = rules[0], rules[1], rules[2]
    d_strict, d_tie = inc[5], inc[6]
    cap = queue.shape[0]
    side = np.empty(8, dtype=np.int64)
    work = 0
    while st[ST_F] < p:
        f = st[ST_F]
        if st[ST_MF] < 0:  # a new feature: "if theta_opt = 0 then break" (Alg. 1), else its candidates
            if inc[3] != 0.0 and inc[0] <= 0.0 and (f > inc[1] or not canonical):
                st[ST_F] += 1
                continue
            mf = 0
            acc = 0.0
            for i in range(m):
                acc += w[order[f, i]]
                if i + 1 < m and vals[f, i + 1] > vals[f, i]:
                    cuts[mf] = i
                    wc[mf] = acc
                    mf += 1
            st[ST_MF] = mf
            st[ST_ML] = 0
            st[ST_MR] = mf - 1
            st[ST_HEAD] = 0
            st[ST_LEN] = 0
            if mf > 0:
                queue[0, 0] = 0
                queue[0, 1] = mf - 1
                queue[0, 2] = -1
                queue[0, 3] = -1
                st[ST_LEN] = 1
        mf = st[ST_MF]
        while st[ST_LEN] > 0:
            if work >= budget:
                return False
            h = st[ST_HEAD]
            i, j, u, v = queue[h, 0], queue[h, 1], queue[h, 2], queue[h, 3]
            st[ST_HEAD] = (h + 1) % cap
            st[ST_LEN] -= 1
            B = _bound_for(inc, f, j)  # inclusive bound for every split in [i..j]
            if use_is:  # P_IS, Eq. (11)
                i, j = _shrink(st, i, j, u, v, wc, mf, tcL, tcR, thL, thR, B, tol)
                if i > j:
                    continue
            if use_sp:  # P_SP, Eq. (12)
                lbI = max(thL[u] if u >= 0 else 0.0, 0.0) + max(thR[v] if v >= 0 else 0.0, 0.0)
                if lbI > B:
                    counts[CT_SP] += 1
                    continue
            c = (i + j) // 2
            z = cuts[c]
            counts[CT_EVALS] += 1
            rl, ol, vl, rr, orr, vr = split_node(rows, order, vals, mark, f, z)
            work += p * m
            fbL = thL[u] if u >= 0 else 0.0
            fbR = thR[v] if v >= 0 else 0.0
            first_left = rl.shape[0] >= rr.shape[0]
            e0 = counts[CT_D2_EVALS]
            if first_left:
                exA, tA = _child(rl, ol, vl, y, w, wd, sgn, K, lid, B, d_strict, d_tie, integral, tol, rules,
                                 side, 0, counts)
            else:
                exA, tA = _child(rr, orr, vr, y, w, wd, sgn, K, lid, B, d_strict, d_tie, integral, tol, rules,
                                 side, 4, counts)
            work += (counts[CT_D2_EVALS] - e0) * p * (rl.shape[0] if first_left else rr.shape[0])
            eta = min(wc[c] - wc[i], wc[j] - wc[c])  # "Upper bounds" paragraph
            bB = B - tA + eta
            solvedB = bB >= 0
            exB = False
            e0 = counts[CT_D2_EVALS]
            if solvedB:
                if first_left:
                    exB, tB = _child(rr, orr, vr, y, w, wd, sgn, K, lid, bB, d_strict, d_tie, integral, tol,
                                     rules, side, 4, counts)
                else:
                    exB, tB = _child(rl, ol, vl, y, w, wd, sgn, K, lid, bB, d_strict, d_tie, integral, tol,
                                     rules, side, 0, counts)
            else:
                tB = fbR if first_left else fbL
            work += (counts[CT_D2_EVALS] - e0) * p * (rr.shape[0] if first_left else rl.shape[0])
            if first_left:
                exactL, tL, exactR, tR = exA, tA, exB, tB
            else:
                exactL, tL, exactR, tR = exB, tB, exA, tA
            tw = tL + tR
            if exA and exB and tw <= B:
                inc[0] = tw
                inc[1] = f
                inc[2] = c
                inc[3] = 1.0
                best[BEST_F] = f
                best[BEST_Z] = z
                best[BEST_W] = c
                for k in range(8):
                    best[BEST_L + k] = side[k]
                counts[CT_IMPROVED] += 1
            tcL[c], tcR[c], thL[c], thR[c] = tL, tR, tL, tR
            if use_is:  # Theorem 2
                if exactL and tL <= 0.0 and tw > _bound_for(inc, f, 0):
                    st[ST_ML] = max(st[ST_ML], c + 1)
                if exactR and tR <= 0.0 and tw > _bound_for(inc, f, c + 1):
                    st[ST_MR] = min(st[ST_MR], c - 1)
            lo, hi = _neighbours(inc, f, c, wc, mf, tw, tw, tol) if use_nb else (c - 1, c + 1)  # P_NB, Eq. (9)
            if hi <= j:
                _enqueue(queue, st, hi, j, c, v)
            if i <= lo:
                _enqueue(queue, st, i, lo, u, c)
        st[ST_F] += 1
        st[ST_MF] = -1
    return True
