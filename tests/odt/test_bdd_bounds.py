"""dp's BDD enumeration bounds the BDD programs it does not take (odt/strategies/bdd_bounds.py,
issue 16: "hand its incumbent and bound to maxsat/cp").

Specification: the relaxation drops exactly the constraints dp does not take; its optimum
never exceeds the optimum the solvers prove without it; with the bounds maxsat and cp reach
the same optimum as without them; when the relaxed BDD satisfies the program it is the
answer, proved without a search; programs dp takes, and those with ``preselect``, get none.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import odt
from odt.compiler.errors import InfeasibleProgram
from odt.strategies.bdd_bounds import bdd_bounds, relaxation


def _data(seed: int, n: int = 28, m: int = 5) -> dict:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, m))
    y = (X[:, 0] & X[:, 1]) | (X[:, 2] ^ X[:, 3])
    y = np.where(rng.random(n) < 0.15, 1 - y, y)
    return {**{f"f{j}": X[:, j].tolist() for j in range(m)}, "class": y.tolist()}


def _program(seed: int, share: str, extra: str = "") -> odt.Program:
    return odt.compile(f"group g = f4 == 1\nmodel bdd(depth = 2)\nminimize errors\n"
                       f"subject to {{\n  accuracy(g) >= {share}\n{extra}}}", data=_data(seed))


def test_the_relaxation_keeps_only_what_dp_takes():
    prog = _program(0, "0.9", "  nodes <= 3\n")
    relaxed = relaxation(prog.checked)
    assert relaxed is not None and len(relaxed.constraints) == 1  # nodes <= 3 stays
    assert relaxation(odt.compile("model bdd(depth = 2)\nminimize errors", data=_data(0)).checked) is None
    pre = odt.compile("group g = f4 == 1\nmodel bdd(depth = 2)\nminimize errors\nsubject to { accuracy(g) >= 0.5 }\n"
                      "solve maxsat(preselect = 3)", data=_data(0))
    assert relaxation(pre.checked) is None


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("share", ["0.6", "0.8", "1"])
def test_the_bound_is_valid_and_changes_no_optimum(seed, share):
    prog = _program(seed, share)
    bounds = bdd_bounds(prog.checked, 10.0)
    assert bounds is not None
    try:
        plain = prog.solve(backend="cp", warm_start=False, time_limit=60)
    except InfeasibleProgram:  # no BDD reaches the share: the bounds do not make one up
        for backend in ("cp", "maxsat"):
            with pytest.raises(InfeasibleProgram):
                prog.solve(backend=backend, time_limit=60)
        return
    assert plain.status == "optimal"
    assert bounds.lower <= Fraction(plain.objective).limit_denominator(10**6)
    if bounds.incumbent is not None:
        assert bounds.incumbent[1] >= Fraction(plain.objective).limit_denominator(10**6)
    for backend in ("cp", "maxsat"):
        res = prog.solve(backend=backend, time_limit=60)
        assert res.status == "optimal" and res.verified, backend
        assert res.objective == pytest.approx(plain.objective), backend


def test_a_relaxed_bdd_that_satisfies_the_program_is_proved_without_a_search():
    prog = _program(1, "0")  # the constraint always holds: the relaxation is the program
    res = prog.solve(backend="maxsat", time_limit=60)
    assert res.status == "optimal" and "no search needed" in res.log
    direct = odt.compile("model bdd(depth = 2)\nminimize errors", data=_data(1)).solve(backend="dp")
    assert res.objective == direct.objective
