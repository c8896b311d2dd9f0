"""`auto` against the backend it picks, as whole processes: `odtc solve prog.odt` with no
backend named next to `odtc solve prog.odt --backend <the one auto chose>`, on the
continuous datasets of ../shared/datasets/continuous (depth 2 and 3, `minimize errors`).

Routing decides from the support table and cheap counts (odt/routing.py), never by
building an encoding, so the two columns should match within noise. Prints per program
the median of --repeat runs of each, the ratio auto / named, and the geometric mean.

    python bench/routing.py [--depths 2,3] [--repeat 3] [--limit 60] [--datasets a,b]

Needs ../shared/datasets (says so and exits 0 when absent) and `odtc` on PATH.
"""
from __future__ import annotations

import argparse
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets" / "continuous"


def timed(cmd: list[str], limit: float) -> float:
    """Wall seconds of one whole process (nan if it failed or ran past the limit)."""
    t = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=limit + 30)
    except subprocess.TimeoutExpired:
        return float("nan")
    return time.perf_counter() - t if out.returncode == 0 else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depths", default="2,3")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--datasets", default="")
    args = ap.parse_args()
    if not SHARED.is_dir():
        print(f"{SHARED} is absent: nothing to measure (the benchmark needs the shared datasets)")
        return 0
    odtc = shutil.which("odtc")
    if odtc is None:
        print("odtc is not on PATH: install the project first (pip install -e .)")
        return 0
    names = [n for n in args.datasets.split(",") if n] or sorted(p.stem for p in SHARED.glob("*.csv"))
    ratios = []
    print(f"{'dataset':22} {'depth':>5} {'backend':>8} {'auto s':>8} {'named s':>8} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            for depth in (int(d) for d in args.depths.split(",")):
                prog = Path(tmp) / f"{name}-{depth}.odt"
                prog.write_text(f'data "{SHARED / (name + ".csv")}" {{ target class }}\n'
                                f"model tree(depth <= {depth})\nminimize errors\n")
                check = subprocess.run([odtc, "check", str(prog)], capture_output=True, text=True)
                chosen = next((line.split()[1] for line in check.stdout.splitlines()
                               if line.strip().startswith("backend")), None)
                if chosen is None:
                    print(f"{name:22} {depth:5}  check failed: {check.stderr.strip()[:80]}")
                    continue
                base = [odtc, "solve", str(prog), "--quiet", "--time-limit", str(args.limit)]
                auto, named = [], []
                for _ in range(args.repeat):  # interleaved, so drift on the shared cores hits both
                    auto.append(timed(base, args.limit))
                    named.append(timed(base + ["--backend", chosen], args.limit))
                a, n = statistics.median(auto), statistics.median(named)
                ratio = a / n if n and not math.isnan(a) and not math.isnan(n) else float("nan")
                if not math.isnan(ratio):
                    ratios.append(ratio)
                print(f"{name:22} {depth:5} {chosen:>8} {a:8.2f} {n:8.2f} {ratio:6.2f}", flush=True)
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"geometric mean auto / named: {geo:.3f} over {len(ratios)} programs (max {max(ratios):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
