"""How well ``--time-limit`` holds (issue 18): whole ``odtc`` processes, wall clock and peak
memory per backend and strategy, on solves that do not finish in the limit.

    python bench/time_limits.py [--limit 10] [--odtc PATH] [--cases cp-fair,milp-diagram]

Each case runs ``odtc solve|explain <program> --time-limit L --json --quiet`` once and
prints the wall time, the overshoot over L, the peak RSS, the status, objective, bound
and gap. The target is L * 1.05 + 1 s. ``--odtc`` runs another build (e.g. an older
checkout's venv) for a before/after table; ``--kill-after`` and ``--max-memory`` (an
address-space limit) keep a build that does not hold the limit from taking the machine.
COMPAS is in examples/data; mushroom is read from --datasets when present (the shared
copy of the benchmark datasets), else its case is skipped.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAIR = ("group aa = `Race=African-American` == 1\ngroup ca = `Race=Caucasian` == 1\n"
        "model tree(depth <= 3)\nminimize errors\nsubject to { rate(1, aa) <= 1.1 * rate(1, ca) }\n")
CASES = {  # name: (data file, command, backend or None, program body)
    "cp-fair": ("compas.csv", "solve", "cp", FAIR),
    "milp-diagram": ("compas.csv", "solve", "milp", "model diagram(widths = [1, 2, 4])\nminimize errors + 0.5 * nodes\n"),
    "cp-mushroom-leaf": ("mushroom.csv", "solve", "cp",
                         "model tree(depth <= 4)\nminimize errors\nsubject to { every leaf: samples >= 50 }\n"),
    "maxsat-depth3": ("compas.csv", "solve", "maxsat", "model tree(depth <= 3)\nminimize errors\n"),
    "milp-depth3": ("compas.csv", "solve", "milp", "model tree(depth <= 3)\nminimize errors\n"),
    "dp-depth6": ("compas.csv", "solve", "dp", "model tree(depth <= 6)\nminimize errors\n"),
    "incremental": ("compas.csv", "solve", None, "model tree(depth in 1..8)\nminimize depth\n"
                    "subject to { errors <= 1500 }\nsolve maxsat strategy incremental\n"),
    "depth-search": ("compas.csv", "solve", None, "model tree(depth in 1..8)\nminimize depth then errors\n"
                     "subject to { errors <= 2200 }\n"),
    "explain": ("compas.csv", "explain", None, FAIR.replace("subject to {", "subject to {\n  errors <= 2000\n"
                                                           "  leaves <= 3\n")),
}


def find_data(name: str, extra: list[Path]) -> Path | None:
    for d in [ROOT / "examples" / "data", *extra]:
        for p in (d / name, d / "binary" / name):
            if p.exists():
                return p
    return None


def run_case(odtc: str, name: str, data: Path, limit: float, kill_after: float, max_memory: int | None,
             work: Path) -> dict:
    _, command, backend, body = CASES[name]
    prog = work / f"{name}.odt"
    prog.write_text(f'data "{data}" {{ target class }}\n' + body)
    argv = [odtc, command, str(prog), "--time-limit", str(limit)]
    if command == "solve":
        argv += ["--json", "--quiet"] + (["--backend", backend] if backend else [])

    def cap() -> None:
        if max_memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (max_memory, max_memory))

    timer = ["/usr/bin/time", "-f", "odt-peak-kb %M"] if Path("/usr/bin/time").exists() else []
    started = time.perf_counter()
    proc = subprocess.Popen(timer + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=cap, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=kill_after)
        killed = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the session: /usr/bin/time and odtc
        out, err = proc.communicate()
        killed = True
    wall = time.perf_counter() - started
    peak = [int(line.split()[1]) // 1024 for line in err.splitlines() if line.startswith("odt-peak-kb ")]
    err = "\n".join(line for line in err.splitlines() if not line.startswith(("odt-peak-kb ", "Command ")))
    row = {"case": name, "wall": wall, "overshoot": wall - limit, "exit": proc.returncode, "killed": killed,
           "peak_mb": peak[0] if peak else None}
    if command == "solve" and not killed:
        try:
            res = json.loads(out)
            row.update({k: res.get(k) for k in ("status", "objective", "bound", "gap")})
        except json.JSONDecodeError:
            row["status"] = (err.strip().splitlines() or ["?"])[-1][:80]
    elif not killed:
        row["status"] = (out.strip().splitlines() or err.strip().splitlines() or ["?"])[0][:80]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=float, default=10.0)
    ap.add_argument("--odtc", default=shutil.which("odtc") or str(Path(sys.executable).parent / "odtc"))
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--datasets", default=str(Path(os.environ.get("ODT_SHARED") or Path(__file__).resolve().parents[2] / "shared") / "datasets"), help="a folder with mushroom.csv (or binary/)")
    ap.add_argument("--kill-after", type=float, default=None, help="seconds (default: 4 x limit + 30)")
    ap.add_argument("--max-memory", type=float, default=8.0, help="GiB of address space per run (0: none)")
    args = ap.parse_args()
    kill_after = args.kill_after or 4 * args.limit + 30
    max_memory = int(args.max_memory * 2**30) if args.max_memory else None
    print(f"odtc: {args.odtc}   --time-limit {args.limit:g}   target <= {1.05 * args.limit + 1:.2f} s")
    print(f"{'case':18} {'wall s':>7} {'over s':>7} {'MB':>6} {'exit':>4}  {'status':12} {'objective':>9} "
          f"{'bound':>8} {'gap':>7}")
    with tempfile.TemporaryDirectory() as d:
        for name in args.cases.split(","):
            data = find_data(CASES[name][0], [Path(args.datasets)])
            if data is None:
                print(f"{name:18} skipped: {CASES[name][0]} not found")
                continue
            r = run_case(args.odtc, name, data, args.limit, kill_after, max_memory, Path(d))
            status = "KILLED" if r["killed"] else str(r.get("status"))
            gap = r.get("gap")
            print(f"{name:18} {r['wall']:7.2f} {r['overshoot']:+7.2f} {_num(r['peak_mb']):>6} {r['exit']:>4}  "
                  f"{status[:12]:12} "
                  f"{_num(r.get('objective')):>9} {_num(r.get('bound')):>8} "
                  f"{'-' if gap is None else f'{100 * gap:.1f}%':>7}", flush=True)


def _num(x) -> str:
    return "-" if x is None else f"{x:g}"


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
