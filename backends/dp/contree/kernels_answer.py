"""Compiled kernels that build the answer of the ConTree search (backends/dp/contree/
search.py) once it is found: the depth-two subtrees left lazy by the search
(``d2_subtree``) and the threshold refinement with the training errors (``route``).
Split from ``kernels.py`` (same ``njit``: numba when importable, else plain Python)."""
from __future__ import annotations

import numpy as np

from .kernels import njit, side_errors
from .kernels_wide import side_errors_wide


@njit(cache=True, nogil=True)
def d2_subtree(rows, order, vals, y, wd, K, f1, z, big, d_strict, tol, mark, out, wide):  # pragma: no cover
    """A lazy depth-two subtree in one pass (``DepthTwo.materialise`` of a ``_LazyD2``):
    the node of ``rows`` is cut from the root's ``order`` / ``vals``, then ``d2_errors``
    and the argmin rule of ``_d2_split_compiled`` (first (f, position) within ``tol / 2``
    of a side's optimum, a depth-one split only when strictly better than the leaf, the
    lowest class on label ties).  ``out`` (9 floats): the root threshold, then per side
    the feature (-1 for a leaf), threshold and the two labels (the side's label twice
    for a leaf).  ``mark`` is an all-False scratch over the dataset's rows, left all-False.
    ``wide`` (many classes): the errors from ``kernels_wide.side_errors_wide``, in O(p m)."""
    p, n = order.shape
    m = rows.shape[0]
    for r in range(m):
        mark[rows[r]] = True
    nord = np.empty((p, m), dtype=order.dtype)
    nval = np.empty((p, m))
    for f in range(p):
        k = 0
        for i in range(n):
            r = order[f, i]
            if mark[r]:
                nord[f, k] = r
                nval[f, k] = vals[f, i]
                k += 1
    for r in range(m):
        mark[rows[r]] = False
    # side of every dataset row, through mark (True = left), cleared at the end
    for i in range(z + 1):
        mark[nord[f1, i]] = True
    totL = np.zeros(K)
    totR = np.zeros(K)
    for i in range(m):
        r = nord[0, i]
        c = y[r]
        totR[c] += wd[r]
        if mark[r]:
            totL[c] += wd[r]
    for k in range(K):
        totR[k] = totR[k] - totL[k]
    errL = np.empty((p, m))
    errR = np.empty((p, m))
    cl = np.zeros(K)
    ca = np.zeros(K)
    if wide:
        cls = np.empty((p, m), dtype=y.dtype)
        wts = np.empty((p, m), dtype=wd.dtype)
        left = np.empty((p, m), dtype=np.bool_)
        valid = np.empty((p, m), dtype=np.bool_)
        for f2 in range(p):
            for i in range(m):
                r = nord[f2, i]
                cls[f2, i] = y[r]
                wts[f2, i] = wd[r]
                left[f2, i] = mark[r]
                valid[f2, i] = False if i == m - 1 else nval[f2, i + 1] > nval[f2, i]
        side_errors_wide(cls, wts, left, valid, big, errL, errR, cl, ca)
    for f2 in range(p if not wide else 0):
        for k in range(K):
            cl[k] = 0.0
            ca[k] = 0.0
        for i in range(m):
            r = nord[f2, i]
            c = y[r]
            ca[c] += wd[r]
            if mark[r]:
                cl[c] += wd[r]
            if i == m - 1 or not nval[f2, i + 1] > nval[f2, i]:
                errL[f2, i] = big
                errR[f2, i] = big
            else:
                errL[f2, i], errR[f2, i] = side_errors(cl, ca, totL, totR, K)
    a = nval[f1, z]
    b = nval[f1, z + 1]
    t = (a + b) / 2.0
    out[0] = t if (a <= t and t < b) else a
    cnt = np.zeros(K)
    for side in range(2):
        err = errL if side == 0 else errR
        tot = totL if side == 0 else totR
        s = 0.0
        mx = -np.inf
        lab = 0
        for k in range(K):
            s += tot[k]
            if tot[k] > mx:
                mx = tot[k]
                lab = k
        leaf = s - mx
        best = np.inf
        for f2 in range(p):
            for i in range(m):
                if err[f2, i] < best:
                    best = err[f2, i]
        theta = best if best < leaf - d_strict / 2 else leaf
        o = 1 + 4 * side
        if theta == leaf:
            out[o] = -1.0
            out[o + 1] = 0.0
            out[o + 2] = lab
            out[o + 3] = lab
            continue
        ff = -1
        zz = -1
        for f2 in range(p):
            for i in range(m):
                if err[f2, i] <= theta + tol / 2:
                    ff = f2
                    zz = i
                    break
            if ff >= 0:
                break
        for k in range(K):
            cnt[k] = 0.0
        for i in range(zz + 1):
            r = nord[ff, i]
            if mark[r] == (side == 0):
                cnt[y[r]] += wd[r]
        la = 0
        lb = 0
        ma = -np.inf
        mb = -np.inf
        for k in range(K):
            if cnt[k] > ma:
                ma = cnt[k]
                la = k
            if tot[k] - cnt[k] > mb:
                mb = tot[k] - cnt[k]
                lb = k
        a = nval[ff, zz]
        b = nval[ff, zz + 1]
        t = (a + b) / 2.0
        out[o] = ff
        out[o + 1] = t if (a <= t and t < b) else a
        out[o + 2] = la
        out[o + 3] = lb
    for i in range(z + 1):
        mark[nord[f1, i]] = False


@njit(cache=True, nogil=True)
def route(X, y, feat, thr, left, right, label, lmax, rmin, nl, nr, wrong):  # pragma: no cover
    """Every row of ``X`` down a flattened tree (node 0 the root; ``label[j] >= 0`` a leaf,
    else a split of ``feat[j]`` at ``thr[j]`` with children ``left[j]`` / ``right[j]``):
    per split the largest value sent left and the smallest sent right and how many rows
    go each way, per row whether its leaf's label differs from ``y`` (``_refine`` and
    ``errors`` in one pass)."""
    for j in range(feat.shape[0]):
        lmax[j] = -np.inf
        rmin[j] = np.inf
        nl[j] = 0
        nr[j] = 0
    for r in range(X.shape[0]):
        j = 0
        while label[j] < 0:
            v = X[r, feat[j]]
            if v <= thr[j]:
                if v > lmax[j]:
                    lmax[j] = v
                nl[j] += 1
                j = left[j]
            else:
                if v < rmin[j]:
                    rmin[j] = v
                nr[j] += 1
                j = right[j]
        wrong[r] = label[j] != y[r]
