"""The support-table rows of the confusion objectives (issue 26): which cost-matrix, F1 and
balanced-accuracy uses a program makes, read once for ``compiler/constructs.py``.

Input: a ``CheckedProgram``. Output: ``Use``s of the rows ``Ocm`` (a misclassification cost
in the objective), ``Ocmx`` (such an objective with a constraint dp reads on the labels, or
several levels over the labels), ``Of1`` (maximize f1), ``Of1x`` (f1 anywhere else, or
with other levels) and ``Ccm`` (a cost matrix in a constraint).

dp reads a cost objective by reweighting (or relabelling) the rows, so it takes it with
every constraint that does not read the labels (depth, sizes, minimum leaf and node
sizes, path constraints, threshold ranges, same_leaf) and with caps on nodes and leaves;
an error cap, a per-leaf error bound or a global constraint reads the rows' true classes
and weights, so that combination is a row of its own.
"""
from __future__ import annotations

from typing import Iterator

from .source import Span

from .checked import CheckedProgram, LinearConstraint, LinearForm
from .confusion import LABEL_KINDS, is_cost_level
from .constraints.registry import family_of

#: constraint rows that read no label: dp takes them with a cost objective
_LABEL_FREE = frozenset({"C3", "C5", "C5u", "C6", "C7", "C8p", "C8x", "C9x", "C10"})


def _kinds(form: LinearForm) -> set[str]:
    out = set()
    for q, _ in form.terms:
        out.add(q.kind)
        if q.inner is not None:
            out |= _kinds(q.inner)
    return out


def _size_cap(c: LinearConstraint) -> bool:
    """``nodes <= K`` / ``leaves <= L``: a cap dp keeps without reading labels."""
    if len(c.form.terms) != 1:
        return False
    q, a = c.form.terms[0]
    return q.kind in ("nodes", "leaves") and (c.op == "<=" and a > 0 or c.op == ">=" and a < 0)


def _reads_labels(p: CheckedProgram) -> LinearConstraint | object | None:
    """The first constraint of ``p`` that reads the rows' classes or weights (or None)."""
    for c in p.constraints:
        if isinstance(c, LinearConstraint) and c.scope is None:
            if not _size_cap(c):
                return c
            continue
        family = family_of(c)
        if family is None or not set(family.support_keys(c)) <= _LABEL_FREE:
            return c
    return None


def confusion_uses(p: CheckedProgram, levels: tuple[LinearForm, ...], text: str
                   ) -> Iterator[tuple[str, Span | None, str]]:
    """(row key, span, text) of each confusion row the objective ``levels`` (a depth range's
    levels after its depth) and the constraints use."""
    o = p.objective
    cost = [is_cost_level(lv) for lv in levels]
    f1 = ["f1" in _kinds(lv) for lv in levels]
    if any(cost):
        yield "Ocm", o.span, text
    if any(f1):
        if o.maximized and len(levels) == 1 and [q.kind for q, _ in levels[0].terms] == ["f1"] \
                and levels[0].terms[0][1] < 0 and _reads_labels(p) is None:
            yield "Of1", o.span, text
        else:
            yield "Of1x", o.span, text
    if any(cost):
        labelled_later = any(bool(_kinds(lv) & LABEL_KINDS) for lv in levels[1:])
        if not cost[0] or labelled_later or _reads_labels(p) is not None:
            yield "Ocmx", o.span, text
    for c in p.constraints:
        if isinstance(c, LinearConstraint):
            kinds = _kinds(c.form)
            quote = c.span.quote() if c.span is not None and c.span.source is not None else str(c.form)
            if "misclassification_cost" in kinds:
                yield "Ccm", c.span, quote
            if "f1" in kinds:
                yield "Of1x", c.span, quote
