"""Deep trees, anytime (issue 27): limited discrepancy search over ConTree's nodes with the
exact depth-two search at the frontier, then ConTree's complete search from the best tree,
on both cores.

ConTree (Brita et al., AAAI 2025) explores depth first: it optimises a left subtree fully
before it looks at the right one, so at depth five and more a time limit stops it with an
unbalanced tree, often worse than greedy (CA-ConTree, Kiossou, Schaus & Nijssen, 2026).
Limited discrepancy search (Harvey & Ginsberg, IJCAI 1995) spreads the effort: each node
ranks its candidate splits (the best threshold of each feature by Gini impurity, the order
CART would follow), iteration k tries at a node the splits of rank i <= k and gives both
children the budget k - i (so the ranks chosen along a root-to-leaf path add up to at most
k), and every subproblem with two levels left is solved exactly by ConTree's compiled
depth-two search (Alg. 2). Iteration 0 is the greedy tree with an optimal last two levels,
never worse than CART of the same depth; later iterations improve it. Results are kept per
(rows, depth, budget), so an iteration reuses the work of the earlier ones.

When the discrepancy iterations stop paying (one that found nothing better, or one that
used more than a quarter of the time left, or the last rank), ConTree's complete search
runs from the root with the incumbent as its upper bound (Eq. 4 with the bound B): it
proves the incumbent optimal, or finds the optimum; stopped, the incumbent stands.

Both cores: the root's candidate splits are dealt to two forked workers (``workers.Team``)
that keep their caches from one iteration to the next and share the incumbent's cost (a
shared double: a worker skips a root split whose left side alone costs more); in the
complete search each worker runs Alg. 1 on half of the root's features with that bound,
and the search is complete when both finish.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable, Optional

import numpy as np

from .. import jit
from .. import workers as team_of
from .bounds import _Timeout
from .node import _Node
from .search import _Solver
from .lds import _RANKED, _Lds
from .refine import improve, resolve
from .tree import DPLeaf, DPNode, DPResult, PruningRules, _refine, predict

#: rows x columns from which the deep search uses both cores (below, forking costs more than it saves)
PARALLEL_FROM = 20_000
#: the complete search's order: features by Gini and each feature's intervals depth first
DFS_GINI = True
#: the share of the time left after the discrepancy search that re-solves the incumbent's
#: subtrees (``refine.py``); the complete search has the rest
REFINE_SHARE = 1 / 3
#: on two workers the second re-solves subtrees for this share while the first searches
PORTFOLIO_REFINE = 1 / 2


class _Deep:
    """The state a forked worker inherits: the search and the root."""

    def __init__(self, lds: _Lds, root: _Node, depth: int) -> None:
        self.lds, self.root, self.depth = lds, root, depth
        self.stats: dict = {}  # the subtrees re-solved in this worker (``refine.improve``)

    def serve(self, part: int, payload: tuple) -> tuple:
        """A worker's answer: ("lds", k) -> (best or None, finished); ("exact", ub) ->
        (best or None, finished). Trees are materialised before they cross the pipe."""
        lds, S = self.lds, self.lds.S
        setattr(S, "check_time", _worker_clock(S))  # (the team's stop besides the deadline)
        kind, arg = payload
        best: list[Optional[tuple[float, DPNode]]] = [None]

        def found(t: tuple[float, DPNode]) -> None:
            if best[0] is None or t[0] < best[0][0]:
                best[0] = t
                if lds.shared is not None and t[0] < lds.shared.value:
                    lds.shared.value = t[0]

        finished = True
        try:
            if kind == "lds":
                lds.search(self.root, self.depth, arg, 0, part, 2, found)
            elif kind == "refine":
                rows, r, ub, until = arg
                return resolve(S, rows, r, ub, until), True
            elif kind == "improve":  # the portfolio's second worker: refine.py, then a share of the complete search
                tree, cost, until, ub = arg
                found((cost, tree))
                c, _ = improve(tree, cost, S.X, S.y, S.w, self.depth, until,
                               lambda tasks: [resolve(S, *task) for task in tasks], found, 1, self.stats)
                got = lds.exact_share(self.root, self.depth, min(ub, c - S.d_strict), part, 2, found)
                if got is not None:
                    found(got)
            else:
                got = lds.exact_share(self.root, self.depth, arg, part, 2, found)
                if got is not None:
                    found(got)
        except _Timeout:
            finished = False
        out = None if best[0] is None else (best[0][0], S.materialise(best[0][1]))
        if kind == "improve":
            return out, finished, dict(self.stats)
        return out, finished


def _worker_clock(S: _Solver) -> Callable[[], None]:
    """A worker's time check: its deadline, or the team's stop."""
    def check() -> None:
        if time.perf_counter() > S.deadline or team_of.stop_requested():
            raise _Timeout
    return check


def deep_tree(X: np.ndarray, y: np.ndarray, depth: int, *, weights: Optional[np.ndarray] = None,
              n_classes: Optional[int] = None, min_leaf: int = 1, time_limit: Optional[float] = None,
              on_progress: Optional[Callable[[float, float, float], None]] = None,
              processes: Optional[int] = None, scheduler: Optional[str] = None) -> DPResult:
    """The best tree of depth <= ``depth`` found in ``time_limit`` (see the module), with a
    proven lower bound (the optimum when the complete search finished, else the Bayes error
    of rows with equal features);
    ``processes``: 1 or 2 (default: both cores for problems of ``PARALLEL_FROM`` rows x
    columns and more); ``scheduler``: a Dask scheduler's address, whose workers take the
    root's shares instead (``deep_dask``)."""
    start = time.perf_counter()
    X = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
    y = np.asarray(y).astype(np.int64, copy=False)
    n = X.shape[0]
    K = int(n_classes) if n_classes is not None else (int(y.max()) + 1 if n else 1)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    deadline = start + time_limit if time_limit is not None else math.inf
    if processes is None:
        processes = team_of.cores() if n * X.shape[1] >= PARALLEL_FROM else 1
    if processes > 1:  # forked workers never switch from numpy to the kernels: load them now (``jit.no_grace``)
        for group in ("contree", "contree-float"):
            jit.no_grace(group)
    S = _Solver(X, y, w, K, depth, min_leaf, 0.0, deadline, PruningRules(), None, start)
    S.gini_order, S.bfs = DFS_GINI, not DFS_GINI
    if n == 0:
        return DPResult(DPLeaf(0), 0.0, 0.0, "optimal", time.perf_counter() - start, {})
    root = S.root_node()
    S.root = root
    leaf_cost, label = S.leaf(root)
    best: list[tuple[float, DPNode]] = [(leaf_cost, DPLeaf(label))]
    if S.use_greedy:  # large data: CART's tree first (seconds at 10^6 rows, where the first
        best[0] = min(best[0], S.greedy(root, depth), key=lambda t: t[0])  # discrepancy pass takes minutes)
        if on_progress is not None and best[0][0] < leaf_cost:
            on_progress(time.perf_counter() - start, best[0][0], 0.0)

    def offer(found: Optional[tuple[float, DPNode]]) -> None:
        if found is not None and found[0] < best[0][0] - S.d_strict / 2:
            best[0] = found
            if on_progress is not None:
                on_progress(time.perf_counter() - start, found[0], 0.0)

    shared = ticket = None
    if processes > 1:
        import multiprocessing as mp

        shared = mp.get_context("fork").RawValue("d", best[0][0])
        ticket = mp.get_context("fork").Value("i", 0)  # the complete search's root features, dealt one at a time
    lds = _Lds(S, shared, ticket)
    told = [best[0][0]]

    def tick() -> None:  # the workers' incumbent cost, between their answers, once per new value
        if shared is not None and shared.value < min(best[0][0], told[0]) - S.d_strict / 2 and on_progress is not None:
            told[0] = shared.value
            on_progress(time.perf_counter() - start, shared.value, 0.0)

    run: Any
    if scheduler is not None:
        from .deep_dask import DaskRoot

        run = DaskRoot(scheduler, X, y, w, K, depth, min_leaf, deadline, lambda: best[0][0], PORTFOLIO_REFINE)
    elif processes > 1:
        run = _Parallel(lds, root, depth, deadline, tick)
    else:
        run = _Serial(lds, root, depth)
    timed_out, iterations, proven = False, 0, False
    refined: dict = {}
    try:
        k = 0
        while True:
            began = time.perf_counter()
            before = best[0][0]
            done = run.lds(k, offer)
            iterations += 1
            if not done:
                raise _Timeout
            spent = time.perf_counter() - began
            if k >= _RANKED - 1 or (k >= 1 and best[0][0] >= before) or spent > 0.25 * (deadline - time.perf_counter()):
                break
            k += 1
        # the incumbent's subtrees re-solved exactly (refine.py) and the complete search:
        # nothing better exists, or the better one found is optimal
        proven = run.finish(S.materialise(best[0][1]), best[0][0], best[0][0] - S.d_strict, deadline, offer, refined)
        if not proven:
            raise _Timeout
    except _Timeout:
        timed_out = True
    finally:
        run.close()
    tree = _refine(S.materialise(best[0][1]), X, np.arange(n))
    cost = float(w[predict(tree, X) != y].sum())
    seconds = time.perf_counter() - start
    status = "optimal" if proven else "feasible"
    lower = cost if proven else min(cost, _bayes(X, y, w, K))
    if on_progress is not None:
        on_progress(seconds, cost, lower)
    stats = dict(S.stats, **refined, lds_iterations=iterations, lds_memo=len(lds.memo), processes=processes,
                 timed_out=timed_out)
    return DPResult(tree, cost, lower, status, seconds, stats)


def _bayes(X: np.ndarray, y: np.ndarray, w: np.ndarray, K: int) -> float:
    """The Bayes error: the weight outvoted among rows with equal features, which no tree of
    any depth separates (a lower bound at every depth)."""
    _, group = np.unique(X, axis=0, return_inverse=True)
    table = np.zeros((int(group.max()) + 1, K))
    np.add.at(table, (group.ravel(), y), w)
    return float(table.sum() - table.max(axis=1).sum())


class _Serial:
    """The deep search in this process."""

    def __init__(self, search: _Lds, root: _Node, depth: int) -> None:
        self.search, self.root, self.depth = search, root, depth

    def lds(self, k: int, offer: Callable) -> bool:
        offer(self.search.search(self.root, self.depth, k, 0, 0, 1, offer))
        return True

    def exact(self, ub: float, offer: Callable) -> bool:
        offer(self.search.exact_share(self.root, self.depth, ub, 0, 1, offer))
        return True

    def refine(self, tasks: list) -> list:
        return [resolve(self.search.S, *task) for task in tasks]

    def finish(self, tree: DPNode, cost: float, ub: float, deadline: float, offer: Callable, stats: dict) -> bool:
        """Re-solve the subtrees for ``REFINE_SHARE`` of the time left, then the complete
        search for a tree of cost <= ``ub`` (or below what the re-solving found)."""
        S = self.search.S
        now = time.perf_counter()
        until = deadline if math.isinf(deadline) else now + REFINE_SHARE * (deadline - now)
        cost, tree = improve(tree, cost, S.X, S.y, S.w, self.depth, until, self.refine, offer, 1, stats)
        return self.exact(min(ub, cost - S.d_strict), offer)

    def close(self) -> None:
        pass


class _Parallel:
    """The deep search on two forked workers (see the module)."""

    def __init__(self, lds: _Lds, root: _Node, depth: int, deadline: float, tick: Callable[[], None]) -> None:
        self.deadline, self.tick = deadline, tick
        self.team_ticket = lds.ticket
        self.team = team_of.Team(2, _Deep(lds, root, depth).serve)

    def _ask(self, payload: tuple, offer: Callable) -> bool:
        answers = self.team.ask([payload, payload], None if math.isinf(self.deadline) else self.deadline, self.tick)
        finished = True
        for a in answers:
            if a is None:
                finished = False
                continue
            found, done = a
            offer(found)
            finished = finished and done
        return finished

    def lds(self, k: int, offer: Callable) -> bool:
        return self._ask(("lds", k), offer)

    def finish(self, tree: DPNode, cost: float, ub: float, deadline: float, offer: Callable, stats: dict) -> bool:
        """A portfolio on the two workers: one starts the complete search at once, the
        other re-solves the incumbent's subtrees for ``PORTFOLIO_REFINE`` of the time left
        and then joins the complete search (the root's features dealt one at a time from
        the shared ticket); each tightens its bound with the other's best (``shared``).
        Sound: a share proves that none of its features has a tree within its bound, and
        every bound is below a tree the parent keeps."""
        if self.team_ticket is not None:
            self.team_ticket.value = 0
        now = time.perf_counter()
        until = deadline if math.isinf(deadline) else now + PORTFOLIO_REFINE * (deadline - now)
        answers = self.team.ask([("exact", ub), ("improve", (tree, cost, until, ub))],
                                None if math.isinf(self.deadline) else self.deadline, self.tick)
        finished = True
        for a in answers:
            if a is None:
                finished = False
                continue
            offer(a[0])
            finished = finished and a[1]
            if len(a) > 2:
                for key, value in a[2].items():
                    stats[key] = stats.get(key, 0) + value
        return finished

    def exact(self, ub: float, offer: Callable) -> bool:
        ticket = self.team_ticket
        if ticket is not None:
            ticket.value = 0  # no worker is running: every root feature is dealt afresh
        return self._ask(("exact", ub), offer)

    def close(self) -> None:
        self.team.close()
