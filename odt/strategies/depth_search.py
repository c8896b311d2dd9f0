"""S3: a depth range searched from its low end (Avellaneda's DT_depth / DT_size; Hu's
linear search on H for BDDs), and the incremental strategy (B3, Algorithm 3).

Input: the checked program and a function that solves the program of one depth (the
caller's whole solve: routing, warm starts, verification). Nothing here knows ``Program``."""
from __future__ import annotations

import dataclasses
import time
from typing import Callable

from odt.compiler.constructs import incremental_bound
from odt.compiler.errors import InfeasibleProgram
from odt.compiler.evaluate import evaluate
from odt.compiler.checked import BddSkeleton, CheckedProgram, LinearForm, QuantityRef, TreeSkeleton
from odt.result import SolveResult

#: solves the program of one depth within the seconds left (None: no limit)
DepthSolver = Callable[[CheckedProgram, "float | None"], SolveResult]


def depth_program(c: CheckedProgram, k: int) -> CheckedProgram:
    """The program a depth range solves at depth ``k``: the skeleton with ``depth <= k``
    (``depth = k`` for a BDD) and the objective without its first level, ``depth``
    (``errors`` when nothing follows it)."""
    sk = c.skeleton
    assert isinstance(sk, (TreeSkeleton, BddSkeleton))
    rest = c.objective.levels[1:] or (LinearForm.of(QuantityRef("errors")),)
    return dataclasses.replace(c, skeleton=dataclasses.replace(sk, depth=k, depth_range=None),
                               objective=dataclasses.replace(c.objective, levels=tuple(rest)))


def solve_depth_range(c: CheckedProgram, solve: DepthSolver, backend: str | None,
                      time_limit: float | None) -> SolveResult:
    """S3, Avellaneda's DT_depth / DT_size: ``tree(depth in a..b)`` with an objective
    whose first level is ``depth``. Depths a, a+1, ... are tried in turn, each as the
    program with ``depth <= k`` and the remaining objective levels, until one is
    feasible: that k is the minimum depth (every smaller one was proved infeasible),
    and the tree found there is optimal for the remaining levels. ``bdd(depth in a..b)``
    is Hu's linear search on H for P_bdd (with ``errors == 0``): each k is the BDD
    program with k levels, solved by ``solve``."""
    sk = c.skeleton
    assert isinstance(sk, (TreeSkeleton, BddSkeleton)) and sk.depth_range is not None
    kind = "tree" if isinstance(sk, TreeSkeleton) else "BDD"
    levels = c.objective.levels
    first = levels[0]  # minimize depth (the support table refuses a depth range without it: S3o)
    low, high = sk.depth_range
    clock = time.perf_counter()
    if c.solve.strategy == "incremental":  # on maxsat (B3), in its fragment (B3x): the support table says
        return incremental_depth(c, low, high, time_limit, clock)
    undecided = None  # the first depth neither proved infeasible nor solved (time limit)
    for k in range(low, high + 1):
        remaining = None if time_limit is None else time_limit - (time.perf_counter() - clock)
        if remaining is not None and remaining <= 0:
            undecided = k
            break
        try:
            res = solve(depth_program(c, k), remaining)
        except InfeasibleProgram:
            continue
        if res.classifier is None:  # stopped without a tree: depth k is undecided
            undecided = k
            break
        depth = float(res.classifier.depth)
        value = float(first.terms[0][1]) * depth + float(first.constant)
        status = res.status if res.classifier.depth == k or res.status != "optimal" else "optimal"
        return dataclasses.replace(res, status=status, objective=value,
                                   objective_levels=(value,) + (res.objective_levels if levels[1:] else ()),
                                   seconds=time.perf_counter() - clock,
                                   log=f"depth search: depths {low}..{k - 1} infeasible; " + res.log)
    if undecided is not None:  # only the depths below it were proved infeasible
        bound = float(first.terms[0][1]) * undecided + float(first.constant)
        return SolveResult("unknown", None, None, (), bound, None, backend or "auto", time.perf_counter() - clock,
                           None, False, (), None,
                           f"depth search: depths {low}..{undecided - 1} infeasible, depth {undecided} undecided "
                           "at the time limit")
    raise InfeasibleProgram(f"infeasible: no {kind} of depth at most {high} satisfies the program "
                            f"(every depth from {low} to {high} was proved infeasible)",
                            sk.span, "raise the upper end of the depth range or relax a constraint")


def incremental_depth(c: CheckedProgram, low: int, high: int, time_limit: float | None, clock: float) -> SolveResult:
    """DT_depth (``minimize depth``) or DT_size (``minimize depth then nodes``) with
    Algorithm 3 at each depth (B3); DT_size then searches the node count dichotomically
    on the solver of the minimum depth, under assumptions on the unary counter of
    Avellaneda's eqs (7)-(10). The log gives the rows and SAT calls each step needed."""
    from odt.strategies.incremental import dt_depth_size

    bound = incremental_bound(c)
    assert bound is not None, "internal: the support table refuses strategy incremental outside its fragment (B3x)"
    if time_limit is None:
        time_limit = c.solve.options.get("time_limit")
    deadline = None if time_limit is None else clock + float(time_limit)
    size = len(c.objective.levels) == 2
    out = dt_depth_size(c, low, high, bound, size, deadline)
    seconds = time.perf_counter() - clock
    if out.tree is None and out.optimal:
        raise InfeasibleProgram(f"infeasible: no tree of depth at most {high} satisfies the program "
                                f"(every depth from {low} to {high} was proved infeasible, incrementally)",
                                c.skeleton.span, "raise the upper end of the depth range")
    if out.tree is None:  # time limit before any tree: the depths below were proved infeasible
        return SolveResult("unknown", None, None, (), float(out.lower), None, "maxsat-incremental", seconds,
                           None, False, (), None, out.log)
    ev = evaluate(c, out.tree)
    levels = tuple(float(v) for v in ev.objective)
    verified = ev.feasible and out.depth is not None and out.tree.depth <= out.depth
    return SolveResult("optimal" if out.optimal else "feasible", out.tree, levels[0], levels, levels[0], 0.0,
                       "maxsat-incremental", seconds, ev.train_errors, verified, ev.constraints,
                       ev.train_errors, out.log, ev)
