"""The support table: one answer to "what works where", read by the checker, auto's
routing and the docs, and it matches what lowering does."""
from __future__ import annotations

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
