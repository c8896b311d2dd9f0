"""A decoded classifier as the constraint families read it when they re-check a result
(E2): rows (of positive weight) per decision node and per leaf, the leaf of each row, each
root-to-leaf path as the column tuples of its tests, and per decision node its columns and
the rows passing it — for trees and diagrams alike, in plain numpy.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ..checked import CheckedProgram

if TYPE_CHECKING:
    from ..classifiers import Tree
    from ..classifiers.diagram import Diagram


@dataclass(frozen=True, slots=True)
class ConstraintCheck:
    """One constraint re-checked: its text and line, its value, the relation and the bound
    as written, and whether it holds."""

    text: str
    line: int
    value: float
    op: str
    bound: float
    holds: bool

    def as_dict(self) -> dict:
        return {"constraint": self.text, "line": self.line, "value": self.value, "op": self.op,
                "bound": self.bound, "holds": self.holds}


@dataclass(frozen=True)
class Shape:
    node_samples: list[int]
    leaf_samples: list[int]
    leaf_of: np.ndarray
    paths: list[list[tuple[str, ...]]]
    node_rows: list[tuple[tuple[str, ...], np.ndarray]]


class ClassifierView:
    """The program's training data pushed through a decoded classifier."""

    def __init__(self, program: CheckedProgram, classifier: "Tree | Diagram", predictions: np.ndarray):
        self.program = program
        self.classifier = classifier
        self.predictions = predictions  # class index per training row

    def column_of(self, name: str) -> str:
        data = self.program.dataset
        if name in data.table.columns:
            return name
        found = data.features.find_name(name)
        return name if found is None else found.column

    @cached_property
    def rows(self) -> np.ndarray:
        """The training rows of positive weight (the rows constraints count)."""
        return np.flatnonzero(self.program.dataset.row_weights() > 0)

    @cached_property
    def shape(self) -> Shape:
        from ..classifiers import Tree
        from ..data import Binarizer

        data = self.program.dataset
        Xb = Binarizer(self.classifier.features).transform(data.table)
        if isinstance(self.classifier, Tree):
            return _tree_shape(self.classifier, Xb, self.rows, data.n_rows)
        return _diagram_shape(self.classifier, Xb, self.rows, data.n_rows)


def _tree_shape(tree: Any, Xb: np.ndarray, rows: np.ndarray, n_rows: int) -> Shape:
    from ..classifiers import Leaf

    nodes: list[int] = []
    leaves: list[int] = []
    paths: list[list[tuple[str, ...]]] = []
    node_rows: list[tuple[tuple[str, ...], np.ndarray]] = []
    leaf_of = np.full(n_rows, -1)

    def go(node: Any, rows: np.ndarray, above: list[tuple[str, ...]]) -> None:
        if isinstance(node, Leaf):
            leaf_of[rows] = len(leaves)
            leaves.append(len(rows))
            paths.append(above)
            return
        nodes.append(len(rows))
        hit = Xb[rows, node.feature]
        cols = tree.features[node.feature].columns
        node_rows.append((cols, rows))
        go(node.if_true, rows[hit], above + [cols])
        go(node.if_false, rows[~hit], above + [cols])

    go(tree.root, rows, [])
    return Shape(nodes, leaves, leaf_of, paths, node_rows)


def _diagram_shape(d: Any, Xb: np.ndarray, rows: np.ndarray, n_rows: int) -> Shape:
    """The decoded diagram read as Florio's family: its decision nodes are the nodes
    reachable from the root (the slots that split rows, pass-throughs compacted away);
    its paths are the root-to-class paths, enumerated (decoded diagrams are small), each
    arc of which carries training rows. Leaves are its arcs into class leaves (only
    tree-scoped constraints read them, and those are refused on diagrams)."""
    keep = np.zeros(n_rows, bool)
    keep[rows] = True
    _, _, arcs = d.route(Xb)
    live = d.reachable()
    nodes: list[int] = []
    leaves: list[int] = []
    node_rows: list[tuple[tuple[str, ...], np.ndarray]] = []
    leaf_of = np.full(n_rows, -1)
    for i in live:
        n = d.nodes[i]
        mine = np.zeros(n_rows, bool)
        for side, ref in ((True, n.if_true), (False, n.if_false)):
            taken = arcs.get((i, side), np.zeros(n_rows, bool)) & keep
            mine |= taken
            if ref < 0:
                leaf_of[taken] = len(leaves)
                leaves.append(int(taken.sum()))
        nodes.append(int(mine.sum()))
        node_rows.append((d.features[n.feature].columns, np.flatnonzero(mine)))
    if d.root < 0:
        leaf_of[rows] = 0
        leaves.append(len(rows))
    paths = [[d.features[d.nodes[i].feature].columns for i in path] for path, _ in d.paths()]
    return Shape(nodes, leaves, leaf_of, paths, node_rows)
