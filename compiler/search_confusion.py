"""What dp's search IR says of a confusion objective (issue 26): the part of a
``TreeSearch`` that a cost matrix, balanced accuracy or F1 adds.

Two classes (and any matrix whose every row costs one amount for every wrong label) are
misclassification with class-dependent row weights: the lowering (``lower_confusion``)
reweights and relabels the rows, the engines see plain misclassification, and only
``y`` / ``weights`` here keep the rows' true classes and weights, for the training errors
the backend reports. Other matrices keep ``matrix`` (the generic task,
``backends/dp/task.CostMatrix``); ``f1`` sends the search to Dinkelbach's steps
(``backends/dp/f1.py``), each a search ``with_weights`` builds (or, as a cross-check, to the
Pareto fronts of (fp, fn) scored at the root).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:
    from .search import TreeSearch

#: the largest integer a scaled row weight times the rows may reach (float sums stay exact)
_EXACT = 2 ** 50


@dataclass(frozen=True)
class Confusion:
    """The confusion objective of a search (see the module)."""

    y: np.ndarray = field(compare=False)  # the rows' true classes
    weights: np.ndarray = field(compare=False)  # the rows' true weights
    #: the generic task's leaf cost: min over labels k of sum_a W_a * matrix[a][k] (None: reweighted)
    matrix: tuple[tuple[Fraction, ...], ...] | None = None
    f1: bool = False  # maximize F1 of the positive class
    positive: int = 1  # its index (``f1(c)``)
    note: str = ""


def fractions(w: np.ndarray) -> tuple[np.ndarray, list[Fraction]]:
    """Each weight's index into its distinct values, and those values as the fractions
    they stand for (one value, the common case of unweighted rows, without sorting)."""
    w = np.asarray(w).reshape(-1)
    if w.size and bool((w == w[0]).all()):
        return np.zeros(w.size, dtype=np.intp), [Fraction(float(w[0])).limit_denominator(10**9)]
    uniq, inverse = np.unique(w, return_inverse=True)
    return inverse.reshape(-1), [Fraction(float(x)).limit_denominator(10**9) for x in uniq]


def weight_sum(w: np.ndarray) -> Fraction:
    """The exact sum of weights ``w`` (each the fraction it stands for)."""
    inverse, wf = fractions(w)
    if not inverse.size:
        return Fraction(0)
    counts = np.bincount(inverse, minlength=len(wf)).tolist()
    return sum((f * k for f, k in zip(wf, counts) if k), Fraction(0))


def reweigh(search: "TreeSearch", amounts: Sequence[Fraction], labels: Sequence[int], y: np.ndarray,
            w: np.ndarray) -> tuple[np.ndarray, np.ndarray, Fraction]:
    """The rows of ``search`` (true classes ``y``, weights ``w``) as misclassification rows:
    class ``a`` relabelled ``labels[a]`` and weighted ``w * amounts[a]`` (each > 0 where
    the class has rows), scaled to integers when they fit. Returns (classes, weights,
    factor): ``factor`` times their weighted errors is ``sum w * amounts[a] * [wrong]``."""
    K = search.n_classes
    inverse, wf = fractions(w)
    present = np.bincount(y.astype(np.int64) * len(wf) + inverse, minlength=K * len(wf)).reshape(K, len(wf)) > 0
    per = {(a, i): wf[i] * amounts[a] for a in range(K) for i in np.flatnonzero(present[a]).tolist()}
    scale = 1
    for v in per.values():
        scale = scale * v.denominator // math.gcd(scale, v.denominator)
    top = max(per.values(), default=Fraction(1))
    code = y.astype(np.int64) * len(wf) + inverse
    if top * scale * max(len(y), 1) < _EXACT:
        values = {a * len(wf) + i: float(v * scale) for (a, i), v in per.items()}
        factor = Fraction(1, scale)
    else:  # too many digits: float weights (the objective then as exact as their sums)
        values = {a * len(wf) + i: float(v) for (a, i), v in per.items()}
        factor = Fraction(1)
    keys = np.array(sorted(values), dtype=np.int64)
    new_w = np.array([values[int(k)] for k in keys])[np.searchsorted(keys, code)]
    return np.array(labels, dtype=y.dtype)[y], new_w, factor


def with_weights(search: "TreeSearch", amounts: Sequence[Fraction], note: str) -> "TreeSearch":
    """``search`` (two classes, its rows' true classes and weights in ``confusion``) as
    the misclassification of rows of class ``a`` weighted ``w * amounts[a]``: one level,
    the weighted errors themselves (F1's Dinkelbach steps, ``backends/dp/f1.py``)."""
    from .search import Level

    assert search.confusion is not None
    y, w = search.confusion.y, search.confusion.weights
    new_y, new_w, factor = reweigh(search, amounts, range(search.n_classes), y, w)
    return dataclasses.replace(search, y=new_y, weights=new_w, levels=(Level(errors=factor),),
                               confusion=Confusion(y, w, note=note))
