"""Side constraints on ordered BDDs (issue 5): paths, ``uses`` and ``expected_cost``.

Under side constraints a BDD is decoded quasi-reduced: every path tests every level, so
a constraint holds exactly when the ordering of the level features satisfies it, and the
best BDD of an ordering puts the majority class in every truth-table cell. The oracle
enumerates every ordering of H distinct features; maxsat and cp must reach its optimum,
and every decoded BDD must satisfy every constraint by re-evaluation."""
from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest

import odt
from odt.compiler.errors import UnsupportedConstruct

COSTS = {"f0": 3, "f1": 1, "f2": 2, "f3": 1}
FORMS = {
    "uses f2": lambda order: "f2" in order,
    "every path: f1 before f0": lambda order: "f0" not in order or ("f1" in order and order.index("f1") < order.index("f0")),
    "every path: not (f0 and f3)": lambda order: not {"f0", "f3"} <= set(order),
    "not (uses f0 or uses f1)": lambda order: not ({"f0", "f1"} & set(order)),
    "every path: cost <= 3 with cost { f0: 3, f1: 1, f2: 2, f3: 1 }": lambda order: sum(COSTS[f] for f in order) <= 3,
    "expected_cost <= 2 with cost { f0: 3, f1: 1, f2: 2, f3: 1 }": lambda order: sum(COSTS[f] for f in order) <= 2,
}


def oracle(X: np.ndarray, y: np.ndarray, depth: int, holds) -> int | None:
    """min errors over every ordering that satisfies the constraint (None: none does)."""
    best = None
    for order in permutations(range(X.shape[1]), depth):
        if not holds([f"f{j}" for j in order]):
            continue
        cells = {}
        for row, label in zip(X[:, list(order)], y):
            cells.setdefault(tuple(row), []).append(label)
        errors = sum(len(v) - max(v.count(c) for c in set(v)) for v in cells.values())
        best = errors if best is None else min(best, errors)
    return best


def tiny(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    while True:
        X = rng.integers(0, 2, size=(int(rng.integers(6, 13)), 4))
        if all(0 < X[:, j].sum() < len(X) for j in range(4)) and len({tuple(c) for c in X.T}) == 4:
            return X, rng.integers(0, 2, size=len(X))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("form", list(FORMS))
def test_bdd_constraints_equal_the_ordering_oracle(form, seed):
    X, y = tiny(seed)
    depth = 1 + seed % 2
    data = {f"f{j}": X[:, j] for j in range(4)} | {"class": y}
    want = oracle(X, y, depth, FORMS[form])
    for backend in ("maxsat", "cp"):
        prog = odt.compile(f"model bdd(depth = {depth})\nminimize errors\nsubject to {{ {form} }}\n", data=data)
        if want is None:
            with pytest.raises(odt.OdtError, match="infeasible"):
                prog.solve(backend=backend)
            continue
        res = prog.solve(backend=backend)
        where = f"{backend} {form} seed {seed}\n{res.report}"
        assert res.status == "optimal" and res.verified and res.evaluation.feasible, where
        assert res.objective == want, where


def test_a_constraint_is_active_on_real_data():
    """On mouse, forbidding a feature of the best 2-level BDD costs errors, and the decoded
    BDD keeps every level on every path."""
    base = "data \"examples/data/mouse.csv\" { target class }\nmodel bdd(depth = 2)\nminimize errors\n"
    unconstrained = odt.compile(base).solve(backend="maxsat")
    used = unconstrained.classifier.features_used()
    banned = sorted(used)[0]
    res = odt.compile(base + f"subject to {{ not (uses {banned}) }}\n").solve(backend="maxsat")
    assert res.verified and banned not in res.classifier.features_used()
    assert res.objective > unconstrained.objective
    live = res.classifier.reachable()
    assert {res.classifier.nodes[i].layer for i in live} == {0, 1}
    assert all(len(path) == 2 for path, _ in res.classifier.paths())  # every level on every path


@pytest.mark.parametrize("constraint", ["every node: samples >= 2", "every leaf: samples >= 2"])
def test_node_and_leaf_constraints_are_refused_on_a_bdd(constraint):
    X, y = tiny(0)
    data = {f"f{j}": X[:, j] for j in range(4)} | {"class": y}
    prog = odt.compile(f"model bdd(depth = 2)\nminimize errors\nsubject to {{ {constraint} }}\n", data=data)
    with pytest.raises(UnsupportedConstruct, match="after solving"):
        prog.solve(backend="maxsat")


def test_expected_cost_counts_every_level_for_every_row():
    """Every row pays both levels: with f2 and f3 at 9, only the ordering of f0 (3) and f1
    (1) has expected cost <= 4."""
    X, y = tiny(3)
    data = {f"f{j}": X[:, j] for j in range(4)} | {"class": y}
    res = odt.compile("model bdd(depth = 2)\nminimize errors\n"
                      "subject to { expected_cost <= 4 with cost { f0: 3, f1: 1, f2: 9, f3: 9 } }\n",
                      data=data).solve(backend="cp")
    assert res.verified
    assert res.classifier.features_used() == {"f0", "f1"}
