"""Brute-force oracle for decision diagrams: the optimum odt claims for
``model diagram(widths = ...)`` equals the best of EVERY diagram of Florio's family for
those widths (next-layer arcs and long arcs to classes, pass-through slots above the last
layer, ``nodes`` = the slots that send training rows both ways).

On random tiny binary datasets (<= 12 rows, <= 3 features, 2 or 3 classes, duplicate rows
with conflicting labels, sometimes integer weights including 0), every diagram of widths
[1], [1, 2] and [1, 1, 1] — and [1, 2, 2] on 2 features and 2 classes — is enumerated
(tests/diagram_bruteforce.py) and compared with ``Program.solve`` for ``minimize errors``
and ``minimize errors + 0.5 * nodes``, on the boolean layer encoding
(compiler/skeletons/diagram_layers.py) with the maxsat and cp backends and on Florio's
MILP (compiler/skeletons/diagram_flow.py) with the milp backend. Every solve must be
optimal and verified, and the decoded diagram's own recomputed cost must equal the
optimum. The brute force itself is checked against ``Diagram`` routing and a naive walk.
"""
from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import odt
from odt.compiler.errors import OdtDataError
from odt.compiler.classifiers.diagram import compact_diagram

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from diagram_bruteforce import (brute_force_diagram, count_diagrams, enumerate_diagrams,  # noqa: E402
                                to_diagram, walk_description)
from helpers import Case, cases  # noqa: E402

TOL = 1e-6
OBJECTIVES = (("errors", "0"), ("errors + 0.5 * nodes", "0.5"))
WIDTHS = ((1,), (1, 2), (1, 1, 1))
WIDE = (1, 2, 2)  # enumerated on 2 features and 2 classes only


def _settings(n: int):
    return settings(derandomize=True, deadline=None, max_examples=n, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def small_cases():
    """helpers.cases with at most 3 features (the enumeration grows with features^slots)."""
    return cases().map(lambda c: Case(c.X[:, :3], c.y, c.w))


def binary_cases():
    """helpers.cases with at most 2 features and 2 classes (for widths [1, 2, 2])."""
    return cases().map(lambda c: Case(c.X[:, :2], c.y, c.w)).filter(lambda c: len(c.classes) == 2)


def _check(case: Case, widths: tuple[int, ...], backend: str, objectives=OBJECTIVES) -> None:
    w = case.w if case.w is not None else np.ones(len(case.y), dtype=np.int64)
    table = enumerate_diagrams(case.X, case.classes, widths, case.w)
    for text, alpha in objectives:
        opt = brute_force_diagram(case.X, case.y, widths, w=case.w, alpha=alpha, table=table)
        prog = odt.compile(case.header() + f"model diagram(widths = {list(widths)})\nminimize {text}\n",
                           data=case.data())
        res = prog.solve(backend=backend)
        where = f"{backend} {list(widths)} minimize {text}: {case!r}"
        assert res.status == "optimal", where
        assert res.verified, where + f"\n{res.report}"
        assert abs(res.objective - float(opt.cost)) <= TOL, where + f"\nbrute force {opt}\n{res.classifier.to_text()}"
        d = res.classifier
        pred = np.asarray(d.predict(case.data()), dtype=np.int64)
        errors = int(((pred != case.y) * w).sum())
        own = errors + Fraction(alpha) * d.n_nodes
        assert own == opt.cost, where + f"\ndecoded cost {own}\n{d.to_text()}"
        live = d.reachable()
        assert all(sum(d.nodes[i].layer == l for i in live) <= wl for l, wl in enumerate(widths)), where


def _skip_arcs(d) -> bool:
    return any(r >= 0 and d.nodes[r].layer > n.layer + 1 for i in d.reachable() for n in [d.nodes[i]]
               for r in (n.if_true, n.if_false))


# ---------------------------------------------------------------------------- the oracle itself
def test_enumeration_counts():
    X = np.array([[0, 1, 1], [1, 0, 1]])
    k, f = 3, 3
    tests = lambda m: f * m * (m - 1)  # noqa: E731
    expected = {(1,): tests(k) + k,  # a test with distinct sides, or a one-class root
                (1, 2): tests(k) ** 2 * (tests(2 + k) + 2 + k),
                (1, 1, 1): tests(k) * (tests(1 + k) + 1 + k) ** 2}
    for widths, size in expected.items():
        assert len(enumerate_diagrams(X, [0, 1, 2], widths)) == size == count_diagrams(widths, f, k)
    assert count_diagrams(WIDE, 2, 2) == 4 * 4 * 28 ** 3


def _check_oracle(case: Case, widths: tuple[int, ...]) -> None:
    w = case.w if case.w is not None else np.ones(len(case.y), dtype=np.int64)
    live = w > 0
    table = enumerate_diagrams(case.X, case.classes, widths, case.w)
    for alpha in ("0", "1/3", "0.5"):
        opt = brute_force_diagram(case.X, case.y, widths, w=case.w, alpha=alpha, table=table)
        naive, nodes = walk_description(opt.diagram, case.X, w)
        d = to_diagram(opt.diagram, case.classes, widths)
        routed = np.array([case.classes[i] for i in d.predict_binary(case.X.astype(bool))])
        assert (naive == routed).all()
        assert int(((naive != case.y) * w).sum()) == opt.errors
        assert nodes == opt.nodes
        assert opt.errors + Fraction(alpha) * opt.nodes == opt.cost
        if Fraction(alpha) > 0 and live.any():  # at an optimum every counted node survives compaction
            Xb = case.X.astype(bool)[live][:, :len(d.features)]
            assert compact_diagram(d, Xb).n_nodes == opt.nodes


@_settings(40)
@given(small_cases())
def test_brute_force_agrees_with_walk_and_routing(case: Case):
    """The optimum's description, walked naively and routed as a ``Diagram``, has the cost
    the vectorised enumeration claims."""
    for widths in WIDTHS:
        _check_oracle(case, widths)


@pytest.mark.slow
@_settings(10)
@given(binary_cases())
def test_brute_force_agrees_wide(case: Case):
    _check_oracle(case, WIDE)


# ---------------------------------------------------------------------------- the backends
@_settings(25)
@given(case=small_cases())
def test_layers_equal_brute_force_maxsat(case: Case):
    for widths in WIDTHS:
        _check(case, widths, "maxsat")


@_settings(12)
@given(case=small_cases())
def test_layers_equal_brute_force_cp(case: Case):
    for widths in WIDTHS:
        _check(case, widths, "cp")


@_settings(6)
@given(case=small_cases())
def test_flow_equals_brute_force_milp(case: Case):
    for widths in WIDTHS:
        _check(case, widths, "milp")


@pytest.mark.parametrize("backend,examples", [pytest.param("maxsat", 8, marks=pytest.mark.slow), ("cp", 4), ("milp", 3)])
def test_wide_equals_brute_force(backend: str, examples: int):
    @_settings(examples)
    @given(case=binary_cases())
    def run(case: Case):
        _check(case, WIDE, backend)

    run()


def test_layers_no_feature_splits():
    """One feature vector for every row: the diagram is the majority class, no node."""
    case = Case(np.array([[1, 0], [1, 0], [1, 0]]), np.array([0, 1, 1]), None)
    for backend in ("maxsat", "cp", "milp"):
        _check(case, (1, 2), backend)


ZERO_WEIGHTS = Case(np.array([[1, 0], [0, 1], [1, 1]]), np.array([0, 1, 2]), np.array([0, 0, 0]))


@pytest.mark.parametrize("backend", ["maxsat", "cp"])
def test_all_weights_zero_is_a_data_error_naming_the_weight_column(backend):
    """No row counts: nothing to learn, refused where the data enters (issue 18)."""
    case = ZERO_WEIGHTS
    with pytest.raises(OdtDataError, match="weight"):
        odt.compile(case.header() + "model diagram(widths = [1, 2])\nminimize errors\n",
                    data=case.data()).solve(backend=backend)


# ---------------------------------------------------------------------------- the family
SKIP_X = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)])
SKIP_Y = np.array([2 if x[0] and not x[1] else x[2] for x in SKIP_X])  # f0 and not f1 -> 2, else f2


def test_backends_agree_on_the_family():
    """Widths [1, 1, 1], target "f0 and not f1 -> 2, else f2": f0 ? (f1 ? H : 2) : H with
    H = (f2 ? 1 : 0) needs an arc from the root to layer 2, which Florio's family does not
    have at these widths (the root's two sides cannot both enter the one slot of layer 1),
    so the optimum of errors + 0.1 * nodes is 1.3 (3 nodes, 1 error), on every backend."""
    case = Case(SKIP_X, SKIP_Y, None)
    assert brute_force_diagram(SKIP_X, SKIP_Y, (1, 1, 1), alpha="0.1").cost == Fraction(13, 10)
    for backend in ("maxsat", "cp", "milp"):
        _check(case, (1, 1, 1), backend, objectives=(("errors + 0.1 * nodes", "0.1"),))


@pytest.mark.slow
def test_pass_through_decodes_to_a_skip_arc():
    """Widths [1, 2, 1], the same target: the root sends one side to a test in layer 1 and
    the other through a pass-through slot of layer 1 to H in layer 2, 3 nodes and no
    error. Decoding drops the pass-through, so the diagram has an arc from layer 0 to 2."""
    case = Case(SKIP_X, SKIP_Y, None)
    assert brute_force_diagram(SKIP_X, SKIP_Y, (1, 2, 1), alpha="0.1").cost == Fraction(3, 10)
    prog = odt.compile("data { target class }\nmodel diagram(widths = [1, 2, 1])\nminimize errors + 0.1 * nodes\n",
                       data=case.data())
    for backend in ("maxsat", "cp", "milp"):
        res = prog.solve(backend=backend)
        d = res.classifier
        assert res.status == "optimal" and res.verified and abs(res.objective - 0.3) <= TOL, backend
        assert (np.asarray(d.predict(case.data()), dtype=np.int64) == SKIP_Y).all(), backend
        assert d.n_nodes == 3 and _skip_arcs(d), f"{backend}\n{d.to_text()}"


def test_a_milp_solve_does_not_change_what_cp_flow_lowers():
    """The lowering cache is keyed by encoding and backend: a diagram's flows are reals
    for milp and booleans for cp, so a milp solve first must not make cp refuse."""
    data = Path(__file__).resolve().parents[2] / "examples" / "data" / "mouse.csv"
    prog = odt.compile(f'data "{data}" {{ target class }}\nmodel diagram(widths = [1, 2])\nminimize errors\n'
                       'solve cp(encoding = "flow")\n')
    first = prog.solve(backend="milp")
    second = prog.solve()
    assert second.backend == "cp" and second.verified and second.objective == first.objective
