"""Where ``odtc`` writes (issue 24, items 5 and 6): ``-o`` never overwrites an input of the
run — the program, its data file, a model, a CSV — whatever name it is given (compared by
device and inode), refused before any work; and a result whose output cannot be written
after all (the folder gone, a folder or a file in the way) is still printed and kept in a
temporary file the error names, with exit code 1 and never an internal error.

The write failures are real: the output's folder is taken away while ``odtc`` waits to
read its input from a named pipe (``mkfifo``), so the run passes its first check of the
output and fails only when it writes — also as root, which ``chmod`` does not stop."""
from __future__ import annotations

import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest

from odt.cli import main

FUZZ = Path(__file__).resolve().parents[1] / "fixtures" / "fuzz"
PROGRAM = 'data "data.csv" { target class }\nmodel tree(depth <= 1)\nsolve dp\n'


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    shutil.copy(FUZZ / "data.csv", tmp_path / "data.csv")
    (tmp_path / "p.odt").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def solved_model(folder: Path, capsys) -> Path:
    assert main(["solve", "p.odt", "-o", "m.json", "--quiet"]) == 0
    capsys.readouterr()
    return folder / "m.json"


# ---------------------------------------------------------------- -o onto an input (item 5)

@pytest.mark.parametrize("command", ["solve", "compile"])
def test_o_onto_the_program_file_is_refused_before_any_work(folder, capsys, command):
    before = contents(folder)
    assert main([command, "p.odt", "-o", "p.odt"]) == 1
    out, err = capsys.readouterr()
    assert "-o 'p.odt' would overwrite the program file 'p.odt', an input of this run" in err
    assert "status" not in out and "Traceback" not in err
    assert contents(folder) == before


@pytest.mark.parametrize("command", ["solve", "compile"])
def test_o_onto_the_training_data_is_refused_at_the_data_block_before_solving(folder, capsys, command):
    before = contents(folder)
    assert main([command, "p.odt", "-o", "data.csv"]) == 1
    out, err = capsys.readouterr()
    assert re.search(r"^p\.odt:1:1: error: -o 'data.csv' would overwrite the data file '\S*data\.csv', an input",
                     err, re.M), err
    assert "status" not in out
    assert contents(folder) == before


@pytest.mark.parametrize("link", [os.link, os.symlink])
def test_another_name_of_an_input_is_the_same_file(folder, capsys, link):
    link(folder / "data.csv", folder / "alias.csv")
    (folder / "sub").mkdir()
    before = (folder / "data.csv").read_bytes()
    for output in ("alias.csv", "./data.csv", "sub/../data.csv", str(folder / "data.csv")):
        assert main(["solve", "p.odt", "-o", output, "--quiet"]) == 1
        assert f"-o '{output}' would overwrite the data file" in capsys.readouterr().err
    assert (folder / "data.csv").read_bytes() == before


def test_a_data_file_named_from_another_folder_is_found(folder, capsys):
    (folder / "progs").mkdir()
    (folder / "progs" / "q.odt").write_text(PROGRAM.replace('"data.csv"', '"../data.csv"'))
    assert main(["solve", "progs/q.odt", "-o", "data.csv"]) == 1
    assert "progs/q.odt:1:1: error: -o 'data.csv' would overwrite the data file" in capsys.readouterr().err


@pytest.mark.parametrize("output, what", [("x.csv", "the data file 'x.csv'"), ("m.json", "the model file 'm.json'")])
def test_predict_o_onto_its_model_or_its_rows_is_refused(folder, capsys, output, what):
    solved_model(folder, capsys)
    shutil.copy(folder / "data.csv", folder / "x.csv")
    before = contents(folder)
    assert main(["predict", "m.json", "x.csv", "-o", output]) == 1
    assert f"-o '{output}' would overwrite {what}" in capsys.readouterr().err
    assert contents(folder) == before


@pytest.mark.parametrize("argv, what", [
    (["render", "m.json", "-o", "m.json"], "the model file 'm.json'"),
    (["render", "m.json", "--format", "svg", "--data", "data.csv", "-o", "data.csv"], "the data file 'data.csv'"),
])
def test_render_o_onto_its_model_or_its_rows_is_refused(folder, capsys, argv, what):
    solved_model(folder, capsys)
    before = contents(folder)
    assert main(argv) == 1
    assert f"would overwrite {what}" in capsys.readouterr().err
    assert contents(folder) == before


def test_compile_to_pyomo_refuses_a_name_that_both_of_its_files_would_take(folder, capsys):
    assert main(["compile", "p.odt", "--to", "pyomo", "-o", "m.mps"]) == 1
    assert "--to pyomo writes a .lp file and a .mps file, and both would be 'm.mps'" in capsys.readouterr().err
    assert not (folder / "m.mps").exists()


def test_compile_refuses_a_second_file_that_is_an_input(folder, capsys):
    (folder / "p.mps").write_text("the user's file\n")
    os.replace(folder / "p.odt", folder / "p.lp")  # -o p: the LP is p.lp (the program), the MPS p.mps
    assert main(["compile", "p.lp", "--to", "pyomo", "-o", "p"]) == 1
    assert "-o 'p.lp' would overwrite the program file 'p.lp'" in capsys.readouterr().err
    assert (folder / "p.lp").read_text() == PROGRAM and (folder / "p.mps").read_text() == "the user's file\n"


@pytest.mark.parametrize("extra, message", [
    (["-o", "p.odt"], "-o 'p.odt' would overwrite the program file"),
    (["-o", "data.csv"], "-o 'data.csv' would overwrite the data file"),
    (["--plot", "data.csv"], "--plot 'data.csv' would overwrite the data file"),
    (["-o", "s.csv", "--plot", "./s.csv"], "-o 's.csv' and --plot './s.csv' name the same file"),
])
def test_sweep_refuses_outputs_onto_its_inputs_or_onto_each_other(folder, capsys, extra, message):
    pytest.importorskip("dask.distributed")
    (folder / "p.odt").write_text("param depth = 1\n" + PROGRAM.replace("depth <= 1", "depth <= depth"))
    before = contents(folder)
    assert main(["sweep", "p.odt", "--grid", "depth=1", "--folds", "2", "--scheduler", "none", "--quiet",
                 *extra]) == 1
    out, err = capsys.readouterr()
    assert message in err and "best:" not in out
    assert contents(folder) == before
