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
