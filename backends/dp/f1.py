"""``maximize f1`` on dp by Dinkelbach's parametric search (issue 26).

F1 of the positive class (index 1, or the class ``f1(c)`` names) is ``N / D`` with ``N = 2tp = 2(P - fn)`` and
``D = 2tp + fp + fn = 2P - fn + fp`` (P: the positive weight; ``D >= P > 0``). For a value
``lam``, ``max_T N - lam * D = (2 - 2 lam) P - min_T (lam * fp + (2 - lam) * fn)``: a
cost-sensitive tree, i.e. misclassification with class weights ``lam`` (negatives) and
``2 - lam`` (positives), which the engines solve exactly on their compiled kernels
(ConTree on raw thresholds, the STreeD-style engine on 0/1 columns) with every side
constraint that does not read the classes. Dinkelbach (Management Science 13(7), 1967):
start from ``lam`` = the F1 of a tree, solve, and take the F1 of the new tree; the F1 rises
strictly until the optimum of the weighted problem is 0 at ``lam``, which proves ``lam``
optimal, or until the best F1 reaches the bound a step proves (below): an F1 of 1 needs no
confirming step. Exact: ``lam`` is a fraction, the weights integers.

Anytime: each step's tree is an incumbent; when a step is stopped, its proven lower bound
``c`` on the weighted cost bounds every tree's F1 by ``lam + ((2 - 2 lam) P - c) / P``.
The alternative, STreeD's (fp, fn) Pareto fronts scored at the root, is
``streed/f1.py`` on the front engine (``optimal_front_tree``), kept as an independent check.
"""
from __future__ import annotations

import time
from fractions import Fraction
from typing import Callable

from odt.compiler.search import TreeSearch
from odt.compiler.search_confusion import confusion_counts, integral, weight_sum, with_weights

from .anytime import EngineResult
from .confusion import predict


def _counts(raw: tuple, problem: TreeSearch, whole: bool) -> tuple[Fraction | int, Fraction | int, Fraction | int]:
    """(tp, fp, fn) of an engine tree on the true rows; ``whole``: the weights are
    ``integral`` (``confusion_counts``)."""
    assert problem.confusion is not None
    c = problem.confusion
    return confusion_counts(predict(raw, problem.X) == c.positive, c.y == c.positive, c.weights, whole)


def _f1(tp: Fraction | int, fp: Fraction | int, fn: Fraction | int) -> Fraction:
    return Fraction(0) if tp == 0 else Fraction(2 * tp, 2 * tp + fp + fn)


def dinkelbach(problem: TreeSearch, time_limit: float | None,
               solve: Callable[[TreeSearch, float | None], EngineResult],
               report: Callable[..., None] | None = None) -> EngineResult:
    """The tree of largest F1 (see the module); ``solve(search, time_limit)`` is the engine
    for one weighted step. The result's level and bound are ``-F1`` (minimised)."""
    assert problem.confusion is not None
    start = time.perf_counter()
    y, w = problem.confusion.y, problem.confusion.weights
    pos = problem.confusion.positive
    ints = integral(w)
    P = weight_sum(w[y == pos], ints)
    leaf: tuple = ("leaf", pos)
    # every row predicted positive (F1 > 0 when P > 0): tp = P, fp = the other rows, fn = 0
    counts: tuple[Fraction | int, Fraction | int, Fraction | int] = (P, weight_sum(w, ints) - P, 0)
    best_tree, best = leaf, _f1(*counts)
    bound = Fraction(1)
    steps = 0
    status = "optimal"
    last: EngineResult | None = None
    while P > 0:
        left = None if time_limit is None else time_limit - (time.perf_counter() - start)
        if left is not None and left <= 0:
            status = "feasible"
            break
        lam = best
        # [class 0, class 1]: fp x lam, fn x (2 - lam), as the whole amounts p and 2q - p (lam = p / q)
        # in units of 1 / q: the reweighing stays in integers
        p, q = lam.numerator, lam.denominator
        amounts = [p, 2 * q - p] if pos == 1 else [2 * q - p, p]
        step = with_weights(problem, amounts, f"F1 step {steps + 1}: fp x {lam}, fn x {2 - lam}", Fraction(1, q), ints)
        res = solve(step, left)
        steps += 1
        last = res
        if res.tree is None:  # stopped before any tree: the last bound stands
            status = "feasible"
            break
        step_counts = _counts(res.tree, problem, ints)
        f1 = _f1(*step_counts)
        if res.status == "optimal":
            # max_T N - lam D = (2 - 2 lam) P - cost*, and F1(T) <= lam + that / D(T) <= lam + that / P
            gain = (2 - 2 * lam) * P - Fraction(res.levels[0])
            bound = min(bound, lam + max(gain, Fraction(0)) / P)
        elif res.lower_bound is not None:
            gain = (2 - 2 * lam) * P - Fraction(res.lower_bound)
            bound = min(bound, lam + max(gain, Fraction(0)) / P)
        if f1 > best:
            best_tree, best, counts = res.tree, f1, step_counts
            if report is not None:
                report(time.perf_counter() - start, -best, -bound)
        if best >= bound:  # proven without a confirming step (an F1 of 1, or the step's bound met)
            break
        if res.status != "optimal":
            status = "feasible"
            break
        if f1 <= lam:  # the weighted optimum is 0 at lam: lam is the largest F1
            bound = best
            break
    if P == 0:
        bound = Fraction(0)
    if status == "optimal":
        bound = best
    errors = Fraction(counts[1] + counts[2])  # fp + fn of the best tree: its training errors (two classes)
    stats = {"dinkelbach_steps": steps, "last": last.stats if last is not None else {}}
    return EngineResult(best_tree, errors, _size(best_tree), (-best,), -bound, status, stats)


def _size(tree: tuple) -> int:
    return 0 if tree[0] == "leaf" else _size(tree[3]) + _size(tree[4]) + 1
