"""Agreement (issue 3): on generated tiny programs every backend that accepts the program
reaches the same optimum, and that optimum equals brute-force enumeration."""
from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import odt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import Case, brute_force_optimum, cases  # noqa: E402

BACKENDS = ("maxsat", "cp", "milp")


@st.composite
def programs(draw):
    case = draw(cases())
    depth = draw(st.integers(0, 2))
    alpha = draw(st.sampled_from([None, "0.5", "1", "2.5"]))
    leaves = draw(st.sampled_from([None, None, 1, 2, 3]))
    return case, depth, alpha, leaves


def program_text(case: Case, depth: int, alpha: str | None, leaves: int | None) -> str:
    params = [f"depth <= {depth}"] + ([f"leaves <= {leaves}"] if leaves is not None else [])
    objective = "minimize errors" if alpha is None else f"minimize errors + {alpha} * nodes"
    return case.header() + f"model tree({', '.join(params)})\n{objective}\n"


@pytest.mark.slow
@settings(derandomize=True, deadline=None, max_examples=300, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_every_backend_reaches_the_brute_force_optimum(program):
    case, depth, alpha, leaves = program
    limit = min(x for x in (leaves, 1 << depth) if x is not None)
    best = brute_force_optimum(case.X, case.y, depth, classes=case.classes, w=case.w,
                               alpha=Fraction(alpha or 0), max_leaves=limit)
    prog = odt.compile(program_text(case, depth, alpha, leaves), data=case.data())
    for backend in BACKENDS:
        res = prog.solve(backend=backend, warm_start=False)
        assert res.status == "optimal", (backend, res.log)
        assert res.verified, backend
        assert res.objective == pytest.approx(float(best.cost), abs=1e-9), (backend, case)


@settings(derandomize=True, deadline=None, max_examples=60, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_the_contree_warm_start_never_changes_the_optimum(program):
    """B4: with the ConTree cutoff the solvers search only strictly better trees; the
    result (the warm start itself when nothing is better) has the same optimum."""
    case, depth, alpha, leaves = program
    prog = odt.compile(program_text(case, depth, alpha, leaves), data=case.data())
    cold = prog.solve(backend="maxsat", warm_start=False).objective
    for backend in BACKENDS:
        warm = prog.solve(backend=backend, warm_start=True)
        assert warm.status == "optimal" and warm.verified
        assert warm.objective == pytest.approx(cold, abs=1e-9), backend
