"""The ``dp`` family: exact engines that search the data directly (the search IR of
``compiler.search``), no solver IR.

``backend.py`` is the adapter behind ``base.Backend``; ``contree/`` is ConTree (Brita et
al., AAAI 2025), the depth-limited error-minimising tree search on raw thresholds.
"""
from __future__ import annotations

from .backend import DpBackend

__all__ = ["DpBackend"]
