"""The text alternative of a chart (WCAG 2.1 success criterion 1.1.1, non-text content): a sentence that says
what the chart shows and the data it draws as a table, both reachable by a screen reader.

A plotly chart is a picture to a screen reader (plotly.js draws SVG without text alternatives, and Streamlit
gives the chart no accessible name), so every chart the pages show through ``ui.common`` (``show_figure``,
``show_spec``, ``cached_figure``) is followed by :func:`chart_text_html` of its figure specification: the sentence
(visually hidden: the chart is there for sighted readers) and a closed ``<details>`` "Chart data as a table"
that anyone can open (a ``<summary>`` is a native button: keyboard and screen readers reach it). Charts drawn as
SVG images (``ui.svg_charts``) build a :class:`ChartText` from their own series.

Numbers in, text out: no streamlit, no plotly (the specifications are plain data; arrays may be lists, numpy
arrays or plotly's base64 typed arrays).
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Rows of a chart's table at most: a screen reader reads a table row by row, and a line of 2,000 points
#: is no better read in full; longer data are shown at evenly spaced rows (first and last kept), and the
#: table says so.
MAX_ROWS = 40
#: Series described one by one in the sentence at most (the table has them all).
MAX_SERIES_IN_SENTENCE = 6
#: Visually hidden, still read by screen readers (the usual "sr-only" rules, inline: st.html keeps style
#: attributes, and the app has no style sheet of its own).
SCREEN_READER_ONLY = (
    "position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;"
    "clip:rect(0,0,0,0);white-space:nowrap;border:0"
)
#: The class of the element that holds a chart's text alternative (the browser tests find it by this).
CSS_CLASS = "dp-chart-text"

_KINDS = {"scatter": "line chart", "scattergl": "line chart", "bar": "bar chart", "box": "box plot"}
_KINDS.update({"histogram": "histogram", "heatmap": "heat map", "violin": "violin plot"})


@dataclass(frozen=True)
class ChartText:
    """What a chart shows, in words (``summary``) and as a table (``columns``, ``rows`` of display strings);
    ``note`` says what the table leaves out (rows thinned out)."""

    summary: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""
    caption: str = field(default="")


def number(value: Any) -> str:
    """A number as a screen reader should hear it: 4 significant digits, no exponent for everyday sizes."""
    if value is None:
        return "no value"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)).lower()
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        x = float(value)
        if math.isnan(x):
            return "no value"
        if math.isinf(x):
            return "infinity" if x > 0 else "minus infinity"
        if x != 0 and (abs(x) >= 1e12 or abs(x) < 1e-4):
            return f"{x:.3e}"
        if abs(x) >= 1000 or x == int(x):
            return f"{x:,.0f}"
        return f"{x:.4g}"
    return str(value)


def _array(value: Any) -> list:
    """A trace's data array as a list (plotly's base64 typed arrays decoded); [] when absent."""
    if value is None:
        return []
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value.get("dtype", "f8")))
        shape = value.get("shape")
        if shape:
            dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else list(shape)
            flat = flat.reshape(dims)
        return flat.tolist()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [v.tolist() if isinstance(v, np.ndarray) else v for v in value]
    if hasattr(value, "tolist"):  # a pandas Series or Index
        return list(value.tolist())
    if isinstance(value, (str, int, float)):
        return [value]
    return list(value)


def _text(value: Any) -> str:
    """A title as plain text (plotly titles are strings or {"text": ...}; tags such as <br> become spaces)."""
    if isinstance(value, dict):
        value = value.get("text")
    if not value:
        return ""
    text = re.sub(r"\s*<br\s*/?>\s*", "; ", str(value))
    while "<" in text and ">" in text.split("<", 1)[1]:  # other inline tags (<b>, <sup>): keep their text
        before, rest = text.split("<", 1)
        text = before + rest.split(">", 1)[1]
    return " ".join(text.split())


def _axis(layout: dict, name: str) -> tuple[str, bool]:
    """An axis's title and whether it is logarithmic."""
    axis = layout.get(name) or {}
    return _text(axis.get("title")), axis.get("type") == "log"


def _log_note(title: str, log: bool) -> str:
    return " (log scale)" if log and "log" not in title.lower() else ""


def _numeric(values: list) -> list[float] | None:
    try:
        out = [float(v) for v in values if v is not None]
    except (TypeError, ValueError):
        return None
    return [v for v in out if not math.isnan(v)] or None


def _thin(rows: list[tuple], what: str) -> tuple[list[tuple[str, ...]], str]:
    """At most :data:`MAX_ROWS` of ``rows`` (raw values), evenly spaced with the first and last, as display strings;
    and the note that says so. Formatting only the rows kept: a curve may have thousands of points."""
    note = ""
    if len(rows) > MAX_ROWS:
        picks = sorted({round(i * (len(rows) - 1) / (MAX_ROWS - 1)) for i in range(MAX_ROWS)})
        note = f"{len(picks)} of the {len(rows):,} {what}, evenly spaced (first and last kept)."
        rows = [rows[i] for i in picks]
    return [tuple(v if isinstance(v, str) else number(v) for v in row) for row in rows], note


_SPREAD = (
    "values",
    "lowest (or lower whisker)",
    "lower quartile",
    "median",
    "upper quartile",
    "highest (or upper whisker)",
)


def _spread_rows(trace: dict, name: str) -> list[tuple[str, tuple[str, ...]]]:
    """One row per box (or histogram): how many values, the ends, the quartiles. A box drawn from precomputed
    statistics (``q1``, ``median``, ``q3``, fences) gives those; raw values are summarised here."""
    if trace.get("median") is not None:
        labels = _array(trace.get("x")) or _array(trace.get("y")) or [name]
        keys = ("lowerfence", "q1", "median", "q3", "upperfence")
        stats = [_array(trace.get(k)) for k in keys]
        out = []
        for i, label in enumerate(labels):
            row = tuple(number(column[i]) if i < len(column) else "no value" for column in stats)
            out.append((name if str(label) == name else f"{name}, {label}", ("not given", *row)))
        return out
    if trace.get("type") == "histogram" or not _array(trace.get("y")):
        groups, values = [], _array(trace.get("x"))
    else:
        groups, values = _array(trace.get("x")), _array(trace.get("y"))
    by_group: dict[str, list] = {}
    if groups and len(groups) == len(values) and len(set(map(str, groups))) > 1:
        for g, v in zip(groups, values, strict=True):
            by_group.setdefault(f"{name}, {g}", []).append(v)
    else:
        by_group[name] = values
    out = []
    for label, group_values in by_group.items():
        numeric = _numeric(group_values)
        if numeric:
            q = np.quantile(np.asarray(numeric, dtype=float), [0, 0.25, 0.5, 0.75, 1])
            out.append((label, (number(len(numeric)), *(number(v) for v in q))))
    return out


def _trace_name(trace: dict, index: int) -> str:
    return _text(trace.get("name")) or f"series {index + 1}"


def _xy(trace: dict) -> tuple[list, list]:
    """The category (or x) and value arrays of a trace, horizontal bars turned upright."""
    x, y = _array(trace.get("x")), _array(trace.get("y"))
    if trace.get("orientation") == "h":
        x, y = y, x
    if not x and y:
        x = list(range(len(y)))
    return x, y


def _series_sentence(name: str, x: list, y: list, *, bars: bool) -> str:
    """A series in words: a line from its first to its last point, with its highest and lowest points where
    they lie between; bars by their highest and lowest bar."""
    pairs = [(a, b) for a, b in zip(x, y, strict=False) if _is_number(b)]
    if not pairs:
        return ""
    if len(pairs) == 1:
        return f"{name}: {number(pairs[0][1])} at {number(pairs[0][0])}"
    low = min(pairs, key=lambda p: float(p[1]))
    high = max(pairs, key=lambda p: float(p[1]))
    if bars:
        return f"{name}: highest {number(high[1])} at {number(high[0])}, lowest {number(low[1])} at {number(low[0])}"
    first, last = pairs[0], pairs[-1]
    words = f"{name}: from {number(first[1])} at {number(first[0])} to {number(last[1])} at {number(last[0])}"
    for what, point in (("highest", high), ("lowest", low)):
        if float(point[1]) not in (float(first[1]), float(last[1])):
            words += f", {what} {number(point[1])} at {number(point[0])}"
    return words


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _marks(layout: dict) -> list[str]:
    """The chart's labelled marks (annotations such as "your ε", "true Gini"), with where they are."""
    out = []
    for note in layout.get("annotations") or []:
        text = _text(note.get("text"))
        if not text:
            continue
        where = note.get("x") if note.get("xref", "x") != "paper" else note.get("y")
        ref = note.get("xref", "x") if note.get("xref", "x") != "paper" else note.get("yref", "y")
        if ref != "paper" and isinstance(where, (int, float)) and not isinstance(where, bool):
            axis = "x" if note.get("xref", "x") != "paper" else "y"
            out.append(f"{text} (at {axis} = {number(where)})")
        else:
            out.append(text)
    return list(dict.fromkeys(out))


def chart_text(spec: dict) -> ChartText:  # noqa: C901 - one branch per kind of trace, read top to bottom
    """The text alternative of a plotly figure specification (``{"data": [...], "layout": {...}}``)."""
    layout = spec.get("layout") or {}
    traces = [t for t in spec.get("data") or [] if t.get("visible", True) is not False]
    title = _text(layout.get("title"))
    x_title, x_log = _axis(layout, "xaxis")
    y_title, y_log = _axis(layout, "yaxis")
    kinds = list(dict.fromkeys(_KINDS.get(t.get("type", "scatter"), "chart") for t in traces))
    kind = kinds[0] if len(kinds) == 1 else "chart"
    if kind == "line chart" and all("lines" not in str(t.get("mode", "lines")) for t in traces):
        kind = "scatter plot"
    x_name, y_name = x_title or "x", y_title or "value"
    if any(t.get("orientation") == "h" for t in traces):
        x_name, y_name = y_title or "category", x_title or "value"
        x_log, y_log = y_log, x_log

    opening = f"{kind[0].upper()}{kind[1:]}" + (f": {title}" if title else "")
    if y_title or x_title:
        opening += f", {y_name}" + _log_note(y_name, y_log) + f" against {x_name}" + _log_note(x_name, x_log)
    sentences = [opening + "."]

    rows: list[tuple[str, ...]] = []
    raw: list[tuple[object, ...]] = []  # the values before _thin formats them
    columns: tuple[str, ...]
    series_sentences: list[str] = []
    spreads = [t for t in traces if t.get("type") in ("box", "histogram", "violin")]
    grids = [t for t in traces if t.get("type") == "heatmap"]
    lines = [t for t in traces if t not in spreads and t not in grids]
    names = [_trace_name(t, i) for i, t in enumerate(traces)]
    note = ""
    if grids:
        columns = (y_name, x_name, "value")
        for trace in grids:
            z = _array(trace.get("z"))
            xs, ys = _array(trace.get("x")), _array(trace.get("y"))
            for i, row in enumerate(z):
                for j, value in enumerate(row if isinstance(row, list) else [row]):
                    ylab = ys[i] if i < len(ys) else i
                    xlab = xs[j] if j < len(xs) else j
                    raw.append((ylab, xlab, value))
        rows, note = _thin(raw, "cells")
    elif spreads and not lines:
        columns = ("series", *_SPREAD)
        for index, trace in enumerate(traces):
            if trace in spreads:
                for label, row in _spread_rows(trace, names[index]):
                    rows.append((label, *row))
                    series_sentences.append(f"{label}: median {row[3]}, middle half {row[2]} to {row[4]}")
    else:
        xys = [(names[traces.index(t)], *_xy(t)) for t in lines]
        xys = [(n, x, y) for n, x, y in xys if y]
        shared = len(xys) > 1 and all(x == xys[0][1] for _, x, _ in xys) and len(xys) <= 8
        if shared or len(xys) == 1:
            columns = (x_name, *(n if len(xys) > 1 else y_name for n, _, _ in xys))
            for i, xv in enumerate(xys[0][1] if xys else []):
                raw.append((xv, *(y[i] if i < len(y) else None for _, _, y in xys)))
        else:
            columns = ("series", x_name, y_name)
            for n, x, y in xys:
                raw += [(n, a, b) for a, b in zip(x, y, strict=False)]
        rows, note = _thin(raw, "points")
        bars = {names[traces.index(t)] for t in lines if t.get("type") == "bar"}
        series_sentences = [s for s in (_series_sentence(n, x, y, bars=n in bars) for n, x, y in xys) if s]

    if len(traces) > 1:
        sentences.append(f"{len(traces)} series: " + "; ".join(dict.fromkeys(names)) + ".")
    if series_sentences:
        shown = series_sentences[:MAX_SERIES_IN_SENTENCE]
        more = len(series_sentences) - len(shown)
        sentences.append("; ".join(shown) + (f"; {more} more in the table." if more else "."))
    marks = _marks(layout)
    if marks:
        sentences.append("Marked: " + "; ".join(marks) + ".")
    return ChartText(
        summary=" ".join(sentences),
        columns=tuple(columns),
        rows=tuple(rows),
        note=note,
        caption=title or (f"{y_name} against {x_name}" if (x_title or y_title) else "The chart's data"),
    )


def chart_text_html(text: ChartText) -> str:
    """The text alternative as HTML for ``st.html``: the sentence (visually hidden) and the table in a closed
    ``<details>`` ("Chart data as a table"), with a caption and column headers (``scope="col"``)."""
    esc = html.escape
    head = "".join(f'<th scope="col">{esc(c)}</th>' for c in text.columns)
    body = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>" for row in text.rows)
    note = f"<p>{esc(text.note)}</p>" if text.note else ""
    return (
        f'<div class="{CSS_CLASS}"><p style="{SCREEN_READER_ONLY}">Chart. {esc(text.summary)}</p>'
        '<details><summary style="font-size:0.875rem;cursor:pointer">Chart data as a table</summary>'
        f"<table><caption>{esc(text.caption)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        f"{note}</details></div>"
    )


def series_text(
    lines: Sequence[tuple[str, Sequence[float], Sequence[float]]],
    *,
    title: str,
    x_title: str,
    y_title: str,
) -> ChartText:
    """The text alternative of a line chart given as (label, xs, ys) series (charts drawn as SVG)."""
    spec = {
        "data": [{"type": "scatter", "mode": "lines", "name": n, "x": list(x), "y": list(y)} for n, x, y in lines],
        "layout": {
            "title": {"text": title},
            "xaxis": {"title": {"text": x_title}},
            "yaxis": {"title": {"text": y_title}},
        },
    }
    return chart_text(spec)
