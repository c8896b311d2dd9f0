"""compiler/fixing.py: fixing booleans of an IR model and propagating the zeros.

Specification: the fixed model has exactly the solutions of the model that agree with the
fixed values — so its optimum equals the optimum of the model with unit clauses for them
(both solved by a real solver), a contradictory fixing is infeasible, and the pass only
shrinks the rows.
"""
from __future__ import annotations

import dataclasses
import doctest

import numpy as np
import pytest

import odt
from odt.backends import get_backend
from odt.backends.base import SolveOptions, Status
from odt.compiler import fixing, ir


def _program(seed: int):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (12, 3))
    y = (X[:, 0] ^ X[:, 1]) | (rng.random(12) < 0.2)
    data = {**{f"f{j}": X[:, j].tolist() for j in range(3)}, "class": y.astype(int).tolist()}
    return odt.compile("model diagram(widths = [1, 2, 2])\nminimize errors + 0.5 * nodes", data=data)


def test_the_docstring_example():
    assert doctest.testmod(fixing).failed == 0


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("backend", [pytest.param("milp", marks=pytest.mark.slow), "cp"])  # HiGHS: ~15 s each
def test_fixing_keeps_exactly_the_solutions_that_agree(seed, backend):
    prog = _program(seed)
    low = prog.lowered("flow", backend)
    model = low.model
    rng = np.random.default_rng(seed)
    structure = [v for role, v in model.roles.items() if role[0] in ("d", "y", "e", "p0")]
    solver = get_backend(backend)
    reference = solver.solve(model, SolveOptions(time_limit=60))
    assert reference.status is Status.OPTIMAL and reference.values is not None
    chosen = rng.choice(structure, size=len(structure) // 2, replace=False)
    values = {int(v): bool(reference.values[v]) for v in chosen}  # agree with an optimum
    for fixed in (values, {**values, int(chosen[0]): not values[int(chosen[0])]}):
        units = dataclasses.replace(model, clauses=model.clauses + tuple(ir.Clause((v if b else -v,))
                                                                          for v, b in fixed.items()))
        small = fixing.fix_booleans(model, fixed)
        assert len(small.linears) <= len(model.linears)
        a, b = solver.solve(units, SolveOptions(time_limit=60)), solver.solve(small, SolveOptions(time_limit=60))
        assert a.status == b.status
        if a.status is Status.OPTIMAL:
            assert a.objective == b.objective
            assert b.values is not None and all(bool(b.values[v]) == x for v, x in fixed.items())
