"""odt classifiers as fitted scikit-learn trees (``ODTClassifier.to_sklearn``,
``ODTRegressor.to_sklearn``, and the files of ``odtc export --to sklearn-json``).

Input: a ``Tree`` or ``Diagram`` with the class weights and row counts of its nodes (or
the JSON of ``compiler.classifiers.export.sklearn_tree``). Output: a fitted
``DecisionTreeClassifier`` whose ``tree_`` holds the classifier (a diagram unfolded), so
``plot_tree``, ``export_text``, SHAP's TreeExplainer, skl2onnx and sklearn2pmml read it;
when X has category columns, a ``Pipeline`` of a fitted ``ColumnTransformer`` (the
numeric columns as they are, then a ``OneHotEncoder`` over the training categories,
``handle_unknown="error"``: an unseen category is refused, as odt refuses it) and that
tree. It predicts as odt on every row odt predicts; ``predict_proba`` too, except at a
leaf whose label is not its training majority (see ``sklearn_tree``). A regression tree
(``Tree.regression``) becomes a fitted ``DecisionTreeRegressor`` (in the same pipeline
with category columns) that predicts each leaf's value as odt does, with scikit-learn's
node values, impurities and sample counts. Needs the ``sklearn`` extra.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.tree._tree import Tree as _SkTree

from odt.compiler.classifiers.export import FORMAT, NodeTargets, sklearn_tree
from odt.compiler.errors import OdtError

_NODE = np.dtype({"names": ["left_child", "right_child", "feature", "threshold", "impurity", "n_node_samples",
                            "weighted_n_node_samples", "missing_go_to_left"],
                  "formats": ["<i8", "<i8", "<i8", "<f8", "<f8", "<i8", "<f8", "u1"]})


def to_sklearn(clf: Any, weights: np.ndarray | None = None, rows: np.ndarray | None = None,
               columns: Sequence[str] | None = None, frame: bool | None = None,
               targets: NodeTargets | None = None) -> Any:
    """The classifier as a fitted scikit-learn estimator (see the module docstring);
    ``columns``: the columns of X in order (default: the classifier's input columns);
    ``targets``: a regression tree's node statistics (``export.regression_statistics``)."""
    return from_sklearn_json(sklearn_tree(clf, weights, rows, columns, targets), frame)


def load_sklearn_json(path: str | Path) -> Any:
    """The fitted scikit-learn estimator of a file written by ``odtc export --to sklearn-json``."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OdtError(f"cannot read '{path}' as a scikit-learn tree export: {exc}") from None
    return from_sklearn_json(doc)


def from_sklearn_json(doc: dict, frame: bool | None = None) -> Any:
    """The fitted estimator of an export (``sklearn_tree``'s dict). ``frame``: whether X
    comes as a DataFrame with named columns (default: when the names are not x0, x1...)."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise OdtError(f"not an odt scikit-learn tree export (expected \"format\": \"{FORMAT}\")")
    arrays = doc["tree_"]
    features = doc["features"]
    regression = doc.get("task") == "regression"
    classes = np.array([] if regression else doc["classes"])
    n_features, n_classes = len(features), 1 if regression else len(classes)
    nodes = np.zeros(arrays["node_count"], dtype=_NODE)
    for field, key in (("left_child", "children_left"), ("right_child", "children_right"), ("feature", "feature"),
                       ("threshold", "threshold"), ("impurity", "impurity"), ("n_node_samples", "n_node_samples"),
                       ("weighted_n_node_samples", "weighted_n_node_samples"),
                       ("missing_go_to_left", "missing_go_to_left")):
        nodes[field] = arrays[key]
    tree = _SkTree(n_features, np.array([n_classes], dtype=np.intp), 1)
    tree.__setstate__({"max_depth": arrays["max_depth"], "node_count": arrays["node_count"], "nodes": nodes,
                       "values": np.array(arrays["value"], dtype=np.float64)})
    est: Any
    if regression:  # scikit-learn's regressor: one output, no classes
        est = DecisionTreeRegressor(criterion=doc.get("criterion", "squared_error"),
                                    max_depth=arrays["max_depth"] or None)
    else:
        est = DecisionTreeClassifier(max_depth=arrays["max_depth"] or None)
        est.classes_ = classes
        est.n_classes_ = n_classes
    est.tree_ = tree
    est.n_outputs_ = 1
    est.max_features_ = n_features
    est.n_features_in_ = n_features
    columns = list(dict.fromkeys(f["column"] for f in features))
    categorical = [c for c in columns if any("category" in f and f["column"] == c for f in features)]
    named = frame if frame is not None else columns != [f"x{j}" for j in range(len(columns))]
    if not categorical:
        if named:
            est.feature_names_in_ = np.array([f["name"] for f in features], dtype=object)
        return est
    return _with_encoder(est, features, columns, categorical, named)


def _with_encoder(est: Any, features: list, columns: list[str], categorical: list[str],
                  named: bool) -> Any:
    """A pipeline: the numeric columns as they are, a one-hot encoder of the category
    columns over their training categories (fitted on one row per category), the tree."""
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    numeric = [c for c in columns if c not in categorical]
    cats = [[f["category"] for f in features if f["column"] == c and "category" in f] for c in categorical]
    pick = (lambda names: names) if named else (lambda names: [columns.index(c) for c in names])
    encoder = ColumnTransformer([("numbers", "passthrough", pick(numeric)),
                                 ("categories", OneHotEncoder(categories=cats, handle_unknown="error",
                                                              sparse_output=False), pick(categorical))],
                                verbose_feature_names_out=False)
    rows = max(len(c) for c in cats)
    sample = {c: np.zeros(rows) for c in numeric}
    sample.update({c: np.array([v[k % len(v)] for k in range(rows)], dtype=object) for c, v in zip(categorical, cats)})
    table = pd.DataFrame({c: sample[c] for c in columns})
    encoder.fit(table if named else table.to_numpy(dtype=object))
    return Pipeline([("encode", encoder), ("tree", est)])


def export_text(model: Any, *, feature_names: Sequence[str] | None = None, class_names: Sequence[Any] | None = None,
                max_depth: int = 10, spacing: int = 3, decimals: int = 2, show_weights: bool = False) -> str:
    """A text report of the rules of a fitted ``ODTClassifier`` (or an odt ``Tree`` or
    ``Diagram``), in the format and with the arguments of ``sklearn.tree.export_text``:
    ``|--- Weight <= 85.50`` for a test's yes side, ``|--- Weight >  85.50`` for its no
    side (``Gender == Male`` / ``Gender != Male`` for a category, ``or missing`` on the
    side a missing value takes), ``class: 4`` at a leaf (with ``show_weights``, the
    training class weights the estimator counted there). A diagram or BDD is unfolded
    (its shared nodes repeat on every path). ``feature_names`` renames the columns of X in
    order; ``class_names`` the classes."""
    from odt.compiler.classifiers.export import unfold
    from odt.compiler.features import missing_rule

    clf = getattr(model, "classifier_", model)
    weights = getattr(model, "node_counts_", None)
    if show_weights and weights is None:
        raise OdtError("show_weights needs the training class weights: pass a fitted ODTClassifier")
    if hasattr(model, "feature_names_in_"):
        names = [str(c) for c in model.feature_names_in_]
    else:
        names = [f"x{j}" for j in range(getattr(model, "n_features_in_", 0))] or list(clf.input_columns)
    rename = dict(zip(names, feature_names)) if feature_names is not None else {}
    if feature_names is not None and len(feature_names) != len(names):
        raise ValueError(f"feature_names must hold {len(names)} names (one per column of X), got {len(feature_names)}")
    labels = list(class_names) if class_names is not None else list(clf.classes)
    if len(labels) != len(clf.classes):
        raise ValueError(f"class_names must hold {len(clf.classes)} names, got {len(labels)}")
    layout = clf.layout()
    src, first, second, _ = unfold(layout)

    def col(c: str) -> str:
        return str(rename.get(c, c))

    def sides(f: Any) -> tuple[str, str]:
        if f.kind == "threshold":
            t = f"{f.threshold:.{decimals}f}"
            yes, no = f"{col(f.column)} <= {t}", f"{col(f.column)} >  {t}"
            rule = missing_rule(f)
            if rule is not None:
                yes, no = (yes + " or missing", no) if rule[0] else (yes, no + " or missing")
            return yes, no
        if f.kind == "binary":
            return f"{col(f.column)} == 1", f"{col(f.column)} != 1"
        if f.kind == "category":
            return f"{col(f.column)} == {f.category}", f"{col(f.column)} != {f.category}"
        text = f.name.split(" >= ")[0]
        for c in f.columns:
            text = text.replace(c, col(c))
        return f"{text} >= {f.threshold:.{decimals}f}", f"{text} <  {f.threshold:.{decimals}f}"

    bar, dash, lines = "|" + " " * spacing, "|" + "-" * spacing + " ", []

    def leaf(k: int, depth: int) -> None:
        i = int(src[k])
        text = f"class: {labels[int(layout.label[i])]}"
        if show_weights and weights is not None:
            text = "weights: [" + ", ".join(f"{v:.{decimals}f}" for v in weights[i]) + "] " + text
        lines.append(bar * depth + dash + text)

    def visit(k: int, depth: int) -> None:
        i = int(src[k])
        if layout.feature[i] < 0:
            leaf(k, depth)
            return
        if depth > max_depth:  # as scikit-learn: tests to depth max_depth, then the depth of what is cut
            lines.append(bar * depth + dash + f"truncated branch of depth {1 + _height(k, first, second)}")
            return
        yes, no = sides(clf.features[int(layout.feature[i])])
        lines.append(bar * depth + dash + yes)
        visit(int(first[k]), depth + 1)
        lines.append(bar * depth + dash + no)
        visit(int(second[k]), depth + 1)

    visit(0, 0)
    return "\n".join(lines) + "\n"


def _height(k: int, first: np.ndarray, second: np.ndarray) -> int:
    """The number of tests on the longest path below tree node ``k``."""
    if first[k] < 0:
        return 0
    return 1 + max(_height(int(first[k]), first, second), _height(int(second[k]), first, second))
