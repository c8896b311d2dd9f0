"""Public result types of the ConTree search and helpers on trees: evaluation, depth, and
the final threshold refinement (Eq. 1 midpoints among the rows reaching each node)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

# --------------------------------------------------------------------------- public types


@dataclass(frozen=True, slots=True)
class DPLeaf:
    """A leaf predicting class ``label``."""

    label: int


@dataclass(frozen=True, slots=True)
class DPSplit:
    """A branching node: a row goes LEFT iff ``x[feature] <= threshold``."""

    feature: int
    threshold: float
    left: "DPNode"
    right: "DPNode"


DPNode = DPLeaf | DPSplit


@dataclass(frozen=True, slots=True, eq=False)
class _LazyD2(DPLeaf):
    """Placeholder for an optimal depth-two subtree of the rows ``rows``, whose root splits
    after position ``z`` of feature ``f1``'s order (at ``threshold``); built by
    :meth:`_Solver.materialise` only if it ends up in the returned tree. Never leaves the
    search (``optimal_tree`` materialises before returning)."""

    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    f1: int = -1
    z: int = -1
    threshold: float = 0.0


@dataclass(frozen=True, slots=True)
class PruningRules:
    """Switches for the three pruning rules of Alg. 1 (all sound; off only for testing)."""

    neighbourhood: bool = True
    interval_shrinking: bool = True
    sub_interval: bool = True


@dataclass(frozen=True, slots=True)
class DPResult:
    """Outcome of :func:`optimal_tree`.

    ``cost`` is the weighted misclassification of ``tree`` on the training data,
    ``lower_bound`` a proven lower bound on the optimum; ``status`` is ``"optimal"`` when
    they coincide (search finished, ``max_gap == 0``) and ``"feasible"`` otherwise
    (time limit hit -- ``stats["timed_out"]`` -- or a positive ``max_gap``).
    """

    tree: DPNode
    cost: float
    lower_bound: float
    status: str
    seconds: float
    stats: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- helpers


def predict(tree: DPNode, X: np.ndarray) -> np.ndarray:
    """Class predicted by ``tree`` for every row of ``X`` (vectorised per node)."""
    X = np.asarray(X, dtype=np.float64)
    out = np.empty(X.shape[0], dtype=np.int64)

    def walk(node: DPNode, idx: np.ndarray) -> None:
        if isinstance(node, DPLeaf):
            out[idx] = node.label
            return
        go_left = X[idx, node.feature] <= node.threshold
        walk(node.left, idx[go_left])
        walk(node.right, idx[~go_left])

    walk(tree, np.arange(X.shape[0]))
    return out


def errors(tree: DPNode, X: np.ndarray, y: np.ndarray, weights: Optional[np.ndarray] = None) -> float:
    """Weighted number of rows of ``(X, y)`` that ``tree`` misclassifies."""
    wrong = predict(tree, X) != np.asarray(y)
    if weights is None:
        return float(np.count_nonzero(wrong))
    return float(np.asarray(weights, dtype=np.float64)[wrong].sum())


def tree_depth(tree: DPNode) -> int:
    """Number of branching levels of ``tree`` (a single leaf has depth 0)."""
    if isinstance(tree, DPLeaf):
        return 0
    return 1 + max(tree_depth(tree.left), tree_depth(tree.right))


def _refine(tree: DPNode, X: np.ndarray, rows: np.ndarray) -> DPNode:
    """Put every threshold at the midpoint between the two closest values of its feature
    among the training rows reaching that node (Eq. 1), and drop splits that send all of
    them one way (predictions on the training data are unchanged)."""
    if isinstance(tree, DPLeaf):
        return tree
    v = X[rows, tree.feature]
    go = v <= tree.threshold
    k = int(np.count_nonzero(go))
    if k == v.shape[0]:
        return _refine(tree.left, X, rows)
    if k == 0:
        return _refine(tree.right, X, rows)
    back = ~go
    a = float(v[go].max())
    b = float(v[back].min())
    t = (a + b) / 2.0
    if not a <= t < b:
        t = a
    return DPSplit(tree.feature, t, _refine(tree.left, X, rows[go]), _refine(tree.right, X, rows[back]))
