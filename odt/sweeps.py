"""Cross-validated sweeps over program parameters, on Dask (``odtc sweep``, ``odt.sweep``;
the module is ``odt.sweeps``, so ``odt.sweep`` stays the function).

Input: a program file with ``param`` items, a grid (``{"depth": [1, 2, 3]}``), a number of
folds, and where to run: an embedded ``LocalCluster`` (one single-threaded worker process
per core), an existing Dask scheduler's address, or ``None`` (in this process, one task
after the other). Output: one row per (setting, fold) — the setting's values, the fold,
train and test accuracy, the classifier's size (decision nodes), leaves, depth, solve
seconds, status, gap and objective (parameters as ``param_<name>`` columns) — streamed to a CSV as each task finishes, returned as
a DataFrame sorted by setting and fold; a summary (mean test accuracy per setting) picks
the best setting; an SVG plots mean test accuracy against mean size with one-standard-
deviation error bars.

Invariants: folds are stratified and fixed by ``seed`` (the same on every scheduler), every
task solves the same program text with its parameters on its training rows, so a
distributed and a sequential sweep give the same numbers (a solve that stops at its time
limit may differ). A row is in the CSV as soon as its task finished, so an interrupted
sweep keeps what finished.

Needs pandas; Dask (``pip install ".[sweep]"`` from a checkout: dask.distributed and
pandas) only to run on a cluster: ``scheduler="auto"`` runs without it in this process.
"""
from __future__ import annotations

import csv
import itertools
import os
import warnings
import sys
import time
from html import escape
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from odt.compiler import ast
from odt.compiler.check import load_table
from odt.compiler.check_data import data_file
from odt.compiler.errors import OdtError, did_you_mean
from odt.compiler.parse import parse_program
from odt.outputs import refuse_inputs, refuse_same_outputs, write_or_keep
from odt.program import compile as compile_program

#: Seconds an embedded LocalCluster costs to start, load odt in its workers and stop, with
#: 2 workers on the shared 2-core machine (bench/sweep_scheduler.py, bench/RESULTS.md: it
#: never paid up to a 60-task sweep of 29 s sequential work, costing 13-49 s more; idle,
#: issue 28 saw 3 s): with W workers it pays once the sequential work left exceeds
#: DASK_STARTUP * W / (W - 1), 60 s on two cores.
DASK_STARTUP = 30.0

#: The measured columns of a sweep's rows, after the parameters and the fold.
MEASURES = ("train_accuracy", "test_accuracy", "size", "leaves", "depth", "seconds", "status", "gap", "objective")


class SweepError(OdtError):
    """A sweep that cannot run: an empty grid, a parameter the program does not declare,
    too few rows for the folds, a scheduler that cannot be reached."""


def sweep(program: str | Path, grid: Mapping[str, Sequence[float]], folds: int = 5,
          scheduler: str | None = "auto", output: str | Path | None = None, plot: str | Path | None = None,
          seed: int = 0, time_limit: float | None = None, backend: str | None = None,
          progress: Callable[[int, int], None] | None = None, unsaved: list[OdtError] | None = None) -> Any:
    """Cross-validate every setting of ``grid`` on the program's data.

    Args:
        program: the program file (its ``data "file.csv"`` block is the data).
        grid: parameter name -> the values to try; every combination is a setting.
        folds: k of the stratified k-fold split (2 or more).
        scheduler: ``"auto"`` (default: in this process, one task after the other, and an
            embedded LocalCluster for the rest once the work left is large enough for
            the cluster's start-up to pay, ``DASK_STARTUP``), ``"local"`` (a LocalCluster
            from the start, one worker per core), a Dask scheduler address
            (``tcp://host:8786``), or None (in this process only).
        output: a CSV written row by row as tasks finish.
        plot: an SVG of mean test accuracy against mean size.
        seed: fixes the folds.
        time_limit, backend: for every solve.
        progress: called with (finished, total) after each task.
        unsaved: a list that receives, instead of raising them, the errors of outputs
            that could not be written (each output is then kept in a temporary file that
            its error names; the CLI prints them after the results and exits 1).
    Returns:
        A pandas DataFrame, one row per (setting, fold), sorted by setting then fold.
    Raises:
        SweepError / OdtError: a bad grid or program, before any task runs; without
            ``unsaved``, after the sweep, an output that could not be written (and is
            kept in the temporary file the error names).
    """
    import pandas as pd

    path = Path(program)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SweepError(f"cannot read program file '{path}': {exc.strerror or exc}") from None
    settings = _settings(text, str(path), grid)
    if int(folds) != folds or folds < 2:
        raise SweepError(f"--folds must be an integer of at least 2, not {folds}")
    base = compile_program(text, filename=str(path), base_dir=path.parent, params=settings[0])  # checks the data
    parsed = parse_program(text, str(path))
    _refuse_inputs(parsed, path, output, plot)
    table = load_table(parsed, path.parent)
    columns = {c: np.asarray(v) for c, v in table.columns.items()}
    target = base.dataset.target
    fold_of = stratified_folds(np.asarray(table.strings(target)), int(folds), seed)
    if np.bincount(fold_of, minlength=folds).min() == 0:
        raise SweepError(f"{table.n_rows} rows cannot make {folds} folds")
    labels, counts = np.unique(np.asarray(table.strings(target)), return_counts=True)
    if counts.min() < folds:  # as scikit-learn's StratifiedKFold: a warning, the sweep still runs
        warnings.warn(f"class '{labels[counts.argmin()]}' has {counts.min()} rows, fewer than the {folds} "
                      "folds: some test folds hold none of it (lower --folds for steadier estimates)",
                      UserWarning, stacklevel=2)
    tasks = [(i, k) for i in range(len(settings)) for k in range(int(folds))]
    names = [f"param_{n}" for n in grid]  # as scikit-learn's cv_results_: no clash with a measure
    stream = _Stream(output, [*names, "fold", *MEASURES])
    rows: list[dict[str, Any]] = []
    try:
        for i, k, measured in _run(tasks, text, str(path), settings, columns, target, fold_of, time_limit, backend,
                                   scheduler):
            row = {**{f"param_{n}": settings[i][n] for n in grid}, "fold": k, **measured}
            rows.append(row)
            stream.write(row)
            if progress is not None:
                progress(len(rows), len(tasks))
    finally:
        stream.close()
    frame = pd.DataFrame(rows, columns=[*names, "fold", *MEASURES]).sort_values([*names, "fold"], kind="stable")
    frame = frame.reset_index(drop=True)
    problems = []
    if output is not None and stream.failed:  # the whole CSV again, or kept where the error says
        problems.append(write_or_keep(output, frame.to_csv(index=False), "the sweep's rows"))
    if plot is not None:
        problems.append(write_or_keep(plot, plot_svg(summary(frame, names), names), "the plot"))
    found = [p for p in problems if p is not None]
    if found and unsaved is None:
        raise OdtError([d for p in found for d in p.diagnostics])
    (unsaved if unsaved is not None else []).extend(found)
    return frame


class _Stream:
    """The CSV of a sweep, a row written (and flushed) as each task finishes. A write that
    fails (the folder gone, a full disk) stops the streaming without stopping the sweep:
    ``failed`` tells ``sweep`` to write the whole CSV at the end, or keep it elsewhere."""

    def __init__(self, output: str | Path | None, columns: list[str]):
        self.failed = False
        self.file: Any = None
        self.writer: Any = None
        if output is not None:
            try:
                self.file = open(output, "w", newline="")
                self.writer = csv.DictWriter(self.file, columns)
                self.writer.writeheader()
                self.file.flush()
            except OSError:
                self.close(failed=True)

    def write(self, row: dict[str, Any]) -> None:
        if self.writer is not None:
            try:
                self.writer.writerow(row)
                self.file.flush()
            except OSError:
                self.close(failed=True)

    def close(self, failed: bool = False) -> None:
        self.failed = self.failed or failed
        if self.file is not None:
            try:
                self.file.close()
            except OSError:  # the buffered rest could not be written either
                self.failed = True
        self.file = self.writer = None


def _refuse_inputs(parsed: ast.Program, path: Path, output: str | Path | None, plot: str | Path | None) -> None:
    """Neither output may be the program file, its data file or the other output."""
    blocks = parsed.of(ast.DataBlock)
    data = data_file(parsed, path.parent)
    for option, target in (("-o", output), ("--plot", plot)):
        if target is not None:
            refuse_inputs(target, [("the program file", path)], option)
            refuse_inputs(target, [("the data file", data)], option, span=blocks[0].span if blocks else None)
    refuse_same_outputs([("-o", output), ("--plot", plot)])


def summary(frame: Any, names: Sequence[str]) -> Any:
    """Per setting (``names``: its ``param_<name>`` columns): mean and standard deviation of test accuracy, mean train accuracy and
    size, and ``failed``, the folds without a classifier; the best setting (every fold
    solved, the highest mean test accuracy, then the smaller size) first."""
    g = frame.groupby(list(names), sort=False)
    out = g.agg(test_mean=("test_accuracy", "mean"), test_std=("test_accuracy", "std"),
                train_mean=("train_accuracy", "mean"), size_mean=("size", "mean"),
                seconds=("seconds", "sum"), failed=("test_accuracy", lambda v: int(v.isna().sum()))).reset_index()
    out["test_std"] = out["test_std"].fillna(0.0)
    # a setting with folds that found no classifier (time limit, infeasible) is measured on
    # fewer folds: it ranks after every setting measured on all of them
    return out.sort_values(["failed", "test_mean", "size_mean"], ascending=[True, False, True],
                           kind="stable").reset_index(drop=True)


def stratified_folds(labels: np.ndarray, k: int, seed: int) -> np.ndarray:
    """The fold (0..k-1) of each row: each class's rows shuffled by ``seed`` and dealt out
    in turn, so every fold holds about 1/k of every class.

    >>> stratified_folds(np.array(["a", "a", "b", "b"]), 2, 0).tolist().count(0)
    2
    """
    rng = np.random.default_rng(seed)
    out = np.empty(len(labels), dtype=np.int64)
    start = 0
    for c in sorted(set(labels.tolist())):
        rows = rng.permutation(np.flatnonzero(labels == c))
        out[rows] = (start + np.arange(len(rows))) % k
        start += len(rows)
    return out


def run_fold(text: str, filename: str, params: Mapping[str, Any], train: Mapping[str, np.ndarray],
             test: Mapping[str, np.ndarray], target: str, time_limit: float | None,
             backend: str | None) -> dict[str, Any]:
    """Solve the program with ``params`` on the training rows and measure the classifier
    on both sides (a Dask task: plain arguments, a plain dict back). A classifier that
    fails re-verification raises ``VerificationFailed`` (``Program.solve``): it is never
    measured."""
    prog = compile_program(text, data=dict(train), filename=filename, params=dict(params))
    res = prog.solve(backend=backend, time_limit=time_limit)
    clf = res.classifier
    if clf is None:
        return {"train_accuracy": None, "test_accuracy": None, "size": None, "leaves": None, "depth": None,
                "seconds": round(res.seconds, 4), "status": res.status, "gap": res.gap, "objective": res.objective}

    def accuracy(rows: Mapping[str, np.ndarray]) -> float:
        truth = np.asarray(rows[target]).astype(str)
        guess = np.asarray(clf.predict({c: v for c, v in rows.items() if c != target}, unknown="majority"))
        return float(np.mean(guess.astype(str) == truth))

    return {"train_accuracy": accuracy(train), "test_accuracy": accuracy(test), "size": clf.n_nodes,
            "leaves": clf.n_leaves, "depth": clf.depth, "seconds": round(res.seconds, 4), "status": res.status,
            "gap": res.gap, "objective": res.objective}


def _settings(text: str, filename: str, grid: Mapping[str, Sequence[float]]) -> list[dict[str, Any]]:
    if not grid:
        raise SweepError("the grid is empty: give at least one parameter, e.g. --grid depth=1,2,3")
    declared = {p.name.text for p in parse_program(text, filename).of(ast.ParamDef)}
    for name, values in grid.items():
        if name not in declared:
            raise SweepError(f"{filename}: the program declares no parameter '{name}'",
                             hint=did_you_mean(name, declared, "parameter") if declared
                             else f"add  param {name} = <number>  and use it in the program")
        if not list(values):
            raise SweepError(f"--grid {name}= lists no value")
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(list(grid[n]) for n in names))]


def _run(tasks: list[tuple[int, int]], text: str, filename: str, settings: list[dict[str, Any]],
         columns: Mapping[str, np.ndarray], target: str, fold_of: np.ndarray, time_limit: float | None,
         backend: str | None, scheduler: str | None) -> Iterable[tuple[int, int, dict[str, Any]]]:
    """(setting, fold, measures) of every task, in the order they finish."""
    def split(k: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        test = fold_of == k
        return {c: v[~test] for c, v in columns.items()}, {c: v[test] for c, v in columns.items()}

    if scheduler is None or scheduler == "none":
        for i, k in tasks:
            train, test = split(k)
            yield i, k, run_fold(text, filename, settings[i], train, test, target, time_limit, backend)
        return
    if scheduler == "auto":  # in this process while the cluster would not pay, then on Dask
        workers = os.cpu_count() or 1
        spent, done = 0.0, 0  # over the tasks after the first (which also loads numba's kernels)
        for n, (i, k) in enumerate(tasks):
            left = len(tasks) - n
            if dask_pays(spent, done, left, workers) and _dask_available():
                yield from _run(tasks[n:], text, filename, settings, columns, target, fold_of, time_limit, backend,
                                "local")
                return
            train, test = split(k)
            started = time.perf_counter()
            measured = run_fold(text, filename, settings[i], train, test, target, time_limit, backend)
            if n:
                spent, done = spent + time.perf_counter() - started, done + 1
            yield i, k, measured
        return
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise SweepError("a sweep on Dask needs dask.distributed: pip install \".[sweep]\" (from a checkout) "
                         "(or run sequentially with --scheduler none)") from None
    cluster = None
    try:
        if scheduler == "local":
            cluster = LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
        else:
            client = Client(scheduler, timeout=10)
    except (OSError, TimeoutError, ValueError) as exc:  # ValueError: a malformed address
        if cluster is not None:
            cluster.close()
        raise SweepError(f"cannot reach the Dask scheduler '{scheduler}': {exc}") from None
    try:
        futures = {}
        for i, k in tasks:
            train, test = split(k)
            fut = client.submit(run_fold, text, filename, settings[i], train, test, target, time_limit, backend,
                                pure=False, key=f"odt-sweep-{i}-{k}-{time.time_ns()}")
            futures[fut] = (i, k)
        for fut in as_completed(futures):
            i, k = futures[fut]
            yield i, k, fut.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def dask_pays(spent: float, done: int, left: int, workers: int, startup: float = DASK_STARTUP) -> bool:
    """Whether starting a LocalCluster of ``workers`` for the ``left`` tasks saves time,
    the tasks taking the mean of the ``done`` ones (``spent`` seconds in all): the
    sequential work left beats the cluster's start-up plus that work shared by the workers.

    >>> dask_pays(1.0, 2, 7, 2), dask_pays(40.0, 2, 7, 2), dask_pays(40.0, 1, 1, 1)
    (False, True, False)
    """
    if not done or workers < 2:
        return False
    work = spent / done * left
    return work > startup + work / workers


def _dask_available() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


def plot_svg(table: Any, names: Sequence[str], width: int = 640, height: int = 400) -> str:
    """Mean test accuracy (y) against mean size (x), one point per setting with a bar of
    one standard deviation across folds, each labelled with its setting; a plain SVG."""
    left, right, top, bottom = 60, 20, 30, 50
    xs = table["size_mean"].to_numpy(dtype=float)
    ys = table["test_mean"].to_numpy(dtype=float)
    es = table["test_std"].to_numpy(dtype=float)
    x0, x1 = float(np.nanmin(xs)), float(np.nanmax(xs))
    y0, y1 = float(np.nanmin(ys - es)), float(np.nanmax(ys + es))
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    if y1 == y0:
        y0, y1 = y0 - 0.05, y1 + 0.05
    pad = (y1 - y0) * 0.08
    y0, y1 = max(0.0, y0 - pad), min(1.0, y1 + pad)

    def X(v: float) -> float:
        return left + (v - x0) / (x1 - x0) * (width - left - right)

    def Y(v: float) -> float:
        return height - bottom - (v - y0) / (y1 - y0) * (height - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="Helvetica" '
           'font-size="11">',
           f'<text x="{width / 2:.0f}" y="18" text-anchor="middle" font-size="13">mean test accuracy against '
           'size (one standard deviation across folds)</text>',
           f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
           f'<text x="{width / 2:.0f}" y="{height - 12}" text-anchor="middle">size (decision nodes, mean over '
           'folds)</text>',
           f'<text x="14" y="{height / 2:.0f}" text-anchor="middle" transform="rotate(-90 14 {height / 2:.0f})">'
           'test accuracy</text>']
    for t in np.linspace(y0, y1, 5):
        out.append(f'<text x="{left - 6}" y="{Y(t) + 4:.1f}" text-anchor="end">{t:.3f}</text>')
    for t in np.linspace(x0, x1, 5):
        out.append(f'<text x="{X(t):.1f}" y="{height - bottom + 16}" text-anchor="middle">{t:.3g}</text>')
    placed: list[tuple[float, float, float]] = []  # (left, right, baseline) of the labels drawn
    for n, (x, y, e) in enumerate(zip(xs, ys, es)):
        label = ", ".join(f"{name.removeprefix('param_')}={table[name].iloc[n]}" for name in names)
        # labels of points in the right half end at the point, so none runs off the picture;
        # a label that would overlap one already drawn goes a line higher
        anchor = (X(x) - 6, "end") if X(x) > width / 2 else (X(x) + 6, "start")
        wide = 6.2 * len(label)
        span = (anchor[0] - wide, anchor[0]) if anchor[1] == "end" else (anchor[0], anchor[0] + wide)
        base = Y(y) - 6
        while any(a < span[1] and span[0] < b and abs(base - yb) < 12 for a, b, yb in placed):
            base -= 13
        placed.append((span[0], span[1], base))
        colour = "#c0392b" if n == 0 else "#2c3e50"  # the best setting in red
        out.append(f'<line x1="{X(x):.1f}" y1="{Y(y - e):.1f}" x2="{X(x):.1f}" y2="{Y(y + e):.1f}" '
                   f'stroke="{colour}"/>')
        out.append(f'<circle cx="{X(x):.1f}" cy="{Y(y):.1f}" r="4" fill="{colour}"/>')
        out.append(f'<text x="{anchor[0]:.1f}" y="{base:.1f}" text-anchor="{anchor[1]}" '
                   f'fill="{colour}">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def print_progress(done: int, total: int, stream: Any = None) -> None:
    """A one-line progress bar over tasks (on stderr)."""
    stream = stream or sys.stderr
    filled = int(30 * done / total)
    stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} tasks")
    if done == total:
        stream.write("\n")
    stream.flush()
