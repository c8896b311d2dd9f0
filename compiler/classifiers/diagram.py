"""Decision diagrams and ordered BDDs as plain data (E1, E3): they know nothing of solvers.

A ``Diagram`` is a levelled DAG of decision nodes (Florio et al., AAAI 2023, Sec. 3): every
node tests one binarised feature and sends its rows, on each side, either to a node of a
later layer or straight to a class (the paper's long arcs to class leaves). An ordered
BDD (Hu et al., IJCAI 2022) is the special case where every node of level ``l`` tests
the feature of level ``l``; it is a ``Diagram`` with ``kind == "bdd"``.

Successor references are integers: ``r >= 0`` is node ``r`` of ``nodes``; ``r < 0`` is the
class leaf ``-r - 1`` (``leaf_ref(c)``). Nodes are stored in topological order (every
successor index is larger than its node's), so routing is one pass over the nodes.

Counting vocabulary (the language's quantities on diagrams):
  nodes   the decision nodes reachable from the root (Florio eq. 18's regulariser)
  leaves  the arcs into class leaves (each is the end of a family of paths)
  depth   the longest root-to-class path, in decision nodes
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..data import Binarizer, Feature
from .common import SCHEMA, Seen, as_table, binarize_rows, save_json
from .layout import Layout
from .render import to_svg
from .tree import Leaf, Split, Tree


def leaf_ref(c: int) -> int:
    """The successor reference of class leaf ``c``."""
    return -c - 1


def leaf_class(ref: int) -> int:
    """The class of a leaf reference (``ref < 0``)."""
    return -ref - 1


@dataclass(frozen=True, slots=True)
class DNode:
    feature: int  # index into Diagram.features; rows where it holds go to if_true
    if_true: int  # successor reference
    if_false: int
    layer: int  # 0 = root layer


@dataclass(frozen=True, slots=True)
class Diagram:
    """A decision diagram (``kind == "diagram"``) or an ordered BDD (``kind == "bdd"``)."""

    features: tuple[Feature, ...]
    classes: tuple[Any, ...]
    nodes: tuple[DNode, ...]
    root: int  # successor reference of the root (a leaf when the diagram is one class)
    input_columns: tuple[str, ...] = ()
    kind: str = "diagram"
    seen: Seen = Seen()  # training categories and majority, for unseen values

    def __post_init__(self) -> None:
        for i, n in enumerate(self.nodes):
            for ref in (n.if_true, n.if_false):
                if ref >= 0 and ref <= i:
                    raise ValueError(f"node {i} points back to node {ref}: nodes must be in topological order")
                if ref < 0 and leaf_class(ref) >= len(self.classes):
                    raise ValueError(f"node {i} points to class {leaf_class(ref)} of {len(self.classes)}")

    # ------------------------------------------------------------------ structure
    def reachable(self) -> list[int]:
        """Indices of the decision nodes reachable from the root, in topological order."""
        seen: set[int] = set()
        stack = [self.root] if self.root >= 0 else []
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            stack.extend(r for r in (self.nodes[i].if_true, self.nodes[i].if_false) if r >= 0)
        return sorted(seen)

    @property
    def n_nodes(self) -> int:
        return len(self.reachable())

    @property
    def n_leaves(self) -> int:
        """Arcs into class leaves (a one-class diagram has one leaf, its root)."""
        if self.root < 0:
            return 1
        return sum((n.if_true < 0) + (n.if_false < 0) for n in (self.nodes[i] for i in self.reachable()))

    @property
    def depth(self) -> int:
        longest: dict[int, int] = {}
        for i in reversed(self.reachable()):
            n = self.nodes[i]
            longest[i] = 1 + max(longest.get(r, 0) if r >= 0 else 0 for r in (n.if_true, n.if_false))
        return longest.get(self.root, 0) if self.root >= 0 else 0

    def features_used(self) -> set[str]:
        return {c for i in self.reachable() for c in self.features[self.nodes[i].feature].columns}

    def layout(self) -> Layout:
        """The reachable decision nodes in topological order, then one terminal per arc
        into a class, the yes arc first (``layout.Layout``)."""
        if self.root < 0:
            one = np.array([-1], dtype=np.int64)
            return Layout(one, one, one, np.array([leaf_class(self.root)], dtype=np.int64), one, True)
        live = self.reachable()
        index = {old: k for k, old in enumerate(live)}
        feature = [self.nodes[i].feature for i in live]
        layer = [self.nodes[i].layer for i in live]
        yes, no, label = [-1] * len(live), [-1] * len(live), [-1] * len(live)
        for k, i in enumerate(live):
            for side, ref in ((yes, self.nodes[i].if_true), (no, self.nodes[i].if_false)):
                if ref >= 0:
                    side[k] = index[ref]
                    continue
                side[k] = len(feature)
                for col, value in ((feature, -1), (yes, -1), (no, -1), (label, leaf_class(ref)), (layer, -1)):
                    col.append(value)
        arrays = [np.array(c, dtype=np.int64) for c in (feature, yes, no, label, layer)]
        return Layout(arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], True)

    def paths(self) -> Iterator[tuple[list[int], int]]:
        """Every root-to-leaf path: (decision node indices, leaf reference). Exponential in
        the worst case: for re-evaluation of decoded (small) diagrams only."""
        if self.root < 0:
            yield [], self.root
            return
        stack: list[tuple[int, list[int]]] = [(self.root, [])]
        while stack:
            ref, above = stack.pop()
            if ref < 0:
                yield above, ref
                continue
            n = self.nodes[ref]
            stack.append((n.if_false, above + [ref]))
            stack.append((n.if_true, above + [ref]))

    # ------------------------------------------------------------------ prediction
    def route(self, Xb: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[tuple[int, bool], np.ndarray]]:
        """Route a binarised matrix: (class index per row, rows reaching each node as a
        count array, and for each (node, side) the mask of rows that take that arc)."""
        n = Xb.shape[0]
        at = np.full(n, self.root, dtype=np.int64)
        counts = np.zeros(len(self.nodes), dtype=np.int64)
        arcs: dict[tuple[int, bool], np.ndarray] = {}
        for i, node in enumerate(self.nodes):
            here = at == i
            counts[i] = int(here.sum())
            if not counts[i]:
                continue
            go = here & Xb[:, node.feature]
            stay = here & ~go
            at[go], at[stay] = node.if_true, node.if_false
            arcs[i, True], arcs[i, False] = go, stay
        return -at - 1, counts, arcs

    def predict_binary(self, Xb: np.ndarray) -> np.ndarray:
        """Class indices for a binarised matrix (columns = ``self.features``)."""
        return self.route(Xb)[0]

    def predict(self, data: Any, unknown: str = "error") -> np.ndarray:
        """Class labels for raw rows: a CSV path, DataFrame, dict of columns or 2-D array.
        A row with a category the training data did not have is an error naming its column
        and row, or (``unknown="majority"``) gets the training majority class."""
        table = as_table(data, self.input_columns)
        labels = self.predict_binary(binarize_rows(self.features, table))
        idx = self.seen.or_named_by(self.features).resolve(table, labels, unknown)
        return np.array([self.classes[i] for i in idx],
                        dtype=object if any(isinstance(c, str) for c in self.classes) else None)

    def unfold(self):
        """The equivalent ``Tree`` (every path of the DAG spelled out): same predictions."""
        def build(ref: int):
            if ref < 0:
                return Leaf(leaf_class(ref))
            n = self.nodes[ref]
            return Split(n.feature, build(n.if_true), build(n.if_false))

        return Tree(self.features, self.classes, build(self.root), self.input_columns, self.seen)

    # ------------------------------------------------------------------ rendering (E3)
    def _ref_text(self, ref: int) -> str:
        return f"predict {self.classes[leaf_class(ref)]}" if ref < 0 else f"go to n{ref}"

    def to_text(self) -> str:
        if self.root < 0:
            return f"predict {self.classes[leaf_class(self.root)]}"
        lines = [f"{self.kind} with {self.n_nodes} decision nodes, start at n{self.root}"]
        for i in self.reachable():
            n = self.nodes[i]
            lines.append(f"n{i} (layer {n.layer}): if {self.features[n.feature].name}: {self._ref_text(n.if_true)}; "
                         f"else: {self._ref_text(n.if_false)}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ JSON (E1)
    def _repr_svg_(self) -> str:
        """The picture Jupyter shows for a classifier (``render.to_svg``)."""
        return to_svg(self)

    def to_onnx(self, data: Any = None, target: str | None = None) -> Any:
        """This classifier as an ONNX model (``onnx.ModelProto``, ``classifiers.onnx``);
        with ``data`` (rows with their labels, in column ``target`` or the training
        label column) its probabilities are the class frequencies of those rows."""
        from .export import node_statistics
        from .onnx import to_onnx

        weights = None if data is None else node_statistics(self, as_table(data, self.input_columns), target)[0]
        return to_onnx(self, weights)

    def to_json(self) -> dict:
        def ref(r: int) -> dict:
            return {"class": leaf_class(r)} if r < 0 else {"node": r}

        return {
            "schema": SCHEMA,
            "type": "diagram",
            "kind": self.kind,
            "classes": list(self.classes),
            "features": Binarizer(self.features).to_json(),
            "input_columns": list(self.input_columns),
            "root": ref(self.root),
            "nodes": [{"feature": n.feature, "layer": n.layer, "if_true": ref(n.if_true), "if_false": ref(n.if_false)}
                      for n in self.nodes],
            **({"seen": self.seen.to_json()} if self.seen.categories or self.seen.majority is not None else {}),
        }

    @staticmethod
    def from_json(obj: dict) -> "Diagram":
        def ref(d: dict) -> int:
            return leaf_ref(int(d["class"])) if "class" in d else int(d["node"])

        nodes = tuple(DNode(int(n["feature"]), ref(n["if_true"]), ref(n["if_false"]), int(n["layer"]))
                      for n in obj["nodes"])
        return Diagram(tuple(Feature.from_json(f) for f in obj["features"]), tuple(obj["classes"]), nodes,
                       ref(obj["root"]), tuple(obj.get("input_columns", ())), obj.get("kind", "diagram"),
                       Seen.from_json(obj.get("seen")))

    def save(self, path: str | Path) -> None:
        """Write JSON atomically (a temporary file renamed over the target)."""
        save_json(self.to_json(), path)


def diagram_of_tree(tree: Any) -> Diagram:
    """A tree as a decision diagram (a tree is a diagram whose nodes each have one parent):
    the nodes of depth i on layer i, in breadth-first order (topological)."""
    from .tree import Leaf

    order: list[Any] = []
    layer: dict[int, int] = {}
    queue = [(tree.root, 0)]
    while queue:
        node, depth = queue.pop(0)
        if isinstance(node, Leaf):
            continue
        layer[id(node)] = depth
        order.append(node)
        queue.extend(((node.if_true, depth + 1), (node.if_false, depth + 1)))
    index = {id(n): i for i, n in enumerate(order)}

    def ref(n: Any) -> int:
        return leaf_ref(n.label) if isinstance(n, Leaf) else index[id(n)]

    nodes = tuple(DNode(n.feature, ref(n.if_true), ref(n.if_false), layer[id(n)]) for n in order)
    return Diagram(tree.features, tree.classes, nodes, ref(tree.root), tree.input_columns, seen=tree.seen)


def compact_diagram(d: Diagram, Xb_rows: np.ndarray | None = None, reduce: bool = True) -> Diagram:
    """Drop unreachable nodes and (with the training matrix ``Xb_rows``) arcs no training
    row takes — the node is replaced by its other side; then, with ``reduce``, nodes whose
    two arcs agree and duplicates of a node (equal test and successors); keep only the
    tested features. No training prediction changes. ``reduce=False`` keeps every node
    that sends training rows both ways: when side constraints count nodes or read the
    tests on paths, the decoded diagram must be exactly the solver's."""
    nodes = list(d.nodes)
    root = d.root
    if Xb_rows is not None:  # an arc with no training row: the node becomes its other side
        _, counts, arcs = d.route(Xb_rows)
        alias: dict[int, int] = {}
        for i in reversed(range(len(nodes))):
            n = nodes[i]
            t, f = _resolve(n.if_true, alias), _resolve(n.if_false, alias)
            took_t = (i, True) in arcs and arcs[i, True].any()
            took_f = (i, False) in arcs and arcs[i, False].any()
            if counts[i] and not took_t:
                alias[i] = f
            elif counts[i] and not took_f:
                alias[i] = t
            nodes[i] = DNode(n.feature, t, f, n.layer)
        root = _resolve(root, alias)
    if not reduce:
        return _renumbered(d, nodes, root)
    alias = {}
    canon: dict[tuple[int, int, int], int] = {}
    for i in reversed(range(len(nodes))):  # reduce: equal arcs, then equal nodes
        n = nodes[i]
        t, f = _resolve(n.if_true, alias), _resolve(n.if_false, alias)
        if t == f:
            alias[i] = t
            continue
        key = (n.feature, t, f)
        if key in canon:
            alias[i] = canon[key]
            continue
        canon[key] = i
        nodes[i] = DNode(n.feature, t, f, n.layer)
    return _renumbered(d, nodes, _resolve(root, alias))


def _renumbered(d: Diagram, nodes: list[DNode], root: int) -> Diagram:
    """``d`` with ``nodes`` and ``root``, keeping only reachable nodes (renumbered in
    order) and only the features they test (in first-use order)."""
    tmp = Diagram(d.features, d.classes, tuple(nodes), root, d.input_columns, d.kind, d.seen)
    keep = tmp.reachable()
    index = {old: new for new, old in enumerate(keep)}
    order: dict[int, int] = {}
    for i in keep:
        order.setdefault(nodes[i].feature, len(order))

    def re(r: int) -> int:
        return r if r < 0 else index[r]

    out = tuple(DNode(order[nodes[i].feature], re(nodes[i].if_true), re(nodes[i].if_false), nodes[i].layer)
                for i in keep)
    feats = tuple(d.features[old] for old, _ in sorted(order.items(), key=lambda kv: kv[1]))
    return Diagram(feats, d.classes, out, re(root), d.input_columns, d.kind, d.seen)


def _resolve(ref: int, alias: dict[int, int]) -> int:
    while ref >= 0 and ref in alias:
        ref = alias[ref]
    return ref

