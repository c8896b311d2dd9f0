"""Nodes with three levels left, compiled (``kernels_root.d3_search``): Alg. 1 of Brita et
al. (AAAI 2025) over every feature of the node in one numba call per work budget, each
evaluated split's two depth-two children solved inside it by ``kernels.d2_quick``.

Input: a node of a plain program (no minimum leaf size, no gap, the kernels compiled, few
classes) small enough that no depth-two search below it can outgrow the compiled call's
budget (:meth:`DepthThree.d3_fits`); or, with a minimum leaf size, the root under the same
conditions (``kernels_root_ml.d3_search_ml``: the rules of :mod:`.minleaf`, the two-phase
children, the weightless relaxation). Output: the node's ``_Res`` as ``_Solver._solve``
gives it (same optimum; the children's ``_LazyD2`` subtrees), the root's anytime state
(``report_root``, ``root_lower_bound`` through ``root_kstate``). A mixin of
:class:`search._Solver`, whose state it reads.

It removes the Python around each evaluated split at ``d == 3`` (the interval loop, the
children's ``_Node`` objects, the ``solve`` / ``_solve`` / ``solve_d2_quick`` calls and
the dispatch of two kernels per child): on iris depth 3 that was half of the fit, and
with a minimum leaf size on haberman depth 3 (5 and 20) ~11.5 -> ~7.3 ms.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from .bounds import _Incumbent, _Res
from .loader import _load_root_kernels, _load_root_ml_kernels
from .node import _Node
from .tree import DPLeaf, DPNode, DPSplit, _LazyD2

#: a depth-two search below a node must fit in this many row-feature steps (each runs to its end in
#: one compiled call: about 0.3 s at worst, far less with the pruning of Alg. 1)
D3_WORK = 1 << 28


class DepthThree:
    """Compiled depth-three nodes of :class:`search._Solver`."""

    if TYPE_CHECKING:  # the state and methods of search._Solver that these methods use
        p: int
        K: int
        y: np.ndarray
        w: np.ndarray
        wd: np.ndarray
        sgn: Optional[np.ndarray]
        tol: float
        d_strict: float
        d_tie: float
        integral: bool
        canonical_ties: bool
        kern: Any
        kern_root: Any
        rules_arr: np.ndarray
        scratch_pos: np.ndarray
        scratch_mask: np.ndarray
        stats: dict
        root_feature: int
        root_kstate: Optional[tuple]
        d2_budget: int
        quick_d2: bool
        monotone: bool
        wide: bool
        bfs: bool
        larger_first: bool
        eta_add: bool
        second_after_fail: bool
        gini_order: bool
        d3_compiled: bool
        free: Any
        free_mode: str
        min_leaf: int
        relaxed_sp: bool
        d2_sequential: bool

        @staticmethod
        def threshold(node: _Node, f: int, z: int) -> float: ...
        def check_time(self) -> None: ...
        def lb_after_fail(self, bound: float) -> float: ...
        def report_root(self, inc: _Incumbent) -> None: ...

    def init_d3(self) -> None:
        """Depth-three nodes of the plain program (compiled, no gap, no minimum leaf size, a
        few classes) run :meth:`solve_d3` when their depth-two searches fit one compiled call."""
        self.d3_compiled = self.quick_d2 and self.monotone and not self.wide and self.K < 8
        self.kern_root = _load_root_kernels() if self.d3_compiled else None
        self.root_kstate = None  # the compiled root's search state (root_lower_bound)

    def takes_d3(self, node: _Node) -> bool:
        """:meth:`solve_d3` applies at ``node`` (three levels left): compiled, and ConTree's
        default order of Alg. 1 (the kernel's), and small enough (:meth:`d3_fits`)."""
        return self.d3_compiled and self.bfs and self.larger_first and self.eta_add and self.second_after_fail \
            and not self.gini_order and self.d3_fits(node)

    def takes_d3_ml(self, node: _Node, level: int) -> bool:
        """:meth:`solve_d3_min_leaf` applies at ``node``: the root, a minimum leaf size with
        its rules on (``free``), the two-phase depth-two kernel, ConTree's order of Alg. 1,
        no gap, a few classes, and small enough (:meth:`d3_fits`, the children's searches
        counted twice: each runs its two phases in one compiled call)."""
        return level == 0 and self.free is not None and self.free_mode == "kernel" and self.quick_d2 \
            and self.d2_sequential and not self.wide and self.K < 8 and self.bfs and self.larger_first \
            and self.eta_add and self.second_after_fail and not self.gini_order and self.d3_fits(node, 2)

    def d3_fits(self, node: _Node, phases: int = 1) -> bool:
        """Every depth-two search below ``node`` ends within :data:`D3_WORK` steps: at most
        one evaluation per candidate of the node, each of ``2 p m + candidates K`` steps
        (``kernels.d2_run``'s count), ``phases`` times. The candidates are the node's
        distinct-value boundaries (a subset of its rows has no more), counted when their
        bound ``p (m - 1)`` does not fit."""
        m = node.m

        def fits(nc: int) -> bool:
            return phases * nc * (2 * self.p * m + nc * max(self.K, 2)) <= D3_WORK

        if fits(self.p * max(m - 1, 0)):
            return True
        return fits(int(np.count_nonzero(node.vals[:, 1:] > node.vals[:, :-1])))

    def solve_d3(self, node: _Node, bound: float, cost_leaf: float, label: int, level: int) -> _Res:
        """``_Solver._solve(node, 3, bound, level)`` on the compiled search (see the module)."""
        if not self.monotone:
            return self.solve_d3_min_leaf(node, bound, cost_leaf, label)
        if cost_leaf <= 0.0 or node.m < 2:
            return _Res(cost_leaf, DPLeaf(label), cost_leaf)
        inc, inc_arr, st, queue, cuts, (wc, tcL, tcR, thL, thR) = self._d3_start(node, bound, cost_leaf, label)
        best = np.zeros(11, dtype=np.int64)
        counts = np.zeros(6, dtype=np.int64)
        sgn = self.sgn if self.sgn is not None else self.wd
        kern = self.kern_root

        def step() -> bool:
            return kern.d3_search(node.rows, node.order, node.vals, self.y, self.w, self.wd, sgn, self.K,
                                  self.scratch_pos, self.scratch_mask, inc_arr, self.integral, self.canonical_ties,
                                  self.tol, self.rules_arr, st, queue, cuts, wc, tcL, tcR, thL, thR, best, counts,
                                  self.d2_budget)

        if level == 0:
            self.root_kstate = (st, queue, thL, thR)
        try:
            self._d3_loop(node, inc, inc_arr, st, best, step, lambda: int(counts[5]), level)
        finally:
            stats = self.stats
            stats["splits_evaluated"] += int(counts[0] + counts[3])
            stats["intervals_pruned_sp"] += int(counts[1] + counts[4])
            stats["ct_calls"] += int(counts[2])
            stats["d2_calls"] += int(counts[3])
        return self._d3_result(inc, bound, level)

    def solve_d3_min_leaf(self, node: _Node, bound: float, cost_leaf: float, label: int) -> _Res:
        """``_Solver._solve(root, 3, bound, 0)`` with a minimum leaf size on the compiled
        search (:mod:`.kernels_root_ml`): :meth:`_Solver.branch` over every feature, with
        the children solved as :meth:`MinLeaf.solve_min_leaf` solves them."""
        if cost_leaf <= 0.0 or node.m < 2 * self.min_leaf:
            return _Res(cost_leaf, DPLeaf(label), cost_leaf)
        inc, inc_arr, st, queue, cuts, (wc, tcL, tcR, thL, thR) = self._d3_start(node, bound, cost_leaf, label)
        m = node.m
        rel = np.zeros((m + 1, 2))  # the queued intervals' relaxed bounds
        seeds = np.full((m, 2), -1, dtype=np.int64)  # the relaxed searches' seeds: features
        seedv = np.zeros((m, 2))  # and values
        best = np.zeros(11, dtype=np.int64)
        counts = np.zeros(9, dtype=np.int64)
        sgn = self.sgn if self.sgn is not None else self.wd
        w2, wd2, sgn2 = self.w.copy(), self.wd.copy(), sgn.copy()  # the relaxation's weights
        kern = _load_root_ml_kernels()

        def step() -> bool:
            return kern.d3_search_ml(node.rows, node.order, node.vals, self.y, self.w, self.wd, sgn, self.K,
                                     self.scratch_pos, self.scratch_mask, inc_arr, self.integral, self.canonical_ties,
                                     self.tol, self.rules_arr, self.relaxed_sp, self.min_leaf, st, queue, rel, cuts,
                                     wc, tcL, tcR, thL, thR, seeds, seedv, best, counts, w2, wd2, sgn2,
                                     self.d2_budget)

        self.root_kstate = (st, queue, thL, thR)
        try:
            self._d3_loop(node, inc, inc_arr, st, best, step, lambda: int(counts[4]), 0)
        finally:
            stats = self.stats
            stats["splits_evaluated"] += int(counts[0] + counts[3])
            stats["intervals_pruned_sp"] += int(counts[1])
            stats["ct_calls"] += int(counts[2])
            stats["d2_calls"] += int(counts[3])
            stats["intervals_pruned_relaxed"] += int(counts[5])
            stats["relaxed_attempts"] += int(counts[6])
            stats["relaxed_evals"] += int(counts[7])
            stats["phase1_splits_evaluated"] = stats.get("phase1_splits_evaluated", 0) + int(counts[8])
        return self._d3_result(inc, bound, 0)

    def _d3_start(self, node: _Node, bound: float, cost_leaf: float, label: int) -> tuple:
        """The incumbent (the leaf when within ``bound``), its array form and the search
        state of the compiled depth-three searches: ``st``, the interval ring, the
        feature's candidates and per candidate ``wc``, ``tcL``, ``tcR``, ``thL``, ``thR``."""
        inc = _Incumbent(bound, self.d_strict, self.d_tie)
        if cost_leaf <= bound:
            inc.set(cost_leaf, DPLeaf(label), -1, -1)
        inc_arr = np.array([inc.cost, -1.0, -1.0, 1.0 if inc.active else 0.0, bound, self.d_strict, self.d_tie])
        m = node.m
        st = np.array([0, 0, 0, 0, 0, -1], dtype=np.int64)
        queue = np.empty((m + 1, 4), dtype=np.int64)
        cuts = np.empty(m, dtype=np.int64)
        return inc, inc_arr, st, queue, cuts, tuple(np.empty(m) for _ in range(5))

    def _d3_loop(self, node: _Node, inc: _Incumbent, inc_arr: np.ndarray, st: np.ndarray, best: np.ndarray,
                 step: Callable[[], bool], improvements: Callable[[], int], level: int) -> None:
        """Run a compiled depth-three search to its end in work budgets, with a time check
        before each; each better split becomes the incumbent's tree (the root's anytime
        answer)."""
        seen = 0
        while True:
            self.check_time()
            done = step()
            if level == 0:
                self.root_feature = int(min(st[0], self.p - 1))
            if (found := improvements()) != seen:
                seen = found
                inc.set(float(inc_arr[0]), self.d3_tree(node, best), int(best[0]), int(best[2]))
                if level == 0:
                    self.report_root(inc)
            if done:
                break

    def _d3_result(self, inc: _Incumbent, bound: float, level: int) -> _Res:
        if level == 0:
            self.root_kstate = None  # searched to the end: nothing left for root_lower_bound
        if inc.tree is not None:
            return _Res(inc.cost, inc.tree, max(0.0, inc.cost))
        return _Res(math.inf, None, self.lb_after_fail(bound))

    def d3_tree(self, node: _Node, best: np.ndarray) -> DPNode:
        """The incumbent split of ``d3_search`` with its children's subtrees (leaves or lazy
        depth-two trees, as ``solve_d2_quick`` leaves them)."""
        f, z = int(best[0]), int(best[1])
        rl, ol, vl, rr, orr, vr = self.kern.split_node(node.rows, node.order, node.vals, self.scratch_mask, f, z)
        sides: list[DPNode] = []
        for o, child in ((3, _Node(rl, ol, vl)), (7, _Node(rr, orr, vr))):
            if best[o] == 0:
                sides.append(DPLeaf(int(best[o + 1])))
            else:
                f2, z2 = int(best[o + 2]), int(best[o + 3])
                sides.append(_LazyD2(-1, child.rows, f2, z2, self.threshold(child, f2, z2)))
        return DPSplit(f, self.threshold(node, f, z), sides[0], sides[1])

    def d3_lower_bound(self, cost: float) -> float:
        """``root_lower_bound`` of an interrupted compiled root: the smallest Eq. (12) bound
        of the intervals of the last feature still queued (earlier features are done)."""
        assert self.root_kstate is not None
        st, queue, thL, thR = self.root_kstate
        if st[0] < self.p - 1 or st[5] < 0:
            return 0.0  # a feature not searched yet (trivial bound)
        lb = cost
        if st[0] == self.p - 1:
            cap = queue.shape[0]
            for k in range(int(st[2])):
                i, j, u, v = queue[(int(st[1]) + k) % cap]
                lb = min(lb, (thL[u] if u >= 0 else 0.0) + (thR[v] if v >= 0 else 0.0))
        return max(0.0, lb)

