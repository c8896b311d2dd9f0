"""Bounds on a decision diagram from optimal trees (issue 16): the dp engines make the
diagram MILP/CP/MaxSAT searches provable far more often.

* **Lower bound.** A diagram with L decision layers and N decision nodes unfolds into a
  tree of depth <= min(L, N) (a root-to-class path meets at most one node per layer and
  never the same node twice) that predicts every row as the diagram does (Florio et al.,
  AAAI 2023, Sec. 3: the diagram's paths are the tree's), so its errors are at least
  E*_d, those of the optimal tree of depth d = min(L, N). For an objective
  ``a * errors + b * nodes + k`` (a > 0, b >= 0) every diagram therefore costs at least
  ``min over d in 0..L of (a * E*_d + b * d) + k`` (E*_0: the best single class; with
  b = 0 this is a * E*_L + k); constraints only raise it. A time-out of a tree search
  still gives a valid bound (its proven lower bound on E*_d).

  The N nodes also test at most N distinct features, so the errors are at least B*_N,
  the least Bayes error of the rows projected on N features: the optimal ordered BDD of
  N levels minimising errors (a BDD labels each of its 2^N cells by majority; dp's
  subset enumeration, Hu et al. IJCAI 2022), and at least B*, the Bayes error on all
  features. Hence, for the first node counts N = 0, 1, ... while they can still beat the
  incumbent (and N <= 6), ``lower(N) = a * max(E*_min(N,L), B*_N) + b * N + k``, and
  for every larger N at least ``a * max(E*_L, B*) + b * N + k``; the bound is the least.
* **Incumbent.** A tree fits in the diagram when layer i holds its 2^i nodes of depth i:
  the optimal tree of depth d = max{d : widths[i] >= 2^i for i < d} for the program's own
  errors/nodes objective (dp's STreeD-style engine) is a diagram of the skeleton (``diagram_of_tree``) — with widths 1, 2, 4, ..., 2^(L-1) the diagram optimum
  *is* the depth-L tree's, proven at once.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from odt.backends.base import BackendResult, SolveOptions, Status
from odt.backends.dp import DpBackend
from odt.compiler.checked import BddSkeleton, CheckedProgram, DiagramSkeleton, LinearForm, QuantityRef, TreeSkeleton
from odt.compiler.classifiers.diagram import Diagram, diagram_of_tree
from odt.compiler.evaluate import evaluate
from odt.compiler.lower_search import lower_search
from odt.compiler.lower_search_bdd import lower_search_bdd


@dataclass(frozen=True)
class DiagramBounds:
    lower: Fraction  # a proven lower bound on the first objective level
    incumbent: tuple[Diagram, Fraction] | None  # the best fitting tree as a diagram, with its value
    source: str = "the optimal depth-L tree"  # what the bound is, for logs


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


def _tree_program(c: CheckedProgram, depth: int, errors_only: bool = True) -> CheckedProgram:
    """``c`` as an unconstrained tree program of ``depth``: minimise errors, or (not
    ``errors_only``) the program's own errors/nodes objective."""
    sk = c.skeleton
    objective = dataclasses.replace(c.objective, levels=(LinearForm.of(QuantityRef("errors")),)) \
        if errors_only else c.objective
    return dataclasses.replace(c, skeleton=TreeSkeleton(depth, None, None, None, sk.span), constraints=(),
                               objective=objective)


def tighten(res: BackendResult, lower: Fraction, source: str = "the optimal depth-L tree") -> BackendResult:
    """A solver's result with its bound raised to ``lower`` (optimal once they meet)."""
    bound = lower if res.bound is None or res.bound < lower else res.bound
    status = res.status
    if status is Status.FEASIBLE and res.objective and res.objective[0] <= bound:
        status = Status.OPTIMAL  # the incumbent meets the bound (the search stopped there)
    if bound == res.bound and status is res.status:
        return res
    return dataclasses.replace(res, status=status, bound=bound,
                               log=res.log + f"; bound {float(bound):g} ({source})")


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
    w, y = c.dataset.row_weights(), c.dataset.y
    per_class = [Fraction(float(w[y == j].sum())).limit_denominator(10**9) for j in range(len(c.dataset.classes))]
    errors = [sum(per_class, Fraction(0)) - max(per_class)]  # E*_0: the best single class
    L = len(sk.widths)
    deep = None
    for depth in range(1, L + 1) if b > 0 else (L,):
        tree, res = dp.solve_search(lower_search(_tree_program(c, depth)), opts)
        errors.append(res.bound if res.bound is not None else Fraction(0))
        deep = (tree, res)
    fit = fitting_depth(tuple(sk.widths))
    assert deep is not None
    tree = deep[0] if fit == L and b == 0 and deep[1].status is Status.OPTIMAL else \
        dp.solve_search(lower_search(_tree_program(c, fit, errors_only=False)), opts)[0]
    d = diagram_of_tree(tree)
    ev = evaluate(c, d)
    incumbent = (d, Fraction(ev.objective[0]).limit_denominator(10**9)) if ev.feasible else None
    if b == 0:
        lower = min(a * errors[0], a * errors[-1]) + k
    else:
        lower = _node_bound(c, a, b, k, errors, None if incumbent is None else incumbent[1], budget)
    return DiagramBounds(lower, incumbent)


_MAX_SUBSET = 6  # the largest N whose B*_N is enumerated (C(P, N) subsets)


def _bayes_all(c: CheckedProgram) -> Fraction:
    """B*: the weight of the rows outvoted within their group of identical feature vectors."""
    data = c.dataset
    X = data.X[:, c.feature_mask]
    w, y = data.row_weights(), data.y
    _, group = np.unique(X, axis=0, return_inverse=True)
    table = np.zeros((int(group.max()) + 1 if len(group) else 0, len(data.classes)))
    np.add.at(table, (group.ravel(), y), w)
    return Fraction(float(table.sum() - table.max(axis=1).sum())).limit_denominator(10**9)


def _node_bound(c: CheckedProgram, a: Fraction, b: Fraction, k: Fraction, errors: list[Fraction],
                incumbent: Fraction | None, budget: float) -> Fraction:
    """min over N of a * max(E*_min(N,L), B*_N) + b * N + k (module docstring); ``errors[d]``
    is E*_d for d = 0..L."""
    L = len(errors) - 1
    floor = _bayes_all(c)
    bdd = lower_search_bdd(dataclasses.replace(
        c, skeleton=BddSkeleton(1, c.skeleton.span), constraints=(),
        objective=dataclasses.replace(c.objective, levels=(LinearForm.of(QuantityRef("errors")),))))
    dp, opts = DpBackend(), SolveOptions(time_limit=budget, extra={"bound_only": True})
    best: Fraction | None = None
    n = 0
    while True:
        tail = a * max(min(errors[min(n, L):]), floor) + b * n + k  # every N >= n costs at least this
        if incumbent is not None and tail >= incumbent or n > min(_MAX_SUBSET, bdd.X.shape[1]):
            return tail if best is None else min(best, tail)
        bayes = errors[0] if n == 0 else floor
        if 0 < n <= bdd.X.shape[1]:
            res = dp.solve_search(dataclasses.replace(bdd, depth=n), opts)[1]
            bayes = max(floor, res.bound if res.bound is not None else Fraction(0))
        value = a * max(errors[min(n, L)], bayes) + b * n + k
        best = value if best is None else min(best, value)
        n += 1
