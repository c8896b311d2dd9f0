"""The ``maxsat`` backend: IR -> weighted CNF, solved in-process with RC2 (python-sat).

Hard part: the model's clauses, plus every linear row encoded by ``compiler.encode.pb``
(sequential counter for unit weights, BDD for integer weights). Soft part: each objective
term ``c * lit`` becomes the soft clause (not lit) with weight c (c > 0) or (lit) with
weight |c| plus the constant c (c < 0); rational coefficients are scaled exactly to
integers; zero weights are never emitted (RC2 would make them hard). Lexicographic levels
are combined with weights that dominate every lower level (Boolean lexicographic
optimisation). Hu et al. (MaxSAT for BDDs) and the soft-clause view of errors follow this.

Time limits: RC2 is interrupted by a timer (python-sat >= 1.8.dev26); the core-guided
cost reached so far is a proven lower bound. On interrupt a plain SAT call on the hard
clauses supplies a feasible incumbent if one exists within the remaining grace time.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from fractions import Fraction
from math import lcm

from pysat.examples.rc2 import RC2, RC2Stratified
from pysat.formula import WCNF
from pysat.solvers import Solver

from odt.compiler import ir
from odt.compiler.encode import pb

from .base import Artifact, Backend, BackendResult, Capability, Progress, SolveOptions, Status, Stopwatch


@dataclass(frozen=True)
class WeightedCnf:
    n_vars: int
    hard: tuple[tuple[int, ...], ...]
    soft: tuple[tuple[tuple[int, ...], int], ...]
    offset: Fraction  # objective value = (sum of violated soft weights) / scale + offset
    scale: int
    level_scales: tuple[tuple[int, int], ...]  # per level: (integer scale, multiplier in the combined weight)


def to_wcnf(model: ir.Model) -> WeightedCnf:
    """Translate a pure-boolean IR model to hard and soft clauses."""
    top = [len(model.variables)]

    def new_var() -> int:
        top[0] += 1
        return top[0]

    hard: list[tuple[int, ...]] = [c.lits for c in model.clauses]
    for row in model.linears:
        terms, rhs = pb.integer_row(row.terms, row.rhs)
        enc = {"<=": pb.at_most, ">=": pb.at_least, "==": pb.equal}[row.op]
        hard.extend(tuple(c) for c in enc(terms, rhs, new_var))
    # objective levels, least important last; each level's weights are integers after scaling
    levels = []
    for obj in model.objectives:
        scale = 1
        for c, _ in obj.terms:
            scale = lcm(scale, c.denominator)
        soft_level: dict[int, int] = {}
        constant = obj.constant * scale
        for c, lit in obj.terms:
            w = int(c * scale)
            if w > 0:
                soft_level[-lit] = soft_level.get(-lit, 0) + w
            elif w < 0:
                soft_level[lit] = soft_level.get(lit, 0) - w
                constant += w
        levels.append((soft_level, scale, constant))
    soft: list[tuple[tuple[int, ...], int]] = []
    multiplier = 1
    level_scales = []
    for soft_level, scale, constant in reversed(levels):
        for lit, w in soft_level.items():
            if w > 0:
                soft.append(((lit,), w * multiplier))
        level_scales.append((scale, multiplier))
        multiplier *= sum(soft_level.values()) + 1
    level_scales.reverse()
    offset = Fraction(0)
    first_scale = level_scales[0] if level_scales else (1, 1)
    if levels:
        offset = Fraction(levels[0][2], levels[0][1])
    return WeightedCnf(top[0], tuple(hard), tuple(soft), offset, first_scale[0], tuple(level_scales))


def write_wcnf(w: WeightedCnf, legacy: bool = False) -> str:
    """WCNF text: the 2022 format (``h`` lines) by default, or the legacy ``p wcnf`` one."""
    lines = ["c odt: weighted CNF of a compiled odt program"]
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

    def solve(self, model: ir.Model, options: SolveOptions) -> BackendResult:
        clock = Stopwatch()
        w = to_wcnf(model)
        formula = WCNF()
        for c in w.hard:
            formula.append(list(c))
        for c, wt in w.soft:
            formula.append(list(c), weight=wt)
        if any(len(c) == 0 for c in w.hard):
            return BackendResult(Status.INFEASIBLE, None, None, None, clock.elapsed(), "empty hard clause")
        solver_name = options.extra.get("solver", "g3")
        distinct = len({wt for _, wt in w.soft})
        cls = RC2Stratified if distinct > 1 else RC2
        rc2 = cls(formula, solver=solver_name, adapt=True, exhaust=True, minz=True, verbose=0)
        timer = None
        interrupted = threading.Event()
        if options.time_limit is not None:
            def fire() -> None:
                interrupted.set()
                rc2.interrupt()
            timer = threading.Timer(max(0.0, options.time_limit - clock.elapsed()), fire)
            timer.daemon = True
            timer.start()
        try:
            model_lits = rc2.compute(expect_interrupt=True) if options.time_limit is not None else rc2.compute()
        finally:
            if timer is not None:
                timer.cancel()
        lower = Fraction(rc2.cost)
        if model_lits is not None:
            values = _values(model_lits, w.n_vars)
            levels = _level_values(model, values)
            status = Status.OPTIMAL
            bound = levels[0] if levels else None
        elif interrupted.is_set():
            rc2.delete()
            values = _feasible(w, grace=min(5.0, max(1.0, 0.05 * (options.time_limit or 0))))
            if values is None:
                return BackendResult(Status.UNKNOWN, None, None, self._bound(w, lower), clock.elapsed(), "interrupted")
            levels = _level_values(model, values)
            status = Status.FEASIBLE
            bound = self._bound(w, lower)
        else:
            rc2.delete()
            return BackendResult(Status.INFEASIBLE, None, None, None, clock.elapsed(), "hard clauses unsatisfiable")
        if model_lits is not None:
            rc2.delete()
        if options.on_progress is not None and levels:
            options.on_progress(Progress(clock.elapsed(), levels[0], bound))
        return BackendResult(status, values, tuple(levels), bound, clock.elapsed(),
                             f"RC2 ({cls.__name__}, {solver_name}): {len(w.hard)} hard, {len(w.soft)} soft clauses")

    @staticmethod
    def _bound(w: WeightedCnf, cost: Fraction) -> Fraction | None:
        if not w.level_scales:
            return None
        scale, multiplier = w.level_scales[0]
        return Fraction(int(cost) // multiplier, scale) + w.offset


def _values(lits: list[int], n: int) -> tuple[bool, ...]:
    vals = [False] * (n + 1)
    for l in lits:
        if abs(l) <= n:
            vals[abs(l)] = l > 0
    return tuple(vals)


def _level_values(model: ir.Model, values: tuple[bool, ...]) -> list[Fraction]:
    out = []
    for obj in model.objectives:
        total = Fraction(obj.constant)
        for c, lit in obj.terms:
            if ir.lit_value(values, lit):
                total += c
        out.append(total)
    return out


def _feasible(w: WeightedCnf, grace: float) -> tuple[bool, ...] | None:
    """A model of the hard clauses alone (the incumbent after an interrupt), or None."""
    with Solver(name="g3", bootstrap_with=[list(c) for c in w.hard]) as s:
        timer = threading.Timer(grace, s.interrupt)
        timer.start()
        try:
            ok = s.solve_limited(expect_interrupt=True)
        finally:
            timer.cancel()
        if ok:
            return _values(s.get_model(), w.n_vars)
    return None
