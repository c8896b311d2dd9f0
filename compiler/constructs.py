"""Which constructs of the support table a checked program uses: its rows, read once.

Input: a ``CheckedProgram``. Output: ``uses(program)``, one ``Use`` (table key, span, source
text) per place the program uses a construct of ``compiler/support.py``'s table, in order:
skeleton, objective, constraints, solve directive. The support table decides from these
alone whether a backend takes the program, so a rule that depends on a combination (dp's
objective levels, a multivariate model with a path constraint, a strategy's fragment) is a
row of its own here, never a second check somewhere else.

Constraints are recognised by their shape once: a relation over quantities (``errors <= k``,
``rate(1, A) >= ...``) by the quantities it bounds; every other constraint (per node, leaf
or path, structural) by the family of ``compiler/constraints/`` that claims it, which names
its rows. A constraint no family claims is an internal error, never a row by default.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator

from .checked import (
    CheckedProgram,
    DiagramSkeleton,
    LinearConstraint,
    LinearForm,
    QuantityRef,
    TreeSkeleton,
)
from .constraints.registry import family_of, is_structural
from .constructs_confusion import confusion_uses
from .source import Span
from .regression import FRONT_KEYS, LOSSES, loss_of, objective_keys, relation_keys


@dataclass(frozen=True, slots=True)
class Use:
    """One place a program uses a construct: the table key, the source span, its text."""

    key: str
    span: Span | None
    text: str


def skeleton_name(program: CheckedProgram) -> str:
    sk = program.skeleton
    return "tree" if isinstance(sk, TreeSkeleton) else "diagram" if isinstance(sk, DiagramSkeleton) else "bdd"


def uses(program: CheckedProgram) -> list[Use]:
    """Every construct ``program`` uses, in source order of kind: skeleton, objective,
    constraints, solve directive."""
    return construct_uses(program, directive=True)


def construct_uses(program: CheckedProgram, directive: bool = False) -> list[Use]:
    """The constructs of ``program`` whatever its solve directive asks (the uses of the
    program with ``solve auto`` and no options): what a search lowering reads;
    ``directive``: and those of its solve directive too (``uses``)."""
    found = list(_skeleton_uses(program, directive)) + list(_objective_uses(program)) + \
        list(_constraint_uses(program))
    return found + list(_solve_uses(program)) if directive else found


def _quote(span: Span | None, fallback: str) -> str:
    return span.quote() if span is not None and span.source is not None else fallback


def needs_structure(program: CheckedProgram) -> bool:
    """Constraints on nodes, leaves, paths, tests or row placement (C3, C5-C11), or
    ``features_used`` in the objective: the structure handles are built."""
    return any(is_structural(c) for c in program.constraints) or any(
        "features_used" in level.kinds() for level in program.objective.levels)


def _skeleton_uses(p: CheckedProgram, directive: bool = True) -> Iterator[Use]:
    sk = p.skeleton
    text = _quote(p.model_span, "model")
    if isinstance(sk, TreeSkeleton):
        yield Use("S1", sk.span, text)
        if sk.leaves is not None or sk.nodes is not None:
            yield Use("S2", sk.span, text)
    elif isinstance(sk, DiagramSkeleton):
        yield Use("S4", sk.span, text)
    else:
        yield Use("S5", sk.span, text)
    if getattr(sk, "depth_range", None) is not None:
        yield Use("S3", sk.span, text)
    if p.splits == "multivariate":
        yield Use("S6", p.model_span, "splits multivariate")
        if directive and p.solve.options.get("encoding") == "paths":
            yield Use("S6p", p.solve.span or p.model_span, _quote(p.solve.span, "encoding = \"paths\""))
        if needs_structure(p):
            first = next((c for c in p.constraints if is_structural(c)), None)
            span = first.span if first is not None else p.objective.span
            yield Use("S6s", span, _quote(span, "a constraint on the structure"))
    if p.dataset.raw_numeric:
        yield Use("S7", p.model_span, f"raw thresholds of {', '.join(p.dataset.raw_numeric)}")


def _quantities(form: LinearForm) -> Iterator[QuantityRef]:
    for q, _ in form.terms:
        yield q
        if q.inner is not None:
            yield from _quantities(q.inner)


_GROUP_KINDS = {"predicted", "tp", "fp", "tn", "fn"}


def _grouped(q: QuantityRef, in_objective: bool = False) -> bool:
    """A group quantity (in the objective: of a group; the counts of every row there are a
    cost matrix, issue 26, rows Ocm / Ocmx of ``constructs_confusion``)."""
    if in_objective and q.group is None and q.kind in _GROUP_KINDS:
        return False
    return q.kind in _GROUP_KINDS or (q.kind == "errors" and q.group is not None)


def _quantity_uses(form: LinearForm, span: Span | None, text: str, in_objective: bool = False) -> Iterator[Use]:
    for q in _quantities(form):
        if q.kind == "nodes":
            yield Use("O2n", q.span or span, text)
        elif q.kind == "leaves":
            yield Use("O2l", q.span or span, text)
        elif q.kind == "features_used":
            yield Use("O2f", q.span or span, text)
            if in_objective:
                yield Use("O2fo", q.span or span, text)
        elif q.kind == "depth" and not in_objective:
            yield Use("O2d", q.span or span, text)
        elif _grouped(q, in_objective):
            yield Use("O2g" if in_objective else "C1", span, text)


def _depth_level(form: LinearForm) -> bool:
    """``a * depth + c`` with ``a > 0``: the first level of a depth search (S3)."""
    return len(form.terms) == 1 and form.terms[0][0].kind == "depth" and form.terms[0][1] > 0


def _rewards(form: LinearForm) -> bool:
    """A level that rewards errors, nodes or leaves: their weight is negative (``leaves``
    is ``nodes + 1``, so the two weigh together)."""
    errors = sum((c for q, c in form.terms if q.kind == "errors" and q.group is None), Fraction(0))
    size = sum((c for q, c in form.terms if q.kind in ("nodes", "leaves")), Fraction(0))
    return errors < 0 or size < 0


def _objective_uses(p: CheckedProgram) -> Iterator[Use]:
    o = p.objective
    text = _quote(o.span, "minimize errors")
    yield Use("O1", o.span, text)
    yield from (Use(key, o.span, text) for key in objective_keys(o))
    if len(o.levels) > 1:
        yield Use("O3", o.span, text)
    levels = o.levels
    if getattr(p.skeleton, "depth_range", None) is not None:  # S3: minimize depth first, the rest per depth
        if not levels or not _depth_level(levels[0]) or any("depth" in lvl.kinds() for lvl in levels[1:]):
            yield Use("S3o", o.span, text)
        levels = levels[1:] if levels and _depth_level(levels[0]) else levels
    for level in levels:
        kinds = {q.kind for q in _quantities(level)}
        if "depth" in kinds and getattr(p.skeleton, "depth_range", None) is None:
            yield Use("O3d", o.span, text)
        if "abs" in kinds:
            yield Use("Oabs", o.span, text)
        if "expected_cost" in kinds:
            yield Use("Oec", o.span, text)
        if _rewards(level):
            yield Use("O2neg", o.span, text)
        yield from _quantity_uses(level, o.span, text, in_objective=True)
    for key, span, quote in confusion_uses(p, tuple(levels), text):  # issue 26: cost matrices, F1
        yield Use(key, span, quote)


def _constraint_uses(p: CheckedProgram) -> Iterator[Use]:
    regression = loss_of(p.objective) is not None
    for c in p.constraints:
        text = _quote(c.span, "") or str(c)  # str() of a deeply nested AST recurses: only without a span
        if isinstance(c, LinearConstraint) and c.scope is None:  # a relation over quantities
            yield from _relation_uses(c, text, regression)
            continue
        family = family_of(c)
        if family is None:
            raise AssertionError(f"internal: no constraint family claims '{text}' (compiler/constraints/registry.py)")
        for key in family.support_keys(c):
            yield Use(key, c.span, text)
            if regression and key in FRONT_KEYS:
                yield Use("R3", c.span, text)


def bounds_from_above(c: LinearConstraint) -> bool:
    """``c`` is ``a * q + k (op) 0`` with one of errors (of every row), nodes, leaves
    bounded from above: ``q <= b``, or ``q == 0`` for errors and nodes (never negative)."""
    if len(c.form.terms) != 1:
        return False
    q, a = c.form.terms[0]
    if q.kind not in ("errors", "nodes", "leaves", *LOSSES) or q.group is not None:
        return False
    bound = -c.form.constant / a
    return c.op == "<=" and a > 0 or c.op == ">=" and a < 0 or (c.op == "==" and bound == 0 and q.kind != "leaves")


def _relation_uses(c: LinearConstraint, text: str, regression: bool = False) -> Iterator[Use]:
    yield from (Use(key, c.span, text) for key in relation_keys(c, bounds_from_above(c), regression))
    top = {q.kind for q, _ in c.form.terms}
    if "expected_cost" in top:
        yield Use("C8e", c.span, text)
    for q, coef in c.form.terms:
        if q.kind != "abs":
            continue
        assert q.inner is not None
        if "expected_cost" in {x.kind for x in _quantities(q.inner)}:
            yield Use("Oec", c.span, text)
        convex = c.op == "<=" and coef > 0 or c.op == ">=" and coef < 0
        yield Use("C2" if convex else "C2x", c.span, text)
    kinds = {q.kind for q in _quantities(c.form)}
    if "errors" in kinds and not (kinds & (_GROUP_KINDS | {"abs"})):  # errors <= k (O4) and errors(G)
        grouped = any(q.kind == "errors" and q.group is not None for q in _quantities(c.form))
        yield Use("C1" if grouped or kinds - {"errors"} else "O4", c.span, text)
    if len(c.form.terms) == 1 and c.form.terms[0][0].kind in ("errors", "nodes", "leaves") \
            and c.form.terms[0][0].group is None and not bounds_from_above(c):
        yield Use("Olb", c.span, text)
    yield from _quantity_uses(c.form, c.span, text)


def incremental_bound(c: CheckedProgram) -> Fraction | None:
    """The error bound k of Avellaneda's DT_depth / DT_size fragment (``strategy
    incremental``, B3), or None outside it: a tree depth range without size limits,
    ``minimize depth`` alone or ``then nodes`` / ``then leaves``, univariate splits and
    one constraint ``errors <= k`` (or ``errors == 0``)."""
    sk = c.skeleton
    if not isinstance(sk, TreeSkeleton) or sk.depth_range is None or sk.leaves is not None or sk.nodes is not None:
        return None
    levels = [[(q.kind, q.group, coef > 0) for q, coef in lvl.terms] for lvl in c.objective.levels]
    if levels not in ([[("depth", None, True)]], [[("depth", None, True)], [("nodes", None, True)]],
                      [[("depth", None, True)], [("leaves", None, True)]]):
        return None
    if c.splits != "univariate" or len(c.constraints) != 1:
        return None
    k = c.constraints[0]
    if not isinstance(k, LinearConstraint) or k.scope is not None or k.op not in ("<=", "==") \
            or [(q.kind, q.group) for q, _ in k.form.terms] != [("errors", None)] or k.form.terms[0][1] <= 0:
        return None
    bound = -k.form.constant / k.form.terms[0][1]
    return bound if (k.op == "<=" or bound == 0) and bound >= 0 else None


def _solve_uses(p: CheckedProgram) -> Iterator[Use]:
    req = p.solve
    text = _quote(req.span, "solve")
    if req.strategy == "incremental":
        yield Use("B3", req.span, text)
        if incremental_bound(p) is None:
            yield Use("B3x", req.span, text)
    if req.strategy == "lns":
        yield Use("B6", req.span, text)
        if isinstance(p.skeleton, DiagramSkeleton) and (p.splits != "univariate" or len(p.objective.levels) != 1):
            yield Use("B6x", req.span, text)
    if "preselect" in req.options:
        yield Use("B5", req.span, text)
    encoding = req.options.get("encoding")
    if encoding is not None:
        yield Use("Ef" if encoding == "flow" else "Ep", req.span, text)
