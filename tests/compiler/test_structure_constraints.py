"""Structure and path constraints (C3, C5-C10) against brute force on tiny data.

Brute force enumerates every tree of depth <= D, removes each split with an empty side
(the tree odt returns has none: such a split is not a split), evaluates the constraint on
what remains, and takes the fewest errors among the trees that satisfy it."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import odt
from odt.compiler.errors import InfeasibleProgram, UnsupportedConstruct

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import iter_trees, predict_tree  # noqa: E402

BACKENDS = ("maxsat", "cp")


def reduce(tree, X, rows):
    """The tree with every split whose one side gets no row replaced by its other side."""
    if tree[0] == "leaf":
        return tree
    _, f, t, e = tree
    yes = [r for r in rows if X[r][f]]
    no = [r for r in rows if not X[r][f]]
    if not yes:
        return reduce(e, X, no)
    if not no:
        return reduce(t, X, yes)
    return ("split", f, reduce(t, X, yes), reduce(e, X, no))


def walk(tree, X, rows, above=()):
    """(node, rows, features tested above) for every node."""
    yield tree, rows, above
    if tree[0] == "split":
        _, f, t, e = tree
        yield from walk(t, X, [r for r in rows if X[r][f]], above + (f,))
        yield from walk(e, X, [r for r in rows if not X[r][f]], above + (f,))


def used(tree):
    return set() if tree[0] == "leaf" else {tree[1]} | used(tree[2]) | used(tree[3])


def leaf_of(tree, x):
    path = []
    while tree[0] == "split":
        path.append(bool(x[tree[1]]))
        tree = tree[2] if x[tree[1]] else tree[3]
    return tuple(path)


CHECKS = {
    "every leaf: samples >= 2": lambda t, X, R: all(len(r) >= 2 for n, r, _ in walk(t, X, R) if n[0] == "leaf"),
    "every node: samples >= 5": lambda t, X, R: all(len(r) >= 5 for n, r, _ in walk(t, X, R) if n[0] == "split"),
    "uses f1": lambda t, X, R: 1 in used(t),
    "not (uses f0 and uses f2)": lambda t, X, R: not {0, 2} <= used(t),
    "every path: f0 before f1": lambda t, X, R: all(0 in a for n, _, a in walk(t, X, R) if n[0] == "split" and n[1] == 1),
    "every path: not (f0 and f1)": lambda t, X, R: all(not {0, 1} <= set(a) for n, _, a in walk(t, X, R) if n[0] == "leaf"),
    "every path: cost <= 2 with cost { f0: 2, *: 1 }":
        lambda t, X, R: all(sum(2 if f == 0 else 1 for f in a) <= 2 for n, _, a in walk(t, X, R) if n[0] == "leaf"),
    "same_leaf(r0, r1)": lambda t, X, R: leaf_of(t, X[0]) == leaf_of(t, X[1]),
}


@st.composite
def cases(draw):
    n = draw(st.integers(4, 9))
    X = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=3, max_size=3), min_size=n, max_size=n)))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n).filter(lambda v: 0 < sum(v) < len(v)))
    picked = draw(st.sampled_from(sorted(CHECKS)))
    depth = draw(st.integers(1, 2))
    alpha = draw(st.sampled_from([None, "0.5"]))
    return X, np.array(y), picked, depth, alpha


@settings(derandomize=True, deadline=None, max_examples=160, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(cases())
def test_structure_constraints_agree_with_brute_force(case):
    X, y, picked, depth, alpha = case
    rows = list(range(len(y)))
    best = None
    for tree in iter_trees(3, [0, 1], depth):
        t = reduce(tree, X, rows)
        if not CHECKS[picked](t, X, rows):
            continue
        cost = sum(predict_tree(t, x) != yi for x, yi in zip(X, y))
        if alpha is not None:
            cost += float(alpha) * (sum(1 for n, _, _ in walk(t, X, rows) if n[0] == "split"))
        best = cost if best is None else min(best, cost)
    data = {"rid": [f"r{i}" for i in rows], "f0": X[:, 0], "f1": X[:, 1], "f2": X[:, 2], "class": y}
    objective = "errors" if alpha is None else f"errors + {alpha} * nodes"
    text = (f"data {{ target class\n id rid }}\nmodel tree(depth <= {depth})\nminimize {objective}\n"
            f"subject to {{\n    {picked}\n}}\n")
    prog = odt.compile(text, data=data)
    for backend in BACKENDS:
        if best is None:
            with pytest.raises(InfeasibleProgram):
                prog.solve(backend=backend, warm_start=False)
            continue
        res = prog.solve(backend=backend, warm_start=False)
        assert res.status == "optimal" and res.verified, (backend, picked, res.report)
        assert res.objective == pytest.approx(best), (backend, picked, X.tolist(), y.tolist())


def test_threshold_range_restricts_the_cut_points():
    data = {"age": [20, 30, 40, 50, 60, 70], "class": [0, 0, 1, 1, 0, 0]}
    free = odt.compile("model tree(depth <= 1)\nminimize errors", data=data).solve()
    assert free.objective == 2
    bounded = odt.compile("model tree(depth <= 1)\nminimize errors\nsubject to { threshold age in [55, 80] }",
                          data=data).solve()
    assert bounded.verified and bounded.objective == 2
    assert all(55 <= f.threshold <= 80 for f in bounded.classifier.features)
    shut = odt.compile("model tree(depth <= 2)\nminimize errors\nsubject to { threshold age in [32, 38] }",
                       data=data).solve()
    assert shut.objective == 2 and all(32 <= f.threshold <= 38 for f in shut.classifier.features)


def test_structure_constraints_are_refused_by_milp_with_the_backends_that_take_them():
    prog = odt.compile("model tree(depth <= 2)\nminimize errors\nsubject to { uses a }",
                       data={"a": [0, 1, 0, 1], "b": [0, 0, 1, 1], "class": [0, 1, 1, 0]})
    with pytest.raises(UnsupportedConstruct, match="maxsat, cp"):
        prog.solve(backend="milp")
    assert prog.backend_name() == "maxsat"
