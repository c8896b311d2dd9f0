"""The specialised depth-two solver (MurTree, Demirović et al., JMLR 2022, Sec. 4.4):
every tree of depth at most two over rows ``S`` from the class frequencies of every pair
of candidates, computed at once with one matrix product per class.

For a root candidate f and a child candidate g, with C1[f, c] the weight of class c among
the rows where f holds and C2[f, g, c] among those where f and g hold, the four leaves
have class weights C2[f, g], C1[f] - C2[f, g] (right child), C1[g] - C2[f, g] and total -
C1[f] - C1[g] + C2[f, g] (left child); a leaf costs its weight minus its majority class
(MurTree Eq. 4). Output: the least error with at most 0..3 decision nodes and, for each,
the root candidate and the node budgets of its children (children of depth one are
re-solved, cheaply, when the tree is decoded). Path constraints and
``same_leaf`` enter as the allowed child candidates below each root candidate; leaf and
node sizes are applied to the row counts.
"""
from __future__ import annotations

import numpy as np

INF = float("inf")


def _misclassified(w: np.ndarray) -> np.ndarray:
    """Misclassification of a leaf per class-weight vector (first axis: classes), as
    elementwise operations on contiguous slices (a reduction over a short axis is slow)."""
    total, most = w[0].copy(), w[0].copy()
    for c in range(1, w.shape[0]):
        total += w[c]
        np.maximum(most, w[c], out=most)
    return total - most


def depth_two(Bf: np.ndarray, Wc: np.ndarray, ok_root: np.ndarray, min_leaf: int, min_node: int, leaf_err: float,
              ok_left: np.ndarray | None = None, ok_right: np.ndarray | None = None,
              freq: tuple | None = None, compiled: bool = True,
              leaf_cost=None) -> tuple[np.ndarray, list[tuple[int, int, int] | None]]:
    """``E[i]``, the least error with at most i nodes (i = 0..3), and the choice for each.

    ``Bf``: (s, m) 0/1 floats of the rows; ``Wc``: (s, C) class weights of the rows;
    ``ok_root``: candidates allowed at the root (sizes not yet checked); ``ok_left[f, g]``
    / ``ok_right[f, g]``: g allowed below f on the side where f fails / holds (path
    constraints and ``same_leaf``; all allowed when None); ``freq``: the rows' pair
    frequencies (counts, C1, C2) when already known; ``compiled``: the compiled kernels may
    be used (when numba imports); ``leaf_cost``: the cost of a leaf per statistics vector
    (first axis: the statistics) of another task than misclassification (the task's
    ``stacked_costs``: regression's squared error), on numpy."""
    s, m = Bf.shape
    _err = _misclassified if leaf_cost is None else leaf_cost
    if compiled and leaf_cost is None and _kernels_available():
        if freq is None:
            from . import kernels

            freq = kernels.pair_frequencies(Bf > 0.5, Wc)
        return depth_two_compiled(freq, Wc.sum(axis=0), s, ok_root, min_leaf, min_node, leaf_err, ok_left, ok_right)
    if ok_left is None or ok_right is None:
        ok_left = ok_right = np.ones((m, m), dtype=bool)
    if freq is not None:
        counts, C1, C2 = freq
    else:
        counts = Bf.T @ Bf  # (m, m) rows where f and g hold
        C1 = (Bf.T @ Wc).T.copy()  # (C, m) class weights where f holds
        C2 = np.stack([(Bf * Wc[:, c:c + 1]).T @ Bf for c in range(Wc.shape[1])])  # (C, m, m)
    ones = np.diag(counts).copy()  # rows where f holds
    total = Wc.sum(axis=0)[:, None, None]
    nR, nL = ones, s - ones
    good = lambda a, b: (a >= min_leaf) & (b >= min_leaf)  # noqa: E731
    right_leaf, left_leaf = _err(C1), _err(total[:, :, 0] - C1)

    # the formulas of ``kernels.depth_two_tail`` on numpy arrays
    # right side of f: f holds; left: f fails. Child split on g of each side
    RR, RL = C2, C1[:, :, None] - C2
    LR, LL = C1[:, None, :] - C2, total - C1[:, :, None] - C1[:, None, :] + C2
    nRR, nRL = counts, ones[:, None] - counts
    nLR, nLL = ones[None, :] - counts, s - ones[:, None] - ones[None, :] + counts
    right_split = np.where(ok_right & good(nRR, nRL) & (nR >= min_node)[:, None], _err(RR) + _err(RL), INF)
    left_split = np.where(ok_left & good(nLR, nLL) & (nL >= min_node)[:, None], _err(LR) + _err(LL), INF)
    right_one, left_one = right_split.min(axis=1), left_split.min(axis=1)  # best child split per f
    root_ok = ok_root & good(nL, nR) & (s >= min_node)
    right_best, left_best = np.minimum(right_leaf, right_one), np.minimum(left_leaf, left_one)
    options = [
        np.where(root_ok, left_leaf + right_leaf, INF),  # 1 node
        np.where(root_ok, np.minimum(left_leaf + right_best, left_best + right_leaf), INF),  # at most 2
        np.where(root_ok, left_best + right_best, INF),  # at most 3
    ]
    E = np.full(4, leaf_err)
    choice: list[tuple[int, int, int] | None] = [None] * 4
    for i, opt in enumerate(options, start=1):
        if E[i - 1] <= opt.min() if opt.size else True:
            E[i], choice[i] = E[i - 1], choice[i - 1]
            continue
        f = int(np.argmin(opt))
        E[i] = opt[f]
        if i == 1:
            choice[i] = (f, 0, 0)
        elif i == 2:
            choice[i] = (f, 0, 1) if left_leaf[f] + right_best[f] <= left_best[f] + right_leaf[f] else (f, 1, 0)
        else:
            choice[i] = (f, 1, 1)
    return E, choice


def _kernels_available() -> bool:
    from . import kernels

    return bool(kernels.AVAILABLE)


_NONE = np.zeros((0, 0), dtype=bool)


def depth_two_compiled(freq: tuple, total: np.ndarray, s: int, ok_root: np.ndarray, min_leaf: int, min_node: int,
                       leaf_err: float, ok_left: np.ndarray | None = None, ok_right: np.ndarray | None = None,
                       integral: bool = False) -> tuple[np.ndarray, list[tuple[int, int, int] | None]]:
    """``depth_two`` on known frequencies ``(counts, C1, C2)`` (upper triangles suffice)
    and the rows' class weights ``total``, by the compiled kernel (``integral``: every row
    weight an integer, so two classes take the specialised kernel)."""
    from . import kernels

    counts, C1, C2 = freq
    if ok_left is None or ok_right is None:
        ok_left = ok_right = _NONE
    total = np.asarray(total, dtype=np.float64)
    two = integral and C1.shape[0] == 2 and ok_left.shape[0] == 0
    E, F, BL, BR = kernels.depth_two_tail(C1, C2, total, counts, float(s), float(min_leaf), float(min_node), ok_root,
                                          ok_left, ok_right, float(leaf_err), two)
    choice: list[tuple[int, int, int] | None] = [None if F[i] < 0 else (int(F[i]), int(BL[i]), int(BR[i]))
                                                 for i in range(4)]
    return E, choice
