"""Bounds on a decision diagram from optimal trees (issue 16): the dp engines make the
diagram MILP/CP/MaxSAT searches provable far more often.

* **Lower bound.** A diagram with L decision layers unfolds into a tree of depth <= L (a
  root-to-class path meets at most one node per layer) that predicts every row as the
  diagram does (Florio et al., AAAI 2023, Sec. 3: the diagram's paths are the tree's), so
  its errors are at least those of the optimal depth-L tree, E*_L. For an objective
  ``a * errors + b * nodes + k`` with a > 0, b >= 0, a diagram either has no decision node
  (errors E_0 of the best single class) or at least one, so
  ``objective >= min(a * E_0, a * E*_L + b) + k``; constraints only raise it. A time-out
  of the tree search still gives a valid bound (its proven lower bound on E*_L).
* **Incumbent.** A tree fits in the diagram when layer i holds its 2^i nodes of depth i:
  the optimal tree of depth d = max{d : widths[i] >= 2^i for i < d} is a diagram of the
  skeleton (``diagram_of_tree``) — with widths 1, 2, 4, ..., 2^(L-1) the diagram optimum
  *is* the depth-L tree's, proven at once.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

from odt.backends.base import BackendResult, SolveOptions, Status
from odt.backends.dp import DpBackend
from odt.compiler.checked import CheckedProgram, DiagramSkeleton, LinearForm, QuantityRef, TreeSkeleton
from odt.compiler.classifiers.diagram import Diagram, diagram_of_tree
from odt.compiler.evaluate import evaluate
from odt.compiler.lower_search import lower_search


@dataclass(frozen=True)
class DiagramBounds:
    lower: Fraction  # a proven lower bound on the first objective level
    incumbent: tuple[Diagram, Fraction] | None  # the best fitting tree as a diagram, with its value


def _linear_costs(c: CheckedProgram) -> tuple[Fraction, Fraction, Fraction] | None:
    """(a, b, k) when the only objective level is a * errors + b * nodes + k, a > 0, b >= 0."""
    if len(c.objective.levels) != 1 or c.objective.maximized:
        return None
    level = c.objective.levels[0]
    coef: dict[str, Fraction] = {}
    for q, v in level.terms:
        if q.group is not None or q.kind not in ("errors", "nodes"):
            return None
        coef[q.kind] = coef.get(q.kind, Fraction(0)) + v
    a, b = coef.get("errors", Fraction(0)), coef.get("nodes", Fraction(0))
    return (a, b, level.constant) if a > 0 and b >= 0 else None


def fitting_depth(widths: tuple[int, ...]) -> int:
    """The deepest complete tree whose levels fit in the layers."""
    d = 0
    while d < len(widths) and widths[d] >= 1 << d:
        d += 1
    return d


def _tree_program(c: CheckedProgram, depth: int) -> CheckedProgram:
    sk = c.skeleton
    return dataclasses.replace(
        c, skeleton=TreeSkeleton(depth, None, None, None, sk.span), constraints=(),
        objective=dataclasses.replace(c.objective, levels=(LinearForm.of(QuantityRef("errors")),)))


def tighten(res: BackendResult, lower: Fraction) -> BackendResult:
    """A solver's result with its bound raised to ``lower`` (optimal once they meet)."""
    bound = lower if res.bound is None or res.bound < lower else res.bound
    status = res.status
    if status is Status.FEASIBLE and res.objective and res.objective[0] <= bound:
        status = Status.OPTIMAL  # the incumbent meets the bound (the search stopped there)
    if bound == res.bound and status is res.status:
        return res
    return dataclasses.replace(res, status=status, bound=bound,
                               log=res.log + f"; bound {float(bound):g} (the optimal depth-L tree's)")


def diagram_bounds(c: CheckedProgram, budget: float) -> DiagramBounds | None:
    """The bounds above for a univariate diagram program with a linear errors/nodes
    objective (else None), spending at most ``budget`` seconds on each tree search."""
    sk = c.skeleton
    costs = _linear_costs(c)
    if not isinstance(sk, DiagramSkeleton) or c.splits != "univariate" or costs is None:
        return None
    a, b, k = costs
    dp = DpBackend()
    opts = SolveOptions(time_limit=budget)
    deep, res = dp.solve_search(lower_search(_tree_program(c, len(sk.widths))), opts)
    e_deep = res.bound if res.bound is not None else Fraction(0)
    w, y = c.dataset.row_weights(), c.dataset.y
    per_class = [Fraction(float(w[y == j].sum())).limit_denominator(10**9) for j in range(len(c.dataset.classes))]
    e_flat = sum(per_class, Fraction(0)) - max(per_class)  # the best single class
    lower = min(a * e_flat, a * e_deep + b) + k
    fit = fitting_depth(tuple(sk.widths))
    tree = deep if fit == len(sk.widths) and res.status is Status.OPTIMAL else \
        dp.solve_search(lower_search(_tree_program(c, fit)), opts)[0]
    d = diagram_of_tree(tree)
    ev = evaluate(c, d)
    incumbent = (d, Fraction(ev.objective[0]).limit_denominator(10**9)) if ev.feasible else None
    return DiagramBounds(lower, incumbent)
