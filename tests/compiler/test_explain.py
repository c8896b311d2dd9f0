"""Infeasible programs (issue 5, item 6): a plain 'infeasible', and on request a minimal
set of the program's own constraints that cannot hold together, quoted with their lines."""
from __future__ import annotations

import pytest

import odt
from odt.cli import main
from odt.compiler.errors import InfeasibleProgram

DATA = {"a": [0, 1, 0, 1, 1, 0], "g": [1, 1, 1, 0, 0, 0], "class": [1, 1, 1, 0, 1, 0]}
PROGRAM = """group G = g == 1
model tree(depth <= 2, leaves <= 3)
minimize errors
subject to {
    errors <= 100
    accuracy(G) >= 0.9
    predicted(1) <= 0
    every leaf: samples >= 1
}
"""


def test_infeasible_programs_raise_with_what_was_proved():
    with pytest.raises(InfeasibleProgram, match="infeasible: no classifier satisfies every constraint"):
        odt.compile(PROGRAM, data=DATA).solve()


def test_explain_names_exactly_the_conflicting_constraints():
    core = odt.compile(PROGRAM, data=DATA).explain()
    assert [text for text, _ in core] == ["accuracy(G) >= 0.9", "predicted(1) <= 0"]
    assert [span.line for _, span in core] == [6, 7]


def test_explain_includes_the_skeletons_size_limit_when_it_is_part_of_the_conflict():
    text = "model tree(depth <= 2, leaves <= 1)\nminimize errors\nsubject to { errors <= 1 }\n"
    core = odt.compile(text, data={"a": [0, 1, 0, 1], "class": [0, 1, 0, 1]}).explain()
    assert len(core) == 2 and core[1][0] == "leaves <= 1 (model)"


def test_a_feasible_program_has_nothing_to_explain():
    assert odt.compile("model tree(depth <= 2)\nminimize errors", data=DATA).explain() == []


def test_cli_explain(tmp_path, capsys):
    import csv

    path = tmp_path / "d.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(list(DATA))
        w.writerows(zip(*DATA.values()))
    prog = tmp_path / "p.odt"
    prog.write_text('data "d.csv" { target class }\n' + PROGRAM)
    assert main(["solve", str(prog), "--explain", "--quiet"]) == 1
    out = capsys.readouterr()
    assert "infeasible" in out.err and "p.odt:7: accuracy(G) >= 0.9" in out.out and "p.odt:8: predicted(1) <= 0" in out.out
