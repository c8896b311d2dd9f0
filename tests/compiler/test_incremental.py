"""``strategy incremental`` for DT_depth and DT_size (Avellaneda, AAAI 2020, Algorithm 3).

Specification: ``model tree(depth in a..b)  minimize depth then nodes  subject to
{ errors <= k }`` solved with ``strategy incremental`` returns a tree of the same depth
and the same number of decision nodes as the same program solved without the strategy
(the plain depth search: one complete MaxSAT solve per depth), with at most k errors, on
real datasets and on random tiny ones (where an enumeration of every tree of depth <= 2
is the oracle). Rows enter the SAT solver only when the current tree gets them wrong; the
node count is searched dichotomically on the solver of the minimum depth, each probe an
assumption on one output of the unary counter of eqs (7)-(10), so there is one solver
per depth tried and never a rebuild.
"""
from __future__ import annotations

import doctest
import itertools
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from pysat.solvers import Solver

import odt
from odt.compiler import ir
from odt.strategies import incremental
from odt.compiler.errors import InfeasibleProgram, UnsupportedConstruct
from odt.compiler.skeletons.tree_paths import encode_tree

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import Case, cases, enumerate_trees  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MOUSE = ROOT / "examples" / "data" / "mouse.csv"
FIXTURES = ROOT / "tests" / "fixtures" / "data"
INCREMENTAL = "solve maxsat strategy incremental\n"
PLAIN = "solve maxsat\n"  # the non-incremental depth search (RC2 at each depth)


def program(path: Path, bound: str, objective: str = "minimize depth then nodes", depths: str = "0..6") -> str:
    return f'data "{path}" {{ target class }}\nmodel tree(depth in {depths})\n{objective}\nsubject to {{ {bound} }}\n'


def limit(bound: str) -> int:
    return int(bound.split()[-1])


def rows_and_calls(log: str) -> tuple[int, int, int]:
    """(rows in the final solver, all rows, SAT calls) from the log of the strategy."""
    m = re.search(r"in all: (\d+) of (\d+) rows in the final solver, (\d+) SAT calls", log)
    assert m, log
    return int(m[1]), int(m[2]), int(m[3])


# ---------------------------------------------------------------------------- real data
@pytest.mark.parametrize("path, bound", [
    (MOUSE, "errors <= 5"),
    (FIXTURES / "corral.csv", "errors == 0"),
    (FIXTURES / "mux6.csv", "errors == 0"),
    (FIXTURES / "mux6.csv", "errors <= 2"),
    (FIXTURES / "zoo-1.csv", "errors <= 5"),
], ids=["mouse-5", "corral-0", "mux6-0", "mux6-2", "zoo1-5"])
def test_dt_size_incremental_equals_the_plain_depth_search(path, bound):
    # (mouse with errors == 0 is the next test: the plain search's (4, 7) is asserted in
    # test_depth_search.py, and takes seconds)
    text = program(path, bound)
    plain = odt.compile(text + PLAIN).solve()
    inc = odt.compile(text + INCREMENTAL).solve()
    assert plain.status == inc.status == "optimal" and plain.verified and inc.verified
    assert inc.objective_levels == plain.objective_levels  # (depth, nodes)
    assert (inc.classifier.depth, inc.classifier.n_nodes) == (plain.classifier.depth, plain.classifier.n_nodes)
    assert inc.train_errors <= limit(bound)


def test_mouse_dt_size_matches_avellaneda_table_1_with_fewer_rows():
    # Table 1: DT_size finds k = 4 and n = 15 nodes in all (7 decision nodes + 8 leaves)
    # consistent with all 70 examples, using only part of them (37 in the paper)
    res = odt.compile(program(MOUSE, "errors == 0", depths="1..6") + INCREMENTAL).solve()
    assert res.status == "optimal" and res.verified and res.train_errors == 0
    assert res.objective_levels == (4.0, 7.0) and res.classifier.n_nodes + res.classifier.n_leaves == 15
    used, total, calls = rows_and_calls(res.log)
    assert total == 70 and used < 70 and calls > 0
    assert re.search(r"nodes at depth 4: 7 after \d+ dichotomic probes", res.log)


def test_then_leaves_is_the_same_search():
    res = odt.compile(program(MOUSE, "errors <= 2", "minimize depth then leaves") + INCREMENTAL).solve()
    assert res.status == "optimal" and res.objective_levels == (3.0, 5.0)  # 4 decision nodes, 5 leaves


def test_dt_depth_alone_is_unchanged():
    res = odt.compile(program(MOUSE, "errors == 0", "minimize depth") + INCREMENTAL).solve()
    assert res.status == "optimal" and res.objective_levels == (4.0,) and "dichotomic" not in res.log


def test_infeasible_range_is_reported():
    with pytest.raises(InfeasibleProgram, match="proved infeasible, incrementally"):
        odt.compile(program(MOUSE, "errors == 0", depths="1..3") + INCREMENTAL).solve()


def test_a_time_limit_before_any_tree_gives_unknown():
    res = odt.compile(program(MOUSE, "errors == 0") + INCREMENTAL).solve(time_limit=1e-6)
    assert res.status == "unknown" and res.classifier is None and res.bound == 0.0  # depth 0 not yet refuted


def test_other_second_levels_are_refused():
    text = program(MOUSE, "errors == 0", "minimize depth then errors") + INCREMENTAL
    with pytest.raises(UnsupportedConstruct, match="strategy incremental"):
        odt.compile(text).solve()


# ---------------------------------------------------------------------------- one solver per depth
def test_size_probes_are_assumptions_on_the_solver_of_the_minimum_depth(monkeypatch):
    built, counters, calls = [], [], []
    real_counter = incremental.unary_counter

    class Recording(Solver):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

        def solve(self, assumptions=()):
            calls.append((self, list(assumptions)))
            return super().solve(assumptions=list(assumptions))

        def solve_limited(self, assumptions=(), expect_interrupt=False):  # every call is interruptible
            calls.append((self, list(assumptions)))
            return super().solve_limited(assumptions=list(assumptions), expect_interrupt=expect_interrupt)

    def counting(*args, **kwargs):
        clauses, outputs = real_counter(*args, **kwargs)
        counters.append(outputs)
        return clauses, outputs

    monkeypatch.setattr(incremental, "Solver", Recording)
    monkeypatch.setattr(incremental, "unary_counter", counting)
    res = odt.compile(program(MOUSE, "errors == 0", depths="1..6") + INCREMENTAL).solve()
    assert res.objective_levels == (4.0, 7.0)
    assert len(built) == 4  # depths 1, 2, 3, 4: one solver each, none rebuilt for the probes
    assert len(counters) == 1  # the counter of eqs (8)-(9) is added once, to the depth-4 solver
    last = [a for s, a in calls if s is built[-1]]
    probes = {tuple(a) for a in last if a}  # each probe: not H[2^D, m + 1] (eq. 10), nothing else
    assert probes and all(len(a) == 1 and -a[0] in counters[0].values() for a in probes)


# ---------------------------------------------------------------------------- the building blocks
def test_unary_counter_allows_at_most_m_true_literals():
    """Eqs (8)-(10): under the assumption not H[n, m+1], at most m of the inputs are true."""
    assert doctest.testmod(incremental, optionflags=doctest.ELLIPSIS).failed == 0
    for n in range(1, 6):
        fresh = itertools.count(n + 1)
        clauses, out = incremental.unary_counter(list(range(1, n + 1)), n, lambda: next(fresh))
        assert sorted(out) == list(range(1, n + 1))
        with Solver(bootstrap_with=clauses) as s:
            for bits in itertools.product([False, True], repeat=n):
                fixed = [i + 1 if b else -(i + 1) for i, b in enumerate(bits)]
                for m in range(n):
                    assert s.solve(assumptions=fixed + [-out[m + 1]]) == (sum(bits) <= m)


@pytest.mark.parametrize("depth, count_size", [(0, True), (1, False), (2, True), (3, True)])
def test_bucket_clauses_are_the_path_encodings_own(depth, count_size):
    """The clauses a bucket brings to the solver (Algorithms 1-2) are exactly those the
    path encoding writes for it, up to the names of the bucket's own variables."""
    p = odt.compile(program(MOUSE, "errors == 0"))
    rows = incremental.Rows.of(p.checked)
    b = ir.ModelBuilder()
    enc = encode_tree(b, depth, list(rows.features), rows.buckets[:5], 2, count_size=count_size)
    model = b.build()
    for u, bk in enumerate(rows.buckets[:5]):
        X = [enc.X[u, j] for j in range(depth)]
        ok = {c: enc.ok[u, c] for c, _ in bk.class_weight}
        own = set(X) | set(ok.values())
        mine = [sorted(c) for c in incremental.bucket_clauses(enc, bk, X, ok)]
        expected = sorted(sorted(c.lits) for c in model.clauses if any(abs(l) in own for l in c.lits))
        assert sorted(c for c in mine if any(abs(l) in own for l in c)) == expected
        tree_only = {tuple(sorted(c.lits)) for c in model.clauses}  # at depth 0: "the leaf is used"
        assert all(tuple(c) in tree_only for c in mine if not any(abs(l) in own for l in c))


# ---------------------------------------------------------------------------- tiny random data
def _oracle(case: Case, k: int, max_depth: int) -> tuple[int, int] | None:
    """(minimum depth, minimum decision nodes at that depth) over every tree, or None."""
    for d in range(max_depth + 1):
        table = enumerate_trees(case.X, case.classes, d)
        ok = table.errors(case.y, case.w) <= k
        if ok.any():
            return d, int(table.leaves[ok].min()) - 1
    return None


def _interesting_bound(case: Case, pick: int) -> int:
    """An error bound k whose answer is depth 2, 1 or 0, or no tree at all (k one below
    the fewest errors at depth 2), in that order of ``pick`` where the data allow it."""
    b0, b1, b2 = (int(enumerate_trees(case.X, case.classes, d).errors(case.y, case.w).min()) for d in range(3))
    assume(pick == 3 or b2 < b0)  # mostly data on which a split helps
    choices = [b2] * (b2 < b1) + [b1] * (b1 < b0) + [b0] + [b2 - 1] * (b2 > 0)
    return choices[min(pick, len(choices) - 1)]


def check_tiny(case: Case, k: int) -> tuple[int, int] | None:
    """The incremental strategy, the plain depth search and the enumeration agree on
    ``tree(depth in 0..2)  minimize depth then nodes  subject to { errors <= k }``."""
    bound = "errors == 0" if k == 0 else f"errors <= {k}"
    text = case.header() + f"model tree(depth in 0..2)\nminimize depth then nodes\nsubject to {{ {bound} }}\n"
    best = _oracle(case, k, 2)
    ctx = f"\nprogram:\n{text}data: {case.data()!r}\noracle: {best}"
    if best is None:
        for directive in (PLAIN, INCREMENTAL):
            with pytest.raises(InfeasibleProgram):
                odt.compile(text + directive, data=case.data()).solve()
        return None
    inc = odt.compile(text + INCREMENTAL, data=case.data()).solve()
    plain = odt.compile(text + PLAIN, data=case.data()).solve()
    assert inc.status == plain.status == "optimal" and inc.verified, ctx
    assert inc.objective_levels == plain.objective_levels == tuple(float(v) for v in best), ctx
    w = case.w if case.w is not None else np.ones(len(case.y), dtype=np.int64)
    pred = np.asarray(inc.classifier.predict(case.data()), dtype=np.int64)
    assert int(((pred != case.y) * w).sum()) <= k, ctx
    return best


def _case(rows: list[tuple], y: list[int], w: list[int] | None = None) -> Case:
    return Case(np.array(rows, dtype=np.int64), np.array(y, dtype=np.int64),
                None if w is None else np.array(w, dtype=np.int64))


XOR = [(0, 0), (0, 1), (1, 0), (1, 1)]
CUBE = [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)]
A_AND_B_OR_C = [0, 0, 0, 0, 0, 1, 1, 1]


@pytest.mark.parametrize("case, k, answer", [
    (_case(XOR * 2, [0, 1, 1, 0] * 2), 0, (2, 3)),  # xor needs both levels and three tests
    (_case(XOR * 2 + [(1, 1)], [0, 1, 1, 0] * 2 + [1], [1, 1, 1, 1, 1, 1, 1, 3, 1]), 1, (2, 3)),  # a heavy row
    (_case(XOR, [0, 1, 2, 2]), 0, (2, 2)),  # three classes: a chain of two tests
    (_case(CUBE, A_AND_B_OR_C), 1, (1, 1)),  # testing a alone misses one row
    (_case(CUBE, A_AND_B_OR_C), 0, None),  # exact: a, b, c on one path is depth 3
], ids=["xor", "xor-weighted-errors-1", "three-classes", "and-or-errors-1", "and-or-needs-depth-3"])
def test_handmade_tiny_cases(case, k, answer):
    # (minimum depth, minimum decision nodes), or None when no tree of depth <= 2 has <= k errors
    assert check_tiny(case, k) == answer


@settings(derandomize=True, deadline=None, max_examples=40, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(case=cases(), pick=st.integers(0, 3))
def test_tiny_data_incremental_equals_plain_and_the_enumeration(case, pick):
    best = check_tiny(case, _interesting_bound(case, pick))
    event("infeasible at every depth" if best is None else f"minimum depth {best[0]}")


@pytest.mark.parametrize("directive, backend", [("solve cp strategy incremental", None),
                                                ("solve maxsat strategy incremental", "milp")])
def test_incremental_on_a_backend_without_an_incremental_sat_solver_is_refused(directive, backend):
    """It used to run maxsat silently under the name of cp."""
    text = program(MOUSE, "errors == 0", "minimize depth") + directive
    with pytest.raises(UnsupportedConstruct, match="incremental SAT solver"):
        odt.compile(text).solve(backend=backend)
