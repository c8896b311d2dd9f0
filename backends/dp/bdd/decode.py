"""A ``BddResult`` as odt's classifier: the reduced ordered BDD (``Diagram(kind="bdd")``)
that ``bdd_build.diagram_from_table`` makes from the truth table, its ordering and the
bias — the decoder of the solver backends (Hu, appendix Algorithm 1), so every backend
hands back the same kind of object and the evaluator re-checks it the same way."""
from __future__ import annotations

import numpy as np

from odt.compiler.classifiers import Diagram
from odt.compiler.classifiers.bdd_build import diagram_from_table
from odt.compiler.search_bdd import BddSearch

from .counts import cell_weights, merge_rows
from .search import BddResult


def to_diagram(result: BddResult, problem: BddSearch) -> Diagram:
    """The decoded BDD of ``result``; a result with no levels is the constant classifier."""
    rows = merge_rows(problem.X, problem.y, problem.weights, problem.n_classes)
    counts = cell_weights(rows, result.levels) if result.levels else np.ones((1, problem.n_classes))
    return diagram_from_table(list(result.table), counts, [problem.features[f] for f in result.levels],
                              problem.classes, problem.input_columns, problem.bias)
