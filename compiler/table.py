"""Raw tables: the cells of a CSV file or of Python data (a DataFrame, numpy arrays, a
dict of columns) as read, before a program's ``data`` block gives them meaning (E4).

Input: a path or Python data. Output: a ``RawTable`` (column names, each column's cells as
text or numbers, the file's lines for error places). ``compiler/data.py`` builds the
program's ``Dataset`` from it.

Invariants: every error names the column and the row (1-based data row, and the file line
and column for CSV input, with a caret); nothing here returns a half-read table; an integer
beyond 2**53 (not exact in a float) is refused, not rounded.
"""
from __future__ import annotations

import csv
import math
import warnings
from os import PathLike
from pathlib import Path
from typing import Any, Mapping, TextIO

import numpy as np

from .errors import OdtDataError, OdtInputError, OdtInputTypeError
from .source import SourceFile, Span

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
