"""Florio's diagram MILP (``model diagram(widths = [...])`` on milp, and on cp with boolean
flows) and its greedy warm start, read as specifications."""
from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import odt
from odt.compiler.data import Feature
from odt.compiler.classifiers.diagram import Diagram
from odt.strategies.diagram_greedy import greedy_diagram, warm_start
from odt.compiler.skeletons.diagram_flow import effective_widths

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from diagram_bruteforce import brute_force_diagram  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def tiny(seed: int, n_classes: int = 2, rows: int = 10, features: int = 3) -> dict:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(rows, features))
    y = (X[:, 0] ^ X[:, 1]) if n_classes == 2 else (X[:, 0] + X[:, 1] * X[:, 2]) % n_classes
    flip = rng.random(rows) < 0.2
    y = np.where(flip, rng.integers(0, n_classes, rows), y)
    return {**{f"f{j}": X[:, j] for j in range(features)}, "class": y}


def solve(text: str, data, backend: str, **kw):
    return odt.compile(text, data=data).solve(backend=backend, time_limit=60, **kw)


def test_widths_must_start_with_one_root_and_capacity_beyond_doubling_is_dropped():
    assert effective_widths([1, 2, 8, 3]) == (1, 2, 4, 3)
    with pytest.raises(ValueError, match="begin with 1"):
        effective_widths([2, 2])


@pytest.mark.parametrize("seed", [0, 1])
def test_milp_and_cp_both_reach_the_brute_force_optimum(seed):
    data = tiny(seed)
    X = np.column_stack([data[f"f{j}"] for j in range(3)])
    best = brute_force_diagram(X, data["class"], [1, 2], alpha="1/2")
    text = "model diagram(widths = [1, 2])\nminimize errors + 0.5 * nodes"
    for backend in ("milp", "cp"):
        res = solve(text, data, backend, warm_start=False)
        assert res.status == "optimal" and res.verified, backend
        assert Fraction(res.objective).limit_denominator(100) == best.cost, backend
        assert res.train_errors == res.solver_errors  # the decoded diagram routes rows as the solver did


def test_multiclass_diagrams_have_one_terminal_per_class():
    data = tiny(3, n_classes=3, rows=10)
    X = np.column_stack([data[f"f{j}"] for j in range(3)])
    best = brute_force_diagram(X, data["class"], [1, 2], alpha="1/2")
    text = "model diagram(widths = [1, 2])\nminimize errors + 0.5 * nodes"
    values = {}
    for backend in ("milp", "cp"):
        res = solve(text, data, backend, warm_start=False)
        assert res.status == "optimal" and res.verified, backend
        values[backend] = Fraction(res.objective).limit_denominator(100)
    assert values["milp"] == values["cp"] == best.cost


def test_a_diagram_shares_what_a_tree_must_duplicate():
    """3-bit parity: a diagram of widths [1, 2, 2] needs 5 nodes, a depth-3 tree 7."""
    X = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)] * 2)
    data = {"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "class": X.sum(axis=1) % 2}
    res = solve("model diagram(widths = [1, 2, 2])\nminimize errors + 0.5 * nodes", data, "cp", warm_start=False)
    assert res.status == "optimal" and res.verified and res.objective == 2.5
    assert isinstance(res.classifier, Diagram) and res.classifier.n_nodes == 5 and res.train_errors == 0
    tree = solve("model tree(depth <= 3)\nminimize errors + 0.5 * nodes", data, "maxsat")
    assert tree.objective == 3.5


def test_multivariate_diagrams_on_milp_split_by_hyperplanes():
    rng = np.random.default_rng(2)
    U = rng.uniform(0, 10, size=(16, 2))
    data = {"u": U[:, 0], "v": U[:, 1], "class": (U[:, 0] + U[:, 1] >= 10).astype(int)}
    res = solve("model diagram(widths = [1, 2]) { splits multivariate }\nminimize errors + 0.5 * nodes",
                data, "milp")
    assert res.status == "optimal" and res.verified and res.train_errors == 0 and res.objective == 0.5
    d = res.classifier
    assert d.features[0].kind == "oblique"
    assert list(d.predict(data)) == list(data["class"])


@pytest.mark.parametrize("name", ["corral", "zoo-1", "mouse"])
def test_a_diagram_whose_skeleton_contains_the_depth_two_tree_is_never_worse(name):
    df = pd.read_csv(DATA / f"{name}.csv")
    tree = solve("model tree(depth <= 2)\nminimize errors", df, "maxsat")
    diagram = solve("model diagram(widths = [1, 2])\nminimize errors", df, "cp")
    assert tree.status == diagram.status == "optimal" and diagram.verified
    assert diagram.objective <= tree.objective


@pytest.mark.parametrize("name, widths", [("corral", [1, 2]), ("zoo-1", [1, 2]), ("zoo-1", [1, 2, 2])])
def test_the_greedy_warm_start_is_feasible_and_never_better_than_the_optimum(name, widths):
    df = pd.read_csv(DATA / f"{name}.csv")
    prog = odt.compile(f"model diagram(widths = {widths})\nminimize errors + 1 * nodes", data=df)
    start = warm_start(prog.checked, 1.0)
    assert start is not None
    d, value = start
    per_layer = [sum(1 for i in d.reachable() if d.nodes[i].layer == l) for l in range(len(widths))]
    assert all(n <= w for n, w in zip(per_layer, widths))
    res = prog.solve(backend="cp", time_limit=60, warm_start=False)
    assert res.status == "optimal"
    assert float(value) >= res.objective


def test_greedy_merges_flows_to_fit_the_widths():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(60, 5)).astype(bool)
    y = (X[:, 0] ^ X[:, 1] ^ X[:, 2]).astype(int)
    feats = tuple(Feature(f"f{j}", "binary") for j in range(5))
    d = greedy_diagram(X, y, np.ones(60), (0, 1), feats, (1, 2, 2, 2), node_cost=0.0)
    assert all(sum(1 for i in d.reachable() if d.nodes[i].layer == l) <= 2 for l in range(4))
    assert d.depth <= 4
