"""Where a Dask LocalCluster starts to pay for ``odtc sweep`` (issue 28 item 6).

Runs the same sweep of ``examples/sweep_iris.odt`` in this process (``--scheduler
none``) and on an embedded LocalCluster (``--scheduler local``, one worker per core),
for grids of growing work, and prints the wall time of each (the whole ``odtc`` process,
start-up included) and the sequential work in tasks x mean task seconds. The cluster pays
once the sequential work exceeds its start-up cost S times W/(W-1) on W cores
(``odt.sweeps.DASK_STARTUP``).

Run from the repository root: ``python bench/sweep_scheduler.py [--repeat 1]``.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "examples" / "sweep_iris.odt"
GRIDS = [  # (label, --grid arguments, folds)
    ("6 tasks", ["--grid", "depth=1,2,3"], 2),
    ("9 tasks", ["--grid", "depth=1,2,3"], 3),
    ("30 tasks", ["--grid", "depth=1,2,3", "--grid", "alpha=0,1"], 5),
    ("60 tasks", ["--grid", "depth=2,3,4", "--grid", "alpha=0,1"], 10),
]


def wall(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "odt.cli", "sweep", str(PROGRAM), *args, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=1)
    args = p.parse_args()
    print(f"{'grid':>10} {'none s':>8} {'local s':>8} {'auto s':>8}")
    for label, grid, folds in GRIDS:
        times = {s: min(wall([*grid, "--folds", str(folds), "--scheduler", s]) for _ in range(args.repeat))
                 for s in ("none", "local", "auto")}
        print(f"{label:>10} {times['none']:8.1f} {times['local']:8.1f} {times['auto']:8.1f}", flush=True)


if __name__ == "__main__":
    main()
