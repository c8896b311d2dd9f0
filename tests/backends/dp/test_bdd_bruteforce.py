"""dp's ordered-BDD enumeration equals an independent brute force: every ordered tuple
of distinct features, every truth table over its cells (unreached cells included, the
bias fills them as odt decodes), the errors counted row by row and the size read from
the decoded BDD (Hu, Huguet & Siala, IJCAI 2022; issue 16). Programs and data are
generated from fixed seeds: objectives with errors and nodes, lexicographic levels,
``nodes <= K``, ``errors <= k``, weights, several classes, every bias."""
from __future__ import annotations

from itertools import permutations, product

import numpy as np
import pytest

import odt
from odt.compiler.classifiers.bdd_build import diagram_from_table
from odt.compiler.errors import InfeasibleProgram

OBJECTIVES = [
    ("minimize errors", lambda e, s: (e,), None),
    ("maximize accuracy", None, None),
    ("minimize errors + 0.6 * nodes", lambda e, s: (e + 0.6 * s,), None),
    ("minimize errors + 2 * nodes", lambda e, s: (e + 2 * s,), None),
    ("minimize errors then nodes", lambda e, s: (e, s), None),
    ("minimize nodes then errors", lambda e, s: (s, e), None),
    ("minimize errors\nsubject to { nodes <= 1 }", lambda e, s: (e,) if s <= 1 else None, None),
    ("minimize errors\nsubject to { nodes <= 2 }", lambda e, s: (e,) if s <= 2 else None, None),
    ("minimize nodes\nsubject to { errors <= 4 }", lambda e, s: (s,) if e <= 4 else None, None),
    ("minimize errors\nsubject to { errors == 0 }", lambda e, s: (e,) if e == 0 else None, None),
]


def brute_force(X, y, w, H, n_classes, bias, key):
    """The least key over every ordered H-tuple of features and every truth table."""
    p = X.shape[1]
    h = min(H, p)
    best = None
    for order in permutations(range(p), h):
        cell = np.zeros(len(y), int)
        for f in order:
            cell = 2 * cell + X[:, f]
        counts = np.zeros((1 << h, n_classes))
        np.add.at(counts, (cell, y), w)
        feats = [None] * h  # placeholders: only the size of the decoded BDD is read
        for table in product(range(n_classes), repeat=1 << h):
            errors = float(w[np.asarray(table)[cell] != y].sum())
            size = _size(list(table), counts, h, bias)
            k = key(errors, size)
            if k is not None and (best is None or k < best):
                best = k
    return best


_memo: dict = {}


def _size(table, counts, h, bias):
    from odt.compiler.data import Feature

    memo_key = (tuple(table), counts.tobytes(), bias)
    if memo_key not in _memo:
        feats = [Feature(f"f{i}", "binary") for i in range(h)]
        _memo[memo_key] = diagram_from_table(table, counts, feats, (0, 1, 2, 3)[:counts.shape[1]], ("c",),
                                             bias).n_nodes
    return _memo[memo_key]


def _case(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 16))
    p = int(rng.integers(2, 5))
    n_classes = 2 if seed % 4 else 3
    X = rng.integers(0, 2, size=(n, p))
    y = rng.integers(0, n_classes, size=n)
    if seed % 3 == 0:  # a signal, so that small BDDs are worth something
        y = np.where(rng.random(n) < 0.8, X[:, 0] ^ X[:, -1], y) % n_classes
    w = rng.integers(1, 4, size=n) if seed % 2 else np.ones(n, int)
    H = int(rng.integers(1, 4)) if n_classes == 2 else int(rng.integers(1, 3))
    bias = "CPS"[seed % 3]
    return X, y, w, H, n_classes, bias


CASES = [(seed, i) for seed in range(12) for i in range(len(OBJECTIVES))]


@pytest.mark.parametrize("seed, which", CASES, ids=[f"seed{s}-obj{i}" for s, i in CASES])
def test_dp_equals_the_brute_force(seed, which):
    X, y, w, H, n_classes, bias = _case(seed)
    text, key, _ = OBJECTIVES[which]
    data = {f"f{j}": X[:, j] for j in range(X.shape[1])}
    data["w"], data["class"] = w, y
    prog = odt.compile(f'data {{ target class\n weight w }}\nmodel bdd(depth = {H}, bias = "{bias}")\n{text}\n'
                       'solve dp', data=data)
    if key is None:  # maximize accuracy: the errors, scaled
        key = lambda e, s: (e,)  # noqa: E731
    expected = brute_force(X, y.astype(int), w.astype(float), H, n_classes, bias, key)
    if expected is None:
        with pytest.raises(InfeasibleProgram):
            prog.solve()
        return
    res = prog.solve()
    assert res.status == "optimal" and res.verified
    if text == "maximize accuracy":
        assert res.train_errors == pytest.approx(expected[0])
        return
    assert tuple(res.objective_levels) == pytest.approx(expected)
    assert res.classifier.kind == "bdd" and res.classifier.depth <= H


def _clustered_case(seed):
    """Thresholds of two numeric attributes (near-equal features: the clusters of the
    bounded enumeration, ``neighbours``), the class mostly one threshold of the first."""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(14, 24))
    values = rng.random((n, 2))
    X = np.column_stack([values[:, a] <= t for a in range(2) for t in (0.3, 0.4, 0.5)]).astype(int)
    y = np.where(rng.random(n) < 0.8, (values[:, 0] > 0.45).astype(int), rng.integers(0, 2, size=n))
    w = rng.integers(1, 3, size=n)
    return X, y, w


SIZED = [2, 3, 4, 5, 7, 8]


@pytest.mark.parametrize("seed", [0, 1, pytest.param(2, marks=pytest.mark.slow), pytest.param(3, marks=pytest.mark.slow)])
@pytest.mark.parametrize("which", SIZED)
def test_dp_equals_the_brute_force_at_depth_three_over_six_clustered_features(seed, which):
    X, y, w = _clustered_case(seed)
    text, key, _ = OBJECTIVES[which]
    data = {f"f{j}": X[:, j] for j in range(X.shape[1])}
    data["w"], data["class"] = w, y
    prog = odt.compile(f'data {{ target class\n weight w }}\nmodel bdd(depth = 3, bias = "C")\n{text}\nsolve dp', data=data)
    expected = brute_force(X, y.astype(int), w.astype(float), 3, 2, "C", key)
    if expected is None:
        with pytest.raises(InfeasibleProgram):
            prog.solve()
        return
    res = prog.solve()
    assert res.status == "optimal" and res.verified
    assert tuple(res.objective_levels) == pytest.approx(expected)
