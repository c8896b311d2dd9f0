"""CheckedProgram (an ordered BDD) -> ``search_bdd.BddSearch``.

The engine takes ``bdd(depth = H, bias = ...)`` with objective levels made of ``errors``
(whole data) and ``nodes`` (non-negative coefficients; ``maximize accuracy`` is such a
level), the constraints ``nodes <= K``, ``errors <= k`` and ``errors == 0``, and the
model's feature restrictions; the support table (``compiler/support.py``) says so and
decides, and this module lowers only what it lets dp take. Depth ranges (Hu's P_bdd) reach it one depth at a time
through ``odt.strategies.depth_search``. The matrix is the dataset's 0/1 features (its
binarisation is respected), the useful ones only (``useful_features``, as BDD2).
"""
from __future__ import annotations

import math
from fractions import Fraction

from . import support
from .checked import BddSkeleton, CheckedProgram, LinearConstraint, LinearForm
from .lower import allowed_features
from .search_bdd import BddLevel, BddSearch
from .skeletons.tree_paths import useful_features


def _level(form: LinearForm) -> BddLevel | None:
    errors, nodes = Fraction(0), Fraction(0)
    for q, coef in form.terms:
        if q.group is not None or coef < 0 or q.kind not in ("errors", "nodes"):
            return None
        if q.kind == "errors":
            errors += coef
        else:
            nodes += coef
    return BddLevel(errors, nodes, form.constant)


def taken_limit(c: LinearConstraint) -> tuple[str, Fraction] | None:
    """("nodes" | "errors", bound) for ``nodes <= K``, ``errors <= k``, ``errors == 0``."""
    if c.scope is not None or c.costs is not None or len(c.form.terms) != 1:
        return None
    q, coef = c.form.terms[0]
    if q.group is not None or q.kind not in ("errors", "nodes") or q.inner is not None:
        return None
    bound = -c.form.constant / coef
    op = c.op if coef > 0 else {"<=": ">=", ">=": "<=", "==": "=="}[c.op]
    if op == "<=" or (op == "==" and bound == 0):
        return q.kind, bound
    return None


def lower_search_bdd(program: CheckedProgram) -> BddSearch:
    """The BDD program as a ``BddSearch``, for a program the support table lets dp take (a
    depth range is lowered at its upper end; depth_search lowers each depth itself)."""
    assert support.takes(program, "dp", directive=False), \
        f"internal: dp's BDD lowering of a program the support table refuses: {support.refusal(program, 'dp')}"
    sk = program.skeleton
    assert isinstance(sk, BddSkeleton)
    data = program.dataset
    keep = data.row_weights() > 0
    feats = useful_features(data.X[keep], allowed_features(program))
    max_nodes: int | None = None
    max_errors: Fraction | None = None
    for c in program.constraints:
        assert isinstance(c, LinearConstraint)
        limit = taken_limit(c)
        assert limit is not None
        kind, bound = limit
        if kind == "nodes":
            k = math.floor(bound)
            max_nodes = k if max_nodes is None else min(max_nodes, k)
        else:
            max_errors = bound if max_errors is None else min(max_errors, bound)
    levels = []
    for lvl in program.objective.levels:
        level = _level(lvl)
        assert level is not None
        levels.append(level)
    X = data.X[keep][:, feats].astype(bool)
    return BddSearch(X=X, features=tuple(data.features[j] for j in feats), y=data.y[keep].astype("int64"),
                     weights=data.row_weights()[keep].astype("float64"), classes=tuple(data.classes),
                     input_columns=data.features.columns(), depth=sk.depth,
                     bias=sk.bias, levels=tuple(levels), max_nodes=max_nodes, max_errors=max_errors)
