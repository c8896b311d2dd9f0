"""F1 on the Pareto-front engine (issue 26; STreeD's F1-score task, van der Linden, de
Weerdt & Demirović, NeurIPS 2023, Sec. 5: a subproblem's value is its front of (fp, fn),
scored at the root).

F1 of the positive class (index 1) is ``2tp / (2tp + fp + fn)`` with ``tp = P - fn`` (P the
positive weight): decreasing in fp and in fn, so the best tree has a vector on the
front of (fp, fn), and the front engine (``pareto.py``) keeps exactly that front when
its objective components are fp and fn (``rows``). At the root ``best`` scores every
feasible vector exactly (integers: the scaled weights) and returns the largest F1; the
engine's objective value is ``-F1`` (``maximize`` is minimised negated).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

POSITIVE = 1


def rows(type_keys: list, C: int, zero_cost: list, positive: int = POSITIVE) -> list[tuple]:
    """The two objective components, fp and fn, per unit weight of a row type and a
    predicted class (the front engine's row format)."""
    T = len(type_keys)
    fp = np.zeros((T, C), dtype=object)
    fn = np.zeros((T, C), dtype=object)
    for t, (y, _) in enumerate(type_keys):
        for c in range(C):
            fp[t, c] = Fraction(int(c == positive and y != positive))
            fn[t, c] = Fraction(int(c != positive and y == positive))
    return [("min", fp, Fraction(0), zero_cost, Fraction(0), Fraction(0)),
            ("min", fn, Fraction(0), zero_cost, Fraction(0), Fraction(0))]


def score(final: np.ndarray, positive: int) -> list[Fraction]:
    """F1 of each root vector (columns 0, 1: the scaled fp and fn; ``positive``: the scaled
    positive weight); 0 when no positive row is found."""
    out = []
    for fp, fn in final[:, :2].tolist():
        tp = positive - fn
        out.append(Fraction(0) if tp <= 0 else Fraction(2 * tp, 2 * tp + fp + fn))
    return out


def best(idx: np.ndarray, final: np.ndarray, positive: int) -> tuple[Fraction, int]:
    """(the largest F1, the entry of ``idx`` having it; the fewest errors among ties)."""
    scores = score(final[idx], positive)
    top = max(scores)
    ties = [i for i, s in enumerate(scores) if s == top]
    i = min(ties, key=lambda k: int(final[idx[k], 0]) + int(final[idx[k], 1]))
    return top, int(idx[i])


def bound(V: np.ndarray, positive: int, incumbent: Fraction | None) -> np.ndarray:
    """Which vectors of a subproblem may still beat the incumbent F1: the rest of the tree
    adds at least 0 to fp and fn, so a vector's F1 is at most ``2(P - fn) / (2(P - fn) + fp
    + fn)`` (STreeD's bound test for F1); all of them without an incumbent."""
    if incumbent is None or not V.shape[0]:
        return np.ones(V.shape[0], dtype=bool)
    fp = V[:, 0].astype(object)
    fn = V[:, 1].astype(object)
    tp = positive - fn
    # F1 > incumbent  <=>  2tp * den(inc) > num(inc) * (2tp + fp + fn)   (all integers)
    num, den = incumbent.numerator, incumbent.denominator
    return np.asarray(2 * tp * den > num * (2 * tp + fp + fn), dtype=bool) | (incumbent == 0)
