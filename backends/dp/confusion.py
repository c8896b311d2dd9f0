"""The training errors of a dp tree under a confusion objective (issue 26).

A cost matrix reweights (and may relabel) the rows the engines see
(``compiler/lower_confusion.py``), so the engines' "errors" are the objective; the
training errors every backend reports are counted here, on the rows' true classes and
weights (``TreeSearch.confusion``), from the engine's tree (``anytime``'s format).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from odt.compiler.search import TreeSearch
from odt.compiler.search_confusion import weight_sum


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


def true_errors(raw: tuple, problem: TreeSearch) -> Fraction:
    """The weighted errors of ``raw`` on the rows' true classes and weights."""
    assert problem.confusion is not None
    wrong = predict(raw, problem.X) != problem.confusion.y
    return weight_sum(problem.confusion.weights[wrong])
