"""Choose epsilon before a release: accuracy first, budget first, what epsilon means, real release, share.

Thin page: widgets -> dpcore.planner / budget / risk / release / scriptgen -> ui.plots_planner.
"""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import budget as B
from dpcore import planner as P
from dpcore import release as R
from dpcore import risk
from ui import plots_planner as plots
from ui import repro
from ui.common import download_csv, guard, privacy_note, qp_number, qp_radio, qp_selectbox, qp_slider, seed
from ui.sidebar import current_dataset

PLAN = "Plan: choose ε on planning data"
RELEASE = "Release: make the real release (spends budget)"
RANDOM_GROUPS = "(random groups A/B/C)"
DEFAULT_KINDS = ["gini", "percentiles", "group_means", "ratio"]
DEFAULT_TARGETS = {"gini": (10, 90), "percentiles": (10, 90), "group_means": (5, 95), "ratio": (10, 95),
                   "mean": (5, 95), "count": (5, 95)}
N_PLAUSIBLE = 2000
EPS_SLIDER_MIN = 0.001


# ---------------------------------------------------------------------------------------------
# URL-backed multiselect (the shared qp_* helpers have none)
# ---------------------------------------------------------------------------------------------

def _qp_multiselect(label: str, key: str, options: list[str], default: list[str], **kwargs) -> list[str]:
    if key not in st.session_state:
        raw = st.query_params.get(key)
        chosen = [v for v in raw.split(",") if v in options] if raw else list(default)
        st.session_state[key] = chosen
    out = st.multiselect(label, options, key=key, **kwargs)
    text = ",".join(out)
    if st.query_params.get(key) != text:
        st.query_params[key] = text
    return list(out)


# ---------------------------------------------------------------------------------------------
# Cached computations (keyed by a fingerprint of the data and the parameters)
# ---------------------------------------------------------------------------------------------

def _fingerprint(values: np.ndarray, groups: np.ndarray | None) -> str:
    h = hashlib.sha1(np.ascontiguousarray(values).tobytes())
    if groups is not None:
        h.update("\x1f".join(map(str, groups[:: max(1, groups.size // 5000)])).encode())
        h.update(str(groups.size).encode())
    return h.hexdigest()


@st.cache_resource(show_spinner=False, max_entries=32)
def _stat(kind: str, params: tuple, token: str, _values: np.ndarray, _groups: np.ndarray | None) -> P.PlannedStatistic:
    # cache_resource: the same object across reruns, so its internal per-epsilon caches persist
    return P.make_statistic(kind, _values, _groups, **dict(params))


@st.cache_data(show_spinner=False, max_entries=256)
def _solve(kind: str, params: tuple, tol: float, conf: float, token: str, _values, _groups) -> P.EpsilonSolution:
    return P.solve_epsilon(_stat(kind, params, token, _values, _groups), P.AccuracyTarget(tol, conf))


@st.cache_data(show_spinner=False, max_entries=256)
def _error_at(kind: str, params: tuple, eps: float, conf: float, token: str, _values, _groups) -> float:
    return _stat(kind, params, token, _values, _groups).error_quantile(eps, conf)[0]


@st.cache_data(show_spinner=False, max_entries=128)
def _dots(kind: str, params: tuple, eps: float, token: str, sim_seed: int, _values, _groups) -> pd.DataFrame:
    stat = _stat(kind, params, token, _values, _groups)
    sims = stat.simulate(eps, N_PLAUSIBLE, rng=sim_seed)
    rel = sims / stat.truth[None, :] - 1.0
    return plots.dots_frame(stat.name, stat.labels, rel, eps)


@st.cache_resource(show_spinner=False, max_entries=64)
def _fig(builder: str, *args):
    """Plotly figures are slow to build (validation); the same inputs give the very same figure object."""
    return getattr(plots, builder)(*args)


# ---------------------------------------------------------------------------------------------
# Page
# ---------------------------------------------------------------------------------------------

st.title("Choose ε before a release")
st.markdown(
    "Before publishing statistics with differential privacy you must pick **ε**, the privacy-loss budget: "
    "smaller ε hides each person better but adds more noise. This page helps in four steps: "
    "**(1) accuracy first** — say how accurate each statistic must be and get the smallest ε that achieves it; "
    "**(2) budget first** — fix a total ε, split it, and see the accuracy you get; "
    "**(3) what ε means for a person** — how much an attacker could learn; "
    "**(4) release** — make the real release from the confidential file and keep a ledger of the budget spent.")
privacy_note(
    "two datasets that differ by replacing one person's record; the number of records n (and the size of each "
    "group or cell) stays the same. A statistic computed separately on disjoint groups or cells costs ε once "
    "(parallel composition); different statistics on the same people add up (sequential composition).",
    "n and the group/cell sizes, the bounds and clip ranges, the PSEO bin edges, the accuracy targets and the "
    "ε values chosen here. Planning numbers computed on confidential data are not protected.")

ds = current_dataset()
values = np.asarray(ds.values, dtype=float)
mode = qp_radio("What do you want to do?", "planner_mode", [PLAN, RELEASE], PLAN, horizontal=True)
if ds.confidential and mode == PLAN:
    st.warning("**You are planning on a confidential file.** Planning is itself not private: every number on this "
               "page is computed from the real records. Prefer the synthetic look-alike in the sidebar for "
               "planning, and use the real file only in Release mode.")

kinds = _qp_multiselect("Statistics in the planned release", "planner_stats", list(P.STAT_KINDS), DEFAULT_KINDS,
                        format_func=P.STAT_KINDS.get,
                        help="Each statistic is released once; their ε add up (sequential composition).")
if not kinds:
    st.info("Choose at least one statistic to plan.")
    st.stop()

# ---- groups / cells ----
group_column = None
needs_groups = any(k in ("percentiles", "group_means", "ratio") for k in kinds)


def _memo(key: tuple, build):
    """Per-session memo for work on the current dataset (the sidebar returns the same object while the
    choice is unchanged, so its id is a cheap key; a big frame is never hashed on every rerun)."""
    memo = st.session_state.setdefault("_planner_memo", {})
    if key not in memo:
        if len(memo) > 16:
            memo.clear()
        memo[key] = (ds, build())  # holding ds keeps its id from being reused by another dataset
    return memo[key][1]


def _group_candidates() -> list[str]:
    out = []
    for col in ds.frame.columns:
        if col == ds.column:
            continue
        if 2 <= ds.frame[col].nunique(dropna=True) <= 20:
            out.append(str(col))
    return out


def _groups_for(column: str | None) -> tuple[np.ndarray, str, list[str], int]:
    if column is None:
        g = P.planning_groups(values.size, seed=seed())
        n_missing = 0
    else:
        col = ds.frame[column]
        n_missing = int(col.isna().sum())
        g = col.astype(str).to_numpy()
    return g, _fingerprint(values, g), sorted(set(g.tolist())), n_missing


groups = None
if needs_groups:
    candidates = _memo(("cands", id(ds), ds.n, ds.name), _group_candidates) if ds.frame is not None else []
    choice = qp_selectbox("Groups / cells (disjoint sets of people)", "planner_groupcol", [RANDOM_GROUPS, *candidates],
                          RANDOM_GROUPS,
                          help="Percentiles are released per cell, means per group; the relative risk compares "
                               "two groups. Synthetic data have no groups, so they are split at random (50/30/20%).")
    if choice != RANDOM_GROUPS and ds.frame is not None and choice in ds.frame.columns:
        group_column = choice
    groups, token, group_labels, n_missing = _memo(("groups", id(ds), ds.n, ds.name, group_column, seed()),
                                                   lambda: _groups_for(group_column))
    if group_column is None:
        st.caption("Random groups A/B/C (50/30/20% of records), drawn with the sidebar seed: they differ only "
                   "in size, which is what the privacy noise depends on.")
    elif n_missing:
        st.caption(f"{n_missing:,} records without a value of {group_column} form their own group 'nan'.")
else:
    token, group_labels = _memo(("token", id(ds), ds.n, ds.name), lambda: (_fingerprint(values, None), []))

# ---- per-statistic settings ----
settings: dict[str, dict] = {}
with st.expander("Settings and accuracy target of each statistic", expanded=mode == PLAN):
    st.caption("A target reads: *the released value is within X% of the true value with probability Y%*. "
               "The probability is over the privacy noise only (the data are fixed).")
    for kind in kinds:
        st.markdown(f"**{P.STAT_KINDS[kind]}**")
        c1, c2, c3 = st.columns(3)
        tol0, conf0 = DEFAULT_TARGETS[kind]
        tol = qp_slider("Largest relative error, %", f"planner_{kind}_tol", 1, 50, tol0, 1, container=c1)
        conf = qp_slider("with probability, %", f"planner_{kind}_conf", 50, 99, conf0, 1, container=c2)
        params: dict = {}
        if kind == "gini":
            params["upper"] = float(qp_number("Public upper bound U on income", "planner_gini_upper", 1_000_000.0,
                                              min_value=1.0, max_value=1e12, step=10_000.0, container=c3,
                                              help="Incomes above U are clipped to U; U must not be read off the data."))
            params["gamma"] = float(qp_selectbox("Noise tail γ", "planner_gini_gamma", [2.0, 3.0, 4.0], 2.0,
                                                 container=c3, help="Noise density ∝ 1/(1+|z|^γ)."))
            params["calibration"] = qp_selectbox(
                "Noise calibration", "planner_gini_cal", ["tight", "paper"], "tight", container=c3,
                help="tight: the largest noise divisor α whose privacy loss is certified ≤ ε (less noise); "
                     "paper: the constants α = ε/(4γ), β = ε/γ of Nissim-Raskhodnikova-Smith used in the papers.")
        elif kind in ("group_means", "mean"):
            params["upper"] = float(qp_number("Public clip range upper end", f"planner_{kind}_upper", 500_000.0,
                                              min_value=1.0, max_value=1e12, step=10_000.0, container=c3,
                                              help="Incomes are clipped to [0, this]; a tighter range means less "
                                                   "noise but more clipping bias."))
        elif kind == "percentiles":
            params.update(q=(25.0, 50.0, 75.0), n_sims=4000, seed=int(seed()))
            c3.caption("25th, 50th, 75th percentiles of every cell, PSEO's 21 bins (Table 1).")
        elif kind == "ratio":
            params["threshold"] = float(qp_number("Low income means below", "planner_ratio_thr", 20_000.0,
                                                  min_value=1.0, max_value=1e9, step=1_000.0, container=c3))
            if len(group_labels) >= 2:
                params["group_x"] = qp_selectbox("Group x", "planner_ratio_gx", group_labels, group_labels[0],
                                                 container=c3)
                params["group_y"] = qp_selectbox("Group y", "planner_ratio_gy", group_labels, group_labels[1],
                                                 container=c3)
        elif kind == "count":
            params["threshold"] = float(qp_number("Count people with income at least", "planner_count_thr",
                                                  100_000.0, min_value=0.0, max_value=1e12, step=5_000.0,
                                                  container=c3))
        settings[kind] = {"params": params, "tol": tol / 100.0, "conf": conf / 100.0}


def _key(kind: str) -> tuple:
    return tuple(sorted(settings[kind]["params"].items()))


def _allocation(total: float) -> dict[str, float]:
    """The budget-first allocation: session state, else the URL, else an equal split."""
    alloc = st.session_state.get("_planner_alloc")
    if alloc is None or set(alloc) != set(kinds):
        alloc = None
        raw = st.query_params.get("planner_alloc")
        if raw:
            try:
                pairs = dict(p.split(":") for p in raw.split(","))
                alloc = {k: float(pairs[k]) for k in kinds}
                if any(v <= 0 for v in alloc.values()):
                    alloc = None
            except (ValueError, KeyError):
                alloc = None
        if alloc is None:
            alloc = {k: total / len(kinds) for k in kinds}
        st.session_state["_planner_alloc"] = alloc
    return alloc


def _store_allocation(alloc: dict[str, float]) -> None:
    st.session_state["_planner_alloc"] = alloc
    total = float(st.session_state.get("planner_total", sum(alloc.values())))
    for k, v in alloc.items():  # the slider shows the value inside its range; the allocation stays exact
        st.session_state[f"planner_eps_{k}"] = float(min(max(v, EPS_SLIDER_MIN), total))
    text = ",".join(f"{k}:{alloc[k]:.6g}" for k in kinds)
    if st.query_params.get("planner_alloc") != text:
        st.query_params["planner_alloc"] = text


def _on_total_change() -> None:
    total = float(st.session_state["planner_total"])
    alloc = st.session_state.get("_planner_alloc") or {k: 1.0 for k in kinds}
    locked = {i: alloc[k] for i, k in enumerate(kinds) if st.session_state.get(f"planner_lock_{k}")}
    try:
        new = P.split_budget(total, [alloc[k] for k in kinds], locked)
    except ValueError as exc:
        st.session_state["_planner_alloc_error"] = f"{exc}; the locks were ignored for this change"
        new = P.split_budget(total, [alloc[k] for k in kinds])
    _store_allocation(dict(zip(kinds, map(float, new))))


def _on_slider(kind: str) -> None:
    alloc = st.session_state["_planner_alloc"]
    cur = [alloc[k] for k in kinds]
    locked = [i for i, k in enumerate(kinds) if st.session_state.get(f"planner_lock_{k}")]
    try:
        new = P.rebalance(cur, kinds.index(kind), float(st.session_state[f"planner_eps_{kind}"]), locked,
                          total=float(st.session_state["planner_total"]), floor=EPS_SLIDER_MIN)
    except ValueError as exc:
        st.session_state["_planner_alloc_error"] = str(exc)
        new = cur
    _store_allocation(dict(zip(kinds, map(float, new))))


# =============================================================================================
# PLAN mode
# =============================================================================================
if mode == PLAN:
    tab_acc, tab_budget, tab_risk, tab_share = st.tabs(
        ["1 · Accuracy first", "2 · Budget first", "3 · What ε means for a person", "4 · Share / reproduce"])

    # ---- accuracy first ----
    with tab_acc:
        st.markdown("For each statistic, the **smallest ε** that meets its target on the planning data. "
                    "Closed forms are exact; the percentiles need simulation, so their ε carries Monte Carlo "
                    "uncertainty (we report the conservative end).")
        rows, solutions = [], {}
        for kind in kinds:
            s = settings[kind]
            with guard(P.STAT_KINDS[kind]):
                with st.spinner(f"Solving for {P.STAT_KINDS[kind]}..."):
                    sol = _solve(kind, _key(kind), s["tol"], s["conf"], token, values, groups)
                solutions[kind] = sol
                mc = ("exact" if sol.mc_se == 0 else
                      f"±{100 * sol.mc_se:.2f} pts on the probability; ε between {sol.epsilon_interval[0]:.4g} "
                      f"and {sol.epsilon_interval[1]:.4g}")
                rows.append({"statistic": sol.statistic, "target": sol.target.describe(),
                             "smallest ε": sol.epsilon, "probability met at that ε": sol.achieved,
                             "how it was found": sol.method, "Monte Carlo uncertainty": mc,
                             "composition inside": sol.parallel_note or "one number or a joint mechanism"})
        if rows:
            table = pd.DataFrame(rows)
            total = P.plan_total([(r["statistic"], r["smallest ε"]) for r in rows]).epsilon
            c1, c2 = st.columns(2)
            c1.metric("Total ε of the plan (sequential composition)", f"{total:.4g}")
            c2.metric("Largest attacker belief from a 1% prior at that ε",
                      f"{100 * risk.max_posterior(0.01, total):.1f}%")
            st.dataframe(table, hide_index=True, width="stretch",
                         column_config={"smallest ε": st.column_config.NumberColumn(format="%.4g"),
                                        "probability met at that ε": st.column_config.NumberColumn(format="%.4f")})
            st.plotly_chart(_fig("fig_epsilons", table.rename(columns={"smallest ε": "epsilon"}), total),
                            width="stretch")
            download_csv(table, "Download this table (CSV)", "planner_accuracy_first.csv", key="planner_dl_acc")
            st.markdown("**Plausible releases at the chosen ε** — each dot is 1/20 of the releases the mechanism "
                        "could produce (a quantile dot plot); green dots are within the target.")
            all_dots = []
            for kind, sol in solutions.items():
                with guard(f"the plausible releases of {P.STAT_KINDS[kind]}"):
                    frame = _dots(kind, _key(kind), sol.epsilon, token, seed(), values, groups)
                    all_dots.append(frame)
                    st.plotly_chart(_fig("fig_quantile_dots", frame, 100 * settings[kind]["tol"],
                                                            f"{sol.statistic} at ε = {sol.epsilon:.3g} "
                                                            f"({100 * settings[kind]['conf']:g}% target)"),
                                    width="stretch")
            if all_dots:
                download_csv(pd.concat(all_dots), "Download the dot-plot data (CSV)", "planner_dots.csv",
                             key="planner_dl_dots")

    # ---- budget first ----
    with tab_budget:
        st.markdown("Fix the **total ε** you can afford and split it. Move one statistic's slider and the others "
                    "rebalance (in proportion to their current shares) so the total stays fixed; lock a statistic "
                    "to keep its ε. The accuracy of each statistic updates at its own confidence level.")
        total = qp_slider("Total ε for the whole release", "planner_total", 0.05, 20.0, 2.0, 0.05,
                          on_change=_on_total_change)
        alloc = _allocation(float(total))
        if abs(sum(alloc.values()) - total) > 1e-6 * total:
            _on_total_change()
            alloc = st.session_state["_planner_alloc"]
        err = st.session_state.pop("_planner_alloc_error", None)
        if err:
            st.warning(f"Could not move that slider: {err}")
        budget_rows = []
        for kind in kinds:
            c1, c2 = st.columns([4, 1])
            if f"planner_eps_{kind}" not in st.session_state:
                st.session_state[f"planner_eps_{kind}"] = float(min(max(alloc[kind], EPS_SLIDER_MIN), total))
            c2.checkbox("lock", key=f"planner_lock_{kind}", help="Keep this ε when others move.")
            c1.slider(f"ε for {P.STAT_KINDS[kind]}", min_value=EPS_SLIDER_MIN, max_value=float(total), step=0.001,
                      format="%.3f", key=f"planner_eps_{kind}", on_change=_on_slider, args=(kind,))
        alloc = st.session_state["_planner_alloc"]
        for kind in kinds:
            with guard(f"the accuracy of {P.STAT_KINDS[kind]}"):
                conf = settings[kind]["conf"]
                r = _error_at(kind, _key(kind), float(alloc[kind]), conf, token, values, groups)
                budget_rows.append({"statistic": P.STAT_KINDS[kind], "epsilon": float(alloc[kind]),
                                    "relative_error_percent": 100 * r, "confidence_percent": 100 * conf})
        if budget_rows:
            bf = pd.DataFrame(budget_rows)
            st.plotly_chart(_fig("fig_budget", bf), width="stretch")
            st.dataframe(bf.rename(columns={"relative_error_percent": "error within ±%",
                                            "confidence_percent": "with probability %"}),
                         hide_index=True, width="stretch")
            download_csv(bf, "Download the split (CSV)", "planner_budget_first.csv", key="planner_dl_budget")

    # ---- risk ----
    with tab_risk:
        st.markdown("Suppose an attacker believes with probability *p* (the **prior**) that a given person is in "
                    "the data, or has some attribute. Whatever else they know, after seeing an ε-DP release their "
                    "belief can rise at most to **p·e^ε / (1 − p + p·e^ε)**.")
        c1, c2 = st.columns(2)
        eps_r = qp_slider("ε to examine", "planner_risk_eps", 0.05, 20.0, 1.0, 0.05, container=c1)
        prior = qp_slider("Attacker's prior belief, %", "planner_prior", 0.1, 99.0, 1.0, 0.1, container=c2)
        post = risk.max_posterior(prior / 100, eps_r)
        st.metric(f"Largest belief after an ε = {eps_r:g} release, from a {prior:g}% prior", f"{100 * post:.2f}%")
        eps_list = sorted({0.1, 1.0, 5.0, float(eps_r)})
        curve = risk.posterior_curve(1.0)
        pf = plots.posterior_frame(eps_list, curve.prior, [risk.max_posterior(curve.prior, e) for e in eps_list])
        st.plotly_chart(_fig("fig_posterior", pf, prior / 100), width="stretch")
        download_csv(pf, "Download the curves (CSV)", "planner_posterior.csv", key="planner_dl_post")
        st.markdown("**ε used in real deployments** (editable: add your organisation's releases). The units differ "
                    "(per person for the whole release, per user per day, local vs central DP), so compare with care.")
        edited = st.data_editor(pd.DataFrame(risk.deployments_table()), num_rows="dynamic", hide_index=True,
                                width="stretch", key="planner_deploy_editor")
        with guard("the deployment table"):
            eps_col = pd.to_numeric(edited["epsilon"], errors="coerce")
            ok = eps_col.notna() & (eps_col > 0)
            view = edited.loc[ok, ["organisation", "release", "epsilon", "privacy unit"]].copy()
            view[f"largest belief from a {prior:g}% prior, %"] = [
                100 * risk.max_posterior(prior / 100, float(e)) for e in eps_col[ok]]
            st.dataframe(view, hide_index=True, width="stretch")
            download_csv(edited, "Download the deployment table (CSV)", "planner_deployments.csv",
                         key="planner_dl_deploy")

    # ---- share ----
    with tab_share:
        alloc = st.session_state.get("_planner_alloc") or {k: 1.0 for k in kinds}
        config = {
            "statistics": [{"kind": k, "params": {kk: (list(vv) if isinstance(vv, tuple) else vv)
                                                  for kk, vv in settings[k]["params"].items()},
                            "target": {"rel_error": settings[k]["tol"], "confidence": settings[k]["conf"]}}
                           for k in kinds],
            "group_column": group_column,
            "group_seed": int(seed()),
            "budget": {"allocation": [float(alloc[k]) for k in kinds]},
        }
        repro.share_panel("planner", script=repro.planner_script(config),
                          note="It prints the smallest ε per statistic, the total, and the budget-first accuracy.")

# =============================================================================================
# RELEASE mode
# =============================================================================================
else:
    st.markdown("### Make the real release")
    if not ds.confidential:
        st.info("The data in use are **not confidential** (synthetic or public), so this is a demonstration of the "
                "release workflow. To release from your confidential file, upload it in the sidebar.")
    st.markdown("The release draws its noise from the operating system's cryptographic random generator "
                "(`os.urandom`), never from the seed in the sidebar, so it cannot be replayed or guessed. "
                "True values are never shown: only the released (noisy) numbers.")
    cap = float(qp_number("Total privacy budget of this data (ε cap)", "planner_cap", 2.0, min_value=0.001,
                          max_value=100.0, step=0.1,
                          help="The ledger refuses any release that would bring the total spent above this."))
    ledger: B.Ledger | None = st.session_state.get("planner_ledger")
    if ledger is None or (not ledger.entries and ledger.cap.epsilon != cap):
        ledger = B.Ledger(cap=B.BudgetCap(epsilon=cap))
        st.session_state["planner_ledger"] = ledger
    elif ledger.cap.epsilon != cap:
        st.warning(f"This session's ledger already holds releases; its cap stays ε = {ledger.cap.epsilon:g}. "
                   "Start a new ledger only for a different dataset.")
    if st.button("Start a new ledger (only for a different dataset)", key="planner_new_ledger"):
        ledger = B.Ledger(cap=B.BudgetCap(epsilon=cap))
        st.session_state["planner_ledger"] = ledger
        st.session_state.pop("planner_records", None)
    c1, c2 = st.columns(2)
    c1.metric("Spent so far", f"ε = {ledger.spent_pure() or 0.0:.4g}")
    c2.metric("Remaining", ledger.describe_remaining())

    alloc = st.session_state.get("_planner_alloc") or _allocation(min(cap, 2.0))
    items = []
    for kind in kinds:
        eps_k = qp_number(f"ε for {P.STAT_KINDS[kind]}", f"planner_rel_eps_{kind}",
                          float(round(alloc.get(kind, 0.1), 4)), min_value=0.0001, max_value=100.0, step=0.01,
                          format="%.4f")
        items.append((kind, float(eps_k)))
    cost = sum(e for _, e in items)
    st.caption(f"This release costs ε = {cost:.4g} in total (sequential composition).")
    confirm = st.checkbox("I understand that this spends privacy budget that cannot be recovered.",
                          key="planner_confirm")
    if st.button("Make the release", type="primary", disabled=not confirm, key="planner_release"):
        with guard("the release"):
            stats = [(_stat(kind, _key(kind), token, values, groups), eps) for kind, eps in items]
            records = R.make_release(stats, ledger)
            st.session_state["planner_records"] = records
            st.success("Released. The numbers below are the only ones you may publish.")
    records = st.session_state.get("planner_records")
    if records:
        rows = [{"statistic": r.statistic, "number": lab, "released value": v, "ε": r.epsilon,
                 "mechanism": r.mechanism, "time (UTC)": r.timestamp}
                for r in records for lab, v in zip(r.labels, r.released)]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        st.warning(f"**Every further release spends more.** Spent so far on this data: ε = "
                   f"{ledger.spent_pure() or 0.0:.4g} of {ledger.cap.epsilon:g}; remaining {ledger.describe_remaining()}. "
                   "Releasing the same statistic again and averaging would reduce the noise, which is exactly "
                   "why it costs budget again.")
        c1, c2 = st.columns(2)
        c1.download_button("Download the release record (JSON)", R.records_to_json(records, ledger).encode(),
                           file_name="dp_release_record.json", mime="application/json", key="planner_dl_json")
        c2.download_button("Download the released values (CSV)", R.records_to_csv(records).encode(),
                           file_name="dp_released_values.csv", mime="text/csv", key="planner_dl_relcsv")
    if ledger.entries:
        st.markdown("**Ledger of this session**")
        st.dataframe(pd.DataFrame([{"release": e.label, "cost": e.cost.describe(), "time (UTC)": e.timestamp}
                                   for e in ledger.entries]), hide_index=True, width="stretch")
    st.caption("A real release is not reproducible by design (its noise is not seeded); the JSON record is its audit "
               "trail: statistic, released values, mechanism, all public parameters, ε and δ, time, dpcore version.")
