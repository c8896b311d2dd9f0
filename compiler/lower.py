"""CheckedProgram -> IR ``Model`` ("flatten"), with the handles the decoder needs.

The skeleton's encoding is chosen here (today: the path-bit tree encoding of Avellaneda
for ``tree(depth <= D)``); objectives and side constraints are then written once against
the encoding's handles (errors(G), leaves, nodes), never per encoding. Whether a construct
is lowered on a backend is the support table's decision (``compiler/support.py``), asked
before any encoding is built; a construct that reached an encoding without a lowering is
an internal error, never silently dropped.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from . import ir
from .constraints import LowerContext, family_of, mentioned_columns, restrict_features
from .constraints import features_used as features_used_family
from .polarity import pushed_up
from .skeletons.interface import Predictions, Structure, TreeSize
from .constructs import needs_structure
from .support import BACKENDS, refusal, refused_everywhere, unsupported
from .checked import (
    BddSkeleton,
    CheckedProgram,
    DiagramSkeleton,
    LinearConstraint,
    LinearForm,
    QuantityRef,
    TreeSkeleton,
)
from .skeletons.tree_flow import HyperplaneInputs, encode_tree_flow
from .skeletons.tree_paths import TreePathsEncoding, encode_tree, make_buckets, useful_features
from .skeletons.tree_structure import add_structure, add_structure_flow

#: the encodings of the tree skeleton: "paths" (Avellaneda's SAT encoding, for clause-
#: friendly solvers) and "flow" (Florio's MILP flow formulation, for MILP solvers)
ENCODINGS = ("paths", "flow")

PREDICTION_KINDS = {"predicted", "tp", "fp", "tn", "fn", "misclassification_cost"}


@dataclass(frozen=True)
class Lowered:
    """The IR model and the encoding handles it was built from."""

    model: ir.Model
    encoding: Any  # a ``skeletons.interface.Predictions`` (and TreeSize / DiagramSize where counted)
    objective_labels: tuple[str, ...]
    encoding_name: str = "paths"


def refuse_unlowered(program: CheckedProgram) -> None:
    """Raise ``UnsupportedConstruct`` for the first construct no backend takes (the
    support table); a depth range is searched by the orchestration layer, never lowered."""
    err = refused_everywhere(program)
    if err is not None:
        raise err
    sk = program.skeleton
    if getattr(sk, "depth_range", None) is not None:
        raise unsupported(f"a depth range ('{sk.span.quote()}', line {sk.span.line}) as one encoding",
                          "a depth range is solved as a search over depths (S3), one program per depth; it is not "
                          "lowered as a whole", sk.span, hint="solve it, or compile one depth, e.g. tree(depth <= 3)")


def expand_abs(c: LinearConstraint) -> list[LinearForm]:
    """``k * abs(E) + R <= 0`` (k > 0) holds iff ``k*E + R <= 0`` and ``-k*E + R <= 0``:
    a convex use of abs becomes two linear rows (several abs terms: every sign choice).
    ``>=`` rows are negated first; an abs that would need a disjunction is refused."""
    form = c.form if c.op == "<=" else c.form.scale(Fraction(-1))
    out = [LinearForm((), form.constant)]
    for q, coef in form.terms:
        if q.kind != "abs":
            out = [f.plus(LinearForm(((q, coef),))) for f in out]
            continue
        assert coef > 0 and c.op != "==", "internal: the support table refuses abs bounded from below (C2x)"
        assert q.inner is not None
        out = [f.plus(q.inner.scale(sign * coef)) for f in out for sign in (1, -1)]
    return out


def lower(program: CheckedProgram, encoding: str = "paths", backend: str | None = None) -> Lowered:
    """Build the IR model of ``program`` with the named encoding of its skeleton
    for ``backend`` (a construct the support table refuses on it is refused here, before any
    encoding is built, so lowering and routing never disagree)."""
    if backend in BACKENDS:
        err = refusal(program, backend)
        if err is not None:
            raise err
    if program.splits == "multivariate" and encoding != "flow":
        raise unsupported(f"multivariate splits ('splits multivariate', line {program.model_span.line}) in the "
                          f"'{encoding}' encoding", "hyperplane splits need continuous variables, which the 'flow' "
                          "encoding has", program.model_span, takers=("milp",))
    return _lower(program, encoding, backend)


def allowed_features(program: CheckedProgram) -> np.ndarray:
    """The model's feature mask, less thresholds outside a ``threshold c in [lo, hi]`` (C10)."""
    return restrict_features(program, program.feature_mask)


def _lower(program: CheckedProgram, encoding: str, backend: str | None = None) -> Lowered:
    """Build the IR model of ``program`` (a tree skeleton with a linear objective) with
    the named encoding of the skeleton; objectives and constraints are written once,
    through the encoding's handles."""
    refuse_unlowered(program)
    sk = program.skeleton
    forms = list(program.objective.levels) + [c.form for c in program.constraints
                                              if isinstance(c, LinearConstraint) and c.scope is None]
    kinds = set().union(*(f.kinds() for f in forms)) if forms else set()
    kinds |= {k for f in forms for q, _ in f.terms if q.inner is not None for k in q.inner.kinds()}
    tree_limits = isinstance(sk, TreeSkeleton) and (sk.leaves is not None or sk.nodes is not None)
    need = Needs(count_size=bool(kinds & {"nodes", "leaves"}) or tree_limits,
                 exact_size=bool(pushed_up(program) & {"nodes", "leaves"}),
                 predictions=bool(kinds & PREDICTION_KINDS),
                 structure=needs_structure(program),
                 group_masks=tuple(program.groups[g] for g in sorted({g for f in forms for g in _groups(f)})))
    assert not (need.structure and program.splits == "multivariate"), \
        "internal: the support table refuses structure constraints with multivariate splits (S6s)"
    b = ir.ModelBuilder()
    built = _Built()
    if isinstance(sk, TreeSkeleton):
        enc = _encode_tree(b, program, sk, encoding, need, built)
    elif isinstance(sk, DiagramSkeleton):
        enc = _encode_diagram(b, program, sk, encoding, backend, need, built)
    else:
        enc = _encode_bdd(b, program, sk, need, built)

    def terms_of(form: LinearForm) -> tuple[list[tuple[Fraction, int]], Fraction]:
        terms: list[tuple[Fraction, int]] = []
        constant = form.constant
        for q, coef in form.terms:
            qt, qc = _quantity(enc, program, q, built, b)
            terms.extend((coef * w, lit) for w, lit in qt)
            constant += coef * qc
        return _merge(terms), constant

    for c in program.constraints:
        if family_of(c) is not None:
            continue  # a constraint family, lowered with the structure handles above (or a feature mask)
        assert isinstance(c, LinearConstraint)
        rows = expand_abs(c) if "abs" in c.form.kinds() else [c.form]
        op = "<=" if len(rows) > 1 or rows[0] is not c.form else c.op
        for form in rows:
            terms, constant = terms_of(form)
            if not terms:  # decided by the data alone: drop it, or make the model infeasible
                holds = {"<=": constant <= 0, ">=": constant >= 0, "==": constant == 0}[op]
                if not holds:
                    b.clause(())
                continue
            b.linear(terms, op, -constant, ir.Origin(("constraint", c.span.line if c.span else 0), c.span))
    if isinstance(sk, TreeSkeleton) and tree_limits:
        limit = min(x for x in (sk.leaves, None if sk.nodes is None else sk.nodes + 1) if x is not None)
        if limit < (1 << sk.depth) and isinstance(enc, TreeSize):  # S2: leaves <= L, nodes <= K (Avellaneda Thm 2)
            b.linear(enc.leaves()[0], "<=", Fraction(limit), ir.Origin(("skeleton", "size"), sk.span))
    labels = []
    for i, level in enumerate(program.objective.levels):
        terms, constant = terms_of(level)
        label = str(level)
        labels.append(label)
        b.objective(ir.Objective(tuple(terms), constant, label))
    return Lowered(b.build(), enc, tuple(labels), encoding)


@dataclass(frozen=True)
class Needs:
    """What the objective and constraints read from the skeleton's encoding."""

    count_size: bool  # nodes / leaves are counted
    exact_size: bool  # ... and can be pushed up (``polarity``): counted exactly, decoded unmerged
    predictions: bool  # predicted(c, G), tp, fp, tn, fn: prediction handles per bucket
    structure: bool  # C3, C5-C9: structure handles
    group_masks: tuple[np.ndarray, ...]  # rows of each group the program mentions (buckets split by them)


def _encode_tree(b: ir.ModelBuilder, program: CheckedProgram, sk: TreeSkeleton, encoding: str, need: Needs,
                 built: "_Built") -> Predictions:
    """A tree skeleton: Avellaneda's path encoding ("paths") or Florio's flow formulation
    on the tree ("flow", and always for multivariate splits)."""
    data = program.dataset
    mask = allowed_features(program)
    masks = list(need.group_masks)
    if program.splits == "multivariate":
        planes = HyperplaneInputs.of(data, mask)
        buckets = make_buckets(planes.Z, data.y, data.row_weights(), None, masks)
        planar = encode_tree_flow(b, sk.depth, [], buckets, len(data.classes), planes, exact_size=need.exact_size)
        return dataclasses.replace(planar, merge_leaves=False) if need.exact_size else planar
    if encoding == "flow":
        features = useful_features(data.X, mask, keep_duplicates=need.structure)
        buckets = make_buckets(data.X, data.y, data.row_weights(), features, masks)
        flow = encode_tree_flow(b, sk.depth, features, buckets, len(data.classes), exact_size=need.exact_size)
        if need.exact_size:  # the decoded tree keeps the leaves the solver counted
            flow = dataclasses.replace(flow, merge_leaves=False)
        if need.structure:
            flow = dataclasses.replace(flow, merge_leaves=False)
            _lower_structure(b, flow, program, built)
        return flow
    features = useful_features(data.X, mask, keep_duplicates=need.structure)
    buckets = make_buckets(data.X, data.y, data.row_weights(), features, masks)
    enc = encode_tree(b, sk.depth, features, buckets, len(data.classes), need.count_size,
                      predictions=need.predictions, exactly_one_feature=need.structure, exact_size=need.exact_size)
    if need.exact_size:  # the decoded tree keeps the leaves the solver counted
        enc = dataclasses.replace(enc, merge_leaves=False)
    if need.structure:
        enc = dataclasses.replace(enc, merge_leaves=False)
        _lower_structure(b, enc, program, built)
    return enc


def _encode_diagram(b: ir.ModelBuilder, program: CheckedProgram, sk: DiagramSkeleton, encoding: str,
                    backend: str | None, need: Needs, built: "_Built") -> Predictions:
    """A diagram skeleton (Florio): the MILP of eqs (1)-(18) ("flow"; its flows are
    booleans for a backend without continuous variables) or the boolean layer encoding
    ("paths", for clause-based solvers; univariate splits only)."""
    data = program.dataset
    mask = allowed_features(program)
    masks = list(need.group_masks)
    if program.splits == "multivariate" or encoding == "flow":
        from .skeletons.diagram_flow import encode_diagram_flow

        planes = HyperplaneInputs.of(data, mask) if program.splits == "multivariate" else None
        features = [] if planes is not None else useful_features(data.X, mask, keep_duplicates=need.structure)
        buckets = make_buckets(planes.Z if planes is not None else data.X, data.y, data.row_weights(),
                               None if planes is not None else features, masks)
        enc: Any = encode_diagram_flow(b, sk.widths, features, buckets, len(data.classes), planes,
                                  integral=backend == "cp")
    else:
        from .skeletons.diagram_layers import encode_diagram_layers

        features = useful_features(data.X, mask, keep_duplicates=need.structure)
        buckets = make_buckets(data.X, data.y, data.row_weights(), features, masks)
        enc = encode_diagram_layers(b, sk.widths, features, buckets, len(data.classes), need.count_size,
                                    predictions=need.predictions)
    if need.exact_size:  # nodes pushed up: the decoded diagram keeps equal nodes the solver counted
        enc = dataclasses.replace(enc, reduce=False)
    if need.structure:  # the same constraint lowering as trees, on the diagram's handles
        enc = dataclasses.replace(enc, reduce=False)
        _lower_structure(b, enc, program, built, enc.structure)
    return enc


def _encode_bdd(b: ir.ModelBuilder, program: CheckedProgram, sk: BddSkeleton, need: Needs,
                built: "_Built") -> Predictions:
    """An ordered BDD (Hu): the BDD2 encoding, the same clauses for every backend."""
    from .skeletons.bdd_levels import encode_bdd

    from .skeletons.bdd_levels import cart_features

    data = program.dataset
    features = useful_features(data.X, allowed_features(program))
    k = program.solve.options.get("preselect")
    if k is not None:  # B5: Hu's heuristic MaxSAT-BDD, the features of a greedy CART tree
        features = cart_features(data.X, data.y, data.row_weights(), features, max(int(k), sk.depth))
    buckets = make_buckets(data.X, data.y, data.row_weights(), features, list(need.group_masks))
    enc = encode_bdd(b, sk.depth, features, buckets, len(data.classes), predictions=need.predictions, bias=sk.bias)
    if need.structure:  # the levels as one chain: every path tests every level (quasi-reduced decoding)
        enc = dataclasses.replace(enc, quasi=True)
        _lower_structure(b, enc, program, built, enc.structure)
    return enc


@dataclass
class _Built:
    """The structure handles and constraint context, once built (quantities such as
    ``features_used`` read them)."""

    st: Structure | None = None
    ctx: LowerContext | None = None


def _lower_structure(b: ir.ModelBuilder, enc, program: CheckedProgram, built: _Built, make=None) -> None:
    """Structure handles on the skeleton's encoding, then every constraint of a structural
    family (``compiler/constraints/``) on them, written once. ``make(b, columns,
    feature_columns)`` builds the handles (a ``TreeStructure`` or ``DagStructure``); by
    default the tree's, on its encoding (paths or flow)."""
    data = program.dataset

    def column_of(name: str) -> str:
        if name in data.table.columns:
            return name
        found = data.features.find_name(name)
        return name if found is None else found.column

    feature_columns = [data.features[f].column for f in enc.features]
    cols = mentioned_columns(program.constraints, column_of)
    if any("features_used" in level.kinds() for level in program.objective.levels):
        cols.add("*")
    all_columns = sorted(set(feature_columns))
    if "*" in cols:
        cols = (cols - {"*"}) | set(all_columns)
    if make is None:
        tree_make = add_structure if isinstance(enc, TreePathsEncoding) else add_structure_flow

        def make(b, columns, feature_columns):
            return tree_make(b, enc, columns, feature_columns)

    st: Structure = make(b, sorted(cols & set(all_columns)) + sorted(cols - set(all_columns)), feature_columns)
    row_bucket = {r: u for u, bk in enumerate(enc.buckets) for r in bk.rows}
    ids = {rid: i for i, rid in enumerate(data.ids)} if data.ids is not None else {}

    def bucket_of_row(rid: str) -> int | None:
        return row_bucket.get(ids.get(rid, -1))

    ctx = LowerContext(program, column_of, sorted(cols), bucket_of_row,
                       lambda q: _quantity(enc, program, q, built, b), feature_columns=all_columns)
    built.st, built.ctx = st, ctx
    for c in program.constraints:
        family = family_of(c)
        if family is not None and family.structural:
            family.lower(b, st, c, ctx)


def _groups(form: LinearForm) -> set[str]:
    out = set()
    for q, _ in form.terms:
        if q.group is not None:
            out.add(q.group)
        if q.inner is not None:
            out |= _groups(q.inner)
    return out


def _predicted(enc, program: CheckedProgram, q: QuantityRef) -> tuple[list[tuple[Fraction, int]], Fraction]:
    """predicted(k, G) and the confusion counts (positive class = index 1), written once
    over the skeleton's prediction handle: a sum over buckets of weight * [predicted k]."""
    mask = program.groups[q.group] if q.group is not None else None
    terms: list[tuple[Fraction, int]] = []
    constant = Fraction(0)
    for u, bk in enumerate(enc.buckets):
        if mask is not None and not mask[bk.rows[0]]:
            continue
        weight = dict(bk.class_weight)
        if q.matrix is not None:  # a cost matrix (issue 26): sum over predicted k of its weighted cost
            for label in range(len(q.matrix)):
                cost = sum((cw * q.matrix[a][label] for a, cw in weight.items()), Fraction(0))
                if cost:
                    t, c = enc.prediction(u, label)
                    terms.extend((cost * coef, lit) for coef, lit in t)
                    constant += cost * c
            continue
        if q.kind == "predicted":
            k, w = q.klass, sum(weight.values(), Fraction(0))
        else:
            pos = 1 if q.klass is None else q.klass  # the positive class (issue 26: tp(c))
            k = pos if q.kind in ("tp", "fp") else 1 - pos
            w = weight.get(pos if q.kind in ("tp", "fn") else 1 - pos, Fraction(0))
        if w:
            t, c = enc.prediction(u, k)
            terms.extend((w * coef, lit) for coef, lit in t)
            constant += w * c
    return terms, constant


def _quantity(enc, program: CheckedProgram, q: QuantityRef, built: _Built,
              b: ir.ModelBuilder) -> tuple[list[tuple[Fraction, int]], Fraction]:
    """A quantity as (terms, constant), through the encoding's handles."""
    if q.kind == "features_used" and built.st is not None and built.ctx is not None:
        return features_used_family.quantity(b, built.st, built.ctx), Fraction(0)
    if q.kind in PREDICTION_KINDS:
        return _predicted(enc, program, q)
    if q.kind == "errors":
        return enc.errors(program.groups[q.group] if q.group is not None else None)
    if q.kind == "leaves":
        return enc.leaves()
    if q.kind == "nodes" and hasattr(enc, "nodes"):
        return enc.nodes()
    if q.kind == "nodes":  # a binary tree with L leaves has L - 1 decision nodes
        terms, constant = enc.leaves()
        return terms, constant - 1
    raise AssertionError(f"internal: the quantity '{q}' reached lowering (the support table should refuse it)")


def _merge(terms: list[tuple[Fraction, int]]) -> list[tuple[Fraction, int]]:
    acc: dict[int, Fraction] = {}
    for c, lit in terms:
        acc[lit] = acc.get(lit, Fraction(0)) + c
    return [(c, lit) for lit, c in acc.items() if c != 0]
