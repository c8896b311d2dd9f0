"""Side constraints on diagram skeletons (issue 5): the structure and path constraints
written once in ``compiler/constraints/`` (one module per family), on the diagram's ``DagStructure``.

For each constraint form, a crafted dataset (3 features, widths [1, 2]) on which every
optimal diagram without the constraint violates it (its optimum is strictly better, and
re-evaluating that diagram against the constrained program fails), while the constrained
optimum satisfies it: milp, ``cp(encoding = "flow")`` and, when the boolean layer encoding
has structure handles, maxsat and cp on it, all reach the same optimum, every decoded
diagram re-verified. The datasets were found by a seeded search and are checked here
again by the backends' agreement. Tree constructs (leaves, ``same_leaf``) are refused."""
from __future__ import annotations

import pytest

import odt
from odt.compiler.data import Binarizer
from odt.compiler.errors import UnsupportedConstruct
from odt.compiler.evaluate import evaluate
from odt.compiler.skeletons.diagram_layers import DiagramLayersEncoding

#: (backend, solve directive): the flow encoding on milp and cp; the layer encoding on
#: maxsat and cp when it offers structure handles
SOLVERS = [("milp", "solve milp"), ("cp", 'solve cp(encoding = "flow")')]
if hasattr(DiagramLayersEncoding, "structure"):
    SOLVERS += [("maxsat", "solve maxsat"), ("cp", "solve cp")]

# constraint -> (X rows over f0, f1, f2; classes; unconstrained optimum; constrained optimum)
CASES = {
    "every node: samples >= 4": (
        [[1, 0, 0], [0, 1, 1], [0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 1, 0], [1, 0, 0], [1, 0, 0], [1, 1, 1],
         [1, 0, 1], [1, 1, 0]], [1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1], 2, 3),
    "nodes <= 1": (
        [[0, 0, 0], [1, 0, 1], [0, 0, 1], [1, 0, 1], [1, 0, 1], [1, 0, 1], [0, 1, 0], [0, 0, 1], [0, 0, 1]],
        [1, 0, 1, 0, 1, 0, 0, 1, 0], 2, 3),
    "every path: f0 before f1": (
        [[0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 0, 0], [1, 0, 0], [1, 0, 0], [0, 1, 1], [1, 0, 0], [0, 1, 0],
         [0, 0, 0], [0, 1, 0]], [0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0], 2, 3),
    "every path: not (f0 and f1)": (
        [[1, 0, 0], [1, 1, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1], [1, 1, 1], [0, 0, 0], [0, 1, 1], [1, 1, 0],
         [0, 1, 0]], [0, 1, 0, 1, 0, 1, 1, 1, 0, 0], 1, 2),
    "every path: cost <= 2 with cost { f0: 2, *: 1 }": (
        [[0, 0, 1], [0, 0, 1], [0, 1, 1], [0, 0, 1], [1, 0, 1], [1, 0, 0], [1, 0, 1], [0, 1, 1], [1, 0, 1],
         [1, 0, 0], [0, 0, 0]], [0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1], 4, 5),
    "expected_cost <= 1.5 with cost { f0: 2, *: 1 }": (
        [[1, 1, 0], [0, 0, 0], [0, 0, 1], [1, 1, 1], [0, 1, 0], [1, 1, 1], [1, 0, 0], [1, 1, 1], [1, 1, 0]],
        [1, 0, 0, 1, 1, 0, 1, 1, 1], 1, 2),
    "uses f2": (
        [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [1, 1, 1], [0, 0, 1], [0, 1, 1], [0, 1, 0]],
        [1, 1, 0, 1, 1, 1, 0, 1, 1], 0, 1),
    "not (uses f0 and uses f1)": (
        [[1, 0, 0], [1, 1, 1], [0, 0, 1], [1, 1, 1], [0, 0, 1], [1, 1, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0],
         [0, 1, 0], [0, 1, 1]], [1, 1, 1, 1, 0, 1, 0, 0, 1, 0, 1], 2, 3),
    "errors(A) <= 0": (  # a group constraint (C1), with the group A = f2 == 1
        [[1, 1, 1], [0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 1], [0, 1, 0], [1, 1, 0], [1, 0, 0], [0, 1, 1]],
        [0, 1, 0, 0, 0, 0, 1, 0, 1], 3, 4),
}


def program(X, y, constraint: str | None, directive: str, widths: str = "[1, 2]"):
    data = {f"f{j}": [row[j] for row in X] for j in range(3)}
    data["class"] = list(y)
    text = f"data {{ target class }}\ngroup A = f2 == 1\nmodel diagram(widths = {widths})\nminimize errors\n"
    if constraint is not None:
        text += f"subject to {{\n    {constraint}\n}}\n"
    return odt.compile(text + directive + "\n", data=data)


@pytest.mark.parametrize("constraint", sorted(CASES))
def test_constraint_is_active_and_every_backend_agrees(constraint):
    X, y, free, bound = CASES[constraint]
    for backend, directive in SOLVERS:
        res0 = program(X, y, None, directive).solve(backend=backend, warm_start=False)
        assert res0.status == "optimal" and res0.objective == pytest.approx(free), (backend, res0.report)
        prog = program(X, y, constraint, directive)
        # the unconstrained optimum is better, so no unconstrained optimal diagram satisfies it
        assert not evaluate(prog.checked, res0.classifier).feasible, (backend, res0.classifier.to_text())
        res = prog.solve(backend=backend, warm_start=False)
        assert res.status == "optimal" and res.objective == pytest.approx(bound), (backend, constraint, res.report)
        assert res.verified and res.evaluation.feasible, (backend, constraint, res.report)


@pytest.mark.slow
def test_stability_on_three_layers():
    """Florio eq. (20) on widths [1, 2, 2]: every decision node passes at least S rows."""
    X = [[1, 0, 1], [1, 1, 1], [1, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 1], [1, 1, 0], [1, 1, 0], [1, 1, 0],
         [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1], [0, 1, 0], [1, 0, 0]]
    y = [0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0]
    for backend, directive in SOLVERS:
        free = program(X, y, None, directive, "[1, 2, 2]").solve(backend=backend, warm_start=False)
        res = program(X, y, "every node: samples >= 4", directive, "[1, 2, 2]").solve(backend=backend,
                                                                                     warm_start=False)
        assert res.status == "optimal" and res.verified and res.evaluation.feasible, (backend, res.report)
        assert (free.objective, res.objective) == (1, 2), backend
        d = res.classifier
        prog = program(X, y, None, directive, "[1, 2, 2]")
        _, counts, _ = d.route(Binarizer(d.features).transform(prog.dataset.table))
        assert all(counts[i] >= 4 for i in d.reachable()), (backend, d.to_text())


@pytest.mark.parametrize("text, what", [
    ("every leaf: samples >= 2", "every leaf: samples >= 2"),
    ("leaves <= 3", "leaves <= 3"),
    ("same_leaf(r0, r1)", "same_leaf(r0, r1)"),
])
def test_tree_constructs_are_refused_on_diagrams(text, what):
    data = {"rid": ["r0", "r1", "r2", "r3"], "a": [0, 1, 0, 1], "b": [0, 0, 1, 1], "class": [0, 1, 1, 0]}
    prog = odt.compile("data { target class\n id rid }\nmodel diagram(widths = [1, 2])\nminimize errors\n"
                       f"subject to {{\n    {text}\n}}\n", data=data)
    for backend in ("milp", "cp", "maxsat"):
        with pytest.raises(UnsupportedConstruct, match="tree construct") as info:
            prog.solve(backend=backend)
        assert what in str(info.value) and "line 6" in str(info.value)


def test_leaves_in_a_diagram_objective_is_refused():
    prog = odt.compile("model diagram(widths = [1, 2])\nminimize errors + 0.5 * leaves",
                       data={"a": [0, 1, 0, 1], "b": [0, 0, 1, 1], "class": [0, 1, 1, 0]})
    with pytest.raises(UnsupportedConstruct, match="quantity leaves.*tree construct"):
        prog.solve(backend="milp")
