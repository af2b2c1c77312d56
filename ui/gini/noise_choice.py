"""The Gini page's noise selector: choice + one-sentence trade-off + side-by-side error chart.

``render_noise_choice(key_prefix, comparison=..., epsilon=...) -> str`` draws a URL-backed selector
over ``dpcore.noise.smooth.SMOOTH_NOISES``, the trade-off of the chosen noise against the paper's Cauchy in
one sentence (median and 99th-percentile error, and the delta or rho it costs), and, when given a
:class:`dpcore.gini_noises.NoiseComparison`, the chart :func:`noise_error_figure`. It returns the
chosen registry name, for the page to pass as ``noise=`` to ``dpcore.gini``.

The comparison uses the confidential smooth sensitivity (planning view); without one the sentence
uses :func:`dpcore.gini_noises.unit_tradeoff` (public inputs only, per unit of S).
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.io as pio
import streamlit as st
from plotly.subplots import make_subplots

from dpcore import posterior
from dpcore.noise import smooth as smooth_noise
from dpcore.views import gini as gini_experiments
from dpcore.views import gini_noises
from ui.common import guard, qp_selectbox, run_on_button, show_figure
from ui.gini.sections import NOISE

NOISE_LABELS = {
    "cauchy": "Generalized Cauchy (paper, pure ε)",
    "laplace": "Laplace (NRS, (ε, δ))",
    "laplace_lognormal": "Laplace log-normal (Bun & Steinke, zCDP)",
}
DEFAULT_DELTA = smooth_noise.DEFAULT_DELTA
NOISE_COLORS = {"cauchy": "#1f77b4", "laplace": "#2ca02c", "laplace_lognormal": "#9467bd"}
_MARGIN = dict(l=10, r=10, t=40, b=10)


@functools.lru_cache(maxsize=4)
def _two_panel_layout(template_name: str) -> dict:
    """The two-panel layout of :func:`noise_error_figure` (axes domains, panel titles, template) as a plain
    dict, built once with ``make_subplots`` (~30 ms) and reused for every figure."""
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.55, 0.45],
        horizontal_spacing=0.12,
        subplot_titles=("error density (release − true Gini)", "absolute error quantiles"),
    )
    return fig.to_plotly_json()["layout"]


def noise_error_figure(
    comparison: gini_noises.NoiseComparison, *, chosen: str | None = None, title: str | None = None
) -> dict:
    """Side by side: the release-error densities (left) and the median / 90th / 99th absolute error (right, log).

    A plain plotly specification (dict; no ``go.Figure`` validation). The Cauchy's density is cut
    at the common range; its 99th percentile is on the right panel. ``title``: default "Same privacy: (ε, δ)".
    """
    curves = gini_noises.error_density_curves(comparison)
    data = []
    for row in comparison.rows:
        grid, dens = curves[row.noise]
        width = 3 if row.noise == chosen else 1.5
        data.append(
            dict(
                type="scatter",
                x=grid.tolist(),
                y=np.asarray(dens, dtype=float).tolist(),
                mode="lines",
                name=NOISE_LABELS[row.noise],
                line=dict(color=NOISE_COLORS[row.noise], width=width),
                legendgroup=row.noise,
                xaxis="x",
                yaxis="y",
                hovertemplate="error %{x:.3g}<br>density %{y:.3g}<extra></extra>",
            )
        )
        data.append(
            dict(
                type="bar",
                x=["median", "90th", "99th"],
                y=[row.median_abs_error, row.q90_abs_error, row.q99_abs_error],
                marker=dict(color=NOISE_COLORS[row.noise]),
                name=NOISE_LABELS[row.noise],
                legendgroup=row.noise,
                showlegend=False,
                xaxis="x2",
                yaxis="y2",
                hovertemplate="%{x}: ±%{y:.3g}<extra>" + row.noise + "</extra>",
            )
        )
    base = _two_panel_layout(str(pio.templates.default))
    layout = dict(base)
    # per unit of S (no data): the noise's own quantiles, multiples of S, not errors of a published Gini
    unit = " / S (noise per unit of smooth sensitivity)" if comparison.per_unit else " of the published Gini"
    layout.update(
        xaxis={**base["xaxis"], "title": {"text": ("noise" if comparison.per_unit else "error") + unit}},
        yaxis2={
            **base["yaxis2"],
            "type": "log",
            "title": {"text": "|noise| / S" if comparison.per_unit else "|error|"},
        },
        # the figure's title sits in a taller top margin, above the two panel titles (drawn at the top of the
        # plot area): with the default margin it was drawn over them
        barmode="group",
        margin={**_MARGIN, "t": 78},
        height=370,
        legend=dict(orientation="h", yanchor="top", y=-0.24, x=0),
        title=dict(
            text=title or f"Same privacy: (ε, δ) = ({comparison.epsilon:.3g}, {comparison.delta:.2g})",
            font=dict(size=14),
            x=0,
            xanchor="left",
            y=1,
            yref="container",
            yanchor="top",
            pad=dict(t=6),
        ),
    )
    return {"data": data, "layout": layout}


def _comparison_token(comparison: gini_noises.NoiseComparison) -> str:
    return json.dumps(comparison.to_dict(), sort_keys=True, default=str)


@st.cache_resource(show_spinner=False, max_entries=128, hash_funcs={gini_noises.NoiseComparison: _comparison_token})
def _cached_noise_figure(comparison: gini_noises.NoiseComparison, chosen: str, title: str | None) -> dict:
    # shared by every session of this process; read-only (nothing changes a spec after it is built)
    return noise_error_figure(comparison, chosen=chosen, title=title)


def comparison_table(comparison: gini_noises.NoiseComparison) -> list[dict[str, Any]]:
    """Rows for ``st.dataframe``: noise, cost, median / 90th / 99th error, RMSE."""
    return [
        {
            "noise": NOISE_LABELS[r.noise],
            "privacy cost": r.cost.describe(),
            "median |error|": r.median_abs_error,
            "90th": r.q90_abs_error,
            "99th": r.q99_abs_error,
            "RMSE": r.rmse if r.rmse is not None else np.inf,
        }
        for r in comparison.rows
    ]


def noise_selector(key_prefix: str, *, container: Any = st) -> str:
    """The URL-backed selector (key ``f"{key_prefix}_noise"``) over ``dpcore.noise.smooth.SMOOTH_NOISES``; default "cauchy"."""
    return qp_selectbox(
        "Noise distribution",
        f"{key_prefix}_noise",
        list(smooth_noise.SMOOTH_NOISES),
        "cauchy",
        container=container,
        format_func=lambda n: NOISE_LABELS.get(n, n),
        help="The paper's generalized Cauchy is pure ε-DP but heavy-tailed; the light-tailed "
        "options trade a small δ (or a zCDP ρ) for much smaller rare errors.",
    )


def render_tradeoff(
    key_prefix: str,
    chosen: str,
    comparison: gini_noises.NoiseComparison,
    *,
    per_unit: bool,
    container: Any = st,
    show_chart: bool = True,
) -> None:
    """The one-sentence trade-off of ``chosen`` and the side-by-side chart (``per_unit``: a data-free comparison)."""
    suffix = (
        (
            " *(Per unit of smooth sensitivity, before looking at the data: exact when every noise's S equals the "
            "local bound, as for a Gini on thousands of records.)*"
        )
        if per_unit
        else ""
    )
    container.markdown(comparison.sentence(chosen) + suffix)
    if show_chart:
        title = (
            f"Per unit of smooth sensitivity, (ε, δ) = ({comparison.epsilon:.3g}, {comparison.delta:.2g})"
            if per_unit
            else None
        )
        show_figure(
            _cached_noise_figure(comparison, chosen, title), container=container, key=f"{key_prefix}_noise_chart"
        )


def render_noise_choice(
    key_prefix: str,
    *,
    comparison: gini_noises.NoiseComparison | None = None,
    epsilon: float | None = None,
    delta: float = smooth_noise.DEFAULT_DELTA,
    gamma: float = 2.0,
    container: Any = st,
    show_chart: bool = True,
) -> str:
    """Noise selector + one-sentence trade-off + side-by-side chart. Returns the registry name.

    ``key_prefix``: the page's widget prefix (the selector's key is ``f"{key_prefix}_noise"``, in the URL).
    Give ``comparison`` (from ``dpcore.gini_noises.compare_noises``, cached by the page) for exact
    numbers on the current data, or ``epsilon`` alone for the data-free per-unit-S version.
    """
    chosen = noise_selector(key_prefix, container=container)
    per_unit = comparison is None
    if comparison is None:
        if epsilon is None:
            return chosen
        comparison = gini_noises.unit_tradeoff(epsilon, delta=delta, gamma=gamma)
    render_tradeoff(key_prefix, chosen, comparison, per_unit=per_unit, container=container, show_chart=show_chart)
    return chosen


# ---------------------------------------------------------------------------------------------
# The Gini page's section (one call from app_pages/gini.py)
# ---------------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False, max_entries=32)
def _comparison(
    values: np.ndarray,
    epsilon: float,
    lower: float,
    upper: float,
    gamma: float,
    calibration: str,
    method: str,
    delta: float,
) -> gini_noises.NoiseComparison:
    return gini_noises.compare_noises(
        values,
        epsilon=epsilon,
        lower=lower,
        upper=upper,
        delta=delta,
        gamma=gamma,
        calibration=calibration,
        method=method,
    )


@st.cache_data(show_spinner=False, max_entries=64)
def _unit(epsilon: float, delta: float, gamma: float) -> gini_noises.NoiseComparison:
    return gini_noises.unit_tradeoff(epsilon, delta=delta, gamma=gamma)


def warm_slider_calibrations(
    epsilons: Sequence[float], *, gamma: float, calibration: str, noise: str, delta: float = DEFAULT_DELTA
) -> threading.Thread:
    """Start a background thread that calibrates the chosen noise and the data-free comparison at every epsilon of
    the page's slider (public inputs only; ``dpcore`` remembers them), so that a later slider move finds them
    ready. The page calls it once per process and setting, after it is drawn: before the first screen, the
    slider's calibrations alone took 0.75 s in a fresh process (docs/benchmarks.md, "Page load"); ``run.sh app``
    makes those of the default setting before it listens (deploy/run_app.py). A setting that cannot be calibrated
    is left to the view call, which shows the error."""

    def calibrate() -> None:
        try:
            gini_experiments.calibrate_epsilons(epsilons, gamma=gamma, calibration=calibration, noise=noise)
            for epsilon in epsilons:
                gini_noises.unit_tradeoff(float(epsilon), delta=delta, gamma=gamma)
        except ValueError:
            pass

    thread = threading.Thread(target=calibrate, name="gini-slider-calibrations", daemon=True)
    thread.start()
    return thread


@st.cache_data(show_spinner=False, max_entries=64)
def _one_release(
    values: np.ndarray,
    noise: str,
    epsilon: float,
    lower: float,
    upper: float,
    gamma: float,
    calibration: str,
    method: str,
    delta: float,
    seed: int,
) -> dict[str, Any]:
    from dpcore import gini

    rel = gini.release_gini(
        values,
        epsilon=epsilon,
        gamma=gamma,
        lower=lower,
        upper=upper,
        calibration=calibration,
        method=method,
        rng=seed,
        clip_negative=True,
        noise=noise,
        delta=delta,
    )
    lo, hi = posterior.release_posterior(rel).interval(0.95)
    return {"value": rel.value, "interval": (lo, hi), "cost": rel.privacy_cost.describe()}


def render_gini_noise_section(
    key_prefix: str,
    values: np.ndarray,
    *,
    epsilon: float,
    lower: float,
    upper: float,
    gamma: float,
    calibration: str,
    method: str,
    seed: int,
    delta: float = smooth_noise.DEFAULT_DELTA,
    slow_below: float = 0.5,
    saturated: bool = False,
    chosen: str | None = None,
) -> str:
    """Section NOISE of the Gini page (``ui.gini.sections``): noise selector, trade-off sentence, side-by-side
    chart, one release.

    ``values``: the page's (sub-sampled) incomes; bounds as on the page (U may be the DP estimate).
    With the default noise ("cauchy") the section shows the data-free comparison (per unit of smooth
    sensitivity, instant) and computes the one on this data on a button, so slider moves stay fast.
    With a light-tailed noise chosen it computes on the data directly, except with the exact bound at
    epsilon < ``slow_below`` (those noises need beta ~ epsilon / ln(1/delta), and the exact smooth
    sensitivity then takes seconds): a button again. ``saturated`` (the page's view is meaningless at these
    settings): the sentence stays, the charts are hidden as on the rest of the page. ``chosen``: the noise the
    page's own selector (drawn with :func:`noise_selector` above the view) chose; None draws the selector here.
    Returns the chosen name.
    """
    intro = (
        f"## {NOISE.heading}\n\n"
        "The paper's generalized-Cauchy noise gives **pure** ε-DP but has heavy tails: rare releases land very "
        "far off. Two light-tailed alternatives use the same smooth sensitivity: **Laplace** noise "
        "(Nissim, Raskhodnikova & Smith 2007) for (ε, δ)-DP, and the **Laplace log-normal** of Bun & Steinke "
        f"(2019) for zero-concentrated DP. All three are compared at the **same privacy, (ε, δ = {delta:.0e})**: "
        "the Cauchy is pure ε (so also (ε, δ)), the Laplace spends exactly (ε, δ), the log-normal spends the "
        "zCDP ρ that implies (ε, δ). Planning view: the numbers use the data's smooth sensitivity."
    )
    if chosen is None:  # the page may draw the selector itself, above its view (the whole page follows it)
        st.markdown(intro)
        chosen = noise_selector(key_prefix)
    else:  # one element for the heading, the text and the choice (fewer messages per rerun)
        st.markdown(
            intro + f"\n\nChosen above: **{NOISE_LABELS.get(chosen, chosen)}**; every number on this page uses it."
        )
    fast_enough = method == "fast" or epsilon >= slow_below
    if chosen != "cauchy" and fast_enough:
        comparison = None
        with guard("the noise comparison"):
            comparison = _comparison(values, epsilon, lower, upper, gamma, calibration, method, delta)
    else:  # the default view stays instant: a data-free comparison, the exact one on request
        comparison = run_on_button(
            f"Compare the noises on this data at ε = {epsilon:g}"
            + ("" if fast_enough else " (a few seconds at small ε)"),
            f"{key_prefix}_noise_run",
            lambda: _comparison(values, epsilon, lower, upper, gamma, calibration, method, delta),
            what="the noise comparison",
            state_key=(
                f"{key_prefix}_noise_cmp_{epsilon:g}_{lower:g}_{upper:g}_{gamma:g}_{calibration}"
                f"_{method}_{values.size}_{float(np.sum(values)):.12g}"
            ),
        )
    if comparison is None:
        render_tradeoff(key_prefix, chosen, _unit(epsilon, delta, gamma), per_unit=True, show_chart=not saturated)
        return chosen
    render_tradeoff(key_prefix, chosen, comparison, per_unit=False, show_chart=not saturated)
    if comparison is not None:  # always here; kept for readers of the branch above
        st.dataframe(
            comparison_table(comparison),
            hide_index=True,
            column_config={
                c: st.column_config.NumberColumn(format="%.2e") for c in ("median |error|", "90th", "99th", "RMSE")
            },
        )
        with guard("the release with the chosen noise"):
            one = _one_release(values, chosen, epsilon, lower, upper, gamma, calibration, method, delta, int(seed))
            lo, hi = one["interval"]
            st.markdown(
                f"One release with this noise (sidebar seed): **{one['value']:.4f}**, 95% posterior interval "
                f"[{lo:.4f}, {hi:.4f}] (uniform prior); privacy cost {one['cost']}."
            )
    return chosen
