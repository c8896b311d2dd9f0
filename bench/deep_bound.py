"""Can a positive lower bound on the depth-5/6 optimum be proven within the budget? (issue
27's "a bound above 0 on every set"). Three probes, each a sound lower bound on
theta(D, d), the least training errors of a tree of depth <= d, run with a time budget:

* ``decision``: ConTree's bounded search CT(D, d, B) (Brita et al., AAAI 2025, Eq. 4 with
  an upper bound B) asked for B = 0, 1, 3, 7, ...: a failed query proves theta > B;
* ``subset``: theta(S, d) <= theta(D, d) for every subset S of the rows (removing rows
  never raises the optimum), so the exact optimum of random subsets of growing size is a
  bound, and the sum over disjoint subsets too;
* ``splits``: the same monotonicity through the root's splits: cut each feature f at its
  median position q_f; every split of f at z <= q_f sends a superset of right_f(q_f) to
  its right side, every split at z >= q_f a superset of left_f(q_f) to its left, so
  theta(D, d) >= min(leaf(D), min_f min(theta(right_f, d-1), theta(left_f, d-1))),
  recursively down to ConTree's exact depth-two search; asked with a target t (a node
  stops at its first side under t), the bound of the targets 1, 2, 4, ... it reaches.

Prints, per dataset (the shared continuous sets, 80% training split as bench/deep.py)
and probe, the bound reached, the time and the work done.

    python bench/deep_bound.py [--datasets pima-indians-diabetes,eeg] [--depth 5] [--budget 60]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deep import _shared, split  # noqa: E402  (bench/deep.py's data and split)


def _data(name: str) -> tuple[np.ndarray, np.ndarray, int]:
    raw = np.genfromtxt(_shared() / f"{name}.csv", delimiter=",", skip_header=1, dtype=str)
    classes, y = np.unique(raw[:, -1], return_inverse=True)
    X = raw[:, :-1].astype(float)
    tr, _ = split(y)
    return np.ascontiguousarray(X[tr]), y[tr].astype(np.int64), len(classes)


def _solver(X: np.ndarray, y: np.ndarray, K: int, d: int, deadline: float):
    from odt.backends.dp.contree.search import _Solver
    from odt.backends.dp.contree.tree import PruningRules

    S = _Solver(X, y, np.ones(len(y)), K, d, 1, 0.0, deadline, PruningRules(), None, time.perf_counter())
    S.root = S.root_node()
    return S


def decision(X, y, K, d, budget) -> str:
    from odt.backends.dp.contree.bounds import _Timeout

    t = time.perf_counter()
    S = _solver(X, y, K, d, t + budget)
    bound, B = 0.0, 0
    try:
        while True:
            res = S.solve(S.root, d, B, 0)
            if res.tree is not None:
                return f"optimum {res.cost:g} found at B={B} ({time.perf_counter() - t:.1f} s)"
            bound = res.lb
            B = 2 * B + 1
    except _Timeout:
        return f"bound {bound:g}: the query B={B} open at {budget:g} s"


def subset(X, y, K, d, budget) -> str:
    from odt.backends.dp.contree.search import optimal_tree

    t, rng, best, out = time.perf_counter(), np.random.default_rng(0), 0.0, []
    for m in (50, 100, 200, 400, 800):
        left = budget - (time.perf_counter() - t)
        if m > len(y) or left <= 0:
            break
        idx = np.sort(rng.choice(len(y), m, replace=False))
        r = optimal_tree(X[idx], y[idx], d, n_classes=K, time_limit=left)
        out.append(f"{m} rows: {r.lower_bound:g}{'' if r.status == 'optimal' else ' (open, ' + f'{r.cost:g} found)'}")
        best = max(best, r.lower_bound)
    return f"bound {best:g}; " + ", ".join(out)


class _Splits:
    """The ``splits`` probe (see the module)."""

    def __init__(self, S) -> None:
        self.S, self.memo, self.d2 = S, {}, 0

    def bound(self, node, r: int, target: float) -> float:
        S = self.S
        if r <= 2:
            self.d2 += 1
            return S.solve(node, r, math.inf, 1).cost
        key = (node.rows.tobytes(), r)
        proven = self.memo.get(key, 0.0)
        if proven >= target:
            return proven
        leaf, _ = S.leaf(node)
        if leaf < target:
            return leaf if leaf <= 0 else proven
        S.check_time()
        low = leaf
        for f in range(S.p):
            z = S.cuts(node, f)
            if z.shape[0] == 0:
                continue
            q = int(z[min(int(np.searchsorted(z, node.m / 2 - 1)), z.shape[0] - 1)])
            for side in S.children(node, f, q):
                value = self.bound(side, r - 1, target)
                if value < target:
                    return proven
                low = min(low, value)
        self.memo[key] = low
        return low


def splits(X, y, K, d, budget) -> str:
    from odt.backends.dp.contree.bounds import _Timeout

    t = time.perf_counter()
    S = _solver(X, y, K, d, t + budget)
    probe, bound, target = _Splits(S), 0.0, 1.0
    try:
        while True:
            got = probe.bound(S.root, d, target)
            if got < target:
                break
            bound, target = got, 2 * got
    except _Timeout:
        pass
    return f"bound {bound:g} ({time.perf_counter() - t:.1f} s, {probe.d2} depth-two searches, {len(probe.memo)} nodes proven)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default="pima-indians-diabetes,eeg,magic,htru,avila")
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--probes", default="decision,subset,splits")
    args = ap.parse_args()
    from odt.backends.dp.contree.deep import deep_tree

    deep_tree(np.eye(4), np.array([0, 1, 0, 1]), 2, time_limit=10)  # the kernels, untimed
    probes = {"decision": decision, "subset": subset, "splits": splits}
    print("| dataset | rows x cols | D | probe | budget s | result |\n|---|---|---|---|---|---|")
    for name in args.datasets.split(","):
        X, y, K = _data(name)
        for p in args.probes.split(","):
            print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {args.depth} | {p} | {args.budget:g} | "
                  f"{probes[p](X, y, K, args.depth, args.budget)} |", flush=True)


if __name__ == "__main__":
    main()
