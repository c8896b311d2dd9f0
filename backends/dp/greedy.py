"""A greedy tree for a search problem: the start every tree solve begins from (issue 24,
item 7), so a solve stopped by its time limit is never worse than CART.

Input: a ``TreeSearch`` (its matrix, rows, depth, minimum leaf and node sizes, threshold
ranges, node and error caps, objective levels). Output: the best of a few greedy trees as
the engines' nested tuples (``("leaf", class)`` / ``("split", dim, threshold, left,
right)``, left: ``x <= threshold``), or None when none meets the caps.

The tree grows top-down as CART does (Breiman et al., 1984): each node takes the split of
least weighted impurity (Gini, and entropy in a second tree below ``_ONE_CRITERION``
rows x dimensions) among those that leave at
least ``min_leaf`` rows on each side, down to the depth limit; the last level takes the
split of least misclassification instead, the exact depth-one tree (MurTree, Demirović
et al., JMLR 2022, Sec. 4.3), which can only lower the errors of the CART tree of the same
splits above it. The grown tree is then pruned to the program's objective exactly over
its subtrees: for every node and budget of decision nodes, the least errors of a pruned
subtree (the weakest-link pruning of CART solved exactly), then the budget of least
objective key under ``max_nodes`` and ``max_errors``. Path and global constraints are not
looked at: the caller re-evaluates the tree against the program and keeps it only if it
is feasible.
"""
from __future__ import annotations

import numpy as np

from odt.compiler.search import TreeSearch

from . import blas
from .task import Misclassification, Task, task_of

_CRITERIA = ("gini", "entropy")
_MANY_CLASSES = 256  # above this many classes no greedy tree is grown (its counts take n x K per dimension)
_MANY_CELLS = 1 << 24  # ... except for a regression task's statistics (absolute error: a column per target value)
#: from this many rows x dimensions only the Gini tree is grown: the entropy tree's second
#: pass over every node cost as much as the first (800,000 rows x 10 columns: 78 s for both)
_ONE_CRITERION = 1 << 20


def greedy_tree(problem: TreeSearch) -> tuple | None:
    """The best greedy tree of ``problem`` under its objective and caps (see the module)."""
    n, K = problem.X.shape[0], problem.n_classes
    regression = problem.loss != "misclassification"
    if regression:  # CART's regression tree: the loss itself at every level (variance reduction)
        K = task_of(problem).width
    if n == 0 or K == 0 or K > _MANY_CLASSES and not (regression and n * K <= _MANY_CELLS):
        return None  # (with thousands of classes a greedy tree helps no one)
    grower = _Grower(problem)
    best: tuple | None = None
    criteria = _CRITERIA if n * problem.X.shape[1] < _ONE_CRITERION else _CRITERIA[:1]
    with blas.one_thread():  # one small product per node: BLAS's threads only contend for the cores
        for criterion in ("errors",) if regression else criteria:
            grown = grower.grow(np.arange(n), problem.depth, criterion)
            pruned = _prune(grown, problem)
            if pruned is not None and (best is None or pruned[0] < best[0]):
                best = pruned
    return None if best is None else _strip(best[1])


class _Grower:
    """Top-down growth on one problem's matrix; a grown node is ``(errors, label, rows,
    split)`` with ``split = (dim, threshold, left, right)`` or None."""

    def __init__(self, problem: TreeSearch) -> None:
        self.X, self.y, self.w = problem.X, problem.y, problem.weights
        self.K = problem.n_classes
        self.task: Task = Misclassification(n_classes=self.K)
        if problem.loss != "misclassification":  # regression: the task's own statistics and leaf
            self.task = task_of(problem)
            self.K = self.task.width
        self.min_leaf, self.min_node = max(1, problem.min_leaf), max(1, problem.min_node)
        self.ordered = np.array([d.ordered for d in problem.dims], dtype=bool)
        self.ranges = [d.cut_range for d in problem.dims]
        self.onehot = self.task.statistics(self.y, self.w)
        self.binary = np.flatnonzero(~self.ordered)
        #: the 0/1 dimensions of every row, read whole by each node (a node's rows are a mask on
        #: its statistics, not a gathered copy of the matrix: copies of it dominated the growth)
        self.Xbin = self.X if self.binary.size == self.X.shape[1] else np.ascontiguousarray(self.X[:, self.binary])
        self.cache: dict[bytes, list] = {}

    def grow(self, rows: np.ndarray, depth: int, criterion: str) -> tuple:
        c = self.task.totals(self.y[rows], self.w[rows])
        errors, label = self.task.leaf(c)
        m = len(rows)
        if depth == 0 or errors <= 0 or m < max(2 * self.min_leaf, self.min_node):
            return (errors, label, m, None)
        split = self.best_split(rows, c, "errors" if depth == 1 else criterion)
        if split is None:
            return (errors, label, m, None)
        j, t = split
        go_left = self.X[rows, j] <= t
        left = self.grow(rows[go_left], depth - 1, criterion)
        right = self.grow(rows[~go_left], depth - 1, criterion)
        return (errors, label, m, (j, t, left, right))

    def best_split(self, rows: np.ndarray, total: np.ndarray, criterion: str) -> tuple[int, float] | None:
        """(dimension, threshold) of the least score, or None when no split is allowed or
        none lowers it (a split that does not lower the errors at the last level is kept
        out: it only adds nodes)."""
        best, best_score = None, _score(total[None, :], criterion, self.task)[0] - 1e-12
        for dims, cuts, L in self.candidates(rows):
            score = _score(L, criterion, self.task) + _score(total[None, :] - L, criterion, self.task)
            i = int(np.argmin(score))
            if score[i] < best_score:
                best_score, best = float(score[i]), (int(dims[i]), float(cuts[i]))
        return best

    def candidates(self, rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Blocks of allowed cuts (their dimensions, thresholds and the class weights on
        their left, x <= cut): every 0/1 dimension in one block, each ordered dimension in
        its own; counted once per node for every criterion (the trees of the criteria share
        their first nodes)."""
        key = rows.tobytes()
        got = self.cache.get(key)
        if got is not None:
            return got
        out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        m = len(rows)
        W = self.onehot[rows]
        binary = self.binary
        if binary.size:  # every 0/1 dimension at once: the class weights where it is 0
            inside = np.zeros(self.X.shape[0])
            inside[rows] = 1.0
            Wm = self.onehot * inside[:, None]  # the node's rows' statistics, zero elsewhere
            size = inside @ self.Xbin
            ok = (size >= self.min_leaf) & (m - size >= self.min_leaf)
            if ok.any():
                zeros = W.sum(axis=0)[None, :] - (self.Xbin.T @ Wm)[ok]
                out.append((binary[ok], np.full(int(ok.sum()), 0.5), zeros))
        pos = np.arange(1, m)  # rows on the left of the cut after sorted position pos - 1
        sizes_ok = (pos >= self.min_leaf) & (m - pos >= self.min_leaf)
        for j in np.flatnonzero(self.ordered):
            v = self.X[rows, j]
            order = np.argsort(v, kind="stable")
            vs = v[order]
            ok = (vs[1:] > vs[:-1]) & sizes_ok
            cut = (vs[1:] + vs[:-1]) / 2.0
            bounds = self.ranges[j]
            if bounds is not None:
                ok &= (cut >= bounds[0]) & (cut <= bounds[1])
            if ok.any():
                out.append((np.full(int(ok.sum()), j), cut[ok], np.cumsum(W[order], axis=0)[:-1][ok]))
        if m > 1:
            self.cache[key] = out
        return out


def _score(counts: np.ndarray, criterion: str, task: Task) -> np.ndarray:
    """The weighted impurity of each row of class weights: weight * impurity (Gini or
    entropy), or the task's leaf cost (the misclassified weight; a regression loss)."""
    if criterion == "errors":
        return task.costs(counts)
    size = counts.sum(axis=1)
    safe = np.where(size > 0, size, 1.0)
    if criterion == "gini":  # size * (1 - sum p^2) without the matrix of p
        return size - np.einsum("ij,ij->i", counts, counts) / safe
    p = counts / safe[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)
    return -size * (p * logs).sum(axis=1)


def _prune(node: tuple, problem: TreeSearch) -> tuple[tuple, tuple] | None:
    """(objective key, pruned tree) of the best pruning of ``node`` under the caps."""
    cap = problem.max_nodes if problem.max_nodes is not None else None
    table = _errors_by_budget(node, cap)
    best = None
    for k, (errors, tree) in enumerate(table):
        if errors is None or problem.max_errors is not None and errors > float(problem.max_errors) + 1e-9:
            continue
        depth = _depth(tree)
        key = tuple(float(lv.errors) * errors + float(lv.nodes) * k + float(lv.depth) * depth + float(lv.constant)
                    for lv in problem.levels)
        if best is None or key < best[0]:
            best = (key, tree)
    return best


def _errors_by_budget(node: tuple, cap: int | None) -> list:
    """For k = 0.. (at most ``cap``) decision nodes: (least errors, tree) of a pruning of
    ``node`` with exactly k nodes, or (None, None) when there is none."""
    errors, label, m, split = node
    leaf = ("leaf", label, errors)
    if split is None or cap == 0:
        return [(errors, leaf)]
    j, t, left, right = split
    room = None if cap is None else cap - 1
    L, R = _errors_by_budget(left, room), _errors_by_budget(right, room)
    out: list = [(errors, leaf)]
    for k in range(1, len(L) + len(R)):
        if cap is not None and k > cap:
            break
        best = None
        for a in range(max(0, k - 1 - (len(R) - 1)), min(k - 1, len(L) - 1) + 1):
            b = k - 1 - a
            if L[a][0] is None or R[b][0] is None:
                continue
            e = L[a][0] + R[b][0]
            if best is None or e < best[0] - 1e-12:
                best = (e, ("split", j, t, L[a][1], R[b][1]))
        out.append(best if best is not None else (None, None))
    return out


def _depth(tree: tuple) -> int:
    return 0 if tree[0] == "leaf" else 1 + max(_depth(tree[3]), _depth(tree[4]))


def _strip(tree: tuple) -> tuple:
    """The engines' format: leaves without their errors."""
    if tree[0] == "leaf":
        return ("leaf", tree[1])
    return ("split", tree[1], tree[2], _strip(tree[3]), _strip(tree[4]))
