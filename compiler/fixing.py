"""Fix variables of an IR model and propagate what follows: ``ir.Model -> ir.Model``.

Input: a model and values for some of its boolean variables (a large-neighbourhood
search fixes most of a diagram's structure, ``odt/strategies/diagram_lns.py``). Output: a
model with the same variables (same indices, so decoding and objective evaluation are
unchanged) and the same solutions restricted to those values:

* each fixed boolean gets a unit clause;
* zeros are propagated through the linear rows: a row ``sum c_i t_i <= 0`` (or the
  matching side of ``==``, or ``>=`` negated) whose remaining terms all have ``c_i > 0``
  are boolean literals or variables with ``lb == 0`` forces every one of
  them to 0 — e.g. a flow under an arc fixed off (Florio's (9)). Forced booleans get unit
  clauses, forced integer/real variables the bounds ``[v, v]``;
* every row is rewritten with its known terms moved to the right-hand side; a row left
  without terms is dropped when it holds and becomes the empty clause (infeasible) when
  it does not.

Clauses, indicators and objectives are kept as they are (their fixed variables are pinned
by the unit clauses and bounds). The pass only removes work a solver's presolve would
also remove, but before the (Python) model build, which dominates small solves.
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Mapping

from .ir import Clause, Linear, Model, VarKind

ZERO = Fraction(0)


def fix_booleans(model: Model, values: Mapping[int, bool]) -> Model:
    """``model`` with the boolean variables of ``values`` fixed (module docstring).

    >>> from odt.compiler.ir import ModelBuilder, Origin
    >>> b = ModelBuilder(); y = b.new_bool(("y",)); z = b.new_var(("z",), VarKind.REAL, 0.0, 1.0)
    >>> b.linear([(Fraction(1), z), (Fraction(-1), y)], "<=", Fraction(0), Origin(("arc",)))
    >>> m = fix_booleans(b.build(), {y: False})
    >>> m.variables[z - 1].ub, len(m.linears), m.clauses[0].lits
    (0.0, 0, (-1,))
    """
    return Fixer(model).fix(values)


class Fixer:
    """``fix_booleans`` for many sets of values on one model: the rows are read once."""

    def __init__(self, model: Model) -> None:
        self.model = model
        variables = model.variables
        self.is_bool = [False] + [v.kind is VarKind.BOOL for v in variables]
        self.lb_ok = [False] + [v.kind is VarKind.BOOL or v.lb == 0 for v in variables]
        floats: dict[Fraction, float] = {}
        # the rows in floats for the propagation (its decisions need signs and zero tests only)
        self.rows = [(row.op, float(row.rhs), [(floats.get(c) or floats.setdefault(c, float(c)), t)
                                                for c, t in row.terms]) for row in model.linears]
        self.rows_of: dict[int, list[int]] = {}
        for i, (_, _, terms) in enumerate(self.rows):
            for _, t in terms:
                self.rows_of.setdefault(abs(t), []).append(i)

    def fix(self, values: Mapping[int, bool]) -> Model:
        model, is_bool, lb_ok, rows, rows_of = self.model, self.is_bool, self.lb_ok, self.rows, self.rows_of
        variables = model.variables
        known: dict[int, int] = {v: int(b) for v, b in values.items()}  # forced values are 0 or 1 too
        queue = list(range(len(rows)))
        queued = set(queue)
        while queue:
            i = queue.pop()
            queued.discard(i)
            op, slack, terms = rows[i]
            open_terms = []
            for c, t in terms:
                x = known.get(abs(t))
                if x is None:
                    open_terms.append((c, t))
                else:
                    slack -= c * (1 - x if t < 0 and is_bool[-t] else x)
            if not open_terms or abs(slack) > 1e-9:
                continue
            for sign, applies in ((1, op in ("<=", "==")), (-1, op in (">=", "=="))):
                if not applies or not all(sign * c > 0 and (t < 0 or lb_ok[t]) for c, t in open_terms):
                    continue
                for _, t in open_terms:  # every remaining term is 0
                    v = abs(t)
                    if v in known:
                        continue
                    known[v] = 1 if t < 0 else 0
                    for j in rows_of.get(v, ()):
                        if j not in queued:
                            queued.add(j)
                            queue.append(j)
                break

        def value(t: int) -> int | None:
            x = known.get(abs(t))
            if x is None:
                return None
            return 1 - x if t < 0 and is_bool[-t] else x

        linears: list[Linear] = []
        clauses = list(model.clauses)
        for row in model.linears:
            if not any(abs(t) in known for _, t in row.terms):
                linears.append(row)
                continue
            rest, rhs = _reduce(row, value)
            if rest:
                linears.append(Linear(tuple(rest), row.op, rhs, row.origin))
            elif not {"<=": ZERO <= rhs, ">=": ZERO >= rhs, "==": rhs == 0}[row.op]:
                clauses.append(Clause(()))  # the fixed values break this row: infeasible
        new_vars = list(variables)
        for v, x in known.items():
            if is_bool[v]:
                clauses.append(Clause((v if x else -v,)))
            else:
                new_vars[v - 1] = dataclasses.replace(variables[v - 1], lb=float(x), ub=float(x))
        return dataclasses.replace(model, variables=tuple(new_vars), clauses=tuple(clauses), linears=tuple(linears))


def _reduce(row: Linear, value) -> tuple[list[tuple[Fraction, int]], Fraction]:
    """The row's unknown terms and its right-hand side with the known ones moved over."""
    rest = []
    rhs = row.rhs
    for c, t in row.terms:
        x = value(t)
        if x is None:
            rest.append((c, t))
        elif x:
            rhs -= c * x
    return rest, rhs
