"""What dp's search IR says of a confusion objective (issue 26): the part of a
``TreeSearch`` that a cost matrix, balanced accuracy or F1 adds.

Two classes (and any matrix whose every row costs one amount for every wrong label) are
misclassification with class-dependent row weights: the lowering (``lower_confusion``)
reweights and relabels the rows, the engines see plain misclassification, and only
``y`` / ``weights`` here keep the rows' true classes and weights, for the training errors
the backend reports. Other matrices keep ``matrix`` (the generic task,
``backends/dp/task.CostMatrix``); ``f1`` sends the search to the Pareto fronts of (fp, fn)
scored at the root.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np


@dataclass(frozen=True)
class Confusion:
    """The confusion objective of a search (see the module)."""

    y: np.ndarray = field(compare=False)  # the rows' true classes
    weights: np.ndarray = field(compare=False)  # the rows' true weights
    #: the generic task's leaf cost: min over labels k of sum_a W_a * matrix[a][k] (None: reweighted)
    matrix: tuple[tuple[Fraction, ...], ...] | None = None
    f1: bool = False  # maximize F1 of the positive class (index 1)
    note: str = ""
