"""``auto`` routes without building: the backend is decided from the program and cheap
counts, and ``odtc check`` reports it with a size estimate instead of lowering."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import odt
from odt.program import Program
from odt.strategies.depth_search import depth_program
from odt.backends import capabilities, get_backend
from odt import cli, program as program_module
from odt.compiler import lower as lower_module
from odt.compiler.errors import UnsupportedConstruct
from odt.compiler.support import refusal
from odt.routing import estimate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"



def _continuous(n: int = 3000, p: int = 6, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X[:, 0] + 0.5 * X[:, 1] * X[:, 2] > 0).astype(int)
    return {**{f"x{j}": X[:, j] for j in range(p)}, "class": y}


@pytest.fixture
def no_lowering(monkeypatch):
    """Make every lowering an error: whatever passes under it did not build an encoding."""
    def forbidden(*args, **kwargs):
        raise AssertionError("an encoding was built")

    monkeypatch.setattr(lower_module, "lower", forbidden)
    monkeypatch.setattr(program_module, "lower", forbidden)


def test_auto_picks_dp_for_a_continuous_depth_three_tree_without_lowering(no_lowering):
    prog = odt.compile("model tree(depth <= 3)\nminimize errors", data=_continuous())
    assert prog.backend_name() == "dp"


def test_auto_picks_a_solver_backend_without_lowering(no_lowering):
    data = _continuous(200, 3)
    assert odt.compile("model tree(depth <= 2)\nminimize errors + 0.1 * nodes", data=data).backend_name() == "dp"
    assert odt.compile("model tree(depth <= 2)\nminimize errors\nsubject to { uses x0 }",
                       data=data).backend_name() == "dp"
    assert odt.compile("model tree(depth <= 2)\nminimize errors + features_used",
                       data=data).backend_name() in ("maxsat", "cp")
    assert odt.compile("model tree(depth <= 2) { splits multivariate }\nminimize errors",
                       data=data).backend_name() == "milp"


def test_check_reports_the_routed_backend_and_an_estimate_without_lowering(no_lowering, tmp_path, capsys):
    prog = tmp_path / "p.odt"
    csv = tmp_path / "d.csv"
    data = _continuous(2000, 4)
    cols = list(data)
    csv.write_text(",".join(cols) + "\n" + "\n".join(
        ",".join(repr(float(data[c][i])) if c != "class" else str(data[c][i]) for c in cols) for i in range(2000)))
    prog.write_text('data "d.csv" { target class }\nmodel tree(depth <= 3)\nminimize errors\n')
    assert cli.main(["check", str(prog)]) == 0
    out = capsys.readouterr().out
    assert "backend     dp (auto chose it)" in out
    prog.write_text('data "d.csv" { target class }\nmodel tree(depth <= 2)\nminimize errors + features_used\n')
    assert cli.main(["check", str(prog)]) == 0
    out = capsys.readouterr().out
    assert "paths encoding, estimated ~" in out and "clauses" in out


#: examples whose encoding takes seconds to build (raw thresholds on 768 rows): full tier only
LARGE_ENCODINGS = {"contree_diabetes"}


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in LARGE_ENCODINGS else [])
                                  for p in sorted(EXAMPLES.glob("*.odt"))])
@pytest.mark.parametrize("backend", ["maxsat", "cp", "milp"])
def test_routing_agrees_with_lowering_on_every_example(path, backend):
    """The cheap refusal says no exactly when lowering and the capability check do (for a
    depth range: on the program each depth solves)."""
    prog = odt.compile_file(path)
    sk = prog.checked.skeleton
    if getattr(sk, "depth_range", None) is not None:
        prog = Program(depth_program(prog.checked, sk.depth_range[1]))
    predicted = refusal(prog.checked, backend)
    try:
        get_backend(backend).check_capabilities(prog.lowered_for(backend).model, capabilities())
        actual = None
    except UnsupportedConstruct as exc:
        actual = exc
    assert (predicted is None) == (actual is None), (predicted, actual)
    if predicted is None:
        est = estimate(prog.checked, backend)
        assert est.variables > 0 and est.clauses > 0
