"""Structure and path constraints (C3, C5-C9), written once against the skeleton's
structure handles (reach, real node, node tests column, paths) — never per encoding.

Input: the checked constraints and a structure: a ``TreeStructure`` (tree skeletons, both
encodings) or a ``DagStructure`` (diagram skeletons: Florio's family, where ``nodes`` are
the slots that send rows both ways). Output: IR clauses and linear rows. Leaves and
``same_leaf`` are tree constructs: on a diagram they are refused, naming the constraint.
Semantics (also in docs/language.md):

* ``every leaf: samples >= m`` (Nanfack 4.4) and ``every node: samples >= S`` (Florio
  eq. 20): the rows (of positive weight) reaching each leaf / each decision node. A row
  ``a*samples + c (op) 0`` is homogenised with the node's "exists" literal e, as
  ``a*samples + c*e (op) 0``, so it holds trivially where the node does not exist.
* ``same_leaf(r1, r2)`` (Nanfack 4.5): the two rows reach the same leaf.
* ``every path: a before b`` (Nanfack 4.1): a node testing b has an ancestor testing a.
* ``every path: not (a and b ...)`` (Nanfack 4.6): no path tests all of them.
* ``every path: cost <= tau with cost {...}`` (Nanfack 4.2): the tests on each path cost
  at most tau (each test pays its column's cost).
  The three path constraints are potentials propagated along the arcs that carry rows
  (``skeletons/dag_structure.py``), the same clauses for trees and diagrams: no path is
  enumerated.
* ``expected_cost <= tau with cost {...}`` (Nanfack 4.3): the weighted mean over the
  training rows of the cost of the path each row takes, sum_u w_u * sum_q [u reaches q
  and q tests col] * cost(col) / sum_u w_u, linearised with one literal y[u, q, col] per
  product (y >= R[u, q] and T[q, col] where a lower bound on the sum suffices, y <= each
  of them where an upper bound does).
* ``uses a``, and any and/or/not formula of ``uses`` atoms (Nanfack 4.6).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable, Union

from . import ast
from .errors import UnsupportedConstruct
from .ir import ModelBuilder, Origin
from .checked import LinearConstraint, StructuralConstraint
from .skeletons.dag_structure import DagStructure, cost_on_paths, exclusion_on_paths, order_on_paths
from .skeletons.tree_structure import TreeStructure

ONE = Fraction(1)

#: the structure handles a skeleton offers: R, Z, T, samples, root, internal, weights on
#: both; leaves (L, O, leaf_nodes) on trees only
Structure = Union[TreeStructure, DagStructure]


def refuse_on_diagram(what: str, span, hint: str = "") -> UnsupportedConstruct:
    """The refusal of a tree construct (leaves, ``same_leaf``) on a diagram skeleton."""
    quote = f"'{span.quote()}'" if span is not None and span.source is not None else "it"
    line = f" (line {span.line})" if span is not None and span.line else ""
    return UnsupportedConstruct(
        f"{what} {quote}{line} is a tree construct: a decision diagram has no leaves of its own (its rows end "
        "at class terminals shared by many paths)", span,
        hint or "on a diagram, bound the decision nodes instead, e.g. every node: samples >= 5, or use "
        "model tree(depth <= D)")


def mentioned_columns(constraints, column_of: Callable[[str], str]) -> set[str]:
    """The columns whose tests the constraints speak about (for the T handles)."""
    cols: set[str] = set()
    for c in constraints:
        if isinstance(c, LinearConstraint) and c.costs is not None:
            cols |= {col for col, _ in c.costs.costs}
            if c.costs.default:
                cols.add("*")
        elif isinstance(c, StructuralConstraint):
            node = c.node
            if isinstance(node, ast.Every) and isinstance(node.body, ast.OrderOnPath):
                cols |= {column_of(node.body.first.text), column_of(node.body.second.text)}
            elif isinstance(node, ast.Every) and isinstance(node.body, ast.PathExclusion):
                cols |= {column_of(n.text) for n in node.body.names}
            elif isinstance(node, ast.UsesConstraint):
                cols |= {column_of(n.text) for n in _uses_names(node.expr)}
    return cols


def lower_scoped(b: ModelBuilder, st: Structure, c: LinearConstraint, all_columns: list[str]) -> None:
    """``every leaf/node/path: <relation>`` as one row per leaf / node / path."""
    origin = Origin(("constraint", c.span.line if c.span else 0), c.span)
    if c.scope == "leaf" and isinstance(st, DagStructure):
        raise refuse_on_diagram("the constraint", c.span)
    if c.scope in ("leaf", "node"):
        assert all(qty.kind == "samples" for qty, _ in c.form.terms)
        a = sum((coef for _, coef in c.form.terms), Fraction(0))
        k = c.form.constant
        total = sum(st.counts)
        for q in (st.leaf_nodes if c.scope == "leaf" else st.internal):
            exists = st.O[q] if c.scope == "leaf" else st.Z[q]
            s_terms, s_const = st.leaf_samples(q) if c.scope == "leaf" else st.samples(q)
            terms = [(a * w, r) for w, r in s_terms if a * w]
            _guarded(b, terms, k + a * s_const, c.op, exists, (k, k + a * total), origin)
        return
    assert c.scope == "path" and c.costs is not None
    a = sum((coef for qty, coef in c.form.terms if qty.kind == "cost"), Fraction(0))
    if not (a > 0 and c.op == "<=" or a < 0 and c.op == ">="):
        raise UnsupportedConstruct(f"'{c.span.quote() if c.span else c}' (line {c.span.line if c.span else '?'}) "
                                   "bounds the cost of every path from below; the per-path cost is bounded from "
                                   "above (Nanfack 4.2)", c.span, "e.g. every path: cost <= 10 with cost {...}")
    costs = {col: c.costs.of(col) for col in all_columns}
    cost_on_paths(b, st, costs, -c.form.constant / a)


def _guarded(b: ModelBuilder, terms: list[tuple[Fraction, int]], constant: Fraction, op: str, exists: int,
             value_range: tuple[Fraction, Fraction], origin: Origin) -> None:
    """``exists => terms + constant (op) 0``, with the big-M of the value's range on the
    other side (where the node does not exist, its row must hold whatever the value)."""
    lo, hi = min(value_range), max(value_range)
    if op in ("<=", "==") and hi > 0:  # terms + constant <= hi * (1 - exists)
        b.linear(terms + [(hi, exists)], "<=", hi - constant, origin)
    if op in (">=", "==") and lo < 0:  # terms + constant >= lo * (1 - exists)
        b.linear(terms + [(lo, exists)], ">=", lo - constant, origin)


def lower_expected_cost(b: ModelBuilder, st: Structure, c: LinearConstraint, columns: list[str],
                        rest: tuple[list[tuple[Fraction, int]], Fraction]) -> None:
    """``a * expected_cost + rest (op) 0`` (Nanfack 4.3), ``rest`` the other terms and the
    constant, already lowered; the row is multiplied by the total weight W > 0."""
    assert c.costs is not None
    origin = Origin(("constraint", c.span.line if c.span else 0), c.span)
    a = sum((coef for q, coef in c.form.terms if q.kind == "expected_cost"), Fraction(0))
    total = sum(st.weights, Fraction(0))
    rest_terms, rest_constant = rest
    if total == 0:  # no row of positive weight: the expected cost is 0
        total = Fraction(1)
    terms = [(total * coef, lit) for coef, lit in rest_terms]
    for u, w in enumerate(st.weights):
        for q in st.internal:
            for col in columns:
                coef = a * w * c.costs.of(col)
                if not coef or (q, col) not in st.T:
                    continue
                if q == st.root:  # every row reaches the root
                    terms.append((coef, st.T[q, col]))
                    continue
                y = b.new_aux(f"pays_{u}_{q}_{col}")
                r, t = st.R[u, q], st.T[q, col]
                grows = coef > 0 if c.op == "<=" else coef < 0 if c.op == ">=" else True
                shrinks = coef < 0 if c.op == "<=" else coef > 0 if c.op == ">=" else True
                if grows:  # y >= r and t
                    b.clause((-r, -t, y))
                if shrinks:  # y <= r, y <= t
                    b.clause((-y, r))
                    b.clause((-y, t))
                terms.append((coef, y))
    if not terms:  # decided by the data alone
        holds = {"<=": rest_constant <= 0, ">=": rest_constant >= 0, "==": rest_constant == 0}[c.op]
        if not holds:
            b.clause(())
        return
    b.linear(terms, c.op, -total * rest_constant, origin)


def lower_structural(b: ModelBuilder, st: Structure, c: StructuralConstraint, column_of: Callable[[str], str],
                     bucket_of_row: Callable[[str], int | None]) -> None:
    node = c.node
    if isinstance(node, ast.Every) and isinstance(node.body, ast.OrderOnPath):
        order_on_paths(b, st, column_of(node.body.first.text), column_of(node.body.second.text))
        return
    if isinstance(node, ast.Every) and isinstance(node.body, ast.PathExclusion):
        exclusion_on_paths(b, st, [column_of(n.text) for n in node.body.names])
        return
    if isinstance(node, ast.UsesConstraint):
        b.clause((_uses(b, st, node.expr, column_of),))
        return
    if isinstance(node, ast.CallConstraint) and node.call.name.text == "same_leaf":
        if isinstance(st, DagStructure):
            raise refuse_on_diagram("the constraint", c.span)
        refs = [_row_ref(a) for a in node.call.args]
        u1, u2 = bucket_of_row(refs[0]), bucket_of_row(refs[1])
        if u1 is None or u2 is None or u1 == u2:
            return  # a row of weight 0 is not placed; rows of one bucket share every leaf
        for q in st.leaf_nodes:  # same leaf: each leaf is reached by both or by neither
            l1, l2 = st.L[u1, q], st.L[u2, q]
            b.clause((-l1, l2))
            b.clause((l1, -l2))
        return
    raise UnsupportedConstruct(f"the constraint '{c.span.quote() if c.span else node}' "
                               f"(line {c.span.line if c.span else '?'}) is not lowered yet", c.span)


def _row_ref(a) -> str:
    if isinstance(a, ast.Quantity):
        return a.name.text
    if isinstance(a, ast.StringArg):
        return a.value
    if isinstance(a, ast.Number):
        return str(a.value.numerator) if a.value.denominator == 1 else str(float(a.value))
    return str(a)


def _uses(b: ModelBuilder, st: Structure, e, column_of) -> int:
    """A literal equivalent to the ``uses`` formula ``e`` (Tseitin)."""
    if isinstance(e, ast.UsesAtom):
        col = column_of(e.name.text)
        lit = b.new_aux(f"uses_{col}")
        tests = [st.T[q, col] for q in st.internal]
        for t in tests:
            b.clause((-t, lit))
        b.clause([-lit] + tests)
        return lit
    if isinstance(e, ast.UsesNot):
        return -_uses(b, st, e.item, column_of)
    parts = [_uses(b, st, i, column_of) for i in e.items]
    lit = b.new_aux("uses_and" if isinstance(e, ast.UsesAnd) else "uses_or")
    if isinstance(e, ast.UsesAnd):
        for p in parts:
            b.clause((-lit, p))
        b.clause([-p for p in parts] + [lit])
    else:
        for p in parts:
            b.clause((-p, lit))
        b.clause([-lit] + parts)
    return lit


def _uses_names(e) -> list[ast.Name]:
    if isinstance(e, ast.UsesAtom):
        return [e.name]
    if isinstance(e, ast.UsesNot):
        return _uses_names(e.item)
    return [n for i in e.items for n in _uses_names(i)]
