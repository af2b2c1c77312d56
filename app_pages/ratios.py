"""Relative risk and ratios from noisy counts (Shoham & Ligett 2025): is the privacy noise the problem,
or the sample size?

Thin page: widgets -> dpcore.ratio -> ui.plots_ratio. Every view reads the same inputs at the top.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import ratio as R
from dpcore import scriptgen
from dpcore.data import shared_data_path
from dpcore.validation import DPInputError, check_probability
from ui import plots_ratio as plots
from ui import repro
from ui.common import (download_csv, guard, privacy_note, qp_number, qp_radio, qp_select_slider, qp_selectbox,
                       qp_slider, rng, seed)

ACS_FILE = "acs2019_nist_excerpt_national.csv.gz"
P_GRID = tuple(round(0.1 * i, 1) for i in range(1, 10))
EPS_OPTIONS = [0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 8.0]
DELTA_OPTIONS = [1e-7, 1e-6, 1e-5, 1e-4, 1e-3]
MECH = {"Laplace": "laplace", "Gaussian (analytic)": "gaussian"}
VIEWS = ("Sampling distribution", "Intervals", "Coverage heatmaps", "Accuracy vs ε", "Bias vs n", "Odds ratio",
         "Real example: poverty (ACS)")
N_SAMPLING = 20_000
N_COVER = 4_000
ACC_EPS = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 8.0)
BIAS_N = (10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 2000)
COVER_SPECS = (("Katz (classic, no privacy)", "none", False, "katz"),
               ("Theorem 4.2, no privacy", "none", False, "normal"),
               ("Theorem 4.2 on noisy counts", None, False, "normal"),   # None: the page's mechanism
               ("Theorem 4.5 conservative (adds noise variance)", None, True, "normal"))
HM_METHODS = {"Theorem 4.2 on noisy counts": ("normal", False, True),   # (interval, conservative, private)
              "Theorem 4.5 conservative": ("normal", True, True),
              "Katz on noisy counts": ("katz", False, True),
              "Theorem 4.2, no privacy": ("normal", False, False),
              "Katz (classic, no privacy)": ("katz", False, False)}


# ---------------------------------------------------------------------------------------------
# cached computations (keyed by plain parameters)
# ---------------------------------------------------------------------------------------------

@st.cache_data(show_spinner=False, max_entries=64)
def _sampling(px, py, nx, ny, eps, mech, delta, sd):
    s = R.simulate_rr_sampling(px, py, nx, ny, epsilon=eps, mechanism=mech, delta=delta, n_sims=N_SAMPLING, rng=sd)
    lo, hi = np.quantile(np.concatenate([s.nonprivate, s.private]), [0.005, 0.995])
    edges = np.linspace(lo, hi, 61)
    h0, _ = np.histogram(s.nonprivate, edges, density=True)
    h1, _ = np.histogram(s.private, edges, density=True)
    hist = pd.DataFrame({"bin_mid": 0.5 * (edges[:-1] + edges[1:]), "non-private": h0, "private": h1})
    stats = dict(sd0=float(s.nonprivate.std()), sd1=float(s.private.std()),
                 med0=float(np.median(s.nonprivate)), med1=float(np.median(s.private)),
                 mean0=float(s.nonprivate.mean()), mean1=float(s.private.mean()))
    return hist, stats


@st.cache_data(show_spinner=False, max_entries=64)
def _coverage_table(px, py, nx, ny, eps, mech, delta, level, sd):
    rows = []
    base = None
    for i, (name, m, cons, kind) in enumerate(COVER_SPECS):
        res = R.simulate_rr_coverage(px, py, nx, ny, epsilon=eps, mechanism=m or mech, conservative=cons, delta=delta,
                                     n_sims=N_COVER, level=level, rng=sd + i, interval=kind)
        if name == "Theorem 4.2, no privacy":
            base = res.mean_width
        rows.append({"method": name, "coverage": res.coverage, "± (MC s.e.)": res.se, "mean width": res.mean_width})
    df = pd.DataFrame(rows)
    df["width / non-private width"] = df["mean width"] / base
    return df


@st.cache_data(show_spinner=False, max_entries=32)
def _grids(nx, ny, eps, mech, delta, level, n_sims, method, sd):
    kind, cons, private = HM_METHODS[method]
    m = mech if private else "none"
    if m == "none":  # no noise: the result does not depend on epsilon, so share the cache across epsilons
        return _grids_nonprivate(nx, ny, level, n_sims, kind, sd)
    g = R.coverage_grid(P_GRID, nx, ny, epsilon=eps, mechanism=m, conservative=cons, delta=delta, n_sims=n_sims,
                        level=level, rng=sd, interval=kind)
    return g.coverage, g.mean_width / _reference_width(nx, ny, level, n_sims, sd)


@st.cache_data(show_spinner=False, max_entries=32)
def _reference_width(nx, ny, level, n_sims, sd):
    """Mean width of the non-private Theorem 4.2 interval on the grid (independent of epsilon)."""
    return R.coverage_grid(P_GRID, nx, ny, epsilon=1.0, mechanism="none", n_sims=n_sims, level=level,
                           rng=sd + 1).mean_width


@st.cache_data(show_spinner=False, max_entries=32)
def _grids_nonprivate(nx, ny, level, n_sims, kind, sd):
    g = R.coverage_grid(P_GRID, nx, ny, epsilon=1.0, mechanism="none", n_sims=n_sims, level=level, rng=sd,
                        interval=kind)
    return g.coverage, g.mean_width / _reference_width(nx, ny, level, n_sims, sd)


@st.cache_data(show_spinner=False, max_entries=32)
def _accuracy_curves(x, y, n, alpha):
    rows = []
    for e in ACC_EPS:
        for name, beta in R.sample_accuracy_all(x, y, epsilon=e, alpha=alpha, n=n).items():
            rows.append({"epsilon": e, "algorithm": name, "accuracy": 1.0 - float(beta)})
    return pd.DataFrame(rows)


@st.cache_data(show_spinner=False, max_entries=32)
def _bias_curve(px, py, eps):
    rows = []
    for n in BIAS_N:
        b = R.binomial_ratio_bias(n, px, py, epsilon=eps)
        rows.append({"n": n, "true ratio": b.true_ratio, "E non-private": b.expected_nonprivate,
                     "E private": b.expected_private, "non-private": b.bias_nonprivate / b.true_ratio,
                     "private": b.bias_private / b.true_ratio})
    return pd.DataFrame(rows)


@st.cache_data(show_spinner=False, max_entries=2)
def _acs_frame():
    path = shared_data_path(ACS_FILE)
    if path is None:
        return None
    return pd.read_csv(path, usecols=["POVPIP", "SEX", "RAC1P", "HISP"])


@st.cache_data(show_spinner=False, max_entries=32)
def _or_coverage(px, py, nx, ny, eps, mech, delta, level, sd):
    out = {}
    for cons in (False, True):
        r = R.simulate_or_coverage(px, py, nx, ny, epsilon=eps, mechanism=mech, delta=delta, conservative=cons,
                                   n_sims=N_COVER, level=level, rng=sd + int(cons))
        out[cons] = (r.coverage, r.se, r.mean_width)
    r = R.simulate_or_coverage(px, py, nx, ny, epsilon=eps, mechanism="none", n_sims=N_COVER, level=level, rng=sd + 2)
    out["none"] = (r.coverage, r.se, r.mean_width)
    return out


def _table(df: pd.DataFrame, digits: int) -> None:
    """Show a table with its float columns displayed to ``digits`` decimals; the data (and CSV) keep full
    precision, so the numbers can be compared with the reproduction script."""
    fmt = {c: st.column_config.NumberColumn(format=f"%.{digits}f") for c in df.columns
           if pd.api.types.is_float_dtype(df[c])}
    st.dataframe(df, hide_index=True, width="stretch", column_config=fmt)


# ---------------------------------------------------------------------------------------------
# share / reproduce: the script body for the current view (plain string building, no computation)
# ---------------------------------------------------------------------------------------------

_REPRO_HEAD = """\
# The settings of the page (URL query parameters ratio_*); delta is None for Laplace noise.
params = PARAMS
eps, mech, delta, level = params["eps"], params["mech"], params["delta"], params["level"]
nx, ny = params["nx"], params["ny"]
if params["x_obs"] is None:  # "Proportions (planning)": the shares with the outcome
    px, py = params["px"], params["py"]
else:  # "Observed noisy counts": the shares implied by the released counts
    px, py = params["x_obs"] / nx, params["y_obs"] / ny
cn = R.count_noise(eps, mechanism=mech, delta=delta)
results.update(view=params["view"], noise_scale_per_count=cn.scale, noise_variance_per_count=cn.variance)


def rr_row(name, c):
    return {"method": name, "estimate": c.estimate, "lower": c.lower, "upper": c.upper, "width": c.width}


def or_row(name, c):
    return {"method": name, "estimate": c.estimate, "lower": c.lower, "upper": c.upper,
            "privacy share": c.privacy_share}


def noised(x, y, gen):  # the two released counts (each with noise for eps/2, delta/2)
    if mech == "laplace":
        return R.laplace_noised_counts(x, y, epsilon=eps, rng=gen)
    return R.gaussian_noised_counts(x, y, epsilon=eps, delta=delta, rng=gen)

"""

_REPRO_VIEWS = {
    "Sampling distribution": """\
s = R.simulate_rr_sampling(px, py, nx, ny, epsilon=eps, mechanism=mech, delta=delta, n_sims=N_SAMPLING, rng=seed)
sd0, sd1 = float(s.nonprivate.std()), float(s.private.std())
results["sampling"] = {
    "sd_nonprivate": sd0, "sd_private": sd1,
    "median_nonprivate": float(np.median(s.nonprivate)), "median_private": float(np.median(s.private)),
    "mean_nonprivate": float(s.nonprivate.mean()), "mean_private": float(s.private.mean()),
    "share_of_variance_from_privacy": max(0.0, 1 - sd0 ** 2 / sd1 ** 2) if sd1 > 0 else None}
""",
    "Intervals": """\
if params["x_obs"] is None:  # one simulated study
    gen = np.random.default_rng(seed + 61)
    X = int(gen.binomial(nx, px))
    Y = int(gen.binomial(ny, py))
    released = noised(X, Y, gen)
    xn, yn, clip = released.x_noisy, released.y_noisy, True
    results.update(true_counts=[X, Y], noisy_counts=[xn, yn])
else:  # the user's released counts
    X = Y = None
    xn, yn, clip = float(params["x_obs"]), float(params["y_obs"]), False
rows = []
if X is not None and X >= 1 and Y >= 1:
    rows.append(rr_row("Katz on true counts (no privacy)", R.katz_interval(X, Y, nx, ny, level=level)))
    rows.append(rr_row("Theorem 4.2 on true counts (no privacy)", R.rr_confidence_interval(X, Y, nx, ny, level=level)))
rows.append(rr_row("Theorem 4.2 on noisy counts", R.rr_confidence_interval(xn, yn, nx, ny, level=level, clip=clip)))
cons = R.rr_confidence_interval(xn, yn, nx, ny, level=level, noise_variance=cn.variance, clip=clip)
rows.append(rr_row("Theorem 4.5 conservative", cons))
results["intervals"] = rows
results["privacy_share_conservative"] = cons.privacy_share
if params["x_obs"] is None:  # how often the intervals cover the true RR
    results["coverage"] = []
    for i, (name, m, conservative, kind) in enumerate(COVER_SPECS):
        res = R.simulate_rr_coverage(px, py, nx, ny, epsilon=eps, mechanism=m or mech, conservative=conservative,
                                     delta=delta, n_sims=N_COVER, level=level, rng=seed + i, interval=kind)
        results["coverage"].append({"method": name, "coverage": res.coverage, "se": res.se,
                                    "mean width": res.mean_width})
""",
    "Coverage heatmaps": """\
kind, conservative, private = HM_METHOD
ref = R.coverage_grid(P_GRID, nx, ny, epsilon=1.0, mechanism="none", n_sims=N_SIMS, level=level,
                      rng=seed + 1).mean_width  # the non-private Theorem 4.2 interval
if private:
    g = R.coverage_grid(P_GRID, nx, ny, epsilon=eps, mechanism=mech, conservative=conservative, delta=delta,
                        n_sims=N_SIMS, level=level, rng=seed, interval=kind)
else:
    g = R.coverage_grid(P_GRID, nx, ny, epsilon=1.0, mechanism="none", n_sims=N_SIMS, level=level, rng=seed,
                        interval=kind)
results.update(p_values=list(P_GRID), coverage=g.coverage.tolist(), width_ratio=(g.mean_width / ref).tolist())
""",
    "Accuracy vs ε": """\
x, y = int(round(px * nx)), int(round(py * ny))
n = max(nx, ny)
results["counts"] = [x, y]
results["accuracy"] = [{"epsilon": e, "algorithm": name, "accuracy": 1.0 - float(beta)}
                       for e in ACC_EPS for name, beta in R.sample_accuracy_all(x, y, epsilon=e, alpha=ALPHA,
                                                                                n=n).items()]
""",
    "Bias vs n": """\
results["bias"] = []
for n in BIAS_N:
    b = R.binomial_ratio_bias(n, px, py, epsilon=eps)
    results["bias"].append({"n": n, "true ratio": b.true_ratio, "E non-private": b.expected_nonprivate,
                            "E private": b.expected_private, "non-private": b.bias_nonprivate / b.true_ratio,
                            "private": b.bias_private / b.true_ratio})
""",
    "Odds ratio": """\
gen = np.random.default_rng(seed + 71)
X = int(gen.binomial(nx, px))
Y = int(gen.binomial(ny, py))
table = R.noisy_two_by_two(X, nx - X, Y, ny - Y, epsilon=eps, mechanism=mech, delta=delta, rng=gen)
rows = []
if min(X, nx - X, Y, ny - Y) >= 1:
    rows.append(or_row("Woolf on true cells (no privacy)", R.or_confidence_interval(X, nx - X, Y, ny - Y, level=level)))
rows.append(or_row("Woolf on noisy cells (ignores noise)",
                   R.or_confidence_interval(*table.cells, level=level, clip=True)))
rows.append(or_row("Noisy cells + noise variance", R.or_confidence_interval(*table.cells, level=level, clip=True,
                                                                            noise_variance=table.noise_variance)))
results.update(true_cells=[X, nx - X, Y, ny - Y], noisy_cells=list(table.cells), odds_ratio_intervals=rows)
cov = {}
for conservative in (False, True):
    r = R.simulate_or_coverage(px, py, nx, ny, epsilon=eps, mechanism=mech, delta=delta, conservative=conservative,
                               n_sims=N_COVER, level=level, rng=seed + int(conservative))
    cov["with noise variance" if conservative else "ignoring the noise"] = r.coverage
cov["no privacy"] = R.simulate_or_coverage(px, py, nx, ny, epsilon=eps, mechanism="none", n_sims=N_COVER,
                                           level=level, rng=seed + 2).coverage
results["coverage"] = cov
""",
    "Real example: poverty (ACS)": """\
import pandas as pd
from dpcore.data import shared_data_path

path = shared_data_path(ACS_FILE)
if path is None:
    raise SystemExit("this view uses the ACS excerpt from ../shared/data, which is not on this machine")
acs = pd.read_csv(path, usecols=["POVPIP", "SEX", "RAC1P", "HISP"])
x, n_x, y, n_y = R.poverty_counts(acs, ACS_COLUMN, ACS_GX, ACS_GY)
gen = np.random.default_rng(seed + 81)
rel = noised(x, y, gen)
if x < 1 or y < 1:
    raise SystemExit(f"a group has nobody below the poverty line (x = {x}, y = {y})")
truth = R.katz_interval(x, y, n_x, n_y, level=level)
t42 = R.rr_confidence_interval(x, y, n_x, n_y, level=level)
priv = R.rr_confidence_interval(rel.x_noisy, rel.y_noisy, n_x, n_y, level=level, noise_variance=cn.variance)
results.update(people=[n_x, n_y], in_poverty_confidential=[x, y], noisy_counts=[rel.x_noisy, rel.y_noisy],
               intervals=[rr_row("Katz on the confidential counts", truth),
                          rr_row("Theorem 4.2 on the confidential counts", t42),
                          rr_row("Theorem 4.5 on the noisy counts (private)", priv)],
               privacy_share=priv.privacy_share)
""",
}


def _repro_script(view: str, params: dict, extra: dict) -> str | None:
    """The script of the current view: constants and settings written with scriptgen.literal (no user text).

    ``extra`` holds the view's own settings (heatmap method and simulations, alpha, ACS groups). The data
    recipe is ("none",): this page does not use the sidebar's income file, only its seed."""
    consts = {"Sampling distribution": {"N_SAMPLING": N_SAMPLING},
              "Intervals": {"N_COVER": N_COVER, "COVER_SPECS": COVER_SPECS},
              "Coverage heatmaps": {"P_GRID": P_GRID},
              "Accuracy vs ε": {"ACC_EPS": ACC_EPS},
              "Bias vs n": {"BIAS_N": BIAS_N},
              "Odds ratio": {"N_COVER": N_COVER},
              "Real example: poverty (ACS)": {"ACS_FILE": ACS_FILE}}[view]
    if view == "Coverage heatmaps":
        consts.update(HM_METHOD=HM_METHODS[extra["method"]], N_SIMS=extra["n_sims"])
    elif view == "Accuracy vs ε":
        consts["ALPHA"] = extra["alpha"]
    elif view == "Real example: poverty (ACS)":
        consts.update(ACS_COLUMN=extra["col"], ACS_GX=extra["gx"], ACS_GY=extra["gy"])
    body = "from dpcore import ratio as R\n\n" + "".join(f"{k} = {scriptgen.literal(v)}\n" for k, v in consts.items())
    body += "\n" + _REPRO_HEAD.replace("PARAMS", scriptgen.literal(params)) + _REPRO_VIEWS[view]
    try:
        return scriptgen.build_script(title=f"Relative risk and ratios: {view}", dataset_key=("none",), body=body,
                                      seed=seed())
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------
# page
# ---------------------------------------------------------------------------------------------

st.title("Relative risk and ratios")
st.markdown(
    "An analyst receives **differentially private counts**: how many people in group *x* (say, exposed) and in "
    "group *y* (unexposed) have an outcome. She divides them to get the **relative risk** "
    "RR = p_x / p_y and wants an honest confidence interval. This page shows, for your settings, how much of "
    "the uncertainty comes from **sampling** (who happened to be in the study) and how much from the "
    "**privacy noise**, following Shoham & Ligett (2025), *Differentially private ratio statistics*.")
privacy_note(
    "two datasets differ in one person's record (replace one record). The group sizes n_x and n_y stay the same. "
    "Each count gets noise with half the budget (ε/2, and δ/2 for Gaussian noise), so the release is private even "
    "if one person changes both counts.",
    "the group sizes n_x and n_y, ε, δ, the noise distribution, and the chosen interval method. Ratios, intervals "
    "and bias corrections computed from the noisy counts cost no extra privacy (post-processing).")

st.caption("This page works with counts, not with the income file chosen in the sidebar; only the sidebar's "
           "random seed is used (same seed, same simulated studies).")

with st.expander("Settings", expanded=True):
    c1, c2, c3 = st.columns(3)
    eps = qp_select_slider("Privacy budget ε (total for both counts)", "ratio_eps", EPS_OPTIONS, 1.0, container=c1,
                           help="Smaller ε = more noise = more privacy.")
    mech_label = qp_radio("Noise", "ratio_mech", list(MECH), "Laplace", container=c1, horizontal=True,
                          help="Laplace gives pure ε-DP; Gaussian needs a small failure probability δ.")
    mech = MECH[mech_label]
    delta = qp_select_slider("δ (Gaussian only)", "ratio_delta", DELTA_OPTIONS, 1e-4, container=c1,
                             format_func=lambda d: f"{d:.0e}", disabled=mech != "gaussian")
    mode = qp_radio("Describe the study by", "ratio_mode", ["Proportions (planning)", "Observed noisy counts"],
                    container=c2, horizontal=True)
    nx = qp_number("n_x: people in group x (public)", "ratio_nx", 200, min_value=0, max_value=10_000_000, step=10,
                   container=c2)
    ny = qp_number("n_y: people in group y (public)", "ratio_ny", 200, min_value=0, max_value=10_000_000, step=10,
                   container=c2)
    if mode == "Proportions (planning)":
        px = qp_slider("p_x: share with the outcome in group x", "ratio_px", 0.01, 0.99, 0.3, 0.01, container=c3)
        py = qp_slider("p_y: share with the outcome in group y", "ratio_py", 0.01, 0.99, 0.2, 0.01, container=c3)
        x_obs = y_obs = None
    else:
        x_obs = qp_number("noisy count x~ (group x with outcome)", "ratio_xobs", 60.0, container=c3, step=1.0)
        y_obs = qp_number("noisy count y~ (group y with outcome)", "ratio_yobs", 40.0, container=c3, step=1.0)
        px = x_obs / nx if nx > 0 else float("nan")
        py = y_obs / ny if ny > 0 else float("nan")
    level = qp_select_slider("Confidence level", "ratio_level", [0.8, 0.9, 0.95, 0.99], 0.95, container=c3,
                             format_func=lambda v: f"{v:.0%}")

view = qp_radio("Show", "ratio_view", list(VIEWS), horizontal=True)
delta_used = delta if mech == "gaussian" else None
sd = seed()
view_extra: dict = {}  # the view's own settings, for the reproduction script


def _inputs_ok() -> bool:
    """Check the shared inputs once, with messages a user can act on."""
    with guard("the relative risk"):
        if nx < 1 or ny < 1:
            raise DPInputError(f"the group sizes must be at least 1 (got n_x = {nx}, n_y = {ny})")
        if mode != "Proportions (planning)":
            R.rr_confidence_interval(x_obs, y_obs, nx, ny)  # raises on zero/negative noisy counts
        names = ("p_x", "p_y") if mode == "Proportions (planning)" else ("p_x = x~/n_x", "p_y = y~/n_y")
        check_probability(px, names[0])
        check_probability(py, names[1])
        R.count_noise(eps, mechanism=mech, delta=delta_used)
        return True
    return False


ok = _inputs_ok()
cn = R.count_noise(eps, mechanism=mech, delta=delta_used) if ok else None
if ok:
    st.caption(f"Noise per count: {mech_label}, scale {cn.scale:.3g} (standard deviation {math.sqrt(cn.variance):.3g} "
               f"people). Expected counts: x ≈ {px * nx:,.1f}, y ≈ {py * ny:,.1f}.")

# ------------------------------------------------------------------ views
if ok and view == "Sampling distribution":
    st.subheader("How much does privacy widen the spread of the estimate?")
    st.markdown(f"We simulate {N_SAMPLING:,} studies: each draws counts from the population (sampling) and then "
                "adds the privacy noise. Grey: the estimates without privacy; blue: with privacy. Noisy counts "
                "below 1 are set to 1, as in the paper.")
    with guard("the sampling distribution"):
        hist, s = _sampling(px, py, nx, ny, eps, mech, delta_used, sd)
        st.plotly_chart(plots.sampling_figure(hist, px / py), width="stretch")
        c = st.columns(3)
        c[0].metric("spread without privacy (s.d.)", f"{s['sd0']:.3g}")
        c[1].metric("spread with privacy (s.d.)", f"{s['sd1']:.3g}", f"{(s['sd1'] / s['sd0'] - 1):+.0%}"
                    if s["sd0"] > 0 else None, delta_color="inverse")
        c[2].metric("share of variance from privacy", f"{max(0.0, 1 - s['sd0'] ** 2 / s['sd1'] ** 2):.0%}"
                    if s["sd1"] > 0 else "–")
        st.caption("If the blue curve is barely wider than the grey one, the sample size, not privacy, limits what "
                   "you can learn (the paper's Section 4.2 point: the privacy part is second order).")
        summary = pd.DataFrame({"estimate": ["without privacy (sampling only)", "with privacy (sampling + noise)"],
                                "s.d.": [s["sd0"], s["sd1"]], "median": [s["med0"], s["med1"]],
                                "mean": [s["mean0"], s["mean1"]]})
        st.dataframe(summary, hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.4g")
                                    for c in ("s.d.", "median", "mean")})
        download_csv(hist, "Download histogram data (CSV)", "ratio_sampling.csv", key="dl-ratio-sampling")

elif ok and view == "Intervals":
    st.subheader("Confidence intervals for the relative risk")
    if mode == "Proportions (planning)":
        gen = rng(61)
        X = int(gen.binomial(nx, px))
        Y = int(gen.binomial(ny, py))
        released = (R.laplace_noised_counts(X, Y, epsilon=eps, rng=gen) if mech == "laplace"
                    else R.gaussian_noised_counts(X, Y, epsilon=eps, delta=delta_used, rng=gen))
        xn, yn = released.x_noisy, released.y_noisy
        st.markdown(f"One simulated study (seed {sd}): true counts X = {X}, Y = {Y}; released noisy counts "
                    f"x~ = {xn:.1f}, y~ = {yn:.1f}.")
        true_rr = px / py
    else:
        X = Y = None
        xn, yn = float(x_obs), float(y_obs)
        st.markdown(f"Your released noisy counts: x~ = {xn:g} of n_x = {nx:,}, y~ = {yn:g} of n_y = {ny:,}.")
        true_rr = None
    with guard("the intervals"):
        rows = []
        if X is not None and X >= 1 and Y >= 1:
            k = R.katz_interval(X, Y, nx, ny, level=level)
            rows.append(("Katz on true counts (no privacy)", k))
            rows.append(("Theorem 4.2 on true counts (no privacy)", R.rr_confidence_interval(X, Y, nx, ny, level=level)))
        clip = mode == "Proportions (planning)"
        rows.append(("Theorem 4.2 on noisy counts", R.rr_confidence_interval(xn, yn, nx, ny, level=level, clip=clip)))
        cons = R.rr_confidence_interval(xn, yn, nx, ny, level=level, noise_variance=cn.variance, clip=clip)
        rows.append(("Theorem 4.5 conservative", cons))
        df = pd.DataFrame([{"method": n, "estimate": c.estimate, "lower": c.lower, "upper": c.upper,
                            "width": c.width} for n, c in rows])
        st.plotly_chart(plots.intervals_figure(df, true_rr), width="stretch")
        _table(df, 4)
        c = st.columns(2)
        c[0].metric("share of the conservative interval's variance from privacy", f"{cons.privacy_share:.0%}")
        c[1].metric("conservative width / Theorem 4.2 width", f"{cons.width / rows[-2][1].width:.2f}×")
        st.markdown(
            "* **Katz**: the classic interval on the log scale (needs true counts).\n"
            "* **Theorem 4.2**: a normal approximation for the ratio that *ignores* the privacy noise; it is valid "
            "for large samples but can cover too rarely in small ones.\n"
            "* **Theorem 4.5 (conservative)**: adds the known noise variance "
            f"({cn.variance:.3g} per count) to the sampling variance; use this one.")
        download_csv(df, "Download intervals (CSV)", "ratio_intervals.csv", key="dl-ratio-intervals")
    if mode == "Proportions (planning)":
        st.markdown(f"**How often do these intervals contain the true RR?** ({N_COVER:,} simulated studies)")
        with guard("the coverage"):
            cov = _coverage_table(px, py, nx, ny, eps, mech, delta_used, level, sd)
            _table(cov, 4)
            download_csv(cov, "Download coverage (CSV)", "ratio_coverage.csv", key="dl-ratio-coverage")

elif ok and view == "Coverage heatmaps":
    st.subheader("Coverage over many settings (the paper's Appendix D.2 tables)")
    c = st.columns(2)
    method = qp_selectbox("Interval method", "ratio_hm_method",
                          ["Theorem 4.5 conservative", "Theorem 4.2 on noisy counts", "Katz on noisy counts",
                           "Theorem 4.2, no privacy", "Katz (classic, no privacy)"], container=c[0])
    n_sims = qp_select_slider("Simulated studies per cell", "ratio_hm_sims", [500, 1000, 2000, 5000], 1000,
                              container=c[1])
    view_extra.update(method=method, n_sims=n_sims)
    with guard("the coverage heatmaps"):
        cov, wr = _grids(nx, ny, eps, mech, delta_used, level, n_sims, method, sd)
        ps = np.array(P_GRID)
        small = (nx * ps[:, None] < 30) | (ny * ps[None, :] < 30)
        st.plotly_chart(plots.heatmap_figure(cov, P_GRID, title=f"Coverage of '{method}' at nominal {level:.0%}",
                                             zmin=level - 0.1, zmax=min(1.0, level + 0.1), mask=small),
                        width="stretch")
        st.caption(f"Rows p_x, columns p_y. * = an expected count below 30 (the paper's rule of thumb). "
                   f"Monte Carlo error about ±{2 * math.sqrt(level * (1 - level) / n_sims):.3f}.")
        st.plotly_chart(plots.heatmap_figure(wr, P_GRID, title="Mean width / width of the non-private interval",
                                             zmin=1.0, zmax=max(1.5, float(np.nanmax(wr))), colorscale="Blues",
                                             fmt=".2f"), width="stretch")
        out = pd.DataFrame([{"p_x": a, "p_y": b, "coverage": cov[i, j], "width_ratio": wr[i, j]}
                            for i, a in enumerate(P_GRID) for j, b in enumerate(P_GRID)])
        with st.expander("The numbers behind the heatmaps"):
            st.dataframe(out, hide_index=True, width="stretch")
        download_csv(out, "Download heatmap data (CSV)", "ratio_heatmaps.csv", key="dl-ratio-heatmaps")

elif ok and view == "Accuracy vs ε":
    st.subheader("Sample accuracy of every algorithm (the paper's Figure 1)")
    alpha = qp_select_slider("accuracy target α (absolute error in the ratio)", "ratio_alpha",
                             [0.01, 0.05, 0.1, 0.2, 0.5], 0.1)
    view_extra["alpha"] = alpha
    x, y = int(round(px * nx)), int(round(py * ny))
    n = max(nx, ny)
    st.markdown(f"For the counts x = {x}, y = {y} (ratio x/y = {x / max(y, 1):.3g}): the probability that each "
                f"private algorithm lands within ±{alpha:g} of the true ratio x/y, over its noise only. "
                f"δ = 1/n = {1 / n:.2g} where needed, as in the paper (which takes n_x = n_y = n; here "
                f"n = max(n_x, n_y) = {n:,}).")
    st.caption("LaplaceNoisedCounts: the noisy counts used on this page (Claim 3.2). NaiveRelativeRisk: noise on the "
               "ratio itself. NoisedLog: noise on log x − log y. Smooth sensitivity and PTR tailor the noise to the "
               "data; PTR is given the best proposal by an oracle (not private, a best case), and its 'FAIL' "
               "answers count as errors. These rivals assume one person changes one count.")
    with guard("the accuracy curves"):
        df = _accuracy_curves(x, y, n, alpha)
        st.plotly_chart(plots.accuracy_figure(df, alpha), width="stretch")
        with st.expander("The numbers behind the chart"):
            st.dataframe(df, hide_index=True, width="stretch")
        download_csv(df, "Download accuracy curves (CSV)", "ratio_accuracy.csv", key="dl-ratio-accuracy")

elif ok and view == "Bias vs n":
    st.subheader("Bias of the ratio of noisy counts (the paper's Figure 2)")
    st.markdown("The ratio of two noisy counts is slightly biased (a ratio's average is not the ratio of averages). "
                "With the noisy denominator set to at least 1, Claim 3.4 gives the exact average; here it is "
                "weighted over binomial samples with n people in each group. The ratio without privacy is biased "
                "too: privacy adds little once the counts are moderate.")
    with guard("the bias curve"):
        df = _bias_curve(px, py, eps)
        st.plotly_chart(plots.bias_figure(df), width="stretch")
        _table(df, 5)
        download_csv(df, "Download bias curve (CSV)", "ratio_bias.csv", key="dl-ratio-bias")

elif ok and view == "Odds ratio":
    st.subheader("Odds ratio from a noisy 2×2 table")
    st.markdown("The odds ratio (a·d)/(b·c) uses all four cells: with/without the outcome in each group. Each cell "
                "gets Laplace noise of scale 2/ε (one person leaving one cell and entering another changes two "
                "cells). The interval is the classic log-scale one (Woolf), with the noise variance added "
                "(delta method): Var(log OR) ≈ Σ (1/cell + noise variance/cell²).")
    with guard("the odds ratio"):
        gen = rng(71)
        X = int(gen.binomial(nx, px))
        Y = int(gen.binomial(ny, py))
        table = R.noisy_two_by_two(X, nx - X, Y, ny - Y, epsilon=eps, mechanism=mech, delta=delta_used, rng=gen)
        true_or = px * (1 - py) / ((1 - px) * py)
        rows = []
        if min(X, nx - X, Y, ny - Y) >= 1:
            rows.append(("Woolf on true cells (no privacy)", R.or_confidence_interval(X, nx - X, Y, ny - Y, level=level)))
        rows.append(("Woolf on noisy cells (ignores noise)", R.or_confidence_interval(*table.cells, level=level,
                                                                                    clip=True)))
        rows.append(("Noisy cells + noise variance", R.or_confidence_interval(*table.cells, level=level, clip=True,
                                                                             noise_variance=table.noise_variance)))
        df = pd.DataFrame([{"method": n, "estimate": c.estimate, "lower": c.lower, "upper": c.upper,
                            "privacy share": c.privacy_share} for n, c in rows])
        cells = pd.DataFrame({"": ["group x", "group y"], "with outcome (true)": [X, Y],
                              "without (true)": [nx - X, ny - Y],
                              "with outcome (noisy)": [table.cells[0], table.cells[2]],
                              "without (noisy)": [table.cells[1], table.cells[3]]})
        _table(cells, 1)
        st.plotly_chart(plots.intervals_figure(df.rename(columns={}), true_or), width="stretch")
        _table(df, 4)
        cov = _or_coverage(px, py, nx, ny, eps, mech, delta_used, level, sd)
        st.markdown(f"Coverage over {N_COVER:,} simulated studies: no privacy {cov['none'][0]:.1%}; noisy cells "
                    f"ignoring the noise {cov[False][0]:.1%}; with the noise variance {cov[True][0]:.1%} "
                    f"(± {2 * cov[True][1]:.1%}).")
        download_csv(df, "Download odds-ratio intervals (CSV)", "ratio_odds.csv", key="dl-ratio-odds")

elif ok and view == "Real example: poverty (ACS)":
    st.subheader("Who is more likely to be in poverty? (ACS 2019 excerpt)")
    frame = _acs_frame()
    if frame is None:
        st.info("The ACS excerpt (../shared/data) is not available on this machine, so this example is hidden.")
    else:
        st.markdown("Real people from the ACS 2019 PUMS (NIST excerpt, 20 areas). Outcome: income below the poverty "
                    "line (POVPIP < 100). People whose poverty status is not determined are left out. Choose two "
                    "groups to compare; the two counts get noise exactly as above (with your ε and seed).")
        c = st.columns(3)
        col = qp_selectbox("Compare groups by", "ratio_acs_col", list(R.POVERTY_GROUPINGS), container=c[0])
        names = R.POVERTY_GROUPINGS[col]
        codes = list(names)
        gx = qp_selectbox("group x", "ratio_acs_gx", codes, codes[1] if len(codes) > 1 else codes[0], container=c[1],
                          format_func=lambda v: names[v])
        gy = qp_selectbox("group y (reference)", "ratio_acs_gy", codes, codes[0], container=c[2],
                          format_func=lambda v: names[v])
        with guard("the poverty example"):
            x, n_x, y, n_y = R.poverty_counts(frame, col, gx, gy)
            gen = rng(81)
            rel = (R.laplace_noised_counts(x, y, epsilon=eps, rng=gen) if mech == "laplace"
                   else R.gaussian_noised_counts(x, y, epsilon=eps, delta=delta_used, rng=gen))
            if x < 1 or y < 1:
                raise DPInputError(f"a group has nobody below the poverty line (x = {x}, y = {y}): the relative "
                                   "risk is 0 or undefined there; choose other groups")
            truth = R.katz_interval(x, y, n_x, n_y, level=level)
            t42 = R.rr_confidence_interval(x, y, n_x, n_y, level=level)
            priv = R.rr_confidence_interval(rel.x_noisy, rel.y_noisy, n_x, n_y, level=level, noise_variance=cn.variance)
            tab = pd.DataFrame([
                {"": names[gx], "people (public)": n_x, "in poverty (confidential)": x, "noisy count": rel.x_noisy},
                {"": names[gy], "people (public)": n_y, "in poverty (confidential)": y, "noisy count": rel.y_noisy}])
            _table(tab, 1)
            rows = [("Katz on the confidential counts", truth), ("Theorem 4.2 on the confidential counts", t42),
                    ("Theorem 4.5 on the noisy counts (private)", priv)]
            df = pd.DataFrame([{"method": n, "estimate": ci.estimate, "lower": ci.lower, "upper": ci.upper}
                               for n, ci in rows])
            st.plotly_chart(plots.intervals_figure(df, None), width="stretch")
            m = st.columns(3)
            m[0].metric("RR without privacy", f"{t42.estimate:.3f}")
            m[1].metric("RR with privacy", f"{priv.estimate:.3f}")
            m[2].metric("share of variance from privacy", f"{priv.privacy_share:.1%}")
            st.caption("The confidential numbers are shown only to teach what the noise does; a real release "
                       "would publish only the noisy counts. Persons, not households; unweighted.")
            download_csv(df, "Download intervals (CSV)", "ratio_acs_poverty.csv", key="dl-ratio-acs")
            view_extra.update(col=col, gx=gx, gy=gy)  # only a view that worked gets a script

# ------------------------------------------------------------------ share / reproduce
if ok and (view != "Real example: poverty (ACS)" or view_extra):
    repro_params = {"view": view, "eps": float(eps), "mech": mech,
                    "delta": None if delta_used is None else float(delta_used),
                    "level": float(level), "nx": int(nx), "ny": int(ny),
                    "px": float(px) if x_obs is None else None, "py": float(py) if y_obs is None else None,
                    "x_obs": None if x_obs is None else float(x_obs), "y_obs": None if y_obs is None else float(y_obs)}
    st.divider()
    repro.share_panel("ratios", script=_repro_script(view, repro_params, view_extra),
                      note="This page does not use the income file chosen in the sidebar; the script needs only "
                           "the settings and the seed written in it.")
