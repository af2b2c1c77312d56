"""Plotly figure builders for the stratified-means page (pure functions: DataFrame in, figure out)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.figure_specs import plain_spec

METHOD_COLORS = {
    "Global Laplace": "#7f7f7f",
    "Stratified Laplace": "#1f77b4",
    "CoinPress": "#ff7f0e",
    "StratCoinpress": "#2ca02c",
    "PubStratCoinpress": "#9467bd",
}


def group_means_figure(
    df: pd.DataFrame, method: str, *, y_range: tuple[float, float] | None = None, value_label: str = "mean"
) -> go.Figure:
    """True mean per group (diamond) vs the DP release (dot) with the middle 90 % of simulated
    releases as an error bar. ``df`` columns: group, size, true mean, release, q05, q95."""
    return go.Figure(
        dict(zip(("data", "layout"), _group_means(df, method, y_range=y_range, value_label=value_label), strict=True))
    )


def group_means_spec(
    df: pd.DataFrame, method: str, *, y_range: tuple[float, float] | None = None, value_label: str = "mean"
) -> dict:
    """:func:`group_means_figure` as a plain spec (equal to its ``to_dict()``; tests check), no plotly
    validation (rebuilt on every ε move)."""
    return plain_spec(*_group_means(df, method, y_range=y_range, value_label=value_label))


def _group_means(
    df: pd.DataFrame, method: str, *, y_range: tuple[float, float] | None, value_label: str
) -> tuple[list, dict]:
    """Groups down the vertical axis, values across (``y_range``: the value axis's range): one row per group
    whatever their number, where group names along a horizontal axis (16 ACS groups, "Female × Other race
    (n=207)") were tilted by plotly and drawn over each other at 1280 px."""
    labels = [f"{g} (n={s:,})" for g, s in zip(df["group"], df["size"], strict=True)]
    rel = df["release"].to_numpy()
    data = [
        dict(
            type="scatter",
            x=rel,
            y=labels,
            mode="markers",
            name=f"DP release ({method})",
            marker=dict(size=10, color=METHOD_COLORS.get(method, "#1f77b4")),
            error_x=dict(
                type="data",
                symmetric=False,
                array=np.maximum(df["q95"].to_numpy() - rel, 0),
                arrayminus=np.maximum(rel - df["q05"].to_numpy(), 0),
                thickness=1.5,
                width=6,
            ),
            hovertemplate="%{y}<br>release %{x:.4g}<extra></extra>",
        ),
        dict(
            type="scatter",
            x=df["true mean"].to_numpy(),
            y=labels,
            mode="markers",
            name="true mean (not private)",
            marker=dict(symbol="diamond", size=11, color="black"),
            hovertemplate="%{y}<br>true %{x:.4g}<extra></extra>",
        ),
    ]
    value_axis: dict[str, object] = dict(title=dict(text=value_label))
    if y_range is not None:
        value_axis["range"] = list(y_range)
    layout = dict(
        xaxis=value_axis,
        yaxis=dict(autorange="reversed", automargin=True),
        legend=dict(orientation="h", y=1.0, yanchor="bottom", x=0, xanchor="left"),
        margin=dict(l=10, r=10, t=40, b=10),
        height=GROUP_CHART_BASE + GROUP_CHART_ROW * len(labels),
    )
    return data, layout


#: the per-group chart's height: a fixed part (legend, value axis) plus one row per group (a label's height
#: and some air), so any number of groups gets readable, non-overlapping labels
GROUP_CHART_BASE, GROUP_CHART_ROW = 110, 24


#: method names on two lines under a chart of the five methods: on one line plotly tilted them (half of the
#: main area at 1280 px gives each about 75 px; "PubStratCoinpress" needs about 105)
METHOD_TICKS = {
    "Global Laplace": "Global<br>Laplace",
    "Stratified Laplace": "Stratified<br>Laplace",
    "CoinPress": "CoinPress",
    "StratCoinpress": "Strat<br>Coinpress",
    "PubStratCoinpress": "PubStrat<br>Coinpress",
}


def _method_axis(methods) -> dict:
    methods = list(methods)
    return dict(tickmode="array", tickvals=methods, ticktext=[METHOD_TICKS.get(m, m) for m in methods], tickangle=0)


def overall_errors_figure(df: pd.DataFrame) -> go.Figure:
    """Box plot of simulated errors of the overall mean, one box per method (df: method, error).

    The boxes are drawn from precomputed statistics (whiskers at the 5th/95th percentiles, dashed
    line at the mean), so the chart does not ship every simulated value to the browser."""
    return go.Figure(dict(zip(("data", "layout"), _overall_errors(df), strict=True)))


def overall_errors_spec(df: pd.DataFrame) -> dict:
    """:func:`overall_errors_figure` as a plain spec (equal to its ``to_dict()``; tests check)."""
    return plain_spec(*_overall_errors(df))


def _overall_errors(df: pd.DataFrame) -> tuple[list, dict]:
    methods, q = [], {p: list[float]() for p in (5, 25, 50, 75, 95)}
    means = []
    labels, errors = df["method"].to_numpy(), df["error"].to_numpy(dtype=float)
    for m in dict.fromkeys(labels):  # methods in order of first appearance, rows in order (= groupby(sort=False))
        e = errors[labels == m]
        methods.append(m)
        for p_, value in zip(q, np.percentile(e, list(q)), strict=True):  # one call for the five (same numbers)
            q[p_].append(float(value))
        means.append(float(e.mean()))
    data = [
        dict(
            type="box",
            x=[m],
            q1=[q[25][i]],
            median=[q[50][i]],
            q3=[q[75][i]],
            lowerfence=[q[5][i]],
            upperfence=[q[95][i]],
            mean=[means[i]],
            name=m,
            marker=dict(color=METHOD_COLORS.get(m)),
        )
        for i, m in enumerate(methods)
    ]
    # the y title fits the chart's height (the box and whisker levels are in the heading above the chart)
    layout = dict(
        yaxis=dict(title=dict(text="release − true overall mean"), zeroline=True),
        xaxis=_method_axis(methods),
        showlegend=False,
        height=360,
        margin=dict(l=10, r=10, t=20, b=10),
        shapes=[_hline(0.0)],
    )
    return data, layout


def _hline(y: float, color: str = "#444", dash: str = "dot") -> dict:
    return dict(type="line", xref="paper", x0=0, x1=1, yref="y", y0=y, y1=y, line=dict(color=color, dash=dash, width=1))


def _vline(x: float, color: str = "#444", dash: str = "dot") -> dict:
    return dict(type="line", yref="paper", y0=0, y1=1, xref="x", x0=x, x1=x, line=dict(color=color, dash=dash, width=1))


def parity_figure(df: pd.DataFrame) -> go.Figure:
    """Mean parity error per method with the middle 90 % of simulations (df: method, mean, q05, q95)."""
    return go.Figure(dict(zip(("data", "layout"), _parity(df), strict=True)))


def parity_spec(df: pd.DataFrame) -> dict:
    """:func:`parity_figure` as a plain spec (equal to its ``to_dict()``; tests check)."""
    return plain_spec(*_parity(df))


def _parity(df: pd.DataFrame) -> tuple[list, dict]:
    mean = df["mean"].to_numpy()
    data = [
        dict(
            type="bar",
            x=list(df["method"]),
            y=mean,
            marker=dict(color=[METHOD_COLORS.get(m) for m in df["method"]]),
            error_y=dict(
                type="data",
                symmetric=False,
                array=np.maximum(df["q95"].to_numpy() - mean, 0),
                arrayminus=np.maximum(mean - df["q05"].to_numpy(), 0),
            ),
        )
    ]
    layout = dict(
        yaxis=dict(title=dict(text="parity error φ (Definition 11)")),
        height=360,
        xaxis=_method_axis(df["method"]),
        margin=dict(l=10, r=10, t=20, b=10),
    )
    return data, layout


def sweep_figure(
    df: pd.DataFrame,
    x: str,
    y: str = "error",
    *,
    log_x: bool = False,
    log_y: bool = True,
    x_title: str | None = None,
    y_title: str | None = None,
    methods: Sequence[str] | None = None,
) -> go.Figure:
    """Mean of ``y`` over runs against ``x``, one line per method, bars = ±1 standard error
    (df: x, method, mean, se)."""
    fig = go.Figure()
    for m, sub in df.groupby("method", sort=False):
        if methods is not None and m not in methods:
            continue
        fig.add_trace(
            go.Scatter(
                x=sub[x],
                y=sub["mean"],
                mode="lines+markers",
                name=m,
                line=dict(color=METHOD_COLORS.get(m)),
                error_y=dict(type="data", array=sub["se"], thickness=1),
            )
        )
    fig.update_layout(
        xaxis_title=x_title or x,
        yaxis_title=y_title or y,
        height=380,
        legend=dict(orientation="h", y=1.15),
        margin=dict(l=10, r=10, t=40, b=10),
    )
    if log_x:
        fig.update_xaxes(type="log")
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def bounds_figure(curves: pd.DataFrame, *, alpha_mark: float | None = None, actual: float | None = None) -> go.Figure:
    """Figure 1: sum of log group sizes against the Dirichlet alpha (worst, expected, lower)."""
    styles = {
        "worst": dict(dash="dash", color="#d62728"),
        "expected": dict(color="#1f77b4"),
        "lower": dict(dash="dot", color="#2ca02c"),
    }
    data = []
    for col in curves.columns:
        if col == "alpha":
            continue
        key = "worst" if "worst" in col else "expected" if "expected" in col else "lower"
        data.append(
            dict(
                type="scatter",
                x=curves["alpha"].to_numpy(),
                y=curves[col].to_numpy(),
                mode="lines",
                name=col,
                line=styles[key],
            )
        )
    shapes, notes = [], []
    if alpha_mark is not None:
        shapes.append(_vline(alpha_mark))
        notes.append(
            dict(
                x=alpha_mark,
                y=1,
                yref="paper",
                text=f"α = {alpha_mark:g}",
                showarrow=False,
                xanchor="left",
                yanchor="top",
            )
        )
    if actual is not None:
        shapes.append(_hline(actual, color="#8c564b", dash="dashdot"))
        notes.append(
            dict(
                x=1,
                xref="paper",
                y=actual,
                text="these group sizes",
                showarrow=False,
                xanchor="right",
                yanchor="bottom",
            )
        )
    layout = dict(
        xaxis=dict(title=dict(text="Dirichlet α (small = one or two dominant groups)")),
        yaxis=dict(title=dict(text="Σ ln |G_i|  (drives the extra noise of stratifying)")),
        height=400,
        legend=dict(orientation="h", y=1.15),
        margin=dict(l=10, r=10, t=40, b=10),
        shapes=shapes,
        annotations=notes,
    )
    return go.Figure(dict(data=data, layout=layout))


def group_sizes_figure(labels: Sequence, sizes: Sequence[int]) -> go.Figure:
    """Group sizes on a log axis (small groups are the ones privacy noise hurts)."""
    fig = go.Figure(go.Bar(x=[str(x) for x in labels], y=np.asarray(sizes), marker_color="#1f77b4"))
    fig.update_yaxes(type="log", title="records in group (log scale)")
    fig.update_layout(height=260, margin=dict(l=10, r=10, t=10, b=10))
    return fig


# ---------------------------------------------------------------------------------------------
# The page's charts of one view (the notebook's charts: ui.notebook)
# ---------------------------------------------------------------------------------------------


def group_means_view_figures(view) -> list[tuple[str, go.Figure]]:
    """The group-means view's charts (a ``dpcore.views.stratified.GroupMeansView``): each group's true mean and
    release with the middle 90% of simulated releases, the errors of the overall mean by method, and the parity
    error by method (the value axis left to plotly)."""
    from dpcore.views.stratified import METHODS

    errors = [view.overall[m] - view.true_overall for m in METHODS]
    errors_frame = pd.DataFrame(
        {
            "method": np.repeat(np.array(METHODS, dtype=object), [e.size for e in errors]),
            "error": np.concatenate(errors),
        }
    )
    parity = pd.DataFrame(
        [
            {"method": r["method"], "mean": r["mean parity error"], "q05": r["parity q05"], "q95": r["parity q95"]}
            for r in view.method_rows()
        ]
    )
    return [
        (f"Each group's mean: {view.method}", group_means_figure(pd.DataFrame(view.group_rows()), view.method)),
        ("Errors of the overall mean, by method", overall_errors_figure(errors_frame)),
        ("Parity error between groups, by method", parity_figure(parity)),
    ]
