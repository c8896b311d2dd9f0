"""``threshold c in [lo, hi]`` (C10): every test of column c cuts inside [lo, hi]. No
structure handle is needed: the thresholds outside the range are removed from the
candidate features before any encoding (and the dp engines restrict their cut points)."""
from __future__ import annotations

import numpy as np

from .. import ast
from ..checked import CheckedProgram, StructuralConstraint
from ..data import ThresholdBlock
from ..ir import ModelBuilder
from ..skeletons.interface import Structure
from .base import Constraint, Family, LowerContext, SearchParts, line, quote
from .view import ClassifierView, ConstraintCheck


def _range(c: Constraint) -> ast.ThresholdRange | None:
    if isinstance(c, StructuralConstraint) and isinstance(c.node, ast.ThresholdRange):
        return c.node
    return None


class ThresholdRange(Family):
    key = "C10"
    structural = False

    def claims(self, c: Constraint) -> bool:
        return _range(c) is not None

    def restrict(self, c: Constraint, program: CheckedProgram, mask: np.ndarray) -> None:
        """Drop from ``mask`` the thresholds of the column outside the range."""
        r = _range(c)
        assert r is not None
        lo, hi, col = float(ast.resolved(r.low)), float(ast.resolved(r.high)), r.name.text
        for start, block in program.dataset.features.blocks():
            if isinstance(block, ThresholdBlock):
                if block.column == col:  # the whole block's cuts at once
                    ts = block.thresholds
                    mask[start:start + len(ts)] &= (lo <= ts) & (ts <= hi)
                continue
            for j, f in enumerate(block, start):
                if f.column == col and f.kind == "threshold" and f.threshold is not None and not lo <= f.threshold <= hi:
                    mask[j] = False

    def lower(self, b: ModelBuilder, st: Structure, c: Constraint, ctx: LowerContext) -> None:
        return None  # applied by ``restrict`` to the candidate features

    def search(self, c: Constraint, parts: SearchParts) -> None:
        r = _range(c)
        assert r is not None
        lo, hi = float(ast.resolved(r.low)), float(ast.resolved(r.high))
        old = parts.ranges.get(r.name.text, (lo, hi))
        parts.ranges[r.name.text] = (max(lo, old[0]), min(hi, old[1]))

    def check(self, c: Constraint, view: ClassifierView) -> ConstraintCheck:
        r = _range(c)
        assert r is not None
        lo, hi, col = float(ast.resolved(r.low)), float(ast.resolved(r.high)), r.name.text
        ts = [f.threshold for f in view.classifier.features
              if f.column == col and f.kind == "threshold" and f.threshold is not None]
        ok = all(lo <= t <= hi for t in ts)
        return ConstraintCheck(quote(c), line(c), float(len(ts)), ">=", 0.0, ok)
