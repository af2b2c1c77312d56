"""Plotly figure builders for the stratified-means page (pure functions: DataFrame in, figure out)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

METHOD_COLORS = {
    "Global Laplace": "#7f7f7f",
    "Stratified Laplace": "#1f77b4",
    "CoinPress": "#ff7f0e",
    "StratCoinpress": "#2ca02c",
    "PubStratCoinpress": "#9467bd",
}


def group_means_figure(df: pd.DataFrame, method: str, *, y_range: tuple[float, float] | None = None,
                       value_label: str = "mean") -> go.Figure:
    """True mean per group (diamond) vs the DP release (dot) with the middle 90 % of simulated
    releases as an error bar. ``df`` columns: group, size, true mean, release, q05, q95."""
    fig = go.Figure()
    labels = [f"{g} (n={s:,})" for g, s in zip(df["group"], df["size"])]
    fig.add_trace(go.Scatter(
        x=labels, y=df["release"], mode="markers", name=f"DP release ({method})",
        marker=dict(size=10, color=METHOD_COLORS.get(method, "#1f77b4")),
        error_y=dict(type="data", symmetric=False, array=(df["q95"] - df["release"]).clip(lower=0),
                     arrayminus=(df["release"] - df["q05"]).clip(lower=0), thickness=1.5, width=6),
        hovertemplate="%{x}<br>release %{y:.4g}<extra></extra>"))
    fig.add_trace(go.Scatter(x=labels, y=df["true mean"], mode="markers", name="true mean (not private)",
                             marker=dict(symbol="diamond", size=11, color="black"),
                             hovertemplate="%{x}<br>true %{y:.4g}<extra></extra>"))
    fig.update_layout(
        xaxis_title="group (size)", yaxis_title=value_label, legend=dict(orientation="h", y=1.12),
        margin=dict(l=10, r=10, t=40, b=10), height=430)
    if y_range is not None:
        fig.update_yaxes(range=list(y_range))
    return fig


def overall_errors_figure(df: pd.DataFrame) -> go.Figure:
    """Box plot of simulated errors of the overall mean, one box per method (df: method, error)."""
    fig = go.Figure()
    for m, sub in df.groupby("method", sort=False):
        fig.add_trace(go.Box(y=sub["error"], name=m, marker_color=METHOD_COLORS.get(m), boxmean=True))
    fig.add_hline(y=0, line_dash="dot")
    fig.update_layout(yaxis_title="release − true overall mean", showlegend=False, height=360,
                      margin=dict(l=10, r=10, t=20, b=10))
    return fig


def parity_figure(df: pd.DataFrame) -> go.Figure:
    """Mean parity error per method with the middle 90 % of simulations (df: method, mean, q05, q95)."""
    fig = go.Figure(go.Bar(
        x=df["method"], y=df["mean"], marker_color=[METHOD_COLORS.get(m) for m in df["method"]],
        error_y=dict(type="data", symmetric=False, array=(df["q95"] - df["mean"]).clip(lower=0),
                     arrayminus=(df["mean"] - df["q05"]).clip(lower=0))))
    fig.update_layout(yaxis_title="parity error φ (Definition 11)", height=360, margin=dict(l=10, r=10, t=20, b=10))
    return fig


def sweep_figure(df: pd.DataFrame, x: str, y: str = "error", *, log_x: bool = False, log_y: bool = True,
                 x_title: str | None = None, y_title: str | None = None, methods: Sequence[str] | None = None) -> go.Figure:
    """Mean of ``y`` over runs against ``x``, one line per method, bars = ±1 standard error
    (df: x, method, mean, se)."""
    fig = go.Figure()
    for m, sub in df.groupby("method", sort=False):
        if methods is not None and m not in methods:
            continue
        fig.add_trace(go.Scatter(x=sub[x], y=sub["mean"], mode="lines+markers", name=m,
                                 line=dict(color=METHOD_COLORS.get(m)),
                                 error_y=dict(type="data", array=sub["se"], thickness=1)))
    fig.update_layout(xaxis_title=x_title or x, yaxis_title=y_title or y, height=380,
                      legend=dict(orientation="h", y=1.15), margin=dict(l=10, r=10, t=40, b=10))
    if log_x:
        fig.update_xaxes(type="log")
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def bounds_figure(curves: pd.DataFrame, *, alpha_mark: float | None = None, actual: float | None = None) -> go.Figure:
    """Figure 1: sum of log group sizes against the Dirichlet alpha (worst, expected, lower)."""
    fig = go.Figure()
    styles = {"worst": dict(dash="dash", color="#d62728"), "expected": dict(color="#1f77b4"),
              "lower": dict(dash="dot", color="#2ca02c")}
    for col in curves.columns:
        if col == "alpha":
            continue
        key = "worst" if "worst" in col else "expected" if "expected" in col else "lower"
        fig.add_trace(go.Scatter(x=curves["alpha"], y=curves[col], mode="lines", name=col, line=styles[key]))
    if alpha_mark is not None:
        fig.add_vline(x=alpha_mark, line_dash="dot", annotation_text=f"α = {alpha_mark:g}")
    if actual is not None:
        fig.add_hline(y=actual, line_dash="dashdot", line_color="#8c564b",
                      annotation_text="these group sizes", annotation_position="bottom right")
    fig.update_layout(xaxis_title="Dirichlet α (small = one or two dominant groups)",
                      yaxis_title="Σ ln |G_i|  (drives the extra noise of stratifying)", height=400,
                      legend=dict(orientation="h", y=1.15), margin=dict(l=10, r=10, t=40, b=10))
    return fig


def group_sizes_figure(labels: Sequence, sizes: Sequence[int]) -> go.Figure:
    """Group sizes on a log axis (small groups are the ones privacy noise hurts)."""
    fig = go.Figure(go.Bar(x=[str(x) for x in labels], y=np.asarray(sizes), marker_color="#1f77b4"))
    fig.update_yaxes(type="log", title="records in group (log scale)")
    fig.update_layout(height=260, margin=dict(l=10, r=10, t=10, b=10))
    return fig
