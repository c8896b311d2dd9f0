"""The task contract of the dp engines: what a tree optimises, told to every engine the same
way (STreeD's optimisation tasks, van der Linden et al., NeurIPS 2023, Sec. 4.1; the
``Criterion`` of scikit-learn's trees).

A task gives
* per-row **additive statistics** (``statistics``: an (n, s) array whose sums over a set of
  rows say all the task needs of it: the weight of each class for classification);
* the **cost and label of a leaf** from the summed statistics of its rows (``leaf`` for one
  set, ``costs`` / ``labels`` for many at once, the first axis the sets), with its compiled
  twin for the numba kernels (``kernels.leaf_cost``: the same formula, one definition per
  task);
* a **lower bound** on the cost of any tree over a set of rows (``lower_bound``);
* the **cost of a decision node** (``node_cost``: cost complexity; 0 without it) and
  whether a solution is one value or a **Pareto front** scored at the root (``front``);
* the **largest cost a leaf may have** (``max_leaf``: ``every leaf: errors <= e``; a leaf
  above it is infeasible, and the compiled kernels, which do not know it, are bypassed).

The engines read a tree's value as the sum of its leaves' costs plus ``node_cost`` per
decision node. ``Misclassification`` (MurTree, Demirović et al., JMLR 2022, Eq. 4: a leaf
costs its weight less its majority class's) is the task of every classification program;
a ``front`` task is the Pareto-front search of global constraints (``streed/pareto``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Task:
    """The contract (see the module); subclasses give the statistics and the leaf."""

    node_cost: float = 0.0
    front: bool = False
    #: a leaf costing more is infeasible (C11: every leaf: errors <= e); inf: no bound
    max_leaf: float = math.inf
    #: moving a row into or out of a set changes the least cost of a tree by at most the
    #: row's weight (the similarity bound of MurTree Sec. 4.6 and ConTree's Eq. 3)
    similarity: bool = False

    #: the code of the compiled leaf cost (``kernels.leaf_cost``); -1: no compiled twin
    KERNEL = -1

    @property
    def width(self) -> int:
        """The number of statistics per row (s)."""
        raise NotImplementedError

    def statistics(self, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        """(n, s): the statistics of rows with targets ``y`` and weights ``w``."""
        raise NotImplementedError

    def totals(self, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        """(s,): their sum, without the (n, s) matrix where the task can."""
        return self.statistics(y, w).sum(axis=0)

    def costs(self, totals: np.ndarray) -> np.ndarray:
        """The leaf cost of each row of summed statistics (k, s) -> (k,)."""
        raise NotImplementedError

    def labels(self, totals: np.ndarray) -> np.ndarray:
        """The leaf label of each row of summed statistics (k, s) -> (k,)."""
        raise NotImplementedError

    def leaf(self, total: np.ndarray) -> tuple[float, int]:
        """(cost, label) of one leaf holding rows whose statistics sum to ``total`` (s,)."""
        t = total[None, :]
        return float(self.costs(t)[0]), int(self.labels(t)[0])

    def leaf_cost_of(self, total: np.ndarray, label: int) -> float:
        """The cost of a leaf predicting ``label`` (not necessarily its best) over ``total``."""
        raise NotImplementedError

    def lower_bound(self, total: np.ndarray) -> float:
        """A lower bound on the cost of any tree over rows summing to ``total``."""
        return 0.0


def _histogram_rows(task: Task, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(n, width): each row's weight in the column of its target index ``y`` (misclassification's
    class weights, absolute error's histogram of target values)."""
    W = np.zeros((len(y), task.width))
    W[np.arange(len(y)), y] = w
    return W


def _histogram(task: Task, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(width,): :func:`_histogram_rows` summed, without the matrix."""
    return np.bincount(y, weights=w, minlength=task.width).astype(np.float64)


@dataclass(frozen=True)
class Misclassification(Task):
    """Weighted misclassification: the statistics are each row's weight in its class's
    column; a leaf predicts its heaviest class (the lowest index on ties) and costs the
    rest of its weight."""

    n_classes: int = 2
    similarity: bool = True
    KERNEL = 0

    @property
    def width(self) -> int:
        return self.n_classes

    statistics = _histogram_rows
    totals = _histogram

    def costs(self, totals: np.ndarray) -> np.ndarray:
        return totals.sum(axis=-1) - totals.max(axis=-1)

    def labels(self, totals: np.ndarray) -> np.ndarray:
        return totals.argmax(axis=-1)

    def leaf_cost_of(self, total: np.ndarray, label: int) -> float:
        return float(total.sum() - total[label])

    def leaf(self, total: np.ndarray) -> tuple[float, int]:
        """``Task.leaf`` on a list for a few classes (a leaf is read often while decoding;
        numpy's reductions on a few numbers cost more than the arithmetic): the same sum in
        the same order as numpy's below eight terms, the first largest class."""
        if total.shape[0] >= 8:
            return super().leaf(total)
        t = total.tolist()
        best = max(range(len(t)), key=t.__getitem__)
        s = 0.0
        for v in t:
            s += v
        return float(s - t[best]), best


@dataclass(frozen=True)
class SquaredError(Task):
    """Weighted squared error (regression, issue 26; CART's variance criterion, STreeD's
    regression task): the statistics of a row are ``(w, w*v, w*v^2)`` for its target ``v``
    (``values[y]``, less ``shift`` for precision: the error of a set does not change when
    every target moves by the same amount); a leaf predicts the weighted mean and costs
    ``sum w v^2 - (sum w v)^2 / sum w``. ``y`` indexes ``values``, the distinct targets."""

    values: np.ndarray = field(default_factory=lambda: np.zeros(1), compare=False)
    shift: float = 0.0
    #: the compiled depth-two solver of this task on 0/1 columns (``streed/kernels_sq.py``)
    KERNEL_TWO = "squared"

    @property
    def width(self) -> int:
        return 3

    def statistics(self, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        v = self.values[y] - self.shift
        wv = w * v
        return np.stack([w, wv, wv * v], axis=-1)

    def totals(self, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        return self.statistics(y, w).sum(axis=0)

    def costs(self, totals: np.ndarray) -> np.ndarray:
        w, s1, s2 = totals[..., 0], totals[..., 1], totals[..., 2]
        safe = np.where(w > 0, w, 1.0)
        return np.maximum(np.where(w > 0, s2 - s1 * s1 / safe, 0.0), 0.0)

    def stacked_costs(self, t: np.ndarray) -> np.ndarray:
        """``costs`` with the statistics on the first axis (the depth-two solver's layout)."""
        w, s1, s2 = t[0], t[1], t[2]
        return np.maximum(np.where(w > 0, s2 - s1 * s1 / np.where(w > 0, w, 1.0), 0.0), 0.0)

    def labels(self, totals: np.ndarray) -> np.ndarray:
        w = totals[..., 0]
        return np.where(w > 0, totals[..., 1] / np.where(w > 0, w, 1.0), 0.0) + self.shift

    def leaf(self, total: np.ndarray) -> tuple[float, float]:  # type: ignore[override]
        t = total[None, :]
        return float(self.costs(t)[0]), float(self.labels(t)[0])

    def cluster_bounds(self, y: np.ndarray, w: np.ndarray, k: int) -> np.ndarray | None:
        """The least squared error of any tree over these rows with at most 1..k leaves
        (the 1-D k-means bound, ``kmeans_bound``), or None when it is not computed."""
        from .kmeans_bound import cluster_bounds

        return cluster_bounds(y, w, self.values, k)

    def leaf_cost_of(self, total: np.ndarray, label: float) -> float:  # type: ignore[override]
        c = float(label) - self.shift
        return float(total[2] - 2 * c * total[1] + c * c * total[0])


@dataclass(frozen=True)
class AbsoluteError(Task):
    """Weighted absolute error (regression, issue 26; scikit-learn's ``absolute_error``):
    a leaf predicts a weighted median of its targets and costs ``sum w |v - median|``.
    Not a function of a few sums, but exact on fixed statistics all the same: a row's are
    its weight in the column of its target among the distinct ``values`` (a weighted
    histogram, as misclassification's class weights), from which the median and the cost
    of a set are read."""

    values: np.ndarray = field(default_factory=lambda: np.zeros(1), compare=False)

    @property
    def width(self) -> int:
        return int(self.values.shape[0])

    statistics = _histogram_rows  # the same weighted histograms as misclassification's class weights
    totals = _histogram

    def _median(self, totals: np.ndarray) -> np.ndarray:
        """The index of the lower weighted median of each histogram (0 when empty)."""
        cum = np.cumsum(totals, axis=-1)
        half = cum[..., -1:] / 2.0
        return np.argmax(cum >= half - 1e-12 * np.abs(half), axis=-1)

    def costs(self, totals: np.ndarray) -> np.ndarray:
        med = self.values[self._median(totals)]
        return (totals * np.abs(self.values - med[..., None])).sum(axis=-1)

    def labels(self, totals: np.ndarray) -> np.ndarray:
        return self.values[self._median(totals)]

    def leaf(self, total: np.ndarray) -> tuple[float, float]:  # type: ignore[override]
        t = total[None, :]
        return float(self.costs(t)[0]), float(self.labels(t)[0])

    def leaf_cost_of(self, total: np.ndarray, label: float) -> float:  # type: ignore[override]
        return float((total * np.abs(self.values - float(label))).sum())


@dataclass(frozen=True)
class CostMatrix(Misclassification):
    """A misclassification cost matrix (issue 26; STreeD's cost-sensitive task): the
    statistics are each class's weight, and a leaf predicting k costs
    ``sum_a W_a * matrix[a][k]``; it predicts its cheapest label (the lowest index on ties).
    ``matrix`` is row-shifted to >= 0 by the lowering, so 0 is a lower bound. No compiled
    twin, and no similarity bound (moving a row changes a leaf by up to its largest cost)."""

    matrix: tuple[tuple[float, ...], ...] = ()
    similarity: bool = False
    KERNEL = -1
    leaf = Task.leaf  # its costs and labels, not misclassification's

    def costs(self, totals: np.ndarray) -> np.ndarray:
        return (totals @ np.asarray(self.matrix, dtype=np.float64)).min(axis=-1)

    def labels(self, totals: np.ndarray) -> np.ndarray:
        return (totals @ np.asarray(self.matrix, dtype=np.float64)).argmin(axis=-1)

    def leaf_cost_of(self, total: np.ndarray, label: int) -> float:
        return float(total @ np.asarray(self.matrix, dtype=np.float64)[:, label])


def task_of(problem) -> Task:
    """The task of a search problem (``compiler.search.TreeSearch``): misclassification,
    with the node cost of a single objective level ``a * errors + b * nodes`` (b / a), a
    Pareto front for global constraints and the per-leaf error bound (without the
    similarity bound: moving a row may make a leaf infeasible)."""
    levels = problem.levels
    loss = getattr(problem, "loss", "misclassification")
    if loss != "misclassification":
        return regression_task(problem)
    node_cost = float(levels[0].nodes / levels[0].errors) if len(levels) == 1 and levels[0].errors > 0 else 0.0
    cap = problem.max_leaf_errors
    confusion = getattr(problem, "confusion", None)
    if confusion is not None and confusion.matrix is not None:  # issue 26 (no per-leaf bound with it: Ocmx)
        return CostMatrix(node_cost=node_cost, front=bool(problem.fronts), n_classes=problem.n_classes,
                          matrix=tuple(tuple(float(v) for v in row) for row in confusion.matrix))
    return Misclassification(node_cost=node_cost, front=bool(problem.fronts), n_classes=problem.n_classes,
                             max_leaf=math.inf if cap is None else float(cap), similarity=cap is None)


def regression_task(problem) -> Task:
    """The regression task of ``problem`` (``loss`` and ``target``; ``y`` indexes the
    distinct targets), with its node cost and per-leaf bound as for misclassification."""
    levels = problem.levels
    node_cost = float(levels[0].nodes / levels[0].errors) if len(levels) == 1 and levels[0].errors > 0 else 0.0
    cap = problem.max_leaf_errors
    values = np.unique(np.asarray(problem.target, dtype=np.float64))
    front, max_leaf = bool(problem.fronts), math.inf if cap is None else float(cap)
    if problem.loss == "squared_error":
        w = np.asarray(problem.weights, dtype=np.float64)
        shift = float((w * problem.target).sum() / w.sum()) if w.sum() > 0 else 0.0
        return SquaredError(node_cost=node_cost, front=front, max_leaf=max_leaf, values=values, shift=shift)
    if problem.loss == "absolute_error":
        return AbsoluteError(node_cost=node_cost, front=front, max_leaf=max_leaf, values=values)
    raise ValueError(f"internal: no task for the loss {problem.loss!r}")
