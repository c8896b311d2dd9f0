"""Backends: one module per solver family behind ``base.Backend`` (an explicit registry).

``get_backend(name)`` returns an instance; ``BACKENDS`` maps names to classes. ``auto``
is resolved by ``choose_backend``: today every lowered program is pure Boolean with
linear rows, so it goes to ``maxsat``.
"""
from __future__ import annotations

from odt.compiler import ir
from odt.compiler.errors import OdtError

from .base import Backend, Capability, required_capabilities
from .to_cpmpy import CpBackend
from .to_pyomo import MilpBackend
from .to_wcnf import MaxSatBackend

#: the order is the preference of ``auto`` among backends that accept a program
BACKENDS: dict[str, type[Backend]] = {"maxsat": MaxSatBackend, "cp": CpBackend, "milp": MilpBackend}
#: backends the language names that this version does not ship yet, and why
PLANNED = {
    "dp": "the ConTree dynamic-programming backend",
}


def capabilities() -> dict[str, frozenset[Capability]]:
    return {name: cls.CAPABILITIES for name, cls in BACKENDS.items()}


def get_backend(name: str) -> Backend:
    if name in BACKENDS:
        return BACKENDS[name]()
    if name in PLANNED:
        raise OdtError(f"backend '{name}' ({PLANNED[name]}) is not available in this version of odt",
                       hint=f"available backends: {', '.join(BACKENDS)} (or auto)")
    raise OdtError(f"unknown backend '{name}'", hint=f"available backends: {', '.join(BACKENDS)} (or auto)")


def choose_backend(model: ir.Model) -> str:
    """``auto``: the first registered backend whose capabilities cover the model."""
    need = set(required_capabilities(model))
    for name, cls in BACKENDS.items():
        if need <= cls.CAPABILITIES:
            return name
    return next(iter(BACKENDS))
