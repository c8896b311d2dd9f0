"""Group fairness on dp (issue 14) next to pystreed's fairness tasks (STreeD 1.4, van der
Linden, de Weerdt & Demirović, NeurIPS 2023) and odt's cp on the same programs.

pystreed's ``STreeDGroupFairnessClassifier`` minimises errors under
``|P(yhat=1 | s=1) - P(yhat=1 | s=0)| <= limit`` (task ``group-fairness``, demographic
parity) or the same difference among the rows of class 1 (``equality-of-opportunity``),
where s is a 0/1 sensitive column that the tree may not test (pystreed keeps it out of
the split candidates). In odt the same program is

    group s1 = `Race=African-American` == 1            (EO: ... and class == 1)
    group s0 = `Race=African-American` == 0
    model tree(depth <= D) { features <every column but the sensitive one> }
    minimize errors
    subject to { abs(rate(1, s1) - rate(1, s0)) <= 0.05 }

Data: ../shared/datasets/binary/compas.csv (ProPublica COMPAS two-year recidivism,
binarised; see the provenance in that folder's README), sensitive column race
(African-American or not) or sex (Gender=Male), all 26 other features at depths 2-3 and
the seven features of examples/fair_compas.odt at depth 4 (pystreed runs out of memory
on all features at depth 4). pystreed gets the same 0/1 matrix, sensitive column first.
Each run is a fresh process (a crash or a memory blow-up of one solver does not end the
bench); times are measured inside it, imports and data loading excluded. cp runs with a
time limit on the smaller programs only.

    python bench/fairness.py [--limit 120] [--cp-limit 60] [--quick] [--write]

Prints per program: both times, odt/pystreed and cp/odt ratios, the optima (errors) and
whether they agree; then medians and geometric means. ``--write`` replaces the fairness
section of bench/RESULTS.md.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets" / "binary" / "compas.csv"
EXAMPLE_FEATURES = ["Age=18-20", "Age=18-25", "Age<=40", "Juvenile-Crimes=0", "Prior-Crimes=0", "Prior-Crimes>3",
                    "Current-Charge-Degree=Misdemeanor"]
SENSITIVE = {"race": "Race=African-American", "sex": "Gender=Male"}
TASKS = {"DP": "group-fairness", "EO": "equality-of-opportunity"}


def columns() -> list[str]:
    return DATA.read_text().split("\n", 1)[0].split(",")[:-1]


def program(task: str, sensitive: str, depth: int, features: list[str], limit: str) -> str:
    cond = " and class == 1" if task == "EO" else ""
    feats = ", ".join(f"`{f}`" for f in features)
    return (f'data "{DATA}" {{ target class }}\n'
            f"group s1 = `{sensitive}` == 1{cond}\n"
            f"group s0 = `{sensitive}` == 0{cond}\n"
            f"model tree(depth <= {depth}) {{ features {feats} }}\n"
            "minimize errors\n"
            f"subject to {{ abs(rate(1, s1) - rate(1, s0)) <= {limit} }}\n")


def worker(spec: dict) -> dict:
    """One run, in this process: {'time', 'errors', 'status'}."""
    if spec["solver"] == "pystreed":
        import numpy as np
        import pandas as pd
        from pystreed import STreeDGroupFairnessClassifier

        df = pd.read_csv(DATA)
        y = df.pop("class").to_numpy()
        X = df[[spec["sensitive"]] + spec["features"]].astype(int)
        clf = STreeDGroupFairnessClassifier(optimization_task=TASKS[spec["task"]], sensitive_feature=0,
                                            discrimination_limit=float(spec["limit"]), max_depth=spec["depth"],
                                            time_limit=spec["time_limit"])
        t = time.perf_counter()
        clf.fit(X.copy(), y)
        elapsed = time.perf_counter() - t
        pred = clf.predict(X.copy())
        return {"time": elapsed, "errors": int(np.sum(pred != y)), "status": "optimal"}
    import odt

    prog = odt.compile(program(spec["task"], spec["sensitive"], spec["depth"], spec["features"], spec["limit"]))
    if spec["solver"] == "odt" and prog.backend_name() != "dp":
        raise SystemExit(f"auto routes this program to {prog.backend_name()}, not dp")
    t = time.perf_counter()
    res = prog.solve(backend="dp" if spec["solver"] == "odt" else "cp", time_limit=spec["time_limit"])
    elapsed = time.perf_counter() - t
    if res.classifier is None:
        return {"time": elapsed, "errors": None, "status": res.status, "front": "-"}
    assert res.verified
    log = res.log or ""
    front = log.split("'max_front': ")[1].split(",")[0] if "'max_front': " in log else "-"
    return {"time": elapsed, "errors": int(round(float(res.train_errors))), "status": res.status, "front": front}


def run_one(spec: dict, wall: float) -> dict | None:
    cmd = [sys.executable, __file__, "--one", json.dumps(spec)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=wall)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        print(f"  {spec['solver']} failed: {out.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def cases(quick: bool) -> list[tuple[str, str, int, str]]:
    """(task, sensitive key, depth, feature set)."""
    out = []
    for sens in ("race", "sex"):
        for task in ("DP", "EO"):
            for depth in ((2,) if quick else (2, 3)):
                out.append((task, sens, depth, "all"))
            if not quick:
                out.append((task, sens, 4, "example"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--limit", type=float, default=120.0, help="time limit per pystreed / dp run (s)")
    ap.add_argument("--cp-limit", type=float, default=60.0, help="time limit per cp run (s)")
    ap.add_argument("--discrimination", default="0.05")
    ap.add_argument("--quick", action="store_true", help="depth 2 only")
    ap.add_argument("--write", action="store_true", help="replace the fairness section of bench/RESULTS.md")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(worker(json.loads(args.one))))
        return 0
    rows = []
    header = (f"| task | sensitive | depth | features | pystreed (s) | odt dp (s) | dp / pystreed | cp (s) | cp / dp "
              f"| errors pystreed / dp / cp | largest front |")
    lines = [header, "|---|---|---|---|---|---|---|---|---|---|---|"]
    print(header)
    for task, sens, depth, fset in cases(args.quick):
        s = SENSITIVE[sens]
        feats = [c for c in columns() if c != s] if fset == "all" else [f for f in EXAMPLE_FEATURES if f != s]
        base = {"task": task, "sensitive": s, "depth": depth, "features": feats, "limit": args.discrimination}
        ps = run_one(base | {"solver": "pystreed", "time_limit": args.limit}, args.limit + 60)
        dp = run_one(base | {"solver": "odt", "time_limit": args.limit}, args.limit + 60)
        cp = None
        if depth == 2 or fset == "example":
            cp = run_one(base | {"solver": "cp", "time_limit": args.cp_limit}, args.cp_limit + 60)
        ratio = dp["time"] / ps["time"] if dp and ps else None
        cp_ratio = cp["time"] / dp["time"] if cp and dp else None
        cp_cell = "-" if cp is None and not (depth == 2 or fset == "example") else (
            "fail" if cp is None else f"{cp['time']:.2f}" + ("" if cp["status"] == "optimal" else " (limit)"))
        errs = " / ".join("-" if r is None or r["errors"] is None else str(r["errors"]) for r in (ps, dp, cp))
        ps_cell = "fail" if ps is None else f"{ps['time']:.2f}"
        dp_cell = "fail" if dp is None else f"{dp['time']:.2f}" + ("" if dp["status"] == "optimal" else " (limit)")
        ratio_cell = "-" if ratio is None else f"{ratio:.2f}"
        cp_ratio_cell = "-" if cp_ratio is None else ("" if cp["status"] == "optimal" else ">= ") + f"{cp_ratio:.0f}"
        front = "-" if dp is None else dp["front"]
        row = (f"| {task} | {sens} | {depth} | {fset} ({len(feats)}) | {ps_cell} | {dp_cell} | {ratio_cell} | "
               f"{cp_cell} | {cp_ratio_cell} | {errs} | {front} |")
        print(row, flush=True)
        lines.append(row)
        rows.append({"ratio": ratio, "cp_ratio": cp_ratio, "agree": ps is not None and dp is not None
                     and ps["errors"] == dp["errors"]})
    ratios = [r["ratio"] for r in rows if r["ratio"]]
    cps = [r["cp_ratio"] for r in rows if r["cp_ratio"]]
    summary = []
    if ratios:
        summary.append(f"dp / pystreed: median {statistics.median(ratios):.2f}, geometric mean "
                       f"{math.exp(statistics.mean(math.log(r) for r in ratios)):.2f} over {len(ratios)} programs; "
                       f"equal optima on {sum(r['agree'] for r in rows)} of {len(rows)}")
    if cps:
        summary.append(f"cp / dp: median {statistics.median(cps):.0f}, geometric mean "
                       f"{math.exp(statistics.mean(math.log(r) for r in cps)):.0f} over {len(cps)} programs "
                       "(cp's time at its limit where it did not prove its optimum: a lower bound on the ratio)")
    for s in summary:
        print(s)
    if args.write:
        _write(lines, summary, args)
    return 0


def _write(lines: list[str], summary: list[str], args) -> None:
    path = ROOT / "bench" / "RESULTS.md"
    text = path.read_text()
    start = "<!-- fairness:start -->"
    end = "<!-- fairness:end -->"
    body = "\n".join([start, "", f"`python bench/fairness.py --limit {args.limit:g} --cp-limit {args.cp_limit:g}` "
                      f"(discrimination limit {args.discrimination}; 2 shared cores):", ""] + lines + [""]
                     + [f"* {s}" for s in summary] + ["", end])
    if start in text:
        text = text.split(start)[0] + body + text.split(end)[1]
    else:
        text = text.rstrip() + ("\n\n## Group fairness: dp's Pareto fronts (issue 14) against pystreed and cp "
                                f"(bench/fairness.py, {time.strftime('%Y-%m-%d')})\n\n") + body + "\n"
    path.write_text(text)


if __name__ == "__main__":
    raise SystemExit(main())
