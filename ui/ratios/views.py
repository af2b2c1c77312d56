"""Renderers of the ratios page: each draws one view from a result of :mod:`dpcore.views.ratio`
(``sampling_view``, ``intervals_view``, ``coverage_heatmap_view``, ``accuracy_view``, ``bias_view``,
``odds_ratio_view``, ``poverty_view``). Nothing here recomputes a mechanism; figures come from
:mod:`ui.ratios.plots`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.views import ratio as ratio_experiments
from ui.common import CachedBuilders, download_csv, show_figure
from ui.ratios import plots as plots_ratio_builders

# figures built once per distinct input in this process, shared by all sessions
plots_ratio = CachedBuilders(plots_ratio_builders)

INTRO = (
    "An analyst receives **differentially private counts**: how many people in group *x* (say, exposed) and in "
    "group *y* (unexposed) have an outcome. She divides them to get the **relative risk** "
    "RR = p_x / p_y and wants an honest confidence interval. This page shows, for your settings, how much of "
    "the uncertainty comes from **sampling** (who happened to be in the study) and how much from the "
    "**privacy noise**, following Shoham & Ligett (2025), *Differentially private ratio statistics*."
)
PRIVACY_NOTE = (
    "two datasets differ in one person's record (replace one record). The group sizes n_x and n_y stay the same. "
    "Each count gets noise with half the budget (ε/2, and δ/2 for Gaussian noise), so the release is private even "
    "if one person changes both counts.",
    "the group sizes n_x and n_y, ε, δ, the noise distribution, and the chosen interval method. Ratios, intervals "
    "and bias corrections computed from the noisy counts cost no extra privacy (post-processing).",
)
ACCURACY_CAPTION = (
    "LaplaceNoisedCounts: the noisy counts used on this page (Claim 3.2). NaiveRelativeRisk: noise on the "
    "ratio itself. NoisedLog: noise on log x − log y. Smooth sensitivity and PTR tailor the noise to the "
    "data; PTR is given the best proposal by an oracle (not private, a best case), and its 'FAIL' "
    "answers count as errors. These rivals assume one person changes one count."
)


def table(df: pd.DataFrame, digits: int) -> None:
    """Show a table with its float columns displayed to ``digits`` decimals; the data (and CSV) keep full
    precision, so the numbers can be compared with the reproduction script."""
    fmt = {
        c: st.column_config.NumberColumn(format=f"%.{digits}f")
        for c in df.columns
        if pd.api.types.is_float_dtype(df[c])
    }
    st.dataframe(df, hide_index=True, width="stretch", column_config=fmt)


def sampling(view: ratio_experiments.SamplingView) -> None:
    st.subheader("How much does privacy widen the spread of the estimate?")
    st.markdown(
        f"We simulate {ratio_experiments.N_SAMPLING:,} studies: each draws counts from the population "
        "(sampling) and then adds the privacy noise. Grey: the estimates without privacy; blue: with privacy. "
        "Noisy counts below 1 are set to 1, as in the paper."
    )
    hist = pd.DataFrame(
        {"bin_mid": view.bin_mid, "non-private": view.density_nonprivate, "private": view.density_private}
    )
    show_figure(plots_ratio.sampling_figure(hist, view.true_rr), width="stretch")
    sd0, sd1, share = view.sd_nonprivate, view.sd_private, view.privacy_variance_share
    c = st.columns(3)
    c[0].metric("spread without privacy (s.d.)", f"{sd0:.3g}")
    c[1].metric(
        "spread with privacy (s.d.)",
        f"{sd1:.3g}",
        f"{(sd1 / sd0 - 1):+.0%}" if sd0 > 0 else None,
        delta_color="inverse",
    )
    c[2].metric("share of variance from privacy", f"{share:.0%}" if share is not None else "–")
    st.caption(
        "If the blue curve is barely wider than the grey one, the sample size, not privacy, limits what "
        "you can learn (the paper's Section 4.2 point: the privacy part is second order)."
    )
    summary = pd.DataFrame(
        {
            "estimate": ["without privacy (sampling only)", "with privacy (sampling + noise)"],
            "s.d.": [sd0, sd1],
            "median": [view.median_nonprivate, view.median_private],
            "mean": [view.mean_nonprivate, view.mean_private],
        }
    )
    st.dataframe(
        summary,
        hide_index=True,
        width="stretch",
        column_config={c: st.column_config.NumberColumn(format="%.4g") for c in ("s.d.", "median", "mean")},
    )
    download_csv(hist, "Download histogram data (CSV)", "ratio_sampling.csv", key="dl-ratio-sampling")


def intervals(view: ratio_experiments.IntervalsView, *, seed: int, n_x: int, n_y: int) -> None:
    st.subheader("Confidence intervals for the relative risk")
    xn, yn = view.noisy_counts
    if view.true_counts is not None:
        st.markdown(
            f"One simulated study (seed {seed}): true counts X = {view.true_counts[0]}, "
            f"Y = {view.true_counts[1]}; released noisy counts x~ = {xn:.1f}, y~ = {yn:.1f}."
        )
    else:
        st.markdown(f"Your released noisy counts: x~ = {xn:g} of n_x = {n_x:,}, y~ = {yn:g} of n_y = {n_y:,}.")
    df = pd.DataFrame(list(view.intervals))
    show_figure(plots_ratio.intervals_figure(df, view.true_rr), width="stretch")
    table(df, 4)
    c = st.columns(2)
    c[0].metric("share of the conservative interval's variance from privacy", f"{view.privacy_share:.0%}")
    c[1].metric("conservative width / Theorem 4.2 width", f"{view.width_ratio:.2f}×")
    st.markdown(
        "* **Katz**: the classic interval on the log scale (needs true counts).\n"
        "* **Theorem 4.2**: a normal approximation for the ratio that *ignores* the privacy noise; it is valid "
        "for large samples but can cover too rarely in small ones.\n"
        "* **Theorem 4.5 (conservative)**: adds the known noise variance "
        f"({view.noise_variance:.3g} per count) to the sampling variance; use this one."
    )
    download_csv(df, "Download intervals (CSV)", "ratio_intervals.csv", key="dl-ratio-intervals")
    if view.coverage is not None:
        st.markdown(
            f"**How often do these intervals contain the true RR?** ({ratio_experiments.N_COVER:,} simulated studies)"
        )
        cov = pd.DataFrame(list(view.coverage))
        table(cov, 4)
        download_csv(cov, "Download coverage (CSV)", "ratio_coverage.csv", key="dl-ratio-coverage")


def heatmaps(view: ratio_experiments.CoverageHeatmapView) -> None:
    level = view.level
    show_figure(
        plots_ratio.heatmap_figure(
            view.coverage,
            view.p_values,
            title=f"Coverage of '{view.method}' at nominal {level:.0%}",
            zmin=level - 0.1,
            zmax=min(1.0, level + 0.1),
            mask=view.small_counts,
        ),
        width="stretch",
    )
    st.caption(
        f"Rows p_x, columns p_y. * = an expected count below 30 (the paper's rule of thumb). "
        f"Monte Carlo error about ±{2 * math.sqrt(level * (1 - level) / view.n_sims):.3f}."
    )
    show_figure(
        plots_ratio.heatmap_figure(
            view.width_ratio,
            view.p_values,
            title="Mean width / width of the non-private interval",
            zmin=1.0,
            zmax=max(1.5, float(np.nanmax(view.width_ratio))),
            colorscale="Blues",
            fmt=".2f",
        ),
        width="stretch",
    )
    out = pd.DataFrame(view.rows())
    with st.expander("The numbers behind the heatmaps"):
        st.dataframe(out, hide_index=True, width="stretch")
    download_csv(out, "Download heatmap data (CSV)", "ratio_heatmaps.csv", key="dl-ratio-heatmaps")


def accuracy(view: ratio_experiments.AccuracyView) -> None:
    st.markdown(
        f"For the counts x = {view.x}, y = {view.y} (ratio x/y = {view.x / max(view.y, 1):.3g}): the "
        f"probability that each private algorithm lands within ±{view.alpha:g} of the true ratio x/y, over "
        f"its noise only. δ = 1/n = {1 / view.n:.2g} where needed, as in the paper (which takes n_x = n_y = "
        f"n; here n = max(n_x, n_y) = {view.n:,})."
    )
    st.caption(ACCURACY_CAPTION)
    df = pd.DataFrame(list(view.rows))
    show_figure(plots_ratio.accuracy_figure(df, view.alpha), width="stretch")
    with st.expander("The numbers behind the chart"):
        st.dataframe(df, hide_index=True, width="stretch")
    download_csv(df, "Download accuracy curves (CSV)", "ratio_accuracy.csv", key="dl-ratio-accuracy")


def bias(view: ratio_experiments.BiasView) -> None:
    st.subheader("Bias of the ratio of noisy counts (the paper's Figure 2)")
    st.markdown(
        "The ratio of two noisy counts is slightly biased (a ratio's average is not the ratio of averages). "
        "With the noisy denominator set to at least 1, Claim 3.4 gives the exact average; here it is "
        "weighted over binomial samples with n people in each group. The ratio without privacy is biased "
        "too: privacy adds little once the counts are moderate."
    )
    df = pd.DataFrame(list(view.rows))
    show_figure(plots_ratio.bias_figure(df), width="stretch")
    table(df, 5)
    download_csv(df, "Download bias curve (CSV)", "ratio_bias.csv", key="dl-ratio-bias")


ODDS_RATIO_TEXT = (
    "The odds ratio (a·d)/(b·c) uses all four cells: with/without the outcome in each group. Each cell "
    "gets Laplace noise of scale 2/ε (one person leaving one cell and entering another changes two "
    "cells). The interval is the classic log-scale one (Woolf), with the noise variance added "
    "(delta method): Var(log OR) ≈ Σ (1/cell + noise variance/cell²)."
)
POVERTY_TEXT = (
    "Real people from the ACS 2019 PUMS (NIST excerpt, 20 areas). Outcome: income below the poverty "
    "line (POVPIP < 100). People whose poverty status is not determined are left out. Choose two "
    "groups to compare; the two counts get noise exactly as above (with your ε and seed)."
)


def odds_ratio(view: ratio_experiments.OddsRatioView) -> None:
    a, b, c, d = view.true_cells
    na, nb, nc, nd = view.noisy_cells
    table(
        pd.DataFrame(
            {
                "": ["group x", "group y"],
                "with outcome (true)": [a, c],
                "without (true)": [b, d],
                "with outcome (noisy)": [na, nc],
                "without (noisy)": [nb, nd],
            }
        ),
        1,
    )
    df = pd.DataFrame(list(view.intervals))
    show_figure(plots_ratio.intervals_figure(df, view.true_or), width="stretch")
    table(df, 4)
    cov = view.coverage
    st.markdown(
        f"Coverage over {ratio_experiments.N_COVER:,} simulated studies: no privacy "
        f"{cov['no privacy'][0]:.1%}; noisy cells ignoring the noise {cov['ignoring the noise'][0]:.1%}; with "
        f"the noise variance {cov['with noise variance'][0]:.1%} (± {2 * cov['with noise variance'][1]:.1%})."
    )
    download_csv(df, "Download odds-ratio intervals (CSV)", "ratio_odds.csv", key="dl-ratio-odds")


def poverty(view: ratio_experiments.PovertyView, names: dict) -> None:
    (n_x, n_y), (x, y), (xn, yn) = view.people, view.confidential_in_poverty, view.noisy_counts
    table(
        pd.DataFrame(
            [
                {"": names[view.group_x], "people (public)": n_x, "in poverty (confidential)": x, "noisy count": xn},
                {"": names[view.group_y], "people (public)": n_y, "in poverty (confidential)": y, "noisy count": yn},
            ]
        ),
        1,
    )
    df = pd.DataFrame([{k: r[k] for k in ("method", "estimate", "lower", "upper")} for r in view.intervals])
    show_figure(plots_ratio.intervals_figure(df, None), width="stretch")
    m = st.columns(3)
    m[0].metric("RR without privacy", f"{view.rr_without_privacy:.3f}")
    m[1].metric("RR with privacy", f"{view.rr_with_privacy:.3f}")
    m[2].metric("share of variance from privacy", f"{view.privacy_share:.1%}")
    st.caption(
        "The confidential numbers are shown only to teach what the noise does; a real release "
        "would publish only the noisy counts. Persons, not households; unweighted."
    )
    download_csv(df, "Download intervals (CSV)", "ratio_acs_poverty.csv", key="dl-ratio-acs")
