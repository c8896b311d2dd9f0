"""``ODTRegressor`` as a drop-in for scikit-learn's ``DecisionTreeRegressor`` (issue 26
item 4): ``apply``, ``decision_path``, the node statistics, ``feature_importances_`` and
``to_sklearn`` — cross-checked against scikit-learn's own tree holding the same tree
(scikit-learn recomputes the importances from ``tree_``'s impurities and weighted
counts) — and ``odtc export --to sklearn-json`` of a regression tree, on the mpg data."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeRegressor

from odt.cli import main
from odt.compiler.classifiers import load_classifier
from odt.sklearn import ODTRegressor

ROOT = Path(__file__).resolve().parents[2]
MPG = ROOT / "examples" / "data" / "mpg.csv"
NUMERIC = ["displ", "year", "cyl"]


@pytest.fixture(scope="module")
def mpg() -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """mpg's numeric columns and two category columns, highway mpg, integer weights."""
    df = pd.read_csv(MPG)
    X = df[NUMERIC + ["drv", "class"]].copy()
    for c in ("drv", "class"):
        X[c] = X[c].astype("category")
    w = np.random.default_rng(7).integers(1, 4, len(df)).astype(float)
    return X, df["hwy"].to_numpy(dtype=float), w


@pytest.fixture(scope="module")
def fitted(mpg) -> dict[str, tuple[ODTRegressor, pd.DataFrame]]:
    X, y, w = mpg
    return {
        "numeric": (ODTRegressor(max_depth=2).fit(X[NUMERIC], y), X[NUMERIC]),
        "categories-weighted": (ODTRegressor(max_depth=2).fit(X, y, sample_weight=w), X),
        "absolute-weighted": (ODTRegressor(criterion="absolute_error", max_depth=2).fit(X, y, sample_weight=w), X),
    }


KINDS = ["numeric", "categories-weighted", "absolute-weighted"]


def _tree(same):
    return same[-1] if isinstance(same, Pipeline) else same


def _per_column(same, columns: list[str]) -> np.ndarray:
    """scikit-learn's importances summed over the one-hot columns of each column of X."""
    tree = _tree(same)
    if not isinstance(same, Pipeline):
        return tree.feature_importances_
    names = list(same[0].get_feature_names_out())
    return np.array([sum(v for n, v in zip(names, tree.feature_importances_) if n == c or n.startswith(f"{c}_"))
                     for c in columns])


@pytest.mark.parametrize("kind", KINDS)
def test_to_sklearn_predicts_exactly_as_odt(fitted, kind):
    est, X = fitted[kind]
    same = est.to_sklearn()
    assert isinstance(same, Pipeline) == (kind != "numeric")  # category columns: one-hot encoded first
    assert isinstance(_tree(same), DecisionTreeRegressor)
    assert _tree(same).criterion == est.criterion_ == est.criterion
    np.testing.assert_array_equal(same.predict(X), est.predict(X))
    assert len(np.unique(est.predict(X))) == est.get_n_leaves() == _tree(same).get_n_leaves()


@pytest.mark.parametrize("kind", KINDS)
def test_apply_leaves_are_scikit_learns_leaves_partition_wise(fitted, kind):
    est, X = fitted[kind]
    same = est.to_sklearn()
    ours = est.apply(X)
    theirs = _tree(same).apply(same[0].transform(X) if isinstance(same, Pipeline) else X)
    pairs = set(zip(ours.tolist(), theirs.tolist()))
    assert len(pairs) == len(set(ours.tolist())) == len(set(theirs.tolist())) == est.get_n_leaves()
    layout = est.classifier_.layout()
    assert set(ours.tolist()) <= set(layout.terminals.tolist())
    tree_ = _tree(same).tree_
    np.testing.assert_array_equal(est.n_node_samples_[ours], tree_.n_node_samples[theirs])
    np.testing.assert_allclose(est.weighted_n_node_samples_[ours], tree_.weighted_n_node_samples[theirs])
    np.testing.assert_allclose(est.node_impurity_[ours], tree_.impurity[theirs])
    np.testing.assert_array_equal(est.node_values_[ours], est.predict(X))


@pytest.mark.parametrize("kind", KINDS)
def test_each_leaf_predicts_the_value_of_least_loss_on_its_rows(mpg, fitted, kind):
    """The leaf's loss per unit weight is its impurity: its value is the rows' mean (squared
    error) or a weighted median (absolute error)."""
    _, y, w = mpg
    est, X = fitted[kind]
    w = np.ones(len(y)) if kind == "numeric" else w
    leaves = est.apply(X)
    for leaf in np.unique(leaves):
        at = leaves == leaf
        dev = y[at] - est.node_values_[leaf]
        loss = dev ** 2 if est.criterion_ == "squared_error" else np.abs(dev)
        assert np.average(loss, weights=w[at]) == pytest.approx(est.node_impurity_[leaf])
        for other in (est.node_values_[leaf] - 0.5, est.node_values_[leaf] + 0.5):  # no better value nearby
            dev = y[at] - other
            worse = dev ** 2 if est.criterion_ == "squared_error" else np.abs(dev)
            assert np.average(worse, weights=w[at]) >= est.node_impurity_[leaf] - 1e-9


@pytest.mark.parametrize("kind", KINDS)
def test_feature_importances_are_what_scikit_learn_computes_from_the_exported_tree(fitted, kind):
    est, X = fitted[kind]
    imp = est.feature_importances_
    assert imp.shape == (X.shape[1],) and (imp >= 0).all()
    assert imp.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(imp, _per_column(est.to_sklearn(), list(X.columns)), rtol=1e-9, atol=1e-12)
    used = est.classifier_.features_used()
    assert {c for c, v in zip(X.columns, imp) if v > 0} == used


def test_node_statistics_are_the_weighted_mean_and_variance_of_the_training_rows(mpg, fitted):
    X, y, w = mpg
    est, _ = fitted["categories-weighted"]
    path = est.decision_path(X).toarray().astype(bool)
    for i in range(path.shape[1]):
        at = path[:, i]
        assert est.n_node_samples_[i] == at.sum()
        assert est.weighted_n_node_samples_[i] == pytest.approx(w[at].sum())
        mean = np.average(y[at], weights=w[at])
        assert est.node_values_[i] == pytest.approx(mean)
        assert est.node_impurity_[i] == pytest.approx(np.average((y[at] - mean) ** 2, weights=w[at]))


def test_the_root_impurity_and_weight_are_what_scikit_learn_fits_on_the_same_rows(mpg):
    """The root's impurity and weighted count are scikit-learn's own for the same rows."""
    X, y, w = mpg
    est = ODTRegressor(max_depth=1).fit(X[NUMERIC], y, sample_weight=w)
    cart = DecisionTreeRegressor(max_depth=1).fit(X[NUMERIC], y, sample_weight=w)
    assert est.node_impurity_[0] == pytest.approx(cart.tree_.impurity[0])
    assert est.weighted_n_node_samples_[0] == pytest.approx(cart.tree_.weighted_n_node_samples[0])


@pytest.mark.parametrize("kind", KINDS)
def test_decision_path_runs_from_the_root_to_the_leaf_depth_plus_one_nodes(fitted, kind):
    est, X = fitted[kind]
    layout = est.classifier_.layout()
    leaves = est.apply(X)
    path = est.decision_path(X)
    assert path.shape == (len(X), layout.n_nodes) and path.format == "csr"
    assert est.get_n_leaves() == 2 ** est.get_depth()  # mpg's depth-2 optimum is a full tree
    assert (np.diff(path.indptr) == est.get_depth() + 1).all()
    for i in range(0, len(X), 29):
        nodes = path.indices[path.indptr[i]:path.indptr[i + 1]]
        assert nodes[0] == 0 and nodes[-1] == leaves[i]
        for a, b in zip(nodes, nodes[1:]):
            assert b in (layout.yes[a], layout.no[a])


def test_a_single_leaf_has_no_importance_and_exports_as_one_node(mpg):
    X, y, _ = mpg
    for est in (ODTRegressor(max_depth=0).fit(X[NUMERIC], y), ODTRegressor().fit(X[NUMERIC], np.full(len(y), 2.5))):
        assert (est.feature_importances_ == 0).all()  # as scikit-learn's single-leaf tree
        assert est.n_node_samples_.tolist() == [len(y)] and (est.apply(X[NUMERIC]) == 0).all()
        same = est.to_sklearn()
        assert same.tree_.node_count == 1 and (same.feature_importances_ == 0).all()
        np.testing.assert_array_equal(same.predict(X[NUMERIC]), est.predict(X[NUMERIC]))


def test_a_fitted_regressor_draws_leaf_values_and_rows_in_a_notebook(fitted):
    est, _ = fitted["numeric"]
    svg = est._repr_svg_()
    ET.fromstring(svg)  # well-formed
    leaf = int(est.classifier_.layout().terminals[0])
    assert f"{est.node_values_[leaf]:.6g}" in svg and f"{est.n_node_samples_[leaf]} samples" in svg
    bundle = est._repr_mimebundle_()
    assert bundle["image/svg+xml"] == svg and "status <b>optimal</b>" in bundle["text/html"]
    assert ODTRegressor()._repr_svg_() is None


def test_odtc_exports_a_regression_tree_as_scikit_learn_regressor_arrays(tmp_path, capsys):
    from odt.sklearn_tree import load_sklearn_json

    model = tmp_path / "m.json"
    assert main(["solve", str(ROOT / "examples" / "regression_mpg.odt"), "-o", str(model), "--quiet"]) == 0
    capsys.readouterr()
    arrays = tmp_path / "m.sklearn.json"
    assert main(["export", str(model), "--to", "sklearn-json", "--data", str(MPG), "-o", str(arrays)]) == 0
    doc = json.loads(arrays.read_text())
    assert doc["task"] == "regression" and doc["criterion"] == "squared_error" and "classes" not in doc
    assert doc["tree_"]["n_node_samples"][0] == 234
    df = pd.read_csv(MPG)
    clf = load_classifier(model)
    same = load_sklearn_json(arrays)
    assert isinstance(_tree(same), DecisionTreeRegressor)
    np.testing.assert_array_equal(same.predict(df[list(clf.input_columns)]), clf.predict(df))
    assert _tree(same).tree_.value[0, 0, 0] == pytest.approx(df["hwy"].mean())  # the root: the mean of every row
    assert main(["export", str(model), "--to", "onnx", "-o", str(tmp_path / "m.onnx")]) == 1
    assert "a regression tree has no ONNX export yet" in capsys.readouterr().err


@pytest.mark.parametrize("criterion", ["squared_error", "absolute_error"])
def test_to_sklearn_keeps_learned_missing_directions(mpg, criterion):
    X, y, _ = mpg
    X = X[NUMERIC].copy()
    X.loc[X.index[::7], "displ"] = np.nan  # every seventh car without its displacement
    est = ODTRegressor(max_depth=2, criterion=criterion).fit(X, y)
    assert "(missing:" in est.classifier_.to_text()
    np.testing.assert_array_equal(est.to_sklearn().predict(X), est.predict(X))  # rows with NaN included
