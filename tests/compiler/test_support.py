"""The support table: one answer to "what works where", read by the checker, auto's
routing and the docs, and it matches what lowering does."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import odt
from odt import cli
from odt.compiler import support
from odt.compiler.errors import UnsupportedConstruct

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(0)
DATA = {"a": RNG.integers(0, 2, 40), "b": RNG.integers(0, 2, 40), "x": RNG.normal(size=40),
        "g": RNG.integers(0, 2, 40), "id": [f"r{i}" for i in range(40)], "class": RNG.integers(0, 2, 40)}
HEAD = 'data { target class\n id id }\ngroup G = g == 1\n'

#: a program using each construct, and the table key it must be classified under
PROGRAMS = [
    ("model tree(depth <= 2)", "S1"),
    ("model tree(depth <= 2, leaves <= 3)", "S2"),
    ("model tree(depth in 1..3)\nminimize depth", "S3"),
    ("model diagram(widths = [1, 2])", "S4"),
    ("model bdd(depth = 2)", "S5"),
    ("model tree(depth <= 1) { splits multivariate }", "S6"),
    ("model tree(depth <= 1)", "S7"),
    ("model tree(depth <= 2)\nmaximize accuracy", "O1"),
    ("model tree(depth <= 2)\nminimize errors + 0.1 * nodes", "O2n"),
    ("model tree(depth <= 2)\nminimize errors + 0.1 * leaves", "O2l"),
    ("model tree(depth <= 2)\nminimize errors + features_used", "O2f"),
    ("model tree(depth <= 2)\nminimize errors + features_used", "O2fo"),
    ("model tree(depth <= 2)\nsubject to { features_used <= 2 }", "O2f"),
    ("model tree(depth <= 2)\nsubject to { depth <= 1 }", "O2d"),
    ("model tree(depth <= 2)\nminimize errors then nodes", "O3"),
    ("model tree(depth <= 2)\nminimize depth", "O3d"),
    ("model tree(depth <= 2)\nminimize errors + abs(errors(G) - 3)", "Oabs"),
    ("model tree(depth <= 2)\nminimize errors + expected_cost", "Oec"),
    ("model tree(depth <= 2)\nsubject to { rate(1, G) >= 0.2 }", "C1"),
    ("model tree(depth <= 2)\nsubject to { errors <= 10 }", "O4"),
    ("model tree(depth <= 2)\nsubject to { errors(G) <= 10 }", "C1"),
    ("model tree(depth <= 2)\nsubject to { abs(errors(G) - 3) <= 2 }", "C2"),
    ("model tree(depth <= 2)\nsubject to { abs(errors(G) - 3) >= 2 }", "C2x"),
    ("model tree(depth <= 2)\nsubject to { every node: samples >= 3 }", "C3"),
    ("model tree(depth <= 2)\nsubject to { every leaf: samples >= 3 }", "C5"),
    ("model tree(depth <= 2)\nsubject to { same_leaf(r1, r2) }", "C6"),
    ("model tree(depth <= 2)\nsubject to { every leaf: errors <= 3 }", "C11"),
    ("model tree(depth <= 2)\nsubject to { every leaf: errors >= 1 }", "C11x"),
    ("model tree(depth <= 2)\nsubject to { every path: a before b }", "C7"),
    ("model tree(depth <= 2)\nsubject to { every path: cost <= 2 with cost { a: 1, *: 2 } }", "C8p"),
    ("model tree(depth <= 2)\nsubject to { every path: cost >= 2 with cost { a: 1, *: 2 } }", "C8x"),
    ("model tree(depth <= 2)\nsubject to { expected_cost <= 2 with cost { a: 1, *: 2 } }", "C8e"),
    ("model tree(depth <= 2)\nsubject to { uses a or not uses b }", "C9u"),
    ("model tree(depth <= 2)\nsubject to { every path: not (a and b) }", "C9x"),
    ("model tree(depth <= 2)\nsubject to { threshold x in [-1, 1] }", "C10"),
    ("model tree(depth in 1..3)\nminimize depth\nsubject to { errors <= 20 }\nsolve maxsat strategy incremental", "B3"),
    ("model bdd(depth = 2)\nsolve maxsat(preselect = 2)", "B5"),
    ("model tree(depth <= 2)\nsolve cp strategy lns", "B6"),
    ("model tree(depth <= 2)\nsolve milp(encoding = \"flow\")", "Ef"),
    ("model tree(depth <= 2)\nsolve milp(encoding = \"paths\")", "Ep"),
    # combinations a construct alone does not decide (once in the routing, the dp lowering or a strategy)
    ("model tree(depth in 1..3)\nminimize errors", "S3o"),
    ("model tree(depth <= 1) { splits multivariate }\nsolve milp(encoding = \"paths\")", "S6p"),
    ("model tree(depth <= 1) { splits multivariate }\nsubject to { every leaf: samples >= 2 }", "S6s"),
    ("model tree(depth <= 2)\nminimize errors(G)", "O2g"),
    ("cost T = { 0 as 1: 5 }\nmodel tree(depth <= 2)\nminimize misclassification_cost(T)", "Ocm"),
    ("model tree(depth <= 2)\nminimize 5 * fp + fn\nsubject to { errors <= 30 }", "Ocmx"),
    ("model tree(depth <= 2)\nmaximize f1", "Of1"),
    ("model tree(depth <= 2)\nmaximize errors\nsubject to { f1 >= 0.5 }", "Of1x"),
    ("model tree(depth <= 2)\nsubject to { balanced_accuracy >= 0.6 }", "Ccm"),
    ("model tree(depth <= 2)\nmaximize errors", "O2neg"),
    ("model tree(depth <= 2)\nsubject to { errors >= 3 }", "Olb"),
    ("model tree(depth <= 2)\nsubject to { every leaf: samples <= 30 }", "C5u"),
    ("model tree(depth <= 2)\nsolve maxsat strategy incremental", "B3x"),
    ("model diagram(widths = [1, 2])\nminimize errors then nodes\nsolve milp strategy lns", "B6x"),
    # regression (issue 26): a loss in the objective makes the numeric target a regression target
    ("model tree(depth <= 2)\nminimize squared_error", "R1"),
    ("model tree(depth <= 2)\nminimize mae + 0.1 * nodes", "R1a"),
    ("model tree(depth <= 2)\nmaximize squared_error", "Rneg"),
    ("model tree(depth <= 2)\nminimize mse\nsubject to { r2 >= 0.1 }", "R2"),
    ("model tree(depth <= 2)\nminimize squared_error\nsubject to { squared_error >= 1 }", "R3"),
    ("model tree(depth <= 2)\nminimize squared_error\nsubject to { features_used <= 1 }", "R3"),
    ("model tree(depth <= 2)\nminimize squared_error\nsubject to { uses a }", "R3"),
]


@pytest.mark.parametrize("text, key", PROGRAMS, ids=[f"{k}-{i}" for i, (_, k) in enumerate(PROGRAMS)])
def test_each_construct_is_recognised(text, key):
    prog = odt.compile(HEAD + text, data=DATA)
    assert key in {u.key for u in support.uses(prog.checked)}


def test_every_construct_of_the_table_has_a_program_above():
    assert {k for _, k in PROGRAMS} == set(support.BY_KEY)


@pytest.mark.parametrize("text, key", PROGRAMS, ids=[f"{k}-{i}" for i, (_, k) in enumerate(PROGRAMS)])
def test_a_construct_no_backend_takes_is_refused_by_solve_with_the_table_reason(text, key):
    prog = odt.compile(HEAD + text, data=DATA)
    skeleton = support.skeleton_name(prog.checked)
    if support.BY_KEY[key].takers(skeleton):
        return
    reason = support.BY_KEY[key].reason(skeleton, "maxsat")
    with pytest.raises(UnsupportedConstruct, match="not supported on a") as info:
        prog.solve(time_limit=20)
    assert reason is not None and reason[:30] in str(info.value)


def test_docs_support_md_is_the_generated_table(capsys):
    assert cli.main(["support", "--markdown"]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / "support.md").read_text(), \
        "regenerate with: odtc support --markdown > docs/support.md"


def test_the_text_table_lists_every_construct(capsys):
    assert cli.main(["support"]) == 0
    out = capsys.readouterr().out
    assert all(f"{c.key:<5}" in out for c in support.TABLE)


#: the constructs dp refuses where solver backends take them: each refusal names the construct
DP_REFUSED = [
    ("model tree(depth <= 2)\nminimize errors(G)\nsolve dp", "group quantities", "minimize errors(G)"),
    ("model tree(depth <= 2)\nmaximize errors\nsolve dp", "rewards errors, nodes or leaves", "maximize errors"),
    ("model tree(depth <= 2)\nsubject to { every leaf: samples <= 30 }\nsolve dp", "samples bounded from above",
     "every leaf: samples <= 30"),
    ("model bdd(depth = 2)\nsubject to { errors >= 3 }\nsolve dp", "bounded from below", "errors >= 3"),
    ("model tree(depth <= 2)\nminimize 5 * fp + fn\nsubject to { errors <= 30 }\nsolve dp",
     "a misclassification cost objective with a constraint", "minimize 5 * fp + fn"),
    ("model bdd(depth = 2)\nminimize errors - 0.5 * nodes\nsolve dp", "rewards errors, nodes or leaves",
     "minimize errors - 0.5 * nodes"),
]


@pytest.mark.parametrize("text, construct, quoted", DP_REFUSED, ids=[q for _, _, q in DP_REFUSED])
def test_dp_refuses_through_the_table_naming_the_construct_and_its_takers(text, construct, quoted):
    prog = odt.compile(HEAD + text, data=DATA)
    with pytest.raises(UnsupportedConstruct) as info:
        prog.solve(time_limit=20)
    message = info.value.render()
    assert f"backend 'dp' does not take" in message and construct in message and f"'{quoted}'" in message
    assert "backends that take it: maxsat, cp, milp" in message


def _dp_lowering(checked):
    from odt.compiler.checked import BddSkeleton
    from odt.compiler.lower_search import lower_search
    from odt.compiler.lower_search_bdd import lower_search_bdd

    return lower_search_bdd(checked) if isinstance(checked.skeleton, BddSkeleton) else lower_search(checked)


@pytest.mark.parametrize("text, key", PROGRAMS, ids=[f"{k}-{i}" for i, (_, k) in enumerate(PROGRAMS)])
def test_where_the_table_lets_a_backend_take_a_program_its_lowering_does(text, key):
    """The table is the one decision: no lowering refuses what it lets through."""
    from odt.backends import capabilities, get_backend
    from odt.program import Program
    from odt.strategies.depth_search import depth_program

    prog = odt.compile(HEAD + text, data=DATA)
    c = prog.checked
    sk = c.skeleton
    if getattr(sk, "depth_range", None) is not None and support.refused_everywhere(c) is None:
        c = depth_program(c, sk.depth_range[1])
        prog = Program(c)
    for backend in support.BACKENDS:
        if support.refusal(c, backend) is not None:
            continue
        if backend == "dp":
            _dp_lowering(c)
        else:
            get_backend(backend).check_capabilities(prog.lowered_for(backend).model, capabilities())


def test_an_unknown_constraint_shape_is_an_internal_error_not_a_refusal():
    """No fallback row: a constraint no family claims is a bug of odt's, never 'same_leaf'."""
    from odt.compiler.checked import StructuralConstraint

    prog = odt.compile(HEAD + "model tree(depth <= 2)", data=DATA)
    odd = dataclasses.replace(prog.checked, constraints=(StructuralConstraint(object(), prog.checked.model_span),))
    with pytest.raises(AssertionError, match="no constraint family claims"):
        support.uses(odd)


def test_every_refusal_is_built_by_the_one_function_of_the_support_module():
    """A refusal is raised from one module: nowhere else is an ``UnsupportedConstruct`` made."""
    makers = []
    for folder in ("compiler", "backends", "odt"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in ("compiler/support.py", "compiler/errors.py"):
                continue
            if "UnsupportedConstruct(" in path.read_text():
                makers.append(rel)
    assert makers == []


@pytest.mark.parametrize("text, key", PROGRAMS, ids=[f"{k}-{i}" for i, (_, k) in enumerate(PROGRAMS)])
def test_a_kept_verdict_is_the_verdict_made_anew(text, key):
    """What the table decides is kept per program and backend: asked again, with or
    without the solve directive, the answer is the one a fresh program gets, and a copy
    of the program with another directive is decided anew."""
    from odt.compiler.checked import SolveRequest

    fresh = lambda: odt.compile(HEAD + text, data=DATA).checked  # noqa: E731
    c = fresh()
    for backend in support.BACKENDS:
        first = support.refusal(c, backend)
        again = support.refusal(c, backend)
        assert (first is None) == (again is None) == (support.refusal(fresh(), backend) is None)
        if first is not None:
            assert again is not first and again.render() == first.render()  # a refusal is made anew
        assert support.takes(c, backend, directive=False) == support.takes(fresh(), backend, directive=False)
    lns = dataclasses.replace(c, solve=SolveRequest("auto", {}, "lns", None))
    assert support.refusal(lns, "dp") is not None  # the copy's own directive, not the kept verdict
