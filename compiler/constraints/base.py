"""What a constraint family is: one class per family of side constraints (C3, C5-C10 and
the structural quantities), written once against the skeleton interface
(``compiler/skeletons/interface.py``) and evaluated on the decoded classifier by the same
object — so the solver encodings and the independent re-check (E2) read one definition
of each constraint's meaning.

A family

* ``claims`` the checked constraints it is responsible for;
* names the ``columns`` whose tests it reads (the ``T`` handles to build);
* ``lower``s one constraint into IR clauses and rows through the ``Structure`` handles
  (and, for constraints mixing in ordinary quantities, the context's ``quantity``);
* ``check``s one constraint on a decoded classifier through a ``ClassifierView``;
* names the ``support_keys`` of one constraint (its rows in ``compiler/support.py``);
* where dp takes it, writes one constraint into dp's search IR (``search``, the dp hook:
  ``compiler/lower_search.py`` calls it with a ``SearchParts``).

Families are listed once, in ``registry.py``; adding a constraint is one module there
and one line in the registry (plus its row in ``compiler/support.py``).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Mapping

from .. import ast
from ..checked import CheckedProgram, LinearConstraint, QuantityRef, StructuralConstraint
from ..ir import ModelBuilder, Origin
from ..skeletons.interface import Linear, Structure
from .view import ClassifierView, ConstraintCheck

Constraint = LinearConstraint | StructuralConstraint
ONE = Fraction(1)


@dataclass
class LowerContext:
    """What lowering a constraint reads besides the structure handles."""

    program: CheckedProgram
    column_of: Callable[[str], str]  # a name in the program -> its data column
    columns: list[str]  # the columns the structure has T handles for
    bucket_of_row: Callable[[str], int | None]  # a row id -> its bucket (None: not placed)
    quantity: Callable[[QuantityRef], Linear]  # an ordinary quantity through the encoding's handles
    feature_columns: list[str] = field(default_factory=list)  # every column the encoding may test
    #: one literal per column "some decision node tests it" (shared by uses and features_used)
    used: dict[str, int] = field(default_factory=dict)

    def uses_literal(self, b: ModelBuilder, st: Structure, column: str) -> int:
        """A literal equivalent to "some decision node tests ``column``" (Nanfack 4.6)."""
        if column not in self.used:
            lit = b.new_aux(f"uses_{column}")
            tests = [st.T[q, column] for q in st.internal if (q, column) in st.T]
            for t in tests:
                b.clause((-t, lit))
            b.clause([-lit] + tests)
            self.used[column] = lit
        return self.used[column]


@dataclass
class SearchParts:
    """What the families' dp hooks (``Family.search``) write for dp's search lowering
    (``compiler/lower_search.py``), by column name and row id: that module turns names
    into search dimensions once the matrix is built."""

    min_leaf: int = 1  # C5: rows per leaf
    min_node: int = 1  # C3: rows per decision node
    orders: list[tuple[str, str]] = field(default_factory=list)  # C7: (first, second)
    exclusions: list[tuple[str, ...]] = field(default_factory=list)  # C9x
    path_costs: list[LinearConstraint] = field(default_factory=list)  # C8p
    same_leaf: list[tuple[str, str]] = field(default_factory=list)  # C6: row ids
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)  # C10: column -> [lo, hi]
    uses: list[ast.UsesExpr] = field(default_factory=list)  # C9u
    max_leaf_errors: Fraction | None = None  # C11: misclassified weight per leaf


def origin(c: Constraint) -> Origin:
    return Origin(("constraint", c.span.line if c.span else 0), c.span)


def holds(diff: float, op: str, tol: float = 1e-9) -> bool:
    """``diff (op) 0`` up to the evaluator's tolerance."""
    return {"<=": diff <= tol, ">=": diff >= -tol, "==": abs(diff) <= tol}[op]


def decided(b: ModelBuilder, constant: Fraction, op: str) -> None:
    """A row with no literal left: drop it if ``constant (op) 0`` holds, else make the model
    infeasible (the empty clause)."""
    if not {"<=": constant <= 0, ">=": constant >= 0, "==": constant == 0}[op]:
        b.clause(())


def quote(c: Constraint) -> str:
    return c.span.quote() if c.span is not None else ""


def line(c: Constraint) -> int:
    return c.span.line if c.span else 0


class Family(ABC):
    """One family of side constraints. ``key`` is its row in the support table."""

    key: str = ""
    #: the family reads the structure handles (else only a feature mask, as C10)
    structural: bool = True
    #: the quantities it measures inside ``every node:`` / ``every leaf:`` / ``every path:``
    #: (scope -> names as written): the checker's vocabulary of each scope
    per: Mapping[str, frozenset[str]] = {}

    @abstractmethod
    def claims(self, c: Constraint) -> bool:
        """Whether ``c`` belongs to this family."""

    def support_keys(self, c: Constraint) -> tuple[str, ...]:
        """The rows of the support table (``compiler/support.py``) ``c`` uses; the table
        decides from them which backends take it (``compiler/constructs.py`` asks here for
        every constraint that is not a plain relation over quantities)."""
        return (self.key,)

    def columns(self, c: Constraint, column_of: Callable[[str], str]) -> set[str]:
        """The data columns whose tests ``c`` reads ("*": every feature column)."""
        return set()

    @abstractmethod
    def lower(self, b: ModelBuilder, st: Structure, c: Constraint, ctx: LowerContext) -> None:
        """Write ``c`` into ``b`` through the structure handles."""

    @abstractmethod
    def check(self, c: Constraint, view: ClassifierView) -> ConstraintCheck:
        """Re-check ``c`` on the decoded classifier (E2)."""

    def search(self, c: Constraint, parts: SearchParts) -> None:
        """dp's hook: write ``c`` into ``parts`` (called only where the support table lets
        dp take ``c``; a family dp never takes keeps this default)."""
        raise AssertionError(f"internal: the support table lets dp take '{quote(c)}' (line {line(c)}), but "
                             f"{type(self).__name__} has no dp hook")


def merge(terms: list[tuple[Fraction, int]]) -> list[tuple[Fraction, int]]:
    """Terms with one coefficient per literal (zero coefficients dropped)."""
    acc: dict[int, Fraction] = {}
    for c, lit in terms:
        acc[lit] = acc.get(lit, Fraction(0)) + c
    return [(c, lit) for lit, c in acc.items() if c != 0]
