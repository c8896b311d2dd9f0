"""A confusion objective (issue 26) into dp's search IR: ``TreeSearch`` -> ``TreeSearch``.

Input: the search ``lower_search`` built for a program whose objective has a
misclassification cost (``misclassification_cost(T)``, ``balanced_accuracy``, tp/fp/tn/fn
or predicted(c) of every row) or ``maximize f1``, and the program's objective levels.
Output: the same search with the objective dp can search:

* each row ``a`` of the level's matrix ``M`` is shifted by its least entry (a constant:
  ``sum_a N_a * min_k M[a][k]``), so every row has a zero, at label ``e_a``;
* when every row then costs one amount ``d_a > 0`` for every label but ``e_a`` (always for
  two classes; balanced accuracy and errors-like matrices for more), the level is
  misclassification of the rows relabelled ``e_y`` and weighted ``w * d_y``: the engines'
  compiled kernels run unchanged, on binary columns and on raw thresholds (ConTree). The
  weights are scaled to integers where they fit (exact), and the level's ``errors``
  coefficient undoes the scale, so the engines report the objective itself;
* otherwise the shifted matrix is kept for the generic task (``CostMatrix``);
* ``maximize f1`` is marked for the Pareto-front engine, which keeps (fp, fn) fronts.

Invariant: only programs the support table lets dp take arrive here (row ``Ocmx``: no
constraint reads the rows' classes; later levels count nodes and leaves only).
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np

from .checked import LinearForm
from .confusion import is_cost_level, label_matrix
from .search import Level, TreeSearch
from .search_confusion import Confusion, class_sums, integral, reweigh

def needs(form: LinearForm) -> bool:
    """The level is a confusion objective (a cost matrix or f1)."""
    return is_cost_level(form) or any(q.kind == "f1" for q, _ in form.terms)


def apply(search: TreeSearch, forms: tuple[LinearForm, ...], nodes_level) -> TreeSearch:
    """``search`` with its first level read as a confusion objective (see the module);
    ``nodes_level(form)`` is the ``Level`` of a form over nodes and leaves only."""
    first = forms[0]
    y, w = search.y, search.weights
    f1 = [q for q, _ in first.terms if q.kind == "f1"]
    if f1:
        pos = 1 if f1[0].klass is None else f1[0].klass
        return dataclasses.replace(search, levels=(Level(errors=Fraction(1)),) + search.levels[1:],
                                   confusion=Confusion(y, w, f1=True, positive=pos, note="F1"))
    K = search.n_classes
    matrix, rest = label_matrix(first, K)
    assert matrix is not None
    # whole costs (the common case) as ints: the same arithmetic, without Fraction's overhead
    M: tuple[tuple[Fraction | int, ...], ...] = matrix if any(v.denominator != 1 for r in matrix for v in r) \
        else tuple(tuple(int(v) for v in r) for r in matrix)
    base = nodes_level(rest)
    whole = integral(w)  # read once for the sums and the reweighing
    N = class_sums(y, w, K, whole)
    least = [min(row) for row in M]
    shifted = tuple(tuple(v - least[a] for v in M[a]) for a in range(K))
    constant = base.constant + sum(least[a] * N[a] for a in range(K))  # ints for whole costs and weights
    label = [a if shifted[a][a] == 0 else shifted[a].index(0) for a in range(K)]
    amount = []
    for a in range(K):
        others = {shifted[a][k] for k in range(K) if k != label[a]}
        amount.append(others.pop() if len(others) == 1 else None)
    weighted = all(N[a] == 0 or (d is not None and d > 0) for a, d in enumerate(amount))
    if not weighted:
        level = Level(errors=Fraction(1), nodes=base.nodes, depth=base.depth, constant=constant)
        generic = tuple(tuple(Fraction(v) for v in r) for r in shifted)
        return dataclasses.replace(search, levels=(level,) + search.levels[1:],
                                   confusion=Confusion(y, w, matrix=generic, note="cost matrix (generic task)"))
    d = [v if v is not None else 0 for v in amount]
    new_y, new_w, factor = reweigh(search, d, label, y, w, whole)
    level = Level(errors=factor, nodes=base.nodes, depth=base.depth, constant=constant)
    note = "cost matrix as reweighted misclassification" + (" (relabelled)" if label != list(range(K)) else "")
    return dataclasses.replace(search, y=new_y, weights=new_w, levels=(level,) + search.levels[1:],
                               confusion=Confusion(y, w, note=note))

