"""What the exports share: per-node statistics from rows, diagrams unfolded to trees, and
scikit-learn's ``tree_`` arrays (``odtc export --to sklearn-json``).

Input: a ``Tree`` or ``Diagram`` and, optionally, rows with their labels (a raw table
whose label column the classifier records as ``seen.target``, or the class weights an
estimator kept); for a regression tree (``Tree.regression``) the rows' numeric targets
(``NodeTargets``). Output: plain numpy arrays and JSON-ready dicts; nothing here imports
scikit-learn or onnx (``odt.sklearn_tree`` and ``onnx.py`` build their objects from it).

The scikit-learn feature space (``sklearn_tree``): scikit-learn trees compare one column
with a threshold, ``x <= t`` going left. A threshold test is that (left = yes); a binary
test (``x == 1``) is ``x <= 0.5`` (left = no); a category test (``Gender == Male``) reads
a one-hot column of its category (``Gender_Male <= 0.5``, left = no), one per category of
the training data (``seen``), after the numeric columns, as a ``ColumnTransformer`` of
passthrough numbers and a ``OneHotEncoder`` orders them. A learned missing direction is
``missing_go_to_left``; a test with none sends a missing value to the child with more
training rows, as scikit-learn does for a feature without missing values in training.
An oblique test has no scikit-learn form and is refused.

A regression tree is scikit-learn's ``DecisionTreeRegressor`` ``tree_``: one output, one
"class"; a leaf's ``value`` is its prediction (what odt predicts there), a decision
node's the weighted mean of its rows (``squared_error``) or a weighted median
(``absolute_error``), as scikit-learn stores them; ``impurity`` is the criterion's: the
weighted variance of the node's targets, or their weighted mean absolute deviation from
a median (``regression_statistics``).
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from ..data import Binarizer, RawTable
from ..errors import OdtError
from ..features import missing_rule
from .layout import Layout, gini

#: an unfolded diagram larger than this is refused (every path of the DAG is spelled out)
UNFOLD_LIMIT = 100_000
FORMAT = "odt.sklearn-tree/1"


def class_index(clf: Any, labels: np.ndarray) -> np.ndarray:
    """The class index of each label (-1 for a label the classifier does not know),
    labels compared as text (a CSV's '1' is the class 1)."""
    index = {str(c): k for k, c in enumerate(clf.classes)}
    return np.array([index.get(str(v), -1) for v in labels], dtype=np.int64)


def _target_column(clf: Any, table: RawTable, target: str | None, kind: str, without: str, use: str) -> str:
    """``target``, or the column the classifier was trained on; an error naming what is
    missing (``kind``: "label column" or "target column")."""
    target = target or clf.seen.target
    if target is None:
        raise OdtError(f"the {'classifier' if kind == 'label column' else 'tree'} does not record its training data's "
                       f"{kind}, so {without}", hint="name it: --target <column> (Python: target=)")
    if target not in table.columns:
        raise OdtError(f"{table.name}: no column '{target}' (the {kind} {use})", hint="--target <column> names another one")
    return target


def node_statistics(clf: Any, table: RawTable, target: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(nodes x classes) class counts and (nodes,) row counts at every node of
    ``clf.layout()`` for the rows of ``table``, whose labels are in column ``target`` (the
    classifier's ``seen.target`` when not given). A table without that column is an error
    naming it."""
    target = _target_column(clf, table, target, "label column", "the rows' classes cannot be counted",
                            "the classes are counted from")
    Xb = Binarizer(clf.features).transform(table)
    layout = clf.layout()
    y = class_index(clf, table.strings(target))
    weights, _ = layout.class_weights(Xb, y, None, len(clf.classes))
    rows, _ = layout.row_counts(Xb)
    return weights, rows


class NodeTargets(NamedTuple):
    """A regression tree's training statistics at every node of its layout (numbering of
    ``Tree.layout()``): what scikit-learn's ``tree_`` keeps for a ``DecisionTreeRegressor``."""

    criterion: str  # "squared_error" or "absolute_error": how value and impurity are computed
    rows: np.ndarray  # int64: the rows at the node (n_node_samples)
    total: np.ndarray  # their total weight (weighted_n_node_samples)
    value: np.ndarray  # their weighted mean, or a weighted median for absolute_error; 0 without weight
    impurity: np.ndarray  # weighted variance, or mean absolute deviation from a median; 0 without weight


def regression_statistics(layout: Layout, Xb: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None,
                          criterion: str = "squared_error") -> NodeTargets:
    """``NodeTargets`` of the rows of ``Xb`` (binarised) with targets ``y`` and optional
    weights, as scikit-learn's criteria define them: ``squared_error``'s impurity is
    ``sum w (y - mean)^2 / W``; ``absolute_error``'s is ``sum w |y - median| / W`` (the
    same for every weighted median, so which one is taken does not matter)."""
    if criterion not in ("squared_error", "absolute_error"):
        raise OdtError(f"no regression criterion '{criterion}' (squared_error or absolute_error)")
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    y = np.asarray(y, dtype=float)
    n = layout.n_nodes
    rows, total, value, impurity = np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(n), np.zeros(n)
    r, nodes = layout.path(Xb)
    order = np.argsort(nodes, kind="stable")
    starts = np.searchsorted(nodes[order], np.arange(n + 1))
    for i in range(n):
        at = r[order[starts[i]:starts[i + 1]]]
        rows[i] = at.size
        wi, yi = w[at], y[at]
        total[i] = wi.sum()
        if total[i] <= 0:
            continue
        if criterion == "squared_error":
            value[i] = float(wi @ yi) / total[i]
            impurity[i] = float(wi @ (yi - value[i]) ** 2) / total[i]
        else:
            value[i] = weighted_median(yi, wi)
            impurity[i] = float(wi @ np.abs(yi - value[i])) / total[i]
    return NodeTargets(criterion, rows, total, value, impurity)


def weighted_median(y: np.ndarray, w: np.ndarray) -> float:
    """The smallest value whose cumulative weight (in sorted order) reaches half the total.

    >>> weighted_median(np.array([3.0, 1.0, 2.0]), np.array([1.0, 1.0, 5.0]))
    2.0
    """
    order = np.argsort(y, kind="stable")
    cum = np.cumsum(w[order])
    return float(y[order][int(np.searchsorted(cum, cum[-1] / 2))])


def regression_decrease(layout: Layout, stats: NodeTargets) -> np.ndarray:
    """Per node, the weighted impurity decrease of its test (scikit-learn's
    ``feature_importances_`` summand, ``compute_feature_importances``): ``W_t * impurity(t)
    - W_yes * impurity(yes) - W_no * impurity(no)``; 0 at a leaf. A tree's children are
    its arcs, so their own statistics are the arcs'."""
    out = np.zeros(layout.n_nodes)
    weighted = stats.total * stats.impurity
    for i in np.flatnonzero(layout.feature >= 0).tolist():
        out[i] = weighted[i] - weighted[int(layout.yes[i])] - weighted[int(layout.no[i])]
    return np.maximum(out, 0.0)  # rounding only: a split never raises the weighted loss


def regression_node_statistics(clf: Any, table: RawTable, target: str | None = None,
                               criterion: str = "squared_error") -> NodeTargets:
    """``NodeTargets`` of a regression tree for the rows of ``table``, whose numeric
    targets are in column ``target`` (the tree's ``seen.target`` when not given); the
    rows unweighted. A table without that column is an error naming it."""
    target = _target_column(clf, table, target, "target column", "the rows' values cannot be read",
                            "the node values are computed from")
    Xb = Binarizer(clf.features).transform(table)
    return regression_statistics(clf.layout(), Xb, table.numbers(target), None, criterion)


def unfold(layout: Layout, left_first: Any = None, limit: int = UNFOLD_LIMIT) -> tuple[np.ndarray, ...]:
    """The layout as a tree (a diagram's shared nodes repeated on every path): for each
    node of the tree in pre-order, (its layout id, its first child, its second child,
    whether the first child is the yes side); children are tree indices, -1 at a leaf.
    ``left_first(layout_id)`` says whether the yes child comes first (default: yes).
    More than ``limit`` nodes is an error."""
    size = np.ones(layout.n_nodes, dtype=object)  # exact, however many paths
    for i in range(layout.n_nodes - 1, -1, -1):
        if layout.feature[i] >= 0:
            size[i] = 1 + size[layout.yes[i]] + size[layout.no[i]]
    if size[0] > limit:
        raise OdtError(f"the diagram unfolds to a tree of {size[0]} nodes (more than {limit}): too large to export "
                       "as a tree", hint="a smaller diagram, or a tree model, exports")
    src: list[int] = []
    first: list[int] = []
    second: list[int] = []
    yes_first: list[bool] = []
    stack: list[tuple[int, int, int]] = [(0, -1, 0)]  # layout id, parent tree index, which child of it (1, 2)
    while stack:
        i, parent, side = stack.pop()
        k = len(src)
        src.append(i)
        first.append(-1)
        second.append(-1)
        if parent >= 0:
            (first if side == 1 else second)[parent] = k
        lead = True if left_first is None or layout.feature[i] < 0 else bool(left_first(i))
        yes_first.append(lead)
        if layout.feature[i] >= 0:
            a, b = (layout.yes[i], layout.no[i]) if lead else (layout.no[i], layout.yes[i])
            stack.append((int(b), k, 2))
            stack.append((int(a), k, 1))
    return (np.array(src, dtype=np.int64), np.array(first, dtype=np.int64), np.array(second, dtype=np.int64),
            np.array(yes_first, dtype=bool))


def sklearn_features(clf: Any, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The columns of the scikit-learn tree's X: each input column read as a number (in
    the order of ``columns``), then one one-hot column per training category of each
    category column (see the module docstring)."""
    columns = list(columns) if columns is not None else list(clf.input_columns or Binarizer(clf.features).columns)
    cats = dict(clf.seen.or_named_by(clf.features).categories)
    out: list[dict[str, Any]] = [{"name": c, "column": c} for c in columns if c not in cats]
    for c in columns:
        for cat in cats.get(c, ()):
            out.append({"name": f"{c}_{cat}", "column": c, "category": cat})
    return out


def sklearn_tree(clf: Any, weights: np.ndarray | None = None, rows: np.ndarray | None = None,
                 columns: Sequence[str] | None = None, targets: NodeTargets | None = None) -> dict[str, Any]:
    """The classifier as scikit-learn ``tree_`` arrays (JSON-ready lists): a diagram is
    unfolded; ``weights`` (layout nodes x classes, class weights) and ``rows`` (row
    counts) fill ``value``, ``impurity`` and the sample counts — without them every node
    holds its one-hot label and no samples. A leaf whose label is not the largest of its
    class weights (a constraint chose it) holds its label (value 1) so that scikit-learn,
    which predicts the largest value, predicts it.

    A regression tree (``clf.regression``) takes ``targets`` (``NodeTargets``, its rows,
    weights, values and impurities) instead of ``weights`` and ``rows``: every leaf holds
    its prediction, a decision node its rows' value (see the module docstring); without
    them the decision nodes hold 0 and no node has samples. The dict then says
    ``"task": "regression"`` and the ``criterion``."""
    regression = bool(getattr(clf, "regression", False))
    if regression and weights is not None:
        raise OdtError("a regression tree's node statistics are its rows' targets (targets=), not class weights")
    if regression and targets is not None:
        rows = targets.rows
    layout = clf.layout()
    features = sklearn_features(clf, columns)
    arrays = _structure(clf, layout, features, rows)
    src = np.asarray(arrays.pop("_src"), dtype=np.int64)
    rows = np.zeros(layout.n_nodes, dtype=np.int64) if rows is None else np.asarray(rows)
    if regression:
        value = np.zeros(src.size) if targets is None else targets.value[src].astype(float)
        leaf = layout.feature[src] < 0
        value[leaf] = np.asarray(clf.classes, dtype=np.float64)[layout.label[src[leaf]]]  # what odt predicts
        zero = np.zeros(layout.n_nodes)
        head: dict[str, Any] = {"task": "regression",
                                "criterion": "squared_error" if targets is None else targets.criterion}
        impurity = (zero if targets is None else targets.impurity)[src]
        totals = (zero if targets is None else targets.total)[src]
        counted = targets is not None and bool(targets.total.sum() > 0)
        values = value.reshape(-1, 1, 1)
    else:
        n_classes = len(clf.classes)
        if weights is None:  # no rows: every leaf holds its one-hot label
            weights = np.zeros((layout.n_nodes, n_classes))
        values = np.zeros((src.size, 1, n_classes))
        for k, i in enumerate(src.tolist()):
            w = weights[i].astype(float)
            if layout.feature[i] < 0:
                lab = int(layout.label[i])
                if w.sum() <= 0 or int(np.argmax(w)) != lab:
                    w = np.eye(n_classes)[lab]
            elif w.sum() <= 0:
                w = np.zeros(n_classes)
            values[k, 0] = w / w.sum() if w.sum() > 0 else w
        head = {"classes": list(clf.classes)}
        impurity, totals, counted = gini(weights[src]), weights[src].sum(axis=1), bool(weights.sum() > 0)
    arrays.update({"impurity": impurity.tolist(), "n_node_samples": rows[src].astype(np.int64).tolist(),
                   "weighted_n_node_samples": totals.tolist(), "value": values.tolist()})
    return {"format": FORMAT, **head, "features": features, "counts": counted, "tree_": arrays}


def _structure(clf: Any, layout: Layout, features: list[dict[str, Any]], rows: np.ndarray | None) -> dict[str, Any]:
    """The shape of the scikit-learn tree (``node_count``, ``max_depth``, children, feature,
    threshold, ``missing_go_to_left``) and, under ``_src``, each node's layout id."""
    where = {(f["column"], f.get("category")): j for j, f in enumerate(features)}
    kinds: dict[int, Any] = {}
    for i in np.flatnonzero(layout.feature >= 0).tolist():
        f = clf.features[int(layout.feature[i])]
        if f.kind == "oblique":
            raise OdtError(f"the test '{f.name}' is oblique (a sum of columns): a scikit-learn tree compares one "
                           "column with a threshold", hint="export it to ONNX (--to onnx), which computes the sum")
        kinds[i] = f
    src, first, second, yes_first = unfold(layout, lambda i: kinds[int(i)].kind == "threshold")
    n = src.size
    rows = np.zeros(layout.n_nodes, dtype=np.int64) if rows is None else np.asarray(rows)
    feature = np.full(n, -2, dtype=np.int64)
    threshold = np.full(n, -2.0)
    missing_left = np.zeros(n, dtype=np.int64)
    for k in range(n):
        i = int(src[k])
        if layout.feature[i] < 0:
            continue
        f = kinds[i]
        if f.kind == "threshold":
            feature[k], threshold[k] = where[(f.column, None)], float(f.threshold)
        elif f.kind == "binary":
            feature[k], threshold[k] = where[(f.column, None)], 0.5
        else:  # category: its one-hot column
            feature[k], threshold[k] = where[(f.column, f.category)], 0.5
        rule = missing_rule(f)
        left, right = (int(layout.yes[i]), int(layout.no[i])) if yes_first[k] else (int(layout.no[i]), int(layout.yes[i]))
        if rule is not None:
            missing_left[k] = int(rule[0] == bool(yes_first[k]))
        else:  # scikit-learn's rule for a feature without missing values in training: the larger child
            missing_left[k] = int(rows[left] >= rows[right])
    return {
        "node_count": int(n),
        "max_depth": int(_depth(first, second)),
        "children_left": first.tolist(),
        "children_right": second.tolist(),
        "feature": feature.tolist(),
        "threshold": threshold.tolist(),
        "missing_go_to_left": missing_left.tolist(),
        "_src": src.tolist(),
    }


def _depth(first: np.ndarray, second: np.ndarray) -> int:
    depth = np.zeros(first.size, dtype=np.int64)
    for k in range(first.size):  # pre-order: a parent comes before its children
        for child in (first[k], second[k]):
            if child >= 0:
                depth[child] = depth[k] + 1
    return int(depth.max()) if depth.size else 0
