"""Anytime behaviour of the dp engine (issue 13, item 5): with a time limit too short to
finish, the best tree found so far (at worst the single leaf) with a proven bound and
status feasible; progress reports incumbents that never get worse."""
from __future__ import annotations

from pathlib import Path

import odt

ROOT = Path(__file__).resolve().parents[3]
TEXT = f'data "{ROOT / "examples" / "data" / "mouse.csv"}" {{ target class }}\n' \
       "model tree(depth <= 3, nodes <= 5)\nminimize errors + 1/2 * nodes\nsubject to { every path: f24 before f13 }\n"


def test_time_limit_gives_a_verified_incumbent_and_a_bound():
    prog = odt.compile(TEXT)
    res = prog.solve(backend="dp", time_limit=1e-9)  # the smallest budget: a time limit is positive (issue 18)
    assert res.status in ("feasible", "optimal") and res.verified
    assert res.bound is not None and res.bound <= res.objective


def test_progress_incumbents_improve_and_end_at_the_optimum():
    seen = []
    res = odt.compile(TEXT).solve(backend="dp", progress=lambda p: seen.append(p))
    assert res.status == "optimal" and res.verified
    values = [float(p.incumbent) for p in seen if p.incumbent is not None]
    assert values and values == sorted(values, reverse=True) and abs(values[-1] - res.objective) < 1e-9
