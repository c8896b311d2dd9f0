"""Data loading and binarisation (E4, S7).

Input: a CSV file, a pandas DataFrame, numpy arrays or a dict of columns, plus the ``data``
block of a program. Output: a ``Dataset``: the raw columns (for groups and re-evaluation),
the target as class indices, optional weights and row ids, and the binary feature matrix
together with the ``Binarizer`` that produced it, so a classifier can ``predict`` raw rows.

Invariants: every error names the column and the row (1-based data row, and the file line
for CSV input); nothing here ever returns a half-read dataset.
"""
from __future__ import annotations

import gc
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from .errors import OdtDataError, did_you_mean
from .features import Block, Feature, FeatureList, ThresholdBlock, missing_rule
from .ranges import MAX_MAGNITUDE
from .source import Span
from .table import (EXACT_INTEGERS, RawTable, _beyond_exact, _is_integer, _is_number, _number_text,  # noqa: F401
                    _read_csv_fast, cell_span, read_csv, table_from_python)  # (the readers' names, as before)


def numbers_or_missing(table: "RawTable", column: str, markers: tuple[str, ...]) -> np.ndarray:
    """The column as float64 with NaN for a missing cell (a marker, NaN or None); a cell
    that is neither a number nor missing is an error naming column and row."""
    values = table.columns[column]
    if values.dtype.kind in "biuf":
        return values.astype(float)
    out = np.empty(len(values), dtype=float)
    wanted = set(markers)
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and math.isnan(v)) or str(v).strip() in wanted:
            out[i] = np.nan
            continue
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            where, span = table.cell(column, i)
            raise OdtDataError(f"{where}: '{v}' is neither a number nor a missing-value marker "
                               f"({', '.join(repr(m) for m in markers)})", span) from None
        if not math.isfinite(out[i]):
            where, span = table.cell(column, i)
            raise OdtDataError(f"{where}: non-finite value '{v}'", span)
    return out


@dataclass(frozen=True, slots=True)
class Binarizer:
    """Turns raw rows into the 0/1 feature matrix the classifier was trained on.

    ``features``: a tuple of features, or a dataset's ``FeatureList`` (whose threshold
    columns are compared with their whole threshold array at once)."""

    features: Sequence[Feature]

    @property
    def columns(self) -> tuple[str, ...]:
        """The raw columns the features read, in order of first use."""
        return FeatureList.of(self.features).columns()

    def transform(self, table: "RawTable") -> np.ndarray:
        """The (rows x features) boolean matrix of ``table``; errors name column and row."""
        features = FeatureList.of(self.features)
        out = np.zeros((table.n_rows, len(features)), dtype=bool)
        numeric_cache: dict[str, np.ndarray] = {}
        for start, block in features.blocks():
            if isinstance(block, ThresholdBlock):  # every threshold of the column in one comparison
                _present(table, (block.column,))
                np.less_equal(_numbers(table, block.column, numeric_cache)[:, None], block.thresholds[None, :],
                              out=out[:, start:start + len(block)])
                continue
            binary: list[int] = []  # binary columns: compared with 1 in one operation below
            columns: list[str] = []
            for j, feat in enumerate(block, start):
                if feat.kind == "binary":
                    binary.append(j)
                    columns.append(feat.column)
                else:
                    _present(table, feat.columns)
                    out[:, j] = _feature_column(table, feat, numeric_cache)
            if binary:
                _present(table, columns)
                values = np.array([_numbers(table, c, numeric_cache) for c in columns]).T  # one copy
                if binary[-1] - binary[0] + 1 == len(binary):  # consecutive: straight into ``out``
                    np.equal(values, 1, out=out[:, binary[0]:binary[-1] + 1])
                else:
                    out[:, binary] = values == 1
        return out

    def to_json(self) -> list:
        return [f.to_json() for f in self.features]


def _present(table: "RawTable", columns: Sequence[str]) -> None:
    """Raise, naming it, for the first of ``columns`` that ``table`` lacks."""
    for col in columns:
        if col not in table.columns:
            raise OdtDataError(
                f"{table.name}: the classifier needs column '{col}', which is missing",
                hint=did_you_mean(col, table.columns, "column"),
            )


def _numbers(table: "RawTable", column: str, cache: dict[str, np.ndarray]) -> np.ndarray:
    if column not in cache:
        cache[column] = table.numbers(column)
    return cache[column]


def _feature_column(table: "RawTable", feat: Feature, numeric_cache: dict[str, np.ndarray]) -> np.ndarray:
    """The 0/1 column of one oblique, category or threshold feature on ``table`` (binary
    features are compared with 1 together, ``Binarizer.transform``)."""
    if feat.kind == "oblique":
        total = np.zeros(table.n_rows)
        for col, cat, coef in feat.terms:
            total += coef * ((table.strings(col) == cat) if cat is not None else _numbers(table, col, numeric_cache))
        assert feat.threshold is not None
        return total >= feat.threshold
    if feat.kind == "category":
        return table.strings(feat.column) == feat.category
    rule = missing_rule(feat) if feat.kind == "threshold" else None
    if rule is not None:  # a learned direction: missing cells go to the yes or the no side
        key = "\x00missing\x00" + feat.column + "\x00" + "\x00".join(rule[1])
        if key not in numeric_cache:
            numeric_cache[key] = numbers_or_missing(table, feat.column, rule[1])
        values = numeric_cache[key]
        return (values <= feat.threshold) | (np.isnan(values) & rule[0])
    return _numbers(table, feat.column, numeric_cache) <= feat.threshold


@dataclass(frozen=True, slots=True)
class ColumnRule:
    """How one column is to be binarised: kind in binary/categorical/numeric, with a method."""

    kind: str
    method: str = "all"  # numeric: "all" | "quantiles" | "explicit" | "raw"
    k: int = 0
    values: tuple[float, ...] = ()
    span: Span | None = None
    missing: tuple[str, ...] = ()  # markers, when a split learns where a missing cell goes (missing ... (learn))


@dataclass(frozen=True, slots=True)
class DataSpec:
    target: str | None = None
    weight: str | None = None
    row_id: str | None = None
    rules: Mapping[str, ColumnRule] = field(default_factory=dict)
    drop: tuple[str, ...] = ()
    spans: Mapping[str, Span] = field(default_factory=dict)  # where each named column was mentioned
    missing: tuple[str, ...] = ()  # texts marking a missing cell (``missing "?"``); none: missing is an error
    missing_policy: str | None = None  # "drop" (rows with a missing number are dropped) or "learn"
    missing_span: Span | None = None
    block_span: Span | None = None  # the data block (where a missing target is reported)


@dataclass(frozen=True)
class Dataset:
    """A table ready for lowering: binary features, class indices, weights, ids, raw columns."""

    table: RawTable
    target: str
    classes: tuple[Any, ...]
    y: np.ndarray  # int class index per row
    weights: np.ndarray | None
    ids: tuple[str, ...] | None
    binarizer: Binarizer
    raw_numeric: tuple[str, ...]  # columns whose every midpoint is a cut (S7): thresholds(all), raw or inferred
    dropped_rows: tuple[int, ...] = ()  # input rows (0-based) dropped for a missing numeric cell (missing ... (drop))

    @cached_property
    def X(self) -> np.ndarray:
        """The (rows x features) 0/1 matrix, built on first use: the solver encodings read
        it, the dp engines never do (they read the raw columns, ``column``)."""
        return self.binarizer.transform(self.table)

    def column(self, j: int) -> np.ndarray:
        """Feature j's 0/1 column, without building the whole matrix."""
        if "X" in self.__dict__:
            return self.X[:, j]
        return Binarizer(self.features[j:j + 1]).transform(self.table)[:, 0]

    @property
    def n_rows(self) -> int:
        return int(self.y.shape[0])

    def __post_init__(self) -> None:
        if not isinstance(self.binarizer.features, FeatureList):  # one FeatureList, made once
            object.__setattr__(self, "binarizer", Binarizer(FeatureList.of(self.binarizer.features)))

    @property
    def features(self) -> FeatureList:
        """The binary features, a ``FeatureList`` (threshold features made on use)."""
        features = self.binarizer.features
        assert isinstance(features, FeatureList)
        return features

    def row_weights(self) -> np.ndarray:
        return self.weights if self.weights is not None else np.ones(self.n_rows)

    def row_patterns(self, mask: np.ndarray) -> np.ndarray:
        """A (rows x k) uint64 matrix whose rows are equal exactly when the rows of ``X``
        restricted to the features in ``mask`` are, without building ``X``: a column's
        threshold block gives the number of its kept cuts below the value (its bits,
        value <= cut, are monotone in the cut, so that count fixes them all), the other
        features their 0/1 columns packed 64 to a word."""
        parts: list[np.ndarray] = []
        made: list[Feature] = []
        for start, block in self.features.blocks():
            keep = mask[start:start + len(block)]
            if isinstance(block, ThresholdBlock):
                if keep.any():
                    cuts = np.sort(block.thresholds[keep])
                    below = np.searchsorted(cuts, self.table.numbers(block.column), side="left")
                    parts.append(below.astype(np.uint64))
                continue
            made += [f for f, k in zip(block, keep) if k]
        if made:
            bits = np.packbits(Binarizer(tuple(made)).transform(self.table), axis=1)
            bits = np.pad(bits, ((0, 0), (0, -bits.shape[1] % 8)))
            parts.append(np.ascontiguousarray(bits).view(np.uint64))
        return np.column_stack(parts) if parts else np.zeros((self.n_rows, 0), dtype=np.uint64)


def _class_values(labels: np.ndarray) -> tuple[tuple[Any, ...], np.ndarray]:
    distinct, inverse = np.unique(labels, return_inverse=True)  # each distinct label once
    texts = [str(v) if not isinstance(v, float) else _number_text(v) for v in distinct.tolist()]
    unique = sorted(set(texts), key=lambda t: (0, float(t), t) if _is_number(t) else (1, 0.0, t))
    if all(_is_number(t) and float(t).is_integer() for t in unique):  # exact: 10**30 + 1 stays itself
        classes: tuple[Any, ...] = tuple(int(t) if _is_integer(t) else int(float(t)) for t in unique)
    else:
        classes = tuple(unique)
    index = {t: i for i, t in enumerate(unique)}
    of_distinct = np.array([index[t] for t in texts], dtype=np.int64)
    return classes, of_distinct[inverse.reshape(-1)]


def _thresholds(values: np.ndarray, rule: ColumnRule) -> np.ndarray:
    """The cuts of a numeric column, ascending: the explicit values, or the midpoints
    between consecutive distinct values (all of them, or the ones nearest the quantiles).
    One sort of the column (``np.unique``)."""
    if rule.method == "explicit":
        return np.array(sorted(set(rule.values)), dtype=np.float64)
    uniq = np.unique(values)
    if uniq.size < 2:
        return np.zeros(0)
    mids = (uniq[:-1] + uniq[1:]) / 2.0
    if rule.method == "quantiles" and rule.k - 1 < mids.size:  # else each midpoint is a cut
        qs = np.quantile(values, [i / rule.k for i in range(1, rule.k)])
        # snap each quantile to the nearest midpoint so cuts fall between values
        return np.unique(mids[[int(np.argmin(np.abs(mids - q))) for q in qs]])
    return mids


def implicit_target(table: RawTable, span: Span | None = None) -> str:
    """The target of a data block that names none: the column named ``class``. Without
    one it is an error that lists the columns (never a guess such as the last column).

    >>> implicit_target(RawTable("<data>", {"a": np.zeros(2), "class": np.ones(2)}))
    'class'
    """
    if "class" in table.columns:
        return "class"
    shown = ", ".join(list(table.columns)[:12]) + (", ..." if len(table.columns) > 12 else "")
    python = table.name == "<data>"  # the rows came from Python: say it the Python way too
    raise OdtDataError(f"{table.name}: no target column: the data block names none and no column is named 'class' "
                       f"(the columns are {shown})", span,
                       "name the label column in the data block:  data { target <column> }" +
                       ("  or pass odt.compile(..., target=\"<column>\")" if python else ""))


def build_dataset(table: RawTable, spec: DataSpec) -> Dataset:
    """Apply a ``DataSpec`` to a ``RawTable``: infer kinds, binarise, check the target."""
    with _allocating():
        return _build_dataset(table, spec)


@contextmanager
def _allocating() -> Iterator[None]:
    """Pause the cyclic garbage collector while many acyclic objects are made (the two
    features per cut of a column whose missing cells a split learns to route; categories):
    each of its passes would scan them all again. Threshold columns make none: they are
    arrays (``ThresholdBlock``)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _build_dataset(table: RawTable, spec: DataSpec) -> Dataset:
    cols = list(table.columns)
    errors: list[OdtDataError] = []

    def need(name: str | None, role: str) -> None:
        if name is not None and name not in table.columns:
            raise OdtDataError(
                f"{table.name}: {role} column '{name}' is not in the data",
                spec.spans.get(name),
                did_you_mean(name, cols, "column"),
            )

    if not cols:
        raise OdtDataError(f"{table.name}: no columns")
    target = spec.target or implicit_target(table)
    need(target, "target")
    need(spec.weight, "weight")
    need(spec.row_id, "id")
    for col in list(spec.rules) + list(spec.drop):
        need(col, "declared")
    classes, y = _class_values(table.columns[target])
    if len(classes) < 2:
        raise OdtDataError(
            f"{table.name}: target column '{target}' has a single class ({classes[0]!r}); "
            "a classifier needs at least two",
            spec.spans.get(target),
        )
    weights = None
    if spec.weight is not None:
        try:
            weights = table.numbers(spec.weight)
            table.check_exact(spec.weight, weights)
        except OdtDataError as exc:
            raise _at(exc, spec.spans.get(spec.weight)) from None
        neg = np.flatnonzero(weights < 0)
        if neg.size:
            raise OdtDataError(f"{table.name}: weight column '{spec.weight}', {table.where(int(neg[0]))}: negative weight", spec.spans.get(spec.weight))
        big = np.flatnonzero(weights > MAX_MAGNITUDE)
        if big.size:
            raise OdtDataError(f"{table.name}: weight column '{spec.weight}', {table.where(int(big[0]))}: weight "
                               f"{weights[int(big[0])]:g} is out of range (at most 1e15)", spec.spans.get(spec.weight))
        if not weights.any():
            raise OdtDataError(f"{table.name}: weight column '{spec.weight}' is 0 on every row, so every "
                               "classifier has the same errors", spec.spans.get(spec.weight),
                               "give the rows that count a positive weight")
    ids = None
    if spec.row_id is not None:
        ids = tuple(table.strings(spec.row_id))
        dup = _first_duplicate(ids)
        if dup is not None:
            raise OdtDataError(f"{table.name}: id column '{spec.row_id}' repeats the id '{dup}'",
                               spec.spans.get(spec.row_id))
    skip = {target, spec.weight, spec.row_id, *spec.drop}
    if all(col in skip for col in cols):
        raise OdtDataError(f"{table.name}: no feature column: the data holds only the target '{target}'"
                           + (" and its weight, id or dropped columns" if len(skip - {None}) > 1 else ""),
                           spec.spans.get(target), "a classifier needs at least one column to split on")
    blocks: list[Block] = []
    raw: list[str] = []
    for col in cols:
        if col in skip:
            continue
        try:
            rule = spec.rules.get(col) or _infer_rule(table, col)
            blocks.append(_features_of(table, col, rule, raw))
        except OdtDataError as exc:
            errors.append(_at(exc, spec.spans.get(col)))
    if errors:
        raise OdtDataError([d for e in errors for d in e.diagnostics])
    return Dataset(table, target, classes, y, weights, ids, Binarizer(FeatureList(blocks)), tuple(raw))


def _at(exc: OdtDataError, span: Span | None) -> OdtDataError:
    """``exc`` pointed at ``span`` (where the column is declared) when it has no position."""
    if span is None or any(d.span is not None for d in exc.diagnostics):
        return exc
    return OdtDataError([type(d)(d.message, span, d.hint) for d in exc.diagnostics])


def _first_duplicate(values: Sequence[str]) -> str | None:
    seen: set[str] = set()
    for v in values:
        if v in seen:
            return v
        seen.add(v)
    return None


#: Texts that usually mark a missing cell: a numeric column holding one is told about ``missing``.
_MARKERS = {"?", "na", "n/a", "nan", "null", "none", "-", "--", ".", "missing"}


def _infer_rule(table: RawTable, col: str) -> ColumnRule:
    values = table.columns[col]
    if values.dtype.kind in "biuf":
        return ColumnRule("binary") if _zero_one(values) else ColumnRule("numeric")
    floats = table.floats(col)
    if floats is not None and np.isfinite(floats).all():
        return ColumnRule("binary") if _zero_one(floats) else ColumnRule("numeric")
    texts, inverse = np.unique(np.asarray(values, dtype=str), return_inverse=True)  # each distinct text once
    numeric = np.array([_is_number(t) for t in texts], dtype=bool)
    words = np.array([_is_word(t) for t in texts], dtype=bool)
    if numeric.any() and words[inverse].mean() <= 0.5:
        # mostly numbers: the texts are errors (or missing marks); mostly texts (a code '4'
        # among 'f' and 'r'): every value a category
        i = int(np.flatnonzero(~numeric[inverse])[0])
        cell = str(texts[inverse[i]])
        _, span = table.cell(col, i)
        raise OdtDataError(
            f"{'' if span is not None else table.name + ': '}column '{col}' is numeric but {table.where(i)} "
            f"holds '{texts[inverse[i]]}'", span,
            hint=(f"if '{cell}' marks a missing value, declare  missing \"{cell}\"  (each split learns where it "
                  f"goes; (drop) drops its rows instead); else 'categorical {col}' (every value a category) or 'drop {col}'"
                  if cell.strip().lower() in _MARKERS else
                  f"declare 'categorical {col}' (every value a category) or 'drop {col}', or clean the value"),
        )
    return ColumnRule("categorical")


def _is_word(text: str) -> bool:
    """A cell that is neither a number (``inf`` and ``nan`` included) nor empty nor a usual
    missing mark: what makes a column of numbers and texts categorical when most cells are."""
    t = text.strip()
    if not t or t.lower() in _MARKERS:
        return False
    try:
        float(t)
        return False
    except ValueError:
        return True


def _zero_one(values: np.ndarray) -> bool:
    """Every value is 0 or 1 (one linear pass, after a look at the first 64 values that
    settles most numeric columns; the thresholds sort the column once)."""
    return all(bool(((v == 0) | (v == 1)).all()) for v in (values[:64], values))


def _features_of(table: RawTable, col: str, rule: ColumnRule, raw: list[str]) -> Block:
    """The features of one column: made ones, or a numeric column's thresholds as one block."""
    if rule.missing:  # every cut twice: a missing cell on its yes side, or on its no side
        values = numbers_or_missing(table, col, rule.missing)
        table.check_exact(col, np.nan_to_num(values))
        present = values[~np.isnan(values)]
        marks = "|".join(rule.missing)
        return tuple(Feature(col, "threshold", t, f"missing:{side}|{marks}")
                     for t in _thresholds(present, rule).tolist() for side in ("yes", "no"))
    if rule.kind == "categorical":
        cats = sorted(set(table.strings(col)))
        return tuple(Feature(col, "category", category=c) for c in cats)
    values = table.numbers(col)
    table.check_exact(col, values)
    if rule.kind == "binary":
        bad = np.flatnonzero((values != 0) & (values != 1))
        if bad.size:
            i = int(bad[0])
            _, span = table.cell(col, i)
            raise OdtDataError(f"{'' if span is not None else table.name + ': '}column '{col}' is declared binary "
                               f"but {table.where(i)} holds {values[i]:g}", span or rule.span)
        return (Feature(col, "binary"),)
    if rule.method in ("raw", "all"):
        raw.append(col)
    cuts = _thresholds(values, rule)
    cuts.flags.writeable = False  # the block keeps it as it is (no copy)
    return ThresholdBlock(col, cuts)
