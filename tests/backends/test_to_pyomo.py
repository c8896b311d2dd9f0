"""The ``milp`` backend's Pyomo model (backends/to_pyomo.py): what it leaves on the
process's outputs when a stop arrives inside Pyomo's own Python code."""
from __future__ import annotations

import logging

import pytest

from odt.backends.to_pyomo import MilpBackend
from odt.compiler import ir, limits

pyo = pytest.importorskip("pyomo.environ")


class _Interrupting:
    """A domain whose conversion is where the hard deadline lands (``limits`` raises the
    stop at the next bytecode, here inside Pyomo's ``Var.domain`` setter)."""

    def __iter__(self):
        raise limits.Stopped(limits.TIME_LIMIT)

    def __call__(self, *args):
        raise limits.Stopped(limits.TIME_LIMIT)


def _model() -> ir.Model:
    b = ir.ModelBuilder()
    b.clause([b.new_bool(("x",))])
    return b.build()


def test_a_stop_raised_inside_pyomo_is_not_logged_as_a_pyomo_error(capsys, caplog):
    """CI: the hard deadline of ``odtc solve --backend milp --time-limit 3 --json`` landed
    in the ``x.domain = Reals`` of the build; Pyomo printed "ERROR (E2001): Reals is not
    a valid domain" on stdout before the JSON object, and re-raised the stop. The stop
    still propagates; nothing is logged or printed for it."""
    m, _ = MilpBackend().build(_model())
    with caplog.at_level(logging.DEBUG, logger="pyomo"), pytest.raises(limits.Stopped):
        m.x[1].domain = _Interrupting()
    out = capsys.readouterr()
    assert "E2001" not in out.out + out.err
    assert not [r for r in caplog.records if r.name.startswith("pyomo")]


def test_pyomo_errors_that_are_not_a_stop_are_still_logged(caplog):
    m, _ = MilpBackend().build(_model())
    with caplog.at_level(logging.DEBUG, logger="pyomo"), pytest.raises(Exception):
        m.x[1].domain = object()  # a real modelling error: Pyomo's message stays
    assert any("E2001" in r.getMessage() or "not a valid domain" in r.getMessage() for r in caplog.records)


def test_an_error_pyomo_raises_while_a_stop_is_due_is_that_stop(caplog):
    """``ComponentData.index`` swallows any exception (a bare ``except``) and raises a
    ``DeveloperError`` instead: a SIGINT landing there ended ``odtc solve --backend milp``
    as an internal error (exit 2) after an E2001 line. With a stop due (here: past the
    deadline, the hard stop shielded off), Pyomo's own error out of the build is the stop, and
    what Pyomo logs while handling it is dropped; with none due it stays Pyomo's error."""
    import time

    from odt.backends.to_pyomo import _stops_kept

    m, _ = MilpBackend().build(_model())
    with caplog.at_level(logging.DEBUG, logger="pyomo"):
        with limits.time_limit(0.05), limits.shielded():  # the hard stop never raises into the test
            time.sleep(0.06)  # past the deadline: a stop is due
            with pytest.raises(limits.Stopped) as stop, _stops_kept():
                m.x[1].domain = object()
    assert stop.value.reason == limits.TIME_LIMIT
    assert not [r for r in caplog.records if r.name.startswith("pyomo")]
    with pytest.raises(Exception) as error, _stops_kept():
        m.x[1].domain = object()
    assert not isinstance(error.value, limits.Stopped)
