"""Deep trees against the field (issue 27): odt's anytime search next to scikit-learn CART,
pycontree (with its ``time_limit``), GOSDT with threshold and lower-bound guesses, and
pydl8.5, at depths 4-8 under a time budget, side by side in one run.

    python bench/deep.py [--depths 5,6] [--budgets 10,60] [--datasets a,b|all|none] [--rows 100000]
                         [--peers-python PATH] [--write]

``--datasets none`` (or an empty value) takes no shared set, only the ``--rows`` synthetic ones.
``--write`` appends a section to bench/RESULTS.md: its heading and the table's header when the
run starts, then each row as it is printed (a run cut short keeps the rows it has). A peer
that fails (out of memory, past its time-out, an exception) gets a row "no result: <reason>".

For each shared continuous dataset (../shared/datasets/continuous, or $ODT_SHARED; the
script says so and stops when it is absent) — and, with ``--rows N``, a synthetic set of N
rows and 10 continuous features (a noisy axis-aligned concept, seeded) — the rows are split
80/20 (seeded, stratified), and each method trains on the 80%:

* odt: ``odtc solve`` as a whole process with ``--time-limit B --json`` (auto: dp); its
  history gives the incumbent over time;
* CART: ``DecisionTreeClassifier(max_depth=D)``, in this process;
* pycontree: ``ConTree(max_depth=D, time_limit=B)``, in this process;
* GOSDT 1.0.4 (``--peers-python``: a Python with ``gosdt`` and scikit-learn < 1.6, which
  GOSDT's ``check_array(force_all_finite=...)`` needs) with the GOSDT docs' guesses: the
  thresholds of 40 boosted stumps (``ThresholdGuessBinarizer``) and a lower-bound guess
  from a boosted reference model (``y_ref``); depth budget D, regularisation 0.2 / n (each
  leaf worth a fifth of an error: GOSDT's objective is errors plus a penalty per leaf, so
  its trees are sparser than a pure error minimiser's), time limit B, in a subprocess;
* pydl8.5 (``--peers-python``) on quantile-binarised columns, ``max_depth=D``,
  ``time_limit=B``, in a subprocess.

Each row prints the training errors of the final tree, the primal integral (the area under
the primal gap over [0, B] divided by B: the gap is 1 with no tree yet, else
(errors - best) / max(errors, best) with best the least errors any method reached), the
final proven gap where the method reports a bound, the wall time and the test accuracy on
the 20%. Methods that report no history count as having no tree until they return.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _shared() -> Path:
    env = os.environ.get("ODT_SHARED")
    return (Path(env) if env else ROOT.parent / "shared") / "datasets" / "continuous"


def primal_integral(history: list[tuple[float, float]], best: float, budget: float) -> float:
    """Area under the primal gap over [0, budget] / budget; ``history`` holds (time,
    incumbent errors) points, the gap is 1 before the first."""
    def gap(v: float) -> float:
        return 0.0 if v <= best else (v - best) / max(v, best, 1e-12)

    area, t_prev, g_prev = 0.0, 0.0, 1.0
    for t, v in sorted(history):
        t = min(t, budget)
        area += g_prev * (t - t_prev)
        t_prev, g_prev = t, gap(v)
    area += g_prev * (budget - t_prev)
    return area / budget


def split(y: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Stratified 80/20 indices."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        cut = int(round(0.8 * len(idx)))
        train.append(idx[:cut])
        test.append(idx[cut:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


def synthetic(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n rows, 10 continuous features, a depth-4 axis-aligned concept with 10% label noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 10))
    y = (((X[:, 0] > 0.3) & (X[:, 1] < 0.5)) | ((X[:, 2] > -0.2) & (X[:, 3] > 0.8)) | (X[:, 4] < -1.1)).astype(int)
    flip = rng.random(n) < 0.1
    return X, np.where(flip, 1 - y, y)


PEER_SCRIPT = r'''
import json, sys, time, warnings
import numpy as np
warnings.filterwarnings("ignore")
which, path, depth, budget = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
d = np.load(path)
X, y, Xt, yt = d["X"], d["y"], d["Xt"], d["yt"]
out = {}
t = time.perf_counter()
if which == "gosdt":
    import pandas as pd
    from gosdt import GOSDTClassifier, ThresholdGuessBinarizer, NumericBinarizer
    from sklearn.ensemble import GradientBoostingClassifier
    Xd, Xtd = pd.DataFrame(X), pd.DataFrame(Xt)
    enc = ThresholdGuessBinarizer(n_estimators=40, max_depth=1, random_state=0)
    enc.set_output(transform="pandas")
    Xb = enc.fit_transform(Xd, y); Xtb = enc.transform(Xtd)
    gb = GradientBoostingClassifier(n_estimators=40, max_depth=depth, random_state=0).fit(Xb, y)
    clf = GOSDTClassifier(regularization=0.2 / len(y), allow_small_reg=True, depth_budget=depth + 1,
                          time_limit=int(budget), verbose=False)
    ref = gb.predict(Xb)  # the lower-bound guess; GOSDT refuses one that misses a class (multiclass sets)
    clf.fit(Xb, y, **({"y_ref": ref} if set(np.unique(ref)) == set(np.unique(y)) else {}))
    out["errors"] = int((clf.predict(Xb) != y).sum())
    out["test"] = float((clf.predict(Xtb) == yt).mean())
elif which == "dl85":
    from pydl85 import DL85Classifier
    qs = [np.unique(np.quantile(X[:, j], np.linspace(0, 1, 10)[1:-1])) for j in range(X.shape[1])]
    def binar(A):
        return np.column_stack([A[:, j] <= q for j in range(A.shape[1]) for q in qs[j]]).astype(int)
    Xb, Xtb = binar(X), binar(Xt)
    clf = DL85Classifier(max_depth=depth, time_limit=budget)
    clf.fit(Xb, y)
    out["errors"] = int((clf.predict(Xb) != y).sum())
    out["test"] = float((clf.predict(Xtb) == yt).mean())
out["seconds"] = time.perf_counter() - t
print(json.dumps(out))
'''


def run_peer(python: str, which: str, data: Path, depth: int, budget: float) -> dict:
    """The peer's result, or {"note": why there is none, "seconds": wall}."""
    t = time.perf_counter()
    timeout = budget * 3 + 120
    try:
        run = subprocess.run([python, "-c", PEER_SCRIPT, which, str(data), str(depth), str(budget)],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"note": f"killed after {timeout:g} s", "seconds": time.perf_counter() - t}
    try:
        return json.loads(run.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        err = run.stderr.strip().splitlines()
        why = err[-1] if err else ""
        if run.returncode == -9:
            why = f"killed (signal 9, out of memory?) {why}".strip()
        elif run.returncode:
            why = f"exit {run.returncode}: {why}"
        return {"note": why.replace("|", "/")[:160] or "no output", "seconds": time.perf_counter() - t}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depths", default="5,6")
    ap.add_argument("--budgets", default="10,60")
    ap.add_argument("--datasets", default="all")
    ap.add_argument("--rows", default="", help="comma-separated sizes of synthetic sets to add (e.g. 100000)")
    ap.add_argument("--peers-python", default="", help="a Python with gosdt and pydl8.5 (scikit-learn < 1.6)")
    ap.add_argument("--odtc", default="", help="the odtc to run (default: this Python's odt, python -m odt.cli)")
    ap.add_argument("--write", action="store_true", help="append the rows to bench/RESULTS.md as they come")
    args = ap.parse_args()
    from pycontree import ConTree
    from sklearn.tree import DecisionTreeClassifier

    sets: list[tuple[str, np.ndarray, np.ndarray]] = []
    if args.datasets and args.datasets != "none":
        folder = _shared()
        if not folder.is_dir():
            sys.exit(f"the shared continuous datasets are not at {folder} (set ODT_SHARED)")
        names = sorted(p.stem for p in folder.glob("*.csv")) if args.datasets == "all" else args.datasets.split(",")
        for name in names:
            raw = np.genfromtxt(folder / f"{name}.csv", delimiter=",", skip_header=1, dtype=str)
            _, y = np.unique(raw[:, -1], return_inverse=True)
            sets.append((name, raw[:, :-1].astype(float), y))
    for n in (int(r) for r in args.rows.split(",") if r):
        X, y = synthetic(n)
        sets.append((f"synthetic-{n}", X, y))
    work = Path(tempfile.mkdtemp(prefix="odt-deep-"))
    results = ROOT / "bench" / "RESULTS.md"

    def emit(line: str) -> None:
        print(line, flush=True)
        if args.write:
            with results.open("a") as fh:
                fh.write(line + "\n")

    if args.write:
        with results.open("a") as fh:
            fh.write(f"\n## bench/deep.py {' '.join(sys.argv[1:])} ({time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC)\n\n")
    emit("| dataset | rows | D | budget s | method | train errors | primal integral | final gap | wall s | test acc |")
    emit("|---|---|---|---|---|---|---|---|---|---|")
    for name, X, y in sets:
        tr, te = split(y)
        csv = work / f"{name}.csv"
        header = ",".join(f"x{j}" for j in range(X.shape[1])) + ",class"
        np.savetxt(csv, np.column_stack([X[tr], y[tr]]), delimiter=",", header=header, comments="", fmt="%.10g")
        npz = work / f"{name}.npz"
        np.savez(npz, X=X[tr], y=y[tr], Xt=X[te], yt=y[te])
        for depth in (int(d) for d in args.depths.split(",")):
            for budget in (float(b) for b in args.budgets.split(",")):
                rows: dict[str, dict] = {}
                prog = work / f"{name}-{depth}.odt"
                prog.write_text(f'data "{csv}" {{ target class }}\nmodel tree(depth <= {depth})\nminimize errors\n')
                t = time.perf_counter()
                odtc = [args.odtc] if args.odtc else [sys.executable, "-m", "odt.cli"]
                model = work / f"{name}-{depth}.json"
                run = subprocess.run([*odtc, "solve", str(prog), "--time-limit", str(budget), "--json", "--quiet",
                                      "-o", str(model)], capture_output=True, text=True)
                wall = time.perf_counter() - t
                try:
                    out = json.loads(run.stdout)
                    import odt

                    clf = odt.load_classifier(model)
                    table = {f"x{j}": X[te, j] for j in range(X.shape[1])}
                    test = float((np.asarray(clf.predict(table)).astype(int) == y[te]).mean())
                    startup = max(0.0, wall - out["seconds"])  # the process's start, which the history does not see
                    rows["odt"] = {"errors": out["train_errors"], "history": [(h[0] + startup, h[1])
                                                                          for h in out["history"] if h[1] is not None],
                                   "gap": out["gap"], "wall": wall, "test": test}
                except (json.JSONDecodeError, KeyError, OSError):
                    err = run.stderr.strip().splitlines()
                    rows["odt"] = {"errors": None, "wall": wall,
                                   "note": (err[-1] if err else f"exit {run.returncode}").replace("|", "/")[:160]}
                t = time.perf_counter()
                cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X[tr], y[tr])
                s = time.perf_counter() - t
                rows["CART"] = {"errors": int((cart.predict(X[tr]) != y[tr]).sum()), "wall": s,
                                "history": [(s, int((cart.predict(X[tr]) != y[tr]).sum()))],
                                "test": float((cart.predict(X[te]) == y[te]).mean())}
                t = time.perf_counter()
                pc = ConTree(max_depth=depth, time_limit=budget)
                import warnings

                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        pc.fit(X[tr], y[tr])
                    s = time.perf_counter() - t
                    e = int((pc.predict(X[tr]) != y[tr]).sum())
                    rows["pycontree"] = {"errors": e, "wall": s, "history": [(s, e)],
                                         "test": float((pc.predict(X[te]) == y[te]).mean())}
                except (MemoryError, RuntimeError, ValueError) as exc:
                    rows["pycontree"] = {"errors": None, "wall": time.perf_counter() - t,
                                         "note": f"{type(exc).__name__}: {exc}"[:160]}
                if args.peers_python:
                    for which in ("gosdt", "dl85"):
                        got = run_peer(args.peers_python, which, npz, depth, budget)
                        if "errors" in got:
                            rows[which] = {"errors": got["errors"], "wall": got["seconds"],
                                           "history": [(got["seconds"], got["errors"])], "test": got["test"]}
                        else:
                            rows[which] = {"errors": None, "wall": got["seconds"], "note": got["note"]}
                best = min(r["errors"] for r in rows.values() if r.get("errors") is not None)
                for method, r in rows.items():
                    if r.get("errors") is None:
                        emit(f"| {name} | {len(tr)} | {depth} | {budget:g} | {method} | no result: "
                             f"{r.get('note', '')} | | | {r['wall']:.1f} | |")
                        continue
                    pi = primal_integral(r.get("history", []), best, budget)
                    gap = r.get("gap")
                    test = r.get("test")
                    emit(f"| {name} | {len(tr)} | {depth} | {budget:g} | {method} | {r['errors']:g} | {pi:.3f} | "
                         f"{'-' if gap is None else f'{gap:.1%}'} | {r['wall']:.1f} | "
                         f"{'-' if test is None else f'{test:.3f}'} |")


if __name__ == "__main__":
    main()
