"""Decision memo: a self-contained HTML report of a plan or a release for the people who approve it.
No streamlit here: the planner page offers it as a download.

The chart is a static SVG drawn here (numbers in, SVG text out), inline in the HTML: the memo opens
offline, in any browser or mail client, and stays small. (It embedded plotly.js, 4.8 MB, for one bar
chart.) The tables fit the page: numbers are written for people (thousands separators, never
scientific notation for an income), the dataset's identity is a two-column list, and long cells wrap.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from dpcore import __version__

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%;margin:.6em 0;table-layout:auto}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
td.num{text-align:right;white-space:nowrap}
th{background:#f4f4f4;overflow-wrap:normal}.note{color:#555;font-size:.9em}.box{background:#f3f8ff;border:1px solid #cfe0ff;padding:.8em;border-radius:6px}
svg{max-width:100%;height:auto}
"""

BAR_COLOR = "#4c78a8"


def format_number(value: Any) -> str:
    """A number as people read it: thousands separators from 1,000 on (an income of 22,329.4 is
    "22,329", never "2.233e+04"), five significant digits below (an ε of 4.7775, a Gini of 0.47382),
    scientific notation only for tiny numbers such as a δ of 1e-08."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    size = abs(value)
    if size >= 1000:
        return f"{value:,.0f}"
    if size == 0 or size >= 1e-3:
        return f"{value:.5g}"
    return f"{value:.3g}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _table(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "<p class='note'>(none)</p>"
    cols = list(rows[0])
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class='num'>{html.escape(format_number(r.get(c)))}</td>"
            if _is_number(r.get(c))
            else f"<td>{html.escape(field_text(r.get(c)))}</td>"
            for c in cols
        )
        + "</tr>"
        for r in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


#: the words of a release record's field names (dpcore.release's dataset identity), for a reader of the memo
FIELD_LABELS = {
    "label": "Data set",
    "source": "Source",
    "file_name": "File",
    "income_column": "Income column",
    "group_column": "Group column",
    "n": "Number of records n",
    "ledger_account": "Ledger account (public id)",
    "missing_values": "Missing incomes",
    "group_labels": "Group labels",
    "declared_public": "declared public",
    "rule": "rule",
    "group_sizes": "Group sizes",
    "population": "Population",
}


def field_label(key: Any) -> str:
    """A field name in words: its label above, else the name with spaces ("income_column" -> "Income column")."""
    text = str(key)
    return FIELD_LABELS.get(text, text.replace("_", " ").strip().capitalize())


def field_text(value: Any) -> str:
    """A field's value in words: numbers as :func:`format_number`, lists joined by commas, a nested record as
    "label: value; ..." (a raw Python dict or list is never shown)."""
    if isinstance(value, dict):
        return "; ".join(f"{field_label(k)}: {field_text(v)}" for k, v in value.items() if v is not None)
    if isinstance(value, (list, tuple, set)):
        return ", ".join(field_text(v) for v in value)
    return format_number(value)


def _fields(mapping: dict[str, Any]) -> str:
    """A record (the dataset's identity) as a two-column list: one line per field, so it never overflows."""
    if not mapping:
        return "<p class='note'>(none)</p>"
    body = "".join(
        f"<tr><th>{html.escape(field_label(k))}</th><td>{html.escape(field_text(v))}</td></tr>"
        for k, v in mapping.items()
        if v is not None
    )
    return f"<table>{body}</table>"


def epsilon_figure(plan: dict[str, float], labels: dict[str, str], *, width: int = 720) -> str:
    """Horizontal bars of ε per statistic (the plan or the release) as inline SVG text."""
    names = [labels.get(k, k) for k in plan]
    values = [float(v) for v in plan.values()]
    top = max(values, default=0.0) or 1.0
    row, left, right, head = 30, 250, 70, 34
    height = head + row * len(values) + 12
    plot = width - left - right
    esc = html.escape
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" font-family="sans-serif" font-size="13" role="img">',
        "<title>ε per statistic (they add up: sequential composition)</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
        '<text x="0" y="18" font-weight="bold">ε per statistic (they add up: sequential composition)</text>',
    ]
    for i, (name, value) in enumerate(zip(names, values, strict=True)):
        y = head + i * row
        bar = plot * max(value, 0.0) / top
        short = name if len(name) <= 36 else name[:35] + "…"
        out.append(f'<text x="{left - 8}" y="{y + 17}" text-anchor="end"><title>{esc(name)}</title>{esc(short)}</text>')
        out.append(f'<rect x="{left}" y="{y + 4}" width="{bar:.1f}" height="{row - 10}" fill="{BAR_COLOR}"/>')
        out.append(f'<text x="{left + bar + 6:.1f}" y="{y + 17}">{esc(format_number(value))}</text>')
    out.append("</svg>")
    return "\n".join(out)


def decision_memo_html(
    *,
    title: str,
    dataset: dict[str, Any],
    plan_rows: Sequence[dict[str, Any]],
    total_epsilon: float,
    cap_epsilon: float | None = None,
    releases: Sequence[dict[str, Any]] = (),
    figures: Sequence[str] = (),
    notes: Sequence[str] = (),
) -> str:
    """The memo as one HTML string: what is published, from which data, at which ε, the accuracy it
    buys, what it costs against the cap, the released values (if any), and the figures (inline SVG
    from :func:`epsilon_figure`, so the file works without a network).

    plan_rows: one dict per statistic (e.g. statistic, ε, accuracy it buys); releases: one dict per
    released number (statistic, number, released value, ε, ...).
    """
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='note'>Prepared {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC with dpcore {__version__}. "
        "Differential privacy: every published number has random noise added so that replacing any one "
        "person's record changes the probability of any result by at most a factor e<sup>ε</sup>.</p>",
    ]
    summary = f"Total privacy loss of the plan: <b>ε = {html.escape(format_number(float(total_epsilon)))}</b>"
    if cap_epsilon is not None:
        verdict = "within" if total_epsilon <= cap_epsilon * (1 + 1e-12) else "<b>above</b>"
        summary += f", {verdict} the cap ε = {html.escape(format_number(float(cap_epsilon)))} of this data."
    parts.append(f"<div class='box'>{summary}</div>")
    parts.append(
        "<h2>Data</h2>"
        + _fields(dict(dataset))
        + "<p class='note'>The number of records n is public (neighbouring datasets replace one record). "
        "Planning numbers computed on a confidential file are not themselves protected.</p>"
    )
    parts.append("<h2>The plan: ε per statistic and the accuracy it buys</h2>" + _table(list(plan_rows)))
    if releases:
        parts.append("<h2>Released values (the only numbers that may be published)</h2>" + _table(list(releases)))
    for note in notes:
        parts.append(f"<p>{html.escape(note)}</p>")
    for figure in figures:
        parts.append(f"<figure>{figure}</figure>")
    parts.append("</body></html>")
    return "\n".join(parts)
