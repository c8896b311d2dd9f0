"""``strategy lns`` for decision diagrams (issue 16): a large-neighbourhood search that
improves an incumbent diagram by re-optimising a window of layers at a time.

Input: a univariate diagram program with one objective level, its lowering in Florio's
flow encoding for a solver backend (``compiler/skeletons/diagram_flow.py``, on ``milp``
with real flows, on ``cp`` with boolean ones), a starting incumbent (a ``Diagram`` that
satisfies the program, with its re-evaluated value) and a proven lower bound. Output: the
best diagram found (never worse than the start, always re-evaluated by
``compiler/evaluate.py`` on the program) and whether a neighbourhood proof shows it is a
local optimum.

The incumbent is embedded in the skeleton (``embed``): its nodes are put on layers (their
own, else the longest path from the root), an arc that skips layers runs through
pass-through slots (Florio's constant literal TOP), the slots of a layer are ordered by
in-degree (Florio's (12)) and each test takes the sign that (11) asks for. That gives the
values of the structure variables d, p0, e, y. A neighbourhood frees a window of k
consecutive layers a..a+k-1: the tests and arcs of their slots and the arcs into layer a;
every other structure variable is fixed to the incumbent in the IR model, and the flows
that must then be zero with them (``compiler/fixing.py``; the seam: the backend solves an
ordinary, much smaller ``ir.Model``). The free flows follow (Florio's Theorem 1). The
solver gets the incumbent's value as a cutoff (only strictly better diagrams) and the
proven bound as a floor. A better diagram is decoded,
re-evaluated and accepted only if it satisfies the program with a lower value; the
solver's assignment becomes the next embedding.

Order: every window of one layer, top to bottom; after a pass without improvement the
windows grow by one layer; any improvement starts again at one layer. Windows of fewer
than all layers only: with every window of every size proved empty the incumbent is a
local optimum, and ``Program`` hands the rest of the time to the exact search (the window
of all layers) with the improved cutoff. Each window gets at most a share of the time
left; the whole search keeps to the process's time limit (``compiler.limits``).
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from odt.backends.base import Backend, Progress, SolveOptions, Status
from odt.compiler import limits
from odt.compiler.checked import CheckedProgram
from odt.compiler.classifiers.diagram import Diagram, compact_diagram
from odt.compiler.data import Binarizer
from odt.compiler.evaluate import evaluate
from odt.compiler.fixing import Fixer
from odt.compiler.lower import Lowered
from odt.compiler.skeletons.diagram_flow import DiagramFlowEncoding

#: the share of the remaining time one window may take (a proof on one layer is quick)
WINDOW_SHARE = 0.15
#: no window gets less than this many seconds (solver start-up)
WINDOW_MIN = 1.0


@dataclass(frozen=True)
class LnsOutcome:
    diagram: Diagram
    value: Fraction
    improvements: int
    windows: int  # solver calls made
    local_optimum: bool  # every window of fewer than all layers was proved to hold nothing better
    log: str


def _layers(d: Diagram, depth: int) -> list[int] | None:
    """A layer per node of a compacted diagram (root on layer 0, every arc going down):
    its own layers shifted to the root, else the longest path from the root; None if
    that needs more than ``depth`` layers."""
    live = d.reachable()
    own = [d.nodes[i].layer - d.nodes[d.root].layer for i in range(len(d.nodes))]

    def valid(lay: list[int]) -> bool:
        return all(0 <= lay[i] < depth and all(r < 0 or lay[r] > lay[i] for r in (d.nodes[i].if_true,
                                                                                   d.nodes[i].if_false))
                   for i in live)

    if valid(own):
        return own
    longest = [0] * len(d.nodes)
    for i in live:  # topological order
        for r in (d.nodes[i].if_true, d.nodes[i].if_false):
            if r >= 0:
                longest[r] = max(longest[r], longest[i] + 1)
    return longest if valid(longest) else None


def embed(enc: DiagramFlowEncoding, c: CheckedProgram, diagram: Diagram) -> dict[int, bool] | None:
    """The values of the structure variables (d, p0, e, y) of ``enc`` that build
    ``diagram`` (compacted on the training rows first), or None when it does not fit the
    widths or tests a feature the encoding does not keep (module docstring)."""
    data = c.dataset
    if enc.planes is not None:
        return None
    Xd = Binarizer(diagram.features).transform(data.table) if diagram.features else np.zeros((data.n_rows, 0), bool)
    d = compact_diagram(diagram, Xd)
    Xd = Binarizer(d.features).transform(data.table) if d.features else np.zeros((data.n_rows, 0), bool)
    kept = data.X[:, list(enc.features)] if enc.features else np.zeros((data.n_rows, 0), bool)
    literal: dict[int, tuple[int, bool]] = {}  # diagram feature -> (kept position, same polarity)
    for f in range(Xd.shape[1]):
        col = Xd[:, f]
        match = next(((p, True) for p in range(kept.shape[1]) if np.array_equal(kept[:, p], col)), None) or \
            next(((p, False) for p in range(kept.shape[1]) if np.array_equal(kept[:, p], ~col)), None)
        if match is None:
            return None
        literal[f] = match
    values = {v: False for v in (*enc.d.values(), *enc.p0.values(), *enc.e.values(), *enc.y.values())}
    if d.root < 0:
        values[enc.p0[-d.root - 1]] = True
        return values
    L = len(enc.widths)
    lay = _layers(d, L)
    if lay is None:
        return None
    live = d.reachable()
    # the slot of each real node and of each pass-through (target ref, layer) on the way to it
    through: set[tuple[int, int]] = set()
    for i in live:
        for r in (d.nodes[i].if_true, d.nodes[i].if_false):
            if r >= 0:
                through.update((r, m) for m in range(lay[i] + 1, lay[r]))
    Item = tuple[str, int, int]  # ("node", node, its layer) or ("pass", target node, layer)
    items: dict[int, list[Item]] = {l: [] for l in range(L)}
    for i in live:
        items[lay[i]].append(("node", i, lay[i]))
    for r, m in sorted(through):
        items[m].append(("pass", r, m))
    if any(len(items[l]) > enc.widths[l] for l in range(L)):
        return None

    def next_ref(ref: int, layer: int) -> Item | int:
        """What an arc from ``layer`` to ``ref`` enters: a class, the node, or its pass-through."""
        if ref < 0:
            return ref
        return ("node", ref, layer + 1) if lay[ref] == layer + 1 else ("pass", ref, layer + 1)

    def arcs(item: Item) -> tuple[Item | int, Item | int]:
        kind, i, layer = item
        if kind == "pass":
            return next_ref(i, layer), next_ref(i, layer)
        n = d.nodes[i]
        return next_ref(n.if_true, layer), next_ref(n.if_false, layer)

    slot: dict[Item, int] = {}
    slots_by_layer = [[u for u in range(enc.n_nodes) if enc.layer[u] == l] for l in range(L)]
    for l in range(L):
        here = items[l]
        if l >= 2:  # (12): in-degree from the previous layer, non-increasing along the layer
            entering = [a for p in items[l - 1] for a in (arcs(p) if p[0] == "node" else arcs(p)[:1])]
            here = sorted(here, key=lambda it: -entering.count(it))
        for it, u in zip(here, slots_by_layer[l]):
            slot[it] = u

    def ref_of(a: Item | int) -> int:
        return a if isinstance(a, int) else slot[a]

    for it, u in slot.items():
        values[enc.d[u]] = True
        pos = {v: n for n, v in enumerate(enc.succ[u])}
        if it[0] == "pass":  # TOP: every row to the target, the other side to a class terminal
            target = ref_of(arcs(it)[0])
            dummy = next(v for v in enc.succ[u] if v < 0 and v != target)
            plus, minus, rows_plus = (target, dummy, True) if pos[target] > pos[dummy] else (dummy, target, False)
            values[enc.e[u, enc.top, 1 if rows_plus else -1]] = True
        else:
            t, f = (ref_of(a) for a in arcs(it))
            p, same = literal[d.nodes[it[1]].feature]
            # the positive side takes the rows where the literal (p, s) holds; (11): it goes to the later successor
            plus, minus = (t, f) if pos[t] > pos[f] else (f, t)
            holds_on_true = plus == t  # the positive side is the diagram's true side
            values[enc.e[u, p, 1 if holds_on_true == same else -1]] = True
        values[enc.y[u, 1, plus]] = True
        values[enc.y[u, -1, minus]] = True
    return values


def _window_fixings(enc: DiagramFlowEncoding, fixed: dict[int, bool], first: int, last: int) -> dict[int, bool]:
    """The incumbent's values of every structure variable outside layers first..last
    (and outside the arcs of layer first - 1, which may enter the window's slots anew)."""
    free_nodes = {u for u in range(enc.n_nodes) if first <= enc.layer[u] <= last}
    free_arcs = free_nodes | {u for u in range(enc.n_nodes) if enc.layer[u] == first - 1}
    keep: list[int] = [enc.d[u] for u in range(enc.n_nodes) if u not in free_nodes]
    keep += [v for (u, _, _), v in enc.e.items() if u not in free_nodes]
    keep += [v for (u, _, _), v in enc.y.items() if u not in free_arcs]
    if first > 0:
        keep += list(enc.p0.values())
    return {v: fixed[v] for v in keep}


def improve(c: CheckedProgram, backend: Backend, low: Lowered, start: tuple[Diagram, Fraction],
            floor: Fraction | None, opts: SolveOptions, budget: float | None,
            on_improve: Callable[[Diagram, Fraction], None] | None = None,
            progress: Callable[[Progress], None] | None = None, clock: float | None = None) -> LnsOutcome | None:
    """The layer LNS from ``start`` for at most ``budget`` seconds (and the process's time
    limit); None when the start cannot be embedded. ``on_improve`` sees every accepted
    diagram (``Program`` keeps it for a stop); ``progress`` gets incumbent, bound and the
    window; ``clock`` is the solve's start (perf_counter) for the elapsed times."""
    enc = low.encoding
    assert isinstance(enc, DiagramFlowEncoding)
    began = time.perf_counter()
    clock = began if clock is None else clock
    fixed = embed(enc, c, start[0])
    if fixed is None:
        return None
    structure = set(fixed)
    fixer = Fixer(low.model)
    best, value = start
    L = len(enc.widths)
    improvements = windows = 0
    log: list[str] = []
    k, improved_in_pass, unproved = 1, False, 0  # unproved: windows left open since the last improvement
    while k < L:
        for first in range(0, L - k + 1):
            left = limits.budget(None if budget is None else budget - (time.perf_counter() - began))
            if left is not None and left < WINDOW_MIN:
                return LnsOutcome(best, value, improvements, windows, False,
                                  f"lns: {improvements} improvements in {windows} windows, stopped by the time "
                                  f"budget{_listed(log)}")
            if floor is not None and value <= floor:
                return LnsOutcome(best, value, improvements, windows, True,
                                  f"lns: {improvements} improvements in {windows} windows, the bound is met"
                                  f"{_listed(log)}")
            last = first + k - 1
            model = fixer.fix(_window_fixings(enc, fixed, first, last))
            extra = {**opts.extra, "cutoff": value, **({} if floor is None else {"floor": floor})}
            share = None if left is None else max(WINDOW_MIN, WINDOW_SHARE * left)
            res = backend.solve(model, dataclasses.replace(opts, time_limit=share, extra=extra, on_progress=None))
            windows += 1
            where = f"layers {first}..{last}" if k > 1 else f"layer {first}"
            if res.values is None:
                unproved += res.status is not Status.INFEASIBLE  # a time-out: not proved empty
                continue
            diagram = low.encoding.decode(res.values, c.dataset, _input_columns(c))
            ev = evaluate(c, diagram)
            new = Fraction(ev.objective[0]).limit_denominator(10**9) if ev.feasible and ev.objective else None
            if new is None or new >= value:
                log.append(f"{where}: the solver's diagram re-evaluates to no improvement")
                continue
            best, value = diagram, new
            fixed = {v: bool(res.values[v]) for v in structure}
            improvements += 1
            improved_in_pass, unproved = True, 0
            log.append(f"{where}: {float(new):g}")
            if on_improve is not None:
                on_improve(best, value)
            if progress is not None:
                progress(Progress(time.perf_counter() - clock, value, floor, f"lns {where}"))
        k, improved_in_pass = (1, False) if improved_in_pass else (k + 1, False)
    what = "a local optimum of" if not unproved else f"{unproved} windows not proved empty among"
    return LnsOutcome(best, value, improvements, windows, not unproved,
                      f"lns: {improvements} improvements in {windows} windows, {what} every window of "
                      f"fewer than {L} layers{_listed(log)}")


def _listed(log: list[str]) -> str:
    return f" ({', '.join(log)})" if log else ""


def _input_columns(c: CheckedProgram) -> tuple[str, ...]:
    return c.dataset.features.columns()
