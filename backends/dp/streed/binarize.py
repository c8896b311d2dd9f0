"""The search matrix as 0/1 split candidates.

Input: ``TreeSearch.X`` and ``dims``. Output: ``Candidates``: a boolean matrix ``B``
(rows x candidates, True = the row goes RIGHT, ``x > threshold``), and per candidate its
search dimension and threshold. A 0/1 dimension is one candidate (threshold 0.5); an
ordered dimension (raw values, S7) is binarised at every midpoint of consecutive distinct
values of its rows, which is exact for univariate trees (Brita et al., AAAI 2025, Eq. 1:
every cut between two consecutive values induces the same partition as its midpoint).
Threshold ranges (C10) are applied before this, by ``lower_search``, which enters such a
column as its allowed cut points; ``SplitDim.cut_range`` is honoured here as well.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from odt.compiler.search import SplitDim


@dataclass(frozen=True)
class Candidates:
    B: np.ndarray  # (n, m) bool, True = right (x > threshold)
    dim: np.ndarray  # (m,) int64 search dimension of each candidate
    threshold: np.ndarray  # (m,) float64


def binarize(X: np.ndarray, dims: tuple[SplitDim, ...]) -> Candidates:
    """Every split candidate of the matrix ``X`` with dimensions ``dims``.

    >>> c = binarize(np.array([[0.0, 1.0], [1.0, 3.0], [1.0, 2.0]]), (SplitDim("a", object()), SplitDim("b")))
    >>> c.dim.tolist(), c.threshold.tolist()
    ([0, 1, 1], [0.5, 1.5, 2.5])
    """
    if not any(d.ordered for d in dims):  # 0/1 dimensions only: one comparison
        p = len(dims)
        return Candidates(np.ascontiguousarray(X > 0.5), np.arange(p, dtype=np.int64), np.full(p, 0.5))
    cols: list[np.ndarray] = []
    dim: list[int] = []
    thr: list[float] = []
    run: list[int] = []  # consecutive 0/1 dimensions, compared in one go

    def flush() -> None:
        if run:
            cols.append(X[:, run] > 0.5)
            dim.extend(run)
            thr.extend([0.5] * len(run))
            run.clear()

    for j, d in enumerate(dims):
        if not d.ordered:
            run.append(j)
            continue
        flush()
        x = X[:, j]
        uniq = np.unique(x)
        for lo, hi in zip(uniq[:-1], uniq[1:]):
            t = (lo + hi) / 2.0
            if d.cut_range is not None:
                a, b = d.cut_range
                if hi <= a or lo > b:  # no cut of [lo, hi) lies in [a, b]
                    continue
                t = min(max(t, a), b)
            cols.append((x > t)[:, None])
            dim.append(j)
            thr.append(float(t))
    flush()
    n = X.shape[0]
    B = np.hstack(cols) if cols else np.zeros((n, 0), dtype=bool)
    return Candidates(np.ascontiguousarray(B, dtype=bool), np.asarray(dim, dtype=np.int64),
                      np.asarray(thr, dtype=np.float64))


def distinct_partitions(cand: Candidates) -> Candidates:
    """One candidate per partition of the rows (the first in order): a candidate equal to
    another, or to its complement (the same two sides, swapped), gives the same subproblems
    (pystreed drops them as redundant features too). Only for programs whose constraints
    see partitions, not dimensions.

    >>> B = np.array([[True, False, True], [False, True, False]])
    >>> distinct_partitions(Candidates(B, np.arange(3), np.zeros(3))).dim.tolist()
    [0]
    """
    B = cand.B
    if B.shape[1] < 2 or B.shape[0] == 0:
        return cand
    keep = first_of_partitions(B)
    if keep.size == B.shape[1]:
        return cand
    return Candidates(np.ascontiguousarray(B[:, keep]), cand.dim[keep], cand.threshold[keep])


def first_of_partitions(B: np.ndarray) -> np.ndarray:
    """The columns of the 0/1 matrix ``B`` (rows x columns) that split its rows in a way no
    earlier column does (equal or complementary columns split them alike), ascending."""
    packed = np.packbits(np.ascontiguousarray((B ^ B[:1, :]).T), axis=1)  # each column flipped to row 0 = 0
    seen: set[bytes] = set()
    keep = []
    for j, key in enumerate(map(bytes, packed)):
        if key not in seen:
            seen.add(key)
            keep.append(j)
    return np.array(keep, dtype=np.int64)
