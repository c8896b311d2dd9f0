"""An engine tree's predictions under a confusion objective (issue 26).

A cost matrix reweights (and may relabel) the rows the engines see
(``compiler/lower_confusion.py``), so the engines' "errors" are the objective, not the
training errors; F1's Dinkelbach steps (``f1.py``) count each step's tree's confusion on
the rows' true classes (``TreeSearch.confusion``) from these predictions. The training
errors a solve reports are the program's re-evaluation of the decoded tree.
"""
from __future__ import annotations

import numpy as np


def predict(raw: tuple, X: np.ndarray) -> np.ndarray:
    """The class index an engine tree predicts for each row of the search matrix ``X``
    (``left``: the rows with ``x[dim] <= threshold``)."""
    out = np.empty(X.shape[0], dtype=np.int64)
    stack = [(raw, np.arange(X.shape[0]))]
    while stack:
        node, rows = stack.pop()
        if node[0] == "leaf":
            out[rows] = int(node[1])
            continue
        _, j, t, left, right = node
        go_left = X[rows, j] <= t
        stack.append((left, rows[go_left]))
        stack.append((right, rows[~go_left]))
    return out

