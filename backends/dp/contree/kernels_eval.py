"""Compiled evaluations of one depth-two root split (Alg. 2 / Eq. (13) of Brita et al.):
the optimal depth-one costs of its left and right part, from running class weights along
every second-level feature's sorted order, for two classes (signed prefix sums,
``_eval_binary*``) and for more (class-weight accumulators, ``_eval_multi*``), over every
valid position or over the candidate positions ``cuts``; ``d2_binary`` / ``d2_multi`` over
a batch of root splits. Split from ``kernels.py``, which imports them (so
``kernels.d2_binary`` etc. still name them)."""
from __future__ import annotations

import numpy as np

from .jit import njit


@njit(cache=True, nogil=True)
def _has_splits(valid):  # pragma: no cover
    p, m = valid.shape
    for f in range(p):
        for i in range(m):
            if valid[f, i]:
                return True
    return False


@njit(cache=True, nogil=True)
def _eval_binary(ordl, posl, S, Sall, valid, wcum, Atot, Btot, has_splits, goleft, f1, z):  # pragma: no cover
    """(theta_L, theta_R) of one root split, two classes (see ``d2_batch_binary``)."""
    p, m = ordl.shape
    for r in range(m):
        goleft[r] = posl[f1, r] <= z
    mnL = np.inf
    mxL = -np.inf
    mnR = np.inf
    mxR = -np.inf
    if has_splits:
        for f2 in range(p):
            d = 0.0
            for i in range(m):
                if goleft[ordl[f2, i]]:
                    d += S[f2, i]
                if valid[f2, i]:
                    rr = Sall[f2, i] - d
                    if d < mnL:
                        mnL = d
                    if d > mxL:
                        mxL = d
                    if rr < mnR:
                        mnR = rr
                    if rr > mxR:
                        mxR = rr
    else:
        mnL = mxL = mnR = mxR = 0.0
    wl = float(wcum[f1, z])
    dl = float(Sall[f1, z])
    bl = (wl + dl) / 2.0
    al = wl - bl
    ar = Atot - al
    br = Btot - bl
    tL = min(min(al, bl), min(al + mnL, bl - mxL))
    tR = min(min(ar, br), min(ar + mnR, br - mxR))
    return tL, tR


@njit(cache=True, nogil=True)
def _eval_binary_cuts(ordl, posl, S, Sall, cuts, cstart, wcum, Atot, Btot, has_splits, gl, f1, z):  # pragma: no cover
    """:func:`_eval_binary` over the candidate positions ``cuts`` (feature f2 owns
    ``cuts[cstart[f2]:cstart[f2+1]]``): the signed prefix sums are accumulated branch-free
    (``gl[r]`` is 1 for a row going left, else 0) between consecutive candidates, and the
    extremes are only read at candidates. Same values as ``_eval_binary``."""
    p, m = ordl.shape
    for r in range(m):
        gl[r] = 1 if posl[f1, r] <= z else 0
    mnL = np.inf
    mxL = -np.inf
    mnR = np.inf
    mxR = -np.inf
    if has_splits:
        for f2 in range(p):
            c0 = cstart[f2]
            c1 = cstart[f2 + 1]
            if c0 == c1:
                continue
            d = S[f2, 0] - S[f2, 0]
            i = 0
            for c in range(c0, c1):
                e = cuts[c]
                while i <= e:
                    d += S[f2, i] * gl[ordl[f2, i]]
                    i += 1
                rr = Sall[f2, e] - d
                if d < mnL:
                    mnL = d
                if d > mxL:
                    mxL = d
                if rr < mnR:
                    mnR = rr
                if rr > mxR:
                    mxR = rr
    else:
        mnL = mxL = mnR = mxR = 0.0
    wl = float(wcum[f1, z])
    dl = float(Sall[f1, z])
    bl = (wl + dl) / 2.0
    al = wl - bl
    ar = Atot - al
    br = Btot - bl
    tL = min(min(al, bl), min(al + mnL, bl - mxL))
    tR = min(min(ar, br), min(ar + mnR, br - mxR))
    return tL, tR


@njit(cache=True, nogil=True)
def _eval_multi(ordl, posl, cls, wts, tot, valid, has_splits, goleft, cl, ca, tl, tr, f1, z):  # pragma: no cover
    """(theta_L, theta_R) of one root split, any number of classes (see ``d2_batch``).

    ``cls[f, i]`` / ``wts[f, i]`` class and weight of the row at position i of feature f's
    order.  A side's error at a threshold is ``n - max_k C_k - max_k (T_k - C_k)`` (Eq. 13);
    it is only re-evaluated when a row of that side moved since its last evaluation."""
    p, m = ordl.shape
    K = tot.shape[0]
    for r in range(m):
        goleft[r] = posl[f1, r] <= z
    for k in range(K):
        cl[k] = 0.0
    for i in range(m):  # class weights going left, along feature 0's order (CL[:, 0, -1])
        if goleft[ordl[0, i]]:
            cl[cls[0, i]] += wts[0, i]
    nl = 0.0
    nr = 0.0
    mtl = -np.inf
    mtr = -np.inf
    for k in range(K):
        tl[k] = cl[k]
        tr[k] = tot[k] - tl[k]
        nl += tl[k]
        nr += tr[k]
        if tl[k] > mtl:
            mtl = tl[k]
        if tr[k] > mtr:
            mtr = tr[k]
    eL = nl - mtl
    eR = nr - mtr
    if has_splits:
        bestL = -np.inf
        bestR = -np.inf
        for f2 in range(p):
            for k in range(K):
                cl[k] = 0.0
                ca[k] = 0.0
            dirtyL = False
            dirtyR = False
            for i in range(m):
                c = cls[f2, i]
                ca[c] += wts[f2, i]
                if goleft[ordl[f2, i]]:
                    cl[c] += wts[f2, i]
                    dirtyL = True
                else:
                    dirtyR = True
                if valid[f2, i]:
                    if dirtyL:
                        a1 = -np.inf
                        a2 = -np.inf
                        for k in range(K):
                            if cl[k] > a1:
                                a1 = cl[k]
                            v = tl[k] - cl[k]
                            if v > a2:
                                a2 = v
                        if a1 + a2 > bestL:
                            bestL = a1 + a2
                        dirtyL = False
                    if dirtyR:
                        c1 = -np.inf
                        c2 = -np.inf
                        for k in range(K):
                            cr = ca[k] - cl[k]
                            if cr > c1:
                                c1 = cr
                            v = tr[k] - cr
                            if v > c2:
                                c2 = v
                        if c1 + c2 > bestR:
                            bestR = c1 + c2
                        dirtyR = False
        eL = min(eL, nl - bestL)
        eR = min(eR, nr - bestR)
    return eL, eR


@njit(cache=True, nogil=True, inline="always")
def _root_sides(ordl, posl, cls, wts, tot, gl, cl, tl, tr, f1, z):  # pragma: no cover
    """The root split (f1, z) of the multiclass evaluators: ``gl[r]`` 1 for a local row
    going left, else 0; ``tl`` / ``tr`` the class weights of the left / right side (summed
    along feature 0's order); returns both sides' weights and largest class weights."""
    m = ordl.shape[1]
    K = tot.shape[0]
    for r in range(m):
        gl[r] = 1 if posl[f1, r] <= z else 0
    for k in range(K):
        cl[k] = 0.0
    for i in range(m):  # class weights going left, along feature 0's order
        cl[cls[0, i]] += wts[0, i] * gl[ordl[0, i]]
    nl = 0.0
    nr = 0.0
    mtl = -np.inf
    mtr = -np.inf
    for k in range(K):
        tl[k] = cl[k]
        tr[k] = tot[k] - tl[k]
        nl += tl[k]
        nr += tr[k]
        if tl[k] > mtl:
            mtl = tl[k]
        if tr[k] > mtr:
            mtr = tr[k]
    return nl, nr, mtl, mtr


@njit(cache=True, nogil=True, inline="always")
def _left_score(cl, tl, K):  # pragma: no cover
    """Weight minus depth-one errors of the root's left side split after a candidate:
    ``max_k C_k + max_k (T_k - C_k)`` of its class weights ``cl`` before the candidate."""
    a1 = -np.inf
    a2 = -np.inf
    for k in range(K):
        if cl[k] > a1:
            a1 = cl[k]
        v = tl[k] - cl[k]
        if v > a2:
            a2 = v
    return a1 + a2


@njit(cache=True, nogil=True, inline="always")
def _right_score(cacc, c, cl, tr, K):  # pragma: no cover
    """:func:`_left_score` of the right side at candidate ``c``: its class weights before
    the candidate are all rows' (``cacc[c]``) minus the left side's."""
    c1 = -np.inf
    c2 = -np.inf
    for k in range(K):
        cr = cacc[c, k] - cl[k]
        if cr > c1:
            c1 = cr
        v = tr[k] - cr
        if v > c2:
            c2 = v
    return c1 + c2


@njit(cache=True, nogil=True)
def _eval_multi_cuts(ordl, posl, cls, wts, tot, cuts, cstart, cacc, has_splits, gl, cl, tl, tr, f1, z,
                     cap=np.inf):  # pragma: no cover
    """:func:`_eval_multi` over the candidate positions: the left class weights are
    accumulated branch-free between consecutive candidates (``gl`` 1 for a row going left,
    else 0) and the all-row class weights at candidate c are read from ``cacc[c]``. Same
    values.

    A side's score (``max_k C_k + max_k (T_k - C_k)``, its weight minus its depth-one
    errors) moves by at most the weight of the side's rows that pass the second cut
    (one row of weight w raises one ``C_k`` by w: the first max rises by at most w, the
    second falls by at most w). So a candidate is only scored when the side's last score
    plus the weight moved since could beat the side's best, and a side is done with
    ``f2`` when its last score plus all of its rows still ahead cannot (ConTree's
    ``can_skip`` / ``is_zero``); ``f2`` ends when both sides are. The margin ``eps`` keeps
    every skipped candidate strictly below the best, whatever the rounding of fractional
    weights (integral weights differ by at least 1).

    ``cap``: a side whose optimum is above ``cap`` errors may be given as ``cap`` (a
    lower bound): its best starts at ``cap`` errors, as ConTree's does at the upper
    bound, so that far more candidates are skipped; a side at or below ``cap`` is exact."""
    p, m = ordl.shape
    K = tot.shape[0]
    nl, nr, mtl, mtr = _root_sides(ordl, posl, cls, wts, tot, gl, cl, tl, tr, f1, z)
    eL = nl - mtl
    eR = nr - mtr
    if has_splits:
        eps = 1e-12 * (nl + nr)
        bestL = max(mtl, nl - cap)  # a leaf (its score: the side's largest class weight), or the cap
        bestR = max(mtr, nr - cap)
        for f2 in range(p):
            c0 = cstart[f2]
            c1 = cstart[f2 + 1]
            if c0 == c1:
                continue
            for k in range(K):
                cl[k] = 0.0
            lastL = mtl  # score at the last scored candidate (none moved yet: the leaf)
            lastR = mtr
            sL = 0.0  # weight of the side's rows passed so far
            sA = 0.0  # of all rows passed so far
            pL = 0.0  # sL at the last scored candidate
            pR = 0.0  # (sA - sL) at the last scored candidate
            doneL = lastL + nl <= bestL - eps
            doneR = lastR + nr <= bestR - eps
            i = 0
            for c in range(c0, c1):
                if doneL and doneR:
                    break
                e = cuts[c]
                while i <= e:
                    wv = wts[f2, i]
                    g = wv * gl[ordl[f2, i]]
                    cl[cls[f2, i]] += g
                    sL += g
                    sA += wv
                    i += 1
                if not doneL and sL > pL and lastL + (sL - pL) > bestL - eps:
                    lastL = _left_score(cl, tl, K)
                    pL = sL
                    if lastL > bestL:
                        bestL = lastL
                    doneL = lastL + (nl - pL) <= bestL - eps
                sR = sA - sL
                if not doneR and sR > pR and lastR + (sR - pR) > bestR - eps:
                    lastR = _right_score(cacc, c, cl, tr, K)
                    pR = sR
                    if lastR > bestR:
                        bestR = lastR
                    doneR = lastR + (nr - pR) <= bestR - eps
        eL = min(eL, nl - bestL)
        eR = min(eR, nr - bestR)
    return eL, eR


@njit(cache=True, nogil=True)
def d2_binary(ordl, posl, S, Sall, valid, wcum, Atot, Btot, f1s, zs, outL, outR):  # pragma: no cover
    """Two-class Alg. 2 for root splits ``(f1s[b], zs[b])`` (see ``d2_batch_binary``).

    ``ordl[f, i]`` local row id at position i of feature f's order, ``posl[f, r]`` the
    position of local row r in feature f's order, ``S`` signed row weights in every order
    (+w class 1, -w class 0), ``Sall`` their prefix sums, ``valid`` the distinct-value
    boundaries, ``wcum`` prefix row weights.  Writes the depth-one costs into outL/outR.
    """
    m = ordl.shape[1]
    goleft = np.empty(m, dtype=np.bool_)
    hs = _has_splits(valid)
    for b in range(f1s.shape[0]):
        outL[b], outR[b] = _eval_binary(ordl, posl, S, Sall, valid, wcum, Atot, Btot, hs, goleft, f1s[b], zs[b])


@njit(cache=True, nogil=True)
def d2_multi(ordl, posl, cls, wts, tot, valid, f1s, zs, outL, outR):  # pragma: no cover
    """Multiclass Alg. 2 for root splits ``(f1s[b], zs[b])`` (see ``d2_batch``)."""
    m = ordl.shape[1]
    K = tot.shape[0]
    goleft = np.empty(m, dtype=np.bool_)
    cl, ca, tl, tr = np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K)
    hs = _has_splits(valid)
    for b in range(f1s.shape[0]):
        outL[b], outR[b] = _eval_multi(ordl, posl, cls, wts, tot, valid, hs, goleft, cl, ca, tl, tr, f1s[b], zs[b])
