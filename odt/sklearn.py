"""A scikit-learn estimator over odt programs (E4): ``ODTClassifier``.

Input: X (a numpy array or a pandas DataFrame with numeric, bool, category and object
columns), y, optional sample weights, and either the constructor's knobs or a program
text. Output: a fitted estimator whose classifier is the verified optimum of that program
on (X, y) — exactly what ``odt.compile(self.program_text_, data=..., params=...).solve()``
returns (``tests/odt/test_sklearn.py`` checks it), with the solve's status, bound, gap and
verification report as fitted attributes.

Needs scikit-learn (from a checkout: ``pip install ".[sklearn]"``).
"""
from __future__ import annotations

import dataclasses
import html
from collections import abc
from contextlib import contextmanager
import math
import numbers
import warnings
from fractions import Fraction
from typing import Any, Iterator, Mapping

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.utils._param_validation import Interval, InvalidParameterError, RealNotInt, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (_check_sample_weight, check_is_fitted, column_or_1d, validate_data)

from odt.compiler import ast
from odt.compiler.classifiers.common import UNKNOWN_CHOICES
from odt.compiler.classifiers.diagram import Diagram, leaf_class, leaf_ref
from odt.compiler.classifiers.layout import Layout, impurity_decrease
from odt.compiler.classifiers.tree import Leaf, Split, Tree, TreeNode
from odt.compiler.data import EXACT_INTEGERS, Binarizer, _beyond_exact, table_from_python
from odt.compiler.errors import OdtDataError, OdtError, OdtInputError, OdtInputTypeError
from odt.compiler.parse import parse_program
from odt.program import compile as compile_program
from odt.sklearn_objective import OBJECTIVES, objective_lines

#: Column names of the target and the weights in the table handed to ``odt.compile``
#: (quoted names, so no feature of X can take them).
TARGET = "__odt_y__"
WEIGHT = "__odt_w__"
#: With ``missing="drop"``: the marker of a missing cell (NaN and None count too), and the
#: name of the category a missing text or category cell becomes.
MISSING = "?"


_UNKNOWN_HINT = "ODTClassifier(unknown='majority') predicts the training majority class for such rows"
_NO_DIRECTION = ("no training row had a missing value in this column, so no split learned where one goes: fill the "
                 "cell, or fit on rows that have missing values in it (missing='learn')")


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


def _fit_inputs(estimator: Any, X: Any, y: Any) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """What ``fit`` of ``ODTClassifier`` and ``ODTRegressor`` starts with: the parameters
    validated, X read as named columns (a warning for numbers written as text, which are
    categorical), and y as a 1-D array (an error when it is missing)."""
    estimator._validate_all()
    columns, as_text = estimator._columns(X, reset=True)
    for name in as_text:
        warnings.warn(f"column '{name}' holds only numbers written as text, so it is treated as categorical "
                      "(one test per value), as its dtype says; convert it to numbers (X.astype(float), "
                      "pandas.to_numeric) to split it on thresholds", DataConversionWarning, stacklevel=3)
    if y is None:
        raise OdtInputTypeError(f"{type(estimator).__name__} requires y to be passed, but the target y is None")
    with _input_errors():
        y = column_or_1d(y, warn=True)
    return columns, y


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
        data { target `__odt_y__`  missing "?" (learn) }
        model tree(depth <= max_depth[, leaves <= max_leaves][, nodes <= max_nodes])
        minimize errors + alpha * N * nodes          # N = training weight; omitted when alpha = 0
        subject to { every leaf: samples >= min_samples_leaf   <constraints> }

    Args:
        max_depth: the tree's depth bound (0 or more). ``None`` means no bound of its own:
            the depth is then bounded by the size limits (``max_leaves - 1`` or
            ``max_nodes``), and ``None`` without a size limit is refused (an optimal tree
            is searched within a bound).
        max_leaves, max_nodes: optional size limits of the tree (S2).
        alpha: complexity penalty per decision node, as a fraction of the training rows
            (``errors / N + alpha * nodes`` is minimised); ``0`` minimises errors only.
        min_samples_leaf: every leaf is reached by at least this many training rows (C5);
            a float in (0, 1) is a fraction of them, ``ceil(min_samples_leaf * n_samples)``
            (as scikit-learn's trees).
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
        time_limit: seconds per fit (positive); on a time-out the best classifier found is
            kept (``status_ == "feasible"``, with ``bound_`` and ``gap_``).
        missing: what a missing cell of X (NaN, None, pandas' NA) means, as the program's
            ``missing "?" (learn)`` / ``(drop)``: ``"learn"`` (default, as scikit-learn's
            trees): a missing number goes, at each split, to the side the solver chose, and
            ``predict`` routes it the same way; ``"drop"``: its row is left out of the fit
            (``predict`` then refuses a row whose missing number the classifier reads,
            naming column and row); ``"error"`` (or None): a missing cell is an error. With
            ``"learn"`` and ``"drop"`` a missing text or category cell is a category of its
            own (``"?"``). A column that had no missing cell in training has no learned
            direction: ``predict`` refuses a missing cell there, naming column and row.
        objective: ``"errors"`` (default: weighted training errors, or with ``class_costs``
            their misclassification cost), ``"balanced_accuracy"`` (maximised: the mean
            recall over the classes, scikit-learn's ``balanced_accuracy_score``; with
            ``alpha``, minus ``alpha`` per decision node) or ``"f1"`` (maximised: F1 of the
            second class of ``classes_``, two classes; no ``alpha``). ``program`` overrides it.
        class_costs: a misclassification cost matrix (cost-sensitive classification):
            ``{(actual, predicted): cost}`` over labels of y, an unlisted misclassification
            costing 1 and a correct prediction 0, or a square array-like
            ``[actual][predicted]`` in ``classes_`` order (the layout of scikit-learn's
            ``confusion_matrix``). Minimised: sum over rows of ``sample_weight * cost``,
            plus ``alpha * N`` per decision node.
        unknown: what ``predict`` and ``predict_proba`` do with a row holding a category
            that no training row had (as ``Tree.predict`` and ``odtc predict --unknown``):
            ``"error"`` (default) refuses it with an ``OdtInputError`` (a ``ValueError``)
            naming its column, row and value; ``"majority"`` predicts the training majority
            class (by weight), with the training class frequencies as its probabilities.

    Every parameter is checked by scikit-learn's parameter validation when ``fit`` starts:
    a bad type or value raises ``sklearn.utils._param_validation.InvalidParameterError``
    (a ``ValueError`` and a ``TypeError``) naming the parameter.

    Input: numbers (float, int, bool), text and ``category`` columns. An object column
    whose every cell is a number is numeric (as scikit-learn's ``check_array`` converts
    it); a text column whose every value is a number written as text (``"0.2"``) is
    categorical, as its dtype says, with a ``DataConversionWarning`` naming it.

    Fitted attributes: ``classes_``, ``n_classes_``, ``n_features_in_``,
    ``feature_names_in_`` (for DataFrames with string column names), ``classifier_`` (the
    odt ``Tree``/``Diagram``), ``result_`` (the ``SolveResult``), ``status_``,
    ``objective_``, ``bound_``, ``gap_``, ``verified_`` and ``report_`` (the
    re-verification report), ``program_text_`` and ``params_`` (what was compiled),
    ``node_counts_`` (nodes x classes: the training class weights at every node, in the
    numbering of ``apply``), ``n_node_samples_`` (the training rows at every node),
    ``counts_`` (the class weights for each terminal id: ``predict_proba``
    is their row-normalised value) and ``feature_importances_``. ``verified_`` is always
    true: a classifier that fails its re-verification is never fitted, ``fit`` raises
    ``VerificationFailed`` (as ``Program.solve`` does).

    The tree API of scikit-learn's ``DecisionTreeClassifier``: ``apply``,
    ``decision_path``, ``predict_log_proba``, ``get_depth``, ``get_n_leaves``,
    ``feature_importances_``, and ``export_text`` in this module; node ids are a tree's
    nodes in pre-order (the yes child, scikit-learn's left, first), or a diagram's
    decision nodes and then one terminal per arc into a class
    (``odt.compiler.classifiers.layout``). ``to_onnx`` and ``to_sklearn`` export it.

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

    _parameter_constraints: dict = {
        "max_depth": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "max_leaves": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_nodes": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
        "min_samples_leaf": [Interval(numbers.Integral, 1, None, closed="left"),
                             Interval(RealNotInt, 0.0, 1.0, closed="neither")],
        "constraints": [str],
        "program": [str, None],
        "params": [abc.Mapping, None],
        "backend": [StrOptions({"auto", "dp", "maxsat", "cp", "milp"})],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "missing": [StrOptions({"learn", "drop", "error"}), None],
        "unknown": [StrOptions(set(UNKNOWN_CHOICES))],
        "objective": [StrOptions(set(OBJECTIVES))],
        "class_costs": [abc.Mapping, "array-like", None],
    }

    def __init__(self, max_depth: int | None = 3, max_leaves: int | None = None, max_nodes: int | None = None,
                 alpha: float = 0.0, min_samples_leaf: int | float = 1, constraints: str = "",
                 program: str | None = None, params: Mapping[str, Any] | None = None, backend: str = "auto",
                 time_limit: float | None = None, missing: str | None = "learn", unknown: str = "error",
                 objective: str = "errors", class_costs: Any = None):
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
        self.objective = objective
        self.class_costs = class_costs

    # ------------------------------------------------------------------ scikit-learn protocol
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.input_tags.allow_nan = self.missing in ("learn", "drop")
        tags.non_deterministic = False
        return tags

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "ODTClassifier":
        """Solve the program on (X, y) and keep the verified classifier."""
        columns, y = _fit_inputs(self, X, y)
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
        self.n_classes_ = len(self.classes_)
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
        # solved on class indices; shown and saved with the labels themselves, every class of y kept
        # (missing="drop" may leave a class without rows: the solve then knew fewer classes)
        labelled = _relabelled(res.classifier, [int(c) for c in res.classifier.classes], tuple(self.classes_.tolist()))
        self.result_ = dataclasses.replace(res, classifier=labelled)
        self.classifier_ = labelled
        self.status_, self.objective_, self.bound_, self.gap_ = res.status, res.objective, res.bound, res.gap
        self.verified_, self.report_ = res.verified, res.report
        data = prog.dataset
        Xb = Binarizer(labelled.features).transform(data.table)
        layout = labelled.layout()
        y_full = np.asarray([int(c) for c in data.classes], dtype=np.int64)[data.y]
        self.node_counts_, yes = layout.class_weights(Xb, y_full, data.weights, self.n_classes_)
        self.n_node_samples_, _ = layout.row_counts(Xb)
        self.counts_ = {int(t): self.node_counts_[t] for t in layout.terminals}
        self.feature_importances_ = self._importances(layout, yes)
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
        terms = self.classifier_.layout().apply(Xb)
        return self._proba(terms, unseen)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """The natural logarithm of ``predict_proba`` (``-inf`` where it is 0)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    # ------------------------------------------------------------------ the tree API
    def apply(self, X: Any) -> np.ndarray:
        """For each row, the id of the leaf (tree) or terminal (diagram: the arc into its
        class) it reaches, in the numbering of ``node_counts_`` and ``decision_path``. A
        row with a category no training row had reaches none under
        ``unknown="majority"``: -1 (with ``"error"`` it is refused)."""
        check_is_fitted(self)
        Xb, unseen = self._binarised(X)
        out = self.classifier_.layout().apply(Xb)
        out[unseen] = -1
        return out

    def decision_path(self, X: Any) -> Any:
        """A sparse (rows x nodes) CSR indicator of the nodes each row passes, root and
        leaf (terminal) included, as ``DecisionTreeClassifier.decision_path``. A row with
        an unseen category under ``unknown="majority"`` passes no node."""
        from scipy.sparse import csr_matrix

        check_is_fitted(self)
        Xb, unseen = self._binarised(X)
        layout = self.classifier_.layout()
        rows, nodes = layout.path(Xb)
        keep = ~unseen[rows]
        rows, nodes = rows[keep], nodes[keep]
        return csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, nodes)), shape=(Xb.shape[0], layout.n_nodes))

    def get_depth(self) -> int:
        """The depth of the classifier: the longest root-to-leaf path, in decision nodes."""
        check_is_fitted(self)
        return int(self.classifier_.depth)

    def get_n_leaves(self) -> int:
        """The number of leaves (a diagram: of arcs into a class, its terminals)."""
        check_is_fitted(self)
        return int(self.classifier_.layout().terminals.size)

    def to_onnx(self) -> Any:
        """The fitted classifier as an ONNX model (``onnx.ModelProto``; needs the ``onnx``
        extra): its inputs are the columns of X, its outputs ``label`` and
        ``probabilities`` (this estimator's ``predict`` and ``predict_proba``); see
        ``odt.compiler.classifiers.onnx``."""
        from odt.compiler.classifiers.onnx import to_onnx

        check_is_fitted(self)
        return to_onnx(self.classifier_, self.node_counts_, self._names(self.n_features_in_))

    def to_sklearn(self) -> Any:
        """The fitted classifier as a fitted scikit-learn ``DecisionTreeClassifier``
        (diagrams unfolded) over this estimator's columns, for the tools that read
        scikit-learn trees (``plot_tree``, SHAP, skl2onnx); see ``odt.sklearn_tree``."""
        from odt.sklearn_tree import to_sklearn

        check_is_fitted(self)
        return to_sklearn(self.classifier_, self.node_counts_, self.n_node_samples_, self._names(self.n_features_in_),
                          frame=hasattr(self, "feature_names_in_"))

    def _proba(self, terms: np.ndarray, unseen: np.ndarray) -> np.ndarray:
        out = np.zeros((terms.shape[0], len(self.classes_)))
        labels = self.classifier_.layout().label
        for t in np.unique(terms):
            rows = terms == t
            counts = self.counts_.get(int(t))
            if counts is None or counts.sum() <= 0:
                out[rows, labels[t]] = 1.0
            else:
                out[rows] = counts / counts.sum()
        if unseen.any():
            prior = self.node_counts_[0]
            out[unseen] = prior / prior.sum()
        return out

    def _importances(self, layout: Layout, yes: np.ndarray) -> np.ndarray:
        """The normalised total weighted Gini decrease of the tests on each column of X
        (scikit-learn's ``feature_importances_``, over the training rows; a test that
        reads several columns, an oblique one, shares its decrease equally)."""
        drop = impurity_decrease(layout, self.node_counts_, yes)
        names = self._names(self.n_features_in_)
        where = {name: j for j, name in enumerate(names)}
        out = np.zeros(len(names))
        for i in np.flatnonzero(layout.feature >= 0):
            cols = self.classifier_.features[int(layout.feature[i])].columns
            for c in cols:
                out[where[c]] += drop[i] / len(cols)
        total = out.sum()
        return out / total if total > 0 else out

    def _validate_all(self) -> None:
        """scikit-learn's parameter validation, and what it does not say: a bool is no
        number here, and max_depth=None needs a size limit."""
        self._validate_params()
        for name in ("max_depth", "max_leaves", "max_nodes", "alpha", "min_samples_leaf", "time_limit"):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)):
                raise InvalidParameterError(f"The '{name}' parameter of ODTClassifier must be a number, not a bool. "
                                            f"Got {value!r} instead.")
        if self.program is None and self.max_depth is None and self.max_leaves is None and self.max_nodes is None:
            raise InvalidParameterError(
                "The 'max_depth' parameter of ODTClassifier is None (no depth limit of its own), which needs "
                "max_leaves or max_nodes: an optimal tree is searched within a bound on its size. Give "
                "max_depth=k, or max_leaves / max_nodes.")

    # ------------------------------------------------------------------ notebooks (E3)
    def _repr_svg_(self) -> str | None:
        """The fitted classifier's picture (Jupyter shows it for a fitted estimator)."""
        if not hasattr(self, "classifier_"):
            return None
        from odt.compiler.classifiers.render import to_svg

        return to_svg(self.classifier_, weights=self.node_counts_, rows=self.n_node_samples_)  # with its training counts

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        return _with_picture(self, super()._repr_mimebundle_(**kwargs))

    # ------------------------------------------------------------------ helpers
    def _objective_lines(self, alpha: Fraction, total: Fraction) -> list[str]:
        """The program's objective: errors plus ``alpha`` per node in units of the training
        weight ``total``, or (issue 26) balanced accuracy, F1 or a cost matrix
        (``odt/sklearn_objective.py``); ``ODTRegressor`` gives its loss instead."""
        if alpha > 0 and self.objective == "errors" and self.class_costs is None:
            return [f"param node_cost = {_decimal(alpha * total)}", "minimize errors + node_cost * nodes"]
        return objective_lines(self.objective, self.class_costs, self.classes_,
                               alpha * total if alpha > 0 else None, total, _decimal)

    def _program_text(self, weights: np.ndarray | None, text_columns: list[str]) -> tuple[str, dict[str, Any]]:
        """The program compiled by ``fit`` and the parameter overrides it is given. Text
        and category columns are declared ``categorical`` (a column holding '?' among
        numbers is a category column to scikit-learn), unless the program's data block
        declares them itself."""
        inject = f"target `{TARGET}`" + (f" weight `{WEIGHT}`" if weights is not None else "")
        if self._policy is not None:
            inject += f' missing "{MISSING}" ({self._policy})'

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
        depth = self.max_depth
        if depth is None:  # bounded by the size limits: a tree of L leaves is at most L - 1 deep, of K nodes K deep
            depth = min(int(v) for v in (None if self.max_leaves is None else int(self.max_leaves) - 1,
                                         self.max_nodes) if v is not None)
        lines = [f"param max_depth = {int(depth)}", f"data {{ {inject} }}",
                 f"model tree(depth <= max_depth{sizes})"]
        alpha = _exact(self.alpha, "alpha")
        total = Fraction(int(self._n_rows)) if weights is None else _exact(float(weights.sum()), "weights")
        lines += self._objective_lines(alpha, total)
        body = []
        least = self.min_samples_leaf
        if isinstance(least, numbers.Real) and not isinstance(least, numbers.Integral):  # a fraction of the rows
            least = max(1, math.ceil(float(least) * self._n_rows))
        if int(least) > 1:
            body.append(f"every leaf: samples >= {int(least)}")
        if self.constraints:
            body.append(self.constraints.strip())
        if body:
            lines.append("subject to {\n    " + "\n    ".join(body) + "\n}")
        return "\n".join(lines) + "\n", dict(self.params or {})

    @property
    def _policy(self) -> str | None:
        """The program's missing-value policy: "learn", "drop" or None (a missing cell is an error)."""
        return self.missing if self.missing in ("learn", "drop") else None

    def _columns(self, X: Any, reset: bool) -> tuple[dict[str, np.ndarray], list[str]]:
        """The columns of X by name (numbers as float, text and categories as objects),
        and the text columns whose every value is a number written as text. An object
        column of numbers is numeric, as ``check_array`` makes it."""
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
            if not hasattr(X, "dtype") and not hasattr(X, "toarray") and not hasattr(X, "__array__"):
                X = np.asarray(X, dtype=object)  # rows of mixed cells (a list): numbers stay numbers
            arr = np.asarray(X) if not hasattr(X, "toarray") else X
            numeric = getattr(arr, "dtype", None) is not None and arr.dtype.kind not in "OUS"
            finite: bool | str = (True if self._policy is None else "allow-nan") if numeric else False
            with _input_errors():
                X = validate_data(self, X, reset=reset, dtype="numeric" if numeric else None,
                                  ensure_all_finite=finite, ensure_min_samples=1)
            names = self._names(X.shape[1])
            out = {name: (_numbers(X[:, j], name) if numeric else _object_column(X[:, j].astype(object), name))
                   for j, name in enumerate(names)}
        self._n_rows = X.shape[0]
        as_text = [name for name, values in out.items() if values.dtype.kind == "O" and _numbers_as_text(values)]
        for name, values in out.items():
            if values.dtype.kind == "f" and np.isinf(values).any():
                row = int(np.flatnonzero(np.isinf(values))[0])
                raise OdtInputError(f"X: column '{name}', row {row + 1}: infinite value")
        if self._policy is not None:  # a missing text or category is the category named MISSING
            for name, values in out.items():
                if values.dtype.kind == "O":
                    gone = np.fromiter((_is_missing(v) for v in values), bool, count=len(values))
                    if gone.any():
                        values = values.copy()
                        values[gone] = MISSING
                        out[name] = values
        return out, as_text

    def _names(self, n: int) -> list[str]:
        names = getattr(self, "feature_names_in_", None)
        return [str(c) for c in names] if names is not None else [f"x{j}" for j in range(n)]

    def _binarised(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The binarised rows of X, and which of them hold a category no training row had
        (all False unless ``unknown="majority"``: with ``"error"`` such a row is refused
        here, as ``Tree.predict`` refuses it)."""
        self._validate_params()
        columns, _ = self._columns(X, reset=False)
        try:
            table = table_from_python(columns, name="X", missing=self._policy is not None)
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
            raise OdtInputError([dataclasses.replace(d, hint=_UNKNOWN_HINT if d.hint and "--unknown" in d.hint else
                                                     _NO_DIRECTION if "missing or non-finite" in d.message else d.hint)
                                 for d in exc.diagnostics]) from None


def _with_picture(est: Any, bundle: dict[str, str]) -> dict[str, str]:
    """A fitted estimator's notebook bundle: its picture (``_repr_svg_``) and the solve's
    status instead of scikit-learn's estimator diagram (``ODTClassifier``, ``ODTRegressor``)."""
    svg = est._repr_svg_()
    if svg is not None:
        bundle["image/svg+xml"] = svg
        bundle["text/html"] = (f"<div><pre>{html.escape(repr(est))}</pre>"
                               f"<p>status <b>{est.status_}</b>, objective {est.objective_}, "
                               f"gap {'-' if est.gap_ is None else f'{est.gap_:.2%}'}, "
                               f"verified {'yes' if est.verified_ else 'NO'}</p>{svg}</div>")
    return bundle


def __getattr__(name: str) -> Any:
    """``ODTRegressor`` (issue 26) lives in ``odt.sklearn_regressor``, which builds on this
    module's column handling; it is offered here too, loaded on first use (by name, so the
    dependency stays one way at import time: this module never needs the regressor)."""
    if name in ("ODTRegressor", "SKIPPED_REGRESSOR_CHECKS"):
        import importlib

        return getattr(importlib.import_module("odt.sklearn_regressor"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def export_text(model: Any, **kwargs: Any) -> str:
    """The rules of a fitted ``ODTClassifier`` as ``sklearn.tree.export_text`` writes a
    tree's, with its arguments (``feature_names``, ``class_names``, ``max_depth``,
    ``spacing``, ``decimals``, ``show_weights``); see ``odt.sklearn_tree.export_text``."""
    from odt.sklearn_tree import export_text as export

    return export(model, **kwargs)


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
        values = _object_column(col.astype(object).to_numpy(), name)
    else:
        raise OdtInputError(f"column '{name}' has dtype {col.dtype}, which odt does not take "
                            "(numbers, bool, category and text do)")
    if values.dtype.kind == "O":  # pandas' missing markers (NaN, None, pd.NA, NaT) as None
        missing = col.isna().to_numpy()
        if missing.any():
            values = values.copy()
            values[missing] = None
    return values


def _is_missing(v: Any) -> bool:
    """A missing cell: None, NaN, or pandas' NA / NaT."""
    return v is None or (isinstance(v, float) and v != v) or type(v).__name__ in ("NAType", "NaTType")


def _object_column(values: np.ndarray, name: str) -> np.ndarray:
    """An object column as float when every present cell is a number (missing cells NaN),
    as ``check_array`` converts object arrays of numbers; else as it is (text)."""
    present = [v for v in values if not _is_missing(v)]
    if not present or not all(isinstance(v, (numbers.Real, np.bool_)) for v in present):
        return values
    return np.array([np.nan if _is_missing(v) else float(v) for v in values], dtype=float)


def _numbers_as_text(values: np.ndarray) -> bool:
    """Every present cell is text that reads as a finite number (``"0.2"``)."""
    present = [v for v in values if not _is_missing(v)]
    if not present or not all(isinstance(v, str) for v in present):
        return False
    try:
        return all(math.isfinite(float(v)) for v in set(present))
    except ValueError:
        return False


def _relabelled(clf: Tree | Diagram, index: list[int], classes: tuple[Any, ...]) -> Tree | Diagram:
    """``clf`` (whose class ``k`` is class ``index[k]`` of ``classes``) with ``classes``
    as its classes: the same predictions, every class of y kept."""
    seen = dataclasses.replace(clf.seen, majority=None if clf.seen.majority is None else index[clf.seen.majority],
                               target=None)  # the target column is y, not a column of X
    if len(index) == len(classes) and index == list(range(len(classes))):
        return dataclasses.replace(clf, classes=classes, seen=seen)
    if isinstance(clf, Tree):
        def node(n: TreeNode) -> TreeNode:
            return Leaf(index[n.label]) if isinstance(n, Leaf) else Split(n.feature, node(n.if_true), node(n.if_false))

        return dataclasses.replace(clf, classes=classes, root=node(clf.root), seen=seen)

    def ref(r: int) -> int:
        return leaf_ref(index[leaf_class(r)]) if r < 0 else r

    nodes = tuple(dataclasses.replace(n, if_true=ref(n.if_true), if_false=ref(n.if_false)) for n in clf.nodes)
    return dataclasses.replace(clf, classes=classes, nodes=nodes, root=ref(clf.root), seen=seen)


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
    is ``ODTClassifier(missing="drop")`` (or ``"learn"``) here; ``categorical x`` is a
    category or text column of X."""
    if hint is not None and "missing" in hint:
        return "pass ODTClassifier(missing='learn') (each split learns where a missing value goes) or missing='drop'"
    if hint is not None and "categorical" in hint:
        return "give the column as text or as a pandas 'category' column to make its values categories"
    return hint
