"""Pareto fronts of integer vectors: the non-dominated filter of the front engine
(``pareto.py``; STreeD, van der Linden et al., NeurIPS 2023, Sec. 4.4: a subproblem keeps
every solution no other solution beats on every component).

A front is a matrix of int64 vectors with two kinds of columns: *ordered* columns, smaller
is better (objective levels, quantities bounded from above), and *exact* columns, which a
dominating vector must match (quantities bounded on both sides: ``==`` rows, and the two
mirrored rows of ``abs(e) <= d``, which together pin ``e``). Each vector also carries the
set of columns its tree tests as a bitmask: ignored, compared by inclusion (a subset is
better: ``features_used`` bounded from above) or exactly (``uses`` formulas).

``nondominated`` sorts by the exact columns, then by the sum of the ordered ones, then by
the size of the mask, and sweeps each group of equal exact columns once: a vector is kept
when no vector kept before it in its group is at most it everywhere. Equal vectors keep the
first. The sweep is compiled with numba (``kernels``), imported on first use, for large
fronts only; small fronts and the pairs of child fronts stay on numpy (numba costs a
one-time import and load per process).
"""
from __future__ import annotations

import numpy as np


MASK_IGNORE, MASK_SUBSET, MASK_EXACT = 0, 1, 2
#: below these sizes numpy does the work: the compiled kernels cost a one-time load per process
SMALL_FRONT = 200


def _sweep_py(order, E, O, mask, mode):  # pragma: no cover - compiled
    F = order.shape[0]
    J = E.shape[1]
    K = O.shape[1]
    keep = np.empty(F, dtype=np.int64)
    n_keep = 0
    group_start = 0
    for idx in range(F):
        i = order[idx]
        if idx > 0:
            p = order[idx - 1]
            for c in range(J):
                if E[i, c] != E[p, c]:
                    group_start = n_keep
                    break
        dominated = False
        for q in range(group_start, n_keep):
            j = keep[q]
            ok = True
            for c in range(K):
                if O[j, c] > O[i, c]:
                    ok = False
                    break
            if not ok:
                continue
            if mode == 1:
                if (mask[j] & ~mask[i]) != 0:
                    continue
            elif mode == 2:
                if mask[j] != mask[i]:
                    continue
            dominated = True
            break
        if not dominated:
            keep[n_keep] = i
            n_keep += 1
    return keep[:n_keep]


def pairs(LV: np.ndarray, RV: np.ndarray, node: np.ndarray, cap_lo: np.ndarray,
          cap_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices (a, b) of the pairs of a left and a right front whose sum (plus ``node``)
    lies within the caps on every component, without forming the other pairs.

    >>> a, b = pairs(np.array([[1], [5]]), np.array([[0], [2]]), np.array([0]), np.array([0]), np.array([3]))
    >>> list(zip(a.tolist(), b.tolist()))
    [(0, 0), (0, 1)]
    """
    return _pairs_numpy(LV, RV, node, cap_lo, cap_hi)


def best_pairs(LV: np.ndarray, RV: np.ndarray, node: np.ndarray, cap_lo: np.ndarray, cap_hi: np.ndarray,
               w: int) -> tuple[np.ndarray, np.ndarray]:
    """For each left vector, the right vector of least first component among those whose
    sum lies within the caps on component ``w`` — a range-minimum query (sparse table)
    over the right front sorted by ``w`` — kept when its first component meets its cap.
    The root's optimum when the caps of ``w`` stand for every constraint (see ``pareto``).

    >>> a, b = best_pairs(np.array([[1, 0], [0, 5]]), np.array([[3, -1], [1, 1], [0, 9]]), np.zeros(2, np.int64),
    ...                   np.array([-9, -2]), np.array([9, 2]), 1)
    >>> sorted(zip(a.tolist(), b.tolist()))
    [(0, 1)]
    """
    nl, nr = LV.shape[0], RV.shape[0]
    z = np.zeros(0, dtype=np.int64)
    if not nl or not nr:
        return z, z.copy()
    order = np.argsort(RV[:, w], kind="stable")
    key = RV[order, w]
    val = RV[order, 0]
    lo = np.searchsorted(key, cap_lo[w] - LV[:, w] - node[w], side="left")
    hi = np.searchsorted(key, cap_hi[w] - LV[:, w] - node[w], side="right")  # window [lo, hi)
    has = hi > lo
    if not has.any():
        return z, z.copy()
    table = [np.arange(nr)]  # table[k][i]: argmin of val over [i, i + 2**k)
    k = 1
    while (1 << k) <= nr:
        prev = table[-1]
        half = 1 << (k - 1)
        left, right = prev[: nr - (1 << k) + 1], prev[half: half + nr - (1 << k) + 1]
        table.append(np.where(val[left] <= val[right], left, right))
        k += 1
    ia = np.flatnonzero(has)
    l, h = lo[ia], hi[ia]
    span = np.floor(np.log2(h - l)).astype(np.int64)
    first = np.empty(ia.shape[0], dtype=np.int64)
    second = np.empty(ia.shape[0], dtype=np.int64)
    for k in np.unique(span):
        sel = span == k
        first[sel] = table[k][l[sel]]
        second[sel] = table[k][h[sel] - (1 << k)]
    jb = np.where(val[first] <= val[second], first, second)
    ok = LV[ia, 0] + val[jb] + node[0] <= cap_hi[0]
    return ia[ok].astype(np.int64), order[jb[ok]].astype(np.int64)


def _pairs_numpy(LV, RV, node, cap_lo, cap_hi, chunk: int = 1 << 19) -> tuple[np.ndarray, np.ndarray]:
    """``pairs`` in blocks of left rows (by increasing first column) against the right rows
    whose first column can still fit under ``cap_hi[0]`` (a binary search)."""
    nl, nr = LV.shape[0], RV.shape[0]
    order = np.argsort(RV[:, 0], kind="stable")
    RVs = RV[order]
    lorder = np.argsort(LV[:, 0], kind="stable")
    step = max(1, chunk // max(nr, 1))
    out_a, out_b = [], []
    for start in range(0, nl, step):
        idx = lorder[start:start + step]
        Lc = LV[idx]
        lim = int(np.searchsorted(RVs[:, 0], cap_hi[0] - Lc[0, 0] - node[0], side="right"))
        if lim == 0:
            break  # the rest of the left rows are no smaller
        V = Lc[:, None, :] + RVs[None, :lim, :] + node
        a, b = np.nonzero(((V <= cap_hi) & (V >= cap_lo)).all(axis=2))
        out_a.append(idx[a])
        out_b.append(order[b])
    if not out_a:
        z = np.zeros(0, dtype=np.int64)
        return z, z.copy()
    return np.concatenate(out_a).astype(np.int64), np.concatenate(out_b).astype(np.int64)


_SWEEP = None


def _sweep(order, E, O, mask, mode):
    """``_sweep_py`` compiled on first use (numba loads only for a large front)."""
    global _SWEEP
    if _SWEEP is None:
        from .kernels import AVAILABLE, njit

        _SWEEP = njit(cache=True, nogil=True)(_sweep_py) if AVAILABLE else _sweep_py
    return _SWEEP(order, E, O, mask, mode)


def _popcount(mask: np.ndarray) -> np.ndarray:
    m = mask.astype(np.uint64)
    out = np.zeros(m.shape[0], dtype=np.int64)
    while m.any():
        out += (m & np.uint64(1)).astype(np.int64)
        m = m >> np.uint64(1)
    return out


def nondominated(E: np.ndarray, O: np.ndarray, mask: np.ndarray, mode: int) -> np.ndarray:
    """Indices of the non-dominated rows of the front (exact columns ``E``, ordered columns
    ``O``, masks ``mask`` compared by ``mode``), in an order of increasing exact key.

    >>> E = np.zeros((4, 0), dtype=np.int64); O = np.array([[1, 5], [2, 2], [1, 6], [3, 3]])
    >>> sorted(nondominated(E, O, np.zeros(4, dtype=np.int64), MASK_IGNORE).tolist())
    [0, 1]
    """
    F = O.shape[0]
    if F <= 1:
        return np.arange(F)
    keys = [_popcount(mask) if mode != MASK_IGNORE else np.zeros(F, dtype=np.int64), O.sum(axis=1)]
    keys += [E[:, c] for c in range(E.shape[1] - 1, -1, -1)]
    order = np.lexsort(keys)
    if O.shape[1] == 1 and mode == MASK_IGNORE:  # one ordered column: the first of each exact group
        new = np.ones(F, dtype=bool)
        Es = E[order]
        new[1:] = (Es[1:] != Es[:-1]).any(axis=1) if E.shape[1] else False
        return order[new]
    if F <= SMALL_FRONT:  # numpy, pairwise (dominance is transitive: any earlier dominator will do)
        Os, Es, Ms = O[order], E[order], mask[order]
        dom = (Os[:, None, :] <= Os[None, :, :]).all(axis=2) & (Es[:, None, :] == Es[None, :, :]).all(axis=2)
        if mode == MASK_SUBSET:
            dom &= (Ms[:, None] & ~Ms[None, :]) == 0
        elif mode == MASK_EXACT:
            dom &= Ms[:, None] == Ms[None, :]
        return order[~np.triu(dom, 1).any(axis=0)]
    return _sweep(np.ascontiguousarray(order), np.ascontiguousarray(E), np.ascontiguousarray(O),
                  np.ascontiguousarray(mask), mode)


__all__ = ["MASK_EXACT", "MASK_IGNORE", "MASK_SUBSET", "best_pairs", "nondominated", "pairs"]
