"""Avellaneda (AAAI 2020), Table 3: DT_depth and DT_size, with and without ``strategy incremental``.

For each dataset of the paper's Table 3 that exists in the shared datasets (iris, Monks-1,
Monks-3, balance-scale; Monks-2 and wine are not there), four solves of

    model tree(depth in 1..12)  minimize depth [then nodes]  subject to { errors == 0 }

DT_depth and DT_size, each with ``solve maxsat strategy incremental`` (Algorithm 3: rows
enter one SAT solver per depth when misclassified; DT_size's node count by a dichotomic
search under assumptions on the unary counter of eqs 7-10) and with plain ``solve maxsat``
(one complete MaxSAT solve per depth). Each solve runs in a child process with a time
limit (and a memory cap); times are Program.solve's (parsing and binarisation excluded).
Prints a Markdown table with the paper's Table 3 figures next to ours and the ratio of
our incremental time to the paper's.

Binarisation as in the paper's Table 4: one Boolean feature per value of the Monks and
balance-scale attributes (17 and 20 features; ``--ordinal`` uses ``column <= v``
thresholds instead), every midpoint of the iris measurements (thresholds(all)).

    python bench/avellaneda.py [--limit 120] [--datasets iris,monks-1] [--ordinal] [--strategies inc,plain]

Needs the shared datasets: $ODT_SHARED, else ../shared next to the repository (says so
and exits 0 when absent).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Table 3 (DT_depth: time s, k; DT_size: time s, n = all nodes, decision nodes and leaves)
# and Table 4 (|E|, Boolean features); averages over the training sets of a 5-fold
# cross-validation, C++ and MiniSat on an i7-2600K @ 3.40GHz.
PAPER = {
    "iris": {"E": 113, "bool": 114, "depth_s": 0.018, "k": 3, "size_s": 0.03, "n": 10.6},
    "monks-1": {"E": 124, "bool": 17, "depth_s": 0.024, "k": 4.4, "size_s": 0.08, "n": 17},
    "monks-2": {"E": 169, "bool": 17, "depth_s": 0.19, "k": 5.8, "size_s": 9.1, "n": 47.8},
    "monks-3": {"E": 92, "bool": 17, "depth_s": 0.03, "k": 4.8, "size_s": 0.21, "n": 23.4},
    "wine": {"E": 178, "bool": 1276, "depth_s": 0.6, "k": 3, "size_s": 1.2, "n": 7.8},
    "balance-scale": {"E": 625, "bool": 20, "depth_s": 50, "k": 8, "size_s": 183, "n": 268},
}
MONKS = "categorical a1, a2, a3, a4, a5, a6"
BALANCE = "categorical `Left-Weight`, `Left-Distance`, `Right-Weight`, `Right-Distance`"
FILES = {  # dataset -> (file under the shared datasets, data-block declarations for one feature per value)
    "iris": ("continuous/iris.csv", ""),
    "monks-1": ("mixed/monks-1.csv", MONKS),
    "monks-2": ("mixed/monks-2.csv", MONKS),
    "monks-3": ("mixed/monks-3.csv", MONKS),
    "wine": ("continuous/wine.csv", ""),
    "balance-scale": ("mixed/balance-scale.csv", BALANCE),
}
OBJECTIVES = {"depth": "minimize depth", "size": "minimize depth then nodes"}


def shared_dir() -> Path:
    return Path(os.environ.get("ODT_SHARED") or ROOT.parent / "shared")


def program_text(path: Path, declarations: str, objective: str, incremental: bool) -> str:
    return (f'data "{path}" {{ target class\n {declarations} }}\nmodel tree(depth in 1..12)\n{objective}\n'
            f'subject to {{ errors == 0 }}\nsolve maxsat{" strategy incremental" if incremental else ""}\n')


# ---------------------------------------------------------------------------- one solve (child)
def solve_one(name: str, mode: str, incremental: bool, limit: float, ordinal: bool) -> dict:
    """One solve in this process; the numbers the table needs."""
    import odt

    file, declarations = FILES[name]
    text = program_text(shared_dir() / "datasets" / file, "" if ordinal else declarations, OBJECTIVES[mode],
                        incremental)
    prog = odt.compile(text)
    start = time.perf_counter()
    try:
        res = prog.solve(time_limit=limit)
    except odt.compiler.errors.InfeasibleProgram as exc:  # errors == 0 always holds at some depth
        return {"status": "claims infeasible", "seconds": time.perf_counter() - start, "rows": prog.dataset.n_rows,
                "features": len(prog.dataset.features), "log": exc.message[-400:]}
    seconds = time.perf_counter() - start
    used = re.search(r"in all: (\d+) of \d+ rows", res.log)
    tree = res.classifier
    return {"status": res.status, "seconds": seconds, "rows": prog.dataset.n_rows,
            "features": len(prog.dataset.features), "verified": res.verified,
            "depth": None if tree is None else tree.depth, "nodes": None if tree is None else tree.n_nodes,
            "rows_used": int(used[1]) if used else None, "log": res.log[-400:]}


def child(argv: list[str]) -> None:
    import resource

    name, mode, strategy, limit, ordinal = argv
    cap = 6 << 30  # 6 GiB: a plain encoding at depth 9+ can outgrow the machine
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    try:
        out = solve_one(name, mode, strategy == "inc", float(limit), ordinal == "1")
    except MemoryError:
        out = {"status": "memory", "seconds": None}
    print(json.dumps(out))


def measure(name: str, mode: str, incremental: bool, limit: float, ordinal: bool) -> dict:
    """One solve in a child process, killed (it is ours) if it overruns its limit by 60 s."""
    cmd = [sys.executable, __file__, "--child", name, mode, "inc" if incremental else "plain", str(limit),
           "1" if ordinal else "0"]
    started = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit + 60)
    except subprocess.TimeoutExpired:
        return {"status": "killed", "seconds": time.perf_counter() - started}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"status": "error", "seconds": None, "log": done.stderr[-400:]}
    return json.loads(lines[-1])


# ---------------------------------------------------------------------------- the table
def cell_time(r: dict, limit: float) -> str:
    if r["status"] == "optimal":
        return f"{r['seconds']:.2f}"
    if r["status"] == "claims infeasible":
        return f"claims infeasible after {r['seconds']:.0f} s"
    return "not run" if r["status"] == "not run" else f">{limit:.0f} ({r['status']})"


def shape(r: dict, mode: str) -> tuple | None:
    """What both strategies must agree on: the depth (DT_depth), the depth and nodes (DT_size)."""
    if r["status"] != "optimal":
        return None
    return (r["depth"],) if mode == "depth" else (r["depth"], r["nodes"])


def table(results: dict, limit: float, absent: list[str]) -> str:
    head = ["dataset", "rows", "bool. features", "depth k", "nodes (decision / all)",
            "DT_depth inc s", "DT_depth plain s", "DT_size inc s", "DT_size plain s",
            "rows used inc (depth / size)", "paper E / features", "paper DT_depth s, k",
            "paper DT_size s, n (all)", "ratio ours/paper inc (depth / size)", "inc = plain"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, paper in PAPER.items():
        pap = [f"{paper['E']} / {paper['bool']}", f"{paper['depth_s']}, {paper['k']}", f"{paper['size_s']}, {paper['n']}"]
        if name in absent:
            lines.append(f"| {name} | not in the shared datasets | | | | | | | | | " + " | ".join(pap) + " | | |")
        if name not in results:
            continue
        r = results[name]
        di, dp, si, sp = r["depth", True], r["depth", False], r["size", True], r["size", False]
        any_run = next((x for x in (si, di, sp, dp) if "rows" in x), {})
        k = next((x["depth"] for x in (si, di, sp, dp) if x["status"] == "optimal"), None)
        n = next((x["nodes"] for x in (si, sp) if x["status"] == "optimal"), None)
        ratio = [f"{x['seconds'] / p:.1f}x" if x["status"] == "optimal" else "-"
                 for x, p in ((di, paper["depth_s"]), (si, paper["size_s"]))]
        agree = [shape(a, m) == shape(b, m) for m, a, b in (("depth", di, dp), ("size", si, sp))
                 if shape(a, m) and shape(b, m)]
        cells = [name, str(any_run.get("rows", "?")), str(any_run.get("features", "?")), str(k if k is not None else "?"),
                 f"{n} / {2 * n + 1}" if n is not None else "?",
                 cell_time(di, limit), cell_time(dp, limit), cell_time(si, limit), cell_time(sp, limit),
                 f"{di.get('rows_used') or '-'} / {si.get('rows_used') or '-'}", *pap, " / ".join(ratio),
                 ("yes" if all(agree) else "NO") + ("" if agree else " (nothing to compare)")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=float, default=120.0, help="seconds per solve")
    ap.add_argument("--datasets", default=",".join(PAPER), help="comma-separated names from Table 3")
    ap.add_argument("--ordinal", action="store_true", help="Monks and balance-scale as `column <= v` thresholds")
    ap.add_argument("--strategies", default="inc,plain", help="inc (strategy incremental), plain, or both")
    args = ap.parse_args()
    shared = shared_dir()
    if not (shared / "datasets").is_dir():
        print(f"bench/avellaneda.py: no shared datasets at {shared / 'datasets'} (set ODT_SHARED); nothing to do")
        return 0
    results: dict[str, dict] = {}
    absent = [name for name in PAPER if not (shared / "datasets" / FILES[name][0]).exists()]
    for name in args.datasets.split(","):
        if name in absent:
            print(f"skip {name}: {FILES[name][0]} is not in {shared / 'datasets'}", file=sys.stderr)
            continue
        results[name] = {}
        for mode in ("depth", "size"):
            for inc in (True, False):
                if ("inc" if inc else "plain") not in args.strategies.split(","):
                    results[name][mode, inc] = {"status": "not run", "seconds": None}
                    continue
                r = measure(name, mode, inc, args.limit, args.ordinal)
                results[name][mode, inc] = r
                print(f"{name} DT_{mode} {'incremental' if inc else 'plain'}: {r['status']} "
                      f"k={r.get('depth')} nodes={r.get('nodes')} in {r.get('seconds') or 0:.2f}s "
                      f"rows used {r.get('rows_used')}; {r.get('log', '')[-160:]}", file=sys.stderr, flush=True)
    print(table(results, args.limit, absent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
