"""Data loading and binarisation (E4, S7).

Input: a CSV file, a pandas DataFrame, numpy arrays or a dict of columns, plus the ``data``
block of a program. Output: a ``Dataset``: the raw columns (for groups and re-evaluation),
the target as class indices, optional weights and row ids, and the binary feature matrix
together with the ``Binarizer`` that produced it, so a classifier can ``predict`` raw rows.

Invariants: every error names the column and the row (1-based data row, and the file line
for CSV input); nothing here ever returns a half-read dataset.
"""
from __future__ import annotations

import csv
import gc
import math
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from os import PathLike
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence, TextIO

import numpy as np

from .errors import OdtDataError, OdtInputError, OdtInputTypeError, did_you_mean
from .features import Block, Feature, FeatureList, ThresholdBlock, missing_rule
from .ranges import MAX_MAGNITUDE
from .source import SourceFile, Span


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
            for j, feat in enumerate(block, start):
                _present(table, feat.columns)
                out[:, j] = _feature_column(table, feat, numeric_cache)
        return out

    def to_json(self) -> list:
        return [f.to_json() for f in self.features]


def _present(table: "RawTable", columns: tuple[str, ...]) -> None:
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
    """The 0/1 column of one feature on ``table``."""
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
    values = _numbers(table, feat.column, numeric_cache)
    return values == 1 if feat.kind == "binary" else values <= feat.threshold


class RawTable:
    """Columns of raw values (strings or numbers) with names and a source name for errors."""

    def __init__(self, name: str, columns: dict[str, np.ndarray], first_line: int | None = None,
                 row_numbers: np.ndarray | None = None, path: Path | None = None,
                 lines: np.ndarray | None = None, header: tuple[str, ...] = ()):
        self.name = name
        self.columns = columns
        self.first_line = first_line  # file line of data row 1, for CSV input
        self.row_numbers = row_numbers  # 0-based input row of each row, when rows were dropped
        self.path = path  # the CSV file, whose cells errors point at (file:line:col)
        self.lines = lines  # the file line of each input row, when not first_line + row (blank lines)
        self.header = header  # the CSV's columns in file order
        lengths = {len(v) for v in columns.values()}
        self.n_rows = lengths.pop() if lengths else 0
        self._numbers: dict[str, np.ndarray] = {}  # memoised conversions, one per column
        self._strings: dict[str, np.ndarray] = {}
        self._floats: dict[str, np.ndarray | None] = {}

    def derived(self, columns: dict[str, np.ndarray], row_numbers: np.ndarray | None) -> "RawTable":
        """A table of the same source (name, file, lines) with other columns or rows."""
        return RawTable(self.name, columns, self.first_line, row_numbers, self.path, self.lines, self.header)

    def line(self, row: int) -> int | None:
        """The file line of 0-based data row ``row`` (None: not from a file)."""
        if self.row_numbers is not None:
            row = int(self.row_numbers[row])
        if self.lines is not None:
            return int(self.lines[row])
        return None if self.first_line is None else row + self.first_line

    def where(self, row: int) -> str:
        """Human location of 0-based data row ``row``."""
        line = self.line(row)
        number = int(self.row_numbers[row]) if self.row_numbers is not None else row
        return f"row {number + 1}" + (f" (line {line})" if line is not None else "")

    def cell(self, column: str, row: int) -> tuple[str, Span | None]:
        """How an error names the cell of ``column`` in data row ``row``: with the span of
        the cell in the CSV file (rendered ``file:line:col`` with the line and a caret), or
        without a file, the table's name, the column and the row."""
        line = self.line(row)
        span = None
        if self.path is not None and line is not None and column in self.header:
            span = cell_span(self.path, self.name, line, self.header.index(column))
        return (f"column '{column}', {self.where(row)}" if span is not None
                else f"{self.name}: column '{column}', {self.where(row)}"), span

    def too_large(self, column: str, row: int) -> OdtDataError:
        """The error of an integer cell that a float64 cannot hold exactly."""
        where, span = self.cell(column, row)
        value = self.columns[column][row]
        return OdtDataError(
            f"{where}: the integer {str(value).strip()} is larger than 2^53 = {EXACT_INTEGERS}, beyond what odt's "
            "64-bit floats hold exactly (neighbouring values would be merged)", span,
            f"declare 'categorical {column}' if it is a code or an id, 'drop {column}', or rescale the column")

    def strings(self, column: str) -> np.ndarray:
        """The column as text (numbers written as the CSV would: 1, 2.5), memoised."""
        if column not in self._strings:
            values = self.columns[column]
            if values.dtype.kind in "fc":
                uniq, inverse = np.unique(values, return_inverse=True)
                texts = np.array([_number_text(v) for v in uniq], dtype=object)
                self._strings[column] = texts[inverse]
            else:
                self._strings[column] = values.astype(str).astype(object)
        return self._strings[column]

    def numbers(self, column: str) -> np.ndarray:
        """The column as float64, memoised; a clear error for the first non-numeric or
        missing cell."""
        if column not in self._numbers:
            self._numbers[column] = self._to_numbers(column)
        return self._numbers[column]

    def floats(self, column: str) -> np.ndarray | None:
        """The column parsed as numbers by numpy, memoised; None if a cell is no number."""
        if column not in self._floats:
            self._floats[column] = _floats(self.columns[column])
        return self._floats[column]

    def check_exact(self, column: str, numbers: np.ndarray) -> None:
        """Raise for the first integer cell of ``column`` beyond 2^53 (``EXACT_INTEGERS``),
        which its float64 ``numbers`` round (a column of 10**30 + i would be one value):
        training data only (a classifier compares such a value with its thresholds, all
        within 2^53, on the right side)."""
        values = self.columns[column]
        if values.dtype.kind == "O" or values.dtype.kind in "US":
            for i in np.flatnonzero(np.abs(numbers) >= EXACT_INTEGERS).tolist():  # 2^53 + 1 reads as 2^53
                if _is_integer(values[i]) and abs(int(str(values[i]).strip())) > EXACT_INTEGERS:
                    raise self.too_large(column, i)

    def _to_numbers(self, column: str) -> np.ndarray:
        values = self.columns[column]
        out = self.floats(column)
        if out is None:
            out = np.empty(len(values), dtype=float)
            for i, v in enumerate(values):
                try:
                    out[i] = float(v)
                except (TypeError, ValueError):
                    where, span = self.cell(column, i)
                    raise OdtDataError(f"{where}: '{v}' is not a number", span,
                                       hint=f"declare 'categorical {column}' in the data block, or clean the value",
                                       ) from None
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size:
            i = int(bad[0])
            where, span = self.cell(column, i)
            raise OdtDataError(f"{where}: missing or non-finite value '{str(values[i]).strip()}'", span)
        return out


def _floats(values: np.ndarray) -> np.ndarray | None:
    """The values as float64 by numpy's own (C) parsing, or None if a cell is no number."""
    if values.dtype.kind in "biuf":
        return values.astype(float)
    try:
        return np.asarray(values, dtype=str).astype(float)
    except (TypeError, ValueError):
        return None


#: the largest integer magnitude a float64 holds with every integer below it (2^53)
EXACT_INTEGERS = 2**53


def _beyond_exact(values: np.ndarray) -> np.ndarray:
    """Which integers of an integer array exceed 2^53 in magnitude (compared as integers)."""
    if values.dtype.kind == "u":
        return values > EXACT_INTEGERS
    return (values > EXACT_INTEGERS) | (values < -EXACT_INTEGERS)


def _is_integer(v: Any) -> bool:
    """True for an integer (not a bool) or the text of one (digits with an optional sign).

    >>> _is_integer(" -123"), _is_integer("1e30"), _is_integer(7), _is_integer(True)
    (True, False, True, False)
    """
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, (int, np.integer)):
        return True
    text = str(v).strip().lstrip("+-")
    return text.isdigit() and text.isascii()


def cell_span(path: Path, name: str, line: int, field: int) -> Span | None:
    """The span of field ``field`` (0-based) of line ``line`` of the CSV file ``path``,
    reported under ``name`` (None when the file cannot be read again)."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            for k, text in enumerate(fh, 1):
                if k == line:
                    break
            else:
                return None
    except OSError:
        return None
    text = text.rstrip("\r\n").replace("\x00", "\u2400")
    start, end = _field_bounds(text, field)
    return Span(SourceFile(name, text, first_line=line), line, start + 1, line, max(end, start + 1) + 1)


def _field_bounds(text: str, field: int) -> tuple[int, int]:
    """0-based [start, end) of field ``field`` of a CSV line, its spaces trimmed (quotes
    kept); (0, 0) when the line has fewer fields.

    >>> _field_bounds('a, "x,y" ,c', 1)
    (3, 8)
    """
    k, start, quoted = 0, 0, False
    bounds = None
    for i, ch in enumerate(text + ","):
        if ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            if k == field:
                bounds = (start, i)
                break
            k, start = k + 1, i + 1
    if bounds is None:
        return 0, 0
    a, b = bounds
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def _number_text(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def read_csv(path: str | Path, display: str | None = None, empty_cells: bool = False) -> RawTable:
    """Read a CSV with a header row; every cell must be present, unless ``empty_cells``
    (a program declaring ``missing ""``, or rows to classify: an empty cell is then the
    text "", for what reads it to judge).

    numpy's C reader parses the file in one pass (linear time, one text array); a file it
    cannot take as a clean rectangle is read again by the ``csv`` module, whose row-by-row
    reading names the exact line and cell of the problem."""
    path = Path(path)
    name = display or str(path)
    if "\x00" in str(path):  # no file system takes it (open() raises ValueError)
        raise OdtDataError(f"data file name {name!r} contains a NUL character")
    fast = _read_csv_fast(path, name) if not _has_nul(path) else None
    if fast is not None:
        return fast
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            rows, starts, end = [], [], 0  # each record and the file line it starts on
            for record in reader:
                rows.append(record)
                starts.append(end + 1)
                end = reader.line_num
    except FileNotFoundError:
        raise OdtDataError(f"data file '{name}' not found") from None
    except IsADirectoryError:
        raise OdtDataError(f"data file '{name}' is a folder, not a CSV file") from None
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, name, exc) from None
    except (OSError, csv.Error) as exc:
        raise OdtDataError(f"cannot read data file '{name}': {exc}") from None
    lines = [s for r, s in zip(rows, starts) if r]  # blank lines hold no row
    rows = [r for r in rows if r]
    if not rows:
        raise OdtDataError(f"{name}: the file is empty (a header row is needed)")
    header = [h.strip() for h in rows[0]]
    seen: set[str] = set()
    for j, h in enumerate(header):
        if h == "":
            raise OdtDataError(f"line {lines[0]}: the header has an empty column name",
                               cell_span(path, name, lines[0], j))
        if h in seen:
            raise OdtDataError(f"line {lines[0]}: column '{h}' appears twice in the header",
                               cell_span(path, name, lines[0], j))
        seen.add(h)
    body = rows[1:]
    if not body:
        raise OdtDataError(f"{name}: the file has a header but no data rows")
    for i, r in enumerate(body):
        line = lines[i + 1]
        if len(r) != len(header):
            raise OdtDataError(f"line {line}: {len(r)} cells, the header has {len(header)}",
                               cell_span(path, name, line, min(len(r), len(header))))
        for j, cell in enumerate(r):
            if cell.strip() == "" and not empty_cells:
                raise OdtDataError(f"column '{header[j]}', row {i + 1} (line {line}): empty cell",
                                   cell_span(path, name, line, j),
                                   'if an empty cell marks a missing value, declare  missing ""  with (learn) or (drop)')
            if "\x00" in cell:
                raise OdtDataError(f"column '{header[j]}', row {i + 1} (line {line}): a NUL byte; "
                                   "this is not a text CSV file", cell_span(path, name, line, j))
    columns = {h: np.array([r[j].strip() for r in body], dtype=object) for j, h in enumerate(header)}
    consecutive = lines[1:] == list(range(2, len(lines) + 1))
    return RawTable(name, columns, first_line=2, path=path, header=tuple(header),
                    lines=None if consecutive else np.array(lines[1:], dtype=np.int64))


def _has_nul(path: Path) -> bool:
    """True when the file holds a NUL byte (a binary file: the careful reader names the cell)."""
    try:
        with open(path, "rb") as fh:
            return any(b"\x00" in chunk for chunk in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return False


def _not_utf8(path: Path, name: str, exc: UnicodeDecodeError) -> OdtDataError:
    """The line and column of the first byte of ``path`` that is not UTF-8."""
    raw = path.read_bytes()
    start = min(exc.start, len(raw) - 1) if raw else 0
    if exc.object is not raw and isinstance(exc.object, bytes):  # decoded in chunks: find it again
        try:
            raw.decode("utf-8-sig")
        except UnicodeDecodeError as whole:
            start = whole.start
    line = raw.count(b"\n", 0, start) + 1
    column = len(raw[raw.rfind(b"\n", 0, start) + 1:start].decode("utf-8", errors="replace")) + 1
    return OdtDataError(f"{name}: line {line}, column {column}: not UTF-8 text (byte 0x{raw[start]:02x})",
                        hint="save the file as UTF-8")


def _read_csv_fast(path: Path, name: str) -> RawTable | None:
    """The table by ``numpy.loadtxt``, or None when the file needs the careful reader (an
    error to report, quoting, ragged rows, blank lines).

    A file of numbers is parsed straight from the open file (numpy reads it in chunks: no
    copy of the whole text, 4 bytes a character in a ``StringIO``, is held); anything else
    is read again as text cells."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            header_line = fh.readline()
            if '"' in header_line:
                return None
            header = [h.strip() for h in header_line.rstrip("\r\n").split(",")]
            if not header_line.strip() or len(set(header)) != len(header) or "" in header:
                return None
            body_start = fh.tell()
            numbers = _all_numbers(fh, len(header))
            table: RawTable | None
            if numbers is not None:  # every cell a finite number: one C pass, no text array
                table = RawTable(name, {h: numbers[:, j] for j, h in enumerate(header)}, first_line=2, path=path,
                                 header=tuple(header))
            else:
                fh.seek(body_start)
                table = _text_cells(fh, header, name, path)
        # numpy skips blank lines: then rows and lines differ, which the careful reader keeps apart
        return table if table is not None and table.n_rows == _body_lines(path) else None
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _body_lines(path: Path) -> int:
    """The number of lines after the first (a last line without a newline counts)."""
    count, last = 0, b"\n"
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n") - 1


def _text_cells(fh: TextIO, header: list[str], name: str, path: Path) -> RawTable | None:
    """The body of ``fh`` as stripped text cells, or None (the careful reader's case)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data": the careful reader says it
            body = np.loadtxt(fh, dtype=str, delimiter=",", comments=None, ndmin=2, quotechar='"')
    except ValueError:
        return None
    if body.shape[0] == 0 or body.shape[1] != len(header):
        return None
    body = np.char.strip(body)
    if (body == "").any():
        return None  # the careful reader names the empty cell
    return RawTable(name, {h: body[:, j] for j, h in enumerate(header)}, first_line=2, path=path, header=tuple(header))


def _all_numbers(fh: TextIO, width: int) -> np.ndarray | None:
    """The rest of the open file as a float64 matrix when every cell is a finite number
    (numpy's C parser, which stops at the first cell that is not), else None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            body = np.loadtxt(fh, dtype=np.float64, delimiter=",", comments=None, ndmin=2)
    except ValueError:
        return None
    if body.shape[0] == 0 or body.shape[1] != width or not np.isfinite(body).all() \
            or (np.abs(body) >= EXACT_INTEGERS).any():
        return None  # nan/inf cells: the text reader names them; large integers: their text is checked
    return body


def table_from_python(data: Any, target: Any = None, name: str = "<data>", missing: bool = False) -> RawTable:
    """A RawTable from a pandas DataFrame, a dict of columns, or numpy X (with ``target`` y).
    Missing cells (NaN, None, empty text) are an error unless ``missing`` (the program
    declares what they mean: ``missing "?" (drop)``).

    Raises:
        OdtInputError: data of a kind it does not take (``OdtInputTypeError``), two columns
            of one name, or labels ``target`` beside a column named ``class``.
        OdtDataError: a missing cell, columns of different lengths."""
    if isinstance(data, (str, bytes, PathLike)) or np.isscalar(data) or data is None:
        raise OdtInputTypeError(
            f"{name}: data must be a pandas DataFrame, a dict of columns or a 2-D array, not {_kind_of(data)}",
            hint='for a CSV file, write  data "file.csv" { ... }  in the program (or use odt.compile_file)'
            if isinstance(data, (str, PathLike)) else None)
    if hasattr(data, "columns") and hasattr(data, "to_numpy"):  # pandas DataFrame
        names = [str(c) for c in data.columns]
        _unique_names(name, names)
        columns = {n: _column_array(data.iloc[:, j].to_numpy()) for j, n in enumerate(names)}
    elif isinstance(data, Mapping):
        _unique_names(name, [str(k) for k in data])
        columns = {str(k): _column_array(np.asarray(v)) for k, v in data.items()}
    else:
        X = np.asarray(data)
        if X.ndim != 2:
            raise OdtInputError(f"{name}: X must be a 2-D array, got shape {X.shape}")
        columns = {f"x{j}": _column_array(X[:, j]) for j in range(X.shape[1])}
    if target is not None:
        if "class" in columns:
            raise OdtInputError(f"{name}: target= gives the labels, but the data already has a column 'class'",
                                hint="pass the labels one way: as target= or as the column 'class'")
        y = np.asarray(target)
        if y.ndim != 1:
            raise OdtInputError(f"{name}: target must be one label per row (1-D), got shape {y.shape}")
        columns["class"] = _column_array(y)
    table = RawTable(name, columns)
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise OdtDataError(f"{name}: columns have different lengths {sorted(lengths)}")
    hint = 'declare missing cells in the data block:  missing "?"  (NaN and None count as missing; each split learns where they go)'
    for col, values in columns.items():
        if missing:
            break
        if values.dtype.kind == "O":
            for i, v in enumerate(values):
                if v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and v.strip() == ""):
                    raise OdtDataError(f"{name}: column '{col}', {table.where(i)}: missing value", hint=hint)
        elif values.dtype.kind == "f":
            bad = np.flatnonzero(np.isnan(values))
            if bad.size:
                raise OdtDataError(f"{name}: column '{col}', {table.where(int(bad[0]))}: missing value (NaN)",
                                   hint=hint)
    return table


def _unique_names(name: str, names: list[str]) -> None:
    """Raise ``OdtInputError`` naming the first column name that appears twice."""
    seen: set[str] = set()
    for i, n in enumerate(names):
        if n in seen:
            raise OdtInputError(f"{name}: column '{n}' appears twice (columns {names.index(n) + 1} and {i + 1})",
                                hint="rename or drop one of them")
        seen.add(n)


def _kind_of(value: Any) -> str:
    """``value`` for a message: its type and the start of its repr."""
    name = type(value).__name__
    return "None" if value is None else f"{'an' if name[0] in 'aeiou' else 'a'} {name} ({value!r:.40})"


def _column_array(values: np.ndarray) -> np.ndarray:
    """A column as float64 (numbers) or objects; integers beyond 2^53 stay Python integers,
    so that reading them as numbers names them (``RawTable.floats``) instead of rounding."""
    if values.dtype.kind in "iu" and _beyond_exact(values).any():
        return values.astype(object)
    if values.dtype.kind in "biuf":
        return values.astype(float) if values.dtype.kind != "b" else values.astype(float)
    return values.astype(object)


# ---------------------------------------------------------------------------- data spec
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
    if numeric.any():
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
