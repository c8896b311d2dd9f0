"""odt inside Python (E4): DataFrames and arrays in, plain-data classifiers out."""
from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

import odt
from odt.compiler.classifiers import Tree
from odt.compiler.errors import OdtDataError, OdtError

XOR_AND = {
    "a": [0, 0, 1, 1, 0, 1, 1, 0],
    "b": [0, 1, 0, 1, 1, 1, 0, 0],
    "c": [1, 1, 1, 1, 0, 0, 0, 0],
}
XOR_AND["class"] = [int((a ^ b) and c) for a, b, c in zip(XOR_AND["a"], XOR_AND["b"], XOR_AND["c"])]


def test_compile_a_string_with_a_dict_of_columns():
    prog = odt.compile("model tree(depth <= 3)\nminimize errors", data=XOR_AND)
    res = prog.solve()
    assert res.status == "optimal" and res.objective == 0 and res.verified
    assert list(res.classifier.predict(XOR_AND)) == XOR_AND["class"]


def test_numpy_arrays_with_a_target():
    X = np.array([XOR_AND["a"], XOR_AND["b"], XOR_AND["c"]]).T
    y = np.array(XOR_AND["class"])
    res = odt.compile("model tree(depth <= 1)\nminimize errors", data=X, target=y).solve()
    assert res.verified and res.objective == 2  # one split cannot express (a xor b) and c
    assert res.classifier.predict(X).shape == (8,)


def test_pandas_dataframe_with_strings_and_numbers():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"color": ["red", "blue", "red", "green", "blue", "green"],
                       "size": [1.5, 2.0, 3.5, 0.5, 2.5, 4.0],
                       "label": ["yes", "no", "yes", "no", "no", "yes"]})
    res = odt.compile("data { target label }\nmodel tree(depth <= 2)\nminimize errors", data=df).solve()
    assert res.objective == 0 and res.verified
    assert list(res.classifier.predict(df)) == list(df["label"])


def test_classifiers_pickle_and_round_trip_json_exactly():
    res = odt.compile("model tree(depth <= 2)\nminimize errors + 0.1 * nodes", data=XOR_AND).solve()
    tree = res.classifier
    assert pickle.loads(pickle.dumps(tree)) == tree
    text = json.dumps(tree.to_json())
    back = Tree.from_json(json.loads(text))
    assert back == tree and json.dumps(back.to_json()) == text
    assert back.to_json()["schema"] == "odt.classifier/1"


def test_weights_change_the_optimum():
    data = {"a": [0, 0, 1, 1], "class": [0, 1, 0, 1], "w": [1, 5, 1, 1]}
    res = odt.compile("data { target class weight w }\nmodel tree(depth <= 0)\nminimize errors", data=data).solve()
    assert res.objective == 2  # a single leaf predicting 1 misclassifies weight 1 + 1


def test_maximize_accuracy_reports_the_maximum():
    res = odt.compile("model tree(depth <= 1)\nmaximize accuracy", data=XOR_AND).solve()
    assert res.objective == pytest.approx(6 / 8) and res.train_errors == 2


def test_lexicographic_errors_then_nodes():
    res = odt.compile("model tree(depth <= 3)\nminimize errors then nodes", data=XOR_AND).solve()
    assert res.objective_levels[0] == 0 and res.objective_levels[1] == res.classifier.n_nodes
    smaller = odt.compile("model tree(depth <= 3, nodes <= 2)\nminimize errors", data=XOR_AND).solve()
    assert smaller.objective > 0 and res.classifier.n_nodes >= 3


def test_errors_bounded_as_a_constraint():
    res = odt.compile("model tree(depth <= 3)\nminimize nodes\nsubject to { errors <= 1 }", data=XOR_AND).solve()
    assert res.verified and res.train_errors <= 1
    assert res.constraints[0].holds


def test_group_errors_in_the_objective():
    prog = odt.compile("group g = c == 1\nmodel tree(depth <= 1)\nminimize errors(g) + 0.01 * errors", data=XOR_AND)
    res = prog.solve()
    assert res.verified


def test_bad_data_names_the_column_and_row():
    with pytest.raises(OdtDataError, match=r"column 'a', row 2: missing value"):
        odt.compile("model tree(depth <= 1)", data={"a": [1.0, float("nan")], "class": [0, 1]})


def test_predict_with_a_missing_column_is_a_clear_error():
    res = odt.compile("model tree(depth <= 3)\nminimize errors", data=XOR_AND).solve()
    assert res.classifier.n_nodes > 0
    with pytest.raises(OdtError, match="missing"):
        res.classifier.predict({"z": [1]})
