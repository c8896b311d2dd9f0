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
(at most ``kl`` nodes on the left: smaller splits are dominated); a tree of at most k
nodes is at most k deep. Depth two and below are the exact vectors of ``Search`` (the
depth-two solver); a similarity bound above ``ub`` skips them. With rows of weight one and
no branch state, depth three is one compiled call (``kernels.depth_three``, the same
bounds) and depth two a compiled table shared by those calls; for the squared-error task
(regression, issue 26) depth three is one compiled call too (``kernels_sq.squared_three``)
where its work is small, and its depth-two trees are decoded by one call; otherwise
``_splits`` runs in Python. The similarity bound is used only where a tree for some rows stays feasible on
others (no minimum leaf or node size, no ``same_leaf``, no branch state).

Invariants: values are floats of sums of row weights and multiples of ``c``; a prune
needs its bound above ``ub`` by a relative ``EPS``, so rounding never prunes an optimum;
a split whose exact value is above the bound is a bound, never a solved value (other
splits were pruned against the bound alone);
with integral weights and ``c = p/q`` distinct values differ by at least ``gap = 1/q``.
"""
from __future__ import annotations

import functools
import math
import time
from typing import Any

import numpy as np

from odt.compiler import limits

from .binarize import first_of_partitions
from .branch import State
from .solve import INF, Search, _kernels

EPS = 1e-9
#: depth-three subproblems by ``kernels.depth_three`` where it applies (off: ``_splits`` in Python)
COMPILED_THREE = True
#: under a time limit, a depth-three call (not interruptible) only up to this many word operations
#: (candidates^3 * classes * rows / 64, about a second); larger ones run ``_splits``, which checks the clock
THREE_WORK = 1e9
#: the most work (about nanoseconds) of one compiled depth-three call of the squared-error task
#: (``kernels_sq.squared_three``); larger subproblems run ``_splits``, which prunes more
SQUARED_THREE_WORK = 3e7


class Rec:
    """What is known of one (rows, depth, state, budget): a lower bound, and the optimum
    with its choice ``(candidate, left budget, right budget)`` or None for a leaf once solved."""

    __slots__ = ("lb", "fail", "val", "choice")

    def __init__(self) -> None:
        self.lb = 0.0  # the optimum is at least lb
        self.fail = -INF  # ... and above fail (a search with this upper bound found nothing)
        self.val: float | None = None
        self.choice: tuple[int, int, int] | None = None


def _above(lb: float, ub: float) -> bool:
    return lb > ub + EPS * (1.0 + abs(ub))


@functools.lru_cache(maxsize=8)
def _zobrist(N: int) -> np.ndarray:
    """The rows' random 64-bit keys of the depth-two table (Zobrist hashing; a fixed seed,
    so a function of ``N`` alone, made once per row count: drawing them was ~50 us of every
    solve). The kernels only read them."""
    rng = np.random.default_rng(12345)
    return rng.integers(0, np.iinfo(np.int64).max, size=N, dtype=np.int64).astype(np.uint64)


class BoundedSearch(Search):
    """``Search`` with ``best``: the optimum of ``errors + c * nodes`` within a node budget."""

    def __init__(self, *args, c: float = 0.0, gap: float = 0.0, table: int | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.c = float(c)
        #: the most depth-two values ``_three_cache`` keeps (None: by the candidates and rows;
        #: a search of depth two solves one depth-two subproblem, so needs room for a few)
        self.table = table
        #: the least difference between two distinct values when known (integer weights and
        #: c = p/q: 1/q), else 0; a split must beat the incumbent by it to matter. ``gap`` is
        #: that difference for integer weights: with others, 0
        self.gap = float(gap) if self.whole else 0.0
        self.recs: dict[tuple, dict[int, Rec]] = {}
        #: the similarity bound holds when a tree for some rows stays feasible on others:
        #: no minimum sizes, no same_leaf pair, no branch state
        self.similarity = self.ingr.trivial and not len(self.pairs) and self.min_leaf <= 1 and self.min_node <= 1 \
            and self.task.similarity
        self._kernels3: Any = _kernels() if self.compiled else None
        #: depth three in one compiled call (``kernels.depth_three``): rows of one weight per class, no branch state
        self.compiled_three = COMPILED_THREE and self.compiled and self.unit and self.ingr.trivial \
            and not len(self.pairs)  # (``unit``: the compiled kernels' task, misclassification, too)
        #: depth three of the squared-error task in one compiled call (``kernels_sq.squared_three``):
        #: every candidate allowed, no branch state, the work under ``SQUARED_THREE_WORK``
        self.squared_three = COMPILED_THREE and self.compiled and self.plain_below \
            and getattr(self.task, "KERNEL_TWO", "") == "squared"
        self._sq3: tuple | None = None  # its buffers, made on first use
        self.pruned = 0
        self.depth_two_solves = 0  # inside the compiled depth-three calls
        self._table: tuple | None = None
        self.vals2: dict[bytes, np.ndarray] = {}  # rows -> compiled depth-two values (``_small_compiled``)
        self._cluster: dict[bytes, np.ndarray] = {}  # rows -> the task's k-means bounds (``_task_bound``)

    # ------------------------------------------------------------------ values below depth three
    def _small(self, S: np.ndarray, d: int, k: int, state: State, decoding: bool = False) -> tuple[float, int]:
        """(value, nodes of the best budget) of the exact vector entry at depth <= 2; the
        value alone (nodes -1) from the compiled depth-two table where depth three is
        compiled (``_small_compiled``), except when decoding."""
        if d == 0:  # a leaf
            return self.leaf(S)[0], 0
        if not decoding and self.compiled_three and S.shape[0] >= max(self.min_leaf, 1):
            V = self._small_compiled(S)
            return float(V[min(k, (1 << d) - 1)]), -1
        e = self.solve(S, d, (1 << d) - 1, state)  # every budget at once (the depth-two solver's vector)
        top = min(k, e.budget)
        vals = e.E[: top + 1] + self.c * np.arange(top + 1)
        i = int(np.argmin(vals))
        return float(vals[i]), i

    def _small_compiled(self, S: np.ndarray) -> np.ndarray:
        """The least value of a depth-two tree over rows ``S`` with at most 0..3 nodes (a
        depth-one tree is one with at most one node), kept in ``vals2``."""
        key = S.tobytes()
        V = self.vals2.get(key)
        if V is None:
            indptr, indices, label, _ = self._rows_csr()
            V = np.zeros(4)
            self._kernels3.depth_two_values(indptr, indices, label, S, self.B.shape[1], self.n_classes, self.c,
                                            float(self.min_leaf), float(self.min_node), *self._three_cache(), V,
                                            self.class_weight)
            self.vals2[key] = V
        return V

    def _known(self, key: tuple, d: int, top: int) -> np.ndarray:
        """Lower bounds from the cache for budgets 0..top: exact values or stored bounds (a
        bound at budget k holds for every smaller budget: fewer nodes, no better)."""
        out = np.zeros(top + 1)
        V = self.vals2.get(key[0])  # the compiled depth-two values: exact up to 3 nodes (1 at depth one)
        if d <= 2:
            if V is not None:
                n = min(top, (1 << d) - 1) + 1
                out[:n] = V[:n]
                return out
            e = self.cache.get(key)
            if e is not None:
                n = min(top, e.budget) + 1
                out[:n] = np.minimum.accumulate(e.E[:n] + self.c * np.arange(n))
            return out
        small = self.cache.get((key[0], 2, key[2]))  # budgets <= 2: the depth-two entry is exact
        if V is not None:
            n = min(top, 2) + 1
            out[:n] = V[:n]
        elif small is not None:
            n = min(top, 2, small.budget) + 1
            out[:n] = np.minimum.accumulate(small.E[:n] + self.c * np.arange(n))
        recs = self.recs.get(key)
        if recs:
            for kk, r in recs.items():
                v = r.val if r.val is not None else max(r.lb, r.fail)
                kk = min(kk, top)
                np.maximum(out[: kk + 1], v, out=out[: kk + 1])
        return out

    # ------------------------------------------------------------------ recursion
    def best(self, S: np.ndarray, d: int, k: int, state: State, ub: float) -> tuple[float, bool]:
        """(optimum, True) when the optimum of rows ``S`` with depth ``d`` and at most ``k``
        nodes is at most ``ub``; else (a lower bound above ``ub``, False)."""
        k = min(k, (1 << d) - 1)
        d = min(d, k)  # a tree of at most k nodes is at most k deep
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
            if d == 3 and self.compiled_three and (self.deadline is None or math.isinf(self.deadline) or self._three_work(S) <= THREE_WORK):
                indptr, indices, label, _ = self._rows_csr()
                best, f, kl, kr, lb_split, solves = self._kernels3.depth_three(
                    indptr, indices, label, S, self.B.shape[1], self.n_classes, k, min(ub, leaf), self.c, self.gap,
                    float(self.min_leaf), float(self.min_node), self.similarity, EPS, *self._three_cache(),
                    self.class_weight)
                choice = None if f < 0 else (int(f), int(kl), int(kr))
                self.depth_two_solves += int(solves)
            else:
                ordered = self._order(S, state) if d == 3 and self.squared_three else None
                sq = None if ordered is None else self._squared_three(S, ordered[0], k, min(ub, leaf))
                if sq is not None:
                    best, choice, lb_split = sq
                else:
                    try:
                        best, choice, lb_split = self._splits(S, d, k, state, min(ub, leaf), best, ordered)
                    finally:
                        self.set_sides(None)
        if choice is not None or not _above(best, ub):
            rec.val, rec.choice = best, choice
            return best, True
        rec.lb = max(rec.lb, min(leaf, lb_split))
        rec.fail = max(rec.fail, ub)
        return max(rec.lb, rec.fail), False

    def _squared_three(self, S: np.ndarray, cand: np.ndarray, k: int, ub: float):
        """(best, choice, least bound of the other splits) of ``_splits`` at depth three for
        the squared-error task by one compiled call (``kernels_sq.squared_three``, the same
        values), or None where its work (rows x true pairs per candidate, about a nanosecond
        each) is above ``SQUARED_THREE_WORK``: there ``_splits``, with its similarity and
        k-means bounds and its clock, prunes more than the kernel saves."""
        from . import kernels_sq

        if not cand.size:
            return None
        BS = self.Bq[S]
        s, m = BS.shape
        nnz = float(np.count_nonzero(BS)) / max(s, 1)
        work = cand.size * (s * nnz * nnz / 4.0 + 40.0 * m * m)
        if work > SQUARED_THREE_WORK:
            return None
        if self._sq3 is None or self._sq3[3].shape[0] < s:
            N = self.B.shape[0]
            self._sq3 = (np.zeros((m, m, 4)), np.zeros((m, m, 4)), np.zeros((m, m, 4)), np.zeros((N, m), dtype=np.bool_),
                         np.zeros((N, 3)))
        best, f, kl, kr, lb_split = kernels_sq.squared_three(
            BS, self.class_matrix(S), cand, k, ub, self.c, self.gap, float(self.min_leaf), float(self.min_node), EPS,
            self.unit_rows, self.by_difference, *self._sq3)
        self.depth_two_solves += 2 * int(cand.size)
        if f < 0:
            return float(best), None, float(lb_split)
        f = int(f)
        choice = (f, int(kr), int(kl)) if self.flip[f] else (f, int(kl), int(kr))  # Bq's sides are B's, swapped where flipped
        return float(best), choice, float(lb_split)

    def _three_work(self, S: np.ndarray) -> float:
        m = self.B.shape[1]
        return float(m) ** 3 * self.n_classes * ((S.shape[0] + 63) >> 6)

    def _three_cache(self) -> tuple:
        """The depth-two values kept across ``kernels.depth_three`` calls (see there)."""
        if self._table is None:
            N = self.B.shape[0]
            m = self.B.shape[1]
            # room for 8 m^2 children (when full, children are solved but not kept), at most 64 MiB of rows
            cap = max(1024, min(8 * m * m, 1 << 17, (1 << 23) // max(1, (N + 63) >> 6))) if self.table is None \
                else self.table
            self._table = (_zobrist(N),
                           np.zeros(1 << (2 * cap - 1).bit_length(), dtype=np.int64),  # a power of two
                           np.zeros(1 << (2 * cap - 1).bit_length(), dtype=np.int64),
                           np.zeros((cap, (N + 63) >> 6), dtype=np.uint64), np.zeros((cap, 4)),
                           np.zeros(1, dtype=np.int64))
        return self._table

    def _tick(self) -> None:
        from .solve import Timeout

        if self.deadline is not None and (time.perf_counter() > self.deadline or limits.halted() or self._due()):
            raise Timeout

    def _order(self, S: np.ndarray, state: State) -> tuple[np.ndarray, np.ndarray]:
        """The candidates of rows ``S``, good depth-one splits first (MurTree Sec. 4.6),
        one per partition when no branch state depends on the candidate."""
        BS = self.B[S]
        ok = self.allowed(S, state) & self.sizes_ok(BS.sum(axis=0), S.shape[0])
        cand = np.flatnonzero(ok)
        if cand.size > 1:
            cand = cand[np.argsort(self.split_costs(S, cand), kind="stable")]
        if self.ingr.trivial and cand.size > 1:  # a partition and its mirror: one candidate
            cand = cand[first_of_partitions(BS[:, cand])]
        return cand, BS

    def _splits(self, S: np.ndarray, d: int, k: int, state: State, ub: float, best: float,
                ordered: tuple[np.ndarray, np.ndarray] | None = None):
        """(best, choice, least bound of the other splits) over the candidates of rows ``S``
        (``ordered``: ``_order``'s answer when the caller has it already)."""
        c = self.c
        cand, BS = ordered if ordered is not None else self._order(S, state)
        choice = None
        lb_split = INF
        q = cand.size
        if not q:
            return best, choice, lb_split
        sub = min((1 << (d - 1)) - 1, k - 1)  # the largest budget of a child
        budgets = [(kl, k - 1 - kl) for kl in range(max(0, k - 1 - sub), sub + 1)]
        kls = np.array([b[0] for b in budgets])
        krs = np.array([b[1] for b in budgets])
        cols = BS[:, cand]
        # MurTree's similarity bound against the children solved last under this node: their
        # rows weighted (ref_w) and per budget the bound known for them (ref_b); sim_l / sim_r
        # the bounds they give every candidate's left / right side, least_sum the least over
        # the budget splits of the two
        wS = self.w[S]
        ref_w: list[np.ndarray] = []
        ref_b: list[np.ndarray] = []
        sim_l = np.zeros((q, sub + 1))
        sim_r = np.zeros((q, sub + 1))
        least_sum = np.zeros(q)
        colsf = cols.astype(np.float64) if self.similarity else None
        for j in range(q):
            self._tick()  # each candidate may solve two depth-two children (a compiled call each)
            u = min(ub, best - self.gap)
            if _above(least_sum[j] + c, u):
                self.pruned += 1
                lb_split = min(lb_split, least_sum[j] + c)
                continue
            f = int(cand[j])
            col = cols[:, j]
            child = self.ingr.child(state, f)
            big_right = 2 * int(np.count_nonzero(col)) > col.shape[0]  # the larger side first (the tighter bound)
            masks = (col, ~col) if big_right else (~col, col)
            rows = (S[masks[0]], S[masks[1]])
            if d == 3 and self.by_difference and self.plain_below:
                self.set_sides(S, rows[1], rows[0])  # rows[0] is the larger side
            sims = (sim_r[j], sim_l[j]) if big_right else (sim_l[j], sim_r[j])
            lbs = [np.maximum(np.maximum(self._known((rows[i].tobytes(), d - 1, child), d - 1, sub), sims[i]),
                              self._task_bound(rows[i], d - 1, sub)) for i in (0, 1)]
            for kl, kr in budgets:
                ks = (kr, kl) if big_right else (kl, kr)
                u = min(ub, best - self.gap)
                lb0, lb1 = lbs[0][ks[0]], lbs[1][ks[1]]
                if lb0 + lb1 == INF or _above(lb0 + lb1 + c, u):
                    self.pruned += 1
                    lb_split = min(lb_split, lb0 + lb1 + c)
                    continue
                A, okA = self.best(rows[0], d - 1, ks[0], child, u - c - lb1)
                lbs[0][ks[0]] = max(lb0, A)
                if not okA or A == INF or _above(A + lb1 + c, u):
                    lb_split = min(lb_split, A + lb1 + c)
                    continue
                Bv, okB = self.best(rows[1], d - 1, ks[1], child, u - c - A)
                lbs[1][ks[1]] = max(lb1, Bv)
                if not okB:
                    lb_split = min(lb_split, A + Bv + c)
                    continue
                v = A + Bv + c
                if _above(v, u):  # an exact value above the bound (children of depth <= 2, cached optima):
                    lb_split = min(lb_split, v)  # a bound, not an optimum (others were pruned by u alone)
                    continue
                if v < best:
                    best, choice = v, (int(f), kl, kr)
                else:
                    lb_split = min(lb_split, v)
            if colsf is None or j + 1 == q:
                continue
            for i in (0, 1):  # a bound at budget k holds for the smaller budgets
                ref_w.insert(0, wS * masks[i])
                ref_b.insert(0, np.maximum.accumulate(lbs[i][::-1])[::-1])
            del ref_w[4:], ref_b[4:]
            W, Bd = np.array(ref_w), np.array(ref_b)
            on_right = W @ colsf[:, j + 1:]  # (R, rest): each child's weight on each candidate's right side
            off_left, off_right = on_right, W.sum(axis=1)[:, None] - on_right  # ... missing from its left / right
            sim_l[j + 1:] = np.maximum((Bd[:, None, :] - off_left[:, :, None]).max(axis=0), 0.0)
            sim_r[j + 1:] = np.maximum((Bd[:, None, :] - off_right[:, :, None]).max(axis=0), 0.0)
            least_sum[j + 1:] = (sim_l[j + 1:, kls] + sim_r[j + 1:, krs]).min(axis=1)
        return best, choice, lb_split

    def _task_bound(self, S: np.ndarray, d: int, top: int) -> np.ndarray | float:
        """Per node budget 0..top, a lower bound on the value (loss + c * nodes) of a tree of
        depth ``d`` over rows ``S`` from the task (regression's k-means bound: i nodes make
        at most i + 1 leaves), kept per row set; 0 for a task without one, and for a child
        of depth two or less (solved exactly by the depth-two solver at about the bound's
        cost: the bound would save nothing there)."""
        bounds = getattr(self.task, "cluster_bounds", None)
        if bounds is None or d < 3:
            return 0.0
        key = S.tobytes()
        km = self._cluster.get(key)
        if km is None:
            got = bounds(self.y[S], self.w[S], 1 << d)
            km = self._cluster[key] = np.zeros(1 << d) if got is None else got
        j = np.arange(top + 1)
        return np.minimum.accumulate(km[np.minimum(j, km.shape[0] - 1)] + self.c * j)

    # ------------------------------------------------------------------ decoding
    def decode_best(self, S: np.ndarray, d: int, k: int, state: State):
        """The tree ``best`` found for rows ``S`` (nested tuples as ``Search.decode``)."""
        k = min(k, (1 << d) - 1)
        d = min(d, k)
        if d <= 2:
            if self.compiled_three and d > 0 and S.shape[0] >= max(self.min_leaf, 1):
                return self._decode_two(S, k)
            if self.squared_three and d == 2 and self._splittable(S, 2):
                return self._decode_squared_two(S, k)
            _, i = self._small(S, d, k, state, decoding=True)
            return self.decode(S, d, k, state, i)
        rec = self.recs[(S.tobytes(), d, state)][k]
        assert rec.val is not None
        if rec.choice is None:
            return ("leaf", self.leaf(S)[1])
        f, kl, kr = rec.choice
        col = self.B[S, f]
        child = self.ingr.child(state, f)
        return ("split", f, self.decode_best(S[~col], d - 1, kl, child), self.decode_best(S[col], d - 1, kr, child))

    def _decode_squared_two(self, S: np.ndarray, k: int) -> tuple:
        """The depth-two tree of the squared-error task for rows ``S`` by one compiled call
        (``kernels_sq.squared_two_tree``, the depth-two solver's values), its leaves labelled
        by the task."""
        from . import kernels_sq

        f, g_false, g_true = kernels_sq.squared_two_tree(
            self.Bq[S], self.class_matrix(S), k, self.c, float(max(self.min_leaf, 1)), float(self.min_node),
            self.unit_rows)
        if f < 0:
            return ("leaf", self.leaf(S)[1])
        f = int(f)
        if self.flip[f]:  # Bq's sides of f are B's swapped
            g_false, g_true = g_true, g_false
        col = self.B[S, f]

        def side(R: np.ndarray, g: int) -> tuple:
            if g < 0:
                return ("leaf", self.leaf(R)[1])
            c = self.B[R, g]
            return ("split", int(g), ("leaf", self.leaf(R[~c])[1]), ("leaf", self.leaf(R[c])[1]))

        return ("split", f, side(S[~col], int(g_false)), side(S[col], int(g_true)))

    def _decode_two(self, S: np.ndarray, k: int) -> tuple:
        """The tree of depth at most two (at most ``k`` <= 3 nodes) that ``_small_compiled``
        values for rows ``S``, by one compiled call (``kernels_decode.decode_two``: the same
        depth-two solver) instead of the numpy recursion."""
        from .kernels_decode import decode_two

        indptr, indices, label, _ = self._rows_csr()
        o = decode_two(indptr, indices, label, S, self.B.shape[1], self.n_classes, self.c, k, float(self.min_leaf),
                       float(self.min_node), self.class_weight)
        if o[1] < 0:
            return ("leaf", int(o[3]))

        def child(at: int) -> tuple:
            if o[at] < 0:
                return ("leaf", int(o[at + 1]))
            return ("split", int(o[at]), ("leaf", int(o[at + 1])), ("leaf", int(o[at + 2])))

        return ("split", int(o[1]), child(2), child(5))
