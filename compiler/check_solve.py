"""The ``solve`` directive -> ``SolveRequest`` (B1, B6).

Input: an ``ast.SolveStmt``. Output: the backend name, the options with their values
validated (a positive finite ``time_limit``, non-negative integer ``threads`` and ``seed``,
an ``encoding`` of ``paths`` or ``flow``, a positive ``preselect``) and the strategy. Which
SAT solvers ``solver`` may name is the backend's to say (``Backend.check_options``), as
the compiler does not import backends.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from . import ast
from .checked import SolveRequest
from .errors import Collector, OdtNameError, OdtTypeError, did_you_mean
from .ranges import positive_seconds

BACKEND_NAMES = ("auto", "maxsat", "cp", "milp", "dp")
SOLVE_OPTIONS = ("time_limit", "threads", "seed", "verbose", "encoding", "solver", "preselect")
STRATEGIES = ("default", "incremental", "lns")
#: Upper limits of the integer options (solvers take 32-bit values).
INT_OPTION_MAX = {"threads": 1024, "seed": 2**31 - 1, "preselect": 10**6}


def check_solve(s: ast.SolveStmt, errs: Collector) -> SolveRequest:
    backend = s.backend.text
    if backend not in BACKEND_NAMES:
        errs.add(OdtNameError, f"unknown backend '{backend}'", s.backend.span, did_you_mean(backend, BACKEND_NAMES, "backend"))
    options: dict[str, Any] = {}
    for opt in s.options:
        key = opt.name.text
        if key not in SOLVE_OPTIONS:
            errs.add(OdtNameError, f"unknown solve option '{key}'", opt.name.span, did_you_mean(key, SOLVE_OPTIONS, "option"))
            continue
        if key in options:
            errs.add(OdtTypeError, f"solve option '{key}' given twice", opt.span)
            continue
        value = _option(key, opt, errs)
        if value is not None:
            options[key] = value
    strategy = s.strategy.text if s.strategy else None
    if s.strategy is not None and strategy not in STRATEGIES:
        assert strategy is not None
        errs.add(OdtNameError, f"unknown strategy '{strategy}'", s.strategy.span, did_you_mean(strategy, STRATEGIES, "strategy"))
    return SolveRequest(backend, options, strategy, s.span)


def _option(key: str, opt: ast.SolveOption, errs: Collector) -> Any:
    """The option's value, or None (and a diagnostic) when it is not valid."""
    value = opt.value
    if key == "time_limit":
        seconds = float(value) if isinstance(value, (int, float, Fraction)) else None
        if seconds is None or positive_seconds(seconds) is not None:
            errs.add(OdtTypeError, "time_limit must be a positive duration such as 60s", opt.span)
            return None
        return seconds
    if key == "encoding":
        if value not in ("paths", "flow"):
            errs.add(OdtNameError, f"unknown encoding '{value}'", opt.span, did_you_mean(str(value), ("paths", "flow"), "encoding"))
            return None
        return value
    if key == "solver":
        if not isinstance(value, str) or not value:
            errs.add(OdtTypeError, 'solver names a SAT solver, e.g. solver = "g3"', opt.span)
            return None
        return value
    if key == "verbose":
        if isinstance(value, Fraction) and value in (0, 1):
            return bool(value)
        if value in ("true", "false"):
            return value == "true"
        errs.add(OdtTypeError, "verbose is true or false (or 1 or 0)", opt.span)
        return None
    low = 1 if key == "preselect" else 0
    if not isinstance(value, Fraction) or value.denominator != 1 or not low <= value <= INT_OPTION_MAX[key]:
        what = "a positive number of features" if key == "preselect" else "a non-negative integer"
        errs.add(OdtTypeError, f"{key} must be {what} (at most {INT_OPTION_MAX[key]})", opt.span)
        return None
    return int(value)
