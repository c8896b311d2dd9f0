"""Truth table + feature ordering -> reduced ordered BDD (Hu et al., IJCAI 2022, appendix).

Input: the solver's truth table over H levels (cell j holds a class index; the level-0
feature is the most significant bit of j, Hu's rel of eq. 4), the training weight of each
class in each cell, the feature of each level (``None`` for a constant pseudo-feature) and
a generalisation bias. Output: a ``Diagram(kind="bdd")`` whose nodes of layer l test the
level-l feature; it is ordered and reduced (no node with equal arcs, no two nodes with
equal subgraphs: Knuth's beads, Hu's Proposition 1).

Cells no training row reaches are free for the solver (its value is arbitrary): the bias
decides them (Hu Sec. 3, "Merging Compatible Subtrees", and Sec. 4):
  "S"  keep the solver's value;
  "P"  the majority class of the nearest ancestor of the cell in the oblivious tree that
       training rows reach (Kohavi's "majority class of the parent");
  "C"  merge compatible subtrees (OODG): unreached cells become unknown ("u"); level by
       level, the subtables of that level that agree wherever both are known are merged
       (unknowns take the other's values); cells still unknown after the last level (no
       training row at all) keep the solver's value.
No bias changes a cell that training rows reach, so training predictions never change.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..data import Feature
from .diagram import Diagram, DNode, leaf_ref

Table = list[int]


def fill_unreached(table: Sequence[int], counts: np.ndarray, bias: str) -> Table:
    """The truth table with the unreached cells (``counts[j].sum() == 0``) set by ``bias``.

    >>> fill_unreached([0, 0, 1, 0], np.array([[1, 0], [0, 0], [0, 2], [0, 0]]), "C")
    [0, 0, 1, 1]
    >>> fill_unreached([0, 0, 1, 0], np.array([[1, 0], [0, 0], [0, 2], [0, 0]]), "P")
    [0, 0, 1, 1]

    Hu's Example 3: the table u0u1011u (unknown cells 0, 2, 7) becomes 1001 0110.

    >>> t = [0, 0, 0, 1, 0, 1, 1, 1]
    >>> fill_unreached(t, np.array([[0, 0] if j in (0, 2, 7) else [1 - v, v] for j, v in enumerate(t)]), "C")
    [1, 0, 0, 1, 0, 1, 1, 0]
    """
    n = len(table)
    depth = n.bit_length() - 1
    reached = counts.sum(axis=1) > 0
    if bias == "S" or reached.all() or not reached.any():
        return list(table)
    if bias == "P":
        out = list(table)
        for j in np.flatnonzero(~reached):
            for top in range(depth - 1, -1, -1):  # ancestors, nearest first
                size = 1 << (depth - top)
                start = (int(j) // size) * size
                acc = counts[start:start + size].sum(axis=0)
                if acc.sum() > 0:
                    best = np.flatnonzero(acc == acc.max())
                    out[j] = int(table[int(j)]) if table[int(j)] in best else int(best[0])
                    break
        return out
    if bias == "C":
        return _merge_compatible(table, reached)
    raise ValueError(f"unknown bias {bias!r}")


def _merge_compatible(table: Sequence[int], reached: np.ndarray) -> Table:
    n = len(table)
    depth = n.bit_length() - 1
    cur: list[int | None] = [int(v) if r else None for v, r in zip(table, reached)]
    for level in range(1, depth + 1):
        size = n >> level
        blocks = [tuple(cur[s * size:(s + 1) * size]) for s in range(1 << level)]
        # the nodes of this level: equal known subtables are one node (isomorphic);
        # a subtable with unknowns is a node of its own at each position
        items: dict[Any, list[int]] = {}
        for s, blk in enumerate(blocks):
            items.setdefault(blk if None not in blk else s, []).append(s)
        order = sorted(items, key=lambda key: (sum(v is None for v in blocks[items[key][0]]), items[key][0]))
        groups: list[list[int | None]] = []
        members: list[set[int]] = []
        for key in order:
            where = items[key]
            blk = blocks[where[0]]
            sibs = {s ^ 1 for s in where}
            best, best_key = None, None
            for g, value in enumerate(groups):
                if not all(a is None or b is None or a == b for a, b in zip(blk, value)):
                    continue
                rank = (bool(members[g] & sibs), sum(a is not None and a == b for a, b in zip(blk, value)))
                if best_key is None or rank > best_key:
                    best, best_key = g, rank
            if best is None:
                groups.append(list(blk))
                members.append(set(where))
            else:
                groups[best] = [b if b is not None else a for a, b in zip(blk, groups[best])]
                members[best] |= set(where)
        for g, value in enumerate(groups):
            for s in members[g]:
                cur[s * size:(s + 1) * size] = value
    return [int(table[j]) if v is None else v for j, v in enumerate(cur)]


def gen_bdd(table: Sequence[int], quasi: bool = False,
            skip: Sequence[bool] = ()) -> tuple[list[tuple[int, int, int]], int]:
    """GenBDD (Hu, appendix Algorithm 1): one node per bead of the table.

    Returns the nodes as (level, if_true, if_false) in topological order (root first;
    successors are node indices or ``leaf_ref(class)``) and the root reference. A
    subtable of equal halves is not a bead: its level is skipped; a constant subtable
    is a class leaf. ``quasi`` builds the quasi-reduced BDD instead: every path tests
    every level (except the levels in ``skip``), equal subtables still share one node —
    the form side constraints on paths speak about (every level is on every path).

    >>> gen_bdd([0, 0, 0, 1, 0, 1, 1, 1])  # Knuth's g1 = majority of three (Hu Example 1)
    ([(0, 2, 1), (1, 3, -1), (1, -2, 3), (2, -2, -1)], 0)
    """
    n = len(table)
    depth = n.bit_length() - 1
    made: list[tuple[int, int, int]] = []
    memo: dict[tuple[int, ...], int] = {}

    def build(s: tuple[int, ...], level: int) -> int:
        if len(s) == 1 or not quasi and all(v == s[0] for v in s):
            return leaf_ref(s[0])
        h = len(s) // 2
        lo, hi = s[:h], s[h:]
        if lo == hi and (not quasi or (level < len(skip) and skip[level])):  # no bead: the level is useless
            return build(lo, level + 1)
        if s in memo:
            return memo[s]
        t = build(hi, level + 1)
        f = build(lo, level + 1)
        made.append((level, t, f))
        memo[s] = len(made) - 1
        return memo[s]

    root = build(tuple(int(v) for v in table), 0)
    assert depth >= 0
    last = len(made) - 1  # post-order -> reversed: parents before children

    def re(ref: int) -> int:
        return ref if ref < 0 else last - ref

    nodes = [(lv, re(t), re(f)) for lv, t, f in reversed(made)]
    return nodes, re(root)


def diagram_from_table(table: Sequence[int], counts: np.ndarray, level_features: Sequence[Feature | None],
                       classes: tuple[Any, ...], input_columns: tuple[str, ...], bias: str = "C",
                       quasi: bool = False) -> Diagram:
    """The reduced ordered BDD of a solver's truth table under ``bias`` (see the module);
    with ``quasi`` the quasi-reduced one (every feature level on every path)."""
    depth = len(level_features)
    filled = fill_unreached(table, counts, bias)
    for i, f in enumerate(level_features):  # a pseudo-feature is always 0: its level is useless
        if f is None:
            bit = 1 << (depth - 1 - i)
            for j in range(len(filled)):
                if j & bit:
                    filled[j] = filled[j ^ bit]
    nodes, root = gen_bdd(filled, quasi, [f is None for f in level_features])
    used = sorted({lv for lv, _, _ in nodes})
    index = {lv: k for k, lv in enumerate(used)}
    feats = tuple(level_features[lv] for lv in used)
    assert all(f is not None for f in feats)
    dnodes = tuple(DNode(index[lv], t, f, lv) for lv, t, f in nodes)
    return Diagram(feats, tuple(classes), dnodes, root, tuple(input_columns), kind="bdd")  # type: ignore[arg-type]
