"""A node of the search: a subset of the rows with every feature's order restricted to it."""
from __future__ import annotations

from typing import Optional

import numpy as np

class _Node:
    """A (sub)dataset: its rows and, per feature, the rows sorted by that feature.

    ``order[f]`` lists the row ids sorted by feature ``f`` (stable), ``vals[f]`` the sorted
    values.  Splitting preserves the order, so children are filtered, never re-sorted
    (Sec. "Depth-Two Subroutine": "we sort the dataset once in the beginning").
    """

    __slots__ = ("rows", "m", "order", "vals", "_ys", "_call", "_wcum", "_key", "valid", "valid_idx", "binary", "pall", "loc", "clw")

    def __init__(self, rows: np.ndarray, order: np.ndarray, vals: np.ndarray) -> None:
        self.rows = rows
        self.m = int(rows.shape[0])
        self.order = order
        self.vals = vals
        self._ys: Optional[np.ndarray] = None
        self._call: Optional[np.ndarray] = None
        self._wcum: Optional[np.ndarray] = None
        self._key: Optional[bytes] = None
        self.valid: Optional[np.ndarray] = None  # (p, m) distinct-value boundaries
        self.valid_idx: Optional[np.ndarray] = None  # their flat indices
        self.binary: Optional[tuple] = None  # two-class kernel arrays
        self.pall: Optional[np.ndarray] = None  # (p, p, m) positions in every order
        self.loc: Optional[tuple] = None  # (ordl, posl) of _Solver.local_index
        self.clw: Optional[tuple] = None  # (classes, weights) in every order (compiled path)
