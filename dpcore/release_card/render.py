"""The release card rendered: one self-contained HTML page, and the same content in Markdown (every text from the
record or the tables escaped: labels and column names come from the user's data)."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from .content import (
    SIMULATION_WARNING,
    Card,
    CardStatistic,
    auxiliary_note,
    build_card,
    describe_statistic,
    interval_note,
    software_line,
    visible,
)

# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------


def _e(x: Any) -> str:
    return html.escape(visible(str(x)), quote=True)


_CSS = """
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#fff;margin:0}
main{max-width:60rem;margin:0 auto;padding:1.5rem}
h1{font-size:1.7rem;margin:.2rem 0 1rem}h2{font-size:1.3rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
h3{font-size:1.05rem;margin:1.4rem 0 .3rem}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.93rem}
th,td{border:1px solid #d0d7de;padding:.25rem .55rem;text-align:left;vertical-align:top}
th{background:#f3f5f7}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.sim{background:#fff0f0;border:2px solid #c62828;padding:.6rem;font-weight:600}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dt{font-weight:600}dd{margin:0}
.note{color:#484f58;font-size:.93rem}
@media print{main{max-width:none}}
"""


def _html_values(s: CardStatistic, level: float) -> str:
    head = [f"<th>{_e(b)}</th>" for b in s.by]
    for c in s.columns:
        head.append(f"<th>{_e(c.name)}</th>")
        if c.interval:
            head.append(f"<th>{_e(c.name)}: {level:.0%} interval</th>")
    body = []
    for labels, numbers in s.rows:
        cells = [f"<td>{_e(lab)}</td>" for lab in labels]
        for c, num in zip(s.columns, numbers, strict=True):
            cells.append(f'<td class="num value" data-column="{_e(c.name)}">{_e(num.text)}</td>')
            if c.interval:
                cells.append(f'<td class="num interval" data-column="{_e(c.name)}">{_e(num.interval_text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = (
        ""
        if s.cells <= len(s.rows)
        else (f'<p class="note">The first {len(s.rows):,} of {s.cells:,} cells; every cell is in the table file.</p>')
    )
    return (
        f'<table data-statistic="{_e(s.name)}"><thead><tr>{"".join(head)}</tr></thead><tbody>'
        + "".join(body)
        + f"</tbody></table>{more}"
    )


def release_card_html(record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]) -> str:
    """The release card as one self-contained HTML page (module docstring). ``record``: the release record
    (``release_record.json`` as a dict); ``tables``: the released table of each statistic, by statistic name."""
    return render_html(build_card(record, tables))


def render_html(card: Card) -> str:
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Release card: {_e(card.title)}</title><style>{_CSS}</style></head><body><main>",
        f"<h1>Release card: {_e(card.title)}</h1>",
    ]
    if card.simulation:
        parts.append(f'<p class="sim">{_e(SIMULATION_WARNING)}</p>')
    parts.append(
        f"<dl><dt>Date</dt><dd>{_e(card.created)}</dd><dt>Privacy loss</dt><dd>epsilon = "
        f"{card.epsilon:g}, delta = {card.delta:.3g} in total</dd><dt>Software</dt>"
        f"<dd>{_e(software_line(card))}</dd></dl>"
    )
    parts.append("<h2>Released values</h2>")
    parts.append(f'<p class="note">{_e(interval_note(card))}</p>')
    for s in card.statistics:
        aux = f'<p class="note">{_e(auxiliary_note(s))}</p>' if s.auxiliary else ""
        parts.append(
            f"<section><h3>{_e(s.name)}</h3><p>{_e(describe_statistic(s))}</p>{_html_values(s, card.level)}{aux}</section>"
        )
    parts.append("<h2>Privacy statement</h2>" + "".join(f"<p>{_e(p)}</p>" for p in card.protected))
    parts.append(_html_cost_table(card))
    parts.append(
        "<h3>What is public (not protected)</h3><ul>" + "".join(f"<li>{_e(p)}</li>" for p in card.public) + "</ul>"
    )
    parts.append(
        "<h2>Methods</h2><ul>"
        + "".join(
            f"<li><strong>{_e(w)}</strong>: {_e(m)}. Paper: <cite>{_e(p)}</cite>.</li>" for w, m, p in card.methods
        )
        + "</ul>"
    )
    if card.notes:
        parts.append(
            "<h3>Noise, as recorded</h3><ul>" + "".join(f'<li class="note">{_e(n)}</li>' for n in card.notes) + "</ul>"
        )
    parts.append(
        f"<h2>Date and software</h2><p>Released {_e(card.created)} with {_e(software_line(card))}. The full "
        "audit record is release_record.json beside this card (SHA-256 of every file).</p>"
    )
    parts.append("</main></body></html>\n")
    return "\n".join(parts)


def _html_cost_table(card: Card) -> str:
    rows = "".join(
        f"<tr><td>{_e(s.name)}</td><td>{_e(s.kind)}</td><td class=\"num\">{s.epsilon:g}</td>"
        f"<td class=\"num\">{s.delta:.3g}</td></tr>"
        for s in card.statistics
        if not s.part_of  # a margin's share is in its statistic's cost
    )
    return (
        "<table><thead><tr><th>statistic</th><th>kind</th><th>epsilon</th><th>delta</th></tr></thead><tbody>"
        f"{rows}<tr><th>total</th><th></th><th class=\"num\">{card.epsilon:g}</th>"
        f"<th class=\"num\">{card.delta:.3g}</th></tr></tbody></table>"
    )


# ---------------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def _m(x: Any) -> str:
    """Text safe in Markdown: HTML-escaped (a renderer passes raw HTML through), the punctuation that opens
    emphasis, code, links, strike-through or a table cell escaped, one line. Every such text follows "| ", "- "
    or a fixed word on its line, so no label can start a heading or a list."""
    text = html.escape(visible(str(x)), quote=False).replace("\r", " ").replace("\n", " ")
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_values(s: CardStatistic, level: float) -> list[str]:
    head = [_m(b) for b in s.by]
    for c in s.columns:
        head.append(_m(c.name))
        if c.interval:
            head.append(_m(f"{c.name}: {level:.0%} interval"))
    align = ["---"] * len(s.by) + ["---:"] * (len(head) - len(s.by))
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    for labels, numbers in s.rows:
        cells = [_m(lab) for lab in labels]
        for c, num in zip(s.columns, numbers, strict=True):
            cells.append(_m(num.text))
            if c.interval:
                cells.append(_m(num.interval_text))
        lines.append("| " + " | ".join(cells) + " |")
    if s.cells > len(s.rows):
        lines += ["", f"The first {len(s.rows):,} of {s.cells:,} cells; every cell is in the table file."]
    return lines


def release_card_markdown(record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]) -> str:
    """The release card in Markdown: the content of :func:`release_card_html`."""
    return render_markdown(build_card(record, tables))


def render_markdown(card: Card) -> str:
    out = [f"# Release card: {_m(card.title)}", ""]
    if card.simulation:
        out += [f"**{_m(SIMULATION_WARNING)}**", ""]
    out += [
        f"- **Date:** {_m(card.created)}",
        f"- **Privacy loss:** epsilon = {card.epsilon:g}, delta = {card.delta:.3g} in total",
        f"- **Software:** {_m(software_line(card))}",
        "",
        "## Released values",
        "",
        _m(interval_note(card)),
        "",
    ]
    for s in card.statistics:
        out += [f"### {_m(s.name)}", "", _m(describe_statistic(s)), "", *_md_values(s, card.level), ""]
        if s.auxiliary:
            out += [_m(auxiliary_note(s)), ""]
    out += ["## Privacy statement", ""]
    for p in card.protected:
        out += [_m(p), ""]
    out += ["| statistic | kind | epsilon | delta |", "| --- | --- | ---: | ---: |"]
    out += [
        f"| {_m(s.name)} | {_m(s.kind)} | {s.epsilon:g} | {s.delta:.3g} |" for s in card.statistics if not s.part_of
    ]
    out += [f"| **total** | | {card.epsilon:g} | {card.delta:.3g} |", "", "### What is public (not protected)", ""]
    out += [f"- {_m(p)}" for p in card.public]
    out += ["", "## Methods", ""]
    out += [f"- **{_m(w)}**: {_m(m)}. Paper: *{_m(p)}*." for w, m, p in card.methods]
    if card.notes:
        out += ["", "### Noise, as recorded", ""] + [f"- {_m(n)}" for n in card.notes]
    out += [
        "",
        "## Date and software",
        "",
        f"Released {_m(card.created)} with {_m(software_line(card))}. The full audit "
        "record is release\\_record.json beside this card (SHA-256 of every file).",
        "",
    ]
    return "\n".join(out)
