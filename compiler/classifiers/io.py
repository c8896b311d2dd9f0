"""Loading a saved classifier of any type (tree, diagram, BDD).

Input: a path to a file written by ``save`` / ``odtc solve -o``. Output: a ``Tree`` or a
``Diagram``. A file that is not an odt model — not JSON, not an object, another schema
or version — or that breaks the schema (``schema.py``: a missing, unknown or mistyped
key, an index out of range or not an integer, a node both leaf and split, a diagram with
a cycle, ``seen`` that does not fit the classes and features) is an ``OdtError`` that says
what is wrong and where (the JSON path of the field), never a ``KeyError`` or
``IndexError`` later, nor a silently different classifier.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from ..errors import OdtError, OdtInputTypeError
from .common import SCHEMA
from .diagram import Diagram
from .schema import json_path, schema_problem
from .tree import Tree


def load_classifier(path: str | Path) -> Tree | Diagram:
    """Load a classifier (tree, diagram or BDD) saved with ``save`` / ``odtc solve -o``.

    Raises:
        OdtInputTypeError: ``path`` is no path (a str or ``os.PathLike``).
        OdtError: the file cannot be read or is no odt model of this version."""
    if not isinstance(path, (str, os.PathLike)):
        raise OdtInputTypeError(f"load_classifier takes the path of a model file, not a {type(path).__name__}",
                                hint="for a model's JSON object, use Tree.from_json / Diagram.from_json")
    obj = _read_json(path)
    where = f"model file '{path}'"
    if not isinstance(obj, dict):
        raise OdtError(f"{where} is not an odt model: its JSON is {_kind(obj)}, not an object with "
                       f"\"schema\": \"{SCHEMA}\"")
    schema = obj.get("schema")
    if schema != SCHEMA:
        if isinstance(schema, str) and schema.startswith("odt.classifier/"):
            raise OdtError(f"{where} has schema '{schema}'; this odt reads '{SCHEMA}'",
                           hint="it was written by another version of odt: solve the program again")
        raise OdtError(f"{where} is not an odt model: its \"schema\" is {schema!r}, expected '{SCHEMA}'")
    kind = obj.get("type")
    if kind not in ("tree", "diagram"):
        raise OdtError(f"{where}: \"type\" is {kind!r}, expected 'tree' or 'diagram'")
    problem = schema_problem(obj)
    if problem is not None:
        at, what = problem
        raise OdtError(f"{where} is malformed: {json_path(at)}: {what}")
    try:  # the schema holds: every index is in range and every value of its kind
        return Diagram.from_json(obj) if kind == "diagram" else Tree.from_json(obj)
    except RecursionError:
        raise OdtError(f"{where}: the tree is nested too deeply to be an odt model") from None


def _read_json(path: str | Path) -> Any:
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise OdtError(f"model file '{path}' not found") from None
    except IsADirectoryError:
        raise OdtError(f"model file '{path}' is a folder") from None
    except OSError as exc:
        raise OdtError(f"cannot read model file '{path}': {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise OdtError(f"model file '{path}' is not an odt model: it is not text (a binary file?)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise OdtError(f"model file '{path}' is not an odt model: not JSON (line {exc.lineno}, column {exc.colno}: "
                       f"{exc.msg})") from None
    except RecursionError:
        raise OdtError(f"model file '{path}' is not an odt model: its JSON is nested too deeply") from None


def _kind(value: Any) -> str:
    return {list: "a list", dict: "an object", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)
