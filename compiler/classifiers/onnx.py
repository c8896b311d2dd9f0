"""odt classifiers as ONNX models (``Classifier.to_onnx``, ``ODTClassifier.to_onnx``,
``odtc export --to onnx``): an ``ai.onnx.ml`` ``TreeEnsemble`` that runs in any ONNX
runtime. Needs the ``onnx`` extra (``pip install ".[onnx]"``).

Input: a ``Tree`` or ``Diagram`` (a diagram or BDD is unfolded to the equivalent tree),
optionally the class weights at its nodes (from training rows: the probabilities), and
the columns of X. Output: an ``onnx.ModelProto`` with

* inputs: when no column is categorical, one ``X`` (double, ``[N, columns]``), the rows
  as ``predict`` takes an array; else one input per column, named after it, ``[N, 1]``:
  double for a numeric column, string for a categorical one (its values as text, as odt
  writes them: ``Male``, ``1``; a missing category is its marker, ``?``);
* outputs: ``label`` (``[N]``, int64 when every class is an integer, else string) and
  ``probabilities`` (double, ``[N, classes]``): the training class frequencies of the
  row's leaf (or terminal arc), or 1 for its label when no rows were given.

The graph: numeric columns are compared as doubles (odt compares float64 too, so every
threshold test is decided exactly as odt decides it); each categorical column becomes its
category's index among the training categories (``LabelEncoder``, -1 for one training
never had) and a category test is ``index == k``; an oblique test's sum is computed in
odt's order of terms (``Mul``/``Add``); a learned missing direction is the node's
``nodes_missing_value_tracks_true``. The tree's leaf gives a leaf id, and ``Gather``
reads its label and probabilities. A row with a category training never had gets the
training majority class and the training class frequencies (odt's ``unknown="majority"``:
an ONNX model cannot refuse a row). A missing number (NaN) in a column without a learned
direction goes to the no side (odt refuses such a row).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..data import Binarizer
from ..errors import OdtError
from ..features import missing_rule
from .export import unfold

#: the opsets of the exported model: ai.onnx 21, ai.onnx.ml 5 (TreeEnsemble)
OPSET, ML_OPSET, IR_VERSION = 21, 5, 10
_LEQ, _GTE, _EQ = 0, 2, 4  # TreeEnsemble node modes


def _onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise OdtError("exporting to ONNX needs the onnx package", hint='from a checkout: pip install ".[onnx]"') from None
    return onnx


def to_onnx(clf: Any, weights: np.ndarray | None = None, columns: Sequence[str] | None = None) -> Any:
    """The classifier as an ONNX model (see the module docstring). ``weights``: (layout
    nodes x classes) class weights of training rows (``ODTClassifier.node_counts_``,
    ``export.node_statistics``); ``columns``: the columns of X in order (default: the
    classifier's input columns)."""
    onnx = _onnx()
    from onnx import TensorProto, helper, numpy_helper

    layout = clf.layout()
    columns = list(columns) if columns is not None else list(clf.input_columns or Binarizer(clf.features).columns)
    seen = clf.seen.or_named_by(clf.features)
    cats = {c: list(v) for c, v in seen.categories if c in columns}
    read = {c for f in clf.features for c in f.columns}
    missing = sorted(read - set(columns))
    if missing:
        raise OdtError(f"the classifier reads column(s) {', '.join(missing)}, which are not among the columns "
                       f"given ({', '.join(columns)})")
    if cats and seen.majority is None:
        raise OdtError("the classifier does not record the categories of its training data, so its ONNX model "
                       "could not tell an unseen category", hint="solve the program again: odt saves them")
    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(kind: str, inputs: list[str], out: str, **attrs: Any) -> str:
        domain = "ai.onnx.ml" if kind in ("TreeEnsemble", "LabelEncoder") else ""
        nodes.append(helper.make_node(kind, inputs, [out], domain=domain, **attrs))
        return out

    # ---- inputs, and one double column per tested quantity
    if cats:
        inputs = [helper.make_tensor_value_info(c, TensorProto.STRING if c in cats else TensorProto.DOUBLE, [None, 1])
                  for c in columns]
        number = {c: c for c in columns if c not in cats}
    else:
        inputs = [helper.make_tensor_value_info("X", TensorProto.DOUBLE, [None, len(columns)])]
        number = {c: op("Gather", ["X", const(f"col_{j}", np.array([j], dtype=np.int64))], f"num_{j}", axis=1)
                  for j, c in enumerate(columns) if c in read}
    code = {}
    for j, c in enumerate(cats):
        as_float = op("LabelEncoder", [c], f"code_f_{j}", keys_strings=cats[c],
                      values_floats=[float(k) for k in range(len(cats[c]))], default_float=-1.0)
        code[c] = op("Cast", [as_float], f"code_{j}", to=TensorProto.DOUBLE)
    pieces: list[str] = []
    where: dict[Any, int] = {}

    def piece(key: Any, make: Any) -> int:
        if key not in where:
            where[key] = len(pieces)
            pieces.append(make())
        return where[key]

    tested = sorted({int(f) for f in layout.feature if f >= 0})
    spec: dict[int, tuple[int, int, float, int]] = {}  # feature -> (column piece, mode, split, missing to yes)
    for fi in tested:
        f = clf.features[fi]
        if f.kind == "category":
            k = cats[f.column].index(f.category)
            spec[fi] = (piece(("code", f.column), lambda f=f: code[f.column]), _EQ, float(k), 0)
        elif f.kind == "oblique":
            spec[fi] = (piece(("oblique", fi), lambda fi=fi, f=f: _oblique(fi, f, number, code, cats, const, op)),
                        _GTE, float(f.threshold), 0)
        else:
            rule = missing_rule(f) if f.kind == "threshold" else None
            col = piece(("number", f.column), lambda f=f: number[f.column])
            spec[fi] = (col, _LEQ, float(f.threshold), int(rule[0]) if rule else 0) if f.kind == "threshold" \
                else (col, _EQ, 1.0, 0)
    if not pieces:  # a single leaf reads nothing: a column with one row per input row
        pieces.append(_zeros(inputs[0].name, bool(cats), const, op, TensorProto))
    features = op("Concat", pieces, "features", axis=1) if len(pieces) > 1 else pieces[0]

    # ---- the tree: interior nodes and leaves, a leaf's weight its layout id
    src, first_child, second_child, _ = unfold(layout)
    interior = [k for k in range(src.size) if layout.feature[src[k]] >= 0]
    leaves = [k for k in range(src.size) if layout.feature[src[k]] < 0]
    pos = {k: i for i, k in enumerate(interior)}
    lpos = {k: i for i, k in enumerate(leaves)}
    if interior:
        attrs = dict(
            nodes_featureids=[spec[int(layout.feature[src[k]])][0] for k in interior],
            nodes_modes=helper.make_tensor("nodes_modes", TensorProto.UINT8, [len(interior)],
                                           [spec[int(layout.feature[src[k]])][1] for k in interior]),
            nodes_splits=numpy_helper.from_array(
                np.array([spec[int(layout.feature[src[k]])][2] for k in interior], dtype=np.float64), "nodes_splits"),
            nodes_missing_value_tracks_true=[spec[int(layout.feature[src[k]])][3] for k in interior],
            nodes_truenodeids=[lpos[c] if c in lpos else pos[c] for c in (int(first_child[k]) for k in interior)],
            nodes_trueleafs=[int(int(first_child[k]) in lpos) for k in interior],
            nodes_falsenodeids=[lpos[c] if c in lpos else pos[c] for c in (int(second_child[k]) for k in interior)],
            nodes_falseleafs=[int(int(second_child[k]) in lpos) for k in interior],
        )
    else:  # one leaf: a node whose both branches are it
        attrs = dict(nodes_featureids=[0], nodes_modes=helper.make_tensor("nodes_modes", TensorProto.UINT8, [1], [0]),
                     nodes_splits=numpy_helper.from_array(np.zeros(1), "nodes_splits"),
                     nodes_truenodeids=[0], nodes_trueleafs=[1], nodes_falsenodeids=[0], nodes_falseleafs=[1])
    leaf = op("TreeEnsemble", [features], "leaf_d", n_targets=1, tree_roots=[0], aggregate_function=1,
              post_transform=0, leaf_targetids=[0] * len(leaves),
              leaf_weights=numpy_helper.from_array(np.array([float(src[k]) for k in leaves]), "leaf_weights"),
              **attrs)
    index = op("Reshape", [op("Cast", [leaf], "leaf_i", to=TensorProto.INT64), const("flat", np.array([-1]))], "leaf")

    # ---- label and probabilities of the leaf; the training majority for an unseen category
    n_classes = len(clf.classes)
    integer = all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in clf.classes)
    labels = np.array([clf.classes[int(v)] if v >= 0 else clf.classes[0] for v in layout.label],
                      dtype=np.int64 if integer else object)
    if not integer:
        labels = np.array([str(v) for v in labels], dtype=object)
    proba = np.zeros((layout.n_nodes, n_classes))
    for t in layout.terminals:
        w = None if weights is None else np.asarray(weights[t], dtype=float)
        proba[t] = w / w.sum() if w is not None and w.sum() > 0 else np.eye(n_classes)[layout.label[t]]
    label = op("Gather", [const("labels", labels), index], "leaf_label", axis=0)
    probs = op("Gather", [const("proba", proba), index], "leaf_proba", axis=0)
    if cats:
        unseen = [op("Less", [code[c], const("minus_half", np.array([[-0.5]]))], f"unseen_{j}")
                  for j, c in enumerate(cats)]
        any_unseen = unseen[0]
        for j, u in enumerate(unseen[1:]):
            any_unseen = op("Or", [any_unseen, u], f"unseen_any_{j}")
        flat = op("Reshape", [any_unseen, "flat"], "unseen")
        total = None if weights is None else np.asarray(weights[0], dtype=float)
        prior = total / total.sum() if total is not None and total.sum() > 0 else np.eye(n_classes)[seen.majority]
        major = clf.classes[seen.majority]
        label = op("Where", [flat, const("majority", np.array([major if integer else str(major)],
                                                                 dtype=np.int64 if integer else object)), label],
                   "label")
        probs = op("Where", [any_unseen, const("prior", prior.reshape(1, -1)), probs], "probabilities")
    else:
        label = op("Identity", [label], "label")
        probs = op("Identity", [probs], "probabilities")
    outputs = [helper.make_tensor_value_info("label", TensorProto.INT64 if integer else TensorProto.STRING, [None]),
               helper.make_tensor_value_info("probabilities", TensorProto.DOUBLE, [None, n_classes])]
    graph = helper.make_graph(nodes, "odt_classifier", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
                              producer_name="odt", ir_version=IR_VERSION)
    model.doc_string = (f"odt {getattr(clf, 'kind', 'tree')} over {', '.join(columns)}; classes "
                        f"{', '.join(str(c) for c in clf.classes)}")
    onnx.checker.check_model(model)
    return model


def _oblique(fi: int, f: Any, number: dict, code: dict, cats: dict, const: Any, op: Any) -> str:
    """The sum of an oblique test's terms, in odt's order (so the rounding is odt's)."""
    from onnx import TensorProto

    total = None
    for t, (col, cat, coef) in enumerate(f.terms):
        if cat is None:
            value = number[col]
        else:
            hit = op("Equal", [code[col], const(f"ob_{fi}_{t}_k", np.array([[float(cats[col].index(cat))]]))],
                     f"ob_{fi}_{t}_eq")
            value = op("Cast", [hit], f"ob_{fi}_{t}_v", to=TensorProto.DOUBLE)
        term = op("Mul", [value, const(f"ob_{fi}_{t}_c", np.array([[float(coef)]]))], f"ob_{fi}_{t}")
        total = term if total is None else op("Add", [total, term], f"ob_{fi}_{t}_sum")
    assert total is not None
    return total


def _zeros(first: str, text: bool, const: Any, op: Any, TensorProto: Any) -> str:
    """A double column with one row per input row (all a single leaf reads; both of its
    branches are the leaf, so the value does not matter)."""
    if text:
        return op("Cast", [op("Equal", [first, first], "rows_b")], "rows", to=TensorProto.DOUBLE)
    return op("Gather", [first, const("col_first", np.array([0], dtype=np.int64))], "rows", axis=1)


def onnx_inputs(model: Any, data: Any) -> dict[str, np.ndarray]:
    """The input feed of an exported model for rows: a 2-D array or DataFrame (columns in
    the model's order) for a model with one input ``X``; a DataFrame or dict of columns
    for a model with an input per column (numbers as double, categories as text, a
    missing number NaN)."""
    names = [i.name for i in model.graph.input]
    if names == ["X"]:
        return {"X": np.asarray(data, dtype=np.float64)}
    out = {}
    for i in model.graph.input:
        col = np.asarray(data[i.name])
        if i.type.tensor_type.elem_type == 8:  # string
            out[i.name] = np.array([str(v) for v in col], dtype=object).reshape(-1, 1)
        else:
            out[i.name] = col.astype(np.float64).reshape(-1, 1)
    return out
