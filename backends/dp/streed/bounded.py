"""Branch and bound over the DP of ``solve.py`` for one objective level
``errors + c * nodes`` (``c >= 0``) under a node budget: cost complexity and ``nodes <= K``.

MurTree (Demirović et al., JMLR 2022, Sec. 4.6-4.7) and STreeD (van der Linden et al.,
NeurIPS 2023, Sec. 4.5): a subproblem of depth three or more is solved for one node budget
``k`` at a time with an upper bound ``ub``: it returns its optimum when that is at most
``ub``, otherwise a lower bound above ``ub``, which the cache keeps for the next visit
with a looser bound. A split's left child gets the bound left after the node cost and the
right child's lower bound, the right child what is left after the left child's optimum.
Lower bounds come from the cache (failed searches, larger budgets) and from similarity
(MurTree Sec. 4.6): the optimum of rows ``S`` is at least that of rows ``S'`` less the
weight of the rows of ``S'`` missing from ``S`` (their tree, run on ``S``, loses at most
those rows' errors), compared against the children solved just before under the same
node. With cost complexity the budget is the depth's full tree, so each subproblem has a
single value; with ``nodes <= K`` a node's budget ``k`` is split as ``k - 1 = kl + kr``
(at most ``kl`` nodes on the left: smaller splits are dominated). Depth two and below are
the exact vectors of ``Search`` (the depth-two solver); a similarity bound above ``ub``
skips them.

Invariants: values are floats of sums of row weights and multiples of ``c``; a prune
needs its bound above ``ub`` by a relative ``EPS``, so rounding never prunes an optimum.
"""
from __future__ import annotations

import numpy as np

from .branch import State
from .solve import INF, Search

EPS = 1e-9


class Rec:
    """What is known of one (rows, depth, state, budget): a lower bound, and the optimum
    with its choice ``(candidate, left budget, right budget)`` or None for a leaf once solved."""

    __slots__ = ("lb", "fail", "val", "choice")

    def __init__(self) -> None:
        self.lb = 0.0  # the optimum is at least lb
        self.fail = -INF  # ... and above fail (a search with this upper bound found nothing)
        self.val: float | None = None
        self.choice: tuple[int, int, int] | None = None


def _note(bounds: dict[int, float], k: int, v: float) -> None:
    if v > bounds.get(k, 0.0):
        bounds[k] = v


def _above(lb: float, ub: float) -> bool:
    return lb > ub + EPS * (1.0 + abs(ub))


class BoundedSearch(Search):
    """``Search`` with ``best``: the optimum of ``errors + c * nodes`` within a node budget."""

    def __init__(self, *args, c: float = 0.0, gap: float = 0.0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.c = float(c)
        #: the least difference between two distinct values when known (integer weights and
        #: c = p/q: 1/q), else 0; a split must beat the incumbent by it to matter
        self.gap = float(gap)
        self.w = self.Wc.sum(axis=1)
        self.recs: dict[tuple, dict[int, Rec]] = {}
        self.pruned = 0

    # ------------------------------------------------------------------ values below depth three
    def _small(self, S: np.ndarray, d: int, k: int, state: State) -> tuple[float, int]:
        """(value, nodes of the best budget) of the exact vector entry at depth <= 2."""
        e = self.solve(S, d, (1 << d) - 1, state)  # every budget at once (the depth-two solver's vector)
        top = min(k, e.budget)
        vals = e.E[: top + 1] + self.c * np.arange(top + 1)
        i = int(np.argmin(vals))
        return float(vals[i]), i

    def _known(self, key: tuple, d: int, k: int) -> float:
        """A lower bound from the cache: an exact value or a stored bound, at budget k or more."""
        if d <= 2:
            e = self.cache.get(key)
            if e is not None and e.budget >= k:
                return float(np.min(e.E[: k + 1] + self.c * np.arange(k + 1)))
            return 0.0
        recs = self.recs.get(key)
        if not recs:
            return 0.0
        lb = 0.0
        for kk, r in recs.items():
            if kk >= k:
                lb = max(lb, r.val if r.val is not None else max(r.lb, r.fail))
        return lb

    # ------------------------------------------------------------------ recursion
    def best(self, S: np.ndarray, d: int, k: int, state: State, ub: float) -> tuple[float, bool]:
        """(optimum, True) when the optimum of rows ``S`` with depth ``d`` and at most ``k``
        nodes is at most ``ub``; else (a lower bound above ``ub``, False)."""
        k = min(k, (1 << d) - 1)
        if d <= 2:
            return self._small(S, d, k, state)[0], True
        key = (S.tobytes(), d, state)
        recs = self.recs.setdefault(key, {})
        rec = recs.get(k)
        if rec is None:
            rec = recs[k] = Rec()
        if rec.val is not None:
            return rec.val, True
        if ub <= rec.fail or _above(rec.lb, ub):
            return max(rec.lb, rec.fail), False
        self.calls += 1
        self._tick()
        leaf, _ = self.leaf(S)
        if _above(leaf, ub) and _above(self.c, ub):  # a leaf or a split (one node at least): above ub
            rec.lb = max(rec.lb, min(leaf, self.c))
            rec.fail = max(rec.fail, ub)
            return max(rec.lb, rec.fail), False
        best, choice = leaf, None
        lb_split = INF  # least bound over the splits not improving on ``best``
        if leaf > 0 and k > 0 and self._splittable(S, d):
            best, choice, lb_split = self._splits(S, d, k, state, min(ub, leaf), best)
        if choice is not None or not _above(best, ub):
            rec.val, rec.choice = best, choice
            return best, True
        rec.lb = max(rec.lb, min(leaf, lb_split))
        rec.fail = max(rec.fail, ub)
        return max(rec.lb, rec.fail), False

    def _tick(self) -> None:
        import time

        from .solve import Timeout

        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise Timeout

    def _order(self, S: np.ndarray, state: State) -> tuple[np.ndarray, np.ndarray]:
        """The candidates of rows ``S``, good depth-one splits first (MurTree Sec. 4.6),
        one per partition when no branch state depends on the candidate."""
        BS = self.B[S]
        ok = self.allowed(S, state) & self.sizes_ok(BS.sum(axis=0), S.shape[0])
        cand = np.flatnonzero(ok)
        if cand.size > 1:
            right = self.Bf[S][:, cand].T @ self.Wc[S]
            left = self.Wc[S].sum(axis=0) - right
            cand = cand[np.argsort((left.sum(1) - left.max(1)) + (right.sum(1) - right.max(1)), kind="stable")]
        if self.ingr.trivial and cand.size > 1:
            cols = BS[:, cand]
            canon = cols ^ cols[:1, :]  # a partition and its mirror: the same key
            _, first = np.unique(np.packbits(canon, axis=0), axis=1, return_index=True)
            cand = cand[np.sort(first)]
        return cand, BS

    def _splits(self, S: np.ndarray, d: int, k: int, state: State, ub: float, best: float):
        c = self.c
        cand, BS = self._order(S, state)
        wS = self.w[S]
        choice = None
        lb_split = INF
        sub = (1 << (d - 1)) - 1
        budgets = [(kl, k - 1 - kl) for kl in range(max(0, k - 1 - sub), min(k - 1, sub) + 1)]
        refs: list[tuple[np.ndarray, State, dict[int, float]]] = []  # recent children: mask, state, bounds
        for f in cand:
            col = BS[:, f]
            child = self.ingr.child(state, int(f))
            big_right = 2 * int(np.count_nonzero(col)) > col.shape[0]  # the larger side first (the tighter bound)
            masks = (col, ~col) if big_right else (~col, col)
            rows = (S[masks[0]], S[masks[1]])
            keys = ((rows[0].tobytes(), d - 1, child), (rows[1].tobytes(), d - 1, child))
            new_refs: list[tuple[np.ndarray, State, dict[int, float]]] = [(masks[0], child, {}), (masks[1], child, {})]
            for kl, kr in budgets:
                ks = (kr, kl) if big_right else (kl, kr)
                u = min(ub, best - self.gap)
                lb0 = max(self._known(keys[0], d - 1, ks[0]), self._similar(refs, masks[0], child, ks[0], wS))
                lb1 = max(self._known(keys[1], d - 1, ks[1]), self._similar(refs, masks[1], child, ks[1], wS))
                _note(new_refs[0][2], ks[0], lb0)
                _note(new_refs[1][2], ks[1], lb1)
                if lb0 + lb1 == INF or _above(lb0 + lb1 + c, u):
                    self.pruned += 1
                    lb_split = min(lb_split, lb0 + lb1 + c)
                    continue
                A, okA = self.best(rows[0], d - 1, ks[0], child, u - c - lb1)
                _note(new_refs[0][2], ks[0], A)
                if not okA or A == INF or _above(A + lb1 + c, u):
                    lb_split = min(lb_split, A + lb1 + c)
                    continue
                Bv, okB = self.best(rows[1], d - 1, ks[1], child, u - c - A)
                _note(new_refs[1][2], ks[1], Bv)
                if not okB:
                    lb_split = min(lb_split, A + Bv + c)
                    continue
                v = A + Bv + c
                if v < best:
                    best, choice = v, (int(f), kl, kr)
                else:
                    lb_split = min(lb_split, v)
            refs = (new_refs + refs)[:4]
        return best, choice, lb_split

    def _similar(self, refs, mask: np.ndarray, state: State, k: int, wS: np.ndarray) -> float:
        """MurTree's similarity bound against recently solved children of the same node."""
        lb = 0.0
        for m, st, bounds in refs:
            v = bounds.get(k)
            if v is None or st != state or v <= lb:
                continue
            lb = max(lb, v - float(wS[m & ~mask].sum()))
        return lb

    # ------------------------------------------------------------------ decoding
    def decode_best(self, S: np.ndarray, d: int, k: int, state: State):
        """The tree ``best`` found for rows ``S`` (nested tuples as ``Search.decode``)."""
        k = min(k, (1 << d) - 1)
        if d <= 2:
            _, i = self._small(S, d, k, state)
            return self.decode(S, d, k, state, i)
        rec = self.recs[(S.tobytes(), d, state)][k]
        assert rec.val is not None
        if rec.choice is None:
            return ("leaf", self.leaf(S)[1])
        f, kl, kr = rec.choice
        col = self.B[S, f]
        child = self.ingr.child(state, f)
        return ("split", f, self.decode_best(S[~col], d - 1, kl, child), self.decode_best(S[col], d - 1, kr, child))
