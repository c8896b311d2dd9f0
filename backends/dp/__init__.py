"""The ``dp`` family: exact search engines that work on the data directly, no IR.

``backend.py`` is the adapter behind ``base.Backend``; ``contree/`` is ConTree (Brita et
al., AAAI 2025), the depth-limited error-minimising tree search on raw thresholds.
"""
from __future__ import annotations

from .backend import DpBackend, fragment_error

__all__ = ["DpBackend", "fragment_error"]
