"""The ``model`` item -> a skeleton, its split kind and feature mask (S1-S7).

Input: an ``ast.ModelDef`` and the ``Scope`` (for the column names of ``features``).
Output: a ``TreeSkeleton``, ``DiagramSkeleton`` or ``BddSkeleton`` (a placeholder when the
skeleton is in error; the problems go to the ``Collector``), ``"univariate"`` or
``"multivariate"``, and the mask of binarised features the model may test.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import ast
from .check_exprs import Scope
from .checked import BddSkeleton, DiagramSkeleton, TreeSkeleton
from .errors import Collector, OdtDataError, OdtNameError, OdtTypeError, did_you_mean

TREE_PARAMS = ("depth", "leaves", "nodes")
BDD_PARAMS = ("depth", "bias")
BDD_BIASES = ("C", "P", "S")  # merge compatible subtrees, parent majority, solver's value (Hu)
#: The deepest skeleton exact methods handle.
MAX_DEPTH = 12


def check_model(m: ast.ModelDef, scope: Scope, errs: Collector) -> tuple[Any, str, np.ndarray]:
    sk = m.skeleton
    params: dict[str, ast.SkeletonParam] = {}
    for p in sk.params:
        if p.name.text in params:
            errs.add(OdtTypeError, f"parameter '{p.name.text}' given twice", p.span)
        params[p.name.text] = p
    allowed = {"tree": TREE_PARAMS, "diagram": ("widths",), "bdd": BDD_PARAMS}[sk.kind]
    for p in sk.params:
        if p.name.text not in allowed:
            errs.add(OdtNameError, f"'{sk.kind}' has no parameter '{p.name.text}'", p.name.span,
                     did_you_mean(p.name.text, allowed, "parameter"))
    skeleton: Any
    if sk.kind == "tree":
        skeleton = tree_skeleton(sk, params, errs)
    elif sk.kind == "diagram":
        skeleton = diagram_skeleton(sk, params, errs)
    else:
        skeleton = bdd_skeleton(sk, params, errs)
    splits = "univariate"
    n_features = len(scope.data.features) if scope.data is not None else 0
    mask = np.ones(n_features, dtype=bool)
    for opt in m.options:
        if isinstance(opt, ast.SplitsOption):
            splits = opt.kind
            continue
        wanted = set()
        for n in opt.names:
            if not scope.has_column(n.text):
                errs.add(OdtNameError, f"unknown column '{n.text}'", n.span, did_you_mean(n.text, scope.columns, "column"))
            wanted.add(n.text)
        if scope.data is not None:
            mask = scope.data.features.column_mask(wanted)
    if scope.data is not None and not mask.any():
        errs.add(OdtDataError, "the model has no feature to split on", m.span,
                 "every column is constant on these rows, or 'features' names none that varies")
    return skeleton, splits, mask


def diagram_skeleton(sk: ast.Skeleton, params: dict[str, ast.SkeletonParam], errs: Collector) -> DiagramSkeleton:
    """S4 ``diagram(widths = [1, w1, ..., wL])``."""
    w = params.get("widths")
    if not isinstance(w, ast.ParamCompare) or w.op not in ("==", "=") or not isinstance(w.value, tuple):
        errs.add(OdtTypeError, "a diagram needs its layer widths, e.g. diagram(widths = [1, 2, 4])", sk.span)
        return DiagramSkeleton((1,), sk.span)
    widths = tuple(ast.resolved(x) for x in w.value)
    if not widths or widths[0] != 1:
        errs.add(OdtTypeError, f"a diagram starts with one root: its widths begin with 1, "
                 f"e.g. widths = [1, {', '.join(map(str, widths[1:] or (2,)))}]", w.span)
    elif min(widths) < 1:
        errs.add(OdtTypeError, "every layer of a diagram holds at least one node (widths >= 1)", w.span)
    elif len(widths) > MAX_DEPTH:
        errs.add(OdtTypeError, f"{len(widths)} layers is beyond what exact methods handle (at most {MAX_DEPTH})", w.span)
    else:
        for layer, width in enumerate(widths):
            if width > 2 ** layer:
                errs.add(OdtTypeError, f"layer {layer} of a diagram holds at most {2 ** layer} nodes "
                         f"(each node of a layer has two arcs), not {width}", w.span)
                break
    return DiagramSkeleton(widths, sk.span)


def bdd_skeleton(sk: ast.Skeleton, params: dict[str, ast.SkeletonParam], errs: Collector) -> BddSkeleton:
    """S5 ``bdd(depth = H, bias = "C")``, or S3 ``bdd(depth in a..b)`` (searched)."""
    d = params.get("depth")
    depth, depth_range = 1, None
    if isinstance(d, ast.ParamRange):
        low, high = ast.resolved(d.low), ast.resolved(d.high)
        if not 1 <= low <= high:
            errs.add(OdtTypeError, f"a bdd depth range must lie in 1..{MAX_DEPTH} and not be empty", d.span)
        depth, depth_range = max(high, 1), (max(low, 1), max(high, 1))
    elif not isinstance(d, ast.ParamCompare) or d.op not in ("==", "=") or not isinstance(d.value, int):
        errs.add(OdtTypeError, "a bdd needs its depth, e.g. bdd(depth = 4)", sk.span)
    elif d.value < 1:
        errs.add(OdtTypeError, "a bdd has at least one level: depth >= 1", d.span)
    else:
        depth = d.value
    if depth > MAX_DEPTH:
        errs.add(OdtTypeError, f"depth {depth} is beyond what exact methods handle (at most {MAX_DEPTH})", sk.span)
    bias = "C"
    b = params.get("bias")
    if b is not None:
        if not isinstance(b, ast.ParamCompare) or b.op not in ("==", "=") or b.value not in BDD_BIASES:
            errs.add(OdtTypeError, 'the bias of a bdd is "C" (merge compatible subtrees), "P" (parent '
                     'majority) or "S" (the solver\'s value)', b.span)
        else:
            bias = str(b.value)
    return BddSkeleton(depth, sk.span, bias, depth_range)


def tree_skeleton(sk: ast.Skeleton, params: dict[str, ast.SkeletonParam], errs: Collector) -> TreeSkeleton:
    """S1-S3 ``tree(depth <= D, leaves <= L, nodes <= K)`` or ``tree(depth in a..b)``."""
    depth_p = params.get("depth")
    depth, depth_range = 0, None
    if depth_p is None:
        errs.add(OdtTypeError, "a tree needs a depth limit, e.g. tree(depth <= 3)", sk.span)
    elif isinstance(depth_p, ast.ParamRange):
        low, high = ast.resolved(depth_p.low), ast.resolved(depth_p.high)
        if not 0 <= low <= high:
            errs.add(OdtTypeError, "an empty depth range", depth_p.span)
        depth, depth_range = high, (low, high)
    elif depth_p.op not in ("<=", "==", "=", "<") or not isinstance(depth_p.value, int):
        errs.add(OdtTypeError, f"a tree depth is bounded with <=, not '{depth_p.op}'", depth_p.span)
    else:
        depth = depth_p.value - (1 if depth_p.op == "<" else 0)
        if depth_p.op in ("==", "="):
            errs.add(OdtTypeError, "'depth == D' fixes a perfect tree; odt trees are 'depth <= D'",
                     depth_p.span, f"write depth <= {depth_p.value}")
        elif depth < 0:
            errs.add(OdtTypeError, "'depth < 0' leaves no tree at all", depth_p.span, "a single leaf is depth <= 0")
    if depth > MAX_DEPTH:
        errs.add(OdtTypeError, f"depth {depth} is beyond what exact methods handle (at most {MAX_DEPTH})", sk.span)
    limits: dict[str, int | None] = {"leaves": None, "nodes": None}
    for key in limits:
        p = params.get(key)
        if p is None:
            continue
        if not isinstance(p, ast.ParamCompare) or p.op not in ("<=", "<") or not isinstance(p.value, int):
            errs.add(OdtTypeError, f"'{key}' is bounded with <=, e.g. {key} <= 7", p.span)
            continue
        value = p.value - (1 if p.op == "<" else 0)
        limits[key] = value
        if value < (1 if key == "leaves" else 0):
            errs.add(OdtTypeError, f"'{key} <= {value}' leaves no tree at all", p.span)
    return TreeSkeleton(depth, limits["leaves"], limits["nodes"], depth_range, sk.span)
