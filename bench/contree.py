"""odt's ConTree search (backends/dp/contree/search.py) next to pycontree, the authors' C++ ConTree.

For every continuous dataset of ../shared/datasets/continuous and depths 2, 3, 4: the fit
time of ``optimal_tree`` and of ``pycontree.ConTree`` (each after one warm-up fit on a
small slice of the same data, a time limit per fit), their training errors and whether
the optima match, the peak memory of each fit, the time ratio odt / pycontree per row and
the geometric mean of the ratios (overall and for depths 2-3).

    python bench/contree.py [--limit 60] [--depths 2,3,4] [--datasets a,b] [--budget 25]

Each fit runs in a forked child of this one process (same interpreter, data already
loaded) whose peak-RSS counter is reset first, so the peak resident memory growth of that
fit alone (warm-up included) is read from ``VmHWM``;
odt's numpy peak is additionally measured with tracemalloc in a separate, untimed run.
A (dataset, depth) is skipped when a solver already timed out at the shallower depth, or
when the overall budget (minutes) is nearly used up.  Needs ../shared/datasets (says so
and exits 0 when absent) and pycontree.
"""
from __future__ import annotations

import argparse
import csv
import importlib.util
import math
import os
import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets" / "continuous"


def load_dp_search():
    try:
        from odt.backends.dp.contree import search
        return search
    except ImportError:  # fall back to the file itself
        spec = importlib.util.spec_from_file_location("dp_search", ROOT / "backends" / "dp" / "contree" / "search.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["dp_search"] = mod
        spec.loader.exec_module(mod)
        return mod


def load(path: Path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    X = np.array([[float(v) for v in r[:-1]] for r in rows[1:]], dtype=np.float64)
    labels = [r[-1] for r in rows[1:]]
    classes = sorted(set(labels))
    index = {c: i for i, c in enumerate(classes)}
    return X, np.array([index[v] for v in labels], dtype=np.int64)


def kernels_backend(dp) -> str:
    kernels = getattr(dp, "_kernels", None)
    return "numba kernels" if kernels is not None and kernels.ACTIVE else "pure numpy"


def warm_up(dp) -> None:
    """One small fit per kernel flavour (two-class / multiclass, integral / fractional
    weights), so the compiled kernels are ready before the timed fits."""
    rng = np.random.default_rng(0)
    X = rng.random((60, 3))
    for k in (2, 3):
        y = rng.integers(0, k, 60)
        dp.optimal_tree(X, y, 3, n_classes=k)
        dp.optimal_tree(X, y, 3, n_classes=k, weights=rng.random(60) + 0.5)


def fit_odt(X, y, depth, limit):
    dp = load_dp_search()
    dp.optimal_tree(X[:100], y[:100], 3, n_classes=int(y.max()) + 1)  # warm-up
    t = time.perf_counter()
    res = dp.optimal_tree(X, y, depth, time_limit=limit)
    seconds = time.perf_counter() - t
    return {"seconds": seconds, "errors": int(round(res.cost)), "optimal": res.status == "optimal",
            "lower_bound": res.lower_bound}


def fit_pycontree(X, y, depth, limit):
    from pycontree import ConTree

    warnings.filterwarnings("ignore")
    ConTree(max_depth=2, time_limit=limit).fit(X[:100], y[:100])  # warm-up
    model = ConTree(max_depth=depth, time_limit=limit)
    t = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - t
    optimal = bool(model._config.is_within_time_limit()) and seconds < limit
    return {"seconds": seconds, "errors": int((model.predict(X) != y).sum()), "optimal": optimal}


def odt_tracemalloc_peak(X, y, depth, limit):
    import tracemalloc

    dp = load_dp_search()
    tracemalloc.start()
    dp.optimal_tree(X, y, depth, time_limit=limit)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"peak": peak}


def in_child(fn, *args):
    """Run ``fn(*args)`` in a forked child; return its result and the child's peak RSS (MB)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")  # reset the peak-RSS (VmHWM) inherited from the parent
        except OSError:
            pass
        rss_before = _status_mb("VmRSS")
        try:
            out = fn(*args)
        except BaseException as exc:  # report, never escape into the parent's loop
            out = {"error": repr(exc)}
        out["rss_mb"] = max(0.0, _status_mb("VmHWM") - rss_before)
        with os.fdopen(w, "wb") as fh:
            pickle.dump(out, fh)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return pickle.loads(data) if data else {"error": "child died", "rss_mb": 0.0}


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def geomean(values):
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=float, default=60.0, help="time limit per fit (s)")
    ap.add_argument("--depths", default="2,3,4")
    ap.add_argument("--datasets", default="", help="comma-separated names (default: all)")
    ap.add_argument("--budget", type=float, default=25.0, help="overall budget (minutes)")
    args = ap.parse_args(argv)

    if not SHARED.is_dir():
        print(f"bench/contree.py: {SHARED} not found; nothing to benchmark (needs ../shared/datasets).")
        return 0
    try:
        import pycontree  # noqa: F401
    except ImportError:
        print("bench/contree.py: pycontree is not installed (pip install pycontree); nothing to compare.")
        return 0

    dp = load_dp_search()  # imported before forking, so child RSS deltas measure the fit only
    backend = kernels_backend(dp)
    t0 = time.perf_counter()
    warm_up(dp)  # JIT-compile (or load from numba's on-disk cache) before forking
    warm_s = time.perf_counter() - t0
    names = [n for n in args.datasets.split(",") if n] or sorted(p.stem for p in SHARED.glob("*.csv"))
    data = {}
    for n in names:
        X, y = load(SHARED / f"{n}.csv")
        data[n] = (X, y)
    names.sort(key=lambda n: data[n][0].size)  # small first: most rows finish in the budget
    depths = [int(d) for d in args.depths.split(",")]
    start = time.perf_counter()
    budget = args.budget * 60.0
    print(f"# odt ConTree ({backend}) vs pycontree {getattr(pycontree, '__version__', '')}, "
          f"limit {args.limit:g}s per fit, budget {args.budget:g} min, cores {os.cpu_count()}")
    print(f"# one-off kernel warm-up in the parent (JIT compile, or load of numba's on-disk cache): "
          f"{warm_s:.2f}s, not included in the fit times")
    header = (f"{'dataset':22s} {'n':>6s} {'p':>3s} {'K':>3s} {'d':>2s} | {'odt s':>8s} {'pyct s':>8s} "
              f"{'ratio':>7s} | {'odt err':>7s} {'pyct err':>8s} {'match':>5s} | "
              f"{'odt MB':>7s} {'pyct MB':>7s} {'odt numpy peak MB':>17s}")
    print(header)
    print("-" * len(header))
    rows = []
    timed_out: dict[str, set] = {}
    for depth in depths:
        for n in names:
            X, y = data[n]
            K = int(y.max()) + 1
            tag = f"{n:22s} {X.shape[0]:6d} {X.shape[1]:3d} {K:3d} {depth:2d} |"
            if timed_out.get(n):
                print(f"{tag} skipped: {' and '.join(sorted(timed_out[n]))} timed out at a smaller depth", flush=True)
                continue
            if time.perf_counter() - start > budget - 2.2 * args.limit:
                print(f"{tag} skipped: overall budget used up", flush=True)
                continue
            o = in_child(fit_odt, X, y, depth, args.limit)
            c = in_child(fit_pycontree, X, y, depth, args.limit)
            if "error" in o or "error" in c:
                print(f"{tag} error: odt={o.get('error')} pycontree={c.get('error')}", flush=True)
                continue
            mem = in_child(odt_tracemalloc_peak, X, y, depth, args.limit) if o["seconds"] < 20 else {}
            for who, r in (("odt", o), ("pycontree", c)):
                if not r["optimal"]:
                    timed_out.setdefault(n, set()).add(who)
            both = o["optimal"] and c["optimal"]
            match = ("yes" if o["errors"] == c["errors"] else "NO") if both else "n/a"
            ratio = o["seconds"] / c["seconds"] if c["seconds"] > 0 else float("inf")
            so = f"{o['seconds']:8.3f}" if o["optimal"] else f"{'>' + format(args.limit, 'g'):>8s}"
            sc = f"{c['seconds']:8.3f}" if c["optimal"] else f"{'>' + format(args.limit, 'g'):>8s}"
            peak = f"{mem['peak'] / 2**20:17.1f}" if "peak" in mem else f"{'-':>17s}"
            print(f"{tag} {so} {sc} {ratio:7.2f} | {o['errors']:7d} {c['errors']:8d} {match:>5s} | "
                  f"{o['rss_mb']:7.1f} {c['rss_mb']:7.1f} {peak}", flush=True)
            rows.append((n, depth, o, c, ratio, both, match))

    print()
    solved = [r for r in rows if r[5]]
    print(f"rows run: {len(rows)}, both optimal: {len(solved)}, optimum mismatches: "
          f"{sum(1 for r in solved if r[6] == 'NO')}")
    for label, sel in (("all depths", solved), ("depths 2-3", [r for r in solved if r[1] in (2, 3)])):
        print(f"geometric mean time ratio odt/pycontree ({label}, both optimal, n={len(sel)}): "
              f"{geomean([r[4] for r in sel]):.2f}")
    for d in depths:
        sel = [r for r in solved if r[1] == d]
        if sel:
            print(f"  depth {d}: geomean {geomean([r[4] for r in sel]):.2f} over {len(sel)} datasets")
    print(f"total wall time {time.perf_counter() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
