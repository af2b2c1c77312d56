"""Decision memo: a self-contained HTML report of a plan or a release for the people who approve it
(issue 14). Plotly figures are embedded with plotly.js inline, so the file works offline. No
streamlit here: the planner page offers it as a download.
"""
from __future__ import annotations

import html
from datetime import datetime, timezone
from typing import Any, Sequence

import plotly.graph_objects as go

from dpcore import __version__

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:960px;margin:2em auto;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%;margin:.6em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}
th{background:#f4f4f4}.note{color:#555;font-size:.9em}.box{background:#f3f8ff;border:1px solid #cfe0ff;padding:.8em;border-radius:6px}
"""


def _table(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "<p class='note'>(none)</p>"
    cols = list(rows[0])
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(r.get(c)))}</td>" for c in cols) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def epsilon_figure(plan: dict[str, float], labels: dict[str, str]) -> go.Figure:
    """Bar chart of ε per statistic (the plan or the release)."""
    names = [labels.get(k, k) for k in plan]
    fig = go.Figure(go.Bar(x=names, y=list(plan.values()), text=[f"{v:.3g}" for v in plan.values()],
                           textposition="outside", marker_color="#4c78a8"))
    fig.update_layout(title="ε per statistic (they add up: sequential composition)", yaxis_title="ε",
                      height=360, margin=dict(l=40, r=20, t=50, b=40))
    return fig


def decision_memo_html(*, title: str, dataset: dict[str, Any], plan_rows: Sequence[dict[str, Any]],
                       total_epsilon: float, cap_epsilon: float | None = None,
                       releases: Sequence[dict[str, Any]] = (), figures: Sequence[go.Figure] = (),
                       notes: Sequence[str] = ()) -> str:
    """The memo as one HTML string: what is published, from which data, at which ε, how accurate,
    what it costs against the cap, the released values (if any), and the figures (plotly.js inline
    once, so the file works without a network).

    plan_rows: one dict per statistic (e.g. statistic, target, ε, probability met); releases: one dict
    per released number (statistic, number, released value, ε, δ, mechanism, time).
    """
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_STYLE}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>",
             f"<p class='note'>Prepared {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC with dpcore {__version__}. "
             "Differential privacy: every published number has random noise added so that replacing any one "
             "person's record changes the probability of any result by at most a factor e<sup>ε</sup>.</p>"]
    summary = f"Total privacy loss of the plan: <b>ε = {total_epsilon:.4g}</b>"
    if cap_epsilon is not None:
        verdict = "within" if total_epsilon <= cap_epsilon * (1 + 1e-12) else "<b>above</b>"
        summary += f", {verdict} the cap ε = {cap_epsilon:.4g} of this data."
    parts.append(f"<div class='box'>{summary}</div>")
    parts.append("<h2>Data</h2>" + _table([{k: v for k, v in dataset.items()}]) +
                 "<p class='note'>The number of records n is public (neighbouring datasets replace one record). "
                 "Planning numbers computed on a confidential file are not themselves protected.</p>")
    parts.append("<h2>The plan: ε per statistic and the accuracy it buys</h2>" + _table(list(plan_rows)))
    if releases:
        parts.append("<h2>Released values (the only numbers that may be published)</h2>" + _table(list(releases)))
    for note in notes:
        parts.append(f"<p>{html.escape(note)}</p>")
    for i, fig in enumerate(figures):
        parts.append(fig.to_html(full_html=False, include_plotlyjs="inline" if i == 0 else False))
    parts.append("</body></html>")
    return "\n".join(parts)
