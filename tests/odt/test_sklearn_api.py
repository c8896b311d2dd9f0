"""``ODTClassifier`` as a drop-in for scikit-learn's trees (issue 28): input without
silent guesses, scikit-learn's parameter validation, and the tree inspection API
(``feature_importances_``, ``get_depth``, ``get_n_leaves``, ``apply``, ``decision_path``,
``predict_log_proba``) for trees, diagrams and BDDs."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import DataConversionWarning
from sklearn.utils._param_validation import InvalidParameterError

import odt
from odt.sklearn import ODTClassifier

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "fixtures" / "data"
IRIS = ROOT / "examples" / "data" / "iris.csv"


@pytest.fixture(scope="module")
def iris() -> tuple[np.ndarray, np.ndarray]:
    df = pd.read_csv(IRIS)
    return df.drop(columns="class").to_numpy(), df["class"].to_numpy()


@pytest.fixture(scope="module")
def bmi() -> tuple[pd.DataFrame, pd.Series]:
    df = pd.read_csv(DATA / "bmi.csv")
    df["Gender"] = df["Gender"].astype("category")
    return df.drop(columns="class"), df["class"]


# ---------------------------------------------------------------- item 1: no silent guesses

def test_an_object_array_of_numbers_is_numbers_as_check_array_makes_it(iris):
    X, y = iris
    as_floats = ODTClassifier(max_depth=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no warning: nothing is guessed
        as_objects = ODTClassifier(max_depth=2).fit(X.astype(object), y)
    assert as_objects.score(X, y) == as_floats.score(X, y) >= 0.96  # was 0.61: every column categorical
    assert {f.kind for f in as_objects.classifier_.features} == {"threshold"}
    assert as_objects.classifier_.to_text() == as_floats.classifier_.to_text()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"]).astype(object)  # an object DataFrame column too
    assert ODTClassifier(max_depth=2).fit(frame, y).classifier_.to_text() == \
        as_floats.classifier_.to_text().replace("x2", "c").replace("x3", "d")


def test_numbers_written_as_text_are_categories_with_a_warning_naming_the_column(iris):
    X, y = iris
    frame = pd.DataFrame({"petal": X[:, 3].astype(str), "sepal": X[:, 0]})
    with pytest.warns(DataConversionWarning, match="column 'petal' holds only numbers written as text, so it is "
                                                   r"treated as categorical .* convert it to numbers") as seen:
        est = ODTClassifier(max_depth=1).fit(frame, y)
    assert len(seen) == 1  # 'sepal' is numeric: no warning for it
    assert {f.kind for f in est.classifier_.features} <= {"category", "threshold"}


def test_a_program_without_a_target_on_data_without_a_class_column_is_an_error_naming_the_columns():
    df = pd.read_csv(IRIS)
    moved = df[["class", *df.columns[:-1]]].rename(columns={"class": "species"})  # the label first
    with pytest.raises(odt.OdtError, match=r"no target column: the data block names none and no column is named "
                                           r"'class' \(the columns are species, Sepal_length, .*Petal_width\)") as e:
        odt.compile("model tree(depth <= 2)", data=moved)  # was: a 22-class model of Petal_width
    assert 'target="<column>"' in str(e.value)  # said the Python way too
    prog = odt.compile("model tree(depth <= 2)", data=moved, target="species")
    assert prog.dataset.target == "species" and len(prog.dataset.classes) == 3
    with pytest.raises(odt.OdtError, match="target='specis' is not a column of the data") as typo:
        odt.compile("model tree(depth <= 2)", data=moved, target="specis")
    assert "did you mean 'species'" in str(typo.value)
    with pytest.raises(odt.OdtError, match="names the target 'species', and target='Sepal_length' was passed too"):
        odt.compile("data { target species }\nmodel tree(depth <= 2)", data=moved, target="Sepal_length")
    assert odt.compile("model tree(depth <= 1)", data=df).dataset.target == "class"  # the documented default


def test_a_data_file_without_target_or_class_column_is_an_error_at_the_data_block(tmp_path):
    df = pd.read_csv(IRIS).rename(columns={"class": "species"})
    df.to_csv(tmp_path / "iris.csv", index=False)
    (tmp_path / "p.odt").write_text('data "iris.csv" { }\nmodel tree(depth <= 1)\n')
    with pytest.raises(odt.OdtError) as e:
        odt.compile_file(tmp_path / "p.odt")
    text = e.value.render()
    assert "p.odt:1:1: error: iris.csv: no target column" in text and "Petal_width, species" in text
    assert "data { target <column> }" in text and "odt.compile" not in text  # the program's language


# ---------------------------------------------------------------- item 2: parameter validation

BAD = [  # (parameter, a bad type, a bad value)
    ("max_depth", 2.5, -1), ("max_leaves", "4", 0), ("max_nodes", 1.5, -2), ("alpha", "0.1", -0.5),
    ("min_samples_leaf", "5", 0), ("constraints", 3, None), ("program", 7, None), ("params", [("d", 1)], None),
    ("backend", 1, "gurobi"), ("time_limit", "60", -5), ("missing", 0, "ignore"), ("unknown", None, "skip"),
    ("objective", 1, "accuracy"), ("class_costs", 3, None),
]


@pytest.mark.parametrize("name,bad_type,bad_value", BAD, ids=[b[0] for b in BAD])
def test_every_parameter_is_validated_the_scikit_learn_way(iris, name, bad_type, bad_value):
    X, y = iris
    assert set(ODTClassifier().get_params()) == {b[0] for b in BAD}  # every constructor argument is covered
    for value in (bad_type, bad_value):
        if value is None and name in ("constraints",):
            continue
        if value is None and name in ("program", "params", "class_costs"):
            continue  # None is their default
        with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of ODTClassifier must be") as e:
            ODTClassifier(**{name: value}).fit(X, y)
        assert isinstance(e.value, ValueError) and isinstance(e.value, TypeError)


def test_refusals_are_value_errors_before_any_program_is_generated(iris):
    X, y = iris
    for kwargs in ({"max_depth": True}, {"time_limit": float("inf")}, {"alpha": float("nan")},
                   {"min_samples_leaf": 1.0}, {"max_depth": -3}):
        with pytest.raises(ValueError) as e:
            ODTClassifier(**kwargs).fit(X, y)
        assert "<ODTClassifier>" not in str(e.value)  # not reported inside the generated program


def test_max_depth_none_means_the_size_limits_bound_the_depth(iris):
    X, y = iris
    with pytest.raises(InvalidParameterError, match="'max_depth' parameter of ODTClassifier is None .* needs "
                                                     "max_leaves or max_nodes"):
        ODTClassifier(max_depth=None).fit(X, y)
    est = ODTClassifier(max_depth=None, max_leaves=3).fit(X, y)
    assert est.get_n_leaves() == 3 and "param max_depth = 2" in est.program_text_
    assert ODTClassifier(max_depth=None, max_nodes=2, max_leaves=4).fit(X, y).program_text_.startswith(
        "param max_depth = 2")


def test_min_samples_leaf_as_a_fraction_of_the_rows(iris):
    X, y = iris
    est = ODTClassifier(max_depth=2, min_samples_leaf=0.2).fit(X, y)
    assert "every leaf: samples >= 30" in est.program_text_  # ceil(0.2 * 150)
    assert est.node_counts_[est.classifier_.layout().terminals].sum(axis=1).min() >= 30


def test_missing_values_learn_a_direction_by_default_as_scikit_learn_trees_do():
    hep = pd.read_csv(DATA / "hepatitis.csv", na_values="?")
    X, y = hep.drop(columns="class"), hep["class"]
    est = ODTClassifier(max_depth=2).fit(X, y)
    assert est.get_params()["missing"] == "learn" and est.status_ == "optimal"
    assert est.score(X, y) == ODTClassifier(max_depth=2, missing="learn").fit(X, y).score(X, y)
    with pytest.raises(ValueError, match="missing value"):
        ODTClassifier(max_depth=2, missing="error").fit(X, y)
    iris = pd.read_csv(IRIS)
    clean = ODTClassifier(max_depth=2).fit(iris.drop(columns="class"), iris["class"])
    row = iris.drop(columns="class").head(1).assign(Petal_length=np.nan)
    with pytest.raises(ValueError, match="(?s)column .Petal_length., row 1: missing .* no training row had a missing "
                                         "value in this column"):
        clean.predict(row)  # refused, not routed by a guess


def test_a_class_left_without_rows_by_missing_drop_keeps_every_label_in_place():
    X = np.array([[0.0], [1.0], [2.0], [np.nan], [3.0], [4.0]])
    y = np.array(["a", "a", "c", "b", "c", "c"])  # the only 'b' row has a missing cell
    est = ODTClassifier(max_depth=1, missing="drop").fit(X, y)
    assert list(est.classes_) == ["a", "b", "c"] and est.classifier_.classes == ("a", "b", "c")
    assert list(est.predict(X[[0, 1, 2, 4, 5]])) == ["a", "a", "c", "c", "c"]  # was: 'c' read as class 1, 'b'
    assert est.predict_proba(X[[0, 2]]).round(2).tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]


# ---------------------------------------------------------------- item 3: the tree API

def _models(bmi):
    X, y = bmi
    return X, y, {
        "tree": ODTClassifier(max_depth=3).fit(X, y),
        "diagram": ODTClassifier(program="model diagram(widths = [1, 2, 2])\nminimize errors", backend="cp",
                                 time_limit=60).fit(X, y),
        "bdd": ODTClassifier(program="model bdd(depth = 3)\nminimize errors").fit(X, y),
    }


@pytest.fixture(scope="module")
def models(bmi):
    return _models(bmi)


@pytest.mark.parametrize("kind", ["tree", "diagram", "bdd"])
def test_apply_and_decision_path_agree_with_predict(models, kind):
    X, y, fitted = models
    est = fitted[kind]
    layout = est.classifier_.layout()
    leaves = est.apply(X)
    assert set(leaves) <= set(layout.terminals.tolist())
    assert (est.classes_[layout.label[leaves]] == est.predict(X)).all()
    path = est.decision_path(X)
    assert path.shape == (len(X), layout.n_nodes) and path.format == "csr"
    for i in range(0, len(X), 37):
        nodes = path.indices[path.indptr[i]:path.indptr[i + 1]]
        assert nodes[0] == 0 and nodes[-1] == leaves[i]  # from the root to the row's leaf
        for a, b in zip(nodes, nodes[1:]):  # each step follows an arc of the classifier
            assert b in (layout.yes[a], layout.no[a])
    assert est.get_n_leaves() == layout.terminals.size
    assert est.get_depth() == est.classifier_.depth
    counts = est.node_counts_[leaves]  # the training class weights at each row's leaf
    np.testing.assert_allclose(est.predict_proba(X), counts / counts.sum(axis=1, keepdims=True))


@pytest.mark.parametrize("kind", ["tree", "diagram", "bdd"])
def test_feature_importances_sum_to_one_over_the_columns_of_x(models, kind):
    X, y, fitted = models
    est = fitted[kind]
    imp = est.feature_importances_
    assert imp.shape == (3,) and (imp >= 0).all()
    assert imp.sum() == pytest.approx(1.0)
    used = est.classifier_.features_used()
    assert {c for c, v in zip(X.columns, imp) if v > 0} <= used


def test_feature_importances_are_what_scikit_learn_computes_for_the_same_tree():
    df = pd.read_csv(IRIS)
    X, y = df.drop(columns="class"), df["class"]
    est = ODTClassifier(max_depth=3).fit(X, y)
    same = est.to_sklearn()  # a DecisionTreeClassifier holding this tree: scikit-learn computes its importances
    assert (same.predict(X) == est.predict(X)).all()
    np.testing.assert_allclose(est.feature_importances_, same.feature_importances_, rtol=1e-12)
    np.testing.assert_array_equal(est.n_node_samples_[est.apply(X)], same.tree_.n_node_samples[same.apply(X)])


def test_predict_log_proba_is_the_log_of_predict_proba(models):
    X, y, fitted = models
    est = fitted["tree"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero warning for the zeros
        logs = est.predict_log_proba(X)
    np.testing.assert_allclose(np.exp(logs), est.predict_proba(X), rtol=1e-12, atol=0)
    assert np.isneginf(logs).any()


def test_a_single_leaf_has_depth_zero_one_leaf_and_no_importance(iris):
    X, y = iris
    est = ODTClassifier(max_depth=0).fit(X, y)
    assert est.get_depth() == 0 and est.get_n_leaves() == 1
    assert (est.apply(X) == 0).all() and est.decision_path(X).sum() == len(X)
    assert (est.feature_importances_ == 0).all()  # as scikit-learn's single-leaf tree


def test_rows_with_an_unseen_category_reach_no_leaf_under_unknown_majority(bmi):
    X, y = bmi
    est = ODTClassifier(max_depth=2, unknown="majority").fit(X, y)
    new = X.head(3).copy()
    new["Gender"] = new["Gender"].astype(object)
    new.loc[new.index[1], "Gender"] = "Other"
    assert est.apply(new)[1] == -1 and est.decision_path(new)[1].nnz == 0
    assert est.apply(new)[0] == est.apply(X.head(1))[0]


# ---------------------------------------------------------------- to_sklearn: scikit-learn's own tree

@pytest.mark.parametrize("kind", ["tree", "diagram", "bdd"])
def test_to_sklearn_predicts_as_odt_with_category_columns_one_hot_encoded(models, kind):
    from sklearn.pipeline import Pipeline

    X, y, fitted = models
    est = fitted[kind]
    same = est.to_sklearn()
    assert isinstance(same, Pipeline)  # bmi's Gender is a category column: one-hot encoded first
    assert (same.predict(X) == est.predict(X)).all()
    np.testing.assert_allclose(same.predict_proba(X), est.predict_proba(X))
    new = X.head(2).copy()
    new["Gender"] = new["Gender"].astype(object)
    new.loc[new.index[0], "Gender"] = "Other"
    with pytest.raises(ValueError, match="unknown categor"):  # refused, as odt refuses it
        same.predict(new)


def test_to_sklearn_keeps_learned_missing_directions_and_feeds_scikit_learn_tools():
    from sklearn.tree import export_text

    hep = pd.read_csv(DATA / "hepatitis.csv", na_values="?")
    X, y = hep.drop(columns="class"), hep["class"]
    est = ODTClassifier(max_depth=3).fit(X, y)
    assert "(missing:" in est.classifier_.to_text()
    same = est.to_sklearn()
    assert (same.predict(X) == est.predict(X)).all()  # rows with NaN included
    np.testing.assert_allclose(same.predict_proba(X), est.predict_proba(X))
    assert "class: " in export_text(same, feature_names=list(X.columns))  # and plot_tree, SHAP: tree_ is scikit-learn's


def test_an_oblique_tree_has_no_scikit_learn_form_and_says_so():
    df = pd.read_csv(ROOT / "examples" / "data" / "diagonal.csv")
    est = ODTClassifier(program="model tree(depth <= 1) { splits multivariate }\nminimize errors",
                        backend="milp", time_limit=60).fit(df.drop(columns="class"), df["class"])
    with pytest.raises(odt.OdtError, match="is oblique .* a scikit-learn tree compares one column"):
        est.to_sklearn()


# ---------------------------------------------------------------- export_text

@pytest.mark.parametrize("kwargs", [{}, {"max_depth": 1}, {"show_weights": True, "spacing": 2, "decimals": 1}])
def test_export_text_writes_what_scikit_learn_writes_for_the_same_tree(kwargs):
    from sklearn.tree import export_text as sklearn_export_text

    from odt.sklearn import export_text

    df = pd.read_csv(IRIS)
    X, y = df.drop(columns="class"), df["class"]
    est = ODTClassifier(max_depth=3).fit(X, y)
    assert export_text(est, **kwargs) == sklearn_export_text(est.to_sklearn(), feature_names=list(X.columns),
                                                             **kwargs)


def test_export_text_speaks_of_categories_missing_sides_and_unfolds_diagrams(models):
    from odt.sklearn import export_text

    X, y, fitted = models
    text = export_text(fitted["tree"], feature_names=["sex", "height", "weight"], class_names=list("abcdef"))
    assert "|--- weight <= " in text and "class: " in text
    for kind in ("diagram", "bdd"):
        unfolded = export_text(fitted[kind])
        assert unfolded.count("class: ") == len(fitted[kind].classifier_.unfold().layout().terminals)
    hep = pd.read_csv(DATA / "hepatitis.csv", na_values="?")
    est = ODTClassifier(max_depth=2).fit(hep.drop(columns="class"), hep["class"])
    assert " or missing" in export_text(est)
    with pytest.raises(ValueError, match="feature_names must hold 3 names"):
        export_text(fitted["tree"], feature_names=["a"])
