"""Group means and parity: does differential privacy bury small groups, and what does stratifying cost?

Thin page: widgets -> dpcore.stratified / dpcore.coinpress -> ui.plots_stratified.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import coinpress as cp
from dpcore import scriptgen
from dpcore import stratified as sm
from dpcore.data import shared_data_path
from ui import plots_stratified as plots
from ui import repro
from ui.sidebar import current_dataset
from ui.common import (download_csv, guard, privacy_note, qp_number, qp_radio, qp_select_slider, qp_selectbox,
                       qp_slider,
                       qp_toggle, seed)

ACS_FILE = "acs2019_nist_excerpt_national.csv.gz"
SEX_NAMES = {1: "Male", 2: "Female"}
RACE_NAMES = {1: "White", 2: "Black", 3: "AmInd", 4: "AlaskaNat", 5: "AIAN tribes", 6: "Asian", 7: "NHPI",
              8: "Other race", 9: "Two+ races"}
HISP_NAMES = {0: "Not Hisp.", 1: "Mexican", 2: "Puerto Rican", 3: "Cuban", 4: "Other Hisp."}
# Public facts used as CoinPress inputs for the ACS view: standard deviations from the paper's
# Table 1 (ACS New York 2018, a different, published dataset), and generous prior intervals.
ACS_VARIABLES = {
    "PINCP (personal income, $)": dict(col="PINCP", sigma=76_027.3, prior=(-20_000.0, 500_000.0),
                                       clip=(0.0, 200_000.0), clip_max=1_000_000.0, step=5_000.0),
    "AGEP (age, years)": dict(col="AGEP", sigma=23.554, prior=(0.0, 100.0), clip=(0.0, 100.0),
                              clip_max=120.0, step=1.0),
}
ACS_GROUPINGS = {
    "SEX × RAC1P": ("SEX", "RAC1P"),
    "RAC1P": ("RAC1P",),
    "SEX": ("SEX",),
    "SEX × HISP": ("SEX", "HISP"),
    "SEX × RAC1P × HISP": ("SEX", "RAC1P", "HISP"),
}
DATA_SOURCES = ("Synthetic mixture (paper's model)", "Paper's NY group sizes", "ACS 2019 excerpt",
                "Sidebar dataset (choose grouping columns)")
NONE = "(none)"
DELTA = 1e-6
N_SIMS = 200


# ---------------------------------------------------------------------------------------------
# Cached data and computations
# ---------------------------------------------------------------------------------------------

@st.cache_data(show_spinner=False, max_entries=4)
def _acs_frame() -> pd.DataFrame | None:
    path = shared_data_path(ACS_FILE)
    if path is None:
        return None
    return pd.read_csv(path, usecols=["PINCP", "AGEP", "SEX", "RAC1P", "HISP", "EDU", "MSP"])


def _label(frame: pd.DataFrame, cols: tuple[str, ...]) -> pd.Series:
    names = {"SEX": SEX_NAMES, "RAC1P": RACE_NAMES, "HISP": HISP_NAMES}
    parts = [frame[c].astype(int).map(names[c]).fillna(frame[c].astype(str)) for c in cols]
    out = parts[0]
    for p in parts[1:]:
        out = out + " × " + p
    return out


@st.cache_data(show_spinner=False, max_entries=16)
def _acs_data(variable: str, grouping: str, data_seed: int) -> dict | None:
    """ACS excerpt: a random half is the 'private' file, the other half the public hold-out
    (only its group shares are used, for PubStrat), as in the authors' experiments."""
    frame = _acs_frame()
    if frame is None:
        return None
    col = ACS_VARIABLES[variable]["col"]
    df = frame.dropna(subset=[col])
    labels = _label(df, ACS_GROUPINGS[grouping]).to_numpy()
    pv, pg, _, pubg = sm.split_public_private(df[col].to_numpy(float), labels, public_fraction=0.5, rng=data_seed)
    return dict(values=pv, groups=np.asarray(pg).astype(str), public_groups=np.asarray(pubg).astype(str), sigma=None,
                sigma_global=None, shares=None)


@st.cache_data(show_spinner=False, max_entries=8)
def _sidebar_data(values: np.ndarray, labels: np.ndarray, data_seed: int) -> dict:
    sm.group_index(labels)  # the level cap, with a clear message
    pv, pg, _, pubg = sm.split_public_private(np.asarray(values, float), labels, public_fraction=0.5, rng=data_seed)
    return dict(values=pv, groups=pg, public_groups=pubg, sigma=None, sigma_global=None, shares=None)


@st.cache_data(show_spinner=False, max_entries=16)
def _synthetic_data(n: int, k: int, alpha: float, preset: str | None, data_seed: int) -> dict:
    """Paper's mixture: Dirichlet(alpha) shares (or a preset's shares), sigma_i ~ U(0.1, 2), mu_i ~ N(0, 1).
    The public hold-out is an independent sample of n/2 group labels from the same shares."""
    g = np.random.default_rng(data_seed)
    if preset is None:
        shares = g.dirichlet(np.full(k, alpha))
        sizes = sm.sizes_from_proportions(shares, n)
        names = [f"G{i + 1}" for i in range(k)]
    else:
        counts = sm.preset_counts(preset)
        names = list(counts)
        shares = np.array(list(counts.values()), dtype=float)
        shares /= shares.sum()
        sizes = sm.sizes_from_proportions(shares, n)
    mix = sm.gaussian_mixture(n, len(sizes), alpha, g, sizes=sizes)
    labels = np.array(names, dtype=object)[mix.groups]
    pub = np.array(names, dtype=object)[g.choice(len(names), size=max(n // 2, 1), p=shares)]
    order = np.argsort(names)  # sorted-label order used by dpcore
    return dict(values=np.asarray(mix.values), groups=labels.astype(str), public_groups=pub.astype(str),
                sigma=np.asarray(mix.sigmas)[order], sigma_global=cp.mixture_sigma(mix.sizes, mix.mus, mix.sigmas),
                shares=shares)


@st.cache_data(show_spinner=False, max_entries=32)
def _simulate(values: np.ndarray, groups: np.ndarray, public_groups: np.ndarray, sigma, sigma_global, *, epsilon: float,
              clip, prior: tuple[float, float], clamp: bool, sim_seed: int) -> dict:
    labels = sm.group_index(groups).labels
    pw = sm.public_weights(public_groups, labels)
    sim = cp.simulate_methods(values, groups, epsilon=epsilon, clip_range=clip, lower=prior[0], upper=prior[1],
                              sigma=sigma, sigma_global=sigma_global, public_w=pw, n_sims=N_SIMS, rng=sim_seed,
                              clamp_to_prior=clamp)
    return dict(sim=sim, public_weights=pw)


@st.cache_data(show_spinner=False, max_entries=32)
def _one_release(values: np.ndarray, groups: np.ndarray, epsilon: float, clip, release_seed: int):
    return sm.stratified_mean(values, groups, epsilon=epsilon, clip_range=clip, rng=release_seed)


def _memo(key: tuple, build):
    """Per-session memo keyed by a tuple of widget values (cheap to hash, unlike DataFrames): plotly
    figures are rebuilt only when a control they depend on changes."""
    store = st.session_state.setdefault("_strat_memo", {})
    if key not in store:
        if len(store) >= 48:
            store.pop(next(iter(store)))
        store[key] = build()
    return store[key]


@st.cache_data(show_spinner=False, max_entries=16)
def _bounds(n: int, k: int) -> tuple[pd.DataFrame, sm.NYExample]:
    return pd.DataFrame(sm.bound_curves(n, k, np.linspace(0.1, 1.0, 91))), sm.ny_race_example(0.13)


SYNTH_COLUMNS = ("age band", "education", "married", "income band")
SYNTH_SIZES = (5, 5, 2, 6)


@st.cache_data(show_spinner=False, max_entries=4)
def _acs_synth_table(data_seed: int) -> dict | None:
    """ACS excerpt (people with PINCP) coded into 4 small public domains; strata SEX x RAC1P.
    A random half is private, the other half only gives the public stratum shares."""
    frame = _acs_frame()
    if frame is None:
        return None
    df = frame.dropna(subset=["PINCP"])
    X = np.column_stack([
        np.digitize(df["AGEP"], [25, 35, 50, 65]),                 # 15-24, 25-34, 35-49, 50-64, 65+
        np.digitize(df["EDU"].fillna(0), [1, 8, 9, 10]),           # n/a, up to HS, some college, BA, graduate
        (df["MSP"] == 1).astype(int).to_numpy(),                   # married, spouse present
        np.digitize(df["PINCP"], [1, 10_000, 25_000, 50_000, 100_000]),  # <=0, <10k, <25k, <50k, <100k, 100k+
    ]).astype(np.int64)
    labels = _label(df, ("SEX", "RAC1P")).to_numpy().astype(str)
    gi = sm.group_index(labels)
    perm = np.random.default_rng(data_seed).permutation(len(df))
    priv, pub = perm[: len(df) // 2], perm[len(df) // 2:]
    pw = np.bincount(gi.codes[pub], minlength=gi.k) / pub.size
    return dict(X=X[priv], strata=gi.codes[priv], k=gi.k, labels=gi.labels, public_w=pw)


def _parity_draws(sim: cp.MethodsSimulation, method: str) -> np.ndarray:
    """Parity error (Def. 11, omega = 1/k) of every simulated release of one method (vectorised)."""
    t = sim.true_groups
    ok = t != 0
    rel = np.abs(sim.groups[method][:, ok] - t[ok]) / np.abs(t[ok])
    over = np.abs(sim.overall[method] - sim.true_overall) / abs(sim.true_overall) if sim.true_overall != 0 else 0.0
    return over / sim.true_groups.size + rel.sum(axis=1)


# ---------------------------------------------------------------------------------------------
# Share / reproduce: a script that recomputes the group-means view with dpcore
# ---------------------------------------------------------------------------------------------

_lit = scriptgen.literal  # every value below is written as a Python literal, never pasted text

_SYNTH_CODE = """\
# ---- the page's data: the paper's Gaussian mixture (the sidebar data above is not used) ----
N, K, ALPHA, PRESET = {n}, {k}, {alpha}, {preset}
g = np.random.default_rng(seed)
if PRESET is None:  # Dirichlet(alpha) group shares
    shares = g.dirichlet(np.full(K, ALPHA))
    names = [f"G{{i + 1}}" for i in range(K)]
else:  # the paper's published group sizes
    counts = sm.preset_counts(PRESET)
    names = list(counts)
    shares = np.array(list(counts.values()), dtype=float)
    shares /= shares.sum()
sizes = sm.sizes_from_proportions(shares, N)
mix = sm.gaussian_mixture(N, len(sizes), ALPHA, g, sizes=sizes)
private_values = np.asarray(mix.values)
private_groups = np.array(names, dtype=object)[mix.groups].astype(str)
# a separate public sample of N/2 group labels gives the PubStrat weights
public_groups = np.array(names, dtype=object)[g.choice(len(names), size=max(N // 2, 1), p=shares)].astype(str)
sigma = np.asarray(mix.sigmas)[np.argsort(names)]  # CoinPress is told each group's sigma (sorted labels)
sigma_global = cp.mixture_sigma(mix.sizes, mix.mus, mix.sigmas)
"""

_ACS_CODE = """\
# ---- the page's data: the ACS 2019 excerpt (20 PUMAs in 16 states; the sidebar data above is not used) ----
import pandas as pd
from dpcore.data import shared_data_path

ACS_FILE = {file}
VARIABLE = {col}
GROUP_COLUMNS = {cols}
CODE_NAMES = {names}
_path = shared_data_path(ACS_FILE)
if _path is None:
    raise SystemExit("this view uses the ACS excerpt from ../shared/data, which is not on this machine")
acs = pd.read_csv(_path, usecols=["PINCP", "AGEP", "SEX", "RAC1P", "HISP", "EDU", "MSP"])
acs = acs.dropna(subset=[VARIABLE])
parts = [acs[c].astype(int).map(CODE_NAMES[c]).fillna(acs[c].astype(str)) for c in GROUP_COLUMNS]
labels = parts[0]
for p in parts[1:]:
    labels = labels + " × " + p
# a random half is the private file; the other half only gives the public group shares (PubStrat)
private_values, private_groups, _, public_groups = sm.split_public_private(
    acs[VARIABLE].to_numpy(float), labels.to_numpy(), public_fraction=0.5, rng=seed)
private_groups = np.asarray(private_groups).astype(str)
public_groups = np.asarray(public_groups).astype(str)
sigma = sigma_global = {sigma}  # public: the paper's published NY 2018 standard deviation
"""

_SIDEBAR_CODE = """\
# ---- the page's data: the sidebar dataset above, grouped by its columns ----
GROUP_COLUMNS = {cols}
labels = frame[GROUP_COLUMNS[0]].astype(str)
for c in GROUP_COLUMNS[1:]:
    labels = labels + " × " + frame[c].astype(str)
sm.group_index(labels.to_numpy().astype(str))  # at most 100 groups
# a random half plays the private file; the other half only gives the group shares (PubStrat)
private_values, private_groups, _, public_groups = sm.split_public_private(
    np.asarray(values, float), labels.to_numpy().astype(str), public_fraction=0.5, rng=seed)
sigma = sigma_global = {sigma}  # the public guess of the standard deviation (CoinPress)
"""

_VIEW_CODE = """\

# ---- the view: {n_sims} simulated releases of every method (release 0 is the one the page shows) ----
EPSILON = {eps}
CLIP = {clip}  # a bound R (synthetic data: clip at R + sqrt(ln|G|/0.1)) or a public (low, high) range
PRIOR = {prior}  # CoinPress prior interval (public)
CLAMP = {clamp}
METHOD = {method}  # the method shown per group
labels = sm.group_index(private_groups).labels
public_w = sm.public_weights(public_groups, labels)
sim = cp.simulate_methods(private_values, private_groups, epsilon=EPSILON, clip_range=CLIP, lower=PRIOR[0],
                          upper=PRIOR[1], sigma=sigma, sigma_global=sigma_global, public_w=public_w,
                          n_sims={n_sims}, rng=seed + 1, clamp_to_prior=CLAMP)


def parity_draws(method):
    \"\"\"Parity error (paper Definition 11, omega = 1/k) of every simulated release of one method.\"\"\"
    t = sim.true_groups
    ok = t != 0
    rel = np.abs(sim.groups[method][:, ok] - t[ok]) / np.abs(t[ok])
    over = np.abs(sim.overall[method] - sim.true_overall) / abs(sim.true_overall) if sim.true_overall != 0 else 0.0
    return over / t.size + rel.sum(axis=1)


rho = cp.pure_dp_to_zcdp(EPSILON)
results["epsilon"] = EPSILON
results["coinpress_rho"] = rho
results["coinpress_epsilon_at_delta"] = {{"delta": {delta}, "epsilon": cp.zcdp_to_dp(rho, {delta})}}
results["people n"] = int(sim.counts.sum())
results["groups k"] = len(sim.labels)
results["smallest group"] = int(sim.counts.min())
results["largest group"] = int(sim.counts.max())
draws = sim.groups[METHOD]
results["group means"] = {{"method": METHOD, "groups": [
    {{"group": str(label), "size": int(sim.counts[i]), "share (public)": float(sim.weights[i]),
     "PubStrat share": float(public_w[i]), "true mean": float(sim.true_groups[i]), "release": float(draws[0, i]),
     "q05": float(np.quantile(draws[:, i], 0.05)), "q95": float(np.quantile(draws[:, i], 0.95)),
     "sd of releases": float(draws[:, i].std())}}
    for i, label in sorted(enumerate(sim.labels), key=lambda t: -sim.counts[t[0]])]}}
results["overall mean by method"] = {{}}
for m in cp.METHODS:
    e = sim.overall[m] - sim.true_overall
    ph = parity_draws(m)
    results["overall mean by method"][m] = {{
        "one release": float(sim.overall[m][0]), "true overall mean": sim.true_overall,
        "RMSE of overall": float(np.sqrt(np.mean(e ** 2))), "mean parity error": float(ph.mean()),
        "parity q05": float(np.quantile(ph, 0.05)), "parity q95": float(np.quantile(ph, 0.95))}}
"""


def _script_body(source: str, settings: dict) -> tuple[str, bool]:
    """The script body for the current settings and whether it uses the sidebar's data recipe.

    ``settings`` holds only widget values (numbers, option names from fixed lists, and for the sidebar
    dataset its column names); each is written with ``scriptgen.literal`` (``repr`` of plain data)."""
    head = "from dpcore import coinpress as cp\nfrom dpcore import stratified as sm\n\n"
    if source == DATA_SOURCES[2]:
        spec = ACS_VARIABLES[settings["var"]]
        cols = ACS_GROUPINGS[settings["grouping"]]
        names = {"SEX": SEX_NAMES, "RAC1P": RACE_NAMES, "HISP": HISP_NAMES}
        data_code = _ACS_CODE.format(file=_lit(ACS_FILE), col=_lit(spec["col"]), cols=_lit(tuple(cols)),
                                     names=_lit({c: names[c] for c in cols}), sigma=_lit(float(spec["sigma"])))
        uses_sidebar = False
    elif source == DATA_SOURCES[3]:
        data_code = _SIDEBAR_CODE.format(cols=_lit([str(c) for c in settings["columns"]]),
                                         sigma=_lit(float(settings["sigma"])))
        uses_sidebar = True
    else:
        data_code = _SYNTH_CODE.format(n=_lit(int(settings["n"])), k=_lit(int(settings["k"])),
                                       alpha=_lit(float(settings["alpha"])),
                                       preset=_lit(None if settings["preset"] is None else str(settings["preset"])))
        uses_sidebar = False
    clip = settings["clip"]
    view = _VIEW_CODE.format(n_sims=_lit(N_SIMS), eps=_lit(float(settings["epsilon"])),
                             clip=_lit(float(clip) if isinstance(clip, float) else tuple(float(c) for c in clip)),
                             prior=_lit(tuple(float(p) for p in settings["prior"])), clamp=_lit(bool(settings["clamp"])),
                             method=_lit(str(settings["method"])), delta=_lit(DELTA))
    return head + data_code + view, uses_sidebar


def _view_script(source: str, settings: dict) -> str | None:
    """The runnable script (None when the data cannot be rebuilt by a script). Built from literals, cheap."""
    body, uses_sidebar = _script_body(source, settings)
    if uses_sidebar:
        return repro.script_for(title="Group means and parity", body=body)
    try:  # this view draws its own data: the script rebuilds the app's default sidebar data, unused
        return scriptgen.build_script(title="Group means and parity", dataset_key=scriptgen.DEFAULT_DATASET_KEY,
                                      body=body, seed=seed())
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------
# Page
# ---------------------------------------------------------------------------------------------

st.title("Group means and parity")
st.markdown(
    "If an agency publishes one differentially private average **per group** (for example per race × sex "
    "group), each group's average gets its own noise. The noise needed to hide one person is about "
    "*(range of values) ÷ (people in the group) ÷ ε*, so **small groups get much more noise** than large ones. "
    "Publishing a single overall average instead hides group differences: every group is then told the same "
    "number. This page shows both effects, following Rosenblatt, Stoyanovich & Musco (AAAI 2024): "
    "**stratifying** (one private mean per group, then a weighted average of them for the overall mean) "
    "keeps each group's estimate about *its own* people, at a modest cost for the overall mean."
)
privacy_note(
    "two datasets are neighbours if one person's value is replaced (they stay in their group). Because the "
    "groups do not overlap, all group means together cost ε once (parallel composition); the overall mean "
    "recombined from them costs nothing more.",
    "the number of people n, every group label and group size, the clip range / bound R, the CoinPress "
    "prior interval and σ, and the combination weights (group shares, or shares from a public hold-out "
    "sample for PubStrat). If a person's group could change too, the same release is 2ε-DP.",
)

controls = st.container(border=True)
c1, c2, c3 = controls.columns(3)
source = qp_radio("Data", "strat_data", DATA_SOURCES, container=c1,
                  help="Synthetic data follow the paper's model; the NY sizes are the paper's Table 3; the ACS "
                       "excerpt is real (20 PUMAs).")
epsilon = qp_select_slider("Privacy budget ε", "strat_eps", [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0],
                           1.0, container=c2, help="Smaller ε = stronger privacy = more noise.")
rho = cp.pure_dp_to_zcdp(epsilon)
c2.caption(f"Laplace methods: ε = {epsilon:g} (pure DP). CoinPress methods: ρ = ε²/2 = **{rho:.4g}** zCDP "
           f"→ (ε = {cp.zcdp_to_dp(rho, DELTA):.3g}, δ = {DELTA:g})-DP.")
method = qp_selectbox("Method shown per group", "strat_method", list(cp.METHODS), "Stratified Laplace",
                      container=c3, help="Global methods give every group the same (overall) number.")
clamp = qp_toggle("Clamp CoinPress estimates into the prior interval", "strat_clamp", False, container=c3,
                  help="Free post-processing (not in the paper): stops a tiny group's estimate from flying far "
                       "outside the public prior interval.")

ok = True
data: dict | None = None
clip = None
prior = (-3.0, 3.0)
value_label = "value"
script_settings: dict = {}  # the data choices the generated script needs (widget values only)
with guard("the data"):
    if source == DATA_SOURCES[2]:
        var = qp_selectbox("Variable", "strat_var", list(ACS_VARIABLES), container=c1)
        grouping = qp_selectbox("Groups", "strat_grp", list(ACS_GROUPINGS), container=c1)
        spec = ACS_VARIABLES[var]
        hi = qp_slider("Clip values to at most (public)", "strat_cliphi", float(spec["step"]), spec["clip_max"],
                       spec["clip"][1], spec["step"], container=c2,
                       help="Chosen without looking at the data. Values above are set to this; below 0 set to 0.")
        clip = (0.0, float(hi))
        prior = spec["prior"]
        value_label = var
        data = _acs_data(var, grouping, seed())
        if data is None:
            st.warning("The ACS excerpt (../shared/data) is not available on this machine; choose another data source.")
            ok = False
        else:
            st.caption("**ACS 2019 excerpt: 20 PUMAs in 16 states (NIST Diverse Communities), not a state.** "
                       "Group means here describe those 20 areas only. A random half of the records plays the "
                       "private file; the other half is used only for its group shares (PubStrat). Means are "
                       "unweighted (the person weights PWGTP are not used). CoinPress uses "
                       f"σ = {spec['sigma']:,} (published NY 2018 figure) and prior interval {spec['prior']}.")
            data = dict(data, sigma=spec["sigma"], sigma_global=spec["sigma"])
            script_settings = dict(var=var, grouping=grouping)
    elif source == DATA_SOURCES[3]:
        ds = current_dataset()
        cols = [] if ds.frame is None else [str(c) for c in ds.frame.columns if str(c) != ds.column]
        if not cols:
            st.info(f"The sidebar dataset ({ds.name}) has no other columns to group by. Choose a file with group "
                    "columns in the sidebar (a real survey file or your own upload).")
            ok = False
        else:
            g1 = qp_selectbox("Group by", "strat_col1", cols, container=c1)
            g2 = qp_selectbox("… and by", "strat_col2", [NONE] + [c for c in cols if c != g1], NONE, container=c1)
            hi = qp_number("Clip values to at most (public)", "strat_cliphi_ds", 200_000.0, min_value=1.0,
                           max_value=1e12, container=c2,
                           help="Choose it without looking at the data (e.g. a published top-code).")
            clip = (0.0, float(hi))
            sig = qp_number("Public guess of the standard deviation σ (CoinPress)", "strat_sigma_ds",
                            float(hi) / 4, min_value=1e-9, max_value=1e12, container=c2)
            prior = (0.0, float(hi))
            value_label = ds.column
            if ds.confidential:
                st.warning("This is your confidential file: simulating releases on it is itself not private. "
                           "Plan on synthetic or public data; use the real file only for the one counted release.")
            frame = ds.frame
            key_cols = [g1] if g2 == NONE else [g1, g2]
            lab = frame[key_cols[0]].astype(str)
            for c in key_cols[1:]:
                lab = lab + " × " + frame[c].astype(str)
            data = _sidebar_data(ds.values, lab.to_numpy().astype(str), seed())
            data = dict(data, sigma=float(sig), sigma_global=float(sig))
            script_settings = dict(columns=key_cols, sigma=float(sig))
            st.caption(f"{ds.name}: a random half plays the private file; the other half is used only for its group "
                       "shares (PubStrat). This mimics the paper's experiment: in a real release the shares must come "
                       "from a published source (e.g. census tables), never from the confidential file.")
    else:
        n = qp_select_slider("Number of people n", "strat_n", [1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000,
                                                                 196_967], 10_000, container=c1)
        if source == DATA_SOURCES[0]:
            k = qp_slider("Number of groups k", "strat_k", 2, 40, 9, container=c1)
            alpha = qp_select_slider("Dirichlet α (group-size spread)", "strat_alpha",
                                     [0.05, 0.1, 0.13, 0.2, 0.3, 0.5, 0.7, 1.0, 2.0, 5.0, 10.0], 0.3, container=c1,
                                     help="Small α: one or two big groups and many tiny ones. Large α: similar sizes.")
            preset = None
        else:
            preset = qp_selectbox("Group sizes", "strat_preset", list(sm.PRESETS), container=c1)
            k, alpha = len(sm.PRESETS[preset]), 1.0
        R = qp_slider("Bound R on group means (public)", "strat_R", 1.0, 10.0, 3.0, 0.5, container=c2,
                      help="Laplace clips at ±(R + √(ln|G|/γ)), γ = 0.1 (paper Eq. 3); CoinPress starts from [−R, R].")
        clip, prior = float(R), (-float(R), float(R))
        data = _synthetic_data(int(n), int(k), float(alpha), preset, seed())
        script_settings = dict(n=int(n), k=int(k), alpha=float(alpha), preset=preset)
        st.caption(f"Values: group i draws N(μᵢ, σᵢ) with μᵢ ~ N(0, 1), σᵢ ~ U(0.1, 2) (paper Appendix B). "
                   "CoinPress is told each group's σᵢ (and the mixture's σ for the global run). A separate public "
                   "sample of n/2 group labels gives the PubStrat weights.")
    if data is not None and ok:
        sm.group_index(data["groups"])  # validates the level cap with a clear message
    else:
        ok = False

DATA_KEYS = ("strat_n", "strat_k", "strat_alpha", "strat_preset", "strat_R", "strat_var", "strat_grp",
             "strat_cliphi", "strat_col1", "strat_col2", "strat_cliphi_ds", "strat_sigma_ds")
view_key = (source, float(epsilon), bool(clamp), seed(), str(clip), str(prior), value_label,
            tuple(str(st.session_state.get(k_)) for k_ in DATA_KEYS),
            (current_dataset().name, current_dataset().n, float(np.sum(current_dataset().values)))
            if source == DATA_SOURCES[3] else "")

VIEWS = ("Group means", "Trends (paper figures)", "Theory: cost of stratifying", "Privacy accounting",
         "Synthetic data (illustration)")
# One view per run (a URL-backed choice, so a link opens the same view); rendering only the chosen
# view keeps slider reruns fast.
view = qp_radio("Show", "strat_view", VIEWS, horizontal=True, label_visibility="collapsed")
st.divider()

# ---- Tab 1: group means --------------------------------------------------------------------
if view == VIEWS[0]:
    if ok and data is not None:
        with guard("the group means"):
            out = _simulate(data["values"], data["groups"], data["public_groups"], data["sigma"], data["sigma_global"],
                            epsilon=float(epsilon), clip=clip, prior=prior, clamp=bool(clamp), sim_seed=seed() + 1)
            sim: cp.MethodsSimulation = out["sim"]
            k_obs = len(sim.labels)
            m1, m2, m3, m4 = st.columns(4)
            m1.metric("people n", f"{int(sim.counts.sum()):,}")
            m2.metric("groups k", k_obs)
            m3.metric("smallest group", f"{int(sim.counts.min()):,}")
            m4.metric("largest group", f"{int(sim.counts.max()):,}")
            draws = sim.groups[method]
            release = draws[0]
            table = pd.DataFrame({
                "group": [str(x) for x in sim.labels], "size": sim.counts, "share (public)": sim.weights,
                "PubStrat share": out["public_weights"], "true mean": sim.true_groups, "release": release,
                "q05": np.quantile(draws, 0.05, axis=0), "q95": np.quantile(draws, 0.95, axis=0),
                "sd of releases": draws.std(axis=0),
            }).sort_values("size", ascending=False)
            st.subheader(f"Each group's mean: {method}")
            st.markdown(
                "Black diamonds are the true group means (not private). Dots are one private release "
                f"(seed {seed()}); the bars cover the middle 90 % of {N_SIMS} simulated releases, so you can "
                "see how far a release can wander. Groups are sorted from largest to smallest: "
                "**the bars grow as groups shrink.**" if method not in cp.GLOBAL_METHODS else
                "A global method publishes one number, so every group is told the overall mean: the bars are "
                "short, but the dots miss groups whose true mean differs from the overall one.")
            span = prior if isinstance(clip, float) else (min(prior[0], clip[0]), max(prior[1], clip[1]))
            lo_ = max(span[0], float(min(table["q05"].min(), table["true mean"].min())))
            hi_ = min(span[1], float(max(table["q95"].max(), table["true mean"].max())))
            pad = 0.1 * max(hi_ - lo_, 1e-9)
            y_range = (lo_ - pad, hi_ + pad)
            off = table[(table["q05"] < y_range[0]) | (table["q95"] > y_range[1])]
            st.plotly_chart(_memo(view_key + ("groups", method), lambda: plots.group_means_figure(
                table, method, y_range=y_range, value_label=value_label)), width="stretch")
            if len(off):
                st.caption(f"{len(off)} group(s) have releases beyond the chart's range (tiny groups: "
                           f"{', '.join(off['group'].astype(str).head(6))}); see the table.")
            if not isinstance(clip, float) and "Laplace" in method:
                st.caption(f"Part of the gap between dot and diamond is **clipping bias**: values above "
                           f"{clip[1]:,.0f} are set to {clip[1]:,.0f} before averaging, which lowers the mean of groups "
                           "with many high values. A higher clip limit means less bias but more noise.")
            tiny = table[table["size"] <= 1]
            if len(tiny):
                st.info(f"Group(s) {', '.join(tiny['group'])} have a single member: the release is that person's "
                        "clipped value plus noise as wide as the whole clip range divided by ε, so it is mostly "
                        "noise (nothing is divided by zero; a group with no members would get the midpoint of "
                        "the clip range, which uses no data).")
            st.dataframe(table.round(4), hide_index=True, width="stretch")
            download_csv(table, "Download group means (CSV)", "stratified_group_means.csv", key="strat_dl_groups")

            st.subheader("The overall mean from each method")
            rows, perr, errs = [], [], []
            for m in cp.METHODS:
                e = sim.overall[m] - sim.true_overall
                ph = _parity_draws(sim, m)
                cost = (f"ε = {epsilon:g}" if "Laplace" in m else
                        f"ρ = {rho:.3g} (ε = {cp.zcdp_to_dp(rho, DELTA):.3g}, δ = {DELTA:g})")
                rows.append({"method": m, "privacy cost": cost, "one release": float(sim.overall[m][0]),
                             "true overall mean": sim.true_overall, "RMSE of overall": float(np.sqrt(np.mean(e ** 2))),
                             "mean parity error": float(ph.mean())})
                perr.append({"method": m, "mean": float(ph.mean()), "q05": float(np.quantile(ph, 0.05)),
                             "q95": float(np.quantile(ph, 0.95))})
                errs.append(pd.DataFrame({"method": m, "error": e}))
            summary = pd.DataFrame(rows)
            st.dataframe(summary, hide_index=True, width="stretch",
                         column_config={"one release": st.column_config.NumberColumn(format="%.5g"),
                                        "true overall mean": st.column_config.NumberColumn(format="%.5g"),
                                        "RMSE of overall": st.column_config.NumberColumn(format="%.4g"),
                                        "mean parity error": st.column_config.NumberColumn(format="%.4g")})
            download_csv(summary, "Download method summary (CSV)", "stratified_methods.csv", key="strat_dl_methods")
            errs_df = pd.concat(errs, ignore_index=True)
            a, b = st.columns(2)
            with a:
                st.markdown("**Error of the overall mean** (simulated releases)")
                st.plotly_chart(_memo(view_key + ("overall",), lambda: plots.overall_errors_figure(errs_df)),
                                width="stretch")
                download_csv(errs_df.assign(release=errs_df.groupby("method").cumcount())[["method", "release", "error"]],
                             "Download the simulated errors (CSV)", "stratified_overall_errors.csv",
                             key="strat_dl_overall")
            with b:
                st.markdown("**Parity error** φ = (1/k)·|overall rel. error| + Σ groups |rel. error|")
                st.plotly_chart(_memo(view_key + ("parity",), lambda: plots.parity_figure(pd.DataFrame(perr))),
                                width="stretch")
                download_csv(pd.DataFrame(perr), "Download the parity errors (CSV)", "stratified_parity.csv",
                             key="strat_dl_parity")
            st.caption("Parity error (paper Definition 11) adds up every group's relative error, so it grows with "
                       "the number of groups; lower is fairer. Relative errors explode when a group's true mean is "
                       "near 0 — that is why the paper reports parity only on real data. The overall estimates of "
                       "StratCoinpress and PubStratCoinpress use the same group releases, combined with different "
                       "public weights.")
            rel = _one_release(data["values"], data["groups"], float(epsilon), clip, seed() + 2)
            for note in rel.notes:
                st.caption("Note: " + note)

# ---- Tab 2: trends ---------------------------------------------------------------------------
SWEEPS = {
    "error vs n (paper Fig. 3)": ("n", [2000, 4000, 6000, 8000, 10_000], "n (private records)", True),
    "error vs k (paper Fig. 7)": ("k", [2, 3, 6, 9, 12, 18], "number of groups k", False),
    "error vs Dirichlet α (paper Fig. 6)": ("alpha", [0.1, 0.2, 0.3, 0.5, 1.0, 3.0, 10.0], "Dirichlet α", True),
    "error vs ε": ("epsilon", [0.1, 0.2, 0.5, 1.0, 2.0, 5.0], "ε (CoinPress: ρ = ε²/2)", True),
    "ACS excerpt: error and parity vs number of groups (paper Fig. 2)": ("acs", None, "number of groups k", True),
    "ACS excerpt (SEX × RAC1P): error and parity vs ε": ("acs_eps", [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0], "ε", True),
}


def _summarise(rows: list[dict], x: str, y: str) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    g = df.groupby([x, "method"], sort=False)[y]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["se"] = out["std"].fillna(0) / np.sqrt(out["count"])
    return out.sort_values([x])


if view == VIEWS[1]:
    st.markdown(
        "These sweeps re-run the paper's experiments on fresh data for every run: a new synthetic mixture "
        "(2n records: n private, n as the public hold-out for PubStrat) or a new random half of the ACS excerpt. "
        "Lines are averages over runs; bars are ±1 standard error. The other settings come from the controls above.")
    sweep = qp_selectbox("Experiment", "strat_sweep", list(SWEEPS))
    runs = qp_slider("Runs per point", "strat_runs", 5, 50, 20, 5)
    param, grid, x_title, log_x = SWEEPS[sweep]
    eps_shown = grid if param in ("epsilon", "acs_eps") else [float(epsilon)]
    st.caption("CoinPress budgets in these runs: " + "; ".join(
        f"ε = {e:g} → ρ = {cp.pure_dp_to_zcdp(e):.4g} → (ε = {cp.zcdp_to_dp(cp.pure_dp_to_zcdp(e), DELTA):.3g}, "
        f"δ = {DELTA:g})" for e in eps_shown))
    if param in ("acs", "acs_eps"):
        base = dict(var=qp_selectbox("ACS variable", "strat_sweepvar", list(ACS_VARIABLES)), eps=float(epsilon))
    else:
        base = dict(n=int(st.session_state.get("strat_n", 10_000)) if source in DATA_SOURCES[:2] else 10_000,
                    k=int(st.session_state.get("strat_k", 9)), alpha=float(st.session_state.get("strat_alpha", 0.3)),
                    eps=float(epsilon), R=float(st.session_state.get("strat_R", 3.0)))
        base["n"] = min(base["n"], 20_000)
    key = (sweep, runs, tuple(sorted(base.items())), bool(clamp), seed())
    store = st.session_state.setdefault("strat_sweeps", {})
    if st.button("Run experiment", key="strat_run", type="primary"):
        bar = st.progress(0.0, text="starting…")
        with guard("the experiment"):
            if param == "acs_eps":
                frame = _acs_frame()
                if frame is None:
                    raise ValueError("the ACS excerpt (../shared/data) is not available on this machine")
                spec = ACS_VARIABLES[base["var"]]
                df = frame.dropna(subset=[spec["col"]])
                rows = cp.real_epsilon_sweep(df[spec["col"]].to_numpy(float), _label(df, ("SEX", "RAC1P")).to_numpy(),
                                             grid, clip_range=spec["clip"], lower=spec["prior"][0],
                                             upper=spec["prior"][1], sigma=spec["sigma"], runs=runs, rng=seed(),
                                             clamp_to_prior=bool(clamp), progress=lambda f, t: bar.progress(f, text=t))
            elif param == "acs":
                frame = _acs_frame()
                if frame is None:
                    raise ValueError("the ACS excerpt (../shared/data) is not available on this machine")
                spec = ACS_VARIABLES[base["var"]]
                df = frame.dropna(subset=[spec["col"]])
                strata = []
                for name, cols in sorted(ACS_GROUPINGS.items(), key=lambda kv: len(kv[1])):
                    strata.append((name, _label(df, cols).to_numpy()))
                strata.append(("RAC1P × HISP", _label(df, ("RAC1P", "HISP")).to_numpy()))
                rows = cp.grouping_sweep(df[spec["col"]].to_numpy(float), strata, epsilon=base["eps"],
                                         clip_range=spec["clip"], lower=spec["prior"][0], upper=spec["prior"][1],
                                         sigma=spec["sigma"], runs=runs, rng=seed(), clamp_to_prior=bool(clamp),
                                         progress=lambda f, t: bar.progress(f, text=t))
            else:
                rows = cp.synthetic_sweep(param, grid, n=base["n"], k=base["k"], alpha=base["alpha"],
                                          epsilon=base["eps"], R=base["R"], runs=runs, rng=seed(),
                                          clamp_to_prior=bool(clamp), progress=lambda f, t: bar.progress(f, text=t))
            store[key] = rows
        bar.empty()
    rows = store.get(key)
    if rows is None:
        st.info("Press **Run experiment** (takes a few seconds; a progress bar shows how far it is).")
    else:
        if param == "acs_eps":
            s1 = _summarise(rows, "epsilon", "error")
            s2 = _summarise(rows, "epsilon", "parity error")
            a, b = st.columns(2)
            a.plotly_chart(plots.sweep_figure(s1, "epsilon", log_x=True, x_title="ε (CoinPress: ρ = ε²/2)",
                                              y_title="normalised error |est − mean| / mean"), width="stretch")
            b.plotly_chart(plots.sweep_figure(s2, "epsilon", log_x=True, x_title="ε (CoinPress: ρ = ε²/2)",
                                              y_title="parity error (Def. 11)"), width="stretch")
            st.caption("More budget, less error for every method; the parity error of the global methods stops "
                       "falling (it is the gap between the groups' true means and the overall mean), the stratified "
                       "ones keep improving.")
            out_df = pd.DataFrame(rows)
        elif param == "acs":
            s1 = _summarise(rows, "k", "error")
            s2 = _summarise(rows, "k", "parity error")
            a, b = st.columns(2)
            a.plotly_chart(plots.sweep_figure(s1, "k", x_title=x_title, y_title="normalised error |est − mean| / mean"),
                           width="stretch")
            b.plotly_chart(plots.sweep_figure(s2, "k", x_title=x_title, y_title="parity error (Def. 11)"),
                           width="stretch")
            st.caption("Paper Fig. 2 shape: stratified methods keep the parity error low while global methods, "
                       "which tell every group the overall mean, have a parity error that grows with k. Income "
                       "(PINCP) is the hard case the paper mentions: wide and long-tailed. Groupings used: "
                       + ", ".join(sorted({f"{r['grouping']} (k={r['k']})" for r in rows})))
            out_df = pd.DataFrame(rows)
        else:
            s = _summarise(rows, param, "error")
            st.plotly_chart(plots.sweep_figure(s, param, log_x=log_x, x_title=x_title,
                                               y_title="|overall estimate − true mean|"), width="stretch")
            st.caption("Paper Figs. 3/6/7 shape: the stratified methods pay for splitting the data (more noise in "
                       "small groups) and converge to the global ones as n grows; more groups or smaller α (more tiny "
                       "groups) cost more. Laplace curves use ε, CoinPress curves ρ = ε²/2. Parity error is not "
                       "shown on synthetic data (the paper does not either): group means near 0 make relative "
                       "errors arbitrarily large; see the ACS experiments for parity.")
            out_df = pd.DataFrame(rows)
        download_csv(out_df, "Download experiment runs (CSV)", "stratified_experiment.csv", key="strat_dl_sweep")

# ---- Tab 3: theory ---------------------------------------------------------------------------
if view == VIEWS[2]:
    st.markdown(
        "With group-size weights, stratifying adds noise in proportion to **Σᵢ ln|Gᵢ|** (sum over groups of the "
        "log of the group size) where a single overall mean has **ln n** (Proposition 9). Equal-sized groups are "
        "the worst case, k·ln(n/k) (Lemma 12). If group shares look like a draw from a Dirichlet(α) distribution, "
        "Theorem 10 gives the expected value k(ψ(α) − ψ(kα) + ln n) (ψ = digamma). Small α (a few dominant "
        "groups) pushes it toward the informal lower bound k + ln n — that is the paper's Figure 1.")
    t1, t2 = st.columns(2)
    tn = qp_number("n", "strat_thn", 196_967, min_value=2, max_value=10_000_000, step=1000, container=t1)
    tk = qp_number("k", "strat_thk", 9, min_value=2, max_value=100, step=1, container=t2)
    with guard("the bounds"):
        curves, ex = _bounds(int(tn), int(tk))
        actual = ex.actual if (int(tn), int(tk)) == (ex.n, ex.k) else None
        st.plotly_chart(_memo(("bounds", int(tn), int(tk)), lambda: plots.bounds_figure(
            curves, alpha_mark=0.13, actual=actual)), width="stretch")
        st.caption("The paper plots α from 0.2 to 1. For very small α the expected value can fall below the "
                   "lower bound (and below 0): the Dirichlet model allows 'groups' of less than one person "
                   "(gᵢ·n < 1), which real data cannot have, so read the left end of the curve with care.")
        download_csv(curves, "Download Figure 1 curves (CSV)", "stratified_bounds.csv", key="strat_dl_bounds")
        st.subheader("The paper's New York example (RACE, k = 9)")
        st.markdown(
            f"ACS New York 2018, n = {ex.n:,}, nine race groups with shares "
            f"{', '.join(f'{p:.3f}' for p in np.sort(ex.proportions)[::-1][:5])}, … The paper fits α ≈ 0.13 and "
            "says the expected cost of stratifying is “~80 % better than the worst case, relative to the best "
            "case”. What we compute:")
        st.dataframe(pd.DataFrame({
            "quantity": ["worst case k ln(n/k)", "expected at α = 0.13 (Thm. 10)", "paper's best case (k−1) + ln(n−k)",
                         "informal lower bound k + ln n", "actual Σ ln|Gᵢ| of the real sizes",
                         "(worst − expected) / (worst − best)", "(worst − actual) / (worst − best)",
                         "symmetric-Dirichlet MLE of α for this vector"],
            "value": [ex.worst, ex.expected, ex.best, ex.lower, ex.actual, ex.improvement, ex.improvement_actual,
                      ex.alpha_mle]}).round(3), hide_index=True)
        st.info(f"**The “~80 %” does not reproduce.** At α = 0.13 the improvement is {ex.improvement:.0%}, and for "
                f"the real group sizes it is only {ex.improvement_actual:.0%}. The paper does not say how α was "
                f"fitted; a maximum-likelihood fit on this vector gives α ≈ {ex.alpha_mle:.2f}, not 0.13. We show "
                "our numbers and quote 80 % only as the paper's claim.")

# ---- Tab 4: privacy accounting ---------------------------------------------------------------
if view == VIEWS[3]:
    with guard("the accounting"):
        k_acc = len(sm.group_index(data["groups"]).labels) if (ok and data is not None) else 9
        acc = sm.privacy_accounting(float(epsilon), k_acc)
        for line in acc.lines:
            st.markdown("- " + line)
        table = pd.DataFrame({
            "what is released": ["all group means (Laplace)", "+ overall mean recombined from them",
                                 "+ a fresh overall mean on top", "group means if a person's group can change",
                                 "all group means (CoinPress, zCDP)", "+ a fresh overall CoinPress mean"],
            "total cost": [f"ε = {acc.all_groups:g}", f"ε = {acc.all_groups:g} (+0)", f"ε = {acc.groups_plus_fresh_global:g}",
                           f"ε = {acc.if_group_can_change:g}",
                           f"ρ = {rho:.4g} → ε = {cp.zcdp_to_dp(rho, DELTA):.3g} at δ = {DELTA:g}",
                           f"ρ = {2 * rho:.4g} → ε = {cp.zcdp_to_dp(2 * rho, DELTA):.3g} at δ = {DELTA:g}"]})
        st.dataframe(table, hide_index=True, width="stretch")
        st.caption("zCDP to (ε, δ): ε = ρ + 2√(ρ ln(1/δ)) (Bun & Steinke 2016, Prop. 1.3). The paper writes "
                   "ε√(2 ln(1/δ)) and drops the ρ term; we show the exact conversion. ε-DP implies ε²/2-zCDP, which "
                   "is how the CoinPress budget is matched to the Laplace ε on this page.")

# ---- Tab 5: stretch, the light stratified synthesizer ------------------------------------------
if view == VIEWS[4]:
    st.markdown(
        "The paper also stratifies **synthetic data**: fit one private data generator per group instead of one for "
        "everybody. Here is a light stand-in (not the paper's MST/GEM/AIM): each model measures noisy two-way "
        "tables of neighbouring columns (a chain) and samples new records from them. The *one model* version "
        "chains group → age → education → married → income, so income only sees the group through the other "
        "columns; the *stratified* version fits the chain age → … → income separately inside each SEX × RAC1P "
        "group (each with the full ε, the groups are disjoint) and samples each group in proportion to public "
        "shares. We compare the mean of every column in every group with the real data: the parity error "
        "(Definition 11, averaged over the 4 columns) and the largest relative error of any group mean.")
    st.caption("Privacy: replacing one person changes each of the m two-way tables in at most 2 cells, so every cell "
               "gets Laplace noise of scale 2m/ε (m = 4 for one model, 3 per group). Column categories are public. "
               "ACS excerpt only (20 PUMAs, not a state); a random half is the private file, the other half gives "
               "the public group shares.")
    syn_runs = qp_slider("Runs per ε", "strat_synruns", 1, 10, 3, 1)
    skey = ("synth", syn_runs, seed())
    sstore = st.session_state.setdefault("strat_synth", {})
    if st.button("Run synthesizers", key="strat_synrun"):
        bar2 = st.progress(0.0, text="starting…")
        with guard("the synthetic data"):
            tab = _acs_synth_table(seed())
            if tab is None:
                raise ValueError("the ACS excerpt (../shared/data) is not available on this machine")
            sstore[skey] = sm.synthesizer_sweep(tab["X"], SYNTH_SIZES, tab["strata"], tab["k"],
                                                public_w=tab["public_w"], epsilons=[0.05, 0.1, 0.5, 1.0, 5.0],
                                                runs=syn_runs, rng=seed(),
                                                progress=lambda f, t: bar2.progress(f, text=t))
        bar2.empty()
    srows = sstore.get(skey)
    if srows is None:
        st.info("Press **Run synthesizers** (a few seconds).")
    else:
        a, b = st.columns(2)
        a.plotly_chart(plots.sweep_figure(_summarise(srows, "epsilon", "parity error"), "epsilon", log_x=True,
                                          log_y=False, x_title="ε", y_title="parity error of means"), width="stretch")
        b.plotly_chart(plots.sweep_figure(_summarise(srows, "epsilon", "max disparity"), "epsilon", log_x=True,
                                          log_y=True, x_title="ε", y_title="max disparity (largest group error)"),
                       width="stretch")
        st.caption("Paper Figs. 5 and 7a shape: the stratified synthesizer has the lower parity error, and the largest "
                   "group error falls as ε grows. Tiny groups (a few people) stay noisy at every ε.")
        download_csv(pd.DataFrame(srows), "Download synthesizer runs (CSV)", "stratified_synthesizer.csv",
                     key="strat_dl_synth")

# ---- Share or reproduce (every view) -------------------------------------------------------------
st.divider()
if ok and data is not None and script_settings:
    script_settings.update(epsilon=float(epsilon), clip=clip, prior=prior, clamp=bool(clamp), method=method)
    script = _memo(view_key + ("script", method, repro.dataset_key()), lambda: _view_script(source, script_settings))
    repro.share_panel("stratified", script=script,
                      note="The script recomputes the **Group means** view (the 200 simulated releases of every "
                           "method, the per-group table and the overall-mean summary) for the settings above.")
else:
    st.markdown("#### Share or reproduce this view")
    st.caption("Every choice on this page is kept in the address bar: this link opens the same view.")
    st.code(repro.current_link("stratified"), language=None)
