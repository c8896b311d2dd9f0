"""Regression trees (issue 26): odt's dp backend next to pystreed's ``STreeDRegressor`` and
scikit-learn's ``DecisionTreeRegressor``, side by side in one run.

On the six sets of ../shared/datasets/regression (numeric target last, text columns
categorical, ``NA`` cells; rows whose target is ``NA`` are dropped, as hitters' 59):

(a) against pystreed on the SAME 0/1 columns: every numeric column cut at its quantiles
    (``--bins`` thresholds, ``x <= q``, and ``x is NA`` where it has missing cells), every
    categorical column one-hot (``NA`` a category of its own). Tasks ``regression``
    (``minimize squared_error``) and ``cost-complex-regression`` (pystreed's
    ``cost_complexity = c`` charges each decision node ``c`` times the squared error of the
    single leaf, so odt minimises ``squared_error + c * SST * nodes``). Both optima are
    compared (equal within 1e-6 relative) and the geometric mean of the time ratios odt /
    pystreed is printed, at depths 2 and 3.
(b) against scikit-learn's greedy tree of the same depth on the raw numeric columns
    without missing cells: odt's training squared error (proved optimal, or the best
    within the limit) is never higher; odt's time to the proof is printed.

Times are in-process wall-clock of one solve, or the median of ``--repeats`` (odt:
``Program.solve`` of a freshly compiled program, warm-up solves on both data shapes having
paid the one-time imports and kernel loads; pystreed: ``fit`` of a new estimator). Without ../shared the script says so and exits 0.

    python bench/regression.py [--datasets a,b|all] [--depths 2,3] [--bins 4] [--limit 120] [--repeats 1] [--write]
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("ODT_KERNELS", "compile")
SHARED = ROOT.parent / "shared" / "datasets" / "regression"
ALL = ["mpg", "hitters", "carseats", "computers", "collegedistance", "ames"]
CC = 0.01
FLOOR = 0.3  # issue 25's rule: a solve under 0.3 s counts as 0.3 s in the floored ratios


def load(name: str):
    """(frame of features, target) with the NA-target rows dropped."""
    import pandas as pd

    df = pd.read_csv(SHARED / f"{name}.csv", keep_default_na=False, na_values=["NA"])
    target = df.columns[-1]
    df = df[df[target].notna()].reset_index(drop=True)
    return df.drop(columns=target), df[target].to_numpy(dtype=float)


def binary_columns(X, bins: int) -> dict[str, np.ndarray]:
    """The 0/1 columns both solvers get (see the module)."""
    out: dict[str, np.ndarray] = {}
    for col in X.columns:
        v = X[col]
        if v.dtype.kind in "if":
            a = v.to_numpy(dtype=float)
            present = a[~np.isnan(a)]
            qs = np.unique(np.quantile(present, np.linspace(0, 1, bins + 2)[1:-1]))
            for q in qs:
                if q < present.max():
                    out[f"{col}<={q:g}"] = (a <= q).astype(np.int64)
            if np.isnan(a).any():
                out[f"{col}=NA"] = np.isnan(a).astype(np.int64)
        else:
            s = v.astype(str).fillna("NA")
            for cat in sorted(s.unique()):
                out[f"{col}={cat}"] = (s == cat).to_numpy().astype(np.int64)
    keep = {k: c for k, c in out.items() if 0 < c.sum() < len(c)}
    unique: dict[bytes, str] = {}
    for k, c in keep.items():  # duplicate columns say nothing more
        unique.setdefault(c.tobytes(), k)
    return {k: keep[k] for k in unique.values()}


def _odt(columns: dict[str, np.ndarray], y: np.ndarray, model: str, limit: float, repeats: int = 1):
    """(result, median seconds of ``repeats`` solves, each of a freshly compiled program)."""
    import odt

    data = {f"c{j}": c for j, c in enumerate(columns.values())} | {"y": y}
    times = []
    for _ in range(repeats):
        prog = odt.compile("data { target y }\n" + model, data=data)
        t = time.perf_counter()
        r = prog.solve(backend="dp", time_limit=limit)
        times.append(time.perf_counter() - t)
    return r, float(np.median(times))


def sse(pred: np.ndarray, y: np.ndarray) -> float:
    return float(((pred - y) ** 2).sum())


def compare_pystreed(name: str, X, y: np.ndarray, depths: list[int], bins: int, limit: float,
                     repeats: int = 1) -> list[dict]:
    from pystreed import STreeDRegressor

    cols = binary_columns(X, bins)
    B = np.column_stack(list(cols.values()))
    sst = sse(np.full(len(y), y.mean()), y)
    rows = []
    for depth in depths:
        for task in ("regression", "cost-complex-regression"):
            cc = CC if task != "regression" else 0.0
            model = f"model tree(depth <= {depth})\nminimize squared_error"
            if cc:
                model += f" + {cc * sst!r} * nodes"
            r, t_odt = _odt(cols, y, model + "\n", limit, repeats)
            times = []
            for _ in range(repeats):
                ps = STreeDRegressor(optimization_task=task, max_depth=depth, cost_complexity=cc, time_limit=limit)
                t = time.perf_counter()
                ps.fit(B, y)
                times.append(time.perf_counter() - t)
            t_ps = float(np.median(times))
            p_pred = ps.predict(B)
            p_nodes = _nodes(ps)
            p_value = sse(p_pred, y) + cc * sst * p_nodes
            o_value = float(r.objective) if r.objective is not None else math.nan
            equal = abs(o_value - p_value) <= 1e-6 * max(1.0, abs(p_value))
            rows.append(dict(set=name, rows=len(y), cols=B.shape[1], depth=depth, task=task, odt=t_odt, streed=t_ps,
                             status=r.status, odt_value=o_value, streed_value=p_value, equal=equal,
                             ratio=t_odt / max(t_ps, 1e-9)))
            _show(rows[-1])
    return rows


def _nodes(ps) -> int:
    """Decision nodes of pystreed's tree (its text export counts them as branching nodes)."""
    tree = ps.get_tree() if hasattr(ps, "get_tree") else None
    if tree is not None and hasattr(tree, "num_nodes"):
        return int(tree.num_nodes())
    n_leaves = int(ps.get_n_leaves()) if hasattr(ps, "get_n_leaves") else None
    if n_leaves is not None:
        return n_leaves - 1
    raise RuntimeError("cannot count pystreed's nodes")


def compare_cart(name: str, X, y: np.ndarray, depths: list[int], limit: float) -> list[dict]:
    from sklearn.tree import DecisionTreeRegressor

    num = [c for c in X.columns if X[c].dtype.kind in "if" and not X[c].isna().any()]
    cols = {c: X[c].to_numpy(dtype=float) for c in num}
    A = np.column_stack(list(cols.values()))
    rows = []
    for depth in depths:
        import odt

        prog = odt.compile(f"data {{ target y }}\nmodel tree(depth <= {depth})\nminimize squared_error\n",
                           data={f"c{j}": c for j, c in enumerate(cols.values())} | {"y": y})
        t = time.perf_counter()
        r = prog.solve(backend="dp", time_limit=limit)
        t_odt = time.perf_counter() - t
        cart = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(A, y)
        c_sse = sse(cart.predict(A), y)
        o_sse = float(r.objective)
        rows.append(dict(set=name, rows=len(y), cols=A.shape[1], depth=depth, task="raw vs CART", odt=t_odt,
                         status=r.status, odt_value=o_sse, cart_value=c_sse,
                         never_higher=o_sse <= c_sse * (1 + 1e-9) + 1e-9))
        _show(rows[-1])
    return rows


def warm_up() -> None:
    """One small regression solve on each data shape first, so no timed solve pays for the
    one-time imports (and, with ODT_KERNELS=compile, the kernels' compilation)."""
    import odt

    rng = np.random.default_rng(0)
    mixed = {"b": rng.integers(0, 2, 50), "x": rng.normal(size=50), "y": rng.normal(size=50)}
    binary = {f"b{j}": rng.integers(0, 2, 60) for j in range(6)} | {"y": rng.normal(size=60).round(2)}
    for data in (mixed, binary):  # raw thresholds, then 0/1 columns only (the kernels part (a) calls)
        for model in ("model tree(depth <= 3)\nminimize squared_error + 0.1 * nodes\n",
                      "model tree(depth <= 3)\nminimize squared_error\n",
                      "model tree(depth <= 2)\nminimize squared_error\n"):
            odt.compile("data { target y }\n" + model, data=data).solve(backend="dp")


def _show(row: dict) -> None:
    if "streed" in row:
        print(f"{row['set']:<16} d={row['depth']} {row['task']:<24} odt {row['odt']:8.2f}s ({row['status']:<8}) "
              f"pystreed {row['streed']:8.2f}s  ratio {row['ratio']:7.2f}  {row['odt_value']:.6g} vs "
              f"{row['streed_value']:.6g} {'equal' if row['equal'] else 'DIFFERENT'}", flush=True)
    else:
        print(f"{row['set']:<16} d={row['depth']} {row['task']:<24} odt {row['odt']:8.2f}s ({row['status']:<8}) "
              f"SSE {row['odt_value']:.6g} vs CART {row['cart_value']:.6g} "
              f"{'never higher' if row['never_higher'] else 'HIGHER'}", flush=True)


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def markdown(a: list[dict], b: list[dict], args) -> str:
    lines = [f"## Regression trees against pystreed and CART (issue 26, bench/regression.py --depths "
             f"{args.depths} --bins {args.bins} --limit {args.limit:g}, {time.strftime('%Y-%m-%d')})", "",
             "(a) the same 0/1 columns (quantile thresholds, one-hot categories); times in-process, the median of "
             f"{args.repeats} solve(s) each (odt: each of a freshly compiled program).",
             "", "| set | rows | 0/1 cols | depth | task | odt s | status | pystreed s | odt/pystreed | optima |",
             "|---|---:|---:|---:|---|---:|---|---:|---:|---|"]
    for r in a:
        lines.append(f"| {r['set']} | {r['rows']} | {r['cols']} | {r['depth']} | {r['task']} | {r['odt']:.2f} | "
                     f"{r['status']} | {r['streed']:.2f} | {r['ratio']:.2f} | "
                     f"{'equal' if r['equal'] else 'DIFFERENT: %.6g vs %.6g' % (r['odt_value'], r['streed_value'])} |")
    for d in sorted({r["depth"] for r in a}):
        ratios = [r["ratio"] for r in a if r["depth"] == d]
        floored = [max(r["odt"], FLOOR) / max(r["streed"], FLOOR) for r in a if r["depth"] == d]
        lines.append(f"\nDepth {d}: geometric-mean ratio odt/pystreed {geomean(ratios):.2f} over {len(ratios)} "
                     f"solves ({geomean(floored):.2f} with every time under {FLOOR} s counted as {FLOOR} s, issue "
                     f"25's rule); {sum(r['equal'] for r in a if r['depth'] == d)} of {len(ratios)} optima equal.")
    lines += ["", "(b) raw numeric columns without missing cells against scikit-learn's DecisionTreeRegressor.", "",
              "| set | rows | columns | depth | odt s | status | odt SSE | CART SSE | never higher |",
              "|---|---:|---:|---:|---:|---|---:|---:|---|"]
    for r in b:
        lines.append(f"| {r['set']} | {r['rows']} | {r['cols']} | {r['depth']} | {r['odt']:.2f} | {r['status']} | "
                     f"{r['odt_value']:.6g} | {r['cart_value']:.6g} | {'yes' if r['never_higher'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="all")
    ap.add_argument("--depths", default="2,3")
    ap.add_argument("--bins", type=int, default=4)
    ap.add_argument("--limit", type=float, default=120.0)
    ap.add_argument("--repeats", type=int, default=1, help="part (a): the median of this many solves of each side")
    ap.add_argument("--skip", default="", help="parts to skip: a (pystreed), b (CART)")
    ap.add_argument("--write", action="store_true", help="append the tables to bench/RESULTS.md")
    args = ap.parse_args(argv)
    if not SHARED.is_dir():
        print(f"the regression datasets are not here: {SHARED} is absent (they live in ../shared next to the "
              "checkout); nothing to run")
        return 0
    names = ALL if args.datasets == "all" else args.datasets.split(",")
    warm_up()
    depths = [int(d) for d in args.depths.split(",")]
    a: list[dict] = []
    b: list[dict] = []
    for name in names:
        if not (SHARED / f"{name}.csv").exists():
            print(f"skip {name}: not in {SHARED}", file=sys.stderr)
            continue
        X, y = load(name)
        if "a" not in args.skip:
            a += compare_pystreed(name, X, y, depths, args.bins, args.limit, args.repeats)
        if "b" not in args.skip:
            b += compare_cart(name, X, y, depths, args.limit)
    text = markdown(a, b, args)
    print()
    print(text)
    if args.write:
        with open(ROOT / "bench" / "RESULTS.md", "a") as fh:
            fh.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
