"""Ordered BDDs at the speed of enumeration (issue 16): odt's dp engine, a plain
enumeration baseline and maxsat, side by side, on the shared binary datasets.

For each dataset of $ODT_SHARED/datasets/binary (else ../shared next to the repository) (0/1 features, the label ``class`` last)
and each H, the program ``model bdd(depth = H)  minimize errors`` is solved
  * by odt's ``dp`` backend (``Program.solve``: lowering, the subset enumeration of
    backends/dp/bdd, decoding, re-verification in numpy) — its wall time;
  * by a plain enumeration written here: itertools.combinations over the same useful
    features, per subset the cell of every row and a np.bincount of (cell, class), the
    least errors kept — its wall time, capped (``--baseline-limit``): past the cap the
    share of subsets done gives an estimate, shown as ">cap (est. T)";
  * by ``maxsat`` (Hu's BDD2, RC2) with a time limit (``--maxsat-limit``), for the depths
    of ``--maxsat-depths`` only.
The baseline's errors must equal dp's wherever it finishes ("agree"). Datasets of Hu et
al. (IJCAI 2022) Table 5 are marked with their paper name; their sizes are the rows and
features of the shared copy. "dp solve" is ``Program.solve`` (lowering, enumeration, decoding, re-verification); "dp
engine" is the enumeration alone on the lowered ``BddSearch``, like for like with the
baseline (neither reads the data). Ratios below 1: dp faster.

Run: python bench/bdd.py [--depths 2,3,4] [--datasets car,cancer] [--maxsat-depths 2,3]
                         [--maxsat-limit 60] [--baseline-limit 60]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np

DATA = Path(os.environ.get("ODT_SHARED") or Path(__file__).resolve().parents[2] / "shared") / "datasets" / "binary"
#: Hu Table 5's datasets (paper name) and their files in the shared CP4IM copy
HU_TABLE5 = {"anneal": "anneal", "australian-credit": "australian", "cancer": "cancer", "car": "car",
             "heart-cleveland": "cleveland", "hypothyroid": "hypothyroid", "mushroom": "mushroom",
             "tic-tac-toe": "tic-tac-toe"}


def plain_enumeration(X: np.ndarray, y: np.ndarray, H: int, limit: float) -> tuple[float, float, bool]:
    """(least errors, seconds, finished): every H-subset by itertools + numpy bincount."""
    n_classes = int(y.max()) + 1
    p = X.shape[1]
    h = min(H, p)
    Xi = X.astype(np.int64)
    powers = 1 << np.arange(h - 1, -1, -1)
    best = float(len(y) - np.bincount(y).max())
    started = time.perf_counter()
    done = 0
    total = 1
    for i in range(h):
        total = total * (p - i) // (i + 1)
    for subset in combinations(range(p), h):
        cell = Xi[:, subset] @ powers
        counts = np.bincount(cell * n_classes + y, minlength=(1 << h) * n_classes).reshape(-1, n_classes)
        errors = len(y) - counts.max(axis=1).sum()
        if errors < best:
            best = float(errors)
        done += 1
        if done % 2000 == 0 and time.perf_counter() - started > limit:
            elapsed = time.perf_counter() - started
            return best, elapsed * total / done, False
    return best, time.perf_counter() - started, True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depths", default="2,3,4")
    ap.add_argument("--datasets", default="")
    ap.add_argument("--maxsat-depths", default="2,3")
    ap.add_argument("--maxsat-limit", type=float, default=60.0)
    ap.add_argument("--baseline-limit", type=float, default=60.0)
    ap.add_argument("--dp-limit", type=float, default=600.0)
    args = ap.parse_args(argv)
    if not DATA.is_dir():
        print(f"{DATA} is absent: nothing to measure (the shared binary datasets)")
        return 0
    import pandas as pd

    from odt.backends.dp.bdd import optimal_bdd
    from odt.compiler.lower_search_bdd import lower_search_bdd
    from odt.compiler.skeletons.tree_paths import useful_features
    from odt.program import compile

    names = args.datasets.split(",") if args.datasets else sorted(p.stem for p in DATA.glob("*.csv"))
    depths = [int(h) for h in args.depths.split(",")]
    maxsat_depths = {int(h) for h in args.maxsat_depths.split(",") if h}
    print("| dataset (Hu name) | rows | features (useful) | H | errors dp | dp solve s | dp engine s | baseline s | "
          "agree | maxsat s (status, errors) | engine/baseline | solve/baseline | solve/maxsat |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|")
    ratios: dict[int, list[float]] = {h: [] for h in depths}
    solve_ratios: dict[int, list[float]] = {h: [] for h in depths}
    ms_ratios: dict[int, list[float]] = {h: [] for h in depths}
    dp_times: dict[int, list[float]] = {h: [] for h in depths}
    for name in names:
        path = DATA / f"{name}.csv"
        if not path.exists():
            print(f"| {name} | missing | | | | | | | | | |")
            continue
        df = pd.read_csv(path)
        y = df["class"].to_numpy().astype(np.int64)
        X = df.drop(columns=["class"]).to_numpy().astype(bool)
        useful = useful_features(X, np.ones(X.shape[1], bool))
        label = f"{name} ({HU_TABLE5[name]})" if name in HU_TABLE5 else name
        for H in depths:
            prog = compile(f"model bdd(depth = {H})\nminimize errors", data=df)
            started = time.perf_counter()
            res = prog.solve(backend="dp", time_limit=args.dp_limit)
            dp_s = time.perf_counter() - started
            started = time.perf_counter()  # the engine alone, like the baseline: no lowering, decoding, checks
            engine = optimal_bdd(lower_search_bdd(prog.checked), args.dp_limit)
            engine_s = time.perf_counter() - started
            assert engine.errors == res.train_errors or engine.status != "optimal", (name, H)
            assert res.verified, (name, H)
            base_err, base_s, finished = plain_enumeration(X[:, useful], y, H, args.baseline_limit)
            agree = ("yes" if abs(base_err - res.train_errors) < 1e-9 else f"NO ({base_err})") if finished \
                and res.status == "optimal" else "-"
            base_txt = f"{base_s:.2f}" if finished else f">{args.baseline_limit:.0f} (est. {base_s:.0f})"
            ms_txt, ms_ratio = "-", ""
            if H in maxsat_depths:
                started = time.perf_counter()
                ms = prog.solve(backend="maxsat", time_limit=args.maxsat_limit)
                ms_s = time.perf_counter() - started
                ms_txt = f"{ms_s:.2f} ({ms.status}, {ms.train_errors if ms.train_errors is not None else '-'})"
                if ms.status == "optimal":
                    assert abs(ms.train_errors - res.train_errors) < 1e-9 or res.status != "optimal", (name, H)
                ms_ratios[H].append(dp_s / ms_s)
                ms_ratio = f"{dp_s / ms_s:.3f}"
            ratios[H].append(engine_s / base_s)
            solve_ratios[H].append(dp_s / base_s)
            dp_times[H].append(dp_s)
            print(f"| {label} | {len(y)} | {X.shape[1]} ({len(useful)}) | {H} | {res.train_errors:g} "
                  f"{'' if res.status == 'optimal' else res.status} | {dp_s:.2f} | {engine_s:.3f} | {base_txt} | {agree} | "
                  f"{ms_txt} | {engine_s / base_s:.3f} | {dp_s / base_s:.3f} | {ms_ratio} |", flush=True)
    print()
    for H in depths:
        if dp_times[H]:
            line = (f"H = {H}: dp median {statistics.median(dp_times[H]):.2f} s, max {max(dp_times[H]):.2f} s; "
                    f"median engine/baseline {statistics.median(ratios[H]):.4f}, max {max(ratios[H]):.3f}; "
                    f"median solve/baseline {statistics.median(solve_ratios[H]):.4f}, max {max(solve_ratios[H]):.3f}")
            if ms_ratios[H]:
                line += f"; median solve/maxsat {statistics.median(ms_ratios[H]):.4f}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
