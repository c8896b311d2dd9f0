"""ConTree: optimal depth-limited classification trees on continuous features.

Numpy implementation (with optional numba-compiled kernels) of the dynamic-programming /
branch-and-bound algorithm of
Brita, van der Linden and Demirović, *Optimal Classification Trees for Continuous Feature
Data Using Dynamic Programming with Branch-and-Bound* (AAAI 2025, "ConTree").

The recursion is the paper's Eqs. (4)-(6)::

    CT(D, 0)    = min_y  sum_{(x, y') in D} w * [y != y']                 (leaf)
    CT(D, d)    = min_f  Branch(D, d, f)                                  (Eq. 4)
    Branch      = min_{tau in S^f} Split(D, d, f, tau)                    (Eq. 5)
    Split       = CT(D(f <= tau), d - 1) + CT(D(f > tau), d - 1)          (Eq. 6)

where ``S^f`` are the midpoints between consecutive distinct values of ``f`` (Eq. 1).
``Branch`` is evaluated with Alg. 1: the candidate thresholds of one feature form an
interval set ``Q`` that is shrunk with the three lower-bounding rules derived from the
similarity lower bound (Eq. 3, Theorem 1):

* neighbourhood pruning (NB, Corollary 1, Eqs. 7-9),
* interval shrinking (IS, Eqs. 10-11 and Theorem 2),
* sub-interval pruning (SP, Theorem 3, Eq. 12).

Sub-problems with two levels left are solved by the depth-two subroutine (Alg. 2 /
Eq. 13), vectorised here over every second-level feature and threshold at once with
cumulative class-weight sums over the pre-sorted data.  Sub-problems are cached on
(set of rows, remaining depth), like the paper (and MurTree) do.

With numba (``kernels.py``, ``kernels.ACTIVE``) the depth-two searches (Alg. 1 with the Alg. 2
evaluations, in chunks with time checks between), the plain program's depth-three nodes
and the depth-two trees run compiled, else the numpy code below: the same optimum and, for
integral weights, the same tie-broken tree (fractional weights: up to the tolerance).

Modules: ``tree`` (results, evaluation, threshold refinement), ``node`` (a row subset with
every feature's order), ``bounds`` (incumbent, tie-aware bounds), ``depth_two`` / ``depth_three``
(sub-problems with two / three levels left), ``kernels*`` (numba), ``loader``, ``minleaf``
(a minimum leaf size's bounds), and this one: the recursion with its cache (Eq. 4), Alg. 1
at nodes with three or more levels left, the greedy bound, the anytime root bound and
:func:`optimal_tree`.

Beyond the paper: row weights (the similarity bound counts the weight of moved rows), a
minimum number of rows per leaf, a greedy initial bound, a time limit with an anytime
result, and a canonical tie rule (``canonical_ties``: a leaf, then the lowest feature, then
the lowest threshold wins a tie at every node); by default a leaf beats a split of equal
cost and otherwise the first optimum proven is kept. Leaf labels: the lowest class on ties.
"""

from __future__ import annotations

import bisect
import math
import time
from collections import deque
from typing import Any, Callable, Optional

import numpy as np

from odt.compiler import limits

from .. import jit
from .bounds import _Incumbent, _Res, _Timeout
from .depth_three import DepthThree
from .depth_two import DepthTwo
from .loader import _load_answer_kernels, _load_kernels, _load_wide_kernels
from .minleaf import MinLeaf, seed_of
from .node import _Node
from .tree import DPLeaf, DPNode, DPResult, DPSplit, PruningRules, _refine, errors, predict, tree_depth


def __getattr__(name: str) -> Any:  # ``search._kernels`` from outside loads them
    if name == "_kernels":
        return _load_kernels()
    raise AttributeError(name)


__all__ = ["DPLeaf", "DPSplit", "DPNode", "PruningRules", "DPResult", "optimal_tree", "predict", "errors",
           "tree_depth"]


class _Solver(DepthThree, DepthTwo, MinLeaf):
    """State of one :func:`optimal_tree` call (data, cache, bounds, statistics)."""

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        w: np.ndarray,
        n_classes: int,
        depth: int,
        min_leaf: int,
        max_gap: float,
        deadline: float,
        pruning: PruningRules,
        on_progress: Optional[Callable[[float, float, float], None]],
        start: float,
        canonical_ties: bool = False,
    ) -> None:
        self.X = X
        self.y = y
        self.w = w
        self.n, self.p = X.shape
        self.K = n_classes
        self.depth = depth
        self.min_leaf = min_leaf
        self.max_gap = max_gap
        self.deadline = deadline
        # ConTree's rules read the similarity bound (Eq. 3) on both sides of a split, which
        # needs theta(D) monotone in D; a minimum leaf size breaks that for the side that
        # grows. ``monotone`` False: the rules bound the growing side by its optimum without
        # the constraint instead (see ``branch``), which ``free`` -- the same search with
        # min_leaf 1, its own cache -- gives for sub-problems of depth two or more.
        self.monotone = min_leaf == 1
        self.pruning = pruning
        self.free: Optional[_Solver] = None
        self.free_mode = "kernel"  # see solve_min_leaf
        self.relaxed_sp = True
        self.free_cache: dict[tuple[int, bytes], float] = {}
        if not self.monotone and (pruning.neighbourhood or pruning.interval_shrinking or pruning.sub_interval):
            self.free = _Solver(X, y, w, n_classes, depth, 1, max_gap, deadline, pruning, None, start, canonical_ties)
        # The cross rule (``branch``): part of IS with a minimum leaf size; optional (off,
        # ConTree's rules as published) without one.
        self.cross = not self.monotone
        self.rules_arr = np.array([self.pruning.neighbourhood, self.pruning.interval_shrinking,
                                   self.pruning.sub_interval, self.cross, self.cross], dtype=np.bool_)
        self.on_progress = on_progress
        self.start = start
        total = float(w.sum())
        self.unit = bool((w == 1.0).all())
        self.integral = (self.unit or bool((w == np.round(w)).all())) and total < 2**29
        self.dtype = np.int32 if self.integral else np.float64
        # Tolerances turning "strictly better" / "at least as good" into inclusive bounds.
        self.tol = 1e-9 * max(total, 1.0)
        self.d_strict = 1.0 if self.integral else self.tol
        self.d_tie = 0.5 if self.integral else self.tol
        self.canonical_ties = canonical_ties
        if not canonical_ties:  # an equally good split never replaces the incumbent
            self.d_tie = -self.d_strict
        self._onehot: Optional[np.ndarray] = None  # (K, n), made on first use (``ys``)
        self.big = 2**30 if self.integral else np.inf
        self.batch_elems = 1 << 21  # elements per batched depth-two chunk
        # row-feature steps of a compiled depth-two search between two time checks (tens of
        # milliseconds); a sub-problem over it restarts on the resumable calls, so this is
        # large enough for most (room depth 3: 2 * batch_elems restarted 81 of 132)
        self.d2_budget = 1 << 25
        # Minimum work per depth-two round (see solve_d2); 0 = midpoints only (Alg. 1).
        # Larger values trade extra evaluations for fewer rounds; measured slower.
        self.round_elems = 0
        # Order features by Gini at d >= 3 nodes (pycontree's default); measured mixed.
        self.gini_order = False
        self.pall_elems = 1 << 22  # cache the (p, p, m) position table below this size
        # numba kernels of backends/dp/contree/kernels.py when compiled (``jit.ready``); while
        # their warm-up runs, numpy, and the search stops when they are ready (``jit.due``)
        group = "contree" if self.integral else "contree-float"
        self.compiled = jit.ready(group, self.n * self.p) and bool(_load_kernels().ACTIVE)
        self.kern = _load_kernels() if self.compiled else None  # looked up once, not per call
        self.switch_group = group if not self.compiled and jit.waiting(group) else None
        # Many classes (a target with a class per row, issue 24): the compiled kernels of
        # ``kernels_wide``, whose time and memory do not grow with K, replace the per-class
        # scans and the (K, p, m) class-weight tensors of depth one, the greedy bound and
        # the depth-two search (the numpy path, without numba, keeps its tensors).
        self.wide = self.compiled and self.K > _load_wide_kernels().WIDE_CLASSES
        # With the kernels: depth-two sub-problems run Alg. 1 compiled (``d2_search``)
        # instead of the batched rounds of :meth:`solve_d2` (which then use compiled Alg. 2).
        self.d2_sequential = True
        self.quick_d2 = self.compiled and max_gap == 0  # depth two below the root: DepthTwo.solve_d2_quick
        self.init_d3()  # depth-three nodes compiled (DepthThree.solve_d3)
        # Lazy depth-two subtrees of the answer built by the numpy-side node code
        # (``d2_prepare`` + ``d2_errors``) instead of the one-pass ``kernels.d2_subtree``;
        # the same trees, kept for cross-checks.
        self.materialise_numpy = False
        # Alg. 1 at d >= 3 nodes as ConTree's code runs it: the interval queue first in,
        # first out (midpoints of the whole range first), the larger child solved first,
        # the second child's bound raised by the distance to the interval's nearer end
        # (``UB - LB(first) + eta``, the paper's "Upper bounds" paragraph) and solved even
        # when the first child failed, so that its lower bound widens the NB radius.
        # Measured on pima depth 3: 1138 -> 503 sub-problems, 4.5 s -> 2.1 s.
        self.bfs = True
        self.larger_first = True
        self.eta_add = True
        self.second_after_fail = True
        # The greedy initial tree changed no sub-problem count measured (haberman d4, bank d4,
        # pima d3, banknote d3) and costs milliseconds, which is the whole fit on small data;
        # it is kept where it is cheap next to the search and gives a first anytime tree.
        self.use_greedy = self.n * self.p >= 50_000
        self.wd = w.astype(self.dtype)
        self.sgn = np.where(y == 1, w, -w).astype(self.dtype) if n_classes == 2 else None
        self.cache: dict[tuple[int, bytes], _Res | float] = {}
        self.scratch_mask = np.zeros(self.n, dtype=bool)
        self.scratch_pos = np.zeros(self.n, dtype=np.int32)
        self.stats = {
            "ct_calls": 0,
            "cache_hits": 0,
            "d2_calls": 0,
            "d1_calls": 0,
            "splits_evaluated": 0,
            "intervals_pruned_sp": 0,
            "intervals_pruned_relaxed": 0,
            "relaxed_attempts": 0,
            "relaxed_evals": 0,
        }
        # root anytime state
        self.root_cost = math.inf
        self.root_tree: Optional[DPNode] = None
        self.root_lb = 0.0
        self.root_feature = -1
        self.root_branch: Optional[tuple] = None  # (Q, thL, thR, V) of the root feature
        self.root_current: Optional[tuple[int, int, float, float]] = None
        self.root: Optional[_Node] = None
        #: called with (cost, tree) on each better tree of the root's Alg. 1 (``report_root``): the
        #: deep search's complete phase hands its incumbent on as found, so a stop keeps it
        self.root_found: Optional[Callable[[tuple[float, DPNode]], None]] = None

    # ---------------------------------------------------------------- bookkeeping

    def check_time(self) -> None:
        if time.perf_counter() > self.deadline or limits.halted() or \
                (self.switch_group is not None and jit.due(self.switch_group)):
            raise _Timeout

    def gap_split(self, level: int) -> tuple[float, float]:
        """``(total, local)`` gap budget of a node at ``level`` ("Optimality Gap"): about half
        is spent on pruning at the node, the rest is split evenly between its children.
        With integral costs the local share is rounded down, since ``LB > UB - gap`` would
        otherwise prune a whole unit for any fractional gap."""
        total, local = self.max_gap, 0.0
        for lev in range(level + 1):
            local = math.floor(total / 2.0 + 1e-9) if self.integral else total / 2.0
            if lev < level:
                total = (total - local) / 2.0
        return total, local

    def lb_after_fail(self, bound: float) -> float:
        """Lower bound on an optimum proven to exceed the inclusive bound ``bound``."""
        if self.integral:
            return float(math.floor(bound + 1e-9) + 1)
        return bound + self.tol

    # ---------------------------------------------------------------- datasets

    def root_node(self) -> _Node:
        order = np.argsort(self.X, axis=0, kind="stable").T.astype(np.int32, copy=False)
        order = np.ascontiguousarray(order)
        vals = np.take_along_axis(self.X.T, order, axis=1)
        return _Node(np.arange(self.n, dtype=np.int32), order, vals)

    def children(self, node: _Node, f: int, z: int) -> tuple[_Node, _Node]:
        """Split ``node`` after sorted position ``z`` of feature ``f`` (Eq. 6)."""
        if self.compiled:
            rl, ol, vl, rr, orr, vr = self.kern.split_node(node.rows, node.order, node.vals, self.scratch_mask, f, z)
            return _Node(rl, ol, vl), _Node(rr, orr, vr)
        mask = self.scratch_mask
        left_rows_unsorted = node.order[f, : z + 1]
        mask[left_rows_unsorted] = True
        in_left = mask[node.rows]
        rows_l = node.rows[in_left]
        rows_r = node.rows[~in_left]
        sel = mask[node.order]
        mask[left_rows_unsorted] = False
        p = self.p
        ml = rows_l.shape[0]
        left = _Node(rows_l, node.order[sel].reshape(p, ml), node.vals[sel].reshape(p, ml))
        nsel = ~sel
        right = _Node(rows_r, node.order[nsel].reshape(p, -1), node.vals[nsel].reshape(p, -1))
        return left, right

    def ys(self, node: _Node) -> np.ndarray:
        """Class weights in every feature's sorted order, shape (K, p, m)."""
        if node._ys is None:
            if self._onehot is None:
                self._onehot = np.zeros((self.K, self.n), dtype=self.dtype)
                self._onehot[self.y, np.arange(self.n)] = self.w.astype(self.dtype)
            node._ys = self._onehot[:, node.order]
        return node._ys

    def call(self, node: _Node) -> np.ndarray:
        """Cumulative class weights along every feature's sorted order, shape (K, p, m)."""
        if node._call is None:
            node._call = np.cumsum(self.ys(node), axis=2, dtype=self.dtype)
        return node._call

    def wcum(self, node: _Node) -> np.ndarray:
        """Cumulative row weight along every feature's sorted order, shape (p, m)."""
        if node._wcum is None:
            node._wcum = np.cumsum(self.w[node.order], axis=1)
        return node._wcum

    def key(self, node: _Node, d: int) -> tuple[int, bytes]:
        if node._key is None:
            node._key = node.rows.tobytes()
        return (d, node._key)

    def leaf(self, node: _Node) -> tuple[float, int]:
        """Eq. (4), d = 0: cost and label of the best leaf (lowest class on ties)."""
        if self.compiled and self.K < 8:
            c, lab = self.kern.leaf_cost(node.rows, self.y, self.w, self.K)
            return float(c), int(lab)
        cw = np.bincount(self.y[node.rows], weights=self.w[node.rows], minlength=self.K)
        label = int(np.argmax(cw))
        return float(cw.sum() - cw[label]), label

    def cuts(self, node: _Node, f: int) -> np.ndarray:
        """Candidate split positions ``z`` (last row going left) of feature ``f`` (Eq. 1)."""
        v = node.vals[f]
        z = np.flatnonzero(v[1:] > v[:-1])
        ml = self.min_leaf
        if ml > 1:
            z = z[(z + 1 >= ml) & (node.m - z - 1 >= ml)]
        return z

    def gini_scores(self, node) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per feature and split position: the sum over both sides of (class weight)^2 /
        side weight (higher = purer), and the two sides' weights."""
        if self.wide:
            cls, wts = self.class_weights(node)
            totals = np.bincount(self.y[node.rows], weights=self.w[node.rows], minlength=self.K)
            return _load_wide_kernels().gini_wide(cls, wts, totals)
        C = self.call(node).astype(np.float64)
        tot = C[:, 0, -1]
        nL = C.sum(axis=0)
        nR = tot.sum() - nL
        R = tot[:, None, None] - C
        with np.errstate(divide="ignore", invalid="ignore"):
            score = (C * C).sum(axis=0) / nL + (R * R).sum(axis=0) / nR
        return score, nL, nR

    def valid_positions(self, node: _Node) -> np.ndarray:
        """Boolean (p, m): a split after sorted position i is a distinct-value boundary."""
        v = node.vals
        valid = np.zeros(v.shape, dtype=bool)
        valid[:, :-1] = v[:, 1:] > v[:, :-1]
        return valid

    @staticmethod
    def threshold(node: _Node, f: int, z: int) -> float:
        a = float(node.vals[f, z])
        b = float(node.vals[f, z + 1])
        t = (a + b) / 2.0
        return t if a <= t < b else a

    # ---------------------------------------------------------------- feature order

    def feature_order(self, node: _Node) -> list[int]:
        """Features by increasing best Gini impurity of a single split, as pycontree does,
        so that good incumbents are found early (the result does not depend on it)."""
        if not self.gini_order:
            return list(range(self.p))
        score, nL, nR = self.gini_scores(node)
        score = np.where(self.valid_positions(node) & (nL > 0) & (nR > 0), score, -np.inf)
        best = score.max(axis=1)
        return np.argsort(-best, kind="stable").tolist()

    # ---------------------------------------------------------------- CT (Eq. 4)

    def solve(self, node: _Node, d: int, bound: float, level: int) -> _Res:
        """``CT(D, d, B)``: an optimal tree if one with cost <= ``bound`` exists (Eq. 4)."""
        if self.free is not None and level > 0 and d >= 2:
            return self.solve_min_leaf(node, d, bound, level)
        self.stats["ct_calls"] += 1
        key = self.key(node, d)
        entry = self.cache.get(key)
        if entry is not None:
            self.stats["cache_hits"] += 1
            if isinstance(entry, _Res):  # solved sub-problem
                return entry
            if entry > bound:  # proven lower bound exceeds what the caller needs
                return _Res(math.inf, None, entry)
        res = self._solve(node, d, bound, level)
        if res.tree is not None:
            self.cache[key] = res
        else:  # only a lower bound: keep the best one (entry is a float or absent here)
            self.cache[key] = res.lb if not isinstance(entry, float) else max(entry, res.lb)
        return res

    def _solve(self, node: _Node, d: int, bound: float, level: int, lb1: float = 0.0,
               seed: tuple[int, int] = (-1, -1), two_phase: bool = False) -> _Res:
        """:meth:`solve` without the cache. ``lb1`` (a lower bound on every split),
        ``seed`` and ``two_phase`` (the result's ``free`` from the same compiled search)
        come from :meth:`solve_min_leaf`."""
        cost_leaf, label = self.leaf(node)
        if d == 2 and self.quick_d2 and level > 0 and not two_phase and lb1 == 0.0 and seed[0] < 0:
            res = self.solve_d2_quick(node, bound, cost_leaf, label)
            if res is not None:
                return res
        gap_node, gap_local = self.gap_split(level) if self.max_gap > 0 else (0.0, 0.0)
        if d == 0 or cost_leaf <= 0.0 or node.m < 2 * self.min_leaf:
            return _Res(cost_leaf, DPLeaf(label), cost_leaf)
        if d == 1:
            c, t = self.depth_one(node)
            return _Res(c, t, c)
        if d == 3 and lb1 == 0.0 and (self.takes_d3(node) or self.takes_d3_ml(node, level)):
            return self.solve_d3(node, bound, cost_leaf, label, level)
        inc = _Incumbent(bound, self.d_strict, self.d_tie)
        if cost_leaf <= bound:
            inc.set(cost_leaf, DPLeaf(label), -1, -1)
        if d == 2:
            free = self.solve_d2(node, inc, gap_local, level == 0, lb1, seed, two_phase)
            if two_phase:  # the optimum without the minimum leaf size, as a proven lower bound
                free = self.lb_after_fail(bound - gap_node) if free == math.inf else max(0.0, free - gap_node)
            if inc.tree is not None:
                return _Res(inc.cost, inc.tree, max(0.0, inc.cost - gap_node), free)
            return _Res(math.inf, None, self.lb_after_fail(bound - gap_node), free)
        for rank, f in enumerate(self.feature_order(node)):
            if inc.tree is not None and inc.cost <= lb1 and (f > inc.f or not self.canonical_ties):
                continue  # "if theta_opt = 0 then break" (Alg. 1; lb1 >= 0 a lower bound); lower features may tie
            self.check_time()
            if level == 0:
                self.root_feature = rank
            self.branch(node, d, f, inc, level, gap_local, lb1)
        if inc.tree is not None:
            return _Res(inc.cost, inc.tree, max(0.0, inc.cost - gap_node))
        return _Res(math.inf, None, self.lb_after_fail(bound - gap_node))

    # ---------------------------------------------------------------- Branch (Alg. 1)

    def branch(self, node: _Node, d: int, f: int, inc: "_Incumbent", level: int, gap: float,
               lb1: float = 0.0) -> None:
        """Alg. 1 ``Branch(D, d, f, UB)``: search the thresholds of feature ``f``.

        Updates ``inc`` in place.  ``gap`` is this node's share of ``max_gap`` ("Optimality
        Gap" paragraph): candidates that cannot improve by more than it are pruned.

        With a minimum leaf size (``self.monotone`` False) the rules bound the side that
        grows by its optimum without the constraint: see :mod:`.minleaf`.
        """
        cuts = self.cuts(node, f)
        mf = cuts.shape[0]
        if mf == 0:
            return
        wc = self.wcum(node)[f, cuts].tolist()  # z(.) of the paper in weight units
        rules = self.pruning
        tol = self.tol
        is_root = level == 0
        monotone = self.monotone
        if d == 2:
            pos = self.scratch_pos
            pos[node.order[f]] = np.arange(node.m, dtype=np.int32)
            P = pos[node.order]
        # evaluated split indices and their (lower bounds on) scores
        V: list[int] = []
        tcL: dict[int, float] = {}  # (lower bounds on) the sides' optima
        tcR: dict[int, float] = {}
        thL: dict[int, float] = {}  # the same without the minimum leaf size (= tcL / tcR without one)
        thR: dict[int, float] = {}
        cross = self.cross and rules.interval_shrinking
        # SP on the weightless relaxation (``relaxed_sides``): children of depth two, compiled
        relax = self.relaxed_sp and not monotone and d == 3 and self.compiled and rules.sub_interval
        seeds: dict[int, tuple[Optional[tuple[int, float]], Optional[tuple[int, float]]]] = {}  # seed_of
        ML, MR = 0, mf - 1
        # intervals [i, j] with relaxed bounds (aL, aR) on every split's sides (0: none)
        Q: deque[tuple[int, int, float, float]] = deque([(0, mf - 1, 0.0, 0.0)])
        if is_root:
            self.root_branch = (Q, thL, thR, V)
        while Q:
            i, j, aL, aR = Q.popleft() if self.bfs else Q.pop()
            B = inc.bound_for(f, j) - gap  # inclusive bound for every split in [i..j]
            k = bisect.bisect_left(V, i)
            u = V[k - 1] if k > 0 else None
            v = V[k] if k < len(V) else None
            if rules.interval_shrinking:  # P_IS, Eq. (11)
                if ML > i:
                    i = ML
                if MR < j:
                    j = MR
                if u is not None:
                    su = thL[u] + tcR[u]  # theta_u when monotone; else the bound right of u
                    if su - B > 0:
                        i = max(i, bisect.bisect_left(wc, wc[u] + (su - B) - tol))
                if v is not None:
                    sv = tcL[v] + thR[v]  # theta_v when monotone; else the bound left of v
                    if sv - B > 0:
                        j = min(j, bisect.bisect_right(wc, wc[v] - (sv - B) + tol) - 1)
                if cross and u is not None and v is not None and tcL[v] + tcR[u] - (wc[v] - wc[u]) > B + tol:
                    continue  # both sides shrink from a neighbour (the cross rule, above)
                if i > j:
                    continue
            if rules.sub_interval:  # P_SP, Eq. (12) (one-sided versions are also valid)
                lbI = max(thL[u] if u is not None else 0.0, aL) + max(thR[v] if v is not None else 0.0, aR)
                if lbI > B:
                    self.stats["intervals_pruned_sp"] += 1
                    continue
                if relax and i < j and u is not None and v is not None and max(tcL[u], aL) + max(tcR[v], aR) > B:
                    aL, aR = self.relaxed_sides(node, f, int(cuts[i]), int(cuts[j]), max(thL[u], aL),
                                                max(thR[v], aR), tcL[u], tcR[v], B, seeds[v][0], seeds[u][1])
                    if aL + aR > B:
                        self.stats["intervals_pruned_relaxed"] += 1
                        continue
            if not monotone and lb1 > B:  # every split costs at least lb1
                self.stats["intervals_pruned_sp"] += 1
                continue
            if is_root:
                self.root_current = (i, j, aL, aR)
            w = (i + j) // 2
            z = int(cuts[w])
            self.check_time()
            self.stats["splits_evaluated"] += 1
            tree = None
            if d == 2:
                tL, tR, _, uL, uR = self.d2_split(node, f, P, z, False)
                exactL = exactR = True
                if tL + tR <= B:
                    tL, tR, tree, uL, uR = self.d2_split(node, f, P, z, True)
            else:
                left, right = self.children(node, f, z)
                gl = level + 1
                # fallbacks when a side is not solved: the similarity bound says a side
                # only grows (left) / shrinks (right) with the threshold index (with a
                # minimum leaf size: its unconstrained optimum does, see above)
                fbL = thL[u] if u is not None else 0.0
                fbR = thR[v] if v is not None else 0.0
                first_left = left.m >= right.m or not self.larger_first
                a, b = (left, right) if first_left else (right, left)
                ra = self.solve(a, d - 1, B, gl)
                exA = ra.tree is not None
                tA = ra.cost if exA else ra.lb
                uA = tA
                if not monotone:
                    uA = max(ra.free, fbL if first_left else fbR)
                    tA = max(tA, uA)
                eta = min(wc[w] - wc[i], wc[j] - wc[w])  # "Upper bounds" paragraph
                bB = (B - tA + eta) if self.eta_add else max(B - tA, eta)
                rb = None
                if (exA or self.second_after_fail) and bB >= 0:
                    rb = self.solve(b, d - 1, bB, gl)
                exB = rb is not None and rb.tree is not None
                if rb is None:
                    tB = fbR if first_left else fbL
                    uB = tB
                else:
                    tB = rb.cost if exB else rb.lb
                    uB = tB
                    if not monotone:
                        uB = max(rb.free, fbR if first_left else fbL)
                        tB = max(tB, uB)
                if first_left:
                    exactL, tL, exactR, tR = exA, tA, exB, tB
                    uL, uR = uA, uB
                else:
                    exactL, tL, exactR, tR = exB, tB, exA, tA
                    uL, uR = uB, uA
                if relax:
                    sides = (ra, rb) if first_left else (rb, ra)
                    seeds[w] = (seed_of(sides[0]), seed_of(sides[1]))
                if exA and exB and tL + tR <= B:
                    assert ra.tree is not None and rb is not None and rb.tree is not None
                    lt, rt = (ra.tree, rb.tree) if first_left else (rb.tree, ra.tree)
                    tree = DPSplit(f, self.threshold(node, f, z), lt, rt)
            tw = tL + tR
            if tree is not None:
                inc.set(tw, tree, f, w)
                if is_root:
                    self.report_root(inc)
            bisect.insort(V, w)
            tp = uL + tR  # bounds the splits right of w (= tw when monotone: uL is tL)
            tm = tL + uR  # and those left of it
            tcL[w], tcR[w], thL[w], thR[w] = tL, tR, uL, uR
            if rules.interval_shrinking:  # Theorem 2
                if monotone:
                    # u < w has theta_u >= theta_w: prune unless one of them could still tie
                    if exactL and tL <= 0.0 and tw > inc.bound_for(f, 0) - gap:
                        ML = max(ML, w + 1)
                    if exactR and tR <= 0.0 and tw > inc.bound_for(f, w + 1) - gap:
                        MR = min(MR, w - 1)
                else:  # u < w has theta_u >= OPT_1(R_w) >= uR, v > w has theta_v >= uL
                    if uR > inc.bound_for(f, 0) - gap:
                        ML = max(ML, w + 1)
                    if uL > inc.bound_for(f, w + 1) - gap:
                        MR = min(MR, w - 1)
            # P_NB, Eq. (9): keep only thresholds far enough (in moved weight) from w
            lo, hi = w - 1, w + 1
            if rules.neighbourhood:
                rl_ = tm - (inc.bound_for(f, w - 1) - gap)
                if rl_ > 0:
                    lo = min(lo, bisect.bisect_right(wc, wc[w] - rl_ + tol) - 1)
                rr_ = tp - (inc.bound_for(f, w + 1) - gap)
                if rr_ > 0:
                    hi = max(hi, bisect.bisect_left(wc, wc[w] + rr_ - tol))
            if hi <= j:  # the relaxed bounds hold for every split of [i, j]
                Q.append((hi, j, aL, aR))
            if i <= lo:
                Q.append((i, lo, aL, aR))
        if is_root:
            self.root_branch = None
            self.root_current = None

    # ---------------------------------------------------------------- anytime support

    def greedy(self, node: _Node, d: int) -> tuple[float, DPNode]:
        """Initial upper bound: top-down Gini splits, exact depth-one trees at the bottom."""
        cost_leaf, label = self.leaf(node)
        if d == 0 or cost_leaf <= 0.0 or node.m < 2 * self.min_leaf:
            return cost_leaf, DPLeaf(label)
        if d == 1:
            return self.depth_one(node)
        if d == 2 and self.free is not None and self.compiled:  # exact below a Gini split
            res = self.solve(node, 2, cost_leaf, 1)
            assert res.tree is not None
            return res.cost, res.tree
        score, nL, nR = self.gini_scores(node)
        valid = self.valid_positions(node) & (nL > 0) & (nR > 0)
        if self.min_leaf > 1:
            pos = np.arange(1, node.m + 1)
            valid &= ((pos >= self.min_leaf) & (node.m - pos >= self.min_leaf))[None, :]
        if not valid.any():
            return cost_leaf, DPLeaf(label)
        flat = int(np.argmax(np.where(valid, score, -np.inf)))
        f, z = divmod(flat, node.m)
        left, right = self.children(node, f, z)
        cl, tl = self.greedy(left, d - 1)
        cr, tr = self.greedy(right, d - 1)
        if cl + cr < cost_leaf - self.d_strict / 2:
            return cl + cr, DPSplit(f, self.threshold(node, f, z), tl, tr)
        return cost_leaf, DPLeaf(label)

    def root_lower_bound(self) -> float:
        """Proven lower bound at the root when the search is interrupted."""
        lb = self.root_cost
        if self.root_kstate is not None:  # interrupted inside the compiled root (solve_d3)
            return self.d3_lower_bound(lb)
        if self.root_feature < 0:
            return 0.0
        if self.root_feature < self.p - 1:
            return 0.0  # later features not searched yet (trivial bound)
        state = self.root_branch
        if state is None:
            return lb
        Q, thL, thR, V = state
        intervals = list(Q)
        if self.root_current is not None:
            intervals.append(self.root_current)
        for i, j, aL, aR in intervals:  # with the relaxed bounds of every split of [i, j]
            k = bisect.bisect_left(V, i)
            u = V[k - 1] if k > 0 else None
            k = bisect.bisect_right(V, j)
            v = V[k] if k < len(V) else None
            lb = min(lb, max(thL[u] if u is not None else 0.0, aL) + max(thR[v] if v is not None else 0.0, aR))
        return max(0.0, lb)

    def report_root(self, inc: "_Incumbent") -> None:
        if self.root_found is not None and inc.tree is not None:
            self.root_found((inc.cost, inc.tree))
        if inc.cost < self.root_cost:
            self.root_cost = inc.cost
            self.root_tree = inc.tree
            if self.on_progress is not None:
                self.on_progress(time.perf_counter() - self.start, inc.cost, self.root_lb)


def _refine_compiled(tree: DPNode, X: np.ndarray, y: np.ndarray) -> tuple[DPNode, np.ndarray]:
    """``_refine(tree, X, all rows)`` and the rows it misclassifies, from one compiled pass
    (``kernels.route``) over the flattened tree; the same tree and thresholds."""
    nodes: list[DPNode] = []  # one entry per occurrence (a shared subtree is listed twice)
    kids: list[list[int]] = []
    stack: list[tuple[DPNode, int, int]] = [(tree, -1, 0)]
    while stack:
        t, parent, side = stack.pop()
        if parent >= 0:
            kids[parent][side] = len(nodes)
        nodes.append(t)
        kids.append([0, 0])
        if isinstance(t, DPSplit):
            stack.append((t.right, len(nodes) - 1, 1))
            stack.append((t.left, len(nodes) - 1, 0))
    q = len(nodes)
    feat = np.zeros(q, dtype=np.int64)
    thr = np.zeros(q)
    left = np.array([k[0] for k in kids], dtype=np.int64)
    right = np.array([k[1] for k in kids], dtype=np.int64)
    label = np.full(q, -1, dtype=np.int64)
    for j, t in enumerate(nodes):
        if isinstance(t, DPSplit):
            feat[j], thr[j] = t.feature, t.threshold
        else:
            label[j] = t.label
    lmax, rmin = np.empty(q), np.empty(q)
    nl, nr = np.empty(q, dtype=np.int64), np.empty(q, dtype=np.int64)
    wrong = np.empty(X.shape[0], dtype=np.bool_)
    _load_answer_kernels().route(X, y, feat, thr, left, right, label, lmax, rmin, nl, nr, wrong)

    def build(j: int) -> DPNode:
        t = nodes[j]
        if not isinstance(t, DPSplit):
            return t
        if nr[j] == 0:  # every row (or none) goes left
            return build(int(left[j]))
        if nl[j] == 0:
            return build(int(right[j]))
        a, b = float(lmax[j]), float(rmin[j])
        th = (a + b) / 2.0
        if not a <= th < b:
            th = a
        lt, rt = build(int(left[j])), build(int(right[j]))
        if th == t.threshold and lt is t.left and rt is t.right:  # (the search's own midpoints: most nodes)
            return t
        return DPSplit(t.feature, th, lt, rt)

    return build(0), wrong


def optimal_tree(
    X: np.ndarray,
    y: np.ndarray,
    depth: int,
    *,
    weights: Optional[np.ndarray] = None,
    n_classes: Optional[int] = None,
    min_leaf: int = 1,
    max_gap: float = 0.0,
    time_limit: Optional[float] = None,
    pruning: PruningRules = PruningRules(),
    on_progress: Optional[Callable[[float, float, float], None]] = None,
    canonical_ties: bool = False,
) -> DPResult:
    """Optimal classification tree of depth <= ``depth`` minimising weighted errors.

    ConTree (Brita et al.): recursion of Eqs. (4)-(6) with caching, Alg. 1 pruning and the
    Alg. 2 depth-two subroutine.

    Args:
        X: (n, p) raw continuous feature values.
        y: (n,) class labels in ``[0, n_classes)``.
        depth: maximum number of branching levels (0 gives a single leaf).
        weights: optional nonnegative row weights (default: all ones).
        n_classes: number of classes (default ``max(y) + 1``).
        min_leaf: minimum number of training rows (unweighted) in every leaf.
        max_gap: permitted absolute distance to the optimum ("Optimality Gap"; half is
            spent at each node, a quarter is passed to each child).
        time_limit: seconds; on timeout the best tree found so far is returned with
            status ``"feasible"`` and a proven lower bound.
        pruning: switches for the NB / IS / SP rules of Alg. 1.
        on_progress: ``on_progress(elapsed_s, incumbent_cost, lower_bound)`` called when
            the root incumbent or bound improves.
        canonical_ties: return the canonical optimum (a leaf before a split of equal
            cost, then the lowest feature index, then the lowest threshold, at every node),
            the same tree whatever the pruning rules or kernels. Off (the default), the
            first optimum the search proves is returned, as ConTree does: an equally good
            split never replaces the incumbent, and a perfect subtree ends the search of
            its node. Proving that no earlier split ties costs up to 3x more sub-problems
            where the optimum is 0 errors (bank depth 4: 685 vs 211).
    """
    start = time.perf_counter()
    X = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
    y = np.asarray(y).astype(np.int64, copy=False)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError("X must be (n, p) and y (n,)")
    if not np.all(np.isfinite(X)):
        raise ValueError("X must be finite")
    if depth < 0 or min_leaf < 1 or max_gap < 0:
        raise ValueError("depth >= 0, min_leaf >= 1 and max_gap >= 0 are required")
    n = X.shape[0]
    K = int(n_classes) if n_classes is not None else (int(y.max()) + 1 if n else 1)
    if n and (y.min() < 0 or y.max() >= K):
        raise ValueError("labels must lie in [0, n_classes)")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite, nonnegative and of shape (n,)")
    deadline = start + time_limit if time_limit is not None else math.inf
    S = _Solver(X, y, w, K, depth, min_leaf, max_gap, deadline, pruning, on_progress, start, canonical_ties)

    if n == 0:
        return DPResult(DPLeaf(0), 0.0, 0.0, "optimal", time.perf_counter() - start, dict(S.stats))
    root = S.root_node()
    S.root = root
    leaf_cost, label = S.leaf(root)
    S.root_cost, S.root_tree = leaf_cost, DPLeaf(label)
    timed_out = False
    lower = 0.0
    try:
        # Greedy initial upper bound (does not change the result, only the pruning); the
        # compiled depth-two search finds good incumbents at once, so it is skipped there.
        if S.use_greedy and depth >= 2 and leaf_cost > 0 and n >= 2 * min_leaf and not (depth == 2 and S.compiled and min_leaf == 1):
            g_cost, g_tree = S.greedy(root, depth)
            if g_cost < S.root_cost:
                S.root_cost, S.root_tree = g_cost, g_tree
            if on_progress is not None:
                on_progress(time.perf_counter() - start, S.root_cost, 0.0)
        res = S.solve(root, depth, S.root_cost, 0)
        if res.tree is not None and res.cost <= S.root_cost:
            S.root_cost, S.root_tree = res.cost, res.tree
        lower = max(0.0, min(res.lb, S.root_cost)) if max_gap > 0 else S.root_cost
    except _Timeout:
        timed_out = True
        lower = min(S.root_lower_bound(), S.root_cost)
    tree = S.materialise(S.root_tree)
    if S.compiled:
        tree, wrong = _refine_compiled(tree, X, y)
        cost = float(w[wrong].sum())  # as errors()
    else:
        tree = _refine(tree, X, np.arange(n))
        cost = errors(tree, X, y, w)
    seconds = time.perf_counter() - start
    status = "optimal" if (not timed_out and lower >= cost - S.tol) else "feasible"
    if status == "optimal":
        lower = cost
    if on_progress is not None:
        on_progress(seconds, cost, lower)
    stats = dict(S.stats)
    if S.free is not None:  # the searches without the minimum leaf size (``_Solver.solve_min_leaf``)
        stats.update({"free_" + k: v for k, v in S.free.stats.items()})
    stats.update(timed_out=timed_out, cache_entries=len(S.cache), n=n, p=S.p, n_classes=K)
    return DPResult(tree, cost, float(lower), status, seconds, stats)
