"""Whole ``odtc solve`` processes with and without the numpy grace of the dp kernels
(``backends/dp/jit.py``): how much of a small program's process is loading numba, and what
a larger program loses to the grace.

    python bench/kernel_grace.py [--rounds 5] [--programs all|examples|shared] [--write]

Every program runs ``--rounds`` times in each setting, the two settings alternating
(``ODT_KERNELS_GRACE=0``: the compiled kernels loaded at once, as before the grace; the
default: up to ``jit.GRACE_SECONDS`` of numpy search before loading them). Both settings
run after ``odtc warmup`` (the kernels are compiled and cached; the script says so when a
group is not). Prints the median wall time of each, the ratio grace / no grace, whether
the objectives agree. The programs:
every example of ``examples/`` that names no solver backend, and depth-3 to depth-5
programs on the shared continuous and binary sets (read from ../shared/datasets; skipped
with a note when absent). With --write, appends every row to bench/RESULTS.md.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets"
ODTC = str(Path(sys.executable).with_name("odtc"))
SHARED_PROGRAMS = [  # (name, data, model, extra)
    ("iris d3", "continuous/iris.csv", 3, ""),
    ("haberman d3", "continuous/haberman.csv", 3, ""),
    ("bank d5", "continuous/bank.csv", 5, ""),
    ("ionosphere d5", "continuous/ionosphere.csv", 5, ""),
    ("pima d3", "continuous/pima-indians-diabetes.csv", 3, ""),
    ("pima d3 m=20", "continuous/pima-indians-diabetes.csv", 3, "subject to { every leaf: samples >= 20 }\n"),
    ("corral d3", "binary/corral.csv", 3, ""),
    ("hepatitis d3", "binary/hepatitis.csv", 3, ""),
    ("anneal d3", "binary/anneal.csv", 3, ""),
    ("tic-tac-toe d4", "binary/tic-tac-toe.csv", 4, ""),
    ("heart-cleveland d4", "binary/heart-cleveland.csv", 4, ""),
    ("anneal d4 f1", "binary/anneal.csv", 4, None),
]


def programs(which: str, work: Path) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    if which in ("all", "examples"):
        for path in sorted((ROOT / "examples").glob("*.odt")):
            directive = [line for line in path.read_text().splitlines() if line.startswith("solve ")]
            if directive and " dp" not in directive[0]:
                continue  # a solver backend's example: no dp kernels
            out.append((path.stem, path))
    if which in ("all", "shared"):
        if not SHARED.exists():
            print(f"# {SHARED} is absent: the shared-data programs are skipped", file=sys.stderr)
        else:
            for name, data, depth, extra in SHARED_PROGRAMS:
                body = "maximize f1\n" if extra is None else "minimize errors\n" + extra
                prog = work / (name.replace(" ", "_").replace("=", "") + ".odt")
                prog.write_text(f'data "{SHARED / data}" {{ target class }}\nmodel tree(depth <= {depth})\n{body}')
                out.append((name, prog))
    return out


def run(prog: Path, grace: str | None) -> dict:
    env = dict(os.environ)
    env.pop("ODT_KERNELS", None)  # auto: the default a user runs
    if grace is None:
        env.pop("ODT_KERNELS_GRACE", None)
    else:
        env["ODT_KERNELS_GRACE"] = grace
    t = time.perf_counter()
    p = subprocess.run([ODTC, "solve", str(prog), "--json", "--quiet", "--time-limit", "60"], cwd=prog.parent,
                       env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"wall": wall, "objective": None, "status": f"exit {p.returncode}"}
    return {"wall": wall, "objective": out.get("objective"), "status": out.get("status")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--programs", default="all", choices=("all", "examples", "shared"))
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    subprocess.run([ODTC, "warmup"], capture_output=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, prog in programs(args.programs, Path(tmp)):
            runs: dict[str, list[dict]] = {"0": [], "grace": []}
            for _ in range(args.rounds):
                runs["0"].append(run(prog, "0"))
                runs["grace"].append(run(prog, None))
            before = statistics.median(r["wall"] for r in runs["0"])
            after = statistics.median(r["wall"] for r in runs["grace"])
            objs = {json.dumps(r["objective"]) for r in runs["0"] + runs["grace"]}
            row = {"program": name, "before": before, "after": after, "ratio": after / before,
                   "status": runs["grace"][-1]["status"], "equal": len(objs) == 1}
            rows.append(row)
            print(f"{name:28s} no grace {before:6.2f} s  grace {after:6.2f} s  {row['ratio']:5.2f}x  "
                  f"{row['status']:10s} objectives equal: {row['equal']}",
                  flush=True)
    ratios = [r["ratio"] for r in rows]
    gm = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    worst = max(rows, key=lambda r: r["ratio"]) if rows else None
    print(f"geometric mean grace / no grace: {gm:.2f} over {len(rows)} programs"
          + (f"; worst {worst['program']} {worst['ratio']:.2f}x" if worst else ""))
    if args.write:
        load = os.getloadavg()
        lines = [f"\n## The numpy grace of the dp kernels: whole `odtc solve` processes (bench/kernel_grace.py "
                 f"--rounds {args.rounds}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n",
                 f"Load average at the end {load[0]:.2f} / {load[1]:.2f} on the 2 shared cores. Medians of "
                 f"{args.rounds} alternating runs; `ODT_KERNELS_GRACE=0` loads the compiled kernels at once "
                 "(the behaviour before the grace).\n",
                 "| program | no grace s | grace s | ratio | status | objectives equal |",
                 "|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['program']} | {r['before']:.2f} | {r['after']:.2f} | {r['ratio']:.2f}x | {r['status']} "
                         f"| {'yes' if r['equal'] else 'NO'} |")
        lines.append(f"\nGeometric mean grace / no grace: {gm:.2f} over {len(rows)} programs.\n")
        with open(ROOT / "bench" / "RESULTS.md", "a") as fh:
            fh.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
