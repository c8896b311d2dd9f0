"""Path constraints as branch state: the DP ingredients of STreeD (van der Linden et al.,
NeurIPS 2023, Sec. 4: a constraint is separable over the branches when it is a condition
on the path to a node), one per constraint of the search IR.

Each ingredient has an initial state, a feasibility test of a candidate split in a state
(``allowed``) and the state update for the split's children. The combined state is a
hashable tuple, part of the DP cache key:

* ``PathOrder`` (C7, Nanfack 4.1): the set of orders whose ``first`` was tested above; a
  candidate of ``second`` needs its order in the set.
* ``PathExclusion`` (C9, Nanfack 4.6): per exclusion, the groups tested above; a
  candidate may not complete every group.
* ``PathCost`` (C8, Nanfack 4.2): the cost paid above; a candidate's test must keep the
  path within the bound (every test on the path, its own included, pays).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from odt.compiler.search import TreeSearch

State = tuple  # (orders seen bitmask, exclusion masks..., path costs...)


@dataclass(frozen=True)
class Ingredients:
    """The path constraints of a program, per split candidate."""

    need: np.ndarray  # (m,) int: bitmask of orders a candidate needs seen
    grant: np.ndarray  # (m,) int: bitmask of orders a candidate marks seen
    groups: tuple[np.ndarray, ...]  # per exclusion: (m,) int group bitmask of each candidate
    full: tuple[int, ...]  # per exclusion: the bitmask of all its groups
    costs: tuple[tuple[Fraction, ...], ...]  # per path cost: cost of each candidate
    bounds: tuple[Fraction, ...]

    @property
    def trivial(self) -> bool:
        return not (self.need.any() or self.groups or self.costs)

    def initial(self) -> State:
        return (0,) + tuple(0 for _ in self.groups) + tuple(Fraction(0) for _ in self.costs)

    def allowed(self, state: State) -> np.ndarray:
        """Which candidates may be tested at a node whose path above is ``state``."""
        m = self.need.shape[0]
        ok = (self.need & ~np.int64(state[0])) == 0
        for e, (g, full) in enumerate(zip(self.groups, self.full)):
            ok &= (g | state[1 + e]) != full
        base = 1 + len(self.groups)
        for c, (cost, bound) in enumerate(zip(self.costs, self.bounds)):
            paid = state[base + c]
            ok &= np.fromiter((paid + k <= bound for k in cost), dtype=bool, count=m)
        return ok

    def child(self, state: State, f: int) -> State:
        """The state below a node testing candidate ``f``."""
        out = [state[0] | int(self.grant[f])]
        out += [s | int(g[f]) for s, g in zip(state[1:1 + len(self.groups)], self.groups)]
        base = 1 + len(self.groups)
        out += [state[base + c] + cost[f] for c, cost in enumerate(self.costs)]
        return tuple(out)


def ingredients(problem: TreeSearch, dim: np.ndarray) -> Ingredients:
    """The ingredients of ``problem``'s path constraints for candidates of dimensions ``dim``."""
    m = dim.shape[0]
    need = np.zeros(m, dtype=np.int64)
    grant = np.zeros(m, dtype=np.int64)
    for o, order in enumerate(problem.orders):
        for f in range(m):
            if int(dim[f]) in order.second:
                need[f] |= 1 << o
            if int(dim[f]) in order.first:
                grant[f] |= 1 << o
    groups, full = [], []
    for ex in problem.exclusions:
        g = np.zeros(m, dtype=np.int64)
        for k, members in enumerate(ex.groups):
            for f in range(m):
                if int(dim[f]) in members:
                    g[f] |= 1 << k
        groups.append(g)
        full.append((1 << len(ex.groups)) - 1)
    costs = tuple(tuple(pc.costs[int(dim[f])] for f in range(m)) for pc in problem.path_costs)
    bounds = tuple(pc.bound for pc in problem.path_costs)
    return Ingredients(need, grant, tuple(groups), tuple(full), costs, bounds)
