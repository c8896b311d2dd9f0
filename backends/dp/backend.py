"""The ``dp`` backend: ConTree (Brita, van der Linden, Demirović, AAAI 2025) on the checked
program directly, without the IR.

Fragment: ``tree(depth <= D)`` (no size limit), univariate splits, the objective
``errors`` (or ``maximize accuracy``, its affine image), and at most ``every leaf: samples
>= m``. Inputs: numeric columns whose cut points are "every midpoint" (``thresholds(all)``,
``raw`` or inferred) enter with their raw values, so the search chooses thresholds itself
(S7); columns binarised otherwise (quantiles, an explicit list, categories, 0/1 columns)
enter as their 0/1 features, so the program's binarisation is respected. Rows of weight 0
are left out, as in the other encodings. The result is the same ``Tree`` type as every
other backend's, with thresholds on raw values.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from odt.compiler import ir
from odt.compiler.classifiers import Leaf, Split, Tree, TreeNode
from odt.compiler.data import Feature
from odt.compiler.errors import UnsupportedConstruct
from odt.compiler.program_types import CheckedProgram, LinearConstraint, TreeSkeleton

from ..base import Artifact, Backend, BackendResult, Progress, SolveOptions, Status, Stopwatch
from .contree import DPLeaf, DPSplit, optimal_tree


def fragment_error(program: CheckedProgram) -> str | None:
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


def min_leaf(program: CheckedProgram) -> int:
    m = 1
    for c in program.constraints:
        if isinstance(c, LinearConstraint) and c.scope == "leaf":
            m = max(m, int(-(c.form.constant // 1)))
    return m


def dp_inputs(program: CheckedProgram) -> tuple[np.ndarray, list[tuple[str, Feature | None]]]:
    """The matrix the search runs on: raw values for every-midpoint numeric columns, 0/1
    for the other features; with, per column of the matrix, (column, feature or None)."""
    data = program.dataset
    cols: list[np.ndarray] = []
    dims: list[tuple[str, Feature | None]] = []
    raw_done: set[str] = set()
    rules = _column_methods(program)
    for j, f in enumerate(data.features):
        if not program.feature_mask[j]:
            continue
        if f.kind == "threshold" and rules.get(f.column) in (None, "all", "raw"):
            if f.column not in raw_done:
                raw_done.add(f.column)
                cols.append(data.table.numbers(f.column))
                dims.append((f.column, None))
            continue
        cols.append(data.X[:, j].astype(float))
        dims.append((f.column, f))
    X = np.column_stack(cols) if cols else np.zeros((data.n_rows, 0))
    return X, dims


def _column_methods(program: CheckedProgram) -> dict[str, str]:
    from odt.compiler.check import data_spec
    from odt.compiler import ast

    blocks = program.program.of(ast.DataBlock)
    spec = data_spec(blocks[0] if blocks else None)
    return {col: rule.method for col, rule in spec.rules.items() if rule.kind == "numeric"}


def to_tree(node, dims: list[tuple[str, Feature | None]], program: CheckedProgram) -> Tree:
    """A ConTree tree as an odt ``Tree`` (rows going left satisfy x <= t)."""
    features: list[Feature] = []

    def feature(j: int, t: float) -> tuple[int, bool]:
        """Index of the test and whether its true side is the left (<=) side."""
        col, f = dims[j]
        test, left_true = (Feature(col, "threshold", threshold=float(t)), True) if f is None else (f, False)
        if test not in features:
            features.append(test)
        return features.index(test), left_true

    def build(n) -> TreeNode:
        if isinstance(n, DPLeaf):
            return Leaf(int(n.label))
        k, left_true = feature(n.feature, n.threshold)
        left, right = build(n.left), build(n.right)
        return Split(k, left, right) if left_true else Split(k, right, left)

    root = build(node)
    columns = tuple(dict.fromkeys(c for c, _ in dims))
    return Tree(tuple(features), program.dataset.classes, root, columns)


class DpBackend(Backend):
    NAME = "dp"
    CAPABILITIES: frozenset = frozenset()  # takes no IR: programs in its fragment only
    FILE_FORMAT = "none"
    ENCODING = "none"

    def emit(self, model: ir.Model) -> Artifact:
        raise UnsupportedConstruct("the dp backend has no solver file: it searches the program directly",
                                   hint="use --to wcnf, cpmpy or pyomo")

    def solve(self, model: ir.Model, options: SolveOptions) -> BackendResult:
        raise UnsupportedConstruct("the dp backend solves programs, not IR models")

    @staticmethod
    def refuse_outside_fragment(program: CheckedProgram) -> None:
        """The capability check of a backend without IR: the program must lie in the fragment."""
        reason = fragment_error(program)
        if reason is not None:
            raise UnsupportedConstruct(f"backend 'dp' takes {reason}", program.objective.span,
                                       "backends for the rest: maxsat, cp, milp (or auto)")

    def solve_program(self, program: CheckedProgram, options: SolveOptions) -> tuple[Tree | None, BackendResult]:
        self.refuse_outside_fragment(program)
        clock = Stopwatch()
        data = program.dataset
        X, dims = dp_inputs(program)
        w = data.row_weights()
        keep = w > 0
        scale = program.objective.levels[0].terms[0][1]
        offset = program.objective.levels[0].constant
        on_progress = options.on_progress

        def report(elapsed: float, incumbent: float, bound: float) -> None:
            if on_progress is not None:
                on_progress(Progress(elapsed, _level(incumbent, scale, offset), _level(bound, scale, offset)))

        res = optimal_tree(X[keep], data.y[keep], program.skeleton.depth, weights=w[keep],
                           n_classes=len(data.classes), min_leaf=min_leaf(program),
                           time_limit=options.time_limit, on_progress=report)
        tree = to_tree(res.tree, dims, program)
        status = Status.OPTIMAL if res.status == "optimal" else Status.FEASIBLE
        level = _level(res.cost, scale, offset)
        return tree, BackendResult(status, None, (level,), _level(res.lower_bound, scale, offset),
                                   clock.elapsed(), f"ConTree: {res.stats}")


    def relaxation(self, program: CheckedProgram, time_limit: float) -> tuple[Tree, float]:
        """ConTree on the program's relaxation (B4 warm start): same depth, data,
        binarisation and minimum leaf size, the objective ``errors``, no other constraint."""
        data = program.dataset
        X, dims = dp_inputs(program)
        w = data.row_weights()
        keep = w > 0
        res = optimal_tree(X[keep], data.y[keep], program.skeleton.depth, weights=w[keep],
                           n_classes=len(data.classes), min_leaf=min_leaf(program), time_limit=time_limit)
        return to_tree(res.tree, dims, program), res.cost


def _level(errors: float, scale: Fraction, offset: Fraction) -> Fraction:
    return Fraction(errors).limit_denominator(10**9) * scale + offset
