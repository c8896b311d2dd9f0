"""CheckedProgram -> ``search.TreeSearch``: a tree program as the dp engines take it.

The matrix: numeric columns whose every midpoint is a cut (``thresholds(all)``, ``raw``
or inferred) enter with their raw values, so the engine chooses thresholds itself (S7);
columns binarised otherwise (quantiles, explicit lists, categories, 0/1 columns) enter as
their 0/1 features, so the program's binarisation is respected. A column with a
threshold range (C10) enters as its allowed cut points, the candidates the solver
backends keep (``lower.allowed_features``). Rows of weight 0 are left out, as in every
encoding.

``search_refusal`` says why a program is outside what the engines take (None when
inside): trees with univariate splits, objective levels ``a*errors + b*nodes +
c*leaves`` (a, b, c >= 0), caps ``nodes <= K`` / ``leaves <= L`` (skeleton or
constraint) and ``errors <= k``, ``every leaf/node: samples >= m`` and the separable path
constraints C6-C10 (STreeD, van der Linden et al., NeurIPS 2023). ``relaxation`` is the
program's depth-limited error minimisation, the warm start (B4) of the solver backends.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from . import ast
from .checked import CheckedProgram, LinearConstraint, LinearForm, QuantityRef, StructuralConstraint, TreeSkeleton
from .data import Dataset, Feature, ThresholdBlock
from .search import (GlobalConstraint, GlobalTerm, Level, PathCost, PathExclusion, PathOrder, SameLeaf, SplitDim,
                     TreeSearch)
from .constraints.same_leaf import row_ref


@dataclass
class _Parts:
    """What the program says beyond the relaxation, gathered by ``_read``."""

    levels: list[Level] = field(default_factory=list)
    min_leaf: int = 1
    min_node: int = 1
    max_nodes: int | None = None
    max_errors: Fraction | None = None
    orders: list[tuple[str, str]] = field(default_factory=list)
    exclusions: list[tuple[str, ...]] = field(default_factory=list)
    path_costs: list[LinearConstraint] = field(default_factory=list)
    same_leaf: list[tuple[str, str]] = field(default_factory=list)
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    globals: list[LinearConstraint] = field(default_factory=list)
    uses: list[ast.UsesExpr] = field(default_factory=list)


class _Outside(Exception):
    """The program is outside the dp fragment; the message says which construct."""


def search_refusal(program: CheckedProgram) -> str | None:
    """Why ``program`` is outside the dp fragment (None when it is inside)."""
    try:
        _read(program)
    except _Outside as e:
        return str(e)
    return None


def _level(form: LinearForm) -> Level:
    errors, nodes, constant = Fraction(0), Fraction(0), form.constant
    for q, coef in form.terms:
        if q.kind == "errors" and q.group is None:
            errors += coef
        elif q.kind == "nodes":
            nodes += coef
        elif q.kind == "leaves":  # leaves = nodes + 1 in a binary tree
            nodes += coef
            constant += coef
        else:
            raise _Outside(f"objectives over errors, nodes and leaves (not '{q}')")
    if errors < 0 or nodes < 0:
        raise _Outside("objectives minimising errors, nodes and leaves (non-negative coefficients)")
    return Level(errors=errors, nodes=nodes, constant=constant)


def _cap(c: LinearConstraint) -> tuple[str, Fraction]:
    """``a*q + k (op) 0`` with one quantity q bounded from above: (q's kind, bound)."""
    if len(c.form.terms) != 1:
        raise _Outside("constraints bounding one of errors, nodes, leaves from above")
    q, a = c.form.terms[0]
    if q.kind not in ("errors", "nodes", "leaves") or q.group is not None:
        raise _Outside(f"constraints on errors, nodes and leaves (not '{q}'); group quantities are issue 14")
    bound = -c.form.constant / a
    if c.op == "<=" and a > 0 or c.op == ">=" and a < 0 or c.op == "==" and bound == 0 and q.kind == "errors":
        return q.kind, bound
    raise _Outside(f"upper bounds on {q.kind} ('{q.kind} <= k')")


#: quantities that add up over the leaves, the nodes or the tested columns of a tree: a
#: constraint over them (other than one cap on errors, nodes or leaves) is global (issue 14)
_ADDITIVE = {"errors", "predicted", "tp", "fp", "tn", "fn", "nodes", "leaves", "features_used", "expected_cost"}


def _check_global(c: LinearConstraint) -> None:
    """``c`` is checked at the root on the Pareto fronts; raises when it cannot be."""
    for q, coef in c.form.terms:
        if q.kind == "abs":
            assert q.inner is not None
            convex = c.op == "<=" and coef > 0 or c.op == ">=" and coef < 0
            if not convex or any(i.kind not in _ADDITIVE - {"expected_cost"} for i, _ in q.inner.terms):
                raise _Outside("abs(...) bounded from above over additive quantities")
        elif q.kind not in _ADDITIVE:
            raise _Outside(f"constraints over additive quantities (not '{q}')")


def _read(program: CheckedProgram) -> _Parts:
    sk = program.skeleton
    if not isinstance(sk, TreeSkeleton):
        raise _Outside("only tree skeletons")
    if program.splits != "univariate":
        raise _Outside("univariate splits only")
    forms = program.objective.levels
    if sk.depth_range is not None:  # S3: the depth search solves depth k = a, a+1, ... on its own
        if not forms or [q.kind for q, _ in forms[0].terms] != ["depth"]:
            raise _Outside("a depth range with 'minimize depth' (then ...) as its objective")
        forms = forms[1:] or (LinearForm(((QuantityRef("errors"), Fraction(1)),)),)
    parts = _Parts()
    parts.levels = [_level(form) for form in forms]
    if not parts.levels or all(lv.errors == 0 and lv.nodes == 0 for lv in parts.levels):
        raise _Outside("an objective over errors, nodes or leaves")
    caps: list[int] = []
    if sk.nodes is not None:
        caps.append(sk.nodes)
    if sk.leaves is not None:
        caps.append(sk.leaves - 1)
    for c in program.constraints:
        if isinstance(c, StructuralConstraint):
            node = c.node
            if isinstance(node, ast.Every) and isinstance(node.body, ast.OrderOnPath):
                parts.orders.append((node.body.first.text, node.body.second.text))
            elif isinstance(node, ast.Every) and isinstance(node.body, ast.PathExclusion):
                parts.exclusions.append(tuple(n.text for n in node.body.names))
            elif isinstance(node, ast.CallConstraint) and node.call.name.text == "same_leaf":
                a, b = (row_ref(x) for x in node.call.args)
                parts.same_leaf.append((a, b))
            elif isinstance(node, ast.UsesConstraint):
                parts.uses.append(node.expr)
            elif isinstance(node, ast.ThresholdRange):
                lo, hi = float(ast.resolved(node.low)), float(ast.resolved(node.high))
                old = parts.ranges.get(node.name.text, (lo, hi))
                parts.ranges[node.name.text] = (max(lo, old[0]), min(hi, old[1]))
            else:
                raise _Outside("path constraints (before, not (a and b), cost), same_leaf, uses and threshold "
                               "ranges")
            continue
        if c.scope in ("leaf", "node"):
            terms = c.form.terms
            if not (c.op == ">=" and len(terms) == 1 and terms[0][0].kind == "samples" and terms[0][1] == 1):
                raise _Outside("'every leaf: samples >= m' and 'every node: samples >= S'")
            m = int(-(c.form.constant // 1))
            if c.scope == "leaf":
                parts.min_leaf = max(parts.min_leaf, m)
            else:
                parts.min_node = max(parts.min_node, m)
        elif c.scope == "path":
            weight = sum((coef for q, coef in c.form.terms if q.kind == "cost"), Fraction(0))
            if c.costs is None or not (weight > 0 and c.op == "<=" or weight < 0 and c.op == ">="):
                raise _Outside("path costs bounded from above")
            parts.path_costs.append(c)
        else:
            try:
                kind, bound = _cap(c)
            except _Outside:
                _check_global(c)
                parts.globals.append(c)
                continue
            if kind == "errors":
                parts.max_errors = bound if parts.max_errors is None else min(parts.max_errors, bound)
            else:
                caps.append(int(bound // 1) - (1 if kind == "leaves" else 0))
    if caps:
        parts.max_nodes = max(0, min(caps))
    return parts


def _min_leaf(program: CheckedProgram) -> int:
    m = 1
    for c in program.constraints:
        if isinstance(c, LinearConstraint) and c.scope == "leaf":
            m = max(m, int(-(c.form.constant // 1)))
    return m


def relaxation(program: CheckedProgram) -> TreeSearch:
    """The matrix, rows and limits of a tree program with the objective ``errors`` and no
    constraint but its minimum leaf size (B4: the warm start of the solver backends)."""
    return _matrix(program, {}, _min_leaf(program))


def _matrix(program: CheckedProgram, ranges: dict[str, tuple[float, float]], min_leaf: int) -> TreeSearch:
    data = program.dataset
    sk = program.skeleton
    assert isinstance(sk, TreeSkeleton)
    cols: list[np.ndarray] = []
    dims: list[SplitDim] = []
    done: set[str] = set()
    every_midpoint = set(data.raw_numeric) - set(ranges)
    mask = program.feature_mask
    for start, block in data.features.blocks():
        if isinstance(block, ThresholdBlock) and block.column in every_midpoint:  # one raw column, not a feature per cut
            if block.column not in done and mask[start:start + len(block)].any():
                done.add(block.column)
                cols.append(data.table.numbers(block.column))
                dims.append(SplitDim(block.column))
            continue
        for j, f in enumerate(block, start):
            if mask[j]:
                _feature_dim(data, j, f, ranges, cols, dims)
    keep = np.flatnonzero(data.row_weights() > 0)
    X = np.column_stack(cols)[keep] if cols else np.zeros((keep.shape[0], 0))
    return TreeSearch(X=np.ascontiguousarray(X, dtype=np.float64), dims=tuple(dims), y=data.y[keep],
                      weights=data.row_weights()[keep].astype(np.float64), rows=keep, classes=data.classes,
                      input_columns=data.features.columns(), depth=sk.depth,
                      min_leaf=min_leaf)


def _feature_dim(data: Dataset, j: int, f: Feature, ranges: dict[str, tuple[float, float]],
                 cols: list[np.ndarray], dims: list[SplitDim]) -> None:
    """Feature j as a 0/1 dimension, unless a ``threshold`` range excludes its cut."""
    if f.kind == "threshold" and f.column in ranges:
        lo, hi = ranges[f.column]
        if f.threshold is not None and not lo <= f.threshold <= hi:
            return
    cols.append(data.column(j).astype(float))
    dims.append(SplitDim(f.column, f))


def lower_search(program: CheckedProgram) -> TreeSearch:
    """The program as a ``TreeSearch``; call only when ``search_refusal`` is None."""
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
    position = {int(r): i for i, r in enumerate(base.rows)}
    ids = {rid: i for i, rid in enumerate(data.ids or ())}
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
    fields.update(levels=tuple(parts.levels), min_node=parts.min_node, max_nodes=parts.max_nodes,
                  max_errors=parts.max_errors, orders=orders, exclusions=exclusions, path_costs=tuple(path_costs),
                  same_leaf=tuple(pairs), groups=groups, globals=tuple(globals_), uses=uses)
    return TreeSearch(**fields)


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
            out.append(GlobalTerm(q.kind, k, group, q.klass, costs))
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
