"""Binary features and the lazy sequence of a dataset's features (issue 15).

A numeric column binarised at every midpoint has one threshold feature per distinct value
(2 million on a 20,000 x 100 full-precision file), and the dp engines never read them one
by one: they read raw columns. ``FeatureList`` therefore stores such a column as one
``ThresholdBlock`` (the column name and its sorted threshold array) and makes a ``Feature``
only when one is indexed or iterated; every other feature (binary, category, a learned
missing direction, oblique) is kept as it is. It behaves as the tuple of its features
(``len``, indexing, slicing, iteration, ``==`` and ``hash`` with such a tuple), and its
block-level helpers (``columns``, ``column_mask``, ``find_name``, ``blocks``) answer the
questions of the hot consumers without making a feature per threshold.
"""
from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any, Iterable, Iterator, Mapping, NamedTuple, Union, overload

import numpy as np


class Feature(NamedTuple):
    """One binary feature of the model.

    kind ``binary``: column value == 1; ``threshold``: column value <= threshold;
    ``category``: column value == category (one-hot); a ``threshold`` whose ``category`` is
    ``missing:yes|<markers>`` or ``missing:no|<markers>`` (``missing ... (learn)``) also
    routes a missing cell (one of the markers, NaN or None) to its yes or no side — the
    direction a split learns is the choice between the two; ``oblique`` (S6): the hyperplane test
    sum(coef * value) >= threshold, where a term's value is the raw number of its column,
    or, for a term with a category, 1 when the column holds that category.
    """

    column: str
    kind: str
    threshold: float | None = None
    category: str | None = None
    terms: tuple[tuple[str, str | None, float], ...] = ()

    @property
    def name(self) -> str:
        if self.kind == "binary":
            return self.column
        if self.kind == "threshold":
            rule = missing_rule(self)
            side = "" if rule is None else f" (missing: {'yes' if rule[0] else 'no'})"
            return f"{self.column} <= {self.threshold:g}{side}"
        if self.kind == "oblique":
            text = ""
            for i, (col, cat, c) in enumerate(self.terms):
                var = col if cat is None else f"[{col} == {cat}]"
                sign = ("-" if c < 0 else "") if i == 0 else (" - " if c < 0 else " + ")
                text += f"{sign}{abs(c):.4g}*{var}"
            return f"{text} >= {self.threshold:.6g}"
        return f"{self.column} == {self.category if self.category != '' else chr(34) * 2}"

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(col for col, _, _ in self.terms)) if self.kind == "oblique" else (self.column,)

    def to_json(self) -> dict:
        out: dict[str, object] = {"column": self.column, "kind": self.kind, "threshold": self.threshold,
                                  "category": self.category}
        if self.terms:
            out["terms"] = [list(t) for t in self.terms]
        return out

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> "Feature":
        terms = tuple((t[0], t[1], float(t[2])) for t in obj.get("terms", ()))
        return Feature(obj["column"], obj["kind"], obj.get("threshold"), obj.get("category"), terms)


def missing_rule(feat: Feature) -> tuple[bool, tuple[str, ...]] | None:
    """For a threshold feature with a learned missing direction: (missing goes to the yes
    side, the markers); None for every other feature.

    >>> missing_rule(Feature("age", "threshold", 40.0, "missing:yes|?|NA"))
    (True, ('?', 'NA'))
    """
    if feat.category is None or not feat.category.startswith("missing:"):
        return None
    side, *markers = feat.category[len("missing:"):].split("|")
    return side == "yes", tuple(markers)


_NEW = tuple.__new__  # a feature per threshold (millions on large raw columns): no keyword handling


class ThresholdBlock:
    """The features ``Feature(column, "threshold", t)`` for each t of ``thresholds`` (a
    read-only float64 array, shared by slices), in that order."""

    __slots__ = ("column", "thresholds")

    def __init__(self, column: str, thresholds: Any):
        self.column = column
        cuts = np.asarray(thresholds, dtype=np.float64).reshape(-1)
        if cuts.flags.writeable:  # immutable, as the features it stands for: a copy unless read-only already
            cuts = cuts.copy()
            cuts.flags.writeable = False
        self.thresholds: np.ndarray = cuts

    def feature(self, i: int) -> Feature:
        return _NEW(Feature, (self.column, "threshold", float(self.thresholds[i]), None, ()))

    def __iter__(self) -> Iterator[Feature]:
        col = self.column
        return (_NEW(Feature, (col, "threshold", t, None, ())) for t in self.thresholds.tolist())

    def __len__(self) -> int:
        return int(self.thresholds.shape[0])

    def __eq__(self, other: object) -> bool:
        """Both blocks hold the same features."""
        if not isinstance(other, ThresholdBlock):
            return NotImplemented
        return self.column == other.column and np.array_equal(self.thresholds, other.thresholds)

    __hash__ = None  # type: ignore[assignment]  # mutable array inside

    def __reduce__(self) -> tuple[Any, ...]:
        return (ThresholdBlock, (self.column, self.thresholds))

    def __repr__(self) -> str:
        return f"ThresholdBlock({self.column!r}, <{len(self)} thresholds>)"


#: A run of features: made ones (a tuple) or the thresholds of one column.
Block = Union[tuple[Feature, ...], ThresholdBlock]


class FeatureList(Sequence[Feature]):
    """The features of a dataset as a sequence of blocks (see the module docstring).

    >>> fl = FeatureList([(Feature("b", "binary"),), ThresholdBlock("x", np.array([1.5, 2.5]))])
    >>> len(fl), fl[-1], fl == (Feature("b", "binary"), Feature("x", "threshold", 1.5), Feature("x", "threshold", 2.5))
    (3, Feature(column='x', kind='threshold', threshold=2.5, category=None, terms=()), True)
    >>> fl.columns(), [f.name for f in fl[1:]]
    (('b', 'x'), ['x <= 1.5', 'x <= 2.5'])
    """

    __slots__ = ("_blocks", "_starts", "_hash")

    def __init__(self, blocks: Iterable[Block | Iterable[Feature]] = ()):
        merged: list[Block] = []
        made: list[Feature] = []  # adjacent made features, gathered into one block
        for raw in blocks:
            if not isinstance(raw, ThresholdBlock):
                made.extend(raw)
            elif len(raw):
                if made:
                    merged.append(tuple(made))
                    made = []
                merged.append(raw)
        if made:
            merged.append(tuple(made))
        self._blocks: tuple[Block, ...] = tuple(merged)
        starts = [0]
        for block in merged:
            starts.append(starts[-1] + len(block))
        self._starts: list[int] = starts  # block b holds features starts[b] .. starts[b+1]-1
        self._hash: int | None = None

    @classmethod
    def of(cls, features: Sequence[Feature]) -> "FeatureList":
        """``features`` as a FeatureList (itself when it is one)."""
        return features if isinstance(features, FeatureList) else cls([tuple(features)])

    # --------------------------------------------------------------- the sequence
    def __len__(self) -> int:
        return self._starts[-1]

    @overload
    def __getitem__(self, index: int) -> Feature: ...

    @overload
    def __getitem__(self, index: slice) -> "FeatureList": ...

    def __getitem__(self, index: int | slice) -> "Feature | FeatureList":
        if isinstance(index, slice):
            return self._slice(index)
        try:
            i = index.__index__()
        except AttributeError:
            raise TypeError(f"FeatureList indices must be integers or slices, not {type(index).__name__}") from None
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("FeatureList index out of range")
        b = bisect.bisect_right(self._starts, i) - 1
        block = self._blocks[b]
        k = i - self._starts[b]
        return block.feature(k) if isinstance(block, ThresholdBlock) else block[k]

    def _slice(self, s: slice) -> "FeatureList":
        start, stop, step = s.indices(len(self))
        if step != 1:
            return FeatureList([tuple(self[i] for i in range(start, stop, step))])
        out: list[Block] = []
        for b, block in enumerate(self._blocks):
            lo, hi = max(start - self._starts[b], 0), min(stop - self._starts[b], len(block))
            if lo < hi:
                out.append(ThresholdBlock(block.column, block.thresholds[lo:hi])
                           if isinstance(block, ThresholdBlock) else block[lo:hi])
        return FeatureList(out)

    def __iter__(self) -> Iterator[Feature]:
        for block in self._blocks:
            yield from block

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, tuple) or len(value) != len(Feature._fields):
            return False  # no feature equals it (a Feature is a 5-tuple)
        value = Feature._make(value)
        for block in self._blocks:
            if isinstance(block, tuple):
                if value in block:
                    return True
            elif (value.column == block.column and value.kind == "threshold" and value.category is None
                  and value.terms == () and isinstance(value.threshold, (int, float))
                  and bool((block.thresholds == value.threshold).any())):
                return True
        return False

    def __eq__(self, other: object) -> bool:
        """Equal to a FeatureList or a tuple with the same features in the same order (as
        the tuple it stands for)."""
        if isinstance(other, FeatureList):
            if self._starts == other._starts and all(
                    type(a) is type(b) for a, b in zip(self._blocks, other._blocks)):
                return all(a == b for a, b in zip(self._blocks, other._blocks))  # block by block
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        if isinstance(other, tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        """The hash of the tuple of its features (so equal tuples hash alike), once."""
        if self._hash is None:
            self._hash = hash(tuple(self))
        return self._hash

    def __add__(self, other: object) -> "FeatureList":
        if isinstance(other, (FeatureList, tuple)):
            return FeatureList([*self._blocks, *FeatureList.of(other)._blocks])
        return NotImplemented

    def __radd__(self, other: object) -> "FeatureList":
        if isinstance(other, tuple):
            return FeatureList([*FeatureList.of(other)._blocks, *self._blocks])
        return NotImplemented

    def __reduce__(self) -> tuple[Any, ...]:
        return (FeatureList, (list(self._blocks),))

    def __repr__(self) -> str:
        lazy = sum(len(b) for b in self._blocks if isinstance(b, ThresholdBlock))
        return f"<FeatureList of {len(self)} features, {lazy} of them thresholds made on use>"

    # --------------------------------------------------------------- block-level answers
    def blocks(self) -> Iterator[tuple[int, Block]]:
        """(index of its first feature, block) for each block, in order."""
        return zip(self._starts, self._blocks)

    def columns(self) -> tuple[str, ...]:
        """The raw columns the features read, in order of first use."""
        out: dict[str, None] = {}
        for block in self._blocks:
            if isinstance(block, ThresholdBlock):
                out[block.column] = None
            elif not any(f.kind == "oblique" for f in block):
                out.update(dict.fromkeys(f.column for f in block))
            else:
                for f in block:
                    out.update(dict.fromkeys(f.columns))
        return tuple(out)

    def column_mask(self, wanted: set[str] | frozenset[str]) -> np.ndarray:
        """Boolean per feature: its ``column`` is in ``wanted``."""
        mask = np.zeros(len(self), dtype=bool)
        for start, block in self.blocks():
            if isinstance(block, ThresholdBlock):
                mask[start:start + len(block)] = block.column in wanted
            else:
                mask[start:start + len(block)] = [f.column in wanted for f in block]
        return mask

    def find_name(self, name: str) -> Feature | None:
        """The first feature whose ``name`` is ``name``, or None; a threshold block is read
        only when the name starts with its column and ``' <= '``."""
        for block in self._blocks:
            if isinstance(block, tuple):
                hit = next((f for f in block if f.name == name), None)
            elif name.startswith(block.column + " <= "):
                hit = _named_threshold(block, name)
            else:
                hit = None
            if hit is not None:
                return hit
        return None


def _named_threshold(block: ThresholdBlock, name: str) -> Feature | None:
    """The feature of ``block`` named ``name`` (``column <= t``, t as ``:g`` prints it:
    six significant digits, so only thresholds within 1e-5 relative of it are formatted)."""
    try:
        near = float(name[len(block.column) + 4:])
    except ValueError:
        return None
    if not math.isfinite(near):
        return None
    ts = block.thresholds
    for k in np.flatnonzero(np.abs(ts - near) <= abs(near) * 1e-5).tolist():
        if f"{block.column} <= {float(ts[k]):g}" == name:
            return block.feature(k)
    return None
