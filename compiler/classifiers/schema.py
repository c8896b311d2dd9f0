"""The model file schema ``odt.classifier/1``, checked in full before a classifier is built.

Input: the parsed JSON of a model file whose ``"schema"`` and ``"type"`` are known to be
right. Output: None, or the first problem as ``(where, what)``: ``where`` is the JSON path
of the wrong field (``root.if_true.feature``, ``nodes[2].if_false``, ``seen.majority``,
``features[0].threshold``), ``what`` says what is wrong and what it should be. A file that
passes builds a classifier whose every index is in range and every value of the right
kind, so nothing fails later, in ``predict`` or ``render``, or answers silently wrong.

The schema (every key listed is the only one allowed where it stands)::

    schema         "odt.classifier/1"
    type           "tree" | "diagram"
    kind           diagram only, optional: "diagram" (default) | "bdd"
    classes        a non-empty list of distinct labels (text, numbers, booleans)
    features       a list of features: {"column": text, "kind": K, "threshold", "category",
                   "terms"} where, by K,
                     binary     no threshold, no category, no terms
                     threshold  a finite number; category null or "missing:yes|..." /
                                "missing:no|..." (where a missing cell goes)
                     category   a text category; no threshold, no terms
                     oblique    a finite number; terms: a non-empty list of
                                [column, category or null, finite coefficient]
                   (threshold and category may be left out where they are null)
    input_columns  optional: distinct column names, holding every column a feature reads
    root           tree: a node; diagram: a successor
    nodes          diagram only: {"feature": i, "layer": l, "if_true": s, "if_false": s}
    seen           optional: {"categories": {column: [category, ...]}, "majority": class}
    task           tree only, optional: "classification" (default) | "regression" (classes are
                   then the leaves' predicted numbers)

A tree node is a leaf ``{"class": c}`` or a split ``{"feature": f, "if_true": node,
"if_false": node}`` — never both. A diagram successor is ``{"node": n}`` or
``{"class": c}``. Indices are integers (not ``true``, not ``1.0``): ``c`` into
``classes``, ``f`` into ``features``, ``n`` into ``nodes`` and larger than the index of
the node it leaves (nodes in topological order: no cycle), ``l`` a layer of at least 0
below which every successor node lies; in a BDD every node of a layer tests the same
feature. ``seen`` lists every category a feature tests; without ``seen``, ``predict``
knows only the categories the features name and refuses any other (``common.Seen``).
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Iterator, Sequence

Where = tuple[str | int, ...]
Problem = tuple[Where, str]

FEATURE_KINDS = ("binary", "threshold", "category", "oblique")
_TOP_KEYS = {"tree": {"schema", "type", "classes", "features", "input_columns", "root", "seen", "task"},
             "diagram": {"schema", "type", "kind", "classes", "features", "input_columns", "root", "nodes", "seen"}}
_REQUIRED = {"tree": ("classes", "features", "root"), "diagram": ("classes", "features", "root", "nodes")}
_MISSING_SIDE = re.compile(r"missing:(yes|no)(\|.*)?$", re.S)


class SchemaProblem(Exception):
    """The first problem found: ``where`` (a JSON path) and ``what``."""

    def __init__(self, where: Where, what: str):
        super().__init__(what)
        self.where, self.what = where, what


def json_path(where: Where) -> str:
    """``where`` as a JSON path; a long one keeps its ends.

    >>> json_path(("root", "if_true", "feature")), json_path(("nodes", 2, "if_false")), json_path(())
    ('root.if_true.feature', 'nodes[2].if_false', 'the top level')
    >>> json_path(("seen", "categories", "Race=Other", 1))
    'seen.categories["Race=Other"][1]'
    >>> json_path(("root",) + ("if_true",) * 30 + ("class",))
    'root.if_true.if_true.if_true...(24 more).if_true.if_true.if_true.class'
    """
    if not where:
        return "the top level"
    parts = [f"[{p}]" if isinstance(p, int) else (f".{p}" if re.fullmatch(r"[A-Za-z_]\w*", p) else
                                                  f"[{json.dumps(p)}]") for p in where]
    if len(parts) > 12:
        parts = parts[:4] + [f"...({len(parts) - 8} more)"] + parts[-4:]
    return "".join(parts).lstrip(".")


def schema_problem(obj: dict) -> Problem | None:
    """The first way ``obj`` (a model file's JSON, with a known schema and type) breaks the
    schema, or None.

    >>> model = {"schema": "odt.classifier/1", "type": "tree", "classes": [0, 1], "features": [],
    ...          "root": {"class": 1, "feature": 0}}
    >>> where, what = schema_problem(model); print(json_path(where) + ": " + what)
    root: a node has both "class" (a leaf) and "feature" (a split)
    """
    try:
        _check(obj)
    except SchemaProblem as p:
        return p.where, p.what
    return None


def _check(obj: dict) -> None:
    kind = obj["type"]
    _keys(obj, (), _TOP_KEYS[kind], _REQUIRED[kind])
    if kind == "diagram" and obj.get("kind", "diagram") not in ("diagram", "bdd"):
        raise SchemaProblem(("kind",), f"is {_show(obj['kind'])}; expected \"diagram\" or \"bdd\"")
    if obj.get("task", "classification") not in ("classification", "regression"):
        raise SchemaProblem(("task",), f"is {_show(obj['task'])}; expected \"classification\" or \"regression\"")
    if obj.get("task") == "regression" and not all(isinstance(c, (int, float)) and not isinstance(c, bool)
                                                  for c in obj["classes"]):
        raise SchemaProblem(("classes",), "of a regression tree holds a value that is not a number")
    n_classes = _classes(obj["classes"])
    features = _list(obj["features"], ("features",))
    for i, f in enumerate(features):
        _feature(f, ("features", i))
    columns = _input_columns(obj, features)
    if kind == "tree":
        _tree(obj["root"], len(features), n_classes)
    else:
        _diagram(obj, features, n_classes)
    if "seen" in obj:
        _seen(obj["seen"], features, n_classes, columns)


# ---------------------------------------------------------------- values

def _show(value: Any) -> str:
    """A JSON value, short, for a message."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"a boolean ({_show(value)})"
    return {list: "a list", dict: "an object", str: f"a string ({_show(value)})", type(None): "null",
            int: f"the number {value}", float: f"the number {value}"}.get(type(value), type(value).__name__)


def _keys(obj: Any, where: Where, allowed: set[str], required: Sequence[str], what: str = "") -> dict:
    if not isinstance(obj, dict):
        raise SchemaProblem(where, f"is {_kind(obj)}; expected an object{what}")
    for key in obj:
        if key not in allowed:
            raise SchemaProblem(where + (key,), f"is not a key of {'a model file' if not where else 'this object'} "
                                                f"(known: {', '.join(sorted(allowed))})")
    for key in required:
        if key not in obj:
            raise SchemaProblem(where, f"the key \"{key}\" is missing")
    return obj


def _list(value: Any, where: Where) -> list:
    if not isinstance(value, list):
        raise SchemaProblem(where, f"is {_kind(value)}; expected a list")
    return value


def _text(value: Any, where: Where, what: str = "a text") -> str:
    if not isinstance(value, str) or not value:
        raise SchemaProblem(where, f"is {_kind(value)}; expected {what}")
    return value


def _number(value: Any, where: Where) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SchemaProblem(where, f"is {_kind(value)}; expected a finite number")
    return float(value)


def _index(value: Any, where: Where, size: int, of: str) -> int:
    """An index into a list of ``size`` things (``of`` names them)."""
    span = f"0..{size - 1}" if size else f"none: there are no {of}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaProblem(where, f"is {_kind(value)}; expected the index of one of the {of} ({span})")
    if not 0 <= value < size:
        raise SchemaProblem(where, f"is {value}, out of range: the index of one of the {of} is {span}")
    return value


# ---------------------------------------------------------------- parts

def _classes(value: Any) -> int:
    classes = _list(value, ("classes",))
    if not classes:
        raise SchemaProblem(("classes",), "is empty: a classifier has at least one class")
    seen: set[tuple[str, Any]] = set()
    for i, c in enumerate(classes):
        if not isinstance(c, (str, int, float)) or isinstance(c, float) and not math.isfinite(c):
            raise SchemaProblem(("classes", i), f"is {_kind(c)}; a class label is a text, a number or a boolean")
        key = (type(c).__name__, c)
        if key in seen:
            raise SchemaProblem(("classes", i), f"is {_show(c)}, which is listed before: every class once")
        seen.add(key)
    return len(classes)


def _feature(f: Any, where: Where) -> None:
    _keys(f, where, {"column", "kind", "threshold", "category", "terms"}, ("column", "kind"), " (a feature)")
    _text(f["column"], where + ("column",), "a column name")
    kind = f["kind"]
    if kind not in FEATURE_KINDS:
        raise SchemaProblem(where + ("kind",), f"is {_kind(kind)}; expected one of {', '.join(FEATURE_KINDS)}")
    threshold, category = f.get("threshold"), f.get("category")
    if kind in ("threshold", "oblique"):
        _number(threshold, where + ("threshold",))
    elif threshold is not None:
        raise SchemaProblem(where + ("threshold",), f"is {_kind(threshold)}; a {kind} feature has no threshold (null)")
    if kind == "category":
        _text(category, where + ("category",), "the category the feature tests")
    elif kind == "threshold" and category is not None:
        if not isinstance(category, str) or not _MISSING_SIDE.fullmatch(category):
            raise SchemaProblem(where + ("category",), f"is {_kind(category)}; a threshold feature's category is "
                                                       "null or where a missing cell goes (\"missing:yes|<markers>\" "
                                                       "or \"missing:no|<markers>\")")
    elif kind != "threshold" and category is not None:
        raise SchemaProblem(where + ("category",), f"is {_kind(category)}; a {kind} feature has no category (null)")
    if kind == "oblique":
        terms = _list(f.get("terms"), where + ("terms",))
        if not terms:
            raise SchemaProblem(where + ("terms",), "is empty: an oblique feature has at least one term")
        for j, t in enumerate(terms):
            at = where + ("terms", j)
            if not isinstance(t, list) or len(t) != 3:
                raise SchemaProblem(at, f"is {_kind(t)}; a term is [column, category or null, coefficient]")
            _text(t[0], at + (0,), "a column name")
            if t[1] is not None:
                _text(t[1], at + (1,), "a category or null")
            _number(t[2], at + (2,))
    elif "terms" in f and f["terms"] not in ([], None):
        raise SchemaProblem(where + ("terms",), f"is {_kind(f['terms'])}; only an oblique feature has terms")


def read_columns(f: dict) -> Iterator[tuple[str, str | None]]:
    """(column, category or None) of every cell a valid feature reads."""
    if f["kind"] == "oblique":
        for col, cat, _ in f["terms"]:
            yield col, cat
    else:
        yield f["column"], f.get("category") if f["kind"] == "category" else None


def _input_columns(obj: dict, features: list) -> list[str] | None:
    if "input_columns" not in obj:
        return None
    columns = _list(obj["input_columns"], ("input_columns",))
    for i, c in enumerate(columns):
        _text(c, ("input_columns", i), "a column name")
        if c in columns[:i]:
            raise SchemaProblem(("input_columns", i), f"is {_show(c)}, which is listed before: every column once")
    if columns:
        for i, f in enumerate(features):
            for col, _ in read_columns(f):
                if col not in columns:
                    raise SchemaProblem(("features", i), f"reads column {_show(col)}, which is not in \"input_columns\"")
    return columns


def _tree(root: Any, n_features: int, n_classes: int) -> None:
    stack: list[tuple[Any, Where]] = [(root, ("root",))]
    while stack:
        node, where = stack.pop()
        if not isinstance(node, dict):
            raise SchemaProblem(where, f"is {_kind(node)}; expected a node: {{\"class\": c}} (a leaf) or "
                                       "{\"feature\": f, \"if_true\": ..., \"if_false\": ...} (a split)")
        if "class" in node and "feature" in node:
            raise SchemaProblem(where, "a node has both \"class\" (a leaf) and \"feature\" (a split)")
        if "class" in node:
            _keys(node, where, {"class"}, ("class",))
            _index(node["class"], where + ("class",), n_classes, "classes")
            continue
        _keys(node, where, {"feature", "if_true", "if_false"}, ("feature", "if_true", "if_false"),
              " (a split)")
        _index(node["feature"], where + ("feature",), n_features, "features")
        stack.append((node["if_false"], where + ("if_false",)))
        stack.append((node["if_true"], where + ("if_true",)))


def _successor(ref: Any, where: Where, n_nodes: int, n_classes: int, after: int | None) -> int | None:
    """The node a successor goes to (None for a class); ``after``: the index of the node it
    leaves (a successor node must come later)."""
    _keys(ref, where, {"node", "class"}, (), " ({\"node\": n} or {\"class\": c})")
    if len(ref) != 1:
        raise SchemaProblem(where, "expected exactly one of {\"node\": n} or {\"class\": c}")
    if "class" in ref:
        _index(ref["class"], where + ("class",), n_classes, "classes")
        return None
    target = _index(ref["node"], where + ("node",), n_nodes, "nodes")
    if after is not None and target <= after:
        raise SchemaProblem(where + ("node",), f"is {target}, but a successor of node {after} must come after it "
                                               "(nodes are in topological order: no cycle)")
    return target


def _diagram(obj: dict, features: list, n_classes: int) -> None:
    nodes = _list(obj["nodes"], ("nodes",))
    n = len(nodes)
    _successor(obj["root"], ("root",), n, n_classes, None)
    layers: list[int] = []
    tested: dict[int, tuple[int, int]] = {}  # layer -> (feature, first node): BDDs test one feature per layer
    for i, node in enumerate(nodes):
        where: Where = ("nodes", i)
        _keys(node, where, {"feature", "layer", "if_true", "if_false"}, ("feature", "layer", "if_true", "if_false"),
              " (a decision node)")
        f = _index(node["feature"], where + ("feature",), len(features), "features")
        layer = node["layer"]
        if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
            raise SchemaProblem(where + ("layer",), f"is {_kind(layer)}; expected a layer number (0 or more)")
        layers.append(layer)
        if obj.get("kind") == "bdd":
            first = tested.setdefault(layer, (f, i))
            if first[0] != f:
                raise SchemaProblem(where + ("feature",), f"is {f}, but node {first[1]} of the same layer {layer} tests "
                                                          f"feature {first[0]}: an ordered BDD tests one feature per layer")
    for i, node in enumerate(nodes):
        for side in ("if_true", "if_false"):
            target = _successor(node[side], ("nodes", i, side), n, n_classes, i)
            if target is not None and layers[target] <= layers[i]:
                raise SchemaProblem(("nodes", i, side, "node"), f"is node {target} of layer {layers[target]}, not "
                                                                f"below node {i}'s layer {layers[i]}")


def _seen(value: Any, features: list, n_classes: int, columns: list[str] | None) -> None:
    seen = _keys(value, ("seen",), {"categories", "majority", "target"}, ("categories", "majority"))
    if "target" in seen:
        _text(seen["target"], ("seen", "target"), "a column name")
    cats = _keys(seen["categories"], ("seen", "categories"), set(seen["categories"]) if isinstance(
        seen["categories"], dict) else set(), ())
    for col, values in cats.items():
        at: Where = ("seen", "categories", col)
        if columns and col not in columns:
            raise SchemaProblem(at, "is not a column of \"input_columns\"")
        for j, v in enumerate(_list(values, at)):
            _text(v, at + (j,), "a category")
            if v in values[:j]:
                raise SchemaProblem(at + (j,), f"is {_show(v)}, which is listed before: every category once")
    _index(seen["majority"], ("seen", "majority"), n_classes, "classes")
    for i, f in enumerate(features):
        for col, cat in read_columns(f):
            if cat is not None and cat not in cats.get(col, ()):
                raise SchemaProblem(("seen", "categories"), f"does not list category {_show(cat)} of column "
                                                            f"{_show(col)}, which features[{i}] tests")
