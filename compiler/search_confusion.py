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


def integral(w: np.ndarray) -> bool:
    """Every weight a non-negative integer and their sum below ``_EXACT``: float sums of
    them (and of their integer multiples that stay below it) are exact integers."""
    if not w.size:
        return True
    return float(w.min()) >= 0 and float(w.sum()) < _EXACT and bool((w == np.floor(w)).all())


def weight_sum(w: np.ndarray, whole: bool | None = None) -> Fraction:
    """The exact sum of weights ``w`` (each the fraction it stands for); ``whole``: whether
    they are ``integral`` (None: found here).

    >>> weight_sum(np.array([1.0, 2.0, 2.0])), weight_sum(np.array([0.5, 0.25]))
    (Fraction(5, 1), Fraction(3, 4))
    """
    w = np.asarray(w).reshape(-1)
    if integral(w) if whole is None else whole:  # the common case: one float sum, exact
        return Fraction(int(w.sum()))
    inverse, wf = fractions(w)
    if not inverse.size:
        return Fraction(0)
    counts = np.bincount(inverse, minlength=len(wf)).tolist()
    return sum((f * k for f, k in zip(wf, counts) if k), Fraction(0))


def confusion_counts(predicted: np.ndarray, actual: np.ndarray, w: np.ndarray,
                     whole: bool | None = None) -> tuple[Fraction | int, Fraction | int, Fraction | int]:
    """(tp, fp, fn): the exact weight of the rows ``predicted`` and ``actual`` positive, of
    those predicted only, and of those actual only (boolean arrays). ``whole``: whether
    the weights are ``integral`` (None: found here); whole weights are counted in one
    weighted pass, their float sums exact, and returned as ints.

    >>> confusion_counts(np.array([1, 1, 0]) == 1, np.array([1, 0, 1]) == 1, np.array([2.0, 1.0, 0.5]))
    (Fraction(2, 1), Fraction(1, 1), Fraction(1, 2))
    >>> confusion_counts(np.array([1, 1, 0]) == 1, np.array([1, 0, 1]) == 1, np.array([2.0, 1.0, 3.0]))
    (2, 1, 3)
    """
    if integral(w) if whole is None else whole:
        cells = np.bincount(2 * predicted.astype(np.int64) + actual, weights=w, minlength=4).tolist()
        return int(cells[3]), int(cells[2]), int(cells[1])
    return (weight_sum(w[predicted & actual], False), weight_sum(w[predicted & ~actual], False),
            weight_sum(w[~predicted & actual], False))


def reweigh(search: "TreeSearch", amounts: Sequence[Fraction | int], labels: Sequence[int], y: np.ndarray,
            w: np.ndarray, whole: bool | None = None) -> tuple[np.ndarray, np.ndarray, Fraction]:
    """The rows of ``search`` (true classes ``y``, weights ``w``) as misclassification rows:
    class ``a`` relabelled ``labels[a]`` and weighted ``w * amounts[a]`` (each > 0 where
    the class has rows), scaled to integers when they fit. Returns (classes, weights,
    factor): ``factor`` times their weighted errors is ``sum w * amounts[a] * [wrong]``.
    ``whole``: whether ``w`` is ``integral`` (None: found here)."""
    K = search.n_classes
    if integral(w) if whole is None else whole:
        fast = _reweigh_integral(K, amounts, labels, y, w)
        if fast is not None:
            return fast
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


def class_sums(y: np.ndarray, w: np.ndarray, K: int, whole: bool | None = None) -> list[Fraction | int]:
    """The exact weight of each class 0..K-1 (rows of classes ``y``, weights ``w``): ints
    when the weights are ``integral`` (``whole``; None: found here), else fractions.

    >>> class_sums(np.array([0, 1, 1]), np.array([1.0, 2.0, 0.5]), 3)
    [Fraction(1, 1), Fraction(5, 2), Fraction(0, 1)]
    """
    y = np.asarray(y, dtype=np.int64)
    if integral(w) if whole is None else whole:
        return [int(v) for v in np.bincount(y, weights=w, minlength=K).tolist()]
    inverse, wf = fractions(w)
    table = np.bincount(y * len(wf) + inverse, minlength=K * len(wf)).reshape(K, len(wf))
    return [sum((wf[i] * k for i, k in enumerate(row) if k), Fraction(0)) for row in table.tolist()]


def _reweigh_integral(K: int, amounts: Sequence[Fraction | int], labels: Sequence[int], y: np.ndarray,
                      w: np.ndarray) -> tuple[np.ndarray, np.ndarray, Fraction] | None:
    """``reweigh`` for integral weights ``w``, without a pass over their distinct values:
    the same scale, the least integer making every ``w_i * amounts[a]`` integral, is
    ``lcm_a q_a / gcd(q_a, g_a)`` (``amounts[a] = p_a / q_a``, ``g_a`` the gcd of class
    ``a``'s weights), and each new weight ``(w_i / d_a) * n_a`` with ``amounts[a] * scale
    = n_a / d_a`` (``d_a`` divides ``g_a``) is computed in integers. None where the
    scaled weights would not stay exact (``reweigh``'s float weights then)."""
    yi = np.asarray(y, dtype=np.int64)
    uniform = bool(w.size) and w.min() == w.max()
    if uniform:  # one weight w0 for every row (the common case): no pass per class
        present = np.bincount(yi, minlength=K)[:K] > 0
        gcds = [int(w[0]) if present[a] else 0 for a in range(K)]
        tops = gcds
    else:
        wi = w.astype(np.int64)
        gcds, tops = [], []
        for a in range(K):
            sel = wi[yi == a]
            sel = sel[sel > 0]
            gcds.append(int(np.gcd.reduce(sel)) if sel.size else 0)
            tops.append(int(sel.max()) if sel.size else 0)
    scale = 1
    mults: list[Fraction | int] = []  # whole amounts stay ints (exact, and without Fraction's overhead)
    for a in range(K):
        amount = amounts[a] if a < len(amounts) and tops[a] else 0
        q = amount.denominator
        need = q // math.gcd(q, gcds[a])
        scale = scale * need // math.gcd(scale, need)
        mults.append(amount)
    top = max((m * t for m, t in zip(mults, tops)), default=0)
    if top * scale * max(len(y), 1) >= _EXACT:
        return None
    scaled = [m * scale for m in mults]  # n_a / d_a
    num = np.array([m.numerator for m in scaled], dtype=np.int64)
    den = np.array([m.denominator for m in scaled], dtype=np.int64)
    new_w = ((int(w[0]) // den) * num)[yi] if uniform else (wi // den[yi]) * num[yi]
    return np.array(labels, dtype=y.dtype)[y], new_w.astype(np.float64), Fraction(1, scale)


def with_weights(search: "TreeSearch", amounts: Sequence[Fraction | int], note: str,
                 unit: Fraction = Fraction(1), whole: bool | None = None) -> "TreeSearch":
    """``search`` (two classes, its rows' true classes and weights in ``confusion``) as
    the misclassification of rows of class ``a`` weighted ``w * amounts[a] * unit``: one
    level, the weighted errors themselves (F1's Dinkelbach steps, ``backends/dp/f1.py``,
    give whole ``amounts`` and their common denominator as ``unit``; ``whole``: whether the
    rows' weights are ``integral``, None: found here)."""
    from .search import Level

    assert search.confusion is not None
    y, w = search.confusion.y, search.confusion.weights
    new_y, new_w, factor = reweigh(search, amounts, range(search.n_classes), y, w, whole)
    return dataclasses.replace(search, y=new_y, weights=new_w, levels=(Level(errors=factor * unit),),
                               confusion=Confusion(y, w, note=note))
