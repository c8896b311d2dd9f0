"""The support table: for each construct of the language, on each skeleton, which backend
takes it — or why not. The single answer to "what works where", and the one place a
refusal is made.

Input: a ``CheckedProgram``. Output: the constructs it uses (``uses``, from
``compiler/constructs.py``), the first one a backend refuses (``refusal``), the first one
no backend takes (``refused_everywhere``), and the table itself as text or Markdown
(``odtc support``; ``docs/support.md`` is its output). The checker's refusals, ``auto``'s
routing, the backends' checks before solving, dp's search lowering, the strategies and
the docs all read this table; a rule that depends on a combination of constructs is a
row of its own (``constructs.py`` recognises it), never a second decision elsewhere.

Every ``UnsupportedConstruct`` is made by ``unsupported`` below: the construct, its span,
the reason and the backends that take it. Refusals that depend on the data (dp's exact
integers overflowing, an encoding over the memory budget, a SAT solver that cannot keep
a time limit) are detected where they happen and reported through it too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .checked import CheckedProgram
from .constructs import Use, construct_uses, skeleton_name, uses
from .errors import UnsupportedConstruct
from .source import Span

__all__ = ["BACKENDS", "BY_KEY", "Construct", "SKELETONS", "TABLE", "Use", "markdown", "refusal", "refused_everywhere",
           "skeleton_name", "takes", "text", "unsupported", "uses"]

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
_DP_LEVELS = "dp minimises errors, nodes and leaves with non-negative weights (maximize accuracy is such an objective)"
_MULTI_BDD = "an ordered BDD tests one feature per level (Hu)"
_REGRESSION_TREES = "regression is for trees (dp)"
_SQUARED = ("the squared error is quadratic in the leaf values: no linear or Boolean encoding is exact "
            "(dp searches it exactly)")
_ABSOLUTE = "odt has no solver encoding of leaf values yet; dp searches it exactly"
_F1_RATIO = ("F1 = 2tp / (2tp + fp + fn) is a ratio of two quantities of the tree, not linear: dp maximises it "
             "by Dinkelbach's parametric search (a few exact cost-sensitive trees)")
_F1_TREES = "f1 is searched by dp on trees"


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
    _row("S3o", "a depth range whose objective does not begin with minimize depth", "Avellaneda DT_depth; Hu P_bdd",
         nobody("a depth range is searched depth by depth with 'minimize depth' (optionally 'then ...') as its "
                "objective, e.g. minimize depth then nodes"),
         nobody("not a diagram construct"),
         nobody("a depth range is searched depth by depth with 'minimize depth' as its objective")),
    _row("S4", "a decision diagram, diagram(widths = [...])", "Florio (1)-(12)",
         nobody("not a tree construct"), solvers(_NO_DP_DAG), nobody("not a bdd construct")),
    _row("S5", "an ordered BDD, bdd(depth = H, bias = ...)", "Hu BDD2; Sec. 3",
         nobody("not a tree construct"), nobody("not a diagram construct"), every()),
    _row("S6", "multivariate splits", "Florio (13)-(16)",
         only(("milp",), _HYPERPLANES), only(("milp",), _HYPERPLANES),
         nobody(_MULTI_BDD)),
    _row("S6p", "multivariate splits with the 'paths' encoding", "Florio (13)-(16)",
         nobody("hyperplanes are continuous variables, which the 'flow' encoding has"),
         nobody("hyperplanes are continuous variables, which the 'flow' encoding has"), nobody(_MULTI_BDD),
         instead={"tree": "drop encoding = \"paths\"", "diagram": "drop encoding = \"paths\""}),
    _row("S6s", "multivariate splits with constraints on nodes, leaves, paths, tests or row placement", "-",
         nobody("these constraints are lowered for univariate splits only"),
         nobody("these constraints are lowered for univariate splits only"), nobody(_MULTI_BDD),
         instead={s: "use 'splits univariate' (backends maxsat, cp, milp take these constraints)"
                  for s in ("tree", "diagram")}),
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
    _row("O2g", "a group quantity, rate or confusion count in the objective (errors(G), accuracy(G), predicted, "
         "rate, tp/fp/tn/fn)", "Florio (19); Nanfack 4.7",
         solvers("dp's objective levels add up errors, nodes and leaves (group quantities are taken in constraints)"),
         solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    _row("O2neg", "an objective that rewards errors, nodes or leaves (a negative weight, e.g. maximize errors)",
         "issue 24", solvers(_DP_LEVELS), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
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
    # ---------------------------------------------------------------- regression (R, issue 26)
    _row("R1", "a regression tree minimising squared_error (mse, r2)", "Breiman CART; STreeD; Quant-BnB",
         only(("dp",), _SQUARED), nobody(_REGRESSION_TREES), nobody(_REGRESSION_TREES)),
    _row("R1a", "a regression tree minimising absolute_error (mae)", "Breiman CART (LAD); STreeD",
         only(("dp",), _ABSOLUTE), nobody(_REGRESSION_TREES), nobody(_REGRESSION_TREES)),
    _row("Rneg", "a regression objective that rewards a loss (maximize squared_error)", "issue 26",
         nobody("a regression tree minimises its loss: every leaf predicts the value that makes it least"),
         nobody(_REGRESSION_TREES), nobody(_REGRESSION_TREES)),
    _row("R2", "a regression loss bounded from above (squared_error <= k, mse <= k, r2 >= x)", "issue 26",
         only(("dp",), _SQUARED), nobody(_REGRESSION_TREES), nobody(_REGRESSION_TREES)),
    _row("R3", "in a regression program, a loss bounded from below or combined with other quantities, or a "
         "constraint dp checks on Pareto fronts (uses, features_used <= k, nodes >= k)", "issue 26",
         nobody("dp checks caps on the tree's loss, nodes and leaves at the root (squared_error <= k, r2 >= x, "
                "nodes <= k), and keeps no Pareto front of losses; the solver backends have no regression encoding"),
         nobody(_REGRESSION_TREES), nobody(_REGRESSION_TREES)),
    _row("Ocm", "a misclassification cost in the objective: misclassification_cost(T), balanced_accuracy, or "
         "tp/fp/tn/fn/predicted of every row", "issue 26; STreeD cost-sensitive",
         every(), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    _row("Ocmx", "a misclassification cost objective with a constraint on errors, classes or groups, or with "
         "another level over the classes", "issue 26",
         solvers("dp reads a cost objective by reweighting or relabelling the rows, so only constraints that do "
                 "not read the classes (sizes, minimum leaf size, paths, thresholds) and later levels over nodes "
                 "and leaves go with it"),
         solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    _row("Of1", "maximize f1 (two classes, the positive class second)", "issue 26; STreeD F1 (Sec. 5)",
         only(("dp",), _F1_RATIO), nobody(_F1_TREES), nobody(_F1_TREES)),
    _row("Of1x", "f1 in a constraint, minimised, with another objective level or with a constraint on errors, "
         "classes or groups", "issue 26",
         nobody("f1 is taken as the only objective level, 'maximize f1', with constraints that do not read the "
                "classes (sizes, minimum leaf size, paths, thresholds): dp's Dinkelbach steps are "
                "cost-sensitive trees of the same program"), nobody(_F1_TREES), nobody(_F1_TREES)),
    _row("Ccm", "misclassification_cost(T) or balanced_accuracy in a constraint", "issue 26",
         every(), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
    # ---------------------------------------------------------------- constraints (C)
    _row("O4", "errors <= k (errors == 0: perfect classification)", "Avellaneda DT_size; Hu P_bdd; Florio (19)",
         every(), solvers(_NO_DP_DAG), every()),
    _row("Olb", "errors, nodes or leaves bounded from below (errors >= k, nodes >= k, errors == k)", "issue 24",
         every(), solvers(_NO_DP_DAG), solvers(_DP_BDD)),
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
    _row("C5u", "every leaf / every node: samples bounded from above", "Nanfack 4.4; Florio (20)",
         solvers("dp bounds the rows of each leaf and node from below (samples >= m)"), solvers(_NO_DP_DAG),
         nobody(_BDD_NODES)),
    _row("C11", "every leaf: errors <= e", "-",
         every(), nobody(_TREE_ONLY), nobody(_BDD_NODES),
         instead={"diagram": "bound the errors of the whole diagram instead, e.g. errors <= k"}),
    _row("C11x", "every leaf: errors bounded from below", "-",
         nobody("a per-leaf error bound is an upper bound: each leaf misclassifies at most e rows"),
         nobody(_TREE_ONLY), nobody(_BDD_NODES)),
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
    _row("B3x", "strategy incremental outside DT_depth / DT_size", "Avellaneda Alg. 3",
         nobody("'strategy incremental' (Avellaneda's Algorithm 3) takes a depth range, 'minimize depth' or "
                "'minimize depth then nodes', and one constraint 'errors <= k' or 'errors == 0'"),
         nobody("Algorithm 3 is written for trees"), nobody("Algorithm 3 is written for trees"),
         instead={"tree": "e.g. model tree(depth in 1..10)  minimize depth then nodes  subject to { errors == 0 }"}),
    _row("B6", "strategy lns", "issue 16 (layer LNS on Florio's MILP)",
         nobody("the layer search is written for decision diagrams"),
         only(("cp", "milp"), "the layer search re-solves Florio's flow encoding, on cp or milp"),
         nobody("the layer search is written for decision diagrams")),
    _row("B6x", "strategy lns with multivariate splits or several objective levels", "issue 16",
         nobody("the layer search is written for decision diagrams"),
         nobody("'strategy lns' (the layer large-neighbourhood search) takes a diagram with univariate splits and "
                "one objective level"),
         nobody("the layer search is written for decision diagrams"),
         instead={"diagram": "e.g. model diagram(widths = [1, 2, 3, 3])  minimize errors + nodes"}),
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


def unsupported(construct: str, reason: str, span: Span | None = None, *, backend: str | None = None,
                skeleton: str | None = None, takers: Sequence[str] = (), hint: str | None = None
                ) -> UnsupportedConstruct:
    """The one way odt says no: ``construct`` (what the program asks for, quoted with its
    line where it has one) is refused by ``backend`` (by every backend when None) on a
    ``skeleton``, for ``reason``; ``takers`` are the backends that take it, ``hint`` what
    to write instead. Every ``UnsupportedConstruct`` is made here.

    >>> unsupported("strategy lns ('solve cp strategy lns', line 3)", "the layer search is written for decision "
    ...             "diagrams", backend="cp", skeleton="tree").message
    "backend 'cp' does not take strategy lns ('solve cp strategy lns', line 3) on a tree: the layer search is written for decision diagrams"
    """
    on = f" on a {skeleton}" if skeleton else ""
    if backend is not None:
        message = f"backend '{backend}' does not take {construct}{on}: {reason}"
    else:
        message = f"{construct} is not supported{on} by any backend of this version of odt: {reason}"
    hints = ([f"backends that take it: {', '.join(takers)}"] if takers else []) + ([hint] if hint else [])
    return UnsupportedConstruct(message, span, "; ".join(hints) or None)


def _line(span: Span | None) -> str:
    return f", line {span.line}" if span is not None and span.line else ""


def _named(row: Construct, u: Use) -> str:
    return f"{row.title} ('{u.text}'{_line(u.span)})"


def refusal(program: CheckedProgram, backend: str, directive: bool = True) -> UnsupportedConstruct | None:
    """The first construct of ``program`` that ``backend`` does not take on its skeleton,
    as the error to raise (naming the construct, the reason and the backends that take
    it), or None; ``directive=False``: its constructs alone, whatever its solve directive
    asks. That a backend takes a program is kept (``CheckedProgram.memo``): a solve asks
    before it routes, and the search lowering asks again; a refusal is made anew each
    time (an exception raised twice would carry both tracebacks)."""
    memo = program.memo
    if memo.get(("takes", backend, directive)) or not directive and memo.get(("takes", backend, True)):
        return None  # (the constructs alone are a part of what the directive's verdict took)
    refused = _refusal(program, backend, directive)
    if refused is None:
        memo[("takes", backend, directive)] = True
    return refused


def _refusal(program: CheckedProgram, backend: str, directive: bool) -> UnsupportedConstruct | None:
    skeleton = skeleton_name(program)
    for u in (uses(program) if directive else construct_uses(program)):
        row = BY_KEY[u.key]
        reason = row.reason(skeleton, backend)
        if reason is None:
            continue
        takers = row.takers(skeleton)
        if not takers:
            return _nowhere(u, skeleton, reason)
        return unsupported(_named(row, u), reason, u.span, backend=backend, skeleton=skeleton, takers=takers)
    return None


def takes(program: CheckedProgram, backend: str, directive: bool = True) -> bool:
    """Whether ``backend`` takes ``program`` (``directive=False``: its constructs alone,
    whatever its solve directive asks, e.g. to build dp's search IR for a warm start)."""
    return refusal(program, backend, directive) is None


def _nowhere(u: Use, skeleton: str, reason: str) -> UnsupportedConstruct:
    row = BY_KEY[u.key]
    elsewhere = [f"model {s} ({', '.join(row.takers(s))})" for s in SKELETONS if s != skeleton and row.takers(s)]
    advice = [row.instead[skeleton]] if skeleton in row.instead else []
    if elsewhere:
        advice.append(f"skeletons that take it: {'; '.join(elsewhere)}")
    return unsupported(_named(row, u), reason, u.span, skeleton=skeleton, hint="; or ".join(advice) or None)


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
