"""Renderers of the Gini page: each draws one section from a :class:`dpcore.views.gini.GiniView`.

The page (``app_pages/gini.py``) reads the controls, makes one cached call to
:func:`dpcore.views.gini.gini_view` and hands the result to these functions. Figures come
from :mod:`ui.gini.plots`; nothing here recomputes the mechanism.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable
from numbers import Number
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import intervals
from dpcore.lru import array_digest
from dpcore.views import gini as gini_experiments
from dpcore.views.gini import GiniView
from ui.common import download_csv, numbers_table, privacy_note, qp_selectbox, run_on_button, show_figure
from ui.gini import plots as plots_gini
from ui.gini.sections import ERROR_CURVE, POSTERIOR, RELEASES, SENSITIVITY
from ui.lazy import lazy_expander

# The live figures are plain plotly specifications built from the view in ~1 ms each (ui.gini.plots): cheaper
# than hashing the view's 20,000 simulated releases to look a remembered figure up.

PRIORS = {
    "uniform": ("uniform", "a flat prior on [0, 1] (the paper's choice)"),
    "beta": (("beta", 6.0, 7.0), "a Beta(6, 7) prior (most countries' Ginis lie between 0.2 and 0.7)"),
}
CAL_LABELS = {"tight": "tight (ours: certified, less noise)", "paper": "paper (Nissim et al. constants)"}
NOISE_NAMES = {
    "cauchy": "generalized Cauchy, as in the paper",
    "laplace": "Laplace",
    "laplace_lognormal": "Laplace log-normal",
}
METHOD_LABELS = {"exact": "exact (Theorem 4.3 structure)", "fast": "fast closed form (Theorem 4.4 structure)"}


def fmt(v: float, digits: int = 4) -> str:
    """A number at ``digits`` decimals (scientific when tiny; ∞ for infinity)."""
    if not math.isfinite(v):
        return "∞"
    return f"{v:.{digits}f}" if abs(v) >= 10**-digits or v == 0 else f"{v:.2e}"


def clipping_notes(view: GiniView, confidential: bool = True, synthetic: bool = False) -> None:
    """Warnings with the clipping counts: on a confidential file's records for the data holder only; on the
    synthetic records of a DP snapshot they are post-processing and said to describe those records."""
    notes = []
    if view.confidential_n_negative:
        notes.append(f"{view.confidential_n_negative:,} negative incomes (losses) were set to L = {view.lower:,.6g}.")
    if view.confidential_n_below - view.confidential_n_negative > 0:
        notes.append(f"{view.confidential_n_below - view.confidential_n_negative:,} incomes below L were raised to L.")
    if view.confidential_n_above:
        notes.append(
            f"**{view.confidential_n_above:,} incomes above U = {view.upper:,.6g} were clipped to U** "
            "(this lowers the Gini)."
        )
    if synthetic:
        suffix = " These counts describe the DP snapshot's synthetic records, not the file's."
    elif confidential:
        suffix = " These counts describe the confidential data: they are for the data holder only."
    else:
        suffix = ""
    for note in notes:
        st.warning(note + suffix)


def headline(view: GiniView) -> None:
    """The five metrics and, when the noise swamps the Gini, the explanation. Labels fit a fifth of the main
    area at 1280 px (about 130 px); the detail is in each tooltip."""
    m1, m2, m3, m4, m5 = st.columns(5)
    for column, (label, value, detail) in zip((m1, m2, m3, m4, m5), headline_metrics(view), strict=True):
        column.metric(label, value, help=detail)
    if view.saturated:
        st.warning(
            f"**At ε = {view.epsilon:g} with n = {view.n:,} and U = {view.upper:,.6g} the noise swamps the Gini.** "
            + (
                "The sensitivity bound has reached its worst case (the global sensitivity), so "
                if view.sensitivity_saturated
                else ""
            )
            + "the noise's typical size is at least half the Gini's whole range (0 to 1): "
            f"{view.clamp_probability:.0%} of the releases would be published at 0 or 1 (the clamp to the range), "
            "and a release would say nothing. Increase ε or n, or use a tighter upper bound U. (Charts of releases "
            "are hidden.)"
        )


def guarantee_and_definition() -> None:
    """What the guarantee protects and what is public (the page's privacy note), and the Gini's definition:
    drawn after the controls, so the answer box and its recommended ε stay on the first screen."""
    privacy_note(
        "two datasets are neighbours when they differ in **one person's income** (replace one record); "
        "the number of records n is the same.",
        "n, the bounds L and U (or the DP estimate of U, whose ε is added to the total), ε, γ and the "
        "mechanism. The noise scale S(X)/α depends on the data and is never published: a real release publishes a "
        "DP upper bound on it instead (paid from the same ε), from which anyone computes the interval; the oracle "
        f"posterior in {POSTERIOR.cited} treats it as known, as the paper does.",
    )
    definition, shown = lazy_expander("Which Gini? (definition used everywhere on this page)", "gini_definition")
    if not shown:  # drawn when opened: a formula loads the browser's KaTeX bundle (ui.lazy)
        return
    with definition:
        # two formulas, not one line: the line was wider than a phone, and KaTeX's box then scrolls sideways
        # where no keyboard can reach it (WCAG 2.1.1)
        st.latex(r"g(X) \;=\; \frac{\sum_{i=1}^{n}\sum_{j=1}^{n} |x_i - x_j|}{2\,n^2\,\bar x}")
        st.latex(r"\phantom{g(X)} \;=\; \frac{\sum_{i=1}^{n} (2i - n - 1)\,x_{(i)}}{n \sum_i x_i}")
        st.markdown(
            "This is eq. (1) of the paper (x sorted ascending; range 0 to (n−1)/n). The paper's toy example "
            "uses eq. (2), which divides by n(n−1)·mean instead and is larger by n/(n−1); for thousands of "
            "records the two agree to the shown digits. Every sensitivity bound here is derived for eq. (1)."
        )


def headline_metrics(view: GiniView) -> list[tuple[str, str, str]]:
    """(label, value, tooltip) of the five headline metrics."""
    return [
        (
            "True Gini",
            f"{view.true_gini:.4f}",
            "The Gini of the confidential data: shown for planning only, never published.",
        ),
        (
            "Sensitivity S(X)",
            fmt(view.smooth_sensitivity),
            f"Smooth sensitivity S(X), maximised at k* = {view.k_star} changed records.",
        ),
        (
            "Noise scale",
            fmt(view.noise_scale),
            f"S(X)/α with α = {view.alpha:.4g}, β = {view.beta:.4g} ({view.calibration}); {view.privacy_statement}.",
        ),
        (
            "Median error",
            fmt(view.abs_error_quantiles[0]),
            "Typical error of a release: the median of |published − true Gini|.",
        ),
        (
            "Laplace error",
            fmt(view.laplace_abs_error_quantiles[0]),
            f"Median |error| of the Laplace baseline: global sensitivity {view.global_sensitivity:.4g} / ε.",
        ),
    ]


#: the mechanisms' names in ``GiniView.error_table()`` (the error summary's rows)
ERROR_TABLE_MECHANISMS = ("smooth sensitivity (this page)", "Laplace, global sensitivity")


def data_digest(values: np.ndarray) -> str:
    """A digest of the records that keys the page's cached calls (instead of Streamlit hashing the array
    at every call of every rerun). Computed once per data array (the sidebar keeps one array per
    data set and never changes it): remembered by the array's identity, checked through a weak reference."""
    entry = _DIGESTS.get(id(values))
    if entry is not None and entry[0]() is values:
        return entry[1]
    digest = f"{values.dtype}:{values.shape}:{array_digest(values)}"
    with _DIGESTS_LOCK:
        if len(_DIGESTS) >= 64:  # forget arrays that no longer exist (and everything, if all 64 still do)
            alive = {k: entry for k, entry in _DIGESTS.items() if entry[0]() is not None}
            _DIGESTS.clear()
            if len(alive) < 64:
                _DIGESTS.update(alive)
        _DIGESTS[id(values)] = (weakref.ref(values), digest)
    return digest


_DIGESTS: dict[int, tuple[weakref.ref, str]] = {}
_DIGESTS_LOCK = threading.Lock()


def settings_key(settings: dict) -> str:
    """The text of a settings dict (names sorted; numbers, strings, None and tuples as ``repr`` writes them,
    which tells every two different values apart): a cache key Streamlit hashes in microseconds, where
    walking the dict costs ~0.5 ms per cached call."""
    for value in settings.values():
        if not isinstance(value, (str, Number, type(None), tuple)):
            raise TypeError(f"settings_key: {type(value).__name__} values are not keyed by their text")
    return repr(sorted(settings.items()))


#: fixed axes: the Gini's possible range and shares 0-100%: public, the same for every ε
FIXED_GINI_RANGE, FIXED_SHARE_RANGE = (0.0, 1.0), (0.0, 1.0)


def releases(view: GiniView, *, fixed_axes: bool = False) -> None:
    """Section RELEASES: where the published Gini would land (histogram, dot plot, error summary).

    ``fixed_axes``: both panels on [0, 1] x [0 %, 100 %] (public, independent of the draws), so two
    ε side by side show the change in spread instead of the same shape with other tick labels."""
    if view.saturated:
        st.info("Hidden: at these settings the releases would be pure noise (see the message above).")
        return
    simulated, laplace, plausible = view.simulated_releases, view.simulated_laplace_releases, view.plausible_releases
    assert simulated is not None and laplace is not None and plausible is not None  # set unless saturated
    med, q90, _ = view.abs_error_quantiles
    lap_med, lap_q90, _ = view.laplace_abs_error_quantiles
    st.markdown(  # the section's heading and text in one element (fewer messages per rerun)
        f"## {RELEASES.heading}\n\n"
        f"Each release is the true Gini plus noise, published clamped to [0, 1]. Out of many possible releases of "
        f"the value alone at the full ε, half land within **±{fmt(med)}** of the truth and 90 % within "
        f"**±{fmt(q90)}** (errors of the published value; the interval an analyst can compute is in "
        f"{POSTERIOR.cited}). The usual Laplace "
        f"mechanism (right) must cover the worst case over *all* datasets and is "
        f"**{lap_med / max(med, 1e-300):,.0f}× noisier** here."
    )
    if fixed_axes:
        fig = plots_gini.releases_figure(
            view.true_gini,
            simulated,
            laplace,
            smooth_range=FIXED_GINI_RANGE,
            laplace_range=FIXED_GINI_RANGE,
            share_range=FIXED_SHARE_RANGE,
        )
    else:
        fig = plots_gini.releases_figure(
            view.true_gini,
            simulated,
            laplace,
            smooth_range=_within_range(plots_gini.finite_range(view.true_gini, 1.5 * q90)),
            laplace_range=_within_range(plots_gini.finite_range(view.true_gini, 1.5 * lap_q90)),
        )
    show_figure(fig, width="stretch")
    # 5:4, not 3:2: at 1280 px the error summary's four columns were 3 px wider than two fifths of the main area
    left, right = st.columns([5, 4])
    n_dots = plausible.size
    with left:
        st.subheader(f"{n_dots} equally likely releases")
        show_figure(plots_gini.dots_figure(plausible, view.true_gini), width="stretch")
        st.caption(
            f"Each dot is a 1-in-{n_dots} chance: if the agency published today, the Gini would be "
            "near one of these dots."
            + (" Dots far from the black line are the heavy-tailed noise." if view.noise == "cauchy" else "")
        )
        download_csv(
            lambda: pd.DataFrame({"probability_level": (np.arange(n_dots) + 0.5) / n_dots, "release": plausible}),
            "Download the dots (CSV)",
            "gini_plausible_releases.csv",
            key="gini_dl_dots",
        )
    with right:
        st.markdown("### Error summary\n\n" + _error_summary_markdown(view))
        if view.rmse is not None:
            st.caption(
                "RMSE is shown because γ > 3: the noise then has a finite variance."
                if view.noise == "cauchy"
                else "RMSE is shown: this light-tailed noise has a finite variance."
            )
        else:
            st.caption(
                f"No RMSE: with γ = {view.gamma:g} ≤ 3 the noise has **infinite variance**, so a mean square would "
                "be set by the clamp to [0, 1] rather than by the noise. Quantiles of the error are the honest "
                "summary. Choose γ > 3 to see an RMSE."
            )
    download_csv(
        lambda: pd.DataFrame(
            {
                "release_smooth": simulated[:2000],
                "release_laplace": laplace[:2000],
            }
        ),
        "Download 2,000 simulated releases (CSV)",
        "gini_releases.csv",
        key="gini_dl_rel",
    )


def _within_range(bounds: tuple[float, float]) -> tuple[float, float]:
    """A chart's range of Gini values cut to [0, 1], where every published Gini lies."""
    low, high = max(bounds[0], FIXED_GINI_RANGE[0]), min(bounds[1], FIXED_GINI_RANGE[1])
    return (low, high) if high > low else FIXED_GINI_RANGE


def _error_summary_markdown(view: GiniView) -> str:
    """The error summary (the rows and columns of ``view.error_table()``) as a Markdown table: one small
    element instead of an Arrow table, read from the view's numbers without building the DataFrame."""
    columns = ["mechanism", "median |error|", "90% of errors below", "99% of errors below"]
    numbers = [list(view.abs_error_quantiles), list(view.laplace_abs_error_quantiles)]
    if view.rmse is not None:
        columns.append("RMSE")
        numbers[0].append(view.rmse)
        numbers[1].append(math.nan if view.laplace_rmse is None else view.laplace_rmse)
    rows = [
        [label] + [fmt(float(v), 4) if float(v) < 1 else f"{float(v):.3g}" for v in values]
        for label, values in zip(ERROR_TABLE_MECHANISMS, numbers, strict=True)
    ]
    header = [c.replace("|", "\\|") for c in columns]  # "median |error|": escape the pipes
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(columns) - 1)]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in rows])


def sensitivity(view: GiniView) -> None:
    """Section SENSITIVITY: the smooth-sensitivity curves e^(-βk) A(k), exact and fast."""
    st.markdown(
        f"## {SENSITIVITY.heading}\n\n"
        "How much can **one person** move the Gini of this data? That *local sensitivity* cannot be "
        "published as is (it describes the data), so the mechanism uses a **smooth** bound: it also looks "
        "at datasets with k records changed, with weight e^(−βk). A(k) is the largest local sensitivity "
        "within k changes; the noise scale uses the maximum of e^(−βk)·A(k), reached at k*."
    )
    show_figure(
        plots_gini.decay_figure(
            view.exact_curve,
            view.fast_curve,
            k_star_exact=view.exact_k_star,
            k_star_fast=view.fast_k_star,
            beta=view.beta,
        ),
        width="stretch",
    )
    st.caption(
        "The exact bound uses the true smallest and largest Gini reachable by changing k records "
        "(Theorems 4.1–4.2); the fast one uses only n, the mean and [L, U]. Both are valid; the exact "
        "one is never larger. Curves stop where larger k can no longer matter (Section 4.4 pruning)."
    )
    curves = [(c, b) for c, b in ((view.exact_curve, "exact"), (view.fast_curve, "fast")) if c is not None]
    download_csv(
        lambda: pd.concat([c.assign(bound=b) for c, b in curves]),
        "Download the sensitivity curves (CSV)",
        "gini_sensitivity_decay.csv",
        key="gini_dl_decay",
    )


def published_sentence(view: GiniView) -> str:
    """The interval from the published numbers alone, in a policy-maker's words (Markdown)."""
    pub = view.published
    if pub is None:
        return f"**No published interval:** {view.published_note}."
    return (
        f"**From the published numbers alone.** A real release publishes the Gini and a DP upper bound on its "
        f"noise scale (ε = {pub.epsilon_value:.3g} for the value + {pub.epsilon_bound:.3g} for the bound = "
        f"{view.epsilon:g}). Suppose the agency publishes a Gini of **{pub.value:.4f}**: an analyst who sees "
        f"only the published numbers is **{pub.level:.0%} sure the Gini lies in [{pub.lower:.4f}, "
        f"{pub.upper:.4f}]** (width {fmt(pub.width)}; exact coverage, no assumption about the data)."
    )


def expected_widths_sentence(view: GiniView) -> str:
    """The published interval's expected width next to the oracle's (planning model, public inputs only)."""
    pub = view.published
    if pub is None:
        return ""
    return (
        f"On these data the published {pub.level:.0%} interval (cut to [0, 1]) is typically "
        f"**{fmt(pub.confidential_typical_width)}** wide (planning on the data, not private). Expected width from "
        "public inputs alone: "
        f"**{fmt(pub.expected_width)}**, against {fmt(pub.oracle_expected_width)} for the oracle that knows the "
        "confidential noise scale "
        f"(the release's planning model, from public inputs only: n = {pub.planning_n:,} log-normal incomes "
        f"with Gini {intervals.PLANNING_GINI:g} and mean {intervals.PLANNING_MEAN_SHARE:g} × U = "
        f"{intervals.PLANNING_MEAN_SHARE * view.upper:,.0f}; data with a much lower mean get wider intervals)."
    )


def answer_note(view: GiniView) -> None:
    """Under the answer box: which of the two accuracies the answer's sentence means, and the published one."""
    pub = view.published
    text = (
        "The errors above are those of a release of the **value alone at the full ε**, whose noise scale is "
        "never published. "
    )
    if pub is not None:
        text += (
            f"A release with its interval: an analyst who sees only the published numbers is {pub.level:.0%} "
            f"sure the Gini lies in an interval typically **{fmt(pub.confidential_typical_width)} wide** on "
            f"these data ({POSTERIOR.cited})."
        )
    st.caption(text)


def posterior(view: GiniView, prior_text: str) -> None:
    """Section POSTERIOR (after the prior control): the interval from the published numbers alone (shown first),
    then one release of the value alone and the oracle posterior (eq. 11) that needs the confidential noise scale."""
    st.markdown(published_sentence(view) + ("\n\n" + expected_widths_sentence(view) if view.published else ""))
    if view.saturated:
        st.info(
            "Oracle hidden: a release of the value alone at these settings carries almost no information about "
            "the Gini."
        )
        return
    grid, density, released = view.posterior_grid, view.posterior_density, view.released_gini
    interval, hpd = view.posterior_interval, view.posterior_hpd
    # set with the one release, unless saturated
    assert grid is not None and density is not None and released is not None
    assert interval is not None and hpd is not None
    level = gini_experiments.POSTERIOR_LEVEL
    lo, hi = interval
    st.markdown(
        f"**Oracle (not publishable).** Suppose instead the agency publishes the value alone at the full ε, "
        f"**{view.released_gini:.4f}**"
        + (
            " (clamped to [0, 1]: the oracle reads the noisy value before the clamp, a DP output too)"
            if view.released_clamped
            else ""
        )
        + f". Combining it with the noise distribution "
        f"({NOISE_NAMES.get(view.noise, view.noise)}) at its **confidential scale S(X)/α**, which is never published, "
        f"and {prior_text} (eq. 11), an oracle would be "
        f"{level:.0%} sure the true Gini lies in **[{lo:.4f}, {hi:.4f}]** (posterior mean {view.posterior_mean:.4f}). "
        "No analyst can compute this interval from a release."
    )
    show_figure(
        plots_gini.posterior_figure(
            grid,
            density,
            released=released,
            interval=interval,
            hpd=hpd,
            level=level,
            true_value=view.true_gini,
        ),
        width="stretch",
    )
    st.caption(
        "Oracle assumption (as in the paper): the noise scale S(X)/α is known. It depends on the "
        "confidential data, so publishing it is not covered by the release's guarantee. Green ticks: "
        "the highest-posterior-density interval. Change the sidebar seed to draw another release."
    )
    download_csv(
        lambda: pd.DataFrame({"g": view.posterior_grid, "posterior_density": view.posterior_density}),
        "Download the posterior density (CSV)",
        "gini_posterior.csv",
        key="gini_dl_post",
    )


def error_curve(view: GiniView) -> None:
    """Section ERROR_CURVE: error against epsilon for this data (fast bound, the chosen calibration)."""
    st.header(ERROR_CURVE.heading)
    if view.rmse is not None:  # the Cauchy with gamma > 3, or a light-tailed noise
        quantity, label = "rmse", "RMSE"
    else:
        quantity, label = "q90_abs_error", "90% absolute error"
    show_figure(
        plots_gini.error_vs_epsilon_figure(view.error_curve, view.epsilon, quantile=quantity, label=label),
        width="stretch",
    )
    st.caption(
        f"The smooth-sensitivity curve uses the fast bound (instant; never below the exact one) and your "
        f"calibration ({view.calibration}); grey: the Laplace baseline with global sensitivity. Shown: the "
        f"{label}" + ("" if view.rmse is not None else " (no RMSE: infinite variance for γ ≤ 3)") + "."
    )
    download_csv(
        view.error_curve, "Download the error-vs-ε table (CSV)", "gini_error_vs_epsilon.csv", key="gini_dl_curve"
    )


def _progress_bar(label: str) -> Callable[[float, str], object]:
    bar = st.progress(0.0, text=label)
    return lambda fraction, message: bar.progress(float(fraction), text=f"{label}: {message}")


def paper_experiments(
    values: Callable[[], np.ndarray],
    *,
    gamma: float,
    upper: float | None,
    upper_epsilon: float,
    seed: int,
    draw_options: dict[str, int],
    default_draws: str,
) -> None:
    """Section PAPER (below its heading, drawn by the page): the paper's Figures 1, 3 and 4, each on a button
    (results kept in the session), in an expander drawn when opened (ui.lazy: its controls and tabs are about a
    tenth of the Gini page's load in the browser). ``values``: the page's (sub-sampled) incomes, read when open;
    ``draw_options``: the choices of simulated releases per setting (label -> number)."""
    experiments, shown = lazy_expander("Open the experiments (Figures 1, 3 and 4)", "gini_experiments")
    if not shown:
        return
    with experiments:
        n_draws = draw_options[
            qp_selectbox("Simulated releases per setting", "gini_exp_draws", list(draw_options), default_draws)
        ]
        _paper_tabs(values(), gamma=gamma, upper=upper, upper_epsilon=upper_epsilon, n_draws=n_draws, seed=seed)


def _paper_tabs(
    values: np.ndarray, *, gamma: float, upper: float | None, upper_epsilon: float, n_draws: int, seed: int
) -> None:
    tab1, tab3, tab4 = st.tabs(
        ["Figure 1 · this data, ε from 0.25 to 2", "Figure 3 · two-point data", "Figure 4 · error against IQ"]
    )
    runs: list[tuple[Any, str, str, Callable[[], Any], Callable[[Any], Any], str]] = [
        (
            tab1,
            "Figure 1",
            "Distribution of the DP Gini of the current data for ε ∈ {0.25, 0.5, 1, 1.5, 2}, γ = 2, L = 0, fast bound as "
            "in the paper; U is your public U, or (DP bounds) re-estimated with DP for each block of releases as in the "
            "paper, which adds its ε to the total.",
            lambda: gini_experiments.figure1(
                np.maximum(values, 0.0),
                upper=upper,
                upper_epsilon=upper_epsilon or gini_experiments.PAPER_UPPER_EPSILON,
                n_releases=n_draws,
                rng=seed + 101,
                progress=_progress_bar("Figure 1"),
            ),
            lambda res: plots_gini.figure1_plot(res.table),
            "1",
        ),
        (
            tab3,
            "Figure 3",
            "Absolute errors at the smallest range IQ a Gini allows (Prop. 5.1), for g ∈ {0.2, 0.5, 0.7}, "
            "n ∈ {10⁴, 10⁵, 10⁶}, ε ∈ {0.5, 1, 2}, γ = your γ. Boxes: 1/25/50/75/99 % (exact); ×: largest "
            "simulated error.",
            lambda: gini_experiments.figure3(
                gamma=gamma, n_draws=n_draws, rng=seed + 103, progress=_progress_bar("Figure 3")
            ),
            lambda res: plots_gini.figure3_plot(res.table, res.params["gamma"]),
            "3",
        ),
        (
            tab4,
            "Figure 4",
            "Error against the normalised range IQ = (U − L)/mean from 2 to 100 at g = 0.5, n = 10⁵, "
            "ε ∈ {0.5, 1, 2}, γ = your γ. RMSE only when γ > 3.",
            lambda: gini_experiments.figure4(
                gamma=gamma, n_draws=min(n_draws, 100_000), rng=seed + 104, progress=_progress_bar("Figure 4")
            ),
            lambda res: plots_gini.figure4_plot(res.table, res.params["gamma"]),
            "4",
        ),
    ]
    for tab, name, caption, run, plot, number in runs:
        with tab:
            st.caption(caption)
            res = run_on_button(f"Run {name}", f"gini_run_fig{number}", run, what=name, state_key=f"gini_fig{number}")
            if res is not None:
                show_figure(plot(res), width="stretch")
                for note in res.notes:
                    st.caption(note)
                download_csv(
                    res.table, f"Download {name} table (CSV)", f"gini_figure{number}.csv", key=f"gini_dl_fig{number}"
                )


def numbers(view: GiniView, *, heading: str | None = None) -> None:
    """The share section's first part: the view's numbers at full precision, as the generated script prints
    them (``heading``: the section's heading, ``sections.SHARE.heading``, drawn in the same element)."""
    st.markdown(
        (f"## {heading}\n\n" if heading else "")
        + "The numbers of this view at full precision (the script below prints the same ones):"
    )
    numbers_table(view.numbers(), "gini_numbers.csv", key="gini_dl_numbers")


__all__ = [
    "PRIORS",
    "CAL_LABELS",
    "METHOD_LABELS",
    "fmt",
    "clipping_notes",
    "headline",
    "releases",
    "sensitivity",
    "posterior",
    "published_sentence",
    "expected_widths_sentence",
    "answer_note",
    "error_curve",
    "paper_experiments",
    "numbers",
]
