"""Plotly figure builders for the planner page (no Streamlit calls here)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpcore.experiments.planner import StatisticDots


def dots_frame(dots: Sequence[StatisticDots]) -> pd.DataFrame:
    """Chart data of the quantile dot plots (one row per dot; relative error in percent)."""
    rows = []
    for d in dots:
        n_dots = len(d.errors_percent[0]) if d.errors_percent else 0
        for label, values in zip(d.labels, d.errors_percent):
            for i, v in enumerate(values):
                rows.append({"statistic": d.statistic, "number": label, "epsilon": d.epsilon, "dot": i + 1,
                             "quantile": (i + 0.5) / n_dots, "relative_error_percent": float(v)})
    return pd.DataFrame(rows)


def fig_quantile_dots(frame: pd.DataFrame, tol_percent: float, title: str) -> go.Figure:
    """One row per released number; each dot is 1/20 of plausible releases; the band is the target.

    Built as a single trace with the band and the zero line as layout shapes (fast to build)."""
    labels = list(dict.fromkeys(frame["number"]))
    x = frame["relative_error_percent"].to_numpy()
    inside = np.abs(x) <= tol_percent
    fig = go.Figure(
        data=[go.Scatter(x=x, y=frame["number"].to_numpy(), mode="markers", showlegend=False,
                         marker=dict(size=11, color=np.where(inside, "seagreen", "firebrick").tolist(),
                                     line=dict(width=0.5, color="white")),
                         hovertemplate="%{y}: %{x:.2f}% error<extra></extra>")],
        layout=dict(
            title=dict(text=title),
            xaxis=dict(title=dict(text="error of a release, % of the true value (each dot = 5% of releases)")),
            yaxis=dict(categoryorder="array", categoryarray=labels[::-1]),
            shapes=[dict(type="rect", xref="x", yref="paper", x0=-tol_percent, x1=tol_percent, y0=0, y1=1,
                         fillcolor="rgba(46,139,87,0.15)", line=dict(width=0), layer="below"),
                    dict(type="line", xref="x", yref="paper", x0=0, x1=0, y0=0, y1=1,
                         line=dict(color="grey", dash="dot"))],
            annotations=[dict(x=tol_percent, y=1, xref="x", yref="paper", text=f"target ±{tol_percent:g}%",
                              showarrow=False, xanchor="right", yanchor="bottom")],
            height=140 + 28 * len(labels), margin=dict(l=10, r=10, t=50, b=40)))
    return fig


def fig_epsilons(frame: pd.DataFrame, total: float) -> go.Figure:
    """Horizontal bars: smallest epsilon per statistic, with the sequential total in the title."""
    fig = go.Figure(go.Bar(x=frame["epsilon"], y=frame["statistic"], orientation="h",
                           text=[f"{v:.3g}" for v in frame["epsilon"]], textposition="auto",
                           marker_color="steelblue"))
    fig.update_layout(title=f"Smallest ε per statistic (total under sequential composition: {total:.3g})",
                      xaxis_title="ε", height=120 + 45 * len(frame), margin=dict(l=10, r=10, t=50, b=40))
    return fig


def fig_budget(frame: pd.DataFrame) -> go.Figure:
    """Budget first: each statistic's epsilon share and the resulting error (two panels side by side)."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=("ε given to each statistic",
                                                        "resulting error (at its confidence level)"))
    fig.add_trace(go.Bar(x=frame["epsilon"], y=frame["statistic"], orientation="h", marker_color="steelblue",
                         showlegend=False), 1, 1)
    fig.add_trace(go.Bar(x=frame["relative_error_percent"], y=frame["statistic"], orientation="h",
                         marker_color="darkorange", showlegend=False,
                         text=[f"±{v:.3g}% ({c:g}%)" for v, c in zip(frame["relative_error_percent"],
                                                                   frame["confidence_percent"])],
                         textposition="auto"), 1, 2)
    fig.update_yaxes(showticklabels=False, row=1, col=2)
    fig.update_xaxes(title_text="ε", row=1, col=1)
    fig.update_xaxes(title_text="relative error, %", row=1, col=2)
    fig.update_layout(height=140 + 45 * len(frame), margin=dict(l=10, r=10, t=50, b=40))
    return fig


def posterior_frame(epsilons: Sequence[float], priors: np.ndarray, uppers: Sequence[np.ndarray]) -> pd.DataFrame:
    rows = []
    for eps, up in zip(epsilons, uppers):
        for p, q in zip(priors, up):
            rows.append({"epsilon": float(eps), "prior": float(p), "largest_posterior": float(q)})
    return pd.DataFrame(rows)


def fig_posterior(frame: pd.DataFrame, prior_marker: float | None = None) -> go.Figure:
    """Largest posterior an attacker can reach against the prior, one curve per epsilon."""
    traces = [go.Scatter(x=[0, 100], y=[0, 100], mode="lines", line=dict(color="grey", dash="dot"),
                         name="no release (posterior = prior)")]
    for eps in sorted(frame["epsilon"].unique()):
        sub = frame[frame["epsilon"] == eps]
        traces.append(go.Scatter(x=100 * sub["prior"].to_numpy(), y=100 * sub["largest_posterior"].to_numpy(),
                                 mode="lines", name=f"ε = {eps:g}"))
    shapes = []
    if prior_marker is not None:
        shapes.append(dict(type="line", xref="x", yref="paper", x0=100 * prior_marker, x1=100 * prior_marker,
                           y0=0, y1=1, line=dict(color="grey", dash="dash")))
    return go.Figure(data=traces, layout=dict(
        title=dict(text="What can an attacker learn? Largest belief after seeing the release"),
        xaxis=dict(title=dict(text="belief before the release (prior), %")),
        yaxis=dict(title=dict(text="largest belief after, %")), shapes=shapes,
        height=420, margin=dict(l=10, r=10, t=50, b=40), legend=dict(orientation="h", y=-0.2)))
