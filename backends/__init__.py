"""Backends: one module per solver family behind ``base.Backend`` (an explicit registry).

``get_backend(name)`` returns an instance; ``BACKENDS`` maps names to classes, in the
order ``auto`` prefers them: ``dp`` (ConTree, STreeD-style and BDD-enumeration engines,
orders of magnitude faster on the programs they take: see ``compiler/support.py``), ``maxsat`` (the fastest exact backend for the
Boolean path encoding of trees on binarised data), then ``cp``, then ``milp`` (the only one
with continuous variables, so the one that takes multivariate splits). ``auto`` takes the first
that the support table lets take the program (``odt.routing.route``), without building
any encoding to decide.
"""
from __future__ import annotations

from odt.compiler.errors import OdtError

from .base import Backend, Capability
from .dp import DpBackend
from .to_cpmpy import CpBackend
from .to_pyomo import MilpBackend
from .to_wcnf import MaxSatBackend

#: the order is the preference of ``auto`` among backends that accept a program
BACKENDS: dict[str, type[Backend]] = {"dp": DpBackend, "maxsat": MaxSatBackend, "cp": CpBackend, "milp": MilpBackend}
#: backends the language names that this version does not ship yet, and why
PLANNED: dict[str, str] = {}


def capabilities() -> dict[str, frozenset[Capability]]:
    return {name: cls.CAPABILITIES for name, cls in BACKENDS.items()}


def get_backend(name: str) -> Backend:
    if name in BACKENDS:
        return BACKENDS[name]()
    if name in PLANNED:
        raise OdtError(f"backend '{name}' ({PLANNED[name]}) is not available in this version of odt",
                       hint=f"available backends: {', '.join(BACKENDS)} (or auto)")
    raise OdtError(f"unknown backend '{name}'", hint=f"available backends: {', '.join(BACKENDS)} (or auto)")
