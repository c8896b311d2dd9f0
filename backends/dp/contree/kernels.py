"""Compiled kernels of the ConTree depth-two subroutine (backends/dp/contree/search.py).

The kernels evaluate Alg. 2 / Eq. (13) of Brita et al. for a batch of root splits
``(f1s[b], zs[b])`` of one node: the optimal depth-one costs of the left and of the right
part, from running class weights along every second-level feature's sorted order.  They
compute exactly what the numpy code of ``_Solver.d2_batch`` computes (same formulas, same
summation order), without materialising the (batch, K, p, m) cumulative-sum tensors.

They are compiled with numba when it is importable (``ACTIVE`` is then ``True``;
``@njit(cache=True)`` keeps the machine code on disk so later processes skip compiling);
otherwise ``ACTIVE`` is ``False`` and search.py uses its pure-numpy kernels.
"""
from __future__ import annotations

import numpy as np

from .jit import AVAILABLE, njit
from .kernels_wide import eval_wide

#: True when the compiled kernels are used by dp_search (numba importable); tests may
#: set it to False to force the pure-numpy path.
ACTIVE = AVAILABLE
BACKEND = "numba" if AVAILABLE else "numpy"


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


@njit(cache=True, nogil=True)
def _eval_multi_cuts(ordl, posl, cls, wts, tot, cuts, cstart, cacc, has_splits, gl, cl, tl, tr, f1, z):  # pragma: no cover
    """:func:`_eval_multi` over the candidate positions: the left class weights are
    accumulated branch-free between consecutive candidates (``gl`` 1 for a row going left,
    else 0), the all-row class weights at candidate c are read from ``cacc[c]``, and a
    side's score is recomputed only when one of its rows moved. Same values."""
    p, m = ordl.shape
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
            for k in range(K):
                cl[k] = 0.0
            i = 0
            for c in range(c0, c1):
                e = cuts[c]
                moved = 0
                start = i
                while i <= e:
                    g = gl[ordl[f2, i]]
                    cl[cls[f2, i]] += wts[f2, i] * g
                    moved += g
                    i += 1
                if moved > 0:
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
                if moved < i - start:
                    c1_ = -np.inf
                    c2_ = -np.inf
                    for k in range(K):
                        cr = cacc[c, k] - cl[k]
                        if cr > c1_:
                            c1_ = cr
                        v = tr[k] - cr
                        if v > c2_:
                            c2_ = v
                    if c1_ + c2_ > bestR:
                        bestR = c1_ + c2_
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


@njit(cache=True, nogil=True)
def _bound_for(inc, f, s):  # pragma: no cover
    """``_Incumbent.bound_for``; inc = [cost, f, s, active, outer, d_strict, d_tie]."""
    if inc[3] == 0.0:
        return inc[4]
    if f < inc[1] or (f == inc[1] and s < inc[2]):
        return inc[0] + inc[6]
    return inc[0] - inc[5]


@njit(cache=True, nogil=True)
def _enqueue(queue, st, cap, f, a, b, c, d):  # pragma: no cover
    """Append the interval (feature f, positions a..b, bounds c, d) to the ring buffer."""
    t = (st[0] + st[1]) % cap
    queue[t, 0] = f
    queue[t, 1] = a
    queue[t, 2] = b
    queue[t, 3] = c
    queue[t, 4] = d
    st[1] += 1


@njit(cache=True, nogil=True)
def d2_search(kind, ordl, posl, S, Sall, wcum, Atot, Btot, cls, wts, tot, cacc, valid,
              cuts, cstart, wcs, inc, gap, tol, rules, st, queue, th, thL, thR, mlr, counts,
              max_evals):  # pragma: no cover
    """Alg. 1 over every root feature of a depth-two sub-problem (resumable).

    Intervals of all root features are searched breadth first (a FIFO queue, like the
    rounds of ``_Solver.solve_d2``: every feature's midpoint is evaluated before any
    feature is refined, so good incumbents come early), with the current incumbent's
    tie-aware bounds -- the same rules and the same optimum as :meth:`_Solver.branch`.

    ``kind`` 2 = two-class evaluator, 0 = ``kernels_wide.eval_wide`` (many classes: no
    ``cacc``), else multiclass.  The candidate positions of feature
    f are ``cuts[cstart[f]:cstart[f+1]]`` with prefix weights ``wcs`` (z(.) of the paper).
    ``inc`` is the incumbent (see ``_bound_for``) and is updated in place; ``rules`` the
    NB/IS/SP switches.  State kept between calls: ``st`` = [queue head, queue length, best
    f, best z], ``queue`` a ring of rows (f, i, j, u, v) -- u/v the evaluated neighbours of
    interval [i, j] (each gap between evaluated points holds at most one open interval, so
    they never change), ``th``/``thL``/``thR`` scores of evaluated points, ``mlr[f]`` the
    IS limits (Theorem 2).  ``counts`` += [splits evaluated, intervals pruned by SP].
    Stops after ``max_evals`` evaluations; returns True when the search is complete.
    """
    p, m = ordl.shape
    goleft = np.empty(m, dtype=np.bool_)
    K = tot.shape[0]
    cl, ca, tl, tr = np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K)
    pre_l = np.empty(m if kind == 0 else 0)
    pre_r = np.empty(m if kind == 0 else 0)
    hs = _has_splits(valid)
    use_nb, use_is, use_sp = rules[0], rules[1], rules[2]
    gl = np.empty(m, dtype=S.dtype)
    cap = queue.shape[0]
    evals = 0
    while st[1] > 0:
        if evals >= max_evals:
            return False
        head = st[0]
        f = queue[head, 0]
        i = queue[head, 1]
        j = queue[head, 2]
        u = queue[head, 3]
        v = queue[head, 4]
        st[0] = (head + 1) % cap
        st[1] -= 1
        c0 = cstart[f]
        mf = cstart[f + 1] - c0
        wc = wcs[c0:c0 + mf]
        B = _bound_for(inc, f, j) - gap
        if use_is:  # P_IS, Eq. (11)
            if mlr[f, 0] > i:
                i = mlr[f, 0]
            if mlr[f, 1] < j:
                j = mlr[f, 1]
            if u >= 0 and th[c0 + u] - B > 0:
                i = max(i, np.searchsorted(wc, wc[u] + (th[c0 + u] - B) - tol, side="left"))
            if v >= 0 and th[c0 + v] - B > 0:
                j = min(j, np.searchsorted(wc, wc[v] - (th[c0 + v] - B) + tol, side="right") - 1)
            if i > j:
                continue
        if use_sp:  # P_SP, Eq. (12)
            lbI = (thL[c0 + u] if u >= 0 else 0.0) + (thR[c0 + v] if v >= 0 else 0.0)
            if lbI > B:
                counts[1] += 1
                continue
        w = (i + j) // 2
        z = cuts[c0 + w]
        evals += 1
        counts[0] += 1
        if kind == 2:
            tL, tR = _eval_binary_cuts(ordl, posl, S, Sall, cuts, cstart, wcum, Atot, Btot, hs, gl, f, z)
        elif kind == 0:
            tL, tR = eval_wide(ordl, posl, cls, wts, tot, cuts, cstart, hs, gl, cl, ca, tl, tr, pre_l, pre_r, f, z)
        else:
            tL, tR = _eval_multi_cuts(ordl, posl, cls, wts, tot, cuts, cstart, cacc, hs, gl, cl, tl, tr, f, z)
        tw = tL + tR
        if tw <= B:
            inc[0] = tw
            inc[1] = f
            inc[2] = w
            inc[3] = 1.0
            st[2] = f
            st[3] = z
        th[c0 + w] = tw
        thL[c0 + w] = tL
        thR[c0 + w] = tR
        if use_is:  # Theorem 2
            if tL <= 0.0 and tw > _bound_for(inc, f, 0) - gap:
                mlr[f, 0] = max(mlr[f, 0], w + 1)
            if tR <= 0.0 and tw > _bound_for(inc, f, w + 1) - gap:
                mlr[f, 1] = min(mlr[f, 1], w - 1)
        lo = w - 1
        hi = w + 1
        if use_nb:  # P_NB, Eq. (9)
            r_ = tw - (_bound_for(inc, f, w - 1) - gap)
            if r_ > 0:
                lo = min(lo, np.searchsorted(wc, wc[w] - r_ + tol, side="right") - 1)
            r_ = tw - (_bound_for(inc, f, w + 1) - gap)
            if r_ > 0:
                hi = max(hi, np.searchsorted(wc, wc[w] + r_ - tol, side="left"))
        if i <= lo:
            _enqueue(queue, st, cap, f, i, lo, u, w)
        if hi <= j:
            _enqueue(queue, st, cap, f, hi, j, w, v)
    return True


@njit(cache=True, nogil=True)
def class_totals(cls, wts, K):  # pragma: no cover
    """Class weights summed along feature 0's order (as ``call[:, 0, -1]``)."""
    tot = np.zeros(K)
    for i in range(cls.shape[1]):
        tot[cls[0, i]] += wts[0, i]
    return tot


@njit(cache=True, nogil=True, inline="always")
def side_errors(cl, ca, totL, totR, K):  # pragma: no cover
    """Depth-one errors of the two sides of the root cut when the second split falls after
    the current row: per side, (weight - largest class weight) of the rows before and after
    it. ``cl``: class weights of this side's rows so far going left at the root; ``ca``: of
    all rows so far; ``totL`` / ``totR``: the root sides' class totals."""
    if K == 2:
        a = cl[0]
        b = cl[1]
        left = min(a, b) + min(totL[0] - a, totL[1] - b)
        a = ca[0] - cl[0]
        b = ca[1] - cl[1]
        return left, min(a, b) + min(totR[0] - a, totR[1] - b)
    sc = 0.0
    mc = -np.inf
    sr = 0.0
    mr = -np.inf
    sc2 = 0.0
    mc2 = -np.inf
    sr2 = 0.0
    mr2 = -np.inf
    for k in range(K):
        c1 = cl[k]
        r1 = totL[k] - c1
        c2 = ca[k] - c1
        r2 = totR[k] - c2
        sc += c1
        sr += r1
        sc2 += c2
        sr2 += r2
        if c1 > mc:
            mc = c1
        if r1 > mr:
            mr = r1
        if c2 > mc2:
            mc2 = c2
        if r2 > mr2:
            mr2 = r2
    return (sc - mc) + (sr - mr), (sc2 - mc2) + (sr2 - mr2)


@njit(cache=True, nogil=True)
def d2_errors(ordl, posl, cls, wts, valid, K, f1, z, big, errL, errR, totL, totR):  # pragma: no cover
    """Alg. 2 ``D2Split`` of one root split with all errors kept: ``errL[f2, i]`` /
    ``errR[f2, i]`` the depth-one cost of the left / right part split after position i of
    f2's order (``big`` where that is no distinct-value boundary); ``totL`` / ``totR``
    its class weights.  Same values as ``_Solver.d2_split``'s numpy code."""
    p, m = ordl.shape
    goleft = np.empty(m, dtype=np.bool_)
    for r in range(m):
        goleft[r] = posl[f1, r] <= z
    cl = np.zeros(K)
    ca = np.zeros(K)
    for k in range(K):
        totL[k] = 0.0
        totR[k] = 0.0
    for i in range(m):
        totR[cls[0, i]] += wts[0, i]
        if goleft[ordl[0, i]]:
            totL[cls[0, i]] += wts[0, i]
    for k in range(K):
        totR[k] = totR[k] - totL[k]
    for f2 in range(p):
        for k in range(K):
            cl[k] = 0.0
            ca[k] = 0.0
        for i in range(m):
            c = cls[f2, i]
            ca[c] += wts[f2, i]
            if goleft[ordl[f2, i]]:
                cl[c] += wts[f2, i]
            if not valid[f2, i]:
                errL[f2, i] = big
                errR[f2, i] = big
            else:
                errL[f2, i], errR[f2, i] = side_errors(cl, ca, totL, totR, K)


@njit(cache=True, nogil=True)
def split_node(rows, order, vals, mark, f, z):  # pragma: no cover
    """Children of a node split after position ``z`` of feature ``f``'s order: the rows
    (ascending ids), every feature's order and sorted values of each side, in one stable
    pass per feature (``_Solver.children`` without boolean-mask temporaries). ``mark`` is
    an all-False scratch over the dataset's rows and is left all-False."""
    p, m = order.shape
    ml = z + 1
    mr = m - ml
    for i in range(ml):
        mark[order[f, i]] = True
    rows_l = np.empty(ml, dtype=rows.dtype)
    rows_r = np.empty(mr, dtype=rows.dtype)
    a = 0
    b = 0
    for i in range(m):
        r = rows[i]
        if mark[r]:
            rows_l[a] = r
            a += 1
        else:
            rows_r[b] = r
            b += 1
    ol = np.empty((p, ml), dtype=order.dtype)
    vl = np.empty((p, ml), dtype=vals.dtype)
    orr = np.empty((p, mr), dtype=order.dtype)
    vr = np.empty((p, mr), dtype=vals.dtype)
    for g in range(p):
        a = 0
        b = 0
        for i in range(m):
            r = order[g, i]
            if mark[r]:
                ol[g, a] = r
                vl[g, a] = vals[g, i]
                a += 1
            else:
                orr[g, b] = r
                vr[g, b] = vals[g, i]
                b += 1
    for i in range(ml):
        mark[order[f, i]] = False
    return rows_l, ol, vl, rows_r, orr, vr


@njit(cache=True, nogil=True)
def d2_prepare(rows, order, vals, y, w, wd, sgn, K, lid, wide):  # pragma: no cover
    """Every per-node array the depth-two search needs, in one pass per feature.

    Returns ``ordl, posl`` (local row ids by position / positions by local row id),
    ``valid`` (distinct-value boundaries), ``wcum`` (prefix row weights), the candidate
    positions ``cuts`` with ``cstart`` (feature f owns ``cuts[cstart[f]:cstart[f+1]]``) and
    their prefix weights ``wcs``; for two classes ``S``/``Sall`` (signed weights and their
    prefix sums) and the class weights ``Atot``/``Btot``; otherwise ``cls``/``wts`` (class
    and weight by position), the class totals ``tot`` and, unless ``wide`` (the many-class
    evaluator, which needs none), the class weights up to each candidate ``cacc``
    (candidates x K). ``lid`` is a scratch over rows."""
    p, m = order.shape
    for i in range(m):
        lid[rows[i]] = i
    ordl = np.empty((p, m), dtype=np.int32)
    posl = np.empty((p, m), dtype=np.int32)
    valid = np.zeros((p, m), dtype=np.bool_)
    wcum = np.empty((p, m))
    nc = 0
    for f in range(p):
        acc = 0.0
        for i in range(m):
            r = order[f, i]
            loc = lid[r]
            ordl[f, i] = loc
            posl[f, loc] = i
            acc += w[r]
            wcum[f, i] = acc
            if i + 1 < m and vals[f, i + 1] > vals[f, i]:
                valid[f, i] = True
                nc += 1
    cuts = np.empty(nc, dtype=np.int64)
    cstart = np.empty(p + 1, dtype=np.int64)
    wcs = np.empty(nc)
    c = 0
    for f in range(p):
        cstart[f] = c
        for i in range(m):
            if valid[f, i]:
                cuts[c] = i
                wcs[c] = wcum[f, i]
                c += 1
    cstart[p] = c
    tot = np.zeros(max(K, 2))
    if K == 2:  # as np.bincount over the rows
        for i in range(m):
            r = rows[i]
            tot[y[r]] += w[r]
        S = np.empty((p, m), dtype=sgn.dtype)
        Sall = np.empty((p, m), dtype=sgn.dtype)
        for f in range(p):
            acc2 = sgn[0] - sgn[0]
            for i in range(m):
                s = sgn[order[f, i]]
                S[f, i] = s
                acc2 += s
                Sall[f, i] = acc2
        cls = np.zeros((1, 1), dtype=np.int64)
        wts = np.zeros((1, 1), dtype=wd.dtype)
        cacc = np.zeros((1, 1))
    else:
        S = np.zeros((1, 1), dtype=sgn.dtype)
        Sall = np.zeros((1, 1), dtype=sgn.dtype)
        cls = np.empty((p, m), dtype=np.int64)
        wts = np.empty((p, m), dtype=wd.dtype)
        for f in range(p):
            for i in range(m):
                r = order[f, i]
                cls[f, i] = y[r]
                wts[f, i] = wd[r]
        for i in range(m):  # as class_totals: along feature 0's order
            tot[cls[0, i]] += wts[0, i]
        if wide:
            return ordl, posl, valid, wcum, cuts, cstart, wcs, S, Sall, tot, cls, wts, np.zeros((1, 1))
        cacc = np.empty((nc, K))  # class weights up to each candidate, in its feature's order
        run = np.zeros(K)
        for f in range(p):
            for k in range(K):
                run[k] = 0.0
            c = cstart[f]
            for i in range(m):
                run[cls[f, i]] += wts[f, i]
                if c < cstart[f + 1] and cuts[c] == i:
                    for k in range(K):
                        cacc[c, k] = run[k]
                    c += 1
    return ordl, posl, valid, wcum, cuts, cstart, wcs, S, Sall, tot, cls, wts, cacc


@njit(cache=True, nogil=True)
def d2_state(cstart):  # pragma: no cover
    """Fresh state of :func:`d2_search` for the candidates of ``cstart``: the queue holding
    one interval per feature with candidates, ``st``, the score arrays, the IS limits
    ``mlr`` and the counters."""
    p = cstart.shape[0] - 1
    nc = cstart[p]
    queue = np.empty((nc + 1, 5), dtype=np.int64)
    mlr = np.empty((p, 2), dtype=np.int64)
    q = 0
    for f in range(p):
        mf = cstart[f + 1] - cstart[f]
        mlr[f, 0] = 0
        mlr[f, 1] = mf - 1
        if mf > 0:
            queue[q, 0] = f
            queue[q, 1] = 0
            queue[q, 2] = mf - 1
            queue[q, 3] = -1
            queue[q, 4] = -1
            q += 1
    st = np.empty(4, dtype=np.int64)
    st[0] = 0
    st[1] = q
    st[2] = -1
    st[3] = -1
    return queue, st, np.empty(nc), np.empty(nc), np.empty(nc), mlr, np.zeros(2, dtype=np.int64)


@njit(cache=True, nogil=True)
def d2_run(rows, order, vals, y, w, wd, sgn, K, lid, inc, gap, tol, rules, budget, wide):  # pragma: no cover
    """:func:`d2_prepare`, :func:`d2_state` and the first chunk of :func:`d2_search` (at
    most ``budget`` row-feature steps) in one call: most depth-two sub-problems finish
    here. Returns ``done``, the prepared arrays, the search state, ``Atot``, ``Btot`` and
    the chunk size in evaluations for resuming with :func:`d2_search`."""
    p, m = order.shape
    (ordl, posl, valid, wcum, cuts, cstart, wcs, S, Sall, tot, cls, wts, cacc) = d2_prepare(
        rows, order, vals, y, w, wd, sgn, K, lid, wide)
    queue, st, th, thL, thR, mlr, counts = d2_state(cstart)
    if K == 2:
        kind = 2
        Atot = tot[0]
        Btot = tot[1]
        tot = np.zeros(2)
        per_eval = p * m
    else:
        kind = 0 if wide else K
        Atot = 0.0
        Btot = 0.0
        # a row-feature step per position (twice when wide), and a per-class scan per candidate
        per_eval = 3 * p * m if wide else 2 * p * m + cuts.shape[0] * K
    max_evals = max(1, budget // max(per_eval, 1))
    done = d2_search(kind, ordl, posl, S, Sall, wcum, Atot, Btot, cls, wts, tot, cacc, valid, cuts, cstart, wcs,
                     inc, gap, tol, rules, st, queue, th, thL, thR, mlr, counts, max_evals)
    return (done, ordl, posl, valid, wcum, cuts, cstart, wcs, S, Sall, tot, cls, wts, cacc, queue, st, th, thL, thR,
            mlr, counts, Atot, Btot, max_evals)


@njit(cache=True, nogil=True)
def d2_quick(rows, order, vals, y, w, wd, sgn, K, lid, inc, gap, tol, rules, budget, wide):  # pragma: no cover
    """:func:`d2_run` returning scalars only: ``(done, best f, best z, evaluations,
    intervals pruned by SP)``; ``inc`` is updated in place. Boxing the two dozen arrays of
    ``d2_run`` costs more than the search of a small sub-problem, and they are only needed
    to resume (``done`` False: the caller starts over with the resumable calls) or to
    build the tree (done later, from the rows, if the tree is used)."""
    res = d2_run(rows, order, vals, y, w, wd, sgn, K, lid, inc, gap, tol, rules, budget, wide)
    st = res[15]
    counts = res[20]
    return res[0], st[2], st[3], counts[0], counts[1]



@njit(cache=True, nogil=True)
def leaf_cost(rows, y, w, K):  # pragma: no cover
    """``_Solver.leaf`` for K < 8 classes: class weights summed in row order (as
    ``np.bincount``), the lowest class of largest weight and the sum of the others
    (the K sums added in order, as numpy does below 8 elements)."""
    cw = np.zeros(K)
    for i in range(rows.shape[0]):
        r = rows[i]
        cw[y[r]] += w[r]
    lab = 0
    s = 0.0
    for k in range(K):
        s += cw[k]
        if cw[k] > cw[lab]:
            lab = k
    return s - cw[lab], lab
