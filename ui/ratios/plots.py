"""Plotly figure builders for the ratios / relative-risk page (pure functions: data in, figure out)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

COLORS = {
    "non-private": "#7f7f7f",
    "private": "#1f77b4",
    "LaplaceNoisedCounts": "#1f77b4",
    "NaiveRelativeRisk": "#7f7f7f",
    "NoisedLog": "#ff7f0e",
    "NoisedLog (debiased)": "#ffbb78",
    "Smooth sensitivity (Laplace)": "#2ca02c",
    "Smooth sensitivity (generalized Cauchy)": "#98df8a",
    "PTR (oracle)": "#9467bd",
}
_MARGIN = dict(l=10, r=10, t=40, b=10)


def sampling_figure(hist: pd.DataFrame, true_rr: float) -> go.Figure:
    """Two histograms (as bars on shared bins): columns bin_mid, non-private, private (densities)."""
    width = float(hist["bin_mid"].diff().median()) if len(hist) > 1 else 1.0
    data = [
        dict(
            type="bar",
            x=hist["bin_mid"],
            y=hist["non-private"],
            name="without privacy (sampling only)",
            marker=dict(color=COLORS["non-private"]),
            opacity=0.55,
            width=width,
        ),
        dict(
            type="bar",
            x=hist["bin_mid"],
            y=hist["private"],
            name="with privacy noise (sampling + noise)",
            marker=dict(color=COLORS["private"]),
            opacity=0.55,
            width=width,
        ),
    ]
    # the legend goes under the x axis: above the plot it sat under the "true RR" label drawn at the top
    layout = dict(
        barmode="overlay",
        height=400,
        margin=_MARGIN,
        legend=dict(orientation="h", y=-0.22, yanchor="top", x=0, xanchor="left"),
        xaxis=dict(title=dict(text="estimated relative risk")),
        yaxis=dict(title=dict(text="density")),
        shapes=[
            dict(type="line", x0=true_rr, x1=true_rr, y0=0, y1=1, yref="paper", line=dict(color="black", dash="dash"))
        ],
        annotations=[
            dict(x=true_rr, y=1, yref="paper", text=f"true RR = {true_rr:.3g}", showarrow=False, yanchor="bottom")
        ],
    )
    return go.Figure(dict(data=data, layout=layout))


def intervals_figure(df: pd.DataFrame, true_rr: float | None) -> go.Figure:
    """Horizontal interval bars: columns method, estimate, lower, upper."""
    est = df["estimate"].to_numpy(float)
    data = [
        dict(
            type="scatter",
            x=est,
            y=df["method"],
            mode="markers",
            marker=dict(size=10, color="#1f77b4"),
            error_x=dict(
                type="data",
                symmetric=False,
                array=df["upper"].to_numpy(float) - est,
                arrayminus=est - df["lower"].to_numpy(float),
                thickness=2,
                width=8,
            ),
            name="estimate and interval",
            hovertemplate="%{y}<br>%{x:.4g}<extra></extra>",
        )
    ]
    shapes, ann = [], []
    if true_rr is not None:
        shapes.append(
            dict(type="line", x0=true_rr, x1=true_rr, y0=0, y1=1, yref="paper", line=dict(color="black", dash="dash"))
        )
        ann.append(
            dict(x=true_rr, y=1, yref="paper", text=f"true RR = {true_rr:.3g}", showarrow=False, yanchor="bottom")
        )
    layout = dict(
        height=90 + 45 * len(df),
        margin=dict(l=10, r=10, t=30, b=10),
        showlegend=False,
        xaxis=dict(title=dict(text="relative risk")),
        yaxis=dict(autorange="reversed"),
        shapes=shapes,
        annotations=ann,
    )
    return go.Figure(dict(data=data, layout=layout))


def heatmap_figure(
    matrix: np.ndarray,
    p_values: Sequence[float],
    *,
    title: str,
    zmin: float,
    zmax: float,
    colorscale: str = "RdBu",
    fmt: str = ".3f",
    mask: np.ndarray | None = None,
) -> go.Figure:
    """A p_x (rows) x p_y (columns) heatmap with the value written in each cell; cells in ``mask`` get a '*'."""
    labels = [f"{p:.1f}" for p in p_values]
    text = [
        [format(v, fmt) + ("*" if mask is not None and mask[i, j] else "") for j, v in enumerate(row)]
        for i, row in enumerate(np.asarray(matrix))
    ]
    data = [
        dict(
            type="heatmap",
            z=np.asarray(matrix).tolist(),
            x=labels,
            y=labels,
            zmin=zmin,
            zmax=zmax,
            colorscale=colorscale,
            text=text,
            texttemplate="%{text}",
            hovertemplate="p_x=%{y}, p_y=%{x}<br>%{text}<extra></extra>",
        )
    ]
    layout = dict(
        title=dict(text=title),
        height=430,
        margin=dict(l=10, r=10, t=50, b=10),
        xaxis=dict(title=dict(text="p_y (unexposed group)")),
        yaxis=dict(title=dict(text="p_x (exposed group)"), autorange="reversed"),
    )
    return go.Figure(dict(data=data, layout=layout))


def accuracy_figure(df: pd.DataFrame, alpha: float) -> go.Figure:
    """Curves of 1 - beta against epsilon: columns epsilon, algorithm, accuracy."""
    data = []
    for name, part in df.groupby("algorithm", sort=False):
        data.append(
            dict(
                type="scatter",
                x=part["epsilon"],
                y=part["accuracy"],
                mode="lines+markers",
                name=name,
                line=dict(color=COLORS.get(name)),
            )
        )
    layout = dict(
        height=420,
        margin=_MARGIN,
        legend=dict(orientation="h", y=-0.25),
        xaxis=dict(title=dict(text="epsilon (log scale)"), type="log"),
        yaxis=dict(title=dict(text=f"P(error < {alpha:g})  (sample accuracy 1 - β)"), range=[0, 1.02]),
    )
    return go.Figure(dict(data=data, layout=layout))


def bias_figure(df: pd.DataFrame) -> go.Figure:
    """Relative bias against n: columns n, non-private, private (each as a fraction of the true ratio)."""
    data = [
        dict(
            type="scatter",
            x=df["n"],
            y=df["non-private"],
            mode="lines+markers",
            name="without privacy: X/max(Y,1)",
            line=dict(color=COLORS["non-private"]),
        ),
        dict(
            type="scatter",
            x=df["n"],
            y=df["private"],
            mode="lines+markers",
            name="with privacy: X~/max(Y~,1) (Claim 3.4)",
            line=dict(color=COLORS["private"]),
        ),
    ]
    layout = dict(
        height=400,
        margin=_MARGIN,
        legend=dict(orientation="h", y=1.12),
        xaxis=dict(title=dict(text="people per group n (log scale)"), type="log"),
        yaxis=dict(title=dict(text="bias / true ratio"), tickformat=".1%"),
        shapes=[dict(type="line", x0=0, x1=1, xref="paper", y0=0, y1=0, line=dict(color="black"))],
    )
    return go.Figure(dict(data=data, layout=layout))


# ---------------------------------------------------------------------------------------------
# The page's charts of one view (the notebook's charts: ui.notebook); the frames as the page builds them
# ---------------------------------------------------------------------------------------------


def sampling_view_figures(view) -> list[tuple[str, go.Figure]]:
    """A ``dpcore.views.ratio.SamplingView``: the spread of the estimate with and without privacy."""
    hist = pd.DataFrame(
        {"bin_mid": view.bin_mid, "non-private": view.density_nonprivate, "private": view.density_private}
    )
    return [("How much does privacy widen the spread of the estimate?", sampling_figure(hist, view.true_rr))]


def intervals_view_figures(view) -> list[tuple[str, go.Figure]]:
    """An ``IntervalsView``: the relative risk's confidence intervals."""
    return [
        (
            "Confidence intervals for the relative risk",
            intervals_figure(pd.DataFrame(list(view.intervals)), view.true_rr),
        )
    ]


def coverage_heatmap_view_figures(view) -> list[tuple[str, go.Figure]]:
    """A ``CoverageHeatmapView``: coverage and relative width over the grid of (p_x, p_y)."""
    level = view.level
    return [
        (
            "Coverage",
            heatmap_figure(
                view.coverage,
                view.p_values,
                title=f"Coverage of '{view.method}' at nominal {level:.0%}",
                zmin=level - 0.1,
                zmax=min(1.0, level + 0.1),
                mask=view.small_counts,
            ),
        ),
        (
            "Width",
            heatmap_figure(
                view.width_ratio,
                view.p_values,
                title="Mean width / width of the non-private interval",
                zmin=1.0,
                zmax=max(1.5, float(np.nanmax(view.width_ratio))),
                colorscale="Blues",
                fmt=".2f",
            ),
        ),
    ]


def accuracy_view_figures(view) -> list[tuple[str, go.Figure]]:
    """An ``AccuracyView``: the chance of each algorithm to land within the target of the true ratio."""
    return [("Sample accuracy of every algorithm", accuracy_figure(pd.DataFrame(list(view.rows)), view.alpha))]


def bias_view_figures(view) -> list[tuple[str, go.Figure]]:
    """A ``BiasView``: the bias of the ratio of noisy counts against n."""
    return [("Bias of the ratio of noisy counts", bias_figure(pd.DataFrame(list(view.rows))))]


def odds_ratio_view_figures(view) -> list[tuple[str, go.Figure]]:
    """An ``OddsRatioView``: the odds ratio's intervals."""
    return [("Odds ratio from a noisy 2×2 table", intervals_figure(pd.DataFrame(list(view.intervals)), view.true_or))]


def poverty_view_figures(view) -> list[tuple[str, go.Figure]]:
    """A ``PovertyView``: the relative risk of poverty between two ACS groups, with its intervals."""
    frame = pd.DataFrame([{k: r[k] for k in ("method", "estimate", "lower", "upper")} for r in view.intervals])
    return [("Who is more likely to be in poverty?", intervals_figure(frame, None))]
