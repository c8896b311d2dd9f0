"""Exports (issue 28 item 4): ``to_onnx`` runs in onnxruntime and predicts exactly as odt
on every training row — trees, diagrams and BDDs, category tests, learned missing
directions, oblique tests —, and ``odtc export`` writes ONNX and scikit-learn's tree
arrays from a saved model."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import odt
from odt.cli import main
from odt.compiler.classifiers import load_classifier
from odt.compiler.classifiers.onnx import onnx_inputs
from odt.sklearn import ODTClassifier

ort = pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "fixtures" / "data"
IRIS = ROOT / "examples" / "data" / "iris.csv"


def _run(model, rows) -> tuple[np.ndarray, np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString())
    label, proba = session.run(["label", "probabilities"], onnx_inputs(model, rows))
    return label, proba


@pytest.fixture(scope="module")
def bmi() -> tuple[pd.DataFrame, pd.Series]:
    df = pd.read_csv(DATA / "bmi.csv")
    df["Gender"] = df["Gender"].astype("category")
    return df.drop(columns="class"), df["class"]


PROGRAMS = {
    "tree": dict(max_depth=3, constraints="every path: Gender before Height"),
    "diagram": dict(program="model diagram(widths = [1, 2, 2])\nminimize errors", backend="cp", time_limit=60),
    "bdd": dict(program="model bdd(depth = 3)\nminimize errors"),
}


@pytest.mark.parametrize("kind", list(PROGRAMS))
def test_onnx_predicts_exactly_as_odt_on_every_training_row(bmi, kind):
    X, y = bmi
    est = ODTClassifier(**PROGRAMS[kind]).fit(X, y)
    assert any(f.kind == "category" for f in est.classifier_.features) or kind != "tree"
    label, proba = _run(est.to_onnx(), X)
    np.testing.assert_array_equal(label, est.predict(X))
    np.testing.assert_array_equal(proba, est.predict_proba(X))  # the same doubles, not just close


def test_onnx_keeps_learned_missing_directions_and_numeric_thresholds_exactly():
    hep = pd.read_csv(DATA / "hepatitis.csv", na_values="?")
    X, y = hep.drop(columns="class"), hep["class"]
    est = ODTClassifier(max_depth=3).fit(X, y)
    assert "(missing:" in est.classifier_.to_text() and X.isna().any(axis=1).sum() > 50
    model = est.to_onnx()
    assert [i.name for i in model.graph.input] == ["X"]  # numbers only: one double matrix, X as predict takes it
    label, proba = _run(model, X)
    np.testing.assert_array_equal(label, est.predict(X))
    np.testing.assert_array_equal(proba, est.predict_proba(X))
    cuts = sorted({f.threshold for f in est.classifier_.features if f.kind == "threshold"})
    f = est.classifier_.features[0]
    on_the_cut = X.head(2).copy()
    on_the_cut[f.column] = [f.threshold, np.nextafter(f.threshold, np.inf)]  # x <= t, decided in float64
    np.testing.assert_array_equal(_run(model, on_the_cut)[0], est.predict(on_the_cut))
    assert cuts


def test_an_unseen_category_gets_the_training_majority_in_onnx(bmi):
    X, y = bmi
    est = ODTClassifier(max_depth=2, unknown="majority").fit(X, y)
    new = X.head(3).copy()
    new["Gender"] = new["Gender"].astype(object)
    new.loc[new.index[1], "Gender"] = "Other"
    label, proba = _run(est.to_onnx(), new)
    np.testing.assert_array_equal(label, est.predict(new))
    np.testing.assert_allclose(proba, est.predict_proba(new))


def test_oblique_tests_and_a_single_leaf_export_too():
    df = pd.read_csv(ROOT / "examples" / "data" / "diagonal.csv")
    X, y = df.drop(columns="class"), df["class"]
    est = ODTClassifier(program="model tree(depth <= 1) { splits multivariate }\nminimize errors",
                        backend="milp", time_limit=60).fit(X, y)
    assert est.classifier_.features[0].kind == "oblique"
    np.testing.assert_array_equal(_run(est.to_onnx(), X)[0], est.predict(X))
    leaf = ODTClassifier(max_depth=0).fit(X, y)
    label, proba = _run(leaf.to_onnx(), X)
    np.testing.assert_array_equal(label, leaf.predict(X))
    np.testing.assert_allclose(proba, leaf.predict_proba(X))


def test_a_solved_classifier_exports_with_the_class_frequencies_of_rows():
    res = odt.compile(f'data "{IRIS}" {{ target class }}\nmodel bdd(depth = 2)\nminimize errors').solve()
    df = pd.read_csv(IRIS)
    clf = res.classifier
    rows = df[list(clf.input_columns)]
    label, proba = _run(clf.to_onnx(df), rows)
    np.testing.assert_array_equal(label, clf.predict(df))
    assert label.dtype == object and set(label) <= set(clf.classes)  # text labels stay text
    assert ((proba > 0) & (proba < 1)).any()  # frequencies, not one-hot labels
    one_hot = _run(clf.to_onnx(), rows)[1]  # without rows: 1 for the label
    assert set(np.unique(one_hot)) == {0.0, 1.0}


def test_odtc_export_writes_onnx_and_scikit_learn_arrays(tmp_path, capsys):
    from odt.sklearn_tree import load_sklearn_json

    model = tmp_path / "m.json"
    assert main(["solve", str(ROOT / "examples" / "sweep_iris.odt"), "-o", str(model), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["export", str(model), "--to", "onnx"]) == 1
    assert "--to onnx writes a binary file: give it a name with -o" in capsys.readouterr().err
    out = tmp_path / "m.onnx"
    assert main(["export", str(model), "--to", "onnx", "--data", str(IRIS), "-o", str(out)]) == 0
    import onnx

    df = pd.read_csv(IRIS)
    clf = load_classifier(model)
    onnx_model = onnx.load(out)
    np.testing.assert_array_equal(_run(onnx_model, df[list(clf.input_columns)])[0], clf.predict(df))
    arrays = tmp_path / "m.sklearn.json"
    assert main(["export", str(model), "--to", "sklearn-json", "--data", str(IRIS), "-o", str(arrays)]) == 0
    doc = json.loads(arrays.read_text())
    assert doc["format"] == "odt.sklearn-tree/1" and doc["tree_"]["node_count"] == 2 * clf.n_nodes + 1
    assert doc["tree_"]["n_node_samples"][0] == len(df)
    tree = load_sklearn_json(arrays)
    assert (tree.predict(df[list(clf.input_columns)]) == clf.predict(df)).all()
    assert main(["export", str(model), "--to", "sklearn-json", "--data", str(IRIS), "--target", "nope"]) == 1
    assert "no column 'nope'" in capsys.readouterr().err
