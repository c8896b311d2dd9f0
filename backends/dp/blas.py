"""BLAS held to one thread around a dp engine's many small matrix products.

OpenBLAS's threads spin against each other on a loaded machine: the regression depth-two
solver's pair sums (three products of a subproblem's (rows x candidates) matrix with
itself) took 0.64 s each with the default threads on two busy cores and about 9 ms with
one (computers, 6259 rows, 25 columns; a depth-three solve 40 s against 5 s). The BDD
enumeration does the same for its Gram products (``bdd/search.py``).
"""
from __future__ import annotations

import contextlib

_CONTROLLER: list = []  # the threadpoolctl controller, made once (it scans the loaded libraries)


def one_thread() -> contextlib.AbstractContextManager:
    """A context in which BLAS runs on one thread (nothing when threadpoolctl is absent)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return contextlib.nullcontext()
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")
