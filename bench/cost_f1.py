"""odt's dp backend next to pystreed (STreeD 1.4) on cost-sensitive classification and F1
(issue 26), in one run.

On the binary datasets of ../shared/datasets/binary (label ``class``, last column), depths
2-4: a misclassification cost matrix (``cost C = { 0 as 1: 1, 1 as 0: 4 }``, odt's
``minimize misclassification_cost(C)``) against ``STreeDCostSensitiveClassifier`` with the
same matrix (zero feature costs), and ``maximize f1`` against ``STreeDClassifier``'s
``f1-score`` task. pystreed gets odt's own 0/1 matrix, so both search the same trees; the
optimum of each side is computed here from its predictions (cost, or F1 of class 1).
Prints both times (the median of ``--repeats`` solves, each of a freshly compiled program
and a new estimator), the ratio odt / pystreed and whether the optima agree; then per task
and depth, and per task over every depth of the run (D "all"), the geometric mean of the
ratios, also with every solve under 0.3 s counted as 0.3 s (issue 25's rule). With --write, appends every row (misses included) to
bench/RESULTS.md under its own section.

    python bench/cost_f1.py [--datasets a,b|all] [--depths 2,3,4] [--tasks cost,f1] [--limit 120] [--repeats 1] [--write]
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("ODT_KERNELS", "compile")  # time the compiled kernels (as bench/streed.py)
SHARED = ROOT.parent / "shared" / "datasets" / "binary"
DEFAULT = ["mouse", "corral", "mux6", "zoo-1", "spect-heart", "hepatitis", "tic-tac-toe", "heart-cleveland",
           "breast-wisconsin", "anneal"]
TASKS = ("cost", "f1")
FLOOR = 0.3
MATRIX = [[0.0, 1.0], [4.0, 0.0]]  # [actual][predicted]


def _value(task: str, y, pred) -> float:
    if task == "cost":
        return float(sum(MATRIX[int(a)][int(p)] for a, p in zip(y, pred)))
    tp = int(((pred == 1) & (y == 1)).sum())
    fp = int(((pred == 1) & (y != 1)).sum())
    fn = int(((pred != 1) & (y == 1)).sum())
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def run(datasets: list[str], depths: list[int], limit: float, tasks: tuple[str, ...], repeats: int = 1) -> list[dict]:
    import odt
    import pystreed

    rows = []
    warm = ROOT / "examples" / "data" / "mouse.csv"  # load odt's compiled kernels once, untimed
    odt.compile(f'data "{warm}" {{ target class }}\nmodel tree(depth <= 2)\nmaximize f1').solve(backend="dp")
    odt.compile(f'data "{warm}" {{ target class }}\nmodel tree(depth <= 3)\nminimize 4 * fn + fp').solve(backend="dp")
    for name in datasets:
        path = SHARED / f"{name}.csv"
        if not path.exists():
            print(f"skip {name}: not in {SHARED}", file=sys.stderr)
            continue
        head = f'data "{path}" {{ target class }}\n'
        base = odt.compile(head + "model tree(depth <= 1)\nminimize errors")
        if len(base.dataset.classes) != 2:
            print(f"skip {name}: {len(base.dataset.classes)} classes (cost and F1 here are two-class)", file=sys.stderr)
            continue
        X, y = base.dataset.X.astype(int), base.dataset.y
        for depth in depths:
            for task in tasks:
                if task == "cost":
                    text = head + "cost C = { 0 as 1: 1, 1 as 0: 4 }\n" + f"model tree(depth <= {depth})\n" \
                        "minimize misclassification_cost(C)"
                    peer = pystreed.STreeDCostSensitiveClassifier(max_depth=depth, time_limit=limit)
                    spec = pystreed.CostSpecifier(MATRIX, [pystreed.FeatureCostSpecifier(0.0, 0.0, "", j, j)
                                                           for j in range(X.shape[1])])
                    args: tuple = (spec,)
                else:
                    text = head + f"model tree(depth <= {depth})\nmaximize f1"
                    peer = pystreed.STreeDClassifier(optimization_task="f1-score", max_depth=depth, time_limit=limit,
                                                     hyper_tune=False)
                    args = ()
                own, theirs = [], []
                for _ in range(repeats):  # each a freshly compiled program and a new estimator
                    prog = odt.compile(text)
                    t = time.perf_counter()
                    res = prog.solve(backend="dp", time_limit=limit)
                    own.append(time.perf_counter() - t)
                    peer = type(peer)(**peer.get_params())
                    t = time.perf_counter()
                    peer.fit(X, y, *args)
                    theirs.append(time.perf_counter() - t)
                s, ps = statistics.median(own), statistics.median(theirs)
                pval = _value(task, y, peer.predict(X))
                row = {"dataset": name, "n": len(y), "p": X.shape[1], "depth": depth, "task": task, "s": s, "ps": ps,
                       "status": res.status, "value": res.objective, "peer": pval, "verified": res.verified}
                rows.append(row)
                print(f"{name} d={depth} {task}: odt {res.status} {res.objective} in {s:.3f}s, pystreed {pval} in "
                      f"{ps:.3f}s", file=sys.stderr, flush=True)
    return rows


def table(rows: list[dict], limit: float) -> str:
    lines = ["| dataset | n | p | D | task | odt dp s | pystreed s | ratio | odt | pystreed | equal |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        done = r["status"] == "optimal"
        equal = done and r["verified"] and r["value"] is not None and abs(r["value"] - r["peer"]) < 1e-6
        value = "-" if r["value"] is None else f"{r['value']:.6g}"
        lines.append(f"| {r['dataset']} | {r['n']} | {r['p']} | {r['depth']} | {r['task']} | "
                     f"{r['s']:.3f}{'' if done else ' (' + r['status'] + f', limit {limit:g} s)'} | {r['ps']:.3f} | "
                     f"{r['s'] / max(r['ps'], 1e-4):.2f}x | {value} | {r['peer']:.6g} | {'yes' if equal else 'NO'} |")
    lines += ["", f"| task | D | runs | median ratio | geometric mean ratio | geometric mean, floored at {FLOOR:g} s | "
                  "largest floored ratio | all equal |", "|---|---|---|---|---|---|---|---|"]
    depths = sorted({r["depth"] for r in rows})
    for task in TASKS:  # each depth, then every depth of the run together (the task's one geometric mean)
        for depth in depths + (["all"] if len(depths) > 1 else []):
            sel = [r for r in rows if r["task"] == task and (depth == "all" or r["depth"] == depth)]
            if not sel:
                continue
            ratios = [r["s"] / max(r["ps"], 1e-4) for r in sel]
            floored = [max(r["s"], FLOOR) / max(r["ps"], FLOOR) for r in sel]
            geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            geo_floor = math.exp(sum(math.log(x) for x in floored) / len(floored))
            worst = max(zip(floored, sel), key=lambda t: t[0])
            equal = all(r["status"] == "optimal" and r["value"] is not None and abs(r["value"] - r["peer"]) < 1e-6
                        for r in sel)
            lines.append(f"| {task} | {depth} | {len(sel)} | {statistics.median(ratios):.2f}x | {geo:.2f}x | "
                         f"{geo_floor:.2f}x | {worst[0]:.2f}x ({worst[1]['dataset']}) | {'yes' if equal else 'NO'} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=",".join(DEFAULT), help="comma-separated names, or 'all'")
    ap.add_argument("--depths", default="2,3,4")
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--limit", type=float, default=120)
    ap.add_argument("--repeats", type=int, default=1, help="the median of this many solves of each side")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    if not SHARED.exists():
        print(f"bench/cost_f1.py: {SHARED} is absent; this benchmark reads the shared binary datasets "
              "(../shared/datasets/binary next to the repository).")
        return 0
    names = sorted(p.stem for p in SHARED.glob("*.csv")) if args.datasets == "all" else args.datasets.split(",")
    rows = run(names, [int(d) for d in args.depths.split(",")], args.limit, tuple(args.tasks.split(",")), args.repeats)
    out = table(rows, args.limit)
    print(out)
    if args.write:
        results = ROOT / "bench" / "RESULTS.md"
        text = results.read_text() if results.exists() else "# Benchmark results\n"
        text += (f"\n## Cost-sensitive and F1 trees: dp against pystreed (bench/cost_f1.py, limit {args.limit:g} s, "
                 f"{time.strftime('%Y-%m-%d %H:%M')})\n\n"
                 "Cost matrix [[0, 1], [4, 0]] (actual x predicted) against STreeDCostSensitiveClassifier; maximize f1 "
                 "against STreeDClassifier('f1-score'); the same 0/1 matrix. 2 shared cores with other jobs running.\n\n"
                 + out + "\n")
        results.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
