"""CheckedProgram -> IR ``Model`` ("flatten"), with the handles the decoder needs.

The skeleton's encoding is chosen here (today: the path-bit tree encoding of Avellaneda
for ``tree(depth <= D)``); objectives and side constraints are then written once against
the encoding's handles (errors(G), leaves, nodes), never per encoding. A construct that
parses and checks but has no lowering yet raises ``UnsupportedConstruct`` naming the
construct and its line — it is never silently dropped.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import ir
from .errors import UnsupportedConstruct
from .program_types import (
    CheckedProgram,
    LinearConstraint,
    LinearForm,
    QuantityRef,
    StructuralConstraint,
    TreeSkeleton,
)
from .skeletons.tree_flow import HyperplaneInputs, TreeFlowEncoding, encode_tree_flow
from .skeletons.tree_paths import TreePathsEncoding, encode_tree, make_buckets, useful_features

#: the encodings of the tree skeleton: "paths" (Avellaneda's SAT encoding, for clause-
#: friendly solvers) and "flow" (Florio's MILP flow formulation, for MILP solvers)
ENCODINGS = ("paths", "flow")

#: quantities the tree lowering can express today
LOWERED_QUANTITIES = ("errors", "nodes", "leaves")


@dataclass(frozen=True)
class Lowered:
    """The IR model and the encoding handles it was built from."""

    model: ir.Model
    encoding: TreePathsEncoding | TreeFlowEncoding
    objective_labels: tuple[str, ...]
    encoding_name: str = "paths"


def _unsupported(what: str, span, detail: str = "") -> UnsupportedConstruct:
    line = f" (line {span.line})" if span is not None and span.line else ""
    quote = f"'{span.quote()}'" if span is not None and span.source is not None else what
    msg = f"{what} {quote}{line} is not supported by any backend of this version of odt"
    return UnsupportedConstruct(msg + (f": {detail}" if detail else ""), span)


def refuse_unlowered(program: CheckedProgram) -> None:
    """Raise ``UnsupportedConstruct`` for the first construct no backend can lower yet."""
    sk = program.skeleton
    if not isinstance(sk, TreeSkeleton):
        kind = type(sk).__name__.replace("Skeleton", "").lower()
        raise _unsupported(f"the {kind} skeleton", sk.span, "only tree(depth <= D, leaves <= L, nodes <= K) is lowered")
    if sk.depth_range is not None:
        raise _unsupported("the depth range", sk.span, "minimising depth (S3) is not lowered yet")
    for level in program.objective.levels:
        _check_form(level, program.objective.span)
    for c in program.constraints:
        if isinstance(c, StructuralConstraint):
            raise _unsupported("the constraint", c.span)
        if c.scope is not None:
            raise _unsupported(f"the 'every {c.scope}' constraint", c.span)
        _check_form(c.form, c.span)


def _check_form(form: LinearForm, span) -> None:
    for q, _ in form.terms:
        if q.kind not in LOWERED_QUANTITIES:
            raise _unsupported(f"the quantity '{q}' in", span,
                               f"lowered quantities are {', '.join(LOWERED_QUANTITIES)}")


def lower(program: CheckedProgram, encoding: str = "paths", backend: str | None = None) -> Lowered:
    """Build the IR model of ``program`` with the named encoding of its skeleton
    (``backend`` only names the requester in error messages)."""
    if program.splits == "multivariate" and encoding != "flow":
        who = f"backend '{backend}'" if backend else f"the '{encoding}' encoding"
        raise UnsupportedConstruct(
            f"{who} cannot take 'splits multivariate' (line {program.model_span.line}): hyperplane splits "
            "need continuous variables", program.model_span, "backends that support them: milp")
    return _lower(program, encoding)


def _lower(program: CheckedProgram, encoding: str) -> Lowered:
    """Build the IR model of ``program`` (a tree skeleton with a linear objective) with
    the named encoding of the skeleton; objectives and constraints are written once,
    through the encoding's handles."""
    refuse_unlowered(program)
    sk = program.skeleton
    assert isinstance(sk, TreeSkeleton)
    data = program.dataset
    forms = list(program.objective.levels) + [c.form for c in program.constraints]
    kinds = set().union(*(f.kinds() for f in forms)) if forms else set()
    count_size = bool(kinds & {"nodes", "leaves"}) or sk.leaves is not None or sk.nodes is not None
    groups_used = sorted({q.group for f in forms for q, _ in f.terms if q.group is not None})
    masks = [program.groups[g] for g in groups_used]
    b = ir.ModelBuilder()
    if program.splits == "multivariate":
        planes = HyperplaneInputs.of(data, program.feature_mask)
        buckets = make_buckets(planes.Z, data.y, data.row_weights(), None, masks)
        enc: TreePathsEncoding | TreeFlowEncoding = encode_tree_flow(b, sk.depth, [], buckets, len(data.classes), planes)
    elif encoding == "flow":
        features = useful_features(data.X, program.feature_mask)
        buckets = make_buckets(data.X, data.y, data.row_weights(), features, masks)
        enc = encode_tree_flow(b, sk.depth, features, buckets, len(data.classes))
    else:
        features = useful_features(data.X, program.feature_mask)
        buckets = make_buckets(data.X, data.y, data.row_weights(), features, masks)
        enc = encode_tree(b, sk.depth, features, buckets, len(data.classes), count_size)

    def terms_of(form: LinearForm) -> tuple[list[tuple[Fraction, int]], Fraction]:
        terms: list[tuple[Fraction, int]] = []
        constant = form.constant
        for q, coef in form.terms:
            qt, qc = _quantity(enc, program, q)
            terms.extend((coef * w, lit) for w, lit in qt)
            constant += coef * qc
        return _merge(terms), constant

    for c in program.constraints:
        assert isinstance(c, LinearConstraint)
        terms, constant = terms_of(c.form)
        b.linear(terms, c.op, -constant, ir.Origin(("constraint", c.span.line if c.span else 0), c.span))
    limit = min(x for x in (sk.leaves, None if sk.nodes is None else sk.nodes + 1) if x is not None) \
        if (sk.leaves is not None or sk.nodes is not None) else None
    if limit is not None and limit < (1 << sk.depth):  # S2: leaves <= L, nodes <= K (Avellaneda Thm 2)
        b.linear(enc.leaves()[0], "<=", Fraction(limit), ir.Origin(("skeleton", "size"), sk.span))
    labels = []
    for i, level in enumerate(program.objective.levels):
        terms, constant = terms_of(level)
        label = str(level)
        labels.append(label)
        b.objective(ir.Objective(tuple(terms), constant, label))
    return Lowered(b.build(), enc, tuple(labels), encoding)


def _quantity(enc, program: CheckedProgram, q: QuantityRef) -> tuple[list[tuple[Fraction, int]], Fraction]:
    """A quantity as (terms, constant), through the encoding's handles."""
    if q.kind == "errors":
        return enc.errors(program.groups[q.group] if q.group is not None else None)
    if q.kind == "leaves":
        return enc.leaves()
    if q.kind == "nodes":  # a binary tree with L leaves has L - 1 decision nodes
        terms, constant = enc.leaves()
        return terms, constant - 1
    raise _unsupported(f"the quantity '{q}'", q.span)


def _merge(terms: list[tuple[Fraction, int]]) -> list[tuple[Fraction, int]]:
    acc: dict[int, Fraction] = {}
    for c, lit in terms:
        acc[lit] = acc.get(lit, Fraction(0)) + c
    return [(c, lit) for lit, c in acc.items() if c != 0]
