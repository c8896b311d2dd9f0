"""Regression trees on dp (issue 26) as a specification: on small random data, with a 0/1
column and a numeric column cut at every midpoint, the optimum of ``minimize
squared_error`` / ``absolute_error`` (with cost complexity, a minimum leaf size, a cap
``r2 >= x`` or a node budget) equals a brute-force enumeration of every tree of depth
<= 2, and the decoded tree re-verifies (odt's own ``evaluate``)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import odt
from odt.compiler.errors import InfeasibleProgram, UnsupportedConstruct

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from regression_bruteforce import best, leaf_loss  # noqa: E402


@st.composite
def datasets(draw):
    n = draw(st.integers(5, 10))
    b = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    x = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=float)
    y = np.array(draw(st.lists(st.integers(-20, 20), min_size=n, max_size=n)), dtype=float) / 4
    if len(set(y.tolist())) < 2:
        y[0] = y[1] + 1.0
    w = np.array(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)), dtype=float) \
        if draw(st.booleans()) else np.ones(n)
    return b, x, y, w


def _program(b, x, y, w, objective: str, constraints: str = "", model: str = "tree(depth <= 2)"):
    data = {"b": b.astype(int), "x": x, "w": w, "y": y}
    text = f"data {{ target y\n weight w }}\nmodel {model}\n{objective}\n"
    if constraints:
        text += f"subject to {{ {constraints} }}\n"
    return odt.compile(text, data=data)


SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(datasets(), st.sampled_from(["squared_error", "absolute_error"]), st.sampled_from([0, 0.5, 3]),
       st.integers(1, 3))
def test_the_optimum_equals_brute_force(data, loss, a, min_leaf):
    b, x, y, w = data
    X = np.column_stack([b, x])
    objective = f"minimize {loss}" + (f" + {a} * nodes" if a else "")
    constraints = f"every leaf: samples >= {min_leaf}" if min_leaf > 1 else ""
    want = best(X, y, w, 2, loss, node_cost=a, min_leaf=min_leaf)
    r = _program(b, x, y, w, objective, constraints).solve(backend="dp")
    assert r.status == "optimal" and r.verified
    assert r.objective == pytest.approx(want, rel=1e-9, abs=1e-9)


@SETTINGS
@given(datasets(), st.sampled_from([0.2, 0.5, 0.8]), st.sampled_from([0.5, 2]))
def test_an_r2_floor_caps_the_squared_error_against_the_node_cost(data, r2, a):
    b, x, y, w = data
    X = np.column_stack([b, x])
    sst = leaf_loss(y, w, "squared_error")
    want = best(X, y, w, 2, "squared_error", node_cost=a, max_loss=(1 - r2) * sst)
    prog = _program(b, x, y, w, f"minimize squared_error + {a} * nodes", f"r2 >= {r2}")
    if want is None:
        with pytest.raises(InfeasibleProgram):
            prog.solve(backend="dp")
        return
    r = prog.solve(backend="dp")
    assert r.status == "optimal" and r.verified
    assert r.objective == pytest.approx(want, rel=1e-9, abs=1e-9)


@SETTINGS
@given(datasets(), st.integers(0, 3))
def test_a_node_budget_and_the_mean_squared_error(data, k):
    b, x, y, w = data
    X = np.column_stack([b, x])
    want = best(X, y, w, 2, "squared_error", max_nodes=k)
    r = _program(b, x, y, w, "minimize mse", f"nodes <= {k}").solve(backend="dp")
    assert r.status == "optimal" and r.verified
    assert r.objective == pytest.approx(want / w.sum(), rel=1e-9, abs=1e-9)


def test_leaves_predict_the_weighted_mean_and_the_weighted_median():
    b = np.array([0, 0, 0, 1, 1, 1])
    x = np.zeros(6)
    y = np.array([1.0, 2.0, 9.0, 10.0, 11.0, 30.0])
    w = np.array([1.0, 1.0, 1.0, 1.0, 3.0, 1.0])
    tree = _program(b, x, y, w, "minimize squared_error", model="tree(depth <= 1)").solve(backend="dp").classifier
    pred = tree.predict({"b": b, "x": x, "w": w, "y": y})
    assert pred.tolist() == pytest.approx([4.0, 4.0, 4.0, 14.6, 14.6, 14.6])
    tree = _program(b, x, y, w, "minimize absolute_error", model="tree(depth <= 1)").solve(backend="dp").classifier
    assert tree.predict({"b": b, "x": x, "w": w, "y": y}).tolist() == pytest.approx([2.0] * 3 + [11.0] * 3)


def test_auto_routes_a_regression_program_to_dp_and_the_solver_backends_refuse_it():
    rng = np.random.default_rng(0)
    b, x, y, w = rng.integers(0, 2, 20), rng.normal(size=20), rng.normal(size=20), np.ones(20)
    prog = _program(b, x, y, w, "minimize squared_error")
    assert prog.solve().backend == "dp"
    for backend in ("maxsat", "cp", "milp"):
        with pytest.raises(UnsupportedConstruct, match="quadratic"):
            prog.solve(backend=backend)


def test_a_stopped_solve_returns_a_tree_no_worse_than_cart():
    """The greedy start (CART's variance reduction) is the first incumbent."""
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(1)
    n = 300
    X = rng.normal(size=(n, 6))
    y = X[:, 0] * 3 + np.sin(X[:, 1] * 2) + rng.normal(scale=0.3, size=n)
    data = {f"x{j}": X[:, j] for j in range(6)} | {"y": y}
    prog = odt.compile("data { target y }\nmodel tree(depth <= 4)\nminimize squared_error\n", data=data)
    r = prog.solve(backend="dp", time_limit=1)
    cart = DecisionTreeRegressor(max_depth=4).fit(X, y)
    assert r.verified and r.objective <= float(((cart.predict(X) - y) ** 2).sum()) + 1e-6


@pytest.mark.parametrize("depth, cost_complexity", [(2, 0.0), (3, 0.0), (2, 0.02)])
def test_pystreed_agrees_on_mpg_with_the_same_binary_columns(depth, cost_complexity):
    """STreeD's regression and cost-complex regression tasks (pystreed's cost_complexity c
    charges a node c times the squared error of one leaf) on mpg's one-hot categories and
    quantile thresholds: the same optimum."""
    pystreed = pytest.importorskip("pystreed")
    import pandas as pd

    df = pd.read_csv(Path(__file__).resolve().parents[3] / "examples" / "data" / "mpg.csv")
    y = df.pop("hwy").to_numpy(dtype=float)
    cols = {}
    for c in df.columns:
        if df[c].dtype.kind in "if" and c != "drv":
            for q in np.unique(np.quantile(df[c], [0.25, 0.5, 0.75]))[:-1]:
                cols[f"{c}<={q:g}"] = (df[c] <= q).to_numpy().astype(int)
        else:
            for v in sorted(df[c].astype(str).unique())[1:]:
                cols[f"{c}={v}"] = (df[c].astype(str) == v).to_numpy().astype(int)
    B = np.column_stack(list(cols.values()))
    sst = float(((y - y.mean()) ** 2).sum())
    task = "cost-complex-regression" if cost_complexity else "regression"
    ps = pystreed.STreeDRegressor(optimization_task=task, max_depth=depth, cost_complexity=cost_complexity).fit(B, y)
    theirs = float(((ps.predict(B) - y) ** 2).sum()) + cost_complexity * sst * (ps.get_n_leaves() - 1)
    objective = "minimize squared_error" + (f" + {cost_complexity * sst!r} * nodes" if cost_complexity else "")
    data = {f"c{j}": col for j, col in enumerate(cols.values())} | {"y": y}
    r = odt.compile(f"data {{ target y }}\nmodel tree(depth <= {depth})\n{objective}\n", data=data).solve(backend="dp")
    assert r.status == "optimal" and r.verified
    assert r.objective == pytest.approx(theirs, rel=1e-9)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datasets(), st.sampled_from([0, 1.5]))
def test_depth_four_with_the_k_means_bound_equals_brute_force(data, a):
    """Below depth three the bounded search prunes children by the 1-D k-means bound: the
    optimum stays the brute-force one. Three 0/1 columns: a path tests each at most once,
    so the best tree of depth four is the best of depth three (enumerated)."""
    b, x, y, w = data
    c = (x >= 2).astype(float)
    d = (x % 2).astype(float)
    X = np.column_stack([b, c, d])
    want = best(X, y, w, 3, "squared_error", node_cost=a)
    objective = "minimize squared_error" + (f" + {a} * nodes" if a else "")
    data3 = {"b": b.astype(int), "c": c.astype(int), "d": d.astype(int), "w": w, "y": y}
    text = f"data {{ target y\n weight w }}\nmodel tree(depth <= 4)\n{objective}\n"
    r = odt.compile(text, data=data3).solve(backend="dp")
    assert r.status == "optimal" and r.verified
    assert r.objective == pytest.approx(want, rel=1e-9, abs=1e-9)


def test_the_k_means_bound_is_the_best_clustering_of_the_targets():
    import itertools

    from odt.backends.dp.kmeans_bound import cluster_bounds

    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(2, 8))
        t = rng.integers(0, 5, n).astype(float)
        w = rng.integers(1, 3, n).astype(float)
        values, y = np.unique(t, return_inverse=True)
        got = cluster_bounds(y, w, values, 3)
        want = [np.inf] * 3
        for labels in itertools.product(range(3), repeat=n):
            lab = np.array(labels)
            err = sum(leaf_loss(t[lab == g], w[lab == g], "squared_error") for g in set(labels))
            for j in range(len(set(labels)) - 1, 3):
                want[j] = min(want[j], err)
        assert got is not None and got.tolist() == pytest.approx(want, abs=1e-9)


def test_squared_errors_below_one_are_not_pruned_as_integral_costs():
    """Unit row weights make misclassification costs integers, so the bounded search may ask
    each deeper tree to beat the last by one; squared errors are not integers (a depth-three
    tree of error 0 beats depth two's 0.03125 here; found by hypothesis)."""
    x = np.array([0, 0, 3, 1, 0, 1, 0, 0])
    data = {"b": np.array([0, 0, 0, 1, 0, 0, 0, 0]), "c": (x >= 2).astype(int), "d": x % 2,
            "y": np.array([0, 0, 0, 0, 0, 0.25, 0, 0])}
    r = odt.compile("data { target y }\nmodel tree(depth <= 3)\nminimize squared_error\n", data=data).solve(backend="dp")
    assert r.status == "optimal" and r.objective == pytest.approx(0.0, abs=1e-12)
