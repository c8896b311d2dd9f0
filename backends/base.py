"""The backend seam (architecture seam 4): one base class, declared capabilities.

A backend turns an IR ``Model`` into a solver's input (``emit``) and solves it (``solve``),
returning a uniform ``BackendResult``. ``check_capabilities`` runs before either, so a
program that needs something a backend lacks is refused before any solving, with the
construct, its source line and the backends that do accept it (the support table,
``compiler/support.py``, decides that before any lowering; ``check_capabilities`` is the
last guard on the IR itself).

A *program backend* (``PROGRAM = True``, dp) takes no IR: it searches the checked program
itself (``solve_program``), building what it reads from it on its own.
"""
from __future__ import annotations

import abc
import enum
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, ClassVar, Mapping

from odt.compiler import ir
from odt.compiler.checked import CheckedProgram
from odt.compiler.searches import Searches
from odt.compiler.support import unsupported


class Capability(enum.Enum):
    BOOL_VARS = "boolean variables"
    INT_VARS = "integer variables"
    REAL_VARS = "continuous variables"
    LINEAR_ROWS = "linear constraints"
    INDICATORS = "indicator constraints"
    LEXICOGRAPHIC = "lexicographic objectives"
    ANYTIME = "anytime solving (incumbent on time-out)"
    INCREMENTAL = "incremental solving"


class Status(enum.Enum):
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Progress:
    elapsed: float
    incumbent: Fraction | None
    bound: Fraction | None
    #: what the engine wants users to see, e.g. the dp front engine's largest front
    note: str = ""

    @property
    def gap(self) -> float | None:
        if self.incumbent is None or self.bound is None:
            return None
        if self.incumbent == 0 or self.bound >= self.incumbent:
            return 0.0
        return min(1.0, float((self.incumbent - self.bound) / abs(self.incumbent)))  # never over 100%


@dataclass(frozen=True)
class SolveOptions:
    time_limit: float | None = None
    threads: int = 1
    seed: int = 0
    verbose: bool = False
    on_progress: Callable[[Progress], None] | None = None
    #: per-backend options: "solver" (maxsat's SAT solver), "cutoff" and "floor" (the value to
    #: beat and a proven bound, from warm starts and dp bounds), "bound_only" (dp BDDs: the
    #: caller reads the bound, so the winner is decoded in any order rather than the smallest),
    #: "scheduler" (dp: a Dask scheduler's address for the deep search's root)
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class BackendResult:
    status: Status
    values: tuple[bool, ...] | None  # truth value of IR variable i at index i (index 0 unused)
    objective: tuple[Fraction, ...] | None  # value of each objective level, solver's view
    bound: Fraction | None  # proven lower bound on the first level
    seconds: float
    log: str = ""
    errors: Fraction | None = None  # program backends (dp): the engine's own training errors


@dataclass(frozen=True)
class Artifact:
    """What ``emit`` produces: the text (or object) and a suggested file suffix."""

    suffix: str
    content: str | bytes
    extra: dict = field(default_factory=dict)  # further files: suffix -> content


def required_capabilities(model: ir.Model) -> dict[Capability, ir.Origin | None]:
    """The capabilities ``model`` needs, each with an origin that shows where it comes from."""
    need: dict[Capability, ir.Origin | None] = {}
    for v in model.variables:
        kind = {ir.VarKind.BOOL: Capability.BOOL_VARS, ir.VarKind.INT: Capability.INT_VARS,
                ir.VarKind.REAL: Capability.REAL_VARS}[v.kind]
        need.setdefault(kind, v.origin)
    for row in model.linears:
        need.setdefault(Capability.LINEAR_ROWS, row.origin)
    for ind in model.indicators:
        need.setdefault(Capability.INDICATORS, ind.row.origin)
    if len(model.objectives) > 1:
        need.setdefault(Capability.LEXICOGRAPHIC, None)
    return need


class Backend(abc.ABC):
    NAME: ClassVar[str]
    CAPABILITIES: ClassVar[frozenset[Capability]]
    FILE_FORMAT: ClassVar[str]
    #: the skeleton encoding this backend solves best ("paths": clauses; "flow": MILP rows)
    ENCODING: ClassVar[str] = "paths"
    #: a program backend: ``solve_program`` on the checked program instead of ``emit``/``solve`` on an IR
    PROGRAM: ClassVar[bool] = False

    @classmethod
    def available(cls) -> bool:
        return True

    @classmethod
    def check_capabilities(cls, model: ir.Model, others: dict[str, frozenset[Capability]] | None = None) -> None:
        for cap, origin in required_capabilities(model).items():
            if cap in cls.CAPABILITIES:
                continue
            accepting = sorted(n for n, caps in (others or {}).items() if cap in caps)
            span = origin.span if origin is not None else None
            where = f" (from '{span.quote()}', line {span.line})" if span is not None and span.source else ""
            raise unsupported(f"{cap.value}{where}", f"its solver interface has no {cap.value}", span, backend=cls.NAME,
                              takers=accepting, hint=None if accepting else "no backend supports it yet")

    @classmethod
    def check_options(cls, options: Mapping[str, Any]) -> tuple[str, str | None] | None:
        """Why the ``solve`` directive's ``options`` are not valid for this backend, as
        (message, hint), or None. The checker validates the option names and kinds; the
        values only a backend knows (the SAT solver names of ``solver``) are checked here."""
        return None

    @classmethod
    def check_run(cls, options: SolveOptions) -> tuple[str, str, str | None, str] | None:
        """Why this backend cannot run with these ``options`` together (say, a solver that
        cannot keep a time limit), as (the construct, the reason, a hint, the option to
        point at) for ``compiler.support.unsupported``, or None."""
        return None

    @abc.abstractmethod
    def emit(self, model: ir.Model) -> Artifact: ...

    @abc.abstractmethod
    def solve(self, model: ir.Model, options: SolveOptions) -> BackendResult: ...

    def solve_program(self, searches: Searches, options: SolveOptions) -> tuple[Any, BackendResult]:
        """A program backend's solve: the classifier it found (or None) and its result, every
        objective level claimed and its training ``errors`` set; it builds what it searches
        from ``searches`` (each search IR of the checked program, built once)."""
        raise NotImplementedError(f"backend '{self.NAME}' solves IR models (solve), not programs")

    @classmethod
    def describe(cls, program: CheckedProgram) -> str:
        """What a program backend would search for ``program`` (``odtc check``), from counts."""
        raise NotImplementedError(f"backend '{cls.NAME}' builds an encoding: estimate its size instead")


class Stopwatch:
    def __init__(self) -> None:
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start
