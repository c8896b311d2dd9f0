"""What every classifier shares: the JSON schema, raw-input coercion and atomic saving."""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..data import Binarizer, Feature, RawTable, read_csv, table_from_python
from ..errors import Diagnostic, OdtDataError, OdtError

SCHEMA = "odt.classifier/1"
#: What ``predict`` does with a row holding a category the training data did not have.
UNKNOWN_CHOICES = ("error", "majority")


@dataclass(frozen=True, slots=True)
class Seen:
    """What the training data held, so that ``predict`` can tell a row with an unseen
    category: every category of every categorical column, and the majority class (the
    prediction ``unknown="majority"`` gives such rows).

    A classifier without this record (``majority`` None: a model file saved without
    ``"seen"``, or a classifier built by hand) cannot tell an unseen category from a seen
    one its tests do not name; ``named_by`` then takes as known only the categories its
    features test, and ``resolve`` refuses every other, with either choice of ``unknown``:
    such a row is never routed silently as if its category had been seen."""

    categories: tuple[tuple[str, tuple[str, ...]], ...] = ()
    majority: int | None = None
    target: str | None = None  # the training data's label column (``render --data`` counts its classes)

    @property
    def recorded(self) -> bool:
        """Whether this is the training data's record (not a classifier's guess)."""
        return self.majority is not None

    def or_named_by(self, features: Sequence[Feature]) -> "Seen":
        """Itself when recorded; else the categories ``features`` test, column by column
        (in category and oblique features), with no majority.

        >>> Seen().or_named_by([Feature("job", "category", category="nurse"), Feature("age", "threshold", 3.0)])
        Seen(categories=(('job', ('nurse',)),), majority=None, target=None)
        """
        if self.recorded:
            return self
        named: dict[str, list[str]] = {}
        for f in features:
            pairs = [(c, cat) for c, cat, _ in f.terms] if f.kind == "oblique" else \
                [(f.column, f.category)] if f.kind == "category" else []
            for column, cat in pairs:
                if cat is not None and cat not in named.setdefault(column, []):
                    named[column].append(cat)
        return Seen(tuple((c, tuple(v)) for c, v in named.items()), None, self.target)

    def unknown(self, table: RawTable) -> list[tuple[str, np.ndarray]]:
        """(column, rows) for each column of ``table`` holding categories not seen in training."""
        out = []
        for column, cats in self.categories:
            if column in table.columns:
                rows = np.flatnonzero(~np.isin(table.strings(column).astype(str), np.array(cats, dtype=str)))
                if rows.size:
                    out.append((column, rows))
        return out

    def resolve(self, table: RawTable, labels: np.ndarray, unknown: str) -> np.ndarray:
        """``labels`` (class indices) with the rows of unseen categories handled as
        ``unknown`` says: ``error`` raises naming the column, row and value; ``majority``
        predicts the training majority class."""
        if unknown not in UNKNOWN_CHOICES:
            raise OdtDataError(f"unknown={unknown!r}: expected one of {', '.join(UNKNOWN_CHOICES)}")
        found = self.unknown(table)
        if not found:
            return labels
        column, rows = found[0]
        value = table.strings(column)[int(rows[0])]
        more = f" (and {rows.size - 1} more rows)" if rows.size > 1 else ""
        where = f"{table.name}: column '{column}', {table.where(int(rows[0]))}: category '{value}'"
        if self.majority is None:  # no record of training: never guess that the category was seen
            raise OdtDataError(f"{where} is not one the classifier tests{more}, and the classifier does not record "
                               "the categories of its training data (a model file without \"seen\"), so it cannot "
                               "tell whether training had it" +
                               (", nor predict the training majority class" if unknown == "majority" else ""),
                               hint="solve the program again: odt saves the training categories and majority class "
                                    "with the classifier")
        if unknown == "error":
            raise OdtDataError(f"{where} did not occur in the training data{more}",
                               hint="odtc predict --unknown majority (Python: unknown='majority') predicts the "
                                    "training majority class for such rows")
        out = labels.copy()
        for _, rows in found:
            out[rows] = self.majority
        return out

    def to_json(self) -> dict:
        out: dict[str, Any] = {"categories": {c: list(v) for c, v in self.categories}, "majority": self.majority}
        if self.target is not None:
            out["target"] = self.target
        return out

    @staticmethod
    def from_json(obj: Any) -> "Seen":
        if not isinstance(obj, dict):
            return Seen()
        cats = obj.get("categories") or {}
        majority = obj.get("majority")
        target = obj.get("target")
        return Seen(tuple((str(c), tuple(str(x) for x in v)) for c, v in cats.items()),
                    majority if isinstance(majority, int) and not isinstance(majority, bool) else None,
                    target if isinstance(target, str) else None)


def save_json(obj: dict, path: str | Path) -> None:
    """Write ``obj`` as JSON atomically: a temporary file in the target's folder, renamed
    over the target, so a reader never sees half a model. A path that cannot be written
    (a missing folder, a folder, no permission) is an ``OdtError`` saying why."""
    path = Path(path)
    if path.is_dir():
        raise OdtError(f"cannot write '{path}': it is a folder", hint="give a file name inside it")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except FileNotFoundError:
        raise OdtError(f"cannot write '{path}': the folder '{path.parent}' does not exist",
                       hint="create it first") from None
    except NotADirectoryError:
        raise OdtError(f"cannot write '{path}': a part of '{path.parent}' is a file, not a folder") from None
    except OSError as exc:
        raise OdtError(f"cannot write '{path}': {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(obj, indent=2) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def as_table(data: Any, input_columns: tuple[str, ...]) -> RawTable:
    """Raw rows as a ``RawTable``: a table, a CSV path, a DataFrame, a dict of columns or a
    2-D array in ``input_columns`` order."""
    if isinstance(data, RawTable):
        return data
    if isinstance(data, (str, Path)):
        return read_csv(data, empty_cells=True)  # an empty cell is judged by the features that read it
    if isinstance(data, np.ndarray) or isinstance(data, list):
        arr = np.asarray(data, dtype=object)
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        if len(input_columns) != arr.shape[1]:
            raise OdtDataError(f"expected {len(input_columns)} columns ({', '.join(input_columns)}), got {arr.shape[1]}")
        return table_from_python({c: arr[:, j] for j, c in enumerate(input_columns)}, missing=True)
    return table_from_python(data, missing=True)  # a missing cell is judged by the features that read it



def binarize_rows(features: tuple[Feature, ...], table: RawTable) -> np.ndarray:
    """The 0/1 matrix of rows to classify; a cell the classifier compares with a number
    that is missing or no number is an error saying that this row cannot be classified
    (the hints of training, "declare it categorical", do not apply to a trained model)."""
    try:
        return Binarizer(features).transform(table)
    except OdtDataError as exc:
        hint = ("the classifier compares this column with numbers, so this row cannot be classified (a program "
                'with  missing "?" (drop)  leaves such rows out of training, and predict cannot route them)')
        raise OdtDataError([Diagnostic(d.message, d.span, hint if ("is not a number" in d.message or
                                                                  "non-finite" in d.message) else d.hint)
                            for d in exc.diagnostics]) from None
