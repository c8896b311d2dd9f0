"""The odt abstract syntax tree: frozen dataclasses, each carrying the ``Span`` it came from.

Produced by ``parse.py`` from the grammar in ``grammar/odt.lark``; consumed by ``check.py``.
Nothing downstream of the parser sees Lark trees. Numbers are ``Fraction`` so that
coefficients such as ``0.01`` stay exact until a backend scales them (issue 3).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TypeVar, Union

from .source import Span

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Name:
    text: str
    span: Span


# ---------------------------------------------------------------- parameters
@dataclass(frozen=True, slots=True)
class ParamDef:
    """``param depth = 3``: a named number, overridable from the command line or Python."""
    name: Name
    value: Fraction
    span: Span


@dataclass(frozen=True, slots=True)
class ParamRef:
    """A parameter's name where a number stands (``tree(depth <= depth)``,
    ``quantiles(k)``); ``params.resolve_params`` replaces it by the number."""
    name: Name
    span: Span


def resolved(value: T | ParamRef) -> T:
    """``value`` in a program whose parameters are resolved (the checker's input):
    ``params.resolve_params`` replaced every ``ParamRef`` before.

    >>> resolved(3)
    3
    """
    if isinstance(value, ParamRef):
        raise AssertionError(f"parameter '{value.name.text}' reached the checker unresolved")
    return value


class BareName(str):
    """A solve option value written as a bare name (``encoding = flow``), so that the
    parameter resolution tells it from a string (``solver = "g3"``)."""

    __slots__ = ()


# ---------------------------------------------------------------- data block (E4, S7)
@dataclass(frozen=True, slots=True)
class AllThresholds:
    """``thresholds(all)``: every midpoint between sorted unique values."""
    span: Span


@dataclass(frozen=True, slots=True)
class Quantiles:
    """``quantiles(k)``: the k-quantile cut points (unique)."""
    k: int | ParamRef
    span: Span


@dataclass(frozen=True, slots=True)
class ExplicitThresholds:
    values: tuple[Fraction | ParamRef, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class RawValues:
    """``raw``: keep the column continuous; the solver chooses thresholds (S7)."""
    span: Span


Binarization = Union[AllThresholds, Quantiles, ExplicitThresholds, RawValues]


@dataclass(frozen=True, slots=True)
class TargetItem:
    name: Name
    span: Span


@dataclass(frozen=True, slots=True)
class WeightItem:
    name: Name
    span: Span


@dataclass(frozen=True, slots=True)
class IdItem:
    name: Name
    span: Span


@dataclass(frozen=True, slots=True)
class CategoricalItem:
    names: tuple[Name, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class BinaryItem:
    names: tuple[Name, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class NumericItem:
    names: tuple[Name, ...]
    binarization: Binarization | None
    span: Span


@dataclass(frozen=True, slots=True)
class DropItem:
    names: tuple[Name, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class MissingItem:
    """``missing "?", "NA" (drop)``: cell texts that mark a missing value, and what a
    missing value in a numeric or binary column means (``drop`` its row; none: an error)."""
    markers: tuple[str, ...]
    policy: Name | None
    span: Span


DataItem = Union[TargetItem, WeightItem, IdItem, CategoricalItem, BinaryItem, NumericItem, DropItem, MissingItem]


@dataclass(frozen=True, slots=True)
class DataBlock:
    path: str | None
    items: tuple[DataItem, ...]
    span: Span


# ---------------------------------------------------------------- groups (C1)
@dataclass(frozen=True, slots=True)
class ValueName:
    name: Name
    span: Span


@dataclass(frozen=True, slots=True)
class ValueClass:
    span: Span


@dataclass(frozen=True, slots=True)
class ValueNumber:
    value: Fraction
    span: Span


@dataclass(frozen=True, slots=True)
class ValueString:
    value: str
    span: Span


Value = Union[ValueName, ValueClass, ValueNumber, ValueString]


@dataclass(frozen=True, slots=True)
class Comparison:
    left: Value
    op: str
    right: Value
    span: Span


@dataclass(frozen=True, slots=True)
class Membership:
    value: Value
    options: tuple[Value, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class BoolName:
    """A group name or a 0/1 column used as a condition."""
    name: Name
    span: Span


@dataclass(frozen=True, slots=True)
class BoolNot:
    item: "BoolExpr"
    span: Span


@dataclass(frozen=True, slots=True)
class BoolAnd:
    items: tuple["BoolExpr", ...]
    span: Span


@dataclass(frozen=True, slots=True)
class BoolOr:
    items: tuple["BoolExpr", ...]
    span: Span


BoolExpr = Union[Comparison, Membership, BoolName, BoolNot, BoolAnd, BoolOr]


@dataclass(frozen=True, slots=True)
class GroupDef:
    name: Name
    expr: BoolExpr
    span: Span


# ---------------------------------------------------------------- cost tables (C8)
@dataclass(frozen=True, slots=True)
class CostTable:
    entries: tuple[tuple[Name, Fraction | ParamRef], ...]
    default: Fraction | ParamRef | None
    span: Span
    #: misclassification costs (issue 26): ``<actual> as <predicted>: <cost>``
    pairs: tuple["CostPair", ...] = ()


@dataclass(frozen=True, slots=True)
class CostPair:
    """``<actual> as <predicted>: <cost>``: the cost of predicting ``predicted`` for a row of
    class ``actual`` (labels as written: numbers, texts or names)."""

    actual: Name
    predicted: Name
    cost: Fraction | ParamRef
    span: Span


@dataclass(frozen=True, slots=True)
class CostDef:
    name: Name
    table: CostTable
    span: Span


# ---------------------------------------------------------------- skeleton (S1-S7)
@dataclass(frozen=True, slots=True)
class ParamCompare:
    """``depth <= 3``, ``leaves <= 6``, ``depth = 4``, ``widths = [1, 2, 4]``."""
    name: Name
    op: str
    value: int | tuple[int | ParamRef, ...] | ParamRef | str
    span: Span


@dataclass(frozen=True, slots=True)
class ParamRange:
    """``depth in 1..10`` (S3)."""
    name: Name
    low: int | ParamRef
    high: int | ParamRef
    span: Span


SkeletonParam = Union[ParamCompare, ParamRange]


@dataclass(frozen=True, slots=True)
class Skeleton:
    kind: str  # "tree" | "diagram" | "bdd"
    params: tuple[SkeletonParam, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class SplitsOption:
    kind: str  # "univariate" | "multivariate"
    span: Span


@dataclass(frozen=True, slots=True)
class FeaturesOption:
    names: tuple[Name, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class ModelDef:
    skeleton: Skeleton
    options: tuple[SplitsOption | FeaturesOption, ...]
    span: Span


# ---------------------------------------------------------------- linear expressions (O, C)
@dataclass(frozen=True, slots=True)
class Number:
    value: Fraction
    span: Span


@dataclass(frozen=True, slots=True)
class Quantity:
    """A bare quantity name: ``errors``, ``nodes``, ``leaves``, ``depth``, ``accuracy``..."""
    name: Name
    span: Span


@dataclass(frozen=True, slots=True)
class StringArg:
    value: str
    span: Span


@dataclass(frozen=True, slots=True)
class ClassArg:
    span: Span


@dataclass(frozen=True, slots=True)
class Call:
    """A quantity with arguments: ``rate(1, women)``, ``errors(G)``, ``abs(x - y)``."""
    name: Name
    args: tuple["Expr", ...]
    span: Span


@dataclass(frozen=True, slots=True)
class BinOp:
    op: str  # "+", "-", "*", "/"
    left: "Expr"
    right: "Expr"
    span: Span


@dataclass(frozen=True, slots=True)
class Neg:
    item: "Expr"
    span: Span


Expr = Union[Number, Quantity, Call, BinOp, Neg, StringArg, ClassArg]


@dataclass(frozen=True, slots=True)
class Objective:
    """``minimize e1 then e2 ...`` (O1-O3, O5)."""
    sense: str  # "minimize" | "maximize"
    levels: tuple[Expr, ...]
    span: Span


# ---------------------------------------------------------------- constraints (C1-C10, O4)
@dataclass(frozen=True, slots=True)
class CostRef:
    table: CostTable | None
    name: Name | None
    span: Span


@dataclass(frozen=True, slots=True)
class Relation:
    """``a <= b`` or a chain ``a <= b <= c``, optionally ``with cost {...}`` (C8)."""
    parts: tuple[Expr, ...]
    ops: tuple[str, ...]
    cost: CostRef | None
    span: Span


@dataclass(frozen=True, slots=True)
class OrderOnPath:
    """``a before b``: on every path, b is never tested above a (C7)."""
    first: Name
    second: Name
    span: Span


@dataclass(frozen=True, slots=True)
class PathExclusion:
    """``not (f and g)``: no path tests all of these features (C9)."""
    names: tuple[Name, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Every:
    scope: str  # "node" | "leaf" | "path"
    body: Relation | OrderOnPath | PathExclusion
    span: Span


@dataclass(frozen=True, slots=True)
class UsesAtom:
    name: Name
    span: Span


@dataclass(frozen=True, slots=True)
class UsesNot:
    item: "UsesExpr"
    span: Span


@dataclass(frozen=True, slots=True)
class UsesAnd:
    items: tuple["UsesExpr", ...]
    span: Span


@dataclass(frozen=True, slots=True)
class UsesOr:
    items: tuple["UsesExpr", ...]
    span: Span


UsesExpr = Union[UsesAtom, UsesNot, UsesAnd, UsesOr]


@dataclass(frozen=True, slots=True)
class UsesConstraint:
    """A boolean formula over ``uses f`` atoms (C9)."""
    expr: UsesExpr
    span: Span


@dataclass(frozen=True, slots=True)
class CallConstraint:
    """A call standing alone as a constraint: ``same_leaf(r1, r2)`` by row id (C6)."""
    call: Call
    span: Span


@dataclass(frozen=True, slots=True)
class ThresholdRange:
    """``threshold age in [18, 65]`` for raw continuous features (C10)."""
    name: Name
    low: Fraction | ParamRef
    high: Fraction | ParamRef
    span: Span


Constraint = Union[Relation, Every, UsesConstraint, CallConstraint, ThresholdRange]


@dataclass(frozen=True, slots=True)
class ConstraintBlock:
    constraints: tuple[Constraint, ...]
    span: Span


# ---------------------------------------------------------------- solve (B1-B6)
@dataclass(frozen=True, slots=True)
class SolveOption:
    name: Name
    value: float | str | Fraction
    span: Span


@dataclass(frozen=True, slots=True)
class SolveStmt:
    backend: Name
    options: tuple[SolveOption, ...]
    strategy: Name | None
    span: Span


Item = Union[DataBlock, GroupDef, CostDef, ModelDef, Objective, ConstraintBlock, SolveStmt, ParamDef]


@dataclass(frozen=True, slots=True)
class Program:
    items: tuple[Item, ...]
    span: Span

    def of(self, kind: type) -> tuple:
        """All top-level items of one kind, in source order."""
        return tuple(item for item in self.items if isinstance(item, kind))
