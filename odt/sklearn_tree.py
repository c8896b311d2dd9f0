"""odt classifiers as fitted scikit-learn trees (``ODTClassifier.to_sklearn``, and the
files of ``odtc export --to sklearn-json``).

Input: a ``Tree`` or ``Diagram`` with the class weights and row counts of its nodes (or
the JSON of ``compiler.classifiers.export.sklearn_tree``). Output: a fitted
``DecisionTreeClassifier`` whose ``tree_`` holds the classifier (a diagram unfolded), so
``plot_tree``, ``export_text``, SHAP's TreeExplainer, skl2onnx and sklearn2pmml read it;
when X has category columns, a ``Pipeline`` of a fitted ``ColumnTransformer`` (the
numeric columns as they are, then a ``OneHotEncoder`` over the training categories,
``handle_unknown="error"``: an unseen category is refused, as odt refuses it) and that
tree. It predicts as odt on every row odt predicts; ``predict_proba`` too, except at a
leaf whose label is not its training majority (see ``sklearn_tree``). Needs the
``sklearn`` extra.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from sklearn.tree import DecisionTreeClassifier
from sklearn.tree._tree import Tree as _SkTree

from odt.compiler.classifiers.export import FORMAT, sklearn_tree
from odt.compiler.errors import OdtError

_NODE = np.dtype({"names": ["left_child", "right_child", "feature", "threshold", "impurity", "n_node_samples",
                            "weighted_n_node_samples", "missing_go_to_left"],
                  "formats": ["<i8", "<i8", "<i8", "<f8", "<f8", "<i8", "<f8", "u1"]})


def to_sklearn(clf: Any, weights: np.ndarray | None = None, rows: np.ndarray | None = None,
               columns: Sequence[str] | None = None, frame: bool | None = None) -> Any:
    """The classifier as a fitted scikit-learn estimator (see the module docstring);
    ``columns``: the columns of X in order (default: the classifier's input columns)."""
    return from_sklearn_json(sklearn_tree(clf, weights, rows, columns), frame)


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
    classes = np.array(doc["classes"])
    n_features, n_classes = len(features), len(classes)
    nodes = np.zeros(arrays["node_count"], dtype=_NODE)
    for field, key in (("left_child", "children_left"), ("right_child", "children_right"), ("feature", "feature"),
                       ("threshold", "threshold"), ("impurity", "impurity"), ("n_node_samples", "n_node_samples"),
                       ("weighted_n_node_samples", "weighted_n_node_samples"),
                       ("missing_go_to_left", "missing_go_to_left")):
        nodes[field] = arrays[key]
    tree = _SkTree(n_features, np.array([n_classes], dtype=np.intp), 1)
    tree.__setstate__({"max_depth": arrays["max_depth"], "node_count": arrays["node_count"], "nodes": nodes,
                       "values": np.array(arrays["value"], dtype=np.float64)})
    est = DecisionTreeClassifier(max_depth=arrays["max_depth"] or None)
    est.tree_ = tree
    est.classes_ = classes
    est.n_classes_ = n_classes
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


def _with_encoder(est: DecisionTreeClassifier, features: list, columns: list[str], categorical: list[str],
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
