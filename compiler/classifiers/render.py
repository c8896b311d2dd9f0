"""Layered drawings of classifiers (E3): one graph model, written as SVG, DOT or text.

Trees and diagrams are both drawn as a layered graph of their ``layout()``: decision
nodes by layer (a tree's depth, a diagram's layer), a tree's leaves where they end and a
diagram's classes in a bottom row (one box per class its arcs reach), arcs labelled yes
/ no. With rows (a table holding the label column the classifier records, or the class
weights an estimator kept) every box shows its rows and their count per class
(``value = [..]``, in the order of ``classes``), every arc the rows that take it (the
fragmentation view of Florio et al., Fig. 1), and each leaf is filled with its class's
colour, the stronger the purer its rows (as scikit-learn's ``plot_tree``); without rows a
leaf has a light tint of its class's colour.

Every box is as wide as its longest line, measured with Helvetica's metrics (Arial's are
the same), so no text runs out of its box (``text_width``). The SVG is laid out here
(layers are rows, boxes spread evenly), so rendering needs no Graphviz installation.
Nothing here imports a classifier: each builds its own ``layout()``, and the classifiers
show themselves in Jupyter through ``to_svg``.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np

FONT_SIZE = 12
LINE = 15  # px between lines of a box
PAD_X, PAD_Y = 10, 8  # px between a box's border and its text
GAP_X, GAP_Y = 24, 60
#: Helvetica's advance widths (AFM, in 1/1000 em) of the printable ASCII characters, from ' ' (32) to '~' (126)
_WIDTHS = (278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556,
           556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278,
           500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469,
           556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500,
           278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584)
#: one colour per class (cycled), as plot_tree gives each class a hue
PALETTE = ("#e58139", "#39e581", "#8139e5", "#e5d439", "#39a8e5", "#e539a8", "#7be539", "#e53939", "#39e5d4",
           "#a0a0a0")


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """The width in px of ``text`` in Helvetica at ``size`` px (a character outside ASCII
    counts as the widest, so a box is never too narrow).

    >>> round(text_width("compactness error <= 0.01881"), 1)
    163.4
    """
    return sum(_WIDTHS[ord(ch) - 32] if 32 <= ord(ch) <= 126 else 1015 for ch in text) * size / 1000


@dataclass(frozen=True, slots=True)
class Box:
    key: str
    label: str  # lines separated by "\n"
    layer: int  # -1: the class row at the bottom (diagrams)
    leaf: bool
    fill: str = "#eef2fa"

    @property
    def width(self) -> float:
        return max(text_width(line) for line in self.label.split("\n")) + 2 * PAD_X

    @property
    def height(self) -> float:
        return (self.label.count("\n") + 1) * LINE + 2 * PAD_Y


@dataclass(frozen=True, slots=True)
class Arc:
    source: str
    target: str
    label: str
    yes: bool


def node_rows(clf: Any, table: Any = None, target: str | None = None) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(class weights, row counts) at every node of ``clf.layout()`` for the rows of
    ``table``; class weights None when the rows' labels are not known (no ``target`` and
    none recorded by the classifier, or a table without that column)."""
    if table is None:
        return None, None
    from ..data import Binarizer
    from .export import node_statistics

    label = target or clf.seen.target
    if label is not None and label in table.columns:
        return node_statistics(clf, table, label)
    return None, clf.layout().row_counts(Binarizer(clf.features).transform(table))[0]


def graph_of(clf: Any, table: Any = None, weights: np.ndarray | None = None, rows: np.ndarray | None = None,
             target: str | None = None) -> tuple[list[Box], list[Arc]]:
    """The boxes and arcs of a ``Tree`` or ``Diagram``; ``table`` (raw rows), or
    ``weights`` (layout nodes x classes) and ``rows`` (per node), add counts."""
    if table is not None:
        weights, rows = node_rows(clf, table, target)
    if rows is None and weights is not None:
        rows = np.rint(weights.sum(axis=1)).astype(np.int64)
    layout = clf.layout()
    n_classes = len(clf.classes)
    yes_rows = _yes_rows(clf, layout, table) if table is not None else None
    boxes: list[Box] = []
    arcs: list[Arc] = []
    key: dict[int, str] = {}
    shared: dict[int, list[int]] = {}  # a diagram's class -> its terminals
    for i in range(layout.n_nodes):
        if layout.feature[i] >= 0:
            key[i] = f"n{i}"
        elif layout.shared_classes:
            key[i] = f"c{int(layout.label[i])}"
            shared.setdefault(int(layout.label[i]), []).append(i)
        else:
            key[i] = f"n{i}"
    for i in range(layout.n_nodes):
        if layout.feature[i] < 0 and layout.shared_classes:
            continue
        lines = [clf.features[int(layout.feature[i])].name] if layout.feature[i] >= 0 else \
            [str(clf.classes[int(layout.label[i])])]
        w = None if weights is None else weights[i]
        lines += _count_lines(None if rows is None else int(rows[i]), w)
        leaf = layout.feature[i] < 0
        boxes.append(Box(key[i], "\n".join(lines), int(layout.layer[i]), bool(leaf),
                         _fill(int(layout.label[i]), w, n_classes) if leaf else "#eef2fa"))
    for c, terms in sorted(shared.items()):
        w = None if weights is None else weights[terms].sum(axis=0)
        n = None if rows is None else int(np.asarray(rows)[terms].sum())
        boxes.append(Box(f"c{c}", "\n".join([str(clf.classes[c])] + _count_lines(n, w)), -1, True,
                         _fill(c, w, n_classes)))
    for i in np.flatnonzero(layout.feature >= 0).tolist():
        for yes, succ in ((True, int(layout.yes[i])), (False, int(layout.no[i]))):
            text = "yes" if yes else "no"
            taken = None
            if rows is not None and (not layout.shared_classes or layout.feature[succ] < 0):
                taken = int(rows[succ])  # a tree's node, or a terminal: one arc in, its rows are the arc's
            elif rows is not None and yes_rows is not None:  # a shared node: the rows of this arc
                taken = int(yes_rows[i]) if yes else int(rows[i] - yes_rows[i])
            if taken is not None:
                text += f" ({taken})"
            arcs.append(Arc(key[i], key[succ], text, yes))
    return boxes, arcs


def _yes_rows(clf: Any, layout: Any, table: Any) -> np.ndarray:
    from ..data import Binarizer

    return layout.row_counts(Binarizer(clf.features).transform(table))[1]


def _count_lines(n: int | None, w: np.ndarray | None) -> list[str]:
    out = [] if n is None else [f"{n} sample{'' if n == 1 else 's'}"]
    if w is not None:
        out.append("value = [" + ", ".join(_number(v) for v in w) + "]")
    return out


def _number(v: float) -> str:
    return str(int(round(v))) if abs(v - round(v)) < 1e-9 else f"{v:.3g}"


def _fill(label: int, w: np.ndarray | None, n_classes: int) -> str:
    """The class's colour, mixed with white by purity: the share of the leaf's largest
    class above a uniform one (plot_tree's shading); a light tint without counts."""
    base = PALETTE[label % len(PALETTE)]
    if w is None or w.sum() <= 0:
        alpha = 0.3
    else:
        p = float(w.max() / w.sum())
        alpha = (p - 1 / n_classes) / (1 - 1 / n_classes) if n_classes > 1 else 1.0
    rgb = [int(base[k:k + 2], 16) for k in (1, 3, 5)]
    return "#" + "".join(f"{round(alpha * c + (1 - alpha) * 255):02x}" for c in rgb)


def to_svg(clf: Any, table: Any = None, weights: np.ndarray | None = None, rows: np.ndarray | None = None,
           target: str | None = None) -> str:
    """A standalone SVG drawing of the classifier (layers top to bottom)."""
    boxes, arcs = graph_of(clf, table, weights, rows, target)
    leaf_layer = max((b.layer for b in boxes if b.layer >= 0), default=-1) + 1
    layers: dict[int, list[Box]] = {}
    for b in boxes:
        layers.setdefault(b.layer if b.layer >= 0 else leaf_layer, []).append(b)
    heights = {layer: max(b.height for b in members) for layer, members in layers.items()}
    spans = {layer: sum(b.width for b in members) + GAP_X * (len(members) - 1) for layer, members in layers.items()}
    total_w = max(spans.values()) + 2 * GAP_X
    pos: dict[str, tuple[float, float, float, float]] = {}  # key -> x, y, width, height
    y = GAP_Y / 2
    for layer in sorted(layers):
        x = (total_w - spans[layer]) / 2
        for b in layers[layer]:
            pos[b.key] = (x, y, b.width, b.height)
            x += b.width + GAP_X
        y += heights[layer] + GAP_Y
    total_h = y - GAP_Y / 2
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" height="{total_h:.0f}" '
           f'font-family="Helvetica, Arial, sans-serif" font-size="{FONT_SIZE}">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
           'orient="auto"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>']
    for a in arcs:
        (x1, y1, w1, h1), (x2, y2, w2, _) = pos[a.source], pos[a.target]
        sx, sy, tx, ty = x1 + w1 / 2, y1 + h1, x2 + w2 / 2, y2
        dash = "" if a.yes else ' stroke-dasharray="5,3"'
        out.append(f'<line x1="{sx:.1f}" y1="{sy:.1f}" x2="{tx:.1f}" y2="{ty:.1f}" stroke="black"{dash} '
                   'marker-end="url(#arrow)"/>')
        out.append(f'<text x="{(sx + tx) / 2:.1f}" y="{(sy + ty) / 2:.1f}" text-anchor="middle" fill="#444">'
                   f'{escape(a.label)}</text>')
    for b in boxes:
        x, y, w, h = pos[b.key]
        rx = 8 if b.leaf else 14
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx}" fill="{b.fill}" '
                   'stroke="black"/>')
        for k, line in enumerate(b.label.split("\n")):
            ty = y + PAD_Y + (k + 1) * LINE - 4
            weight = ' font-weight="bold"' if k == 0 and b.leaf else ""
            out.append(f'<text x="{x + w / 2:.1f}" y="{ty:.1f}" text-anchor="middle"{weight}>{escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def to_dot(clf: Any, table: Any = None, weights: np.ndarray | None = None, rows: np.ndarray | None = None,
           target: str | None = None) -> str:
    """Graphviz DOT of the classifier, one rank per layer (``dot -Tsvg`` draws it); leaves
    filled as in the SVG."""
    boxes, arcs = graph_of(clf, table, weights, rows, target)
    name = getattr(clf, "kind", "tree")
    lines = [f"digraph {name} {{", '  node [fontname="Helvetica"];']
    layers: dict[int, list[Box]] = {}
    for b in boxes:
        layers.setdefault(b.layer, []).append(b)
    for layer, members in sorted(layers.items()):
        cells = [f'{b.key} [shape={_LEAF_SHAPE if b.leaf else "ellipse, style=filled"}, '
                 f'fillcolor="{b.fill}", label="{_dot_text(b.label)}"]' for b in members]
        rank = "sink" if layer < 0 else "same"
        lines.append(f"  {{ rank={rank}; " + "; ".join(cells) + "; }" if len(cells) > 1 or layer < 0
                     else "  " + cells[0] + ";")
    for a in arcs:
        style = "" if a.yes else ", style=dashed"
        lines.append(f'  {a.source} -> {a.target} [label="{_dot_text(a.label)}"{style}];')
    lines.append("}")
    return "\n".join(lines)


def to_text(clf: Any, table: Any = None, weights: np.ndarray | None = None, rows: np.ndarray | None = None,
            target: str | None = None) -> str:
    """The classifier's ``to_text()`` with, on every line of a test or a leaf, the rows
    that reach it and their count per class: ``(312 samples, value = [..])``."""
    if table is not None:
        weights, rows = node_rows(clf, table, target)
    if rows is None and weights is None:
        return clf.to_text()
    counted = rows if rows is not None else np.rint(np.asarray(weights).sum(axis=1)).astype(np.int64)
    layout = clf.layout()

    def note(i: int) -> str:
        return "  (" + ", ".join(_count_lines(int(counted[i]), None if weights is None else weights[i])) + ")"

    if not layout.shared_classes:  # a tree: its lines in pre-order are its nodes in id order, yes first
        out, i = [], 0
        for line in clf.to_text().split("\n"):
            if line.strip() == "else:":
                out.append(line)
                continue
            out.append(line + note(i))
            i += 1
        return "\n".join(out)
    lines = [clf.to_text()]
    lines.append("rows per node:" if layout.n_nodes else "")
    live = [i for i in range(layout.n_nodes) if layout.feature[i] >= 0]
    original = clf.reachable()
    for k, i in enumerate(live):
        lines.append(f"n{original[k]}{note(i)}")
    for c in sorted({int(layout.label[t]) for t in layout.terminals}):
        terms = [int(t) for t in layout.terminals if layout.label[t] == c]
        n = int(counted[terms].sum())
        w = None if weights is None else weights[terms].sum(axis=0)
        lines.append(f"predict {clf.classes[c]}  (" + ", ".join(_count_lines(n, w)) + ")")
    return "\n".join(lines)


_LEAF_SHAPE = 'box, style="rounded,filled"'


def _dot_text(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
