"""The search IR: a tree program as the engines of the ``dp`` family take it.

The solver backends read the IR of ``ir.py`` (variables, clauses, rows); the dp engines
search the data directly, so they read this instead: the matrix they split on, the rows
with their classes and weights, the skeleton's limits, the objective as a combination of
quantities that add up over the leaves and nodes of a tree, and every side constraint as
a *DP ingredient* — a restriction of the candidate splits, a state carried down each
branch, or a bound on an additive quantity checked at the root (STreeD, van der Linden,
de Weerdt & Demirović, NeurIPS 2023; MurTree, Demirović et al., JMLR 2022).

Plain frozen data, built by ``lower_search``; nothing here knows a solver or an engine.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from .data import Feature
from .search_confusion import Confusion


@dataclass(frozen=True, slots=True)
class SplitDim:
    """One column of the search matrix.

    ``feature is None``: an *ordered* dimension, the raw values of ``column``; a split
    cuts between two consecutive distinct values (Brita et al., Eq. 1), and with
    ``cut_range`` (C10) the cut itself must lie in ``[lo, hi]``. Otherwise a 0/1
    dimension: the dataset feature it stands for (a category, a binarised threshold, a
    binary column); rows where the feature holds have value 1."""

    column: str
    feature: Feature | None = None
    cut_range: tuple[float, float] | None = None

    @property
    def ordered(self) -> bool:
        return self.feature is None


@dataclass(frozen=True, slots=True)
class Level:
    """One objective level, to minimise: ``errors * errors_coef + nodes * nodes_coef +
    depth * depth_coef + constant`` (``leaves`` is folded in: leaves = nodes + 1)."""

    errors: Fraction = Fraction(1)
    nodes: Fraction = Fraction(0)
    depth: Fraction = Fraction(0)
    constant: Fraction = Fraction(0)


@dataclass(frozen=True, slots=True)
class PathOrder:
    """C7, Nanfack 4.1: a node testing a dimension of ``second`` has an ancestor testing
    a dimension of ``first`` (the dimensions of the two columns)."""

    first: frozenset[int]
    second: frozenset[int]


@dataclass(frozen=True, slots=True)
class PathExclusion:
    """C9, Nanfack 4.6 (per branch): no root-to-leaf path tests a dimension of every group."""

    groups: tuple[frozenset[int], ...]


@dataclass(frozen=True, slots=True)
class PathCost:
    """C8, Nanfack 4.2: on every root-to-leaf path the tests cost at most ``bound``; each
    test pays the cost of its dimension's column."""

    costs: tuple[Fraction, ...]  # per dimension
    bound: Fraction


@dataclass(frozen=True, slots=True)
class SameLeaf:
    """C6, Nanfack 4.5: the two rows (positions in the search matrix) end in one leaf."""

    first: int
    second: int


@dataclass(frozen=True, slots=True)
class GlobalTerm:
    """One term of a global constraint (issue 14), ``coef`` times a quantity that adds up
    over a tree: over its leaves (``errors``, ``predicted``, ``tp``/``fp``/``tn``/``fn``, of
    the rows of group ``group``, an index into ``TreeSearch.groups``, or of every row when
    None; ``klass`` for ``predicted``), over its decision nodes (``nodes``;
    ``expected_cost``: each node pays ``costs[dim]`` times the weight of the rows reaching
    it, divided by the total weight, Nanfack 4.3) or over the set of columns it tests
    (``features_used``)."""

    kind: str
    coef: Fraction
    group: int | None = None
    klass: int | None = None
    costs: tuple[Fraction, ...] | None = None  # expected_cost: per search dimension
    #: misclassification_cost (issue 26): ``matrix[actual][predicted]`` per unit weight
    matrix: tuple[tuple[Fraction, ...], ...] | None = None


@dataclass(frozen=True, slots=True)
class GlobalConstraint:
    """``sum(terms) + constant (op) 0`` with op ``<=`` or ``==`` (``>=`` is negated and
    ``a*abs(e) <= b`` is the two rows ``a*e <= b`` and ``-a*e <= b`` when lowered), checked
    at the root of the search on the Pareto front of the additive quantities (STreeD,
    van der Linden et al., NeurIPS 2023, Sec. 4.4)."""

    terms: tuple[GlobalTerm, ...]
    constant: Fraction
    op: str


#: a ``uses`` formula (C9) over columns in postfix order, flat however deep the source
#: nests it: steps ("atom", column) | ("not",) | ("and", k) | ("or", k), the last two
#: combining the k values before them
UsesFormula = tuple


def formula_columns(formula: UsesFormula) -> list[str]:
    """The columns of a formula's atoms, in order.

    >>> formula_columns((("atom", "a"), ("not",), ("atom", "b"), ("and", 2)))
    ['a', 'b']
    """
    return [step[1] for step in formula if step[0] == "atom"]


def formula_holds(formula: UsesFormula, used: Callable[[str], bool]) -> bool:
    """The value of a formula when ``used(column)`` says which columns are tested.

    >>> formula_holds((("atom", "a"), ("not",), ("atom", "b"), ("and", 2)), lambda c: c == "b")
    True
    """
    vals: list[bool] = []
    for step in formula:
        if step[0] == "atom":
            vals.append(used(step[1]))
        elif step[0] == "not":
            vals.append(not vals.pop())
        else:
            k = step[1]
            args = vals[len(vals) - k:]
            del vals[len(vals) - k:]
            vals.append(all(args) if step[0] == "and" else any(args))
    return vals[0]


@dataclass(frozen=True)
class TreeSearch:
    """A depth-limited tree program for the dp engines.

    Rows of weight 0 are left out (they exist for no encoding either); ``rows`` maps each
    row of ``X`` back to the dataset. ``levels`` is the objective, most important first;
    the caps are hard limits. Every constraint field is empty when the program does not
    say it, so the plain ConTree fragment is ``depth``, ``min_leaf`` and one level of
    errors."""

    X: np.ndarray  # (n, p) float64: raw values (ordered dims) or 0/1
    dims: tuple[SplitDim, ...]
    y: np.ndarray  # (n,) int64 class indices
    weights: np.ndarray  # (n,) float64, all > 0
    rows: np.ndarray  # (n,) int64 dataset row of each row of X
    classes: tuple[Any, ...]
    input_columns: tuple[str, ...]
    depth: int
    levels: tuple[Level, ...] = (Level(),)
    min_leaf: int = 1  # C5: rows per leaf
    min_node: int = 1  # C3: rows per decision node
    max_nodes: int | None = None  # S2 / C4: decision nodes (leaves <= L is nodes <= L - 1)
    max_errors: Fraction | None = None  # O4: errors <= k
    max_leaf_errors: Fraction | None = None  # C11: a leaf misclassifying more weight is infeasible
    orders: tuple[PathOrder, ...] = ()
    exclusions: tuple[PathExclusion, ...] = ()
    path_costs: tuple[PathCost, ...] = ()
    same_leaf: tuple[SameLeaf, ...] = ()
    #: global constraints (issue 14): the row masks of the groups they name, the rows, and
    #: the ``uses`` formulas; any of them sends the program to the Pareto-front engine
    groups: tuple[np.ndarray, ...] = field(default=(), compare=False)
    globals: tuple[GlobalConstraint, ...] = ()
    uses: tuple[UsesFormula, ...] = ()
    notes: tuple[str, ...] = field(default=(), compare=False)  # for --stats / logs
    #: what a leaf costs (issue 26): "misclassification", or a regression loss,
    #: "squared_error" / "absolute_error"; a level's ``errors`` coefficient weighs this loss
    loss: str = "misclassification"
    #: regression: the target per row of X (float64); ``y`` is then each row's index among the
    #: distinct targets (``np.unique(target)``, which the task reads) and ``classes`` is empty
    target: np.ndarray | None = field(default=None, compare=False)
    #: a cost matrix, balanced accuracy or F1 objective (issue 26; ``search_confusion``)
    confusion: Confusion | None = None

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def plain(self) -> bool:
        """ConTree's fragment: depth, a minimum leaf size, errors as the only level (ConTree
        knows no other constraint, so anything else, a per-leaf error bound included,
        sends the program to the STreeD-style searches)."""
        return (len(self.levels) == 1 and self.levels[0].nodes == 0 and self.levels[0].depth == 0
                and self.levels[0].errors > 0 and self.min_node <= 1 and self.max_nodes is None
                and self.max_errors is None and self.max_leaf_errors is None
                and not (self.orders or self.exclusions or self.path_costs or self.same_leaf or self.globals
                         or self.uses)
                and all(d.cut_range is None for d in self.dims)
                and (self.confusion is None or (self.confusion.matrix is None and not self.confusion.f1)))

    @property
    def fronts(self) -> bool:
        """Global constraints: the Pareto-front engine (issue 14)."""
        return bool(self.globals or self.uses) or (self.confusion is not None and self.confusion.f1)
