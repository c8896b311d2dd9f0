"""The STreeD-style dp engine (issue 13) as a specification: on generated small programs
with random mixes of the separable constraints, its optimum equals a brute-force
enumeration of every tree, and every constraint holds on the decoded tree (odt's own
re-verification, ``evaluate``)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import odt

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from helpers import Case, TreeFacts, brute_force_constrained, cases  # noqa: E402

LEX = 1000  # errors * LEX + nodes orders (errors, nodes) on these tiny cases


@dataclass
class Program:
    """A program text over a case, with its brute-force objective and feasibility."""

    text: str
    objective: Callable[[TreeFacts, Fraction], Fraction]  # (facts, weighted errors) -> value
    feasible: Callable[[TreeFacts, Fraction], bool]
    first_level: Callable[[TreeFacts, Fraction], Fraction]


@st.composite
def programs(draw, case: Case, depth: int) -> Program:
    p = case.X.shape[1]
    parts: list[str] = []
    checks: list[Callable[[TreeFacts, Fraction], bool]] = []
    skeleton = [f"depth <= {depth}"]
    kind = draw(st.sampled_from(["errors", "nodes", "leaves", "then", "min_nodes", "perfect"]))
    a = Fraction(draw(st.sampled_from(["1/3", "1", "5/2"])))
    if kind == "errors":
        text, obj, first = "minimize errors", (lambda f, e: e), (lambda f, e: e)
    elif kind == "nodes":
        text, obj, first = f"minimize errors + {a} * nodes", (lambda f, e: e + a * f.nodes), (lambda f, e: e + a * f.nodes)
    elif kind == "leaves":
        text, obj, first = f"minimize errors + {a} * leaves", (lambda f, e: e + a * f.leaves), (lambda f, e: e + a * f.leaves)
    elif kind == "then":
        text, obj, first = "minimize errors then nodes", (lambda f, e: e * LEX + f.nodes), (lambda f, e: e)
    elif kind == "min_nodes":
        k = draw(st.integers(0, 3))
        text, obj, first = "minimize nodes", (lambda f, e: Fraction(f.nodes)), (lambda f, e: Fraction(f.nodes))
        parts.append(f"errors <= {k}")
        checks.append(lambda f, e, k=k: e <= k)
    else:
        text, obj, first = "minimize leaves", (lambda f, e: Fraction(f.leaves)), (lambda f, e: Fraction(f.leaves))
        parts.append("errors == 0")
        checks.append(lambda f, e: e == 0)
    if draw(st.booleans()):
        cap = draw(st.integers(1, 3))
        if draw(st.booleans()):
            skeleton.append(f"nodes <= {cap}")
            checks.append(lambda f, e, cap=cap: f.nodes <= cap)
        else:
            skeleton.append(f"leaves <= {cap + 1}")
            checks.append(lambda f, e, cap=cap: f.leaves <= cap + 1)
    if draw(st.booleans()):
        m = draw(st.integers(1, 3))
        parts.append(f"every leaf: samples >= {m}")
        checks.append(lambda f, e, m=m: all(n >= m for n in f.leaf_rows))
    if draw(st.booleans()):
        s = draw(st.integers(2, 6))
        parts.append(f"every node: samples >= {s}")
        checks.append(lambda f, e, s=s: all(n >= s for n in f.node_rows))
    if p >= 2 and draw(st.booleans()):
        i, j = draw(st.permutations(range(p)))[:2]
        parts.append(f"every path: f{i} before f{j}")
        checks.append(lambda f, e, i=i, j=j: all(i in path[:k] for path in f.paths for k, g in enumerate(path) if g == j))
    if p >= 2 and draw(st.booleans()):
        i, j = draw(st.permutations(range(p)))[:2]
        parts.append(f"every path: not (f{i} and f{j})")
        checks.append(lambda f, e, i=i, j=j: not any(i in path and j in path for path in f.paths))
    if draw(st.booleans()):
        cost = [draw(st.integers(1, 3)) for _ in range(p)]
        bound = draw(st.integers(1, 5))
        table = ", ".join(f"f{j}: {c}" for j, c in enumerate(cost))
        parts.append(f"every path: cost <= {bound} with cost {{ {table} }}")
        checks.append(lambda f, e, cost=cost, bound=bound: all(sum(cost[g] for g in path) <= bound for path in f.paths))
    if draw(st.booleans()):
        r1, r2 = draw(st.integers(0, len(case.y) - 1)), draw(st.integers(0, len(case.y) - 1))
        parts.append(f"same_leaf(r{r1}, r{r2})")
        w = case.w
        checks.append(lambda f, e, r1=r1, r2=r2: f.leaf_of[r1] == f.leaf_of[r2] or w is not None and min(w[r1], w[r2]) == 0)
    body = f"model tree({', '.join(skeleton)})\n{text}\n"
    if parts:
        body += "subject to {\n" + "\n".join(f"    {c}" for c in parts) + "\n}\n"
    return Program(body, obj, lambda f, e: all(c(f, e) for c in checks), first)


def weighted_errors(case: Case, facts: TreeFacts) -> Fraction:
    w = case.w if case.w is not None else np.ones(len(case.y), dtype=np.int64)
    return Fraction(int(sum(int(w[r]) for r in range(len(case.y)) if facts.pred[r] != case.y[r])))


def data_with_ids(case: Case) -> tuple[str, dict]:
    data = case.data() | {"id": [f"r{i}" for i in range(len(case.y))]}
    header = "data { target class weight w id id }\n" if case.w is not None else "data { target class id id }\n"
    return header, data


@st.composite
def case_and_program(draw):
    case = draw(cases())
    depth = draw(st.integers(1, 2))
    return case, depth, draw(programs(case, depth))


@settings(derandomize=True, deadline=None, max_examples=260, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case_and_program())
def test_dp_optimum_equals_brute_force_and_every_constraint_holds(example):
    case, depth, prog = example
    header, data = data_with_ids(case)
    compiled = odt.compile(header + prog.text, data=data)
    assert compiled.backend_name() == "dp"
    best = brute_force_constrained(case.X, case.y, depth, lambda f: prog.objective(f, weighted_errors(case, f)),
                                   lambda f: prog.feasible(f, weighted_errors(case, f)), w=case.w,
                                   classes=case.classes)
    if best is None:
        try:
            compiled.solve(backend="dp")
        except odt.OdtError as e:
            assert "infeasible" in str(e)
            return
        raise AssertionError("dp found a tree where none is feasible")
    res = compiled.solve(backend="dp")
    assert res.status == "optimal" and res.verified, res.constraints
    assert all(c.holds for c in res.constraints)
    facts = best[1]
    assert Fraction(res.objective).limit_denominator(1000) == prog.first_level(facts, weighted_errors(case, facts))
    if "then" in prog.text:
        assert res.objective_levels[1] == facts.nodes
