"""Pure Boolean encodings of linear rows over literals (for clause-only backends).

Every function takes literals, weights, a bound and a ``new_var`` callable, and returns
clauses; none keeps state. Choice per row (issue 3):

* unit weights: the sequential counter of Sinz (2005) via python-sat's ``CardEnc`` — the
  same unary counter as Avellaneda's eqs (7)-(10), O(n*k) clauses, arc-consistent;
* integer weights: the BDD encoding of Eén & Sörensson (2006) with the interval
  memoisation of Abío et al. (2012), O(n*k) nodes at worst and usually far fewer, since
  nodes whose remaining budget lies in the same interval are shared. It is written here
  because python-sat's ``pysat.pb`` needs the optional pindakaas package.
"""
from __future__ import annotations

import bisect
import sys
from fractions import Fraction
from math import lcm
from typing import Callable, Sequence


from .. import limits

Clauses = list[list[int]]


def integer_row(terms: Sequence[tuple[Fraction, int]], rhs: Fraction) -> tuple[list[tuple[int, int]], int]:
    """Scale a row with rational coefficients to integers exactly (multiply by the LCM of
    denominators). Returns (terms, rhs) of a row with the same solutions.

    >>> integer_row([(Fraction(1, 2), 1), (Fraction(1, 3), 2)], Fraction(1))
    ([(3, 1), (2, 2)], 6)
    """
    scale = 1
    for c, _ in terms:
        scale = lcm(scale, c.denominator)
    scale = lcm(scale, rhs.denominator)
    return [(int(c * scale), lit) for c, lit in terms], int(rhs * scale)


def at_most(terms: Sequence[tuple[int, int]], bound: int, new_var: Callable[[], int]) -> Clauses:
    """Clauses for sum(w * lit) <= bound, w integers of any sign (literals negated as needed).

    >>> counter = iter(range(10, 100))
    >>> at_most([(1, 1), (1, 2)], 0, lambda: next(counter))
    [[-1], [-2]]
    """
    pos: list[tuple[int, int]] = []
    for w, lit in terms:
        if w > 0:
            pos.append((w, lit))
        elif w < 0:  # w*x = w - w*(1-x) = w + |w| * (not x)
            pos.append((-w, -lit))
            bound -= w
    if bound < 0:
        return [[]]
    pos = [(w, lit) for w, lit in pos]
    if sum(w for w, _ in pos) <= bound:
        return []
    heavy = [[-lit] for w, lit in pos if w > bound]
    pos = [(w, lit) for w, lit in pos if w <= bound]
    if not pos or sum(w for w, _ in pos) <= bound:
        return heavy
    if all(w == 1 for w, _ in pos):
        return heavy + _card_at_most([lit for _, lit in pos], bound, new_var)
    return heavy + _bdd_at_most(pos, bound, new_var)


def at_least(terms: Sequence[tuple[int, int]], bound: int, new_var: Callable[[], int]) -> Clauses:
    """sum(w * lit) >= bound  <=>  sum(-w * lit) <= -bound."""
    return at_most([(-w, lit) for w, lit in terms], -bound, new_var)


def equal(terms: Sequence[tuple[int, int]], bound: int, new_var: Callable[[], int]) -> Clauses:
    return at_most(terms, bound, new_var) + at_least(terms, bound, new_var)


#: n * k up to which a cardinality row is a sequential counter (Sinz 2005: 2nk clauses, the
#: strongest propagation); above it, a cardinality network (Asin et al. 2011: O(n log^2 k)):
#: the cost row of a MaxSAT linear search over mushroom's 8,124 rows, k = 3,915, is 33 M
#: clauses and minutes as a counter, 0.9 M clauses and 0.5 s as a network
_SEQUENTIAL_UP_TO = 200_000


def card_size(n: int, k: int) -> int:
    """About how many clauses ``at_most`` writes for n unit-weight literals and bound k.

    >>> card_size(100, 5), card_size(8124, 3915) > 500_000
    (1000, True)
    """
    if n * k <= _SEQUENTIAL_UP_TO:
        return 2 * n * k
    return n * max(1, (max(2, k).bit_length()) ** 2)


def _card_at_most(lits: list[int], k: int, new_var: Callable[[], int]) -> Clauses:
    if k == 0:
        return [[-l] for l in lits]
    top = new_var()  # reserve a block: CardEnc numbers its auxiliaries above top_id
    from pysat.card import CardEnc, EncType  # python-sat loads only when an encoding needs it

    kind = EncType.seqcounter if len(lits) * k <= _SEQUENTIAL_UP_TO else EncType.cardnetwrk
    enc = CardEnc.atmost(lits=lits, bound=k, top_id=max(top, max(abs(l) for l in lits)), encoding=kind)
    highest = max((abs(l) for c in enc.clauses for l in c), default=top)
    while top < highest:  # claim every auxiliary CardEnc used
        top = new_var()
    return [list(c) for c in enc.clauses]


def _bdd_at_most(terms: list[tuple[int, int]], bound: int, new_var: Callable[[], int]) -> Clauses:
    terms = sorted(terms, key=lambda t: -t[0])
    n = len(terms)
    suffix = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + terms[i][0]
    TRUE, FALSE = "T", "F"
    # the nodes of level i as disjoint intervals [lo, hi] of s, sorted by lo (bisected:
    # a linear scan made large cutoff rows quadratic, minutes for COMPAS at depth 3)
    memo_lo: list[list[int]] = [[] for _ in range(n + 1)]
    memo: list[list[tuple[object, int, int]]] = [[] for _ in range(n + 1)]
    clauses: Clauses = []
    big = suffix[0] + bound + 1

    def build(i: int, s: int) -> tuple[object, int, int]:
        if s < 0:
            return FALSE, -big, -1
        if suffix[i] <= s:
            return TRUE, suffix[i], big
        j = bisect.bisect_right(memo_lo[i], s) - 1
        if j >= 0 and memo[i][j][2] >= s:  # type: ignore[operator]
            return memo[i][j]
        limits.check()  # a large row is long Python work: it keeps to the time limit
        w, x = terms[i]
        a, lo0, hi0 = build(i + 1, s)
        b, lo1, hi1 = build(i + 1, s - w)
        lo, hi = max(lo0, lo1 + w), min(hi0, hi1 + w)
        if a == b:
            node: object = a
        else:
            v = new_var()
            node = v
            if a is FALSE:
                clauses.append([-v])
            elif a is not TRUE:
                clauses.append([-v, a])  # type: ignore[list-item]
            if b is FALSE:
                clauses.append([-v, -x])
            elif b is not TRUE:
                clauses.append([-v, -x, b])  # type: ignore[list-item]
        j = bisect.bisect_right(memo_lo[i], lo)
        memo_lo[i].insert(j, lo)
        memo[i].insert(j, (node, lo, hi))
        return node, lo, hi

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * n + 100))
    try:
        root, _, _ = build(0, bound)
    finally:
        sys.setrecursionlimit(limit)
    if root is FALSE:
        return [[]]
    if root is not TRUE:
        clauses.append([root])  # type: ignore[list-item]
    return clauses
