"""ConTree as a dp engine: a ``TreeSearch`` of the plain fragment in, an ``EngineResult``
out (``anytime``'s result and tree format), the objective's one level ``a * errors + c``
applied to ConTree's weighted errors (Brita et al., AAAI 2025, Eq. 4)."""
from __future__ import annotations

from typing import Callable

from odt.compiler.search import TreeSearch

from ..anytime import EngineResult, exact, size
from .tree import DPLeaf, DPNode

#: the depth from which the anytime deep search (``deep``: discrepancy search first, then the
#: complete search) replaces ConTree's depth-first search
DEEP = 4


def contree_result(problem: TreeSearch, time_limit: float | None = None,
                   on_progress: Callable[..., None] | None = None, scheduler: str | None = None) -> EngineResult:
    """The optimal tree of ``problem`` (depth, minimum leaf size, errors as the one level),
    or the best found in ``time_limit`` with ConTree's proven bound."""
    from .deep import deep_tree
    from .search import optimal_tree

    level = problem.levels[0]

    def value(errors: float):
        return exact(errors) * level.errors + level.constant

    def report(elapsed: float, incumbent: float, bound: float) -> None:
        if on_progress is not None:
            on_progress(elapsed, value(incumbent), value(bound))

    if problem.depth >= DEEP or scheduler is not None:
        res = deep_tree(problem.X, problem.y, problem.depth, weights=problem.weights, n_classes=problem.n_classes,
                        min_leaf=problem.min_leaf, time_limit=time_limit, on_progress=report, scheduler=scheduler)
    else:
        res = optimal_tree(problem.X, problem.y, problem.depth, weights=problem.weights, n_classes=problem.n_classes,
                           min_leaf=problem.min_leaf, time_limit=time_limit, on_progress=report)
    tree = as_tuples(res.tree)
    return EngineResult(tree, exact(res.cost), size(tree), (value(res.cost),), value(res.lower_bound), res.status,
                        dict(res.stats))


def as_tuples(node: DPNode) -> tuple:
    """A ConTree tree in the engines' format: ``("leaf", class)`` / ``("split", dim,
    threshold, left, right)``, left the rows where ``x[dim] <= threshold``."""
    if isinstance(node, DPLeaf):
        return ("leaf", int(node.label))
    return ("split", int(node.feature), float(node.threshold), as_tuples(node.left), as_tuples(node.right))
