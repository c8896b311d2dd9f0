"""CheckedProgram -> ``search.TreeSearch``: a tree program as the dp engines take it.

The matrix: numeric columns whose every midpoint is a cut (``thresholds(all)``, ``raw``
or inferred) enter with their raw values, so the engine chooses thresholds itself (S7);
columns binarised otherwise (quantiles, explicit lists, categories, 0/1 columns) enter as
their 0/1 features, so the program's binarisation is respected. A column with a
threshold range (C10) enters as its allowed cut points, the candidates the solver
backends keep (``lower.allowed_features``). Rows of weight 0 are left out, as in every
encoding.

Whether dp takes a program is the support table's decision (``compiler/support.py``),
never this module's: ``lower_search`` is called only on programs the table lets dp take
(objective levels ``a*errors + b*nodes + c*leaves`` with a, b, c >= 0, caps ``nodes <=
K`` / ``leaves <= L`` and ``errors <= k``, global constraints over additive quantities,
and the constraint families with a dp hook, ``Family.search``), and anything else is an
internal error. ``relaxation`` is the program's depth-limited error minimisation, the
warm start (B4) of the solver backends.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from . import ast, lower_confusion, support
from .checked import CheckedProgram, LinearConstraint, LinearForm, QuantityRef, TreeSkeleton
from .constraints import SearchParts, family_of
from .constraints.samples import Samples, min_rows
from .constructs import bounds_from_above
from .data import Binarizer, Dataset, Feature, ThresholdBlock
from .regression import program_loss
from .search import (GlobalConstraint, GlobalTerm, Level, PathCost, PathExclusion, PathOrder, SameLeaf, SplitDim,
                     TreeSearch)


#: what the families' dp hooks write by column name or row id (``SearchParts``), turned into search
#: dimensions and row positions below; the hooks' other parts are ``TreeSearch`` fields of the same name
_RESOLVED = ("orders", "exclusions", "path_costs", "same_leaf", "uses", "ranges")


@dataclass
class _Parts(SearchParts):
    """The families' parts (``SearchParts``) and what the objective and the relations say."""

    levels: list[Level] = field(default_factory=list)
    max_nodes: int | None = None
    max_errors: Fraction | None = None
    globals: list[LinearConstraint] = field(default_factory=list)


#: what a level's ``errors`` coefficient weighs: misclassification, or the regression loss
_LOSSES = ("errors", "squared_error", "absolute_error")


def _level(form: LinearForm) -> Level:
    if lower_confusion.needs(form):  # issue 26: filled in by ``lower_confusion.apply``
        return Level()
    errors, nodes, constant = Fraction(0), Fraction(0), form.constant
    for q, coef in form.terms:
        if q.kind in _LOSSES and q.group is None:  # a regression loss is the level's "errors" (issue 26)
            errors += coef
        elif q.kind == "nodes":
            nodes += coef
        elif q.kind == "leaves":  # leaves = nodes + 1 in a binary tree
            nodes += coef
            constant += coef
        else:
            raise AssertionError(f"internal: dp's objective levels add errors, nodes and leaves (not '{q}'): O2g")
    assert errors >= 0 and nodes >= 0, "internal: dp minimises errors, nodes and leaves (O2neg)"
    return Level(errors=errors, nodes=nodes, constant=constant)


def _cap(c: LinearConstraint) -> tuple[str, Fraction]:
    """``a*q + k (op) 0`` bounding one of errors, nodes, leaves from above: (q's kind, bound)."""
    q, a = c.form.terms[0]
    return q.kind, -c.form.constant / a


#: quantities that add up over the leaves, the nodes or the tested columns of a tree: a
#: constraint over them (other than one cap on errors, nodes or leaves) is global (issue 14)
_ADDITIVE = {"errors", "predicted", "tp", "fp", "tn", "fn", "nodes", "leaves", "features_used", "expected_cost",
             "misclassification_cost"}


def _check_global(c: LinearConstraint) -> None:
    """``c`` is checked at the root on the Pareto fronts (the support table refuses the
    rest: non-convex abs C2x, expected_cost inside abs Oec, depth O2d)."""
    for q, coef in c.form.terms:
        if q.kind == "abs":
            assert q.inner is not None
            convex = c.op == "<=" and coef > 0 or c.op == ">=" and coef < 0
            assert convex and all(i.kind in _ADDITIVE - {"expected_cost"} for i, _ in q.inner.terms), \
                f"internal: abs(...) bounded from above over additive quantities only (not '{c.span.quote()}')"
        else:
            assert q.kind in _ADDITIVE, f"internal: a global constraint over '{q}'"


def _read(program: CheckedProgram) -> _Parts:
    sk = program.skeleton
    assert isinstance(sk, TreeSkeleton) and program.splits == "univariate"
    forms = program.objective.levels
    if sk.depth_range is not None:  # S3: the depth search solves depth k = a, a+1, ... on its own
        forms = forms[1:] or (LinearForm(((QuantityRef("errors"), Fraction(1)),)),)
    parts = _Parts()
    parts.levels = [_level(form) for form in forms]
    caps: list[int] = []
    if sk.nodes is not None:
        caps.append(sk.nodes)
    if sk.leaves is not None:
        caps.append(sk.leaves - 1)
    for c in program.constraints:
        if not (isinstance(c, LinearConstraint) and c.scope is None):  # a family's: its dp hook
            family = family_of(c)
            assert family is not None, f"internal: no constraint family claims '{c.span.quote()}'"
            family.search(c, parts)
        elif bounds_from_above(c):
            kind, bound = _cap(c)
            if kind in _LOSSES:
                parts.max_errors = bound if parts.max_errors is None else min(parts.max_errors, bound)
            else:
                caps.append(int(bound // 1) - (1 if kind == "leaves" else 0))
        else:
            _check_global(c)
            parts.globals.append(c)
    if caps:
        parts.max_nodes = max(0, min(caps))
    return parts


def _min_leaf(program: CheckedProgram) -> int:
    """The least rows per leaf the program's lower bounds ask (C5; upper bounds, C5u, are no
    part of the relaxation)."""
    m = 1
    for c in program.constraints:
        if isinstance(c, LinearConstraint) and c.scope == "leaf" and isinstance(family_of(c), Samples):
            m = max(m, min_rows(c) or 1)
    return m


def relaxation(program: CheckedProgram) -> TreeSearch:
    """The matrix, rows and limits of a tree program with the objective ``errors`` and no
    constraint but its minimum leaf size (B4: the warm start of the solver backends)."""
    return _matrix(program, {}, _min_leaf(program))


def _matrix(program: CheckedProgram, ranges: dict[str, tuple[float, float]], min_leaf: int) -> TreeSearch:
    data = program.dataset
    sk = program.skeleton
    assert isinstance(sk, TreeSkeleton)
    raw: list[tuple[int, str]] = []  # (dimension, column): one raw column, not a feature per cut
    dims: list[SplitDim] = []
    done: set[str] = set()
    every_midpoint = set(data.raw_numeric) - set(ranges)
    mask = program.feature_mask
    allowed = mask.tolist()  # a list: one numpy scalar per feature costs more than the loop
    picked: list[int] = []  # the features taken as 0/1 dimensions
    at: list[int] = []  # the dimension of each picked feature
    for start, block in data.features.blocks():
        if isinstance(block, ThresholdBlock) and block.column in every_midpoint:
            if block.column not in done and mask[start:start + len(block)].any():
                done.add(block.column)
                raw.append((len(dims), block.column))
                dims.append(SplitDim(block.column))
            continue
        for j, f in enumerate(block, start):
            if allowed[j] and (not ranges or _in_range(f, ranges)):
                picked.append(j)
                at.append(len(dims))
                dims.append(SplitDim(f.column, f))
    w = data.row_weights()
    positive = w > 0
    keep = np.flatnonzero(positive)
    every = bool(positive.all())
    X = np.empty((keep.shape[0], len(dims)), dtype=np.float64)  # filled in place: no column list restacked
    if picked:  # one binarisation (one per feature: ~20 us each)
        made = _feature_columns(data, picked)
        if len(at) == len(dims):
            X[:] = made if every else made[keep]
        else:
            X[:, at] = made if every else made[keep]
    for d, column in raw:
        values = data.table.numbers(column)
        X[:, d] = values if every else values[keep]
    y, classes, loss, target = data.y[keep], data.classes, "misclassification", None
    if program.target is not None:  # regression (issue 26): rows index the distinct targets
        loss, target = program_loss(program) or "squared_error", program.target[keep].astype(np.float64)
        y, classes = np.unique(target, return_inverse=True)[1].astype(np.int64).reshape(-1), ()
    return TreeSearch(X=X, dims=tuple(dims), y=y, weights=(w if every else w[keep]).astype(np.float64), rows=keep,
                      classes=classes, input_columns=data.features.columns(), depth=sk.depth,
                      min_leaf=min_leaf, loss=loss, target=target)


def _in_range(f: Feature, ranges: dict[str, tuple[float, float]]) -> bool:
    """Whether feature ``f`` is a dimension: no ``threshold`` range excludes its cut."""
    if f.kind == "threshold" and f.column in ranges:
        lo, hi = ranges[f.column]
        if f.threshold is not None and not lo <= f.threshold <= hi:
            return False
    return True


def _feature_columns(data: Dataset, js: list[int]) -> np.ndarray:
    """(rows x len(js)) booleans: features ``js`` of the data, from its matrix when built,
    else by one binarisation of those features alone (``Dataset.column``'s, for many)."""
    if "X" in data.__dict__:
        return data.X[:, js]
    runs: list[tuple[int, int]] = []  # consecutive features as slices, which keep their threshold blocks
    for j in js:
        if runs and runs[-1][1] == j:
            runs[-1] = (runs[-1][0], j + 1)
        else:
            runs.append((j, j + 1))
    parts = [Binarizer(data.features[a:b]).transform(data.table) for a, b in runs]
    return parts[0] if len(parts) == 1 else np.hstack(parts)


def lower_search(program: CheckedProgram) -> TreeSearch:
    """The program as a ``TreeSearch``; only for a program the support table lets dp take
    (its constructs: the solve directive is not the search's business)."""
    assert support.takes(program, "dp", directive=False), \
        f"internal: dp's search lowering of a program the support table refuses: {support.refusal(program, 'dp')}"
    parts = _read(program)
    base = _matrix(program, parts.ranges, parts.min_leaf)
    data = program.dataset

    def column_of(name: str) -> str:
        if name in data.table.columns:
            return name
        found = data.features.find_name(name)
        return name if found is None else found.column

    def dims_of(name: str) -> frozenset[int]:
        col = column_of(name)
        return frozenset(j for j, d in enumerate(base.dims) if d.column == col)

    orders = tuple(PathOrder(dims_of(a), dims_of(b)) for a, b in parts.orders)
    exclusions = tuple(PathExclusion(tuple(dims_of(n) for n in names)) for names in parts.exclusions)
    path_costs = []
    for c in parts.path_costs:
        assert c.costs is not None
        weight = sum((coef for q, coef in c.form.terms if q.kind == "cost"), Fraction(0))
        path_costs.append(PathCost(tuple(c.costs.of(d.column) for d in base.dims), -c.form.constant / weight))
    # the row positions, for ``same_leaf`` pairs only (a dict of every row: ms on thousands)
    position = {int(r): i for i, r in enumerate(base.rows)} if parts.same_leaf else {}
    ids = {rid: i for i, rid in enumerate(data.ids or ())} if parts.same_leaf else {}
    pairs = []
    for a, b in parts.same_leaf:
        ra, rb = ids.get(a), ids.get(b)
        if ra is None or rb is None:
            raise ValueError(f"same_leaf names an unknown row id ({a}, {b})")  # the checker reports these
        if ra in position and rb in position and ra != rb:  # a row of weight 0 is not placed
            pairs.append(SameLeaf(position[ra], position[rb]))
    names: list[str] = []
    globals_: list[GlobalConstraint] = []
    for c in parts.globals:
        globals_.extend(_global(c, names, base.dims))
    groups = tuple(np.asarray(program.groups[g], dtype=bool)[base.rows] for g in names)
    uses = tuple(_formula(e, column_of) for e in parts.uses)
    fields = {name: getattr(base, name) for name in base.__dataclass_fields__}
    fields.update({f.name: getattr(parts, f.name) for f in dataclasses.fields(SearchParts)  # the hooks' as they are
                   if f.name in TreeSearch.__dataclass_fields__ and f.name not in _RESOLVED})
    fields.update(levels=tuple(parts.levels), max_nodes=parts.max_nodes, max_errors=parts.max_errors, orders=orders,
                  exclusions=exclusions, path_costs=tuple(path_costs), same_leaf=tuple(pairs), groups=groups,
                  globals=tuple(globals_), uses=uses)
    search = TreeSearch(**fields)
    forms = _forms(program)
    return lower_confusion.apply(search, forms, _level) if forms and lower_confusion.needs(forms[0]) else search


def _forms(program: CheckedProgram) -> tuple[LinearForm, ...]:
    """The objective levels the search minimises (a depth range's after its depth, S3)."""
    forms = program.objective.levels
    if getattr(program.skeleton, "depth_range", None) is not None:
        forms = forms[1:] or (LinearForm(((QuantityRef("errors"), Fraction(1)),)),)
    return forms


def _global(c: LinearConstraint, names: list[str], dims: tuple[SplitDim, ...]) -> list[GlobalConstraint]:
    """``c`` as rows ``sum(terms) + constant (<= or ==) 0``: ``>=`` negated, each ``a*abs(e)``
    (bounded from above) replaced by ``a*e`` and ``-a*e`` in two rows (one per sign choice
    of every abs term); group names become indices into ``names`` (appended as met)."""
    sign = Fraction(-1) if c.op == ">=" else Fraction(1)
    op = "==" if c.op == "==" else "<="

    def terms(form: LinearForm, scale: Fraction) -> list[GlobalTerm]:
        out = []
        for q, coef in form.terms:
            k = coef * scale
            if q.kind == "leaves":  # leaves = nodes + 1
                out.append(GlobalTerm("nodes", k))
                continue
            group = None
            if q.group is not None:
                if q.group not in names:
                    names.append(q.group)
                group = names.index(q.group)
            costs = None
            if q.kind == "expected_cost":
                assert c.costs is not None
                costs = tuple(c.costs.of(d.column) for d in dims)
            out.append(GlobalTerm(q.kind, k, group, q.klass, costs, q.matrix))
        return out

    plain = LinearForm(tuple(t for t in c.form.terms if t[0].kind != "abs"), c.form.constant)
    constant = sign * (plain.constant + sum((coef for q, coef in plain.terms if q.kind == "leaves"), Fraction(0)))
    rows = [terms(LinearForm(plain.terms), sign)]
    for q, coef in c.form.terms:
        if q.kind != "abs":
            continue
        assert q.inner is not None
        inner_constant = q.inner.constant + sum((k for i, k in q.inner.terms if i.kind == "leaves"), Fraction(0))
        rows = [r + terms(LinearForm(q.inner.terms), s * coef * sign) + [GlobalTerm("constant", s * coef * sign
                                                                                     * inner_constant)]
                for r in rows for s in (Fraction(1), Fraction(-1))]
    out = []
    for r in rows:
        k = constant + sum((t.coef for t in r if t.kind == "constant"), Fraction(0))
        out.append(GlobalConstraint(tuple(t for t in r if t.kind != "constant"), k, op))
    return out


def _formula(e: ast.UsesExpr, column_of) -> tuple:
    """``e`` as a flat postfix ``UsesFormula`` (walked with a stack: any depth; a chain of
    nots is one not or none)."""
    out: list[tuple] = []
    stack: list[tuple[ast.UsesExpr, bool]] = [(e, False)]
    while stack:
        node, ready = stack.pop()
        if isinstance(node, ast.UsesAtom):
            out.append(("atom", column_of(node.name.text)))
        elif isinstance(node, ast.UsesNot):
            if not ready:
                stack += [(node, True), (node.item, False)]
            elif out[-1] == ("not",):
                out.pop()
            else:
                out.append(("not",))
        elif not ready:
            stack.append((node, True))
            stack.extend((i, False) for i in reversed(node.items))
        else:
            out.append(("and" if isinstance(node, ast.UsesAnd) else "or", len(node.items)))
    return tuple(out)
