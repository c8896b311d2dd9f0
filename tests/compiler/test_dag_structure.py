"""Path constraints on diagrams as potentials (C7-C9 without enumerating paths): on random
fixed DAGs, the clauses are satisfiable exactly when every root-to-leaf path satisfies
the constraint, as decided by enumerating the paths."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from pysat.solvers import Minisat22

from odt.compiler.ir import ModelBuilder
from odt.compiler.skeletons.dag_structure import DagStructure, cost_on_paths, exclusion_on_paths, order_on_paths

COLUMNS = ("a", "b", "c")


def random_dag(rng, widths=(1, 2, 3)):
    """A fixed levelled DAG: node -> (column, successors among the next layer; a missing
    successor is an arc into a class leaf)."""
    first = np.cumsum((0,) + widths)
    nodes = list(range(first[-1]))
    tests, succ = {}, {}
    for layer, w in enumerate(widths):
        for v in range(first[layer], first[layer] + w):
            tests[v] = COLUMNS[rng.integers(len(COLUMNS))]
            nxt = list(range(first[layer + 1], first[layer + 1] + widths[layer + 1])) if layer + 1 < len(widths) else []
            succ[v] = sorted({int(rng.choice(nxt)) for _ in range(2) if nxt and rng.random() < 0.8})
    return nodes, tests, succ


def paths(tests, succ, v=0):
    here = [tests[v]]
    if not succ[v] or len(succ[v]) < 2:  # a side that leads to a leaf ends a path here
        yield here
    for w in succ[v]:
        for rest in paths(tests, succ, w):
            yield here + rest


def fixed_structure(b: ModelBuilder, nodes, tests, succ):
    """Every handle a constant, fixed by unit clauses (reachable nodes only are active)."""
    reach = {0}
    for v in nodes:
        if v in reach:
            reach |= set(succ[v])
    T, arcs, Z = {}, [], {}
    for v in nodes:
        Z[v] = b.new_bool(("Z", v))
        b.clause((Z[v] if v in reach else -Z[v],))
        for col in COLUMNS:
            T[v, col] = b.new_bool(("T", v, col))
            b.clause((T[v, col] if (v in reach and tests[v] == col) else -T[v, col],))
        for w in succ[v]:
            lit = b.new_bool(("arc", v, w))
            b.clause((lit if v in reach else -lit,))
            arcs.append((v, w, lit))
    return DagStructure(tuple(nodes), tuple(arcs), Z, T, {}, ())


def satisfiable(b: ModelBuilder) -> bool:
    model = b.build()
    with Minisat22(bootstrap_with=[list(c.lits) for c in model.clauses]) as s:
        return s.solve()


CASES = list(range(150))


@pytest.mark.parametrize("seed", CASES)
def test_potentials_agree_with_path_enumeration(seed):
    rng = np.random.default_rng(seed)
    nodes, tests, succ = random_dag(rng)
    all_paths = list(paths(tests, succ))

    b = ModelBuilder()
    st = fixed_structure(b, nodes, tests, succ)
    order_on_paths(b, st, "a", "b")
    want = all(all("a" in p[:i] for i, col in enumerate(p) if col == "b") for p in all_paths)
    assert satisfiable(b) == want

    b = ModelBuilder()
    st = fixed_structure(b, nodes, tests, succ)
    exclusion_on_paths(b, st, ["a", "c"])
    assert satisfiable(b) == (not any({"a", "c"} <= set(p) for p in all_paths))

    costs = {"a": Fraction(1), "b": Fraction(3, 2), "c": Fraction(0)}
    tau = Fraction(int(rng.integers(0, 6)), 2)
    b = ModelBuilder()
    st = fixed_structure(b, nodes, tests, succ)
    cost_on_paths(b, st, costs, tau)
    assert satisfiable(b) == all(sum(costs[c] for c in p) <= tau for p in all_paths)


def test_a_negative_budget_is_infeasible():
    b = ModelBuilder()
    st = fixed_structure(b, [0], {0: "a"}, {0: []})
    cost_on_paths(b, st, {"a": Fraction(1)}, Fraction(-1))
    assert not satisfiable(b)


def test_a_root_testing_the_second_column_violates_the_order():
    b = ModelBuilder()
    st = fixed_structure(b, [0], {0: "b"}, {0: []})
    order_on_paths(b, st, "a", "b")
    assert not satisfiable(b)
