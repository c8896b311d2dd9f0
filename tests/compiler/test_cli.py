"""odtc end to end on real files: solve, save, predict, compile to WCNF, exit codes."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from odt.cli import main

ROOT = Path(__file__).resolve().parents[2]
QUICK = ROOT / "examples" / "quickstart.odt"
MOUSE = ROOT / "examples" / "mouse_small_tree.odt"


def test_solve_json_reports_status_objective_and_verification(capsys):
    assert main(["solve", str(MOUSE), "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "optimal" and out["verified"] is True
    assert out["objective"] == out["train_errors"] == out["bound"] and out["gap"] == 0.0
    assert {"status", "objective", "bound", "gap", "backend", "seconds", "train_errors", "verified", "constraints"} <= set(out)
    assert {c["constraint"]: c["holds"] for c in out["constraints"]} == {"depth <= 3": True, "leaves <= 5": True}


def test_solve_saves_a_model_that_predicts_the_training_file(tmp_path, capsys):
    model = tmp_path / "m.json"
    assert main(["solve", str(QUICK), "-o", str(model), "--quiet"]) == 0
    capsys.readouterr()
    preds = tmp_path / "p.csv"
    test_csv = ROOT / "examples" / "data" / "monks-1-test.csv"
    assert main(["predict", str(model), str(test_csv), "-o", str(preds)]) == 0
    rows = list(csv.reader(preds.open()))
    truth = [r[-1] for r in list(csv.reader(test_csv.open()))[1:]]
    assert rows[0] == ["prediction"] and len(rows) - 1 == len(truth)
    accuracy = sum(p[0] == t for p, t in zip(rows[1:], truth)) / len(truth)
    assert accuracy > 0.85  # generalises to the 432-row test set (88.9% at depth 3)


def test_render_prints_text_and_dot(tmp_path, capsys):
    model = tmp_path / "m.json"
    main(["solve", str(MOUSE), "-o", str(model), "--quiet"])
    capsys.readouterr()
    assert main(["render", str(model), "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith("digraph tree {") and "->" in dot
    svg = tmp_path / "m.svg"
    data = ROOT / "examples" / "data" / "mouse.csv"
    assert main(["render", str(model), "--format", "svg", "--data", str(data), "-o", str(svg)]) == 0
    text = svg.read_text()
    assert text.startswith("<svg") and "70 samples" in text  # the root holds every training row


def test_compile_stats_prints_the_encoding_size(capsys):
    assert main(["compile", str(MOUSE), "--stats"]) == 0
    out = capsys.readouterr().out
    assert "variables" in out and "clauses" in out and "literals" in out


def test_compile_stats_measures_the_model_that_to_writes(capsys, tmp_path):
    """--to pyomo writes Florio's flow model: --stats gives its size, not the paths one."""
    assert main(["compile", str(MOUSE), "--stats", "--to", "wcnf", "-o", str(tmp_path / "m.wcnf")]) == 0
    paths = capsys.readouterr().out
    assert main(["compile", str(MOUSE), "--stats", "--to", "pyomo", "-o", str(tmp_path / "m")]) == 0
    flow = capsys.readouterr().out
    assert paths.startswith("paths encoding for --to wcnf") and flow.startswith("flow encoding for --to pyomo")
    rows = int(flow.split("linear rows")[1].split()[0])
    assert rows > 0 and "clauses 0" in flow


@pytest.mark.parametrize("legacy", [False, True])
def test_written_wcnf_solved_by_a_fresh_rc2_process_gives_the_same_optimum(tmp_path, capsys, legacy):
    wcnf = tmp_path / "m.wcnf"
    args = ["compile", str(MOUSE), "--to", "wcnf", "-o", str(wcnf)] + (["--legacy"] if legacy else [])
    assert main(args) == 0
    main(["solve", str(MOUSE), "--json", "--quiet"])
    optimum = json.loads(capsys.readouterr().out)["objective"]
    script = (
        "import sys\n"
        "from pysat.formula import WCNF\nfrom pysat.examples.rc2 import RC2Stratified\n"
        "f = WCNF(from_file=sys.argv[1])\n"
        "with RC2Stratified(f) as r:\n    r.compute(); print(r.cost)\n"
    )
    cost = subprocess.run([sys.executable, "-c", script, str(wcnf)], capture_output=True, text=True, check=True).stdout
    assert int(cost) == optimum  # unit weights: the WCNF cost is the number of errors


def test_user_errors_exit_1_without_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.odt"
    bad.write_text("model tree(depth <= 2)\nminimize errors +\n")
    assert main(["solve", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.odt:2:18" in err and "Traceback" not in err


def test_missing_program_file_is_a_user_error(capsys):
    assert main(["check", "no/such/file.odt"]) == 1
    assert "not found" in capsys.readouterr().err


def test_infeasible_program_says_so(tmp_path, capsys):
    prog = tmp_path / "inf.odt"
    prog.write_text(f'data "{ROOT / "examples" / "data" / "mouse.csv"}" {{ target class }}\n'
                    "model tree(depth <= 1)\nminimize errors\nsubject to { errors == 0 }\n")
    assert main(["solve", str(prog), "--quiet"]) == 1
    assert "infeasible" in capsys.readouterr().err


def test_time_limit_returns_a_status(capsys):
    assert main(["solve", str(QUICK), "--json", "--quiet", "--time-limit", "0.01"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] in ("optimal", "feasible", "unknown")
    if out["status"] == "feasible":
        assert out["verified"] is True and out["bound"] <= out["objective"]


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "odtc"
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "solve" in out.stdout
