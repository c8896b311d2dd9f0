"""Structure and path constraints (C3, C5-C10) against brute force on tiny data, on every
backend that takes them (maxsat and cp on the path encoding, milp on the flow encoding).

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
from helpers import brute_force_constrained, iter_trees, predict_tree  # noqa: E402

BACKENDS = ("maxsat", "cp", "milp")


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
    "expected_cost <= 1 with cost { f0: 2, *: 1 }":  # the mean path cost over the rows
        lambda t, X, R: sum(len(r) * sum(2 if f == 0 else 1 for f in a) for n, r, a in walk(t, X, R) if n[0] == "leaf")
        <= len(R),
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


@pytest.mark.slow
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
        if backend == "milp" and int(X.sum()) % 3:  # milp is slower: a third of the examples
            continue
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


def test_structure_constraints_are_lowered_on_the_flow_encoding_too():
    prog = odt.compile("model tree(depth <= 2)\nminimize errors\nsubject to { uses a }",
                       data={"a": [0, 1, 0, 1], "b": [0, 0, 1, 1], "class": [0, 1, 1, 0]})
    res = prog.solve(backend="milp")
    assert res.status == "optimal" and res.verified and res.objective == 0
    assert "a" in res.classifier.features_used()
    assert prog.backend_name() == "dp"  # 'uses' is a Pareto-front component on dp (issue 14)
    assert prog.solve().objective == res.objective


def test_flow_decode_keeps_the_split_a_constraint_asks_for():
    """``uses b`` forces a split on b that changes no prediction: decoding must keep it
    (merging its same-class leaves would lose the test the constraint counts)."""
    data = {"a": [0, 0, 1, 1, 0, 1], "b": [0, 1, 0, 1, 1, 0], "class": [0, 0, 1, 1, 0, 1]}
    prog = odt.compile("model tree(depth <= 2)\nminimize errors\nsubject to { uses b }", data=data)
    for backend in ("maxsat", "cp", "milp"):
        res = prog.solve(backend=backend, warm_start=False)
        assert res.verified and res.objective == 0 and {"a", "b"} <= res.classifier.features_used(), backend


def test_structure_constraints_on_a_diagram_are_refused_naming_the_tree_skeleton():
    prog = odt.compile("model diagram(widths = [1, 2])\nminimize errors\nsubject to { every leaf: samples >= 2 }",
                       data={"a": [0, 1, 0, 1], "b": [0, 0, 1, 1], "class": [0, 1, 1, 0]})
    for backend in ("maxsat", "cp", "milp"):
        with pytest.raises(UnsupportedConstruct, match="model tree"):
            prog.solve(backend=backend)


def test_structure_constraints_with_multivariate_splits_are_refused():
    prog = odt.compile("model tree(depth <= 1) { splits multivariate }\nminimize errors\n"
                       "subject to { every leaf: samples >= 2 }",
                       data={"a": [0.1, 0.5, 0.3, 0.9], "b": [0.0, 0.2, 0.7, 0.4], "class": [0, 1, 1, 0]})
    with pytest.raises(UnsupportedConstruct, match="splits univariate"):
        prog.solve(backend="milp")


# --------------------------------------------------------------------------- active constraints
# For each constraint form, a crafted dataset (3 features, 8 rows, depth 2) on which the
# unconstrained optimum violates the constraint and the constrained optimum is strictly
# worse: the constraint is active. Found by a seeded search with brute force, checked here
# again by brute force (``helpers.brute_force_constrained``) with an independent Python
# reading of the constraint.
_D1 = ([[1, 1, 0], [1, 1, 1], [1, 1, 1], [0, 0, 1], [0, 0, 1], [0, 1, 0], [0, 1, 1], [0, 1, 1]], [1, 0, 1, 1, 1, 0, 0, 0])
_D2 = ([[0, 0, 1], [0, 1, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0], [1, 1, 0], [0, 1, 0], [0, 0, 0]], [1, 0, 1, 0, 0, 1, 1, 0])


def _path_cost(p, table, default):
    return sum(table.get(j, default) for j in p)


ACTIVE = [  # (constraint, dataset, Python check over TreeFacts, free optimum, constrained optimum)
    ("every leaf: samples >= 3", _D1, lambda f: all(r >= 3 for r in f.leaf_rows), 1, 3),
    ("every node: samples >= 6", _D2, lambda f: all(r >= 6 for r in f.node_rows), 2, 3),
    ("nodes <= 1", _D1, lambda f: f.nodes <= 1, 1, 2),
    ("leaves <= 2", _D1, lambda f: f.leaves <= 2, 1, 2),  # in the model: tree(depth <= 2, leaves <= 2)
    ("same_leaf(r0, r1)", _D2, lambda f: f.leaf_of[0] == f.leaf_of[1], 2, 3),
    ("every path: f1 before f0",
     ([[0, 0, 1], [1, 0, 0], [1, 1, 0], [0, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 0], [1, 0, 1]], [1, 1, 1, 1, 1, 0, 1, 0]),
     lambda f: all(1 in p[:p.index(0)] for p in f.paths if 0 in p), 1, 2),
    ("every path: cost <= 2 with cost { f0: 2, *: 1 }", _D1,
     lambda f: all(_path_cost(p, {0: 2}, 1) <= 2 for p in f.paths), 1, 2),
    ("expected_cost <= 1.25 with cost { f0: 2, *: 1 }", _D1,
     lambda f: sum(_path_cost(f.paths[f.leaf_of[r]], {0: 2}, 1) for r in range(8)) <= 10, 1, 2),
    ("uses f2",
     ([[0, 0, 0], [0, 1, 0], [1, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0], [1, 1, 0], [1, 0, 1]], [1, 1, 0, 0, 1, 0, 1, 1]),
     lambda f: 2 in f.used, 2, 3),
    ("every path: not (f0 and f1)",
     ([[0, 0, 1], [1, 0, 0], [1, 1, 0], [1, 1, 1], [1, 0, 1], [0, 1, 0], [0, 0, 0], [0, 1, 0]], [1, 0, 1, 1, 0, 1, 1, 0]),
     lambda f: all(not {0, 1} <= set(p) for p in f.paths), 1, 3),
    ("not (uses f0 and uses f1)", _D1, lambda f: not {0, 1} <= f.used, 1, 2),
]


def _program(constraint: str | None, X, y) -> "odt.Program":
    data = {"rid": [f"r{i}" for i in range(len(y))]}
    data.update({f"f{j}": [row[j] for row in X] for j in range(3)})
    data["class"] = y
    model = "tree(depth <= 2)"
    body = ""
    if constraint is not None and constraint.startswith("leaves <="):
        model = f"tree(depth <= 2, {constraint})"
    elif constraint is not None:
        body = f"subject to {{\n    {constraint}\n}}\n"
    return odt.compile(f"data {{ target class\n id rid }}\nmodel {model}\nminimize errors\n{body}", data=data)


@pytest.mark.parametrize("constraint, dataset, check, free_opt, constrained_opt", ACTIVE, ids=[a[0] for a in ACTIVE])
def test_each_constraint_is_active_and_every_backend_meets_it(constraint, dataset, check, free_opt, constrained_opt):
    from odt.compiler.evaluate import evaluate

    X, y = dataset
    errors = lambda f: sum(p != t for p, t in zip(f.pred, y))  # noqa: E731
    assert brute_force_constrained(np.array(X), y, 2, errors, lambda f: True)[0] == free_opt
    assert brute_force_constrained(np.array(X), y, 2, errors, check)[0] == constrained_opt
    free, bound = _program(None, X, y), _program(constraint, X, y)
    for backend in ("maxsat", "cp", "milp"):
        loose = free.solve(backend=backend, warm_start=False)
        assert loose.objective == free_opt
        assert not evaluate(bound.checked, loose.classifier).feasible, (backend, "the free optimum meets it")
        res = bound.solve(backend=backend, warm_start=False)
        assert res.status == "optimal" and res.verified and res.evaluation.feasible, (backend, res.report)
        assert res.objective == constrained_opt, (backend, res.report)


@pytest.mark.parametrize("constraint, holds", [
    ("every leaf: samples > 3", False), ("every leaf: samples >= 3", True), ("every leaf: samples < 4", True),
    ("every leaf: samples < 3", False),
])
def test_a_strict_per_leaf_bound_is_re_checked_as_checked_not_as_written(constraint, holds):
    """``samples > 3`` is ``samples >= 4``: a leaf of 3 rows breaks it (the re-check used the
    sides as written and let it pass, so a warm start that broke it was kept as verified)."""
    from odt.compiler.classifiers import Leaf, Split, Tree
    from odt.compiler.evaluate import evaluate

    prog = odt.compile(f"model tree(depth <= 1)\nsubject to {{ {constraint} }}",
                       data={"a": [0, 0, 0, 1, 1, 1], "class": [0, 0, 1, 1, 1, 1]})
    a = prog.dataset.features.find_name("a")
    tree = Tree((a,), prog.dataset.classes, Split(0, Leaf(1), Leaf(0)), ("a",))
    ev = evaluate(prog.checked, tree)
    assert [c.holds for c in ev.constraints if c.text == constraint] == [holds]
