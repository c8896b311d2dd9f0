"""ConTree (Brita, van der Linden, Demirović, AAAI 2025): optimal depth-limited
classification trees on continuous features by dynamic programming with branch and
bound. Pure numpy in and out; ``kernels`` holds the numba-compiled depth-two search."""
from __future__ import annotations

from .engine import contree_result
from .search import DPLeaf, DPNode, DPResult, DPSplit, PruningRules, errors, optimal_tree, predict, tree_depth

__all__ = ["DPLeaf", "DPNode", "DPResult", "DPSplit", "PruningRules", "contree_result", "errors", "optimal_tree",
           "predict", "tree_depth"]
