"""The skeleton interface: the roles an encoding of a skeleton plays for the rest of the
compiler, declared as ``typing.Protocol`` classes so that objectives and constraints are
written against roles, never against one encoding's variables.

A *linear form* is ``(terms, constant)``: ``sum(coef * literal) + constant`` over IR
literals (``compiler/ir.py``).

Roles, and the encodings that play them:

``Predictions``   prediction of row bucket u (``prediction(u, k)``: u is classified k)
                  and the weighted errors of a set of rows (Avellaneda's paths encoding,
                  Florio's flow formulations on trees and diagrams, Hu's BDD2) — every
                  encoding.
``TreeSize``      the number of leaves (Avellaneda Thm 2; Florio eq. 18 on trees).
``DiagramSize``   the number of decision nodes (Florio eq. 18 on diagrams).
``Structure``     node activity (``Z``), node feature (``T[v, column]``), rows reaching
                  a node (``R``, ``samples``), the DAG of decision nodes (``nodes``,
                  ``out_arcs``) that path constraints read as potentials — built on an
                  encoding by ``tree_structure``, ``dag_structure`` or ``bdd_levels``.
``LeafStructure`` a ``Structure`` with leaves of its own (``O``, ``L``, ``leaf_nodes``,
                  the rows and the misclassified weight ending at each): trees only.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

#: sum(coef * literal) + constant
Linear = tuple[list[tuple[Fraction, int]], Fraction]


@runtime_checkable
class Predictions(Protocol):
    """Every skeleton encoding: rows grouped in buckets (``tree_paths.Bucket``), the
    dataset features it may test, the prediction and error handles, and decoding."""

    @property
    def buckets(self) -> tuple[Any, ...]: ...

    @property
    def features(self) -> Sequence[int]: ...

    def errors(self, rows_mask: np.ndarray | None = None) -> Linear: ...

    def prediction(self, u: int, k: int) -> Linear: ...

    def decode(self, values: Any, data: Any, input_columns: Any) -> Any: ...


@runtime_checkable
class TreeSize(Protocol):
    def leaves(self) -> Linear: ...


@runtime_checkable
class DiagramSize(Protocol):
    def nodes(self) -> Linear: ...


@runtime_checkable
class Structure(Protocol):
    """Structure handles (C3, C7-C9): nodes in topological order, the root first."""

    @property
    def R(self) -> Mapping[tuple[int, int], int]: ...

    @property
    def Z(self) -> Mapping[int, int]: ...

    @property
    def T(self) -> Mapping[tuple[int, str], int]: ...

    @property
    def counts(self) -> tuple[int, ...]: ...

    @property
    def weights(self) -> tuple[Fraction, ...]: ...

    @property
    def root(self) -> int: ...

    @property
    def internal(self) -> Sequence[int]: ...

    @property
    def nodes(self) -> tuple[int, ...]: ...

    def samples(self, v: int) -> Linear: ...

    def out_arcs(self, v: int) -> list[tuple[int, int]]: ...

    def tests(self, v: int, column: str) -> int | None: ...


@runtime_checkable
class LeafStructure(Structure, Protocol):
    """A structure whose rows end at leaves of their own (trees: C5, C6)."""

    @property
    def O(self) -> Mapping[int, int]: ...  # noqa: E743 - the paper's name

    @property
    def L(self) -> Mapping[tuple[int, int], int]: ...

    @property
    def leaf_nodes(self) -> tuple[int, ...]: ...

    def leaf_samples(self, q: int) -> Linear: ...

    def leaf_errors(self, b: Any, q: int) -> Linear: ...  # misclassified weight ending at leaf q (C11)


def has_leaves(st: Structure) -> bool:
    return isinstance(st, LeafStructure)
