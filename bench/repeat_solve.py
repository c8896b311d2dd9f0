"""The same solve again and again as whole ``odtc`` processes (issue 24, item 1): does it
end the same way every time, and does it leave any process behind?

    python bench/repeat_solve.py [--runs 50] [--backend maxsat] [--time-limit 12] [PROGRAM]

The default program is issue 24's reproduction, ``examples/diagram_mouse.odt``'s diagram
(widths [1, 2, 2], errors + 0.5 * nodes on the mouse data; optimum 3.5), whose diagram
bounds fork the BDD enumeration's workers. Each run is ``odtc solve PROGRAM --backend B
--time-limit L --json --quiet -o model.json``; the script tallies exit codes, statuses and
objectives, and after each run lists the run's descendants still alive (a worker that
outlived its solve). The target: every run exit 0, ``optimal``, the same objective, and
no process left behind.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIAGRAM = ('data "{data}" {{ target class }}\nmodel diagram(widths = [1, 2, 2])\n'
           "minimize errors + 0.5 * nodes\n")


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (read from /proc; zombies excluded)."""
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except FileNotFoundError:
            continue
        for t in tasks:
            try:
                kids = [int(c) for c in Path(f"/proc/{p}/task/{t}/children").read_text().split()]
            except FileNotFoundError:
                continue
            for k in kids:
                if k not in out:
                    out.add(k)
                    todo.append(k)
    return {p for p in out if _alive(p)}


def _alive(pid: int) -> bool:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("State:"):
                return "Z" not in line.split()[1]
    except FileNotFoundError:
        pass
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("program", nargs="?", help="an .odt file (default: issue 24's diagram program)")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--backend", default="maxsat")
    ap.add_argument("--time-limit", type=float, default=12.0)
    ap.add_argument("--odtc", default=shutil.which("odtc") or str(Path(sys.executable).parent / "odtc"))
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="odt-repeat-"))
    program = Path(args.program) if args.program else work / "d.odt"
    if not args.program:
        program.write_text(DIAGRAM.format(data=ROOT / "examples" / "data" / "mouse.csv"))
    tally: collections.Counter = collections.Counter()
    walls: list[float] = []
    leftovers = 0
    for i in range(args.runs):
        model = work / "m.json"
        started = time.perf_counter()
        proc = subprocess.Popen([args.odtc, "solve", str(program), "--backend", args.backend, "--time-limit",
                                 str(args.time_limit), "--json", "--quiet", "-o", str(model)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        seen: set[int] = set()
        while proc.poll() is None:
            seen |= _descendants(proc.pid)
            time.sleep(0.02)
        out, err = proc.communicate()
        walls.append(time.perf_counter() - started)
        time.sleep(0.2)
        left = {p for p in seen if _alive(p)}
        leftovers += len(left)
        try:
            res = json.loads(out)
            key = (proc.returncode, res["status"], res["objective"])
        except (json.JSONDecodeError, KeyError):
            key = (proc.returncode, "no result", err.strip().splitlines()[-1:] and err.strip().splitlines()[-1])
        tally[key] += 1
        print(f"run {i + 1:3d}: exit {key[0]}  {key[1]}  objective {key[2]}  {walls[-1]:.2f} s  "
              f"{len(seen)} children, {len(left)} left", flush=True)
    print(f"\n{args.runs} runs of {program.name} on {args.backend}, --time-limit {args.time_limit:g}:")
    for (code, status, objective), n in tally.most_common():
        print(f"  {n:3d} x exit {code}, {status}, objective {objective}")
    print(f"  wall: median {statistics.median(walls):.2f} s, max {max(walls):.2f} s; processes left behind: {leftovers}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
