"""Structure and path constraints (C3, C5-C9), written once against the skeleton's
structure handles (reach, real node, node tests column, paths) — never per encoding.

Input: the checked constraints and a ``TreeStructure``. Output: IR clauses and linear
rows. Semantics (also in docs/language.md):

* ``every leaf: samples >= m`` (Nanfack 4.4) and ``every node: samples >= S`` (Florio
  eq. 20): the rows (of positive weight) reaching each leaf / each decision node. A row
  ``a*samples + c (op) 0`` is homogenised with the node's "exists" literal e, as
  ``a*samples + c*e (op) 0``, so it holds trivially where the node does not exist.
* ``same_leaf(r1, r2)`` (Nanfack 4.5): the two rows reach the same leaf.
* ``every path: a before b`` (Nanfack 4.1): a node testing b has an ancestor testing a.
* ``every path: not (a and b ...)`` (Nanfack 4.6): no path tests all of them.
* ``every path: cost <= tau with cost {...}`` (Nanfack 4.2): the tests on each path cost
  at most tau (each test pays its column's cost).
* ``uses a``, and any and/or/not formula of ``uses`` atoms (Nanfack 4.6).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable

from . import ast
from .errors import UnsupportedConstruct
from .ir import ModelBuilder, Origin
from .program_types import LinearConstraint, StructuralConstraint
from .skeletons.tree_structure import TreeStructure

ONE = Fraction(1)


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


def lower_scoped(b: ModelBuilder, st: TreeStructure, c: LinearConstraint, all_columns: list[str]) -> None:
    """``every leaf/node/path: <relation>`` as one row per leaf / node / path."""
    origin = Origin(("constraint", c.span.line if c.span else 0), c.span)
    if c.scope in ("leaf", "node"):
        nodes = st.leaves if c.scope == "leaf" else st.internal
        for q in nodes:
            exists = st.nonempty(q) if c.scope == "leaf" else st.Z[q]
            terms: list[tuple[Fraction, int]] = []
            constant = c.form.constant
            for qty, coef in c.form.terms:
                assert qty.kind == "samples"
                if q == 1:  # every row reaches the root
                    constant += coef * sum(st.counts)
                else:
                    terms.extend((coef * w, r) for w, r in st.samples(q))
            if constant:
                terms.append((constant, exists))
            if not terms:
                continue
            b.linear(terms, c.op, Fraction(0), origin)
        return
    assert c.scope == "path" and c.costs is not None
    for path in st.paths():
        terms = []
        for qty, coef in c.form.terms:
            assert qty.kind == "cost"
            for q in path:
                for col in all_columns:
                    cost = c.costs.of(col)
                    if cost and (q, col) in st.T:
                        terms.append((coef * cost, st.T[q, col]))
        b.linear(terms, c.op, -c.form.constant, origin)


def lower_structural(b: ModelBuilder, st: TreeStructure, c: StructuralConstraint, column_of: Callable[[str], str],
                     bucket_of_row: Callable[[str], int | None], X: dict) -> None:
    node = c.node
    if isinstance(node, ast.Every) and isinstance(node.body, ast.OrderOnPath):
        first, second = column_of(node.body.first.text), column_of(node.body.second.text)
        for q in st.internal:  # a node testing `second` has an ancestor testing `first`
            b.clause([-st.T[q, second]] + [st.T[a, first] for a in st.ancestors(q)])
        return
    if isinstance(node, ast.Every) and isinstance(node.body, ast.PathExclusion):
        cols = [column_of(n.text) for n in node.body.names]
        for i, path in enumerate(st.paths()):
            on_path = []
            for col in cols:
                lit = b.new_aux(f"on_path_{i}_{col}")
                for q in path:
                    b.clause((-st.T[q, col], lit))
                on_path.append(lit)
            b.clause(-lit for lit in on_path)
        return
    if isinstance(node, ast.UsesConstraint):
        b.clause((_uses(b, st, node.expr, column_of),))
        return
    if isinstance(node, ast.CallConstraint) and node.call.name.text == "same_leaf":
        refs = [_row_ref(a) for a in node.call.args]
        u1, u2 = bucket_of_row(refs[0]), bucket_of_row(refs[1])
        if u1 is None or u2 is None or u1 == u2:
            return  # a row of weight 0 is not placed; rows of one bucket share every leaf
        for level in range(st.depth):
            x1, x2 = X[u1, level], X[u2, level]
            b.clause((-x1, x2))
            b.clause((x1, -x2))
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


def _uses(b: ModelBuilder, st: TreeStructure, e, column_of) -> int:
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
