"""Loading a saved classifier of any type (tree, diagram, BDD).

Input: a path to a file written by ``save`` / ``odtc solve -o``. Output: a ``Tree`` or a
``Diagram``. A file that is not an odt model — not JSON, not an object, another schema
or version, a missing or mistyped key, an index out of range, a diagram with a cycle — is
an ``OdtError`` that says what is wrong, never a ``KeyError`` or ``IndexError`` later.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from ..errors import OdtError, OdtInputTypeError
from .common import SCHEMA
from .diagram import Diagram, leaf_class
from .tree import Leaf, Split, Tree

_FEATURE_KINDS = ("binary", "threshold", "category", "oblique")


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
    for key, want in (("features", list), ("classes", list), ("root", dict if kind == "tree" else (dict, int)),
                      ("input_columns", list)):
        if key not in obj and key != "input_columns":
            raise OdtError(f"{where}: the key \"{key}\" is missing")
        if key in obj and not isinstance(obj[key], want):
            raise OdtError(f"{where}: \"{key}\" is {_kind(obj[key])}")
    if kind == "diagram" and not isinstance(obj.get("nodes"), list):
        raise OdtError(f"{where}: \"nodes\" is {'missing' if 'nodes' not in obj else _kind(obj['nodes'])}, expected a list")
    try:
        clf: Tree | Diagram = Diagram.from_json(obj) if kind == "diagram" else Tree.from_json(obj)
    except RecursionError:
        raise OdtError(f"{where}: the tree is nested too deeply to be an odt model") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        what = f"the key {exc} is missing" if isinstance(exc, KeyError) else \
            str(exc) if isinstance(exc, ValueError) and "node" in str(exc) else f"a value has the wrong type ({exc})"
        raise OdtError(f"{where} is malformed: {what}") from None
    problem = _structure_problem(clf)
    if problem is not None:
        raise OdtError(f"{where} is malformed: {problem}")
    return clf


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


def _structure_problem(clf: Tree | Diagram) -> str | None:
    """What makes ``clf`` unusable (an index out of range, a bad feature, a cycle), or None."""
    n_features, n_classes = len(clf.features), len(clf.classes)
    if n_classes == 0:
        return "it has no class"
    for i, f in enumerate(clf.features):
        if f.kind not in _FEATURE_KINDS or not isinstance(f.column, str):
            return f"feature {i} has kind {f.kind!r}; expected one of {', '.join(_FEATURE_KINDS)}"
        if f.kind in ("threshold", "oblique") and (not isinstance(f.threshold, (int, float))
                                                  or isinstance(f.threshold, bool) or not math.isfinite(f.threshold)):
            return f"feature {i} ({f.column}) has no finite threshold"
        if f.kind == "category" and not isinstance(f.category, str):
            return f"feature {i} ({f.column}) has no category"
        if f.kind == "oblique" and not f.terms:
            return f"feature {i} is oblique without terms"
    if isinstance(clf, Tree):
        stack = [clf.root]
        while stack:
            node = stack.pop()
            if isinstance(node, Leaf):
                if not 0 <= node.label < n_classes:
                    return f"a leaf predicts class {node.label}, but there are {n_classes} classes"
            elif isinstance(node, Split):
                if not 0 <= node.feature < n_features:
                    return f"a node tests feature {node.feature}, but there are {n_features} features"
                stack.extend((node.if_true, node.if_false))
        return None
    refs = [clf.root] + [r for n in clf.nodes for r in (n.if_true, n.if_false)]
    for ref in refs:
        if ref >= len(clf.nodes) or (ref < 0 and leaf_class(ref) >= n_classes):
            return f"an arc goes to {'node' if ref >= 0 else 'class'} {ref if ref >= 0 else leaf_class(ref)}, " \
                   "which does not exist"
    for i, n in enumerate(clf.nodes):
        if not 0 <= n.feature < n_features:
            return f"node {i} tests feature {n.feature}, but there are {n_features} features"
    return None
