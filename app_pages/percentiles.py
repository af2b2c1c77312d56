"""Earnings percentiles from a noisy histogram (the Census PSEO system) and its rivals.

Thin page: widgets -> dpcore.percentiles -> ui.plots_percentiles.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import percentiles as P
from dpcore.data import shared_data_path
from ui import plots_percentiles as plots
from ui import repro
from ui.common import download_csv, guard, privacy_note, qp_number, qp_radio, qp_selectbox, qp_slider, rng, seed
from ui.sidebar import current_dataset

PSEO_FILE = "pseo_earnings_co_tx.csv.gz"
SCHEMES = {"PSEO bins (Table 1, 21 bins)": "pseo", "Log-normal bins": "lognormal", "Even bins": "even",
           "Custom edges": "custom"}
RELATIONS = {"Replace one person (cell size public)": "replace", "Add or remove one person (the paper's)": "add_remove"}
Q_OPTIONS = {"25, 50, 75": (25, 50, 75), "50": (50,), "10, 50, 90": (10, 50, 90),
             "10, 25, 50, 75, 90": (10, 25, 50, 75, 90)}
SOURCES = ("Synthetic cell (PSEO-like quartiles)", "A real PSEO cell (its published quartiles and size)",
           "Sidebar dataset (random subset)")
CALIBRATIONS = {"Tight (certified, less noise)": "tight", "Paper (Nissim-Raskhodnikova-Smith constants)": "paper"}
VIEWS = ("One cell, step by step", "Many cells (real PSEO table)", "The paper's Figures 1–3")
CURVE_EPS = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 2.5, 3.0)
FIG_EPS = tuple(np.round(np.arange(0.1, 3.0001, 0.1), 1))
DATA_SEED = 20190  # the planning data have their own seed: the sidebar seed redraws the noise only
SYNTH_QUARTILES = (31_000.0, 42_000.0, 56_000.0)  # about the mean published p25/p50/p75 (y1)


# ---------------------------------------------------------------------------------------------
# Cached data and computations
# ---------------------------------------------------------------------------------------------

@st.cache_data(show_spinner=False, max_entries=8)
def _pseo_cells(agg_level: int | None):
    path = shared_data_path(PSEO_FILE)
    if path is None:
        return None
    return P.load_pseo_cells(path, agg_level=agg_level)


@st.cache_data(show_spinner=False, max_entries=32)
def _synthetic_cell(n: int, p25: float, p50: float, p75: float) -> np.ndarray:
    return P.synthesize_cell_earnings(p25, p50, p75, n, rng=DATA_SEED)


@st.cache_data(show_spinner=False, max_entries=16)
def _sidebar_subset(name: str, n: int, _values: np.ndarray) -> tuple[np.ndarray, int]:
    pos = _values[_values > 0]
    gen = np.random.default_rng(DATA_SEED)
    take = pos if n >= pos.size else gen.choice(pos, size=n, replace=False)
    return take, int(_values.size - pos.size)


@st.cache_data(show_spinner="Simulating the accuracy curves...", max_entries=16)
def _cell_curves_hist(cell_key: str, q: float, n_bins: int, relation: str, noise_seed: int,
                      _values: np.ndarray) -> pd.DataFrame:
    panel = P.make_cell_panel(_values, np.zeros(_values.size, dtype=int), q=[q])
    df = P.simulate_accuracy(panel, epsilons=CURVE_EPS, q=q, bin_counts=(n_bins,),
                             schemes=("pseo", "lognormal", "even"), rivals=(), n_draws=200, relation=relation,
                             rng=noise_seed)
    return df.groupby(["method", "epsilon"], observed=True, sort=False).rel_accuracy.mean().reset_index()


@st.cache_data(show_spinner="Simulating the rivals...", max_entries=16)
def _cell_curves_rivals(cell_key: str, q: float, noise_seed: int, _values: np.ndarray) -> pd.DataFrame:
    panel = P.make_cell_panel(_values, np.zeros(_values.size, dtype=int), q=[q])
    df = P.simulate_accuracy(panel, epsilons=CURVE_EPS, q=q, schemes=(), n_draws=200, rival_percentiles=1,
                             rng=noise_seed + 1)
    return df.groupby(["method", "epsilon"], observed=True, sort=False).rel_accuracy.mean().reset_index()


@st.cache_data(show_spinner=False, max_entries=8)
def _panel(agg_level: int, n_cells: int) -> tuple[P.CellPanel, pd.DataFrame] | None:
    cells = _pseo_cells(agg_level)
    if cells is None:
        return None
    sub = cells.sample(min(n_cells, len(cells)), random_state=DATA_SEED) if n_cells < len(cells) else cells
    sub = sub.reset_index(drop=True)
    vals, cell = P.synthesize_cells(sub, rng=DATA_SEED)
    return P.make_cell_panel(vals, cell), sub


@st.cache_data(show_spinner=False, max_entries=16)
def _panel_counts(agg_level: int, n_cells: int, scheme: str, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    panel, _ = _panel(agg_level, n_cells)
    edges = P.bin_edges(scheme, n_bins)
    return P.cell_bin_counts(panel.values, panel.cell, panel.n_cells, edges), edges


@st.cache_data(show_spinner="Releasing every cell...", max_entries=16)
def _many_cells(agg_level: int, n_cells: int, epsilon: float, n_bins: int, relation: str,
                noise_seed: int) -> pd.DataFrame:
    """Median of every cell released 20 times per scheme; per-cell mean relative accuracy."""
    panel, _ = _panel(agg_level, n_cells)
    true = panel.true[:, 1]  # the panel holds p25, p50, p75
    gen = np.random.default_rng(noise_seed)
    frames = []
    for scheme in ("lognormal", "even", "pseo"):
        counts, edges = _panel_counts(agg_level, n_cells, scheme, n_bins)
        est = P.simulate_histogram_percentiles(counts, edges, epsilon=epsilon, q=[50], n_draws=20, rng=gen,
                                               relation=relation)[:, :, 0]
        frames.append(pd.DataFrame({"method": scheme, "n": panel.n, "size": P.size_category(panel.n),
                                    "rel_accuracy": P.relative_accuracy(est, true[None, :]).mean(axis=0)}))
    out = pd.concat(frames, ignore_index=True)
    out["size"] = pd.Categorical(out["size"], categories=P.CELL_SIZE_LABELS, ordered=True)
    return out


def _custom_edges_text() -> str:
    key = "perc_edges"
    default = "10000, 20000, 30000, 40000, 50000, 65000, 80000, 100000, 150000, 250000, 614597"
    if key not in st.session_state:
        st.session_state[key] = st.query_params.get(key, default)
    text = st.text_input("Custom bin edges ($, increasing, comma separated)", key=key)
    if st.query_params.get(key) != text:
        st.query_params[key] = text
    return text


def _parse_edges(text: str) -> np.ndarray:
    try:
        vals = [float(t.replace("$", "").replace("_", "")) for t in text.replace(";", ",").split(",") if t.strip()]
    except ValueError:
        raise P.DPInputError("custom bin edges must be numbers separated by commas") from None
    return P.check_edges(vals, "custom bin edges")


def _fmt(v: float) -> str:
    return f"${v:,.0f}"


# ---------------------------------------------------------------------------------------------
# Page
# ---------------------------------------------------------------------------------------------

st.title("Earnings percentiles (PSEO)")
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

c1, c2, c3 = st.columns(3)
eps = qp_slider("Privacy budget ε (per cell)", "perc_eps", 0.1, 3.0, 1.0, 0.1, container=c1,
                help="Smaller ε = more noise = more privacy. All percentiles of a cell together cost ε.")
scheme_label = qp_radio("Bins", "perc_scheme", list(SCHEMES), container=c2,
                        help="PSEO: the Bureau's 21 bins. Log-normal: equally likely bins for typical earnings. "
                             "Even: equal widths from $10,000 to $614,597.")
n_bins = qp_slider("Number of bins (log-normal and even)", "perc_bins", 10, 30, 20, 1, container=c1,
                   help="More bins: finer read-off but more noise in total (noise is added to every bin).")
q_label = qp_selectbox("Percentiles to release", "perc_q", list(Q_OPTIONS), container=c3)
relation_label = qp_radio("Neighbouring relation", "perc_rel", list(RELATIONS), container=c3)
source = qp_selectbox("Cell data", "perc_src", list(SOURCES), container=c2)
scheme, relation, q = SCHEMES[scheme_label], RELATIONS[relation_label], Q_OPTIONS[q_label]
if scheme == "pseo":
    c1.caption("The PSEO scheme always has 21 bins; the slider applies to the log-normal and even schemes.")

values = None
cell_key = ""
cell_code = None
with guard("the cell"):
    if source == SOURCES[1]:
        cells = _pseo_cells(48)
        if cells is None:
            st.warning("The real PSEO table (../shared/data) is not on this machine; using the synthetic cell.")
            source = SOURCES[0]
        else:
            order = cells.sort_values("n", ascending=False).reset_index(drop=True)
            idx = int(qp_number(f"Cell number (1 = largest of {len(order):,} published cells)", "perc_cell", 100,
                                min_value=1, max_value=len(order), step=1))
            row = order.iloc[idx - 1]
            values = _synthetic_cell(int(row.n), float(row.p25), float(row.p50), float(row.p75))
            cell_key = f"pseo-{idx}"
            cell_code = (f"cell = P.synthesize_cell_earnings({float(row.p25)!r}, {float(row.p50)!r}, "
                         f"{float(row.p75)!r}, {int(row.n)}, rng={DATA_SEED})")
            st.caption(f"**{row.institution}**, degree level {row.degree_level}, field {row.cipcode}: "
                       f"{int(row.n):,} graduates; published p25/p50/p75 = {_fmt(row.p25)} / {_fmt(row.p50)} / "
                       f"{_fmt(row.p75)}. The earnings are simulated to match these published numbers (the real "
                       "microdata are confidential).")
    if source != SOURCES[1]:
        n = int(qp_number("Cell size (graduates)", "perc_n", 200, min_value=1, max_value=200_000, step=10,
                          help="PSEO suppresses cells with fewer than 30 graduates."))
        if source == SOURCES[0]:
            values = _synthetic_cell(n, *SYNTH_QUARTILES) if n >= 1 else np.empty(0)
            cell_key = f"synth-{n}"
            cell_code = f"cell = P.synthesize_cell_earnings(*{SYNTH_QUARTILES!r}, {n}, rng={DATA_SEED})"
            st.caption(f"{n:,} simulated graduates whose quartiles are {_fmt(SYNTH_QUARTILES[0])}, "
                       f"{_fmt(SYNTH_QUARTILES[1])} and {_fmt(SYNTH_QUARTILES[2])} (about the average published "
                       "PSEO cell); the data have their own seed, the sidebar seed redraws the noise.")
        else:
            ds = current_dataset()
            values, dropped = _sidebar_subset(ds.name, n, ds.values)
            cell_key = f"sidebar-{ds.name}-{n}"
            cell_code = ("pos = values[values > 0]\n"
                         f"cell = pos if {n} >= pos.size else np.random.default_rng({DATA_SEED}).choice("
                         f"pos, size={n}, replace=False)")
            note = f" {dropped:,} records with earnings ≤ 0 were left out (PSEO covers people with earnings)." \
                if dropped else ""
            st.caption(f"A random subset of {values.size:,} positive values of **{ds.name}**.{note}")
            if getattr(ds, "confidential", False):
                st.warning("This is an uploaded file: simulating releases on confidential data is itself not "
                           "private. Plan on synthetic data; release once.")

edges = None
with guard("the bins"):
    if scheme == "custom":
        edges = _parse_edges(_custom_edges_text())
    else:
        edges = P.bin_edges(scheme, n_bins)

calibration = CALIBRATIONS[qp_radio("Smooth-sensitivity constants", "perc_cal", list(CALIBRATIONS),
                                    horizontal=True)]
view = qp_radio("View", "perc_view", list(VIEWS), horizontal=True,
                help="Only the chosen view is computed, so the page stays quick.")

if view == VIEWS[0] and values is not None and edges is not None:
    with guard("the release"):
        binned = P.histogram_counts(values, edges)
        rel = P.release_percentiles(values, epsilon=eps, edges=edges, q=q, rng=rng(1), relation=relation)
        truth = P.empirical_percentile(values, q)
        read_true = P.percentiles_from_histogram(binned.counts, edges, q)
        ci = P.percentile_credible_intervals(rel.noisy_counts, edges, epsilon_bin=rel.epsilon_per_bin, q=q,
                                             level=0.9, n_samples=2000, rng=rng(2))
        ci_data = P.percentile_credible_intervals(rel.noisy_counts, edges, epsilon_bin=rel.epsilon_per_bin, q=q,
                                                  level=0.9, n_samples=2000, rng=rng(2), target="data")
        smooth = P.release_percentiles_smooth(values, epsilon=eps, q=q, rng=rng(3), calibration=calibration)
        em = P.release_percentiles_em(values, epsilon=eps, q=q, rng=rng(4))

        st.subheader("1. The histogram: true and noisy counts")
        st.markdown(
            f"Each bin count gets two-sided geometric noise with parameter **ε per bin = {rel.epsilon_per_bin:g}** "
            f"(typical size ±{1 / rel.epsilon_per_bin:.1f} people). Noisy counts can be negative; the method keeps "
            "them as they are (the paper's footnote 16).")
        if binned.n_below or binned.n_above:
            st.info(f"{binned.n_below:,} earnings below {_fmt(edges[0])} were counted in the first bin and "
                    f"{binned.n_above:,} above {_fmt(edges[-1])} in the last bin (the bins are public and fixed; "
                    "these two numbers are shown for planning and are not private).")
        st.plotly_chart(plots.histogram_figure(edges, binned.counts, rel.noisy_counts), width="stretch")
        hist_df = pd.DataFrame({"bin_lower": edges[:-1], "bin_upper": edges[1:], "true_count": binned.counts,
                                "noisy_count": rel.noisy_counts})
        download_csv(hist_df, "Download the histogram (CSV)", "pseo_histogram.csv", key="perc_dl_hist")

        st.subheader("2. The noisy CDF and the percentile read-off (eq. 4.2)")
        st.markdown(
            "Add the noisy counts from the left; the *Y*th percentile lies in the first bin where the running "
            "share reaches *Y*%, at the point where earnings spread evenly in that bin would reach it. Taking the "
            "**first** such bin guarantees P25 ≤ P50 ≤ P75 even when noisy counts are negative.")
        if rel.fallback:
            st.warning("The noisy total is not positive, so negative counts were set to zero before reading off "
                       "(post-processing; if nothing was left, a flat histogram was used).")
        st.plotly_chart(plots.cdf_figure(edges, binned.counts, rel.noisy_counts, rel.q, rel.values, truth),
                        width="stretch")

        st.subheader("3. Released percentiles and how wrong they are")
        rows = []
        for i, qi in enumerate(rel.q):
            rows.append({
                "percentile": f"P{qi:g}",
                "true (confidential)": truth[i],
                "read-off without noise": read_true[i],
                "histogram release": rel.values[i],
                "90% interval (histogram read-off)": f"{_fmt(ci.lower[i])} – {_fmt(ci.upper[i])}",
                "90% interval (true value)": f"{_fmt(ci_data.lower[i])} – {_fmt(ci_data.upper[i])}",
                "smooth sensitivity": smooth.values[i],
                "exponential mechanism": em.values[i],
            })
        table = pd.DataFrame(rows)
        st.dataframe(table.style.format({c: "${:,.0f}" for c in ("true (confidential)", "read-off without noise",
                                                                  "histogram release",
                                                                  "smooth sensitivity", "exponential mechanism")}),
                     hide_index=True, width="stretch")
        acc = pd.DataFrame({
            "method": ["Histogram (this bin scheme)", "Smooth sensitivity", "Exponential mechanism"],
            **{f"relative accuracy P{qi:g}": [P.relative_accuracy(r[i], truth[i]) for r in
                                              (rel.values, smooth.values, em.values)] for i, qi in enumerate(rel.q)},
            "summed L1 error ($)": [float(P.summed_l1_error(r, truth)) for r in (rel.values, smooth.values, em.values)],
        })
        st.dataframe(acc.style.format({c: "{:.3f}" for c in acc.columns if c.startswith("relative")} |
                                      {"summed L1 error ($)": "${:,.0f}"}), hide_index=True, width="stretch")
        st.caption(
            "Relative accuracy (eq. 5.1) = 1 − |released − true| / true: 1 is perfect, 0.9 means 10% off. "
            "*Read-off without noise* shows the error from the bins alone (earnings are assumed spread evenly "
            "inside a bin). "
            "The **histogram** releases all percentiles for ε in total. The rivals must split ε: each percentile "
            f"gets ε/{len(q)} = {eps / len(q):.3g}. Smooth sensitivity adds heavy-tailed noise with density "
            f"∝ 1/(1+|z|⁴), scale S/α (here {', '.join(_fmt(s) for s in smooth.noise_scale)}; S is computed from "
            "the confidential data and is not published). Its answers need not be ordered. "
            "The intervals use only the released counts: the first covers the value the histogram read-off "
            "would give without noise, the second the true percentile (wider: it does not assume anything "
            "about earnings inside a bin).")
        download_csv(table.assign(**{"relative accuracy histogram": P.relative_accuracy(rel.values, truth)}),
                     "Download the released percentiles (CSV)", "pseo_percentiles.csv", key="perc_dl_table")
        if relation == "add_remove":
            st.info("Under add/remove each bin gets the full ε. The rivals are defined for replacement neighbours "
                    "(their target rank depends on the public cell size); a histogram that is ε-DP under "
                    "add/remove is 2ε-DP under replacement, so this comparison favours the histogram.")

        st.subheader("4. Accuracy against ε for this cell")
        curve_q = float(qp_selectbox("Percentile shown in the curves", "perc_curve_q", [f"{x:g}" for x in q],
                                     f"{50 if 50 in q else q[0]:g}"))
        curves = pd.concat([_cell_curves_hist(cell_key, curve_q, n_bins, relation, seed(), values),
                            _cell_curves_rivals(cell_key, curve_q, seed(), values)], ignore_index=True)
        st.plotly_chart(plots.accuracy_curve_figure(curves, f"Mean relative accuracy of P{curve_q:g}, 200 noise "
                                                            "draws per ε"), width="stretch")
        st.caption("Here every method spends the whole ε on this one percentile (the histogram would release all "
                   "the others for free). Means below −0.5 are off the chart: smooth-sensitivity noise is heavy "
                   "tailed and, at small ε, can miss by more than the earnings themselves.")
        download_csv(curves, "Download the curves (CSV)", "pseo_accuracy_curves.csv", key="perc_dl_curves")

    if cell_code is not None and edges is not None:
        body = (
            "from dpcore import percentiles as P\n\n"
            f"{cell_code}\n"
            f"edges = np.array({[float(e) for e in edges]!r})\n"
            f"q = {tuple(float(x) for x in q)!r}\n"
            f"rel = P.release_percentiles(cell, epsilon={float(eps)!r}, edges=edges, q=q, "
            f"rng=np.random.default_rng(seed + 1), relation={relation!r})\n"
            f"smooth = P.release_percentiles_smooth(cell, epsilon={float(eps)!r}, q=q, "
            f"rng=np.random.default_rng(seed + 3), calibration={calibration!r})\n"
            f"em = P.release_percentiles_em(cell, epsilon={float(eps)!r}, q=q, rng=np.random.default_rng(seed + 4))\n"
            "results.update(q=list(q), true=P.empirical_percentile(cell, q).tolist(),\n"
            "               noisy_counts=rel.noisy_counts.tolist(), histogram=rel.values.tolist(),\n"
            "               smooth_sensitivity=smooth.values.tolist(), exponential_mechanism=em.values.tolist())\n"
        )
        repro.share_panel("percentiles", script=repro.script_for(title="Earnings percentiles (PSEO)", body=body))

# ----------------------------------------------------------------------------- many cells
if view == VIEWS[1]:
    st.subheader("Many cells: a whole PSEO table")
    cells_all = _pseo_cells(48)
    if cells_all is None:
        st.info("The real PSEO table (../shared/data/pseo_earnings_co_tx.csv.gz) is not on this machine.")
    else:
        st.markdown(
            "For each published cell of the real PSEO table (Colorado, UT System and two more; first year after "
            "graduation) we simulate graduates whose quartiles and count match the published ones, release every "
            "cell with the settings above (20 noise draws) and measure the relative accuracy of the "
            "median. Cells of one level are disjoint, so the whole table costs ε once (parallel composition); "
            "publishing the nested aggregate levels too would cost ε per level.")
        m1, m2 = st.columns(2)
        n_cells = int(qp_slider("Cells used", "perc_cells", 100, len(cells_all), min(300, len(cells_all)), 100,
                                container=m1, help=f"A random sample of the {len(cells_all):,} finest cells."))
        with guard("the many-cells view"):
            many = _many_cells(48, n_cells, float(eps), n_bins, relation, seed())
            by_size = many.groupby(["method", "size"], observed=True).rel_accuracy.mean().reset_index()
            st.plotly_chart(plots.many_cells_figure(many), width="stretch")
            st.plotly_chart(plots.size_class_figure(by_size), width="stretch")
            st.caption(f"ε = {eps:g}; log-normal and even schemes with {n_bins} bins, PSEO with its 21. Small cells "
                       "suffer most: the same noise is a larger share of a small count.")
            download_csv(many, "Download per-cell accuracy (CSV)", "pseo_many_cells.csv", key="perc_dl_many")

# ----------------------------------------------------------------------------- Figures 1-3
if view == VIEWS[2]:
    st.subheader("Reproduce the paper's Figures 1–3")
    cells_all = _pseo_cells(48)
    if cells_all is None:
        st.info("Needs the real PSEO table.")
    else:
        st.markdown(
            "Mean relative accuracy of the median over PSEO-like cells, for ε = 0.1 … 3 (step 0.1): **Figure 1** by "
            "number of bins (10, 15, 20, 25), **Figure 2** by cell size (20 bins), **Figure 3** against the number of "
            "bins (10 … 30) at one ε. Blue = log-normal bins, red dashed = even bins, green dash-dot = smooth "
            "sensitivity (paper constants), light green = smooth sensitivity (our tight constants), purple = "
            "exponential mechanism.")
        f1, f2, f3, f4 = st.columns(4)
        fig_cells = int(qp_slider("Cells", "perc_fig_cells", 50, min(2000, len(cells_all)), 300, 50, container=f1))
        fig_draws = int(qp_slider("Noise draws per setting", "perc_fig_draws", 5, 100, 20, 5, container=f2,
                                  help="The paper used 20."))
        split_label = qp_radio("Rivals' budget", "perc_fig_split",
                               ["ε/3 per percentile (fair)", "ε per percentile (as in the paper's figures)"],
                               container=f3)
        fig3_eps = float(qp_slider("ε for Figure 3", "perc_fig3_eps", 0.1, 3.0, 1.0, 0.1, container=f4))
        split = 3 if split_label.startswith("ε/3") else 1
        params = (fig_cells, fig_draws, split, fig3_eps, relation, seed())
        if st.button("Run the simulations", key="perc_fig_run", type="primary"):
            bar = st.progress(0.0, text="Starting...")
            with guard("the figures"):
                panel, _ = _panel(48, fig_cells)
                panel = P.make_cell_panel(panel.values, panel.cell, q=[50])
                main = P.simulate_accuracy(
                    panel, epsilons=FIG_EPS, q=50, bin_counts=(10, 15, 20, 25), n_draws=fig_draws, relation=relation,
                    rival_percentiles=split, rng=rng(10),
                    progress=lambda f, t: bar.progress(0.85 * f, text=f"Figures 1-2: {t}"))
                fig3 = P.simulate_accuracy(
                    panel, epsilons=[fig3_eps], q=50, bin_counts=tuple(range(10, 31)), rivals=(), n_draws=fig_draws,
                    relation=relation, rng=rng(11),
                    progress=lambda f, t: bar.progress(0.85 + 0.15 * f, text=f"Figure 3: {t}"))
                st.session_state["perc_fig_result"] = (params, main, fig3)
            bar.empty()
        stored = st.session_state.get("perc_fig_result")
        if stored is None or stored[0] != params:
            st.caption("Press the button to run (about 10–20 s for 300 cells; progress is shown).")
        else:
            _, main, fig3 = stored
            s1 = main.groupby(["method", "n_bins", "epsilon"], observed=True, sort=False).rel_accuracy.mean().reset_index()
            st.markdown("**Figure 1.** Relative accuracy of the median by histogram method")
            st.plotly_chart(plots.figure1(s1), width="stretch")
            s2 = main[(main.n_bins == 20) | (main.n_bins == 0)].groupby(
                ["method", "size", "epsilon"], observed=True, sort=False).rel_accuracy.mean().reset_index()
            st.markdown("**Figure 2.** Relative accuracy by cell size (20 bins)")
            st.plotly_chart(plots.figure2(s2), width="stretch")
            s3 = fig3.groupby(["method", "n_bins"], observed=True, sort=False).rel_accuracy.mean().reset_index()
            near = main[(main.n_bins == 0) & np.isclose(main.epsilon, fig3_eps)]
            st.markdown(f"**Figure 3.** Relative accuracy by number of bins (ε = {fig3_eps:g})")
            st.plotly_chart(plots.figure3(s3, near.groupby("method", observed=True).rel_accuracy.mean().reset_index()),
                            width="stretch")
            st.caption("Means below −0.5 are off the chart. The paper found log-normal bins beat even bins everywhere "
                       "and beat smooth sensitivity for most ε, with accuracy falling slowly as bins are added.")
            download_csv(s1, "Download Figure 1-2 data (CSV)", "pseo_figures_1_2.csv", key="perc_dl_fig12")
            download_csv(s3, "Download Figure 3 data (CSV)", "pseo_figure_3.csv", key="perc_dl_fig3")

with st.expander("How it works, and where we differ from the paper"):
    st.markdown(
        "* **Bins** (Table 1): $10,000, then every 5th percentile of a log-normal with mean 11.003 and sd 0.753 of "
        "log earnings, then the 97.5th; the top bin is closed at the 99.9th ($614,597) only for reading off.\n"
        "* **Read-off** (eq. 4.2, footnote 17): the footnote's formula has a typo (it divides by the running "
        "total up to bin J instead of the cell total); we use the cell total, which is what the words describe.\n"
        "* **Neighbours:** the paper protects adding or removing one graduate (ε per bin). This app's default "
        "is replacing one graduate with the cell size public, which needs ε/2 per bin.\n"
        "* **Smooth sensitivity** (eq. 4.6) is correct for the released order statistic x₍M₎ with "
        "M = ⌈qn/100⌉ and earnings clipped to $10,000–$614,597 (we checked it by brute force); the paper's "
        "M = (N+1)X/100 is not a whole number. The noise density is 1/(1+|z|⁴) (the paper prints 1/|1+x|⁴).\n"
        "* **Intervals** treat the true counts as unknown and the noise as known (a flat prior over counts): "
        "coverage was checked by simulation to be within 2% of the nominal 90%.")
