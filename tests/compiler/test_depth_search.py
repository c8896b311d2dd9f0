"""S3 / Avellaneda's DT_depth and DT_size: the depth itself is minimised over a range."""
from __future__ import annotations

from pathlib import Path

import pytest

import odt
from odt.compiler.errors import InfeasibleProgram

MOUSE = Path(__file__).resolve().parents[2] / "examples" / "data" / "mouse.csv"


def program(objective: str, rng: str = "1..6", extra: str = "errors == 0") -> str:
    return f'data "{MOUSE}" {{ target class }}\nmodel tree(depth in {rng})\n{objective}\nsubject to {{ {extra} }}\n'


def test_mouse_needs_depth_four_and_seven_decision_nodes():
    # Avellaneda (AAAI 2020) Table 1: k = 4 and n = 15 nodes in all (7 decision nodes + 8 leaves)
    depth = odt.compile(program("minimize depth")).solve()
    assert depth.status == "optimal" and depth.verified and depth.objective == 4
    size = odt.compile(program("minimize depth then nodes")).solve()
    assert size.objective_levels == (4.0, 7.0) and size.classifier.n_nodes == 7 and size.verified


def test_every_smaller_depth_is_really_infeasible():
    with pytest.raises(InfeasibleProgram, match="every depth from 1 to 3"):
        odt.compile(program("minimize depth", "1..3")).solve()


def test_errors_bound_instead_of_perfect_classification():
    res = odt.compile(program("minimize depth", "0..6", "errors <= 4")).solve()
    assert res.objective == 2 and res.train_errors <= 4  # depth 1 leaves 6+ errors, depth 2 has 4


def test_incremental_strategy_finds_the_same_depth_with_fewer_rows():
    # Avellaneda's Algorithm 3: rows enter the SAT solver only when misclassified
    plain = odt.compile(program("minimize depth")).solve()
    inc = odt.compile(program("minimize depth") + "solve maxsat strategy incremental\n").solve()
    assert inc.status == "optimal" and inc.verified and inc.objective == plain.objective == 4
    rows_at_4 = int(inc.log.split("depth 4: ")[1].split(" rows")[0])
    assert rows_at_4 < 70  # fewer than all 70 rows were needed


@pytest.mark.parametrize("bound", ["errors == 0", "errors <= 2", "errors <= 5"])
def test_incremental_agrees_with_the_plain_depth_search(bound):
    plain = odt.compile(program("minimize depth", "0..6", bound)).solve()
    inc = odt.compile(program("minimize depth", "0..6", bound) + "solve maxsat strategy incremental\n").solve()
    assert inc.verified and inc.objective == plain.objective
    assert inc.train_errors <= int(bound.split()[-1])


def test_incremental_strategy_is_refused_outside_its_fragment():
    from odt.compiler.errors import UnsupportedConstruct

    text = f'data "{MOUSE}" {{ target class }}\nmodel tree(depth <= 2)\nminimize errors\nsolve maxsat strategy incremental\n'
    with pytest.raises(UnsupportedConstruct, match="strategy incremental"):
        odt.compile(text).solve()
