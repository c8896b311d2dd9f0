"""The support table: for each construct of the language, on each skeleton, which backend
takes it — or why not. The single answer to "what works where".

Input: a ``CheckedProgram``. Output: the constructs it uses (``uses``), the first one a
backend refuses (``refusal``), the first one no backend takes (``refused_everywhere``),
and the table itself as text or Markdown (``odtc support``; ``docs/support.md`` is its
output). The checker's refusals, ``auto``'s routing, the backends' checks before solving
and the docs all read this table; engine-specific combination rules (the dp fragment's
``search_refusal``, an encoding's variable kinds) refine it, never contradict it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping

from . import ast
from .checked import (
    CheckedProgram,
    DiagramSkeleton,
    LinearConstraint,
    LinearForm,
    QuantityRef,
    StructuralConstraint,
    TreeSkeleton,
)
from .errors import UnsupportedConstruct
from .source import Span

BACKENDS = ("dp", "maxsat", "cp", "milp")
SKELETONS = ("tree", "diagram", "bdd")
SOLVERS = ("maxsat", "cp", "milp")

#: reason used for dp where its Pareto fronts (issue 14) are bounded by nothing the program
#: says: the set of tested columns is a front component, bounded only by a constraint on it
_DP_UNBOUNDED = ("dp keeps a Pareto front per subproblem over the set of columns a subtree tests; in the objective "
                 "that set is bounded by nothing the program says (a constraint such as features_used <= k is taken)")
_NO_DP_DAG = "dp searches trees"
_TREE_ONLY = ("a tree construct: a decision diagram has no leaves of its own (its rows end at class terminals "
              "shared by many paths)")
_BDD_NODES = "a BDD's nodes are made after solving, by GenBDD"
#: reason used for dp on bdd skeletons wherever its subset enumeration ends (issue 16)
_DP_BDD = ("dp's BDD enumeration takes objectives of errors and nodes and the limits nodes <= K, errors <= k, "
           "errors == 0")


@dataclass(frozen=True, slots=True)
class Construct:
    """A row of the table: ``verdicts[(skeleton, backend)]`` is None where the backend
    takes the construct on that skeleton, else the reason it does not."""

    key: str
    title: str
    ref: str
    verdicts: Mapping[tuple[str, str], str | None]
    #: advice where no backend takes the construct on a skeleton: what to write instead
    instead: Mapping[str, str] = field(default_factory=dict)

    def reason(self, skeleton: str, backend: str) -> str | None:
        return self.verdicts[(skeleton, backend)]

    def takers(self, skeleton: str) -> list[str]:
        return [b for b in BACKENDS if self.verdicts[(skeleton, b)] is None]


def _row(key: str, title: str, ref: str, tree: Mapping[str, str | None], diagram: Mapping[str, str | None],
         bdd: Mapping[str, str | None], instead: Mapping[str, str] | None = None) -> Construct:
    verdicts = {(s, b): spec[b] for s, spec in (("tree", tree), ("diagram", diagram), ("bdd", bdd)) for b in BACKENDS}
    return Construct(key, title, ref, verdicts, dict(instead or {}))


def every(**refused: str) -> dict[str, str | None]:
    """Every backend takes it, except those named (with their reason)."""
    return {b: refused.get(b) for b in BACKENDS}


def solvers(dp: str) -> dict[str, str | None]:
    """The solver backends take it; dp does not, for ``dp``'s reason."""
    return every(dp=dp)


def nobody(reason: str) -> dict[str, str | None]:
    return {b: reason for b in BACKENDS}


def only(backends: tuple[str, ...], reason: str) -> dict[str, str | None]:
    return {b: None if b in backends else reason for b in BACKENDS}


_HYPERPLANES = "hyperplane splits need continuous variables (Florio eqs 13-14)"
_FLOW_REALS = "the 'flow' encoding has continuous flows"
_ONE_ENCODING = "a bdd has one encoding (Hu's BDD2)"

TABLE: tuple[Construct, ...] = (
    # ---------------------------------------------------------------- skeletons (S)
    _row("S1", "a depth-limited tree, tree(depth <= D)", "Avellaneda; Brita; Nanfack",
         every(), nobody("not a diagram construct"), nobody("not a bdd construct")),
    _row("S2", "a size limit, tree(depth <= D, leaves <= L / nodes <= K)", "Nanfack; Avellaneda Thm 2",
         every(), nobody("not a diagram construct"), nobody("not a bdd construct")),
    _row("S3", "a depth range, depth in a..b, with minimize depth", "Avellaneda DT_depth; Hu P_bdd",
         every(), nobody("a diagram has fixed widths"),
         every()),
    _row("S4", "a decision diagram, diagram(widths = [...])", "Florio (1)-(12)",
         nobody("not a tree construct"), solvers(_NO_DP_DAG), nobody("not a bdd construct")),
    _row("S5", "an ordered BDD, bdd(depth = H, bias = ...)", "Hu BDD2; Sec. 3",
         nobody("not a tree construct"), nobody("not a diagram construct"), every()),
    _row("S6", "multivariate splits", "Florio (13)-(16)",
         only(("milp",), _HYPERPLANES), only(("milp",), _HYPERPLANES),
         nobody("an ordered BDD tests one feature per level (Hu)")),
    _row("S7", "raw thresholds, thresholds(all) or raw", "Brita (ConTree); Florio",
         every(), solvers(_NO_DP_DAG), every()),
    # ---------------------------------------------------------------- objectives (O)
    _row("O1", "the objective errors / accuracy", "Florio (18); Brita (2)",
         every(), solvers(_NO_DP_DAG), every()),
    _row("O2n", "the quantity nodes", "Florio (18); Avellaneda eq. 7",
         every(), solvers(_NO_DP_DAG),
         only(("dp",), f"the BddLevelsEncoding has no size handles ({_BDD_NODES}); dp counts them per subset")),
    _row("O2l", "the quantity leaves", "Nanfack; Avellaneda eq. 7",
         every(), nobody(_TREE_ONLY), nobody(f"the BddLevelsEncoding has no size handles ({_BDD_NODES})")),
    _row("O2f", "the quantity features_used", "Florio (18)",
         every(), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    _row("O2fo", "features_used in the objective", "Florio (18)",
         solvers(_DP_UNBOUNDED), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    _row("O2d", "the quantity depth in a constraint", "S1",
         nobody("bound the depth in the model, e.g. tree(depth <= D)"), nobody("a diagram's depth is its widths"),
         nobody("bound the depth in the model, e.g. bdd(depth = H)")),
    _row("O3", "a lexicographic objective (then)", "Avellaneda DT_size",
         every(), solvers(_NO_DP_DAG), every()),
    _row("O3d", "minimize depth without a depth range", "Avellaneda DT_depth",
         nobody("minimising the depth needs a depth range in the model, e.g. tree(depth in 1..10) (S3)"),
         nobody("a diagram has fixed widths"), nobody("minimising the depth needs bdd(depth in a..b) (S3)")),
    _row("Oabs", "abs(...) in the objective", "-",
         nobody("bound it in a constraint instead, e.g. abs(rate(1, A) - rate(1, B)) <= 0.05"),
         nobody("bound it in a constraint instead"), nobody("bound it in a constraint instead")),
    _row("Oec", "expected_cost in the objective or inside abs", "Nanfack 4.3",
         nobody("expected_cost is lowered as a term of a linear constraint with its cost table, e.g. "
                "expected_cost <= 2 with cost { a: 3, *: 1 } (not in the objective, not inside abs)"),
         nobody("expected_cost is a term of a linear constraint, not of the objective or abs"),
         nobody("expected_cost is a term of a linear constraint, not of the objective or abs")),
    # ---------------------------------------------------------------- constraints (C)
    _row("O4", "errors <= k (errors == 0: perfect classification)", "Avellaneda DT_size; Hu P_bdd; Florio (19)",
         every(), solvers(_NO_DP_DAG), every()),
    _row("C1", "a constraint on errors(G), accuracy(G), predicted, rate, tp/fp/tn/fn, or errors mixed with them", "Florio (19); Nanfack 4.7",
         every(), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    _row("C2", "abs(...) <= d (a parity difference)", "Florio (19); Nanfack DDP",
         every(), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    _row("C2x", "abs(...) bounded from below, or with a negative coefficient", "-",
         nobody("abs can only be bounded from above, e.g. abs(x) <= 0.05 (a convex use)"),
         nobody("abs can only be bounded from above"), nobody("abs can only be bounded from above")),
    _row("C3", "every node: samples >= S", "Florio (20)",
         every(), solvers(_NO_DP_DAG), nobody(_BDD_NODES)),
    _row("C5", "every leaf: samples >= m", "Nanfack 4.4",
         every(), nobody(_TREE_ONLY), nobody(_BDD_NODES),
         instead={"diagram": "bound the decision nodes instead, e.g. every node: samples >= m"}),
    _row("C6", "same_leaf(r1, r2)", "Nanfack 4.5",
         every(), nobody(_TREE_ONLY), nobody(_BDD_NODES)),
    _row("C7", "every path: a before b", "Nanfack 4.1",
         every(), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    _row("C8p", "every path: cost <= t with cost {...}", "Nanfack 4.2",
         every(), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    _row("C8x", "every path: cost bounded from below", "Nanfack 4.2",
         nobody("the per-path cost is bounded from above (Nanfack 4.2)"),
         nobody("the per-path cost is bounded from above"), nobody("the per-path cost is bounded from above")),
    _row("C8e", "expected_cost <= t with cost {...}", "Nanfack 4.3",
         every(), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    _row("C9u", "uses f, and/or/not of uses", "Nanfack 4.6",
         every(), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    _row("C9x", "every path: not (a and b)", "Nanfack 4.6",
         every(), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    _row("C10", "threshold f in [lo, hi]", "Nanfack Table 1 (CPTree-2)",
         every(), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    # ---------------------------------------------------------------- strategies and options (B)
    _row("B3", "strategy incremental", "Avellaneda Alg. 3",
         only(("maxsat",), "Avellaneda's Algorithm 3 runs on an incremental SAT solver (python-sat)"),
         nobody("Algorithm 3 is written for trees"), nobody("Algorithm 3 is written for trees")),
    _row("B6", "strategy lns", "issue 16 (layer LNS on Florio's MILP)",
         nobody("the layer search is written for decision diagrams"),
         only(("cp", "milp"), "the layer search re-solves Florio's flow encoding, on cp or milp"),
         nobody("the layer search is written for decision diagrams")),
    _row("B5", "the option preselect = k", "Hu heuristic MaxSAT-BDD",
         nobody("preselect applies to bdd models"), nobody("preselect applies to bdd models"),
         solvers("dp enumerates every subset: preselect is a heuristic for the solver encodings")),
    _row("Ef", "the 'flow' encoding", "Florio",
         every(dp="dp has no encoding", maxsat=_FLOW_REALS, cp=_FLOW_REALS),
         every(dp="dp has no encoding", maxsat=_FLOW_REALS), nobody(_ONE_ENCODING)),
    _row("Ep", "the 'paths' encoding", "Avellaneda",
         every(dp="dp has no encoding"), every(dp="dp has no encoding"), nobody(_ONE_ENCODING)),
)

BY_KEY: dict[str, Construct] = {c.key: c for c in TABLE}


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
    return list(_skeleton_uses(program)) + list(_objective_uses(program)) + list(_constraint_uses(program)) \
        + list(_solve_uses(program))


def _quote(span: Span | None, fallback: str) -> str:
    return span.quote() if span is not None and span.source is not None else fallback


def _skeleton_uses(p: CheckedProgram) -> Iterator[Use]:
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
    if p.dataset.raw_numeric:
        yield Use("S7", p.model_span, f"raw thresholds of {', '.join(p.dataset.raw_numeric)}")


def _quantities(form: LinearForm) -> Iterator[QuantityRef]:
    for q, _ in form.terms:
        yield q
        if q.inner is not None:
            yield from _quantities(q.inner)


_GROUP_KINDS = {"predicted", "tp", "fp", "tn", "fn"}


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
        elif q.kind in _GROUP_KINDS or (q.kind == "errors" and q.group is not None):
            yield Use("C1", span, text)


def _objective_uses(p: CheckedProgram) -> Iterator[Use]:
    o = p.objective
    text = _quote(o.span, "minimize errors")
    yield Use("O1", o.span, text)
    if len(o.levels) > 1:
        yield Use("O3", o.span, text)
    ranged = getattr(p.skeleton, "depth_range", None) is not None
    for level in o.levels:
        kinds = {q.kind for q in _quantities(level)}
        if "depth" in kinds and not ranged:
            yield Use("O3d", o.span, text)
        if "abs" in kinds:
            yield Use("Oabs", o.span, text)
        if "expected_cost" in kinds:
            yield Use("Oec", o.span, text)
        yield from _quantity_uses(level, o.span, text, in_objective=True)


def _constraint_uses(p: CheckedProgram) -> Iterator[Use]:
    for c in p.constraints:
        text = _quote(c.span, "") or str(c)  # str() of a deeply nested AST recurses: only without a span
        if isinstance(c, StructuralConstraint):
            node = c.node
            if isinstance(node, ast.Every) and isinstance(node.body, ast.OrderOnPath):
                yield Use("C7", c.span, text)
            elif isinstance(node, ast.Every) and isinstance(node.body, ast.PathExclusion):
                yield Use("C9x", c.span, text)
            elif isinstance(node, ast.UsesConstraint):
                yield Use("C9u", c.span, text)
            elif isinstance(node, ast.ThresholdRange):
                yield Use("C10", c.span, text)
            else:
                yield Use("C6", c.span, text)
            continue
        if c.scope == "node":
            yield Use("C3", c.span, text)
        elif c.scope == "leaf":
            yield Use("C5", c.span, text)
        elif c.scope == "path":
            cost = sum((coef for q, coef in c.form.terms if q.kind == "cost"), start=0)
            bounded_above = cost > 0 and c.op == "<=" or cost < 0 and c.op == ">="
            yield Use("C8p" if bounded_above else "C8x", c.span, text)
        else:
            yield from _relation_uses(c, text)


def _relation_uses(c: LinearConstraint, text: str) -> Iterator[Use]:
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
    yield from _quantity_uses(c.form, c.span, text)


def _solve_uses(p: CheckedProgram) -> Iterator[Use]:
    req = p.solve
    text = _quote(req.span, "solve")
    if req.strategy == "incremental":
        yield Use("B3", req.span, text)
    if req.strategy == "lns":
        yield Use("B6", req.span, text)
    if "preselect" in req.options:
        yield Use("B5", req.span, text)
    encoding = req.options.get("encoding")
    if encoding is not None:
        yield Use("Ef" if encoding == "flow" else "Ep", req.span, text)


def _line(span: Span | None) -> str:
    return f", line {span.line}" if span is not None and span.line else ""


def refusal(program: CheckedProgram, backend: str) -> UnsupportedConstruct | None:
    """The first construct of ``program`` that ``backend`` does not take on its skeleton,
    as the error to raise (naming the construct, the reason and the backends that take
    it), or None."""
    skeleton = skeleton_name(program)
    for u in uses(program):
        row = BY_KEY[u.key]
        reason = row.reason(skeleton, backend)
        if reason is None:
            continue
        takers = row.takers(skeleton)
        if not takers:
            return _nowhere(u, skeleton, reason)
        return UnsupportedConstruct(f"backend '{backend}' does not take {row.title} ('{u.text}'{_line(u.span)}) "
                                    f"on a {skeleton}: {reason}", u.span, f"backends that take it: {', '.join(takers)}")
    return None


def _nowhere(u: Use, skeleton: str, reason: str) -> UnsupportedConstruct:
    row = BY_KEY[u.key]
    elsewhere = [f"model {s} ({', '.join(row.takers(s))})" for s in SKELETONS if s != skeleton and row.takers(s)]
    advice = [row.instead[skeleton]] if skeleton in row.instead else []
    if elsewhere:
        advice.append(f"skeletons that take it: {'; '.join(elsewhere)}")
    hint = "; or ".join(advice) or None
    return UnsupportedConstruct(f"{row.title} ('{u.text}'{_line(u.span)}) is not supported on a {skeleton} by any "
                                f"backend of this version of odt: {reason}", u.span, hint)


def refused_everywhere(program: CheckedProgram) -> UnsupportedConstruct | None:
    """The first construct of ``program`` that no backend takes on its skeleton (the
    checker reports it), or None."""
    skeleton = skeleton_name(program)
    for u in uses(program):
        row = BY_KEY[u.key]
        if not row.takers(skeleton):
            return _nowhere(u, skeleton, row.reason(skeleton, BACKENDS[0]) or "")
    return None


def markdown() -> str:
    """The table as Markdown (``docs/support.md``): one row per construct and skeleton."""
    lines = ["# What works where", "",
             "Generated by `odtc support --markdown` from `compiler/support.py`; do not edit by hand.",
             "'yes': the backend takes the construct on that skeleton; otherwise the reason it does not.",
             "`auto` takes the first backend, in the order dp, maxsat, cp, milp, that takes every construct of a",
             "program (cp before maxsat for weighted rows or many distinct rows).", "",
             "| construct | ref | skeleton | " + " | ".join(BACKENDS) + " |",
             "|---|---|---|" + "---|" * len(BACKENDS)]
    for c in TABLE:
        for s in SKELETONS:
            if all((c.reason(s, b) or "").startswith("not a") for b in BACKENDS):
                continue  # a skeleton construct on another skeleton
            cells = ["yes" if c.reason(s, b) is None else f"no: {c.reason(s, b)}" for b in BACKENDS]
            lines.append(f"| {c.title} ({c.key}) | {c.ref} | {s} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def text() -> str:
    """The table as plain text: one line per construct and skeleton, the reasons are in
    ``markdown()``."""
    out = [f"{'key':<5} {'skeleton':<8} " + " ".join(f"{b:<6}" for b in BACKENDS) + " construct"]
    for c in TABLE:
        for s in SKELETONS:
            if all((c.reason(s, b) or "").startswith("not a") for b in BACKENDS):
                continue
            cells = " ".join(f"{'yes' if c.reason(s, b) is None else '-':<6}" for b in BACKENDS)
            out.append(f"{c.key:<5} {s:<8} {cells} {c.title}")
    out.append("")
    out.append("'-': not taken; odtc support --markdown gives every reason (docs/support.md).")
    return "\n".join(out) + "\n"
