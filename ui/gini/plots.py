"""Plotly figure builders for the Gini page (pure functions: numbers / DataFrames in, figures out).

Figures are kept light (pre-binned histograms, precomputed box statistics) so that a slider
change re-renders quickly. The live view's figures are plain plotly specifications (dicts, see
``_figure``); the paper experiments' figures (on buttons) are ``go.Figure`` objects.
"""

from __future__ import annotations

import base64
import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from dpcore.views.gini import abs_error_quantiles

SMOOTH_COLOR = "#1f77b4"
FAST_COLOR = "#ff7f0e"
LAPLACE_COLOR = "#7f7f7f"
TRUTH_COLOR = "black"
CAL_DASH = {"tight": "solid", "paper": "dash"}
CAL_LABEL = {"tight": "tight calibration (ours)", "paper": "paper calibration"}
#: The "your ε" line and its label: a green dark enough for text (5.4:1 on white; plotly's #2ca02c is 3.4:1,
#: below WCAG's 4.5:1 for the label)
YOUR_EPSILON_COLOR = "#217a21"
EPS_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
_MARGIN = dict(l=10, r=10, t=40, b=10)


def _vline(
    x: float,
    *,
    xref: str = "x",
    color: str = TRUTH_COLOR,
    dash: str = "solid",
    text: str | None = None,
    y: float = 1.0,
    xanchor: str = "left",
) -> tuple[dict, list[dict]]:
    """A vertical line as a layout shape (+ an optional label at height y): much faster than fig.add_vline."""
    shape = dict(
        type="line", xref=xref, yref="paper", x0=x, x1=x, y0=0, y1=1, line=dict(color=color, dash=dash, width=2)
    )
    ann = (
        []
        if not text
        else [
            dict(
                x=x,
                xref=xref,
                y=y,
                yref="paper",
                text=text,
                showarrow=False,
                xanchor=xanchor,
                yanchor="bottom",
                font=dict(color=color),
            )
        ]
    )
    return shape, ann


def _typed_array(values: np.ndarray) -> Any:
    """A numpy array as plotly.js's typed-array spec (float64 -> base64 ``bdata``, as plotly's own
    validation writes it); other dtypes as plain lists."""
    if values.ndim == 1 and values.dtype.kind == "f":
        return {"dtype": "f8", "bdata": base64.b64encode(np.ascontiguousarray(values, dtype="<f8").tobytes()).decode()}
    return values.tolist()


@functools.lru_cache(maxsize=4)
def _template(name: str) -> dict:
    """The plotly default template as a plain dict (what ``go.Figure`` would put in ``layout.template``)."""
    return pio.templates[name].to_plotly_json()


def _figure(data: list[dict], layout: dict) -> dict:
    """A figure specification built in one go from plain dicts: no ``go.Figure`` (its validation cost ~10 ms
    per figure and a deep copy on display). ``st.plotly_chart`` takes it as is through
    :func:`ui.common.show_figure` (or validates it when given the dict directly); the JSON sent is
    what ``go.Figure(data=data, layout=layout).to_dict()`` gives, template included."""
    traces = [
        {key: _typed_array(value) if isinstance(value, np.ndarray) else value for key, value in trace.items()}
        for trace in data
    ]
    base = dict(margin=_MARGIN)
    base.update(layout)
    base["template"] = _template(str(pio.templates.default))
    return {"data": traces, "layout": base}


def decay_figure(
    decay_exact: pd.DataFrame | None,
    decay_fast: pd.DataFrame,
    *,
    k_star_exact: int | None,
    k_star_fast: int,
    beta: float,
) -> dict:
    """e^{-beta k} A^(k) against k for the exact and fast bounds, with k* (the maximiser) marked.

    Frames have columns k, A, decay. The exact bound is never above the fast one, so the exact k* is labelled
    below its star and the fast one above; when both k* are the same k the stars sit almost on top of each
    other and one label says so (two "k* = 0" labels were drawn over each other).
    """
    data: list[dict] = []
    same_k_star = decay_exact is not None and k_star_exact is not None and int(k_star_exact) == int(k_star_fast)
    curves: list[tuple[str, pd.DataFrame, int | None, str, str, str, str]] = [
        (
            "fast bound (closed form)",
            decay_fast,
            k_star_fast,
            FAST_COLOR,
            "dash",
            f"k* = {int(k_star_fast)} (both)" if same_k_star else f"k* = {int(k_star_fast)}",
            "top right",
        )
    ]
    if decay_exact is not None:
        curves.insert(
            0,
            (
                "exact bound",
                decay_exact,
                k_star_exact,
                SMOOTH_COLOR,
                "solid",
                "" if same_k_star or k_star_exact is None else f"k* = {int(k_star_exact)}",
                "bottom right",
            ),
        )
    for name, df, k_star, color, dash, label, label_position in curves:
        k = df["k"].to_numpy()
        data.append(
            dict(
                type="scatter",
                x=k,
                y=df["decay"].to_numpy(),
                mode="lines",
                name=f"e^(−βk)·A(k): {name}",
                line=dict(color=color, dash=dash),
                hovertemplate="k = %{x}<br>e^(−βk)A(k) = %{y:.3g}<extra></extra>",
            )
        )
        data.append(
            dict(
                type="scatter",
                x=k,
                y=df["A"].to_numpy(),
                mode="lines",
                name=f"A(k) alone: {name}",
                line=dict(color=color, dash="dot", width=1),
                opacity=0.6,
                hovertemplate="k = %{x}<br>A(k) = %{y:.3g}<extra></extra>",
            )
        )
        if k_star is not None and 0 <= int(k_star) < len(df):
            ks = int(k_star)
            data.append(
                dict(
                    type="scatter",
                    x=[ks],
                    y=[float(df["decay"].iloc[ks])],
                    mode="markers+text" if label else "markers",
                    marker=dict(size=13, color=color, symbol="star"),
                    text=[label],
                    textposition=label_position,
                    showlegend=False,
                    name=f"maximum ({name})",
                    hovertemplate="k* = %{x}<br>S = %{y:.3g}<extra></extra>",
                )
            )
    return _figure(
        data,
        dict(
            height=380,
            legend=dict(orientation="h", y=-0.25),
            yaxis=dict(type="log", title=dict(text="local-sensitivity bound")),
            xaxis=dict(title=dict(text=f"k = number of records changed (β = {beta:.3g})")),
        ),
    )


def _hist(values: np.ndarray, lo: float, hi: float, bins: int = 80) -> tuple[np.ndarray, np.ndarray, float]:
    v = values[(values >= lo) & (values <= hi)]
    counts, edges = np.histogram(v, bins=bins, range=(lo, hi))
    share_out = 1.0 - v.size / max(values.size, 1)
    return 0.5 * (edges[1:] + edges[:-1]), counts / max(values.size, 1), share_out


def releases_figure(
    true_value: float,
    smooth: np.ndarray,
    laplace: np.ndarray,
    *,
    smooth_range: tuple[float, float],
    laplace_range: tuple[float, float],
    share_range: tuple[float, float] | None = None,
) -> dict:
    """Histograms of many simulated releases: smooth sensitivity (left) vs the Laplace baseline (right).

    Each panel has its own x range (the Laplace spread is often 100x wider); the share of draws
    outside the shown range is printed in the panel title. The true (confidential) Gini is marked;
    the impossible region outside [0, 1] is shaded in the Laplace panel.
    """
    xs, ps, out_s = _hist(smooth, *smooth_range)
    xl, pl, out_l = _hist(laplace, *laplace_range)
    t_s = "<b>Smooth sensitivity</b> (this mechanism)" + (
        "" if out_s < 0.0005 else f"<br>{out_s:.1%} of releases off-chart"
    )
    t_l = "<b>Laplace, global sensitivity</b> (baseline)" + (
        "" if out_l < 0.0005 else f"<br>{out_l:.1%} of releases off-chart"
    )
    data = [
        dict(
            type="bar",
            x=xs,
            y=ps,
            marker=dict(color=SMOOTH_COLOR),
            name="smooth sensitivity",
            xaxis="x",
            yaxis="y",
            hovertemplate="release ≈ %{x:.4f}<br>share %{y:.2%}<extra></extra>",
        ),
        dict(
            type="bar",
            x=xl,
            y=pl,
            marker=dict(color=LAPLACE_COLOR),
            name="Laplace baseline",
            xaxis="x2",
            yaxis="y2",
            hovertemplate="release ≈ %{x:.3f}<br>share %{y:.2%}<extra></extra>",
        ),
    ]
    shapes, anns = [], []
    for ref in ("x", "x2"):
        sh, an = _vline(true_value, xref=ref, text="true Gini")
        shapes.append(sh)
        anns += an
    lo, hi = laplace_range
    for x0, x1 in ((lo, 0.0), (1.0, hi)):
        if x1 > x0:
            shapes.append(
                dict(
                    type="rect",
                    xref="x2",
                    yref="paper",
                    x0=x0,
                    x1=x1,
                    y0=0,
                    y1=1,
                    fillcolor="red",
                    opacity=0.07,
                    line=dict(width=0),
                )
            )
    return _figure(
        data,
        dict(
            height=380,
            showlegend=False,
            bargap=0.02,
            shapes=shapes,
            annotations=anns,
            margin=dict(l=10, r=10, t=30, b=10),
            xaxis=dict(domain=[0, 0.47], range=list(smooth_range), title=dict(text=f"released Gini<br>{t_s}")),
            xaxis2=dict(
                domain=[0.53, 1],
                range=list(laplace_range),
                title=dict(text=f"released Gini (red: impossible values)<br>{t_l}"),
            ),
            yaxis=dict(
                title=dict(text="share of releases"),
                tickformat=".0%",
                **({} if share_range is None else {"range": list(share_range)}),
            ),
            yaxis2=dict(anchor="x2", tickformat=".0%", **({} if share_range is None else {"range": list(share_range)})),
        ),
    )


def dots_figure(dots: np.ndarray, true_value: float, *, bin_width: float | None = None) -> dict:
    """Quantile dot plot: each dot is one of ``len(dots)`` equally likely releases, stacked in bins."""
    dots = np.asarray(dots, dtype=float)
    span = float(dots.max() - dots.min()) or max(abs(true_value), 1e-3) * 1e-3
    w = bin_width or span / 12
    bins = np.floor((dots - dots.min()) / w).astype(int)
    x = dots.min() + (bins + 0.5) * w
    y = np.zeros(dots.size)
    for b in np.unique(bins):
        idx = np.flatnonzero(bins == b)
        y[idx] = np.arange(1, idx.size + 1)
    sh, an = _vline(true_value, text="true Gini")
    data = [
        dict(
            type="scatter",
            x=x,
            y=y,
            mode="markers",
            customdata=dots,
            name="plausible release",
            marker=dict(size=16, color=SMOOTH_COLOR, line=dict(color="white", width=1)),
            hovertemplate="release %{customdata:.4f}<extra></extra>",
        )
    ]
    return _figure(
        data,
        dict(
            height=260,
            showlegend=False,
            shapes=[sh],
            annotations=an,
            margin=dict(l=10, r=10, t=30, b=10),
            yaxis=dict(visible=False, range=[0, max(float(y.max()), 3.0) + 1]),
            xaxis=dict(title=dict(text="released Gini")),
        ),
    )


def posterior_figure(
    grid: np.ndarray,
    density: np.ndarray,
    *,
    released: float,
    interval: tuple[float, float],
    hpd: tuple[float, float],
    level: float,
    true_value: float | None = None,
) -> dict:
    """Posterior density of the Gini given one release, with the credible interval shaded."""
    lo, hi = interval
    width = max(hi - lo, 1e-12)
    x0, x1 = max(0.0, lo - 1.5 * width), min(1.0, hi + 1.5 * width)
    keep = (grid >= x0) & (grid <= x1)
    gx, gd = grid[keep], density[keep]
    inside = (gx >= lo) & (gx <= hi)
    data = [
        dict(
            type="scatter",
            x=gx[inside],
            y=gd[inside],
            fill="tozeroy",
            mode="none",
            fillcolor="rgba(31,119,180,0.25)",
            name=f"{level:.0%} credible interval (equal tails)",
            hoverinfo="skip",
        ),
        dict(
            type="scatter",
            x=gx,
            y=gd,
            mode="lines",
            line=dict(color=SMOOTH_COLOR),
            name="posterior density",
            hovertemplate="g = %{x:.4f}<br>density %{y:.3g}<extra></extra>",
        ),
        dict(
            type="scatter",
            x=list(hpd),
            y=[0, 0],
            mode="markers",
            name="HPD interval ends",
            marker=dict(symbol="line-ns-open", size=18, color="#2ca02c", line=dict(width=3)),
            hovertemplate="%{x:.4f}<extra>HPD</extra>",
        ),
    ]
    shapes, anns = [], []
    sh, an = _vline(
        released,
        color="#d62728",
        dash="dash",
        text="published release",
        y=0.85,
        xanchor="left" if true_value is None or released >= true_value else "right",
    )
    shapes.append(sh)
    anns += an
    if true_value is not None:
        sh, an = _vline(true_value, text="true (hidden)", xanchor="right" if released >= true_value else "left")
        shapes.append(sh)
        anns += an
    return _figure(
        data,
        dict(
            height=340,
            legend=dict(orientation="h", y=-0.3),
            shapes=shapes,
            annotations=anns,
            xaxis=dict(title=dict(text="Gini index g"), range=[x0, x1]),
            yaxis=dict(title=dict(text="posterior density")),
        ),
    )


def error_vs_epsilon_figure(
    table: pd.DataFrame, current_epsilon: float, *, quantile: str = "q90_abs_error", label: str = "90% absolute error"
) -> dict:
    """Absolute error (a quantile) against epsilon: smooth sensitivity per calibration, and Laplace."""
    data = []
    for cal, sub in table.groupby("calibration", sort=False):
        data.append(
            dict(
                type="scatter",
                x=sub["epsilon"].to_numpy(),
                y=sub[quantile].to_numpy(),
                mode="lines+markers",
                name=f"smooth sensitivity, {CAL_LABEL.get(cal, cal)}",
                line=dict(color=SMOOTH_COLOR, dash=CAL_DASH.get(cal, "solid")),
                hovertemplate="ε = %{x}<br>%{y:.3g}<extra></extra>",
            )
        )
    first = table.drop_duplicates("epsilon")
    data.append(
        dict(
            type="scatter",
            x=first["epsilon"].to_numpy(),
            y=first[f"laplace_{quantile}"].to_numpy(),
            mode="lines+markers",
            name="Laplace, global sensitivity",
            line=dict(color=LAPLACE_COLOR),
            hovertemplate="ε = %{x}<br>%{y:.3g}<extra></extra>",
        )
    )
    sh, an = _vline(current_epsilon, color=YOUR_EPSILON_COLOR, text="your ε")
    an[0]["x"] = math.log10(current_epsilon)  # an annotation on a log axis is placed in log10 units (a shape is not)
    useless = dict(
        type="line", xref="paper", yref="y", x0=0, x1=1, y0=0.5, y1=0.5, line=dict(color="#d62728", dash="dot")
    )
    an.append(
        dict(
            x=1,
            xref="paper",
            y=math.log10(0.5),
            yref="y",
            text="useless (≥ 0.5)",
            showarrow=False,
            xanchor="right",
            yanchor="bottom",
            font=dict(color="#d62728"),
        )
    )
    return _figure(
        data,
        dict(
            height=380,
            legend=dict(orientation="h", y=-0.3),
            shapes=[sh, useless],
            annotations=an,
            xaxis=dict(
                type="log",
                title=dict(text="ε (privacy loss; smaller = more private)"),
                **_log_ticks(table["epsilon"].to_numpy()),
            ),
            yaxis=dict(
                type="log",
                title=dict(text=label),
                **_log_ticks(np.r_[table[quantile].to_numpy(), table[f"laplace_{quantile}"].to_numpy(), 0.5]),
            ),
        ),
    )


#: the tick values of a log axis: 1, 2, 5 per decade (plotly's own labels the 2 and 5 of 0.2 and 0.5 as "2", "5")
_LOG_TICKS = tuple(m * 10.0**e for e in range(-6, 7) for m in (1, 2, 5))


def _log_ticks(values: Any) -> dict:
    """tickvals and ticktext of a log axis spanning ``values``: each tick written in full (0.5, not 5)."""
    positive = np.asarray(values, dtype=float)
    positive = positive[np.isfinite(positive) & (positive > 0)]
    if positive.size == 0:
        return {}
    low, high = positive.min(), positive.max()
    ticks = [t for t in _LOG_TICKS if low / 1.0001 <= t <= high * 1.0001]
    return {"tickvals": ticks, "ticktext": [f"{t:g}" for t in ticks]} if ticks else {}


# ---------------------------------------------------------------------------------------------
# Paper experiments
# ---------------------------------------------------------------------------------------------


def figure1_plot(table: pd.DataFrame) -> go.Figure:
    """Box plots (1%, 25%, 50%, 75%, 99% of the releases) per epsilon, paper vs tight calibration."""
    fig = go.Figure()
    for i, (cal, sub) in enumerate(table.groupby("calibration", sort=False)):
        fig.add_trace(
            go.Box(
                x=[f"ε = {e:g}" for e in sub["epsilon"]],
                q1=sub["q25"],
                median=sub["median"],
                q3=sub["q75"],
                lowerfence=sub["q01"],
                upperfence=sub["q99"],
                name=CAL_LABEL.get(cal, cal),
                marker_color=[SMOOTH_COLOR, FAST_COLOR][i % 2],
                boxpoints=False,
            )
        )
    fig.add_hline(y=float(table["true_gini"].iloc[0]), line_color=TRUTH_COLOR, annotation_text="true Gini")
    fig.update_layout(
        boxmode="group",
        height=400,
        margin=_MARGIN,
        yaxis_title="released Gini (whiskers: 1%–99%)",
        legend=dict(orientation="h", y=1.12),
    )
    return fig


def figure3_plot(table: pd.DataFrame, gamma: float) -> go.Figure:
    """log10 absolute error boxes (exact 1/25/50/75/99% quantiles) by n, one panel per g and calibration,
    with the largest simulated error as a marker (the paper's "largest errors among the remaining 1%")."""
    ginis = sorted(table["g"].unique())
    cals = list(dict.fromkeys(table["calibration"]))
    fig = make_subplots(
        rows=len(cals),
        cols=len(ginis),
        shared_yaxes=True,
        subplot_titles=[f"g = {g:g}, {CAL_LABEL.get(c, c)}" for c in cals for g in ginis],
    )
    eps_values = sorted(table["epsilon"].unique())
    for r, cal in enumerate(cals, start=1):
        for c, g in enumerate(ginis, start=1):
            sub = table[(table["g"] == g) & (table["calibration"] == cal)]
            for j, eps in enumerate(eps_values):
                s = sub[sub["epsilon"] == eps]
                qs = np.array([abs_error_quantiles(v, gamma, (0.01, 0.25, 0.5, 0.75, 0.99)) for v in s["noise_scale"]])
                lq = np.log10(np.maximum(qs, 1e-6))
                color = EPS_COLORS[j % len(EPS_COLORS)]
                fig.add_trace(
                    go.Box(
                        x=[f"n={n:,.0f}" for n in s["n"]],
                        lowerfence=lq[:, 0],
                        q1=lq[:, 1],
                        median=lq[:, 2],
                        q3=lq[:, 3],
                        upperfence=lq[:, 4],
                        name=f"ε = {eps:g}",
                        marker_color=color,
                        legendgroup=f"e{eps}",
                        showlegend=(r == 1 and c == 1),
                        boxpoints=False,
                    ),
                    row=r,
                    col=c,
                )
                if "max_abs_error" in s:
                    fig.add_trace(
                        go.Scatter(
                            x=[f"n={n:,.0f}" for n in s["n"]],
                            y=np.log10(np.maximum(s["max_abs_error"], 1e-6)),
                            mode="markers",
                            marker=dict(symbol="x", color=color, size=6),
                            legendgroup=f"e{eps}",
                            showlegend=False,
                            name="largest simulated error",
                        ),
                        row=r,
                        col=c,
                    )
    fig.update_yaxes(title_text="log10 |error|", col=1)
    fig.update_layout(
        boxmode="group",
        height=330 * len(cals),
        margin=dict(l=10, r=10, t=50, b=10),
        legend=dict(orientation="h", y=1.08),
    )
    return fig


def figure4_plot(table: pd.DataFrame, gamma: float) -> go.Figure:
    """Error against IQ per epsilon and calibration: exact RMSE when gamma > 3, else the 90% absolute error."""
    use_rmse = gamma > 3 and np.all(np.isfinite(table["rmse"]))
    col, label = ("rmse", "RMSE") if use_rmse else ("q90_abs_error", "90% absolute error")
    fig = go.Figure()
    for j, eps in enumerate(sorted(table["epsilon"].unique())):
        for cal in dict.fromkeys(table["calibration"]):
            s = table[(table["epsilon"] == eps) & (table["calibration"] == cal)].sort_values("iq")
            fig.add_trace(
                go.Scatter(
                    x=s["iq"],
                    y=s[col],
                    mode="lines+markers",
                    name=f"ε = {eps:g}, {CAL_LABEL.get(cal, cal)}",
                    line=dict(color=EPS_COLORS[j % len(EPS_COLORS)], dash=CAL_DASH.get(cal, "solid")),
                )
            )
    fig.update_xaxes(title="normalised range IQ = (U − L) / mean")
    fig.update_yaxes(type="log", title=label)
    fig.update_layout(height=400, margin=_MARGIN, legend=dict(orientation="h", y=-0.25))
    return fig


def finite_range(center: float, half_width: float, *, floor: float = 1e-6) -> tuple[float, float]:
    """A plotting range center +- half_width (at least +- floor)."""
    h = max(float(half_width), floor)
    if not math.isfinite(h):
        h = 1.0
    return center - h, center + h


__all__: Sequence[str] = [
    "decay_figure",
    "releases_figure",
    "dots_figure",
    "posterior_figure",
    "error_vs_epsilon_figure",
    "figure1_plot",
    "figure3_plot",
    "figure4_plot",
    "finite_range",
]


# ---------------------------------------------------------------------------------------------
# The page's charts of one view (the notebook's charts: ui.notebook)
# ---------------------------------------------------------------------------------------------


def gini_view_figures(view: Any) -> list[tuple[str, Any]]:
    """The live sections' charts of one ``dpcore.views.gini.GiniView``, each with its section's title, as the page
    draws them with its "Fixed axes" option (the Gini's range and shares 0-1); a saturated view (the releases
    are pure noise) has only the sensitivity curves and the error against ε, as on the page."""
    from dpcore.views.gini import POSTERIOR_LEVEL

    figures: list[tuple[str, Any]] = []
    if not view.saturated:
        figures += [
            (
                "Where the published Gini would land (smooth sensitivity beside the Laplace baseline)",
                releases_figure(
                    view.true_gini,
                    view.simulated_releases,
                    view.simulated_laplace_releases,
                    smooth_range=(0.0, 1.0),
                    laplace_range=(0.0, 1.0),
                    share_range=(0.0, 1.0),
                ),
            ),
            (
                f"{view.plausible_releases.size} equally likely releases",
                dots_figure(view.plausible_releases, view.true_gini),
            ),
        ]
    figures.append(
        (
            "Why this much noise? Smooth sensitivity",
            decay_figure(
                view.exact_curve,
                view.fast_curve,
                k_star_exact=view.exact_k_star,
                k_star_fast=view.fast_k_star,
                beta=view.beta,
            ),
        )
    )
    if not view.saturated:
        figures.append(
            (
                "What an oracle that knows the noise scale could infer from one release",
                posterior_figure(
                    view.posterior_grid,
                    view.posterior_density,
                    released=view.released_gini,
                    interval=view.posterior_interval,
                    hpd=view.posterior_hpd,
                    level=POSTERIOR_LEVEL,
                    true_value=view.true_gini,
                ),
            )
        )
    quantity, label = ("rmse", "RMSE") if view.rmse is not None else ("q90_abs_error", "90% absolute error")
    figures.append(
        (
            "Error against ε for this data",
            error_vs_epsilon_figure(view.error_curve, view.epsilon, quantile=quantity, label=label),
        )
    )
    return figures
