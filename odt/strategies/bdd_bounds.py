"""Bounds on an ordered BDD from dp's subset enumeration, for BDD programs that dp does not
take (issue 16: "hand its incumbent and bound to maxsat/cp").

A BDD program with constraints outside dp's fragment (group errors or rates, parity
differences: C1/C2) goes to ``maxsat`` or ``cp`` (Hu et al., IJCAI 2022, BDD2). Its
*relaxation* keeps the skeleton, the objective and the constraints dp takes (``nodes <=
K``, ``errors <= k``, ``errors == 0``) and drops the others. Every BDD of the program is a
BDD of the relaxation with the same objective value, so

* **lower bound**: the relaxation's optimum (or, on a time-out, dp's proven bound on it)
  is a lower bound on the program's first objective level;
* **incumbent**: the relaxation's optimal BDD, re-evaluated against the whole program
  (``evaluate``), is a BDD of the program when it satisfies the dropped constraints, with
  its value: the solver's cutoff (MaxSAT hard upper bound, CP-SAT bound) and, when it
  meets the lower bound, the proven optimum without any search.

Programs with ``preselect`` (whose feature set is a heuristic's choice) and objectives dp
does not take (``features_used``, group terms, a maximised objective) get no bounds.
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction

from odt.backends.base import SolveOptions, Status
from odt.backends.dp import DpBackend
from odt.compiler.checked import BddSkeleton, CheckedProgram, LinearConstraint
from odt.compiler.classifiers.diagram import Diagram
from odt.compiler.evaluate import evaluate
from odt.compiler.lower_search_bdd import lower_search_bdd, taken_limit
from odt.compiler.support import takes

from .diagram_bounds import DiagramBounds


def relaxation(c: CheckedProgram) -> CheckedProgram | None:
    """The BDD program ``c`` less the constraints dp does not take, or None when dp takes
    ``c`` itself or cannot take even that (objective, options)."""
    if not isinstance(c.skeleton, BddSkeleton) or takes(c, "dp"):
        return None
    if "preselect" in c.solve.options or c.objective.maximized:
        return None
    options = {k: v for k, v in c.solve.options.items() if k != "encoding"}
    relaxed = dataclasses.replace(
        c, constraints=tuple(k for k in c.constraints if isinstance(k, LinearConstraint) and taken_limit(k) is not None),
        solve=dataclasses.replace(c.solve, options=options))
    return relaxed if takes(relaxed, "dp") else None


def bdd_bounds(c: CheckedProgram, budget: float) -> DiagramBounds | None:
    """The relaxation's bound and, if it satisfies ``c``, its BDD as incumbent (None when
    there is no relaxation, or dp found nothing in ``budget`` seconds)."""
    relaxed = relaxation(c)
    if relaxed is None:
        return None
    bdd, res = DpBackend().solve_search(lower_search_bdd(relaxed), SolveOptions(time_limit=budget))
    if res.status is Status.INFEASIBLE or res.bound is None:  # the solver proves it again
        return None
    lower = Fraction(res.bound).limit_denominator(10**9)
    incumbent = None
    if isinstance(bdd, Diagram):  # dp decodes a BDD as a diagram with one feature per layer
        ev = evaluate(c, bdd)
        if ev.feasible and ev.objective:
            incumbent = (bdd, Fraction(ev.objective[0]).limit_denominator(10**9))
    return DiagramBounds(lower, incumbent, "dp's optimal BDD without the constraints dp does not take")
