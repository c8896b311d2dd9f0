"""``odtc explain``: for an infeasible program, a minimal set of its own constraints that
cannot hold together (a deletion-based minimal unsatisfiable subset over the program's
constraints and the skeleton's size limits, each test a full solve)."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from odt.compiler.errors import InfeasibleProgram
from odt.compiler.checked import TreeSkeleton

if TYPE_CHECKING:
    from odt.program import Program


def minimal_conflict(program: "Program", backend: str | None = None,
                     time_limit: float | None = None) -> list[tuple[str, Any]]:
    """For an infeasible program: a minimal set of its own constraints (and skeleton
    size limits) that cannot hold together, as (source text, span) pairs. Deletion
    based: drop each constraint in turn and keep it out while the rest stays
    infeasible. Returns [] when the program is feasible."""
    c = program.checked
    sk = c.skeleton
    items: list[tuple[str, Any, Any]] = [("constraint", k, k) for k in c.constraints]
    if isinstance(sk, TreeSkeleton) and (sk.leaves is not None or sk.nodes is not None):
        items.append(("size", "size", sk))

    def infeasible(keep: list) -> bool:
        constraints = tuple(k for kind, k, _ in keep if kind == "constraint")
        skel = sk
        if isinstance(sk, TreeSkeleton) and not any(kind == "size" for kind, _, _ in keep):
            skel = dataclasses.replace(sk, leaves=None, nodes=None)
        sub = type(program)(dataclasses.replace(c, constraints=constraints, skeleton=skel))
        try:
            sub.solve(backend=backend if backend and backend != "dp" else None, time_limit=time_limit,
                      warm_start=True)
        except InfeasibleProgram:
            return True
        return False

    if not infeasible(items):
        return []
    core = list(items)
    for item in list(items):
        trial = [x for x in core if x is not item]
        if infeasible(trial):
            core = trial
    out = []
    for kind, k, obj in core:
        if kind == "constraint":
            out.append((k.span.quote() if k.span else str(k), k.span))
        else:
            limits = [f"{n} <= {v}" for n, v in (("leaves", obj.leaves), ("nodes", obj.nodes)) if v is not None]
            out.append((", ".join(limits) + " (model)", obj.span))
    return out
