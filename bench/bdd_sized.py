"""Ordered BDDs whose size matters, on one process and on two (issue 16: both cores).

For each dataset of $ODT_SHARED/datasets/binary (else ../shared next to the repository)
and each objective, ``model bdd(depth = H)  minimize OBJECTIVE`` is solved by ``dp`` with
its sized enumeration held to one process and then allowed two (``parallel.workers``),
alternating, ``--repeat`` times each; prints the median seconds, the ratio two / one and
whether the objectives agree (they must: only which of several optimal BDDs is returned
may differ).

Run: python bench/bdd_sized.py [--depth 4] [--datasets cancer,australian]
                               [--objectives "errors + 0.5 * nodes;errors then nodes"] [--repeat 1]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

DATA = Path(os.environ.get("ODT_SHARED") or Path(__file__).resolve().parents[2] / "shared") / "datasets" / "binary"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--datasets", default="cancer,hepatitis,australian,new-thyroid")
    ap.add_argument("--objectives", default="errors + 0.5 * nodes;errors then nodes")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--limit", type=float, default=300.0)
    args = ap.parse_args(argv)
    if not DATA.is_dir():
        print(f"{DATA} is absent: nothing to measure (the shared binary datasets; set ODT_SHARED)")
        return 0
    import pandas as pd

    import odt
    from odt.backends.dp.bdd import parallel

    print("| dataset | H | objective | one process s | two processes s | two / one | objective (one, two) | agree |")
    print("|---|---:|---|---:|---:|---:|---|---|")
    ratios = []
    for name in args.datasets.split(","):
        df = pd.read_csv(DATA / f"{name}.csv")
        for objective in args.objectives.split(";"):
            program = odt.compile(f"model bdd(depth = {args.depth})\nminimize {objective}", data=df)
            times: dict[int, list[float]] = {1: [], 2: []}
            found: dict[int, object] = {}
            real = parallel.workers
            try:
                for _ in range(args.repeat):
                    for n in (1, 2):
                        parallel.workers = lambda n=n: n  # type: ignore[assignment]
                        started = time.perf_counter()
                        res = program.solve(backend="dp", time_limit=args.limit)
                        times[n].append(time.perf_counter() - started)
                        found[n] = (res.status, res.objective_levels)
            finally:
                parallel.workers = real  # type: ignore[assignment]
            one, two = statistics.median(times[1]), statistics.median(times[2])
            ratios.append(two / one)
            print(f"| {name} | {args.depth} | {objective} | {one:.2f} | {two:.2f} | {two / one:.2f} | "
                  f"{found[1]}, {found[2]} | {'yes' if found[1] == found[2] else 'NO'} |", flush=True)
    if ratios:
        print(f"\nmedian two / one: {statistics.median(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
