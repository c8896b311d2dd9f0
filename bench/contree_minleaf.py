"""A minimum leaf size on raw thresholds (issue 25): the same odt program with and without
``every leaf: samples >= m``, solved by the dp backend (ConTree), on the shared continuous
datasets.

For every dataset: the program a user writes (every column numeric, cut at all midpoints,
``model tree(depth <= D)``, ``minimize errors``) and the same program with
``subject to { every leaf: samples >= m }`` for each m, compiled once and solved in
interleaved rounds (plain, m1, m2, ..., plain, m1, ...) in this process after a warm-up of
the compiled kernels, so that load from other processes on the shared machine hits every
variant alike. The table shows the median solve time of each (``Program.solve`` wall
time), the ratio to the plain program, the spread (max/min over the rounds), the optimum and
the smallest leaf of the returned tree (from odt's own verification of the constraint).
``--process``: also each variant as a whole process (``odtc solve FILE --backend dp --json
--quiet`` in a fresh interpreter: import, data, compile, solve, verify; numba's kernels
loaded from its cache), interleaved the same way, medians. pycontree has no minimum-leaf
option (``ConTree(max_depth, max_gap, max_gap_decay, use_upper_bound, sort_gini,
time_limit, verbose)`` in 1.0.4 and 1.0.8); with ``--pycontree [PYTHON]`` its fit time on
the plain problem is shown for reference, run by PYTHON (default: this interpreter) in a
child process, medians of the rounds.

    python bench/contree_minleaf.py [--datasets a,b] [--depth 3] [--mins 5,20]
                                    [--repeats 3] [--limit 120] [--process] [--pycontree [PYTHON]]

Needs ../shared/datasets (or $ODT_SHARED/datasets); says so and exits 0 when absent.
"""
from __future__ import annotations

import argparse
import csv
import json
import tempfile
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# the kernels compile in this process (or load from numba's cache), never in a background
# warm-up that would leave the first solves on numpy (backends/dp/jit.py); the whole
# processes inherit it
os.environ.setdefault("ODT_KERNELS", "compile")

ROOT = Path(__file__).resolve().parents[1]
_SHARED = Path(os.environ["ODT_SHARED"]) if os.environ.get("ODT_SHARED") else ROOT.parent / "shared"
SHARED = _SHARED / "datasets" / "continuous"
DEFAULT = "haberman,bank,banknote,pima-indians-diabetes,bidding,ionosphere,room"


def program_text(path: Path, depth: int, m: int) -> str:
    with open(path, newline="") as fh:
        header = next(csv.reader(fh))
    cols = ", ".join(header[:-1])
    cons = f"subject to {{ every leaf: samples >= {m} }}\n" if m > 1 else ""
    return (f'data "{path}" {{\n    target class\n    numeric {cols} by thresholds(all)\n}}\n'
            f"model tree(depth <= {depth})\n{cons}minimize errors\n")


def smallest_leaf(res) -> str:
    """The smallest leaf of the returned tree as odt's verification re-checked it (the
    value of ``every leaf: samples >= m``), with ``!`` when it does not hold."""
    for c in getattr(res, "constraints", ()):
        if c.text.startswith("every leaf: samples"):
            return f"{c.value:.0f}" + ("" if c.holds and res.verified else "!")
    return "?"


def load(path: Path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    X = np.array([[float(v) for v in r[:-1]] for r in rows[1:]], dtype=np.float64)
    labels = [r[-1] for r in rows[1:]]
    index = {c: i for i, c in enumerate(sorted(set(labels)))}
    return X, np.array([index[v] for v in labels], dtype=np.int64)


_PYCONTREE = """
import sys, time, warnings
import numpy as np
from pycontree import ConTree
warnings.filterwarnings("ignore")
d = np.load(sys.argv[1])
t = time.perf_counter()
ConTree(max_depth=int(sys.argv[2]), time_limit=float(sys.argv[3])).fit(d["X"], d["y"])
print(time.perf_counter() - t)
"""


def fit_pycontree(python: str, data: Path, depth: int, limit: float) -> float:
    """pycontree's fit time (in a child process run by ``python``, which may be another
    venv's)."""
    out = subprocess.run([python, "-c", _PYCONTREE, str(data), str(depth), str(limit)], capture_output=True,
                         text=True, timeout=limit + 120)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "pycontree failed")
    return float(out.stdout.strip().splitlines()[-1])


def solve_process(path: Path, limit: float) -> tuple[float, str]:
    """Wall time of ``odtc solve path --backend dp`` as a whole process, and its status."""
    cmd = [sys.executable, "-m", "odt.cli", "solve", str(path), "--backend", "dp", "--json", "--quiet",
           "--time-limit", str(limit)]
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=limit + 300)
    wall = time.perf_counter() - t
    try:
        status = str(json.loads(out.stdout).get("status", "?"))
    except ValueError:
        status = "error"
    return wall, status


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=DEFAULT)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--mins", default="5,20", help="minimum leaf sizes (comma-separated)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved rounds; medians are shown")
    ap.add_argument("--limit", type=float, default=120.0, help="time limit per solve (s)")
    ap.add_argument("--process", action="store_true", help="also time every variant as a whole process")
    ap.add_argument("--pycontree", nargs="?", const=sys.executable, default=None, metavar="PYTHON",
                    help="also time pycontree (run by PYTHON) on the plain problem")
    args = ap.parse_args(argv)
    if not SHARED.is_dir():
        print(f"bench/contree_minleaf.py: {SHARED} not found; nothing to benchmark (needs ../shared/datasets).")
        return 0
    import odt

    mins = [int(v) for v in args.mins.split(",") if v]
    variants = [1] + mins
    names = [n for n in args.datasets.split(",") if n]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    t0 = time.perf_counter()
    warm = SHARED / "haberman.csv"
    for m in variants:  # compile (or load) the kernels of every variant before timing
        odt.compile(program_text(warm, args.depth, m)).solve(backend="dp", time_limit=args.limit)
    warm_s = time.perf_counter() - t0
    print(f"# odt dp (ConTree) with and without `every leaf: samples >= m`, depth {args.depth}, "
          f"limit {args.limit:g}s per solve, commit {commit}{' (+ local changes)' if dirty else ''}")
    print(f"# {args.repeats} interleaved rounds per dataset (plain, " + ", ".join(f"m={m}" for m in mins)
          + "), medians; noise = max/min over the rounds; load average at start "
          + " ".join(f"{v:.2f}" for v in os.getloadavg()) + f"; warm-up {warm_s:.1f}s not counted")
    header = (f"{'dataset':22s} {'n':>6s} {'p':>3s} {'K':>3s} {'m':>3s} | {'odt s':>8s} {'ratio':>6s} "
              f"{'noise':>5s}")
    if args.process:
        header += f" | {'proc s':>7s} {'ratio':>6s}"
    header += f" | {'errors':>6s} {'status':>8s} {'min leaf':>8s}"
    if args.pycontree:
        header += f" | {'pyct s':>7s}"
    print(header)
    print("-" * len(header))
    worst = []
    tmp = Path(tempfile.mkdtemp(prefix="contree_minleaf_"))
    for name in names:
        path = SHARED / f"{name}.csv"
        X, y = load(path)
        texts = {m: program_text(path, args.depth, m) for m in variants}
        files = {}
        for m in variants:
            files[m] = tmp / f"{name}_m{m}.odt"
            files[m].write_text(texts[m])
        npz = tmp / f"{name}.npz"
        np.savez(npz, X=X, y=y)
        progs = {m: odt.compile(texts[m]) for m in variants}
        times: dict[int, list[float]] = {m: [] for m in variants}
        ptimes: dict[int, list[float]] = {m: [] for m in variants}
        pstatus: dict[int, str] = {}
        out: dict[int, object] = {}
        pyct: list[float] = []
        pyct_error = ""
        for rnd in range(args.repeats):
            for m in variants:
                t = time.perf_counter()
                res = progs[m].solve(backend="dp", time_limit=args.limit)
                times[m].append(time.perf_counter() - t)
                out[m] = res
            if args.process:
                for m in variants:
                    wall, pstatus[m] = solve_process(files[m], args.limit)
                    ptimes[m].append(wall)
            if args.pycontree and not pyct_error:
                try:
                    pyct.append(fit_pycontree(args.pycontree, npz, args.depth, args.limit))
                except Exception as exc:  # noqa: BLE001 -- shown in the table, not fatal
                    pyct_error = str(exc)[:60]
            if any(getattr(out[m], "status", "") != "optimal" for m in variants):
                break  # a time-out: one round says enough
        base = statistics.median(times[1])
        pbase = statistics.median(ptimes[1]) if ptimes[1] else 0.0
        for m in variants:
            res = out[m]
            med = statistics.median(times[m])
            status = str(getattr(res, "status", "?"))
            shown = "-" if m == 1 else smallest_leaf(res)
            ratio = med / base if base > 0 else float("inf")
            time_s = f"{med:8.3f}" if status == "optimal" else f"{'>' + format(args.limit, 'g'):>8s}"
            line = (f"{name:22s} {X.shape[0]:6d} {X.shape[1]:3d} {int(y.max()) + 1:3d} {m:3d} | {time_s} "
                    f"{ratio:6.2f} {max(times[m]) / min(times[m]):5.2f}")
            if args.process:
                pmed = statistics.median(ptimes[m])
                pmark = "" if pstatus.get(m) == "optimal" else "!"
                line += f" | {pmed:7.3f}{pmark} {pmed / pbase if pbase > 0 else float('inf'):6.2f}"
            line += f" | {float(res.objective):6.0f} {status:>8s} {shown:>8s}"
            if args.pycontree:
                if m == 1:
                    line += f" | {statistics.median(pyct):7.3f}" if pyct else f" | {pyct_error}"
                else:
                    line += f" | {'n/a':>7s}"
            print(line, flush=True)
            if m > 1:
                worst.append((ratio if status == "optimal" else float("inf"), name, m))
    print()
    for m in mins:
        sel = [r for r in worst if r[2] == m]
        if sel:
            w = max(sel)
            print(f"m={m}: worst ratio {w[0]:.2f} ({w[1]}), rows within 2x: {sum(1 for r in sel if r[0] <= 2.0)}"
                  f"/{len(sel)}")
    print(f"total wall time {time.perf_counter() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
