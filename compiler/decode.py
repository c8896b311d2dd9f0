"""Assignment + encoding handles -> ``Tree`` (E1).

Reads the node features F, leaf classes C and rebuilds the perfect tree of the encoding,
then simplifies it against the training rows without changing any training prediction:
a node whose one side receives no training row is replaced by its other side (this
removes the BOTTOM pass-through nodes of Avellaneda's Theorem 2), and a node whose two
children are leaves of the same class becomes that leaf (this changes no prediction at
all).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .classifier import Leaf, Split, Tree, TreeNode
from .data import Dataset
from .skeletons.tree_paths import BOTTOM, TreePathsEncoding


def decode_tree(values: Sequence[bool], enc: TreePathsEncoding, data: Dataset, input_columns: tuple[str, ...]) -> Tree:
    """``values[i]`` is the truth value of IR variable i (index 0 unused)."""

    def lit(l: int) -> bool:
        return bool(values[l]) if l > 0 else not bool(values[-l])

    n_leaves = 1 << enc.depth
    used = [data.features[f] for f in enc.features]

    def leaf_class(v: int) -> int:
        for c in range(enc.n_classes):
            if lit(enc.C[v, c]):
                return c
        return 0

    def node_feature(q: int) -> int:
        for p in range(len(enc.features)):
            if lit(enc.F[q, p]):
                return p
        return BOTTOM

    def build(q: int, rows: np.ndarray, Xb: np.ndarray) -> TreeNode:
        if q >= n_leaves:
            return Leaf(leaf_class(q - n_leaves))
        p = node_feature(q)
        if p == BOTTOM:
            return build(2 * q, rows, Xb)
        go = Xb[rows, p]
        right_rows, left_rows = rows[go], rows[~go]
        if right_rows.size == 0:
            return build(2 * q, left_rows, Xb)
        if left_rows.size == 0:
            return build(2 * q + 1, right_rows, Xb)
        true_side = build(2 * q + 1, right_rows, Xb)
        false_side = build(2 * q, left_rows, Xb)
        if isinstance(true_side, Leaf) and isinstance(false_side, Leaf) and true_side.label == false_side.label:
            return true_side
        return Split(p, true_side, false_side)

    Xb = data.X[:, list(enc.features)] if enc.features else np.zeros((data.n_rows, 0), bool)
    rows = np.array(sorted(r for bk in enc.buckets for r in bk.rows), dtype=np.int64)
    root = build(1, rows, Xb)
    return compact(Tree(tuple(used), data.classes, root, input_columns))


def compact(tree: Tree) -> Tree:
    """Keep only the features the tree tests, renumbered in first-use order."""
    order: dict[int, int] = {}
    for node, _ in tree.walk():
        if isinstance(node, Split) and node.feature not in order:
            order[node.feature] = len(order)

    def renumber(n: TreeNode) -> TreeNode:
        if isinstance(n, Leaf):
            return n
        return Split(order[n.feature], renumber(n.if_true), renumber(n.if_false))

    feats = [None] * len(order)
    for old, new in order.items():
        feats[new] = tree.features[old]
    return Tree(tuple(feats), tree.classes, renumber(tree.root), tree.input_columns)  # type: ignore[arg-type]
