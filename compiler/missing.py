"""Missing values (``missing "?", "NA" (drop)`` in a data block) -> a table without them.

Input: a ``RawTable`` and its ``DataSpec`` (the markers and the policy). Output: the table
the dataset is built from, and the data rows (0-based, in the input) it dropped.

What a missing cell means depends on its column, whose kind is the declared one or, when
undeclared, the kind of its present cells (all numbers: numeric, else categorical):

* categorical: the missing value is a category of its own, named by the first marker
  (a pandas NaN or None becomes that text), so a split can test ``column == ?`` and
  ``predict`` routes a missing cell the same way;
* numeric or binary: with ``(drop)`` the row is dropped (the data rows that remain keep
  their numbers in later messages); with ``(learn)`` the row stays and each split learns
  where a missing cell goes: the column's every cut point becomes two features, one
  sending a missing cell to its yes side and one to its no side
  (``data.missing_rule``), and the solver picks one per split — exact, on every backend,
  at twice the features of that column; with no policy it is an error naming the column,
  the row and the declaration that would accept it.

Invariants: a table without missing cells comes back as it is; the target, weight and id
columns and the dropped columns are never read here.
"""
from __future__ import annotations

import math

import numpy as np

from .data import DataSpec, RawTable, _is_number
from .errors import OdtDataError


def missing_mask(values: np.ndarray, markers: tuple[str, ...]) -> np.ndarray:
    """Which cells are missing: a marker text, NaN, None or pandas' NA.

    >>> missing_mask(np.array(["1", "?", "2"], dtype=object), ("?",)).tolist()
    [False, True, False]
    """
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind in "biu":
        return np.zeros(len(values), dtype=bool)
    wanted = set(markers)
    return np.fromiter((v is None or (isinstance(v, float) and math.isnan(v)) or str(v).strip() in wanted
                        or type(v).__name__ in ("NAType", "NaTType") for v in values), dtype=bool, count=len(values))


def resolve_missing(table: RawTable, spec: DataSpec, target: str) -> tuple[RawTable, np.ndarray, list[str]]:
    """The table with categorical missing cells named by the first marker and, under
    ``(drop)``, the rows with a missing numeric or binary cell removed; those rows; and,
    under ``(learn)``, the numeric or binary columns that hold a missing cell.

    Raises:
        OdtDataError: a missing numeric or binary cell without ``(drop)``, or every row dropped.
    """
    markers = spec.missing
    skip = {target, spec.weight, spec.row_id, *spec.drop}
    columns = dict(table.columns)
    drop = np.zeros(table.n_rows, dtype=bool)
    first: dict[str, int] = {}  # numeric column -> its first missing row
    changed = False  # a categorical column was filled in
    for col, values in table.columns.items():
        if col in skip:
            continue
        mask = missing_mask(values, markers)
        if not mask.any():
            continue
        rule = spec.rules.get(col)
        present = values[~mask]
        numeric = rule.kind in ("numeric", "binary") if rule is not None else \
            present.dtype.kind in "biuf" or all(_is_number(str(v)) for v in np.unique(present.astype(str)))
        if not numeric:
            filled = values.astype(object)
            filled[mask] = markers[0]
            columns[col] = filled
            changed = True
            continue
        first[col] = int(np.flatnonzero(mask)[0])
        if spec.missing_policy == "learn":
            continue
        drop |= mask
        if values.dtype.kind == "O":  # the marker cells are gone (dropped) or an error: keep numbers only
            filled = values.copy()
            filled[mask] = "nan"
            columns[col] = filled
    if spec.missing_policy == "learn":
        return (table.derived(columns, table.row_numbers)
                if changed else table), np.zeros(0, dtype=np.int64), list(first)
    if first and spec.missing_policy != "drop":
        problems = []
        for col, i in first.items():
            cell = table.columns[col][i]
            problems.append(OdtDataError(
                f"{table.name}: column '{col}', {table.where(i)}: missing value '{cell}' in a numeric column",
                spec.missing_span,
                f'write  missing {", ".join(_quoted(m) for m in markers)} (learn)  to let each split learn where a '
                f"missing number goes, (drop) to drop such rows, or declare  categorical {col}  (missing is then "
                "a category)"))
        raise OdtDataError([d for e in problems for d in e.diagnostics])
    if not drop.any():
        return (table.derived(columns, table.row_numbers)
                if changed else table), np.zeros(0, dtype=np.int64), []
    keep = ~drop
    if not keep.any():
        raise OdtDataError(f"{table.name}: every row has a missing numeric or binary cell, so (drop) leaves no data",
                           spec.missing_span, "drop the columns with most missing cells  (drop <column>)")
    numbers = table.row_numbers if table.row_numbers is not None else np.arange(table.n_rows)
    kept = table.derived({c: v[keep] for c, v in columns.items()}, numbers[keep])
    return kept, np.flatnonzero(drop), []


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
