"""AST + data -> ``CheckedProgram``: name resolution, types and arity (E5).

Input: an ``ast.Program`` and a ``RawTable`` (from the data block or from Python). Output:
a ``CheckedProgram`` with the dataset binarised, groups evaluated to row masks, the skeleton
and objective normalised to ``LinearForm`` values. All problems are collected and raised
together as one ``OdtError``; unknown names carry the closest known name as a hint.
"""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from . import ast
from .data import ColumnRule, Dataset, DataSpec, RawTable, build_dataset, read_csv
from .errors import Diagnostic, OdtDataError, OdtError, OdtNameError, OdtTypeError, did_you_mean
from .checked import (
    QUANTITIES,
    BddSkeleton,
    CheckedObjective,
    CheckedProgram,
    CostTable,
    DiagramSkeleton,
    LinearConstraint,
    LinearForm,
    QuantityRef,
    SolveRequest,
    StructuralConstraint,
    TreeSkeleton,
)
from .source import Span

BACKEND_NAMES = ("auto", "maxsat", "cp", "milp", "dp")
SOLVE_OPTIONS = ("time_limit", "threads", "seed", "verbose", "encoding", "solver", "preselect")
STRATEGIES = ("default", "incremental")
TREE_PARAMS = ("depth", "leaves", "nodes")
BDD_PARAMS = ("depth", "bias")
BDD_BIASES = ("C", "P", "S")  # merge compatible subtrees, parent majority, solver's value (Hu)
#: Quantities that count whole rows or structure, so their values are integers when the
#: data has integer weights; used to turn ``<`` into ``<= -1``.
_INTEGER_KINDS = {"errors", "nodes", "leaves", "depth", "features_used", "predicted", "tp", "fp", "tn", "fn", "size", "samples"}


class _Collector:
    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.first_kind: type[OdtError] | None = None

    def add(self, kind: type[OdtError], message: str, span: Span | None, hint: str | None = None) -> None:
        self.diagnostics.append(Diagnostic(message, span, hint))
        self.first_kind = self.first_kind or kind

    def absorb(self, exc: OdtError) -> None:
        self.diagnostics.extend(exc.diagnostics)
        self.first_kind = self.first_kind or type(exc)

    def raise_if_any(self) -> None:
        if self.diagnostics:
            raise (self.first_kind or OdtError)(self.diagnostics)


def data_spec(block: ast.DataBlock | None) -> DataSpec:
    """The ``DataSpec`` a data block describes (an empty spec when there is none)."""
    if block is None:
        return DataSpec()
    target = weight = row_id = None
    rules: dict[str, ColumnRule] = {}
    drop: list[str] = []
    spans: dict[str, Span] = {}
    for item in block.items:
        match item:
            case ast.TargetItem(name=n):
                target, spans[n.text] = n.text, n.span
            case ast.WeightItem(name=n):
                weight, spans[n.text] = n.text, n.span
            case ast.IdItem(name=n):
                row_id, spans[n.text] = n.text, n.span
            case ast.CategoricalItem(names=names):
                for n in names:
                    rules[n.text], spans[n.text] = ColumnRule("categorical", span=n.span), n.span
            case ast.BinaryItem(names=names):
                for n in names:
                    rules[n.text], spans[n.text] = ColumnRule("binary", span=n.span), n.span
            case ast.NumericItem(names=names, binarization=b):
                for n in names:
                    rules[n.text], spans[n.text] = _numeric_rule(b, n.span), n.span
            case ast.DropItem(names=names):
                for n in names:
                    drop.append(n.text)
                    spans[n.text] = n.span
    return DataSpec(target, weight, row_id, rules, tuple(drop), spans)


def _numeric_rule(b: ast.Binarization | None, span: Span) -> ColumnRule:
    match b:
        case None | ast.AllThresholds():
            return ColumnRule("numeric", "all", span=span)
        case ast.Quantiles(k=k):
            return ColumnRule("numeric", "quantiles", k=k, span=span)
        case ast.ExplicitThresholds(values=vs):
            return ColumnRule("numeric", "explicit", values=tuple(float(v) for v in vs), span=span)
        case ast.RawValues():
            return ColumnRule("numeric", "raw", span=span)
    raise AssertionError(b)


def load_table(program: ast.Program, base_dir: Path | None) -> RawTable:
    """Read the CSV named by the program's data block (relative to the program file)."""
    blocks = program.of(ast.DataBlock)
    if not blocks or blocks[0].path is None:
        span = blocks[0].span if blocks else program.span
        raise OdtDataError(
            "the program has no data file",
            span if blocks else None,
            'add  data "file.csv" { target <column> }  or pass data= from Python',
        )
    block = blocks[0]
    path = Path(block.path)
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    try:
        return read_csv(path, display=block.path)
    except OdtDataError as exc:
        if exc.diagnostics[0].span is None:
            raise OdtDataError(exc.message, block.span, exc.diagnostics[0].hint) from None
        raise


def check(program: ast.Program, table: RawTable) -> CheckedProgram:
    """Resolve and type-check ``program`` against ``table``; raise every problem at once."""
    errs = _Collector()
    for kind in (ast.DataBlock, ast.ModelDef, ast.Objective, ast.SolveStmt):
        items = program.of(kind)
        for extra in items[1:]:
            errs.add(OdtTypeError, f"a program has at most one {_item_word(kind)}", extra.span, "merge them into one")
    blocks = program.of(ast.DataBlock)
    spec = data_spec(blocks[0] if blocks else None)
    dataset: Dataset | None = None
    try:
        dataset = build_dataset(table, spec)
    except OdtDataError as exc:
        errs.absorb(exc)
    if dataset is None:
        errs.raise_if_any()
        raise AssertionError("unreachable")
    checker = _Checker(program, dataset, errs)
    result = checker.run()
    errs.raise_if_any()
    return result


def _item_word(kind: type) -> str:
    return {ast.DataBlock: "data block", ast.ModelDef: "model", ast.Objective: "objective", ast.SolveStmt: "solve directive"}[kind]


class _Checker:
    def __init__(self, program: ast.Program, dataset: Dataset, errs: _Collector):
        self.program = program
        self.data = dataset
        self.errs = errs
        self.groups: dict[str, np.ndarray] = {}
        self.costs: dict[str, ast.CostTable] = {}
        self.columns = [c for c in dataset.table.columns]

    # ------------------------------------------------------------------ driver
    def run(self) -> CheckedProgram:
        for item in self.program.items:
            if isinstance(item, ast.GroupDef):
                self.group_def(item)
            elif isinstance(item, ast.CostDef):
                self.costs[item.name.text] = item.table
                self.cost_table(item.table)
        models = self.program.of(ast.ModelDef)
        if not models:
            self.errs.add(OdtTypeError, "the program has no model", None, "add e.g.  model tree(depth <= 3)")
            skeleton, splits, mask, model_span = None, "univariate", np.ones(len(self.data.features), bool), self.program.span
        else:
            skeleton, splits, mask = self.model(models[0])
            model_span = models[0].span
        objectives = self.program.of(ast.Objective)
        objective = self.objective(objectives[0]) if objectives else CheckedObjective(
            "minimize", (LinearForm.of(QuantityRef("errors")),), self.program.span
        )
        constraints = []
        for block in self.program.of(ast.ConstraintBlock):
            for c in block.constraints:
                constraints.extend(self.constraint(c))
        solves = self.program.of(ast.SolveStmt)
        solve = self.solve(solves[0]) if solves else SolveRequest("auto", {}, None, None)
        if "preselect" in solve.options and not isinstance(skeleton, BddSkeleton):
            self.errs.add(OdtTypeError, "'preselect' (Hu's CART feature pre-selection) applies to bdd models",
                          solves[0].span, "e.g. model bdd(depth = 4)  solve maxsat(preselect = 10)")
        return CheckedProgram(
            self.program, self.data, self.groups, skeleton, splits, mask, objective, tuple(constraints), solve, model_span
        )  # type: ignore[arg-type]

    # ------------------------------------------------------------------ groups (C1)
    def group_def(self, item: ast.GroupDef) -> None:
        name = item.name.text
        if name in self.groups:
            self.errs.add(OdtNameError, f"group '{name}' is defined twice", item.name.span)
            return
        try:
            mask = self.bool_expr(item.expr)
        except OdtError as exc:
            self.errs.absorb(exc)
            return
        if not mask.any():
            self.errs.add(OdtDataError, f"group '{name}' contains no row of the data", item.span,
                          "check the values it compares against")
        self.groups[name] = mask

    def bool_expr(self, e: ast.BoolExpr) -> np.ndarray:
        match e:
            case ast.BoolOr(items=items):
                return np.logical_or.reduce([self.bool_expr(i) for i in items])
            case ast.BoolAnd(items=items):
                return np.logical_and.reduce([self.bool_expr(i) for i in items])
            case ast.BoolNot(item=i):
                return ~self.bool_expr(i)
            case ast.BoolName(name=n):
                if n.text in self.groups:
                    return self.groups[n.text]
                if n.text in self.data.table.columns:
                    values = self.data.table.numbers(n.text)
                    if not set(np.unique(values).tolist()) <= {0.0, 1.0}:
                        raise OdtTypeError(f"column '{n.text}' is not 0/1, so it cannot stand alone as a condition",
                                           n.span, f"compare it, e.g. {n.text} >= 1")
                    return values == 1
                raise OdtNameError(f"unknown group or column '{n.text}'", n.span,
                                   did_you_mean(n.text, list(self.groups) + self.columns))
            case ast.Comparison(left=l, op=op, right=r):
                return self.compare(l, op, r, e.span)
            case ast.Membership(value=v, options=opts):
                return np.logical_or.reduce([self.compare(v, "==", o, e.span) for o in opts])
        raise OdtTypeError("unsupported condition", getattr(e, "span", None))

    def _value(self, v: ast.Value) -> tuple[str, Any]:
        """('column', values) | ('number', x) | ('string', s)."""
        match v:
            case ast.ValueClass():
                return "column", np.array([self.data.classes[k] for k in self.data.y], dtype=object)
            case ast.ValueName(name=n):
                if n.text in self.data.table.columns:
                    return "column", self.data.table.columns[n.text]
                raise OdtNameError(f"unknown column '{n.text}'", n.span, did_you_mean(n.text, self.columns, "column"))
            case ast.ValueNumber(value=x):
                return "number", float(x)
            case ast.ValueString(value=s):
                return "string", s
        raise AssertionError(v)

    def compare(self, left: ast.Value, op: str, right: ast.Value, span: Span) -> np.ndarray:
        lk, lv = self._value(left)
        rk, rv = self._value(right)
        if lk != "column" and rk != "column":
            raise OdtTypeError("a condition must mention a column or 'class'", span)
        if lk != "column":
            lk, lv, rk, rv = rk, rv, lk, lv
            op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
        col = np.asarray(lv)
        if rk == "string" or (rk == "column" and np.asarray(rv).dtype.kind == "O"):
            if op not in ("==", "!="):
                raise OdtTypeError(f"'{op}' compares numbers; text values only take == and !=", span)
            a = np.array([_text(x) for x in col], dtype=object)
            b = rv if rk == "string" else np.array([_text(x) for x in np.asarray(rv)], dtype=object)
            return (a == b) if op == "==" else (a != b)
        try:
            a = col.astype(float)
            b = np.asarray(rv).astype(float) if rk == "column" else float(rv)
        except (TypeError, ValueError):
            if op in ("==", "!="):
                a2 = np.array([_text(x) for x in col], dtype=object)
                out = a2 == _text(rv)
                return out if op == "==" else ~out
            raise OdtTypeError(f"'{_quote(left)}' holds text, so '{op}' with a number is not defined", span) from None
        return {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
                "==": np.equal, "!=": np.not_equal}[op](a, b)

    def cost_table(self, table: ast.CostTable) -> None:
        for n, _ in table.entries:
            self.feature_name(n)

    def feature_name(self, n: ast.Name) -> None:
        """A name used as a feature: a column, or the name of one binarised feature."""
        names = {f.name for f in self.data.features}
        if n.text not in self.data.table.columns and n.text not in names:
            self.errs.add(OdtNameError, f"unknown feature '{n.text}'", n.span,
                          did_you_mean(n.text, self.columns, "column"))

    # ------------------------------------------------------------------ model (S1-S7)
    def model(self, m: ast.ModelDef) -> tuple[Any, str, np.ndarray]:
        sk = m.skeleton
        params: dict[str, ast.SkeletonParam] = {}
        for p in sk.params:
            if p.name.text in params:
                self.errs.add(OdtTypeError, f"parameter '{p.name.text}' given twice", p.span)
            params[p.name.text] = p
        skeleton: Any = None
        allowed = {"tree": TREE_PARAMS, "diagram": ("widths",), "bdd": BDD_PARAMS}[sk.kind]
        for p in sk.params:
            if p.name.text not in allowed:
                self.errs.add(OdtNameError, f"'{sk.kind}' has no parameter '{p.name.text}'", p.name.span,
                              did_you_mean(p.name.text, allowed, "parameter"))
        if sk.kind == "tree":
            skeleton = self.tree_skeleton(sk, params)
        elif sk.kind == "diagram":
            w = params.get("widths")
            if not isinstance(w, ast.ParamCompare) or w.op not in ("==", "=") or not isinstance(w.value, tuple):
                self.errs.add(OdtTypeError, "a diagram needs its layer widths, e.g. diagram(widths = [1, 2, 4])", sk.span)
                skeleton = DiagramSkeleton((1,), sk.span)
            else:
                widths = w.value
                if not widths or widths[0] != 1:
                    self.errs.add(OdtTypeError, f"a diagram starts with one root: its widths begin with 1, "
                                  f"e.g. widths = [1, {', '.join(map(str, widths[1:] or (2,)))}]", w.span)
                elif min(widths) < 1:
                    self.errs.add(OdtTypeError, "every layer of a diagram holds at least one node (widths >= 1)", w.span)
                elif len(widths) > 12:
                    self.errs.add(OdtTypeError, f"{len(widths)} layers is beyond what exact methods handle "
                                  "(at most 12)", w.span)
                skeleton = DiagramSkeleton(widths, sk.span)
        else:
            skeleton = self.bdd_skeleton(sk, params)
        splits = "univariate"
        mask = np.ones(len(self.data.features), dtype=bool)
        for opt in m.options:
            if isinstance(opt, ast.SplitsOption):
                splits = opt.kind
            else:
                wanted = set()
                for n in opt.names:
                    if n.text not in self.data.table.columns:
                        self.errs.add(OdtNameError, f"unknown column '{n.text}'", n.span,
                                      did_you_mean(n.text, self.columns, "column"))
                    wanted.add(n.text)
                mask = np.array([f.column in wanted for f in self.data.features], dtype=bool)
        if not mask.any() and len(self.data.features):
            self.errs.add(OdtDataError, "the model has no feature to split on", m.span)
        return skeleton, splits, mask

    def bdd_skeleton(self, sk: ast.Skeleton, params: dict[str, ast.SkeletonParam]) -> BddSkeleton:
        """S5 ``bdd(depth = H, bias = "C")``, or S3 ``bdd(depth in a..b)`` (searched)."""
        d = params.get("depth")
        depth, depth_range = 1, None
        if isinstance(d, ast.ParamRange):
            if not 1 <= d.low <= d.high:
                self.errs.add(OdtTypeError, "a bdd depth range must lie in 1..12 and not be empty", d.span)
            depth, depth_range = max(d.high, 1), (max(d.low, 1), max(d.high, 1))
        elif not isinstance(d, ast.ParamCompare) or d.op not in ("==", "=") or not isinstance(d.value, int):
            self.errs.add(OdtTypeError, "a bdd needs its depth, e.g. bdd(depth = 4)", sk.span)
        elif d.value < 1:
            self.errs.add(OdtTypeError, "a bdd has at least one level: depth >= 1", d.span)
        else:
            depth = d.value
        if depth > 12:
            self.errs.add(OdtTypeError, f"depth {depth} is beyond what exact methods handle (at most 12)", sk.span)
        bias = "C"
        b = params.get("bias")
        if b is not None:
            if not isinstance(b, ast.ParamCompare) or b.op not in ("==", "=") or b.value not in BDD_BIASES:
                self.errs.add(OdtTypeError, 'the bias of a bdd is "C" (merge compatible subtrees), "P" (parent '
                              'majority) or "S" (the solver\'s value)', b.span)
            else:
                bias = str(b.value)
        return BddSkeleton(depth, sk.span, bias, depth_range)

    def tree_skeleton(self, sk: ast.Skeleton, params: dict[str, ast.SkeletonParam]) -> TreeSkeleton:
        depth_p = params.get("depth")
        depth, depth_range = 0, None
        if depth_p is None:
            self.errs.add(OdtTypeError, "a tree needs a depth limit, e.g. tree(depth <= 3)", sk.span)
        elif isinstance(depth_p, ast.ParamRange):
            if not 0 <= depth_p.low <= depth_p.high:
                self.errs.add(OdtTypeError, "an empty depth range", depth_p.span)
            depth, depth_range = depth_p.high, (depth_p.low, depth_p.high)
        elif depth_p.op not in ("<=", "==", "=", "<") or not isinstance(depth_p.value, int):
            self.errs.add(OdtTypeError, f"a tree depth is bounded with <=, not '{depth_p.op}'", depth_p.span)
        else:
            depth = depth_p.value - (1 if depth_p.op == "<" else 0)
            if depth_p.op in ("==", "="):
                self.errs.add(OdtTypeError, "'depth == D' fixes a perfect tree; odt trees are 'depth <= D'",
                              depth_p.span, f"write depth <= {depth_p.value}")
        if depth > 12:
            self.errs.add(OdtTypeError, f"depth {depth} is beyond what exact methods handle (at most 12)", sk.span)
        limits: dict[str, int | None] = {"leaves": None, "nodes": None}
        for key in limits:
            p = params.get(key)
            if p is None:
                continue
            if not isinstance(p, ast.ParamCompare) or p.op not in ("<=", "<") or not isinstance(p.value, int):
                self.errs.add(OdtTypeError, f"'{key}' is bounded with <=, e.g. {key} <= 7", p.span)
                continue
            limits[key] = p.value - (1 if p.op == "<" else 0)
            if limits[key] < (1 if key == "leaves" else 0):
                self.errs.add(OdtTypeError, f"'{key} <= {limits[key]}' leaves no tree at all", p.span)
        return TreeSkeleton(depth, limits["leaves"], limits["nodes"], depth_range, sk.span)

    # ------------------------------------------------------------------ expressions (O, C)
    def objective(self, o: ast.Objective) -> CheckedObjective:
        levels = []
        for e in o.levels:
            form = self.safe_form(e)
            if o.sense == "maximize":
                form = form.scale(Fraction(-1))
            levels.append(form)
        return CheckedObjective("minimize", tuple(levels), o.span, maximized=o.sense == "maximize")

    def safe_form(self, e: ast.Expr) -> LinearForm:
        try:
            return self.form(e)
        except OdtError as exc:
            self.errs.absorb(exc)
            return LinearForm.const(Fraction(0))

    def form(self, e: ast.Expr) -> LinearForm:
        match e:
            case ast.Number(value=v):
                return LinearForm.const(v)
            case ast.Neg(item=i):
                return self.form(i).scale(Fraction(-1))
            case ast.BinOp(op="+", left=l, right=r):
                return self.form(l).plus(self.form(r))
            case ast.BinOp(op="-", left=l, right=r):
                return self.form(l).plus(self.form(r).scale(Fraction(-1)))
            case ast.BinOp(op="*", left=l, right=r):
                a, b = self.form(l), self.form(r)
                if a.is_constant():
                    return b.scale(a.constant)
                if b.is_constant():
                    return a.scale(b.constant)
                raise OdtTypeError("a product of two quantities is not linear", e.span,
                                   "multiply quantities by numbers only")
            case ast.BinOp(op="/", left=l, right=r):
                a, b = self.form(l), self.form(r)
                if not b.is_constant():
                    raise OdtTypeError("division by a quantity is not linear", e.span,
                                       "write a >= k * b instead of a / b >= k")
                if b.constant == 0:
                    raise OdtTypeError("division by zero", e.span)
                return a.scale(1 / b.constant)
            case ast.Quantity(name=n):
                return self.quantity(n, (), e.span)
            case ast.Call(name=n, args=args):
                return self.quantity(n, args, e.span)
            case ast.StringArg() | ast.ClassArg():
                raise OdtTypeError("a text value cannot stand in an arithmetic expression", e.span)
        raise OdtTypeError("unsupported expression", getattr(e, "span", None))

    def quantity(self, n: ast.Name, args: tuple[ast.Expr, ...], span: Span) -> LinearForm:
        kind = n.text
        if kind in self.groups and not args:
            raise OdtTypeError(f"'{kind}' is a group, not a quantity", n.span,
                               f"use it as an argument, e.g. errors({kind}) or rate(1, {kind})")
        if kind not in QUANTITIES:
            raise OdtNameError(f"unknown quantity '{kind}'", n.span, did_you_mean(kind, QUANTITIES, "quantity"))
        sig = QUANTITIES[kind]
        required = [s for s in sig if not s.endswith("?")]
        if not len(required) <= len(args) <= len(sig):
            want = ", ".join({"g": "group", "g?": "[group]", "c": "class", "e": "expression"}[s] for s in sig) or "no arguments"
            raise OdtTypeError(f"'{kind}' takes {want}; got {len(args)} argument(s)", span)
        klass = group = None
        inner = None
        for s, a in zip(sig, args):
            if s.startswith("g"):
                group = self.group_arg(a)
            elif s == "c":
                klass = self.class_arg(a)
            else:
                inner = self.form(a)
        if kind == "abs":
            assert inner is not None
            if inner.is_constant():
                return LinearForm.const(abs(inner.constant))
            return LinearForm.of(QuantityRef("abs", inner=inner, span=span))
        if kind == "accuracy":  # accuracy(G) = 1 - errors(G) / weight(G)
            total = self.group_weight(group)
            return LinearForm.const(Fraction(1)).plus(
                LinearForm.of(QuantityRef("errors", group, span=span)).scale(-1 / total))
        if kind == "rate":  # rate(c, G) = predicted(c, G) / weight(G)
            total = self.group_weight(group)
            return LinearForm.of(QuantityRef("predicted", group, klass, span=span)).scale(1 / total)
        if kind == "size":
            return LinearForm.const(self.group_weight(group))
        if kind in ("tp", "fp", "tn", "fn") and len(self.data.classes) != 2:
            raise OdtTypeError(f"'{kind}' needs two classes; the target has {len(self.data.classes)}", span,
                               "use predicted(c, G) and errors(G) for several classes")
        return LinearForm.of(QuantityRef(kind, group, klass, span=span))

    def group_weight(self, group: str | None) -> Fraction:
        w = self.data.row_weights()
        total = w.sum() if group is None else w[self.groups[group]].sum()
        return Fraction(float(total)).limit_denominator(10**9) if total > 0 else Fraction(1)

    def group_arg(self, a: ast.Expr) -> str:
        if isinstance(a, ast.Quantity) and a.name.text in self.groups:
            return a.name.text
        name = a.name.text if isinstance(a, ast.Quantity) else None
        raise OdtNameError(f"unknown group '{name}'" if name else "expected a group name", getattr(a, "span", None),
                           did_you_mean(name, self.groups, "group") if name else None)

    def class_arg(self, a: ast.Expr) -> int:
        text = None
        if isinstance(a, ast.Number):
            text = str(a.value.numerator) if a.value.denominator == 1 else str(float(a.value))
        elif isinstance(a, ast.StringArg):
            text = a.value
        elif isinstance(a, ast.Quantity):
            text = a.name.text
        labels = [str(c) for c in self.data.classes]
        if text is None or text not in labels:
            raise OdtNameError(f"unknown class {text!r}" if text else "expected a class label", getattr(a, "span", None),
                               did_you_mean(text or "", labels, "class"))
        return labels.index(text)

    # ------------------------------------------------------------------ constraints
    def constraint(self, c: ast.Constraint) -> list:
        match c:
            case ast.Relation():
                return self.relation(c, None)
            case ast.Every(scope=scope, body=body):
                if isinstance(body, ast.Relation):
                    return self.relation(body, scope, c.span)
                if scope != "path":
                    self.errs.add(OdtTypeError, f"'{_kind_word(body)}' is a path constraint: write 'every path: ...'", c.span)
                names = (body.first, body.second) if isinstance(body, ast.OrderOnPath) else body.names
                for n in names:
                    self.feature_name(n)
                return [StructuralConstraint(c, c.span)]
            case ast.UsesConstraint(expr=e):
                for n in _uses_names(e):
                    self.feature_name(n)
                return [StructuralConstraint(c, c.span)]
            case ast.CallConstraint(call=call):
                if call.name.text != "same_leaf":
                    self.errs.add(OdtTypeError, f"'{call.name.text}(...)' alone is not a constraint", c.span,
                                  "compare it, e.g. errors(G) <= 3; the only bare call is same_leaf(r1, r2)")
                    return []
                self.same_leaf(call)
                return [StructuralConstraint(c, c.span)]
            case ast.ThresholdRange(name=n, low=lo, high=hi):
                if n.text not in self.data.table.columns:
                    self.errs.add(OdtNameError, f"unknown column '{n.text}'", n.span, did_you_mean(n.text, self.columns, "column"))
                elif lo > hi:
                    self.errs.add(OdtTypeError, f"empty range [{lo}, {hi}]", c.span)
                return [StructuralConstraint(c, c.span)]
        raise AssertionError(c)

    def same_leaf(self, call: ast.Call) -> None:
        if len(call.args) != 2:
            self.errs.add(OdtTypeError, f"same_leaf takes two row ids; got {len(call.args)}", call.span)
            return
        if self.data.ids is None:
            self.errs.add(OdtTypeError, "same_leaf needs row ids: add 'id <column>' to the data block", call.span)
            return
        for a in call.args:
            text = a.name.text if isinstance(a, ast.Quantity) else a.value if isinstance(a, ast.StringArg) else \
                str(a.value) if isinstance(a, ast.Number) else None
            if text not in self.data.ids:
                self.errs.add(OdtNameError, f"no row has id {text!r}", a.span, did_you_mean(str(text), self.data.ids, "row id"))

    def resolved_costs(self, r: ast.Relation) -> CostTable | None:
        if r.cost is None:
            return None
        table = r.cost.table if r.cost.table is not None else self.costs.get(r.cost.name.text) if r.cost.name else None
        if table is None:
            return None
        return CostTable(tuple((self.column_of(n.text), c) for n, c in table.entries),
                         table.default if table.default is not None else Fraction(0))

    def column_of(self, name: str) -> str:
        """A feature name used in a constraint, as the column it tests."""
        if name in self.data.table.columns:
            return name
        for f in self.data.features:
            if f.name == name:
                return f.column
        return name

    def relation(self, r: ast.Relation, scope: str | None, span: Span | None = None) -> list:
        forms = [self.safe_form(p) for p in r.parts]
        costs = self.resolved_costs(r)
        uses_cost = any(q.kind in ("cost", "expected_cost") for f in forms for q, _ in f.terms)
        if uses_cost and costs is None:
            self.errs.add(OdtTypeError, "a cost constraint needs its cost table", r.span,
                          "add  with cost { feature: 3, *: 1 }  or  with cost <table name>")
        if scope is not None:
            allowed = {"leaf": {"samples"}, "node": {"samples"}, "path": {"cost"}}[scope]
            for f in forms:
                for q, _ in f.terms:
                    if q.kind not in allowed:
                        self.errs.add(OdtTypeError, f"'{q.kind}' has no meaning per {scope}", r.span,
                                      f"inside 'every {scope}:' use {', '.join(sorted(allowed))}")
        else:
            for f in forms:
                for q, _ in f.terms:
                    if q.kind in ("samples", "cost"):
                        self.errs.add(OdtTypeError, f"'{q.kind}' is measured per node, leaf or path", r.span,
                                      f"write  every {'leaf' if q.kind == 'samples' else 'path'}: ...")
        out = []
        for i, op in enumerate(r.ops):
            if op == "!=":
                self.errs.add(OdtTypeError, "'!=' is not a linear constraint", r.span, "use <= or >=")
                continue
            diff = forms[i].plus(forms[i + 1].scale(Fraction(-1)))
            if op in ("<", ">"):
                if not self.integral(diff):
                    self.errs.add(OdtTypeError, f"'{op}' needs an integer-valued expression here", r.span,
                                  f"use '{op}=' with an explicit margin")
                    continue
                diff = diff.plus(LinearForm.const(Fraction(1 if op == "<" else -1)))
                op += "="
            if diff.is_constant():
                holds = {"<=": diff.constant <= 0, ">=": diff.constant >= 0, "==": diff.constant == 0}[op]
                if not holds:
                    self.errs.add(OdtTypeError, "this constraint compares constants and is always false", r.span)
                continue
            out.append(LinearConstraint(diff, op, span or r.span, scope, forms[i], forms[i + 1], costs))
        if r.cost is not None and r.cost.name is not None and r.cost.name.text not in self.costs:
            self.errs.add(OdtNameError, f"unknown cost table '{r.cost.name.text}'", r.cost.name.span,
                          did_you_mean(r.cost.name.text, self.costs, "cost table"))
        if r.cost is not None and r.cost.table is not None:
            self.cost_table(r.cost.table)
        return out

    def integral(self, form: LinearForm) -> bool:
        w = self.data.row_weights()
        weights_integral = bool(np.all(np.equal(np.mod(w, 1), 0)))
        if form.constant.denominator != 1:
            return False
        for q, c in form.terms:
            if c.denominator != 1 or q.kind not in _INTEGER_KINDS:
                return False
            if q.kind in ("errors", "predicted", "tp", "fp", "tn", "fn") and not weights_integral:
                return False
        return True

    # ------------------------------------------------------------------ solve (B1, B6)
    def solve(self, s: ast.SolveStmt) -> SolveRequest:
        backend = s.backend.text
        if backend not in BACKEND_NAMES:
            self.errs.add(OdtNameError, f"unknown backend '{backend}'", s.backend.span,
                          did_you_mean(backend, BACKEND_NAMES, "backend"))
        options: dict[str, Any] = {}
        for opt in s.options:
            key = opt.name.text
            if key not in SOLVE_OPTIONS:
                self.errs.add(OdtNameError, f"unknown solve option '{key}'", opt.name.span,
                              did_you_mean(key, SOLVE_OPTIONS, "option"))
                continue
            value = opt.value
            if key == "time_limit":
                value = float(value) if not isinstance(value, str) else None
                if value is None or value <= 0:
                    self.errs.add(OdtTypeError, "time_limit must be a positive duration such as 60s", opt.span)
                    continue
            elif key == "encoding" and value not in ("paths", "flow"):
                self.errs.add(OdtNameError, f"unknown encoding '{value}'", opt.span,
                              did_you_mean(str(value), ("paths", "flow"), "encoding"))
                continue
            elif key == "preselect":
                if not isinstance(value, Fraction) or value.denominator != 1 or value < 1:
                    self.errs.add(OdtTypeError, "preselect must be a positive number of features", opt.span)
                    continue
                value = int(value)
            elif key in ("threads", "seed"):
                if not isinstance(value, Fraction) or value.denominator != 1 or value < 0:
                    self.errs.add(OdtTypeError, f"{key} must be a non-negative integer", opt.span)
                    continue
                value = int(value)
            options[key] = value
        strategy = s.strategy.text if s.strategy else None
        if strategy is not None and strategy not in STRATEGIES:
            self.errs.add(OdtNameError, f"unknown strategy '{strategy}'", s.strategy.span,
                          did_you_mean(strategy, STRATEGIES, "strategy"))
        return SolveRequest(backend, options, strategy, s.span)


def _uses_names(e: ast.UsesExpr) -> list[ast.Name]:
    match e:
        case ast.UsesAtom(name=n):
            return [n]
        case ast.UsesNot(item=i):
            return _uses_names(i)
        case ast.UsesAnd(items=items) | ast.UsesOr(items=items):
            return [n for i in items for n in _uses_names(i)]
    return []


def _kind_word(body: Any) -> str:
    return "before" if isinstance(body, ast.OrderOnPath) else "not (...)"


def _text(x: Any) -> str:
    if isinstance(x, float):
        return str(int(x)) if x.is_integer() else repr(x)
    return str(x)


def _quote(v: ast.Value) -> str:
    return v.name.text if isinstance(v, ast.ValueName) else "class" if isinstance(v, ast.ValueClass) else str(v)
