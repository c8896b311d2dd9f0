"""The dp engine against the solver backends on raw continuous columns: generated small
programs mixing node costs and caps, leaf and node sizes, order, exclusion, path cost and
threshold ranges (C10), on columns whose every midpoint is a cut (S7: dp cuts raw values,
the solvers binarise at every midpoint). dp's optimum equals maxsat's where maxsat proves
it (both re-verified); the sibling ``test_streed_properties`` checks against brute force."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import odt


@st.composite
def programs(draw) -> tuple[dict, str]:
    n = draw(st.integers(4, 12))
    values = st.lists(st.integers(0, 5), min_size=n, max_size=n)
    data = {"x": draw(values), "z": draw(values), "b": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))}
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    if len(set(y)) < 2:
        y[0] = 1 - y[0]
    data["class"] = y
    depth = draw(st.integers(1, 2))
    skeleton = f"depth <= {depth}" + (f", nodes <= {draw(st.integers(1, 2))}" if draw(st.booleans()) else "")
    objective = draw(st.sampled_from(["minimize errors", "minimize errors + 1/2 * nodes", "minimize errors then nodes",
                                      "minimize errors + 2 * leaves"]))
    cons = []
    if draw(st.booleans()):
        cons.append(f"every leaf: samples >= {draw(st.integers(1, 3))}")
    if draw(st.booleans()):
        cons.append(f"every node: samples >= {draw(st.integers(2, 6))}")
    if draw(st.booleans()):
        a, b = draw(st.permutations(["x", "z", "b"]))[:2]
        cons.append(f"every path: {a} before {b}")
    if draw(st.booleans()):
        cons.append("every path: not (x and z)")
    if draw(st.booleans()):
        cons.append(f"every path: cost <= {draw(st.integers(1, 4))} with cost {{ x: 2, z: 1, b: 1 }}")
    if draw(st.booleans()):
        lo = draw(st.integers(0, 4))
        cons.append(f"threshold {draw(st.sampled_from(['x', 'z']))} in [{lo}, {lo + draw(st.integers(0, 2))}]")
    text = "data { target class\n numeric x, z by thresholds(all) }\n" \
        f"model tree({skeleton})\n{objective}\n"
    if cons:
        text += "subject to {\n" + "\n".join(cons) + "\n}\n"
    return data, text


@settings(derandomize=True, deadline=None, max_examples=60, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_dp_equals_maxsat_on_raw_thresholds_and_ranges(example):
    data, text = example
    prog = odt.compile(text, data=data)
    assert prog.backend_name() == "dp"
    try:
        ref = prog.solve(backend="maxsat", time_limit=20)
    except odt.OdtError as e:
        assert "infeasible" in str(e)
        try:
            prog.solve(backend="dp")
        except odt.OdtError as f:
            assert "infeasible" in str(f)
            return
        raise AssertionError("dp found a tree where maxsat proves none exists")
    dp = prog.solve(backend="dp")
    assert dp.status == "optimal" and dp.verified and all(c.holds for c in dp.constraints)
    if ref.status == "optimal":
        assert ref.verified
        assert np.allclose(dp.objective_levels, ref.objective_levels), (dp.objective_levels, ref.objective_levels)
