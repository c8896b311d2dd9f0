"""The compiled kernels (``kernels.py``), imported on first use: importing numba takes
about half a second, which only a process that runs the search should pay."""
from __future__ import annotations

from types import ModuleType
from typing import Optional

_loaded: Optional[ModuleType] = None


def _load_kernels() -> ModuleType:
    global _loaded
    if _loaded is None:
        from . import kernels

        _loaded = kernels
    return _loaded


def _load_answer_kernels() -> ModuleType:
    """``kernels_answer.py`` (imports ``kernels`` for its ``njit``)."""
    from . import kernels_answer

    return kernels_answer


def _load_wide_kernels() -> ModuleType:
    """``kernels_wide.py`` (the many-class kernels)."""
    from . import kernels_wide

    return kernels_wide


def _load_root_kernels() -> ModuleType:
    """``kernels_root.py`` (the compiled depth-three nodes)."""
    from . import kernels_root

    return kernels_root


def _load_root_ml_kernels() -> ModuleType:
    """``kernels_root_ml.py`` (the compiled depth-three root with a minimum leaf size)."""
    from . import kernels_root_ml

    return kernels_root_ml
