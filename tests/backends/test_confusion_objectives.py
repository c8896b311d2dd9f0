"""Cost-sensitive, balanced-accuracy and F1 objectives (issue 26) against brute force, on
every backend that takes them.

Tiny random datasets (0/1 features, weighted or not, two or three classes); each program's
objective is written in odt and, independently, as a Python function of a brute-force
tree's training predictions (exact fractions). For every backend the support table lets
take the program, the result must be ``optimal``, ``verified`` and equal the brute-force
optimum. dp meets each objective with the side constraints it keeps (a node cap, a minimum
leaf size) and on raw thresholds (ConTree's kernels, reweighted), and F1 only on dp.
"""
from __future__ import annotations

import random
import sys
from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import odt
from odt.compiler import support
from odt.compiler.errors import InfeasibleProgram

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import binary_data, iter_split_trees, tree_facts  # noqa: E402

DEPTH = 2


def _data(rnd: random.Random, classes: int) -> tuple[np.ndarray, list[int], list[int] | None]:
    k, n = rnd.randint(2, 3), rnd.randint(6, 10)
    X = np.array([[rnd.randint(0, 1) for _ in range(k)] for _ in range(n)], dtype=np.int64)
    y = [rnd.randrange(classes) for _ in range(n)]
    for c in range(classes):  # every class occurs
        y[c] = c
    w = [rnd.choice([1, 1, 2, 3]) for _ in range(n)] if rnd.random() < 0.4 else None
    return X, y, w


def _confusion(y, pred, w) -> dict[str, Fraction]:
    ws = [Fraction(v) for v in (w or [1] * len(y))]
    tp = sum((ws[i] for i in range(len(y)) if y[i] == 1 and pred[i] == 1), Fraction(0))
    fp = sum((ws[i] for i in range(len(y)) if y[i] != 1 and pred[i] == 1), Fraction(0))
    fn = sum((ws[i] for i in range(len(y)) if y[i] == 1 and pred[i] != 1), Fraction(0))
    tn = sum((ws[i] for i in range(len(y)) if y[i] != 1 and pred[i] != 1), Fraction(0))
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn}


def _matrix_cost(M, y, pred, w) -> Fraction:
    ws = [Fraction(v) for v in (w or [1] * len(y))]
    return sum((ws[i] * M[y[i]][pred[i]] for i in range(len(y))), Fraction(0))


def _balanced(y, pred, w) -> Fraction:
    ws = [Fraction(v) for v in (w or [1] * len(y))]
    classes = sorted(set(y))
    recalls = []
    for c in classes:
        tot = sum((ws[i] for i in range(len(y)) if y[i] == c), Fraction(0))
        hit = sum((ws[i] for i in range(len(y)) if y[i] == c and pred[i] == c), Fraction(0))
        recalls.append(hit / tot)
    return sum(recalls, Fraction(0)) / len(classes)


def _f1(y, pred, w) -> Fraction:
    c = _confusion(y, pred, w)
    return Fraction(0) if c["tp"] == 0 else 2 * c["tp"] / (2 * c["tp"] + c["fp"] + c["fn"])


def _program(rnd: random.Random, classes: int) -> tuple[str, str, Callable, str]:
    """(cost table lines, objective text, value(y, pred, w, nodes), sense)."""
    kind = rnd.choice(["matrix", "weighted", "balanced", "f1", "tp"] if classes == 2 else ["matrix", "balanced"])
    if kind == "matrix":
        M = [[Fraction(rnd.randint(0, 2) if a == p else rnd.randint(0, 5)) for p in range(classes)]
             for a in range(classes)]
        entries = [f"{a} as {p}: {M[a][p]}" for a in range(classes) for p in range(classes)
                   if M[a][p] != (0 if a == p else 1)]
        table = f"cost T = {{ {', '.join(entries) or '*: 1'} }}\n"
        nodes = Fraction(rnd.choice([0, 0, 1]), 2)
        text = "minimize misclassification_cost(T)" + (f" + {nodes} * nodes" if nodes else "")
        return table, text, lambda y, p, w, n: _matrix_cost(M, y, p, w) + nodes * n, "min"
    if kind == "weighted":
        a, b = rnd.randint(1, 5), rnd.randint(1, 5)
        return "", f"minimize {a} * fp + {b} * fn", \
            lambda y, p, w, n: a * _confusion(y, p, w)["fp"] + b * _confusion(y, p, w)["fn"], "min"
    if kind == "tp":
        return "", "maximize tp - 2 * fp", \
            lambda y, p, w, n: _confusion(y, p, w)["tp"] - 2 * _confusion(y, p, w)["fp"], "max"
    if kind == "balanced":
        return "", "maximize balanced_accuracy", lambda y, p, w, n: _balanced(y, p, w), "max"
    return "", "maximize f1", lambda y, p, w, n: _f1(y, p, w), "max"


def _brute(X, y, w, classes, value, sense, min_leaf: int = 1, max_nodes: int | None = None) -> Fraction:
    best = None
    for t in iter_split_trees(X, list(range(len(y))), list(range(classes)), DEPTH):
        facts = tree_facts(t, X, range(len(y)))
        nodes = len(facts.node_rows)
        if min(facts.leaf_rows) < min_leaf or (max_nodes is not None and nodes > max_nodes):
            continue
        v = value(y, list(facts.pred), w, nodes)
        if best is None or (v < best if sense == "min" else v > best):
            best = v
    assert best is not None
    return best


def _case(seed: int, backend: str, extra: str = "", fractional: bool = False) -> None:
    """``fractional``: every row weighted by a fraction (quarters to 5/2): the reweighing,
    the class sums and the confusion counts away from their whole-number paths."""
    rnd = random.Random(seed)
    classes = 3 if rnd.random() < 0.25 else 2
    X, y, w = _data(rnd, classes)
    if fractional:
        w = [rnd.choice([0.25, 0.5, 1, 1.5, 2.5]) for _ in y]
    table, objective, value, sense = _program(rnd, classes)
    min_leaf = 2 if extra == "leaf" else 1
    max_nodes = 2 if extra == "nodes" else None
    weight = "\n weight w" if w is not None else ""
    head = f"data {{ target class{weight} }}\n" + table
    model = f"model tree(depth <= {DEPTH}{', nodes <= 2' if max_nodes else ''})\n{objective}\n"
    if min_leaf > 1:
        model += "subject to { every leaf: samples >= 2 }\n"
    prog = odt.compile(head + model, data=binary_data(X, y, w))
    if support.refusal(prog.checked, backend) is not None:
        assert backend != "dp" and "f1" in objective, f"only f1 is refused ({backend}): {objective}"
        return
    r = prog.solve(backend=backend, time_limit=60)
    want = _brute(X, y, w, classes, value, sense, min_leaf, max_nodes)
    assert r.status == "optimal" and r.verified, (objective, r.status, r.verified)
    assert abs(r.objective - float(want)) <= 1e-9, (seed, objective, r.objective, want)


@pytest.mark.parametrize("seed", range(24))
def test_dp_equals_brute_force(seed):
    _case(seed, "dp", ["", "leaf", "nodes"][seed % 3])


@pytest.mark.parametrize("seed", range(12))
def test_dp_equals_brute_force_with_fractional_weights(seed):
    _case(500 + seed, "dp", ["", "leaf", "nodes"][seed % 3], fractional=True)


@pytest.mark.parametrize("backend", ["maxsat", "cp", "milp"])
@pytest.mark.parametrize("seed", range(4))
def test_solver_backends_equal_brute_force(seed, backend):
    _case(seed, backend)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["maxsat", "cp", "milp"])
@pytest.mark.parametrize("seed", range(4, 40))
def test_solver_backends_equal_brute_force_slow(seed, backend):
    _case(seed, backend)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(24, 200))
def test_dp_equals_brute_force_slow(seed):
    _case(seed, "dp", ["", "leaf", "nodes"][seed % 3])


def test_raw_thresholds_run_the_reweighted_contree_and_agree_with_cp():
    """A numeric column cut at every midpoint: dp's ConTree engine on reweighted rows, the
    same optimum as cp on the same program."""
    rnd = np.random.default_rng(3)
    data = {"x": rnd.integers(0, 6, 40).tolist(), "z": rnd.normal(size=40).round(2).tolist(),
            "class": rnd.integers(0, 2, 40).tolist()}
    for objective in ("minimize 4 * fp + fn", "maximize balanced_accuracy"):
        prog = odt.compile(f"data {{ target class }}\nmodel tree(depth <= 2)\n{objective}", data=data)
        got = prog.solve(backend="dp")
        assert "ConTree" in got.log and got.status == "optimal" and got.verified
        assert abs(got.objective - prog.solve(backend="cp", time_limit=120).objective) <= 1e-9


def test_a_multiclass_matrix_runs_the_generic_task():
    """A 3-class matrix whose rows cost different amounts per wrong label is no reweighting:
    the generic cost-matrix task, equal to brute force."""
    rnd = random.Random(5)
    X, y, _ = _data(rnd, 3)
    M = [[Fraction(0), Fraction(1), Fraction(4)], [Fraction(2), Fraction(0), Fraction(1)],
         [Fraction(5), Fraction(1), Fraction(0)]]
    table = "cost T = { 0 as 2: 4, 1 as 0: 2, 2 as 0: 5 }\n"
    prog = odt.compile("data { target class }\n" + table + "model tree(depth <= 2)\nminimize misclassification_cost(T)",
                       data=binary_data(X, y))
    r = prog.solve(backend="dp")
    assert r.verified and r.status == "optimal" and "STreeD" in r.log
    assert abs(r.objective - float(_brute(X, y, None, 3, lambda yy, p, w, n: _matrix_cost(M, yy, p, w), "min"))) < 1e-9


def test_weights_compose_with_the_matrix():
    """``data { weight w }`` scales each row's cost: the objective is sum w * M[actual][predicted]."""
    X = np.array([[0], [0], [1], [1]])
    prog = odt.compile("data { target class\n weight w }\ncost T = { 0 as 1: 3 }\nmodel tree(depth <= 0)\n"
                       "minimize misclassification_cost(T)", data=binary_data(X, [0, 1, 0, 1], [2, 1, 1, 5]))
    r = prog.solve(backend="dp")
    assert r.objective == 6  # predict 0: fn weight 1 + 5 = 6 (cost 1); predict 1: fp weight 2 + 1 = 3, cost 9


@pytest.mark.parametrize("seed", range(12))
def test_f1_by_dinkelbach_equals_f1_by_pareto_fronts_and_brute_force(seed):
    """The two F1 searches of dp (Dinkelbach's weighted steps, the default, and STreeD's
    (fp, fn) fronts scored at the root) reach the brute-force optimum."""
    from fractions import Fraction as F

    from odt.backends.base import SolveOptions
    from odt.backends.dp.backend import DpBackend
    from odt.compiler.lower_search import lower_search

    rnd = random.Random(1000 + seed)
    X, y, w = _data(rnd, 2)
    weight = "\n weight w" if w is not None else ""
    prog = odt.compile(f"data {{ target class{weight} }}\nmodel tree(depth <= {DEPTH})\nmaximize f1",
                       data=binary_data(X, y, w))
    want = _brute(X, y, w, 2, lambda yy, p, ww, n: _f1(yy, p, ww), "max")
    search = lower_search(prog.checked)
    for extra in ({}, {"f1_fronts": True}):
        _, res = DpBackend().solve_search(search, SolveOptions(extra=extra))
        assert res.status.value == "optimal" and res.objective == (-want,) and res.bound == -want
    assert F(prog.solve(backend="dp").objective).limit_denominator(1000) == want


def test_an_f1_of_one_is_proven_without_a_confirming_step():
    """No tree beats F1 = 1: the step that finds one ends the search (one weighted step from
    the all-positive leaf); a lower optimum still takes the step that confirms it."""
    import re

    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 5)
    separable = odt.compile("data { target class }\nmodel tree(depth <= 2)\nmaximize f1",
                            data=binary_data(X, (X[:, 0] ^ X[:, 1]).tolist()))
    r = separable.solve(backend="dp")
    assert (r.status, r.objective, r.bound) == ("optimal", 1.0, 1.0)
    assert re.search(r"dinkelbach_steps': 1\b", r.log), r.log
    noisy = (X[:, 0] | (np.arange(len(X)) == 0)).tolist()  # x0, and one row of x0 = 0 positive
    shallow = odt.compile("data { target class }\nmodel tree(depth <= 1)\nmaximize f1", data=binary_data(X, noisy))
    r = shallow.solve(backend="dp")
    assert r.status == "optimal" and 0.9 < r.objective < 1
    assert re.search(r"dinkelbach_steps': 2\b", r.log), r.log  # found, then confirmed


def test_a_stopped_f1_search_keeps_its_best_tree_and_a_valid_bound():
    """A time limit too short for the proof: the best tree so far, verified, and a bound no
    lower than its F1 (maximised: the bound is from above)."""
    rnd = np.random.default_rng(7)
    data = {f"x{j}": rnd.integers(0, 2, 400).tolist() for j in range(12)} | {"class": rnd.integers(0, 2, 400).tolist()}
    prog = odt.compile("data { target class }\nmodel tree(depth <= 4)\nmaximize f1", data=data)
    r = prog.solve(backend="dp", time_limit=0.05)
    assert r.status in ("optimal", "feasible") and r.verified
    assert r.bound is not None and r.bound >= r.objective - 1e-12 and r.bound <= 1


@pytest.mark.parametrize("backend", ["dp", "cp"])
def test_the_positive_class_is_definable(backend):
    """``tp(c)``, ``fp(c)``, ``f1(c)``: the class named is the positive one (by default the
    second); ``fp(0)`` is the default ``fn``, and ``f1(0)`` is F1 of class 0."""
    rnd = random.Random(77)
    X, y, w = _data(rnd, 2)
    data = binary_data(X, y, w)
    head = "data { target class" + ("\n weight w" if w is not None else "") + " }\nmodel tree(depth <= 2)\n"
    a = odt.compile(head + "minimize 3 * fp(0) + fn(0)", data=data).solve(backend=backend)
    b = odt.compile(head + "minimize 3 * fn + fp", data=data).solve(backend=backend)
    assert a.objective == b.objective
    if backend == "dp":
        flipped = [1 - v for v in y]
        want = _brute(X, flipped, w, 2, lambda yy, p, ww, n: _f1(yy, p, ww), "max")
        got = odt.compile(head + "maximize f1(0)", data=data).solve(backend="dp")
        assert got.verified and abs(got.objective - float(want)) < 1e-9


@pytest.mark.parametrize("backend", ["dp", "maxsat", "cp", "milp"])
@pytest.mark.parametrize("seed", range(4))
def test_cost_matrices_and_balanced_accuracy_in_constraints_equal_brute_force(seed, backend):
    """``misclassification_cost(T) <= k`` and ``balanced_accuracy >= b`` as constraints
    (dp: terms of its Pareto fronts), with errors minimised: brute force, or infeasible on both."""
    rnd = random.Random(500 + seed)
    classes = 3 if seed % 2 else 2
    X, y, w = _data(rnd, classes)
    M = [[Fraction(0) if a == p else Fraction(rnd.randint(1, 4)) for p in range(classes)] for a in range(classes)]
    table = "cost T = { " + ", ".join(f"{a} as {p}: {M[a][p]}" for a in range(classes) for p in range(classes)
                                      if a != p) + " }\n"
    k = Fraction(rnd.randint(2, 6))
    b = Fraction(rnd.choice([1, 2, 3]), 4)
    weight = "\n weight w" if w is not None else ""
    text = (f"data {{ target class{weight} }}\n{table}model tree(depth <= {DEPTH})\nminimize errors\n"
            f"subject to {{\n misclassification_cost(T) <= {k}\n balanced_accuracy >= {b}\n}}")
    prog = odt.compile(text, data=binary_data(X, y, w))
    ws = [Fraction(v) for v in (w or [1] * len(y))]
    best = None
    for t in iter_split_trees(X, list(range(len(y))), list(range(classes)), DEPTH):
        pred = list(tree_facts(t, X, range(len(y))).pred)
        if _matrix_cost(M, y, pred, w) <= k and _balanced(y, pred, w) >= b:
            e = sum((ws[i] for i in range(len(y)) if pred[i] != y[i]), Fraction(0))
            best = e if best is None or e < best else best
    if best is None:
        with pytest.raises(InfeasibleProgram):
            prog.solve(backend=backend, time_limit=60)
        return
    r = prog.solve(backend=backend, time_limit=60)
    assert r.status == "optimal" and r.verified and abs(r.objective - float(best)) < 1e-9
