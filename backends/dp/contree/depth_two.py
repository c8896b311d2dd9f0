"""Depth-one and depth-two sub-problems (Alg. 2 / Eq. 13 of Brita et al.): the exact
depth-one tree, ``D2Split`` for one root split, the depth-two search over every root
feature (compiled: ``kernels.d2_prepare`` / ``d2_search``; numpy: batched rounds), the
tree materialisation, and the numpy kernels used when numba is absent. A mixin of
:class:`search._Solver`, whose state it reads."""
from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from .bounds import _FeatState, _Incumbent, _Res
from .loader import _load_answer_kernels, _load_kernels, _load_wide_kernels
from .node import _Node
from .tree import DPLeaf, DPNode, DPSplit, PruningRules, _LazyD2



class DepthTwo:
    """Depth-one / depth-two methods of :class:`search._Solver`."""

    if TYPE_CHECKING:  # the state and methods of search._Solver that these methods use
        p: int
        K: int
        y: np.ndarray
        w: np.ndarray
        wd: np.ndarray
        sgn: Optional[np.ndarray]
        dtype: Any
        min_leaf: int
        unit: bool
        materialise_numpy: bool
        tol: float
        big: float
        d_strict: float
        d_tie: float
        compiled: bool
        wide: bool
        d2_sequential: bool
        kern: Any
        batch_elems: int
        d2_budget: int
        round_elems: int
        pall_elems: int
        pruning: PruningRules
        rules_arr: np.ndarray
        scratch_pos: np.ndarray
        scratch_mask: np.ndarray
        root: Optional[_Node]
        stats: dict

        @staticmethod
        def threshold(node: _Node, f: int, z: int) -> float: ...
        def check_time(self) -> None: ...
        def lb_after_fail(self, bound: float) -> float: ...
        def report_root(self, inc: _Incumbent) -> None: ...
        def ys(self, node: _Node) -> np.ndarray: ...
        def call(self, node: _Node) -> np.ndarray: ...
        def wcum(self, node: _Node) -> np.ndarray: ...
        def valid_positions(self, node: _Node) -> np.ndarray: ...
        def leaf(self, node: _Node) -> tuple[float, int]: ...
        def cuts(self, node: _Node, f: int) -> np.ndarray: ...
        canonical_ties: bool

        def branch(self, node: _Node, d: int, f: int, inc: _Incumbent, level: int, gap: float,
                   lb1: float = 0.0) -> None: ...

    def depth_one(self, node: _Node) -> tuple[float, DPNode]:
        """Exact optimal depth-one tree (Eq. 4 with d = 1), vectorised over all splits."""
        self.stats["d1_calls"] += 1
        cost_leaf, label = self.leaf(node)
        m = node.m
        if cost_leaf <= 0.0 or m < 2 * self.min_leaf or m < 2:
            return cost_leaf, DPLeaf(label)
        if self.wide:
            return self._depth_one_wide(node, cost_leaf, label)
        C = self.call(node)  # (K, p, m)
        tot = C[:, 0, -1]
        err = _two_side_errors(C, tot)
        valid = self.valid_positions(node)
        if self.min_leaf > 1:
            pos = np.arange(1, m + 1)
            valid &= ((pos >= self.min_leaf) & (m - pos >= self.min_leaf))[None, :]
        err = np.where(valid, err, self.big)
        best = float(err.min())
        if not best < cost_leaf - self.d_strict / 2:  # a leaf wins ties
            return cost_leaf, DPLeaf(label)
        flat = int(np.flatnonzero(err.ravel() <= best + self.tol / 2)[0])
        f, z = divmod(flat, m)
        lab_l = int(np.argmax(C[:, f, z]))
        lab_r = int(np.argmax(tot - C[:, f, z]))
        return best, DPSplit(f, self.threshold(node, f, z), DPLeaf(lab_l), DPLeaf(lab_r))

    def _depth_one_wide(self, node: _Node, cost_leaf: float, label: int) -> tuple[float, DPNode]:
        """:meth:`depth_one` for many classes (``kernels_wide``): the same values, without
        the (K, p, m) class-weight tensor."""
        m = node.m
        cls, wts = self.class_weights(node)
        valid = self.valid_positions(node)
        if self.min_leaf > 1:
            pos = np.arange(1, m + 1)
            valid &= ((pos >= self.min_leaf) & (m - pos >= self.min_leaf))[None, :]
        err = _load_wide_kernels().depth_one_wide(cls, wts, valid, self.K, float(self.big))
        best = float(err.min())
        if not best < cost_leaf - self.d_strict / 2:  # a leaf wins ties
            return cost_leaf, DPLeaf(label)
        flat = int(np.flatnonzero(err.ravel() <= best + self.tol / 2)[0])
        f, z = divmod(flat, m)
        left = np.bincount(cls[f, : z + 1], weights=wts[f, : z + 1], minlength=self.K)
        tot = np.bincount(cls[f], weights=wts[f], minlength=self.K)
        return best, DPSplit(f, self.threshold(node, f, z), DPLeaf(int(np.argmax(left))),
                             DPLeaf(int(np.argmax(tot - left))))

    def d2_split(self, node: _Node, f1: int, P: np.ndarray, z: int, want_tree: bool):
        """Alg. 2 ``D2Split(D, f1, w)``: optimal left and right depth-one subtrees of the
        root split "position in ``f1``-order <= z", for all second features at once.

        ``P[f2, i]`` is the position in ``f1``'s order of the row at position ``i`` of
        ``f2``'s order.  The class counts of Eq. (13) are cumulative sums of the class
        weights of the rows going left, taken along every ``f2`` order at once.
        Returns ``(theta_L, theta_R, tree_or_None, free_L, free_R)``: with a minimum leaf
        size, ``theta`` keeps it and ``free`` is the same side's optimum without it (the
        bound its neighbours need, see ``kernels.d2_search``); otherwise both are equal.
        """
        self.stats["d2_calls"] += 1
        if self.wide or (self.compiled and self.min_leaf == 1 and want_tree):
            return self._d2_split_compiled(node, f1, z, want_tree)
        M = P <= z  # (p, m): row at f2-position i goes left at the root
        ys = self.ys(node)
        call = self.call(node)
        CL = np.cumsum(ys * M, axis=2, dtype=self.dtype)  # (K, p, m) left-subset counts
        CR = call - CL
        totL = CL[:, 0, -1]
        totR = call[:, 0, -1] - totL
        errL = _two_side_errors(CL, totL)
        errR = _two_side_errors(CR, totR)
        valid = self.d2_valid(node)
        errL = np.where(valid, errL, self.big)
        errR = np.where(valid, errR, self.big)
        leafL, leafR, thL, thR = self._side_costs(errL, errR, totL, totR)
        uL, uR = thL, thR
        if self.min_leaf > 1:
            cntL = CL.sum(axis=0) if self.unit else np.cumsum(M, axis=1)
            nL = cntL[:, -1:]
            cntR = np.arange(1, node.m + 1)[None, :] - cntL
            nR = node.m - nL
            ml = self.min_leaf
            okL = (cntL >= ml) & (nL - cntL >= ml)
            okR = (cntR >= ml) & (nR - cntR >= ml)
            errL = np.where(okL, errL, self.big)
            errR = np.where(okR, errR, self.big)
            leafL, leafR, thL, thR = self._side_costs(errL, errR, totL, totR)
        if not want_tree:
            return thL, thR, None, uL, uR
        tl = self._d2_side(node, CL, totL, errL, thL, leafL)
        tr = self._d2_side(node, CR, totR, errR, thR, leafR)
        zpos = z  # position in f1 order
        return thL, thR, DPSplit(f1, self.threshold(node, f1, zpos), tl, tr), uL, uR

    def _side_costs(self, errL, errR, totL, totR) -> tuple[float, float, float, float]:
        """Leaf cost of each side of a root split and the side's optimum (a depth-one
        split only when strictly better than the leaf, the tie rule)."""
        leafL = float(totL.sum() - totL.max())
        leafR = float(totR.sum() - totR.max())
        bestL, bestR = float(errL.min()), float(errR.min())
        thL = bestL if bestL < leafL - self.d_strict / 2 else leafL
        thR = bestR if bestR < leafR - self.d_strict / 2 else leafR
        return leafL, leafR, thL, thR

    def _d2_split_compiled(self, node: _Node, f1: int, z: int, want_tree: bool = True):
        """:meth:`d2_split` through the compiled ``kernels.d2_errors`` (or, for many
        classes, ``kernels_wide.d2_errors_wide``), with its minimum leaf size rule."""
        p, m, K = self.p, node.m, self.K
        ordl, posl = self.local_index(node)
        cls, wts = self.class_weights(node)
        errL = np.empty((p, m))
        errR = np.empty((p, m))
        totL = np.empty(K)
        totR = np.empty(K)
        errors = _load_wide_kernels().d2_errors_wide if self.wide else _load_kernels().d2_errors
        errors(ordl, posl, cls, wts, self.d2_valid(node), K, f1, z, float(self.big), errL, errR, totL, totR)
        goleft = posl[f1] <= z  # by local row id
        leafL, leafR, thL, thR = self._side_costs(errL, errR, totL, totR)
        uL, uR = thL, thR
        if self.min_leaf > 1:  # as d2_split: rows (not weights) on each side of each cut
            cntL = np.cumsum(goleft[ordl], axis=1)
            nL = cntL[:, -1:]
            cntR = np.arange(1, m + 1)[None, :] - cntL
            nR = m - nL
            ml = self.min_leaf
            errL = np.where((cntL >= ml) & (nL - cntL >= ml), errL, self.big)
            errR = np.where((cntR >= ml) & (nR - cntR >= ml), errR, self.big)
            leafL, leafR, thL, thR = self._side_costs(errL, errR, totL, totR)
        if not want_tree:
            return thL, thR, None, uL, uR
        sides: list[DPNode] = []
        for err, tot, theta, leaf_cost, left in ((errL, totL, thL, leafL, True), (errR, totR, thR, leafR, False)):
            if theta == leaf_cost:
                sides.append(DPLeaf(int(np.argmax(tot))))
                continue
            flat = int(np.flatnonzero(err.ravel() <= theta + self.tol / 2)[0])
            f, zz = divmod(flat, m)
            sel = goleft[ordl[f, : zz + 1]]
            if not left:
                sel = ~sel
            c = np.bincount(cls[f, : zz + 1][sel], weights=wts[f, : zz + 1][sel], minlength=K)
            sides.append(DPSplit(f, self.threshold(node, f, zz), DPLeaf(int(np.argmax(c))),
                                 DPLeaf(int(np.argmax(tot - c)))))
        return thL, thR, DPSplit(f1, self.threshold(node, f1, z), sides[0], sides[1]), uL, uR

    def _d2_side(self, node, C, tot, err, theta, leaf_cost) -> DPNode:
        if theta == leaf_cost:
            return DPLeaf(int(np.argmax(tot)))
        flat = int(np.flatnonzero(err.ravel() <= theta + self.tol / 2)[0])
        f, z = divmod(flat, node.m)
        return DPSplit(
            f,
            self.threshold(node, f, z),
            DPLeaf(int(np.argmax(C[:, f, z]))),
            DPLeaf(int(np.argmax(tot - C[:, f, z]))),
        )

    def d2_valid(self, node: _Node) -> np.ndarray:
        if node.valid is None:
            node.valid = self.valid_positions(node)
        return node.valid

    def local_index(self, node: _Node) -> tuple[np.ndarray, np.ndarray]:
        """``(ordl, posl)``: local row ids sorted per feature, and each local row's position
        in every feature's order (both (p, m))."""
        if node.loc is None:
            lid = self.scratch_pos
            lid[node.rows] = np.arange(node.m, dtype=np.int32)
            ordl = lid[node.order]
            posl = np.empty_like(ordl)
            np.put_along_axis(posl, ordl, np.broadcast_to(np.arange(node.m, dtype=np.int32), ordl.shape), axis=1)
            node.loc = (ordl, posl)
        return node.loc

    def class_weights(self, node: _Node) -> tuple[np.ndarray, np.ndarray]:
        """(p, m) class and weight of the row at every position of every order."""
        if node.clw is None:
            node.clw = (self.y[node.order], self.wd[node.order])
        return node.clw

    def d2_batch(self, node: _Node, ordl, posl, f1s: np.ndarray, zs: np.ndarray):
        """Alg. 2 for a batch of root splits ``(f1s[b], zs[b])`` at once.

        Returns arrays ``theta_L``, ``theta_R`` (optimal depth-one costs of both sides)."""
        B = f1s.shape[0]
        K, p, m = self.K, self.p, node.m
        self.stats["d2_calls"] += B
        if K == 2:
            return self.d2_batch_binary(node, ordl, posl, f1s, zs)
        ys = self.ys(node)
        call = self.call(node)
        if self.compiled:
            cls, wts = self.class_weights(node)
            return self._compiled_batch(node, ordl, posl, f1s, zs, 2 * p * m, _load_kernels().d2_multi,
                                        (cls, wts, _load_kernels().class_totals(cls, wts, K), self.d2_valid(node)))
        vidx = self.valid_flat(node)
        call_v = np.take(call.reshape(K, p * m), vidx, axis=1)  # (K, V)
        tot = call[:, 0, -1]
        chunk = max(1, self.batch_elems // (K * p * m))
        outL = np.empty(B)
        outR = np.empty(B)
        for a in range(0, B, chunk):
            b = min(B, a + chunk)
            self.check_time()
            M = self.root_masks(node, ordl, posl, f1s[a:b], zs[a:b])
            CL = np.cumsum(np.multiply(M[:, None], ys[None], dtype=self.dtype), axis=3, dtype=self.dtype)
            tl = CL[:, :, 0, -1].astype(np.float64)  # (b, K) class weights going left
            tr = tot[None, :] - tl
            nl = tl.sum(axis=1)
            nr = tr.sum(axis=1)
            eL = nl - tl.max(axis=1)  # leaves
            eR = nr - tr.max(axis=1)
            if vidx.shape[0]:
                CLv = np.take(CL.reshape(b - a, K, p * m), vidx, axis=2)  # (b, K, V)
                # Eq. (13): errors = n - max_k C_k - max_k (FQ_k - C_k) on each side
                sL = CLv.max(axis=1) + (tl[:, :, None] - CLv).max(axis=1)
                CRv = call_v[None] - CLv
                sR = CRv.max(axis=1) + (tr[:, :, None] - CRv).max(axis=1)
                eL = np.minimum(eL, nl - sL.max(axis=1))
                eR = np.minimum(eR, nr - sR.max(axis=1))
            outL[a:b] = eL
            outR[a:b] = eR
        return outL, outR

    def binary_prep(self, node: _Node):
        """Per-node arrays of the two-class kernel (see :meth:`d2_batch_binary`)."""
        if node.binary is None:
            assert self.sgn is not None
            S = self.sgn[node.order]  # (p, m) +w for class 1, -w for class 0
            Sall = np.cumsum(S, axis=1, dtype=self.dtype)
            vidx = self.valid_flat(node)
            tot = np.bincount(self.y[node.rows], weights=self.w[node.rows], minlength=2)
            node.binary = (S, Sall, Sall.ravel()[vidx], vidx, float(tot[0]), float(tot[1]))
        return node.binary

    def root_masks(self, node: _Node, ordl, posl, f1s: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """(b, p, m) booleans: row at position i of feature f2's order goes left at the
        root split (f1s[b], zs[b])."""
        p, m = self.p, node.m
        if p * p * m <= self.pall_elems:
            if node.pall is None:
                node.pall = np.ascontiguousarray(posl[:, ordl])  # (p, p, m)
            G = np.take(node.pall, f1s, axis=0)
        else:
            G = np.take(posl.ravel(), (f1s * m)[:, None, None] + ordl[None])
        return G <= zs[:, None, None]

    def d2_batch_binary(self, node: _Node, ordl, posl, f1s: np.ndarray, zs: np.ndarray):
        """Two-class Alg. 2 kernel.  For a side with class weights (A, B) and signed prefix
        sums Delta_i (class 1 counts +w, class 0 counts -w) over its rows in any feature
        order, the best depth-one tree costs ``min(A, B, A + min Delta, B - max Delta)``:
        the four label pairs of the two leaves.  One cumulative sum per root split serves
        both sides (the right side's prefix sums are the node's minus the left's)."""
        S, Sall, Sall_v, vidx, Atot, Btot = self.binary_prep(node)
        wcum = self.wcum(node)
        if self.compiled:
            return self._compiled_batch(node, ordl, posl, f1s, zs, self.p * node.m, _load_kernels().d2_binary,
                                        (S, Sall, self.d2_valid(node), wcum, Atot, Btot))
        B = f1s.shape[0]
        p, m = self.p, node.m
        outL: list[float] = []
        outR: list[float] = []
        chunk = max(1, self.batch_elems // (p * m))
        has_splits = vidx.shape[0] > 0
        for a in range(0, B, chunk):
            b = min(B, a + chunk)
            self.check_time()
            f1c, zc = f1s[a:b], zs[a:b]
            WL = wcum[f1c, zc].tolist()  # weight going left
            DL = Sall[f1c, zc].tolist()  # its class-1 minus class-0 weight
            if has_splits:
                M = self.root_masks(node, ordl, posl, f1c, zc)
                D = np.cumsum(np.multiply(M, S, dtype=self.dtype), axis=2, dtype=self.dtype)
                Dv = np.take(D.reshape(b - a, p * m), vidx, axis=1)
                Rv = Sall_v - Dv
                stats = zip(Dv.min(axis=1).tolist(), Dv.max(axis=1).tolist(),
                            Rv.min(axis=1).tolist(), Rv.max(axis=1).tolist())
            else:
                stats = zip(*([[0.0] * (b - a)] * 4))
            for wl, dl, (mnL, mxL, mnR, mxR) in zip(WL, DL, stats):
                bl = (wl + dl) / 2.0
                al = wl - bl
                ar = Atot - al
                br = Btot - bl
                outL.append(min(al, bl, al + mnL, bl - mxL))
                outR.append(min(ar, br, ar + mnR, br - mxR))
        return np.array(outL), np.array(outR)

    def _compiled_batch(self, node: _Node, ordl, posl, f1s, zs, elems: int, kernel, args):
        """Run a compiled Alg. 2 kernel over the batch in chunks (time checks between)."""
        B = f1s.shape[0]
        outL = np.empty(B)
        outR = np.empty(B)
        f1s = f1s.astype(np.int64, copy=False)
        zs = zs.astype(np.int64, copy=False)
        chunk = max(1, self.batch_elems // elems)
        for a in range(0, B, chunk):
            b = min(B, a + chunk)
            self.check_time()
            kernel(ordl, posl, *args, f1s[a:b], zs[a:b], outL[a:b], outR[a:b])
        return outL, outR

    def valid_flat(self, node: _Node) -> np.ndarray:
        """Flat indices into (p, m) of the distinct-value boundaries."""
        if node.valid_idx is None:
            node.valid_idx = np.flatnonzero(self.d2_valid(node).ravel())
        return node.valid_idx

    def solve_d2(self, node: _Node, inc: "_Incumbent", gap: float, is_root: bool = False, lb1: float = 0.0,
                 seed: tuple[int, int] = (-1, -1), two_phase: bool = False) -> float:
        """Depth-two sub-problem: Alg. 1 over all root features at once, in rounds.

        Each round pops every open interval of every feature, shrinks or drops it with IS
        and SP (Eqs. 11-12) against the current incumbent, and evaluates the surviving
        intervals' midpoints -- or, when the node is small, several equally spaced points
        per interval so that a round fills ``round_elems`` -- with one call of the batched
        Alg. 2 kernel.  The evaluated points split the intervals; NB (Eq. 9) trims the
        pieces.  The rules are sound for any evaluation order and the bounds are tie-aware,
        so the result is the same tree as with the sequential Alg. 1.

        With a minimum leaf size: ``lb1`` is a lower bound on every split (the unconstrained
        optimum), ``seed`` a root split (feature, position) the compiled search evaluates
        first (the unconstrained optimum's; (-1, -1): none). ``two_phase`` (compiled search
        only): also find the optimum without the minimum leaf size, first, in the same
        search (``kernels.d2_two_phase``), and return it (``inf`` when above the bound);
        otherwise returns 0.
        """
        if self.compiled and self.d2_sequential:
            if two_phase:
                return self._solve_d2_two_phase(node, inc, gap)
            self._solve_d2_compiled(node, inc, gap, is_root, lb1, seed)
            return 0.0
        if self.min_leaf > 1:
            self._solve_d2_minleaf(node, inc, gap, lb1)
            return 0.0
        rules = self.pruning
        tol = self.tol
        ordl, posl = self.local_index(node)
        wcum = self.wcum(node)
        pending = []
        for f in range(self.p):
            cuts = self.cuts(node, f)
            if cuts.shape[0]:
                pending.append((_FeatState(f, cuts, wcum[f, cuts].tolist()), 0, cuts.shape[0] - 1))
        per_round = max(1, self.round_elems // (self.p * node.m))
        best_fz = None
        while pending:
            self.check_time()
            alive = []
            strict, tie, incf, incs = inc.bounds(gap)
            for fs, i, j in pending:
                f = fs.f
                # inclusive bound for the whole interval (inlined Incumbent.bound_for)
                B = tie if (f < incf or (f == incf and j < incs)) else strict
                V = fs.V
                k = bisect.bisect_left(V, i)
                u = V[k - 1] if k > 0 else None
                v = V[k] if k < len(V) else None
                if rules.interval_shrinking:  # P_IS, Eq. (11)
                    wc = fs.wc
                    if fs.ML > i:
                        i = fs.ML
                    if fs.MR < j:
                        j = fs.MR
                    if u is not None and fs.th[u] - B > 0:
                        i = max(i, bisect.bisect_left(wc, wc[u] + (fs.th[u] - B) - tol))
                    if v is not None and fs.th[v] - B > 0:
                        j = min(j, bisect.bisect_right(wc, wc[v] - (fs.th[v] - B) + tol) - 1)
                    if i > j:
                        continue
                if rules.sub_interval:  # P_SP, Eq. (12)
                    if (fs.thL[u] if u is not None else 0.0) + (fs.thR[v] if v is not None else 0.0) > B:
                        self.stats["intervals_pruned_sp"] += 1
                        continue
                alive.append((fs, i, j))
            if not alive:
                break
            k_each = max(1, per_round // len(alive))
            todo = []  # (feature state, interval start, interval end, points)
            for fs, i, j in alive:
                n_pts = j - i + 1
                if k_each >= n_pts:
                    pts = list(range(i, j + 1))
                elif k_each == 1:
                    pts = [(i + j) // 2]
                else:
                    pts = sorted({i + (t * n_pts) // (k_each + 1) for t in range(1, k_each + 1)})
                todo.append((fs, i, j, pts))
            f1s = np.fromiter((fs.f for fs, _, _, pts in todo for _ in pts), dtype=np.int64)
            ws = [w for _, _, _, pts in todo for w in pts]
            zs = np.fromiter((fs.cuts[w] for fs, _, _, pts in todo for w in pts), dtype=np.int32)
            tLs, tRs = self.d2_batch(node, ordl, posl, f1s, zs)
            self.stats["splits_evaluated"] += len(ws)
            tws = (tLs + tRs).tolist()
            tLs = tLs.tolist()
            tRs = tRs.tolist()
            improved = False
            for k, f in enumerate(f1s.tolist()):
                if tws[k] <= inc.bound_for(f, ws[k]) - gap:  # rare: usually no improvement
                    inc.set(tws[k], None, f, ws[k])  # tree built once at the end
                    best_fz = (f, int(zs[k]))
                    improved = True
            if improved and is_root:  # anytime: keep the root incumbent current
                assert best_fz is not None
                self.d2_tree(node, inc, best_fz)
                self.report_root(inc)
            pending = []
            k = 0
            strict, tie, incf, incs = inc.bounds(gap)
            use_is = rules.interval_shrinking
            use_nb = rules.neighbourhood
            for fs, i, j, pts in todo:
                f = fs.f
                wc = fs.wc
                V, th, thL, thR = fs.V, fs.th, fs.thL, fs.thR
                f_before = f < incf
                f_same = f == incf
                prev_hi = i  # start of the piece left of the current point
                for w in pts:
                    tL, tR, tw = tLs[k], tRs[k], tws[k]
                    k += 1
                    bisect.insort(V, w)
                    th[w], thL[w], thR[w] = tw, tL, tR
                    # bounds left / right of w (inlined Incumbent.bound_for)
                    b_left = tie if (f_before or (f_same and w - 1 < incs)) else strict
                    b_right = tie if (f_before or (f_same and w + 1 < incs)) else strict
                    if use_is:  # Theorem 2
                        if tL <= 0.0 and tw > (tie if (f_before or (f_same and 0 < incs)) else strict):
                            fs.ML = max(fs.ML, w + 1)
                        if tR <= 0.0 and tw > b_right:
                            fs.MR = min(fs.MR, w - 1)
                    lo, hi = w - 1, w + 1
                    if use_nb:  # P_NB, Eq. (9)
                        r_ = tw - b_left
                        if r_ > 0:
                            lo = min(lo, bisect.bisect_right(wc, wc[w] - r_ + tol) - 1)
                        r_ = tw - b_right
                        if r_ > 0:
                            hi = max(hi, bisect.bisect_left(wc, wc[w] + r_ - tol))
                    if prev_hi <= lo:
                        pending.append((fs, prev_hi, lo))
                    prev_hi = hi
                if prev_hi <= j:
                    pending.append((fs, prev_hi, j))
        if best_fz is not None and inc.f >= 0 and inc.tree is None:
            self.d2_tree(node, inc, best_fz)
        return 0.0

    def _solve_d2_compiled(self, node: _Node, inc: "_Incumbent", gap: float, is_root: bool, lb1: float = 0.0,
                           seed: tuple[int, int] = (-1, -1)) -> None:
        """Depth-two sub-problem with Alg. 1 compiled (``kernels.d2_search``): the open
        intervals of all root features are searched breadth first (as the rounds of
        :meth:`solve_d2`, but one split at a time against the current incumbent), with the
        rules and tie-aware bounds of :meth:`branch` -- the same optimum and tie-broken tree
        as the numpy path.  Runs in chunks of evaluations with time checks (and root
        anytime reports) between; the tree is materialised once, with ``d2_errors``, and
        below the root only when it ends up in the returned tree (:class:`_LazyD2`)."""
        K = self.K
        ml = self.min_leaf
        kern = _load_kernels()
        gap = float(gap)  # an int gap (integral weights) would compile the kernels a second time
        lb1 = float(lb1)  # (the same for the lower bound)
        sgn = self.sgn if self.sgn is not None else self.wd
        inc_arr = np.array([inc.cost, inc.f, inc.s, 1.0 if inc.active else 0.0, inc.outer,
                            inc.d_strict, inc.d_tie], dtype=np.float64)
        self.check_time()
        if not is_root:  # one compiled call, scalars out: most sub-problems end here
            done, bf, bz, n_evals, n_sp = kern.d2_quick(
                node.rows, node.order, node.vals, self.y, self.w, self.wd, sgn, K, self.scratch_pos, inc_arr,
                gap, self.tol, self.rules_arr, self.d2_budget, self.wide, ml, lb1, seed[0], seed[1])
            if done:
                self.stats["splits_evaluated"] += int(n_evals)
                self.stats["d2_calls"] += int(n_evals)
                self.stats["intervals_pruned_sp"] += int(n_sp)
                if bf >= 0:
                    inc.set(float(inc_arr[0]), None, int(inc_arr[1]), int(inc_arr[2]))
                    f, z = int(bf), int(bz)
                    inc.tree = _LazyD2(-1, node.rows, f, z, self.threshold(node, f, z))
                return
            # a large sub-problem: start over with the resumable calls (time checks between)
            inc_arr = np.array([inc.cost, inc.f, inc.s, 1.0 if inc.active else 0.0, inc.outer,
                                inc.d_strict, inc.d_tie], dtype=np.float64)
            self.check_time()
        # one compiled call prepares the node, starts the queue and searches (often to the end)
        (done, ordl, posl, valid, wcum, cuts, cstart, wcs, S, Sall, tot, cls, wts, cacc, queue, st, tcL, tcR, thL,
         thR, mlr, counts, Atot, Btot, max_evals, xL, xR) = kern.d2_run(
            node.rows, node.order, node.vals, self.y, self.w, self.wd, sgn, K, self.scratch_pos, inc_arr, gap,
            self.tol, self.rules_arr, self.d2_budget, self.wide, ml, lb1, seed[0], seed[1], False, inc_arr)
        node.loc = (ordl, posl)  # kept for the tree (d2_tree) and other depth-two calls
        node.valid = valid
        node._wcum = wcum
        if K != 2:
            node.clw = (cls, wts)
        kind = 2 if K == 2 else 0 if self.wide else K
        best_seen = -1.0
        while True:
            if st[2] >= 0 and inc_arr[0] != best_seen:
                best_seen = inc_arr[0]
                inc.set(float(inc_arr[0]), None, int(inc_arr[1]), int(inc_arr[2]))
                if is_root and not done:  # anytime: keep the root incumbent current (built if it is the answer)
                    f, z = int(st[2]), int(st[3])
                    inc.tree = _LazyD2(-1, node.rows, f, z, self.threshold(node, f, z))
                    self.report_root(inc)
            if done:
                break
            self.check_time()
            done = kern.d2_search(kind, ordl, posl, S, Sall, wcum, Atot, Btot, cls, wts, tot, cacc, valid,
                                  cuts, cstart, wcs, inc_arr, gap, self.tol, self.rules_arr, st, queue,
                                  tcL, tcR, thL, thR, mlr, counts, max_evals, ml, lb1, False, inc_arr, xL, xR)
        self.stats["splits_evaluated"] += int(counts[0])
        self.stats["d2_calls"] += int(counts[0])
        self.stats["intervals_pruned_sp"] += int(counts[1])
        if st[2] >= 0:
            inc.set(float(inc_arr[0]), None, int(inc_arr[1]), int(inc_arr[2]))
            if is_root:
                self.d2_tree(node, inc, (int(st[2]), int(st[3])))
                self.report_root(inc)
            else:  # most depth-two optima never reach the final tree: build on demand
                f, z = int(st[2]), int(st[3])
                inc.tree = _LazyD2(-1, node.rows, f, z, self.threshold(node, f, z))

    def solve_d2_quick(self, node: _Node, bound: float, cost_leaf: float, label: int) -> Optional[_Res]:
        """A depth-two sub-problem below the root without a gap, as ``_Solver._solve`` with
        :meth:`_solve_d2_compiled` gives it (Alg. 1 over every root feature with the Alg. 2
        evaluations, compiled: ``kernels.d2_quick``), without the incumbent object and the
        calls between: the same result, the tree left lazy (``_LazyD2``). ``None`` when the
        sub-problem is over the compiled call's budget (the caller takes the general path,
        which resumes with time checks between)."""
        if cost_leaf <= 0.0 or node.m < 2 * self.min_leaf:
            return _Res(cost_leaf, DPLeaf(label), cost_leaf)
        has_leaf = cost_leaf <= bound
        inc_arr = np.array([cost_leaf if has_leaf else math.inf, -1.0, -1.0, 1.0 if has_leaf else 0.0, bound,
                            self.d_strict, self.d_tie])
        self.check_time()
        done, bf, bz, n_evals, n_sp = self.kern.d2_quick(
            node.rows, node.order, node.vals, self.y, self.w, self.wd, self.sgn if self.sgn is not None else self.wd,
            self.K, self.scratch_pos, inc_arr, 0.0, self.tol, self.rules_arr, self.d2_budget, self.wide,
            self.min_leaf, 0.0, -1, -1)
        if not done:
            return None
        stats = self.stats
        stats["splits_evaluated"] += n_evals
        stats["d2_calls"] += n_evals
        stats["intervals_pruned_sp"] += n_sp
        if bf >= 0:
            cost = float(inc_arr[0])
            f, z = int(bf), int(bz)
            return _Res(cost, _LazyD2(-1, node.rows, f, z, self.threshold(node, f, z)), max(0.0, cost))
        if has_leaf:
            return _Res(cost_leaf, DPLeaf(label), cost_leaf)
        return _Res(math.inf, None, self.lb_after_fail(bound))

    def _solve_d2_two_phase(self, node: _Node, inc: "_Incumbent", gap: float) -> float:
        """Depth-two sub-problem below the root with a minimum leaf size, and its optimum
        without one (returned; ``inf`` when above the bound), from the two-phase compiled
        search (``kernels.d2_two_phase``): one call when small, else the same phases
        resumed in chunks with time checks between. The tree is left lazy (``_LazyD2``)."""
        gap = float(gap)  # an int gap (integral weights) would compile the kernels a second time
        K = self.K
        ml = self.min_leaf
        kern = _load_kernels()
        sgn = self.sgn if self.sgn is not None else self.wd

        def fresh() -> np.ndarray:
            return np.array([inc.cost, inc.f, inc.s, 1.0 if inc.active else 0.0, inc.outer, inc.d_strict,
                             inc.d_tie], dtype=np.float64)

        inc_arr = fresh()
        inc1 = inc_arr.copy()
        self.check_time()
        done, bf, bz, n_evals, n_sp, n_first = kern.d2_two_phase(
            node.rows, node.order, node.vals, self.y, self.w, self.wd, sgn, K, self.scratch_pos, inc_arr, inc1, gap,
            self.tol, self.rules_arr, self.d2_budget, self.wide, ml)
        if not done:  # a large sub-problem: start over with the resumable calls
            inc_arr = fresh()
            inc1 = inc_arr.copy()
            self.check_time()
            (done, ordl, posl, valid, wcum, cuts, cstart, wcs, S, Sall, tot, cls, wts, cacc, queue, st, tcL, tcR, thL,
             thR, mlr, counts, Atot, Btot, max_evals, xL, xR) = kern.d2_run(
                node.rows, node.order, node.vals, self.y, self.w, self.wd, sgn, K, self.scratch_pos, inc1, gap,
                self.tol, self.rules_arr, self.d2_budget, self.wide, ml, 0.0, -1, -1, True, inc_arr)
            kind = 2 if K == 2 else 0 if self.wide else K
            while not done:
                self.check_time()
                done = kern.d2_search(kind, ordl, posl, S, Sall, wcum, Atot, Btot, cls, wts, tot, cacc, valid,
                                      cuts, cstart, wcs, inc1, gap, self.tol, self.rules_arr, st, queue,
                                      tcL, tcR, thL, thR, mlr, counts, max_evals, ml, 0.0, True, inc_arr, xL, xR)
            n_first = counts[0]
            bf = bz = -1
            if inc1[3] != 0.0:
                queue, st, mlr = kern.d2_phase2(cstart, cuts, node.m, ml, tcL, tcR, thL, xL, xR, inc_arr)
                done = False
                while not done:
                    self.check_time()
                    done = kern.d2_search(kind, ordl, posl, S, Sall, wcum, Atot, Btot, cls, wts, tot, cacc, valid,
                                          cuts, cstart, wcs, inc_arr, gap, self.tol, self.rules_arr, st, queue,
                                          tcL, tcR, thL, thR, mlr, counts, max_evals, ml, inc1[0] - gap, False,
                                          inc_arr, xL, xR)
                bf, bz = st[2], st[3]
            n_evals, n_sp = counts[0], counts[1]
        self.stats["splits_evaluated"] += int(n_evals)
        self.stats["d2_calls"] += int(n_evals)
        self.stats["intervals_pruned_sp"] += int(n_sp)
        self.stats["phase1_splits_evaluated"] = self.stats.get("phase1_splits_evaluated", 0) + int(n_first)
        if bf >= 0:
            inc.set(float(inc_arr[0]), None, int(inc_arr[1]), int(inc_arr[2]))
            f, z = int(bf), int(bz)
            inc.tree = _LazyD2(-1, node.rows, f, z, self.threshold(node, f, z))
        return float(inc1[0]) if inc1[3] != 0.0 else math.inf

    def d2_tree(self, node: _Node, inc: "_Incumbent", best_fz: tuple[int, int]) -> None:
        """Materialise the incumbent depth-two tree (Alg. 2 with argmins)."""
        f, z = best_fz
        pos = self.scratch_pos
        pos[node.order[f]] = np.arange(node.m, dtype=np.int32)
        P = pos[node.order]
        inc.tree = self.d2_split(node, f, P, z, True)[2]

    def materialise(self, tree: DPNode) -> DPNode:
        """``tree`` with every :class:`_LazyD2` replaced by its depth-two tree."""
        if isinstance(tree, _LazyD2):
            root = self.root
            assert root is not None
            if not self.materialise_numpy and self.min_leaf == 1:  # one compiled call, no intermediate node
                out = np.empty(9)
                _load_answer_kernels().d2_subtree(tree.rows, root.order, root.vals, self.y, self.wd, self.K, tree.f1, tree.z,
                                           float(self.big), self.d_strict, self.tol, self.scratch_mask, out, self.wide)
                sides: list[DPNode] = []
                for o in (1, 5):
                    if out[o] < 0:
                        sides.append(DPLeaf(int(out[o + 2])))
                    else:
                        sides.append(DPSplit(int(out[o]), float(out[o + 1]), DPLeaf(int(out[o + 2])),
                                             DPLeaf(int(out[o + 3]))))
                return DPSplit(tree.f1, float(out[0]), sides[0], sides[1])
            mask = self.scratch_mask
            mask[tree.rows] = True
            sel = mask[root.order]
            mask[tree.rows] = False
            m = tree.rows.shape[0]
            node = _Node(tree.rows, root.order[sel].reshape(self.p, m), root.vals[sel].reshape(self.p, m))
            # the node's arrays from one compiled pass (lazy subtrees only come from the
            # compiled search): local ids, boundaries and the class and weight by position
            # (asked for as multiclass, so that they are built for two classes too)
            prep = _load_kernels().d2_prepare(node.rows, node.order, node.vals, self.y, self.w, self.wd, self.wd,
                                              max(self.K, 3), self.scratch_pos, True)
            node.loc = (prep[0], prep[1])
            node.valid = prep[2]
            node.clw = (prep[10], prep[11])
            sub = self._d2_split_compiled(node, tree.f1, tree.z)[2]
            assert sub is not None
            return sub
        if isinstance(tree, DPSplit):
            left, right = self.materialise(tree.left), self.materialise(tree.right)
            if left is not tree.left or right is not tree.right:
                return DPSplit(tree.feature, tree.threshold, left, right)
        return tree

    def _solve_d2_minleaf(self, node: _Node, inc: "_Incumbent", gap: float, lb1: float = 0.0) -> None:
        """Depth-two sub-problem with a minimum leaf size without the compiled search:
        Alg. 1 per feature (:meth:`search._Solver.branch`, with its minimum-leaf bounds)."""
        for f in range(self.p):
            if inc.tree is not None and inc.cost <= lb1 and (f > inc.f or not self.canonical_ties):
                continue  # no split can beat an incumbent at the lower bound
            self.branch(node, 2, f, inc, 1, gap, lb1)


def _two_side_errors(C: np.ndarray, tot: np.ndarray) -> np.ndarray:
    """Errors of the two leaves of every split, from cumulative class weights.

    ``C`` has shape (K, p, m) (weights of each class at or before position i), ``tot`` the
    class totals (K,).  Returns (p, m): sum - max on each side (Eq. 13 / Alg. 2).
    """
    if C.shape[0] == 2:
        a, b = C[0], C[1]
        ra, rb = tot[0] - a, tot[1] - b
        return np.minimum(a, b) + np.minimum(ra, rb)
    R = tot[:, None, None] - C
    return (C.sum(axis=0) - C.max(axis=0)) + (R.sum(axis=0) - R.max(axis=0))
