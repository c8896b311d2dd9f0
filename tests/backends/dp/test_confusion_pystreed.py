"""Cost-sensitive and F1 trees (issue 26) against pystreed's ``STreeDCostSensitiveClassifier``
and its ``f1-score`` task, on real data from the repository. pystreed gets odt's own 0/1
feature matrix, so both search the same trees; the optima (odt's objective of pystreed's
tree, computed here) must be equal."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import odt

pystreed = pytest.importorskip("pystreed")
ROOT = Path(__file__).resolve().parents[3]


def _fitted(model, X, y, *args) -> np.ndarray:
    model.fit(X, y, *args)
    return model.predict(X)


@pytest.mark.parametrize("name", ["mouse", "heart-cleveland"])
@pytest.mark.parametrize("depth", [2, 3])
def test_cost_matrix_and_f1_equal_pystreed(name, depth):
    head = f'data "{ROOT / "examples" / "data" / (name + ".csv")}" {{ target class }}\n'
    prog = odt.compile(head + f"model tree(depth <= {depth})\nminimize errors")
    X, y = prog.dataset.X.astype(int), prog.dataset.y

    M = [[0.0, 3.0], [2.0, 0.0]]
    res = odt.compile(head + f"cost C = {{ 0 as 1: 3, 1 as 0: 2 }}\nmodel tree(depth <= {depth})\n"
                             "minimize misclassification_cost(C)").solve(backend="dp")
    spec = pystreed.CostSpecifier(M, [pystreed.FeatureCostSpecifier(0.0, 0.0, "", j, j) for j in range(X.shape[1])])
    pred = _fitted(pystreed.STreeDCostSensitiveClassifier(max_depth=depth, time_limit=600), X, y, spec)
    peer = float(sum(M[a][p] for a, p in zip(y, pred)))
    assert res.status == "optimal" and res.verified and abs(res.objective - peer) < 1e-9

    res = odt.compile(head + f"model tree(depth <= {depth})\nmaximize f1").solve(backend="dp")
    pred = _fitted(pystreed.STreeDClassifier(optimization_task="f1-score", max_depth=depth, time_limit=600,
                                             hyper_tune=False), X, y)
    tp, fp, fn = [int(((pred == a) & (y == b)).sum()) for a, b in ((1, 1), (1, 0), (0, 1))]
    assert res.status == "optimal" and res.verified and abs(res.objective - 2 * tp / (2 * tp + fp + fn)) < 1e-9
