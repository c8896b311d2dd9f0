"""The branch and bound of the STreeD-style engine (``streed/bounded.py``: cost complexity
and node budgets with upper and lower bounds, similarity bounds, frequencies moved between
subproblems) against the engine's exhaustive vectors (``root.BOUNDED`` off), which the
brute-force property tests pin down, at depths 3 and 4 where the bounds act: the same
optimum on random programs mixing node caps, cost complexity, weights (integral and not)
and the separable constraints."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import odt
from odt.backends.dp.streed import root


def _program(rng: np.random.Generator, depth: int, plain: bool = False) -> tuple[str, dict]:
    """A random program; ``plain``: weight one and no path constraint or same_leaf (the
    compiled depth-three search of ``kernels.depth_three``), on more rows and columns."""
    n, p = int(rng.integers(12, 70)), int(rng.integers(2, 7))
    if plain:
        n, p = int(rng.integers(30, 150)), int(rng.integers(3, 12))
    C = int(rng.choice([2, 2, 3]))
    X = rng.integers(0, 2, size=(n, p))
    y = (X[:, 0] ^ (X[:, 1 % p] & rng.integers(0, 2, size=n))) if C == 2 else rng.integers(0, C, size=n)
    noise = rng.random(n) < 0.2
    y = np.where(noise, rng.integers(0, C, size=n), y)
    data = {f"f{j}": [int(v) for v in X[:, j]] for j in range(p)}
    if plain and rng.random() < 0.5:  # a complement and a copy: the same partitions as f0 and f1
        data["g0"] = [1 - int(v) for v in X[:, 0]]
        data["g1"] = [int(v) for v in X[:, 1 % p]]
    data["class"] = [int(v) for v in y]
    data["id"] = [f"r{i}" for i in range(n)]
    header = "data { target class id id }\n"
    kind = 0 if plain else rng.integers(0, 3)
    if kind == 1:
        data["w"] = [int(v) for v in rng.integers(0, 4, size=n)]
        data["w"][0] = 1
        header = "data { target class weight w id id }\n"
    elif kind == 2:
        data["w"] = [float(v) for v in rng.choice([0.5, 1.25, 2.0, 1 / 3], size=n)]
        header = "data { target class weight w id id }\n"
    skeleton = [f"depth <= {depth}"]
    if rng.random() < 0.6:
        skeleton.append(f"nodes <= {int(rng.integers(1, 8))}")
    a = Fraction(str(rng.choice(["0", "1/3", "1", "5/2", "7", "3/7"])))
    objective = rng.choice(["nodes", "leaves"])
    text = f"minimize errors + {a} * {objective}" if a else "minimize errors"
    if a and rng.random() < 0.3:
        text = f"minimize 2 * errors + {a} * {objective} + 1"
    parts = []
    if rng.random() < 0.3:
        parts.append(f"every leaf: samples >= {int(rng.integers(1, 4))}")
    if rng.random() < 0.2:
        parts.append(f"every node: samples >= {int(rng.integers(2, 9))}")
    if plain:
        pass
    elif p >= 2 and rng.random() < 0.25:
        i, j = rng.permutation(p)[:2]
        parts.append(f"every path: f{i} before f{j}")
    if plain:
        pass
    elif p >= 2 and rng.random() < 0.25:
        i, j = rng.permutation(p)[:2]
        parts.append(f"every path: not (f{i} and f{j})")
    if plain:
        pass
    elif rng.random() < 0.2:
        table = ", ".join(f"f{j}: {int(rng.integers(1, 3))}" for j in range(p))
        parts.append(f"every path: cost <= {int(rng.integers(2, 6))} with cost {{ {table} }}")
    if not plain and rng.random() < 0.2:
        parts.append(f"same_leaf(r{int(rng.integers(0, n))}, r{int(rng.integers(0, n))})")
    body = f"model tree({', '.join(skeleton)})\n{text}\n"
    if parts:
        body += "subject to {\n" + "\n".join(parts) + "\n}\n"
    return header + body, data


def _solve(text: str, data: dict, bounded: bool, monkeypatch) -> tuple[str, Fraction | None]:
    monkeypatch.setattr(root, "BOUNDED", bounded)
    prog = odt.compile(text, data=data)
    try:
        res = prog.solve(backend="dp")
    except odt.OdtError as e:
        assert "infeasible" in str(e)
        return "infeasible", None
    assert res.status == "optimal" and res.verified and all(c.holds for c in res.constraints)
    return res.status, Fraction(res.objective).limit_denominator(10**6)


def _check(seed: int, depth: int, monkeypatch, plain: bool = False) -> None:
    text, data = _program(np.random.default_rng(seed), depth, plain)
    assert _solve(text, data, True, monkeypatch) == _solve(text, data, False, monkeypatch), text


@pytest.mark.parametrize("seed", range(40))
def test_bounded_equals_the_exhaustive_vectors_at_depth_three(seed, monkeypatch):
    _check(seed, 3, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(40, 240))
def test_bounded_equals_the_exhaustive_vectors_at_depths_three_and_four(seed, monkeypatch):
    _check(seed, 3 + seed % 2, monkeypatch)


@pytest.mark.parametrize("seed", range(30))
def test_compiled_depth_three_equals_the_exhaustive_vectors(seed, monkeypatch):
    _check(1000 + seed, 3 + seed % 2, monkeypatch, plain=True)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(30, 150))
def test_compiled_depth_three_equals_the_exhaustive_vectors_more(seed, monkeypatch):
    _check(1000 + seed, 3 + seed % 2, monkeypatch, plain=True)


@pytest.mark.parametrize("seed", range(16))
def test_the_fast_paths_equal_the_plain_engine(seed, monkeypatch):
    """Bounded, compiled, one candidate per partition against the vectors on numpy with
    every candidate (no compiled kernel, no deduplication: the engine before them)."""
    from odt.backends.dp.streed import kernels

    text, data = _program(np.random.default_rng(2000 + seed), 3 + seed % 2, plain=seed % 4 != 0)
    fast = _solve(text, data, True, monkeypatch)
    monkeypatch.setattr(kernels, "AVAILABLE", False)
    monkeypatch.setattr(root, "DISTINCT", False)
    assert fast == _solve(text, data, False, monkeypatch), text


def _depth_three_call(B, y, K, k, ub, c):
    """``kernels.depth_three`` on rows ``B`` (0/1) of classes ``y`` with every row weighing one."""
    from odt.backends.dp.streed import kernels

    n, m = B.shape
    indptr = np.concatenate([[0], np.cumsum(B.sum(axis=1))]).astype(np.int64)
    indices = np.concatenate([np.flatnonzero(r) for r in B] + [np.zeros(0, dtype=np.int64)]).astype(np.int64)
    W, cap = (n + 63) >> 6, 1024
    table = (np.random.default_rng(0).integers(0, 2**62, size=n, dtype=np.int64).astype(np.uint64),
             np.zeros(2048, dtype=np.int64), np.zeros(2048, dtype=np.int64), np.zeros((cap, W), dtype=np.uint64),
             np.zeros((cap, 4)), np.zeros(1, dtype=np.int64))
    return kernels.depth_three(indptr, indices, y.astype(np.int64), np.arange(n, dtype=np.int64), m, K, k, ub, c, 0.0,
                               1.0, 1.0, True, 1e-9, *table, np.ones(K))


@pytest.mark.parametrize("seed", range(30))
def test_compiled_depth_three_never_returns_a_split_above_its_bound(seed):
    """Under an upper bound below the optimum the compiled search may prune candidates by
    that bound alone, so a split it then evaluates above the bound is not the optimum: it
    must come back as a bound (no candidate), never as a solved value."""
    from odt.backends.dp.streed import kernels

    if not kernels.AVAILABLE:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(5000 + seed)
    n, m, K = int(rng.integers(20, 120)), int(rng.integers(3, 10)), int(rng.choice([2, 3]))
    B = rng.random((n, m)) < rng.uniform(0.2, 0.8)
    y = np.where(rng.random(n) < 0.3, rng.integers(0, K, size=n), (B[:, 0] ^ B[:, 1 % m]).astype(int) % K)
    k, c = int(rng.integers(1, 8)), float(rng.choice([0.0, 0.5, 2.0]))
    opt = _depth_three_call(B, y, K, k, np.inf, c)[0]
    for ub in (opt - 0.5, opt - 2.0, opt * 0.5, opt, opt + 1.0):
        best, f, _, _, lb, _ = _depth_three_call(B, y, K, k, ub, c)
        if f >= 0:
            assert best <= ub + 1e-9 * (1 + abs(ub)) and best >= opt - 1e-9
        if ub >= opt:
            assert best == pytest.approx(opt)
        else:
            assert min(best, lb) <= opt + 1e-9  # what comes back bounds the optimum from below or is it
