"""Multivariate (oblique) splits, S6: Florio's hyperplanes through the milp backend."""
from __future__ import annotations

import json

import numpy as np
import pytest

import odt
from odt.compiler.classifiers import Tree
from odt.compiler.errors import UnsupportedConstruct


def diagonal_data(n: int = 40, seed: int = 0) -> dict:
    """Two classes separated by the line u + v = 10: one oblique split is perfect, no
    axis-aligned split is."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, size=(n, 2))
    return {"u": X[:, 0], "v": X[:, 1], "class": (X[:, 0] + X[:, 1] >= 10).astype(int)}


def test_one_oblique_split_separates_what_no_axis_aligned_split_does():
    data = diagonal_data()
    oblique = odt.compile("model tree(depth <= 1) { splits multivariate }\nminimize errors", data=data)
    res = oblique.solve(backend="milp")
    assert res.status == "optimal" and res.objective == 0 and res.verified
    axis = odt.compile("model tree(depth <= 1)\nminimize errors", data=data).solve(backend="maxsat")
    assert axis.objective > 0


def test_oblique_trees_predict_raw_rows_and_round_trip_json():
    data = diagonal_data()
    res = odt.compile("model tree(depth <= 1) { splits multivariate }\nminimize errors", data=data).solve(backend="milp")
    tree = res.classifier
    assert tree.features[0].kind == "oblique"
    back = Tree.from_json(json.loads(json.dumps(tree.to_json())))
    assert back == tree
    assert list(back.predict(data)) == list(data["class"])
    assert list(back.predict({"u": [0.0, 9.5], "v": [1.0, 9.5]})) == [0, 1]


def test_auto_picks_the_backend_that_can_take_hyperplanes():
    prog = odt.compile("model tree(depth <= 1) { splits multivariate }\nminimize errors", data=diagonal_data())
    assert prog.backend_name() == "milp"


@pytest.mark.parametrize("backend", ["maxsat", "cp"])
def test_clause_backends_refuse_multivariate_splits_before_solving(backend):
    prog = odt.compile("model tree(depth <= 1) { splits multivariate }\nminimize errors", data=diagonal_data())
    with pytest.raises(UnsupportedConstruct, match=f"backend '{backend}' does not take multivariate splits"):
        prog.solve(backend=backend)


def test_multivariate_depth_two_with_size_penalty_verifies():
    data = diagonal_data(30, seed=3)
    data["class"] = ((data["u"] > 5) ^ (data["v"] > 5)).astype(int)  # XOR: needs depth 2 anyway
    res = odt.compile("model tree(depth <= 2) { splits multivariate }\nminimize errors + 0.1 * nodes",
                      data=data).solve(backend="milp", time_limit=60)
    assert res.verified and res.status in ("optimal", "feasible")
