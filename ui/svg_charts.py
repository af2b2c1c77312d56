"""Small static line charts drawn as SVG text by Python (numbers in, SVG out; no st.* calls).

For pages that must open fast (the landing page): a plotly chart makes the browser load
and start plotly.js (~1 s of a cold start), while an SVG shown with ``st.image`` is a few kilobytes
the browser draws at once. No interaction (no hover, zoom): use plotly where that matters.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

#: Plotly's default colours, so an SVG chart looks like the app's plotly charts.
BLUE, RED, GREEN, GREY = "#636efa", "#ef553b", "#00cc96", "#808080"


@dataclass(frozen=True)
class SvgLine:
    """One series of a line chart: points (xs[i], ys[i]) in data units, joined in order."""

    label: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    color: str = BLUE
    width: float = 2.0
    dashed: bool = False


@dataclass(frozen=True)
class SvgPoint:
    """One marked point (a filled circle) with its legend label."""

    label: str
    x: float
    y: float
    color: str = RED


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    step = (high - low) / count
    return [low + i * step for i in range(count + 1)]


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def line_chart_svg(
    lines: Sequence[SvgLine],
    *,
    points: Sequence[SvgPoint] = (),
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    x_label: str,
    y_label: str,
    title: str,
    width: int = 720,
    height: int = 400,
) -> str:
    """An SVG line chart: axes with 6 ticks each, the lines, the marked points and a legend below.

    ``title`` becomes the SVG's <title> (read by screen readers). Values outside the ranges are
    clipped to the plot area. Raises ValueError for an empty range or a line whose xs and ys differ
    in length."""
    (x0, x1), (y0, y1) = x_range, y_range
    if not (x1 > x0 and y1 > y0):
        raise ValueError(f"empty chart range: x {x_range}, y {y_range}")
    legend_rows = (len(lines) + len(points) + 1) // 2
    left, right, top, bottom = 64, 16, 12, 52 + 22 * legend_rows
    plot_w, plot_h = width - left - right, height - top - bottom
    if plot_w <= 0 or plot_h <= 0:
        raise ValueError(f"chart too small ({width} x {height}) for its legend")

    def sx(x: float) -> float:
        return left + plot_w * (min(max(x, x0), x1) - x0) / (x1 - x0)

    def sy(y: float) -> float:
        return top + plot_h * (1 - (min(max(y, y0), y1) - y0) / (y1 - y0))

    esc = html.escape
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" font-family="sans-serif" font-size="13" role="img">',
        f"<title>{esc(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
    ]
    for x in _ticks(x0, x1):
        out.append(f'<line x1="{sx(x):.1f}" y1="{top}" x2="{sx(x):.1f}" y2="{top + plot_h}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{sx(x):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{_number(x)}</text>')
    for y in _ticks(y0, y1):
        out.append(f'<line x1="{left}" y1="{sy(y):.1f}" x2="{left + plot_w}" y2="{sy(y):.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{left - 8}" y="{sy(y) + 4:.1f}" text-anchor="end">{_number(y)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 38}" text-anchor="middle">{esc(x_label)}</text>')
    out.append(
        f'<text transform="translate(16 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle">{esc(y_label)}</text>'
    )
    for line in lines:
        if len(line.xs) != len(line.ys):
            raise ValueError(f"line {line.label!r}: {len(line.xs)} x values but {len(line.ys)} y values")
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(line.xs, line.ys, strict=True))
        dash = ' stroke-dasharray="6 4"' if line.dashed else ""
        out.append(
            f'<polyline points="{path}" fill="none" stroke="{line.color}" stroke-width="{line.width:g}"{dash}>'
            f"<title>{esc(line.label)}</title></polyline>"
        )
    for point in points:
        out.append(
            f'<circle cx="{sx(point.x):.1f}" cy="{sy(point.y):.1f}" r="6" fill="{point.color}">'
            f"<title>{esc(point.label)}: ({_number(point.x)}, {_number(point.y)})</title></circle>"
        )
    entries = [(item.label, item.color, "line", getattr(item, "dashed", False)) for item in lines]
    entries += [(item.label, item.color, "point", False) for item in points]
    for i, (label, color, kind, dashed) in enumerate(entries):
        ex = left + (i % 2) * plot_w / 2
        ey = top + plot_h + 62 + 22 * (i // 2)
        if kind == "line":
            dash = ' stroke-dasharray="6 4"' if dashed else ""
            out.append(
                f'<line x1="{ex:.1f}" y1="{ey - 4}" x2="{ex + 24:.1f}" y2="{ey - 4}" stroke="{color}" '
                f'stroke-width="3"{dash}/>'
            )
        else:
            out.append(f'<circle cx="{ex + 12:.1f}" cy="{ey - 4}" r="6" fill="{color}"/>')
        out.append(f'<text x="{ex + 32:.1f}" y="{ey}">{esc(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)
