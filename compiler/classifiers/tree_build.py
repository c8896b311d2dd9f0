"""Assignment + encoding handles -> ``Tree`` (E1).

Each encoding reads its own variables into a *proto-tree* (a ``Tree`` node structure over
a list of ``Feature`` tests, where feature ``-1`` is Avellaneda's BOTTOM: never true).
``finish`` then simplifies it against the training rows the solver saw, without changing
any of their predictions: a node whose one side receives none of those rows is replaced
by its other side, and a node whose two children are leaves of the same class becomes
that leaf (which changes no prediction at all).
"""
from __future__ import annotations

import numpy as np

from ..data import Binarizer, Dataset, Feature
from .tree import Leaf, Split, Tree, TreeNode

BOTTOM = -1


def finish(root: TreeNode, features: list[Feature], data: Dataset, rows: np.ndarray,
           input_columns: tuple[str, ...], merge: bool = True) -> Tree:
    """Simplify a proto-tree against ``rows`` and keep only the features it tests.
    ``merge=False`` keeps sibling leaves of one class (when constraints count nodes or
    tests, the decoded tree must be exactly the solver's)."""
    Xb = Binarizer(tuple(features)).transform(data.table) if features else np.zeros((data.n_rows, 0), bool)

    def build(node: TreeNode, rows: np.ndarray) -> TreeNode:
        if isinstance(node, Leaf):
            return node
        go = Xb[rows, node.feature] if node.feature != BOTTOM else np.zeros(rows.size, bool)
        true_rows, false_rows = rows[go], rows[~go]
        if true_rows.size == 0:
            return build(node.if_false, false_rows)
        if false_rows.size == 0:
            return build(node.if_true, true_rows)
        t, f = build(node.if_true, true_rows), build(node.if_false, false_rows)
        if merge and isinstance(t, Leaf) and isinstance(f, Leaf) and t.label == f.label:
            return t
        return Split(node.feature, t, f)

    return compact(Tree(tuple(features), data.classes, build(root, rows), input_columns))


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

    feats = tuple(tree.features[old] for old, _ in sorted(order.items(), key=lambda kv: kv[1]))
    return Tree(feats, tree.classes, renumber(tree.root), tree.input_columns)
