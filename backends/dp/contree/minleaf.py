"""A minimum leaf size in ConTree's Alg. 1 (issue 25 item 2): the bounds of
:meth:`search._Solver.branch` with ``monotone`` False, and the searches that feed them.

Minimum leaf size m (``self.monotone`` False). Write OPT_m(D) for the optimum of the
rows D (at the children's depth) with leaves of >= m rows and OPT_1(D) without the
constraint; a split w scores theta_w = OPT_m(L_w) + OPT_m(R_w), and w(A - B) is the
weight of the rows of A not in B. ConTree's rules all derive from the similarity
bound, Eq. (3), OPT(D_new) >= OPT(D_old) - w(D_old - D_new), applied to both sides.
With the constraint it still holds where D_new is a subset of D_old (the side that
shrinks): the optimal tree of D_new run on D_old keeps every leaf at >= m rows and
misclassifies at most the added weight. Where D_new grows it fails (a tree of D_new
restricted to D_old may have small leaves), but OPT_m(D_new) >= OPT_1(D_new) >=
OPT_1(D_old): every constrained tree is a tree, and OPT_1 is monotone. Hence, with
uL_w <= OPT_1(L_w), uR_w <= OPT_1(R_w) (``free`` of the children's results, or the
depth-one optima of ``d2_split``) and tL_w, tR_w (lower bounds on) the constrained
optima, for every w' > w

    theta_w' >= OPT_1(L_w') + OPT_m(R_w') >= uL_w + tR_w - w(R_w - R_w'),

and for every w' < w, theta_w' >= tL_w + uR_w - w(L_w - L_w'): the first bound is
used by NB (Eq. 9) right of w and by IS (Eq. 11) when w is the left neighbour u of an
interval, the second left of w and from the right neighbour v (``tcL``/``tcR`` keep
tL/tR, ``thL``/``thR`` uL/uR). Cross rule (with IS): inside (u, v) both sides shrink
from a neighbour, L_w' from L_v and R_w' from R_u, so theta_w' >= tL_v + tR_u -
w(L_v - L_u) by the similarity bound alone; with the two IS ends and SP this keeps
exactly the w' whose bound max(tL_v - w(L_v - L_w'), uL_u) + max(tR_u - w(R_u -
R_w'), uR_v) is within the incumbent's (the bound is convex in z(w')). SP (Theorem 3,
Eq. 12): every w' in (u, v) has theta_w' >= OPT_1(L_w') + OPT_1(R_w') >= uL_u + uR_v,
which also bounds the rest of an interrupted root search (``root_lower_bound``) and
replaces a child left unsolved (the fallbacks fbL/fbR: OPT_m(L_w) >= OPT_1(L_w) >=
uL_u). Theorem 2 becomes: every u < w has theta_u >= OPT_1(R_u) >= uR_w, every v > w
has theta_v >= uL_w, so all of them go once that exceeds the bound (ConTree's version,
for a zero side, needs monotone costs). ``lb1``, a lower bound on every split (the
unconstrained optimum of the node), drops whole intervals. The cached lower bounds
are lower bounds on the constrained problem and stay valid. With min_leaf 1, u = t:
ConTree's rules exactly (the cross rule, ``self.cross``, is then off by default).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from .bounds import _Res
from .loader import _load_kernels
from .node import _Node
from .tree import DPLeaf, _LazyD2


def seed_of(res: Optional[_Res]) -> Optional[tuple[int, float]]:
    """The root split (feature, threshold) of a child's exactly solved depth-two optimum, the
    seed of the relaxed searches next to it (:meth:`MinLeaf.seed_position`)."""
    if res is not None and isinstance(res.tree, _LazyD2):
        return res.tree.f1, res.tree.threshold
    return None


class MinLeaf:
    """The minimum-leaf methods of :class:`search._Solver`."""

    if TYPE_CHECKING:  # the state and methods of search._Solver that these methods use
        K: int
        y: np.ndarray
        w: np.ndarray
        dtype: Any
        min_leaf: int
        integral: bool
        compiled: bool
        wide: bool
        d2_sequential: bool
        tol: float
        d_strict: float
        d_tie: float
        batch_elems: int
        rules_arr: np.ndarray
        scratch_pos: np.ndarray
        stats: dict
        cache: dict
        free: Optional[Any]
        free_mode: str
        free_cache: dict[tuple[int, bytes], float]

        def key(self, node: _Node, d: int) -> tuple[int, bytes]: ...
        def check_time(self) -> None: ...
        def children(self, node: _Node, f: int, z: int) -> tuple[_Node, _Node]: ...
        def lb_after_fail(self, bound: float) -> float: ...
        def _solve(self, node: _Node, d: int, bound: float, level: int, lb1: float = 0.0,
                   seed: tuple[int, int] = (-1, -1), two_phase: bool = False) -> _Res: ...

    def solve_min_leaf(self, node: _Node, d: int, bound: float, level: int) -> _Res:
        """:meth:`solve` with a minimum leaf size, below the root. Besides the constrained
        result, the caller's bounds need ``free``, a lower bound on the optimum OPT_1 of
        the same sub-problem without the constraint (see :meth:`branch`). Two sources:

        * depth two, compiled (``free_mode`` "kernel"): ``kernels.d2_two_phase``, one search
          for OPT_1 whose evaluations give the constrained side costs as well, then the
          constrained search continuing from them;
        * otherwise (or ``free_mode`` "twin"): the sub-problem without the constraint first
          (``self.free``, the same search with min_leaf 1 and its own cache, bounded by the
          same ``bound``). Its optimum OPT_1 bounds the constrained one from below (every
          tree with large leaves is a tree): OPT_1 > bound proves the constrained search
          fails; an optimal leaf without the constraint is optimal with it (a leaf is always
          allowed); otherwise the constrained search runs knowing OPT_1 as a lower bound on
          every split (it stops once its incumbent reaches it) and, at depth two, evaluates
          the unconstrained optimum's root split first.

        The ``free`` bounds are cached apart (``free_cache``), as the best one proven."""
        self.stats["ct_calls"] += 1
        key = self.key(node, d)
        entry = self.cache.get(key)
        known = self.free_cache.get(key, 0.0)
        if entry is not None:
            self.stats["cache_hits"] += 1
            if isinstance(entry, _Res):
                return _Res(entry.cost, entry.tree, entry.lb, known)
            if entry > bound:
                return _Res(math.inf, None, entry, known)
        lb_entry = entry if isinstance(entry, float) else 0.0
        by_kernel = (self.free_mode in ("kernel", "none") and d == 2 and self.compiled and self.d2_sequential
                     and node.m >= 2 * self.min_leaf)
        if by_kernel:
            res = self._solve(node, d, bound, level, two_phase=self.free_mode == "kernel")
            free = max(known, res.free)
        else:
            free_res = self.free.solve(node, d, bound, level)  # type: ignore[union-attr]
            free = max(known, free_res.lb)  # proven lower bound on OPT_1 (equal to it without a gap)
            ftree = free_res.tree
            if ftree is None:  # OPT_m >= OPT_1 > bound
                self.cache[key] = max(lb_entry, free)
                self.free_cache[key] = free
                return _Res(math.inf, None, max(lb_entry, free), free)
            if isinstance(ftree, DPLeaf) and not isinstance(ftree, _LazyD2):
                res = _Res(free_res.cost, ftree, free_res.lb)
            else:
                seed = (ftree.f1, ftree.z) if isinstance(ftree, _LazyD2) else (-1, -1)
                res = self._solve(node, d, bound, level, free, seed)
        if res.tree is None:
            res.lb = max(res.lb, free, lb_entry)
        res.free = free
        self.free_cache[key] = free
        if res.tree is not None:
            self.cache[key] = res
        else:
            self.cache[key] = res.lb
        return res

    def relaxed_sides(self, node: _Node, f: int, zu: int, zv: int, uL: float, uR: float, tL: float, tR: float,
                      B: float, seed_left: Optional[tuple[int, float]] = None,
                      seed_right: Optional[tuple[int, float]] = None) -> tuple[float, float]:
        """Lower bounds on OPT_m(L_w') and OPT_m(R_w') for every split w' of feature ``f``
        at a position from ``zu`` to ``zv`` (the end candidates of an interval of root
        splits whose children are of depth two), from the weightless relaxation: writing
        L_u, L_v for the left sides at ``zu``, ``zv``, L_u <= L_w' <= L_v, and a tree of
        L_w' whose leaves hold >= m rows of L_w', run on L_v, keeps them at >= m rows and
        errs on at least the rows of L_u it errs on there, so OPT_m(L_w') >= the optimum
        over trees of L_v with leaves of >= m rows of L_v counting the errors on L_u only
        (the rows of L_v not in L_u weightless; ``relaxed``), and likewise for R_w' from
        R_u. The closer ``zu`` and ``zv``, the tighter the bounds (the caller passes the
        interval shrunk by IS, not its evaluated neighbours). ``uL``/``uR`` are known lower
        bounds (the unconstrained optima at the neighbours) and ``tL``/``tR`` the
        neighbours' constrained optima, which the relaxed values seldom exceed: the side
        with the larger difference is solved first, exactly when it is at most ``B`` minus
        the other's bound, then the other only as far as needed to tell whether the sum
        exceeds ``B``. The first search stops at a tree within ``B`` minus the other side's
        tL or tR: the two relaxed optima then usually sum to at most ``B``, so nothing is
        likely to be pruned (a heuristic stop: a prune may be missed, never made wrongly).
        ``seed_left``/``seed_right``: the depth-two root split (feature, threshold) of the
        neighbouring children, evaluated first by each relaxed search
        (:meth:`seed_position`). Returns the two bounds."""
        self.stats["relaxed_attempts"] += 1
        left, _ = self.children(node, f, zv)
        _, right = self.children(node, f, zu)
        between = node.order[f, zu + 1: zv + 1]
        if tR - uR > tL - uL:
            aR, within = self.relaxed(right, between, B - uL, uR, B - tL, seed_right)
            if within or uL + aR > B:  # within: aR' + aL' <= (B - tL) + tL, nothing to prune
                return uL, aR
            return self.relaxed(left, between, B - aR, uL, B - aR, seed_left)[0], aR
        aL, within = self.relaxed(left, between, B - uR, uL, B - tR, seed_left)
        if within or aL + uR > B:
            return aL, uR
        return aL, self.relaxed(right, between, B - aL, uR, B - aL, seed_right)[0]

    @staticmethod
    def seed_position(child: _Node, seed: Optional[tuple[int, float]]) -> tuple[int, int]:
        """The root split (feature, position in ``child``) the relaxed search of ``child``
        evaluates first (``kernels._seed``): the split of a neighbouring child's constrained
        optimum, ``seed`` = (feature, threshold), at the same threshold. Its relaxed cost is
        often near the relaxed optimum, so the search starts with a good incumbent (ConTree's
        pruning, Alg. 1, is only as strong as its incumbent). (-1, -1): none."""
        if seed is None:
            return -1, -1
        f1, threshold = seed
        z = int(np.searchsorted(child.vals[f1], threshold, side="left")) - 1  # last value below it
        return (f1, z) if 0 <= z < child.m - 1 else (-1, -1)

    def relaxed(self, child: _Node, zero: np.ndarray, bound: float, lower: float,
                stop: float, seed: Optional[tuple[int, float]] = None) -> tuple[float, bool]:
        """A proven lower bound on the constrained depth-two optimum of ``child`` with the
        rows ``zero`` weightless (they still count towards the minimum leaf size): the
        optimum itself when at most ``bound``, else a bound above ``bound``; unless a tree
        of cost <= ``stop`` (<= ``bound``) is found first: the search then stops there and
        returns ``(lower, True)``. ``lower``: a known lower bound (the unconstrained optimum
        of the weighted rows), at which the search stops as well. ``seed``: see
        :meth:`seed_position`."""
        if self.integral:  # the kernel stops once its incumbent is below stop + 1 (d_strict)
            stop = math.floor(stop + 1e-9)
        w2 = self.w.copy()
        w2[zero] = 0.0
        wd2 = w2.astype(self.dtype)
        sgn2 = np.where(self.y == 1, w2, -w2).astype(self.dtype) if self.K == 2 else wd2
        cw = np.bincount(self.y[child.rows], weights=w2[child.rows], minlength=self.K)
        leaf = float(cw.sum() - cw.max())
        if leaf <= 0 or child.m < 2 * self.min_leaf:
            return max(leaf, lower), False
        if leaf <= bound:
            if leaf <= stop:
                return lower, True
            inc_arr = np.array([leaf, -1, -1, 1.0, bound, self.d_strict, self.d_tie])
        else:
            inc_arr = np.array([math.inf, -1, -1, 0.0, bound, self.d_strict, self.d_tie])
        self.check_time()
        sf, sz = self.seed_position(child, seed)
        done, _, _, n_evals, n_sp = _load_kernels().d2_quick(
            child.rows, child.order, child.vals, self.y, w2, wd2, sgn2, self.K, self.scratch_pos, inc_arr, 0.0,
            self.tol, self.rules_arr, 8 * self.batch_elems, self.wide, self.min_leaf, float(max(stop, lower)),
            sf, sz)
        self.stats["relaxed_evals"] += int(n_evals)
        if not done:
            return lower, False
        if inc_arr[3] != 0.0:
            if inc_arr[0] <= stop + self.tol:
                return lower, True
            return max(float(inc_arr[0]), lower), False
        return max(self.lb_after_fail(bound), lower), False
