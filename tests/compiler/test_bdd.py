"""Ordered BDDs (S5, Hu et al. IJCAI 2022): the BDD2 MaxSAT encoding, GenBDD and its
generalisation biases, the depth search (P_bdd), CART pre-selection.

Specifications: the solver optimum equals brute force over every ordered BDD (every
ordered choice of H distinct features, Hu's eq. (1), and every truth table); a BDD is
never better than the optimal tree of the same depth; no bias changes a training
prediction."""
from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from odt.compiler.classifiers.bdd_build import diagram_from_table, fill_unreached, gen_bdd
from odt.compiler.classifiers.diagram import Diagram, leaf_class
from odt.compiler.errors import OdtError, UnsupportedConstruct
from odt.program import Program, compile
from odt.compiler.skeletons.bdd_levels import cart_features

DATA = Path(__file__).parents[1] / "fixtures" / "data"


def _random_frame(seed: int, n_rows: int = 14, n_features: int = 4, n_classes: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n_rows, n_features))
    y = rng.integers(0, n_classes, size=n_rows)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(n_features)])
    df["class"] = y
    return df


def _brute_force(df: pd.DataFrame, depth: int) -> int | None:
    """Fewest errors over every ordered BDD of ``depth`` levels (distinct features) and
    every truth table; None when there are fewer features than levels."""
    X = df.drop(columns="class").to_numpy().astype(bool)
    y = df["class"].to_numpy()
    classes = sorted(set(y))
    best = None
    for order in itertools.permutations(range(X.shape[1]), depth):
        cell = np.zeros(len(y), dtype=int)
        for f in order:
            cell = 2 * cell + X[:, f]
        for table in itertools.product(classes, repeat=1 << depth):
            errors = int(np.sum(np.array(table)[cell] != y))
            best = errors if best is None else min(best, errors)
    return best


def _solve_bdd(df: pd.DataFrame, depth: int, backend: str, extra: str = ""):
    prog = compile(f"model bdd(depth = {depth})\nminimize errors\n{extra}", data=df)
    return prog, prog.solve(backend=backend)


@pytest.mark.parametrize("backend", ["maxsat", "cp"])
@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("seed", range(4))
def test_optimum_equals_brute_force(seed: int, depth: int, backend: str) -> None:
    df = _random_frame(seed, n_features=3 + seed % 2)
    _, res = _solve_bdd(df, depth, backend)
    assert res.status == "optimal" and res.verified
    assert res.train_errors == res.objective == _brute_force(df, depth)


@pytest.mark.parametrize("backend", ["maxsat", "cp"])
@pytest.mark.parametrize("seed", range(3))
def test_multiclass_optimum_equals_brute_force(seed: int, backend: str) -> None:
    df = _random_frame(100 + seed, n_rows=16, n_classes=3)
    _, res = _solve_bdd(df, 2, backend)
    assert res.status == "optimal" and res.verified
    assert res.objective == _brute_force(df, 2)


def test_fewer_features_than_levels() -> None:
    """A twin column is dropped before encoding; the missing level is a constant
    pseudo-feature and the optimum is still the brute force over distinct columns."""
    df = _random_frame(7, n_features=2)
    df["f1"] = df["f0"]
    _, res = _solve_bdd(df, 2, "maxsat")
    assert res.verified and res.objective == _brute_force(df, 2)
    assert res.classifier.depth <= 1


@pytest.mark.parametrize("name,depth", [("mouse", 2), ("corral", 2), ("zoo-1", 2), ("mouse", 3)])
def test_never_better_than_optimal_tree(name: str, depth: int) -> None:
    df = pd.read_csv(DATA / f"{name}.csv")
    _, bdd = _solve_bdd(df, depth, "maxsat")
    tree = compile(f"model tree(depth <= {depth})\nminimize errors", data=df).solve(backend="dp")
    assert bdd.status == tree.status == "optimal" and bdd.verified
    assert bdd.objective >= tree.objective


def _routes_table(d: Diagram, table: list[int], level_features: list[int]) -> bool:
    """The diagram computes ``table`` on every assignment of the level features."""
    depth = len(level_features)
    for j in range(1 << depth):
        bits = [(j >> (depth - 1 - i)) & 1 for i in range(depth)]
        ref = d.root
        while ref >= 0:
            n = d.nodes[ref]
            ref = n.if_true if bits[n.layer] else n.if_false
        if leaf_class(ref) != table[j]:
            return False
    return True


@pytest.mark.parametrize("seed", range(40))
def test_gen_bdd_is_reduced_and_biases_keep_reached_cells(seed: int) -> None:
    rng = np.random.default_rng(seed)
    depth = int(rng.integers(1, 5))
    n_classes = int(rng.integers(2, 4))
    table = [int(v) for v in rng.integers(0, n_classes, 1 << depth)]
    counts = np.zeros((1 << depth, n_classes))
    for j in range(1 << depth):
        if rng.random() < 0.6:
            counts[j, rng.integers(0, n_classes)] += int(rng.integers(1, 4))
            counts[j, table[j]] += 1
    reached = counts.sum(axis=1) > 0
    for bias in ("S", "P", "C"):
        filled = fill_unreached(table, counts, bias)
        assert all(filled[j] == table[j] for j in range(1 << depth) if reached[j])  # training cells kept
        nodes, root = gen_bdd(filled)
        seen = set()
        for i, (level, t, f) in enumerate(nodes):
            assert t != f, "reduced: no node with equal arcs"
            assert (level, t, f) not in seen, "reduced: no two equal nodes"
            seen.add((level, t, f))
            for ref in (t, f):
                assert ref < 0 or (ref > i and nodes[ref][0] > level), "ordered and topological"
        d = diagram_from_table(table, counts, [_feature(i) for i in range(depth)], tuple(range(n_classes)), (), bias)
        assert d.kind == "bdd"
        assert _routes_table(d, filled, list(range(depth)))


def _feature(i: int):
    from odt.compiler.data import Feature

    return Feature(f"x{i}", "binary")


def test_merge_compatible_is_hu_example_3() -> None:
    table = [0, 0, 0, 1, 0, 1, 1, 1]
    counts = np.array([[0, 0] if j in (0, 2, 7) else [1 - v, v] for j, v in enumerate(table)])
    assert fill_unreached(table, counts, "C") == [1, 0, 0, 1, 0, 1, 1, 0]
    d = diagram_from_table(table, counts, [_feature(i) for i in range(3)], (0, 1), (), "C")
    assert d.n_nodes == 5  # beads u0u1011u, 1001, 0110, 10, 01 (Hu Figure 5, middle)
    s = diagram_from_table(table, counts, [_feature(i) for i in range(3)], (0, 1), (), "S")
    assert s.n_nodes == 4


@pytest.mark.parametrize("name", ["mouse", "zoo-1"])
def test_biases_never_change_training_predictions(name: str) -> None:
    df = pd.read_csv(DATA / f"{name}.csv")
    prog = compile("model bdd(depth = 4)\nminimize errors", data=df)
    low = prog.lowered_for("maxsat")
    from odt.backends import get_backend
    from odt.backends.base import SolveOptions

    res = get_backend("maxsat").solve(low.model, SolveOptions(time_limit=None, threads=1, seed=0, verbose=False,
                                                              on_progress=None, extra={}))
    preds = {}
    for bias in ("S", "P", "C"):
        enc = dataclasses.replace(low.encoding, bias=bias)
        d = enc.decode(res.values, prog.dataset, tuple(df.columns[:-1]))
        preds[bias] = d.predict(df.drop(columns="class"))
    assert (preds["S"] == preds["P"]).all() and (preds["S"] == preds["C"]).all()


def test_bias_parameter_on_the_checked_skeleton() -> None:
    df = pd.read_csv(DATA / "mouse.csv")
    prog = compile("model bdd(depth = 3)\nminimize errors", data=df)
    assert prog.checked.skeleton.bias == "C"
    out = {}
    for bias in ("S", "P", "C"):
        sub = Program(dataclasses.replace(prog.checked, skeleton=dataclasses.replace(prog.checked.skeleton, bias=bias)))
        res = sub.solve(backend="maxsat")
        assert res.verified
        out[bias] = res.objective
    assert len(set(out.values())) == 1


def test_bad_bias_and_misplaced_preselect_are_errors() -> None:
    df = _random_frame(0)
    with pytest.raises(OdtError, match="bias of a bdd"):
        compile("model bdd(depth = 2, bias = 1)", data=df)
    with pytest.raises(OdtError, match="preselect"):
        compile("model tree(depth <= 2)\nsolve maxsat(preselect = 3)", data=df)
    with pytest.raises(OdtError, match="depth >= 1"):
        compile("model bdd(depth = 0)", data=df)


def _consistent_frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = np.array(list(itertools.product([0, 1], repeat=4)))[rng.permutation(16)[:11]]
    table = rng.integers(0, 2, 16)
    y = table[X @ np.array([8, 4, 2, 1])]
    if len(set(y)) < 2:
        y[0] = 1 - y[0]
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(4)])
    df["class"] = y
    return df


def _separable(df: pd.DataFrame, depth: int) -> bool:
    """Some ordered choice of ``depth`` distinct features sends no two rows of different
    classes to one cell (then the table of cell classes has 0 errors)."""
    X = df.drop(columns="class").to_numpy().astype(int)
    y = df["class"].to_numpy()
    for order in itertools.permutations(range(X.shape[1]), depth):
        cell = X[:, list(order)] @ (1 << np.arange(depth)[::-1])
        if all(len(set(y[cell == j])) <= 1 for j in set(cell)):
            return True
    return False


@pytest.mark.parametrize("seed", range(4))
def test_decision_variant_finds_smallest_depth(seed: int) -> None:
    df = _consistent_frame(seed)
    prog = compile("model bdd(depth in 1..4)\nminimize depth\nsubject to { errors == 0 }", data=df)
    res = prog.solve(backend="maxsat")
    smallest = next(h for h in range(1, 5) if _separable(df, h))
    assert res.status == "optimal" and res.verified and res.train_errors == 0
    assert res.objective == smallest == res.classifier.depth


def test_json_round_trip_and_raw_predictions(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.integers(18, 80, 60), "job": rng.choice(["a", "b", "c"], 60),
                       "smoker": rng.integers(0, 2, 60)})
    df["class"] = ((df["age"] > 45) ^ (df["job"] == "b")).astype(int)
    prog = compile('data { numeric age by quantiles(4) }\nmodel bdd(depth = 2)\nminimize errors', data=df)
    res = prog.solve(backend="maxsat")
    assert res.verified and res.classifier.kind == "bdd"
    d = res.classifier
    path = tmp_path / "bdd.json"
    d.save(path)
    back = Diagram.from_json(json.loads(path.read_text()))
    assert back == d
    raw = df.drop(columns="class")
    pred = back.predict(raw)
    assert (pred == d.predict(raw)).all()
    assert int((pred != df["class"].to_numpy()).sum()) == res.train_errors


def test_preselect_restricts_features_to_cart() -> None:
    df = pd.read_csv(DATA / "zoo-1.csv")
    prog = compile("model bdd(depth = 2)\nminimize errors\nsolve maxsat(preselect = 3)", data=df)
    enc = prog.lowered_for("maxsat").encoding
    assert len(enc.features) == 3
    res = prog.solve()
    assert res.verified and {f.column for f in res.classifier.features} <= {prog.dataset.features[f].column
                                                                          for f in enc.features}


def test_cart_root_matches_scikit_learn() -> None:
    tree_mod = pytest.importorskip("sklearn.tree")
    df = pd.read_csv(DATA / "mouse.csv")
    X = df.drop(columns="class").to_numpy().astype(bool)
    y = df["class"].to_numpy()
    ours = cart_features(X, y, np.ones(len(y)), list(range(X.shape[1])), 1)
    sk = tree_mod.DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y)
    root = int(sk.tree_.feature[0])
    gini = lambda f: _gini_gain(X[:, f], y)  # noqa: E731  (ties: any best split is CART's)
    assert abs(gini(ours[0]) - gini(root)) < 1e-12


def _gini_gain(col: np.ndarray, y: np.ndarray) -> float:
    def g(m: np.ndarray) -> float:
        if not m.any():
            return 0.0
        p = np.bincount(y[m], minlength=2) / m.sum()
        return m.sum() * (1 - (p ** 2).sum())

    return g(np.ones_like(col)) - g(col) - g(~col)


@pytest.mark.parametrize("depth", [2, 4])
def test_encoding_not_larger_than_hu_bdd2(depth: int) -> None:
    """Clause literals plus soft units stay within Prop. 3's 2MHK + M 2^H (H+1)."""
    df = pd.read_csv(DATA / "mouse.csv")
    prog = compile(f"model bdd(depth = {depth})\nminimize errors", data=df)
    st = prog.lowered_for("maxsat").model.stats()
    M, K = len(df), df.shape[1] - 1
    hu = 2 * M * depth * K + M * (1 << depth) * (depth + 1)
    assert st.literals + st.objective_terms <= hu


def test_multivariate_splits_on_a_bdd_are_refused_on_every_backend() -> None:
    """milp used to drop 'splits multivariate' silently and solve a plain BDD."""
    df = _random_frame(0)
    prog = compile("model bdd(depth = 2) { splits multivariate }\nminimize errors", data=df)
    for backend in ("maxsat", "cp", "milp"):
        with pytest.raises(UnsupportedConstruct, match="splits multivariate"):
            prog.solve(backend=backend)
