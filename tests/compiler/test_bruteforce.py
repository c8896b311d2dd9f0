"""Brute-force oracle: odt's claimed optimum equals the best of EVERY tree of depth <= D.

On random tiny binary datasets (<= 12 rows, <= 4 features, 2 or 3 classes, duplicate rows
with conflicting labels, sometimes integer row weights, including 0), every tree of depth
<= 2 is enumerated (tests/helpers.py) and its exact cost compared with ``Program.solve``
(backend maxsat) for

* ``minimize errors``,
* ``minimize errors + alpha * nodes`` (alpha in 0.3, 0.5, 1, 2.5),
* ``tree(depth <= 2, leaves <= L)`` / ``nodes <= K`` with either objective,
* depth <= 1 and depth <= 0.

Each solve must also be ``optimal`` and ``verified``, and the decoded classifier's own
recomputed cost (its predictions on the raw rows, its ``n_nodes``) must equal the optimum.
"""
from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import odt
from odt.compiler.errors import OdtDataError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import (  # noqa: E402
    Case,
    brute_force_optimum,
    cases,
    count_trees,
    enumerate_trees,
    iter_trees,
    predict_tree,
    tree_depth,
    tree_errors,
    tree_leaves,
)

ALPHAS = ("0.3", "0.5", "1", "2.5")
TOL = 1e-6


def _settings(n: int):
    return settings(derandomize=True, deadline=None, max_examples=n, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------------------- the check
def _recomputed_cost(res, case: Case, alpha: Fraction) -> tuple[Fraction, int]:
    clf = res.classifier
    pred = np.asarray(clf.predict(case.data()), dtype=np.int64)
    w = case.w if case.w is not None else np.ones(len(case.y), dtype=np.int64)
    errors = int(((pred != case.y) * w).sum())
    return errors + alpha * clf.n_nodes, errors


def _program(case: Case, depth: int, alpha: str | None, leaves: int | None = None, nodes: int | None = None) -> str:
    params = [f"depth <= {depth}"]
    if leaves is not None:
        params.append(f"leaves <= {leaves}")
    if nodes is not None:
        params.append(f"nodes <= {nodes}")
    objective = "minimize errors" if alpha is None else f"minimize errors + {alpha} * nodes"
    return case.header() + f"model tree({', '.join(params)})\n{objective}\n"


def check_against_oracle(case: Case, depth: int, alpha: str | None = None, leaves: int | None = None,
                         nodes: int | None = None, table=None) -> None:
    text = _program(case, depth, alpha, leaves, nodes)
    a = Fraction(alpha) if alpha is not None else Fraction(0)
    limit = min(x for x in (leaves, None if nodes is None else nodes + 1, 1 << depth) if x is not None)
    best = brute_force_optimum(case.X, case.y, depth, classes=case.classes, w=case.w, alpha=a,
                               max_leaves=limit, table=table)
    ctx = f"\nprogram:\n{text}data: {case.data()!r}\noracle: cost {best.cost} tree {best.tree}"
    res = odt.compile(text, data=case.data()).solve(backend="maxsat", warm_start=False)
    assert res.status == "optimal", ctx + f"\nstatus {res.status}"
    assert res.verified is True, ctx + "\n" + res.report
    assert abs(res.objective - float(best.cost)) <= TOL, ctx + f"\nodt objective {res.objective}\n" + res.report
    cost, errors = _recomputed_cost(res, case, a)
    assert cost == best.cost, ctx + f"\nclassifier recomputed cost {cost}\n{res.classifier.to_text()}"
    assert abs(res.train_errors - errors) <= TOL, ctx + f"\ntrain_errors {res.train_errors} vs recomputed {errors}"
    clf = res.classifier
    assert clf.depth <= depth, ctx + f"\n{clf.to_text()}"
    assert clf.n_leaves <= limit, ctx + f"\n{clf.to_text()}"
    assert clf.n_nodes == clf.n_leaves - 1


# ---------------------------------------------------------------------------- the oracle itself
@pytest.mark.parametrize("n_features,n_classes,depth", [(1, 2, 0), (2, 2, 1), (2, 3, 2), (3, 2, 2), (4, 3, 2)])
def test_enumerator_counts_every_tree(n_features, n_classes, depth):
    classes = list(range(n_classes))
    naive = list(iter_trees(n_features, classes, depth))
    assert len(naive) == count_trees(n_features, n_classes, depth)
    assert len(set(naive)) == len(naive)  # no tree twice
    X = np.zeros((1, n_features), dtype=np.int64)
    table = enumerate_trees(X, classes, depth)
    assert len(table) == len(naive)
    for i in range(0, len(naive), max(1, len(naive) // 500)):
        assert table.describe(i) == naive[i]
        assert table.leaves[i] == tree_leaves(naive[i])
        assert tree_depth(naive[i]) <= depth


@given(cases())
@_settings(60)
def test_vectorised_enumerator_agrees_with_naive(case: Case):
    """The fast enumerator's predictions and costs agree with the naive recursive one."""
    depth = 2 if case.X.shape[1] <= 2 else 1  # keep the pure-Python side quick
    table = enumerate_trees(case.X, case.classes, depth)
    naive = list(iter_trees(case.X.shape[1], case.classes, depth))
    assert len(table) == len(naive)
    errs = table.errors(case.y, case.w)
    for i, t in enumerate(naive):
        assert list(table.preds[i]) == [predict_tree(t, x) for x in case.X]
        assert errs[i] == tree_errors(t, case.X, case.y, case.w)
    best = brute_force_optimum(case.X, case.y, depth, classes=case.classes, w=case.w)
    assert best.cost == min(tree_errors(t, case.X, case.y, case.w) for t in naive)


# ---------------------------------------------------------------------------- odt vs the oracle
@given(cases(zero_weights=True))
@_settings(400)
def test_errors_depth2(case: Case):
    check_against_oracle(case, 2)


@pytest.mark.slow
@given(cases(), st.sampled_from(ALPHAS))
@_settings(400)
def test_errors_plus_alpha_nodes_depth2(case: Case, alpha: str):
    check_against_oracle(case, 2, alpha)


@pytest.mark.slow
@given(cases(), st.integers(1, 4), st.sampled_from((None,) + ALPHAS), st.booleans())
@_settings(400)
def test_size_limited_depth2(case: Case, limit: int, alpha: str | None, as_nodes: bool):
    if as_nodes:  # nodes <= K is leaves <= K + 1
        check_against_oracle(case, 2, alpha, nodes=limit - 1)
    else:
        check_against_oracle(case, 2, alpha, leaves=limit)


@given(cases(), st.sampled_from([0, 1]), st.sampled_from((None,) + ALPHAS))
@_settings(250)
def test_shallow_depths(case: Case, depth: int, alpha: str | None):
    check_against_oracle(case, depth, alpha)


# ---------------------------------------------------------------------------- fixed cases
XOR = Case(np.array([[0, 0], [0, 1], [1, 0], [1, 1]]), np.array([0, 1, 1, 0]), None)


@pytest.mark.parametrize("depth,alpha,leaves,expected", [
    (0, None, None, 2), (1, None, None, 2), (2, None, None, 0),
    (2, "0.3", None, Fraction(9, 10)), (2, "0.5", None, Fraction(3, 2)), (2, "1", None, 2), (2, "2.5", None, 2),
    (2, None, 3, 1), (2, None, 2, 2), (2, None, 1, 2),
])
def test_xor(depth, alpha, leaves, expected):
    """XOR needs both levels: a one-split tree is no better than a leaf."""
    best = brute_force_optimum(XOR.X, XOR.y, depth, alpha=alpha or 0, max_leaves=leaves)
    assert best.cost == expected
    check_against_oracle(XOR, depth, alpha, leaves)


def test_weighted_duplicates_conflicting_labels():
    X = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 0]])
    case = Case(X, np.array([0, 1, 1, 0, 1, 2]), np.array([5, 2, 2, 1, 3, 0]))
    for depth in (0, 1, 2):
        for alpha in (None,) + ALPHAS:
            check_against_oracle(case, depth, alpha)


# ---------------------------------------------------------------------------- regressions
# Found by this oracle and fixed: no splitting feature, all weights zero, zero-weight rows
# that followed a split the solver did not count.
@pytest.mark.parametrize("depth", [1, 2])
def test_regression_no_useful_feature(depth):
    case = Case(np.array([[0], [0]]), np.array([1, 0]), None)
    check_against_oracle(case, depth)  # expected: optimal, 1 error (a single leaf)



def test_weights_that_are_all_zero_are_refused():
    """Issue 18: with every weight 0 every classifier has the same errors; the program is
    refused (it used to solve to a single leaf of objective 0)."""
    case = Case(np.array([[0], [1]]), np.array([0, 1]), np.array([0, 0]))
    with pytest.raises(OdtDataError, match="is 0 on every row"):
        odt.compile(_program(case, 2, "0.3"), data=case.data())


@pytest.mark.parametrize("alpha,leaves", [("2.5", None), (None, 1)])
def test_regression_zero_weight_rows_with_size_term(alpha, leaves):
    case = Case(np.array([[1], [0], [1]]), np.array([0, 0, 1]), np.array([1, 0, 1]))
    check_against_oracle(case, 2, alpha, leaves)  # expected: optimal, cost 1, a single leaf
