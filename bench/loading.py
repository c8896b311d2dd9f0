"""Data loading and checking in linear time and memory (issue 15, issue 18 item 7).

Writes synthetic CSVs of the sizes the issues name to a temporary folder and times
``odtc check`` on each as a whole process (median of --repeat runs), with its peak
resident memory; the program is ``tree(depth <= 2)`` minimising errors, which ``auto``
routes to ``dp``, so nothing is binarised into a dense matrix.

    python bench/loading.py [--repeat 3] [--sizes 200000x10c,20000x100b,20000x100f,1000000x10r]

Size codes: rows x columns + kind (c: continuous rounded to 3 decimals, f: full
precision, r: rounded to 2 decimals, b: binary 0/1).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_csv(path: Path, rows: int, cols: int, kind: str, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    if kind == "b":
        X = rng.integers(0, 2, size=(rows, cols)).astype(np.int8)
        fmt = "%d"
    else:
        X = rng.normal(size=(rows, cols)) * 100
        X = np.round(X, {"c": 3, "r": 2}.get(kind, 17))
        fmt = "%.17g" if kind == "f" else "%g"
    y = (X[:, 0] + X[:, 1 % cols] > 0).astype(np.int8)
    header = ",".join([f"x{j}" for j in range(cols)] + ["class"])
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="",
               fmt=[fmt] * cols + ["%d"])


def run_check(program: Path) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of one ``odtc check`` process (its own peak, from
    ``wait4``: ``RUSAGE_CHILDREN`` is the largest of every child so far)."""
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "odt.cli", "check", str(program)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"odtc check failed on {program}:\n{err[-2000:]}")
    return seconds, usage.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="200000x10c,20000x100b,20000x100f,1000000x10r")
    args = ap.parse_args()
    print("| data | file MB | odtc check s (median) | peak RSS MB (max over runs) |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for code in args.sizes.split(","):
            dims, kind = code[:-1], code[-1]
            rows, cols = (int(x) for x in dims.split("x"))
            csv = Path(tmp) / f"{code}.csv"
            write_csv(csv, rows, cols, kind)
            prog = Path(tmp) / f"{code}.odt"
            prog.write_text(f'data "{csv.name}" {{ target class }}\nmodel tree(depth <= 2)\nminimize errors\n')
            times, peaks = [], []
            for _ in range(args.repeat):
                s, m = run_check(prog)
                times.append(s)
                peaks.append(m)
            print(f"| {rows:,} x {cols} ({ {'c': 'continuous', 'f': 'full precision', 'r': 'rounded', 'b': 'binary'}[kind]}) "
                  f"| {csv.stat().st_size / 1e6:.0f} | {statistics.median(times):.2f} | {max(peaks):.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
