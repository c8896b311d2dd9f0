"""Compiled ConTree kernels whose cost does not grow with the number of classes K.

The kernels of ``kernels.py`` find a side's largest class weight by a scan over all K
classes at every candidate threshold, and keep the class weights of every candidate
(``cacc``, candidates x K): O(p m K) time and memory per depth-two evaluation, fine for a
few classes and hopeless for a target with a class per row (issue 24: 10,000 rows and
classes, 1.6 GB and seconds per evaluation). Here a depth-one split's cost
``(n_before - max_k C_k) + (n_after - max_k (T_k - C_k))`` (Eq. 13) is taken from a
forward pass, where the running class weights only grow and so does their maximum, and a
backward pass, which does the same for the rows after the threshold: O(p m) per
evaluation, O(K) scratch, whatever K. For integral weights the values are exactly those of
``kernels.py`` (so the search takes the same steps and returns the same tree); with
fractional weights they agree up to rounding, as the numpy path does.

``_Solver.wide`` (more than ``WIDE_CLASSES`` classes) selects them.
"""
from __future__ import annotations

import numpy as np

from .jit import njit

#: more classes than this: the compiled search uses these kernels (below, the per-class
#: scans of ``kernels.py`` cost less than the second pass; tests lower it to compare)
WIDE_CLASSES = 16


@njit(cache=True, nogil=True)
def eval_wide(ordl, posl, cls, wts, tot, cuts, cstart, has_splits, gl, cl, cr, tl, tr, pre_l, pre_r,
              f1, z):  # pragma: no cover
    """(theta_L, theta_R) of the root split (f1, z): ``kernels._eval_multi_cuts``'s values
    in O(p m). ``cl``, ``cr``, ``tl``, ``tr``: all-zero scratch of K entries, left
    all-zero; ``pre_l`` / ``pre_r``: scratch of m entries; ``gl``: of m entries."""
    p, m = ordl.shape
    for r in range(m):
        gl[r] = 1 if posl[f1, r] <= z else 0
    for i in range(m):  # the side totals, of the classes present only
        c = cls[0, i]
        if gl[ordl[0, i]]:
            tl[c] += wts[0, i]
    nl = 0.0
    nr = 0.0
    mtl = 0.0
    mtr = 0.0
    for i in range(m):
        c = cls[0, i]
        if tr[c] < 0.0:  # seen (marked below)
            continue
        a = tl[c]
        b = tot[c] - a
        tr[c] = -1.0
        nl += a
        nr += b
        if a > mtl:
            mtl = a
        if b > mtr:
            mtr = b
    for i in range(m):
        tl[cls[0, i]] = 0.0
        tr[cls[0, i]] = 0.0
    eL = nl - mtl
    eR = nr - mtr
    if has_splits:
        bestL = -np.inf
        bestR = -np.inf
        for f2 in range(p):
            c0 = cstart[f2]
            c1 = cstart[f2 + 1]
            if c0 == c1:
                continue
            a = 0.0  # largest class weight so far, left / right of the root split
            b = 0.0
            i = 0
            for c in range(c0, c1):
                e = cuts[c]
                while i <= e:
                    k = cls[f2, i]
                    if gl[ordl[f2, i]]:
                        cl[k] += wts[f2, i]
                        if cl[k] > a:
                            a = cl[k]
                    else:
                        cr[k] += wts[f2, i]
                        if cr[k] > b:
                            b = cr[k]
                    i += 1
                pre_l[c - c0] = a
                pre_r[c - c0] = b
            for j in range(i):
                cl[cls[f2, j]] = 0.0
                cr[cls[f2, j]] = 0.0
            a = 0.0  # the same after each threshold, from the back
            b = 0.0
            i = m - 1
            for c in range(c1 - 1, c0 - 1, -1):
                e = cuts[c]
                while i > e:
                    k = cls[f2, i]
                    if gl[ordl[f2, i]]:
                        cl[k] += wts[f2, i]
                        if cl[k] > a:
                            a = cl[k]
                    else:
                        cr[k] += wts[f2, i]
                        if cr[k] > b:
                            b = cr[k]
                    i -= 1
                s = pre_l[c - c0] + a
                if s > bestL:
                    bestL = s
                s = pre_r[c - c0] + b
                if s > bestR:
                    bestR = s
            for j in range(i + 1, m):
                cl[cls[f2, j]] = 0.0
                cr[cls[f2, j]] = 0.0
        eL = min(eL, nl - bestL)
        eR = min(eR, nr - bestR)
    return eL, eR


@njit(cache=True, nogil=True)
def side_errors_wide(cls, wts, left, valid, big, errL, errR, sa, sb):  # pragma: no cover
    """``errL[f2, i]`` / ``errR[f2, i]``: the depth-one cost of the rows with ``left`` True
    / False split after position i of f2's order (``big`` where ``valid`` is False), as
    ``kernels.side_errors`` gives them; (p, m) arrays by position: ``cls`` class, ``wts``
    weight. ``sa``, ``sb``: all-zero scratch of K entries, left all-zero."""
    p, m = cls.shape
    for f2 in range(p):
        s1 = 0.0
        s2 = 0.0
        a = 0.0
        b = 0.0
        for i in range(m):
            k = cls[f2, i]
            if left[f2, i]:
                sa[k] += wts[f2, i]
                s1 += wts[f2, i]
                if sa[k] > a:
                    a = sa[k]
            else:
                sb[k] += wts[f2, i]
                s2 += wts[f2, i]
                if sb[k] > b:
                    b = sb[k]
            if valid[f2, i]:
                errL[f2, i] = s1 - a
                errR[f2, i] = s2 - b
            else:
                errL[f2, i] = big
                errR[f2, i] = big
        for i in range(m):
            sa[cls[f2, i]] = 0.0
            sb[cls[f2, i]] = 0.0
        s1 = 0.0
        s2 = 0.0
        a = 0.0
        b = 0.0
        for i in range(m - 1, -1, -1):
            if valid[f2, i]:
                errL[f2, i] += s1 - a
                errR[f2, i] += s2 - b
            k = cls[f2, i]
            if left[f2, i]:
                sa[k] += wts[f2, i]
                s1 += wts[f2, i]
                if sa[k] > a:
                    a = sa[k]
            else:
                sb[k] += wts[f2, i]
                s2 += wts[f2, i]
                if sb[k] > b:
                    b = sb[k]
        for i in range(m):
            sa[cls[f2, i]] = 0.0
            sb[cls[f2, i]] = 0.0


@njit(cache=True, nogil=True)
def d2_errors_wide(ordl, posl, cls, wts, valid, K, f1, z, big, errL, errR, totL, totR):  # pragma: no cover
    """``kernels.d2_errors`` (same arguments, same values) in O(p m + K)."""
    p, m = ordl.shape
    left = np.empty((p, m), dtype=np.bool_)
    for f2 in range(p):
        for i in range(m):
            left[f2, i] = posl[f1, ordl[f2, i]] <= z
    for k in range(K):
        totL[k] = 0.0
        totR[k] = 0.0
    for i in range(m):
        totR[cls[0, i]] += wts[0, i]
        if left[0, i]:
            totL[cls[0, i]] += wts[0, i]
    for k in range(K):
        totR[k] = totR[k] - totL[k]
    side_errors_wide(cls, wts, left, valid, big, errL, errR, np.zeros(K), np.zeros(K))


@njit(cache=True, nogil=True)
def depth_one_wide(cls, wts, valid, K, big):  # pragma: no cover
    """(p, m) cost of the depth-one tree split after each position of each feature's
    order (``big`` where no threshold falls), for ``DepthTwo.depth_one``."""
    p, m = cls.shape
    err = np.empty((p, m))
    other = np.empty((p, m))
    side_errors_wide(cls, wts, np.ones((p, m), dtype=np.bool_), valid, big, err, other, np.zeros(K), np.zeros(K))
    return err


@njit(cache=True, nogil=True)
def gini_wide(cls, wts, tot):  # pragma: no cover
    """``_Solver.gini_scores`` in O(p m + K): per feature and position, the sum over both
    sides of (class weight)^2 / side weight, and the two sides' weights. The right side's
    squares come from the left's: sum (T - C)^2 = sum T^2 - 2 sum T C + sum C^2."""
    p, m = cls.shape
    K = tot.shape[0]
    score = np.empty((p, m))
    nL = np.empty((p, m))
    nR = np.empty((p, m))
    n = 0.0
    tt = 0.0
    for k in range(K):
        n += tot[k]
        tt += tot[k] * tot[k]
    c = np.zeros(K)
    for f in range(p):
        sq = 0.0
        cross = 0.0
        s = 0.0
        for i in range(m):
            k = cls[f, i]
            w = wts[f, i]
            sq += (2.0 * c[k] + w) * w
            cross += tot[k] * w
            c[k] += w
            s += w
            nL[f, i] = s
            nR[f, i] = n - s
            right = tt - 2.0 * cross + sq
            score[f, i] = sq / s + right / (n - s) if s > 0.0 and n - s > 0.0 else -np.inf
        for i in range(m):
            c[cls[f, i]] = 0.0
    return score, nL, nR
