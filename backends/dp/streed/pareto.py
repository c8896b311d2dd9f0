"""Global constraints by Pareto fronts (issue 14; STreeD, van der Linden, de Weerdt &
Demirović, NeurIPS 2023, Sec. 4.4 and the group-fairness tasks of its Sec. 5).

Input: a ``TreeSearch`` with global constraints (``globals``, ``uses``). Output: the same
an ``EngineResult`` as ``root.optimal_constrained_tree``.

Every objective level and every global row is a *component*: an integer quantity that adds
up over the tree — over its leaves (a row of type t predicted c contributes
``M[t, c, k]`` per unit of weight; a row's type is its class and its group memberships, so
a leaf's contribution depends only on its weight per type), over its decision nodes (a
constant per split, ``nodes``, and a cost per candidate times the weight reaching the
node, ``expected_cost``) and over the set of columns it tests (``features_used``, ``uses``:
a bitmask). All coefficients are exact rationals, scaled once to integers (weights by the
least common denominator, each component by its own), so fronts are sets of int64
vectors and dominance is exact.

The recursion is the DP of ``solve.py`` (rows, depth budget, branch state; the path
constraints and sizes restrict the candidates the same way), but a subproblem's value is
its Pareto front (``fronts.nondominated``): its leaf options and, per candidate split, the
sums of every pair of the children's front vectors. Depth-one subproblems are solved for
every candidate at once from the type weights on each side. Each vector is pruned when it
cannot meet a row at the root whatever the rest of the tree adds (the rows outside the
subproblem contribute at least their least and at most their largest contribution over the
classes: the bound tests of STreeD's Sec. 4.5), and when the first objective level cannot
beat the incumbent; pairs of child vectors are only formed within these caps
(``fronts.pairs``, a range search), and at the root, when one level and one row (``==`` or
the two rows of ``abs``) decide, each left vector takes only its best partner
(``fronts.best_pairs``, a range-minimum query). At the root every row is checked exactly and the lexicographic
minimum of the levels is taken. Anytime: depths 0..D in turn (iterative deepening), each
root feasible for D.
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from odt.compiler import limits
from odt.compiler.support import unsupported
from odt.compiler.search import GlobalConstraint, TreeSearch, formula_columns, formula_holds

from ..anytime import EngineResult, Incumbent, Timeout, deepen, finish
from ..task import task_of
from .binarize import binarize
from .branch import ingredients
from . import f1
from .fronts import MASK_EXACT, MASK_IGNORE, MASK_SUBSET, best_pairs, nondominated, pairs
from .root import _tree
from .solve import Search

BIG = 1 << 61  # "unbounded" for the rest bounds (every |value| stays below 2**60)
LIMIT = 1 << 60


@dataclass
class Front:
    """Non-dominated vectors of one subproblem and how each is made: ``f`` the candidate
    (-1 a leaf, ``a`` its class), else ``a``/``b`` the indices into the children's fronts
    (at depth one: the children's classes)."""

    V: np.ndarray  # (F, K) int64
    mask: np.ndarray  # (F,) int64
    f: np.ndarray  # (F,) int64
    a: np.ndarray
    b: np.ndarray

    def __len__(self) -> int:
        return int(self.V.shape[0])

    def take(self, idx: np.ndarray) -> "Front":
        return Front(self.V[idx], self.mask[idx], self.f[idx], self.a[idx], self.b[idx])


@dataclass
class Components:
    """The quantities of the search as integers (see the module docstring)."""

    M: np.ndarray  # (T, C, K) leaf coefficient per row type, class, component
    node_const: np.ndarray  # (K,) per split
    node_cost: np.ndarray  # (m, K) per split on candidate f, times the weight reaching it
    fu: np.ndarray  # (K,) coefficient of the number of tested columns
    const: np.ndarray  # (K,)
    sense: tuple[str, ...]  # "min" (objective levels), "<=" or "=="
    scale: tuple[Fraction, ...]  # integer value = scale * value
    exact: np.ndarray  # columns compared exactly by the filter
    ordered: np.ndarray  # columns compared by <=
    mirrors: tuple[tuple[int, int], ...] = ()  # (i, j): component j is -component i (abs rows)


def _lcm(values) -> int:
    out = 1
    for v in values:
        out = out * v.denominator // math.gcd(out, v.denominator)
    return out


def integer_weights(w: np.ndarray) -> tuple[np.ndarray, Fraction]:
    """Row weights as integers and the factor ``s`` they were multiplied by (exact: each
    weight is the rational the checker reads, denominators up to 10**9)."""
    uniq, inverse = np.unique(w, return_inverse=True)
    fr = [Fraction(float(x)).limit_denominator(10**9) for x in uniq]
    s = _lcm(fr)
    return np.array([int(f * s) for f in fr], dtype=np.int64)[inverse.reshape(-1)], Fraction(s)


def _leaf_matrix(term, types: list[tuple[int, tuple[bool, ...]]], C: int) -> np.ndarray:
    """(T, C) 0/1 contribution per unit weight of a leaf quantity, per row type and class."""
    out = np.zeros((len(types), C), dtype=object)
    for t, (y, member) in enumerate(types):
        if term.group is not None and not member[term.group]:
            continue
        for c in range(C):
            if term.matrix is not None:  # a cost matrix (issue 26): its entry per unit weight
                out[t, c] = Fraction(term.matrix[y][c])
                continue
            pos = 1 if term.klass is None or term.kind == "predicted" else term.klass  # tp(c): c positive
            hit = {"errors": c != y, "predicted": c == term.klass, "tp": c == pos and y == pos,
                   "fp": c == pos and y != pos, "tn": c != pos and y != pos, "fn": c != pos and y == pos}[term.kind]
            out[t, c] = Fraction(int(hit))
    return out


def components(problem: TreeSearch, cand_dim: np.ndarray, s: Fraction, type_keys: list, total_w: Fraction):
    """The ``Components`` of ``problem``: its levels, caps and global rows."""
    C = problem.n_classes
    T = len(type_keys)
    m = cand_dim.shape[0]
    rows: list[tuple[str, np.ndarray, Fraction, list[Fraction], Fraction, Fraction]] = []
    # (sense, leaf (T, C) Fractions, node const, node cost per candidate, fu, const), all per unit weight

    def errors_leaf(coef: Fraction) -> np.ndarray:
        out = np.zeros((T, C), dtype=object)
        for t, (y, _) in enumerate(type_keys):
            for c in range(C):
                out[t, c] = coef if c != y else Fraction(0)
        return out

    zero_cost = [Fraction(0)] * m
    if problem.confusion is not None and problem.confusion.f1:  # issue 26: (fp, fn) fronts, scored at the root
        rows.extend(f1.rows(type_keys, C, zero_cost, problem.confusion.positive))
    for lv in problem.levels if not rows else ():
        rows.append(("min", errors_leaf(lv.errors), lv.nodes, zero_cost, Fraction(0), lv.constant))
    if problem.max_nodes is not None:
        rows.append(("<=", errors_leaf(Fraction(0)), Fraction(1), zero_cost, Fraction(0), -Fraction(problem.max_nodes)))
    if problem.max_errors is not None:
        rows.append(("<=", errors_leaf(Fraction(1)), Fraction(0), zero_cost, Fraction(0), -problem.max_errors))
    for g in problem.globals:
        rows.append(_row(g, type_keys, C, cand_dim, total_w))
    K = len(rows)
    M = np.zeros((T, C, K), dtype=np.int64)
    node_const = np.zeros(K, dtype=np.int64)
    node_cost = np.zeros((m, K), dtype=np.int64)
    fu = np.zeros(K, dtype=np.int64)
    const = np.zeros(K, dtype=np.int64)
    scales = []
    for k, (sense, leaf, nc, cost, f, c0) in enumerate(rows):
        # s * value = sum cnt_t * leaf + s * nc * splits + cost * cnt(S) + s * f * |cols| + s * c0
        vals = list(leaf.ravel()) + [s * nc, s * f, s * c0] + list(cost)
        D = _lcm(Fraction(v) for v in vals)
        scales.append(s * D)
        M[:, :, k] = np.array([[int(Fraction(v) * D) for v in r] for r in leaf], dtype=np.int64).reshape(T, C)
        node_const[k] = int(s * nc * D)
        node_cost[:, k] = [int(v * D) for v in cost]
        fu[k] = int(s * f * D)
        const[k] = int(s * c0 * D)
    senses = tuple(r[0] for r in rows)
    exact = [k for k in range(K) if senses[k] == "=="]
    ordered = [k for k in range(K) if senses[k] != "=="]
    mirrors: list[tuple[int, int]] = []
    for i in range(K):  # the two rows of abs(e) <= d pin e: one exact column instead of two ordered
        for j in range(i + 1, K):
            if i in ordered and j in ordered and senses[i] == senses[j] == "<=" and np.array_equal(M[:, :, i], -M[:, :, j]) \
                    and node_const[i] == -node_const[j] and np.array_equal(node_cost[:, i], -node_cost[:, j]) \
                    and fu[i] == -fu[j]:
                ordered.remove(i)
                ordered.remove(j)
                exact.append(i)
                mirrors.append((i, j))
    return Components(M, node_const, node_cost, fu, const, senses, tuple(scales), np.array(exact, dtype=np.int64),
                      np.array(ordered, dtype=np.int64), tuple(mirrors))


def _row(g: GlobalConstraint, type_keys, C: int, cand_dim: np.ndarray, total_w: Fraction):
    T = len(type_keys)
    m = cand_dim.shape[0]
    leaf = np.full((T, C), Fraction(0), dtype=object)
    nc, f = Fraction(0), Fraction(0)
    cost = [Fraction(0)] * m
    for term in g.terms:
        if term.kind == "nodes":
            nc += term.coef
        elif term.kind == "features_used":
            f += term.coef
        elif term.kind == "expected_cost":
            assert term.costs is not None
            per = term.coef / (total_w or Fraction(1))
            cost = [cost[i] + per * term.costs[int(cand_dim[i])] for i in range(m)]
        else:
            leaf = leaf + term.coef * _leaf_matrix(term, type_keys, C)
    return (g.op, leaf, nc, cost, f, g.constant)


def _popcount(x: int) -> int:
    return bin(x & ((1 << 64) - 1)).count("1")


def holds(formula: tuple, mask: int, bit_of: dict[str, int]) -> bool:
    """The value of a ``uses`` formula on the set of tested columns ``mask``."""

    def used(column: str) -> bool:
        b = bit_of.get(column)
        return b is not None and bool(mask >> b & 1)

    return formula_holds(formula, used)


#: the largest row types x classes table (and rows x row types matrix) the front DP builds:
#: its leaf values are exact fractions per (type, class), so a class per row (issue 24)
#: would make rows^2 of them before the first subproblem
MAX_TYPE_CELLS = 2_000_000


def _refuse_many_types(types: int, classes: int, rows: int) -> None:
    """A refusal (``compiler.support.unsupported``) when the front DP's tables would exceed ``MAX_TYPE_CELLS``."""
    if types * classes > MAX_TYPE_CELLS or rows * types > 25 * MAX_TYPE_CELLS:
        raise unsupported(
            "this program's group constraints with this many classes",
            f"its Pareto-front search keeps a value per row type (class and groups) and predicted class, "
            f"{types:,} x {classes:,}, more than {MAX_TYPE_CELLS:,}", backend="dp", takers=("maxsat", "cp"),
            hint="merge rare classes into one (the target has a class for almost every row?), or drop the "
                 "group constraints to let the plain dp search take it")


class FrontSearch:
    """One program's front DP (see the module docstring)."""

    def __init__(self, problem: TreeSearch, deadline: float | None) -> None:
        self.problem = problem
        cand = binarize(problem.X, problem.dims)
        self.cand = cand
        ingr = ingredients(problem, cand.dim)
        pairs = np.array([(s.first, s.second) for s in problem.same_leaf], dtype=np.int64).reshape(-1, 2)
        self.base = Search(cand.B, problem.y, problem.weights, task_of(problem), ingr, problem.min_leaf,
                           problem.min_node, pairs, False, None)
        self.ingr = ingr
        self.B = cand.B
        self.Bf = cand.B.astype(np.float64)
        n = problem.X.shape[0]
        self.wint, s = integer_weights(problem.weights)
        self.s = s
        total_w = Fraction(int(self.wint.sum())) / s
        code = problem.y.astype(np.int64) * (1 << len(problem.groups))
        for i, g in enumerate(problem.groups):
            code = code + (np.asarray(g, dtype=np.int64) << i)
        uniq, inverse = np.unique(code, return_inverse=True)
        _refuse_many_types(len(uniq), problem.n_classes, n)
        self.type_of = inverse.reshape(-1).astype(np.int64)
        type_keys = [(int(k) >> len(problem.groups), tuple(bool(int(k) >> i & 1) for i in range(len(problem.groups))))
                     for k in uniq]
        self.T = len(uniq)
        self.Wt = np.zeros((n, self.T))
        self.Wt[np.arange(n), self.type_of] = self.wint
        self.comp = components(problem, cand.dim, s, type_keys, total_w)
        comp = self.comp
        self.K = comp.M.shape[2]
        self.Mflat = np.ascontiguousarray(comp.M.reshape(self.T, -1))  # (T, C * K)
        self.Wt1 = np.column_stack([self.Wt, np.ones(n)])
        #: every leaf: errors <= e (C11): per row type, 1 where a leaf labelled c misclassifies it, and
        #: the bound in the scaled integer weights (None: no bound)
        self.wrong: np.ndarray | None = None
        self.leaf_cap = 0
        if problem.max_leaf_errors is not None:
            ys = np.array([y for y, _ in type_keys], dtype=np.int64)
            self.wrong = (ys[:, None] != np.arange(problem.n_classes)[None, :]).astype(np.int64)
            self.leaf_cap = math.floor(problem.max_leaf_errors * s)
        self.Mmin = comp.M.min(axis=1)  # (T, K)
        self.Mmax = comp.M.max(axis=1)
        self.total = np.bincount(self.type_of, weights=self.wint, minlength=self.T).astype(np.int64)
        self.tot_lo = self.total @ self.Mmin
        self.tot_hi = self.total @ self.Mmax
        bound = int(self.wint.sum()) * (int(np.abs(comp.M).max(initial=0)) + int(np.abs(comp.node_cost).max(initial=0))
                                        * max(problem.depth, 1)) + (1 << problem.depth) * int(np.abs(comp.node_const).max(initial=0)) \
            + 64 * int(np.abs(comp.fu).max(initial=0)) + int(np.abs(comp.const).max(initial=0))
        if bound >= LIMIT:
            raise OverflowError("the scaled quantities of this program exceed 2**60: use cp or maxsat")
        self.neg_nodes = (comp.node_const < 0) | (comp.node_cost < 0).any(axis=0)
        self.pos_nodes = (comp.node_const > 0) | (comp.node_cost > 0).any(axis=0)
        # tested columns as bits: every column with features_used, the atoms' columns with uses
        columns = list(dict.fromkeys(problem.dims[int(j)].column for j in cand.dim))
        if comp.fu.any():
            tracked = columns
        else:
            tracked = [c for c in dict.fromkeys(a for f in problem.uses for a in formula_columns(f)) if c in columns]
        if len(tracked) > 62:
            raise OverflowError("features_used over more than 62 columns: use cp or maxsat")
        self.bit_of = {c: i for i, c in enumerate(tracked)}
        self.bits = np.array([1 << self.bit_of[problem.dims[int(j)].column] if problem.dims[int(j)].column in self.bit_of
                              else 0 for j in cand.dim], dtype=np.int64)
        self.ncols = len(tracked)
        if not tracked:
            self.mode = MASK_IGNORE
        elif problem.uses or any(comp.fu[k] < 0 or comp.sense[k] == "==" for k in range(self.K) if comp.fu[k]):
            self.mode = MASK_EXACT
        else:
            self.mode = MASK_SUBSET
        same_cost = not comp.node_cost.size or bool((np.ptp(comp.node_cost, axis=0) == 0).all())
        self.dedupe = self.mode == MASK_IGNORE and ingr.trivial and not len(pairs) and same_cost
        self.deadline = deadline
        self.cache: dict[tuple, Front] = {}
        self.calls = 0
        self.max_front = 0
        #: without uses formulas and column counts, a vector surviving the prune at the root is feasible
        self.root_exact = not problem.uses and not comp.fu.any()
        #: one objective level and one constraint, an == row or the two rows of abs(e) <= d: at the root
        #: the best right vector per left vector is a range-minimum query on that row (``best_pairs``)
        others = [k for k in range(self.K) if comp.sense[k] != "min"]
        rows_of = {k for pair in comp.mirrors for k in pair}
        self.root_window = None
        #: maximize f1 (issue 26): no incumbent on component 0; vectors are pruned by ``f1.bound``
        self.scored = problem.confusion is not None and problem.confusion.f1
        pos = problem.confusion.positive if problem.confusion is not None and self.scored else 1
        self.positive = int(self.wint[problem.y == pos].sum())
        self.best_f1: Fraction | None = None
        if self.root_exact and not self.scored and len(problem.levels) == 1 and comp.sense[0] == "min":
            if len(others) == 1 and comp.sense[others[0]] == "==":
                self.root_window = others[0]
            elif len(comp.mirrors) == 1 and set(others) == rows_of:
                self.root_window = comp.mirrors[0][0]
        self.ub: int | None = None  # incumbent of the first level, scaled, its constant included

    # ------------------------------------------------------------------ bounds
    def _rest(self, cnt: np.ndarray, root: bool) -> tuple[np.ndarray, np.ndarray]:
        """Least and largest contribution of everything outside a subproblem with type
        weights ``cnt``: the other rows' leaves and the nodes above."""
        if root:
            z = np.zeros(self.K, dtype=np.int64)
            return z, z
        lo = self.tot_lo - cnt @ self.Mmin
        hi = self.tot_hi - cnt @ self.Mmax
        lo = np.where(self.neg_nodes, -BIG, lo)
        hi = np.where(self.pos_nodes, BIG, hi)
        return lo, hi

    def _prune(self, fr: Front, cnt: np.ndarray, root: bool) -> Front:
        if not len(fr):
            return fr
        comp = self.comp
        lo, hi = self._rest(cnt, root)
        V = fr.V
        if self.ncols and comp.fu.any():
            pop = np.array([_popcount(int(x)) for x in fr.mask], dtype=np.int64)
            fu_lo = np.where(comp.fu >= 0, comp.fu[None, :] * pop[:, None], comp.fu[None, :] * self.ncols)
            fu_hi = np.where(comp.fu >= 0, comp.fu[None, :] * self.ncols, comp.fu[None, :] * pop[:, None])
        else:
            fu_lo = fu_hi = np.zeros((1, self.K), dtype=np.int64)
        least = V + lo + fu_lo + comp.const
        most = V + hi + fu_hi + comp.const
        ok = np.ones(len(fr), dtype=bool)
        for k, sense in enumerate(comp.sense):
            if sense == "<=":
                ok &= least[:, k] <= 0
            elif sense == "==":
                ok &= (least[:, k] <= 0) & (most[:, k] >= 0)
        if self.ub is not None:
            ok &= least[:, 0] <= self.ub
        if self.scored:
            ok &= f1.bound(V, self.positive, self.best_f1)
        return fr if ok.all() else fr.take(np.flatnonzero(ok))

    def _caps(self, cnt: np.ndarray, root: bool) -> tuple[np.ndarray, np.ndarray]:
        """Per component, the range a vector of the subproblem must lie in to survive
        ``_prune`` (before the column counts, which ``_prune`` adds afterwards)."""
        comp = self.comp
        lo, hi = self._rest(cnt, root)
        fu_lo = np.where(comp.fu >= 0, 0, comp.fu * self.ncols)
        fu_hi = np.where(comp.fu >= 0, comp.fu * self.ncols, 0)
        cap_hi = np.full(self.K, BIG, dtype=np.int64)
        cap_lo = np.full(self.K, -BIG, dtype=np.int64)
        for k, sense in enumerate(comp.sense):
            if sense in ("<=", "=="):
                cap_hi[k] = min(BIG, -lo[k] - fu_lo[k] - comp.const[k])
            if sense == "==":
                cap_lo[k] = max(-BIG, -hi[k] - fu_hi[k] - comp.const[k])
        if self.ub is not None:
            cap_hi[0] = min(cap_hi[0], self.ub - lo[0] - comp.const[0])
        for i, j in comp.mirrors:  # V_j = -V_i: each row's upper cap is the other's lower cap
            cap_lo[i] = max(cap_lo[i], -cap_hi[j])
            cap_lo[j] = max(cap_lo[j], -cap_hi[i])
        return cap_lo, cap_hi

    def _filter(self, fr: Front) -> Front:
        if len(fr) <= 1:
            return fr
        keep = nondominated(fr.V[:, self.comp.exact], fr.V[:, self.comp.ordered], fr.mask, self.mode)
        return fr.take(keep)

    # ------------------------------------------------------------------ recursion
    def _leaves(self, S: np.ndarray, cnt: np.ndarray) -> Front:
        n, m = S.shape[0], self.base.min_leaf
        if n < m and (n > 0 or m > 1):  # a leaf too small (as ``Search.leaf``)
            return _empty(self.K)
        C = self.problem.n_classes
        V = (cnt @ self.Mflat).reshape(C, self.K)
        z = np.zeros(C, dtype=np.int64)
        fr = Front(V, z.copy(), np.full(C, -1, dtype=np.int64), np.arange(C, dtype=np.int64), z.copy())
        if self.wrong is not None:  # only the labels misclassifying at most the per-leaf bound
            fr = fr.take(np.flatnonzero(cnt @ self.wrong <= self.leaf_cap))
        return fr

    def solve(self, S: np.ndarray, d: int, state: tuple) -> Front:
        key = (S.tobytes(), d, state)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        self.calls += 1
        if self.deadline is not None and (time.perf_counter() > self.deadline or limits.halted() or self.base._due()):
            raise Timeout
        root = S.shape[0] == self.B.shape[0]
        cnt = np.bincount(self.type_of[S], weights=self.wint[S], minlength=self.T).astype(np.int64)
        parts = [self._leaves(S, cnt)]
        if self.base._splittable(S, d):
            if d == 1:
                parts.append(self._depth_one(S, cnt, state))
            else:
                parts.extend(self._general(S, d, cnt, state, root))
        fr = _concat(parts, self.K)
        fr = self._filter(self._prune(fr, cnt, root))
        self.max_front = max(self.max_front, len(fr))
        self.cache[key] = fr
        return fr

    def _node(self, f: np.ndarray | int, n_rows: int) -> np.ndarray:
        return self.comp.node_const + self.comp.node_cost[f] * n_rows

    def _depth_one(self, S: np.ndarray, cnt: np.ndarray, state: tuple) -> Front:
        RW = self.Bf[S].T @ self.Wt1[S]  # (m, T + 1): type weights and rows going right
        ok = self.base.allowed(S, state) & self.base.sizes_ok(RW[:, -1], S.shape[0])
        fs = np.flatnonzero(ok)
        if not fs.size:
            return _empty(self.K)
        right = np.rint(RW[fs, :-1]).astype(np.int64)  # (q, T) exact: integer weights below 2**53
        left = cnt[None, :] - right
        q, C, K = fs.shape[0], self.comp.M.shape[1], self.K
        Lv = (left @ self.Mflat).reshape(q, C, K)
        Rv = (right @ self.Mflat).reshape(q, C, K)
        node = self.comp.node_const[None, :] + self.comp.node_cost[fs] * int(cnt.sum())  # (q, K)
        V = Lv[:, :, None, :] + Rv[:, None, :, :] + node[:, None, None, :]  # (q, C, C, K)
        f = np.repeat(fs, C * C)
        a = np.tile(np.repeat(np.arange(C), C), q)
        b = np.tile(np.arange(C), q * C)
        fr = Front(V.reshape(-1, K), np.repeat(self.bits[fs], C * C), f.astype(np.int64), a, b)
        if self.wrong is not None:  # both leaves within the per-leaf bound
            ok_l, ok_r = left @ self.wrong <= self.leaf_cap, right @ self.wrong <= self.leaf_cap  # (q, C)
            fr = fr.take(np.flatnonzero((ok_l[:, :, None] & ok_r[:, None, :]).reshape(-1)))
        return fr

    def _general(self, S: np.ndarray, d: int, cnt: np.ndarray, state: tuple, root: bool) -> list[Front]:
        BS = self.B[S]
        ok = self.base.allowed(S, state) & self.base.sizes_ok(BS.sum(axis=0), S.shape[0])
        n_w = int(cnt.sum())
        out: list[Front] = []
        seen: set[bytes] = set()
        caps = None
        for f in np.flatnonzero(ok):
            col = BS[:, f]
            if self.dedupe:
                key = np.packbits(col).tobytes() if col[0] else np.packbits(~col).tobytes()
                if key in seen:
                    continue
                seen.add(key)
            child = self.ingr.child(state, int(f))
            L = self.solve(S[~col], d - 1, child)
            if not len(L):
                continue
            R = self.solve(S[col], d - 1, child)
            if not len(R):
                continue
            node = self._node(int(f), n_w)
            if caps is None:
                caps = self._caps(cnt, root)
            if root and self.root_window is not None:  # only the optimum matters at the root
                a, b = best_pairs(L.V, R.V, node, *caps, self.root_window)
            else:
                a, b = pairs(L.V, R.V, node, *caps)
            if not a.size:
                continue
            V = L.V[a] + R.V[b] + node
            mask = L.mask[a] | R.mask[b] | self.bits[f]
            fr = Front(V, mask, np.full(a.shape[0], f, dtype=np.int64), a, b)
            fr = self._filter(self._prune(fr, cnt, root))
            if len(fr):
                out.append(fr)
                if root and self.root_exact and not self.scored:  # the prune at the root is exact: each vector is a feasible tree
                    best = int(fr.V[:, 0].min()) + int(self.comp.const[0])
                    if self.ub is None or best < self.ub:
                        self.ub = best
                        caps = None
        return out

    # ------------------------------------------------------------------ root and decoding
    def feasible_values(self, fr: Front) -> tuple[np.ndarray, np.ndarray]:
        """The entries of a root front meeting every row and formula, and their values
        (the components with the constants and column counts added)."""
        comp = self.comp
        pop = np.array([_popcount(int(x)) for x in fr.mask], dtype=np.int64)
        final = fr.V + comp.fu[None, :] * pop[:, None] + comp.const[None, :]
        ok = np.ones(len(fr), dtype=bool)
        for k, sense in enumerate(comp.sense):
            if sense == "<=":
                ok &= final[:, k] <= 0
            elif sense == "==":
                ok &= final[:, k] == 0
        for formula in self.problem.uses:
            ok &= np.array([holds(formula, int(x), self.bit_of) for x in fr.mask], dtype=bool)
        return np.flatnonzero(ok), final

    def decode(self, S: np.ndarray, d: int, state: tuple, i: int) -> tuple:
        fr = self.solve(S, d, state)
        f = int(fr.f[i])
        if f < 0:
            return ("leaf", int(fr.a[i]))
        col = self.B[S, f]
        if d == 1:
            return ("split", f, ("leaf", int(fr.a[i])), ("leaf", int(fr.b[i])))
        child = self.ingr.child(state, f)
        return ("split", f, self.decode(S[~col], d - 1, child, int(fr.a[i])),
                self.decode(S[col], d - 1, child, int(fr.b[i])))


def _empty(K: int) -> Front:
    z = np.zeros(0, dtype=np.int64)
    return Front(np.zeros((0, K), dtype=np.int64), z, z, z, z)


def _concat(parts: list[Front], K: int) -> Front:
    parts = [p for p in parts if len(p)]
    if not parts:
        return _empty(K)
    if len(parts) == 1:
        return parts[0]
    return Front(*(np.concatenate([getattr(p, n) for p in parts]) for n in ("V", "mask", "f", "a", "b")))


def optimal_front_tree(problem: TreeSearch, time_limit: float | None = None,
                       on_progress: Callable[..., None] | None = None) -> EngineResult:
    """The optimal tree of a program with global constraints (see the module docstring).

    >>> from odt.compiler.search import GlobalConstraint, GlobalTerm, SplitDim, TreeSearch
    >>> X = np.array([[0.0], [1.0], [0.0], [1.0]]); y = np.array([0, 1, 0, 1])
    >>> g = (np.array([True, True, False, False]),)  # rows 0, 1: at most one predicted 1
    >>> row = GlobalConstraint((GlobalTerm("predicted", Fraction(1), 0, 1),), Fraction(-1), "<=")
    >>> p = TreeSearch(X, (SplitDim("x"),), y, np.ones(4), np.arange(4), (0, 1), ("x",), 1, groups=g, globals=(row,))
    >>> r = optimal_front_tree(p); (r.status, r.errors, r.nodes)
    ('optimal', Fraction(0, 1), 1)
    """
    start = time.perf_counter()
    deadline = math.inf if time_limit is None else start + time_limit  # None: a phase no stop may cut
    search = FrontSearch(problem, None)
    rows = np.arange(problem.X.shape[0], dtype=np.int64)
    state0 = search.ingr.initial()
    comp = search.comp
    n_levels = len(problem.levels)
    bound0 = problem.levels[0].constant  # levels are errors and nodes with coefficients >= 0

    def note() -> str:
        return f"largest front {search.max_front}"

    def pick(d: int, best: Incumbent | None) -> Incumbent | None:
        fr = search.solve(rows, d, state0)
        idx, final = search.feasible_values(fr)
        if not idx.size:
            return None
        if search.scored:  # issue 26: the largest F1 (the key: -F1)
            top, i = f1.best(idx, final, search.positive)
            return Incumbent((-top,), d, i)
        keys = final[idx][:, :n_levels]
        order = np.lexsort([keys[:, j] for j in range(n_levels - 1, -1, -1)])
        i = int(idx[order[0]])
        return Incumbent(tuple(int(v) for v in final[i, :n_levels]), d, i)

    def improved(best: Incumbent) -> None:
        if search.scored:
            search.best_f1 = -best.key[0]
            if on_progress is not None:
                on_progress(time.perf_counter() - start, best.key[0], Fraction(-1), note())
            return
        search.ub = best.key[0]
        if on_progress is not None:
            on_progress(time.perf_counter() - start, Fraction(best.key[0]) / comp.scale[0], bound0, note())

    best, timed_out = deepen(problem, search, deadline, pick, improved)
    tree, errors = None, Fraction(0)
    if best is not None:
        raw = search.decode(rows, best.depth, state0, best.payload)
        tree, errors = _tree(raw, search.cand), _errors(raw, search, rows)
    stats = {"subproblems": search.calls, "cache": len(search.cache), "candidates": int(search.cand.B.shape[1]),
             "components": search.K, "row_types": search.T, "max_front": search.max_front}
    if search.scored:  # the levels and bound are -F1, not the errors ``finish`` reads
        res = finish(problem, tree, errors, timed_out, start, stats, None)
        if best is None:
            return res
        value = best.key[0]
        bound = value if res.status == "optimal" else Fraction(-1)
        if on_progress is not None:
            on_progress(time.perf_counter() - start, value, bound, note())
        return dataclasses.replace(res, levels=(value,), lower_bound=bound)
    return finish(problem, tree, errors, timed_out, start, stats, on_progress, note())


def _errors(raw: tuple, search: FrontSearch, S: np.ndarray) -> Fraction:
    """The weighted errors of a decoded tree (candidates, not yet dimensions) on rows ``S``."""
    if raw[0] == "leaf":
        wrong = S[search.problem.y[S] != raw[1]]
        return Fraction(int(search.wint[wrong].sum())) / search.s
    col = search.B[S, raw[1]]
    return _errors(raw[2], search, S[~col]) + _errors(raw[3], search, S[col])
