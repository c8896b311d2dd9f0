"""Emission round trips (B2): the files `odtc compile` writes, solved by the solver alone,
give the optimum of the in-process solve."""
from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import odt
from odt.cli import main
from odt.compiler.encode import objective

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = f'''data "{ROOT / "examples" / "data" / "mouse.csv"}" {{ target class }}
model tree(depth <= 2, leaves <= 3)
minimize errors + 0.5 * nodes
'''


@pytest.fixture
def program_file(tmp_path) -> Path:
    path = tmp_path / "p.odt"
    path.write_text(PROGRAM)
    return path


def level0(prog: odt.Program, backend: str, combined_value: float) -> Fraction:
    """The first objective level from the value of the emitted (combined integer) objective."""
    model = prog.lowered_for(backend).model
    c = objective.combine(model.objectives, model)
    lvl = c.levels[0]
    return Fraction(round(combined_value), lvl.scale) + lvl.offset


@pytest.mark.slow
def test_lp_and_mps_solved_by_highspy_directly(program_file, tmp_path, capsys):
    """The exported objective is the program's, constant included (nodes = leaves - 1):
    a MILP solver reports the value odt reports, with no conversion."""
    import highspy

    assert main(["compile", str(program_file), "--to", "pyomo", "-o", str(tmp_path / "m")]) == 0
    prog = odt.compile_file(program_file)
    optimum = prog.solve(backend="milp").objective
    for suffix in ("lp", "mps"):
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("mip_rel_gap", 0.0)
        assert h.readModel(str(tmp_path / f"m.{suffix}")) == highspy.HighsStatus.kOk
        h.run()
        assert h.getInfo().objective_function_value == pytest.approx(optimum)
    assert (tmp_path / "m.lp").read_text().startswith("\\ odt: the objective is errors + 1/2*nodes")


def test_wcnf_header_states_scale_and_offset(program_file, tmp_path, capsys):
    """RC2's cost of the exported file, mapped through the header's scale and offset, is
    odt's objective (errors + 0.5 * nodes has the offset -1/2: nodes = leaves - 1)."""
    import re

    from pysat.examples.rc2 import RC2Stratified
    from pysat.formula import WCNF

    assert main(["compile", str(program_file), "--to", "wcnf", "-o", str(tmp_path / "m.wcnf")]) == 0
    text = (tmp_path / "m.wcnf").read_text()
    found = re.search(r"^c odt objective \(.*\) = cost / (\d+) \+ (-?\d+(?:/\d+)?)$", text, re.M)
    assert found is not None, text[:300]
    with RC2Stratified(WCNF(from_file=str(tmp_path / "m.wcnf"))) as rc2:
        rc2.compute()
        cost = rc2.cost
    value = Fraction(cost, int(found.group(1))) + Fraction(found.group(2))
    assert float(value) == pytest.approx(odt.compile_file(program_file).solve(backend="maxsat").objective)


def test_cpmpy_file_loads_and_solves_with_cpmpy_alone(program_file, tmp_path, capsys):
    assert main(["compile", str(program_file), "--to", "cpmpy", "-o", str(tmp_path / "m.pkl")]) == 0
    script = ("import sys, cpmpy as cp\nm = cp.Model.from_file(sys.argv[1])\n"
              "assert m.solve('ortools')\nprint(m.objective_value())\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "m.pkl")], capture_output=True, text=True,
                         check=True).stdout
    prog = odt.compile_file(program_file)
    assert float(level0(prog, "cp", float(out))) == pytest.approx(prog.solve(backend="cp").objective)
