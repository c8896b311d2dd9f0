"""The checked program: what ``check`` produces and ``lower`` / ``evaluate`` consume.

Every quantity of the language (O1-O5, C1-C10) is a ``QuantityRef``; every objective level
and every relation is a ``LinearForm`` over them with exact ``Fraction`` coefficients.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from . import ast
from .data import Dataset
from .source import Span

# Quantities the language knows, with their argument signature (used by the checker and
# for "did you mean" hints). g = group, c = class, e = expression.
QUANTITIES: dict[str, tuple[str, ...]] = {
    "errors": ("g?",),
    "accuracy": ("g?",),
    "nodes": (),
    "leaves": (),
    "depth": (),
    "features_used": (),
    "samples": (),
    "cost": (),
    "expected_cost": (),
    "predicted": ("c", "g?"),
    "rate": ("c", "g?"),
    "tp": ("g?",),
    "fp": ("g?",),
    "tn": ("g?",),
    "fn": ("g?",),
    "size": ("g?",),
    "abs": ("e",),
    # regression (issue 26, compiler/regression.py)
    "squared_error": (),
    "absolute_error": (),
    "mse": (),
    "mae": (),
    "r2": (),
    # issue 26: cost-sensitive classification (``compiler/confusion.py``); t = cost table
    "misclassification_cost": ("t",),
    "balanced_accuracy": (),
    "f1": (),
}


@dataclass(frozen=True, slots=True)
class QuantityRef:
    """One quantity: ``errors``, ``errors(women)``, ``rate(1, men)``, ``abs(<form>)``..."""

    kind: str
    group: str | None = None
    klass: int | None = None
    inner: "LinearForm | None" = None
    span: Span | None = field(default=None, compare=False, hash=False)
    #: misclassification_cost: ``matrix[actual][predicted]`` over class indices (issue 26)
    matrix: tuple[tuple[Fraction, ...], ...] | None = None

    def __str__(self) -> str:
        args = []
        if self.klass is not None:
            args.append(str(self.klass))
        if self.group is not None:
            args.append(self.group)
        if self.inner is not None:
            args.append(str(self.inner))
        return f"{self.kind}({', '.join(args)})" if args else self.kind


@dataclass(frozen=True, slots=True)
class LinearForm:
    """sum(coef * quantity) + constant, with exact coefficients."""

    terms: tuple[tuple[QuantityRef, Fraction], ...] = ()
    constant: Fraction = Fraction(0)

    @staticmethod
    def const(value: Fraction) -> "LinearForm":
        return LinearForm((), Fraction(value))

    @staticmethod
    def of(q: QuantityRef) -> "LinearForm":
        return LinearForm(((q, Fraction(1)),), Fraction(0))

    def is_constant(self) -> bool:
        return not self.terms

    def scale(self, k: Fraction) -> "LinearForm":
        if k == 0:
            return LinearForm.const(Fraction(0))
        return LinearForm(tuple((q, c * k) for q, c in self.terms), self.constant * k)

    def plus(self, other: "LinearForm") -> "LinearForm":
        acc: dict[QuantityRef, Fraction] = {}
        for q, c in self.terms + other.terms:
            acc[q] = acc.get(q, Fraction(0)) + c
        return LinearForm(tuple((q, c) for q, c in acc.items() if c != 0), self.constant + other.constant)

    def kinds(self) -> set[str]:
        return {q.kind for q, _ in self.terms}

    def __str__(self) -> str:
        parts = [f"{c}*{q}" if c != 1 else str(q) for q, c in self.terms]
        if self.constant or not parts:
            parts.append(str(self.constant))
        return " + ".join(parts)


@dataclass(frozen=True, slots=True)
class TreeSkeleton:
    """S1-S3: a binary tree of depth <= depth (or depth in depth_range), optional size limits."""

    depth: int
    leaves: int | None
    nodes: int | None
    depth_range: tuple[int, int] | None
    span: Span


@dataclass(frozen=True, slots=True)
class DiagramSkeleton:
    """S4: a levelled decision diagram with the given layer widths (Florio)."""

    widths: tuple[int, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class BddSkeleton:
    """S5: an ordered BDD with one feature per level (Hu); ``depth`` levels (the upper
    end of ``depth_range`` when the depth is searched, S3); ``bias`` decides the truth-
    table cells no training row reaches ("C" merge compatible subtrees, "P" parent
    majority, "S" the solver's value)."""

    depth: int
    span: Span
    bias: str = "C"
    depth_range: tuple[int, int] | None = None


Skeleton = TreeSkeleton | DiagramSkeleton | BddSkeleton


@dataclass(frozen=True, slots=True)
class CheckedObjective:
    sense: str  # always "minimize" after normalisation; kept for reporting
    levels: tuple[LinearForm, ...]
    span: Span
    maximized: bool = False


@dataclass(frozen=True, slots=True)
class LinearConstraint:
    """``form (op) 0`` with op in <=, >=, == (strict forms already made non-strict)."""

    form: LinearForm
    op: str
    span: Span
    scope: str | None = None  # "node" / "leaf" / "path" for every-constraints
    left: LinearForm | None = None  # the two sides as written, for reports
    right: LinearForm | None = None
    costs: "CostTable | None" = None  # with cost {...}: per-column test costs (C8)


@dataclass(frozen=True, slots=True)
class CostTable:
    """Test cost per column (C8); ``default`` for columns not listed (``*``)."""

    costs: tuple[tuple[str, Fraction], ...]
    default: Fraction = Fraction(0)

    def of(self, column: str) -> Fraction:
        return dict(self.costs).get(column, self.default)


@dataclass(frozen=True, slots=True)
class StructuralConstraint:
    """A constraint that is not a linear relation of quantities (C6-C10): kept as its AST."""

    node: Any
    span: Span


Constraint = LinearConstraint | StructuralConstraint


@dataclass(frozen=True, slots=True)
class SolveRequest:
    backend: str
    options: Mapping[str, Any]
    strategy: str | None
    span: Span | None


@dataclass(frozen=True)
class CheckedProgram:
    """A program whose every name and type is resolved against its dataset."""

    program: ast.Program
    dataset: Dataset
    groups: Mapping[str, np.ndarray]
    skeleton: Skeleton
    splits: str
    feature_mask: np.ndarray  # which binarised features the model may test
    objective: CheckedObjective
    constraints: tuple[Constraint, ...]
    solve: SolveRequest
    model_span: Span
    #: a regression program's target per data row (float64); None for classification
    target: np.ndarray | None = field(default=None, compare=False)
    #: verdicts derived from this program alone, kept once computed (which backends the
    #: support table lets take it); not an argument, so ``dataclasses.replace`` starts a
    #: copy with none
    memo: dict = field(default_factory=dict, init=False, compare=False, repr=False)
