"""The best BDD over one feature subset: its truth table and its ordering, for
objectives and limits that involve the BDD's size.

Input: the weight of each class in each of the 2^h cells of a subset S (cells indexed
with S's first feature as the most significant bit, Hu's rel of eq. 4), the bias that
fills the cells no row reaches, and a key function (level values, or None when a limit
is violated). Output: the labelling and ordering of S with the least key.

The size of a table under an ordering is the decision-node count of the reduced ordered
BDD that odt decodes: the unreached cells filled by the bias (``fill_unreached``, Hu
Sec. 3), then GenBDD (Hu, appendix Algorithm 1) — the same functions the solver
backends decode with, so a size claimed here is the size the evaluator measures.
Labellings are enumerated in nondecreasing order of errors (a best-first walk over
per-cell class choices, Lawler's k-best scheme), so the walk stops as soon as the errors
alone bound the key above the best one; every ordering of S (h! of them) is tried.
"""
from __future__ import annotations

import heapq
from itertools import permutations
from typing import Callable, Iterator, Sequence

import numpy as np

from odt.compiler.classifiers.bdd_build import fill_unreached, gen_bdd

Key = tuple[float, ...]


def permute_cells(W: np.ndarray, order: Sequence[int]) -> np.ndarray:
    """Cell weights (2^h, C) re-indexed so that level i tests subset feature order[i].

    >>> permute_cells(np.arange(4).reshape(4, 1), (1, 0))[:, 0].tolist()
    [0, 2, 1, 3]
    """
    h = len(order)
    C = W.shape[1]
    return W.reshape((2,) * h + (C,)).transpose(tuple(order) + (h,)).reshape(1 << h, C)


_INDEX: dict[tuple[int, ...], list[int]] = {}


def _order_index(order: Sequence[int]) -> list[int]:
    """Cell j of a table permuted by ``order`` is cell ``index[j]`` of the original."""
    key = tuple(order)
    index = _INDEX.get(key)
    if index is None:
        h = len(key)
        index = _INDEX[key] = np.arange(1 << h).reshape((2,) * h).transpose(key).reshape(-1).tolist()
    return index


def permute_table(t: Sequence[int], order: Sequence[int]) -> list[int]:
    """The truth table re-indexed like ``permute_cells``.

    >>> permute_table([0, 1, 2, 3], (1, 0))
    [0, 2, 1, 3]
    """
    return [t[i] for i in _order_index(order)]


def smallest_order(W: np.ndarray, table: Sequence[int], bias: str) -> tuple[tuple[int, ...], list[int], int]:
    """Among the h! orderings of one subset with a fixed truth ``table`` (its errors do not
    depend on the order), the one with the fewest decoded decision nodes (first of equals):
    (order, table in that order, nodes).

    >>> smallest_order(np.ones((4, 2)), [0, 0, 1, 1], "C")  # only the first feature matters
    ((0, 1), [0, 0, 1, 1], 1)
    """
    h = W.shape[0].bit_length() - 1
    reached = W.sum(axis=1) > 0
    # unreached cells filled the same way under every order: fill once, permute the result
    fixed = bias == "S" or bool(reached.all()) or not reached.any()
    best: tuple[tuple[int, ...], list[int], int] | None = None
    for order in permutations(range(h)):
        t = permute_table(table, order)
        size = decoded_size(t, W, "S") if fixed else decoded_size(t, permute_cells(W, order), bias)
        if best is None or size < best[2]:
            best = (order, t, size)
    assert best is not None
    return best


_SIZES: dict[tuple[int, ...], int] = {}


def decoded_size(table: Sequence[int], counts: np.ndarray, bias: str) -> int:
    """Decision nodes of the reduced ordered BDD odt decodes from ``table`` (the
    ``Diagram.n_nodes`` of ``bdd_build.diagram_from_table``).

    >>> decoded_size([0, 0, 0, 1, 0, 1, 1, 1], np.ones((8, 2)), "C")  # majority of three
    4
    """
    filled = tuple(fill_unreached(list(table), counts, bias))
    size = _SIZES.get(filled)
    if size is None:
        if len(_SIZES) > 200_000:
            _SIZES.clear()
        size = _SIZES[filled] = len(gen_bdd(filled)[0])
    return size


def labellings(W: np.ndarray, free_unreached: bool) -> Iterator[tuple[float, tuple[int, ...]]]:
    """Every truth table over the cells of W as (extra errors over the cell majorities,
    table), in nondecreasing extra errors. Unreached cells (no weight) take every class
    when ``free_unreached`` (their value can matter to the bias), else class 0.

    >>> [e for e, _ in labellings(np.array([[3., 1.], [0., 2.]]), False)]
    [0.0, 2.0, 2.0, 4.0]
    """
    reached = W.sum(axis=1) > 0
    C = W.shape[1]
    options: list[list[tuple[float, int]]] = []
    for j in range(W.shape[0]):
        if not reached[j]:
            options.append([(0.0, c) for c in range(C)] if free_unreached else [(0.0, 0)])
            continue
        top = W[j].max()
        options.append(sorted(((float(top - W[j, c]), c) for c in range(C)), key=lambda o: (o[0], o[1])))
    start = tuple(0 for _ in options)
    heap = [(0.0, start)]
    seen = {start}
    while heap:
        extra, state = heapq.heappop(heap)
        yield extra, tuple(options[j][s][1] for j, s in enumerate(state))
        for j, s in enumerate(state):
            if s + 1 < len(options[j]):
                nxt = state[:j] + (s + 1,) + state[j + 1:]
                if nxt not in seen:
                    seen.add(nxt)
                    heapq.heappush(heap, (extra - options[j][s][0] + options[j][s + 1][0], nxt))


def best_on_subset(W: np.ndarray, bias: str, key: Callable[[float, int], Key | None],
                   key_bound: Callable[[float], Key], best: Key | None,
                   should_stop: Callable[[], bool] = lambda: False
                   ) -> tuple[Key, tuple[int, ...], list[int]] | None:
    """The least ``key(errors, size)`` over labellings and orderings of one subset, if it
    is below ``best``: (key, order, table in that order); None otherwise.

    ``key_bound(errors)`` must be a lower bound (lexicographic) of ``key`` for every
    table with at least those errors: the walk stops when it reaches ``best``."""
    h = W.shape[0].bit_length() - 1
    base = float((W.sum(axis=1) - W.max(axis=1)).sum())
    orders = [tuple(o) for o in permutations(range(h))]
    counts = {o: permute_cells(W, o) for o in orders}
    found: tuple[Key, tuple[int, ...], list[int]] | None = None
    for extra, table in labellings(W, bias != "C"):
        errors = base + extra
        if best is not None and key_bound(errors) >= best:
            break
        if should_stop():
            break
        for o in orders:
            t = permute_table(table, o)
            k = key(errors, decoded_size(t, counts[o], bias))
            if k is not None and (best is None or k < best):
                best, found = k, (k, o, t)
    return found
