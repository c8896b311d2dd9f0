"""The deep search's second anytime phase (issue 27): re-solve the incumbent's subtrees
exactly, the shallow ones first.

Limited discrepancy search (``lds.py``) leaves a tree whose last two levels are optimal for
their rows but whose upper splits are only the best-ranked by Gini. Its improvement stops
once an iteration finds nothing better, and ConTree's complete search from the root
(Brita et al., AAAI 2025, Alg. 1) explores one root feature depth first, so on large data
a time limit stops it before it improves anything. This phase spends the time in between
where it pays: for r = 3, 4, ..., depth - 1, every node of the incumbent with r levels
below it is re-solved by ConTree's exact search ``CT(D, r, UB)`` (Eq. 4) over its own
rows, with the cost of the incumbent's subtree there as the upper bound ``UB``, so the
search prunes with it and any tree it returns is strictly better; a better subtree is
spliced in (the other subtrees' rows do not change, so the tree's cost falls by the
difference). Each re-solve has a share of the time left and is abandoned when it runs out
(the solver's cache keeps only finished sub-problems, so an abandoned one leaves it sound).
The large-neighbourhood view: each step optimises one subtree with the rest of the tree
fixed, the neighbourhoods of Blossom (Demirović et al., ICML 2023) and CA-ConTree's
subtree improvements, with an exact solver at the frontier.

A node is addressed by its path from the root (0 left, 1 right) and solved from its rows,
so the same task runs in this process or in a forked worker (``deep._Deep.serve``).
"""
from __future__ import annotations

import time
from typing import Callable, Iterator, Optional

import numpy as np

from .bounds import _Timeout
from .node import _Node
from .search import _Solver
from .tree import DPLeaf, DPNode, DPSplit, errors

Path = tuple[int, ...]


def positions(tree: DPNode, X: np.ndarray, rows: np.ndarray, level: int,
              path: Path = ()) -> Iterator[tuple[Path, np.ndarray, DPNode]]:
    """The positions of ``tree`` at ``level`` (0: the root), each with the rows reaching
    it and its subtree; a leaf above ``level`` has none below it and is skipped."""
    if level == 0:
        yield path, rows, tree
        return
    if isinstance(tree, DPSplit):
        go = X[rows, tree.feature] <= tree.threshold
        yield from positions(tree.left, X, rows[go], level - 1, path + (0,))
        yield from positions(tree.right, X, rows[~go], level - 1, path + (1,))


def splice(tree: DPNode, path: Path, sub: DPNode) -> DPNode:
    """``tree`` with the subtree at ``path`` replaced by ``sub``."""
    if not path:
        return sub
    assert isinstance(tree, DPSplit)
    if path[0] == 0:
        return DPSplit(tree.feature, tree.threshold, splice(tree.left, path[1:], sub), tree.right)
    return DPSplit(tree.feature, tree.threshold, tree.left, splice(tree.right, path[1:], sub))


def subtree_cost(tree: DPNode, X: np.ndarray, y: np.ndarray, w: np.ndarray, rows: np.ndarray) -> float:
    """The weight ``tree`` misclassifies among ``rows``."""
    return errors(tree, X[rows], y[rows], w[rows])


def node_of(S: _Solver, rows: np.ndarray) -> _Node:
    """The search node of ``rows`` (every feature's order restricted to them), from the root's."""
    root = S.root
    assert root is not None
    mask = S.scratch_mask
    mask[rows] = True
    sel = mask[root.order]
    mask[rows] = False
    m = int(rows.shape[0])
    kept = root.order[sel].reshape(S.p, m)
    return _Node(np.sort(rows).astype(np.int32, copy=False), kept, root.vals[sel].reshape(S.p, m))


def resolve(S: _Solver, rows: np.ndarray, r: int, ub: float, until: float) -> Optional[tuple[float, DPNode]]:
    """ConTree's optimum of depth <= ``r`` over ``rows`` if it costs less than ``ub``
    (materialised), else None; ``(-1.0, leaf)`` when ``until`` (a ``perf_counter``
    instant) came first."""
    saved = S.deadline
    S.deadline = min(saved, until)
    try:
        res = S.solve(node_of(S, rows), r, ub - S.d_strict, 1)
    except _Timeout:
        if time.perf_counter() < until:  # not this task's share: the deadline, a stop or a switch
            raise
        return -1.0, DPLeaf(0)  # abandoned at its share of the time (a cost no tree has)
    finally:
        S.deadline = saved
    if res.tree is None or not res.cost < ub - S.d_strict / 2:
        return None
    return res.cost, S.materialise(res.tree)


def improve(tree: DPNode, cost: float, X: np.ndarray, y: np.ndarray, w: np.ndarray, depth: int, deadline: float,
            solve: Callable[[list[tuple[np.ndarray, int, float, float]]], list[Optional[tuple[float, DPNode]]]],
            offer: Callable[[tuple[float, DPNode]], None], batch: int = 1, stats: Optional[dict] = None) -> tuple[float, DPNode]:
    """The phase (see the module) on the incumbent ``(cost, tree)`` until ``deadline``:
    ``solve(tasks)`` answers ``batch`` tasks (rows, r, ub, until) at a time (one per
    worker); each better tree is passed to ``offer``. Returns the final incumbent;
    ``stats`` counts the subtrees re-solved (``refine_tasks``), those that improved
    (``refine_improved``) and those abandoned at their share of time (``refine_abandoned``)."""
    if stats is None:
        stats = {}
    for key in ("refine_tasks", "refine_improved", "refine_abandoned"):
        stats.setdefault(key, 0)
    n = X.shape[0]
    everything = np.arange(n)
    for r in range(3, depth):
        found = list(positions(tree, X, everything, depth - r))
        tasks = []
        for path, rows, sub in found:
            c = subtree_cost(sub, X, y, w, rows)
            if c > 0 and rows.shape[0] >= 2:
                tasks.append((path, rows, c))
        tasks.sort(key=lambda t: -t[2])  # the costliest subtrees first: most to gain
        i = 0
        while i < len(tasks):
            now = time.perf_counter()
            left = deadline - now
            if left <= 0:
                return cost, tree
            group = tasks[i:i + batch]
            share = left * len(group) / (2 * (len(tasks) - i))  # half the time left, evenly
            answers = solve([(rows, r, c, now + max(share, 0.2)) for _, rows, c in group])
            for (path, rows, c), got in zip(group, answers):
                stats["refine_tasks"] += 1
                if got is not None and got[0] == -1.0:
                    stats["refine_abandoned"] += 1
                elif got is not None and got[0] < c:
                    stats["refine_improved"] += 1
                    tree = splice(tree, path, got[1])
                    cost = cost - c + got[0]
                    offer((cost, tree))
            i += batch
    return cost, tree
