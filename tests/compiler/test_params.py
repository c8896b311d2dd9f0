"""Program parameters: ``param name = number`` stands wherever a number does, and is
overridden by ``odtc -D name=value`` or ``odt.compile(text, params={...})``; an unknown or
ill-typed override is a positioned error (never a traceback)."""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

import odt
from odt.cli import main
from odt.compiler.errors import OdtNameError, OdtTypeError

ROOT = Path(__file__).resolve().parents[2]
HABERMAN = ROOT / "examples" / "data" / "haberman.csv"

PROGRAM = f"""
param depth = 1
param alpha = 0.5
data "{HABERMAN}" {{ target class }}
model tree(depth <= depth)
minimize errors + alpha * nodes
"""


def test_the_declared_value_is_used_when_nothing_overrides_it():
    c = odt.compile(PROGRAM).checked
    assert c.skeleton.depth == 1
    assert [coef for _, coef in c.objective.levels[0].terms] == [1, Fraction(1, 2)]


def test_python_params_override_the_declaration_exactly():
    c = odt.compile(PROGRAM, params={"depth": 3, "alpha": 0.01}).checked
    assert c.skeleton.depth == 3
    assert c.objective.levels[0].terms[1][1] == Fraction(1, 100)  # 0.01 read as a decimal, exactly


def test_an_override_changes_the_solution_as_editing_the_file_would():
    by_param = odt.compile(PROGRAM, params={"depth": 2, "alpha": 0}).solve()
    edited = odt.compile(PROGRAM.replace("param depth = 1", "param depth = 2").replace("0.5", "0")).solve()
    assert by_param.objective == edited.objective and by_param.classifier == edited.classifier
    assert by_param.classifier.depth == 2


def test_a_parameter_stands_in_every_number_position(tmp_path):
    text = f"""
    param k = 4
    param lo = 40
    param hi = 60
    param m = 5
    param cap = 3
    param price = 2
    param cutoff = 50
    param t = 30
    data "{HABERMAN}" {{ target class  numeric age by quantiles(k)  numeric operation_year by [lo, hi] }}
    group old = age >= cutoff
    model tree(depth <= 2, leaves <= cap)
    minimize errors
    subject to {{
        every leaf: samples >= m
        threshold positive_axillary_nodes in [0, t]
        every path: cost <= 4 with cost {{ age: price, *: 1 }}
        errors(old) <= 200
    }}
    solve auto(seed = cap)
    """
    c = odt.compile(text).checked
    cuts = {f.threshold for f in c.dataset.features if f.column == "operation_year"}
    assert cuts == {40.0, 60.0}
    assert len({f.threshold for f in c.dataset.features if f.column == "age"}) <= 3  # quartiles
    assert c.skeleton.leaves == 3 and c.solve.options["seed"] == 3
    assert int(c.groups["old"].sum()) == int((c.dataset.table.numbers("age") >= 50).sum())
    res = odt.compile(text, params={"m": 20}).solve()
    assert res.verified and res.classifier.n_leaves <= 3


def test_a_depth_range_takes_parameters_on_both_ends():
    text = f"""param lo = 1
    param hi = 3
    data "{HABERMAN}" {{ target class }}
    model tree(depth in lo .. hi)
    minimize depth
    subject to {{ errors <= 80 }}"""
    assert odt.compile(text, params={"hi": 2}).checked.skeleton.depth_range == (1, 2)


def test_unknown_override_names_the_closest_parameter():
    with pytest.raises(OdtNameError) as exc:
        odt.compile(PROGRAM, params={"dpeth": 2})
    assert str(exc.value) == (
        "<params>:1:1: error: the program declares no parameter 'dpeth'\n"
        "    dpeth=2\n"
        "    ^^^^^\n"
        "  hint: did you mean 'depth'?")


def test_a_non_integer_where_an_integer_is_needed_points_at_the_use():
    with pytest.raises(OdtTypeError) as exc:
        odt.compile(PROGRAM, params={"depth": 2.5}, filename="p.odt")
    text = str(exc.value)
    assert text.startswith("p.odt:5:21: error: parameter 'depth' is 2.5 (overridden by depth=2.5), "
                           "but an integer is needed here")
    assert "                        ^^^^^" in text


def test_command_line_overrides_and_their_errors(tmp_path, capsys):
    prog = tmp_path / "p.odt"
    prog.write_text(PROGRAM)
    assert main(["solve", str(prog), "-D", "depth=2", "-D", "alpha=0", "--quiet", "--json"]) == 0
    assert '"status": "optimal"' in capsys.readouterr().out
    assert main(["check", str(prog), "-D", "depth=two"]) == 1
    err = capsys.readouterr().err
    assert err == ("<command line>:1:10: error: parameter 'depth': 'two' is not a number\n"
                   "    -D depth=two\n"
                   "             ^^^\n"
                   "  hint: e.g. -D depth=4 or params={'depth': 4}\n")
    assert main(["check", str(prog), "-D", "depth"]) == 1
    assert "'depth' is not an override: write name=value" in capsys.readouterr().err
    assert main(["check", str(prog), "-D", "alpha=1", "-D", "beta=2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("<command line>:1:15: error: the program declares no parameter 'beta'")
    assert "Traceback" not in err


def test_an_override_of_a_program_without_parameters_says_how_to_declare_one():
    with pytest.raises(OdtNameError, match=r"declare it in the program: param depth = 3"):
        odt.compile("model tree(depth <= 2)", data={"a": [0, 1], "class": [0, 1]}, params={"depth": 3})


def test_an_override_out_of_odt_number_range_is_refused_at_its_text():
    with pytest.raises(OdtTypeError) as exc:
        odt.compile(PROGRAM, params={"alpha": 1e300})
    assert str(exc.value).startswith("<params>:1:7: error: parameter 'alpha': number out of range")
    with pytest.raises(OdtTypeError, match=r"parameter 'depth' is 10000000000 .* larger than 1e9"):
        odt.compile(PROGRAM, params={"depth": 10**10})
