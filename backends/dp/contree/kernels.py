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
from .kernels_eval import _eval_binary_cuts, _eval_multi_cuts, _has_splits, d2_binary, d2_multi
from .kernels_minleaf import eval_binary_ml, eval_multi_ml, eval_wide_ml, relaxed_binary_ml
from .kernels_wide import eval_wide

#: True when the compiled kernels are used by dp_search (numba importable); tests may
#: set it to False to force the pure-numpy path.
ACTIVE = AVAILABLE
BACKEND = "numba" if AVAILABLE else "numpy"


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
              cuts, cstart, wcs, inc, gap, tol, rules, st, queue, tcL, tcR, thL, thR, mlr, counts,
              max_evals, ml, lbf, twin, incm, xL, xR):  # pragma: no cover
    """Alg. 1 over every root feature of a depth-two sub-problem (resumable).

    Intervals of all root features are searched breadth first (a FIFO queue, like the
    rounds of ``_Solver.solve_d2``: every feature's midpoint is evaluated before any
    feature is refined, so good incumbents come early), with the current incumbent's
    tie-aware bounds -- the same rules and the same optimum as :meth:`_Solver.branch`.

    ``kind`` 2 = two-class evaluator, 0 = ``kernels_wide.eval_wide`` (many classes: no
    ``cacc``), else multiclass.  The candidate positions of feature
    f are ``cuts[cstart[f]:cstart[f+1]]`` with prefix weights ``wcs`` (z(.) of the paper).
    ``inc`` is the incumbent (see ``_bound_for``) and is updated in place; ``rules`` the
    NB/IS/SP switches and the cross rule (below).  State kept between calls: ``st`` = [queue
    head, queue length, best f, best z], ``queue`` a ring of rows (f, i, j, u, v) -- u/v the
    evaluated neighbours of interval [i, j] (each gap between evaluated points holds at most
    one open interval, so they never change), ``tcL``/``tcR``/``thL``/``thR`` the side costs
    of evaluated points (below), ``mlr[f]`` the IS limits (Theorem 2; start at the root cuts that keep ``ml`` rows on each
    side).  ``counts`` += [splits evaluated, intervals pruned by SP].
    Stops after ``max_evals`` evaluations; returns True when the search is complete.

    Minimum leaf size ``ml`` (issue 25). Write OPT_m(D) for the optimal depth-one cost of the
    rows D with leaves of >= ml rows, OPT_1(D) without the constraint. A split scores
    ``theta_w = OPT_m(L_w) + OPT_m(R_w)``. The similarity bound (Eq. 3) holds for a side that
    shrinks: for A subset of B, the optimal tree of A run on B keeps every leaf at >= ml rows
    and misclassifies at most the added weight, so OPT_m(A) >= OPT_m(B) - w(B minus A). It
    fails for a side that grows (OPT_m is not monotone), but OPT_m(B) >= OPT_1(B) >= OPT_1(A)
    (a tree of B restricted to A is a tree of A). So for w' > w (left side grows, right
    shrinks by the moved weight): theta_w' >= OPT_1(L_w) + OPT_m(R_w) - moved, and for w' < w:
    theta_w' >= OPT_m(L_w) + OPT_1(R_w) - moved. The evaluator gives both costs per side in
    one pass: ``tcL[c]``/``tcR[c]`` keep the constrained tL/tR, ``thL[c]``/``thR[c]`` the
    unconstrained uL/uR. NB (Eq. 9) and IS (Eq. 11) use uL + tR to the right of a point and
    tL + uR to its left; SP (Theorem 3, Eq. 12) bounds every w' in (u, v) by OPT_1(L_u) +
    OPT_1(R_v) (OPT_m >= OPT_1, OPT_1 monotone); Theorem 2 becomes: every u < w has theta_u
    >= OPT_1(R_u) >= OPT_1(R_w) = uR (prune them once uR exceeds the bound), every v > w has
    theta_v >= uL. The cross rule (``rules[3]``, with IS): inside (u, v) both sides shrink
    from a neighbour -- L_w' from L_v, R_w' from R_u -- so theta_w' >= tL_v + tR_u -
    (z(v) - z(u)), by the similarity bound alone; with the IS ends and SP it makes the exact
    set of w' in (u, v) whose bound max(tL_v - (z(v) - z(w')), uL_u) + max(tR_u - (z(w') -
    z(u)), uR_v) is within the incumbent's (an interval: the bound is convex in z(w')).
    ``lbf`` is a known lower bound on every split's score (the sub-problem's unconstrained
    depth-two optimum, 0 when unknown): an interval is dropped when it exceeds the bound.
    With ``ml`` == 1, u = t: ConTree's rules, unchanged (the cross rule is then optional).

    ``twin`` (with ``ml`` > 1): search the optimum *without* the minimum leaf size (u only,
    ConTree's rules, incumbent ``inc``) while recording every evaluated split's
    constrained side costs in ``xL``/``xR`` and keeping the constrained incumbent ``incm``
    (splits leaving ``ml`` rows on each side) -- the first phase of
    :func:`d2_two_phase`, whose second phase continues from these evaluations.
    """
    p, m = ordl.shape
    goleft = np.empty(m, dtype=np.bool_)
    K = tot.shape[0]
    cl, ca, tl, tr = np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K)
    pre_l = np.empty(m if kind == 0 else 0)
    pre_r = np.empty(m if kind == 0 else 0)
    hs = _has_splits(valid)
    use_nb, use_is, use_sp = rules[0], rules[1], rules[2]
    use_cross = use_is and rules[3]
    cons = ml > 1 and not twin  # the minimum-leaf rules (else ConTree's, on t = u)
    use_relaxed = cons and use_sp and rules[4] and kind == 2
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
            if u >= 0:
                su = thL[c0 + u] + tcR[c0 + u]  # theta_u (ml == 1), else its bound right of u
                if su - B > 0:
                    i = max(i, np.searchsorted(wc, wc[u] + (su - B) - tol, side="left"))
            if v >= 0:
                sv = tcL[c0 + v] + thR[c0 + v]  # theta_v (ml == 1), else its bound left of v
                if sv - B > 0:
                    j = min(j, np.searchsorted(wc, wc[v] - (sv - B) + tol, side="right") - 1)
            if use_cross and u >= 0 and v >= 0 and tcL[c0 + v] + tcR[c0 + u] - (wc[v] - wc[u]) > B + tol:
                i = j + 1  # both sides shrink from a neighbour: theta >= tL_v + tR_u - moved
            if i > j:
                continue
        if use_sp:  # P_SP, Eq. (12)
            lbI = (thL[c0 + u] if u >= 0 else 0.0) + (thR[c0 + v] if v >= 0 else 0.0)
            if lbI > B:
                counts[1] += 1
                continue
            if use_relaxed and i < j and u >= 0 and v >= 0 and tcL[c0 + u] + tcR[c0 + v] > B:
                # SP on the weightless relaxation (kernels_minleaf.relaxed_binary_ml) of the
                # shrunk interval: every split of [i, j] lies between its end candidates
                evals += 1
                counts[0] += 1
                rL, rR = relaxed_binary_ml(ordl, posl, S, Sall, cuts, cstart, wcum, Atot, Btot, gl, f, cuts[c0 + i],
                                           cuts[c0 + j], ml)
                if max(rL, thL[c0 + u]) + max(rR, thR[c0 + v]) > B:
                    counts[1] += 1
                    continue
        if cons and lbf > B:  # every split costs at least lbf
            counts[1] += 1
            continue
        w = (i + j) // 2
        z = cuts[c0 + w]
        evals += 1
        counts[0] += 1
        if ml > 1:
            if kind == 2:
                tL, tR, uL, uR = eval_binary_ml(ordl, posl, S, Sall, cuts, cstart, wcum, Atot, Btot, hs, gl, f, z, ml)
            elif kind == 0:
                tL, tR, uL, uR = eval_wide_ml(ordl, posl, cls, wts, tot, cuts, cstart, hs, gl, cl, ca, tl, tr,
                                              pre_l, pre_r, f, z, ml)
            else:
                tL, tR, uL, uR = eval_multi_ml(ordl, posl, cls, wts, tot, cuts, cstart, cacc, hs, gl, cl, tl, tr,
                                               f, z, ml)
        else:
            if kind == 2:
                tL, tR = _eval_binary_cuts(ordl, posl, S, Sall, cuts, cstart, wcum, Atot, Btot, hs, gl, f, z)
            elif kind == 0:
                tL, tR = eval_wide(ordl, posl, cls, wts, tot, cuts, cstart, hs, gl, cl, ca, tl, tr, pre_l, pre_r, f, z)
            else:
                # a side above ``side_cap`` is only known to be above it: the rules then act as on
                # its exact cost (NB and IS prune all of [i, j], SP every interval after: the
                # bound only falls), and the split is no incumbent
                side_cap = max(B, _bound_for(inc, f, i) - gap) + max(wc[w] - wc[i], wc[j] - wc[w]) + 1.0 + 2.0 * tol
                tL, tR = _eval_multi_cuts(ordl, posl, cls, wts, tot, cuts, cstart, cacc, hs, gl, cl, tl, tr, f, z,
                                          side_cap)
            uL = tL
            uR = tR
        if twin:  # keep the constrained costs, search on the unconstrained ones
            xL[c0 + w] = tL
            xR[c0 + w] = tR
            if z + 1 >= ml and m - z - 1 >= ml and tL + tR <= _bound_for(incm, f, w) - gap:
                incm[0] = tL + tR
                incm[1] = f
                incm[2] = w
                incm[3] = 1.0
            tL = uL
            tR = uR
        tw = tL + tR
        if tw <= B:
            inc[0] = tw
            inc[1] = f
            inc[2] = w
            inc[3] = 1.0
            st[2] = f
            st[3] = z
        tp = uL + tR  # bounds the splits right of w (uL = tL, tp = tw when ml == 1)
        tm = tL + uR  # and those left of it
        tcL[c0 + w] = tL
        tcR[c0 + w] = tR
        thL[c0 + w] = uL
        thR[c0 + w] = uR
        if use_is:  # Theorem 2
            if cons:
                if uR > _bound_for(inc, f, 0) - gap:
                    mlr[f, 0] = max(mlr[f, 0], w + 1)
                if uL > _bound_for(inc, f, w + 1) - gap:
                    mlr[f, 1] = min(mlr[f, 1], w - 1)
            else:
                if tL <= 0.0 and tw > _bound_for(inc, f, 0) - gap:
                    mlr[f, 0] = max(mlr[f, 0], w + 1)
                if tR <= 0.0 and tw > _bound_for(inc, f, w + 1) - gap:
                    mlr[f, 1] = min(mlr[f, 1], w - 1)
        lo = w - 1
        hi = w + 1
        if use_nb:  # P_NB, Eq. (9)
            r_ = tm - (_bound_for(inc, f, w - 1) - gap)
            if r_ > 0:
                lo = min(lo, np.searchsorted(wc, wc[w] - r_ + tol, side="right") - 1)
            r_ = tp - (_bound_for(inc, f, w + 1) - gap)
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
def d2_state(cstart, cuts, m, ml):  # pragma: no cover
    """Fresh state of :func:`d2_search` for the candidates of ``cstart``: the queue holding
    one interval per feature with root candidates (the cuts leaving at least ``ml`` of the
    node's ``m`` rows on each side), ``st``, the score arrays, the IS limits ``mlr`` and
    the counters."""
    p = cstart.shape[0] - 1
    nc = cstart[p]
    queue = np.empty((nc + 1, 5), dtype=np.int64)
    mlr = np.empty((p, 2), dtype=np.int64)
    q = 0
    for f in range(p):
        c0 = cstart[f]
        mf = cstart[f + 1] - c0
        lo = 0
        hi = mf - 1
        if ml > 1:
            while lo < mf and cuts[c0 + lo] + 1 < ml:
                lo += 1
            while hi >= 0 and m - cuts[c0 + hi] - 1 < ml:
                hi -= 1
        mlr[f, 0] = lo
        mlr[f, 1] = hi
        if lo <= hi:
            queue[q, 0] = f
            queue[q, 1] = lo
            queue[q, 2] = hi
            queue[q, 3] = -1
            queue[q, 4] = -1
            q += 1
    st = np.empty(4, dtype=np.int64)
    st[0] = 0
    st[1] = q
    st[2] = -1
    st[3] = -1
    # thL is NaN at the candidates not evaluated (read by d2_phase2)
    return queue, st, np.empty(nc), np.empty(nc), np.full(nc, np.nan), np.empty(nc), mlr, np.zeros(2, dtype=np.int64)


@njit(cache=True, nogil=True)
def d2_phase2(cstart, cuts, m, ml, tcL, tcR, thL, xL, xR, incm):  # pragma: no cover
    """State of the second phase of :func:`d2_two_phase`: the constrained search over the
    root splits leaving ``ml`` rows on each side, starting from the splits the first phase
    evaluated (``thL`` not NaN; their constrained side costs ``xL``/``xR`` are copied into
    ``tcL``/``tcR``): one interval per gap between evaluated splits, with the evaluated
    neighbours as u/v (a neighbour outside the root range bounds its side as well: the
    bounds are set functions of the sides' rows). ``st[2:4]`` start at ``incm``'s split."""
    p = cstart.shape[0] - 1
    nc = cstart[p]
    queue = np.empty((nc + 1, 5), dtype=np.int64)
    mlr = np.empty((p, 2), dtype=np.int64)
    st = np.empty(4, dtype=np.int64)
    q = 0
    for f in range(p):
        c0 = cstart[f]
        mf = cstart[f + 1] - c0
        lo = 0
        hi = mf - 1
        while lo < mf and cuts[c0 + lo] + 1 < ml:
            lo += 1
        while hi >= 0 and m - cuts[c0 + hi] - 1 < ml:
            hi -= 1
        mlr[f, 0] = lo
        mlr[f, 1] = hi
        u = -1
        for k in range(mf + 1):
            if k < mf and thL[c0 + k] != thL[c0 + k]:
                continue
            if k < mf:
                tcL[c0 + k] = xL[c0 + k]
                tcR[c0 + k] = xR[c0 + k]
            a = max(u + 1, lo)
            b = min(k - 1, hi)
            if a <= b:
                queue[q, 0] = f
                queue[q, 1] = a
                queue[q, 2] = b
                queue[q, 3] = u
                queue[q, 4] = k if k < mf else -1
                q += 1
            u = k
    st[0] = 0
    st[1] = q
    st[2] = -1
    st[3] = -1
    if incm[3] != 0.0 and incm[1] >= 0:
        f = int(incm[1])
        st[2] = f
        st[3] = cuts[cstart[f] + int(incm[2])]
    return queue, st, mlr


@njit(cache=True, nogil=True)
def _seed(kind, ordl, posl, S, Sall, wcum, Atot, Btot, cls, wts, tot, cacc, cuts, cstart, inc, gap, st, counts,
          ml, sf, sz):  # pragma: no cover
    """Evaluate the root split (feature ``sf``, position ``sz``) first and make it the
    incumbent when it is good enough (an unconstrained optimum's root split, which often
    also is the constrained one). Nothing is recorded for the interval search."""
    p, m = ordl.shape
    c0 = cstart[sf]
    c1 = cstart[sf + 1]
    w = np.searchsorted(cuts[c0:c1], sz)
    if w >= c1 - c0 or cuts[c0 + w] != sz or sz + 1 < ml or m - sz - 1 < ml:
        return
    K = tot.shape[0]
    gl = np.empty(m, dtype=S.dtype)
    hs = cstart[p] > 0
    counts[0] += 1
    if kind == 2:
        tL, tR, uL, uR = eval_binary_ml(ordl, posl, S, Sall, cuts, cstart, wcum, Atot, Btot, hs, gl, sf, sz, ml)
    elif kind == 0:
        tL, tR, uL, uR = eval_wide_ml(ordl, posl, cls, wts, tot, cuts, cstart, hs, gl, np.zeros(K), np.zeros(K),
                                      np.zeros(K), np.zeros(K), np.empty(m), np.empty(m), sf, sz, ml)
    else:
        tL, tR, uL, uR = eval_multi_ml(ordl, posl, cls, wts, tot, cuts, cstart, cacc, hs, gl, np.zeros(K),
                                       np.zeros(K), np.zeros(K), sf, sz, ml)
    tw = tL + tR
    if tw <= _bound_for(inc, sf, w) - gap:
        inc[0] = tw
        inc[1] = sf
        inc[2] = w
        inc[3] = 1.0
        st[2] = sf
        st[3] = sz


@njit(cache=True, nogil=True)
def d2_run(rows, order, vals, y, w, wd, sgn, K, lid, inc, gap, tol, rules, budget, wide, ml, lbf, sf, sz,
           twin, incm):  # pragma: no cover
    """:func:`d2_prepare`, :func:`d2_state` and the first chunk of :func:`d2_search` (at
    most ``budget`` row-feature steps) in one call: most depth-two sub-problems finish
    here. Returns ``done``, the prepared arrays, the search state, ``Atot``, ``Btot``, the
    chunk size in evaluations for resuming with :func:`d2_search` and the constrained side
    costs ``xL``/``xR`` of a ``twin`` search. ``ml``: minimum leaf size, ``lbf``: a lower
    bound on every split, ``(sf, sz)``: a root split evaluated first when ``ml`` > 1 (``sf``
    -1: none); ``twin``, ``incm``: the first phase of :func:`d2_two_phase` (``inc`` is then
    the incumbent without the minimum leaf size, ``incm`` the one with it)."""
    p, m = order.shape
    (ordl, posl, valid, wcum, cuts, cstart, wcs, S, Sall, tot, cls, wts, cacc) = d2_prepare(
        rows, order, vals, y, w, wd, sgn, K, lid, wide)
    queue, st, tcL, tcR, thL, thR, mlr, counts = d2_state(cstart, cuts, m, 1 if twin else ml)
    nc = cuts.shape[0]
    xL = np.empty(nc if twin else 0)
    xR = np.empty(nc if twin else 0)
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
    if ml > 1 and sf >= 0 and not twin:
        _seed(kind, ordl, posl, S, Sall, wcum, Atot, Btot, cls, wts, tot, cacc, cuts, cstart, inc, gap, st, counts,
              ml, sf, sz)
    done = d2_search(kind, ordl, posl, S, Sall, wcum, Atot, Btot, cls, wts, tot, cacc, valid, cuts, cstart, wcs,
                     inc, gap, tol, rules, st, queue, tcL, tcR, thL, thR, mlr, counts, max_evals, ml, lbf,
                     twin, incm, xL, xR)
    return (done, ordl, posl, valid, wcum, cuts, cstart, wcs, S, Sall, tot, cls, wts, cacc, queue, st, tcL, tcR, thL,
            thR, mlr, counts, Atot, Btot, max_evals, xL, xR)


@njit(cache=True, nogil=True)
def d2_quick(rows, order, vals, y, w, wd, sgn, K, lid, inc, gap, tol, rules, budget, wide, ml, lbf, sf,
             sz):  # pragma: no cover
    """:func:`d2_run` returning scalars only: ``(done, best f, best z, evaluations,
    intervals pruned by SP)``; ``inc`` is updated in place. Boxing the two dozen arrays of
    ``d2_run`` costs more than the search of a small sub-problem, and they are only needed
    to resume (``done`` False: the caller starts over with the resumable calls) or to
    build the tree (done later, from the rows, if the tree is used)."""
    res = d2_run(rows, order, vals, y, w, wd, sgn, K, lid, inc, gap, tol, rules, budget, wide, ml, lbf, sf, sz,
                 False, inc)
    st = res[15]
    counts = res[21]
    return res[0], st[2], st[3], counts[0], counts[1]


@njit(cache=True, nogil=True)
def d2_two_phase(rows, order, vals, y, w, wd, sgn, K, lid, inc, inc1, gap, tol, rules, budget, wide,
                 ml):  # pragma: no cover
    """A depth-two sub-problem with minimum leaf size ``ml`` and, for the caller's bounds
    (``search._Solver.branch``), the same sub-problem's optimum without it, in one call
    when within ``budget``. Phase one is the search without the constraint (incumbent
    ``inc1``, a copy of ``inc``), with the evaluator that also gives the constrained side
    costs, so it also improves the constrained incumbent ``inc``; when it finds nothing
    within the bound, neither can the constrained search (OPT_m >= OPT_1: every tree with
    large leaves is a tree). Phase two is the constrained search (:func:`d2_search` with
    its minimum-leaf rules), starting from every split phase one evaluated
    (:func:`d2_phase2`) and knowing OPT_1 as a lower bound on every split. Returns
    ``(done, best f, best z, evaluations, intervals pruned, evaluations of phase one)``; ``inc`` and ``inc1`` are
    updated in place (``inc1[3]`` 0: nothing without the constraint within the bound).
    ``done`` False: over budget, the caller starts over with :func:`d2_run`."""
    res = d2_run(rows, order, vals, y, w, wd, sgn, K, lid, inc1, gap, tol, rules, budget, wide, ml, 0.0, -1, -1,
                 True, inc)
    counts = res[21]
    if not res[0]:
        return False, -1, -1, counts[0], counts[1], counts[0]
    (done, ordl, posl, valid, wcum, cuts, cstart, wcs, S, Sall, tot, cls, wts, cacc, queue, st, tcL, tcR, thL, thR,
     mlr, counts, Atot, Btot, max_evals, xL, xR) = res
    first = counts[0]
    if inc1[3] == 0.0:  # no tree within the bound, so none with large leaves
        return True, -1, -1, counts[0], counts[1], first
    queue, st, mlr = d2_phase2(cstart, cuts, order.shape[1], ml, tcL, tcR, thL, xL, xR, inc)
    kind = 2 if K == 2 else (0 if wide else K)
    done = d2_search(kind, ordl, posl, S, Sall, wcum, Atot, Btot, cls, wts, tot, cacc, valid, cuts, cstart, wcs,
                     inc, gap, tol, rules, st, queue, tcL, tcR, thL, thR, mlr, counts, max_evals, ml, inc1[0] - gap,
                     False, inc, xL, xR)
    return done, st[2], st[3], counts[0], counts[1], first


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
