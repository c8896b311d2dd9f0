"""Classifiers as plain data (E1, E3): they know nothing of solvers.

A ``Tree`` keeps the binarisation it was trained with, so ``predict`` takes raw rows (a
CSV path, a pandas DataFrame, a dict of columns or a 2-D array in training column order).
Trees are frozen, picklable and round-trip exactly through JSON (``schema`` versioned).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Union

import numpy as np

from ..data import Binarizer, Feature
from ..errors import OdtError
from .common import SCHEMA, Seen, as_table, binarize_rows, save_json
from .layout import Layout
from .render import to_svg



@dataclass(frozen=True, slots=True)
class Leaf:
    label: int  # index into Tree.classes


@dataclass(frozen=True, slots=True)
class Split:
    feature: int  # index into Tree.features; rows where the feature holds go to if_true
    if_true: "TreeNode"
    if_false: "TreeNode"


TreeNode = Union[Leaf, Split]


@dataclass(frozen=True, slots=True)
class Tree:
    """A univariate binary decision tree over binarised features."""

    features: tuple[Feature, ...]
    classes: tuple[Any, ...]
    root: TreeNode
    input_columns: tuple[str, ...] = ()
    seen: Seen = Seen()  # training categories and majority, for unseen values
    #: a regression tree (issue 26): ``classes`` are the leaves' predicted numbers
    regression: bool = False

    # ------------------------------------------------------------------ structure
    def walk(self) -> Iterator[tuple[TreeNode, int]]:
        """Every node with its depth, pre-order."""
        stack: list[tuple[TreeNode, int]] = [(self.root, 0)]
        while stack:
            node, d = stack.pop()
            yield node, d
            if isinstance(node, Split):
                stack.append((node.if_false, d + 1))
                stack.append((node.if_true, d + 1))

    @property
    def n_nodes(self) -> int:
        """Decision (internal) nodes, as counted by ``nodes`` in the language (Florio eq. 18)."""
        return sum(1 for n, _ in self.walk() if isinstance(n, Split))

    @property
    def n_leaves(self) -> int:
        return sum(1 for n, _ in self.walk() if isinstance(n, Leaf))

    @property
    def depth(self) -> int:
        return max(d for _, d in self.walk())

    def features_used(self) -> set[str]:
        return {c for n, _ in self.walk() if isinstance(n, Split) for c in self.features[n.feature].columns}

    def layout(self) -> Layout:
        """The nodes numbered in pre-order, the yes child first, leaves included
        (``layout.Layout``; scikit-learn's numbering of ``tree_``)."""
        cols: tuple[list[int], ...] = ([], [], [], [], [])  # feature, yes, no, label, layer
        stack: list[tuple[TreeNode, int, int, int]] = [(self.root, 0, -1, 0)]  # node, depth, parent, side
        while stack:
            node, depth, parent, side = stack.pop()
            i = len(cols[0])
            if parent >= 0:
                cols[side][parent] = i
            row = (node.feature, -1, -1, -1, depth) if isinstance(node, Split) else (-1, -1, -1, node.label, depth)
            for col, value in zip(cols, row):
                col.append(value)
            if isinstance(node, Split):  # pre-order, yes first: push no, then yes
                stack.append((node.if_false, depth + 1, i, 2))
                stack.append((node.if_true, depth + 1, i, 1))
        feature, yes, no, label, layer = (np.array(c, dtype=np.int64) for c in cols)
        return Layout(feature, yes, no, label, layer)

    # ------------------------------------------------------------------ prediction
    def leaf_index_binary(self, Xb: np.ndarray) -> np.ndarray:
        """For each row of the binarised matrix, the pre-order index of the leaf it reaches."""
        out = np.full(Xb.shape[0], -1, dtype=np.int64)
        leaves = [n for n, _ in self.walk() if isinstance(n, Leaf)]
        ids = {id(n): i for i, n in enumerate(leaves)}

        def route(node: TreeNode, rows: np.ndarray) -> None:
            if isinstance(node, Leaf):
                out[rows] = ids[id(node)]
                return
            go = Xb[rows, node.feature]
            route(node.if_true, rows[go])
            route(node.if_false, rows[~go])

        route(self.root, np.arange(Xb.shape[0]))
        return out

    def predict_binary(self, Xb: np.ndarray) -> np.ndarray:
        """Class indices for a binarised matrix (columns = ``self.features``)."""
        out = np.zeros(Xb.shape[0], dtype=np.int64)

        def route(node: TreeNode, rows: np.ndarray) -> None:
            if isinstance(node, Leaf):
                out[rows] = node.label
                return
            go = Xb[rows, node.feature]
            route(node.if_true, rows[go])
            route(node.if_false, rows[~go])

        route(self.root, np.arange(Xb.shape[0]))
        return out

    def predict(self, data: Any, unknown: str = "error") -> np.ndarray:
        """Class labels for raw rows: a CSV path, DataFrame, dict of columns or 2-D array.
        A row with a category the training data did not have is an error naming its column
        and row, or (``unknown="majority"``) gets the training majority class."""
        table = as_table(data, self.input_columns)
        labels = self.predict_binary(binarize_rows(self.features, table))
        idx = self.seen.or_named_by(self.features).resolve(table, labels, unknown)
        if self.regression:
            return np.asarray(self.classes, dtype=np.float64)[np.asarray(idx, dtype=np.int64)]
        return np.array([self.classes[i] for i in idx], dtype=object if any(isinstance(c, str) for c in self.classes) else None)

    # ------------------------------------------------------------------ rendering (E3)
    def to_text(self, rows: np.ndarray | None = None) -> str:
        """The tree as nested if/else text; ``rows`` (the leaf, ``leaf_index_binary``, of
        each training row) adds each leaf's row count (a regression tree's render)."""
        lines: list[str] = []
        counts = None if rows is None else np.bincount(rows[rows >= 0], minlength=self.n_leaves)
        leaf_ids = {id(n): i for i, n in enumerate(n for n, _ in self.walk() if isinstance(n, Leaf))}

        def emit(node: TreeNode, indent: str) -> None:
            if isinstance(node, Leaf):
                value = self.classes[node.label]
                shown = f"{value:.6g}" if self.regression and isinstance(value, float) else f"{value}"
                n = "" if counts is None else f"  ({int(counts[leaf_ids[id(node)]])} rows)"
                lines.append(f"{indent}predict {shown}{n}")
                return
            lines.append(f"{indent}if {self.features[node.feature].name}:")
            emit(node.if_true, indent + "    ")
            lines.append(f"{indent}else:")
            emit(node.if_false, indent + "    ")

        emit(self.root, "")
        return "\n".join(lines)

    def _repr_svg_(self) -> str:
        """The picture Jupyter shows for a classifier (``render.to_svg``)."""
        return to_svg(self)

    def to_onnx(self, data: Any = None, target: str | None = None) -> Any:
        """This classifier as an ONNX model (``onnx.ModelProto``, ``classifiers.onnx``);
        with ``data`` (rows with their labels, in column ``target`` or the training
        label column) its probabilities are the class frequencies of those rows."""
        from .export import node_statistics
        from .onnx import to_onnx

        if self.regression:
            raise OdtError("a regression tree has no ONNX export yet (odt writes ONNX tree classifiers)",
                           hint="save it as JSON (save / odtc solve -o) and predict with odt")

        weights = None if data is None else node_statistics(self, as_table(data, self.input_columns), target)[0]
        return to_onnx(self, weights)

    # ------------------------------------------------------------------ JSON (E1)
    def to_json(self) -> dict:
        def node(n: TreeNode) -> dict:
            if isinstance(n, Leaf):
                return {"class": n.label}
            return {"feature": n.feature, "if_true": node(n.if_true), "if_false": node(n.if_false)}

        return {
            "schema": SCHEMA,
            "type": "tree",
            "classes": list(self.classes),
            "features": Binarizer(self.features).to_json(),
            "input_columns": list(self.input_columns),
            "root": node(self.root),
            **({"seen": self.seen.to_json()} if self.seen.categories or self.seen.majority is not None else {}),
            **({"task": "regression"} if self.regression else {}),
        }

    @staticmethod
    def from_json(obj: dict) -> "Tree":
        if obj.get("schema") != SCHEMA or obj.get("type") != "tree":
            raise OdtError(f"not an odt tree (schema {obj.get('schema')!r}, type {obj.get('type')!r}); expected {SCHEMA}")

        def node(d: dict) -> TreeNode:
            if "class" in d:
                return Leaf(int(d["class"]))
            return Split(int(d["feature"]), node(d["if_true"]), node(d["if_false"]))

        return Tree(tuple(Feature.from_json(f) for f in obj["features"]), tuple(obj["classes"]), node(obj["root"]),
                    tuple(obj.get("input_columns", ())), Seen.from_json(obj.get("seen")),
                    regression=obj.get("task") == "regression")

    def save(self, path: str | Path) -> None:
        """Write JSON atomically (a temporary file renamed over the target)."""
        save_json(self.to_json(), path)
