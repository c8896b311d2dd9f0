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
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from odt.cli import main
from odt.compiler.classifiers import load_classifier

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


# ---------------------------------------------------------------- a write that fails after the work (item 6)

def fed_through_a_pipe(path: Path, content: str, meanwhile) -> threading.Thread:
    """Make ``path`` a named pipe that gives ``content`` once ``odtc`` reads it, after
    ``meanwhile()`` has run: ``odtc`` checks its output before reading, so whatever
    ``meanwhile`` breaks is broken only when it writes."""
    if path.exists():
        path.unlink()
    os.mkfifo(path)

    def feed() -> None:
        with open(path, "w") as fh:  # waits for odtc to open the pipe
            meanwhile()
            fh.write(content)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return thread


BREAKS = {
    "the folder is removed": lambda out: shutil.rmtree(out.parent),
    "a folder takes the file's place": lambda out: out.mkdir(),
    "a file takes the folder's place": lambda out: (shutil.rmtree(out.parent), out.parent.write_text("a file\n")),
}
REASONS = {
    "the folder is removed": "the folder 'out' does not exist (any more)",
    "a folder takes the file's place": "it is a folder",
    "a file takes the folder's place": "a part of 'out' is a file, not a folder",
}


def kept_file(err: str, output: str, what: str) -> Path:
    match = re.search(rf"error: cannot write '{re.escape(output)}': .*; {what} is kept in '([^']+)'", err)
    assert match, err
    kept = Path(match.group(1))
    assert kept.parent == Path(tempfile.gettempdir()) and kept.is_file()
    return kept


@pytest.mark.parametrize("how", list(BREAKS))
def test_a_solve_whose_output_breaks_meanwhile_prints_the_result_and_keeps_it(folder, capsys, how):
    (folder / "out").mkdir()
    feeder = fed_through_a_pipe(folder / "p.odt", PROGRAM, lambda: BREAKS[how](folder / "out" / "m.json"))
    code = main(["solve", "p.odt", "-o", "out/m.json", "--quiet"])
    feeder.join(5)
    out, err = capsys.readouterr()
    assert code == 1 and "internal error" not in err and "Traceback" not in err
    assert "status      optimal" in out and "predict" in out and "saved to" not in out  # the result is printed
    assert REASONS[how] in err
    kept = kept_file(err, "out/m.json", "the classifier")
    try:
        assert load_classifier(kept).to_text() in out  # the very classifier printed
    finally:
        kept.unlink()


def test_a_solve_with_json_output_keeps_the_classifier_too(folder, capsys):
    (folder / "out").mkdir()
    feeder = fed_through_a_pipe(folder / "p.odt", PROGRAM, lambda: (folder / "out" / "m.json").mkdir())
    assert main(["solve", "p.odt", "-o", "out/m.json", "--json"]) == 1
    feeder.join(5)
    out, err = capsys.readouterr()
    assert json.loads(out)["status"] == "optimal"
    kept_file(err, "out/m.json", "the classifier").unlink()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_folder_made_read_only_meanwhile_keeps_the_classifier(folder, capsys):
    (folder / "out").mkdir()
    feeder = fed_through_a_pipe(folder / "p.odt", PROGRAM, lambda: (folder / "out").chmod(0o555))
    try:
        assert main(["solve", "p.odt", "-o", "out/m.json", "--quiet"]) == 1
    finally:
        feeder.join(5)
        (folder / "out").chmod(0o755)
    err = capsys.readouterr().err
    assert "permission denied" in err
    kept_file(err, "out/m.json", "the classifier").unlink()


@pytest.mark.parametrize("command, what", [("predict", "the predictions"), ("render", "the drawing")])
def test_predict_and_render_keep_what_they_could_not_write(folder, capsys, command, what):
    model = solved_model(folder, capsys).read_text()
    (folder / "out").mkdir()
    feeder = fed_through_a_pipe(folder / "m.json", model, lambda: shutil.rmtree(folder / "out"))
    argv = ["predict", "m.json", "data.csv"] if command == "predict" else ["render", "m.json", "--format", "dot"]
    assert main([*argv, "-o", "out/x"]) == 1
    feeder.join(5)
    err = capsys.readouterr().err
    assert "internal error" not in err
    kept = kept_file(err, "out/x", what)
    text = kept.read_text()
    kept.unlink()
    assert text.startswith("prediction\n" if command == "predict" else "digraph")


def test_compile_writes_what_it_can_and_keeps_the_rest(folder, capsys):
    (folder / "out").mkdir()
    feeder = fed_through_a_pipe(folder / "p.odt", PROGRAM, lambda: (folder / "out" / "m.mps").mkdir())
    assert main(["compile", "p.odt", "--to", "pyomo", "-o", "out/m"]) == 1
    feeder.join(5)
    err = capsys.readouterr().err
    assert "wrote out/m.lp" in err and (folder / "out" / "m.lp").read_text().strip()
    kept = kept_file(err, "out/m.mps", "the --to pyomo output")
    assert "ROWS" in kept.read_text()
    kept.unlink()


def test_a_sweep_whose_csv_cannot_be_written_prints_its_table_and_keeps_the_rows(folder, capsys):
    pytest.importorskip("dask.distributed")
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full (a device where every write fails: no space left)")
    (folder / "p.odt").write_text("param depth = 1\n" + PROGRAM.replace("depth <= 1", "depth <= depth"))
    code = main(["sweep", "p.odt", "--grid", "depth=1,2", "--folds", "2", "--scheduler", "none", "--quiet",
                 "-o", "/dev/full"])
    out, err = capsys.readouterr()
    assert code == 1 and "internal error" not in err
    assert "best: -D depth=" in out
    assert "cannot write '/dev/full': no space left on the device" in err
    kept = kept_file(err, "/dev/full", "the sweep's rows")
    rows = kept.read_text().splitlines()
    kept.unlink()
    assert rows[0].startswith("param_depth,fold,") and len(rows) == 1 + 2 * 2


def test_a_sweep_whose_plot_folder_goes_keeps_the_plot(folder, capsys):
    pytest.importorskip("dask.distributed")
    (folder / "out").mkdir()
    text = "param depth = 1\n" + PROGRAM.replace("depth <= 1", "depth <= depth")
    feeder = fed_through_a_pipe(folder / "p.odt", text, lambda: shutil.rmtree(folder / "out"))
    code = main(["sweep", "p.odt", "--grid", "depth=1", "--folds", "2", "--scheduler", "none", "--quiet",
                 "--plot", "out/s.svg"])
    feeder.join(5)
    out, err = capsys.readouterr()
    assert code == 1 and "best: -D depth=1" in out
    kept = kept_file(err, "out/s.svg", "the plot")
    assert kept.read_text().startswith("<svg")
    kept.unlink()


# ---------------------------------------------------------------- what -o may name

def test_o_through_a_symbolic_link_writes_the_file_it_points_to(folder, capsys):
    (folder / "models").mkdir()
    (folder / "models" / "m.json").write_text("old\n")
    (folder / "latest.json").symlink_to(folder / "models" / "m.json")
    assert main(["solve", "p.odt", "-o", "latest.json", "--quiet"]) == 0
    assert (folder / "latest.json").is_symlink()
    assert load_classifier(folder / "models" / "m.json").n_leaves == 2


def test_o_onto_a_named_pipe_writes_into_the_pipe(folder, capsys):
    os.mkfifo(folder / "pipe")
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append((folder / "pipe").read_text()), daemon=True)
    reader.start()
    assert main(["predict", str(solved_model(folder, capsys)), "data.csv", "-o", "pipe"]) == 0
    reader.join(5)
    assert got and got[0].startswith("prediction\n") and (folder / "pipe").is_fifo()


_NOISY = r'''
import logging, os, sys
from odt.compiler import limits
from odt.outputs import stdout_for_results

print("before")
log = logging.getLogger("a-library")
log.addHandler(logging.StreamHandler(sys.stdout))  # bound to stdout, as Pyomo's handler is
for stop in (False, True):
    try:
        with stdout_for_results():
            print("noise: print")
            os.write(1, b"noise: native\n")
            log.error("noise: log")
            if stop:
                raise limits.Stopped(limits.TIME_LIMIT)
    except limits.Stopped:
        pass
    print("result", int(stop))
'''


def test_what_else_writes_on_stdout_while_a_command_computes_goes_to_stderr(tmp_path):
    """CI: a Pyomo error line on stdout before ``odtc solve --json``'s object made it
    unreadable. While a command computes, prints, log handlers bound to ``sys.stdout`` and
    native writes on descriptor 1 go to stderr; the command's own output, before and after
    (also after a stop raised inside), is stdout's only content."""
    run = subprocess.run([sys.executable, "-c", _NOISY], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "before\nresult 0\nresult 1\n"
    for noise in ("noise: print", "noise: native", "noise: log"):
        assert run.stderr.count(noise) == 2


@pytest.mark.parametrize("closed", ["stdout", "stderr"])
def test_a_closed_standard_stream_is_no_internal_error(tmp_path, closed):
    """``odtc solve p.odt >&-`` (or ``2>&-``): Python starts with that stream as None.
    The run succeeds, what would go there is dropped, and the progress lines never go to
    the other stream (``print(file=None)`` writes on stdout); it was a traceback and exit 1."""
    shutil.copy(FUZZ / "data.csv", tmp_path / "data.csv")
    (tmp_path / "p.odt").write_text(PROGRAM)
    odtc = Path(sys.executable).parent / "odtc"
    redirect = ">&-" if closed == "stdout" else "2>&-"
    run = subprocess.run(["sh", "-c", f'"{odtc}" solve p.odt {redirect}'], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    if closed == "stderr":
        assert run.stdout.startswith("status") and "[odtc]" not in run.stdout
    else:
        assert run.stdout == ""
