"""numba's ``njit`` for the ConTree kernels (``kernels``, ``kernels_wide``,
``kernels_answer``), or a no-op decorator when numba is not importable (``AVAILABLE``
False: search.py then runs its pure-numpy code)."""
from __future__ import annotations


def _import_numba_without_blas() -> None:
    """Import numba's array-math registry with scipy.linalg hidden, so that numba records
    "no BLAS" instead of importing scipy.linalg (0.3-0.45 s of every dp process on this
    machine; these kernels use no BLAS). Skipped when scipy.linalg is already loaded (then
    it costs nothing) or when ``ODT_NUMBA_BLAS`` is set (a process that also compiles
    numba code calling np.dot / np.linalg needs it)."""
    import importlib.abc
    import os
    import sys

    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules or os.environ.get("ODT_NUMBA_BLAS"):
        return

    class _HideScipyLinalg(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
            if name == "scipy.linalg" or name.startswith("scipy.linalg."):
                raise ImportError("hidden while numba loads (odt: no BLAS needed)")
            return None

    blocker = _HideScipyLinalg()
    sys.meta_path.insert(0, blocker)
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        sys.meta_path.remove(blocker)


try:  # pragma: no cover - depends on the environment
    _import_numba_without_blas()
    from numba import njit

    AVAILABLE = True
except ImportError:  # pragma: no cover
    AVAILABLE = False

    def njit(*args, **kwargs):  # type: ignore[no-redef]
        if args and callable(args[0]):
            return args[0]
        return lambda fn: fn
