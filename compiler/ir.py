"""The solver-neutral intermediate representation (architecture seam 3).

A ``Model`` holds boolean / integer / continuous variables with bounds and an ``Origin``
each, clauses over boolean literals (DIMACS-style signed indices), linear rows, indicator
constraints (literal => linear row) and a lexicographic list of linear objectives to
minimise. It is plain frozen data: printable, comparable, and measurable (``stats``) so
encoding sizes can be set against the papers' tables.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from . import limits
from .source import Span


class VarKind(enum.Enum):
    BOOL = "bool"
    INT = "int"
    REAL = "real"


@dataclass(frozen=True, slots=True)
class Origin:
    """Why a variable or row exists: a role key such as ``("feature", node, f)``."""

    role: tuple
    span: Span | None = field(default=None, compare=False)
    introduced: bool = False  # auxiliary (e.g. a counter bit), not a handle of the skeleton


@dataclass(frozen=True, slots=True)
class Var:
    index: int  # 1-based, so that a boolean literal is +index / -index
    kind: VarKind
    lb: float
    ub: float
    origin: Origin


@dataclass(frozen=True, slots=True)
class Clause:
    lits: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Linear:
    """sum(coef * term) (op) rhs. A term is a boolean literal (negative = 1 - x) or, for
    integer/real variables, the variable index."""

    terms: tuple[tuple[Fraction, int], ...]
    op: str  # "<=" | ">=" | "=="
    rhs: Fraction
    origin: Origin


@dataclass(frozen=True, slots=True)
class Indicator:
    """lit => row."""

    lit: int
    row: Linear


@dataclass(frozen=True, slots=True)
class Objective:
    """Minimise sum(coef * term) + constant (terms as in ``Linear``)."""

    terms: tuple[tuple[Fraction, int], ...]
    constant: Fraction = Fraction(0)
    label: str = ""


@dataclass(frozen=True, slots=True)
class Stats:
    variables: int
    bool_variables: int
    clauses: int
    literals: int
    linear_rows: int
    linear_terms: int
    indicators: int
    objective_terms: int

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in self.__slots__}  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Model:
    variables: tuple[Var, ...]
    clauses: tuple[Clause, ...]
    linears: tuple[Linear, ...]
    indicators: tuple[Indicator, ...]
    objectives: tuple[Objective, ...]  # lexicographic: the first is the most important
    roles: Mapping[tuple, int]  # role key -> variable index (the reversible pool)

    def stats(self) -> Stats:
        return Stats(
            variables=len(self.variables),
            bool_variables=sum(1 for v in self.variables if v.kind is VarKind.BOOL),
            clauses=len(self.clauses),
            literals=sum(len(c.lits) for c in self.clauses),
            linear_rows=len(self.linears),
            linear_terms=sum(len(r.terms) for r in self.linears),
            indicators=len(self.indicators),
            objective_terms=sum(len(o.terms) for o in self.objectives),
        )

    def var(self, role: tuple) -> int:
        return self.roles[role]

    def only_booleans(self) -> bool:
        return all(v.kind is VarKind.BOOL for v in self.variables)


class ModelBuilder:
    """Accumulates a ``Model``; the one mutable object of a lowering, frozen by ``build``."""

    def __init__(self) -> None:
        self._vars: list[Var] = []
        self._clauses: list[Clause] = []
        self._linears: list[Linear] = []
        self._indicators: list[Indicator] = []
        self._objectives: list[Objective] = []
        self.roles: dict[tuple, int] = {}

    def new_bool(self, role: tuple, span: Span | None = None, introduced: bool = False) -> int:
        if role in self.roles:
            raise ValueError(f"role {role} already has a variable")
        index = len(self._vars) + 1
        if not index & 0xFFF:  # a lowering is long Python work: it keeps to the time limit
            limits.check()
        self._vars.append(Var(index, VarKind.BOOL, 0.0, 1.0, Origin(role, span, introduced)))
        self.roles[role] = index
        return index

    def new_aux(self, tag: str) -> int:
        """An auxiliary boolean (encoding internals)."""
        return self.new_bool(("aux", tag, len(self._vars) + 1), introduced=True)

    def new_var(self, role: tuple, kind: VarKind, lb: float, ub: float, span: Span | None = None) -> int:
        index = len(self._vars) + 1
        self._vars.append(Var(index, kind, lb, ub, Origin(role, span)))
        self.roles[role] = index
        return index

    def clause(self, lits: Iterable[int]) -> None:
        if not len(self._clauses) & 0xFFF:
            limits.check()
        self._clauses.append(Clause(tuple(lits)))

    def clauses(self, many: Iterable[Iterable[int]]) -> None:
        limits.check()
        self._clauses.extend(Clause(tuple(c)) for c in many)

    def linear(self, terms: Iterable[tuple[Fraction, int]], op: str, rhs: Fraction, origin: Origin) -> None:
        if not len(self._linears) & 0xFF:
            limits.check()
        self._linears.append(Linear(tuple(terms), op, Fraction(rhs), origin))

    def indicator(self, lit: int, row: Linear) -> None:
        self._indicators.append(Indicator(lit, row))

    def objective(self, obj: Objective) -> None:
        self._objectives.append(obj)

    @property
    def n_vars(self) -> int:
        return len(self._vars)

    def build(self) -> Model:
        return Model(tuple(self._vars), tuple(self._clauses), tuple(self._linears), tuple(self._indicators),
                     tuple(self._objectives), dict(self.roles))


def lit_value(assignment: Mapping[int, Any] | Sequence[Any], lit: int) -> bool:
    """The truth value of a literal under an assignment indexed by variable (1-based)."""
    v = assignment[abs(lit)]
    return bool(v) if lit > 0 else not bool(v)
