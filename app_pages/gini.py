"""Gini index with differential privacy (Lan & Reiter 2025): the flagship page.

Thin page: widgets -> dpcore.gini / dpcore.posterior / dpcore.gini_experiments -> ui.plots_gini.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import gini as G
from dpcore import gini_experiments as E
from dpcore.noise import GeneralizedCauchy, smooth_noise_calibration
from dpcore.posterior import gini_posterior
from dpcore.scriptgen import literal
from ui import plots_gini as plots
from ui import repro
from ui.common import (download_csv, guard, privacy_note, qp_number, qp_radio, qp_select_slider, qp_selectbox,
                       qp_slider, rng, seed)
from ui.sidebar import current_dataset

EPS_OPTIONS = [0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0]
GAMMA_OPTIONS = [1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0]
CURVE_EPS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0)
N_SIM = 20_000
SUBSAMPLE_SEED = 7919
N_DOTS = 20
LEVEL = 0.95
DEFAULT_UPPER = 2_000_000.0
BOUNDS_PUBLIC = "Public bounds (typed in, chosen without looking at the data)"
BOUNDS_DP = "Estimate U with DP (costs extra ε)"
PRIORS = {"uniform": ("uniform", "a flat prior on [0, 1] (the paper's choice)"),
          "beta": (("beta", 6.0, 7.0), "a Beta(6, 7) prior (most countries' Ginis lie between 0.2 and 0.7)")}
CAL_LABELS = {"tight": "tight (ours: certified, less noise)", "paper": "paper (Nissim et al. constants)"}
METHOD_LABELS = {"exact": "exact (Theorem 4.3 structure)", "fast": "fast closed form (Theorem 4.4 structure)"}

# The view part of the generated script (ui.repro): `settings` (plain literals) is written above it.
SCRIPT_BODY = f"""\
from dpcore import gini as G
from dpcore import gini_experiments as E
from dpcore.noise import GeneralizedCauchy, smooth_noise_calibration
from dpcore.posterior import gini_posterior

n, eps, gamma = settings["n"], settings["epsilon"], settings["gamma"]
lower, upper = settings["lower"], settings["upper"]
# the page's fixed random sub-sample of n records (seed {SUBSAMPLE_SEED}; the sidebar seed redraws the noise only)
if n < values.size:
    values = np.random.default_rng({SUBSAMPLE_SEED}).choice(values, size=n, replace=False)
if settings["upper_epsilon"] > 0:  # U estimated with DP (its epsilon is added to the total)
    from dpcore import bounds
    eps_u = settings["upper_epsilon"]
    upper = float(bounds.dp_upper_bound(values, epsilon_n=eps_u / 2, epsilon_count=eps_u / 2, lower=lower,
                                        rng=np.random.default_rng(seed + 11)).upper)
xs, n_below, n_above = G.clip_incomes(values, lower=lower, upper=upper, clip_negative=True)
cal = smooth_noise_calibration(eps, gamma, mode=settings["calibration"])
ss = G.smooth_sensitivity(xs, lower=lower, upper=upper, beta=cal.beta, method=settings["method"])
true_g = G.gini(xs)
scale = ss.value / cal.alpha
med, q90, q99 = E.abs_error_quantiles(scale, gamma)
lap_scale = ss.global_sensitivity / eps
lap_med, lap_q90, lap_q99 = E.laplace_abs_error_quantiles(lap_scale)
saturated = bool(ss.saturated or med >= 0.5)
results.update(n=n, lower=lower, upper=upper, upper_epsilon=settings["upper_epsilon"],
               total_epsilon=eps + settings["upper_epsilon"], true_gini=true_g,
               smooth_sensitivity=ss.value, k_star=ss.k_star, alpha=cal.alpha, beta=cal.beta, noise_scale=scale,
               median_abs_error=med, q90_abs_error=q90, q99_abs_error=q99, laplace_median_abs_error=lap_med,
               laplace_q90_abs_error=lap_q90, laplace_q99_abs_error=lap_q99, saturated=saturated)
if gamma > 3:  # finite variance only then
    results.update(rmse=E.noise_rmse(scale, gamma), laplace_rmse=lap_scale * np.sqrt(2))
if not saturated:
    results["plausible_releases"] = E.plausible_releases(true_g, scale, gamma, {N_DOTS}).tolist()
    # the page's one simulated release (sidebar seed + 3) and what an analyst infers from it (eq. 11)
    one = float(true_g + scale * GeneralizedCauchy(gamma).rvs(1, np.random.default_rng(seed + 3))[0])
    post = gini_posterior(one, noise_scale=scale, gamma=gamma, prior=settings["prior"])
    (lo, hi), (h_lo, h_hi) = post.interval({LEVEL!r}), post.interval({LEVEL!r}, kind="hpd")
    results.update(released_gini=one, posterior_mean=post.mean, posterior_interval_lower=lo,
                   posterior_interval_upper=hi, posterior_hpd_lower=h_lo, posterior_hpd_upper=h_hi)
"""


# ---------------------------------------------------------------------------------------------
# Cached computations (keyed by their arguments; arrays are hashed by Streamlit)
# ---------------------------------------------------------------------------------------------

@st.cache_data(show_spinner=False, max_entries=16)
def _subsample(values: np.ndarray, n: int, data_seed: int) -> np.ndarray:
    if n >= values.size:
        return values
    return np.random.default_rng(data_seed).choice(values, size=n, replace=False)


@st.cache_data(show_spinner=False, max_entries=32)
def _clip(values: np.ndarray, lower: float, upper: float) -> tuple[np.ndarray, int, int, int]:
    n_negative = int((values < 0).sum())
    xs, n_below, n_above = G.clip_incomes(values, lower=lower, upper=upper, clip_negative=True)
    return xs, n_negative, n_below, n_above


@st.cache_data(show_spinner=False, max_entries=64)
def _smooth(xs: np.ndarray, lower: float, upper: float, beta: float, method: str, k_max: int | None = None) -> dict:
    ss = G.smooth_sensitivity(xs, lower=lower, upper=upper, beta=beta, method=method, k_max=k_max)
    return dict(value=ss.value, k_star=ss.k_star, saturated=ss.saturated, gs=ss.global_sensitivity,
                curve=pd.DataFrame({"k": np.arange(ss.A.size), "A": ss.A, "decay": ss.decay}))


@st.cache_data(show_spinner=False, max_entries=32)
def _gini(xs: np.ndarray) -> float:
    return G.gini(xs)


@st.cache_data(show_spinner=False, max_entries=32)
def _error_curve(xs: np.ndarray, lower: float, upper: float, gamma: float, calibration: str) -> pd.DataFrame:
    return E.error_vs_epsilon(xs, lower=lower, upper=upper, gamma=gamma, epsilons=CURVE_EPS, method="fast",
                              calibrations=(calibration,))


@st.cache_data(show_spinner=False, max_entries=64)
def _posterior(released: float, scale: float, gamma: float, prior: str | tuple) -> dict:
    post = gini_posterior(released, noise_scale=scale, gamma=gamma, prior=prior)
    return dict(grid=post.grid, density=post.density, mean=post.mean, interval=post.interval(LEVEL),
                hpd=post.interval(LEVEL, kind="hpd"))


@st.cache_data(show_spinner=False, max_entries=16)
def _dp_upper(values: np.ndarray, epsilon_u: float, lower: float, noise_seed: int) -> tuple[float, float]:
    from dpcore import bounds  # released with DP; charged to the budget

    res = bounds.dp_upper_bound(values, epsilon_n=epsilon_u / 2, epsilon_count=epsilon_u / 2, lower=lower,
                                rng=np.random.default_rng(noise_seed))
    return float(res.upper), float(res.epsilon)


def _dp_upper_available() -> bool:
    try:
        from dpcore import bounds
    except ImportError:
        return False
    return hasattr(bounds, "dp_upper_bound")


def _fmt(v: float, digits: int = 4) -> str:
    if not math.isfinite(v):
        return "∞"
    return f"{v:.{digits}f}" if abs(v) >= 10 ** -digits or v == 0 else f"{v:.2e}"


# ---------------------------------------------------------------------------------------------
# Page
# ---------------------------------------------------------------------------------------------

st.title("Gini index with differential privacy")
st.markdown(
    "The **Gini index** measures income inequality: 0 when everyone has the same income, close to 1 "
    "when one person has everything. Publishing it from confidential records can leak information "
    "about individuals, so we add random noise first (**differential privacy**). This page shows, "
    "live, how far the published Gini would land from the true one, *why* (how sensitive the Gini "
    "of this data is to one person), and what an analyst can still infer from one published number. "
    "Method: smooth sensitivity with heavy-tailed noise (Lan & Reiter 2025).")
privacy_note(
    "two datasets are neighbours when they differ in **one person's income** (replace one record); "
    "the number of records n is the same.",
    "n, the bounds L and U (or the DP estimate of U, whose ε is added to the total), ε, γ and the "
    "mechanism. The noise scale S(X)/α depends on the data: it is not published with the release "
    "(the posterior below treats it as known, as the paper does).")
with st.expander("Which Gini? (definition used everywhere on this page)"):
    st.latex(r"g(X) \;=\; \frac{\sum_{i=1}^{n}\sum_{j=1}^{n} |x_i - x_j|}{2\,n^2\,\bar x}"
             r"\;=\; \frac{\sum_{i=1}^{n} (2i - n - 1)\,x_{(i)}}{n \sum_i x_i}")
    st.markdown(
        "This is eq. (1) of the paper (x sorted ascending; range 0 to (n−1)/n). The paper's toy example "
        "uses eq. (2), which divides by n(n−1)·mean instead and is larger by n/(n−1); for thousands of "
        "records the two agree to the shown digits. Every sensitivity bound here is derived for eq. (1).")

ds = current_dataset()
if ds.confidential:
    st.warning("**You are planning on an uploaded (confidential) file.** Every simulated release below "
               "uses the real records, so this planning is itself *not* private. Plan on a synthetic "
               "look-alike (sidebar) and use the real file only for the one release you count.")
if ds.n < 2:
    st.error(f"Cannot compute the Gini index: the data have {ds.n} record(s); at least n = 2 are needed.")
    st.stop()

# ---- controls -----------------------------------------------------------------------------
c1, c2, c3 = st.columns(3)
with c1:
    eps = float(qp_select_slider("Privacy loss ε (log scale)", "gini_eps", EPS_OPTIONS, 1.0,
                                 help="Smaller ε = stronger privacy = more noise. Steps are roughly "
                                      "evenly spaced on a log scale from 0.05 to 5."))
    gamma = float(qp_select_slider("Noise tail γ (> 1)", "gini_gamma", GAMMA_OPTIONS, 2.0,
                                   help="Noise density ∝ 1/(1+|z|^γ). The paper uses γ = 2 (Cauchy-like, "
                                        "no mean or variance). γ > 3 gives a finite variance (an RMSE)."))
with c2:
    n_all = ds.n
    if n_all > 2:
        if st.session_state.get("gini_n", 0) > n_all:
            st.session_state["gini_n"] = n_all
        n = int(qp_slider("Records used n (random sub-sample)", "gini_n", 2, n_all, n_all, 1,
                          help="A fixed random sub-sample of the sidebar data (the sidebar seed only redraws "
                               "the noise). n is public."))
    else:
        n = n_all
    method = qp_radio("Sensitivity bound", "gini_method", ["exact", "fast"], "exact",
                      format_func=METHOD_LABELS.get, horizontal=True)
    if method == "exact" and n > 200_000:
        st.caption("On this many records the exact bound takes a few seconds per change; "
                   "'fast' is instant and never smaller.")
with c3:
    calibration = qp_radio("Noise calibration", "gini_cal", ["tight", "paper"], "tight",
                           format_func=CAL_LABELS.get,
                           help="Both are ε-DP. 'paper' uses α = ε/(4γ); 'tight' the largest α whose "
                                "privacy loss is certified ≤ ε (about 5× less noise at γ = 2).")
    bounds_mode = qp_radio("Income bounds [L, U]", "gini_bounds", [BOUNDS_PUBLIC, BOUNDS_DP], BOUNDS_PUBLIC)

b1, b2, b3 = st.columns(3)
lower = float(qp_number("Lower bound L", "gini_L", 0.0, min_value=0.0, max_value=1e12, step=1000.0,
                        container=b1, help="Incomes below L (including losses) are set to L."))
upper_eps = 0.0
if bounds_mode == BOUNDS_PUBLIC:
    upper = float(qp_number("Upper bound U", "gini_U", DEFAULT_UPPER, min_value=0.0, max_value=1e13,
                            step=100_000.0, container=b2,
                            help="Public: chosen from outside knowledge, never from this file. Incomes "
                                 "above U are clipped to U."))
else:
    upper_eps = float(qp_select_slider("ε spent on U", "gini_eps_u", [0.05, 0.1, 0.15, 0.2, 0.3, 0.5], 0.15,
                                       container=b2, help="Paper: 0.075 for a noisy count + 0.075 for the "
                                                          "AboveThreshold search; U = 2.5 × the estimate."))
    upper = float("nan")
total_eps = eps + upper_eps
b3.metric("Total privacy loss ε", f"{total_eps:g}", help="ε of the Gini release plus ε spent on U (sequential composition).")

# ---- data preparation ------------------------------------------------------------------------
values = _subsample(ds.values, n, SUBSAMPLE_SEED)  # fixed: the sidebar seed redraws the noise only
xs = None
with guard("the bounds"):
    if bounds_mode == BOUNDS_DP:
        if not _dp_upper_available():
            raise ValueError("the DP upper-bound estimator (dpcore.bounds) is not available in this "
                             "version; choose public bounds")
        upper, upper_eps_spent = _dp_upper(values, upper_eps, lower, seed() + 11)
        b2.caption(f"DP estimate: U = {upper:,.0f} (ε = {upper_eps_spent:g} spent)")
    if not upper > lower:
        raise ValueError(f"the upper bound U = {upper:,.6g} must be above the lower bound L = {lower:,.6g}")
    xs, n_negative, n_below, n_above = _clip(values, lower, upper)
if xs is None:
    st.stop()

notes = []
if n_negative:
    notes.append(f"{n_negative:,} negative incomes (losses) were set to L = {lower:,.6g}.")
if n_below - n_negative > 0:
    notes.append(f"{n_below - n_negative:,} incomes below L were raised to L.")
if n_above:
    notes.append(f"**{n_above:,} incomes above U = {upper:,.6g} were clipped to U** (this lowers the Gini).")
for note in notes:
    st.warning(note + " These counts describe the confidential data: they are for the data holder only.")

# ---- the mechanism -----------------------------------------------------------------------------
result = None
with guard("the smooth sensitivity"):
    cal = smooth_noise_calibration(eps, gamma, mode=calibration)
    true_g = _gini(xs)
    fast = _smooth(xs, lower, upper, cal.beta, "fast")
    # The exact curve for the chart, over the same k range as the fast one. Forcing k = 0..k_max
    # disables pruning (O(n) per k), so k_max is capped on big data; the value S(X) is the maximum
    # over all k whatever k_max, so this one call also serves as the exact bound itself.
    exact_chart = None
    if n <= 200_000:
        exact_chart = _smooth(xs, lower, upper, cal.beta, "exact",
                              min(len(fast["curve"]) - 1, 100 if n <= 50_000 else 25))
    if method == "fast":
        ss = fast
    else:
        ss = exact_chart if exact_chart is not None else _smooth(xs, lower, upper, cal.beta, "exact")
    scale = ss["value"] / cal.alpha
    gc = GeneralizedCauchy(gamma)
    med_err, q90_err, q99_err = E.abs_error_quantiles(scale, gamma)
    lap_scale = ss["gs"] / eps
    lap_med, lap_q90, lap_q99 = E.laplace_abs_error_quantiles(lap_scale)
    result = dict(cal=cal, true_g=true_g, ss=ss, scale=scale)
if result is None:
    st.stop()

saturated = bool(ss["saturated"] or med_err >= 0.5)
m1, m2, m3, m4, m5 = st.columns(5)
m1.metric("True Gini (confidential)", f"{true_g:.4f}", help="Shown for planning only; never published.")
m2.metric("Smooth sensitivity S(X)", _fmt(ss["value"]), help=f"Maximised at k* = {ss['k_star']} changed records.")
m3.metric("Noise scale S(X)/α", _fmt(scale), help=f"α = {cal.alpha:.4g}, β = {cal.beta:.4g} ({calibration}).")
m4.metric("Typical error (median |error|)", _fmt(med_err))
m5.metric("Laplace baseline median |error|", _fmt(lap_med), help=f"Global sensitivity {ss['gs']:.4g} / ε.")

if saturated:
    st.warning(
        f"**At ε = {eps:g} with n = {n:,} and U = {upper:,.6g} the noise swamps the Gini.** "
        + ("The sensitivity bound has reached its worst case (the global sensitivity), so "
           if ss["saturated"] else "")
        + f"the typical error ({_fmt(med_err)}) is at least half the Gini's whole range: a release would "
        "say nothing. Increase ε or n, or use a tighter upper bound U. (Charts of releases are hidden.)")

# ---- 1. releases ---------------------------------------------------------------------------------
st.header("1 · Where would the published Gini land?")
errors = pd.DataFrame({
    "mechanism": ["smooth sensitivity (this page)", "Laplace, global sensitivity"],
    "median |error|": [med_err, lap_med], "90% of errors below": [q90_err, lap_q90],
    "99% of errors below": [q99_err, lap_q99],
})
if gamma > 3:
    errors["RMSE"] = [E.noise_rmse(scale, gamma), lap_scale * math.sqrt(2)]
if not saturated:
    st.markdown(
        f"Each release is the true Gini plus noise. Out of many possible releases, half land within "
        f"**±{_fmt(med_err)}** of the truth and 90 % within **±{_fmt(q90_err)}**. The usual Laplace "
        f"mechanism (right) must cover the worst case over *all* datasets and is "
        f"**{lap_med / max(med_err, 1e-300):,.0f}× noisier** here.")
    sim_rng = rng(2)
    rel = true_g + scale * gc.rvs(N_SIM, sim_rng)
    lap = true_g + sim_rng.laplace(0.0, lap_scale, N_SIM)
    fig = plots.releases_figure(true_g, rel, lap, smooth_range=plots.finite_range(true_g, 1.5 * q90_err),
                                laplace_range=plots.finite_range(true_g, 1.5 * lap_q90))
    st.plotly_chart(fig, width="stretch")
    cA, cB = st.columns([3, 2])
    with cA:
        st.subheader(f"{N_DOTS} equally likely releases")
        dots = E.plausible_releases(true_g, scale, gamma, N_DOTS)
        st.plotly_chart(plots.dots_figure(dots, true_g), width="stretch")
        st.caption(f"Each dot is a 1-in-{N_DOTS} chance: if the agency published today, the Gini would be "
                   "near one of these dots. Dots far from the black line are the heavy-tailed noise.")
        download_csv(pd.DataFrame({"probability_level": (np.arange(N_DOTS) + 0.5) / N_DOTS, "release": dots}),
                     "Download the dots (CSV)", "gini_plausible_releases.csv", key="gini_dl_dots")
    with cB:
        st.subheader("Error summary")
        shown = errors.copy()
        for c in shown.columns[1:]:
            shown[c] = [_fmt(float(v), 4) if v < 1 else f"{v:.3g}" for v in shown[c]]
        st.table(shown.set_index("mechanism"))
        if gamma > 3:
            st.caption("RMSE is shown because γ > 3: the noise then has a finite variance.")
        else:
            st.caption(f"No RMSE: with γ = {gamma:g} ≤ 3 the noise has **infinite variance**, so an RMSE does "
                       "not exist (a simulated one keeps growing with more draws). Quantiles of the error "
                       "are the honest summary. Choose γ > 3 to see an RMSE.")
    dl = pd.DataFrame({"release_smooth": rel[:2000], "release_laplace": lap[:2000]})
    download_csv(dl, "Download 2,000 simulated releases (CSV)", "gini_releases.csv", key="gini_dl_rel")
else:
    st.info("Hidden: at these settings the releases would be pure noise (see the message above).")

# ---- 2. why: smooth sensitivity -------------------------------------------------------------------
st.header("2 · Why this much noise? Smooth sensitivity")
st.markdown(
    "How much can **one person** move the Gini of this data? That *local sensitivity* cannot be "
    "published as is (it describes the data), so the mechanism uses a **smooth** bound: it also looks "
    "at datasets with k records changed, with weight e^(−βk). A(k) is the largest local sensitivity "
    "within k changes; the noise scale uses the maximum of e^(−βk)·A(k), reached at k*.")
exact_curve = exact_chart["curve"] if exact_chart else None
fast_curve = fast["curve"]
k_exact = exact_chart["k_star"] if exact_chart else None
k_fast = fast["k_star"]
st.plotly_chart(plots.decay_figure(exact_curve, fast_curve, k_star_exact=k_exact, k_star_fast=k_fast,
                                   beta=cal.beta), width="stretch")
st.caption("The exact bound uses the true smallest and largest Gini reachable by changing k records "
           "(Theorems 4.1–4.2); the fast one uses only n, the mean and [L, U]. Both are valid; the exact "
           "one is never larger. Curves stop where larger k can no longer matter (Section 4.4 pruning).")
download_csv(pd.concat([c.assign(bound=b) for c, b in ((exact_curve, "exact"), (fast_curve, "fast")) if c is not None]),
             "Download the sensitivity curves (CSV)", "gini_sensitivity_decay.csv", key="gini_dl_decay")

# ---- 3. posterior --------------------------------------------------------------------------------
st.header("3 · What can an analyst infer from one release?")
post_numbers: dict[str, float] = {}
prior_key = None
if not saturated:
    one = float(true_g + scale * gc.rvs(1, rng(3))[0])
    prior_key = qp_radio("Analyst's prior belief about the Gini", "gini_prior", list(PRIORS), "uniform",
                         format_func=lambda k: PRIORS[k][1], horizontal=True)
    prior, prior_text = PRIORS[prior_key]
    with guard("the posterior"):
        post = _posterior(one, scale, gamma, prior)
        lo, hi = post["interval"]
        post_numbers = {"released_gini": one, "posterior_mean": float(post["mean"]),
                        "posterior_interval_lower": float(lo), "posterior_interval_upper": float(hi),
                        "posterior_hpd_lower": float(post["hpd"][0]), "posterior_hpd_upper": float(post["hpd"][1])}
        st.markdown(
            f"Suppose the agency publishes **{one:.4f}**. Combining it with the known noise distribution and "
            f"{prior_text} (eq. 11, a post-processing step that costs no privacy), an analyst is "
            f"{LEVEL:.0%} sure the true Gini lies in **[{lo:.4f}, {hi:.4f}]** (posterior mean {post['mean']:.4f}).")
        st.plotly_chart(plots.posterior_figure(post["grid"], post["density"], released=one, interval=post["interval"],
                                               hpd=post["hpd"], level=LEVEL, true_value=true_g),
                        width="stretch")
        st.caption("Assumption (as in the paper): the analyst knows the noise scale S(X)/α. It depends on the "
                   "confidential data, so publishing it is not covered by the release's guarantee. Green ticks: "
                   "the highest-posterior-density interval. Change the sidebar seed to draw another release.")
        download_csv(pd.DataFrame({"g": post["grid"], "posterior_density": post["density"]}),
                     "Download the posterior density (CSV)", "gini_posterior.csv", key="gini_dl_post")
else:
    st.info("Hidden: a release at these settings carries almost no information about the Gini.")

# ---- 4. error against epsilon --------------------------------------------------------------------
st.header("4 · Error against ε for this data")
with guard("the error curve"):
    curve = _error_curve(xs, lower, upper, gamma, calibration)
    if gamma > 3:
        q, lab = "rmse", "RMSE"
    else:
        q, lab = "q90_abs_error", "90% absolute error"
    st.plotly_chart(plots.error_vs_epsilon_figure(curve, eps, quantile=q, label=lab), width="stretch")
    st.caption(f"The smooth-sensitivity curve uses the fast bound (instant; never below the exact one) and your "
               f"calibration ({calibration}); grey: the Laplace baseline with global sensitivity. Shown: the {lab}"
               + ("" if gamma > 3 else " (no RMSE: infinite variance for γ ≤ 3)") + ".")
    download_csv(curve, "Download the error-vs-ε table (CSV)", "gini_error_vs_epsilon.csv", key="gini_dl_curve")

# ---- 5. paper experiments -----------------------------------------------------------------------
st.header("5 · Reproduce the paper's experiments")
st.markdown("Each runs on a button (they take a few seconds), with the paper's calibration and ours side by side.")
draw_opts = {"10,000": 10_000, "100,000": 100_000, "1,000,000 (as in the paper; slower)": 1_000_000}
n_draws = draw_opts[qp_selectbox("Simulated releases per setting", "gini_exp_draws", list(draw_opts), "100,000")]


def _progress_bar(label: str):
    bar = st.progress(0.0, text=label)
    return lambda f, m: bar.progress(float(f), text=f"{label}: {m}")


t1, t3, t4 = st.tabs(["Figure 1 · this data, ε from 0.25 to 2", "Figure 3 · two-point data",
                      "Figure 4 · error against IQ"])
with t1:
    st.caption("Distribution of the DP Gini of the current data for ε ∈ {0.25, 0.5, 1, 1.5, 2}, γ = 2, "
               "L = 0, fast bound as in the paper; U is your public U, or (DP bounds) re-estimated with DP "
               "for each block of releases as in the paper, which adds its ε to the total.")
    if st.button("Run Figure 1", key="gini_run_fig1"):
        with guard("Figure 1"):
            res = E.figure1(np.maximum(values, 0.0), upper=upper if bounds_mode == BOUNDS_PUBLIC else None,
                            upper_epsilon=upper_eps or E.PAPER_UPPER_EPSILON, n_releases=n_draws,
                            rng=seed() + 101, progress=_progress_bar("Figure 1"))
            st.session_state["gini_fig1"] = res
    res = st.session_state.get("gini_fig1")
    if res is not None:
        st.plotly_chart(plots.figure1_plot(res.table), width="stretch")
        for note in res.notes:
            st.caption(note)
        download_csv(res.table, "Download Figure 1 table (CSV)", "gini_figure1.csv", key="gini_dl_fig1")
with t3:
    st.caption("Absolute errors at the smallest range IQ a Gini allows (Prop. 5.1), for g ∈ {0.2, 0.5, 0.7}, "
               "n ∈ {10⁴, 10⁵, 10⁶}, ε ∈ {0.5, 1, 2}, γ = your γ. Boxes: 1/25/50/75/99 % (exact); ×: largest "
               "simulated error.")
    if st.button("Run Figure 3", key="gini_run_fig3"):
        with guard("Figure 3"):
            st.session_state["gini_fig3"] = E.figure3(gamma=gamma, n_draws=n_draws, rng=seed() + 103,
                                                      progress=_progress_bar("Figure 3"))
    res = st.session_state.get("gini_fig3")
    if res is not None:
        st.plotly_chart(plots.figure3_plot(res.table, res.params["gamma"]), width="stretch")
        for note in res.notes:
            st.caption(note)
        download_csv(res.table, "Download Figure 3 table (CSV)", "gini_figure3.csv", key="gini_dl_fig3")
with t4:
    st.caption("Error against the normalised range IQ = (U − L)/mean from 2 to 100 at g = 0.5, n = 10⁵, "
               "ε ∈ {0.5, 1, 2}, γ = your γ. RMSE only when γ > 3.")
    if st.button("Run Figure 4", key="gini_run_fig4"):
        with guard("Figure 4"):
            st.session_state["gini_fig4"] = E.figure4(gamma=gamma, n_draws=min(n_draws, 100_000), rng=seed() + 104,
                                                      progress=_progress_bar("Figure 4"))
    res = st.session_state.get("gini_fig4")
    if res is not None:
        st.plotly_chart(plots.figure4_plot(res.table, res.params["gamma"]), width="stretch")
        for note in res.notes:
            st.caption(note)
        download_csv(res.table, "Download Figure 4 table (CSV)", "gini_figure4.csv", key="gini_dl_fig4")

# ---- 6. share / reproduce -------------------------------------------------------------------------
st.header("6 · Share or reproduce this view")
numbers = {"n": float(n), "lower": lower, "upper": upper, "upper_epsilon": upper_eps, "total_epsilon": total_eps,
           "true_gini": true_g, "smooth_sensitivity": ss["value"], "k_star": float(ss["k_star"]),
           "alpha": cal.alpha, "beta": cal.beta, "noise_scale": scale,
           "median_abs_error": med_err, "q90_abs_error": q90_err, "q99_abs_error": q99_err,
           "laplace_median_abs_error": lap_med, "laplace_q90_abs_error": lap_q90,
           "laplace_q99_abs_error": lap_q99, "saturated": float(saturated)}
if gamma > 3:
    numbers.update(rmse=E.noise_rmse(scale, gamma), laplace_rmse=lap_scale * math.sqrt(2))
numbers.update(post_numbers)
st.markdown("The numbers of this view at full precision (the script below prints the same ones):")
numbers_table = pd.DataFrame({"quantity": list(numbers), "value": [float(v) for v in numbers.values()]})
st.dataframe(numbers_table, hide_index=True,
             column_config={"value": st.column_config.NumberColumn(format="plain")})
download_csv(numbers_table, "Download these numbers (CSV)", "gini_numbers.csv", key="gini_dl_numbers")
# The script is assembled from plain literals only (numbers and fixed option names, never typed text).
settings = {"n": int(n), "epsilon": eps, "gamma": gamma, "method": str(method), "calibration": str(calibration),
            "lower": lower, "upper": None if bounds_mode == BOUNDS_DP else upper,
            "upper_epsilon": upper_eps if bounds_mode == BOUNDS_DP else 0.0,
            "prior": PRIORS[prior_key][0] if prior_key in PRIORS else PRIORS["uniform"][0]}
repro.share_panel("gini", script=repro.script_for(title="Gini index with differential privacy",
                                                  body=f"settings = {literal(settings)}\n\n" + SCRIPT_BODY),
                  note="The paper experiments (section 5) are not in the script: download their tables above.")
