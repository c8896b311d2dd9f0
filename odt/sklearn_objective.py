"""The objective lines of ``ODTClassifier``'s default program (issue 26):
``objective="errors"`` (default), ``"balanced_accuracy"`` or ``"f1"``, and ``class_costs``
(a misclassification cost matrix) for cost-sensitive classification.

``class_costs`` is either a mapping ``{(actual, predicted): cost}`` over labels of y (an
unlisted misclassification costs 1, a correct prediction 0, as ``errors`` counts them) or
a square array-like indexed ``[actual][predicted]`` in ``classes_`` order (scikit-learn's
``confusion_matrix`` layout; pystreed's ``CostSpecifier`` matrix). The program solves on
class indices, so the table is written over indices.
"""
from __future__ import annotations

from collections import abc
from fractions import Fraction
from typing import Any

import numpy as np

from odt.compiler.errors import OdtInputError

OBJECTIVES = ("errors", "balanced_accuracy", "f1")


def _cost(x: Any, where: str) -> Fraction:
    try:
        value = Fraction(repr(float(x)))
    except (TypeError, ValueError, OverflowError):
        raise OdtInputError(f"class_costs{where} must be a finite number, got {x!r}") from None
    if value < 0:
        raise OdtInputError(f"class_costs{where} is negative ({x!r}); a misclassification cost is at least 0")
    return value


def cost_matrix(class_costs: Any, classes: np.ndarray) -> list[list[Fraction]]:
    """``class_costs`` as a matrix over class indices (see the module)."""
    K = len(classes)
    labels = classes.tolist()
    if isinstance(class_costs, abc.Mapping):
        M = [[Fraction(0) if a == p else Fraction(1) for p in range(K)] for a in range(K)]
        for key, value in class_costs.items():
            if not (isinstance(key, tuple) and len(key) == 2):
                raise OdtInputError(f"class_costs keys are (actual, predicted) pairs of labels, got {key!r}")
            missing = [k for k in key if k not in labels]
            if missing:
                raise OdtInputError(f"class_costs names the label {missing[0]!r}, which is not a class of y "
                                    f"({', '.join(map(repr, labels))})")
            M[labels.index(key[0])][labels.index(key[1])] = _cost(value, f"[{key!r}]")
        return M
    arr = np.asarray(class_costs, dtype=object)
    if arr.shape != (K, K):
        raise OdtInputError(f"class_costs must be a {K} x {K} matrix (rows: actual class, columns: predicted, in "
                            f"classes_ order) or a mapping {{(actual, predicted): cost}}; got shape {arr.shape}")
    return [[_cost(arr[a, p], f"[{a}][{p}]") for p in range(K)] for a in range(K)]


def objective_lines(objective: str, class_costs: Any, classes: np.ndarray, node_cost: Fraction | None,
                    total: Fraction, decimal) -> list[str]:
    """The program lines of the objective; ``node_cost`` (alpha * N, or None) per decision node
    in units of errors; ``total`` the training weight N (balanced accuracy is in [0, 1], so
    its node cost is alpha = node_cost / N)."""
    if class_costs is not None and objective != "errors":
        raise OdtInputError(f"class_costs weighs the errors; it does not combine with objective={objective!r}")
    nodes = f" + {decimal(node_cost)} * nodes" if node_cost else ""
    if objective == "f1":
        if node_cost:
            raise OdtInputError("objective='f1' takes no alpha: F1 is searched as the only objective level")
        return ["maximize f1"]
    if objective == "balanced_accuracy":
        return ["maximize balanced_accuracy" + (f" - {decimal(node_cost / total)} * nodes" if node_cost else "")]
    if class_costs is None:
        return ["minimize errors" + nodes]
    M = cost_matrix(class_costs, classes)
    entries = [f"{a} as {p}: {decimal(M[a][p])}" for a in range(len(M)) for p in range(len(M))]
    return [f"cost `__odt_costs__` = {{ {', '.join(entries)} }}", "minimize misclassification_cost(`__odt_costs__`)"
            + nodes]
