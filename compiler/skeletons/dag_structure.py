"""Structure handles of DAG-shaped skeletons (decision diagrams, Florio et al.), and the
path constraints of Nanfack et al. (C7-C9) on them *without enumerating paths*.

A diagram has as many root-to-leaf paths as the product of its layer widths, so a path
constraint cannot be written once per path. Each one is instead written as a *potential*
propagated along the arcs the solver uses, in topological order — clauses only, so every
backend takes them:

  order ``a before b`` (Nanfack 4.1)
      open[v]   some path from the root reaches v without having tested a.
      open[root];  open[v] ∧ arc(v,w) ∧ ¬T[v,a] → open[w];  ¬(open[v] ∧ T[v,b]).
  exclusion ``not (c1 and ... and ck)`` (Nanfack 4.6)
      seen[v,S] some path reaches v having tested (at least) the columns S ⊊ {c1..ck}.
      seen[root,∅];  seen[v,S] ∧ arc(v,w) → seen[w,S];
      seen[v,S] ∧ arc(v,w) ∧ T[v,c] → seen[w,S∪{c}];  ¬(seen[v,S] ∧ T[v,c]) when S∪{c} is all.
  per-path cost ``cost <= tau`` (Nanfack 4.2), costs scaled to integers
      ge[v,t]   some path reaches v having paid (at least) t, for every amount 0 < t <= tau
                a path can pay (sums of costs, divided by their gcd); t = 0 always.
      ge[v,t] ∧ arc(v,w) → ge[w,t];  ge[v,t] ∧ arc(v,w) ∧ T[v,c] → ge[w,t+cost(c)];
      ¬(ge[v,t] ∧ T[v,c]) when t + cost(c) > tau.

Soundness and completeness: the implications only push facts forward along used arcs,
so in every model each potential is at least its true value (a path that exists forces
it), and the forbidding clauses then reject exactly the structures with an offending
path; conversely, setting every potential to its true value satisfies all clauses when
no path offends. Size: O(|arcs| * states) clauses, states = 1, 2^k - 1 and the number of payable amounts.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations
from math import gcd, lcm
from typing import Callable, Protocol

from ..ir import ModelBuilder


class PathView(Protocol):
    """What the path potentials read: decision nodes in topological order (the root
    first), the arcs between them with the literal "the arc carries rows", and the
    literal "node v is a decision node testing a feature of ``column``"."""

    @property
    def nodes(self) -> tuple[int, ...]: ...

    def out_arcs(self, v: int) -> list[tuple[int, int]]: ...

    def tests(self, v: int, column: str) -> int | None: ...


@dataclass(frozen=True)
class DagStructure:
    """The structure handles of a diagram skeleton (S4), the same names as a tree's
    ``TreeStructure`` so the constraint families (``compiler/constraints/``) read both:

    nodes    the decision-node slots in topological order (``nodes[0]`` is the root)
    arcs     (v, w, literal): the arc from slot v to slot w carries training rows
    Z        slot v is a decision node of the decoded diagram (it sends rows both ways:
             exactly the slots the ``nodes`` handle counts)
    T        (v, column) -> literal: Z[v] and v tests a feature of ``column``
    R        (bucket, v) -> literal: the bucket's rows pass slot v (v not the root)
    counts   rows per bucket (unweighted), for ``samples``; weights: row weight per bucket
    """

    nodes: tuple[int, ...]
    arcs: tuple[tuple[int, int, int], ...]
    Z: dict[int, int]
    T: dict[tuple[int, str], int]
    R: dict[tuple[int, int], int]
    counts: tuple[int, ...]
    weights: tuple[Fraction, ...] = ()

    @property
    def root(self) -> int:
        return self.nodes[0]

    @property
    def internal(self) -> tuple[int, ...]:
        return self.nodes

    def out_arcs(self, v: int) -> list[tuple[int, int]]:
        return [(w, lit) for u, w, lit in self.arcs if u == v]

    def samples(self, v: int) -> tuple[list[tuple[Fraction, int]], Fraction]:
        """Rows passing v, as a linear form (terms, constant) over R."""
        if v == self.root:
            return [], Fraction(sum(self.counts))
        return [(Fraction(n), self.R[u, v]) for u, n in enumerate(self.counts) if n], Fraction(0)

    def tests(self, v: int, column: str) -> int | None:
        return self.T.get((v, column))


def define_tests(b: ModelBuilder, nodes, columns: list[str], Z: dict[int, int],
                 selectors: Callable[[int, str], list[int]]) -> dict[tuple[int, str], int]:
    """T[q, col] <-> Z[q] and one of ``selectors(q, col)`` (the literals "q tests a feature
    of col"): the node-tests-column handle, the same for every encoding."""
    T = {}
    for q in nodes:
        for col in columns:
            t = T[q, col] = b.new_bool(("tests", q, col))
            sel = selectors(q, col)
            b.clause((-t, Z[q]))
            b.clause([-t] + sel)
            for x in sel:
                b.clause((-Z[q], -x, t))
    return T


def _potential(b: ModelBuilder, st: PathView, tag: str, states: list) -> dict:
    """One fresh literal per (node, state); the root's start state is asserted."""
    pot = {(v, s): b.new_aux(f"{tag}_{v}_{s}") for v in st.nodes for s in states}
    return pot


def order_on_paths(b: ModelBuilder, st: PathView, first: str, second: str) -> None:
    """``every path: first before second`` as the potential open[v] (module docstring)."""
    open_ = _potential(b, st, f"open_{first}", [0])
    b.clause((open_[st.nodes[0], 0],))
    for v in st.nodes:
        t_first = st.tests(v, first)
        t_second = st.tests(v, second)
        if t_second is not None:
            b.clause((-open_[v, 0], -t_second))
        for w, arc in st.out_arcs(v):
            b.clause((-open_[v, 0], -arc, open_[w, 0]) + ((t_first,) if t_first is not None else ()))


def exclusion_on_paths(b: ModelBuilder, st: PathView, columns: list[str]) -> None:
    """``every path: not (c1 and ... and ck)`` as the potentials seen[v, S] (module docstring)."""
    cols = sorted(set(columns))
    full = frozenset(cols)
    states = [frozenset(s) for k in range(len(cols)) for s in combinations(cols, k)]
    names = {s: "+".join(sorted(s)) or "none" for s in states}
    seen = {(v, s): b.new_aux(f"seen_{v}_{names[s]}") for v in st.nodes for s in states}
    b.clause((seen[st.nodes[0], frozenset()],))
    for v in st.nodes:
        for s in states:
            here = seen[v, s]
            for c in cols:
                t = st.tests(v, c)
                if t is None or c in s:
                    continue
                if s | {c} == full:
                    b.clause((-here, -t))
            for w, arc in st.out_arcs(v):
                b.clause((-here, -arc, seen[w, s]))
                for c in cols:
                    t = st.tests(v, c)
                    if t is None or c in s or s | {c} == full:
                        continue
                    b.clause((-here, -arc, -t, seen[w, s | {c}]))


def cost_on_paths(b: ModelBuilder, st: PathView, costs: dict[str, Fraction], tau: Fraction) -> None:
    """``every path: cost <= tau``: the tests on every path cost at most tau, as the
    order-encoded potential ge[v, t] over the integer-scaled costs (module docstring)."""
    scale = lcm(tau.denominator, *(c.denominator for c in costs.values())) if costs else tau.denominator
    limit = tau * scale
    if limit < 0:
        b.clause(())
        return
    paid = {col: int(c * scale) for col, c in costs.items() if c > 0}
    step = gcd(*paid.values()) if paid else 1  # only multiples of the gcd can be paid
    paid = {col: k // step for col, k in paid.items()}
    steps = int(limit) // step
    sums, frontier = {0}, [0]  # the amounts a path can have paid, up to the limit
    while frontier:
        t = frontier.pop()
        for k in set(paid.values()):
            if t + k <= steps and t + k not in sums:
                sums.add(t + k)
                frontier.append(t + k)
    levels = sorted(sums - {0})
    ge = {(v, t): b.new_aux(f"cost_{v}_{t}") for v in st.nodes for t in levels}

    def at(v: int, t: int) -> tuple[int, ...]:
        """The literals whose conjunction says 'v is reached having paid >= t' (t = 0: none)."""
        return () if t == 0 else (ge[v, t],)

    for v in st.nodes:
        for t in [0] + levels:
            pre = tuple(-x for x in at(v, t))
            for col, k in paid.items():
                test = st.tests(v, col)
                if test is not None and t + k > steps:
                    b.clause(pre + (-test,))
            for w, arc in st.out_arcs(v):
                if t:
                    b.clause(pre + (-arc, ge[w, t]))
                for col, k in paid.items():
                    test = st.tests(v, col)
                    if test is not None and t + k <= steps:
                        b.clause(pre + (-arc, -test, ge[w, t + k]))
