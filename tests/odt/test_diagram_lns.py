"""The layer large-neighbourhood search for diagrams (odt/strategies/diagram_lns.py,
``strategy lns``, issue 16) and the fixing pass it drives the solvers with
(compiler/fixing.py).

Specification: an incumbent embedded in Florio's flow encoding and fully fixed is the
encoding's only solution, at the incumbent's value; the LNS never returns a diagram worse
than its start or below the proven bound, every diagram it returns re-evaluates as
feasible, and from Florio's greedy diagram (suboptimal on the case below) it finds a
better one; ``strategy lns`` is taken on diagrams by cp and milp only, and its results
are verified. Real solvers, tiny data; no time is asserted.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import odt
from odt.backends import get_backend
from odt.backends.base import SolveOptions, Status
from odt.compiler.errors import UnsupportedConstruct
from odt.compiler.evaluate import evaluate
from odt.compiler.fixing import fix_booleans
from odt.strategies.diagram_bounds import diagram_bounds
from odt.strategies.diagram_greedy import warm_start
from odt.strategies.diagram_lns import embed, improve


def _data(seed: int, n: int = 20, m: int = 5) -> dict:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, m))
    y = (X[:, 0] & X[:, 1]) | (X[:, 2] ^ X[:, 3])
    y = np.where(rng.random(n) < 0.15, 1 - y, y)
    y[0], y[1] = 0, 1
    return {**{f"f{j}": X[:, j].tolist() for j in range(m)}, "class": y.tolist()}


def _program(seed: int, widths: str = "[1, 2, 2]", objective: str = "errors + 0.5 * nodes", solve: str = ""):
    return odt.compile(f"model diagram(widths = {widths})\nminimize {objective}\n{solve}", data=_data(seed))


@pytest.mark.parametrize("seed, widths", [(0, "[1, 2, 2]"), (1, "[1, 2, 2, 2]"), (3, "[1, 2, 3, 3]")])
@pytest.mark.parametrize("backend", ["milp", "cp"])
def test_an_embedded_incumbent_fixed_in_full_is_solved_at_its_own_value(seed, widths, backend):
    prog = _program(seed, widths)
    c = prog.checked
    low = prog.lowered("flow", backend)
    starts = [warm_start(c, 2.0), diagram_bounds(c, 2.0).incumbent]
    embedded = 0
    for start in starts:
        assert start is not None
        fixed = embed(low.encoding, c, start[0])
        if fixed is None:  # a greedy diagram can lie outside the encoding's family
            continue
        embedded += 1
        res = get_backend(backend).solve(fix_booleans(low.model, fixed), SolveOptions(time_limit=60))
        assert res.status is Status.OPTIMAL
        assert res.objective is not None and res.objective[0] == start[1]
        assert evaluate(c, low.encoding.decode(res.values, c.dataset, ("f0", "f1", "f2", "f3", "f4"))).objective[0] \
            == pytest.approx(float(start[1]))
    assert embedded >= 1  # the fitting tree always fits


@pytest.mark.parametrize("backend", [pytest.param("milp", marks=pytest.mark.slow), "cp"])
def test_the_lns_improves_the_greedy_diagram_and_stays_verified_and_above_the_optimum(backend):
    prog = _program(1)
    c = prog.checked
    start = warm_start(c, 2.0)
    bounds = diagram_bounds(c, 2.0)
    assert start is not None and bounds is not None
    optimum = prog.solve(backend="cp", warm_start=False, time_limit=120)
    assert optimum.status == "optimal"
    assert start[1] > Fraction(optimum.objective)  # the greedy start is suboptimal here
    out = improve(c, get_backend(backend), prog.lowered("flow", backend), start, bounds.lower,
                  SolveOptions(threads=1), 120)
    assert out is not None
    assert out.value < start[1] and out.improvements >= 1
    assert out.value >= bounds.lower and float(out.value) >= optimum.objective - 1e-9
    ev = evaluate(c, out.diagram)
    assert ev.feasible and ev.objective[0] == pytest.approx(float(out.value))


@pytest.mark.parametrize("seed, widths", [pytest.param(0, "[1, 2, 2, 2]", marks=pytest.mark.slow), (2, "[1, 2, 2]"),
                                          pytest.param(3, "[1, 2, 2, 2]", marks=pytest.mark.slow)])
def test_the_lns_never_returns_worse_than_its_start(seed, widths):
    prog = _program(seed, widths)
    c = prog.checked
    bounds = diagram_bounds(c, 2.0)
    for start in (warm_start(c, 2.0), bounds.incumbent):
        out = improve(c, get_backend("cp"), prog.lowered("flow", "cp"), start, bounds.lower, SolveOptions(), 60)
        if out is None:
            continue
        assert bounds.lower <= out.value <= start[1]
        assert evaluate(c, out.diagram).feasible


@pytest.mark.parametrize("backend", [pytest.param("milp", marks=pytest.mark.slow), "cp"])  # milp: minutes
def test_strategy_lns_solves_are_verified_and_never_worse_than_the_plain_solve(backend):
    plain = _program(1, solve=f"solve {backend}").solve(time_limit=120)
    res = _program(1, solve=f"solve {backend} strategy lns").solve(time_limit=120)
    assert res.verified and res.status in ("optimal", "feasible")
    assert res.log.startswith("lns from")
    assert res.bound is not None and res.bound <= res.objective + 1e-9
    if plain.status == "optimal":
        assert res.objective >= plain.objective - 1e-9
        if res.status == "optimal":
            assert res.objective == pytest.approx(plain.objective)


@pytest.mark.parametrize("text, message", [
    ("model tree(depth <= 2)\nminimize errors\nsolve cp strategy lns", "strategy lns"),
    ("model diagram(widths = [1, 2])\nminimize errors\nsolve maxsat strategy lns", "strategy lns"),
    ("model diagram(widths = [1, 2])\nminimize errors then nodes\nsolve milp strategy lns", "one objective level"),
])
def test_strategy_lns_is_refused_outside_diagrams_on_cp_and_milp(text, message):
    with pytest.raises(UnsupportedConstruct, match=message):
        odt.compile(text, data=_data(0)).solve(time_limit=30)


def test_strategy_lns_under_a_short_time_limit_returns_a_verified_incumbent():
    prog = _program(3, "[1, 2, 3, 3, 3]", solve="solve cp strategy lns")
    diagram_bounds(prog.checked, 2.0)  # the dp engines' imports, before a limit could stop one half-way
    shown: list = []
    res = prog.solve(time_limit=3, progress=shown.append)
    assert res.status in ("optimal", "feasible", "interrupted") and res.classifier is not None
    assert res.verified and res.bound is not None and res.bound <= res.objective + 1e-9
    assert all(p.bound is None or p.incumbent is None or p.bound <= p.incumbent for p in shown)
