"""STreeD-style dynamic programming for constrained trees (van der Linden, de Weerdt &
Demirović, NeurIPS 2023; MurTree, Demirović et al., JMLR 2022).

Input: a ``compiler.search.TreeSearch`` outside ConTree's plain fragment. Output: an
optimal tree (or the best found on a time-out) as an ``anytime.EngineResult``.

``binarize`` turns the search matrix into 0/1 split candidates, ``branch`` holds the
path constraints as branch state (one ingredient per constraint), ``solve`` is the
recursion over (rows, depth budget, node budget, branch state) with its cache, and
``root`` picks the optimum over the objective levels and caps at the root. One objective
level ``errors + c * nodes`` without an error cap (cost complexity, ``nodes <= K``) runs
``bounded``: the same recursion by branch and bound (upper bounds passed down, lower
bounds cached and from similarity), depth three in one compiled call (``kernels``). Programs with
global constraints (issue 14) run ``pareto``: the same recursion with a Pareto front per
subproblem (``fronts``), checked at the root.
"""
from __future__ import annotations

from .pareto import optimal_front_tree
from .root import optimal_constrained_tree

__all__ = ["optimal_constrained_tree", "optimal_front_tree"]
