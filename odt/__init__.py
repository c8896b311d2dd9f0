"""odt: a declarative language for optimal, interpretable classifiers.

The public façade: ``odt.compile(text, data=...)`` returns a ``Program`` that you
``.solve(backend=..., time_limit=...)``; the ``SolveResult`` carries the verified
classifier. See README.md for a quick start.

The names below load on first use (PEP 562), so ``import odt`` and ``odtc --help`` do not
pay for the compiler and its numpy start-up; solver libraries (python-sat, CPMpy/OR-Tools,
Pyomo/HiGHS) and numba load only when a backend that needs them runs.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the eager imports, for type checkers
    from odt.compiler.classifiers import Tree, load_classifier
    from odt.compiler.errors import OdtError, OdtInputError
    from odt.program import Program, SolveResult, compile, compile_file
    from odt.sweeps import sweep

__all__ = ["OdtError", "OdtInputError", "Program", "SolveResult", "compile", "compile_file", "Tree", "load_classifier", "sweep"]

_WHERE = {
    "OdtError": "odt.compiler.errors",
    "OdtInputError": "odt.compiler.errors",
    "Program": "odt.program",
    "SolveResult": "odt.program",
    "compile": "odt.program",
    "compile_file": "odt.program",
    "Tree": "odt.compiler.classifiers",
    "load_classifier": "odt.compiler.classifiers",
    "sweep": "odt.sweeps",  # cross-validated grids on Dask (the sweep extra)
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'odt' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
