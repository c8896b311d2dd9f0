"""Compiled depth-two evaluations with a minimum leaf size (issue 25).

One root split ``(f1, z)`` of a depth-two sub-problem, as the evaluators of ``kernels.py``
(``_eval_binary_cuts``, ``_eval_multi_cuts``) and ``kernels_wide.py`` (``eval_wide``) give
it, but returning four numbers in one pass: per side the optimal depth-one cost whose two
leaves hold at least ``ml`` rows each (the constrained cost ``t``; a side's leaf always
counts, the root cut itself already leaves ``ml`` rows on each side) and the optimal
depth-one cost without the constraint (``u``, exactly what the plain evaluator returns).
``u <= t``; the search (``kernels.d2_search``) scores the split by ``tL + tR`` and bounds
its neighbours with ``u`` (see ``d2_search``: the similarity bound only holds for the
side that shrinks, the side that grows is bounded by its unconstrained optimum).

The row counts are unweighted (the constraint counts rows, whatever their weights): the
rows of a side before a second-level candidate ``e`` of feature ``f2`` are counted while
the class weights are accumulated.
"""
from __future__ import annotations

import numpy as np

from .jit import njit
from .kernels_eval import _left_score, _right_score, _root_sides


@njit(cache=True, nogil=True)
def eval_binary_ml(ordl, posl, S, Sall, cuts, cstart, wcum, Atot, Btot, has_splits, gl, f1, z, ml):  # pragma: no cover
    """``kernels._eval_binary_cuts`` with a minimum leaf size: ``(tL, tR, uL, uR)``."""
    p, m = ordl.shape
    for r in range(m):
        gl[r] = 1 if posl[f1, r] <= z else 0
    nL = z + 1
    nR = m - nL
    mnL = np.inf
    mxL = -np.inf
    mnR = np.inf
    mxR = -np.inf
    kmnL = np.inf  # the same extremes over the candidates that keep ml rows per leaf
    kmxL = -np.inf
    kmnR = np.inf
    kmxR = -np.inf
    if has_splits:
        for f2 in range(p):
            c0 = cstart[f2]
            c1 = cstart[f2 + 1]
            if c0 == c1:
                continue
            d = S[f2, 0] - S[f2, 0]
            cnt = gl[0] - gl[0]  # rows of the left side so far (gl is 0 / 1)
            i = 0
            for c in range(c0, c1):
                e = cuts[c]
                while i <= e:
                    g = gl[ordl[f2, i]]
                    d += S[f2, i] * g
                    cnt += g
                    i += 1
                rr = Sall[f2, e] - d
                # each extreme goes to the constrained set or to the rest (merged below)
                if cnt >= ml and nL - cnt >= ml:
                    kmnL = min(kmnL, d)
                    kmxL = max(kmxL, d)
                else:
                    mnL = min(mnL, d)
                    mxL = max(mxL, d)
                cr = e + 1 - cnt
                if cr >= ml and nR - cr >= ml:
                    kmnR = min(kmnR, rr)
                    kmxR = max(kmxR, rr)
                else:
                    mnR = min(mnR, rr)
                    mxR = max(mxR, rr)
        mnL = min(mnL, kmnL)
        mxL = max(mxL, kmxL)
        mnR = min(mnR, kmnR)
        mxR = max(mxR, kmxR)
    else:
        mnL = mxL = mnR = mxR = 0.0
    wl = float(wcum[f1, z])
    dl = float(Sall[f1, z])
    bl = (wl + dl) / 2.0
    al = wl - bl
    ar = Atot - al
    br = Btot - bl
    uL = min(min(al, bl), min(al + mnL, bl - mxL))
    uR = min(min(ar, br), min(ar + mnR, br - mxR))
    tL = min(min(al, bl), min(al + kmnL, bl - kmxL))
    tR = min(min(ar, br), min(ar + kmnR, br - kmxR))
    return tL, tR, uL, uR


_ONE = np.int64(1) << np.int64(32)  # a row counted in the packed sums below
_HALF = np.int64(1) << np.int64(31)


@njit(cache=True, nogil=True, inline="always")
def _unpack(acc):  # pragma: no cover
    """``(count, signed weight)`` of a packed sum ``count * 2**32 + signed weight`` (the
    signed weight lies strictly between -2**31 and 2**31: integral weights total < 2**29)."""
    cnt = (acc + _HALF) >> np.int64(32)
    return cnt, acc - (cnt << np.int64(32))


@njit(cache=True, nogil=True)
def eval_multi_ml(ordl, posl, cls, wts, tot, cuts, cstart, cacc, has_splits, gl, cl, tl, tr, f1, z, ml):  # pragma: no cover
    """``kernels._eval_multi_cuts`` with a minimum leaf size: ``(tL, tR, uL, uR)``. A side's
    score (and whether its leaves are large enough) only changes when one of its rows
    moved, so both bests are updated under the same test."""
    p, m = ordl.shape
    K = tot.shape[0]
    nL = z + 1
    nR = m - nL
    nl, nr, mtl, mtr = _root_sides(ordl, posl, cls, wts, tot, gl, cl, tl, tr, f1, z)
    eL = nl - mtl
    eR = nr - mtr
    kL = eL
    kR = eR
    if has_splits:
        bestL = -np.inf
        bestR = -np.inf
        kbestL = -np.inf
        kbestR = -np.inf
        for f2 in range(p):
            c0 = cstart[f2]
            c1 = cstart[f2 + 1]
            if c0 == c1:
                continue
            for k in range(K):
                cl[k] = 0.0
            i = 0
            cnt = 0
            for c in range(c0, c1):
                e = cuts[c]
                moved = 0
                start = i
                while i <= e:
                    g = gl[ordl[f2, i]]
                    cl[cls[f2, i]] += wts[f2, i] * g
                    moved += g
                    i += 1
                cnt += moved
                if moved > 0:
                    s = _left_score(cl, tl, K)
                    if s > bestL:
                        bestL = s
                    if s > kbestL and cnt >= ml and nL - cnt >= ml:
                        kbestL = s
                if moved < i - start:
                    s = _right_score(cacc, c, cl, tr, K)
                    if s > bestR:
                        bestR = s
                    rc = e + 1 - cnt
                    if s > kbestR and rc >= ml and nR - rc >= ml:
                        kbestR = s
        eL = min(eL, nl - bestL)
        eR = min(eR, nr - bestR)
        kL = min(kL, nl - kbestL)
        kR = min(kR, nr - kbestR)
    return kL, kR, eL, eR


@njit(cache=True, nogil=True)
def eval_wide_ml(ordl, posl, cls, wts, tot, cuts, cstart, has_splits, gl, cl, cr, tl, tr, pre_l, pre_r,
                 f1, z, ml):  # pragma: no cover
    """``kernels_wide.eval_wide`` with a minimum leaf size: ``(tL, tR, uL, uR)``. The
    backward pass also counts the rows after each candidate that go left at the root,
    which gives both sides' counts before and after it."""
    p, m = ordl.shape
    for r in range(m):
        gl[r] = 1 if posl[f1, r] <= z else 0
    nL = z + 1
    nR = m - nL
    for i in range(m):
        c = cls[0, i]
        if gl[ordl[0, i]]:
            tl[c] += wts[0, i]
    nl = 0.0
    nr = 0.0
    mtl = 0.0
    mtr = 0.0
    for i in range(m):
        c = cls[0, i]
        if tr[c] < 0.0:
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
    kL = eL
    kR = eR
    if has_splits:
        bestL = -np.inf
        bestR = -np.inf
        kbestL = -np.inf
        kbestR = -np.inf
        for f2 in range(p):
            c0 = cstart[f2]
            c1 = cstart[f2 + 1]
            if c0 == c1:
                continue
            a = 0.0
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
            a = 0.0
            b = 0.0
            after = 0  # rows after the candidate going left at the root
            i = m - 1
            for c in range(c1 - 1, c0 - 1, -1):
                e = cuts[c]
                while i > e:
                    k = cls[f2, i]
                    if gl[ordl[f2, i]]:
                        after += 1
                        cl[k] += wts[f2, i]
                        if cl[k] > a:
                            a = cl[k]
                    else:
                        cr[k] += wts[f2, i]
                        if cr[k] > b:
                            b = cr[k]
                    i -= 1
                lc = nL - after  # left rows at or before e
                rc = e + 1 - lc
                s = pre_l[c - c0] + a
                if s > bestL:
                    bestL = s
                if s > kbestL and lc >= ml and after >= ml:
                    kbestL = s
                s = pre_r[c - c0] + b
                if s > bestR:
                    bestR = s
                if s > kbestR and rc >= ml and nR - rc >= ml:
                    kbestR = s
            for j in range(i + 1, m):
                cl[cls[f2, j]] = 0.0
                cr[cls[f2, j]] = 0.0
        eL = min(eL, nl - bestL)
        eR = min(eR, nr - bestR)
        kL = min(kL, nl - kbestL)
        kR = min(kR, nr - kbestR)
    return kL, kR, eL, eR


@njit(cache=True, nogil=True)
def relaxed_binary_ml(ordl, posl, S, Sall, cuts, cstart, wcum, Atot, Btot, gl, f1, zu, zv, ml):  # pragma: no cover
    """Lower bounds on the constrained depth-one costs of both sides of every root split
    of feature ``f1`` at a position z with ``zu`` <= z <= ``zv`` (two classes): ``(rL,
    rR)``; the callers pass the two end candidates of a (shrunk) interval of root splits.
    Every such left side L lies between L_u and L_v (the rows at positions <= ``zu``,
    <= ``zv``). A tree of L
    whose leaves hold >= ``ml`` rows of L, run on L_v, keeps them at >= ``ml`` rows and errs
    on at least the rows of L_u it errs on; so its cost is at least the optimum over trees
    of L_v with leaves of >= ``ml`` rows of L_v, counting the errors on the rows of L_u only
    (the rows of L_v not in L_u weigh nothing; ``rL``). Likewise ``rR`` from R_u with the
    rows not in R_v weightless. ``gl``: scratch of ``m`` entries (0 / 1 / 2: the row lies in
    L_u / between / in R_v)."""
    p, m = ordl.shape
    nLv = zv + 1
    nRu = m - zu - 1
    kmnL = np.inf
    kmxL = -np.inf
    kmnR = np.inf
    kmxR = -np.inf
    if S.itemsize == 4:  # integral weights: two packed running sums (``_unpack``), one gather
        # and add per row and sum instead of a three-way branch per row
        pa = np.empty(m, dtype=np.int64)  # rows of L_u: count and signed weight
        pb = np.empty(m, dtype=np.int64)  # rows of L_v counted, signed weight of R_v
        for i in range(m):
            r = ordl[f1, i]
            s = np.int64(S[f1, i])
            pa[r] = s + _ONE if i <= zu else np.int64(0)
            pb[r] = _ONE if i <= zv else s
        for f2 in range(p):
            acc_a = np.int64(0)
            acc_b = np.int64(0)
            i = 0
            for c in range(cstart[f2], cstart[f2 + 1]):
                e = cuts[c]
                while i <= e:
                    r = ordl[f2, i]
                    acc_a += pa[r]
                    acc_b += pb[r]
                    i += 1
                nu, dl = _unpack(acc_a)
                nv, dr = _unpack(acc_b)
                if nv >= ml and nLv - nv >= ml:
                    kmnL = min(kmnL, dl)
                    kmxL = max(kmxL, dl)
                cu = e + 1 - nu
                if cu >= ml and nRu - cu >= ml:
                    kmnR = min(kmnR, dr)
                    kmxR = max(kmxR, dr)
        return _relaxed_costs(S, Sall, wcum, Atot, Btot, f1, zu, zv, kmnL, kmxL, kmnR, kmxR)
    for r in range(m):
        q = posl[f1, r]
        gl[r] = 0 if q <= zu else (1 if q <= zv else 2)
    for f2 in range(p):
        c0 = cstart[f2]
        c1 = cstart[f2 + 1]
        dl = S[f2, 0] - S[f2, 0]  # signed weight of the rows of L_u so far
        dr = dl  # and of R_v
        nv = 0  # rows of L_v so far
        nu = 0  # rows of L_u so far
        i = 0
        for c in range(c0, c1):
            e = cuts[c]
            while i <= e:
                g = gl[ordl[f2, i]]
                if g == 0:
                    dl += S[f2, i]
                    nu += 1
                    nv += 1
                elif g == 1:
                    nv += 1
                else:
                    dr += S[f2, i]
                i += 1
            if nv >= ml and nLv - nv >= ml:
                kmnL = min(kmnL, dl)
                kmxL = max(kmxL, dl)
            cu = e + 1 - nu  # rows of R_u so far
            if cu >= ml and nRu - cu >= ml:
                kmnR = min(kmnR, dr)
                kmxR = max(kmxR, dr)
    return _relaxed_costs(S, Sall, wcum, Atot, Btot, f1, zu, zv, kmnL, kmxL, kmnR, kmxR)


@njit(cache=True, nogil=True, inline="always")
def _relaxed_costs(S, Sall, wcum, Atot, Btot, f1, zu, zv, kmnL, kmxL, kmnR, kmxR):  # pragma: no cover
    """The two bounds of :func:`relaxed_binary_ml` from the extremes of the signed sums."""
    wl = float(wcum[f1, zu])
    sl = float(Sall[f1, zu])
    bl = (wl + sl) / 2.0
    al = wl - bl
    wv = float(wcum[f1, zv])
    sv = float(Sall[f1, zv])
    bv = (wv + sv) / 2.0
    av = wv - bv
    ar = Atot - av
    br = Btot - bv
    rL = min(min(al, bl), min(al + kmnL, bl - kmxL))
    rR = min(min(ar, br), min(ar + kmnR, br - kmxR))
    return rL, rR
