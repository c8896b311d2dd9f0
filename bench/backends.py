"""Time to proven optimum of every odt backend next to pystreed, in one process run.

For depths 2 and 3 on the binary datasets of ../shared/datasets/binary: odt's maxsat, cp
and milp backends (objective `minimize errors`, a per-solve time limit) and pystreed
(STreeD, exact dynamic programming) on the same data; the encoding size of each odt
model; the ratio of each backend's time to pystreed's. Prints a Markdown table and, with
--write, replaces the backends section of bench/RESULTS.md.

    python bench/backends.py [--limit 120] [--datasets a,b] [--backends maxsat,cp,milp] [--write]

Needs ../shared/datasets (says so and exits 0 when absent) and pystreed.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets" / "binary"
DEFAULT = ["mouse", "corral", "mux6", "zoo-1", "spect-heart", "hepatitis", "tic-tac-toe", "haberman",
           "heart-cleveland", "breast-wisconsin", "diabetes", "anneal"]


def pystreed_errors(path: Path, depth: int) -> tuple[float, int]:
    import numpy as np
    from pystreed import STreeDClassifier

    data = np.genfromtxt(path, delimiter=",", skip_header=1, dtype=str)
    X = data[:, :-1].astype(float).astype(int)
    labels = {v: i for i, v in enumerate(sorted(set(data[:, -1])))}
    y = np.array([labels[v] for v in data[:, -1]])
    model = STreeDClassifier(optimization_task="accuracy", max_depth=depth, max_num_nodes=None,
                             min_leaf_node_size=1, hyper_tune=False, time_limit=600)
    t = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - t
    return seconds, int((model.predict(X) != y).sum())


def run(datasets: list[str], backends: list[str], depths: list[int], limit: float) -> list[dict]:
    import odt

    rows = []
    for name in datasets:
        path = SHARED / f"{name}.csv"
        if not path.exists():
            print(f"skip {name}: not in {SHARED}", file=sys.stderr)
            continue
        for depth in depths:
            text = f'data "{path}" {{ target class }}\nmodel tree(depth <= {depth})\nminimize errors\n'
            prog = odt.compile(text)
            ps, perr = pystreed_errors(path, depth)
            row = {"dataset": name, "rows": prog.dataset.n_rows, "features": len(prog.dataset.features),
                   "depth": depth, "pystreed_s": ps, "pystreed_err": perr}
            for b in backends:
                st = prog.lowered_for(b).model.stats()
                t = time.perf_counter()
                res = prog.solve(backend=b, time_limit=limit)
                row[b] = {"s": time.perf_counter() - t, "status": res.status, "err": res.train_errors,
                          "verified": res.verified, "size": (st.variables, st.clauses + st.linear_rows, st.literals + st.linear_terms)}
                print(f"{name} d={depth} {b}: {res.status} {res.train_errors} in {row[b]['s']:.2f}s "
                      f"(pystreed {perr} in {ps:.3f}s)", file=sys.stderr, flush=True)
            rows.append(row)
    return rows


def table(rows: list[dict], backends: list[str], limit: float) -> str:
    head = ["dataset", "rows", "feat", "D", "pystreed s", "err"]
    for b in backends:
        head += [f"{b} s", f"{b} ratio"]
    head += ["vars / rows+clauses / literals (paths)", "agree"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["dataset"], str(r["rows"]), str(r["features"]), str(r["depth"]), f"{r['pystreed_s']:.3f}",
                 str(r["pystreed_err"])]
        agree = True
        for b in backends:
            x = r[b]
            done = x["status"] == "optimal"
            cells.append(f"{x['s']:.2f}" if done else f">{limit:g} ({x['status']})")
            cells.append(f"{x['s'] / max(r['pystreed_s'], 1e-3):.0f}x" if done else "-")
            if done and x["err"] != r["pystreed_err"]:
                agree = False
        size = r[backends[0]]["size"]
        cells += [f"{size[0]} / {size[1]} / {size[2]}", "yes" if agree else "NO"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=float, default=120)
    ap.add_argument("--datasets", default=",".join(DEFAULT))
    ap.add_argument("--backends", default="maxsat,cp,milp")
    ap.add_argument("--depths", default="2,3")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    if not SHARED.exists():
        print(f"bench/backends.py: {SHARED} is absent; this benchmark reads the shared datasets.")
        return 0
    backends = args.backends.split(",")
    rows = run(args.datasets.split(","), backends, [int(d) for d in args.depths.split(",")], args.limit)
    out = table(rows, backends, args.limit)
    print(out)
    if args.write:
        results = ROOT / "bench" / "RESULTS.md"
        text = results.read_text() if results.exists() else "# Benchmark results\n"
        start, end = "<!-- backends:start -->", "<!-- backends:end -->"
        block = f"{start}\n{out}\n{end}"
        if start in text:
            text = text[: text.index(start)] + block + text[text.index(end) + len(end):]
        else:
            text += f"\n## Backends against pystreed (bench/backends.py, limit {args.limit:g} s)\n\n{block}\n"
        results.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
