"""Deep trees, anytime (issue 27): limited discrepancy search over ConTree's nodes with the
exact depth-two search at the frontier, then ConTree's complete search from the best tree.

ConTree (Brita et al., AAAI 2025) explores depth first: it optimises a left subtree fully
before it looks at the right one, so at depth five and more a time limit stops it with an
unbalanced tree, often worse than greedy (CA-ConTree, Kiossou, Schaus & Nijssen, 2026).
Limited discrepancy search (Harvey & Ginsberg, IJCAI 1995) spreads the effort: each node
ranks its candidate splits (the best threshold of each feature by Gini impurity, the
order CART would follow), iteration k tries at every node the splits of rank < k' where
the ranks of the choices along a root-to-leaf path add up to at most k, and every
subproblem with two levels left is solved exactly by ConTree's compiled depth-two search
(Alg. 2). Iteration 0 is the greedy tree with an optimal last two levels, so it is never
worse than CART of the same depth; later iterations improve it. Results are kept per
(rows, depth, budget), so an iteration reuses the work of the earlier ones.

When the discrepancy iterations stop paying (an iteration that found nothing better, or
one that used more than a quarter of the time left), ConTree's complete search runs from
the root with the incumbent as its upper bound: it proves the incumbent optimal, finds the
optimum, or, stopped, returns its proven root bound.
"""
from __future__ import annotations

import math
import time
from typing import Callable, Optional

import numpy as np

from .bounds import _Timeout
from .node import _Node
from .search import _Solver
from .tree import DPLeaf, DPNode, DPResult, DPSplit, PruningRules, _refine

_RANKED = 6  # candidate splits kept per node (at most one per feature, best Gini first)


class _Lds:
    """One deep search: ConTree's solver for nodes and the frontier, the discrepancy memo."""

    def __init__(self, S: _Solver, on_progress: Optional[Callable[[float, float, float], None]]) -> None:
        self.S = S
        self.on_progress = on_progress
        self.memo: dict[tuple, tuple[float, DPNode]] = {}
        self.ranks: dict[bytes, list[tuple[int, int]]] = {}
        self.best_cost = math.inf
        self.best_tree: Optional[DPNode] = None
        self.lower = 0.0

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

    def search(self, node: _Node, r: int, k: int, level: int) -> tuple[float, DPNode]:
        """The best tree found for ``node`` with ``r`` levels left and discrepancy budget
        ``k`` (exact when ``r <= 2``)."""
        S = self.S
        if r <= 2:
            res = S.solve(node, r, math.inf, level)
            assert res.tree is not None
            return res.cost, res.tree
        key = (node.rows.tobytes(), r, k)
        got = self.memo.get(key)
        if got is not None:
            return got
        S.check_time()
        cost, label = S.leaf(node)
        best: tuple[float, DPNode] = (cost, DPLeaf(label))
        if cost > 0 and node.m >= 2 * S.min_leaf:
            for i, (f, z) in enumerate(self.ranked(node)):
                if i > k:
                    break
                left, right = S.children(node, f, z)
                cl, tl = self.search(left, r - 1, k - i, level + 1)
                if cl >= best[0] - S.d_strict / 2:
                    continue
                cr, tr = self.search(right, r - 1, k - i, level + 1)
                if cl + cr < best[0] - S.d_strict / 2:
                    best = (cl + cr, DPSplit(f, S.threshold(node, f, z), tl, tr))
                    if level == 0:
                        self.offer(best)
        self.memo[key] = best
        return best

    def offer(self, found: tuple[float, DPNode]) -> None:
        if found[0] < self.best_cost:
            self.best_cost, self.best_tree = found
            if self.on_progress is not None:
                self.on_progress(time.perf_counter() - self.S.start, self.best_cost, self.lower)


def deep_tree(X: np.ndarray, y: np.ndarray, depth: int, *, weights: Optional[np.ndarray] = None,
              n_classes: Optional[int] = None, min_leaf: int = 1, time_limit: Optional[float] = None,
              on_progress: Optional[Callable[[float, float, float], None]] = None,
              start_tree: Optional[tuple[float, DPNode]] = None) -> DPResult:
    """The best tree of depth <= ``depth`` found in ``time_limit`` (see the module), with a
    proven lower bound; optimal when the complete search finished."""
    start = time.perf_counter()
    X = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
    y = np.asarray(y).astype(np.int64, copy=False)
    n = X.shape[0]
    K = int(n_classes) if n_classes is not None else (int(y.max()) + 1 if n else 1)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    deadline = start + time_limit if time_limit is not None else math.inf
    S = _Solver(X, y, w, K, depth, min_leaf, 0.0, deadline, PruningRules(), None, start)
    if n == 0:
        return DPResult(DPLeaf(0), 0.0, 0.0, "optimal", time.perf_counter() - start, {})
    root = S.root_node()
    S.root = root
    lds = _Lds(S, on_progress)
    leaf_cost, label = S.leaf(root)
    lds.offer((leaf_cost, DPLeaf(label)))
    if start_tree is not None:
        lds.offer(start_tree)
    timed_out = False
    iterations = 0
    lower = 0.0
    try:
        k = 0
        while True:
            began = time.perf_counter()
            before = lds.best_cost
            lds.offer(lds.search(root, depth, k, 0))
            iterations += 1
            spent = time.perf_counter() - began
            left = deadline - time.perf_counter()
            if k >= _RANKED - 1 or (k >= 1 and lds.best_cost >= before) or spent > 0.25 * left:
                break
            k += 1
        # the complete search from the root, the incumbent as its upper bound
        res = S.solve(root, depth, lds.best_cost - S.d_strict, 0)
        if res.tree is not None:  # better than the incumbent, and optimal
            lds.offer((res.cost, res.tree))
        lower = lds.best_cost  # (nothing better exists, or the better tree found is optimal)
    except _Timeout:
        timed_out = True
        lower = min(S.root_lower_bound(), lds.best_cost) if S.root_branch is not None else 0.0
    assert lds.best_tree is not None
    tree = _refine(S.materialise(lds.best_tree), X, np.arange(n))
    cost = float(w[_wrong(tree, X, y)].sum())
    seconds = time.perf_counter() - start
    status = "optimal" if (not timed_out and lower >= cost - S.tol) else "feasible"
    if status == "optimal":
        lower = cost
    if on_progress is not None:
        on_progress(seconds, cost, lower)
    stats = dict(S.stats, lds_iterations=iterations, lds_memo=len(lds.memo), timed_out=timed_out)
    return DPResult(tree, cost, lower, status, seconds, stats)


def _wrong(tree: DPNode, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Rows the tree misclassifies."""
    from .tree import predict

    return predict(tree, X) != y
