"""Shared test helpers: a brute-force enumerator of every decision tree of bounded depth.

Used as an oracle for odt's optimality claims on tiny binary datasets. Two independent
implementations are provided and cross-checked in tests/compiler/test_bruteforce.py:

* ``iter_trees`` / ``predict_tree``: a naive recursive generator of nested tuples, the
  obviously-correct reference (slow: pure Python);
* ``TreeTable`` / ``enumerate_trees``: the same set of trees, in the same order, enumerated
  with numpy so that every tree's prediction vector is materialised at once (fast enough
  to run on hundreds of hypothesis examples).

Tree shapes: ``("leaf", c)`` or ``("split", f, if_true, if_false)`` where rows with
feature ``f`` equal to 1 go to ``if_true`` (odt's convention). A tree of depth <= D is a
leaf, or a split whose two children are trees of depth <= D - 1; every leaf may predict
any class. Splits that send no row to one side are enumerated too (they never beat the
tree without them, so optima are unaffected).

Also ``process_alive``, for the tests that count a solve's worker processes.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator, Sequence

import numpy as np
from hypothesis import strategies as st

TreeT = tuple


# ---------------------------------------------------------------------------- reference (naive)
def iter_trees(n_features: int, classes: Sequence[int], depth: int) -> Iterator[TreeT]:
    """Every tree of depth <= ``depth``, leaves first, then splits by feature, true, false."""
    for c in classes:
        yield ("leaf", c)
    if depth <= 0:
        return
    subtrees = list(iter_trees(n_features, classes, depth - 1))
    for f in range(n_features):
        for t in subtrees:
            for e in subtrees:
                yield ("split", f, t, e)


def count_trees(n_features: int, n_classes: int, depth: int) -> int:
    """T(0) = k; T(d) = k + f * T(d-1)^2."""
    t = n_classes
    for _ in range(depth):
        t = n_classes + n_features * t * t
    return t


def predict_tree(tree: TreeT, x: Sequence[int]) -> int:
    while tree[0] == "split":
        tree = tree[2] if x[tree[1]] else tree[3]
    return tree[1]


def tree_leaves(tree: TreeT) -> int:
    return 1 if tree[0] == "leaf" else tree_leaves(tree[2]) + tree_leaves(tree[3])


def tree_depth(tree: TreeT) -> int:
    return 0 if tree[0] == "leaf" else 1 + max(tree_depth(tree[2]), tree_depth(tree[3]))


def tree_errors(tree: TreeT, X: np.ndarray, y: Sequence[int], w: Sequence[int] | None = None) -> int:
    w = [1] * len(y) if w is None else w
    return sum(int(wi) for x, yi, wi in zip(X, y, w) if predict_tree(tree, x) != yi)


# ---------------------------------------------------------------------------- vectorised
@dataclass(frozen=True)
class TreeTable:
    """All trees of depth <= ``depth``: row ``i`` of ``preds`` is tree ``i``'s prediction
    on every data row; ``leaves[i]`` its number of leaves (decision nodes = leaves - 1)."""

    depth: int
    n_features: int
    classes: tuple[int, ...]
    preds: np.ndarray  # (T, n_rows) class labels
    leaves: np.ndarray  # (T,)
    sub: "TreeTable | None"  # the table of depth - 1 (children)

    def __len__(self) -> int:
        return len(self.leaves)

    def describe(self, i: int) -> TreeT:
        """The nested-tuple tree with index ``i`` (same order as ``iter_trees``)."""
        k = len(self.classes)
        if i < k:
            return ("leaf", self.classes[i])
        assert self.sub is not None
        s = len(self.sub)
        f, rest = divmod(i - k, s * s)
        a, b = divmod(rest, s)
        return ("split", f, self.sub.describe(a), self.sub.describe(b))

    def errors(self, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """Weighted misclassifications of every tree (integer weights)."""
        wrong = self.preds != np.asarray(y)[None, :]
        if w is None:
            return wrong.sum(axis=1).astype(np.int64)
        return (wrong * np.asarray(w, dtype=np.int64)[None, :]).sum(axis=1)


def enumerate_trees(X: np.ndarray, classes: Sequence[int], depth: int) -> TreeTable:
    X = np.asarray(X, dtype=bool)
    n, nf = X.shape
    classes = tuple(int(c) for c in classes)
    k = len(classes)
    leaf_preds = np.repeat(np.asarray(classes, dtype=np.int64)[:, None], n, axis=1)
    leaf_sizes = np.ones(k, dtype=np.int64)
    if depth <= 0:
        return TreeTable(0, nf, classes, leaf_preds, leaf_sizes, None)
    sub = enumerate_trees(X, classes, depth - 1)
    s = len(sub)
    preds = [leaf_preds]
    sizes = [leaf_sizes]
    for f in range(nf):
        go = X[:, f][None, None, :]
        preds.append(np.where(go, sub.preds[:, None, :], sub.preds[None, :, :]).reshape(s * s, n))
        sizes.append((sub.leaves[:, None] + sub.leaves[None, :]).reshape(s * s))
    return TreeTable(depth, nf, classes, np.concatenate(preds), np.concatenate(sizes), sub)


@dataclass(frozen=True)
class Optimum:
    cost: Fraction
    errors: int
    leaves: int
    tree: TreeT
    n_trees: int  # how many trees were compared (after the size filter)


def brute_force_optimum(X: np.ndarray, y: Sequence[int], depth: int, *, classes: Sequence[int] | None = None,
                        w: Sequence[int] | None = None, alpha: Fraction | int | str = 0,
                        max_leaves: int | None = None, table: TreeTable | None = None) -> Optimum:
    """min over every tree of depth <= ``depth`` (with at most ``max_leaves`` leaves) of
    ``errors + alpha * nodes``, computed exactly (``alpha`` as a Fraction)."""
    y = np.asarray(y, dtype=np.int64)
    if classes is None:
        classes = sorted(set(int(v) for v in y))
    if table is None:
        table = enumerate_trees(X, classes, depth)
    assert table.depth == depth
    alpha = Fraction(alpha)
    errs = table.errors(y, w)
    nodes = table.leaves - 1
    scaled = errs * alpha.denominator + nodes * alpha.numerator  # exact integers
    if max_leaves is not None:
        allowed = table.leaves <= max_leaves
        scaled = np.where(allowed, scaled, np.iinfo(np.int64).max)
        n_allowed = int(allowed.sum())
    else:
        n_allowed = len(table)
    i = int(np.argmin(scaled))
    return Optimum(Fraction(int(scaled[i]), alpha.denominator), int(errs[i]), int(table.leaves[i]),
                   table.describe(i), n_allowed)


# ---------------------------------------------------------------------------- random tiny cases
class Case:
    """A tiny dataset: X (n x f, 0/1), labels y, optional integer weights w."""

    def __init__(self, X: np.ndarray, y: np.ndarray, w: np.ndarray | None):
        self.X, self.y, self.w = X, y, w

    @property
    def classes(self) -> list[int]:
        return sorted(set(int(v) for v in self.y))

    def data(self) -> dict:
        d = {f"f{j}": [int(v) for v in self.X[:, j]] for j in range(self.X.shape[1])}
        if self.w is not None:
            d["w"] = [int(v) for v in self.w]
        d["class"] = [int(v) for v in self.y]
        return d

    def header(self) -> str:
        return "data { target class weight w }\n" if self.w is not None else "data { target class }\n"

    def __repr__(self) -> str:
        return f"Case(data={self.data()!r})"


@st.composite
def cases(draw, zero_weights: bool = True) -> Case:
    """Random tiny cases; ``zero_weights`` allows rows of weight 0 (never all of them)."""
    n_features = draw(st.integers(1, 4))
    n_classes = draw(st.sampled_from([2, 3]))
    n_rows = draw(st.integers(2, 12))
    # a small pool of distinct feature vectors, rows drawn from it: duplicates (often with
    # conflicting labels) are common, and a pool of one vector leaves no useful feature.
    pool_size = draw(st.integers(1, min(n_rows, 1 << n_features)))
    pool = draw(st.lists(st.lists(st.integers(0, 1), min_size=n_features, max_size=n_features),
                         min_size=pool_size, max_size=pool_size, unique_by=tuple))
    rows = list(range(min(2, pool_size))) + draw(st.lists(st.integers(0, pool_size - 1),
                                                          min_size=n_rows - min(2, pool_size),
                                                          max_size=n_rows - min(2, pool_size)))
    rows = draw(st.permutations(rows))
    y = draw(st.lists(st.integers(0, n_classes - 1), min_size=n_rows, max_size=n_rows))
    if len(set(y)) < 2:  # odt rightly refuses a single-class target; force a second class
        y[draw(st.integers(0, n_rows - 1))] = (y[0] + 1) % n_classes
    weighted = draw(st.booleans())
    w = None
    if weighted:
        values = [0, 1, 1, 2, 3, 4] if zero_weights else [1, 1, 2, 3, 4]
        w = np.array(draw(st.lists(st.sampled_from(values), min_size=n_rows, max_size=n_rows)),
                     dtype=np.int64)
        if not w.any():  # odt rightly refuses weights that are all 0 (issue 18); one row counts
            w[draw(st.integers(0, n_rows - 1))] = 1
    X = np.array([pool[r] for r in rows], dtype=np.int64).reshape(n_rows, n_features)
    return Case(X, np.array(y, dtype=np.int64), w)




# ---------------------------------------------------------------------------- constrained brute force
@dataclass(frozen=True)
class TreeFacts:
    """What constraints read from one tree on the training rows (rows of positive weight):
    ``leaf_rows`` / ``node_rows`` count rows per leaf / decision node (pre-order),
    ``paths[i]`` the features tested on the way to leaf i (root first), ``leaf_of[r]`` the
    leaf of row r (-1 for rows of weight 0)."""

    tree: TreeT
    pred: tuple[int, ...]
    leaf_of: tuple[int, ...]
    leaf_rows: tuple[int, ...]
    node_rows: tuple[int, ...]
    paths: tuple[tuple[int, ...], ...]

    @property
    def nodes(self) -> int:
        return len(self.node_rows)

    @property
    def leaves(self) -> int:
        return len(self.leaf_rows)

    @property
    def used(self) -> set[int]:
        return {f for p in self.paths for f in p}


def iter_split_trees(X: np.ndarray, rows: Sequence[int], classes: Sequence[int], depth: int) -> Iterator[TreeT]:
    """Every tree of depth <= ``depth`` whose splits each send some of ``rows`` both ways
    (the trees odt returns: a split with an empty side is no split), each exactly once.
    With no row at all, only leaves."""
    for c in classes:
        yield ("leaf", c)
    if depth <= 0:
        return
    for f in range(X.shape[1]):
        yes = [r for r in rows if X[r][f]]
        no = [r for r in rows if not X[r][f]]
        if not yes or not no:
            continue
        falses = list(iter_split_trees(X, no, classes, depth - 1))
        for t in iter_split_trees(X, yes, classes, depth - 1):
            for e in falses:
                yield ("split", f, t, e)


def tree_facts(tree: TreeT, X: np.ndarray, rows: Sequence[int]) -> TreeFacts:
    leaf_of = [-1] * X.shape[0]
    leaf_rows: list[int] = []
    node_rows: list[int] = []
    paths: list[tuple[int, ...]] = []

    def go(t: TreeT, here: list[int], above: tuple[int, ...]) -> None:
        if t[0] == "leaf":
            for r in here:
                leaf_of[r] = len(leaf_rows)
            leaf_rows.append(len(here))
            paths.append(above)
            return
        node_rows.append(len(here))
        go(t[2], [r for r in here if X[r][t[1]]], above + (t[1],))
        go(t[3], [r for r in here if not X[r][t[1]]], above + (t[1],))

    go(tree, list(rows), ())
    pred = tuple(predict_tree(tree, x) for x in X)
    return TreeFacts(tree, pred, tuple(leaf_of), tuple(leaf_rows), tuple(node_rows), tuple(paths))


def brute_force_constrained(X: np.ndarray, y: Sequence[int], depth: int, objective, feasible,
                            w: Sequence[int] | None = None,
                            classes: Sequence[int] | None = None) -> tuple[Fraction, TreeFacts] | None:
    """min of ``objective(facts)`` over the trees of ``iter_split_trees`` (routing only the
    rows of positive weight) with ``feasible(facts)``; None when no tree is feasible."""
    X = np.asarray(X)
    w = [1] * len(y) if w is None else list(w)
    rows = [r for r in range(len(y)) if w[r] > 0]
    classes = sorted(set(int(v) for v in y)) if classes is None else classes
    best: tuple[Fraction, TreeFacts] | None = None
    for tree in iter_split_trees(X, rows, classes, depth):
        facts = tree_facts(tree, X, rows)
        if not feasible(facts):
            continue
        cost = Fraction(objective(facts))
        if best is None or cost < best[0]:
            best = (cost, facts)
    return best


def binary_data(X: np.ndarray, y: Sequence[int], w: Sequence[int] | None = None) -> dict:
    """0/1 rows as a program's Python data: columns f0.. as ints, ``w`` when weighted, ``class``."""
    d: dict = {f"f{j}": [int(v) for v in X[:, j]] for j in range(X.shape[1])}
    if w is not None:
        d["w"] = w
    d["class"] = y
    return d


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    from pathlib import Path

    try:
        state = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                     if line.startswith("State:"))
    except (FileNotFoundError, ProcessLookupError, StopIteration):
        return False
    return "Z" not in state.split()[1]

