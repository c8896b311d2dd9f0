"""Deep trees under a time limit against greedy CART (issue 24, item 7: never worse than
greedy; the baseline of issue 27's anytime search).

    python bench/deep_vs_cart.py [--depth 5] [--limit 30] [--datasets DIR] [--only a,b]

For every CSV of the shared continuous datasets (``../shared/datasets/continuous``, or
``$ODT_SHARED/datasets/continuous``; the script says so and stops when it is absent) it
runs ``odtc solve`` on ``tree(depth <= D)`` / ``minimize errors`` with ``--time-limit L``
as a whole process (auto: dp), and scikit-learn's ``DecisionTreeClassifier(max_depth=D)``
(Gini, every threshold) in this process, and prints both trees' training errors, odt's
status and bound, and the wall times. The goal: odt's errors <= CART's on every row.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _shared() -> Path:
    env = os.environ.get("ODT_SHARED")
    return Path(env) if env else ROOT.parent / "shared"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--limit", type=float, default=30.0)
    ap.add_argument("--datasets", type=Path, default=_shared() / "datasets" / "continuous")
    ap.add_argument("--only", default="")
    ap.add_argument("--odtc", default=str(Path(sys.executable).parent / "odtc"))
    args = ap.parse_args()
    if not args.datasets.is_dir():
        sys.exit(f"the shared continuous datasets are not at {args.datasets} (set ODT_SHARED or --datasets)")
    from sklearn.tree import DecisionTreeClassifier

    only = {s for s in args.only.split(",") if s}
    work = Path(tempfile.mkdtemp(prefix="odt-deep-"))
    print(f"tree(depth <= {args.depth}), minimize errors, --time-limit {args.limit:g}; CART max_depth={args.depth}")
    print(f"{'dataset':24s} {'rows':>7s} {'odt':>7s} {'bound':>7s} {'status':>9s} {'wall s':>7s} "
          f"{'CART':>7s} {'CART ms':>8s}  odt - CART")
    worse = 0
    for csv in sorted(args.datasets.glob("*.csv")):
        if only and csv.stem not in only:
            continue
        prog = work / f"{csv.stem}.odt"
        prog.write_text(f'data "{csv}" {{ target class }}\nmodel tree(depth <= {args.depth})\nminimize errors\n')
        started = time.perf_counter()
        run = subprocess.run([args.odtc, "solve", str(prog), "--time-limit", str(args.limit), "--json", "--quiet"],
                             capture_output=True, text=True)
        wall = time.perf_counter() - started
        try:
            out = json.loads(run.stdout)
        except json.JSONDecodeError:
            print(f"{csv.stem:24s} odtc failed (exit {run.returncode}): {run.stderr.strip()[-200:]}")
            continue
        raw = np.genfromtxt(csv, delimiter=",", skip_header=1, dtype=str)
        X, y = raw[:, :-1].astype(float), raw[:, -1]
        t = time.perf_counter()
        cart = DecisionTreeClassifier(max_depth=args.depth, random_state=0).fit(X, y)
        cart_ms = 1000 * (time.perf_counter() - t)
        cart_errors = int((cart.predict(X) != y).sum())
        errors = out["train_errors"]
        worse += errors > cart_errors
        bound = out.get("bound")
        print(f"{csv.stem:24s} {len(y):7d} {errors:7g} {bound if bound is not None else '-':>7} {out['status']:>9s} "
              f"{wall:7.2f} {cart_errors:7d} {cart_ms:8.1f}  {errors - cart_errors:+g}", flush=True)
    print(f"rows where odt has more training errors than CART: {worse}")


if __name__ == "__main__":
    main()
