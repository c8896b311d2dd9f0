"""Model files (compiler/classifiers/io.py, schema.py; issue 24 item 6): a file that breaks
the schema ``odt.classifier/1`` is refused where it loads, with the JSON path of the wrong
field — never an IndexError later, nor a classifier that answers silently wrong — and a
model without the record of its training categories (``seen``) refuses a category it
cannot vouch for instead of routing it as if it had been seen."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import odt
from odt.cli import main
from odt.compiler.classifiers import Leaf, Split, Tree, load_classifier
from odt.compiler.classifiers.diagram import Diagram, DNode, leaf_ref
from odt.compiler.data import Feature
from odt.compiler.errors import OdtDataError, OdtError

FUZZ = Path(__file__).resolve().parents[1] / "fixtures" / "fuzz"
SMOKER = {"column": "smoker", "kind": "binary", "threshold": None, "category": None}
CLERK = {"column": "job", "kind": "category", "threshold": None, "category": "clerk"}
AGE = {"column": "age", "kind": "threshold", "threshold": 30.5, "category": None}
SEEN = {"categories": {"job": ["clerk", "driver", "nurse", "teacher"]}, "majority": 0}


def tree(**changes) -> dict:
    """A valid tree: job == clerk ? (smoker ? 1 : 0) : (age <= 30.5 ? 1 : 0)."""
    model = {"schema": "odt.classifier/1", "type": "tree", "classes": [0, 1], "features": [CLERK, SMOKER, AGE],
             "input_columns": ["age", "job", "smoker"],
             "root": {"feature": 0,
                      "if_true": {"feature": 1, "if_true": {"class": 1}, "if_false": {"class": 0}},
                      "if_false": {"feature": 2, "if_true": {"class": 1}, "if_false": {"class": 0}}},
             "seen": SEEN}
    model = copy.deepcopy(model)
    model.update(changes)
    return model


def diagram(**changes) -> dict:
    """A valid diagram: smoker ? (job == clerk ? 1 : 0) : (job == clerk ? 0 : 1), one node per layer side."""
    model = {"schema": "odt.classifier/1", "type": "diagram", "kind": "diagram", "classes": ["no", "yes"],
             "features": [SMOKER, CLERK], "input_columns": ["job", "smoker"], "root": {"node": 0},
             "nodes": [{"feature": 0, "layer": 0, "if_true": {"node": 1}, "if_false": {"node": 2}},
                       {"feature": 1, "layer": 1, "if_true": {"class": 1}, "if_false": {"class": 0}},
                       {"feature": 1, "layer": 1, "if_true": {"class": 0}, "if_false": {"class": 1}}],
             "seen": SEEN}
    model = copy.deepcopy(model)
    model.update(changes)
    return model


def edited(model: dict, path: str, value=None, delete: bool = False) -> dict:
    """``model`` with the field at ``path`` (keys and indices split by '/') set or deleted."""
    out = copy.deepcopy(model)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split("/")]
    node = out
    for p in parents:
        node = node[p]
    if delete:
        del node[last]
    else:
        node[last] = value
    return out


def load(tmp_path: Path, model: dict):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    return load_classifier(path)


def test_the_valid_models_load_and_predict(tmp_path):
    rows = {"age": [20, 40, 50], "job": ["clerk", "nurse", "teacher"], "smoker": [1, 0, 1]}
    assert load(tmp_path, tree()).predict(rows).tolist() == [1, 0, 0]
    assert load(tmp_path, diagram()).predict(rows).tolist() == ["yes", "yes", "no"]


# Each: the model, the JSON path the error names, and what it says. Every one of these was
# accepted before (or failed later, in predict, with a Python exception).
BROKEN = {
    # seen
    "seen majority out of range": (edited(tree(), "seen/majority", 5), "seen.majority", "is 5, out of range"),
    "seen majority negative": (edited(tree(), "seen/majority", -1), "seen.majority", "is -1, out of range"),
    "seen majority a boolean": (edited(tree(), "seen/majority", True), "seen.majority", "is a boolean (true)"),
    "seen majority missing": (edited(tree(), "seen/majority", delete=True), "seen", 'the key "majority" is missing'),
    "seen not an object": (tree(seen=[1]), "seen", "is a list; expected an object"),
    "seen categories a list": (edited(tree(), "seen/categories", ["clerk"]), "seen.categories", "is a list"),
    "seen category a number": (edited(tree(), "seen/categories/job/0", 3), "seen.categories.job[0]", "the number 3"),
    "seen lacks a tested category": (edited(tree(), "seen/categories/job", ["nurse"]), "seen.categories",
                                     "does not list category \"clerk\" of column \"job\", which features[0] tests"),
    "seen of another column": (edited(tree(), "seen/categories/jobb", ["x"]), "seen.categories.jobb",
                               'is not a column of "input_columns"'),
    "a misspelt key": (edited(tree(), "sen", SEEN), "sen", "is not a key of a model file"),
    # tree nodes
    "feature index true": (edited(tree(), "root/feature", True), "root.feature", "is a boolean (true)"),
    "class index false": (edited(tree(), "root/if_true/if_false/class", False), "root.if_true.if_false.class",
                          "is a boolean (false)"),
    "class index a float": (edited(tree(), "root/if_true/if_true/class", 1.0), "root.if_true.if_true.class",
                            "is the number 1.0; expected the index of one of the classes (0..1)"),
    "class given by its label": (edited(tree(classes=["no", "yes"]), "root/if_true/if_true/class", "yes"),
                                 "root.if_true.if_true.class", "is a string (\"yes\"); expected the index"),
    "class index negative": (edited(tree(), "root/if_false/if_false/class", -1), "root.if_false.if_false.class",
                             "is -1, out of range"),
    "feature index negative": (edited(tree(), "root/if_false/feature", -1), "root.if_false.feature",
                               "is -1, out of range: the index of one of the features is 0..2"),
    "node with class and feature": (edited(tree(), "root/if_true/class", 0), "root.if_true",
                                    'a node has both "class" (a leaf) and "feature" (a split)'),
    "leaf with a branch": (edited(tree(), "root/if_true/if_true/if_false", {"class": 0}), "root.if_true.if_true.if_false",
                           "is not a key of this object"),
    "split without a branch": (edited(tree(), "root/if_false/if_true", delete=True), "root.if_false",
                               'the key "if_true" is missing'),
    "node a number": (edited(tree(), "root/if_false", 1), "root.if_false", "is the number 1; expected a node"),
    # features
    "threshold a string": (edited(tree(), "features/2/threshold", "30"), "features[2].threshold",
                           "is a string (\"30\"); expected a finite number"),
    "threshold a boolean": (edited(tree(), "features/2/threshold", True), "features[2].threshold", "a boolean"),
    "binary with a threshold": (edited(tree(), "features/1/threshold", 0.5), "features[1].threshold",
                                "a binary feature has no threshold"),
    "category a number": (edited(tree(), "features/0/category", 7), "features[0].category", "the number 7"),
    "threshold with a stray category": (edited(tree(), "features/2/category", "old"), "features[2].category",
                                        "null or where a missing cell goes"),
    "feature column empty": (edited(tree(), "features/1/column", ""), "features[1].column", "a column name"),
    "feature column not an input": (edited(tree(), "input_columns", ["age", "job"]), "features[1]",
                                    'reads column "smoker", which is not in "input_columns"'),
    "feature unknown key": (edited(tree(), "features/1/thresold", 3), "features[1].thresold", "is not a key"),
    "oblique term short": (edited(tree(), "features/2", {"column": "age", "kind": "oblique", "threshold": 1.0,
                                                        "terms": [["age", None]]}),
                           "features[2].terms[0]", "a term is [column, category or null, coefficient]"),
    "oblique coefficient text": (edited(tree(), "features/2", {"column": "age", "kind": "oblique", "threshold": 1.0,
                                                              "terms": [["age", None, "2"]]}),
                                 "features[2].terms[0][2]", "expected a finite number"),
    # classes and columns
    "classes repeat": (tree(classes=[0, 0]), "classes[1]", "listed before"),
    "class label null": (tree(classes=[0, None]), "classes[1]", "a class label is a text, a number or a boolean"),
    "input column twice": (tree(input_columns=["age", "job", "smoker", "age"]), "input_columns[3]", "listed before"),
    # diagrams
    "diagram arc to class -1": (edited(diagram(), "nodes/1/if_true", {"class": -1}), "nodes[1].if_true.class",
                                "is -1, out of range"),
    "diagram root to class -1": (diagram(root={"class": -1}), "root.class", "is -1, out of range"),
    "diagram arc to node -1": (edited(diagram(), "nodes/0/if_true", {"node": -1}), "nodes[0].if_true.node",
                               "is -1, out of range"),
    "diagram arc with both keys": (edited(diagram(), "nodes/0/if_false", {"node": 2, "class": 0}),
                                   "nodes[0].if_false", "exactly one of"),
    "diagram arc upwards": (edited(diagram(), "nodes/2/if_true", {"node": 1}), "nodes[2].if_true.node",
                            "must come after it (nodes are in topological order: no cycle)"),
    "diagram root an integer": (diagram(root=0), "root", "is the number 0; expected an object"),
    "diagram layer negative": (edited(diagram(), "nodes/0/layer", -1), "nodes[0].layer", "a layer number"),
    "diagram layer not below": (edited(diagram(), "nodes/2/layer", 0), "nodes[0].if_false.node",
                                "is node 2 of layer 0, not below node 0's layer 0"),
    "diagram feature true": (edited(diagram(), "nodes/1/feature", True), "nodes[1].feature", "a boolean"),
    "diagram kind unknown": (diagram(kind="forest"), "kind", 'expected "diagram" or "bdd"'),
    "bdd two features in a layer": (edited(diagram(kind="bdd"), "nodes/2/feature", 0), "nodes[2].feature",
                                    "an ordered BDD tests one feature per layer"),
    "tree with nodes": (tree(nodes=[]), "nodes", "is not a key of a model file"),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_model_that_breaks_the_schema_is_refused_naming_the_field(tmp_path, name):
    model, where, what = BROKEN[name]
    with pytest.raises(OdtError) as info:
        load(tmp_path, model)
    assert f"model file '{tmp_path / 'm.json'}' is malformed: {where}: " in info.value.message
    assert what in info.value.message


def test_a_seen_majority_out_of_range_was_an_index_error_or_the_last_class(tmp_path, capsys):
    shutil.copy(FUZZ / "data.csv", tmp_path / "data.csv")
    (tmp_path / "new.csv").write_text("age,job,smoker,w,rid\n30,pilot,1,1,r9\n")
    for majority in (5, -1):
        (tmp_path / "m.json").write_text(json.dumps(edited(tree(), "seen/majority", majority)))
        assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "new.csv"), "--unknown", "majority"]) == 1
        out, err = capsys.readouterr()
        assert "seen.majority: is " in err and "internal error" not in err and out == ""


# ---------------------------------------------------------------- a model without `seen`

ROWS = {"age": [20, 40], "job": ["clerk", "pilot"], "smoker": [1, 0]}


@pytest.mark.parametrize("unknown", ["error", "majority"])
def test_without_seen_a_category_the_model_does_not_name_is_refused(tmp_path, unknown):
    model = load(tmp_path, edited(tree(), "seen", delete=True))
    assert not model.seen.recorded
    with pytest.raises(OdtDataError, match="column 'job', row 2") as info:
        model.predict(ROWS, unknown=unknown)
    assert "category 'pilot' is not one the classifier tests" in info.value.message
    assert 'a model file without "seen"' in info.value.message
    assert "solve the program again" in (info.value.diagnostics[0].hint or "")


def test_without_seen_the_categories_the_model_tests_are_predicted(tmp_path):
    model = load(tmp_path, edited(diagram(), "seen", delete=True))
    assert model.predict({"job": ["clerk", "clerk"], "smoker": [1, 0]}).tolist() == ["yes", "no"]
    with pytest.raises(OdtDataError, match="category 'nurse' is not one the classifier tests"):
        model.predict({"job": ["clerk", "nurse"], "smoker": [1, 0]})


def test_without_seen_a_model_of_numbers_only_predicts_as_before(tmp_path):
    model = tree(features=[SMOKER, AGE], input_columns=["age", "smoker"],
                 root={"feature": 0, "if_true": {"class": 1}, "if_false": {"class": 0}})
    del model["seen"]
    assert load(tmp_path, model).predict({"age": [1, 2], "smoker": [1, 0]}).tolist() == [1, 0]


def test_odtc_predict_refuses_for_a_model_without_seen(tmp_path, capsys):
    (tmp_path / "m.json").write_text(json.dumps(edited(tree(), "seen", delete=True)))
    (tmp_path / "new.csv").write_text("age,job,smoker\n20,clerk,1\n40,pilot,0\n")
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "new.csv")]) == 1
    err = capsys.readouterr().err
    assert "new.csv: column 'job', row 2 (line 3): category 'pilot' is not one the classifier tests" in err


def test_a_classifier_built_in_python_without_seen_refuses_too():
    clerk = Feature("job", "category", category="clerk")
    t = Tree((clerk,), (0, 1), Split(0, Leaf(1), Leaf(0)), ("job",))
    with pytest.raises(OdtDataError, match="category 'pilot' is not one the classifier tests"):
        t.predict({"job": ["pilot"]})
    d = Diagram((clerk,), (0, 1), (DNode(0, leaf_ref(1), leaf_ref(0), 0),), 0, ("job",))
    with pytest.raises(OdtDataError, match="category 'pilot' is not one the classifier tests"):
        d.predict({"job": ["pilot"]})
    assert d.unfold().predict({"job": ["clerk"]}).tolist() == [1]


def test_unfolding_a_diagram_keeps_its_record_of_training(tmp_path):
    d = load(tmp_path, diagram())
    assert d.unfold().seen == d.seen
    assert d.unfold().predict({"job": ["pilot"], "smoker": [1]}, unknown="majority").tolist() == ["no"]


@pytest.mark.parametrize("model, backend", [("tree(depth <= 2)", "dp"), ("diagram(widths = [1, 2])", "maxsat"),
                                            ("bdd(depth = 2)", "dp")])
def test_every_solved_model_passes_the_schema(tmp_path, model, backend):
    data = FUZZ / "data.csv"
    res = odt.compile(f'data "{data}" {{ target class weight w id rid }}\nmodel {model}\n').solve(backend=backend)
    res.classifier.save(tmp_path / "m.json")
    again = load_classifier(tmp_path / "m.json")
    assert again.to_json() == res.classifier.to_json()
    assert np.array_equal(again.predict(data), res.classifier.predict(data))
