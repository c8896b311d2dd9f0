"""CheckedProgram -> ``search.TreeSearch``: a tree program as the dp engines take it.

The matrix: numeric columns whose every midpoint is a cut (``thresholds(all)``, ``raw``
or inferred) enter with their raw values, so the engine chooses thresholds itself (S7);
columns binarised otherwise (quantiles, explicit lists, categories, 0/1 columns) enter as
their 0/1 features, so the program's binarisation is respected. Rows of weight 0 are left
out, as in every encoding. ``search_refusal`` says why a program is outside what the
engines take (None when inside); ``relaxation`` is the program's depth-limited error
minimisation, the warm start (B4) of the solver backends.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .checked import CheckedProgram, LinearConstraint, TreeSkeleton
from .search import Level, SplitDim, TreeSearch


def search_refusal(program: CheckedProgram) -> str | None:
    """Why ``program`` is outside the dp fragment (None when it is inside)."""
    sk = program.skeleton
    if not isinstance(sk, TreeSkeleton):
        return "only tree skeletons"
    if sk.depth_range is not None or sk.leaves is not None or sk.nodes is not None:
        return "no size limits (leaves <=, nodes <=) or depth ranges"
    if program.splits != "univariate":
        return "univariate splits only"
    levels = program.objective.levels
    if len(levels) != 1 or not levels[0].terms:
        return "a single objective level"
    for q, coef in levels[0].terms:
        if q.kind != "errors" or q.group is not None or coef <= 0:
            return "the objective 'errors' (or 'maximize accuracy')"
    for c in program.constraints:
        if not (isinstance(c, LinearConstraint) and c.scope == "leaf" and c.op == ">="
                and [q.kind for q, _ in c.form.terms] == ["samples"] and c.form.terms[0][1] == 1):
            return "no constraints other than 'every leaf: samples >= m'"
    return None


def _min_leaf(program: CheckedProgram) -> int:
    m = 1
    for c in program.constraints:
        if isinstance(c, LinearConstraint) and c.scope == "leaf":
            m = max(m, int(-(c.form.constant // 1)))
    return m


def relaxation(program: CheckedProgram) -> TreeSearch:
    """The matrix, rows and limits of a tree program with the objective ``errors`` and no
    constraint but its minimum leaf size (B4: the warm start of the solver backends)."""
    data = program.dataset
    sk = program.skeleton
    assert isinstance(sk, TreeSkeleton)
    cols: list[np.ndarray] = []
    dims: list[SplitDim] = []
    done: set[str] = set()
    every_midpoint = set(data.raw_numeric)
    for j, f in enumerate(data.features):
        if not program.feature_mask[j]:
            continue
        if f.kind == "threshold" and f.column in every_midpoint:
            if f.column not in done:
                done.add(f.column)
                cols.append(data.table.numbers(f.column))
                dims.append(SplitDim(f.column))
            continue
        cols.append(data.column(j).astype(float))
        dims.append(SplitDim(f.column, f))
    keep = np.flatnonzero(data.row_weights() > 0)
    X = np.column_stack(cols)[keep] if cols else np.zeros((keep.shape[0], 0))
    return TreeSearch(X=np.ascontiguousarray(X, dtype=np.float64), dims=tuple(dims), y=data.y[keep],
                      weights=data.row_weights()[keep].astype(np.float64), rows=keep, classes=data.classes,
                      input_columns=tuple(dict.fromkeys(f.column for f in data.features)), depth=sk.depth,
                      min_leaf=_min_leaf(program))


def lower_search(program: CheckedProgram) -> TreeSearch:
    """The program as a ``TreeSearch``; call only when ``search_refusal`` is None."""
    base = relaxation(program)
    level = program.objective.levels[0]
    errors = sum((coef for _, coef in level.terms), Fraction(0))
    return TreeSearch(**{**_fields(base), "levels": (Level(errors=errors, constant=level.constant),)})


def _fields(t: TreeSearch) -> dict:
    return {name: getattr(t, name) for name in t.__dataclass_fields__}
