"""Plotly figure builders for the planner page (no Streamlit calls here)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpcore.views.planner import StatisticDots

#: The ε bars, whose values plotly writes inside them in white: a blue dark enough for that (white on it 6.3:1;
#: on "steelblue" 4.1:1, below WCAG's 4.5:1)
EPSILON_BAR_COLOR = "#36648b"


def dots_frame(dots: Sequence[StatisticDots]) -> pd.DataFrame:
    """Chart data of the quantile dot plots (one row per dot): ``error`` in the target's unit, ``unit``
    "% of the true value" or "Gini" (released minus true Gini, 0.01 = one Gini point)."""
    rows = []
    for d in dots:
        absolute = d.errors_abs is not None
        values_of = (d.errors_abs if absolute else d.errors_percent) or ()
        n_dots = len(values_of[0]) if values_of else 0
        for label, values in zip(d.labels, values_of, strict=True):
            for i, v in enumerate(values):
                rows.append(
                    {
                        "statistic": d.statistic,
                        "number": label,
                        "epsilon": d.epsilon,
                        "dot": i + 1,
                        "quantile": (i + 0.5) / n_dots,
                        "error": float(v),
                        "unit": "Gini" if absolute else "% of the true value",
                    }
                )
    return pd.DataFrame(rows)


def fig_quantile_dots(frame: pd.DataFrame, tolerance: float, title: str, *, gini_points: bool = False) -> go.Figure:
    """One row per released number; each dot is 1/20 of plausible releases; the band is the target
    (``tolerance`` in % of the true value, or in Gini units when ``gini_points``).

    Built as a single trace with the band and the zero line as layout shapes (fast to build)."""
    labels = list(dict.fromkeys(frame["number"]))
    x = frame["error"].to_numpy()
    inside = np.abs(x) <= tolerance * (1 + 1e-12)
    if gini_points:
        axis = "error of a release, Gini (0.01 = one Gini point; each dot = 5% of releases)"
        hover, target = "%{y}: %{x:+.4f}<extra></extra>", f"target ±{tolerance:g}"
    else:
        axis = "error of a release, % of the true value (each dot = 5% of releases)"
        hover, target = "%{y}: %{x:.2f}% error<extra></extra>", f"target ±{tolerance:g}%"
    fig = go.Figure(
        data=[
            go.Scatter(
                x=x,
                y=frame["number"].to_numpy(),
                mode="markers",
                showlegend=False,
                marker=dict(
                    size=11,
                    color=np.where(inside, "seagreen", "firebrick").tolist(),
                    line=dict(width=0.5, color="white"),
                ),
                hovertemplate=hover,
            )
        ],
        layout=dict(
            title=dict(text=title),
            xaxis=dict(title=dict(text=axis)),
            yaxis=dict(categoryorder="array", categoryarray=labels[::-1]),
            shapes=[
                dict(
                    type="rect",
                    xref="x",
                    yref="paper",
                    x0=-tolerance,
                    x1=tolerance,
                    y0=0,
                    y1=1,
                    fillcolor="rgba(46,139,87,0.15)",
                    line=dict(width=0),
                    layer="below",
                ),
                dict(type="line", xref="x", yref="paper", x0=0, x1=0, y0=0, y1=1, line=dict(color="grey", dash="dot")),
            ],
            annotations=[
                dict(
                    x=tolerance,
                    y=1,
                    xref="x",
                    yref="paper",
                    text=target,
                    showarrow=False,
                    xanchor="right",
                    yanchor="bottom",
                )
            ],
            height=140 + 28 * len(labels),
            margin=dict(l=10, r=10, t=50, b=40),
        ),
    )
    return fig


def fig_epsilons(frame: pd.DataFrame, total: float) -> go.Figure:
    """Horizontal bars: smallest epsilon per statistic, with the sequential total in the title."""
    fig = go.Figure(
        go.Bar(
            x=frame["epsilon"],
            y=frame["statistic"],
            orientation="h",
            text=[f"{v:.3g}" for v in frame["epsilon"]],
            textposition="auto",
            marker_color=EPSILON_BAR_COLOR,
        )
    )
    fig.update_layout(
        title=f"Smallest ε per statistic (total under sequential composition: {total:.3g})",
        xaxis_title="ε",
        height=120 + 45 * len(frame),
        margin=dict(l=10, r=10, t=50, b=40),
    )
    return fig


def fig_budget(frame: pd.DataFrame) -> go.Figure:
    """Budget first: each statistic's epsilon share and the resulting error (two panels side by side).

    The two panels are laid out by hand (x-axis domains, shared categories) rather than with
    ``make_subplots``, whose grid construction costs ~15 ms per figure (a budget-first view
    is rebuilt at every move of the total-ε slider)."""
    statistics = frame["statistic"].tolist()
    errors = frame["relative_error_percent"].tolist()
    fig = go.Figure(
        data=[
            go.Bar(
                x=frame["epsilon"].tolist(),
                y=statistics,
                orientation="h",
                marker_color=EPSILON_BAR_COLOR,
                showlegend=False,
                xaxis="x",
                yaxis="y",
            ),
            go.Bar(
                x=errors,
                y=statistics,
                orientation="h",
                marker_color="darkorange",
                showlegend=False,
                text=[
                    f"±{shown} ({c:g}%)"
                    for shown, c in zip(
                        frame["error within ±"] if "error within ±" in frame else [f"{v:.3g}%" for v in errors],
                        frame["confidence_percent"],
                        strict=True,
                    )
                ],
                textposition="auto",
                xaxis="x2",
                yaxis="y2",
            ),
        ],
        layout=dict(
            xaxis=dict(domain=[0.0, 0.45], anchor="y", title=dict(text="ε")),
            yaxis=dict(anchor="x"),
            xaxis2=dict(domain=[0.55, 1.0], anchor="y2", title=dict(text="relative error, % of the true value")),
            yaxis2=dict(anchor="x2", matches="y", showticklabels=False),
            annotations=[
                dict(
                    text="ε given to each statistic",
                    x=0.225,
                    y=1.0,
                    xref="paper",
                    yref="paper",
                    xanchor="center",
                    yanchor="bottom",
                    showarrow=False,
                    font=dict(size=16),
                ),
                dict(
                    text="resulting error (at its confidence level)",
                    x=0.775,
                    y=1.0,
                    xref="paper",
                    yref="paper",
                    xanchor="center",
                    yanchor="bottom",
                    showarrow=False,
                    font=dict(size=16),
                ),
            ],
            height=140 + 45 * len(frame),
            margin=dict(l=10, r=10, t=50, b=40),
        ),
    )
    return fig


def posterior_frame(epsilons: Sequence[float], priors: np.ndarray, uppers: Sequence[np.ndarray]) -> pd.DataFrame:
    rows = []
    for eps, up in zip(epsilons, uppers, strict=True):
        for p, q in zip(priors, up, strict=True):
            rows.append({"epsilon": float(eps), "prior": float(p), "largest_posterior": float(q)})
    return pd.DataFrame(rows)


def fig_posterior(frame: pd.DataFrame, prior_marker: float | None = None) -> go.Figure:
    """Largest posterior an attacker can reach against the prior, one curve per epsilon."""
    traces = [
        go.Scatter(
            x=[0, 100],
            y=[0, 100],
            mode="lines",
            line=dict(color="grey", dash="dot"),
            name="no release (posterior = prior)",
        )
    ]
    for eps in sorted(frame["epsilon"].unique()):
        sub = frame[frame["epsilon"] == eps]
        traces.append(
            go.Scatter(
                x=100 * sub["prior"].to_numpy(),
                y=100 * sub["largest_posterior"].to_numpy(),
                mode="lines",
                name=f"ε = {eps:g}",
            )
        )
    shapes = []
    if prior_marker is not None:
        shapes.append(
            dict(
                type="line",
                xref="x",
                yref="paper",
                x0=100 * prior_marker,
                x1=100 * prior_marker,
                y0=0,
                y1=1,
                line=dict(color="grey", dash="dash"),
            )
        )
    return go.Figure(
        data=traces,
        layout=dict(
            title=dict(text="What can an attacker learn? Largest belief after seeing the release"),
            xaxis=dict(title=dict(text="belief before the release (prior), %")),
            yaxis=dict(title=dict(text="largest belief after, %")),
            shapes=shapes,
            height=420,
            margin=dict(l=10, r=10, t=50, b=40),
            legend=dict(orientation="h", y=-0.2),
        ),
    )


# ---------------------------------------------------------------------------------------------
# The page's charts of one view (the notebook's charts: ui.notebook)
# ---------------------------------------------------------------------------------------------


def planner_view_figures(view) -> list[tuple[str, go.Figure]]:
    """A ``dpcore.views.planner.PlannerView``'s charts, as the page draws them: accuracy first's smallest ε per
    statistic and its quantile dot plots (with a dots seed), and budget first's split (with an allocation)."""
    accuracy = view.accuracy
    figures: list[tuple[str, go.Figure]] = []
    if accuracy.rows:
        smallest = pd.DataFrame(
            {"statistic": [r.statistic for r in accuracy.rows], "epsilon": [r.epsilon for r in accuracy.rows]}
        )
        figures.append(("Accuracy first: the smallest ε per statistic", fig_epsilons(smallest, accuracy.total_epsilon)))
    frame = dots_frame(accuracy.dots)
    for dots in accuracy.dots:
        title = f"{dots.statistic} at ε = {dots.epsilon:.3g} ({100 * dots.confidence:g}% target)"
        absolute = dots.errors_abs is not None
        figures.append(
            (
                title,
                fig_quantile_dots(
                    frame[frame["statistic"] == dots.statistic],
                    dots.abs_error if absolute else 100 * dots.rel_error,
                    title,
                    gini_points=absolute,
                ),
            )
        )
    if view.budget is not None and view.budget.rows:
        split = pd.DataFrame(
            [
                {
                    "statistic": r.statistic,
                    "epsilon": r.epsilon,
                    "relative_error_percent": 100 * r.relative_error,
                    "confidence_percent": 100 * r.confidence,
                }
                for r in view.budget.rows
            ]
        )
        figures.append(("Budget first: the split and the accuracy it gives", fig_budget(split)))
    return figures
