"""``odtc sweep`` / ``odt.sweep``: a cross-validated grid over program parameters on Dask.
A real LocalCluster (worker processes) gives the same per-fold numbers as a sequential run;
the CSV holds every (setting, fold), the SVG plots accuracy against size, the best setting
is printed; a bad grid is a clear error before any task runs."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import odt
from odt.cli import main
from odt.compiler.data import read_csv
from odt.sweeps import SweepError, stratified_folds

IRIS = Path(__file__).resolve().parents[2] / "examples" / "data" / "iris.csv"
PROGRAM = f"""param depth = 1
param alpha = 0
data "{IRIS}" {{ target class }}
model tree(depth <= depth)
minimize errors + alpha * nodes
"""
GRID = {"depth": [1, 2], "alpha": [0, 5]}
KEY = ["param_depth", "param_alpha", "fold"]


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "iris.odt"
    path.write_text(PROGRAM)
    return path


def test_a_local_cluster_gives_the_same_per_fold_numbers_as_a_sequential_run(program, tmp_path):
    sequential = odt.sweep(program, GRID, folds=3, scheduler=None)
    distributed = odt.sweep(program, GRID, folds=3, scheduler="local", output=tmp_path / "s.csv")
    automatic = odt.sweep(program, GRID, folds=3)  # the default: small work, run in this process
    assert len(sequential) == len(distributed) == len(automatic) == 2 * 2 * 3
    pd.testing.assert_frame_equal(sequential.drop(columns="seconds"), automatic.drop(columns="seconds"))
    measured = ["train_accuracy", "test_accuracy", "size", "leaves", "depth", "status", "gap", "objective"]
    pd.testing.assert_frame_equal(sequential[KEY + measured], distributed[KEY + measured])
    streamed = pd.read_csv(tmp_path / "s.csv").sort_values(KEY).reset_index(drop=True)
    pd.testing.assert_frame_equal(streamed[KEY + ["test_accuracy", "size"]],
                                  distributed[KEY + ["test_accuracy", "size"]], check_dtype=False)
    assert (sequential["status"] == "optimal").all()
    # a fold's row is the program compiled with that setting on the fold's training rows
    table = read_csv(IRIS)
    folds = stratified_folds(np.asarray(table.strings("class")), 3, seed=0)
    train = {c: v[folds != 1] for c, v in table.columns.items()}
    direct = odt.compile(PROGRAM, data=train, params={"depth": 2, "alpha": 0}).solve()
    row = sequential[(sequential.param_depth == 2) & (sequential.param_alpha == 0) & (sequential.fold == 1)]
    assert row["objective"].item() == direct.objective and row["size"].item() == direct.classifier.n_nodes


def test_odtc_sweep_writes_the_csv_and_the_plot_and_prints_the_best_setting(program, tmp_path, capsys):
    csv, svg = tmp_path / "sweep.csv", tmp_path / "sweep.svg"
    code = main(["sweep", str(program), "--grid", "depth=1,2", "--grid", "alpha=0,5", "--folds", "3",
                 "--scheduler", "none", "-o", str(csv), "--plot", str(svg), "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    rows = pd.read_csv(csv)
    assert list(rows.columns[:3]) == KEY and len(rows) == 12
    best = rows[rows.param_depth == 2].groupby("param_alpha")["test_accuracy"].mean()
    # depth 2 beats depth 1 on iris; with equal accuracy the smaller tree (alpha = 5) is best
    assert "best: -D depth=2 -D alpha=5" in out and f"{best.max():.4f}" in out
    root = ET.fromstring(svg.read_text())
    assert root.tag.endswith("svg") and "depth=2, alpha=5" in svg.read_text()


def test_folds_are_stratified_and_fixed_by_the_seed():
    labels = pd.read_csv(IRIS)["class"].astype(str).to_numpy()
    folds = stratified_folds(labels, 3, seed=0)
    assert (stratified_folds(labels, 3, seed=0) == folds).all()
    counts = pd.crosstab(folds, labels)
    assert (counts.to_numpy() >= 16).all() and (counts.to_numpy() <= 17).all()


def test_a_bad_grid_is_a_clear_error_before_any_task(program, capsys):
    with pytest.raises(SweepError, match="the program declares no parameter 'dpth'") as exc:
        odt.sweep(program, {"dpth": [1]}, scheduler=None)
    assert "did you mean 'depth'" in str(exc.value)
    with pytest.raises(SweepError, match="at least 2"):
        odt.sweep(program, {"depth": [1]}, folds=1, scheduler=None)
    assert main(["sweep", str(program), "--grid", "depth=one,two", "--scheduler", "none"]) == 1
    err = capsys.readouterr().err
    assert "the values must be numbers" in err and "Traceback" not in err


def test_the_plot_keeps_labels_inside_the_picture_and_apart():
    from odt.sweeps import plot_svg
    table = pd.DataFrame({"param_depth": [3, 2, 3, 2, 1, 1], "param_alpha": [0, 2, 2, 0, 0, 2],
                          "size_mean": [6.8, 2.4, 3.0, 3.8, 1.0, 1.0], "test_mean": [0.95, 0.94, 0.94, 0.94, 0.67, 0.67],
                          "test_std": [0.03, 0.04, 0.04, 0.04, 0.0, 0.0]})
    root = ET.fromstring(plot_svg(table, ["param_depth", "param_alpha"]))
    labels = [t for t in root.iter() if t.tag.endswith("text") and t.get("fill")]
    assert len(labels) == 6
    boxes = []
    for t in labels:
        x, y, wide = float(t.get("x")), float(t.get("y")), 6.2 * len(t.text)
        left = x - wide if t.get("text-anchor") == "end" else x
        assert 0 <= left and left + wide <= 640, t.text
        boxes.append((left, left + wide, y))
    for i, (a, b, y) in enumerate(boxes):
        for c, d, z in boxes[:i]:
            assert not (a < d and c < b and abs(y - z) < 12), "two labels overlap"


def test_a_setting_with_a_fold_that_found_no_classifier_ranks_after_complete_ones():
    from odt.sweeps import summary
    frame = pd.DataFrame({"param_depth": [1, 1, 2, 2], "fold": [0, 1, 0, 1],
                          "test_accuracy": [0.8, 0.8, 1.0, None], "train_accuracy": [0.8, 0.8, 1.0, None],
                          "size": [1, 1, 3, None], "seconds": [0.1, 0.1, 0.1, 5.0]})
    table = summary(frame, ["param_depth"])
    assert table["param_depth"].tolist() == [1, 2] and table["failed"].tolist() == [0, 1]


def test_more_folds_than_rows_of_a_class_warns(program, tmp_path):
    with pytest.warns(UserWarning, match="fewer than the 60 folds"):
        odt.sweep(program, {"depth": [1]}, folds=60, scheduler=None)


def test_a_cluster_starts_only_when_the_work_left_pays_for_its_start_up():
    from odt.sweeps import DASK_STARTUP, dask_pays

    # two workers: the cluster pays once the sequential work left exceeds twice its start-up
    assert not dask_pays(0.3 * 8, 8, 9, 2)  # issue 28's 9-task grid: 0.3 s a task
    assert dask_pays(1.0, 1, int(2 * DASK_STARTUP) + 2, 2)
    assert not dask_pays(1.0, 1, 1000, 1)  # one core: never
    assert not dask_pays(0.0, 0, 1000, 2)  # nothing measured yet
