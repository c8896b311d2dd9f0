"""The deep search's root on a Dask cluster (issue 27, item 2): ``odtc solve --scheduler
ADDRESS`` deals the root's candidate splits to the cluster's workers, one actor each.

Each actor (a ``_RootShare`` living on one worker) holds its own ConTree solver and the
discrepancy memo for its share of the root's splits (rank i modulo the number of actors),
so the memo persists from one iteration to the next as it does on the local cores; the
parent sends each iteration's budget with the best cost known so far (the bound the shares
prune with) and keeps the best answer. The last phase is the local workers' portfolio: one
actor re-solves the incumbent's subtrees exactly (``refine.improve``) for a share of the
time left while the others start the complete search, which deals the root's features one
at a time, in the solver's order, to whichever actor is free (the improver too, once done),
each with the best cost known when it is dealt (the ticket of the local workers, kept by
the parent): an actor whose features prove quickly takes more of them. Nothing but the data (once, at start), budgets,
bounds, feature numbers and trees crosses the network. Requires ``dask[distributed]`` (the
``sweep`` extra).
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable, Optional

import numpy as np

from .bounds import _Incumbent, _Timeout
from .lds import _Lds
from .refine import improve, resolve
from .search import _Solver
from .tree import DPNode, PruningRules


class _Bound:
    """The best cost the parent knows (``_Lds.shared``'s interface: ``.value``)."""

    def __init__(self, value: float) -> None:
        self.value = value


class _RootShare:
    """A Dask actor: one share of the root's splits (see the module)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, K: int, depth: int, min_leaf: int,
                 part: int, parts: int) -> None:
        start = time.perf_counter()
        self.S = _Solver(X, y, w, K, depth, min_leaf, 0.0, math.inf, PruningRules(), None, start)
        self.root = self.S.root_node()
        self.S.root = self.root
        self.bound = _Bound(math.inf)
        self.search = _Lds(self.S, self.bound)
        self.depth, self.part, self.parts = depth, part, parts

    def lds(self, k: int, bound: float, seconds: Optional[float]) -> tuple:
        """(best (cost, tree) or None, finished) of this share's discrepancy search with
        ``k`` discrepancies, pruned with ``bound``, within ``seconds`` (None: no limit)."""
        S = self.S
        S.deadline = math.inf if seconds is None else time.perf_counter() + seconds
        self.bound.value = bound
        best: list[Optional[tuple[float, DPNode]]] = [None]

        def found(t: tuple[float, DPNode]) -> None:
            if best[0] is None or t[0] < best[0][0]:
                best[0] = t
                self.bound.value = min(self.bound.value, t[0])

        finished = True
        try:
            self.search.search(self.root, self.depth, k, 0, self.part, self.parts, found)
        except _Timeout:
            finished = False
        return (None if best[0] is None else (best[0][0], S.materialise(best[0][1]))), finished

    def order(self) -> tuple[list[int], float]:
        """The root's features in the order the complete search takes them, and the least
        strict improvement of a cost (``d_strict``)."""
        return [int(f) for f in self.S.feature_order(self.root)], float(self.S.d_strict)

    def improve(self, tree: DPNode, cost: float, share: Optional[float], seconds: Optional[float],
                board: str) -> tuple:
        """The incumbent ``(cost, tree)``'s subtrees re-solved exactly (``refine.improve``)
        for ``share`` seconds (None: to the end), within ``seconds`` in all: (the best (cost,
        tree) found or None, finished, the phase's counts). Each better cost is posted at
        once on the cluster's ``Variable`` named ``board``, so the features dealt meanwhile
        are searched with it (the tree itself comes back with the answer)."""
        from distributed import Variable

        S = self.S
        posted = Variable(board)
        now = time.perf_counter()
        S.deadline = math.inf if seconds is None else now + seconds
        until = S.deadline if share is None else min(S.deadline, now + share)
        best: list[Optional[tuple[float, DPNode]]] = [None]

        def found(t: tuple[float, DPNode]) -> None:
            if best[0] is None or t[0] < best[0][0]:
                best[0] = t
                posted.set(float(t[0]))

        stats: dict = {}
        finished = True
        try:
            improve(tree, cost, S.X, S.y, S.w, self.depth, until, lambda tasks: [resolve(S, *t) for t in tasks],
                    found, 1, stats)
        except _Timeout:
            finished = False
        return (None if best[0] is None else (best[0][0], S.materialise(best[0][1]))), finished, stats

    def exact_one(self, f: int, ub: float, seconds: Optional[float]) -> tuple:
        """Alg. 1 at the root over feature ``f`` alone, for a tree of cost <= ``ub``: (the best
        (cost, tree) or None, finished), within ``seconds`` (None: no limit)."""
        S = self.S
        S.deadline = math.inf if seconds is None else time.perf_counter() + seconds
        inc = _Incumbent(ub, S.d_strict, S.d_tie)
        try:
            S.branch(self.root, self.depth, f, inc, 0, 0.0)
        except _Timeout:
            return (None if inc.tree is None else (inc.cost, S.materialise(inc.tree))), False
        return (None if inc.tree is None else (inc.cost, S.materialise(inc.tree))), True


class DaskRoot:
    """The parent's side: one actor per worker of the cluster at ``address``; the same
    ``lds`` / ``exact`` / ``close`` interface as the local runs of ``deep.deep_tree``."""

    def __init__(self, address: str, X: np.ndarray, y: np.ndarray, w: np.ndarray, K: int, depth: int,
                 min_leaf: int, deadline: float, best: Callable[[], float], refine_share: float = 0.5) -> None:
        from distributed import Client

        from odt.compiler.errors import OdtInputError

        wait = 10.0 if math.isinf(deadline) else max(1.0, min(10.0, deadline - time.perf_counter()))
        try:  # within the time limit: an address nobody answers is the user's to fix, not a crash
            self.client = Client(address, timeout=wait)
        except (OSError, TimeoutError, ValueError) as exc:  # ValueError: a malformed address
            raise OdtInputError(f"cannot reach the Dask scheduler at {address!r} within {wait:.1f} s: {exc}",
                                hint="start one (dask scheduler) and give its address, or drop the scheduler "
                                     "to search on this machine's cores") from exc
        names = list(self.client.scheduler_info()["workers"])
        parts = max(1, len(names))
        data = [self.client.scatter(a, broadcast=True) for a in (X, y, w)]
        self.actors = [self.client.submit(_RootShare, *data, K, depth, min_leaf, i, parts, actor=True,
                                          workers=[names[i]] if names else None, pure=False).result()
                       for i in range(parts)]
        self.deadline, self.best = deadline, best
        self.refine_share = refine_share  # of the time left, for the portfolio's improver (``finish``)
        #: the improver's costs as it finds them (a cluster ``Variable``), read when a feature is dealt
        self.board: Optional[Any] = None
        self._order: Optional[tuple[list[int], float]] = None

    def _left(self) -> Optional[float]:
        return None if math.isinf(self.deadline) else max(0.0, self.deadline - time.perf_counter())

    def _gather(self, refill: Callable[[Any], Any], offer: Callable, stats: Optional[dict] = None) -> bool:
        """Every actor kept busy with ``refill(actor)`` (an ActorFuture, or None when there is
        nothing more for it), each answer (found, finished[, counts added to ``stats``])
        offered; whether every answer finished. An unfinished answer (out of time) deals no
        more; a signal to this process abandons the work still running (unfinished)."""
        from odt.compiler import limits

        running: dict[Any, Any] = {}  # ActorFuture -> its actor
        for actor in self.actors:
            if (job := refill(actor)) is not None:
                running[job] = actor
        finished = True
        while running:
            if limits.halted():
                return False
            for job in list(running):
                try:
                    found, done, *rest = job.result(timeout=0.05)
                except TimeoutError:
                    continue
                if rest and stats is not None:
                    for key, value in rest[0].items():
                        stats[key] = stats.get(key, 0) + value
                actor = running.pop(job)
                offer(found)
                finished = finished and done
                if finished and (job := refill(actor)) is not None:
                    running[job] = actor
        return finished

    def lds(self, k: int, offer: Callable) -> bool:
        """Each actor's discrepancy search over its own share of the root's splits, once."""
        left, bound = self._left(), self.best()
        given: set[int] = set()

        def once(actor: Any) -> Any:
            if id(actor) in given:
                return None
            given.add(id(actor))
            return actor.lds(k, bound, left)

        return self._gather(once, offer)

    def finish(self, tree: DPNode, cost: float, ub: float, deadline: float, offer: Callable, stats: dict) -> bool:
        """The portfolio of the local workers on the cluster: the last actor re-solves the
        incumbent's subtrees for ``refine_share`` of the time left and then takes root
        features like the others, which start the complete search at once (one actor: the
        complete search alone). Sound as ``exact``: every feature is dealt, each with a bound
        below a tree the parent keeps."""
        if len(self.actors) < 2:
            return self.exact(ub, offer)
        import uuid

        from distributed import Variable

        left = self._left()
        share = None if left is None else self.refine_share * left
        improver = self.actors[-1]
        started = [False]
        name = f"odt-deep-{uuid.uuid4().hex}"
        self.board = Variable(name, client=self.client)
        self.board.set(math.inf)  # a get never waits (a timed-out get is logged by the scheduler)

        def first(actor: Any) -> Any:
            if actor is improver and not started[0]:
                started[0] = True
                return actor.improve(tree, cost, share, self._left(), name)
            return None

        try:
            return self.exact(ub, offer, first, stats)
        finally:
            board, self.board = self.board, None
            board.delete()

    def _posted(self) -> float:
        """The best cost the improver has posted (inf: none yet, or no improver running).
        Sound to prune with: its tree reaches the parent with the improver's answer, and a
        search that ends before that answer is not a proof."""
        if self.board is None:
            return math.inf
        try:
            return float(self.board.get(timeout=5))
        except (TimeoutError, OSError):  # the scheduler did not answer: nothing to tighten with
            return math.inf

    def exact(self, ub: float, offer: Callable, first: Optional[Callable[[Any], Any]] = None,
              stats: Optional[dict] = None) -> bool:
        """The complete search: the root's features dealt one at a time to the free actors,
        each with ``ub`` tightened by the best cost known when it is dealt (``first(actor)``:
        a job to give an actor before any feature, or None)."""
        if self._order is None:
            self._order = self.actors[0].order().result()  # type: ignore[attr-defined]  # an ActorFuture
        order, d_strict = self._order
        queue = list(order)

        def next_job(actor: Any) -> Any:
            if first is not None and (job := first(actor)) is not None:
                return job
            if not queue:
                return None
            return actor.exact_one(queue.pop(0), min(ub, min(self.best(), self._posted()) - d_strict), self._left())

        return self._gather(next_job, offer, stats)

    def close(self) -> None:
        self.client.close()

