"""The convergence of a solve (issue 27, item 3): the incumbent and the bound over time, as
the progress lines reported them, kept in the result as a short history and drawn as a
plain SVG (no plotting library).

A history is a tuple of ``(seconds, incumbent, bound)`` points, in the user's sense of the
objective (a maximum shows the maximum), ``None`` where a value was not known yet. The
recorder keeps every point while there are few and thins them beyond ``LIMIT`` (the first,
the last and every change of either value kept, evenly spaced otherwise)."""
from __future__ import annotations

from html import escape
from typing import Callable, Optional

Point = tuple[float, Optional[float], Optional[float]]

LIMIT = 200  # points kept in a result


class Recorder:
    """A progress callback that keeps the history and passes each report on."""

    def __init__(self, forward: Optional[Callable] = None) -> None:
        self.forward = forward
        self.points: list[Point] = []

    def __call__(self, p) -> None:
        inc = None if p.incumbent is None else float(p.incumbent)
        bound = None if p.bound is None else float(p.bound)
        if not self.points or self.points[-1][1:] != (inc, bound):
            self.points.append((float(p.elapsed), inc, bound))
        if self.forward is not None:
            self.forward(p)

    def history(self, seconds: float, incumbent: Optional[float], bound: Optional[float]) -> tuple[Point, ...]:
        """The points with the final one (the result's own values at ``seconds``), thinned."""
        points = list(self.points)
        if incumbent is not None or bound is not None:
            points.append((float(seconds), incumbent, bound))
        return thin(points)


def thin(points: list[Point], limit: int = LIMIT) -> tuple[Point, ...]:
    """At most ``limit`` points: the first and last always, then evenly spaced ones."""
    if len(points) <= limit:
        return tuple(points)
    step = (len(points) - 1) / (limit - 1)
    return tuple(points[round(i * step)] for i in range(limit))


def convergence_svg(history: tuple[Point, ...], title: str = "incumbent and bound over time",
                    width: int = 640, height: int = 360) -> str:
    """The incumbent (solid) and the proven bound (dashed) as step lines over time."""
    left, right, top, bottom = 70, 20, 34, 46
    pts = [p for p in history if p[1] is not None or p[2] is not None]
    values = [v for p in pts for v in p[1:] if v is not None]
    t1 = max([p[0] for p in pts], default=1.0) or 1.0
    y0, y1 = (min(values), max(values)) if values else (0.0, 1.0)
    if y1 == y0:
        y0, y1 = y0 - 1.0, y1 + 1.0
    pad = 0.06 * (y1 - y0)
    y0, y1 = y0 - pad, y1 + pad

    def X(t: float) -> float:
        return left + t / t1 * (width - left - right)

    def Y(v: float) -> float:
        return height - bottom - (v - y0) / (y1 - y0) * (height - top - bottom)

    def steps(k: int) -> str:
        out: list[str] = []
        last: Optional[float] = None
        for p in pts:
            v = p[k]
            if v is None:
                continue
            if last is not None:
                out.append(f"{X(p[0]):.1f},{Y(last):.1f}")
            out.append(f"{X(p[0]):.1f},{Y(v):.1f}")
            last = v
        if last is not None:
            out.append(f"{X(t1):.1f},{Y(last):.1f}")
        return " ".join(out)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="Helvetica" '
           'font-size="11">',
           f'<text x="{width / 2:.0f}" y="20" text-anchor="middle" font-size="13">{escape(title)}</text>',
           f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
           f'<text x="{(left + width - right) / 2:.0f}" y="{height - 10}" text-anchor="middle">seconds</text>',
           f'<text x="16" y="{height / 2:.0f}" text-anchor="middle" transform="rotate(-90 16 {height / 2:.0f})">'
           'objective</text>']
    for i in range(5):
        v = y0 + (y1 - y0) * i / 4
        out.append(f'<text x="{left - 6}" y="{Y(v) + 4:.1f}" text-anchor="end">{v:.4g}</text>')
        t = t1 * i / 4
        out.append(f'<text x="{X(t):.1f}" y="{height - bottom + 16}" text-anchor="middle">{t:.3g}</text>')
    for k, style, name, y in ((1, 'stroke="#c0392b" stroke-width="2"', "incumbent", top + 4),
                              (2, 'stroke="#2c3e50" stroke-width="2" stroke-dasharray="6 4"', "bound", top + 18)):
        line = steps(k)
        if line:
            out.append(f'<polyline fill="none" {style} points="{line}"/>')
        out.append(f'<line x1="{width - right - 110}" y1="{y}" x2="{width - right - 80}" y2="{y}" {style}/>')
        out.append(f'<text x="{width - right - 74}" y="{y + 4}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
