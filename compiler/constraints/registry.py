"""Every constraint family, listed once. A constraint the language gains is one module in
this package (a ``Family``), one line here, and its rows in ``compiler/support.py``: the
checker's vocabulary per node, leaf and path (``scoped_quantities``), the support table's
rows (``Family.support_keys``), the solver encodings (``Family.lower``), dp's search IR
(``Family.search``) and the re-check (``Family.check``) all find it here."""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from ..checked import CheckedProgram
from .base import Constraint, Family
from .expected_cost import ExpectedCost
from .features_used import FeaturesUsed
from .leaf_errors import LeafErrors
from .path_cost import PathCost
from .path_exclusion import PathExclusion
from .path_order import PathOrder
from .samples import Samples
from .same_leaf import SameLeaf
from .threshold_range import ThresholdRange
from .uses import Uses

FAMILIES: tuple[Family, ...] = (
    Samples(),
    PathCost(),
    ExpectedCost(),
    FeaturesUsed(),
    PathOrder(),
    PathExclusion(),
    Uses(),
    SameLeaf(),
    ThresholdRange(),
    LeafErrors(),
)


def scoped_quantities(scope: str) -> frozenset[str]:
    """The quantities a constraint may name inside ``every <scope>:`` (the families' ``per``)."""
    return frozenset().union(*(f.per.get(scope, frozenset()) for f in FAMILIES))


def family_of(c: Constraint) -> Family | None:
    """The family responsible for ``c`` (None: an ordinary linear constraint over quantities)."""
    return next((f for f in FAMILIES if f.claims(c)), None)


def is_structural(c: Constraint) -> bool:
    """``c`` reads the structure handles (nodes, leaves, paths, tests, row placement)."""
    f = family_of(c)
    return f is not None and f.structural


def needs_structure(program: CheckedProgram) -> bool:
    return any(is_structural(c) for c in program.constraints)


def mentioned_columns(constraints: Iterable[Constraint], column_of: Callable[[str], str]) -> set[str]:
    """The columns whose tests the constraints read ("*": every feature column)."""
    out: set[str] = set()
    for c in constraints:
        f = family_of(c)
        if f is not None and f.structural:
            out |= f.columns(c, column_of)
    return out


def restrict_features(program: CheckedProgram, mask: np.ndarray) -> np.ndarray:
    """The model's feature mask less what the constraints forbid (C10)."""
    mask = mask.copy()
    for c in program.constraints:
        f = family_of(c)
        if isinstance(f, ThresholdRange):
            f.restrict(c, program, mask)
    return mask
