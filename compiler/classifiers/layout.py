"""A classifier as numbered nodes: what the tree API, the pictures and the exports read.

Input: a ``Tree`` or a ``Diagram`` (through their ``layout()``), and optionally a binarised
matrix with the class index and weight of each row. Output: a ``Layout`` — for every node
its test (a feature index), its yes and no successors, or, at a terminal, its class — and,
from rows, where each row ends (``apply``), the nodes it passes (``path``), the class
weights of the rows at every node (``class_weights``) and the weighted Gini decrease of
every test (``impurity_decrease``).

Numbering (the ids ``ODTClassifier.apply`` returns):

* a tree: pre-order, the yes child (the test holds: ``x <= t``, ``x == c``) before the no
  child, leaves included — scikit-learn's ``tree_`` numbering, whose left child is the
  one where ``x <= threshold`` holds;
* a diagram or BDD: its reachable decision nodes in topological order (0..n-1), then one
  terminal per arc into a class (n, n+1, ...), in the order of their nodes, the yes arc
  first; a diagram that is one class is the single terminal 0.

Invariants: node 0 is the root; every successor's id is larger than its node's (so one
pass in id order routes every row); a terminal has exactly one parent arc; nothing here
imports a classifier (the classifiers build their own layout).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Layout:
    """The numbered nodes of a classifier (see the module docstring)."""

    feature: np.ndarray  # int64 per node: the tested feature (index into clf.features); -1 at a terminal
    yes: np.ndarray  # int64: the successor of a row whose test holds; -1 at a terminal
    no: np.ndarray  # int64: the successor of a row whose test fails; -1 at a terminal
    label: np.ndarray  # int64: the class index of a terminal; -1 at a decision node
    layer: np.ndarray  # int64: the depth (tree) or layer (diagram) of a decision node; a tree leaf's depth, -1 for a diagram's terminal
    shared_classes: bool = False  # a diagram: its terminals of one class are drawn as one class box

    @property
    def n_nodes(self) -> int:
        return int(self.feature.shape[0])

    @property
    def terminals(self) -> np.ndarray:
        """The ids of the terminals (leaves), ascending."""
        return np.flatnonzero(self.feature < 0)

    def apply(self, Xb: np.ndarray) -> np.ndarray:
        """The terminal id each row of the binarised matrix ends at."""
        at = np.zeros(Xb.shape[0], dtype=np.int64)
        for i in np.flatnonzero(self.feature >= 0):  # ascending: every row's node is processed before its successors
            here = at == i
            if here.any():
                go = Xb[here, self.feature[i]]
                at[here] = np.where(go, self.yes[i], self.no[i])
        return at

    def path(self, Xb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The nodes each row passes, root and terminal included: (row index, node id)
        pairs, in row order and, within a row, root first (a CSR matrix's entries)."""
        at = np.zeros(Xb.shape[0], dtype=np.int64)
        rows: list[np.ndarray] = []
        nodes: list[np.ndarray] = []
        for i in range(self.n_nodes):
            here = np.flatnonzero(at == i)
            if not here.size:
                continue
            rows.append(here)
            nodes.append(np.full(here.size, i, dtype=np.int64))
            if self.feature[i] >= 0:
                at[here] = np.where(Xb[here, self.feature[i]], self.yes[i], self.no[i])
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        r, n = np.concatenate(rows), np.concatenate(nodes)
        order = np.lexsort((n, r))  # by row, then by node id (ids grow along every path)
        return r[order], n[order]

    def class_weights(self, Xb: np.ndarray, y: np.ndarray, weights: np.ndarray | None,
                      n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        """(nodes x classes) the class weights of the rows at every node, and (nodes x
        classes) of the rows that take each decision node's yes arc (0 at a terminal).
        Rows whose class is -1 (a label the classifier does not know) count nowhere."""
        w = np.ones(Xb.shape[0]) if weights is None else np.asarray(weights, dtype=float)
        at = np.zeros(Xb.shape[0], dtype=np.int64)
        here_w = np.zeros((self.n_nodes, n_classes))
        yes_w = np.zeros((self.n_nodes, n_classes))
        known = y >= 0
        for i in range(self.n_nodes):
            here = np.flatnonzero(at == i)
            if not here.size:
                continue
            k = here[known[here]]
            here_w[i] = np.bincount(y[k], weights=w[k], minlength=n_classes)[:n_classes]
            if self.feature[i] >= 0:
                go = Xb[here, self.feature[i]]
                g = here[go & known[here]]
                yes_w[i] = np.bincount(y[g], weights=w[g], minlength=n_classes)[:n_classes]
                at[here] = np.where(go, self.yes[i], self.no[i])
        return here_w, yes_w

    def row_counts(self, Xb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The number of rows at every node, and of those that take each yes arc."""
        at = np.zeros(Xb.shape[0], dtype=np.int64)
        here_n = np.zeros(self.n_nodes, dtype=np.int64)
        yes_n = np.zeros(self.n_nodes, dtype=np.int64)
        for i in range(self.n_nodes):
            here = np.flatnonzero(at == i)
            here_n[i] = here.size
            if here.size and self.feature[i] >= 0:
                go = Xb[here, self.feature[i]]
                yes_n[i] = int(go.sum())
                at[here] = np.where(go, self.yes[i], self.no[i])
        return here_n, yes_n


def gini(weights: np.ndarray) -> np.ndarray:
    """Gini impurity of each row of class weights (0 for a row of zeros).

    >>> gini(np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 0.0]])).tolist()
    [0.5, 0.0, 0.0]
    """
    total = weights.sum(axis=-1, keepdims=True)
    p = np.divide(weights, total, out=np.zeros_like(weights, dtype=float), where=total > 0)
    return np.where(total[..., 0] > 0, 1.0 - (p * p).sum(axis=-1), 0.0)


def impurity_decrease(layout: Layout, here_w: np.ndarray, yes_w: np.ndarray) -> np.ndarray:
    """Per node, the weighted Gini decrease of its test (scikit-learn's
    ``feature_importances_`` summand): ``N_t * gini(t) - N_yes * gini(yes) - N_no * gini(no)``
    with the rows at the node and the rows of each of its arcs (in a diagram a successor
    may be shared, so its arcs, not its own rows, count); 0 at a terminal."""
    no_w = here_w - yes_w
    out = (here_w.sum(axis=1) * gini(here_w) - yes_w.sum(axis=1) * gini(yes_w) - no_w.sum(axis=1) * gini(no_w))
    out[layout.feature < 0] = 0.0
    return np.maximum(out, 0.0)  # rounding only: a split never raises the weighted Gini
