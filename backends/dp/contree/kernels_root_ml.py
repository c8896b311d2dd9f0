"""Compiled Alg. 1 at the root with three levels left and a minimum leaf size
(``depth_three.DepthThree.solve_d3_min_leaf``): :meth:`search._Solver.branch` at ``d == 3``
with ``monotone`` False, as :mod:`.minleaf` states its rules, in one numba call per work
budget.

Brita, van der Linden and Demirović (AAAI 2025, "ConTree"), Alg. 1 ``Branch(D, 3, f, UB)``
over every feature of the node: interval shrinking (Theorem 2 and Eq. 11), sub-interval
pruning (Theorem 3, Eq. 12) and neighbourhood pruning (Corollary 1, Eq. 9), with the side
that grows bounded by its optimum without the constraint, the cross rule, and the weightless
relaxation of an interval (:meth:`.minleaf.MinLeaf.relaxed_sides`); the interval queue
first in, first out, the larger child first and the second child's bound ``UB - theta(first)
+ eta``. Every evaluated split's children are solved as
:meth:`.minleaf.MinLeaf.solve_min_leaf` solves them below the root: the two-phase depth-two
search (:func:`kernels.d2_two_phase`), which also gives each child's optimum without the
constraint, or, for a child of fewer than ``2 m`` rows (a leaf under the constraint), that
optimum from the plain depth-two search. The optimum, the evaluated splits and the
incumbent are those of the Python loop (without its sub-problem cache, which at the root
only the greedy initial tree fills).

The search is resumable: it stops once its work passes a budget and returns to the
caller for its time check. The state layout (``st``, ``queue``, ``thL``/``thR``) is that of
:mod:`.kernels_root`, so :meth:`DepthThree.d3_lower_bound` reads both.
"""
from __future__ import annotations

import math

import numpy as np

from .jit import njit
from .kernels import _bound_for, d2_quick, d2_two_phase, leaf_cost, split_node
from .kernels_root import (BEST_F, BEST_L, BEST_W, BEST_Z, ST_F, ST_HEAD, ST_LEN, ST_MF, ST_ML, ST_MR, _enqueue,
                           _neighbours, _shrink)

#: ``counts`` fields: root splits evaluated, intervals pruned by SP (and ``lb1``), children
#: solved, their splits evaluated, improvements of ``inc``, intervals pruned by the
#: relaxation, relaxation attempts, the relaxed searches' evaluations, phase-one evaluations
CM_EVALS, CM_SP, CM_CALLS, CM_D2_EVALS, CM_IMPROVED, CM_RELAXED, CM_ATTEMPTS, CM_REL_EVALS, CM_PHASE1 = range(9)


@njit(cache=True, nogil=True)
def _lb_after_fail(bound, integral, tol):  # pragma: no cover
    """``_Solver.lb_after_fail``."""
    if integral:
        return float(math.floor(bound + 1e-9) + 1)
    return bound + tol


@njit(cache=True, nogil=True)
def _child_ml(rows, order, vals, y, w, wd, sgn, K, lid, bound, d_strict, d_tie, integral, tol, rules, rules1,
              ml, out, o, counts):  # pragma: no cover
    """``_Solver.solve(child, 2, bound, 1)`` with a minimum leaf size ``ml`` (through
    ``solve_min_leaf``): ``(exact, cost or lower bound, free)`` with ``free`` the proven
    lower bound on the child's optimum without the constraint; the subtree (leaf label or
    depth-two root split) goes to ``out[o:o+4]``. ``rules1``: the rules of the search
    without the constraint (the cross rule off, as ``_Solver.free`` has them)."""
    counts[CM_CALLS] += 1
    cl, lab = leaf_cost(rows, y, w, K)
    out[o] = 0
    out[o + 1] = lab
    if cl <= 0.0:
        return True, cl, 0.0
    m = rows.shape[0]
    has_leaf = cl <= bound
    inc = np.empty(7)
    inc[0] = cl if has_leaf else math.inf
    inc[1] = -1.0
    inc[2] = -1.0
    inc[3] = 1.0 if has_leaf else 0.0
    inc[4] = bound
    inc[5] = d_strict
    inc[6] = d_tie
    if m < 2 * ml:  # only a leaf with the constraint; the optimum without it from the plain search
        if m < 2:
            return True, cl, cl
        done, bf, bz, n_evals, n_sp = d2_quick(rows, order, vals, y, w, wd, sgn, K, lid, inc, 0.0, tol, rules1,
                                               1 << 62, False, 1, 0.0, -1, -1)
        counts[CM_D2_EVALS] += n_evals
        if bf < 0 and not has_leaf:  # no tree within the bound, so none with large leaves
            lb = _lb_after_fail(bound, integral, tol)
            return False, lb, lb
        return True, cl, inc[0]
    inc1 = inc.copy()
    # the gate of ``DepthThree.d3_fits`` makes every depth-two search finish in one call
    done, bf, bz, n_evals, n_sp, n_first = d2_two_phase(rows, order, vals, y, w, wd, sgn, K, lid, inc, inc1, 0.0,
                                                        tol, rules, 1 << 62, False, ml)
    counts[CM_D2_EVALS] += n_evals
    counts[CM_PHASE1] += n_first
    free = max(0.0, inc1[0]) if inc1[3] != 0.0 else _lb_after_fail(bound, integral, tol)
    if bf >= 0:
        out[o] = 1
        out[o + 2] = bf
        out[o + 3] = bz
        return True, inc[0], free
    if has_leaf:
        return True, cl, free
    return False, max(_lb_after_fail(bound, integral, tol), free), free


@njit(cache=True, nogil=True)
def _relaxed(rows, order, vals, y, w, wd, sgn, K, lid, zero, bound, lower, stop, integral, d_strict, d_tie, tol,
             rules, ml, sf, sv, w2, wd2, sgn2, counts):  # pragma: no cover
    """:meth:`.minleaf.MinLeaf.relaxed`: ``(lower bound, within stop)`` of the constrained
    depth-two optimum of the rows ``rows`` with the rows ``zero`` weightless, the search
    seeded with the root split of feature ``sf`` (-1: none) after the value ``sv`` (as
    :meth:`.minleaf.MinLeaf.seed_position`). ``w2``/``wd2``/``sgn2`` are scratch copies of
    the weights over the dataset, left equal to ``w``/``wd``/``sgn``."""
    if integral:
        stop = math.floor(stop + 1e-9)
    for k in range(zero.shape[0]):
        r = zero[k]
        w2[r] = 0.0
        wd2[r] = 0
        sgn2[r] = 0
    leaf, _ = leaf_cost(rows, y, w2, K)
    res = 0.0
    within = False
    if leaf <= 0 or rows.shape[0] < 2 * ml:
        res = max(leaf, lower)
    elif leaf <= bound and leaf <= stop:
        res = lower
        within = True
    else:
        inc = np.empty(7)
        inc[0] = leaf if leaf <= bound else math.inf
        inc[1] = -1.0
        inc[2] = -1.0
        inc[3] = 1.0 if leaf <= bound else 0.0
        inc[4] = bound
        inc[5] = d_strict
        inc[6] = d_tie
        sz = -1
        if sf >= 0:  # the last position at or below the seed's value
            sz = np.searchsorted(vals[sf], sv, side="right") - 1
            if sz < 0 or sz >= rows.shape[0] - 1:
                sf = -1
        done, _, _, n_evals, n_sp = d2_quick(rows, order, vals, y, w2, wd2, sgn2, K, lid, inc, 0.0, tol, rules,
                                             1 << 62, False, ml, max(stop, lower), sf, sz)
        counts[CM_REL_EVALS] += n_evals
        if inc[3] != 0.0:
            if inc[0] <= stop + tol:
                res = lower
                within = True
            else:
                res = max(inc[0], lower)
        else:
            res = max(_lb_after_fail(bound, integral, tol), lower)
    for k in range(zero.shape[0]):
        r = zero[k]
        w2[r] = w[r]
        wd2[r] = wd[r]
        sgn2[r] = sgn[r]
    return res, within


@njit(cache=True, nogil=True)
def _relaxed_sides(rows, order, vals, y, w, wd, sgn, K, lid, mark, f, u, v, zu, zv, uL, uR, tL, tR, B,
                   integral, d_strict, d_tie, tol, rules, ml, seeds, seedv, w2, wd2, sgn2, counts):  # pragma: no cover
    """:meth:`.minleaf.MinLeaf.relaxed_sides` for the root splits at positions ``zu`` to
    ``zv`` (the ends of an interval between the evaluated candidates ``u`` < ``v``, whose
    children's depth-two roots seed the searches): the two lower bounds."""
    counts[CM_ATTEMPTS] += 1
    rl, ol, vl, _, _, _ = split_node(rows, order, vals, mark, f, zv)
    _, _, _, rr, orr, vr = split_node(rows, order, vals, mark, f, zu)
    between = order[f, zu + 1: zv + 1]
    if tR - uR > tL - uL:
        aR, within = _relaxed(rr, orr, vr, y, w, wd, sgn, K, lid, between, B - uL, uR, B - tL, integral, d_strict,
                              d_tie, tol, rules, ml, seeds[u, 1], seedv[u, 1], w2, wd2, sgn2, counts)
        if within or uL + aR > B:
            return uL, aR
        aL, _ = _relaxed(rl, ol, vl, y, w, wd, sgn, K, lid, between, B - aR, uL, B - aR, integral, d_strict, d_tie,
                         tol, rules, ml, seeds[v, 0], seedv[v, 0], w2, wd2, sgn2, counts)
        return aL, aR
    aL, within = _relaxed(rl, ol, vl, y, w, wd, sgn, K, lid, between, B - uR, uL, B - tR, integral, d_strict, d_tie,
                          tol, rules, ml, seeds[v, 0], seedv[v, 0], w2, wd2, sgn2, counts)
    if within or aL + uR > B:
        return aL, uR
    aR, _ = _relaxed(rr, orr, vr, y, w, wd, sgn, K, lid, between, B - aL, uR, B - aL, integral, d_strict, d_tie,
                     tol, rules, ml, seeds[u, 1], seedv[u, 1], w2, wd2, sgn2, counts)
    return aL, aR


@njit(cache=True, nogil=True)
def _push(queue, rel, st, i, j, u, v, aL, aR):  # pragma: no cover
    """Append the interval [i, j] with neighbours u, v and relaxed bounds aL, aR."""
    t = _enqueue(queue, st, i, j, u, v)
    rel[t, 0] = aL
    rel[t, 1] = aR


@njit(cache=True, nogil=True)
def d3_search_ml(rows, order, vals, y, w, wd, sgn, K, lid, mark, inc, integral, canonical, tol, rules, relax, ml,
                 st, queue, rel, cuts, wc, tcL, tcR, thL, thR, seeds, seedv, best, counts, w2, wd2, sgn2,
                 budget):  # pragma: no cover
    """Alg. 1 with minimum leaf size ``ml`` over the features ``st[ST_F]..p-1`` of a
    depth-three node (resumable).

    ``inc``, ``best``, ``st``, ``queue`` (rows (i, j, u, v)), ``cuts``, ``wc`` as in
    :func:`kernels_root.d3_search`; ``rel`` holds each queued interval's relaxed bounds
    (aL, aR; 0 when none), ``tcL``/``tcR`` the evaluated candidates' (lower bounds on the)
    constrained side optima and ``thL``/``thR`` the lower bounds on the same sides'
    optima without the constraint, ``seeds[c]`` the features of the depth-two root splits
    of candidate c's exactly solved children, left then right (-1 none), and ``seedv[c]``
    the values before them (the relaxed searches start from them, as
    ``MinLeaf.seed_position``). ``relax``: the
    weightless relaxation on. Returns True when every feature is searched; False after
    ``budget`` row-feature steps."""
    p, m = order.shape
    use_nb, use_is, use_sp, use_cross = rules[0], rules[1], rules[2], rules[1] and rules[3]
    relax = relax and use_sp
    rules1 = rules.copy()  # the free search's: no cross rule without a minimum leaf size
    rules1[3] = False
    rules1[4] = False
    d_strict, d_tie = inc[5], inc[6]
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
                if i + 1 < m and vals[f, i + 1] > vals[f, i] and i + 1 >= ml and m - i - 1 >= ml:
                    cuts[mf] = i
                    wc[mf] = acc
                    mf += 1
            st[ST_MF] = mf
            st[ST_ML] = 0
            st[ST_MR] = mf - 1
            st[ST_HEAD] = 0
            st[ST_LEN] = 0
            if mf > 0:
                _push(queue, rel, st, 0, mf - 1, -1, -1, 0.0, 0.0)
        mf = st[ST_MF]
        while st[ST_LEN] > 0:
            if work >= budget:
                return False
            h = st[ST_HEAD]
            i, j, u, v = queue[h, 0], queue[h, 1], queue[h, 2], queue[h, 3]
            aL, aR = rel[h, 0], rel[h, 1]
            st[ST_HEAD] = (h + 1) % queue.shape[0]
            st[ST_LEN] -= 1
            B = _bound_for(inc, f, j)  # inclusive bound for every split in [i..j]
            if use_is:  # P_IS, Eq. (11)
                i, j = _shrink(st, i, j, u, v, wc, mf, tcL, tcR, thL, thR, B, tol)
                if use_cross and u >= 0 and v >= 0 and tcL[v] + tcR[u] - (wc[v] - wc[u]) > B + tol:
                    continue  # both sides shrink from a neighbour (the cross rule)
                if i > j:
                    continue
            if use_sp:  # P_SP, Eq. (12), on the sides' optima without the constraint and the relaxation
                lbI = max(thL[u] if u >= 0 else 0.0, aL) + max(thR[v] if v >= 0 else 0.0, aR)
                if lbI > B:
                    counts[CM_SP] += 1
                    continue
                if relax and i < j and u >= 0 and v >= 0 and max(tcL[u], aL) + max(tcR[v], aR) > B:
                    e0 = counts[CM_REL_EVALS]  # every split of [i, j] lies between its end candidates
                    aL, aR = _relaxed_sides(rows, order, vals, y, w, wd, sgn, K, lid, mark, f, u, v, cuts[i], cuts[j],
                                            max(thL[u], aL), max(thR[v], aR), tcL[u], tcR[v], B, integral, d_strict,
                                            d_tie, tol, rules, ml, seeds, seedv, w2, wd2, sgn2, counts)
                    work += (counts[CM_REL_EVALS] - e0 + 2) * p * m
                    if aL + aR > B:
                        counts[CM_RELAXED] += 1
                        continue
            if 0.0 > B:  # every split costs at least 0 (``lb1`` at the root)
                counts[CM_SP] += 1
                continue
            c = (i + j) // 2
            z = cuts[c]
            counts[CM_EVALS] += 1
            rl, ol, vl, rr, orr, vr = split_node(rows, order, vals, mark, f, z)
            work += p * m
            # fallbacks: the side's optimum without the constraint only grows (left) / shrinks (right)
            fbL = thL[u] if u >= 0 else 0.0
            fbR = thR[v] if v >= 0 else 0.0
            first_left = rl.shape[0] >= rr.shape[0]
            e0 = counts[CM_D2_EVALS]
            if first_left:
                exA, tA, fA = _child_ml(rl, ol, vl, y, w, wd, sgn, K, lid, B, d_strict, d_tie, integral, tol, rules,
                                        rules1, ml, side, 0, counts)
                uA = max(fA, fbL)
            else:
                exA, tA, fA = _child_ml(rr, orr, vr, y, w, wd, sgn, K, lid, B, d_strict, d_tie, integral, tol, rules,
                                        rules1, ml, side, 4, counts)
                uA = max(fA, fbR)
            tA = max(tA, uA)
            work += (counts[CM_D2_EVALS] - e0) * p * (rl.shape[0] if first_left else rr.shape[0])
            eta = min(wc[c] - wc[i], wc[j] - wc[c])  # "Upper bounds" paragraph
            bB = B - tA + eta
            exB = False
            e0 = counts[CM_D2_EVALS]
            if bB >= 0:
                if first_left:
                    exB, tB, fB = _child_ml(rr, orr, vr, y, w, wd, sgn, K, lid, bB, d_strict, d_tie, integral, tol,
                                            rules, rules1, ml, side, 4, counts)
                    uB = max(fB, fbR)
                else:
                    exB, tB, fB = _child_ml(rl, ol, vl, y, w, wd, sgn, K, lid, bB, d_strict, d_tie, integral, tol,
                                            rules, rules1, ml, side, 0, counts)
                    uB = max(fB, fbL)
                tB = max(tB, uB)
            else:
                tB = fbR if first_left else fbL
                uB = tB
            work += (counts[CM_D2_EVALS] - e0) * p * (rr.shape[0] if first_left else rl.shape[0])
            if first_left:
                exactL, tL, exactR, tR, uL, uR = exA, tA, exB, tB, uA, uB
            else:
                exactL, tL, exactR, tR, uL, uR = exB, tB, exA, tA, uB, uA
            # the relaxed searches' seeds: the children's depth-two root splits when solved
            seeds[c, 0] = side[2] if exactL and side[0] == 1 else -1
            seeds[c, 1] = side[6] if exactR and side[4] == 1 else -1
            if seeds[c, 0] >= 0:  # the value before the split, found again in other rows
                seedv[c, 0] = vl[side[2], side[3]]
            if seeds[c, 1] >= 0:
                seedv[c, 1] = vr[side[6], side[7]]
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
                counts[CM_IMPROVED] += 1
            tcL[c], tcR[c], thL[c], thR[c] = tL, tR, uL, uR
            if use_is:  # Theorem 2: u < c has theta_u >= OPT_1(R_c) >= uR, v > c has theta_v >= uL
                if uR > _bound_for(inc, f, 0):
                    st[ST_ML] = max(st[ST_ML], c + 1)
                if uL > _bound_for(inc, f, c + 1):
                    st[ST_MR] = min(st[ST_MR], c - 1)
            # P_NB, Eq. (9): tL + uR bounds the splits left of c, uL + tR those right of it
            lo, hi = _neighbours(inc, f, c, wc, mf, tL + uR, uL + tR, tol) if use_nb else (c - 1, c + 1)
            if hi <= j:
                _push(queue, rel, st, hi, j, c, v, aL, aR)
            if i <= lo:
                _push(queue, rel, st, i, lo, u, c, aL, aR)
        st[ST_F] += 1
        st[ST_MF] = -1
    return True
