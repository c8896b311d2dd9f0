"""odt's ConTree search (backends/dp/contree/search.py) next to pycontree, the authors' C++ ConTree.

For every continuous dataset of ../shared/datasets/continuous and depths 2, 3, 4: the fit
time of ``optimal_tree`` and of ``pycontree.ConTree`` (each after warm-up fits on small
slices of the same data, one at the row's depth, a time limit per fit), their training errors and whether
the optima match, the peak memory of each fit, the time ratio odt / pycontree per row and
the geometric mean of the ratios (overall and for depths 2-3).

    python bench/contree.py [--limit 60] [--depths 2,3,4] [--datasets a,b] [--budget 25]
                            [--repeats 3] [--process]

With ``--repeats R`` every (dataset, depth) runs R interleaved rounds (odt fit, pycontree
fit[, odt process, pycontree process]) and the table shows medians, so load from other
processes on the shared machine hits both sides alike; the spread (max/min of the R
times) is printed as the noise, and ``cpu`` is the ratio of the fits' process times (less hit by other
load on a shared machine than the wall times). ``--process`` adds whole-process times: ``odtc solve`` on
a generated program (``auto``, no backend named, as a user runs it) and a fresh Python
process that reads the same CSV and fits pycontree.

Each fit runs in a forked child of this one process (same interpreter, data already
loaded) whose peak-RSS counter is reset first, so the peak resident memory growth of that
fit alone (warm-up included) is read from ``VmHWM``. The warm-ups include one at the
row's depth (30 rows spread over the file, 1 s at most) on both sides: a forked child's first run of a code
path copies every page it touches from the parent (lung-cancer depth 4: ~550 minor page
faults, 0.64 ms against 0.28 ms for the next fit of the same child), which would time the
fork, not the search;
odt's numpy peak is additionally measured with tracemalloc in a separate, untimed run.
A (dataset, depth) is skipped when a solver already timed out at the shallower depth, or
when the overall budget (minutes) is nearly used up.  Needs ../shared/datasets (says so
and exits 0 when absent) and pycontree.
"""
from __future__ import annotations

import argparse
import csv
import json
import importlib.util
import math
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# time the compiled kernels, compiled in this process if numba's cache lacks them (backends/dp/jit.py),
# never the numpy paths a cold install runs while its background warm-up compiles them
os.environ.setdefault("ODT_KERNELS", "compile")
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
    try:
        from odt.backends.dp.contree import depth_three
    except ImportError:
        depth_three = None
    for k in (2, 3):
        y = rng.integers(0, k, 60)
        for depth in (2, 3):  # depth 2 runs the root entry points (d2_run), 3 the others
            dp.optimal_tree(X, y, depth, n_classes=k)
            dp.optimal_tree(X, y, depth, n_classes=k, weights=rng.random(60) + 0.5)
        if depth_three is not None:  # depth three of a node too large for one compiled call: d2_quick per child
            saved, depth_three.D3_WORK = depth_three.D3_WORK, 0
            try:
                dp.optimal_tree(X, y, 3, n_classes=k)
            finally:
                depth_three.D3_WORK = saved


def _spread(n: int) -> np.ndarray:
    """30 rows spread over the data (a file sorted by class still gives the warm-up several)."""
    return np.unique(np.linspace(0, n - 1, min(n, 30)).astype(int))


def fit_odt(X, y, depth, limit):
    dp = load_dp_search()
    dp.optimal_tree(X[:100], y[:100], 3, n_classes=int(y.max()) + 1)  # warm-up
    few = _spread(len(y))
    dp.optimal_tree(X[few], y[few], depth, n_classes=int(y.max()) + 1, time_limit=1.0)  # (the row's depth: see the module)
    c = time.process_time()
    t = time.perf_counter()
    res = dp.optimal_tree(X, y, depth, time_limit=limit)
    seconds = time.perf_counter() - t
    return {"seconds": seconds, "cpu": time.process_time() - c, "errors": int(round(res.cost)),
            "optimal": res.status == "optimal", "lower_bound": res.lower_bound}


def fit_pycontree(X, y, depth, limit):
    from pycontree import ConTree

    warnings.filterwarnings("ignore")
    ConTree(max_depth=2, time_limit=limit).fit(X[:100], y[:100])  # warm-up
    few = _spread(len(y))
    ConTree(max_depth=depth, time_limit=1).fit(X[few], y[few])  # (the row's depth: see the module)
    model = ConTree(max_depth=depth, time_limit=limit)
    c = time.process_time()
    t = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - t
    cpu = time.process_time() - c
    optimal = bool(model._config.is_within_time_limit()) and seconds < limit
    return {"seconds": seconds, "cpu": cpu, "errors": int((model.predict(X) != y).sum()), "optimal": optimal}


def odt_program(path: Path, depth: int, folder: Path) -> Path:
    """The odt program a user would write for ``path``: every column numeric, cut at all
    midpoints, a tree of depth <= ``depth`` minimising errors (no backend named)."""
    with open(path, newline="") as fh:
        header = next(csv.reader(fh))
    cols = ", ".join(header[:-1])
    prog = folder / f"{path.stem}-d{depth}.odt"
    prog.write_text(f'data "{path}" {{\n    target class\n    numeric {cols} by thresholds(all)\n}}\n'
                    f"model tree(depth <= {depth})\nminimize errors\n")
    return prog


def process_odt(prog: Path, limit: float) -> dict:
    """Whole ``odtc solve`` process: wall time, the solver's own seconds, its objective."""
    odtc = Path(sys.executable).with_name("odtc")
    t = time.perf_counter()
    out = subprocess.run([str(odtc), "solve", str(prog), "--json", "--quiet", "--time-limit", str(limit)],
                         capture_output=True, text=True)
    wall = time.perf_counter() - t
    try:
        res = json.loads(out.stdout)
    except ValueError:
        return {"error": (out.stderr or out.stdout)[-300:]}
    return {"seconds": wall, "solve": res.get("seconds"), "errors": int(round(res["objective"])),
            "optimal": res.get("status") == "optimal" and res.get("backend") == "dp", "backend": res.get("backend")}


_PYCT_SCRIPT = """
import csv, sys, time, warnings
import numpy as np
from pycontree import ConTree
warnings.filterwarnings("ignore")
with open(sys.argv[1], newline="") as fh:
    rows = list(csv.reader(fh))
X = np.array([[float(v) for v in r[:-1]] for r in rows[1:]], dtype=np.float64)
labels = [r[-1] for r in rows[1:]]
index = {c: i for i, c in enumerate(sorted(set(labels)))}
y = np.array([index[v] for v in labels], dtype=np.int64)
limit = float(sys.argv[3])
t = time.perf_counter()
model = ConTree(max_depth=int(sys.argv[2]), time_limit=limit).fit(X, y)
s = time.perf_counter() - t
ok = bool(model._config.is_within_time_limit()) and s < limit
print(int((model.predict(X) != y).sum()), int(ok))
"""


def process_pycontree(path: Path, depth: int, limit: float) -> dict:
    """Whole process of a user script: import pycontree, read the CSV, fit, predict."""
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _PYCT_SCRIPT, str(path), str(depth), str(limit)],
                         capture_output=True, text=True)
    wall = time.perf_counter() - t
    try:
        err, ok = out.stdout.split()
    except ValueError:
        return {"error": out.stderr[-300:]}
    return {"seconds": wall, "errors": int(err), "optimal": ok == "1"}


def median_run(runs: list[dict]) -> dict:
    """Median seconds over the runs (errors/optimality from the first), and the spread."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0]
    out = dict(ok[0])
    secs = [r["seconds"] for r in ok]
    out["seconds"] = statistics.median(secs)
    out["spread"] = max(secs) / min(secs) if min(secs) > 0 else float("inf")
    out["optimal"] = all(r["optimal"] for r in ok)
    if all("cpu" in r for r in ok):
        out["cpu"] = statistics.median(r["cpu"] for r in ok)
    if "solve" in out and all(r.get("solve") is not None for r in ok):
        out["solve"] = statistics.median(r["solve"] for r in ok)
    return out


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
    ap.add_argument("--repeats", type=int, default=1, help="interleaved rounds per row; medians are shown")
    ap.add_argument("--process", action="store_true", help="also time whole processes (odtc solve / python + pycontree)")
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
    print(f"# {args.repeats} interleaved round(s) per row, medians; noise = max/min time over the rounds; "
          "cpu = odt / pycontree CPU time of the fit (less hit by other processes on a shared machine)"
          + ("; proc = whole process (odtc solve, auto) vs python + pycontree reading the same CSV" if args.process else ""))
    header = (f"{'dataset':22s} {'n':>6s} {'p':>3s} {'K':>3s} {'d':>2s} | {'odt s':>8s} {'pyct s':>8s} "
              f"{'ratio':>6s} {'noise':>5s} {'cpu':>5s} |")
    if args.process:
        header += f" {'odt proc':>8s} {'pyct proc':>9s} {'ratio':>6s} {'noise':>5s} |"
    header += f" {'odt err':>7s} {'pyct err':>8s} {'match':>5s} | {'odt MB':>7s} {'pyct MB':>7s}"
    print(header)
    print("-" * len(header))
    rows = []
    timed_out: dict[str, set] = {}
    folder = Path(tempfile.mkdtemp(prefix="odt-bench-"))

    def fmt(r: dict) -> str:
        return f"{r['seconds']:8.3f}" if r["optimal"] else f"{'>' + format(args.limit, 'g'):>8s}"

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
            prog = odt_program(SHARED / f"{n}.csv", depth, folder) if args.process else None
            runs: dict[str, list[dict]] = {"o": [], "c": [], "po": [], "pc": []}
            for rnd in range(args.repeats):  # interleaved, so load from elsewhere hits both
                runs["o"].append(in_child(fit_odt, X, y, depth, args.limit))
                runs["c"].append(in_child(fit_pycontree, X, y, depth, args.limit))
                if args.process:
                    runs["po"].append(process_odt(prog, args.limit))
                    runs["pc"].append(process_pycontree(SHARED / f"{n}.csv", depth, args.limit))
                if rnd == 0 and not (runs["o"][0].get("optimal") and runs["c"][0].get("optimal")):
                    break  # a time-out: one round says enough
            o, c = median_run(runs["o"]), median_run(runs["c"])
            if "error" in o or "error" in c:
                print(f"{tag} error: odt={o.get('error')} pycontree={c.get('error')}", flush=True)
                continue
            for who, r in (("odt", o), ("pycontree", c)):
                if not r["optimal"]:
                    timed_out.setdefault(n, set()).add(who)
            both = o["optimal"] and c["optimal"]
            match = ("yes" if o["errors"] == c["errors"] else "NO") if both else "n/a"
            ratio = o["seconds"] / c["seconds"] if c["seconds"] > 0 else float("inf")
            cratio = o["cpu"] / c["cpu"] if c.get("cpu") and "cpu" in o else float("nan")
            line = f"{tag} {fmt(o)} {fmt(c)} {ratio:6.2f} {max(o['spread'], c['spread']):5.2f} {cratio:5.2f} |"
            pratio = float("nan")
            if args.process:
                po, pc = median_run(runs["po"]), median_run(runs["pc"])
                if "error" in po or "error" in pc:
                    line += f" process error: {po.get('error') or pc.get('error')} |"
                else:
                    pratio = po["seconds"] / pc["seconds"]
                    if po["optimal"] and pc["optimal"] and both and not (po["errors"] == pc["errors"] == o["errors"]):
                        match = "NO"
                    line += f" {fmt(po)} {fmt(pc):>9s} {pratio:6.2f} {max(po['spread'], pc['spread']):5.2f} |"
            line += f" {o['errors']:7d} {c['errors']:8d} {match:>5s} | {o['rss_mb']:7.1f} {c['rss_mb']:7.1f}"
            print(line, flush=True)
            rows.append((n, depth, o, c, ratio, both, match, pratio, cratio))

    print()
    solved = [r for r in rows if r[5]]
    print(f"rows run: {len(rows)}, both optimal: {len(solved)}, optimum mismatches: "
          f"{sum(1 for r in solved if r[6] == 'NO')}")
    print(f"geometric mean solve-time ratio odt/pycontree (all depths, both optimal, n={len(solved)}): "
          f"{geomean([r[4] for r in solved]):.2f}")
    for d in depths:
        sel = [r for r in solved if r[1] == d]
        if sel:
            worst = max(sel, key=lambda r: r[4])
            msg = (f"  depth {d}: solve geomean {geomean([r[4] for r in sel]):.2f} over {len(sel)} datasets "
                   f"(worst {worst[0]} {worst[4]:.2f})")
            msg += f", CPU-time geomean {geomean([r[8] for r in sel]):.2f}"
            if args.process:
                msg += f", whole process geomean {geomean([r[7] for r in sel]):.2f}"
            print(msg)
    print(f"total wall time {time.perf_counter() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
