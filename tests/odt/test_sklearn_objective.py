"""``ODTClassifier(objective=..., class_costs=...)`` (issue 26): balanced accuracy, F1 and
cost matrices through the estimator, equal to the same program written in odt."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, f1_score

import odt
from odt.compiler.errors import OdtInputError
from odt.sklearn import ODTClassifier

RNG = np.random.default_rng(4)
X = RNG.integers(0, 2, (80, 4))
Y = np.where((X[:, 0] & X[:, 1]) | (RNG.random(80) < 0.15), "yes", "no")


def _program(objective: str, table: str = "") -> float:
    data = {f"x{j}": X[:, j].tolist() for j in range(4)} | {"class": Y.tolist()}
    return odt.compile(f"data {{ target class }}\n{table}model tree(depth <= 2)\n{objective}", data=data).solve().objective


def test_f1_and_balanced_accuracy_are_the_metrics_of_the_fitted_tree_and_the_program_optimum():
    m = ODTClassifier(max_depth=2, objective="f1").fit(X, Y)
    assert m.objective_ == pytest.approx(f1_score(Y, m.predict(X), pos_label="yes"))
    assert m.objective_ == pytest.approx(_program("maximize f1"))
    m = ODTClassifier(max_depth=2, objective="balanced_accuracy").fit(X, Y)
    assert m.objective_ == pytest.approx(balanced_accuracy_score(Y, m.predict(X)))
    assert m.objective_ == pytest.approx(_program("maximize balanced_accuracy"))


def test_class_costs_as_a_mapping_or_a_matrix_in_classes_order():
    want = _program("minimize misclassification_cost(C)", 'cost C = { "no" as "yes": 4, "yes" as "no": 1 }\n')
    by_map = ODTClassifier(max_depth=2, class_costs={("no", "yes"): 4}).fit(X, Y)
    by_matrix = ODTClassifier(max_depth=2, class_costs=[[0, 4], [1, 0]]).fit(X, Y)  # classes_ = [no, yes]
    assert by_map.objective_ == by_matrix.objective_ == pytest.approx(want)
    pred = by_map.predict(X)
    assert by_map.objective_ == 4 * ((pred == "yes") & (Y == "no")).sum() + ((pred == "no") & (Y == "yes")).sum()


def test_sample_weight_composes_with_class_costs():
    w = RNG.integers(1, 4, 80).astype(float)
    m = ODTClassifier(max_depth=1, class_costs={("no", "yes"): 3}).fit(X, Y, sample_weight=w)
    pred = m.predict(X)
    cost = np.where((pred == "yes") & (Y == "no"), 3.0, np.where((pred == "no") & (Y == "yes"), 1.0, 0.0))
    assert m.objective_ == pytest.approx(float((w * cost).sum()))


@pytest.mark.parametrize("kw, text", [
    ({"class_costs": {("no", "maybe"): 2}}, "not a class of y"),
    ({"class_costs": [[0, 1, 2]]}, "2 x 2 matrix"),
    ({"class_costs": {("no", "yes"): -1}}, "negative"),
    ({"objective": "f1", "alpha": 0.1}, "no alpha"),
    ({"objective": "f1", "class_costs": {("no", "yes"): 2}}, "does not combine"),
])
def test_bad_objective_knobs_are_input_errors(kw, text):
    with pytest.raises(OdtInputError, match=text):
        ODTClassifier(max_depth=1, **kw).fit(X, Y)
