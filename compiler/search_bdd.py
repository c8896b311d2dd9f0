"""The search IR of an ordered BDD program: what the dp family's BDD engine reads.

An ordered BDD with H levels (Hu, Huguet & Siala, IJCAI 2022, Sec. 2) tests one feature
per level on every path, so the function it computes is a truth table over the H
features of its ordering (Hu's rel, eq. 4), and its training errors depend only on
*which* H features it uses. The engine therefore searches feature subsets; this module
holds the data it needs, as plain frozen data built by ``lower_search_bdd``: the 0/1
matrix of the kept features, classes and weights, the depth, the bias that fills the
cells no row reaches, the objective levels as combinations of errors and BDD nodes, and
the two hard limits the engine takes (``nodes <= K``, ``errors <= k``).

Nothing here knows an engine or a solver.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .data import Feature


@dataclass(frozen=True, slots=True)
class BddLevel:
    """One objective level, to minimise: ``errors * errors + nodes * nodes + constant``;
    ``nodes`` is the decision-node count of the decoded reduced BDD (``Diagram.n_nodes``)."""

    errors: Fraction = Fraction(1)
    nodes: Fraction = Fraction(0)
    constant: Fraction = Fraction(0)


@dataclass(frozen=True)
class BddSearch:
    """A fixed-depth ordered-BDD program for the dp engine.

    ``X[:, k]`` is dataset feature ``features[k]`` on the kept rows (weight > 0);
    features that split no row or repeat (or complement) another are left out, as in
    the BDD2 encoding: they change no truth table. ``levels`` is the objective, most
    important first; ``max_nodes`` and ``max_errors`` are hard limits (None: none)."""

    X: np.ndarray  # (n, p) bool
    features: tuple[Feature, ...]
    y: np.ndarray  # (n,) int64 class indices
    weights: np.ndarray  # (n,) float64, > 0
    classes: tuple[Any, ...]
    input_columns: tuple[str, ...]
    depth: int
    bias: str = "C"
    levels: tuple[BddLevel, ...] = (BddLevel(),)
    max_nodes: int | None = None
    max_errors: Fraction | None = None
    notes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def errors_only(self) -> bool:
        """The fragment needing no size: one level of errors, no node limit."""
        return (len(self.levels) == 1 and self.levels[0].nodes == 0 and self.levels[0].errors > 0
                and self.max_nodes is None)
