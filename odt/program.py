"""The public façade: text (or a file) + data -> ``Program`` -> ``SolveResult`` (E4).

``compile`` runs parse and check; ``Program.solve`` lowers, picks the backend, solves,
decodes and re-verifies (E2). Every result says whether the decoded classifier's numbers,
recomputed in numpy, agree with what the solver claimed.
"""
from __future__ import annotations

import dataclasses
import math
import os
import numbers
import time
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from odt.backends import BACKENDS, capabilities, get_backend
from odt.backends.base import Artifact, BackendResult, Progress, SolveOptions, Status

from odt.compiler import ast, ir
from odt.compiler import limits
from odt.compiler.classifiers.common import Seen
from odt.compiler.check import check, load_table
from odt.compiler.check_feasible import data_conflict
from odt.compiler.data import table_from_python
from odt.compiler.encode import objective as objective_enc
from odt.compiler.errors import (InfeasibleProgram, OdtDataError, OdtError, OdtInputError, OdtInputTypeError,
                                 VerificationFailed, decode_utf8, did_you_mean)
from odt.strategies.depth_search import solve_depth_range
from odt.compiler.evaluate import evaluate
from odt.strategies.explain import minimal_conflict
from odt.compiler.lower import Lowered, lower
from odt.compiler.parse import parse_program
from odt.compiler.params import Override, overrides_from_mapping, resolve_params
from odt.compiler.ranges import memory_size, positive_seconds
from odt.compiler.checked import CheckedProgram
from odt.compiler.searches import Searches
from odt.convergence import Recorder
from odt.result import Classifier, SolveResult
from odt.compiler.support import refusal, unsupported
from odt.routing import check_memory, estimate, route
from odt.strategies.bdd_bounds import bdd_bounds
from odt.strategies.diagram_bounds import diagram_bounds, tighten
from odt.strategies.warm_start import greedy_pays_early, greedy_start, single_leaf, warm_start as warm_start_of

_TOL = 1e-6


class Program:
    """A checked odt program bound to its data; lower and solve it as often as you like."""

    def __init__(self, checked: CheckedProgram):
        self.checked = checked
        self._lowered: dict[tuple[str, str | None], Lowered] = {}
        #: the search IRs (a program backend's problem, the greedy start's), each built once for every solve
        self._searches = Searches(checked)

    @property
    def dataset(self):
        return self.checked.dataset

    def lowered(self, encoding: str = "paths", backend: str | None = None) -> Lowered:
        """The IR of the program with the named skeleton encoding for ``backend`` (cached
        per encoding and backend: a diagram's flows are booleans for cp, reals for milp)."""
        key = (encoding, backend)
        if key not in self._lowered:
            self._lowered[key] = lower(self.checked, encoding, backend)
        return self._lowered[key]

    @property
    def model(self) -> ir.Model:
        return self.lowered().model

    def backend_name(self, requested: str | None = None) -> str:
        """The backend to use: the requested one, else the program's ``solve`` directive;
        ``auto`` takes the first backend (``routing.preference`` order) that takes the
        program, decided from the program and cheap counts, without lowering it."""
        name = requested or self.checked.solve.backend
        if name != "auto":
            return name
        return route(self.checked)

    def _capabilities(self, name: str, low: Lowered) -> None:
        """The backend's capability check on the IR (the last guard: the support table has
        refused whatever the program's constructs need and the backend lacks)."""
        self._backend(name).check_capabilities(low.model, capabilities())

    def check_backend(self, name: str) -> str:
        """Raise the error ``name`` would raise before solving; else describe what it
        would build (estimated from counts: nothing is lowered here)."""
        impl = self._backend(name)
        err = refusal(self.checked, name)
        if err is not None:
            raise err
        if impl.PROGRAM:
            return impl.describe(self.checked)
        return estimate(self.checked, name).describe()

    def lowered_for(self, backend: str) -> Lowered:
        """The IR for ``backend``: its own encoding, or the one the solve directive names
        (``solve milp(encoding = "paths")``)."""
        if _is_program_backend(backend):
            raise unsupported("an IR or a solver file", "it searches the program directly", backend=backend,
                              hint="compile with --to wcnf, cpmpy or pyomo")
        encoding = self.checked.solve.options.get("encoding") or self._backend(backend).ENCODING
        return self.lowered(encoding, backend)

    def _backend(self, name: str):
        """The backend object; an unknown or unavailable name from the program's solve
        directive is reported at the directive."""
        req = self.checked.solve
        try:
            impl = get_backend(name)
        except OdtError as exc:
            if req.span is not None and req.backend == name:
                raise OdtError(exc.message, req.span, exc.diagnostics[0].hint) from None
            raise
        for key, value in req.options.items():  # option values only a backend knows (SAT solver names)
            for backend in BACKENDS.values():
                problem = backend.check_options({key: value})
                if problem is not None:
                    raise OdtError(problem[0], self._option_span(key) or req.span, problem[1])
        return impl

    def _option_span(self, key: str):
        """Where the solve directive writes option ``key`` (None when it is not written)."""
        for stmt in self.checked.program.of(ast.SolveStmt):
            for opt in stmt.options:
                if opt.name.text == key:
                    return opt.span
        return None

    def emit(self, backend: str = "maxsat", **kwargs: Any) -> Artifact:
        """The solver input of ``backend`` (WCNF text, a pickled CPMpy model, LP + MPS)."""
        b = self._backend(backend)
        model = self.lowered_for(backend).model
        b.check_capabilities(model, capabilities())
        return b.emit(model, **kwargs)

    def solve(self, backend: str | None = None, time_limit: float | None = None, threads: int | None = None,
              seed: int | None = None, verbose: bool = False,
              progress: Callable[[Progress], None] | None = None, warm_start: bool = True,
              memory_limit: float | None = None, scheduler: str | None = None) -> SolveResult:
        """Solve, decode and re-verify. Options given here override the ``solve`` directive.

        The time limit holds for all of it (issue 18): lowering, encoding, the solver and
        decoding share one deadline (``compiler.limits``); when it passes, or SIGINT /
        SIGTERM arrive (the CLI's handlers), the best incumbent is returned with its
        bound, status ``interrupted`` for a signal. ``memory_limit`` (bytes, or a size with
        a unit as ``--memory-limit`` takes it: ``"500M"``, ``"4G"``) refuses an encoding
        whose estimated size exceeds it before building it. ``scheduler`` (a Dask scheduler
        address, ``tcp://host:8786``) runs the dp deep search's root subproblems on that
        cluster's workers (``backends/dp/contree/deep_dask.py``); dp only.

        Raises:
            OdtInputError: an argument it cannot take (a ``ValueError``; of the wrong
                type, ``OdtInputTypeError``, also a ``TypeError``)."""
        limit = time_limit if time_limit is not None else self.checked.solve.options.get("time_limit")
        check_solve_arguments(limit, threads, seed)  # before the deadline is armed with it
        if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
            raise (OdtInputError if isinstance(scheduler, str) else OdtInputTypeError)(
                f"scheduler={scheduler!r}: expected a Dask scheduler address such as 'tcp://127.0.0.1:8786'")
        memory_limit = check_call_arguments(backend=backend, verbose=verbose, progress=progress,
                                            warm_start=warm_start, memory_limit=memory_limit)
        held = _Held()
        result: SolveResult | None = None
        recorder = Recorder(progress)  # the history of the result (``convergence``)
        try:
            with limits.time_limit(limit):
                try:
                    result = self._solve(backend, limit, threads, seed, verbose, recorder, warm_start,
                                         memory_limit, held, scheduler)
                except limits.Stopped as stop:
                    with limits.shielded():
                        result = held.result(self, stop.reason)
        except limits.Stopped as stop:  # the hard deadline, just as the scope closed
            if result is None:
                with limits.shielded():
                    result = held.result(self, stop.reason)
        assert result is not None
        status = "interrupted" if limits.stop_reason() is not None and result.status != "optimal" else result.status
        result = dataclasses.replace(result, status=status,
                                     history=recorder.history(result.seconds, result.objective, result.bound))
        if result.classifier is not None and not result.verified:
            raise verification_failure(result)
        return result

    def _solve(self, backend: str | None, time_limit: float | None, threads: int | None, seed: int | None,
               verbose: bool, progress: Callable[[Progress], None] | None, warm_start: bool,
               memory_limit: float | None, held: "_Held", scheduler: str | None = None) -> SolveResult:
        """``solve`` inside its time-limit scope; ``held`` keeps the incumbent a stop returns.

        With ``warm_start`` (B4), a solver backend first gets the ConTree tree of the
        program's depth-limited error-minimisation relaxation; if that tree satisfies the
        program (by re-evaluation), its value is handed to the solver as a cutoff: the
        solver then searches only for strictly better trees, and if there are none, the
        warm start is the proven optimum."""
        conflict = data_conflict(self.checked)
        if conflict is not None:
            raise InfeasibleProgram(
                f"infeasible: '{conflict.constraint.span.quote()}' cannot hold on this data: {conflict.reason}",
                conflict.constraint.span, "relax this constraint (found before solving, on every backend)")
        req = self.checked.solve
        name = self.backend_name(backend)  # auto: the first backend the support table lets take the program
        impl = self._backend(name)
        refused = refusal(self.checked, name)
        if refused is not None:
            raise refused
        if scheduler is not None and not _is_program_backend(name):
            takers = [n for n in BACKENDS if _is_program_backend(n)]
            raise OdtInputError(f"scheduler={scheduler!r} runs a program backend's search on a Dask cluster; "
                                f"backend '{name}' does not use one",
                                hint=f"drop the scheduler, or solve with backend {' or '.join(map(repr, takers))}")
        if getattr(self.checked.skeleton, "depth_range", None) is not None:  # S3: trees and BDDs
            held.floor = _depth_floor(self.checked)  # a stop before any depth is refuted

            def at_depth(sub: CheckedProgram, remaining: float | None) -> SolveResult:
                return Program(sub).solve(backend, remaining, threads, seed, verbose, progress, warm_start,
                                          memory_limit, scheduler)

            return solve_depth_range(self.checked, at_depth, backend, time_limit)
        held.started, held.backend = time.perf_counter(), name
        if not _is_program_backend(name):
            check_memory(self.checked, name, memory_limit)
        # dp finishes small programs sooner than the greedy tree is grown: their start waits until
        # a solve is stopped; the solver backends and large dp programs start from it at once
        early = warm_start and (not _is_program_backend(name) or greedy_pays_early(self.checked))
        start = greedy_start(self.checked, self._searches) if early else None
        if start is not None:  # the incumbent of a solve stopped before its solver returns (lowering included)
            held.warm = start[:2]
        if progress is not None and self.checked.objective.maximized:
            shown = progress

            def progress(p: Progress) -> None:  # report in the user's sense (a maximum)
                shown(Progress(p.elapsed, None if p.incumbent is None else -p.incumbent,
                               None if p.bound is None else -p.bound))

        opts = SolveOptions(
            time_limit=limits.budget(time_limit),
            threads=threads if threads is not None else req.options.get("threads", _default_threads(name)),
            seed=seed if seed is not None else req.options.get("seed", 0),
            verbose=verbose or bool(req.options.get("verbose", False)),
            on_progress=progress,
            extra={**{k: v for k, v in req.options.items() if k == "solver"},
                   **({"scheduler": scheduler} if scheduler is not None else {})},
        )
        refused_run = impl.check_run(opts)
        if refused_run is not None:  # before any work, at the option that causes it
            construct, reason, hint, option = refused_run
            raise unsupported(construct, reason, self._option_span(option) or req.span, backend=name, hint=hint)
        if impl.PROGRAM:  # it searches the checked program itself: no IR
            tree, res = impl.solve_program(self._searches, opts)
            if warm_start and start is None and res.status is not Status.OPTIMAL:
                start = greedy_start(self.checked, self._searches)
            if start is not None and res.status is not Status.OPTIMAL and \
                    (res.objective is None or tuple(float(v) for v in res.objective) > start.levels):
                # stopped with nothing better than the greedy start: the start, with the engine's bound
                proved = res.bound is not None and res.bound >= start.value
                kept = BackendResult(Status.OPTIMAL if proved else Status.FEASIBLE, None,
                                     tuple(Fraction(v).limit_denominator(10**9) for v in start.levels), res.bound,
                                     res.seconds, res.log + "; the greedy start is the incumbent", start.errors)
                return self._result(name, kept, None, start.classifier)
            return self._result(name, res, None, tree)
        low = self.lowered_for(name)
        self._capabilities(name, low)
        started = time.perf_counter()
        # bounds from dp: optimal trees for a diagram, the relaxed BDD for a BDD program
        bounds = (diagram_bounds(self.checked, _budget(opts)) or bdd_bounds(self.checked, _budget(opts))) \
            if warm_start else None
        warm = greedy = warm_start_of(self.checked, opts, start, self._searches) if warm_start else None
        if bounds is not None and bounds.incumbent is not None and (warm is None or bounds.incumbent[1] < warm[1]):
            warm = bounds.incumbent
        held.warm, held.floor = warm, None if bounds is None else bounds.lower
        if bounds is not None and warm is not None and warm[1] <= bounds.lower:
            done = BackendResult(Status.OPTIMAL, None, (warm[1],), warm[1], time.perf_counter() - started,
                                 f"the warm start meets the bound of {bounds.source} (no search needed)")
            return self._result(name, done, None, warm[0])
        note = ""
        if req.strategy == "lns" and warm is not None:  # the layer LNS improves the warm start first
            warm, note = self._lns(name, impl, warm, greedy, bounds, opts, progress, held, started)
            if bounds is not None and warm[1] <= bounds.lower:
                done = BackendResult(Status.OPTIMAL, None, (warm[1],), warm[1], time.perf_counter() - started,
                                     note + f"; the incumbent meets the bound of {bounds.source}")
                return self._result(name, done, None, warm[0])
        if opts.time_limit is not None:  # the warm start's time comes out of the budget
            opts = dataclasses.replace(opts, time_limit=max(0.05, opts.time_limit - (time.perf_counter() - started)))
        if bounds is not None:
            opts = dataclasses.replace(opts, extra={**opts.extra, "floor": bounds.lower})
        if warm is not None:
            opts = dataclasses.replace(opts, extra={**opts.extra, "cutoff": warm[1]})
            if progress is not None:
                progress(Progress(time.perf_counter() - started if note else 0.0, warm[1],
                                  None if bounds is None or not note else bounds.lower))
        res = impl.solve(low.model, opts)
        if bounds is not None and res.status is not Status.INFEASIBLE:
            res = tighten(res, bounds.lower, bounds.source)
        if warm is not None and res.status is Status.INFEASIBLE:  # nothing beats the warm start
            done = BackendResult(Status.OPTIMAL, None, (warm[1],), warm[1], res.seconds,
                                 res.log + "; the warm start is optimal (nothing better exists)")
            return _noted(self._result(name, done, None, warm[0]), note, started)
        if warm is None and res.status in (Status.UNKNOWN, Status.FEASIBLE):  # a time-out: the best
            leaf = single_leaf(self.checked)  # constant classifier may beat the solver's first models
            if leaf is not None and (res.objective is None or leaf[1] < res.objective[0]):
                warm, res = leaf, dataclasses.replace(res, values=None, objective=None)
        if warm is not None and res.values is None:  # time out without a better incumbent
            # the solver's bound holds for trees better than the warm start, so the
            # optimum is at least min(bound, warm value): at or above it, the warm start wins
            proved = res.bound is not None and res.bound >= warm[1]
            kept = BackendResult(Status.OPTIMAL if proved else Status.FEASIBLE, None, (warm[1],),
                                 warm[1] if proved else res.bound, res.seconds,
                                 res.log + "; the warm start is the incumbent")
            return _noted(self._result(name, kept, None, warm[0]), note, started)
        return _noted(self._result(name, res, low), note, started)

    def _lns(self, name: str, impl, warm: tuple[Classifier, Fraction], greedy: tuple[Classifier, Fraction] | None,
             bounds, opts: SolveOptions,
             progress: Callable[[Progress], None] | None, held: "_Held",
             started: float) -> tuple[tuple[Classifier, Fraction], str]:
        """``strategy lns``: the layer LNS (``strategies.diagram_lns``) on the flow encoding,
        for at most half of the time left, from the better of the greedy diagram and the
        fitting tree, then, with the time that search leaves (it stops early at a local
        optimum), from the other; a start outside the encoding's family is skipped (a
        greedy diagram whose compacted arcs skip full layers). The exact search then gets
        the rest with the best diagram found as cutoff. Returns that incumbent and a log
        note."""
        from odt.compiler.classifiers.diagram import Diagram
        from odt.strategies.diagram_lns import improve

        left = None if opts.time_limit is None else opts.time_limit - (time.perf_counter() - started)
        low = self.lowered("flow", name)
        best = [warm]

        def keep(d: Classifier, value: Fraction) -> None:
            if value < best[0][1]:
                best[0] = held.warm = (d, value)

        def shown(p: Progress) -> None:  # only what improves on the warm start
            if progress is not None and p.incumbent is not None and p.incumbent <= best[0][1]:
                progress(p)

        tree = None if bounds is None else bounds.incumbent
        starts = [(s[0], s[1]) for s in (greedy, tree) if s is not None and isinstance(s[0], Diagram)]
        notes = []
        lns_end = None if left is None else time.perf_counter() + 0.5 * left
        for start in sorted(starts, key=lambda s: s[1]):  # the better start first, the other with the time left
            share = None if lns_end is None else lns_end - time.perf_counter()
            if share is not None and share < 1.0:
                break
            out = improve(self.checked, impl, low, start, None if bounds is None else bounds.lower,
                          opts, share, keep, shown, started)
            origin = "the greedy diagram" if greedy is not None and start[0] is greedy[0] else "the fitting tree"
            notes.append(f"lns from {origin}: " + ("it does not fit the flow encoding" if out is None else
                                                   f"{float(out.value):g}, {out.log.removeprefix('lns: ')}"))
        return best[0], "; ".join(notes) if notes else "lns: no start"

    def explain(self, backend: str | None = None, time_limit: float | None = None,
                undecided: list | None = None) -> list[tuple[str, Any]]:
        """For an infeasible program: a minimal set of its own constraints (and skeleton
        size limits) that cannot hold together, as (source text, span) pairs; [] when the
        program is feasible (``explain.minimal_conflict``; the constraints whose test the
        time limit cut short go to ``undecided``)."""
        check_solve_arguments(time_limit)
        check_call_arguments(backend=backend)
        conflict = data_conflict(self.checked)
        if conflict is not None:  # one constraint that cannot hold alone is the minimal set
            return [(conflict.constraint.span.quote(), conflict.constraint.span)]
        return minimal_conflict(self.checked, self._explain_solve, backend, time_limit, undecided)

    @staticmethod
    def _explain_solve(sub: CheckedProgram, backend: str | None, time_limit: float | None) -> SolveResult:
        return Program(sub).solve(backend=backend, time_limit=time_limit, warm_start=True)

    @limits.shield
    def _result(self, backend: str, res: BackendResult, low: Lowered | None,
                tree: Classifier | None = None) -> SolveResult:
        maximized = self.checked.objective.maximized
        sign = -1.0 if maximized else 1.0
        if res.status is Status.INFEASIBLE:
            raise InfeasibleProgram(
                "infeasible: no classifier satisfies every constraint of the program on this data "
                f"(proved by backend '{backend}' in {res.seconds:.2f} s)",
                hint="`odtc explain <program>` (or Program.explain()) names a minimal set of conflicting "
                     "constraints; relax one, raise the depth, or drop a size limit",
            )
        if res.values is None and tree is None:
            return SolveResult(res.status.value, None, None, (), _f(res.bound, sign), None, backend, res.seconds,
                               None, False, (), None, res.log)
        if low is not None:
            assert res.values is not None
            tree = low.encoding.decode(res.values, self.dataset, _input_columns(self.checked))
            terms, constant = low.encoding.errors()
            solver_errors = float(objective_enc.level_values([ir.Objective(tuple(terms), constant)], res.values,
                                                             low.model)[0])
        elif res.errors is not None:  # a program backend reports its training errors
            solver_errors = float(res.errors)
        else:  # a warm-start tree, or dp's on reweighted rows: its errors are the re-evaluated ones
            solver_errors = None
        assert tree is not None
        tree = _with_seen(tree, self.checked)
        ev = evaluate(self.checked, tree)
        if solver_errors is None:
            solver_errors = ev.train_errors
        claimed = [float(v) for v in res.objective or ()]
        tol = _tolerance(self.checked, [*ev.objective, *claimed, ev.train_errors, solver_errors])
        if res.status is Status.OPTIMAL:
            agree = all(abs(a - b) <= tol for a, b in zip(ev.objective, claimed)) and \
                abs(ev.train_errors - solver_errors) <= tol
        else:
            agree = bool(ev.objective) and ev.objective[0] <= claimed[0] + tol and ev.train_errors <= solver_errors + tol
        verified = agree and ev.feasible
        objective = ev.objective[0] if ev.objective else None
        least = _least_value(self.checked)  # never a negative bound on a non-negative objective
        bound = least if res.bound is None else float(res.bound) if least is None else max(float(res.bound), least)
        gap = None
        if objective is not None and bound is not None:
            bound = min(bound, objective)  # the incumbent itself bounds the optimum from above
            gap = 0.0 if abs(objective - bound) <= _TOL else min(1.0, (objective - bound) / max(abs(objective), 1e-12))
        return SolveResult(
            res.status.value, tree, None if objective is None else sign * objective,
            tuple(sign * v for v in ev.objective), None if bound is None else sign * bound, gap, backend, res.seconds,
            ev.train_errors, verified, ev.constraints, solver_errors, res.log, ev,
        )


def verification_failure(result: SolveResult) -> VerificationFailed:
    """The error for a result whose classifier fails re-verification: what does not hold
    (each violated constraint, or the recomputed objective / errors against the solver's),
    with the result itself, its status ``unverified``, in ``result``."""
    checks = [f"  {c.text}: {c.value:g} {c.op} {c.bound:g} does not hold (line {c.line})"
              for c in result.constraints if not c.holds]
    if not checks:
        checks = [f"  the recomputed objective ({result.objective}) or errors ({result.train_errors}) differ from "
                  f"the solver's (errors {result.solver_errors})"]
    return VerificationFailed(
        f"the classifier found by backend '{result.backend}' fails verification against the program:\n"
        + "\n".join(checks), dataclasses.replace(result, status="unverified"),
        hint="this is a fault in odt, not in the program: please report it with the program and its data; "
             "another backend (--backend / solve(backend=...)) may solve the program")


def _noted(result: SolveResult, note: str, started: float) -> SolveResult:
    """``result`` with a strategy's note in front of its log and the strategy's solver
    calls in its time (since ``started``)."""
    if not note:
        return result
    return dataclasses.replace(result, log=f"{note}; {result.log}", seconds=time.perf_counter() - started)


def _default_threads(backend: str) -> int:
    """CP-SAT's portfolio (with its large-neighbourhood workers, which improve diagram and
    fairness incumbents most) needs several workers: ``cp`` uses every core, up to 8, unless
    the program or caller says ``threads``; the other backends are single-threaded."""
    return min(8, os.cpu_count() or 1) if backend == "cp" else 1


class _Held:
    """What a solve holds when a time limit or a signal stops it: the warm start (the
    incumbent before the solver runs) and the proven floor of the objective."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.backend: str | None = None
        self.warm: tuple[Classifier, Fraction] | None = None
        self.floor: Fraction | None = None

    def result(self, program: "Program", reason: str) -> SolveResult:
        log = f"stopped by the {reason} before the solver returned"
        if self.warm is None and self.backend is not None:  # stopped before the warm start
            self.warm = single_leaf(program.checked)
            log += "; no warm start yet, the best single leaf" if self.warm is not None else ""
        seconds = time.perf_counter() - self.started
        if self.warm is not None and self.backend is not None:
            kept = BackendResult(Status.FEASIBLE, None, (self.warm[1],), self.floor, seconds,
                                 log + "; the warm start is the incumbent")
            # (a program backend's own results carry their errors; this one is re-evaluated like a warm start)
            label = self.backend if not _is_program_backend(self.backend) else f"{self.backend} (stopped)"
            return program._result(label, kept, None, self.warm[0])
        sign = -1.0 if program.checked.objective.maximized else 1.0
        return SolveResult(Status.UNKNOWN.value, None, None, (), _f(self.floor, sign), None,
                           self.backend or "auto", seconds, None, False, (), None, log)


#: quantities that are never negative (counts, sizes, rates, absolute values)
_NON_NEGATIVE = {"errors", "accuracy", "nodes", "leaves", "depth", "features_used", "samples", "predicted", "rate",
                 "tp", "fp", "tn", "fn", "size", "abs"}


def _least_value(c: CheckedProgram) -> float | None:
    """A bound without a solver: the constant of a minimised first level whose terms are
    non-negative quantities with positive coefficients (a time-out's incumbent then has a
    bound and a gap of at most 100%); else None."""
    if c.objective.maximized or not c.objective.levels:
        return None
    first = c.objective.levels[0]
    if all(coef > 0 and q.kind in _NON_NEGATIVE for q, coef in first.terms):
        return float(first.constant)
    return None


def _depth_floor(c: CheckedProgram) -> Fraction | None:
    """The value of a depth range's first objective level at its lowest depth."""
    first = c.objective.levels[0]
    if [q.kind for q, _ in first.terms] != ["depth"]:
        return None
    return first.terms[0][1] * c.skeleton.depth_range[0] + first.constant  # type: ignore[union-attr, index]


def check_solve_arguments(time_limit: Any = None, threads: Any = None, seed: Any = None) -> None:
    """Raise ``OdtInputError`` unless the time limit is a positive finite number of seconds,
    threads a positive integer and seed a non-negative integer (or None)."""
    problem = positive_seconds(time_limit)
    if problem is not None:
        kind = OdtInputTypeError if not isinstance(time_limit, numbers.Real) else OdtInputError
        raise kind(problem, hint="a number of seconds such as 60")
    for name, value, low, high in (("threads", threads, 0, 1024), ("seed", seed, 0, 2**31 - 1)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                                  or not low <= int(value) <= high):
            kind = OdtInputTypeError if not isinstance(value, numbers.Integral) else OdtInputError
            raise kind(f"{name} must be an integer in {low}..{high}, not {value!r}")


def check_call_arguments(backend: Any = None, verbose: Any = False, progress: Any = None, warm_start: Any = True,
                         memory_limit: Any = None) -> float | None:
    """Raise ``OdtInputError`` (``OdtInputTypeError`` for a wrong type) for a solve option
    ``Program.solve`` cannot take; returns the memory limit in bytes (None: the default).

    >>> check_call_arguments(memory_limit="2K")
    2048.0
    >>> check_call_arguments(memory_limit=0)
    Traceback (most recent call last):
    ...
    odt.compiler.errors.OdtInputError: error: memory_limit must be a positive number of bytes, not 0
    ...
    """
    if backend is not None and not isinstance(backend, str):
        raise OdtInputTypeError(f"backend must be a backend's name (a str) or None, not {backend!r}",
                                hint=f"one of: {', '.join(BACKENDS)}, auto")
    for name, value in (("verbose", verbose), ("warm_start", warm_start)):
        if not isinstance(value, (bool, np.bool_)):
            raise OdtInputTypeError(f"{name} must be True or False, not {value!r}")
    if progress is not None and not callable(progress):
        raise OdtInputTypeError(f"progress must be a function of one Progress (or None), not {progress!r}",
                                hint="e.g. progress=lambda p: print(p.elapsed, p.incumbent, p.bound)")
    if memory_limit is None:
        return None
    if isinstance(memory_limit, str):
        try:
            return memory_size(memory_limit, default_unit=None)
        except ValueError as exc:
            raise OdtInputError(f"memory_limit: {exc}", hint="a number of bytes, or a size such as \"4G\" or \"500M\"") \
                from None
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, numbers.Real):
        raise OdtInputTypeError(f"memory_limit must be a number of bytes or a size such as \"4G\", not {memory_limit!r}")
    value = float(memory_limit)
    if not (math.isfinite(value) and value > 0):
        raise OdtInputError(f"memory_limit must be a positive number of bytes, not {memory_limit!r}",
                            hint="e.g. memory_limit=4 * 2**30 or \"4G\"; None (the default) is four fifths of the "
                                 "machine's memory")
    return value


def _tolerance(checked: CheckedProgram, values: list[float]) -> float:
    """How far a recomputed value may lie from the solver's: ``_TOL``; for a regression
    loss, a sum of squares the engines compute from sums of powers of the targets, also
    relative to the values' size (1e-9 of it)."""
    if checked.target is None:
        return _TOL
    return max(_TOL, 1e-9 * max((abs(v) for v in values), default=0.0))


def _with_seen(tree, checked: CheckedProgram):
    """``tree`` with the record of its training data (``_seen``); a regression tree's
    "majority" is the weighted mean of the training target (added to its values if no leaf
    predicts it), what a row of an unseen category is predicted with ``unknown="majority"``."""
    seen = _seen(checked.dataset)
    if not getattr(tree, "regression", False) or checked.target is None:
        return dataclasses.replace(tree, seen=seen)
    w = checked.dataset.row_weights()
    mean = float((w * checked.target).sum() / w.sum())
    values = tuple(tree.classes) if mean in tree.classes else tuple(tree.classes) + (mean,)
    return dataclasses.replace(tree, classes=values, seen=dataclasses.replace(seen, majority=values.index(mean)))


def _seen(data) -> Seen:
    """The categories of the training data and its majority class (by row weight)."""
    cats: dict[str, list[str]] = {}
    for _, block in data.features.blocks():
        for f in block if isinstance(block, tuple) else ():  # a threshold block holds no category
            if f.kind == "category":
                cats.setdefault(f.column, []).append(str(f.category))
    totals = np.bincount(data.y, weights=data.row_weights(), minlength=len(data.classes))
    return Seen(tuple((c, tuple(v)) for c, v in cats.items()), int(np.argmax(totals)), data.target)


def _budget(opts: SolveOptions) -> float:
    """Seconds for a warm start or bound: 2 s, or a tenth of the time limit if less."""
    return 2.0 if opts.time_limit is None else min(2.0, 0.1 * opts.time_limit)


def _is_program_backend(name: str) -> bool:
    return getattr(BACKENDS.get(name), "PROGRAM", False)


def _f(x: Fraction | None, sign: float) -> float | None:
    return None if x is None else sign * float(x)


def _input_columns(checked: CheckedProgram) -> tuple[str, ...]:
    data = checked.dataset
    return data.features.columns()


def compile(text: str, data: Any = None, target: Any = None, filename: str = "<string>",
            base_dir: str | Path | None = None, params: Mapping[str, Any] | Sequence[Override] | None = None) -> Program:
    """Parse and check an odt program.

    Args:
        text: the program.
        data: a pandas DataFrame, a dict of columns or a 2-D numpy array; when None the
            program's ``data "file.csv"`` block is read (relative to ``base_dir``).
        target: the label column: its name in ``data`` (a DataFrame or dict), or the labels
            themselves (an array, which becomes the column ``class``). Without it the data
            block's ``target`` names it, else the column ``class``; data with neither is an
            error that lists the columns.
        params: values overriding the program's ``param`` declarations, e.g.
            ``{"depth": 4, "alpha": 0.01}`` (floats are read as their shortest decimal).
    Raises:
        OdtError: syntax, name, type or data errors, all reported together; an unknown or
            non-numeric parameter is positioned in the ``params`` text.
        OdtInputError: an argument it cannot take (``text`` not a str, ``target`` without
            ``data``, ``params`` not a mapping, two data columns of one name, ...).

    >>> compile("param d = 1\nmodel tree(depth <= d)", data={"a": [0, 1], "class": [0, 1]},
    ...         params={"d": 2}).checked.skeleton.depth
    2
    """
    text = _check_compile_arguments(text, data, target, filename, base_dir, params)
    ast_program = parse_program(text, filename)
    if params is not None or ast_program.of(ast.ParamDef):
        given = overrides_from_mapping(params) if isinstance(params, Mapping) else list(params or ())
        ast_program = resolve_params(ast_program, given)
    if data is not None:
        missing = any(isinstance(i, ast.MissingItem) for b in ast_program.of(ast.DataBlock) for i in b.items)
        named = target if isinstance(target, str) else None
        table = table_from_python(data, None if named is not None else target, missing=missing)
        if named is not None and named not in table.columns:
            raise OdtDataError(f"target='{named}' is not a column of the data (its columns are "
                               f"{', '.join(list(table.columns)[:12])}{', ...' if len(table.columns) > 12 else ''})",
                               hint=did_you_mean(named, table.columns, "column"))
        return Program(check(ast_program, table, target=named))
    try:
        table = load_table(ast_program, Path(base_dir) if base_dir is not None else None)
    except OdtDataError as exc:  # reported with every other problem of the program
        return Program(check(ast_program, None, exc))
    return Program(check(ast_program, table))


def _check_compile_arguments(text: Any, data: Any, target: Any, filename: Any, base_dir: Any, params: Any) -> str:
    """The program text of ``compile`` (bytes are read as UTF-8); ``OdtInputError`` for an
    argument ``compile`` cannot take."""
    if isinstance(text, (bytes, bytearray)):
        text = decode_utf8(bytes(text), filename if isinstance(filename, str) else "<string>", "program")
    if not isinstance(text, str):
        raise OdtInputTypeError(f"the program must be text (a str), not {_kind(text)}",
                                hint="odt.compile(\"model tree(depth <= 2)\", data=df); for a file, odt.compile_file(path)")
    if not isinstance(filename, str):
        raise OdtInputTypeError(f"filename must be a str (the name errors are reported under), not {_kind(filename)}")
    if base_dir is not None and not isinstance(base_dir, (str, os.PathLike)):
        raise OdtInputTypeError(f"base_dir must be a folder (a str or a path), not {_kind(base_dir)}")
    if target is not None and data is None:
        raise OdtInputError("target= gives the labels of data= (an array X), but no data= is given",
                            hint="pass data=X with target=y, or leave both out to read the program's data block")
    if params is not None and not isinstance(params, Mapping) and not (
            isinstance(params, (list, tuple)) and all(isinstance(o, Override) for o in params)):
        raise OdtInputTypeError(f"params must map parameter names to values, not {_kind(params)}",
                                hint="e.g. params={\"depth\": 3, \"alpha\": 0.01}")
    return text


def _kind(value: Any) -> str:
    """``value`` for a message: its type and the start of its repr."""
    name = type(value).__name__
    return "None" if value is None else f"{'an' if name[0] in 'aeiou' else 'a'} {name} ({value!r:.40})"


def compile_file(path: str | Path, data: Any = None, target: Any = None,
                 params: Mapping[str, Any] | Sequence[Override] | None = None) -> Program:
    """``compile`` of the program in the file ``path`` (its data block read relative to
    the file's folder)."""
    if not isinstance(path, (str, os.PathLike)):
        raise OdtInputTypeError(f"compile_file takes the path of a program file, not {_kind(path)}",
                                hint="for program text, use odt.compile(text)")
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise OdtError(f"program file '{path}' not found") from None
    except OSError as exc:
        raise OdtError(f"cannot read program file '{path}': {exc.strerror or exc}") from None
    text = decode_utf8(raw, str(path), "program")
    return compile(text, data=data, target=target, filename=str(path), base_dir=path.parent, params=params)
