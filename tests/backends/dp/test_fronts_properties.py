"""Global constraints on dp (issue 14) as a specification: on generated programs with one
or two global constraints — group counts, rates and their ratios, parity as abs(...) <= d,
group errors and accuracy, confusion counts, ``==`` rows, expected_cost, uses formulas,
features_used — over two or three groups of random data, dp's optimum equals a brute-force
enumeration of every tree (tiny cases) and cp's proven optimum (larger cases), and every
constraint holds on the decoded tree (odt's own re-verification)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import odt

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from helpers import Case, TreeFacts, brute_force_constrained, cases  # noqa: E402


@dataclass
class World:
    """A case with a sensitive column ``s`` (one group per value) and the row weights."""

    case: Case
    s: list[int]
    k: int  # number of groups

    @property
    def w(self) -> list[int]:
        return [1] * len(self.case.y) if self.case.w is None else [int(v) for v in self.case.w]

    def group(self, i: int) -> list[int]:
        return [r for r in range(len(self.s)) if self.s[r] == i]

    def weight(self, i: int) -> Fraction:
        total = sum(self.w[r] for r in self.group(i))
        return Fraction(total) if total > 0 else Fraction(1)  # the checker's size of a weightless group

    def data(self) -> dict:
        d = self.case.data()
        d["s"] = list(self.s)
        return d


class Quantities:
    """The quantities of one tree on the world's rows, exactly."""

    def __init__(self, world: World, facts: TreeFacts):
        self.world, self.facts = world, facts

    def predicted(self, c: int, g: int) -> Fraction:
        return Fraction(sum(self.world.w[r] for r in self.world.group(g) if self.facts.pred[r] == c))

    def errors(self, g: int | None = None) -> Fraction:
        rows = range(len(self.world.s)) if g is None else self.world.group(g)
        return Fraction(sum(self.world.w[r] for r in rows if self.facts.pred[r] != self.world.case.y[r]))

    def confusion(self, kind: str, g: int) -> Fraction:
        y = self.world.case.y
        want = {"tp": (1, 1), "fp": (1, 0), "tn": (0, 0), "fn": (0, 1)}[kind]
        return Fraction(sum(self.world.w[r] for r in self.world.group(g)
                            if (self.facts.pred[r] == 1, y[r] == 1) == (bool(want[0]), bool(want[1]))))

    def expected_cost(self, cost: Callable[[int], int]) -> Fraction:
        X, w = self.world.case.X, self.world.w
        total = sum(w)
        paid = Fraction(0)

        def go(t, here):
            nonlocal paid
            if t[0] == "leaf":
                return
            paid += cost(t[1]) * sum(w[r] for r in here)
            go(t[2], [r for r in here if X[r][t[1]]])
            go(t[3], [r for r in here if not X[r][t[1]]])

        go(self.facts.tree, [r for r in range(len(w)) if w[r] > 0])
        return paid / total if total else Fraction(0)


Check = Callable[[Quantities], bool]


@st.composite
def constraint(draw, world: World) -> tuple[str, Check]:
    p = world.case.X.shape[1]
    n = sum(world.w)
    two = len(world.case.classes) == 2 and set(world.case.classes) == {0, 1}
    classes = world.case.classes
    i, j = draw(st.permutations(range(world.k)))[:2]
    kinds = ["predicted", "ratio", "parity", "group_errors", "accuracy", "equal", "expected_cost", "uses",
             "features_used", "mixed"] + (["confusion"] if two else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "predicted":
        c = draw(st.sampled_from(classes))
        k = draw(st.integers(0, max(n // 2, 1)))
        if draw(st.booleans()):
            return f"predicted({c}, g{i}) <= {k}", lambda q: q.predicted(c, i) <= k
        return f"predicted({c}, g{i}) >= {k}", lambda q: q.predicted(c, i) >= k
    if kind == "ratio":
        c = draw(st.sampled_from(classes))
        r = Fraction(draw(st.sampled_from(["1", "5/4", "4/5", "1/2"])))
        return (f"rate({c}, g{i}) <= {r} * rate({c}, g{j})",
                lambda q: q.predicted(c, i) / world.weight(i) <= r * q.predicted(c, j) / world.weight(j))
    if kind == "parity":
        c = draw(st.sampled_from(classes))
        d = Fraction(draw(st.sampled_from(["0", "1/10", "1/4", "1/2"])))
        return (f"abs(rate({c}, g{i}) - rate({c}, g{j})) <= {d}",
                lambda q: abs(q.predicted(c, i) / world.weight(i) - q.predicted(c, j) / world.weight(j)) <= d)
    if kind == "group_errors":
        k = draw(st.integers(0, 3))
        return f"errors(g{i}) <= {k}", lambda q: q.errors(i) <= k
    if kind == "accuracy":
        a = Fraction(draw(st.sampled_from(["1/2", "2/3", "9/10", "1"])))
        return f"accuracy(g{i}) >= {a}", lambda q: 1 - q.errors(i) / world.weight(i) >= a
    if kind == "equal":
        c = draw(st.sampled_from(classes))
        k = draw(st.integers(0, max(n // 3, 1)))
        return f"predicted({c}, g{i}) == {k}", lambda q: q.predicted(c, i) == k
    if kind == "expected_cost":
        costs = [draw(st.integers(0, 3)) for _ in range(p)]
        t = Fraction(draw(st.sampled_from(["0", "1/2", "1", "3/2", "3"])))
        table = ", ".join(f"f{f}: {c}" for f, c in enumerate(costs))
        return (f"expected_cost <= {t} with cost {{ {table} }}",
                lambda q: q.expected_cost(lambda f: costs[f]) <= t)
    if kind == "uses":
        a, b = draw(st.integers(0, p - 1)), draw(st.integers(0, p - 1))
        form = draw(st.sampled_from(["one", "not", "nand", "or"]))
        if form == "one":
            return f"uses f{a}", lambda q: a in q.facts.used
        if form == "not":
            return f"not uses f{a}", lambda q: a not in q.facts.used
        if form == "nand":
            return f"not (uses f{a} and uses f{b})", lambda q: not (a in q.facts.used and b in q.facts.used)
        return f"uses f{a} or uses f{b}", lambda q: a in q.facts.used or b in q.facts.used
    if kind == "features_used":
        k = draw(st.integers(0, 2))
        return f"features_used <= {k}", lambda q: len(q.facts.used) <= k
    if kind == "mixed":
        k = draw(st.integers(0, n))
        c = draw(st.sampled_from(classes))
        if draw(st.booleans()):
            return f"errors + predicted({c}, g{i}) <= {k}", lambda q: q.errors() + q.predicted(c, i) <= k
        return f"errors(g{i}) + nodes <= {k}", lambda q: q.errors(i) + q.facts.nodes <= k
    ck = draw(st.sampled_from(["tp", "fp", "fn"]))
    k = draw(st.integers(0, 3))
    if ck == "tp":
        return f"tp(g{i}) >= {k}", lambda q: q.confusion("tp", i) >= k
    if ck == "fp":
        return f"fp(g{i}) <= {k}", lambda q: q.confusion("fp", i) <= k
    return f"fn(g{i}) - fn(g{j}) <= {k}", lambda q: q.confusion("fn", i) - q.confusion("fn", j) <= k


@dataclass
class Program:
    text: str
    first_level: Callable[[Quantities], Fraction]
    feasible: Callable[[Quantities], bool]
    depth: int


@st.composite
def worlds(draw, big: bool = False) -> World:
    if big:
        n_rows = draw(st.integers(12, 30))
        n_features = draw(st.integers(3, 5))
        X = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=n_features, max_size=n_features),
                                   min_size=n_rows, max_size=n_rows)), dtype=np.int64)
        y = draw(st.lists(st.integers(0, 1), min_size=n_rows, max_size=n_rows))
        if len(set(y)) < 2:
            y[0] = 1 - y[0]
        w = None
        if draw(st.booleans()):
            w = np.array(draw(st.lists(st.integers(1, 3), min_size=n_rows, max_size=n_rows)), dtype=np.int64)
        case = Case(X, np.array(y, dtype=np.int64), w)
    else:
        case = draw(cases(zero_weights=False))
    n = len(case.y)
    k = min(draw(st.sampled_from([2, 3])), n)
    order = draw(st.permutations(range(n)))
    s = [0] * n
    for pos, r in enumerate(order):
        s[r] = pos % k if pos < k else draw(st.integers(0, k - 1))
    return World(case, s, k)


@st.composite
def programs(draw, big: bool = False) -> tuple[World, Program]:
    world = draw(worlds(big))
    depth = draw(st.integers(1, 2))
    groups = "".join(f"group g{i} = s == {i}\n" for i in range(world.k))
    features = ", ".join(f"f{j}" for j in range(world.case.X.shape[1]))
    objective = draw(st.sampled_from(["errors", "nodes", "then"]))
    a = Fraction(draw(st.sampled_from(["1/3", "1", "5/2"])))
    if objective == "errors":
        text, first = "minimize errors", (lambda q: q.errors())
    elif objective == "nodes":
        text, first = f"minimize errors + {a} * nodes", (lambda q: q.errors() + a * q.facts.nodes)
    else:
        text, first = "minimize errors then nodes", (lambda q: q.errors())
    rows = [draw(constraint(world)) for _ in range(draw(st.integers(1, 2)))]
    body = (f"{groups}model tree(depth <= {depth}) {{ features {features} }}\n{text}\nsubject to {{\n"
            + "\n".join(f"    {c}" for c, _ in rows) + "\n}\n")
    return world, Program(body, first, lambda q: all(chk(q) for _, chk in rows), depth)


def _header(world: World) -> str:
    return "data { target class weight w }\n" if world.case.w is not None else "data { target class }\n"


def _solve_dp(world: World, prog: Program):
    compiled = odt.compile(_header(world) + prog.text, data=world.data())
    assert compiled.backend_name() == "dp"
    try:
        return compiled, compiled.solve(backend="dp")
    except odt.OdtError as e:
        assert "infeasible" in str(e), str(e)
        return compiled, None


SETTINGS = dict(derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])


@settings(max_examples=100, **SETTINGS)
@given(programs())
def test_dp_equals_brute_force_under_global_constraints(example):
    _brute_force_agrees(*example)


@pytest.mark.slow
@settings(max_examples=300, **SETTINGS)
@given(programs())
def test_dp_equals_brute_force_under_global_constraints_many(example):
    _brute_force_agrees(*example)


def _brute_force_agrees(world: World, prog: Program) -> None:
    best = brute_force_constrained(world.case.X, world.case.y, prog.depth,
                                   lambda f: prog.first_level(Quantities(world, f)) * 10**6 + f.nodes
                                   if "then" in prog.text else prog.first_level(Quantities(world, f)),
                                   lambda f: prog.feasible(Quantities(world, f)), w=world.case.w,
                                   classes=world.case.classes)
    _, res = _solve_dp(world, prog)
    if best is None:
        assert res is None, "dp found a tree where none is feasible"
        return
    assert res is not None, "dp says infeasible where brute force finds a tree"
    assert res.status == "optimal" and res.verified, res.constraints
    assert all(c.holds for c in res.constraints)
    want = prog.first_level(Quantities(world, best[1]))
    assert Fraction(res.objective).limit_denominator(1000) == want
    if "then" in prog.text:
        assert res.objective_levels[1] == best[1].nodes


def _cp_agrees(world: World, prog: Program) -> None:
    compiled, res = _solve_dp(world, prog)
    try:
        ref = compiled.solve(backend="cp", time_limit=20)
    except odt.OdtError as e:
        assert "infeasible" in str(e), str(e)
        assert res is None, "dp found a tree cp proves infeasible"
        return
    if ref.status != "optimal":
        return  # cp did not prove its optimum in time: nothing to compare
    assert res is not None, "dp says infeasible where cp finds a tree"
    assert res.status == "optimal" and res.verified and all(c.holds for c in res.constraints), res.constraints
    assert Fraction(res.objective).limit_denominator(1000) == Fraction(ref.objective).limit_denominator(1000)


@settings(max_examples=4, **SETTINGS)
@given(programs(big=True))
def test_dp_equals_cp_under_global_constraints(example):
    _cp_agrees(*example)


@pytest.mark.slow
@settings(max_examples=100, **SETTINGS)
@given(programs(big=True))
def test_dp_equals_cp_under_global_constraints_many(example):
    _cp_agrees(*example)


EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_the_compas_parity_example_routes_to_dp_and_meets_its_bound():
    prog = odt.compile_file(EXAMPLES / "fair_compas.odt")
    assert prog.backend_name() == "dp"
    res = prog.solve()
    assert res.status == "optimal" and res.verified and res.objective == 2873
    assert "max_front" in res.log


def test_under_a_time_limit_dp_returns_a_verified_tree_and_a_bound():
    """Anytime: depth by depth, each depth's optimum is feasible for the program."""
    text = (EXAMPLES / "fair_compas_ddp.odt").read_text().replace("depth <= 2", "depth <= 4")
    prog = odt.compile(text, base_dir=EXAMPLES)
    seen = []
    res = prog.solve(backend="dp", time_limit=0.5, progress=seen.append)
    assert res.status in ("feasible", "optimal") and res.verified
    assert all(c.holds for c in res.constraints)
    assert res.bound is not None and res.bound <= res.objective
    assert seen and all("largest front" in p.note for p in seen)
