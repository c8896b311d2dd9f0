"""Which quantities a program can push *up* (issue 24): the direction in which a handle
defined by a one-sided implication would be unsound.

Input: a ``CheckedProgram``. Output: the quantity kinds (``errors``, ``nodes``,
``leaves``, ...) that some objective level or linear constraint rewards for being larger:

* an objective level (always a form to minimise; ``maximize`` is stored negated) with a
  negative coefficient on the quantity;
* a constraint ``form <= 0`` with a negative coefficient, ``form >= 0`` with a positive
  one, ``form == 0`` with any;
* any quantity inside ``abs(...)``: a parity ``abs(E) <= d`` bounds E on both sides.

A handle that can only *overstate* its quantity (e.g. "a row reaching leaf v makes v
used", without the converse) is exact at every optimum where the quantity is pushed down
only, since lowering it never hurts; where the quantity is pushed up it must be defined
in both directions. Encodings read this set to add the converse only where it matters
(``lower.Needs.exact_size``); the cheap handles (errors, predictions, tests) are always
exact.

>>> import odt
>>> data = {"a": [0, 1, 1], "class": [0, 1, 1]}
>>> sorted(pushed_up(odt.compile("model tree(depth <= 1) maximize nodes - errors", data=data).checked))
['nodes']
>>> sorted(pushed_up(odt.compile("model tree(depth <= 1) minimize nodes subject to { errors >= 1 }", data=data).checked))
['errors']
"""
from __future__ import annotations

from fractions import Fraction

from .checked import CheckedProgram, LinearConstraint, LinearForm


def pushed_up(program: CheckedProgram) -> frozenset[str]:
    """The quantity kinds that some objective level or linear constraint rewards for
    being larger (module docstring)."""
    up: set[str] = set()
    for level in program.objective.levels:
        _collect(level, "<=", up)  # minimised: like a row bounded from above
    for c in program.constraints:
        if isinstance(c, LinearConstraint):
            _collect(c.form, c.op, up)
    return frozenset(up)


def _collect(form: LinearForm, op: str, up: set[str]) -> None:
    for q, coef in form.terms:
        if q.kind == "abs" and q.inner is not None:
            up |= q.inner.kinds()
            for inner, _ in q.inner.terms:  # nested abs: everything inside, both ways
                if inner.inner is not None:
                    up |= inner.inner.kinds()
            continue
        if op == "==" or (op == "<=" and coef < Fraction(0)) or (op == ">=" and coef > Fraction(0)):
            up.add(q.kind)
