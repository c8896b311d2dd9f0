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
