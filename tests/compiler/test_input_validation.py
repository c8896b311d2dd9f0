"""Issue 18 (inputs): every problem of a program in one run, every input checked where it
enters, data that alone makes a program infeasible, and inputs too long or too deep for
recursion. The fuzz corpus (tests/fuzz) covers the breadth; these are the specifications."""
from __future__ import annotations

import json
import math
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

import odt
from odt.cli import main
from odt.compiler.errors import InfeasibleProgram, OdtError, OdtSyntaxError

FUZZ = Path(__file__).resolve().parents[1] / "fixtures" / "fuzz"
DATA = FUZZ / "data.csv"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copy(DATA, tmp_path / "data.csv")
    return tmp_path


def check(folder: Path, text: str, capsys) -> tuple[int, str]:
    (folder / "p.odt").write_text(text)
    code = main(["check", str(folder / "p.odt")])
    return code, capsys.readouterr().err


def test_every_broken_statement_is_reported_in_one_run(folder, capsys):
    code, err = check(folder, 'data "data.csv" { target class }\nmodel tree(depth <= 2\n'
                              "minimize errors +\nsolve maxsat(\n", capsys)
    assert code == 1
    assert [line.split(": error:")[0] for line in err.splitlines() if ": error:" in line] == \
        [f"{folder / 'p.odt'}:3:1", f"{folder / 'p.odt'}:3:18", f"{folder / 'p.odt'}:4:14"]
    assert err.endswith("3 errors\n")


def test_a_program_without_data_still_has_its_typos_reported(folder, capsys):
    code, err = check(folder, "model tree(depth <= 2)\nminimize erors\n", capsys)
    assert code == 1
    assert "p.odt:1:1: error: the program has no data file" in err
    assert "p.odt:2:10: error: unknown quantity 'erors'" in err and "did you mean 'errors'?" in err


def test_a_data_file_name_with_a_nul_character_is_an_error_at_the_data_block(folder, capsys):
    code, err = check(folder, 'data "\x00data.csv" { target class }\nmodel tree(depth <= 2)\nminimize errors\n', capsys)
    assert code == 1 and "p.odt:1:1: error: data file name" in err and "NUL character" in err

@pytest.mark.parametrize("text", ["", "# nothing but a comment\n", "\n  \n"])
def test_an_empty_program_says_it_is_empty(folder, capsys, text):
    code, err = check(folder, text, capsys)
    assert code == 1 and "p.odt:1:1: error: the program is empty" in err


def test_a_program_that_is_not_utf8_is_reported_at_its_line_and_column(folder, capsys):
    (folder / "p.odt").write_bytes(b'data "data.csv" { target class }\nmodel tree(depth <= 2)\nminimize \xff errors\n')
    assert main(["check", str(folder / "p.odt")]) == 1
    assert "p.odt:3:10: error: the program is not UTF-8 text" in capsys.readouterr().err


@pytest.mark.parametrize("number", ["1e308", "9" * 400])
def test_a_number_out_of_range_is_an_error_at_the_number(folder, capsys, number):
    code, err = check(folder, f'data "data.csv" {{ target class }}\nmodel tree(depth <= 2)\nminimize {number} * errors\n',
                      capsys)
    assert code == 1 and "p.odt:3:10: error: number out of range" in err


@pytest.mark.parametrize("block, message", [
    ("target class drop class", "column 'class' is the target (line 1), so it cannot be dropped"),
    ("target class categorical class", "column 'class' is the target (line 1), so it cannot be declared categorical"),
    ("drop class", "column 'class' is the target (the default target"),
    ("binary smoker categorical smoker", "column 'smoker' is declared twice: binary at line 1, and as categorical here"),
    ("numeric age by quantiles(0)", "quantiles(0) makes no cut point"),
])
def test_data_block_mistakes_are_errors_at_the_declaration(folder, capsys, block, message):
    code, err = check(folder, f'data "data.csv" {{ {block} }}\nmodel tree(depth <= 2)\n', capsys)
    assert code == 1 and message in err, err
    assert "p.odt:1:" in err


@pytest.mark.parametrize("objective", ["minimize 5", "maximize 2 * 3", "minimize errors - errors", "minimize errors then 1"])
def test_a_constant_objective_is_an_error(folder, capsys, objective):
    code, err = check(folder, f'data "data.csv" {{ target class }}\nmodel tree(depth <= 2)\n{objective}\n', capsys)
    assert code == 1 and "every classifier would be optimal" in err


def test_all_zero_weights_are_an_error(folder, capsys):
    rows = DATA.read_text().splitlines()
    zero = [rows[0]] + [",".join(r.split(",")[:3] + ["0"] + r.split(",")[4:]) for r in rows[1:]]
    (folder / "data.csv").write_text("\n".join(zero) + "\n")
    code, err = check(folder, 'data "data.csv" { target class weight w }\nmodel tree(depth <= 2)\n', capsys)
    assert code == 1 and "weight column 'w' is 0 on every row" in err


def test_an_unknown_sat_solver_is_refused_at_the_option_before_anything_is_reported(folder, capsys):
    (folder / "p.odt").write_text('data "data.csv" { target class }\nmodel tree(depth <= 2)\nsolve maxsat(solver = "nosuchsat")\n')
    assert main(["check", str(folder / "p.odt")]) == 1
    out, err = capsys.readouterr()
    assert out == ""  # no "parses and type-checks" before the error
    assert "p.odt:3:14: error: unknown SAT solver 'nosuchsat'" in err


def test_a_sat_solver_python_sat_cannot_make_here_is_refused_at_the_option(folder, capsys):
    import pysat.solvers

    if getattr(pysat.solvers, "cms_present", True):
        pytest.skip("pycryptosat is installed: CryptoMiniSat is available")
    (folder / "p.odt").write_text('data "data.csv" { target class }\nmodel tree(depth <= 2)\nsolve maxsat(solver = "cms")\n')
    assert main(["check", str(folder / "p.odt")]) == 1
    err = capsys.readouterr().err
    assert "p.odt:3:14: error: the SAT solver 'cms' is not available here" in err and "internal" not in err


def test_a_sat_solver_that_cannot_be_interrupted_is_refused_under_a_time_limit_only(folder, capsys):
    """CaDiCaL has no limited solve in python-sat: with a time limit maxsat could not keep
    it (an internal NotImplementedError before); without one it solves."""
    prog = odt.compile('data "data.csv" { target class }\nmodel tree(depth <= 1)\nsolve maxsat(solver = "cd19")\n',
                       base_dir=folder)
    with pytest.raises(OdtError, match="cannot be interrupted"):
        prog.solve(time_limit=10)
    assert prog.solve().status == "optimal"
    (folder / "p.odt").write_text('data "data.csv" { target class }\nmodel tree(depth <= 1)\nsolve maxsat(solver = "cd19")\n')
    assert main(["solve", str(folder / "p.odt"), "--time-limit", "10", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "p.odt:3:14: error: backend 'maxsat' does not take the SAT solver 'cd19' under a time limit: 'cd19' cannot " \
        "be interrupted" in err and "Traceback" not in err


@pytest.mark.parametrize("limit", [0, -1, math.nan, math.inf, 1e300])
def test_a_time_limit_must_be_positive_and_finite(folder, limit):
    prog = odt.compile('data "data.csv" { target class }\nmodel tree(depth <= 1)\n', base_dir=folder)
    with pytest.raises(OdtError, match="positive finite number of seconds"):
        prog.solve(time_limit=limit)
    with pytest.raises(OdtError, match="positive finite number of seconds"):
        prog.explain(time_limit=limit)


@pytest.mark.parametrize("limit", ["0", "-5", "nan", "inf"])
def test_the_command_line_time_limit_must_be_positive_and_finite(folder, capsys, limit):
    (folder / "p.odt").write_text('data "data.csv" { target class }\nmodel tree(depth <= 1)\n')
    assert main(["solve", str(folder / "p.odt"), f"--time-limit={limit}"]) == 1
    assert "positive finite number of seconds" in capsys.readouterr().err


def test_long_and_deeply_nested_expressions_need_no_recursion(folder):
    terms = " + ".join(["errors"] * 3000)
    nested = "not (" * 400 + "smoker == 1" + ")" * 400
    prog = odt.compile(f'data "data.csv" {{ target class }}\ngroup g = {nested}\nmodel tree(depth <= 1)\n'
                       f"minimize {terms}\nsubject to {{ errors(g) <= 100 }}\n", base_dir=folder)
    (level,) = prog.checked.objective.levels
    assert [(q.kind, c) for q, c in level.terms] == [("errors", Fraction(3000))]
    assert prog.checked.groups["g"].sum() == sum(r.split(",")[2] == "1" for r in DATA.read_text().splitlines()[1:])


@pytest.mark.parametrize("formula, uses_age", [
    ("not (" * 1000 + "uses age" + ")" * 1000, True),  # an even number of nots
    ("not (" * 999 + "uses age" + ")" * 999, False),
    ("not (uses smoker or " * 600 + "uses age" + ")" * 600, None),  # and/or/not nested 1,200 deep
])
@pytest.mark.parametrize("backend", ["dp", "maxsat"])
def test_a_uses_formula_nested_a_thousand_deep_is_solved_on_dp_and_the_solvers(folder, formula, uses_age, backend):
    """Issue 24: 1,000 nested not passed check and was a RecursionError on dp (and an
    alternating and/or/not one on maxsat too)."""
    prog = odt.compile(f'data "data.csv" {{ target class }}\nmodel tree(depth <= 1)\nsubject to {{ {formula} }}\n',
                       base_dir=folder)
    res = prog.solve(backend=backend)
    assert res.status == "optimal" and res.verified
    if uses_age is not None:
        assert ("age" in res.classifier.features_used()) == uses_age
    plain = odt.compile('data "data.csv" { target class }\nmodel tree(depth <= 1)\n'
                        f'subject to {{ {"uses age" if uses_age else "not (uses age)"} }}\n', base_dir=folder)
    if uses_age is not None:
        assert res.objective == plain.solve(backend=backend).objective


def test_abs_nested_too_deep_is_an_error_at_the_abs(folder, capsys):
    deep = "abs(" * 40 + "errors - 3" + ")" * 40
    code, err = check(folder, f'data "data.csv" {{ target class }}\nmodel tree(depth <= 1)\nsubject to {{ {deep} <= 5 }}\n',
                      capsys)
    assert code == 1 and f"p.odt:3:{14 + 4 * 32}: error: abs(...) nested more than 32 deep" in err
    assert "Traceback" not in err and "internal" not in err


@pytest.mark.parametrize("backend", ["dp", "maxsat", "cp", "milp"])
def test_a_constraint_the_data_cannot_meet_is_infeasible_on_every_backend(folder, backend):
    prog = odt.compile('data "data.csv" { target class }\nmodel tree(depth <= 2)\n'
                       "subject to { every leaf: samples >= 1000 }\n", base_dir=folder)
    with pytest.raises(InfeasibleProgram, match=r"more rows than the data has \(24 rows"):
        prog.solve(backend=backend)
    assert [text for text, _ in prog.explain()] == ["every leaf: samples >= 1000"]


@pytest.mark.parametrize("output", ["missing/model.json", ".", "data.csv/model.json"])
def test_an_unwritable_output_is_refused_before_solving(folder, capsys, monkeypatch, output):
    monkeypatch.chdir(folder)
    (folder / "p.odt").write_text('data "data.csv" { target class }\nmodel tree(depth <= 2)\n')
    for argv in (["solve", "p.odt", "-o", output], ["compile", "p.odt", "-o", output]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert f"cannot write '{output}'" in err and "status" not in err
    assert sorted(p.name for p in folder.iterdir()) == ["data.csv", "p.odt"]


def test_predict_names_an_unseen_category_or_predicts_the_majority_by_choice(folder, capsys):
    (folder / "p.odt").write_text('data "data.csv" { target class }\nmodel tree(depth <= 2)\nsolve dp\n')
    assert main(["solve", str(folder / "p.odt"), "-o", str(folder / "m.json"), "--quiet"]) == 0
    saved = json.loads((folder / "m.json").read_text())
    assert saved["seen"]["categories"]["job"] == ["clerk", "driver", "nurse", "teacher"]
    rows = DATA.read_text().splitlines()
    (folder / "new.csv").write_text("\n".join([rows[0], rows[1], rows[2].replace("nurse", "pilot")]) + "\n")
    capsys.readouterr()
    assert main(["predict", str(folder / "m.json"), str(folder / "new.csv")]) == 1
    assert "column 'job', row 2 (line 3): category 'pilot' did not occur in the training data" in capsys.readouterr().err
    assert main(["predict", str(folder / "m.json"), str(folder / "new.csv"), "--unknown", "majority"]) == 0
    out, err = capsys.readouterr()
    assert "column 'job': 1 row(s)" in err and "rows 2" in err
    majority = saved["classes"][saved["seen"]["majority"]]
    assert out.splitlines()[2] == str(majority)


def test_a_model_of_another_schema_version_is_refused_with_its_version(folder):
    (folder / "m.json").write_text(json.dumps({"schema": "odt.classifier/2", "type": "tree"}))
    with pytest.raises(OdtError, match="has schema 'odt.classifier/2'; this odt reads 'odt.classifier/1'"):
        odt.load_classifier(folder / "m.json")


def test_syntax_errors_are_syntax_errors(folder):
    with pytest.raises(OdtSyntaxError) as info:
        odt.compile("model tree(depth <= 2\nminimize errors @\n", base_dir=folder)
    assert len(info.value.diagnostics) == 2


def test_more_quantiles_than_values_cut_at_every_midpoint(folder):
    many = odt.compile('data "data.csv" { target class numeric age by quantiles(900000000) }\nmodel tree(depth <= 1)\n',
                       base_dir=folder)
    every = odt.compile('data "data.csv" { target class numeric age by thresholds(all) }\nmodel tree(depth <= 1)\n',
                        base_dir=folder)
    assert [f.threshold for f in many.dataset.features if f.column == "age"] == \
        [f.threshold for f in every.dataset.features if f.column == "age"]


@pytest.mark.parametrize("where, message", [
    ("missing/model.json", "does not exist"), ("", "it is a folder"), ("data.csv/model.json", "is a file, not a folder"),
])
def test_saving_a_classifier_from_python_to_an_unwritable_path_says_why(folder, where, message):
    res = odt.compile('data "data.csv" { target class }\nmodel tree(depth <= 1)\nminimize errors\n',
                      base_dir=folder).solve(backend="dp")
    with pytest.raises(OdtError, match=message):
        res.classifier.save(folder / where)
    assert sorted(p.name for p in folder.iterdir()) == ["data.csv"]  # nothing half-written
