"""Every program in examples/ compiles, solves to proven optimality and re-verifies."""
from __future__ import annotations

from pathlib import Path

import pytest

import odt

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.odt"))


def test_there_are_at_least_three_examples():
    assert len(EXAMPLES) >= 3


#: examples whose solve takes seconds: the full tier (and CI) runs them, the fast tier does not
SLOW_EXAMPLES = {"diagram_mouse", "bdd_monks", "required_feature_diabetes"}


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in SLOW_EXAMPLES else [])
                                  for p in EXAMPLES])
def test_example_solves_to_optimality(path):
    res = odt.compile_file(path).solve(time_limit=120)
    assert res.status == "optimal"
    assert res.verified
    assert res.classifier is not None and res.classifier.to_text()


@pytest.mark.slow
def test_the_comparison_script_runs_on_every_constrained_example():
    """examples/compare.py (the table of examples/README.md) solves each constrained example
    with and without its constraints: a row for each, every constraint holding with them
    (dt_depth_mouse's strategy needs its constraint: the script drops the directive too)."""
    import subprocess
    import sys

    script = EXAMPLES[0].parent / "compare.py"
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "warning" not in run.stderr, run.stderr
    constrained = [p.name for p in EXAMPLES if "subject to" in p.read_text()]
    rows = [line for line in run.stdout.splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == constrained
    assert all(line.endswith("(holds) |") for line in run.stdout.splitlines()[2:])
