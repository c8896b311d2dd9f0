"""The ``milp`` backend: IR -> Pyomo model, solved with HiGHS (highspy) in-process.

Booleans become binary variables, integer and real IR variables Pyomo variables with their
bounds. A clause (l1 or ... or lk) is the row sum(x for positive l) + sum(1 - x for
negative l) >= 1; linear rows are kept as they are (exact rational coefficients scaled to
integers); an indicator ``lit => a.x <= b`` is written with big-M, where M is the largest
value a.x - b can take over the variables' bounds (the tightest M the bounds allow).

The objective is made integer exactly (``compiler.encode.objective``) so that HiGHS can be
asked to prove it exactly: ``mip_rel_gap = 0`` and ``mip_abs_gap`` just below one unit (the
default relative gap of 1e-4 is not "optimal" for a count). On a time-out the incumbent is
loaded by hand (the interface is told not to raise on non-optimal termination).

``odtc compile --to pyomo -o f`` writes ``f.lp`` and ``f.mps`` for any MILP solver.
"""
from __future__ import annotations

import logging
import math
import sys
import tempfile
import threading
from contextlib import contextmanager
from fractions import Fraction
from math import gcd
from pathlib import Path
from typing import Iterator

from odt.compiler import ir, limits
from odt.compiler.encode import objective, pb

from .base import Artifact, Backend, BackendResult, Capability, Progress, SolveOptions, Status, Stopwatch


class _StopsUnlogged(logging.Filter):
    """Pyomo logs an error for any exception raised inside some of its setters and then
    re-raises it (a variable's domain: "Reals is not a valid domain", E2001). A stop that
    the time limit or a signal raised into the build (``compiler.limits``) is no such
    error: the records Pyomo logs while one is being handled, or while it handles its own
    error with a stop due (see :func:`_stops_kept`), are dropped; the stop goes on (in CI
    it was an error line on stdout, before ``odtc solve --json``'s object)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = sys.exc_info()[1]
        return not (isinstance(exc, limits.Stopped) or (exc is not None and limits.expired()))


@contextmanager
def _stops_kept() -> Iterator[None]:
    """Pyomo's code catches some exceptions and raises its own instead: ``ComponentData.index``
    has a bare ``except`` and then reports "'_data' and '_index' out of sync" (a
    ``DeveloperError``), so a stop raised into it (a signal or the hard deadline lands at
    any bytecode) came out as an internal error, exit 2 (``test_limits``'s SIGINT to milp,
    about one run in fifty under load). An error out of Pyomo while a stop is due is that
    stop. Pyomo's records about the stop are dropped meanwhile (:func:`_quiet_stops`)."""
    _quiet_stops()
    try:
        yield
    except limits.Stopped:
        raise
    except Exception as exc:
        if limits.expired():  # a signal asked, or past the deadline (the hard one comes later)
            raise limits.Stopped(limits.stop_reason() or limits.TIME_LIMIT) from exc
        raise


_STOPS_UNLOGGED = _StopsUnlogged()


def _quiet_stops() -> None:
    """Drop Pyomo's log records about a stop: on ``pyomo.core`` (its modelling layer,
    whichever handler the user configured) and on Pyomo's own handlers (its other loggers)."""
    for f in (logging.getLogger("pyomo.core"), *logging.getLogger("pyomo").handlers):
        if _STOPS_UNLOGGED not in f.filters:
            f.addFilter(_STOPS_UNLOGGED)


class MilpBackend(Backend):
    NAME = "milp"
    CAPABILITIES = frozenset({Capability.BOOL_VARS, Capability.INT_VARS, Capability.REAL_VARS,
                              Capability.LINEAR_ROWS, Capability.INDICATORS, Capability.LEXICOGRAPHIC,
                              Capability.ANYTIME})
    FILE_FORMAT = "lp"
    ENCODING = "flow"

    @classmethod
    def available(cls) -> bool:
        try:
            import highspy  # noqa: F401
            import pyomo.environ  # noqa: F401
            return True
        except ImportError:
            return False

    def build(self, model: ir.Model, cutoff: Fraction | None = None, exported: bool = False):
        """The Pyomo model. Solved, its objective is the exact integer combination of the
        levels (``encode.objective``); ``exported`` with one level, it is that level in
        the program's own units, constant included, so any MILP solver reports the value
        odt reports."""
        with _stops_kept():
            return self._build(model, cutoff, exported)

    def _build(self, model: ir.Model, cutoff: Fraction | None, exported: bool):
        import pyomo.environ as pyo

        m = pyo.ConcreteModel(name="odt")
        idx = [v.index for v in model.variables]
        m.x = pyo.Var(idx)
        for v in model.variables:
            x = m.x[v.index]
            if v.kind is ir.VarKind.BOOL:
                x.domain = pyo.Binary
            else:
                x.domain = pyo.Integers if v.kind is ir.VarKind.INT else pyo.Reals
                x.setlb(v.lb)
                x.setub(v.ub)

        def lit(l: int):
            return m.x[l] if l > 0 else 1 - m.x[-l]

        def term(c: int, t: int):
            v = model.variables[abs(t) - 1]
            return c * (lit(t) if v.kind is ir.VarKind.BOOL else m.x[t])

        m.clauses = pyo.ConstraintList()
        for i, c in enumerate(model.clauses):
            if not i & 0xFFF:  # long Python work: it keeps to the time limit
                limits.check()
            if c.lits:  # an empty clause is reported as infeasible before building
                m.clauses.add(sum(lit(l) for l in c.lits) >= 1)
        m.rows = pyo.ConstraintList()
        for i, row in enumerate(model.linears):
            if not i & 0xFF:
                limits.check()
            terms, rhs = _numeric_row(row)
            lhs = sum(term(c, t) for c, t in terms)
            m.rows.add({"<=": lhs <= rhs, ">=": lhs >= rhs, "==": lhs == rhs}[row.op])
        m.indicators = pyo.ConstraintList()
        for ind in model.indicators:
            for sense, (terms, rhs) in _as_le(ind.row):
                big_m = _big_m(model, terms, rhs)
                lhs = sum(term(c, t) for c, t in terms)
                m.indicators.add(lhs - rhs <= big_m * (1 - lit(ind.lit)))
        combined = objective.combine(model.objectives, model)
        expr = sum(w * lit(l) for w, l in combined.weights) + sum(c * m.x[v] for c, v in combined.linear)
        if exported and len(model.objectives) == 1:
            level = model.objectives[0]
            m.obj = pyo.Objective(expr=sum(float(c) * term(1, t) for c, t in level.terms) + float(level.constant),
                                  sense=pyo.minimize)
        else:
            m.obj = pyo.Objective(expr=expr, sense=pyo.minimize)
        below = objective.strictly_below(combined, cutoff)
        if below is not None and (combined.weights or combined.linear):  # B4: only solutions better than the
            # warm start (half a unit of slack); a constant objective (e.g. an all-zero cost matrix) has none
            m.cutoff = pyo.Constraint(expr=expr <= below + 0.5)
        return m, combined

    def emit(self, model: ir.Model) -> Artifact:
        m, combined = self.build(model, exported=True)
        if len(model.objectives) == 1:
            label = model.objectives[0].label
            notes = [f"odt: the objective is {label or 'the program objective'} in the program's units "
                     "(a maximised objective appears negated)"]
        else:
            notes = objective.describe(combined, [o.label for o in model.objectives])
        with tempfile.TemporaryDirectory() as d:
            lp, mps = Path(d) / "model.lp", Path(d) / "model.mps"
            m.write(str(lp), io_options={"symbolic_solver_labels": False})
            m.write(str(mps))
            lp_text = "".join(f"\\ {n}\n" for n in notes) + lp.read_text()
            mps_text = "".join(f"* {n}\n" for n in notes) + mps.read_text()
            return Artifact("lp", lp_text, {"mps": mps_text})

    def solve(self, model: ir.Model, options: SolveOptions) -> BackendResult:
        from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition
        from pyomo.contrib.solver.solvers.highs import Highs

        clock = Stopwatch()
        if any(not c.lits for c in model.clauses):
            return BackendResult(Status.INFEASIBLE, None, None, None, clock.elapsed(), "an empty clause")
        m, combined = self.build(model, options.extra.get("cutoff"))
        solver_options = {"mip_rel_gap": 0.0, "mip_abs_gap": 0.999, "threads": max(1, options.threads),
                          "random_seed": options.seed, "output_flag": bool(options.verbose)}
        logging.getLogger("pyomo.contrib.solver").setLevel(logging.ERROR)  # we report status ourselves
        opt = Highs()
        with _stops_kept():
            opt.set_instance(m)  # the persistent interface keeps this highspy object for solve()
        stop = threading.Event()  # set by a signal or the process's hard deadline (compiler.limits)
        self._watch(opt._solver_model, combined, options, clock, stop)
        remaining = limits.budget(None if options.time_limit is None else options.time_limit - clock.elapsed())
        if remaining is not None:
            remaining = max(0.01, remaining)
        with limits.native(stop.set):
            res = opt.solve(m, time_limit=remaining, load_solutions=False,
                            raise_exception_on_nonoptimal_result=False, solver_options=solver_options)
        tc = res.termination_condition
        if tc in (TerminationCondition.provenInfeasible, TerminationCondition.infeasibleOrUnbounded):
            return BackendResult(Status.INFEASIBLE, None, None, None, clock.elapsed(), f"HiGHS: {tc.name}")
        bound = None
        if res.objective_bound is not None and (combined.weights or combined.linear):
            bound = _level(combined, float(res.objective_bound))  # NaN before the first LP: no bound
        if res.solution_status not in (SolutionStatus.optimal, SolutionStatus.feasible):
            return BackendResult(Status.UNKNOWN, None, None, bound, clock.elapsed(), f"HiGHS: {tc.name}")
        res.solution_loader.load_vars()
        values: list = [False]
        for v in model.variables:
            x = m.x[v.index].value
            values.append(bool(round(x or 0)) if v.kind is ir.VarKind.BOOL else (x or 0.0))
        levels = objective.level_values(model.objectives, values, model)
        optimal = tc == TerminationCondition.convergenceCriteriaSatisfied
        if optimal:
            bound = levels[0] if levels else None
        if options.on_progress is not None and levels:
            options.on_progress(Progress(clock.elapsed(), levels[0], bound))
        return BackendResult(Status.OPTIMAL if optimal else Status.FEASIBLE, tuple(values), tuple(levels), bound,
                             clock.elapsed(), f"HiGHS via Pyomo: {tc.name}")


    @staticmethod
    def _watch(h, combined, options: SolveOptions, clock: Stopwatch, stop: threading.Event) -> None:
        """HiGHS callbacks: a progress line per improving solution; an outer watchdog that
        interrupts the search (MIP, simplex or IPM) 2% (at most 1 s) past the time limit,
        since HiGHS can overshoot it, or once ``stop`` is set (a signal, the process's
        deadline), keeping the incumbent."""
        if options.on_progress is not None and (combined.weights or combined.linear):
            report = options.on_progress

            def improved(e) -> None:
                out = e.data_out
                inc = _level(combined, out.objective_function_value)
                bnd = _level(combined, out.mip_dual_bound)
                report(Progress(clock.elapsed(), inc, bnd))

            h.cbMipImprovingSolution += improved
        floor = options.extra.get("floor")
        target = None if floor is None or not (combined.weights or combined.linear) else float(floor)
        deadline = None if options.time_limit is None else options.time_limit + min(1.0, 0.02 * options.time_limit)
        reached = [False]
        if target is not None:  # a proven lower bound (diagrams: the optimal depth-L tree) met by an
            # incumbent ends the search; an objective row would instead stall the LP at the bound
            def meets(e) -> None:
                value = _level(combined, e.data_out.objective_function_value)
                reached[0] = reached[0] or value is not None and value <= target + 1e-9

            h.cbMipImprovingSolution += meets
        def watchdog(e) -> None:
            if reached[0] or stop.is_set() or deadline is not None and clock.elapsed() > deadline:
                e.interrupt()

        h.cbMipInterrupt += watchdog

        def lp_watchdog(e) -> None:  # a long root LP: only a signal or the deadline stops it
            if stop.is_set() or deadline is not None and clock.elapsed() > deadline:
                e.interrupt()

        h.cbSimplexInterrupt += lp_watchdog
        h.cbIpmInterrupt += lp_watchdog


def _level(combined, value: float) -> Fraction | None:
    return combined.first_level_bound(value - 1e-6) if math.isfinite(value) else None


def _numeric_row(row: ir.Linear) -> tuple[list, float | int]:
    """Integer coefficients when a small common denominator exists (counts, weights,
    alpha); otherwise floats (hyperplane rows over real-valued data), which a MILP solver
    handles with its tolerances, where 10^16-sized integers would ruin its numerics."""
    scale = 1
    for c, _ in row.terms:
        scale = scale * c.denominator // gcd(scale, c.denominator)
        if scale > 10**6:
            return [(float(c), t) for c, t in row.terms], float(row.rhs)
    return pb.integer_row(row.terms, row.rhs)


def _as_le(row: ir.Linear) -> list[tuple[str, tuple[list, float | int]]]:
    terms, rhs = _numeric_row(row)
    out = []
    if row.op in ("<=", "=="):
        out.append(("<=", (terms, rhs)))
    if row.op in (">=", "=="):
        out.append(("<=", ([(-c, t) for c, t in terms], -rhs)))
    return out


def _big_m(model: ir.Model, terms: list[tuple[int, int]], rhs: float) -> float:
    """max(a.x) - rhs over the variables' bounds: the tightest valid M."""
    top = 0.0
    for c, t in terms:
        v = model.variables[abs(t) - 1]
        lo, hi = (0.0, 1.0) if v.kind is ir.VarKind.BOOL else (v.lb, v.ub)
        top += max(c * lo, c * hi)
    return max(0.0, top - rhs)
