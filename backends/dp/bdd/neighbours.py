"""The errors-only subset enumeration with a similarity bound over clusters of features.

Input: the merged rows, the number of levels h >= 3, a deadline and the all-features lower
bound. Output: the least majority errors over every h-subset of features, the
lexicographically first subset reaching it, and whether the search finished.

The bound. errors(S) (``counts``: the majority errors of the 2^h cells of S; Hu, Huguet &
Siala, IJCAI 2022, eq. 4) is 1-Lipschitz in each feature under the weighted Hamming
distance: replacing f by f' moves only the rows where they differ, each from one cell to
another, and a row of weight w moved changes the errors by at most w. A feature and its
complement give the same cells, so the distance is

    d(f, f') = min(W(f != f'), W(f == f'))                     (W: summed row weights)

and, for centres c(f) chosen among the features (farthest-point clustering, strongest
single features first) with radii R_k = max d(f, c_k) over the members of cluster k:

    errors(Q + {f, g}) >= errors(c(Q) + {c_k, c_l}) - sum_{a in Q} d(a, c(a)) - R_k - R_l

for f in cluster k and g in cluster l (centres may repeat: a repeated feature counts once,
and the set of centres is still a set of features, so the inequality holds as written).
This is the argument of the similarity bound of MurTree (Demirovic et al., JMLR 2022,
Section 4.5) applied to whole subsets instead of one split.

The search. Features are renumbered strongest first (least single-feature errors), so the
subsets of the strong features, where the optimum usually is, come first and set a low
incumbent. Stage 1 counts every subset of centres (one Gram table per multiset P of h - 2
centres, ``counts.pair_errors``) and keeps, per P, the least bound over its completions.
Stage 2 walks the prefixes Q (h - 2 features, increasing) depth first, skips a partial
prefix whose bound over all of its extensions exceeds the incumbent, and counts the
completions of a full prefix only over the clusters that can still beat it. Only bounds
*strictly* above the incumbent prune, so every subset of least errors is counted and the
answer (the first in the original numbering) does not depend on the renumbering.
"""
from __future__ import annotations

import time
from itertools import combinations, combinations_with_replacement
from math import comb
from typing import Any, Callable

import numpy as np

from odt.compiler import limits

from . import parallel
from .counts import Rows, pair_errors, single_errors

_TOL = 1e-9
#: the centres' share of the features (stage 1 costs about (g / p)^h of a full enumeration)
_CENTRE_SHARE = 0.2
#: and stage 1 at most this many multiply-adds (rows x g^2 per multiset of h - 2 centres)
_STAGE_ONE = 3e9
#: the most features the bound takes (its p x p distances: 128 MB at 4,000); with more,
#: search.py counts every subset, prefix by prefix
MAX_FEATURES = 4000
#: multiply-adds of stage 2 (estimated) from which it runs in two processes: below it,
#: forking costs more than it saves
_PARALLEL_FROM = 2e9
#: the share of the features that are centres of the finer clustering (h >= 4)
_FINE_SHARE = 0.2
#: the Gram tables of centres kept for stage 2 hold at most this many numbers in all
_CACHE = 10_000_000


def centre_count(p: int, n: int, h: int) -> int:
    """The number of centres g: a fifth of the features, fewer when the C(g + h - 3, h - 2)
    tables of n x g^2 would exceed the stage-one budget.

    >>> centre_count(962, 690, 3), centre_count(962, 690, 4), centre_count(40, 500, 3)
    (163, 54, 8)
    """
    g = max(2, int(round(_CENTRE_SHARE * p)))
    while g > 2 and comb(g + h - 3, h - 2) * n * g * g > _STAGE_ONE:
        g -= 1
    return g


def distances(rows: Rows) -> np.ndarray:
    """(p, p): d(f, f') = min(weight where f != f', weight where f == f') (see the module).

    >>> from .counts import merge_rows
    >>> r = merge_rows(np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]], bool), np.array([0, 1, 1]), np.ones(3), 2)
    >>> distances(r).astype(int).tolist()
    [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    """
    X = rows.X.astype(np.float64)
    ones = rows.w @ X
    both = (X * rows.w[:, None]).T @ X
    differ = ones[:, None] + ones[None, :] - 2 * both
    return np.maximum(np.minimum(differ, rows.total - differ), 0.0)


def farthest_centres(D: np.ndarray, g: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gonzalez's farthest-point clustering: feature 0 is the first centre, each next
    centre the feature farthest from those chosen. Returns (centres, cluster of each
    feature, distance of each feature to its centre)."""
    p = D.shape[0]
    centres = [0]
    near = D[0].copy()
    owner = np.zeros(p, np.int64)
    while len(centres) < min(int(g), p):
        f = int(np.argmax(near))
        if near[f] <= 0:
            break
        closer = D[f] < near
        owner[closer] = len(centres)
        near = np.where(closer, D[f], near)
        centres.append(f)
    cent = np.array(centres, np.int64)
    owner[cent] = np.arange(len(cent))
    near[cent] = 0.0
    return cent, owner, near


class _Search:
    """One bounded enumeration: the renumbered rows, the clusters, the stage-1 bounds."""

    def __init__(self, rows: Rows, h: int, deadline: float | None, floor: float,
                 on_progress: Callable[[float], None] | None = None,
                 limit: Callable[[], float] | None = None,
                 visit: Callable[[np.ndarray, list[tuple[int, ...]]], None] | None = None):
        self.order = np.argsort(single_errors(rows), kind="stable")  # new -> original feature
        self.rows = Rows(rows.X[:, self.order], rows.y, rows.w, rows.n_classes)
        self.p, self.h, self.deadline, self.floor = rows.X.shape[1], h, deadline, floor
        g = centre_count(self.p, rows.X.shape[0], h)
        D = distances(self.rows)
        self.cent, self.owner, self.dist = farthest_centres(D, g)
        g = len(self.cent)
        self.radius = np.zeros(g)
        np.maximum.at(self.radius, self.owner, self.dist)
        self.after = _radii_after(self.owner, self.dist, g)
        # a finer clustering to filter the completions of each prefix (h >= 4), see _finer
        self.fine, self.fine_owner, self.fine_dist = (farthest_centres(D, _FINE_SHARE * self.p) if h >= 4
                                                      else (self.cent, self.owner, self.dist))
        self.fine_after = _radii_after(self.fine_owner, self.fine_dist, len(self.fine)) if h >= 4 else self.after
        self.best = float("inf")
        self.subset: tuple[int, ...] = ()
        self.tables: dict[tuple[int, ...], np.ndarray] = {}
        self.level: list[dict[tuple[int, ...], float]] = []  # level[t][multiset of t clusters] = bound
        self.counted = 0
        self.pruned = 0
        self.finer_kept = [0, 0, 0]  # columns kept by _finer, columns given to it, calls
        self.limit, self.visit = limit, visit
        self.open_from: int | None = None  # the first top-level prefix stage 2 did not finish
        self.on_progress = on_progress
        self.reported = time.time()

    # -- the incumbent -------------------------------------------------------------------
    def offer(self, errors: float, subset: tuple[int, ...]) -> None:
        """A counted subset (new numbering): kept when it beats the incumbent, or ties it
        and comes first in the original numbering."""
        original = tuple(sorted(int(self.order[f]) for f in subset))
        if errors < self.best - _TOL or (errors <= self.best + _TOL and original < self.subset):
            self.best, self.subset = errors, original

    def cap(self) -> float:
        """The errors a subset must not exceed to be counted: the incumbent's, or the
        caller's (``visit`` mode)."""
        return self.best if self.limit is None else self.limit()

    def out_of_time(self) -> bool:
        """Past the deadline, or asked to stop (a signal to this process, or in a worker the
        parent's stop)? (And the progress report, about every half second.)"""
        now = time.time()
        if self.on_progress is not None and now - self.reported > 0.5:
            self.tick()
        return self.deadline is not None and now > self.deadline or limits.halted() or parallel.stop_requested()

    def tick(self) -> None:
        self.reported = time.time()
        if self.on_progress is not None and np.isfinite(self.best):
            self.on_progress(self.best)

    # -- stage 1: the centres --------------------------------------------------------------
    def table(self, P: tuple[int, ...]) -> np.ndarray:
        """errors(centres of P + {c_k, c_l}) for every pair of clusters (k, l)."""
        T = self.tables.get(P)
        if T is None:
            T = pair_errors(self.rows, tuple(int(self.cent[k]) for k in P), self.cent)
            if (len(self.tables) + 1) * T.size <= _CACHE:
                self.tables[P] = T
        return T

    def stage_one(self) -> bool:
        g, t = len(self.cent), self.h - 2
        R = self.radius
        top: dict[tuple[int, ...], float] = {}
        for P in combinations_with_replacement(range(g), t):
            if self.out_of_time():
                return False
            T = self.table(P)
            self._offer_centres(P, T)
            top[P] = float((T - R[:, None] - R[None, :]).min())
        self.level = [{} for _ in range(t)] + [top]
        for P, bound in top.items():  # the bound of a partial prefix: the least over its extensions
            for s in range(1, t):
                for keep in set(combinations(P, s)):
                    rest = list(P)
                    for k in keep:
                        rest.remove(k)
                    b = bound - float(R[rest].sum())
                    if b < self.level[s].get(keep, np.inf):
                        self.level[s][keep] = b
        return True

    def _offer_centres(self, P: tuple[int, ...], T: np.ndarray) -> None:
        """The best subset of h distinct centres in T (a real subset: an upper bound)."""
        if len(set(P)) < len(P):
            return
        T = T.copy()
        T[np.tril_indices(T.shape[0])] = np.inf
        T[list(P), :] = np.inf
        T[:, list(P)] = np.inf
        k, l = (int(i) for i in np.unravel_index(int(np.argmin(T)), T.shape))
        if np.isfinite(T[k, l]):
            subset = tuple(int(self.cent[c]) for c in (*P, k, l))
            self.offer(float(T[k, l]), subset)
            if self.visit is not None and T[k, l] <= self.cap() + _TOL:
                self.visit(T[k:k + 1, l], [tuple(int(self.order[f]) for f in subset)])

    # -- stage 2: the features -------------------------------------------------------------
    def stage_two(self, part: int = 0, parts: int = 1) -> bool:
        """Depth-first over the prefixes whose first feature is ``part`` modulo ``parts``
        (one share of the work, for a worker process); False when the time limit stopped it."""
        return self._extend((), 0.0, part, parts)

    def _extend(self, Q: tuple[int, ...], shift: float, part: int = 0, parts: int = 1) -> bool:
        t = self.h - 2
        first = Q[-1] + 1 if Q else 0
        for a in range(first, self.p - (t - len(Q)) - 1):
            if not Q and a % parts != part:
                continue
            if self.visit is None and self.best <= self.floor + _TOL:
                return True
            if self.out_of_time():
                self.open_from = a if not Q else self.open_from
                return False
            prefix = Q + (a,)
            s = shift + float(self.dist[a])
            key = tuple(sorted(int(self.owner[f]) for f in prefix))
            if self.level[len(prefix)].get(key, np.inf) - s > self.cap() + _TOL:
                self.pruned += 1
                continue
            if len(prefix) < t:
                if not self._extend(prefix, s):
                    self.open_from = a if not Q else self.open_from
                    return False
            else:
                self._complete(prefix, key, s)
        return True

    def lower_bound(self, part: int = 0, parts: int = 1) -> float:
        """A proven lower bound on the least errors of this part's subsets: its incumbent
        when it finished, else the least bound of the first features it has not finished
        (the all-features bound when even stage 1 did not finish)."""
        if not self.level:
            return self.floor
        if self.open_from is None:
            return self.best
        open_bounds = [self.level[1].get((int(self.owner[a]),), np.inf) - float(self.dist[a])
                       for a in range(self.open_from, self.p) if a % parts == part]
        return max(self.floor, min([self.best] + open_bounds))

    def unfinished(self, part: int, parts: int) -> "parallel.Share":
        """The share of a part whose worker was ended before it answered: no subset, and the
        least stage-1 bound of its first features as its lower bound."""
        bounds = [self.level[1].get((int(self.owner[a]),), np.inf) - float(self.dist[a])
                  for a in range(self.p) if a % parts == part]
        return parallel.Share(np.inf, (), False, 0, max(self.floor, min(bounds, default=np.inf)))

    def surviving_work(self) -> float:
        """Multiply-adds of stage 2 if only the first features whose bound reaches the
        incumbent were pruned (an over-estimate: it decides whether to fork workers)."""
        n, t = self.rows.X.shape[0], self.h - 2
        work = 0.0
        for a in range(self.p - t - 1):
            if self.level[1].get((int(self.owner[a]),), np.inf) - self.dist[a] <= self.cap() + _TOL:
                m = self.p - a - 1
                work += n * m * m * comb(m, t - 1)
        return work

    def _complete(self, Q: tuple[int, ...], P: tuple[int, ...], shift: float) -> None:
        """Count Q + {f, g} for the features after Q in the clusters that can still win
        (the radii of the members after Q only; a cluster with none is out)."""
        R = self.after[Q[-1]]
        T = self.table(P)
        cluster_bound = (T - R[None, :]).min(axis=1) - R - shift
        if cluster_bound.min() > self.cap() + _TOL:
            self.pruned += 1
            return
        later = np.arange(Q[-1] + 1, self.p)
        cols = later[cluster_bound[self.owner[later]] <= self.cap() + _TOL]
        if len(cols) > 2 * len(self.fine) and self.finer_pays():
            before = len(cols)
            cols = self._finer(Q, cols)
            self.finer_kept[0] += len(cols)
            self.finer_kept[1] += before
            self.finer_kept[2] += 1
        if len(cols) < 2:
            return
        # every later column kept: a view, not a copy, of the matrix
        E = pair_errors(self.rows, Q, slice(Q[-1] + 1, None) if len(cols) == len(later) else cols)
        E[np.tril_indices(len(cols))] = np.inf
        self.counted += len(cols) * (len(cols) - 1) // 2
        x, y = np.unravel_index(int(np.argmin(E)), E.shape)
        if self.visit is not None:
            i, j = np.nonzero(E <= self.cap() + _TOL)
            if len(i):
                subsets = _with_pairs(Q, cols[i], cols[j])
                self.visit(E[i, j], [tuple(int(f) for f in row) for row in self.order[subsets]])
            return
        if E[x, y] <= self.best + _TOL:  # the first in the original numbering among equal ones
            i, j = np.nonzero(E <= E[x, y] + _TOL)
            subsets = _with_pairs(Q, cols[i], cols[j])
            original = np.sort(self.order[subsets], axis=1)
            first = int(np.lexsort(original.T[::-1])[0])
            self.offer(float(E[x, y]), tuple(int(f) for f in subsets[first]))

    def finer_pays(self) -> bool:
        """Whether ``_finer`` still pays: it costs about g' / m of counting the m columns,
        so after 20 calls it goes on only if it removed g' columns a call (it saves ~2 n m
        a column)."""
        kept, given, calls = self.finer_kept
        return calls < 20 or given - kept >= len(self.fine) * calls

    def _finer(self, Q: tuple[int, ...], cols: np.ndarray) -> np.ndarray:
        """``cols`` less the columns g that cannot complete Q to a winner with any f:
        errors(Q + {f, g}) >= errors(Q + {c_k, g}) - R_k for f in fine cluster k (radii
        over the members after Q), over the g' fine centres and Q itself, not its
        centres: n x g' x m multiply-adds instead of n x m^2 for the m columns. (A bound
        through the centre of Q's last feature, shared by its cluster, costs less but
        adds that feature's distance: on australian, H = 4, it kept 83% of the columns
        where this one keeps 0.7%.)"""
        R = self.fine_after[Q[-1]]
        T = pair_errors(self.rows, Q, cols, left=self.fine)
        return cols[(T - R[:, None]).min(axis=0) <= self.cap() + _TOL]


def _radii_after(owner: np.ndarray, dist: np.ndarray, g: int) -> np.ndarray:
    """(p, g): row a holds each cluster's radius over its members after feature a, -inf
    for a cluster with none (so that every bound through it is +inf)."""
    p = len(owner)
    out = np.full((p, g), -np.inf)
    for a in range(p - 2, -1, -1):
        out[a] = out[a + 1]
        k = owner[a + 1]
        out[a, k] = max(out[a, k], dist[a + 1])
    return out


def _with_pairs(Q: tuple[int, ...], f: np.ndarray, g: np.ndarray) -> np.ndarray:
    """(len(f), |Q| + 2): the subsets Q + (f[i], g[i]), one per row."""
    return np.column_stack([np.broadcast_to(np.array(Q, np.int64), (len(f), len(Q))), f, g])


def visit_subsets(rows: Rows, h: int, deadline: float | None, limit: Callable[[], float],
                  visit: Callable[[np.ndarray, list[tuple[int, ...]]], None], parts: int = 1,
                  collect: Callable[[], Any] | None = None, tick: Callable[[], None] | None = None
                  ) -> tuple[bool, str, list[Any]]:
    """Call ``visit(errors, subsets)`` (original numbering) with every h-subset whose
    errors do not exceed ``limit()`` when it is counted (``limit`` may fall as ``visit``
    finds better classifiers; a subset may be visited twice, once as a subset of centres).
    Stage 2 runs in ``parts`` forked processes when its work is large: ``visit`` then runs
    in the workers, and ``collect()`` hands back each worker's incumbent. Returns
    (complete, stats, the workers' ``collect()`` results: empty in one process)."""
    search = _Search(rows, h, deadline, -np.inf, None, limit, visit)
    complete = search.stage_one()
    if complete and parts > 1 and collect is not None and search.surviving_work() >= _PARALLEL_FROM:
        shares = parallel.run_parts(search, parts, tick, collect)
        search.counted += sum(share.counted for share in shares)
        return all(share.complete for share in shares), _stats(search, h, parts), [s.state for s in shares]
    complete = complete and search.stage_two()
    return complete, _stats(search, h, 1), []


def _stats(search: "_Search", h: int, processes: int) -> str:
    return (f"{len(search.cent)} centres (radius <= {search.radius.max():g}), "
            f"{search.counted + len(search.tables) * len(search.cent) ** 2} of {comb(search.p, h)} subsets counted"
            f"{f' in {processes} processes' if processes > 1 else ''}")


def least_errors(rows: Rows, h: int, deadline: float | None, floor: float, parts: int = 1,
                 on_progress: Callable[[float], None] | None = None
                 ) -> tuple[float, tuple[int, ...], bool, str, float]:
    """(least errors, subset in original numbering, complete, stats, lower bound) over
    every h-subset of the features of ``rows`` (h >= 3); the lower bound equals the least
    errors when complete. ``deadline`` is a ``time.time()`` instant. Stage 2 runs in
    ``parts`` forked processes when its work is large (``parallel``).
    ``on_progress(incumbent errors)`` is called about every half second."""
    search = _Search(rows, h, deadline, floor, on_progress)
    complete = search.stage_one()
    forked = complete and parts > 1 and search.best > floor + _TOL and search.surviving_work() >= _PARALLEL_FROM
    lower = floor
    if forked:
        shares = parallel.run_parts(search, parts, search.tick)
        complete = all(share.complete for share in shares)
        search.counted += sum(share.counted for share in shares)
        for share in shares:
            if share.subset and (share.errors, share.subset) < (search.best, search.subset):
                search.best, search.subset = share.errors, share.subset
        lower = min(share.lower for share in shares)
    elif complete:
        complete = search.stage_two()
        lower = search.lower_bound()
    return (search.best, search.subset, complete, _stats(search, h, parts if forked else 1),
            search.best if complete else min(search.best, lower))
