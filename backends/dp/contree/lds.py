"""Limited-discrepancy search over ConTree's nodes: the anytime part of the deep engine
(``deep.py``), shared by its serial, forked and Dask drivers.

Input: ConTree's solver (``search._Solver``) for the data; output: for a node, ``r`` levels
and a discrepancy budget ``k``, the best tree whose path takes, at each node, one of the
node's ``_RANKED`` best splits by Gini (the i-th costs i discrepancies), with the last two
levels solved exactly (ConTree's depth-two search, Brita et al., AAAI 2025, Alg. 2).
Harvey & Ginsberg's limited discrepancy search (IJCAI 1995) as Demirović et al. use it
for anytime trees (MurTree, JMLR 2022).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Optional

import numpy as np

from .bounds import _Incumbent
from .node import _Node
from .search import _Solver
from .tree import DPLeaf, DPNode, DPSplit

_RANKED = 6  # candidate splits kept per node (at most one per feature, best Gini first)


class _Lds:
    """One deep search: ConTree's solver for nodes and the frontier, the discrepancy memo."""

    def __init__(self, S: _Solver, shared: Any = None, ticket: Any = None) -> None:
        self.S = S
        self.memo: dict[tuple, tuple[float, DPNode]] = {}
        self.ranks: dict[bytes, list[tuple[int, int]]] = {}
        self.shared = shared  # the team's incumbent cost (a shared double), or None
        self.ticket = ticket  # the next root feature of the complete search (a shared int), or None

    def ranked(self, node: _Node) -> list[tuple[int, int]]:
        """The node's candidate splits (feature, last sorted position going left): each
        feature's best cut by Gini, the purest first."""
        key = node.rows.tobytes()
        got = self.ranks.get(key)
        if got is not None:
            return got
        S = self.S
        score, nL, nR = S.gini_scores(node)
        valid = S.valid_positions(node) & (nL > 0) & (nR > 0)
        if S.min_leaf > 1:
            pos = np.arange(1, node.m + 1)
            valid &= ((pos >= S.min_leaf) & (node.m - pos >= S.min_leaf))[None, :]
        score = np.where(valid, score, -np.inf)
        zs = score.argmax(axis=1)
        best = score[np.arange(score.shape[0]), zs]
        order = [int(f) for f in np.argsort(-best, kind="stable") if np.isfinite(best[f])]
        got = [(f, int(zs[f])) for f in order[:_RANKED]]
        self.ranks[key] = got
        return got

    def search(self, node: _Node, r: int, k: int, level: int, part: int = 0, parts: int = 1,
               found: Optional[Callable[[tuple[float, DPNode]], None]] = None) -> tuple[float, DPNode]:
        """The best tree found for ``node`` with ``r`` levels left and discrepancy budget
        ``k`` (exact when ``r <= 2``); at the root only the splits of rank i = ``part``
        modulo ``parts`` (a worker's share), each better one passed to ``found``."""
        S = self.S
        if r <= 2:
            res = S.solve(node, r, math.inf, level)
            assert res.tree is not None
            return res.cost, res.tree
        key = (node.rows.tobytes(), r, k)
        got = self.memo.get(key) if level else None
        if got is not None:
            return got
        S.check_time()
        cost, label = S.leaf(node)
        best: tuple[float, DPNode] = (cost, DPLeaf(label))
        if cost > 0 and node.m >= 2 * S.min_leaf:
            for i, (f, z) in enumerate(self.ranked(node)):
                if i > k:
                    break
                if level == 0 and i % parts != part:
                    continue
                cap = best[0] if level or self.shared is None else min(best[0], self.shared.value)
                left, right = S.children(node, f, z)
                cl, tl = self.search(left, r - 1, k - i, level + 1)
                if cl >= cap - S.d_strict / 2:
                    continue
                cr, tr = self.search(right, r - 1, k - i, level + 1)
                if cl + cr < best[0] - S.d_strict / 2:
                    best = (cl + cr, DPSplit(f, S.threshold(node, f, z), tl, tr))
                    if found is not None:
                        found(best)
        if level:
            self.memo[key] = best
        return best

    def exact_share(self, root: _Node, depth: int, ub: float, part: int, parts: int,
                    found: Optional[Callable[[tuple[float, DPNode]], None]] = None) -> Optional[tuple[float, DPNode]]:
        """Alg. 1 at the root over a share of its features, looking for a tree of cost <=
        ``ub`` (inclusive); the best found, or None when there is none. The share: with a
        ``ticket`` (a counter shared by forked workers, reset by the parent before each
        call), the next feature of the root's order that no worker has taken yet, until none
        is left, so a worker whose features prove quickly takes more of them; without one,
        the features f = ``part`` modulo ``parts``. Between features, a better cost another
        worker found (``shared``) tightens the bound while this share has no tree.
        ``found((cost, tree))``: each better tree as it is found (``_Solver.root_found``),
        so a search stopped before its end (a time limit, a signal) still hands on what it
        found."""
        S = self.S
        inc = _Incumbent(ub, S.d_strict, S.d_tie)
        order = list(S.feature_order(root))
        S.root_found = found
        try:
            for f in self._dealt(order) if self.ticket is not None and parts > 1 else \
                    (f for f in order if f % parts == part):
                S.check_time()
                if self.shared is not None and inc.tree is None:  # a better tree another worker found
                    inc.outer = min(inc.outer, self.shared.value - S.d_strict)
                S.branch(root, depth, f, inc, 0, 0.0)
        finally:
            S.root_found = None
        return None if inc.tree is None else (inc.cost, inc.tree)

    def _dealt(self, order: list[int]) -> Iterator[int]:
        """The features of ``order`` this worker takes from the shared ticket, one at a time."""
        ticket = self.ticket
        while True:
            with ticket.get_lock():
                i = ticket.value
                ticket.value = i + 1
            if i >= len(order):
                return
            yield order[i]
