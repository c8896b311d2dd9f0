"""Every program in examples/ compiles, solves to proven optimality and re-verifies."""
from __future__ import annotations

from pathlib import Path

import pytest

import odt

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.odt"))


def test_there_are_at_least_three_examples():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_solves_to_optimality(path):
    res = odt.compile_file(path).solve(time_limit=120)
    assert res.status == "optimal"
    assert res.verified
    assert res.classifier is not None and res.classifier.to_text()
