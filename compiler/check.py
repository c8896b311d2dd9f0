"""AST + data -> ``CheckedProgram``: name resolution, types and arity (E5).

Input: an ``ast.Program`` and a ``RawTable`` (from the data block or from Python; None
when it failed to load, with that failure passed in). Output: a ``CheckedProgram`` with
the dataset binarised, groups evaluated to row masks, the skeleton and objective
normalised to ``LinearForm`` values.

Every problem of every pass is collected and raised together as one ``OdtError``: a
program whose data does not load still has its model, objective, constraints and solve
directive checked (names, arity, options). The passes, one module each:
``check_data`` (data block), ``check_groups`` (groups and cost tables), ``check_model``
(skeleton), ``check_exprs`` (quantities), ``check_constraints``, ``check_solve``.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from . import ast
from .check_constraints import check_constraint, safe_form
from .check_data import check_dataset, data_spec, load_table
from .check_exprs import Scope
from .check_groups import check_groups
from .check_model import check_model
from .check_solve import BACKEND_NAMES, SOLVE_OPTIONS, STRATEGIES, check_solve
from .checked import BddSkeleton, CheckedObjective, CheckedProgram, LinearForm, QuantityRef, SolveRequest
from .data import RawTable
from .regression import check_regression
from .errors import Collector, OdtError, OdtSyntaxError, OdtTypeError
from .source import Span

__all__ = ["BACKEND_NAMES", "SOLVE_OPTIONS", "STRATEGIES", "check", "data_spec", "load_table"]

_ITEM_WORDS = {ast.DataBlock: "data block", ast.ModelDef: "model", ast.Objective: "objective",
               ast.SolveStmt: "solve directive"}


def check(program: ast.Program, table: RawTable | None, data_error: OdtError | None = None,
          target: str | None = None) -> CheckedProgram:
    """Resolve and type-check ``program`` against ``table``; raise every problem at once.

    ``table`` is None when the data could not be loaded; ``data_error`` is then why, and
    it is reported together with the problems of the rest of the program. ``target``: the
    label column when Python names it (``odt.compile(..., target="y")``)."""
    errs = Collector()
    if not program.items:
        raise OdtSyntaxError("the program is empty: it has no statement", _start(program),
                             'a program needs at least  data "file.csv" { target <column> }  and  '
                             "model tree(depth <= 3)")
    if data_error is not None:
        errs.absorb(data_error)
    for kind, word in _ITEM_WORDS.items():
        for extra in program.of(kind)[1:]:
            errs.add(OdtTypeError, f"a program has at most one {word}", extra.span, "merge them into one")
    dataset = check_dataset(program, table, errs, target) if table is not None else None
    scope = check_groups(program, dataset, errs)
    models = program.of(ast.ModelDef)
    if models:
        skeleton, splits, mask = check_model(models[0], scope, errs)
        model_span = models[0].span
    else:
        errs.add(OdtTypeError, "the program has no model", _start(program), "add e.g.  model tree(depth <= 3)")
        skeleton, splits, mask, model_span = None, "univariate", None, program.span
    objectives = program.of(ast.Objective)
    objective = check_objective(objectives[0], scope, errs) if objectives else CheckedObjective(
        "minimize", (LinearForm.of(QuantityRef("errors")),), program.span)
    constraints = []
    for block in program.of(ast.ConstraintBlock):
        for c in block.constraints:
            constraints.extend(check_constraint(c, scope, errs))
    solves = program.of(ast.SolveStmt)
    solve = check_solve(solves[0], errs) if solves else SolveRequest("auto", {}, None, None)
    if "preselect" in solve.options and models and not isinstance(skeleton, BddSkeleton):
        errs.add(OdtTypeError, "'preselect' (Hu's CART feature pre-selection) applies to bdd models",
                 solves[0].span, "e.g. model bdd(depth = 4)  solve maxsat(preselect = 10)")
    target_values = check_regression(objective, constraints, dataset, errs)
    errs.raise_if_any()
    assert dataset is not None and mask is not None
    groups = {name: m for name, m in scope.groups.items() if m is not None}
    return CheckedProgram(program, dataset, groups, skeleton, splits, mask, objective, tuple(constraints), solve,
                          model_span, target_values)


def check_objective(o: ast.Objective, scope: Scope, errs: Collector) -> CheckedObjective:
    """The objective's levels as forms to minimise; a level with no quantity (``minimize
    5``) is an error: every classifier would be optimal."""
    levels = []
    for e in o.levels:
        n_before = len(errs.diagnostics)
        form = safe_form(scope, e, errs)
        if form.is_constant() and n_before == len(errs.diagnostics):  # else the 0 stands in for an error
            errs.add(OdtTypeError, f"this objective is the constant {_number(form.constant)}: every classifier "
                     "would be optimal", getattr(e, "span", o.span), "optimise a quantity, e.g. minimize errors")
        if o.sense == "maximize":
            form = form.scale(Fraction(-1))
        levels.append(form)
    return CheckedObjective("minimize", tuple(levels), o.span, maximized=o.sense == "maximize")


def _number(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):g}"


def _start(program: ast.Program) -> Span:
    return Span(program.span.source, 1, 1, 1, 1)
