"""Renderers of the percentiles (PSEO) page: each draws one view from a result of
:mod:`dpcore.views.percentiles` (figures from :mod:`ui.percentiles.plots`). Nothing here
recomputes a mechanism.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.views.percentiles import (
    SYNTH_QUARTILES,
    CellCurvesView,
    CellView,
    ExponentialCellView,
    FiguresView,
    ManyCellsView,
)
from ui.common import CachedBuilders, download_csv, privacy_note, show_figure, show_spec
from ui.percentiles import plots as plots_percentiles_builders
from ui.percentiles.sections import CDF, HISTOGRAM, RELEASED

# figures built once per distinct input in this process, shared by all sessions
plots_percentiles = CachedBuilders(plots_percentiles_builders)

__all__ = [
    "money",
    "parse_edges",
    "cell_caption",
    "cell",
    "curves",
    "many_cells",
    "figures",
    "method_notes",
    "intro",
    "METHODS",
    "method_advice",
    "exponential_cell",
]

#: the one-cell view's release methods (label shown -> a plan's ``method``)
METHODS = {"Noisy histogram (PSEO)": "histogram", "Exponential mechanism (one quantile)": "exponential"}

MONEY_COLUMNS = (
    "true (confidential)",
    "read-off without noise",
    "histogram release",
    "smooth sensitivity",
    "exponential mechanism",
)


def money(v: float) -> str:
    return f"${v:,.0f}"


def parse_edges(text: str) -> list[float]:
    """Custom bin edges typed as "10000, 20000, ..." (a "$" and "_" are allowed); ValueError with a message."""
    try:
        return [float(t.replace("$", "").replace("_", "")) for t in text.replace(";", ",").split(",") if t.strip()]
    except ValueError:
        raise ValueError("custom bin edges must be numbers separated by commas") from None


def intro() -> None:
    """What PSEO publishes and how, and the page's privacy note."""
    st.markdown(
        "The Census Bureau's **Post-Secondary Employment Outcomes** (PSEO) publish the 25th, 50th and 75th "
        "percentiles of graduates' earnings for every college × degree × field × cohort *cell*. To protect "
        "each graduate, the Bureau does not compute the percentiles directly. It sorts the cell's earnings into "
        "fixed **bins**, adds random whole-number noise to every bin count (the *geometric mechanism*), and reads "
        "the percentiles off the noisy counts, as if earnings were spread evenly inside each bin "
        "(Foote, Machanavajjhala & McKinney 2019). This page shows each step, how wrong the answers can be, and "
        "how the method compares with two rivals: *smooth sensitivity* (the paper's rival) and the "
        "*exponential mechanism* (the standard modern method)."
    )
    privacy_note(
        "two cells that differ by **replacing one graduate's record** (the cell size is public), unless you pick "
        "the paper's *add or remove one graduate* below. Replacing a person moves them between two bins, so each "
        "bin gets noise for ε/2 and the whole histogram is ε-differentially private; with add/remove each bin "
        "gets the full ε.",
        "the bin edges (fixed in advance from public survey data, never from the cell), the percentile levels, "
        "the earnings range $10,000–$614,597 used by the rivals, the cell definitions and cell sizes.",
    )


def method_advice(q) -> None:
    """The planner's recommendation for the chosen levels (dpcore.planner.recommend_percentiles_method)."""
    from dpcore.planner import recommend_percentiles_method

    st.info(recommend_percentiles_method(q).reason, icon=":material/lightbulb:")


def exponential_cell(view: ExponentialCellView) -> None:
    """The one cell released by the exponential mechanism, beside the histogram's read-off at the same ε."""
    level = f"P{view.q:g}"
    st.subheader(f"The exponential mechanism: {level} chosen among {len(view.candidates):,} public candidates")
    st.markdown(
        f"Each candidate c (from {money(view.candidates[0])} to {money(view.candidates[-1])}, 0.41% apart) is "
        f"scored by how far the number of earnings below it is from {view.q:g}% of the cell; OpenDP picks one "
        "with exponential noise on every score (the report-noisy-max form of the exponential mechanism). The whole "
        "ε goes to this one percentile, and the answer is the chosen candidate itself."
    )
    c1, c2, c3 = st.columns(3)
    c1.metric(
        f"Released {level} (exponential)",
        money(view.released),
        delta=f"{view.released - view.true:+,.0f} vs true",
        delta_color="off",
    )
    c2.metric(
        f"{level} read off the noisy histogram",
        money(view.histogram_released),
        delta=f"{view.histogram_released - view.true:+,.0f} vs true",
        delta_color="off",
    )
    c3.metric(f"True {level} (confidential)", money(view.true))
    show_spec(
        {
            "data": [
                {
                    "type": "scatter",
                    "mode": "lines",
                    "x": view.candidates.tolist(),
                    "y": view.probabilities.tolist(),
                    "name": "P(candidate)",
                    "line": {"color": "#7b3294"},
                },
                {
                    "type": "scatter",
                    "mode": "lines",
                    "x": [view.true, view.true],
                    "y": [0, float(view.probabilities.max())],
                    "name": "true (confidential)",
                    "line": {"dash": "dot"},
                },
            ],
            "layout": {
                "height": 300,
                "margin": {"l": 40, "r": 10, "t": 30, "b": 40},
                "title": {"text": "The law of the choice (exact)"},
                "xaxis": {"title": {"text": "earnings ($)"}},
                "yaxis": {"title": {"text": "probability"}},
            },
        }
    )
    st.caption(
        f"Median absolute error over {view.n_draws:,} simulated releases at ε = {view.epsilon:g}: exponential "
        f"mechanism {money(view.exponential_mae)}, noisy histogram (21 PSEO bins) {money(view.histogram_mae)}. "
        "Simulated releases on this planning cell are exploration, not releases."
    )


def cell_caption(view: CellView | ExponentialCellView, dataset_name: str = "") -> None:
    """What the cell is (a published PSEO cell, the synthetic cell or a subset of the sidebar's data)."""
    info = view.cell_info
    if view.source == "pseo":
        st.caption(
            f"**{info['institution']}**, degree level {info['degree_level']}, field {info['cipcode']}: "
            f"{info['n']:,} graduates; published p25/p50/p75 = {money(info['p25'])} / {money(info['p50'])} / "
            f"{money(info['p75'])}. The earnings are simulated to match these published numbers (the real "
            "microdata are confidential)."
        )
    elif view.source == "synthetic":
        st.caption(
            f"{view.n:,} simulated graduates whose quartiles are {money(SYNTH_QUARTILES[0])}, "
            f"{money(SYNTH_QUARTILES[1])} and {money(SYNTH_QUARTILES[2])} (about the average published "
            "PSEO cell); the data have their own seed, the sidebar seed redraws the noise."
        )
    else:
        note = (
            (
                f" {view.confidential_n_dropped:,} records with earnings ≤ 0 were left out (PSEO covers people with "
                "earnings)."
            )
            if view.confidential_n_dropped
            else ""
        )
        st.caption(f"A random subset of {view.n:,} positive values of **{dataset_name}**.{note}")


def _table(view: CellView) -> pd.DataFrame:
    rows = []
    for i, qi in enumerate(view.q):
        rows.append(
            {
                "percentile": f"P{qi:g}",
                "true (confidential)": view.true[i],
                "read-off without noise": view.read_off_without_noise[i],
                "histogram release": view.histogram[i],
                "90% interval (histogram read-off)": f"{money(view.interval_histogram[0][i])} – {money(view.interval_histogram[1][i])}",
                "90% interval (true value)": f"{money(view.interval_true[0][i])} – {money(view.interval_true[1][i])}",
                "smooth sensitivity": view.smooth[i],
                "exponential mechanism": view.exponential_mechanism[i],
            }
        )
    return pd.DataFrame(rows)


DOLLARS = "$%,.0f"  # as "${:,.0f}"


def _formats(columns, number_format: str, labels: dict[str, tuple[str, str]] | None = None) -> dict:
    """Number formats of ``columns``; ``labels``: column -> (short header, tooltip), so a table keeps its
    column names (the CSV's, the tests') while its headers fit the main area at 1280 px."""
    labels = labels or {}
    return {
        c: st.column_config.NumberColumn(
            labels.get(c, (None,))[0], help=labels.get(c, (None, None))[1], format=number_format
        )
        for c in columns
    }


#: short headers (and their tooltips) of the RELEASED step's table: with the long names its eight columns were 1,112 px
#: wide and scrolled sideways in the 820 px main area at 1280x720
VALUE_HEADERS = {
    "true (confidential)": ("true", "The confidential percentile of the cell (planning only, never published)."),
    "read-off without noise": ("bins only", "The histogram read-off without noise: the error of the bins alone."),
    "histogram release": ("histogram", "The PSEO release: the percentile read off the noisy histogram."),
    "smooth sensitivity": ("smooth sens.", "Rival 1: smooth sensitivity (ε split between the percentiles)."),
    "exponential mechanism": ("exponential", "Rival 2: the exponential mechanism (ε split between the percentiles)."),
}
INTERVAL_COLUMNS = ("90% interval (histogram read-off)", "90% interval (true value)")


def _accuracy_headers(columns) -> dict[str, tuple[str, str]]:
    return {
        c: (c.replace("relative accuracy ", "") + " accuracy", f"{c} (eq. 5.1): 1 is perfect, 0.9 means 10% off.")
        for c in columns
        if c.startswith("relative accuracy ")
    }


def cell(view: CellView, *, fixed_axes: bool = False) -> None:
    """The one-cell view, steps HISTOGRAM, CDF and RELEASED (``ui.percentiles.sections``): histogram, CDF
    read-off, released percentiles and their accuracy.

    ``fixed_axes``: the histogram's count axis depends on the public cell size only (not the draws)."""
    edges = view.edges
    st.subheader(HISTOGRAM.heading)
    st.markdown(
        f"Each bin count gets two-sided geometric noise with parameter **ε per bin = {view.epsilon_per_bin:g}** "
        f"(typical size ±{1 / view.epsilon_per_bin:.1f} people). Noisy counts can be negative; the method keeps "
        "them as they are (the paper's footnote 16)."
    )
    if view.confidential_n_below or view.confidential_n_above:
        st.info(
            f"{view.confidential_n_below:,} earnings below {money(edges[0])} were counted in the first bin and "
            f"{view.confidential_n_above:,} above {money(edges[-1])} in the last bin (the bins are public and "
            "fixed; these two numbers are shown for planning and are not private)."
        )
    y_range = plots_percentiles.fixed_count_range(view.n) if fixed_axes else None
    # plain specs (equal to the go.Figure builders' to_dict()): the noisy counts change with every ε
    show_spec(plots_percentiles_builders.histogram_spec(edges, view.true_counts, view.noisy_counts, y_range=y_range))
    download_csv(
        pd.DataFrame(
            {
                "bin_lower": edges[:-1],
                "bin_upper": edges[1:],
                "true_count": view.true_counts,
                "noisy_count": view.noisy_counts,
            }
        ),
        "Download the histogram (CSV)",
        "pseo_histogram.csv",
        key="perc_dl_hist",
    )

    st.subheader(CDF.heading)
    st.markdown(
        "Add the noisy counts from the left; the *Y*th percentile lies in the first bin where the running "
        "share reaches *Y*%, at the point where earnings spread evenly in that bin would reach it. Taking the "
        "**first** such bin guarantees P25 ≤ P50 ≤ P75 even when noisy counts are negative."
    )
    if view.fallback:
        st.warning(
            "The noisy total is not positive, so negative counts were set to zero before reading off "
            "(post-processing; if nothing was left, a flat histogram was used)."
        )
    show_spec(
        plots_percentiles_builders.cdf_spec(
            edges, view.true_counts, view.noisy_counts, view.q, view.histogram, view.true
        )
    )

    st.subheader(RELEASED.heading)
    table = _table(view)
    # number formats by column_config (drawn by the browser), not a pandas Styler (~20 ms per table per rerun);
    # the values and their 90% intervals in two tables that fit the main area (one table of eight scrolled sideways)
    st.dataframe(
        table.drop(columns=list(INTERVAL_COLUMNS)),
        hide_index=True,
        width="stretch",
        column_config=_formats(MONEY_COLUMNS, DOLLARS, VALUE_HEADERS),
    )
    st.dataframe(table[["percentile", *INTERVAL_COLUMNS]], hide_index=True, width="stretch")
    accuracy = view.accuracy_table()
    relative = [c for c in accuracy.columns if c.startswith("relative")]
    st.dataframe(
        accuracy,
        hide_index=True,
        width="stretch",
        column_config=_formats(relative, "%.3f", _accuracy_headers(relative))
        | _formats(
            ["summed L1 error ($)"],
            DOLLARS,
            {"summed L1 error ($)": ("L1 error", "Summed absolute error of the released percentiles, in dollars.")},
        ),
    )
    n_q = len(view.q)
    st.caption(
        "Relative accuracy (eq. 5.1) = 1 − |released − true| / true: 1 is perfect, 0.9 means 10% off. "
        "*Bins only* (the read-off without noise) shows the error from the bins alone (earnings are assumed "
        "spread evenly inside a bin). "
        "The **histogram** releases all percentiles for ε in total. The rivals must split ε: each percentile "
        f"gets ε/{n_q} = {view.epsilon / n_q:.3g}. Smooth sensitivity adds heavy-tailed noise with density "
        f"∝ 1/(1+|z|⁴), scale S/α (here {', '.join(money(s) for s in view.smooth_noise_scale)}; S is computed "
        "from the confidential data and is not published). Its answers need not be ordered. "
        "The intervals use only the released counts: the first covers the value the histogram read-off "
        "would give without noise, the second the true percentile (wider: it does not assume anything "
        "about earnings inside a bin)."
    )
    histogram_accuracy = [accuracy[f"relative accuracy P{qi:g}"].iloc[0] for qi in view.q]
    download_csv(
        table.assign(**{"relative accuracy histogram": histogram_accuracy}),
        "Download the released percentiles (CSV)",
        "pseo_percentiles.csv",
        key="perc_dl_table",
    )
    if view.relation == "add_remove":
        st.info(
            "Under add/remove each bin gets the full ε. The rivals are defined for replacement neighbours "
            "(their target rank depends on the public cell size); a histogram that is ε-DP under "
            "add/remove is 2ε-DP under replacement, so this comparison favours the histogram."
        )


def curves_spec(view: CellCurvesView) -> dict:
    """The accuracy-against-ε figure of a curves view as a plain spec (built once per view by the page)."""
    return plots_percentiles_builders.accuracy_curve_figure(
        view.curves, f"Mean relative accuracy of P{view.q:g}, 200 noise draws per ε"
    ).to_dict()


def curves(view: CellCurvesView, spec: dict | None = None) -> None:
    """Step ACCURACY of the one-cell view (below its percentile control): accuracy against ε (``spec``: the
    view's :func:`curves_spec`, when the caller kept it)."""
    show_spec(spec if spec is not None else curves_spec(view))
    st.caption(
        "Here every method spends the whole ε on this one percentile (the histogram would release all "
        "the others for free). Means below −0.5 are off the chart: smooth-sensitivity noise is heavy "
        "tailed and, at small ε, can miss by more than the earnings themselves."
    )
    download_csv(view.curves, "Download the curves (CSV)", "pseo_accuracy_curves.csv", key="perc_dl_curves")


def many_cells(view: ManyCellsView) -> None:
    show_figure(plots_percentiles.many_cells_figure(view.per_cell), width="stretch")
    show_figure(plots_percentiles.size_class_figure(view.by_size), width="stretch")
    st.caption(
        f"ε = {view.epsilon:g}; log-normal and even schemes with {view.n_bins} bins, PSEO with its 21. Small "
        "cells suffer most: the same noise is a larger share of a small count."
    )
    download_csv(view.per_cell, "Download per-cell accuracy (CSV)", "pseo_many_cells.csv", key="perc_dl_many")


def figures(view: FiguresView) -> None:
    st.markdown("**Figure 1.** Relative accuracy of the median by histogram method")
    show_figure(plots_percentiles.figure1(view.figure1), width="stretch")
    st.markdown("**Figure 2.** Relative accuracy by cell size (20 bins)")
    show_figure(plots_percentiles.figure2(view.figure2), width="stretch")
    st.markdown(f"**Figure 3.** Relative accuracy by number of bins (ε = {view.params['figure3_epsilon']:g})")
    show_figure(plots_percentiles.figure3(view.figure3, view.figure3_rivals), width="stretch")
    st.caption(
        "Means below −0.5 are off the chart. The paper found log-normal bins beat even bins everywhere "
        "and beat smooth sensitivity for most ε, with accuracy falling slowly as bins are added."
    )
    download_csv(view.figure1, "Download Figure 1-2 data (CSV)", "pseo_figures_1_2.csv", key="perc_dl_fig12")
    download_csv(view.figure3, "Download Figure 3 data (CSV)", "pseo_figure_3.csv", key="perc_dl_fig3")


def method_notes() -> None:
    with st.expander("How it works, and where we differ from the paper"):
        st.markdown(
            "* **Bins** (Table 1): $10,000, then every 5th percentile of a log-normal with mean 11.003 and sd 0.753 "
            "of log earnings, then the 97.5th; the top bin is closed at the 99.9th ($614,597) only for reading off.\n"
            "* **Read-off** (eq. 4.2, footnote 17): the footnote's formula has a typo (it divides by the running "
            "total up to bin J instead of the cell total); we use the cell total, which is what the words describe.\n"
            "* **Neighbours:** the paper protects adding or removing one graduate (ε per bin). This app's default "
            "is replacing one graduate with the cell size public, which needs ε/2 per bin.\n"
            "* **Smooth sensitivity** (eq. 4.6) is correct for the released order statistic x₍M₎ with "
            "M = ⌈qn/100⌉ and earnings clipped to $10,000–$614,597 (we checked it by brute force); the paper's "
            "M = (N+1)X/100 is not a whole number. The noise density is 1/(1+|z|⁴) (the paper prints 1/|1+x|⁴).\n"
            "* **Intervals** treat the true counts as unknown and the noise as known (a flat prior over counts): "
            "coverage was checked by simulation to be within 2% of the nominal 90%."
        )
