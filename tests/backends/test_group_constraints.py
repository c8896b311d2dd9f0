"""Group quantities and fairness constraints (C1, C2), written once against the skeleton's
prediction handle: every backend agrees with brute force on generated tiny programs, and
on a crafted case each constraint is proven active (it changes the optimum)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import odt
from odt.compiler.errors import InfeasibleProgram

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import enumerate_trees  # noqa: E402

BACKENDS = ("maxsat", "cp", "milp")
TOL = 1e-9


def _rate(pred, mask):
    return (pred[:, mask] == 1).sum(axis=1) / max(mask.sum(), 1)


# constraint text -> its value per enumerated tree (preds: trees x rows), and the test
CONSTRAINTS = {
    "rate(1, A) >= 0.8 * rate(1, B)": lambda p, y, A, B: _rate(p, A) >= 0.8 * _rate(p, B) - TOL,
    "abs(rate(1, A) - rate(1, B)) <= 0.2": lambda p, y, A, B: np.abs(_rate(p, A) - _rate(p, B)) <= 0.2 + TOL,
    "accuracy(A) >= 0.75": lambda p, y, A, B: (p[:, A] == y[A]).sum(axis=1) >= 0.75 * A.sum() - TOL,
    "tp(B) + fp(A) <= 2": lambda p, y, A, B: ((p[:, B] == 1) & (y[B] == 1)).sum(axis=1)
    + ((p[:, A] == 1) & (y[A] == 0)).sum(axis=1) <= 2,
    "errors(A) <= 1": lambda p, y, A, B: (p[:, A] != y[A]).sum(axis=1) <= 1,
    "predicted(1) >= 3": lambda p, y, A, B: (p == 1).sum(axis=1) >= 3,
    "fn(A) == 0": lambda p, y, A, B: ((p[:, A] == 0) & (y[A] == 1)).sum(axis=1) == 0,
}


@st.composite
def fair_cases(draw):
    n = draw(st.integers(4, 10))
    g = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n).filter(lambda v: 0 < sum(v) < len(v)))
    X = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=3, max_size=3), min_size=n, max_size=n)))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n).filter(lambda v: 0 < sum(v) < len(v)))
    picked = draw(st.lists(st.sampled_from(sorted(CONSTRAINTS)), min_size=1, max_size=2, unique=True))
    depth = draw(st.integers(1, 2))
    return X, np.array(y), np.array(g, dtype=bool), picked, depth


@pytest.mark.slow
@settings(derandomize=True, deadline=None, max_examples=120, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(fair_cases())
def test_backends_agree_with_brute_force_under_group_constraints(case):
    X, y, g, picked, depth = case
    table = enumerate_trees(X, [0, 1], depth)
    A, B = g, ~g
    feasible = np.ones(len(table), bool)
    for c in picked:
        feasible &= CONSTRAINTS[c](table.preds, y, A, B)
    data = {"f0": X[:, 0], "f1": X[:, 1], "f2": X[:, 2], "g": g.astype(int), "class": y}
    text = ("group A = g == 1\ngroup B = g == 0\n"
            f"model tree(depth <= {depth}) {{ features f0, f1, f2 }}\nminimize errors\n"
            "subject to {\n" + "\n".join(picked) + "\n}\n")
    prog = odt.compile(text, data=data)
    for backend in BACKENDS:
        if not feasible.any():
            with pytest.raises(InfeasibleProgram):
                prog.solve(backend=backend, warm_start=False)
            continue
        res = prog.solve(backend=backend, warm_start=False)
        best = int(table.errors(y)[feasible].min())
        assert res.status == "optimal" and res.verified, backend
        assert res.objective == best, (backend, picked)
        assert all(c.holds for c in res.constraints)


def test_four_fifths_rule_is_active_on_a_biased_dataset():
    # the label follows x for men only: the unconstrained tree predicts 1 mostly for men
    x = [1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0]
    sex = ["M"] * 6 + ["F"] * 6
    y = [1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0]
    data = {"x": x, "sex": sex, "class": y}
    base = 'group women = sex == "F"\ngroup men = sex == "M"\nmodel tree(depth <= 2)\nminimize errors\n'
    free = odt.compile(base, data=data).solve()
    rates = {c.text: c.value for c in odt.compile(base + "subject to { rate(1, women) >= 0 }", data=data).solve().constraints}
    fair_text = base + "subject to { rate(1, women) >= 0.8 * rate(1, men) }"
    for backend in BACKENDS:
        fair = odt.compile(fair_text, data=data).solve(backend=backend)
        assert fair.verified and fair.constraints[0].holds
        assert fair.objective > free.objective  # the constraint is active: it costs accuracy
    assert rates
