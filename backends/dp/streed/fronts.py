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
first. Compiled with numba when it imports (``kernels.AVAILABLE``).
"""
from __future__ import annotations

import numpy as np

from .kernels import AVAILABLE, njit

MASK_IGNORE, MASK_SUBSET, MASK_EXACT = 0, 1, 2


@njit(cache=True, nogil=True)
def _sweep(order, E, O, mask, mode):  # pragma: no cover - compiled
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
    return _sweep(np.ascontiguousarray(order), np.ascontiguousarray(E), np.ascontiguousarray(O),
                  np.ascontiguousarray(mask), mode)


__all__ = ["AVAILABLE", "MASK_EXACT", "MASK_IGNORE", "MASK_SUBSET", "nondominated"]
