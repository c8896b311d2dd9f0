"""Depth ranges (S3, Avellaneda's DT_depth / DT_size) on dp: the depth search solves each
depth's program, which the dp engine takes; optimum equal to maxsat's, routed by auto."""
from __future__ import annotations

import numpy as np
import pytest

import odt

PROGRAMS = [
    "model tree(depth in 1..3)\nminimize depth then nodes\nsubject to { errors <= 2 }",
    "model tree(depth in 1..3)\nminimize depth then errors\nsubject to { every path: f2 before f0\nerrors <= 4 }",
    "model tree(depth in 1..3)\nminimize depth then leaves\nsubject to { errors == 0 }",
]


@pytest.mark.parametrize("text", PROGRAMS)
def test_depth_range_on_dp_equals_maxsat(text):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, (30, 4))
    y = ((X[:, 0] & X[:, 1]) | X[:, 2]) ^ (rng.random(30) < 0.1)
    data = {f"f{j}": X[:, j].tolist() for j in range(4)} | {"class": y.astype(int).tolist()}
    prog = odt.compile(text, data=data)
    assert prog.backend_name() == "dp"
    try:
        ref = prog.solve(backend="maxsat")
    except odt.OdtError as e:
        assert "infeasible" in str(e)
        with pytest.raises(odt.OdtError, match="infeasible"):
            prog.solve()
        return
    got = prog.solve()
    assert "STreeD" in got.log and got.verified and ref.verified
    assert got.objective_levels == ref.objective_levels
