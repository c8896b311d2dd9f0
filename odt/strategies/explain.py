"""``odtc explain``: for an infeasible program, a minimal set of its own constraints that
cannot hold together (a deletion-based minimal unsatisfiable subset over the program's
constraints and the skeleton's size limits, each test a full solve by the caller's
``solve``: nothing here knows ``Program``)."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from odt.compiler import limits
from odt.compiler.errors import InfeasibleProgram, OdtError
from odt.compiler.checked import CheckedProgram, TreeSkeleton
from odt.result import SolveResult

#: solves a sub-program on a backend (None: auto) within a time limit; raises InfeasibleProgram
SubSolver = Callable[[CheckedProgram, "str | None", "float | None"], SolveResult]


def minimal_conflict(c: CheckedProgram, solve: SubSolver, backend: str | None = None,
                     time_limit: float | None = None, undecided: list | None = None) -> list[tuple[str, Any]]:
    """For an infeasible program: a minimal set of its own constraints (and skeleton
    size limits) that cannot hold together, as (source text, span) pairs. Deletion
    based: drop each constraint in turn and keep it out while the rest stays
    infeasible. Returns [] when the program is feasible.

    ``time_limit`` holds for the whole search (``compiler.limits``). A test it cuts short
    proves nothing: the item stays in the core (a conflict still, maybe not minimal) and
    its text goes to ``undecided``; when the first test (the whole program) is cut short,
    ``OdtError`` says that feasibility is undecided."""
    with limits.time_limit(time_limit):
        return _minimal_conflict(c, solve, backend, time_limit, undecided)


def _minimal_conflict(c: CheckedProgram, solve: SubSolver, backend: str | None, time_limit: float | None,
                      undecided: list | None) -> list[tuple[str, Any]]:
    sk = c.skeleton
    items: list[tuple[str, Any, Any]] = [("constraint", k, k) for k in c.constraints]
    if isinstance(sk, TreeSkeleton) and (sk.leaves is not None or sk.nodes is not None):
        items.append(("size", "size", sk))

    def infeasible(keep: list) -> bool | None:
        constraints = tuple(k for kind, k, _ in keep if kind == "constraint")
        skel = sk
        if isinstance(sk, TreeSkeleton) and not any(kind == "size" for kind, _, _ in keep):
            skel = dataclasses.replace(sk, leaves=None, nodes=None)
        sub = dataclasses.replace(c, constraints=constraints, skeleton=skel)
        try:
            res = solve(sub, backend if backend and backend != "dp" else None, time_limit)
        except InfeasibleProgram:
            return True
        return False if res.classifier is not None else None  # None: cut short, undecided

    first = infeasible(items)
    if first is None:
        raise OdtError("explain: undecided: the time limit (or an interrupt) ended the first test, of the "
                       "whole program, before it found a classifier or proved there is none",
                       hint="raise --time-limit")
    if not first:
        return []
    core = list(items)
    for item in list(items):
        trial = [x for x in core if x is not item]
        verdict = infeasible(trial)
        if verdict:
            core = trial
        elif verdict is None and undecided is not None:
            undecided.append(item[1].span.quote() if item[0] == "constraint" and item[1].span else str(item[1]))
    out = []
    for kind, k, obj in core:
        if kind == "constraint":
            out.append((k.span.quote() if k.span else str(k), k.span))
        else:
            limits = [f"{n} <= {v}" for n, v in (("leaves", obj.leaves), ("nodes", obj.nodes)) if v is not None]
            out.append((", ".join(limits) + " (model)", obj.span))
    return out
