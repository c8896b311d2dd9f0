"""The DP recursion over (rows, depth budget, node budget, branch state), with caching.

MurTree (Demirović et al., JMLR 2022, Eq. 1 and Sec. 4.2) and STreeD (van der Linden et
al., NeurIPS 2023, Eq. 2): the best tree of a subproblem is a leaf or a split on a
candidate f with the best subtrees of both sides, each with one depth less and node
budgets adding up to one less than the parent's. ``Entry.E[i]`` is the least weighted
error of a tree with AT MOST ``i`` decision nodes (non-increasing in ``i``; MurTree's
size budget); without a node quantity or cap (``counting`` off) a single value, the
least error of any tree. Path constraints enter as the branch state of ``branch.py``;
``every leaf: samples >= m`` and ``every node: samples >= S`` restrict the splits;
``same_leaf`` forbids the candidates that separate its two rows. Subproblems are cached
by (rows, depth, state) with the largest budget computed so far. Depth-one subproblems
are solved for all candidates at once with one matrix product (MurTree's specialised
depth-two solver counts the same class frequencies).

Invariants: rows are sorted positions into ``B``; an infeasible budget is ``inf``.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

from odt.compiler import limits

from .. import jit
from ..anytime import Timeout
from ..task import Misclassification, Task
from .branch import Ingredients, State
from .binarize import first_of_partitions
from .depth_two import depth_two, depth_two_compiled

INF = float("inf")
#: more classes than this: a subproblem's depth-one costs come from one weighted count per
#: candidate instead of a product with its (rows x classes) weight matrix
WIDE_CLASSES = 64
#: the most candidates the numpy depth-two solver of a regression task takes: it holds a few
#: (statistics x candidates x candidates) arrays (2048: about 100 MB each)
PAIRED_MAX = 2048
Choice = tuple[int, int, int] | None  # (candidate, left budget, right budget) or a leaf
_NO_MASK = np.zeros((0, 0), dtype=bool)  # every child candidate allowed (the compiled kernels' convention)


def _kernels():
    """The compiled kernels, imported on first use (numba loads only when they run)."""
    from . import kernels

    return kernels


@dataclass
class Entry:
    E: np.ndarray  # (budget + 1,) least error with at most i nodes
    choice: list[Choice]
    budget: int


class Search:
    """One program's DP: the candidate matrix, the rows' classes and weights, the limits
    and the ingredients; ``solve`` fills the cache, ``decode`` reads a tree out of it."""

    def __init__(self, B: np.ndarray, y: np.ndarray, w: np.ndarray, task: Task, ingredients: Ingredients,
                 min_leaf: int, min_node: int, pairs: np.ndarray, counting: bool, deadline: float | None) -> None:
        self.B = B
        self.task = task
        # each row's class and weight; the (rows x classes) weight matrix is made for the
        # rows of a subproblem where a kernel needs it (``class_matrix``): with a class per
        # row (issue 24) the whole of it is rows^2 numbers
        self.y = np.asarray(y, dtype=np.int64)
        self.w = np.asarray(w, dtype=np.float64)
        self.weights = self.w
        self.n_classes = task.width
        #: the compiled kernels count class weights: misclassification's own, without a per-leaf bound
        self.compiled_task = task.KERNEL == Misclassification.KERNEL and task.max_leaf == INF
        #: a task of a few statistics with a numpy leaf cost over stacked statistics (regression's
        #: squared error): the depth-two solver's pair sums, on numpy
        self.paired_task = getattr(task, "stacked_costs", None) is not None and task.max_leaf == INF \
            and B.shape[1] <= PAIRED_MAX
        #: a leaf costing more than this is infeasible (``every leaf: errors <= e``), up to rounding
        self.max_leaf = task.max_leaf + 1e-9 * (1.0 + abs(task.max_leaf)) if task.max_leaf < INF else INF
        #: every row's statistics, for a task of a few (regression's squared error)
        self._stats = task.statistics(self.y, self.w) if self.paired_task else None
        self.ingr = ingredients
        self.min_leaf = max(min_leaf, 1)
        self.min_node = max(min_node, 1)
        self.pairs = pairs  # (q, 2) row positions that share a leaf
        self.sep = (B[pairs[:, 0]] != B[pairs[:, 1]]) if len(pairs) else np.zeros((0, B.shape[1]), bool)
        self.counting = counting
        self.deadline = deadline
        self.cache: dict[tuple, Entry] = {}
        self._allowed: dict[State, np.ndarray] = {}
        self._freq: dict[bytes, tuple] = {}  # pair frequencies handed to the depth-two solver
        #: the depth-three node whose two children are being solved, for squared error's pair sums by
        #: difference (``_pair_hint``): [parent rows, their pair sums, small side key, large side key, small's sums]
        self._sides: list | None = None
        self._buffers: tuple[np.ndarray, np.ndarray] | None = None  # see ``_pair_hint``
        #: the compiled regression kernel's columns: complemented where true on most rows (``_squared_two_compiled``)
        self.flip = B.sum(axis=0) * 2 > B.shape[0] if self.paired_task else np.zeros(B.shape[1], dtype=bool)
        self.Bq = np.ascontiguousarray(B ^ self.flip, dtype=np.bool_) if self.paired_task else B
        lo, hi = (float(self.w.min()), float(self.w.max())) if self.w.size else (1.0, 1.0)
        #: every row of weight one (the compiled regression kernel counts rows by their weights)
        self.unit_rows = lo == hi == 1.0
        #: every weight an integer
        self.whole = (lo == hi and lo == round(lo)) or bool(np.all(self.w == np.round(self.w)))
        small = lo >= 0 and hi * self.w.size < 2.0**50  # its sums stay exact in float64
        self.by_difference = self.paired_task and getattr(task, "KERNEL_TWO", "") == "squared" and self.whole \
            and (small or self.w.sum() < 2.0**50)
        #: two sets of pair frequencies kept between depth-two subproblems and moved to the next
        #: one by its difference in rows (exact only with integral weights)
        self._slots: list[list] = []
        self._last_slot: list | None = None
        self._csr: tuple | None = None
        self.incremental = self.compiled_task and self.whole and (small or self.w.sum() < 2.0**50)
        #: every row of class k of one integral weight ``class_weight[k]`` (1 without weights; a cost
        #: matrix's class weights, issue 26): the depth-two frequencies by bitsets
        #: (``kernels.bit_frequencies``, scaled per class) and the compiled depth three
        self.class_weight = _class_weights(self.y, self.w, self.n_classes) if self.compiled_task else None
        self.unit = self.class_weight is not None
        self.calls = 0
        #: the compiled kernels (``kernels.py``) once compiled (``jit.ready``); while their warm-up
        #: runs, numpy, and the search stops when they are ready (``jit.due``)
        self.compiled = jit.ready("streed", B.shape[0] * B.shape[1]) and _kernels().AVAILABLE
        self.switch_group = "streed" if not self.compiled and jit.waiting("streed") else None
        #: no candidate set depends on the branch: the depth-two solver applies
        self.plain_below = ingredients.trivial and not len(pairs)

    @functools.cached_property
    def Bf(self) -> np.ndarray:
        """``B`` as floats, for the numpy depth-one and depth-two products (made on first use:
        the compiled kernels never read it)."""
        return self.B.astype(np.float64)

    # ------------------------------------------------------------------ class weights
    def class_matrix(self, S: np.ndarray) -> np.ndarray:
        """(|S|, s): the task's statistics of each row of ``S`` (its weight in its class
        column, for misclassification)."""
        if self._stats is not None:
            return np.take(self._stats, S, axis=0)  # (the same rows as ``_stats[S]``, gathered faster)
        return self.task.statistics(self.y[S], self.w[S])

    def class_totals(self, S: np.ndarray) -> np.ndarray:
        """(s,): the task's statistics summed over rows ``S`` (each class's weight)."""
        if self._stats is not None:
            return np.take(self._stats, S, axis=0).sum(axis=0)
        return self.task.totals(self.y[S], self.w[S])

    def split_costs(self, S: np.ndarray, cand: np.ndarray) -> np.ndarray:
        """The errors of the depth-one tree on each candidate of ``cand`` over rows ``S``
        (each side's weight less its largest class weight): one matrix product for a few
        classes, else one weighted count per candidate (no rows x classes matrix)."""
        if self.n_classes <= WIDE_CLASSES:
            Wc = self.class_matrix(S)
            right = self.Bf[S][:, cand].T @ Wc
            left = Wc.sum(axis=0) - right
            return self.leaf_costs(left) + self.leaf_costs(right)
        total = self.class_totals(S)
        ys, ws = self.y[S], self.w[S]
        out = np.empty(cand.shape[0])
        for i, f in enumerate(cand):
            col = self.B[S, f]
            right = self.task.totals(ys[col], ws[col])
            out[i] = self.leaf_costs(np.stack([total - right, right])).sum()
        return out

    def _due(self) -> bool:
        """The kernels this search waits for are compiled: stop, to start again on them."""
        return self.switch_group is not None and jit.due(self.switch_group)

    # ------------------------------------------------------------------ leaves
    def leaf(self, S: np.ndarray) -> tuple[float, int]:
        """(error, label) of a leaf holding rows ``S``; error inf when it is too small."""
        if S.shape[0] < self.min_leaf and (S.shape[0] > 0 or self.min_leaf > 1):
            return INF, 0
        cost, label = self.task.leaf(self.class_totals(S))
        return (INF, label) if cost > self.max_leaf else (cost, label)

    def leaf_costs(self, totals: np.ndarray) -> np.ndarray:
        """The task's leaf costs of many sets at once, inf above the per-leaf bound."""
        cost = self.task.costs(totals)
        return cost if self.max_leaf == INF else np.where(cost > self.max_leaf, INF, cost)

    # ------------------------------------------------------------------ splits
    def allowed(self, S: np.ndarray, state: State) -> np.ndarray:
        ok = self._allowed.get(state)
        if ok is None:
            ok = self._allowed[state] = self.ingr.allowed(state)
        if len(self.pairs):
            here = np.isin(self.pairs[:, 0], S, assume_unique=False)
            if here.any():
                ok = ok & ~self.sep[here].any(axis=0)
        return ok

    def sizes_ok(self, n_right: np.ndarray, n: int) -> np.ndarray:
        """Both sides at least ``min_leaf`` rows (and one: a split sending no row to a side
        is no split, as in every encoding's decoded tree)."""
        m = max(self.min_leaf, 1)
        return (n - n_right >= m) & (n_right >= m)

    # ------------------------------------------------------------------ recursion
    def solve(self, S: np.ndarray, d: int, k: int, state: State) -> Entry:
        """The entry of rows ``S`` with depth budget ``d`` and node budget ``k``."""
        k = min(k, (1 << d) - 1) if self.counting else 0
        key = (S.tobytes(), d, state)
        hit = self.cache.get(key)
        if hit is not None and hit.budget >= k:
            return hit
        self.calls += 1
        if self.deadline is not None and (time.perf_counter() > self.deadline or limits.halted() or self._due()):
            raise Timeout
        if d == 1:
            entry = self._depth_one(S, k, state)
        elif d == 2 and (self.compiled_task or self.paired_task):  # the specialised depth-two solver
            entry = self._depth_two(S, k, state)
        else:
            entry = self._general(S, d, k, state)
        self.cache[key] = entry
        return entry

    def _splittable(self, S: np.ndarray, d: int) -> bool:
        return d > 0 and S.shape[0] >= self.min_node and S.shape[0] >= 2 * self.min_leaf

    def _depth_one(self, S: np.ndarray, k: int, state: State) -> Entry:
        err, _ = self.leaf(S)
        size = k + 1
        E = np.full(size, err)
        choice: list[Choice] = [None] * size
        if err == 0 or not self._splittable(S, 1) or (self.counting and k == 0):
            return Entry(E, choice, k)
        cost = self.split_costs(S, np.arange(self.B.shape[1]))
        n_right = self.B[S].sum(axis=0)
        ok = self.allowed(S, state) & self.sizes_ok(n_right, S.shape[0])
        if not ok.any():
            return Entry(E, choice, k)
        cost = np.where(ok, cost, INF)
        f = int(np.argmin(cost))
        if cost[f] < err:
            at = 1 if self.counting else 0
            E[at:] = cost[f]
            for i in range(at, size):
                choice[i] = (f, 0, 0)
        return Entry(E, choice, k)

    def _depth_two(self, S: np.ndarray, k: int, state: State) -> Entry:
        err, _ = self.leaf(S)
        if err == 0 or not self._splittable(S, 2) or (self.counting and k == 0):
            return Entry(np.full(k + 1, err), [None] * (k + 1), k)
        ok = self.allowed(S, state)
        ok_left = ok_right = None
        if not self.plain_below:
            ok_left, ok_right = self._child_masks(S, state, ok)
        freq = self._freq.pop(S.tobytes(), None)
        if freq is None and self.unit and self.compiled:
            indptr, indices, label, _ = self._rows_csr()
            counts, C1, C2 = _kernels().bit_frequencies(indptr, indices, label, S, self.B.shape[1], self.n_classes)
            cw = self.class_weight
            assert cw is not None
            freq = (counts, C1, C2) if bool(np.all(cw == 1.0)) else (counts, C1 * cw[:, None], C2 * cw[:, None, None])
        elif freq is None and self.incremental and self.compiled:
            freq = self._slot_frequencies(S)
        if self.paired_task:
            E, choice = self._paired_depth_two(S, ok, err, ok_left, ok_right)
        elif freq is not None and self.compiled:
            E, choice = depth_two_compiled(freq, self.class_totals(S), S.shape[0], ok, self.min_leaf, self.min_node,
                                           err, ok_left, ok_right, self.incremental)
        else:
            E, choice = depth_two(self.Bf[S], self.class_matrix(S), ok, self.min_leaf, self.min_node, err, ok_left, ok_right,
                                  freq, compiled=self.compiled)
        if not self.counting:
            return Entry(E[3:], choice[3:], 0)
        return Entry(E[: k + 1].copy(), choice[: k + 1], k)

    def _paired_depth_two(self, S: np.ndarray, ok: np.ndarray, err: float, ok_left: np.ndarray | None,
                          ok_right: np.ndarray | None) -> tuple[np.ndarray, list]:
        """The depth-two solver on a task's stacked statistics (regression), over the
        candidates that split ``S`` in distinct ways: with every candidate allowed
        everywhere, one constant on ``S`` splits nothing and equal or complementary ones
        split alike (the solver weighs both sides of each), so only the first of each
        partition of ``S`` is kept (the pair sums cost rows x candidates^2)."""
        cost = getattr(self.task, "stacked_costs")
        keep = None
        if self.compiled and getattr(self.task, "KERNEL_TWO", "") == "squared":
            return self._squared_two_compiled(S, ok, err, ok_left, ok_right)
        if ok_left is None and bool(ok.all()):
            BS = self.B[S]
            n1 = BS.sum(axis=0)
            live = np.flatnonzero((n1 > 0) & (n1 < S.shape[0]))
            keep = live[first_of_partitions(BS[:, live])] if live.size else live
        if keep is None or keep.size == ok.shape[0]:
            return depth_two(self.Bf[S], self.class_matrix(S), ok, self.min_leaf, self.min_node, err, ok_left,
                             ok_right, None, compiled=False, leaf_cost=cost)
        if not keep.size:
            return np.full(4, err), [None] * 4
        E, choice = depth_two(self.Bf[np.ix_(S, keep)], self.class_matrix(S), ok[keep], self.min_leaf, self.min_node,
                              err, None, None, None, compiled=False, leaf_cost=cost)
        return E, [None if c is None else (int(keep[c[0]]), c[1], c[2]) for c in choice]

    def _squared_two_compiled(self, S: np.ndarray, ok: np.ndarray, err: float, ok_left: np.ndarray | None,
                              ok_right: np.ndarray | None) -> tuple[np.ndarray, list]:
        """``_paired_depth_two`` by the compiled kernel (``kernels_sq``): over every
        candidate from the pair sums left by the parent (``_psums``, by difference), else over
        the candidates that split ``S`` (with every candidate allowed everywhere; else all).
        The kernel reads ``Bq``, the columns true on more than half the rows complemented
        (the same partitions, fewer true pairs per row): a flipped root's sides swap back."""
        from . import kernels_sq

        st = self.class_matrix(S)
        c = np.ascontiguousarray
        lo, no = float(self.min_leaf), float(self.min_node)
        keep = None
        if ok_left is None or ok_right is None:
            P = self._pair_hint(S)
            if P is not None:
                E, F, BL, BR = kernels_sq.squared_tail(P, st.sum(axis=0), float(S.shape[0]), c(ok), _NO_MASK, _NO_MASK,
                                                       lo, no, float(err))
            else:
                BS = self.Bq[S]
                n1 = BS.sum(axis=0)
                keep = np.flatnonzero(ok & (n1 > 0) & (n1 < S.shape[0]))
                if not keep.size:
                    return np.full(4, err), [None] * 4
                E, F, BL, BR = kernels_sq.squared_two(c(BS[:, keep]), st, c(ok[keep]), _NO_MASK, _NO_MASK, lo, no,
                                                      float(err), self.unit_rows)
        else:
            flip = self.flip[:, None]
            E, F, BL, BR = kernels_sq.squared_two(self.Bq[S], st, c(ok), np.where(flip, ok_right, ok_left),
                                                  np.where(flip, ok_left, ok_right), lo, no, float(err), self.unit_rows)
        choice: list[Choice] = [None] * 4
        for i in range(4):
            if F[i] >= 0:
                f = int(F[i]) if keep is None else int(keep[F[i]])
                choice[i] = (f, int(BR[i]), int(BL[i])) if self.flip[f] else (f, int(BL[i]), int(BR[i]))
        return E, choice

    def set_sides(self, parent: np.ndarray | None, small: np.ndarray | None = None, large: np.ndarray | None = None) -> None:
        """The children of a depth-three node about to be solved (None: none): their pair
        sums are then the smaller side's and the parent's less those (MurTree Sec. 4.5)."""
        if parent is None or small is None or large is None:
            self._sides = None
            return
        if self._sides is None or self._sides[0] is not parent:
            self._sides = [parent, None, None, None, None]
        self._sides[2:] = [small.tobytes(), large.tobytes(), None]

    def _pair_hint(self, S: np.ndarray) -> np.ndarray | None:
        """The pair sums of rows ``S`` over every candidate when ``S`` is a side of the
        node of ``set_sides`` (exact with integral weights: counts and weights sum exactly)."""
        sides = self._sides
        if sides is None or not self.compiled:
            return None
        key = S.tobytes()
        if key != sides[2] and key != sides[3]:
            return None
        from . import kernels_sq

        m = self.B.shape[1]
        if self._buffers is None:  # the smaller and the larger side's pair sums, reused
            self._buffers = (np.zeros((m, m, 4)), np.zeros((m, m, 4)))
        if sides[4] is None:
            small = np.frombuffer(sides[2], dtype=S.dtype)
            sides[4] = kernels_sq.pair_sums_into(np.ascontiguousarray(self.Bq[small]),
                                                 self.class_matrix(small), self.unit_rows, self._buffers[0])
        if key == sides[2]:
            return sides[4]
        if sides[1] is None:
            parent = sides[0]
            sides[1] = kernels_sq.pair_sums(np.ascontiguousarray(self.Bq[parent]),
                                            self.class_matrix(parent), self.unit_rows)
        return kernels_sq.difference(sides[1], sides[4], self._buffers[1])

    def _rows_csr(self) -> tuple:
        """Each row's true candidates (CSR: indptr, indices), class (-1: weight zero) and weight."""
        if self._csr is None:
            N = self.B.shape[0]
            r, f = np.nonzero(self.B)
            self._csr = (np.searchsorted(r, np.arange(N + 1)).astype(np.int64), f.astype(np.int64),
                         np.where(self.w != 0, self.y, -1).astype(np.int64), self.w.copy())
        return self._csr

    def _slot_frequencies(self, S: np.ndarray) -> tuple:
        """The pair frequencies of rows ``S`` from the slot whose rows differ least (MurTree
        Sec. 4.5, two slots as STreeD's two terminal solvers), or from scratch when the
        difference is larger than ``S``."""
        k = _kernels()
        N, m = self.B.shape
        C = self.n_classes
        mask = np.zeros(N, dtype=bool)
        mask[S] = True
        best, add, rem = None, S, S[:0]
        for slot in self._slots:
            a = S[~slot[0][S]]
            r = np.flatnonzero(slot[0] & ~mask)
            if best is None or a.size + r.size < add.size + rem.size:
                best, add, rem = slot, a, r
        if best is None or add.size + rem.size >= S.size:
            if len(self._slots) < 2:
                best = [None, np.zeros((m, m)), np.zeros((C, m)), np.zeros((C, m, m))]
                self._slots.append(best)
            else:
                best = self._slots[0] if self._slots[0] is not self._last_slot else self._slots[1]
                for arr in best[1:]:
                    arr.fill(0.0)
            add, rem = S, S[:0]
        indptr, indices, label, weight = self._rows_csr()
        _, counts, C1, C2 = best
        if add.size:
            k.update_frequencies(indptr, indices, label, weight, add, 1.0, counts, C1, C2)
        if rem.size:
            k.update_frequencies(indptr, indices, label, weight, rem, -1.0, counts, C1, C2)
        best[0] = mask  # the lower triangles are stale: the depth-two kernel reads the upper ones
        self._last_slot = best
        return counts, C1, C2

    def _child_masks(self, S: np.ndarray, state: State, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Candidates g allowed below each root candidate f, on its left and right side:
        the branch state after f, less the splits separating a ``same_leaf`` pair there."""
        m = ok.shape[0]
        A = np.zeros((m, m), dtype=bool)
        for f in np.flatnonzero(ok):
            child = self.ingr.child(state, int(f))
            mask = self._allowed.get(child)
            if mask is None:
                mask = self._allowed[child] = self.ingr.allowed(child)
            A[f] = mask
        ok_left, ok_right = A, A
        if len(self.pairs):
            here = np.isin(self.pairs[:, 0], S)
            if here.any():
                side = self.B[self.pairs[here, 0]].astype(np.int64)  # (q, m): pair goes right under f
                sep = self.sep[here].astype(np.int64)  # (q, m): g separates the pair
                ok_right = A & ((side.T @ sep) == 0)
                ok_left = A & (((1 - side).T @ sep) == 0)
        return ok_left, ok_right

    def _frequencies_by_difference(self, S: np.ndarray, col: np.ndarray, child: State, parent):
        """MurTree's incremental frequency counting (Demirović et al., JMLR 2022, Sec. 4.5):
        the pair frequencies of the larger side of a split are those of ``S`` less those
        of the smaller side. Left for ``_depth_two`` in ``_freq`` when a child is not
        cached yet; returns the frequencies of ``S`` (computed on first use)."""
        sides = (S[~col], S[col])
        if all((side.tobytes(), 2, child) in self.cache for side in sides):
            return parent
        if parent is None:
            parent = _kernels().pair_frequencies(self.B[S], self.class_matrix(S))
        small, large = sorted(sides, key=len)
        q = _kernels().pair_frequencies(self.B[small], self.class_matrix(small))
        self._freq[small.tobytes()] = q
        self._freq[large.tobytes()] = tuple(a - b for a, b in zip(parent, q))
        return parent

    def _general(self, S: np.ndarray, d: int, k: int, state: State) -> Entry:
        err, _ = self.leaf(S)
        size = k + 1
        E = np.full(size, err)
        choice: list[Choice] = [None] * size
        if err == 0 or not self._splittable(S, d) or (self.counting and k == 0):
            return Entry(E, choice, k)
        BS = self.B[S]
        ok = self.allowed(S, state) & self.sizes_ok(BS.sum(axis=0), S.shape[0])
        seen: set[bytes] = set()
        dedupe = self.ingr.trivial
        cand = np.flatnonzero(ok)
        parent = None  # pair frequencies of S, for the depth-two children (d == 3)
        if cand.size > 1:  # good splits first, so the bounds below prune more (MurTree Sec. 4.6)
            cand = cand[np.argsort(self.split_costs(S, cand), kind="stable")]
        for f in cand:
            col = BS[:, f]
            if dedupe:  # the same partition by another candidate: the same subproblems
                key = np.packbits(col).tobytes() if col[0] else np.packbits(~col).tobytes()
                if key in seen:
                    continue
                seen.add(key)
            child = self.ingr.child(state, int(f))
            if d == 3 and self.compiled_task and self.compiled and not self.unit:
                self._freq.clear()  # hints live for this candidate's two children only
                parent = self._frequencies_by_difference(S, col, child, parent)
            L = self.solve(S[~col], d - 1, k - 1, child)
            if not self.counting:
                if L.E[0] >= E[0]:
                    continue
                R = self.solve(S[col], d - 1, 0, child)
                v = L.E[0] + R.E[0]
                if v < E[0]:
                    E[0] = v
                    choice[0] = (int(f), 0, 0)
                    if v == 0:
                        break
                continue
            # bound: with any right subtree (error >= 0) the split costs at least L.E[i - 1]
            # at budget i; when that is no better than the best so far at every budget, skip
            left_at = L.E[np.minimum(np.arange(size - 1), L.budget)]
            if np.all(left_at >= E[1:]):
                continue
            R = self.solve(S[col], d - 1, k - 1, child)
            for i in range(1, size):
                s = i - 1
                best, arg = INF, -1
                for il in range(max(0, s - R.budget), min(s, L.budget) + 1):
                    v = L.E[il] + R.E[s - il]
                    if v < best:
                        best, arg = v, il
                if best < E[i]:
                    E[i] = best
                    choice[i] = (int(f), arg, s - arg)
        self._freq.clear()
        if self.counting:
            for i in range(1, size):
                if E[i - 1] <= E[i]:
                    E[i] = E[i - 1]
                    choice[i] = choice[i - 1]
        return Entry(E, choice, k)

    # ------------------------------------------------------------------ decoding
    def decode(self, S: np.ndarray, d: int, k: int, state: State, i: int):
        """The tree of rows ``S`` chosen for budget ``i`` (after ``solve``), as nested
        tuples: ``("leaf", label)`` or ``("split", candidate, left, right)``."""
        entry = self.solve(S, d, k, state)
        ch = entry.choice[min(i, entry.budget)]
        if ch is None:
            return ("leaf", self.leaf(S)[1])
        f, il, ir = ch
        col = self.B[S, f]
        child = self.ingr.child(state, f)
        sub = k - 1 if self.counting else 0
        return ("split", f, self.decode(S[~col], d - 1, sub, child, il), self.decode(S[col], d - 1, sub, child, ir))


def _class_weights(y: np.ndarray, w: np.ndarray, K: int) -> np.ndarray | None:
    """Each class's one weight when every row of the class has it and it is integral
    (rows of weight one: ones), else None."""
    cw = np.ones(K)
    if w.size and w.min() == w.max():  # one weight for every row (the common case): no pass per class
        return cw * w[0] if w[0] == round(w[0]) and w[0] > 0 and float(w[0]) * w.size < 2.0**50 else None
    cw[y] = w  # some row's weight for each class present (ones for the others), then every row against it
    if not bool((cw[y] == w).all()) or not bool((cw == np.round(cw)).all() and (cw > 0).all()):
        return None
    return cw if float(w.sum()) < 2.0**50 else None
