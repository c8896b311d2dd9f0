"""A scikit-learn estimator over odt programs (E4): ``ODTClassifier``.

Input: X (a numpy array or a pandas DataFrame with numeric, bool, category and object
columns), y, optional sample weights, and either the constructor's knobs or a program
text. Output: a fitted estimator whose classifier is the verified optimum of that program
on (X, y) — exactly what ``odt.compile(self.program_text_, data=..., params=...).solve()``
returns (``tests/odt/test_sklearn.py`` checks it), with the solve's status, bound, gap and
verification report as fitted attributes.

Needs scikit-learn (``pip install "odt-dsl[sklearn]"``).
"""
from __future__ import annotations

import dataclasses
import html
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, Iterator, Mapping

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (_check_sample_weight, check_is_fitted, column_or_1d, validate_data)

from odt.compiler import ast
from odt.compiler.classifiers.common import UNKNOWN_CHOICES
from odt.compiler.classifiers.diagram import Diagram
from odt.compiler.classifiers.tree import Tree
from odt.compiler.data import EXACT_INTEGERS, Binarizer, _beyond_exact, table_from_python
from odt.compiler.errors import OdtDataError, OdtError, OdtInputError, OdtInputTypeError
from odt.compiler.parse import parse_program
from odt.program import compile as compile_program

#: Column names of the target and the weights in the table handed to ``odt.compile``
#: (quoted names, so no feature of X can take them).
TARGET = "__odt_y__"
WEIGHT = "__odt_w__"
#: With ``missing="drop"``: the marker of a missing cell (NaN and None count too), and the
#: name of the category a missing text or category cell becomes.
MISSING = "?"


_UNKNOWN_HINT = "ODTClassifier(unknown='majority') predicts the training majority class for such rows"


@contextmanager
def _input_errors() -> Iterator[None]:
    """scikit-learn's own validation errors as ``OdtInputError`` (the same message, still a
    ``ValueError``, or a ``TypeError`` as ``OdtInputTypeError``)."""
    try:
        yield
    except OdtError:
        raise
    except TypeError as exc:
        raise OdtInputTypeError(str(exc)) from None
    except ValueError as exc:
        raise OdtInputError(str(exc)) from None


def _missing_label(y: np.ndarray) -> int | None:
    """The first row (0-based) of ``y`` whose label is missing (NaN, None, pandas' NA), or None."""
    if y.dtype.kind == "f":
        bad = np.flatnonzero(np.isnan(y))
        return int(bad[0]) if bad.size else None
    if y.dtype.kind == "O":
        for i, v in enumerate(y):
            if v is None or (isinstance(v, float) and v != v) or type(v).__name__ in ("NAType", "NaTType"):
                return i
    return None


class ODTClassifier(ClassifierMixin, BaseEstimator):
    """An optimal decision tree (or diagram, or BDD) as a scikit-learn classifier.

    The default program is an optimal tree of depth at most ``max_depth`` minimising
    training errors plus ``alpha`` per decision node (in units of training accuracy)::

        param max_depth = 3
        data { target `__odt_y__` }
        model tree(depth <= max_depth[, leaves <= max_leaves][, nodes <= max_nodes])
        minimize errors + alpha * N * nodes          # N = training weight; omitted when alpha = 0
        subject to { every leaf: samples >= min_samples_leaf   <constraints> }

    Args:
        max_depth: the tree's depth bound.
        max_leaves, max_nodes: optional size limits of the tree (S2).
        alpha: complexity penalty per decision node, as a fraction of the training rows
            (``errors / N + alpha * nodes`` is minimised); ``0`` minimises errors only.
        min_samples_leaf: every leaf is reached by at least this many training rows (C5).
        constraints: extra lines for the program's ``subject to`` block, written against
            the columns of X (``feature_names_in_``, or ``x0, x1, ...`` for arrays),
            e.g. ``"every path: x0 before x1"`` or ``"features_used <= 2"``.
        program: a whole program instead of the knobs above (which it then ignores): a
            model, an objective, constraints, a solve directive and ``param`` items; an
            optional ``data { ... }`` block may declare columns (``categorical x3``,
            ``numeric age by quantiles(5)``) but not the target or weights, which come
            from ``fit``.
        params: overrides of the program's ``param`` values (``{"depth": 4}``).
        backend: ``"auto"``, ``"dp"``, ``"maxsat"``, ``"cp"`` or ``"milp"``.
        time_limit: seconds per fit; on a time-out the best classifier found is kept
            (``status_ == "feasible"``, with ``bound_`` and ``gap_``).
        missing: None (a missing cell — NaN, None — is an error), ``"learn"`` or
            ``"drop"`` (the program's ``missing "?" (learn)`` / ``(drop)``): a missing text
            or category cell is a category of its own (``"?"``); a missing number goes,
            at each split, to the side the solver chose (learn, and predict routes it the
            same way), or its row is left out of the fit (drop; predict then refuses a row
            whose missing number the classifier reads, naming column and row).
        unknown: what ``predict`` and ``predict_proba`` do with a row holding a category
            that no training row had (as ``Tree.predict`` and ``odtc predict --unknown``):
            ``"error"`` (default) refuses it with an ``OdtInputError`` (a ``ValueError``)
            naming its column, row and value; ``"majority"`` predicts the training majority
            class (by weight), with the training class frequencies as its probabilities.

    Fitted attributes: ``classes_``, ``n_features_in_``, ``feature_names_in_`` (for
    DataFrames with string column names), ``classifier_`` (the odt ``Tree``/``Diagram``),
    ``result_`` (the ``SolveResult``), ``status_``, ``objective_``, ``bound_``, ``gap_``,
    ``verified_`` and ``report_`` (the re-verification report), ``program_text_`` and
    ``params_`` (what was compiled), ``counts_`` (training class weights per leaf or
    terminal arc: ``predict_proba`` is their row-normalised value). ``verified_`` is
    always true: a classifier that fails its re-verification is never fitted, ``fit``
    raises ``VerificationFailed`` (as ``Program.solve`` does).

    ``sklearn.utils.estimator_checks.check_estimator`` passes every check (scikit-learn
    1.9, 62 checks, ``tests/odt/test_sklearn.py``) except the one in ``SKIPPED_CHECKS``
    (handed to it as an expected failure), and one is skipped by scikit-learn itself:

    * ``check_sample_weight_equivalence_on_dense_data``: an integer weight k and k copies
      of a row give the same objective for every tree, so the optimal *value* is the same
      (``test_sample_weights_count_like_repeated_rows``), but when several trees are
      optimal the search may return a different one on the two data sets, and the check
      compares predictions (it fails on some of its random draws, passes on others).

    * ``check_array_api_input``: runs only with ``SCIPY_ARRAY_API=1`` in the environment;
      odt computes in numpy and does not declare array-API support (``array_api_support``
      tag left False), so inputs from other array libraries are converted by numpy.
    """

    def __init__(self, max_depth: int = 3, max_leaves: int | None = None, max_nodes: int | None = None,
                 alpha: float = 0.0, min_samples_leaf: int = 1, constraints: str = "", program: str | None = None,
                 params: Mapping[str, Any] | None = None, backend: str = "auto", time_limit: float | None = None,
                 missing: str | None = None, unknown: str = "error"):
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.max_nodes = max_nodes
        self.alpha = alpha
        self.min_samples_leaf = min_samples_leaf
        self.constraints = constraints
        self.program = program
        self.params = params
        self.backend = backend
        self.time_limit = time_limit
        self.missing = missing
        self.unknown = unknown

    # ------------------------------------------------------------------ scikit-learn protocol
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.input_tags.allow_nan = self.missing is not None
        tags.non_deterministic = False
        return tags

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "ODTClassifier":
        """Solve the program on (X, y) and keep the verified classifier."""
        self._check_unknown()
        columns = self._columns(X, reset=True)
        if y is None:
            raise OdtInputTypeError("ODTClassifier requires y to be passed, but the target y is None")
        with _input_errors():
            y = column_or_1d(y, warn=True)
        if len(y) != self._n_rows:
            raise OdtInputError(f"X has {self._n_rows} rows but y has {len(y)}")
        missing = _missing_label(y)
        if missing is not None:
            shown = "NaN" if isinstance(y[missing], float) else repr(y[missing])
            raise OdtInputError(f"y has a missing label ({shown}) at row {missing + 1}",
                                hint="drop the rows without a label before fitting")
        with _input_errors():
            check_classification_targets(y)
        self.classes_, y_index = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise OdtInputError(f"y has one class ({self.classes_[0]!r}); a classifier needs at least two")
        weights = None
        if sample_weight is not None:
            with _input_errors():
                weights = _check_sample_weight(sample_weight, columns[next(iter(columns))] if columns else y,
                                               ensure_non_negative=True)
            if not (weights > 0).any():
                raise OdtInputError("every sample weight is zero")
        table = dict(columns)
        table[TARGET] = y_index.astype(np.int64)
        if weights is not None:
            table[WEIGHT] = np.asarray(weights, dtype=float)
        text_columns = [name for name, values in columns.items() if values.dtype.kind == "O"]
        self.program_text_, self.params_ = self._program_text(weights, text_columns)
        try:
            prog = compile_program(self.program_text_, data=table, params=self.params_ or None,
                                   filename="<ODTClassifier>")
            res = prog.solve(backend=None if self.backend == "auto" else self.backend, time_limit=self.time_limit)
        except OdtDataError as exc:  # hints speak of the estimator's knobs, not of a data block
            raise OdtInputError([dataclasses.replace(d, hint=_estimator_hint(d.hint)) for d in exc.diagnostics]) from None
        if res.classifier is None:
            raise OdtError(f"no classifier found within the time limit (status {res.status}); raise time_limit")
        # solved on class indices (the order of classes_); shown and saved with the labels themselves
        labelled = dataclasses.replace(res.classifier, classes=tuple(self.classes_.tolist()))
        self.result_ = dataclasses.replace(res, classifier=labelled)
        self.classifier_ = labelled
        self.status_, self.objective_, self.bound_, self.gap_ = res.status, res.objective, res.bound, res.gap
        self.verified_, self.report_ = res.verified, res.report
        terminals = _terminals(self.classifier_, Binarizer(self.classifier_.features).transform(prog.dataset.table))
        w = prog.dataset.row_weights()
        self.counts_ = {}
        for t in np.unique(terminals):
            rows = terminals == t
            self.counts_[int(t)] = np.bincount(prog.dataset.y[rows], weights=w[rows], minlength=len(self.classes_))
        return self

    def predict(self, X: Any) -> np.ndarray:
        """The class of each row (the classifier's label of the leaf or terminal it reaches);
        a row with a category no training row had as ``unknown`` says."""
        check_is_fitted(self)
        Xb, unseen = self._binarised(X)
        labels = self.classifier_.predict_binary(Xb)
        if unseen.any():  # unknown="majority"
            labels[unseen] = self.classifier_.seen.majority
        return self.classes_[labels]

    def predict_proba(self, X: Any) -> np.ndarray:
        """For each row, the class frequencies (weighted) of the training rows that reached
        the same leaf (tree) or took the same arc into a class (diagram); rows sum to 1. A
        leaf no training row reached gives probability 1 to its label. A row with a category
        no training row had: an error, or with ``unknown="majority"`` the class frequencies
        of all training rows (their most frequent class is the one ``predict`` gives)."""
        check_is_fitted(self)
        Xb, unseen = self._binarised(X)
        labels = self.classifier_.predict_binary(Xb)
        terms = _terminals(self.classifier_, Xb)
        out = np.zeros((Xb.shape[0], len(self.classes_)))
        for t in np.unique(terms):
            rows = terms == t
            counts = self.counts_.get(int(t))
            if counts is None or counts.sum() <= 0:
                out[rows, labels[rows]] = 1.0
            else:
                out[rows] = counts / counts.sum()
        if unseen.any():
            prior = np.sum(list(self.counts_.values()), axis=0)
            out[unseen] = prior / prior.sum()
        return out

    # ------------------------------------------------------------------ notebooks (E3)
    def _repr_svg_(self) -> str | None:
        """The fitted classifier's picture (Jupyter shows it for a fitted estimator)."""
        if not hasattr(self, "classifier_"):
            return None
        return self.classifier_._repr_svg_()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        bundle = super()._repr_mimebundle_(**kwargs)
        svg = self._repr_svg_()
        if svg is not None:  # a fitted model: its picture and status instead of the estimator diagram
            bundle["image/svg+xml"] = svg
            bundle["text/html"] = (f"<div><pre>{html.escape(repr(self))}</pre>"
                                   f"<p>status <b>{self.status_}</b>, objective {self.objective_}, "
                                   f"gap {'-' if self.gap_ is None else f'{self.gap_:.2%}'}, "
                                   f"verified {'yes' if self.verified_ else 'NO'}</p>{svg}</div>")
        return bundle

    # ------------------------------------------------------------------ helpers
    def _program_text(self, weights: np.ndarray | None, text_columns: list[str]) -> tuple[str, dict[str, Any]]:
        """The program compiled by ``fit`` and the parameter overrides it is given. Text
        and category columns are declared ``categorical`` (a column holding '?' among
        numbers is a category column to scikit-learn), unless the program's data block
        declares them itself."""
        inject = f"target `{TARGET}`" + (f" weight `{WEIGHT}`" if weights is not None else "")
        if self.missing is not None:
            if self.missing not in ("learn", "drop"):
                raise OdtInputError(f"missing={self.missing!r}: expected None (a missing value is an error), "
                                    "'learn' (each split learns where a missing number goes) or 'drop' (rows with "
                                    "a missing number are dropped); a missing text or category is a category")
            inject += f' missing "{MISSING}" ({self.missing})'

        blocks = parse_program(self.program, "<ODTClassifier.program>").of(ast.DataBlock) if self.program else ()
        declared = {n.text for item in (blocks[0].items if blocks else ()) for n in
                    (getattr(item, "names", None) or (getattr(item, "name", None),)) if n is not None}
        categorical = [c for c in text_columns if c not in declared]
        if categorical:
            inject += " categorical " + ", ".join(f"`{c}`" for c in categorical)
        if self.program is not None:
            text = self.program
            if blocks:  # the user's data block gets the target and weights: same lines, same positions
                block = blocks[0]
                if any(isinstance(i, (ast.TargetItem, ast.WeightItem)) for i in block.items):
                    raise OdtInputError("the program's data block names a target or weight column; the estimator "
                                        "takes them from fit(X, y, sample_weight): remove them", block.span)
                if block.path is not None:
                    raise OdtInputError("the program's data block names a file; the estimator's data comes from "
                                        "fit(X, y): write  data { ... }  without a file name", block.span)
                lines = text.split("\n")
                line = lines[block.span.line - 1]
                brace = line.index("{", block.span.column - 1)
                lines[block.span.line - 1] = line[:brace + 1] + f" {inject} " + line[brace + 1:]
                text = "\n".join(lines)
            else:  # appended, so the user's lines keep their numbers in error messages
                text = text.rstrip("\n") + f"\ndata {{ {inject} }}\n"
            return text, dict(self.params or {})
        sizes = "".join(f", {k} <= {int(v)}" for k, v in (("leaves", self.max_leaves), ("nodes", self.max_nodes))
                        if v is not None)
        lines = [f"param max_depth = {int(self.max_depth)}", f"data {{ {inject} }}",
                 f"model tree(depth <= max_depth{sizes})"]
        alpha = _exact(self.alpha, "alpha")
        if alpha < 0:
            raise OdtInputError(f"alpha must be non-negative, got {self.alpha}")
        if alpha > 0:
            total = Fraction(int(self._n_rows)) if weights is None else _exact(float(weights.sum()), "weights")
            coef = alpha * total
            lines.append(f"param node_cost = {_decimal(coef)}")
            lines.append("minimize errors + node_cost * nodes")
        else:
            lines.append("minimize errors")
        body = []
        if int(self.min_samples_leaf) > 1:
            body.append(f"every leaf: samples >= {int(self.min_samples_leaf)}")
        if self.constraints:
            body.append(self.constraints.strip())
        if body:
            lines.append("subject to {\n    " + "\n    ".join(body) + "\n}")
        return "\n".join(lines) + "\n", dict(self.params or {})

    def _columns(self, X: Any, reset: bool) -> dict[str, np.ndarray]:
        """The columns of X by name (numbers as float, text and categories as objects)."""
        if hasattr(X, "iloc") and hasattr(X, "dtypes"):  # a DataFrame: keep column kinds
            with _input_errors():
                validate_data(self, X, skip_check_array=True, reset=reset)
            if X.shape[1] == 0 or X.shape[0] == 0:
                raise OdtInputError(f"X has shape {X.shape}: at least one row and one column are needed")
            names = self._names(X.shape[1])
            out = {}
            for name, col in zip(names, X.columns):
                out[name] = _frame_column(X[col], name)
        else:
            arr = np.asarray(X) if not hasattr(X, "toarray") else X
            numeric = getattr(arr, "dtype", None) is not None and arr.dtype.kind not in "OUS"
            finite: bool | str = (True if self.missing is None else "allow-nan") if numeric else False
            with _input_errors():
                X = validate_data(self, X, reset=reset, dtype="numeric" if numeric else None,
                                  ensure_all_finite=finite, ensure_min_samples=1)
            names = self._names(X.shape[1])
            out = {name: (_numbers(X[:, j], name) if numeric else X[:, j].astype(object)) for j, name in enumerate(names)}
        self._n_rows = X.shape[0]
        if self.missing is not None:  # a missing text or category is the category named MISSING
            for name, values in out.items():
                if values.dtype.kind == "O":
                    gone = np.fromiter((v is None or (isinstance(v, float) and v != v) for v in values), bool,
                                       count=len(values))
                    if gone.any():
                        values = values.copy()
                        values[gone] = MISSING
                        out[name] = values
        return out

    def _names(self, n: int) -> list[str]:
        names = getattr(self, "feature_names_in_", None)
        return [str(c) for c in names] if names is not None else [f"x{j}" for j in range(n)]

    def _binarised(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The binarised rows of X, and which of them hold a category no training row had
        (all False unless ``unknown="majority"``: with ``"error"`` such a row is refused
        here, as ``Tree.predict`` refuses it)."""
        self._check_unknown()
        columns = self._columns(X, reset=False)
        try:
            table = table_from_python(columns, name="X", missing=self.missing is not None)
            Xb = Binarizer(self.classifier_.features).transform(table)
            seen = self.classifier_.seen.or_named_by(self.classifier_.features)
            unseen = np.zeros(Xb.shape[0], dtype=bool)
            if self.unknown == "error" or not seen.recorded:
                seen.resolve(table, np.zeros(Xb.shape[0], dtype=np.int64), self.unknown)  # raises for such a row
            else:
                for _, rows in seen.unknown(table):
                    unseen[rows] = True
            return Xb, unseen
        except OdtDataError as exc:
            raise OdtInputError([dataclasses.replace(d, hint=_UNKNOWN_HINT if d.hint and "--unknown" in d.hint else d.hint)
                                 for d in exc.diagnostics]) from None

    def _check_unknown(self) -> None:
        if self.unknown not in UNKNOWN_CHOICES:
            raise OdtInputError(f"unknown={self.unknown!r}: expected 'error' (a row with a category no training "
                                "row had is refused) or 'majority' (it gets the training majority class)")


#: check name -> why ODTClassifier does not always pass it (see the class docstring).
SKIPPED_CHECKS: dict[str, str] = {
    "check_sample_weight_equivalence_on_dense_data":
        "ties: weights and repeated rows give the same optimal value, but among several optimal trees "
        "the search may return a different one on the two data sets",
}


def _numbers(values: np.ndarray, name: str) -> np.ndarray:
    """A numeric column as float64; an integer beyond 2^53, which float64 would round
    into its neighbours, is an ``OdtInputError`` naming its column and row."""
    if values.dtype.kind in "iu" and values.size:
        big = np.flatnonzero(_beyond_exact(values))
        if big.size:
            raise OdtInputError(f"column '{name}', row {big[0] + 1}: the integer {values[big[0]]} is larger than "
                                f"2^53 = {EXACT_INTEGERS}, beyond what odt's 64-bit floats hold exactly",
                                hint="pass it as text if it is a code or an id (a category), or rescale the column")
    return values.astype(float)


def _frame_column(col: Any, name: str) -> np.ndarray:
    """A DataFrame column as numbers (numeric and bool) or objects (text, categories)."""
    kind = getattr(col.dtype, "kind", "O")
    if str(col.dtype) == "category":
        values = col.astype(object).to_numpy()
    elif kind == "b" or str(col.dtype) == "boolean":
        values = col.astype(float).to_numpy()
    elif kind in "iu":
        values = _numbers(col.to_numpy(), name)
    elif kind in "iuf":
        values = col.to_numpy(dtype=float, na_value=np.nan)
    elif kind == "O" or str(col.dtype) in ("string", "str"):
        values = col.astype(object).to_numpy()
    else:
        raise OdtInputError(f"column '{name}' has dtype {col.dtype}, which odt does not take "
                            "(numbers, bool, category and text do)")
    if values.dtype.kind == "O":  # pandas' missing markers (NaN, None, pd.NA, NaT) as None
        missing = col.isna().to_numpy()
        if missing.any():
            values = values.copy()
            values[missing] = None
    return values


def _terminals(clf: Tree | Diagram, Xb: np.ndarray) -> np.ndarray:
    """For each row, an id of where it ends: the leaf of a tree; for a diagram, the arc
    (node, side) by which it enters its class (-1 when the root itself is a class)."""
    if isinstance(clf, Tree):
        return clf.leaf_index_binary(Xb)
    out = np.full(Xb.shape[0], -1, dtype=np.int64)
    at = np.full(Xb.shape[0], clf.root, dtype=np.int64)
    for i, node in enumerate(clf.nodes):
        here = at == i
        if not here.any():
            continue
        go = here & Xb[:, node.feature]
        stay = here & ~go
        for rows, nxt, side in ((go, node.if_true, 1), (stay, node.if_false, 0)):
            at[rows] = nxt
            if nxt < 0:
                out[rows] = 2 * i + side
    return out


def _exact(x: Any, what: str) -> Fraction:
    try:
        return Fraction(repr(float(x)))
    except (TypeError, ValueError, OverflowError):
        raise OdtInputError(f"{what} must be a finite number, got {x!r}") from None


def _decimal(x: Fraction) -> str:
    """A Fraction as a decimal the odt grammar reads back exactly when it has one, else as
    a float's shortest repr (the objective then uses that decimal)."""
    f = float(x)
    return repr(f) if "e" not in repr(f) else f"{f:.12f}"


def _estimator_hint(hint: str | None) -> str | None:
    """A data-block hint said as the estimator's knob: ``missing "?" (drop)`` in a data block
    is ``ODTClassifier(missing="drop")`` (or ``"learn"``) here."""
    if hint is not None and "missing" in hint:
        return "pass ODTClassifier(missing='learn') (each split learns where a missing value goes) or missing='drop'"
    return hint
