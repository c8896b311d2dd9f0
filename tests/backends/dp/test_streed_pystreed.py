"""The dp engine against pystreed (STreeD, van der Linden et al., NeurIPS 2023) on real
data from the repository, for the tasks pystreed also expresses: a node limit, cost
complexity and a minimum leaf size. pystreed gets odt's own 0/1 feature matrix, so both
search the same trees; the optima (odt's objective of pystreed's tree) must be equal."""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import odt

pystreed = pytest.importorskip("pystreed")
ROOT = Path(__file__).resolve().parents[3]


def peer(X: np.ndarray, y: np.ndarray, task: str = "accuracy", **kw) -> tuple[int, int]:
    """(errors, decision nodes) of pystreed's optimal tree."""
    model = pystreed.STreeDClassifier(optimization_task=task, hyper_tune=False, time_limit=600, **kw)
    model.fit(X, y)
    return int((model.predict(X) != y).sum()), int(model.get_n_leaves()) - 1


@pytest.mark.parametrize("name", ["mouse", "monks-1"])
@pytest.mark.parametrize("depth", [2, 3])
def test_node_limit_cost_complexity_and_min_leaf_equal_pystreed(name, depth):
    head = f'data "{ROOT / "examples" / "data" / (name + ".csv")}" {{ target class }}\n'
    prog = odt.compile(head + f"model tree(depth <= {depth})\nminimize errors")
    X, y = prog.dataset.X.astype(int), prog.dataset.y
    n = len(y)

    res = odt.compile(head + f"model tree(depth <= {depth}, nodes <= 3)\nminimize errors").solve(backend="dp")
    errors, nodes = peer(X, y, max_depth=depth, max_num_nodes=3)
    assert res.status == "optimal" and res.verified and nodes <= 3 and res.objective == errors

    alpha = Fraction(1, 50)
    res = odt.compile(head + f"model tree(depth <= {depth})\nminimize errors + {alpha * n} * nodes").solve(backend="dp")
    errors, nodes = peer(X, y, "cost-complex-accuracy", max_depth=depth, cost_complexity=float(alpha))
    assert res.status == "optimal" and res.verified
    assert abs(res.objective - float(errors + alpha * n * nodes)) < 1e-9

    res = odt.compile(head + f"model tree(depth <= {depth})\nminimize errors\nsubject to {{ every leaf: samples >= 5 }}"
                      ).solve(backend="dp")
    errors, _ = peer(X, y, max_depth=depth, min_leaf_node_size=5)
    assert res.status == "optimal" and res.verified and res.objective == errors


def test_depth_two_kernel_equals_its_numpy_path(monkeypatch):
    from odt.backends.dp.streed import kernels
    from odt.backends.dp.streed.depth_two import depth_two

    rng = np.random.default_rng(7)
    for trial in range(20):
        s, m, k = int(rng.integers(2, 40)), int(rng.integers(1, 9)), int(rng.integers(2, 4))
        Bf = rng.integers(0, 2, size=(s, m)).astype(float)
        Wc = np.zeros((s, k))
        Wc[np.arange(s), rng.integers(0, k, size=s)] = rng.integers(1, 4, size=s)
        leaf = float(Wc.sum() - Wc.sum(axis=0).max())
        args = (Bf, Wc, rng.random(m) < 0.8, int(rng.integers(1, 4)), int(rng.integers(1, 8)), leaf,
                rng.random((m, m)) < 0.7, rng.random((m, m)) < 0.7)
        compiled = depth_two(*args)
        monkeypatch.setattr(kernels, "AVAILABLE", False)
        plain = depth_two(*args)
        monkeypatch.setattr(kernels, "AVAILABLE", True)
        assert np.array_equal(compiled[0], plain[0]) and compiled[1] == plain[1]
