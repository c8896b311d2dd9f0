"""``odt.sklearn.ODTRegressor`` (issue 26): an optimal regression tree as a scikit-learn
estimator — check_estimator, predictions equal to the same program compiled directly, and
training squared error never above scikit-learn's greedy tree of the same depth."""
from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils.estimator_checks import check_estimator

import odt
from odt.sklearn import SKIPPED_REGRESSOR_CHECKS, ODTRegressor


@pytest.mark.parametrize("estimator", [
    ODTRegressor(max_depth=2),
    pytest.param(ODTRegressor(criterion="absolute_error", alpha=0.01, min_samples_leaf=3), marks=pytest.mark.slow),
], ids=["depth2", "absolute-penalised"])
def test_scikit_learn_estimator_checks_pass_except_the_listed_ones(estimator):
    results = check_estimator(estimator, expected_failed_checks=SKIPPED_REGRESSOR_CHECKS, on_fail=None)
    failed = [(r["check_name"], repr(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert failed == []
    skipped = {r["check_name"] for r in results if r["status"] == "skipped"}
    assert skipped <= set(SKIPPED_REGRESSOR_CHECKS) | {"check_array_api_input"}


def test_every_skipped_check_is_listed_with_its_reason_in_the_docstring():
    for name in SKIPPED_REGRESSOR_CHECKS:
        assert name in ODTRegressor.__doc__


def _frame(n: int = 80, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"size": rng.normal(size=n), "kind": pd.Categorical(rng.choice(["a", "b", "c"], n)),
                      "age": rng.integers(0, 10, n).astype(float)})
    y = 3 * X["size"].to_numpy() + (X["kind"] == "b") * 2.0 + rng.normal(scale=0.5, size=n)
    return X, y


def test_predictions_equal_the_same_program_compiled_directly():
    X, y = _frame()
    model = ODTRegressor(max_depth=2, min_samples_leaf=4).fit(X, y)
    data = {c: X[c].to_numpy() for c in X.columns} | {"__odt_y__": y}
    direct = odt.compile(model.program_text_, data=data).solve()
    assert model.objective_ == pytest.approx(direct.objective)
    assert model.predict(X).tolist() == pytest.approx(direct.classifier.predict(X).tolist())
    assert pickle.loads(pickle.dumps(model)).predict(X).tolist() == model.predict(X).tolist()
    assert clone(model).get_params() == model.get_params()


@pytest.mark.parametrize("depth", [1, 2])
def test_the_training_squared_error_is_never_above_a_greedy_tree(depth):
    X, y = _frame(120, 3)
    Xn = X[["size", "age"]]
    ours = ODTRegressor(max_depth=depth).fit(Xn, y)
    cart = DecisionTreeRegressor(max_depth=depth).fit(Xn, y)
    assert ours.status_ == "optimal"
    assert ((ours.predict(Xn) - y) ** 2).sum() <= ((cart.predict(Xn) - y) ** 2).sum() + 1e-9


def test_sample_weights_count_like_repeated_rows():
    X, y = _frame(40, 5)
    w = np.random.default_rng(1).integers(1, 4, len(y))
    weighted = ODTRegressor(max_depth=2).fit(X, y, sample_weight=w)
    repeated = ODTRegressor(max_depth=2).fit(X.loc[X.index.repeat(w)].reset_index(drop=True), np.repeat(y, w))
    assert weighted.objective_ == pytest.approx(repeated.objective_)


def test_a_constant_target_is_one_leaf():
    X, _ = _frame(10)
    model = ODTRegressor().fit(X, np.full(10, 2.5))
    assert model.get_n_leaves() == 1 and model.predict(X).tolist() == [2.5] * 10
