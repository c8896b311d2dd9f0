"""The ``maxsat`` backend: IR -> weighted CNF, solved in-process with RC2 (python-sat).

Hard part: the model's clauses, plus every linear row encoded by ``compiler.encode.pb``
(sequential counter for unit weights, BDD for integer weights). Soft part: each objective
term ``c * lit`` becomes the soft clause (not lit) with weight c (c > 0) or (lit) with
weight |c| plus the constant c (c < 0); rational coefficients are scaled exactly to
integers; zero weights are never emitted (RC2 would make them hard). Lexicographic levels
are combined with weights that dominate every lower level (Boolean lexicographic
optimisation). Hu et al. (MaxSAT for BDDs) and the soft-clause view of errors follow this.

Time limits: a short SAT-UNSAT linear search first finds an incumbent; RC2 is then
interrupted by a timer (python-sat >= 1.8.dev26) at 75% of the budget, its core-guided
cost so far a proven lower bound; the linear search resumes below the incumbent for the
rest. The linear searches run on MiniSat, which honours an interrupt within a conflict
(``LINEAR_SEARCH_SOLVER``), and write a cost row only while time is left for it.
"""
from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from fractions import Fraction

from odt.compiler import ir, limits
from odt.compiler.encode import objective, pb
from odt.compiler.errors import did_you_mean
from odt.compiler.support import unsupported

from .base import Artifact, Backend, BackendResult, Capability, Progress, SolveOptions, Status, Stopwatch


@dataclass(frozen=True)
class WeightedCnf:
    n_vars: int
    hard: tuple[tuple[int, ...], ...]
    soft: tuple[tuple[tuple[int, ...], int], ...]
    objective: objective.Combined
    labels: tuple[str, ...] = ()  # the objective levels as the program writes them


def to_wcnf(model: ir.Model, cutoff: Fraction | None = None) -> WeightedCnf:
    """Translate a pure-boolean IR model to hard and soft clauses; with a ``cutoff`` (B4)
    the hard part also demands a cost strictly below it."""
    top = [len(model.variables)]

    def new_var() -> int:
        top[0] += 1
        return top[0]

    hard: list[tuple[int, ...]] = [c.lits for c in model.clauses]
    for row in model.linears:
        terms, rhs = pb.integer_row(row.terms, row.rhs)
        enc = {"<=": pb.at_most, ">=": pb.at_least, "==": pb.equal}[row.op]
        hard.extend(tuple(c) for c in enc(terms, rhs, new_var))
    combined = objective.combine(model.objectives)
    # a true literal with weight w costs w: the soft clause is its negation
    soft = tuple(((-lit,), w) for w, lit in combined.weights if w > 0)
    below = objective.strictly_below(combined, cutoff)
    if below is not None:
        hard.extend(tuple(c) for c in pb.at_most([(w, lit) for w, lit in combined.weights], below, new_var))
    return WeightedCnf(top[0], tuple(hard), soft, combined, tuple(o.label for o in model.objectives))


def write_wcnf(w: WeightedCnf, legacy: bool = False) -> str:
    """WCNF text: the 2022 format (``h`` lines) by default, or the legacy ``p wcnf`` one."""
    lines = ["c odt: weighted CNF of a compiled odt program"]
    lines += [f"c {text}" for text in objective.describe(w.objective, w.labels)]
    if legacy:
        top = sum(wt for _, wt in w.soft) + 1
        lines.append(f"p wcnf {w.n_vars} {len(w.hard) + len(w.soft)} {top}")
        lines += [f"{top} {' '.join(map(str, c))} 0" for c in w.hard]
    else:
        lines += [f"h {' '.join(map(str, c))} 0" for c in w.hard]
    lines += [f"{wt} {' '.join(map(str, c))} 0" for c, wt in w.soft]
    return "\n".join(lines) + "\n"


class MaxSatBackend(Backend):
    NAME = "maxsat"
    CAPABILITIES = frozenset({Capability.BOOL_VARS, Capability.LINEAR_ROWS, Capability.LEXICOGRAPHIC,
                              Capability.ANYTIME})
    FILE_FORMAT = "wcnf"

    def emit(self, model: ir.Model, legacy: bool = False) -> Artifact:
        return Artifact("wcnf", write_wcnf(to_wcnf(model), legacy))

    @classmethod
    def check_options(cls, options):
        name = options.get("solver")
        if name is None:
            return None
        known = sat_solver_names()
        if name not in known:
            return (f"unknown SAT solver '{name}' (the solver option names the SAT solver under RC2)",
                    did_you_mean(str(name), known, "solver"))
        found = probe(name)
        if not found.available:
            return (f"the SAT solver '{name}' is not available here: {found.why}",
                    "name another, e.g. solver = \"g3\"")
        return None

    @classmethod
    def check_run(cls, options: SolveOptions) -> tuple[str, str, str | None, str] | None:
        name = options.extra.get("solver", RC2_SOLVER)
        if options.time_limit is not None and not interruptible(name):
            return (f"the SAT solver '{name}' under a time limit",
                    f"'{name}' cannot be interrupted (python-sat offers no limited solve for it), so maxsat cannot "
                    "keep a time limit with it",
                    "name one that can (Glucose, MiniSat, MapleCM, ...: \"g3\", \"g4\", \"mgh\", \"m22\", "
                    "\"maplecm\"), or solve without a time limit", "solver")
        return None

    def solve(self, model: ir.Model, options: SolveOptions) -> BackendResult:
        """RC2 to optimality. With a time limit: a short linear SAT-UNSAT search for a first
        incumbent, RC2 up to 75% of the budget (its core-guided cost is a proven lower
        bound), and, if RC2 did not finish, linear search again below the incumbent. A
        stop from outside (``compiler.limits``: a signal, the process's hard deadline)
        returns the best model found so far."""
        clock = Stopwatch()
        held: dict = {}
        try:
            return self._solve(model, options, clock, held)
        except limits.Stopped:
            if held.get("best") is None:
                raise
            levels = objective.level_values(model.objectives, held["best"])
            w = held["w"]
            return BackendResult(Status.FEASIBLE, held["best"], tuple(levels),
                                 w.objective.first_level_bound(held.get("lower", 0)), clock.elapsed(),
                                 "stopped from outside; the best model found is the incumbent")

    def _solve(self, model: ir.Model, options: SolveOptions, clock: Stopwatch, held: dict) -> BackendResult:
        options = dataclasses.replace(options, time_limit=limits.budget(options.time_limit))
        w = to_wcnf(model, options.extra.get("cutoff"))
        held["w"] = w
        if any(len(c) == 0 for c in w.hard):
            return BackendResult(Status.INFEASIBLE, None, None, None, clock.elapsed(), "empty hard clause")
        solver_name = options.extra.get("solver", RC2_SOLVER)
        lsu_name = options.extra.get("solver", LINEAR_SEARCH_SOLVER)
        refused = self.check_run(options)
        if refused is not None:
            raise unsupported(refused[0], refused[1], backend=self.NAME, hint=refused[2])
        best: tuple[bool, ...] | None = None
        best_cost: int | None = None
        lower = 0
        log = []

        def report(cost: int | None, bound: int) -> None:
            if options.on_progress is not None:
                inc = None if cost is None else w.objective.first_level_bound(cost)
                options.on_progress(Progress(clock.elapsed(), inc, w.objective.first_level_bound(bound)))

        if options.time_limit is not None:  # a quick first incumbent (5% of the budget, at most 2 s)
            lsu = linear_search(w, lsu_name, deadline=clock.start + min(2.0, 0.05 * options.time_limit),
                                on_improve=lambda cost: report(cost, lower), held=held)
            if lsu.infeasible:
                return BackendResult(Status.INFEASIBLE, None, None, None, clock.elapsed(), "hard clauses unsatisfiable")
            best, best_cost = lsu.values, lsu.cost
            log.append(f"linear search: {lsu.iterations} models, best cost {lsu.cost}")
            if lsu.optimal and best is not None:
                return self._finish(model, w, best, True, clock, log, report)
        run = _run_rc2(w, solver_name, options, clock)
        if run.no_time_left:
            options = dataclasses.replace(options, time_limit=0.0)
        found, lower = run.found, run.lower
        held["lower"] = lower
        log.append(f"RC2 ({run.solver_class}, {solver_name}): {len(w.hard)} hard, {len(w.soft)} soft clauses, "
                   f"returned at {clock.elapsed():.2f} s")
        if found is not None:
            return self._finish(model, w, _values(found, w.n_vars), True, clock, log, report)
        if not run.interrupted:
            return BackendResult(Status.INFEASIBLE, None, None, None, clock.elapsed(), "hard clauses unsatisfiable")
        bound = w.objective.first_level_bound(lower)
        if options.time_limit is None:  # interrupted by a signal without a time limit
            options = dataclasses.replace(options, time_limit=0.0)
        lsu = linear_search(w, lsu_name, deadline=clock.start + (options.time_limit or 0.0),
                            on_improve=lambda cost: report(cost, lower), upper=best_cost, held=held)
        if lsu.values is not None:
            best, best_cost = lsu.values, lsu.cost
            log.append(f"linear search after RC2: {lsu.iterations} models, best cost {lsu.cost}")
            if lsu.optimal and best is not None:
                return self._finish(model, w, best, True, clock, log, report)
        if best is None:
            return BackendResult(Status.UNKNOWN, None, None, bound, clock.elapsed(), "; ".join(log + ["interrupted"]))
        report(best_cost, lower)
        levels = objective.level_values(model.objectives, best)
        return BackendResult(Status.FEASIBLE, best, tuple(levels), bound, clock.elapsed(), "; ".join(log))

    @staticmethod
    def _finish(model: ir.Model, w: WeightedCnf, values: tuple[bool, ...], optimal: bool, clock: Stopwatch,
                log: list[str], report) -> BackendResult:
        levels = objective.level_values(model.objectives, values)
        cost = sum(wt for (lit,), wt in w.soft if not ir.lit_value(values, lit))
        report(cost, cost)
        return BackendResult(Status.OPTIMAL, values, tuple(levels), levels[0] if levels else None, clock.elapsed(),
                             "; ".join(log))


#: the SAT solver under RC2 unless the program names one (``solve maxsat(solver = "...")``):
#: Glucose 3, RC2's own default
RC2_SOLVER = "g3"
#: the SAT solver of the linear searches unless the program names one: MiniSat (GitHub
#: version). Glucose looks at an interrupt only between restarts, which it may block for
#: long: measured on bdd(depth = 2) with 6 s left, Glucose 3 ran 23 s past the deadline
#: on yeast and Glucose 4.1 5 s on vehicle, while MiniSat stopped within 0.05 s on yeast,
#: vehicle, cancer and heart-statlog and found the best incumbents (vehicle 185 against
#: 203 / 208, cancer 42 against 79 / 91)
LINEAR_SEARCH_SOLVER = "mgh"


@dataclass
class LinearSearch:
    values: tuple[bool, ...] | None
    cost: int | None
    optimal: bool
    infeasible: bool
    iterations: int


#: clauses of a cost row that linear_search can write and hand to the solver per second
#: (pysat writes a cardinality network at ~1.8 M clauses/s; a quarter of it, for loaded machines)
_CLAUSES_PER_SECOND = 500_000


def linear_search(w: WeightedCnf, solver_name: str, deadline: float, on_improve,
                  upper: int | None = None, held: dict | None = None) -> LinearSearch:
    """SAT-UNSAT linear search: find a model, then demand a cheaper one (the cost bound as
    a pseudo-Boolean row over the violated soft clauses), until UNSAT or the deadline.
    Each step is an ordinary SAT call on one incremental solver, so learnt clauses stay."""
    import time

    from pysat.solvers import Solver

    top = [w.n_vars]

    def new_var() -> int:
        top[0] += 1
        return top[0]

    best: tuple[bool, ...] | None = None
    cost: int | None = None
    iterations = 0
    unit = all(wt == 1 for _, wt in w.soft)  # the cost row is a cardinality row (pb.card_size)
    with Solver(name=solver_name, bootstrap_with=[list(c) for c in w.hard]) as s:
        # prefer satisfying soft clauses: the first models are then already good ones
        s.set_phases([lit for (lit,), _ in w.soft])
        if upper is not None:  # only improvements on a known incumbent are of interest
            if not _add_cost_row(s, w, upper - 1, new_var, deadline):
                return LinearSearch(best, cost, False, False, iterations)
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return LinearSearch(best, cost, False, False, iterations)
            timer = threading.Timer(remaining, s.interrupt)
            timer.daemon = True
            timer.start()
            try:
                with limits.native(s.interrupt):
                    sat = s.solve_limited(expect_interrupt=True)
            finally:
                timer.cancel()
                s.clear_interrupt()
            if sat is None:
                return LinearSearch(best, cost, False, False, iterations)
            if not sat:  # no model cheaper than the incumbent (or than `upper`) exists
                return LinearSearch(best, cost, best is not None, best is None and upper is None, iterations)
            iterations += 1
            best = _values(s.get_model(), w.n_vars)
            cost = sum(wt for (lit,), wt in w.soft if not ir.lit_value(best, lit))
            if held is not None and (held.get("cost") is None or cost < held["cost"]):
                held["best"], held["cost"] = best, cost
            on_improve(cost)
            if cost == 0:
                return LinearSearch(best, cost, True, False, iterations)
            if time.perf_counter() >= deadline:  # no time to encode the next bound
                return LinearSearch(best, cost, False, False, iterations)
            if unit and pb.card_size(len(w.soft), cost - 1) > _CLAUSES_PER_SECOND * (deadline - time.perf_counter()):
                return LinearSearch(best, cost, False, False, iterations)  # the bound would overrun the deadline
            if not _add_cost_row(s, w, cost - 1, new_var, deadline):
                return LinearSearch(best, cost, False, False, iterations)


#: clauses handed to the SAT solver between two looks at the clock
_CHUNK = 20_000


def _add_cost_row(s, w: WeightedCnf, bound: int, new_var, deadline: float) -> bool:
    """Add the cost row sum(wt * [soft clause violated]) <= bound to the solver ``s``; False
    when it cannot be written and handed over before ``deadline`` (the solver is then
    left with part of the row and must not be asked again). A weighted row is a BDD
    (``pb``) whose size depends on the weights, built in Python: it is built under a time
    scope of its own, so its cooperative checks stop it at the deadline (yeast's rows
    merge duplicate rows into weights: 0.94 M clauses, 2.7 s, past a 1.4 s deadline)."""
    import time

    remaining = deadline - time.perf_counter()
    if remaining <= 0:
        return False
    # violated soft clause (lit) means lit is false: sum(wt * not lit) <= bound
    terms = [(wt, -lit) for (lit,), wt in w.soft]
    try:
        with limits.time_limit(remaining + limits.reserve(remaining)):
            clauses = pb.at_most(terms, bound, new_var)
            for start in range(0, len(clauses), _CHUNK):
                limits.check()
                s.append_formula(clauses[start:start + _CHUNK])
    except limits.Stopped:
        if limits.stop_reason() is not None:  # a signal, not this row's deadline: the caller stops
            raise
        return False
    return True


def _values(lits: list[int], n: int) -> tuple[bool, ...]:
    vals = [False] * (n + 1)
    for l in lits:
        if abs(l) <= n:
            vals[abs(l)] = l > 0
    return tuple(vals)


@dataclass(frozen=True)
class _Probe:
    """What one SAT solver of python-sat can do here."""

    available: bool  # it can be made (CryptoMiniSat needs the package pycryptosat)
    interruptible: bool  # ``solve_limited`` with ``expect_interrupt`` (CaDiCaL has none)
    why: str  # when unavailable: what python-sat said


_PROBES: dict[str, _Probe] = {}


def probe(name: str) -> _Probe:
    """Make the SAT solver ``name`` on a two-clause formula and try an interruptible call
    (once per name and process)."""
    found = _PROBES.get(name)
    if found is None:
        import pysat.solvers as ps

        if name in getattr(ps.SolverNames, "cryptosat", ()) and not getattr(ps, "cms_present", True):
            found = _PROBES[name] = _Probe(False, False, "CryptoMiniSat needs the package pycryptosat")
            return found  # (making one anyway prints python-sat's own errors from its __del__)
        try:
            s = ps.Solver(name=name, bootstrap_with=[[1, 2], [-1]])  # not empty: MapleSAT crashes on that
        except Exception as exc:  # python-sat asserts when an optional package is missing
            found = _Probe(False, False, str(exc) or type(exc).__name__)
        else:
            try:
                s.solve_limited(expect_interrupt=True)
                s.clear_interrupt()
                found = _Probe(True, True, "")
            except NotImplementedError:
                found = _Probe(True, False, "")
            finally:
                s.delete()
        _PROBES[name] = found
    return found


def interruptible(name: str) -> bool:
    return probe(name).interruptible


def sat_solver_names() -> list[str]:
    """Every name python-sat accepts for a SAT solver (``g3``, ``cadical195``, ...)."""
    from pysat.solvers import SolverNames

    return sorted({alias for names in vars(SolverNames).values() if isinstance(names, tuple) for alias in names})


@dataclass(frozen=True)
class _Rc2Run:
    """What one RC2 run left: its model (None when interrupted or unsatisfiable), whether
    it was interrupted, the lower bound on the cost it proved, and whether the time is spent
    (a signal, Ctrl-C or the hard deadline: no search may follow)."""

    found: list[int] | None
    interrupted: bool
    lower: int
    no_time_left: bool
    solver_class: str


def _run_rc2(w: WeightedCnf, solver_name: str, options: SolveOptions, clock: Stopwatch) -> _Rc2Run:
    """RC2 (stratified when the soft weights differ) on ``w``, interrupted at 75% of the
    time limit so the rest can improve the incumbent, or by a signal or the deadline."""
    from pysat.examples.rc2 import RC2, RC2Stratified  # python-sat loads only when maxsat runs
    from pysat.formula import WCNF

    formula = WCNF()
    for c in w.hard:
        formula.append(list(c))
    for c, wt in w.soft:
        formula.append(list(c), weight=wt)
    distinct = len({wt for _, wt in w.soft})
    cls = RC2Stratified if distinct > 1 else RC2
    # core exhaustion and minimisation run SAT calls that an interrupt does not stop
    # (seen: 8 s past a 3 s limit), so a time-limited solve does without them
    limited = options.time_limit is not None
    rc2 = cls(formula, solver=solver_name, adapt=True, exhaust=not limited, minz=not limited, verbose=0)
    interrupted = threading.Event()
    at_interrupt = [0]
    timer = None
    no_time_left = False
    if options.time_limit is not None:
        def fire() -> None:
            # RC2's cost is a lower bound only between core steps: after an interrupt
            # its loops see unfinished SAT calls and keep adding to it, so read it first
            at_interrupt[0] = int(rc2.cost)
            interrupted.set()
            rc2.interrupt()
        rc2_budget = 0.75 * options.time_limit - clock.elapsed()  # the rest improves the incumbent
        timer = threading.Timer(max(0.0, rc2_budget), fire)
        timer.daemon = True
        timer.start()

    def stop() -> None:  # a signal or the hard deadline: like the timer, then no more search
        if not interrupted.is_set():
            at_interrupt[0] = int(rc2.cost)
            interrupted.set()
        rc2.interrupt()

    try:
        with limits.native(stop):
            found = rc2.compute(expect_interrupt=True)
    except KeyboardInterrupt:  # Ctrl-C without the CLI's handlers: stop and return what we have
        found = None
        at_interrupt[0] = 0  # the cost seen now may include unfinished steps
        interrupted.set()
        no_time_left = True
    finally:
        if timer is not None:
            timer.cancel()
    if limits.stop_reason() is not None:
        no_time_left = True
    lower = at_interrupt[0] if interrupted.is_set() else int(rc2.cost)
    rc2.delete()
    return _Rc2Run(found, interrupted.is_set(), lower, no_time_left, cls.__name__)
