"""Optimal trees bound decision diagrams (odt/strategies/diagram_bounds.py, issue 16).

Specification: a tree becomes a diagram that predicts as it does, layer by depth; the
lower bound from the optimal depth-L tree never exceeds a diagram optimum proved without
it; with the bounds every backend reaches the same optimum as without them; widths 1, 2,
4 (a complete tree fits) make ``minimize errors`` optimal with no diagram search at all.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import odt
from odt.compiler.classifiers.diagram import diagram_of_tree
from odt.compiler.data import Binarizer
from odt.strategies.diagram_bounds import diagram_bounds, fitting_depth


def _data(seed: int, n: int = 24, m: int = 5) -> dict:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, m))
    y = (X[:, 0] & X[:, 1]) | (X[:, 2] ^ X[:, 3])
    y = np.where(rng.random(n) < 0.15, 1 - y, y)
    y[0], y[1] = 0, 1
    return {**{f"f{j}": X[:, j].tolist() for j in range(m)}, "class": y.tolist()}


@pytest.mark.parametrize("widths, depth", [((1,), 1), ((1, 2), 2), ((1, 2, 3), 2), ((1, 1, 4), 1), ((1, 2, 4, 8), 4)])
def test_the_fitting_depth_is_the_deepest_complete_tree_the_layers_hold(widths, depth):
    assert fitting_depth(widths) == depth


@pytest.mark.parametrize("seed", range(3))
def test_a_tree_as_a_diagram_predicts_as_the_tree(seed):
    data = _data(seed)
    tree = odt.compile("model tree(depth <= 3)\nminimize errors", data=data).solve(backend="dp").classifier
    d = diagram_of_tree(tree)
    prog = odt.compile("model tree(depth <= 3)\nminimize errors", data=data)
    Xb = Binarizer(tree.features).transform(prog.dataset.table)
    assert np.array_equal(d.predict_binary(Xb), tree.predict_binary(Xb))
    assert d.n_nodes == tree.n_nodes and d.depth == tree.depth


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("widths, objective", [
    pytest.param("[1, 2, 2]", "errors", marks=pytest.mark.slow), ("[1, 2]", "errors + 2 * nodes"),
    pytest.param("[1, 2, 3]", "errors + 0.5 * nodes", marks=pytest.mark.slow),  # ~40 s: milp proves it slowly
])
def test_the_tree_bound_is_valid_and_changes_no_optimum(seed, widths, objective):
    prog = odt.compile(f"model diagram(widths = {widths})\nminimize {objective}", data=_data(seed, n=16))
    plain = prog.solve(backend="cp", warm_start=False, time_limit=60)
    assert plain.status == "optimal"
    bounds = diagram_bounds(prog.checked, 10.0)
    assert bounds is not None and bounds.lower <= Fraction(plain.objective).limit_denominator(10**6)
    for backend in ("cp", "maxsat", "milp"):
        res = prog.solve(backend=backend, time_limit=180)  # generous: milp on a loaded machine
        assert res.status == "optimal" and res.verified, backend
        assert res.objective == pytest.approx(plain.objective), backend


def test_when_a_complete_tree_fits_the_diagram_optimum_is_the_tree_optimum_proved_at_once():
    data = _data(7, n=40, m=6)
    tree = odt.compile("model tree(depth <= 3)\nminimize errors", data=data).solve(backend="dp")
    res = odt.compile("model diagram(widths = [1, 2, 4])\nminimize errors", data=data).solve(backend="milp")
    assert res.status == "optimal" and res.verified and res.objective == tree.objective
    assert "no search needed" in res.log


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("widths", ["[1, 2]", "[1, 1, 2]", "[1, 2, 2]"])
@pytest.mark.parametrize("cost", ["0.3", "1", "2.5"])
def test_the_node_count_bound_never_exceeds_the_optimum(seed, widths, cost):
    """The bound over node counts N (trees of depth min(N, L), Bayes errors over N-feature
    subsets) stays below the optimum cp proves with no bound at all."""
    prog = odt.compile(f"model diagram(widths = {widths})\nminimize errors + {cost} * nodes",
                       data=_data(100 + seed, n=14, m=4))
    plain = prog.solve(backend="cp", warm_start=False, time_limit=60)
    assert plain.status == "optimal"
    bounds = diagram_bounds(prog.checked, 10.0)
    assert bounds is not None and bounds.lower <= Fraction(plain.objective).limit_denominator(10**6) + Fraction(1, 10**6)
    assert bounds.incumbent is None or bounds.incumbent[1] >= Fraction(plain.objective).limit_denominator(10**6) - Fraction(1, 10**6)
