"""Layered drawings of classifiers (E3): one graph model, written as DOT or as SVG.

Trees and diagrams are both drawn as a layered graph: decision nodes by layer (a tree's
depth, a diagram's layer), class leaves in a bottom row, arcs labelled yes / no and, when
training data is given, every node and arc with the number of rows that pass it (the
fragmentation view of Florio et al., Fig. 1). The SVG is laid out here (layers are rows,
nodes spread evenly), so rendering needs no Graphviz installation.

Each classifier builds its own graph (``Tree.graph``, ``Diagram.graph``, in terms of the
``Box`` and ``Arc`` below), so this module imports no classifier and the classifiers
can show themselves in Jupyter (``_repr_svg_``).
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape



@dataclass(frozen=True, slots=True)
class Box:
    key: str
    label: str
    layer: int  # -1: the leaf row at the bottom
    leaf: bool


@dataclass(frozen=True, slots=True)
class Arc:
    source: str
    target: str
    label: str
    yes: bool


def graph_of(clf, table=None) -> tuple[list[Box], list[Arc]]:
    """The boxes and arcs of a ``Tree`` or ``Diagram`` (its own ``graph`` method);
    ``table`` (raw rows) adds counts."""
    return clf.graph(table)


def to_svg(clf, table=None) -> str:
    """A standalone SVG drawing of the classifier (layers top to bottom)."""
    boxes, arcs = graph_of(clf, table)
    leaf_layer = max((b.layer for b in boxes if not b.leaf), default=-1) + 1
    rows: dict[int, list[Box]] = {}
    for b in boxes:
        layer = b.layer if b.layer >= 0 else leaf_layer
        rows.setdefault(layer, []).append(b)
    width_box, height_box, gap_x, gap_y = 150, 44, 24, 70
    widest = max(len(r) for r in rows.values())
    total_w = widest * (width_box + gap_x) + gap_x
    pos: dict[str, tuple[float, float]] = {}
    for layer, members in rows.items():
        span = len(members) * (width_box + gap_x) - gap_x
        x0 = (total_w - span) / 2
        for k, b in enumerate(members):
            pos[b.key] = (x0 + k * (width_box + gap_x), gap_y / 2 + layer * (height_box + gap_y))
    total_h = (max(rows) + 1) * (height_box + gap_y)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" height="{total_h:.0f}" '
           f'font-family="Helvetica" font-size="12">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
           'orient="auto"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>']
    for a in arcs:
        (x1, y1), (x2, y2) = pos[a.source], pos[a.target]
        sx, sy, tx, ty = x1 + width_box / 2, y1 + height_box, x2 + width_box / 2, y2
        dash = "" if a.yes else ' stroke-dasharray="5,3"'
        out.append(f'<line x1="{sx:.0f}" y1="{sy:.0f}" x2="{tx:.0f}" y2="{ty:.0f}" stroke="black"{dash} '
                   'marker-end="url(#arrow)"/>')
        out.append(f'<text x="{(sx + tx) / 2:.0f}" y="{(sy + ty) / 2:.0f}" text-anchor="middle" fill="#444">'
                   f'{escape(a.label)}</text>')
    for b in boxes:
        x, y = pos[b.key]
        rx = 14 if b.leaf else 22
        fill = "#e8f4e8" if b.leaf else "#eef2fa"
        out.append(f'<rect x="{x:.0f}" y="{y:.0f}" width="{width_box}" height="{height_box}" rx="{rx}" '
                   f'fill="{fill}" stroke="black"/>')
        lines = b.label.split("\n")
        for k, line in enumerate(lines):
            ty = y + height_box / 2 + (k - (len(lines) - 1) / 2) * 14 + 4
            out.append(f'<text x="{x + width_box / 2:.0f}" y="{ty:.0f}" text-anchor="middle">{escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def to_dot(clf, table=None) -> str:
    """Graphviz DOT of the classifier, one rank per layer (``dot -Tsvg`` draws it)."""
    boxes, arcs = graph_of(clf, table)
    name = getattr(clf, "kind", "tree")
    lines = [f"digraph {name} {{", '  node [fontname="Helvetica"];']
    layers: dict[int, list[Box]] = {}
    for b in boxes:
        layers.setdefault(b.layer, []).append(b)
    for layer, members in sorted(layers.items()):
        cells = [f'{b.key} [shape={"box, style=rounded" if b.leaf else "ellipse"}, label="{_dot_text(b.label)}"]'
                 for b in members]
        rank = "sink" if layer < 0 else "same"
        lines.append(f"  {{ rank={rank}; " + "; ".join(cells) + "; }" if len(cells) > 1 or layer < 0
                     else "  " + cells[0] + ";")
    for a in arcs:
        style = "" if a.yes else ", style=dashed"
        lines.append(f'  {a.source} -> {a.target} [label="{_dot_text(a.label)}"{style}];')
    lines.append("}")
    return "\n".join(lines)


def _dot_text(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
