"""``Program`` orchestrates; it does not know dp (issue 25 item 3).

Specification: ``odt/program.py`` names no backend and picks no search lowering — a
program backend (``Backend.PROGRAM``) receives the program's search IRs (``Searches``)
and picks the one it searches; a dp solve reads its search lowering once (routing and
refusals ask the support table, the greedy start and the engine share one lowering); dp
results always carry their training errors; and the strategies get what they need as
arguments instead of importing ``odt.program`` back.
"""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import odt
from odt.backends import BACKENDS
from odt.backends.base import SolveOptions
from odt.compiler import lower_search as lower_search_module

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(3)
DATA = {"a": RNG.integers(0, 2, 60), "b": RNG.integers(0, 2, 60), "x": RNG.normal(size=60),
        "class": RNG.integers(0, 2, 60)}


def test_program_names_no_backend_and_picks_no_search_lowering():
    text = (ROOT / "odt" / "program.py").read_text()
    assert '"dp"' not in text and "'dp'" not in text
    assert "lower_search" not in text


def test_only_program_backends_search_the_program():
    assert [name for name, cls in BACKENDS.items() if cls.PROGRAM] == ["dp"]


@pytest.mark.parametrize("text", [
    "model tree(depth <= 2)\nminimize errors + 0.5 * nodes\nsubject to { every leaf: samples >= 3 }",
    "model tree(depth <= 3)\nminimize errors",
])
def test_a_dp_solve_reads_its_search_lowering_once(text, monkeypatch):
    reads = []
    original = lower_search_module._read

    def counted(program):
        reads.append(program)
        return original(program)

    monkeypatch.setattr(lower_search_module, "_read", counted)
    res = odt.compile(text, data=DATA).solve(backend="auto")
    assert res.backend == "dp" and res.verified
    assert len(reads) == 1


@pytest.mark.parametrize("text", ["model tree(depth <= 2)\nminimize errors + 0.5 * nodes",
                                  "model bdd(depth = 2)\nminimize errors"])
def test_dp_results_carry_their_training_errors(text):
    from odt.compiler.searches import Searches

    prog = odt.compile(text, data=DATA)
    clf, res = BACKENDS["dp"]().solve_program(Searches(prog.checked), SolveOptions())
    assert clf is not None and res.errors is not None
    assert float(res.errors) == pytest.approx(prog.solve(backend="dp").train_errors)


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def test_strategies_do_not_import_program_back():
    """Not even for type checking: they receive the solve they need as an argument."""
    offenders = [p.name for p in sorted((ROOT / "odt" / "strategies").glob("*.py")) if "odt.program" in _imports(p)]
    assert offenders == []
