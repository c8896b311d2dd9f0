"""The ``cp`` backend: IR -> CPMpy model, solved with OR-Tools CP-SAT.

Booleans become ``cp.boolvar``s, integer/real IR variables ``cp.intvar``s (CP-SAT has no
continuous variables, so REAL is not a capability); clauses become ``cp.any``, linear rows
sums with integer coefficients (rows are scaled exactly), indicators ``lit.implies(row)``.
Objectives are made integer exactly and lexicographic levels combined
(``compiler.encode.objective``). The best bound is read from the OR-Tools solver object;
the exit status, not the boolean ``solve()`` returns, says optimal vs feasible.

``odtc compile --to cpmpy -o f.pkl`` writes the model with ``cpmpy.Model.to_file``; load
and solve it with cpmpy alone::

    import cpmpy as cp
    m = cp.Model.from_file("f.pkl")
    m.solve("ortools")
"""
from __future__ import annotations

import tempfile
from fractions import Fraction
from pathlib import Path

from odt.compiler import ir, limits
from odt.compiler.encode import objective, pb

from .base import Artifact, Backend, BackendResult, Capability, Progress, SolveOptions, Status, Stopwatch


def _import_cpmpy():
    import cpmpy as cp

    return cp


class CpBackend(Backend):
    NAME = "cp"
    CAPABILITIES = frozenset({Capability.BOOL_VARS, Capability.INT_VARS, Capability.LINEAR_ROWS,
                              Capability.INDICATORS, Capability.LEXICOGRAPHIC, Capability.ANYTIME})
    FILE_FORMAT = "cpmpy"

    @classmethod
    def available(cls) -> bool:
        try:
            _import_cpmpy()
            return True
        except ImportError:
            return False

    def build(self, model: ir.Model, cutoff: Fraction | None = None, floor: Fraction | None = None):
        """The CPMpy model, its variables (index-aligned with the IR) and the combined objective."""
        cp = _import_cpmpy()
        xs: list = [None]
        for v in model.variables:
            if v.kind is ir.VarKind.BOOL:
                xs.append(cp.boolvar(name=f"b{v.index}"))
            else:
                xs.append(cp.intvar(int(v.lb), int(v.ub), name=f"i{v.index}"))

        def lit(l: int):
            return xs[l] if l > 0 else ~xs[-l]

        def term(c: int, t: int):
            v = model.variables[abs(t) - 1]
            if v.kind is ir.VarKind.BOOL:
                return c * lit(t)
            return c * xs[t]

        def row_expr(row: ir.Linear):
            terms, rhs = pb.integer_row(row.terms, row.rhs)
            lhs = cp.sum([term(c, t) for c, t in terms]) if terms else 0
            return {"<=": lhs <= rhs, ">=": lhs >= rhs, "==": lhs == rhs}[row.op]

        m = cp.Model()
        for i, c in enumerate(model.clauses):
            if not i & 0xFFF:  # long Python work: it keeps to the time limit
                limits.check()
            m += cp.any([lit(l) for l in c.lits]) if c.lits else cp.BoolVal(False)
        for i, row in enumerate(model.linears):
            if not i & 0xFF:
                limits.check()
            m += row_expr(row)
        for ind in model.indicators:
            m += lit(ind.lit).implies(row_expr(ind.row))
        combined = objective.combine(model.objectives, model)
        if combined.weights or combined.linear:
            obj = cp.sum([w * lit(l) for w, l in combined.weights] + [c * xs[v] for c, v in combined.linear])
            m.minimize(obj)
            below = objective.strictly_below(combined, cutoff)
            if below is not None:  # B4: only solutions better than the warm start
                m += obj <= below
            least = objective.at_least(combined, floor)
            if least is not None:  # a proven lower bound (diagrams: the optimal depth-L tree)
                m += obj >= least
        return m, xs, combined

    def emit(self, model: ir.Model) -> Artifact:
        m, _, _ = self.build(model)
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "model.pkl"
            m.to_file(str(path))
            data = path.read_bytes()
        return Artifact("pkl", data)

    def solve(self, model: ir.Model, options: SolveOptions) -> BackendResult:
        cp = _import_cpmpy()
        from cpmpy.solvers.solver_interface import ExitStatus
        from ortools.sat.python import cp_model

        clock = Stopwatch()
        if any(not c.lits for c in model.clauses):
            return BackendResult(Status.INFEASIBLE, None, None, None, clock.elapsed(), "an empty clause")
        m, xs, combined = self.build(model, options.extra.get("cutoff"), options.extra.get("floor"))
        solver = cp.SolverLookup.get("ortools", m)
        # SIGINT is odt's (compiler.limits): CP-SAT's own handler would hide it from the CLI
        kwargs = {"num_search_workers": max(1, options.threads), "random_seed": options.seed,
                  "catch_sigint_signal": False}
        callback = None
        if options.on_progress is not None and combined.weights:
            report = options.on_progress

            class _Progress(cp_model.CpSolverSolutionCallback):
                def on_solution_callback(self) -> None:
                    inc = combined.first_level_bound(self.ObjectiveValue())
                    bnd = combined.first_level_bound(self.BestObjectiveBound())
                    report(Progress(clock.elapsed(), inc, bnd))

            callback = _Progress()
        remaining = limits.budget(None if options.time_limit is None else options.time_limit - clock.elapsed())
        if remaining is not None:
            remaining = max(0.01, remaining)
        with limits.native(solver.ort_solver.stop_search):  # a signal or the hard deadline ends the search
            solver.solve(time_limit=remaining, solution_callback=callback, **kwargs)  # the build is in the budget
        status = solver.status().exitstatus
        if status == ExitStatus.UNSATISFIABLE:
            return BackendResult(Status.INFEASIBLE, None, None, None, clock.elapsed(), "CP-SAT: infeasible")
        if status not in (ExitStatus.OPTIMAL, ExitStatus.FEASIBLE):
            bound = combined.first_level_bound(solver.ort_solver.best_objective_bound) if combined.weights else None
            return BackendResult(Status.UNKNOWN, None, None, bound, clock.elapsed(), f"CP-SAT: {status.name}")
        values = [False]
        for v, x in zip(model.variables, xs[1:]):
            values.append(bool(x.value()) if v.kind is ir.VarKind.BOOL else x.value())
        levels = objective.level_values(model.objectives, values, model)
        if status == ExitStatus.OPTIMAL or not (combined.weights or combined.linear):
            # with nothing to minimise (every weight 0), CP-SAT's "feasible" is optimal
            result_status, bound = Status.OPTIMAL, (levels[0] if levels else None)
        else:
            result_status = Status.FEASIBLE
            bound = combined.first_level_bound(solver.ort_solver.best_objective_bound) if combined.weights else None
        return BackendResult(result_status, tuple(values), tuple(levels), bound, clock.elapsed(),
                             f"CP-SAT via CPMpy: {solver.ort_solver.response_stats()}")
