"""A brute-force enumerator of every decision diagram of Florio's family for small layer
widths (test oracle for ``model diagram(widths = [...])``).

The family (Florio et al., AAAI 2023, as ``compiler/skeletons/diagram_flow.py`` encodes
it): slots are numbered layer by layer, slot 0 is the root, alone in layer 0. Each slot
either tests a feature, sending the rows where it holds to one target and the others to a
*different* target (Florio's (8)), or is a pass-through that sends every row to one
target (Florio's constant literal TOP). Targets are the slots of the next layer and the
class terminals (long arcs); the slots of the last layer go to terminals only, and may
not pass through, except the root of a one-layer skeleton (a pass-through root into a
class is the one-class diagram, Florio's root leaf). No arc skips a layer.

``nodes`` is the number of slots that send training rows both ways, where the training
rows are those of positive weight (``make_buckets`` drops the others): a pass-through
slot, or a test whose rows all take one side, is no decision node. There is no leaf count.

Enumeration: every choice of every slot (the cartesian product of the slots' options),
routed row by row with numpy, slot by slot in topological order. Sizes: with 3 features
and 3 classes, 21,060 diagrams for [1, 2] and 28,800 for [1, 1, 1]; [1, 2, 2] is
enumerated on 2 features and 2 classes (351,232 diagrams).

Description of one diagram: a tuple with one option per slot (slot 0 first), either
``("test", f, t, e)`` (rows with feature f go to t, the others to e) or ``("pass", t)``;
a target is a slot index (int) or ``("class", c)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np


@dataclass(frozen=True)
class DiagramTable:
    """Every diagram of some widths: predictions (D, n rows), nodes (D,), and
    ``describe(i)``, the description of diagram ``i``."""

    preds: np.ndarray
    nodes: np.ndarray
    describe: Callable[[int], tuple]

    def __len__(self) -> int:
        return len(self.nodes)


@dataclass(frozen=True)
class DiagramOptimum:
    cost: Fraction
    errors: int
    nodes: int
    diagram: tuple
    n_diagrams: int


def _layers(widths: Sequence[int]) -> list[int]:
    return [l for l, w in enumerate(widths) for _ in range(w)]


def slot_options(s: int, widths: Sequence[int], n_features: int, classes: Sequence[int]) -> list[tuple]:
    """The options of slot ``s``: every test (f, t, e) with t != e, then every pass-through
    (above the last layer, and at the root in any case)."""
    layer = _layers(widths)
    last = len(widths) - 1
    targets = [t for t in range(len(layer)) if layer[t] == layer[s] + 1] + [("class", int(c)) for c in classes]
    tests = [("test", f, t, e) for f in range(n_features) for t in targets for e in targets if t != e]
    passes = [("pass", t) for t in targets] if s == 0 or layer[s] < last else []
    return tests + passes


def enumerate_diagrams(X: np.ndarray, classes: Sequence[int], widths: Sequence[int],
                       w: Sequence[int] | None = None) -> DiagramTable:
    """Every diagram of the widths, routed at once; rows of weight 0 (``w``) count for no node."""
    X = np.asarray(X, dtype=bool)
    n, nf = X.shape
    classes = [int(c) for c in classes]
    assert widths[0] == 1
    n_slots = len(_layers(widths))
    live = np.ones(n, bool) if w is None else np.asarray(w) > 0
    options = [slot_options(s, widths, nf, classes) for s in range(n_slots)]

    def code(t) -> int:  # a slot index, or n_slots + class position
        return t if isinstance(t, int) else n_slots + classes.index(t[1])

    Xc = np.hstack([X, np.ones((n, 1), bool)])  # column nf: always true (a pass-through's "test")
    feat = [np.array([o[1] if o[0] == "test" else nf for o in opts]) for opts in options]
    true = [np.array([code(o[2] if o[0] == "test" else o[1]) for o in opts]) for opts in options]
    false = [np.array([code(o[3] if o[0] == "test" else o[1]) for o in opts]) for opts in options]
    shape = [len(o) for o in options]
    grid = np.indices(shape).reshape(n_slots, -1)
    at = np.zeros((grid.shape[1], n), dtype=np.int64)
    nodes = np.zeros(grid.shape[1], dtype=np.int64)
    for s in range(n_slots):
        opt = grid[s]
        here = at == s
        x = Xc[:, feat[s][opt]].T  # (D, n): the rows the slot's test holds for
        at = np.where(here, np.where(x, true[s][opt][:, None], false[s][opt][:, None]), at)
        nodes += ((here & x & live).any(axis=1) & (here & ~x & live).any(axis=1)).astype(np.int64)
    assert (at >= n_slots).all()
    preds = np.asarray(classes, dtype=np.int64)[at - n_slots]

    def describe(i: int) -> tuple:
        return tuple(options[s][k] for s, k in enumerate(np.unravel_index(i, shape)))

    return DiagramTable(preds, nodes, describe)


def count_diagrams(widths: Sequence[int], n_features: int, n_classes: int) -> int:
    """The size of the family: per slot, tests f * m * (m - 1) plus m pass-throughs where
    allowed (m targets), multiplied over the slots."""
    total = 1
    for s in range(sum(widths)):
        total *= len(slot_options(s, widths, n_features, range(n_classes)))
    return total


def brute_force_diagram(X: np.ndarray, y: Sequence[int], widths: Sequence[int], *, classes: Sequence[int] | None = None,
                        w: Sequence[int] | None = None, alpha: Fraction | int | str = 0,
                        table: DiagramTable | None = None) -> DiagramOptimum:
    """min over every diagram of the widths of ``errors + alpha * nodes``, exactly
    (``alpha`` as a Fraction; integer weights ``w``)."""
    y = np.asarray(y, dtype=np.int64)
    if classes is None:
        classes = sorted(set(int(v) for v in y))
    weights = np.ones(len(y), np.int64) if w is None else np.asarray(w, dtype=np.int64)
    alpha = Fraction(alpha)
    if table is None:
        table = enumerate_diagrams(X, classes, widths, w)
    errs = ((table.preds != y[None, :]) * weights[None, :]).sum(axis=1)
    scaled = errs * alpha.denominator + table.nodes * alpha.numerator
    i = int(np.argmin(scaled))
    return DiagramOptimum(Fraction(int(scaled[i]), alpha.denominator), int(errs[i]), int(table.nodes[i]),
                          table.describe(i), len(table))


def walk_description(desc: tuple, X: np.ndarray, w: Sequence[int] | None = None) -> tuple[np.ndarray, int]:
    """Predictions and node count of a description, by walking it row by row (the naive
    reference): a node is a slot some positive-weight row leaves by each side."""
    X = np.asarray(X, dtype=bool)
    w = [1] * len(X) if w is None else w
    sides: dict[int, set[bool]] = {}
    out = []
    for x, wi in zip(X, w):
        ref = 0
        while isinstance(ref, int):
            opt = desc[ref]
            if opt[0] == "pass":
                ref = opt[1]
                continue
            _, f, t, e = opt
            if wi > 0:
                sides.setdefault(ref, set()).add(bool(x[f]))
            ref = t if x[f] else e
        out.append(ref[1])
    return np.array(out, dtype=np.int64), sum(len(s) == 2 for s in sides.values())


def to_diagram(desc: tuple, classes: Sequence[int], widths: Sequence[int]):
    """The ``compiler.diagram.Diagram`` of a description (features are column indices):
    a pass-through slot is replaced by its target in every reference to it (an arc that
    skips a layer), and stays as an unreachable placeholder node."""
    from odt.compiler.data import Feature
    from odt.compiler.classifiers.diagram import Diagram, DNode, leaf_ref

    classes = [int(c) for c in classes]
    layer = _layers(widths)
    n_features = 1 + max([o[1] for o in desc if o[0] == "test"], default=0)
    feats = tuple(Feature(f"f{j}", "binary") for j in range(n_features))

    def ref(t) -> int:
        while isinstance(t, int) and desc[t][0] == "pass":
            t = desc[t][1]
        return t if isinstance(t, int) else leaf_ref(classes.index(t[1]))

    nodes = tuple(DNode(o[1], ref(o[2]), ref(o[3]), layer[s]) if o[0] == "test"
                  else DNode(0, leaf_ref(0), leaf_ref(0), layer[s]) for s, o in enumerate(desc))
    root = ref(0)
    return Diagram(feats, tuple(classes), nodes if root >= 0 else (), root)
