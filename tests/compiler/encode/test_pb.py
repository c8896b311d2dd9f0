"""Cardinality rows (``compiler/encode/pb``): a sequential counter while n * k is small,
a cardinality network above it; either way the clauses allow exactly the assignments with
at most k true literals. And the MaxSAT linear search stops before writing a cost row it
cannot write in the time left, instead of overrunning its deadline."""
from __future__ import annotations

import time
from itertools import product

import pytest
from pysat.solvers import Solver

from odt.backends import to_wcnf
from odt.backends.to_wcnf import WeightedCnf, linear_search
from odt.compiler.encode import pb


@pytest.mark.parametrize("network", [False, True])
@pytest.mark.parametrize("k", [1, 2, 4])
def test_at_most_k_allows_exactly_the_assignments_with_at_most_k_true(network, k, monkeypatch):
    if network:
        monkeypatch.setattr(pb, "_SEQUENTIAL_UP_TO", 0)
    n = 6
    top = [n]

    def new_var() -> int:
        top[0] += 1
        return top[0]

    clauses = pb.at_most([(1, i) for i in range(1, n + 1)], k, new_var)
    with Solver(name="g3", bootstrap_with=clauses) as s:
        for values in product([False, True], repeat=n):
            assumptions = [i if v else -i for i, v in zip(range(1, n + 1), values)]
            assert s.solve(assumptions=assumptions) == (sum(values) <= k)


def test_the_size_estimate_follows_the_encoding():
    assert pb.card_size(100, 5) == 1000  # a counter: 2nk
    assert pb.card_size(8124, 3915) < 2_000_000  # a network, not 33 M clauses


def test_the_linear_search_stops_before_a_cost_row_it_cannot_write_in_time(monkeypatch):
    """40 soft unit clauses, 20 hard pairs: at least 20 violated. With the writing rate
    set near zero, the search keeps its first model and does not claim optimality; at
    the normal rate it proves the optimum."""
    soft = tuple(((i,), 1) for i in range(1, 41))
    hard = tuple((-i, -(i + 20)) for i in range(1, 21))
    w = WeightedCnf(40, hard, soft, None)  # type: ignore[arg-type]  # the search reads no objective
    proved = linear_search(w, "g3", time.perf_counter() + 30.0, lambda cost: None)
    assert proved.optimal and proved.cost == 20
    monkeypatch.setattr(to_wcnf, "_CLAUSES_PER_SECOND", 1e-3)
    stopped = linear_search(w, "g3", time.perf_counter() + 30.0, lambda cost: None)
    assert stopped.values is not None and not stopped.optimal and stopped.iterations == 1


def test_a_weighted_cost_row_is_written_only_while_time_is_left():
    """A weighted cost row is a BDD built in Python, whose size the weights decide: with
    2,000 distinct weights and the bound at half their sum it has millions of nodes, so
    its writing stops at the deadline (a fifth of a second) and reports so; a small row
    is written whole and holds."""
    n = 2000
    soft = tuple(((i,), 1000 + 7 * i) for i in range(1, n + 1))
    w = WeightedCnf(n, (), soft, None)  # type: ignore[arg-type]
    top = [n]

    def new_var() -> int:
        top[0] += 1
        return top[0]

    with Solver(name="g4") as s:
        bound = sum(wt for _, wt in soft) // 2
        assert not to_wcnf._add_cost_row(s, w, bound, new_var, time.perf_counter() + 0.2)
    small = WeightedCnf(3, (), (((1,), 2), ((2,), 3), ((3,), 4)), None)  # type: ignore[arg-type]
    top[0] = 3
    with Solver(name="g4") as s:
        assert to_wcnf._add_cost_row(s, small, 4, new_var, time.perf_counter() + 30.0)
        # at most 4 of the weights 2, 3, 4 violated: never both 2 and 3, never 3 and 4, ...
        assert not s.solve(assumptions=[-1, -2])
        assert not s.solve(assumptions=[-2, -3])
        assert s.solve(assumptions=[-3, 1, 2])
