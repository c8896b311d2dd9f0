"""What every classifier shares: the JSON schema, raw-input coercion and atomic saving."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..data import RawTable, read_csv, table_from_python
from ..errors import OdtDataError

SCHEMA = "odt.classifier/1"


def save_json(obj: dict, path: str | Path) -> None:
    """Write ``obj`` as JSON atomically: a temporary file in the target's folder, renamed
    over the target, so a reader never sees half a model."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
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
        return read_csv(data)
    if isinstance(data, np.ndarray) or isinstance(data, list):
        arr = np.asarray(data, dtype=object)
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        if len(input_columns) != arr.shape[1]:
            raise OdtDataError(f"expected {len(input_columns)} columns ({', '.join(input_columns)}), got {arr.shape[1]}")
        return table_from_python({c: arr[:, j] for j, c in enumerate(input_columns)})
    return table_from_python(data)

