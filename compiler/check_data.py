"""The ``data`` block -> ``DataSpec``, the table it names, and the ``Dataset``.

Input: the data block of a program (or none) and a ``RawTable``. Output: the ``DataSpec``
(target, weight, id, one rule per declared column, dropped columns) and the binarised
``Dataset``; problems go to the ``Collector``: a column declared twice, the target (or
the weight or id column) declared as a feature or dropped, ``quantiles(k)`` with k < 2.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from . import ast
from .data import ColumnRule, Dataset, DataSpec, RawTable, build_dataset, implicit_target, read_csv
from .errors import Collector, OdtDataError, OdtTypeError
from .missing import resolve_missing
from .source import Span

_RULE_WORD = {"categorical": "categorical", "binary": "binary", "numeric": "numeric", "drop": "dropped"}


def data_spec(block: ast.DataBlock | None, errs: Collector | None = None) -> DataSpec:
    """The ``DataSpec`` a data block describes (an empty spec when there is none); a
    column declared twice is reported to ``errs`` (the first declaration holds)."""
    if block is None:
        return DataSpec()
    errs = errs if errs is not None else Collector()
    roles: dict[str, str | None] = {"target": None, "weight": None, "id": None}
    rules: dict[str, ColumnRule] = {}
    drop: list[str] = []
    spans: dict[str, Span] = {}
    declared: dict[str, tuple[str, Span]] = {}  # column -> (how, where) for duplicates
    missing: tuple[str, ...] = ()
    missing_policy: str | None = None
    missing_span: Span | None = None

    def declare(n: ast.Name, how: str) -> bool:
        if n.text in declared:
            first, where = declared[n.text]
            if first.startswith("the ") and not how.startswith("the "):
                errs.add(OdtTypeError, f"column '{n.text}' is {first} (line {where.line}), so it cannot be "
                         f"{'dropped' if how == 'dropped' else 'declared ' + how}", n.span,
                         f"remove '{n.text}' from this declaration")
                return False
            again = "again" if first == how else f"as {how}"
            errs.add(OdtTypeError, f"column '{n.text}' is declared twice: {first} at line {where.line}, "
                     f"and {again} here", n.span, "declare each column once")
            return False
        declared[n.text] = (how, n.span)
        spans[n.text] = n.span
        return True

    for item in block.items:
        match item:
            case ast.TargetItem(name=n) | ast.WeightItem(name=n) | ast.IdItem(name=n):
                role = {ast.TargetItem: "target", ast.WeightItem: "weight", ast.IdItem: "id"}[type(item)]
                if roles[role] is not None:
                    errs.add(OdtTypeError, f"the data block names its {role} column twice", n.span)
                elif declare(n, f"the {role}"):
                    roles[role] = n.text
            case ast.CategoricalItem(names=names) | ast.BinaryItem(names=names):
                kind = "categorical" if isinstance(item, ast.CategoricalItem) else "binary"
                for n in names:
                    if declare(n, kind):
                        rules[n.text] = ColumnRule(kind, span=n.span)
            case ast.NumericItem(names=names, binarization=b):
                for n in names:
                    if declare(n, "numeric"):
                        rules[n.text] = _numeric_rule(b, n.span, errs)
            case ast.DropItem(names=names):
                for n in names:
                    if declare(n, "dropped"):
                        drop.append(n.text)
            case ast.MissingItem(markers=markers, policy=policy):
                if missing:
                    errs.add(OdtTypeError, "the data block declares its missing values twice", item.span,
                             'list every marker in one declaration:  missing "?", "NA"')
                    continue
                missing = markers
                missing_span = item.span
                missing_policy = _missing_policy(policy, errs)
    return DataSpec(roles["target"], roles["weight"], roles["id"], rules, tuple(drop), spans,
                    missing, missing_policy, missing_span, block.span)


def _missing_policy(policy: ast.Name | None, errs: Collector) -> str | None:
    """What a missing numeric or binary cell means: ``learn`` (each split sends it to the side
    the solver chooses; also when no word is given, as scikit-learn's trees do) or ``drop``
    its row."""
    if policy is None or policy.text == "learn":
        return "learn"
    if policy.text == "drop":
        return "drop"
    errs.add(OdtTypeError, f"unknown missing-value policy '{policy.text}'", policy.span,
             "write (learn): each split learns where a missing number goes, or (drop): such rows are dropped")
    return None


def _numeric_rule(b: ast.Binarization | None, span: Span, errs: Collector) -> ColumnRule:
    match b:
        case None | ast.AllThresholds():
            return ColumnRule("numeric", "all", span=span)
        case ast.Quantiles(k=k_or_param):
            k = ast.resolved(k_or_param)
            if k < 2:
                errs.add(OdtTypeError, f"quantiles({k}) makes no cut point: quantiles(k) cuts at the k-quantiles, "
                         "k >= 2", b.span, "e.g. quantiles(10) for the deciles")
                return ColumnRule("numeric", "all", span=span)
            return ColumnRule("numeric", "quantiles", k=k, span=span)
        case ast.ExplicitThresholds(values=vs):
            return ColumnRule("numeric", "explicit", values=tuple(float(ast.resolved(v)) for v in vs), span=span)
        case ast.RawValues():
            return ColumnRule("numeric", "raw", span=span)
    raise AssertionError(b)


def check_roles(spec: DataSpec, table: RawTable, errs: Collector) -> bool:
    """The target, weight and id columns are not features and are not dropped; the
    implicit target (the column ``class``) included. False on a problem: a data block
    that names no target is an error when no column is named ``class``."""
    try:
        target = spec.target or implicit_target(table, spec.block_span)
    except OdtDataError as exc:
        errs.absorb(exc)
        return False
    ok = True
    for role, name in (("target", target), ("weight", spec.weight), ("id", spec.row_id)):
        if name is None:
            continue
        if name in spec.rules or name in spec.drop:
            how = "dropped" if name in spec.drop else f"declared {spec.rules[name].kind}"
            implicit = " (the default target: the column named 'class')" \
                if role == "target" and spec.target is None else ""
            errs.add(OdtTypeError, f"column '{name}' is the {role}{implicit}, so it cannot be {how}",
                     spec.spans.get(name), f"name another target with  target <column>" if role == "target" and
                     spec.target is None else f"remove '{name}' from this declaration")
            ok = False
    return ok


def data_file(program: ast.Program, base_dir: Path | None) -> Path | None:
    """The CSV file the program's data block names (a relative name is relative to
    ``base_dir``, the program's folder), or None when it names none."""
    blocks = program.of(ast.DataBlock)
    if not blocks or blocks[0].path is None:
        return None
    path = Path(blocks[0].path)
    return base_dir / path if not path.is_absolute() and base_dir is not None else path


def load_table(program: ast.Program, base_dir: Path | None) -> RawTable:
    """Read the CSV named by the program's data block (relative to the program file)."""
    blocks = program.of(ast.DataBlock)
    if not blocks or blocks[0].path is None:
        span = blocks[0].span if blocks else program.span
        raise OdtDataError(
            "the program has no data file",
            span if blocks else Span(program.span.source, 1, 1, 1, 1),
            'add  data "file.csv" { target <column> }  or pass data= from Python',
        )
    block = blocks[0]
    path = data_file(program, base_dir)
    assert path is not None and block.path is not None
    empty = any(isinstance(i, ast.MissingItem) and any(m.strip() == "" for m in i.markers) for i in block.items)
    try:
        return read_csv(path, display=block.path, empty_cells=empty)  # missing "": an empty cell is missing
    except OdtDataError as exc:
        if exc.diagnostics[0].span is None:
            raise OdtDataError(exc.message, block.span, exc.diagnostics[0].hint) from None
        raise


def check_dataset(program: ast.Program, table: RawTable, errs: Collector, target: str | None = None) -> Dataset | None:
    """The binarised dataset of ``table`` under the program's data block, or None;
    ``target``: the label column named from Python (``odt.compile(..., target="y")``)."""
    blocks = program.of(ast.DataBlock)
    spec = data_spec(blocks[0] if blocks else None, errs)
    if target is not None:
        if spec.target is not None and spec.target != target:
            errs.add(OdtTypeError, f"the data block names the target '{spec.target}', and target='{target}' was "
                     "passed too", spec.spans.get(spec.target), "name the label column once")
            return None
        spec = dataclasses.replace(spec, target=target)
    if not check_roles(spec, table, errs):
        return None
    try:
        if not spec.missing:
            return build_dataset(table, spec)
        target = spec.target or implicit_target(table)
        kept, dropped, learn = resolve_missing(table, spec, target)
        if learn:  # every cut of these columns twice: missing to the yes side, or to the no side
            rules = dict(spec.rules)
            for col in learn:
                rule = rules.get(col)
                numeric = rule if rule is not None and rule.kind == "numeric" else ColumnRule("numeric", span=spec.spans.get(col))
                rules[col] = dataclasses.replace(numeric, missing=spec.missing)
            spec = dataclasses.replace(spec, rules=rules)
        return dataclasses.replace(build_dataset(kept, spec), dropped_rows=tuple(int(r) for r in dropped))
    except OdtDataError as exc:
        errs.absorb(exc)
        return None
