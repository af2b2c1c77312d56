"""Controls and renderers of the planner page (``app_pages/planner.py``).

The page reads its controls with the helpers here (statistics, groups, per-statistic settings, the
budget-first sliders), makes one cached call to a view function of
:mod:`dpcore.views.planner` and hands the result to a ``render_*`` function. Figures come
from :mod:`ui.planner.plots`; nothing here recomputes a mechanism.

Budget-first state: the allocation (one epsilon per chosen statistic, summing to the total) lives
in ``st.session_state["_planner_alloc"]`` and in the URL (``planner_alloc``); the sliders
``planner_eps_<kind>`` always show it (:func:`allocation` re-syncs them whenever the allocation is
rebuilt, e.g. after a statistic was removed). That state, the accuracy-first plan remembered for Release mode and
the release protocol's keys live in :mod:`ui.planner.plan_state`; what a release would use (also the plan file
written here) in :mod:`ui.planner.choices`; Release mode's renderers in :mod:`ui.planner.release_panel`, which
this module never imports (nor it this one).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import defaults, planner, risk
from dpcore.noise import smooth as smooth_noise
from dpcore.noise.smooth import SMOOTH_NOISES
from dpcore.views import planner as planner_experiments
from dpcore.views.planner import (
    AccuracyFirstView,
    AttackerBeliefView,
    BudgetFirstView,
    HalfWidthView,
    IntervalWidth,
    StatisticDots,
    StatisticTarget,
)
from ui.accounts import existing_account
from ui.common import (
    download_csv,
    guard,
    qp_number,
    qp_radio,
    qp_selectbox,
    qp_slider,
    qp_toggle,
    show_figure,
    write_url_value,
)
from ui.planner import plots as plots_planner
from ui.planner.choices import large_epsilon_warning, release_choices, release_plan
from ui.planner.plan_state import (
    ALLOC_KEY,
    CONFIDENTIAL_PLAN_NOTE,
    EPS_SLIDER_MIN,
    allocation,
    remember_plan,
    split_allocation,
    store_allocation,
)

if TYPE_CHECKING:  # the figures are built in ui.planner.plots
    import plotly.graph_objects as go

RANDOM_GROUPS = "(random groups A/B/C)"
#: (largest relative error %, probability %) per statistic; the Gini's error is in Gini points (GINI_ERR_KEY)
DEFAULT_TARGETS = {
    "gini": (None, round(100 * defaults.ANSWER_CONFIDENCE)),
    "percentiles": (10, 90),
    "group_medians": (10, 90),
    "group_means": (5, 95),
    "ratio": (10, 95),
    "mean": (5, 95),
    "count": (5, 95),
}
#: the Gini's target in Gini points (URL-backed); links made before carried LEGACY_GINI_TOL (relative %)
GINI_ERR_KEY, LEGACY_GINI_TOL = "planner_gini_err", "planner_gini_tol"
GINI_ERR_MIN, GINI_ERR_MAX = 0.0005, 0.5
#: the Gini's smooth-sensitivity noises (dpcore.noise.smooth.SMOOTH_NOISES) as the selector shows them
NOISE_LABELS = {
    "cauchy": "generalized Cauchy (pure ε, heavy tails)",
    "laplace": "Laplace ((ε, δ), light tails)",
    "laplace_lognormal": "Laplace log-normal (ρ-zCDP, light tails)",
}
NOISE_DELTAS = [1e-5, 1e-6, 1e-7, 1e-8, 1e-9]
#: noises the real release refuses (dpcore.noise.smooth: check_real_release), said before Release mode
REFUSED_REAL_RELEASE = {
    "laplace_lognormal": "Plan only: a **real release** of the Gini with the Laplace log-normal noise is refused "
    "(there is no floating-point-safe sampler for its log-normal factor). Plan with it, but "
    "release with the Laplace or the generalized Cauchy noise."
}


# ---------------------------------------------------------------------------------------------
# Controls
# ---------------------------------------------------------------------------------------------


def percent_text(share: float) -> str:
    """A probability in percent with one decimal, or as many more as it takes not to read 100.0% (or 0.0%) for a
    probability that is not 1 (or 0): 99.75% was shown as "100.0%"."""
    share = float(share)
    for digits in range(1, 7):
        text = f"{100 * share:.{digits}f}"
        if (share >= 1 or float(text) < 100) and (share <= 0 or float(text) > 0):
            return f"{text}%"
    return "more than 99.9999%" if share > 0.5 else "less than 0.0001%"


def qp_multiselect(label: str, key: str, options: list[str], default: list[str], **kwargs: Any) -> list[str]:
    """``st.multiselect`` backed by the URL query parameter ``key`` (comma-separated)."""
    if key not in st.session_state:
        raw = st.query_params.get(key)
        st.session_state[key] = [v for v in raw.split(",") if v in options] if raw else list(default)
    out = st.multiselect(label, options, key=key, **kwargs)
    write_url_value(key, ",".join(out), is_default=list(out) == list(default))
    return list(out)


def fingerprint(values: np.ndarray, groups: np.ndarray | None) -> str:
    """A cache key for the planning data (values hashed in full, groups sampled)."""
    digest = hashlib.sha1(np.ascontiguousarray(values).tobytes())
    if groups is not None:
        digest.update("\x1f".join(map(str, groups[:: max(1, groups.size // 5000)])).encode())
        digest.update(str(groups.size).encode())
    return digest.hexdigest()


def _memo(dataset: Any, key: tuple, build: Callable[[], Any]) -> Any:
    """Per-session memo for work on the current dataset (the sidebar returns the same object while the
    choice is unchanged, so its id is a cheap key; a big frame is never hashed on every rerun)."""
    memo = st.session_state.setdefault("_planner_memo", {})
    key = (id(dataset), dataset.n, dataset.name, *key)
    if key not in memo:
        if len(memo) > 16:
            memo.clear()
        memo[key] = (dataset, build())  # holding the dataset keeps its id from being reused
    return memo[key][1]


def _group_candidates(dataset: Any) -> list[str]:
    frame = dataset.frame
    return [str(c) for c in frame.columns if c != dataset.column and 2 <= frame[c].nunique(dropna=True) <= 20]


def group_rejections(dataset: Any) -> list[str]:
    """Why each other column of the data set cannot be a group column (the choice offered
    only random groups with no reason)."""
    frame = getattr(dataset, "frame", None)
    if frame is None:
        return []
    out = []
    for name in frame.columns:
        if name == dataset.column:
            continue
        distinct = int(frame[name].nunique(dropna=True))
        if distinct < 2:
            out.append(f"`{name}`: {distinct} distinct value — every record would be in one group")
        elif distinct > 20:
            kind = "looks like an amount or an id" if pd.api.types.is_numeric_dtype(frame[name]) else "too many groups"
            out.append(
                f"`{name}`: {distinct:,} distinct values ({kind}); groups need 2–20 values: merge its "
                "values into at most 20 categories in the file (e.g. age bands) and upload it again"
            )
    return out


def small_cell_advice(groups: np.ndarray, *, share: float = 0.02, minimum: int = 30) -> list[str]:
    """Advice for groups so small that they drive ε up (noise on a group mean or a cell's percentiles
    grows like 1/size): merge, suppress, or accept the ε the plan shows for them."""
    labels, counts = np.unique(np.asarray(groups).astype(str), return_counts=True)
    n = int(counts.sum())
    out = []
    for label, count in zip(labels, counts, strict=True):
        if count < minimum or count < share * n:
            out.append(
                f"Group **{label}** has only {int(count):,} records ({100 * count / n:.1f}% of the data): its "
                "mean and percentiles need a much larger ε than the others (the noise grows like 1/size), "
                "so it drives the plan's ε for group statistics. **Merge** it with a similar group, "
                "**suppress** it (publish nothing for it, as PSEO does below 30 graduates), or accept the ε "
                "the plan shows."
            )
    return out


def choose_groups(
    dataset: Any, values: np.ndarray, kinds: list[str], seed: int, *, data_notes: bool = True
) -> tuple[np.ndarray | None, str, list[str], str | None]:
    """The group / cell labels of the grouped statistics: ``(groups, token, labels, group_column)``.
    ``data_notes=False``: the notes read off the records (rows without a group, small cells) are not shown (a
    private plan shows nothing computed from the confidential records)."""
    if not any(k in planner_experiments.GROUPED_KINDS for k in kinds):
        return None, _memo(dataset, ("token",), lambda: fingerprint(values, None)), [], None
    candidates = _memo(dataset, ("cands",), lambda: _group_candidates(dataset)) if dataset.frame is not None else []
    choice = qp_selectbox(
        "Groups / cells (disjoint sets of people)",
        "planner_groupcol",
        [RANDOM_GROUPS, *candidates],
        RANDOM_GROUPS,
        help="Percentiles are released per cell, means per group; the relative risk compares "
        "two groups. Synthetic data have no groups, so they are split at random (50/30/20%).",
    )
    column = (
        choice if choice != RANDOM_GROUPS and dataset.frame is not None and choice in dataset.frame.columns else None
    )

    def build():
        if column is None:
            groups, n_missing = planner.planning_groups(values.size, seed=seed), 0
        else:
            groups = dataset.frame[column].astype(str).to_numpy()
            n_missing = int(dataset.frame[column].isna().sum())
        return groups, fingerprint(values, groups), sorted(set(groups.tolist())), n_missing

    groups, token, labels, n_missing = _memo(dataset, ("groups", column, seed), build)
    if column is None:
        st.caption(
            "Random groups A/B/C (50/30/20% of records), drawn with the sidebar seed: they differ only "
            "in size, which is what the privacy noise depends on. A real release refuses them."
        )
    elif n_missing and data_notes:
        st.caption(f"{n_missing:,} records without a value of {column} form their own group 'nan'.")
    rejected = _memo(dataset, ("rejected",), lambda: group_rejections(dataset))
    if rejected:
        st.caption("Columns that cannot be groups: " + "; ".join(rejected) + ".")
    if column is not None and data_notes:
        for advice in _memo(dataset, ("small", column), lambda: small_cell_advice(groups)):
            st.warning(advice)
    return groups, token, labels, column


def _params(kind: str, column: Any, group_labels: list[str], seed: int) -> dict[str, Any]:
    """The public settings of one statistic (widgets in ``column``)."""
    if kind == "gini":
        params: dict[str, Any] = {
            "upper": float(
                qp_number(
                    "Public upper bound U on income",
                    "planner_gini_upper",
                    defaults.INCOME_UPPER,
                    min_value=1.0,
                    max_value=1e12,
                    step=10_000.0,
                    container=column,
                    help="Incomes above U are clipped to U; U must not be read off the data.",
                )
            )
        }
        noise = qp_selectbox(
            "Smooth-sensitivity noise",
            "planner_gini_noise",
            list(SMOOTH_NOISES),
            "cauchy",
            container=column,
            format_func=lambda name: NOISE_LABELS.get(name, name),
            help="; ".join(f"{name}: {text}" for name, text in SMOOTH_NOISES.items()),
        )
        # the paper's noise: no "noise" field, so its settings (and caches, scripts) match plans that predate the choice
        if noise == "cauchy":
            params["gamma"] = float(
                qp_selectbox(
                    "Noise tail γ",
                    "planner_gini_gamma",
                    [2.0, 3.0, 4.0],
                    2.0,
                    container=column,
                    help="Noise density ∝ 1/(1+|z|^γ).",
                )
            )
        else:
            params["noise"] = noise
            params["delta"] = float(
                qp_selectbox(
                    "δ of the noise",
                    "planner_gini_delta",
                    NOISE_DELTAS,
                    smooth_noise.DEFAULT_DELTA,
                    container=column,
                    format_func=lambda d: f"{d:g}",
                    help="The (ε, δ) target the noise is calibrated to; the Laplace log-normal noise is ρ-zCDP with "
                    "the largest ρ whose (ε, δ) at this δ is ε.",
                )
            )
        params["calibration"] = qp_selectbox(
            "Noise calibration",
            "planner_gini_cal",
            ["tight", "paper"],
            "tight",
            container=column,
            help="tight: the largest noise divisor α whose privacy loss is certified ≤ ε (less noise); "
            "paper: the constants of Nissim-Raskhodnikova-Smith used in the papers.",
        )
        if _refusal(noise):
            column.warning(_refusal(noise))
        return params
    if kind in ("group_means", "mean"):
        return {
            "upper": float(
                qp_number(
                    "Public clip range upper end",
                    f"planner_{kind}_upper",
                    defaults.MEAN_CLIP_UPPER,
                    min_value=1.0,
                    max_value=1e12,
                    step=10_000.0,
                    container=column,
                    help="Incomes are clipped to [0, this]; a tighter range means less noise but more clipping bias.",
                )
            )
        }
    if kind == "group_medians":
        column.caption("The median of every group, read off a noisy histogram over PSEO's 21 bins (Table 1).")
        return {"n_sims": 4000, "seed": int(seed)}
    if kind == "percentiles":
        column.caption("25th, 50th, 75th percentiles of every cell, PSEO's 21 bins (Table 1).")
        return {"q": (25.0, 50.0, 75.0), "n_sims": 4000, "seed": int(seed)}
    if kind == "ratio":
        params = {
            "threshold": float(
                qp_number(
                    "Low income means below",
                    "planner_ratio_thr",
                    20_000.0,
                    min_value=1.0,
                    max_value=1e9,
                    step=1_000.0,
                    container=column,
                )
            )
        }
        if len(group_labels) >= 2:
            params["group_x"] = qp_selectbox(
                "Group x", "planner_ratio_gx", group_labels, group_labels[0], container=column
            )
            # group y is never group x (after a change of group column both fell back to the
            # first label and the real release failed with "choose two different groups")
            others = [label for label in group_labels if label != params["group_x"]]
            params["group_y"] = qp_selectbox("Group y", "planner_ratio_gy", others, others[0], container=column)
        return params
    return {
        "threshold": float(
            qp_number(
                "Count people with income at least",
                "planner_count_thr",
                100_000.0,
                min_value=0.0,
                max_value=1e12,
                step=5_000.0,
                container=column,
            )
        )
    }


def _gini_points_target(
    container: Any, gini_params: dict[str, Any], gini_of: Callable[[dict[str, Any]], float] | None
) -> float:
    """The Gini's target in Gini points (absolute ±, the Gini page's unit: 0.01 = one point).

    A link made before the target was in Gini points carries ``planner_gini_tol`` (a relative error
    in %): it is converted once with the planning data's Gini, ``gini_of(gini_params)``, and the page
    says so (the same plan, in the new unit)."""
    legacy = st.query_params.get(LEGACY_GINI_TOL)
    if legacy is not None:
        del st.query_params[LEGACY_GINI_TOL]
        if GINI_ERR_KEY not in st.session_state and GINI_ERR_KEY not in st.query_params and gini_of is not None:
            try:
                percent = float(legacy)
            except ValueError:
                percent = float("nan")
            if 0 < percent < 100:
                gini = float(gini_of(gini_params))
                points = min(max(round(percent / 100.0 * gini, 4), GINI_ERR_MIN), GINI_ERR_MAX)
                st.session_state[GINI_ERR_KEY] = points
                st.session_state["_planner_gini_converted"] = (
                    f"This link gave the Gini's target as a relative error of {percent:g}% of the Gini; the planner "
                    f"now states it in Gini points, like the Gini page: ±{points:.4g} on these data."
                )
    return float(
        qp_number(
            "Largest error, ± Gini points",
            GINI_ERR_KEY,
            defaults.ANSWER_TARGET_GINI,
            min_value=GINI_ERR_MIN,
            max_value=GINI_ERR_MAX,
            step=0.001,
            format="%.4f",
            container=container,
            help="As on the Gini page: 0.01 = one Gini point, e.g. 0.45 published as anything in 0.44–0.46.",
        )
    )


def statistic_settings(
    kinds: list[str],
    group_labels: list[str],
    seed: int,
    *,
    expanded: bool,
    gini_of: Callable[[dict[str, Any]], float] | None = None,
) -> tuple[StatisticTarget, ...]:
    """The settings and accuracy target of each chosen statistic, as specs of the view functions.

    The Gini's target is in Gini points (absolute ±, as on the Gini page), the others' a relative
    error in %; ``gini_of(params)`` (the planning data's Gini) converts an old link's relative Gini
    target."""
    specs = []
    with st.expander("Settings and accuracy target of each statistic", expanded=expanded):
        st.caption(
            "A target reads: *the released value is within ± X of the true value with probability Y%*: X in "
            "Gini points for the Gini (0.01 = one point, as on the Gini page), in % of the true value for "
            "the others. The probability is over the privacy noise only (the data are fixed)."
        )
        for kind in kinds:
            st.markdown(f"**{planner.STAT_KINDS[kind]}**")
            c1, c2, c3 = st.columns(3)
            tol0, conf0 = DEFAULT_TARGETS[kind]
            params = _params(kind, c3, group_labels, seed)
            conf = qp_slider("with probability, %", f"planner_{kind}_conf", 50, 99, conf0, 1, container=c2)
            if kind == "gini":
                points = _gini_points_target(c1, params, gini_of)
                specs.append(StatisticTarget(kind, tuple(sorted(params.items())), None, conf / 100.0, abs_error=points))
                continue
            assert tol0 is not None  # every kind but the Gini has a relative target
            tol = qp_slider("Largest relative error, %", f"planner_{kind}_tol", 1, 50, tol0, 1, container=c1)
            specs.append(StatisticTarget(kind, tuple(sorted(params.items())), tol / 100.0, conf / 100.0))
    converted = st.session_state.pop("_planner_gini_converted", None)
    if converted:
        st.info(converted)
    return tuple(specs)


# ---------------------------------------------------------------------------------------------
# Budget-first allocation (session state + URL; the sliders always show the allocation in use)
# ---------------------------------------------------------------------------------------------


def on_total_change(kinds: list[str]) -> None:
    """Callback of the total-epsilon slider: re-split the total, keeping locked statistics."""
    total = float(st.session_state["planner_total"])
    alloc = st.session_state.get(ALLOC_KEY)
    if alloc is None or list(alloc) != list(kinds):
        alloc = {k: 1.0 for k in kinds}
    store_allocation(kinds, split_allocation(kinds, alloc, total), total)


def _on_slider(kind: str, kinds: list[str]) -> None:
    alloc = st.session_state[ALLOC_KEY]
    total = float(st.session_state["planner_total"])
    current = [alloc[k] for k in kinds]
    locked = [i for i, k in enumerate(kinds) if st.session_state.get(f"planner_lock_{k}")]
    try:
        new = planner.rebalance(
            current,
            kinds.index(kind),
            float(st.session_state[f"planner_eps_{kind}"]),
            locked,
            total=total,
            floor=EPS_SLIDER_MIN,
        )
    except ValueError as exc:
        st.session_state["_planner_alloc_error"] = str(exc)
        new = np.asarray(current, dtype=float)
    store_allocation(kinds, dict(zip(kinds, map(float, new), strict=True)), total)


def budget_sliders(kinds: list[str], total: float) -> dict[str, float]:
    """One epsilon slider (and a lock) per statistic; returns the allocation they show."""
    st.markdown(
        "Split the **total ε** above. Move one statistic's slider and the others rebalance (in proportion "
        "to their current shares) so the total stays fixed; lock a statistic to keep its ε. The accuracy "
        "of each statistic updates at its own confidence level."
    )
    allocation(kinds, total)
    err = st.session_state.pop("_planner_alloc_error", None)
    if err:
        st.warning(f"Could not move that slider: {err}")
    for kind in kinds:
        c1, c2 = st.columns([4, 1])
        c2.checkbox("lock", key=f"planner_lock_{kind}", help="Keep this ε when others move.")
        c1.slider(
            f"ε for {planner.STAT_KINDS[kind]}",
            min_value=EPS_SLIDER_MIN,
            max_value=float(total),
            step=0.001,
            format="%.3f",
            key=f"planner_eps_{kind}",
            on_change=_on_slider,
            args=(kind, list(kinds)),
        )
    return dict(st.session_state[ALLOC_KEY])


# ---------------------------------------------------------------------------------------------
# Renderers
# ---------------------------------------------------------------------------------------------

_FIGURES: dict[tuple, tuple[Any, Any]] = {}


def _remembered(name: str, source: Any, build: Callable[[], Any], *extra: Any) -> Any:
    """``build()`` remembered per frozen view ``source`` (and small ``extra`` keys) in this process: the
    key is the view's hash, a hit is checked by equality, so nothing is reused for other numbers. Used
    for figures and the tables drawn from a view, so a rerun that does not change the view (e.g. a
    move of the total-ε slider) builds nothing. The results are shared: never change one."""
    key = (name, hash(source), *extra)
    hit = _FIGURES.get(key)
    if hit is not None and hit[0] == source:
        return hit[1]
    if len(_FIGURES) >= 128:
        _FIGURES.clear()
    value = build()
    _FIGURES[key] = (source, value)
    return value


def figure(builder: str, source: Any, *args: Any) -> Any:
    """``plots_planner.<builder>(*args)``, remembered by the frozen view ``source`` the arguments come
    from (plotly validation is slow, and hashing the chart frames for st.cache costs as much)."""
    return _remembered(
        builder,
        source,
        lambda: getattr(plots_planner, builder)(*args),
        *(a for a in args if isinstance(a, (str, int, float))),
    )


def _failures(failures: tuple[tuple[str, str], ...]) -> None:
    for label, message in failures:
        st.error(f"Cannot compute {label}: {message}")


#: the column of the expected width of each statistic's published interval (accuracy-first and budget-first tables)
INTERVAL_COLUMN = "expected width of the published 95% interval"


def _amount(value: float, unit: str) -> str:
    if value == float("inf"):
        return "open-ended (top bin)"
    if unit == "Gini points":
        return f"{value:.4f} Gini points"
    if unit == "relative-risk units":
        return f"{value:.3g}"
    return f"{value:,.0f}" + (" people" if unit == "people" else "")


def interval_text(width: IntervalWidth | None) -> str:
    """The expected width of a statistic's published interval in words: the width in its unit (the widest over
    several released numbers), or why there is none."""
    if width is None:
        return ""
    widest = width.widest
    if widest is None:
        return f"none: {width.note}"
    text = _amount(widest, width.unit)
    if len(width.widths) > 1:
        text = f"up to {text} (widest of {len(width.widths)})"
    return text + (f" ({width.note})" if width.note else "")


def _widths_by_statistic(widths: tuple[IntervalWidth, ...]) -> dict[str, IntervalWidth]:
    return {w.statistic: w for w in widths}


def accuracy_table(view: AccuracyFirstView) -> pd.DataFrame:
    """Every column of the accuracy-first plan (the CSV download)."""
    widths = _widths_by_statistic(view.interval_widths)
    return pd.DataFrame(
        [
            {
                "statistic": r.statistic,
                "target": r.target,
                "smallest ε": r.epsilon,
                "probability met at that ε": r.achieved,
                "how it was found": r.method,
                "Monte Carlo uncertainty": r.uncertainty,
                "composition inside": r.parallel_note or "one number or a joint mechanism",
                "privacy cost": r.cost,
                INTERVAL_COLUMN: interval_text(widths.get(r.statistic)),
            }
            for r in view.rows
        ]
    )


#: the columns of the accuracy table drawn on the page (every column is in its CSV): eight columns in a
#: grid scrolled sideways even at 1920 px wide; a static table of seven wraps its text to the page's width
SHOWN_ACCURACY_COLUMNS = [
    "statistic",
    "target",
    "smallest ε",
    "probability met at that ε",
    "how it was found",
    "privacy cost",
    INTERVAL_COLUMN,
]

#: said above the tables: what the interval column answers, before any budget is spent
INTERVAL_NOTE = (
    "**How wide will our intervals be?** Every released value is published with a 95% interval that "
    "anyone computes from the published numbers alone; the last column is its expected width at the ε "
    "shown (means: exact; percentiles: simulated noisy histograms; relative risk: at the expected "
    "counts; Gini: the release's planning model, public inputs only)."
)


#: under a narrow screen's tables, which scroll sideways without a sign of it: a cue that only such screens show
SIDEWAYS_CUE = (
    '<span class="dp-sideways-cue">↔ The table below is wider than this screen: swipe it sideways to see every '
    "column.</span>"
)
_SIDEWAYS_STYLE = (
    "<style>.dp-sideways-cue{display:none}"
    "@media (max-width: 640px){.dp-sideways-cue{display:block;font-weight:600;margin-top:.5em}}</style>"
)


def sideways_cue() -> str:
    """The cue's HTML, to end the text drawn just above a wide table (its style is sent with it: a style-only
    element takes no room on the page)."""
    st.html(_SIDEWAYS_STYLE)
    return SIDEWAYS_CUE


def shown_accuracy_table(table: pd.DataFrame) -> Any:
    """The accuracy table as drawn: six columns, numbers formatted (the values stay exact)."""
    return (
        table[SHOWN_ACCURACY_COLUMNS]
        .style.format({"smallest ε": "{:.4g}", "probability met at that ε": "{:.4f}"})
        .hide(axis="index")
    )


def dataset_summary(dataset: Any) -> dict[str, Any]:
    return {
        "name": dataset.name,
        "income column": dataset.column,
        "n": dataset.n,
        "source": "uploaded file (confidential)" if dataset.confidential else dataset.source,
    }


def plan_memo(view: AccuracyFirstView, budget: float, dataset: dict[str, Any], *, confidential: bool = False) -> str:
    """The decision memo of an accuracy-first plan (ui.memo): data, ε per statistic and the accuracy it
    buys, total. Built only when the download button is clicked. ``confidential``: solved on a confidential
    file: the title and a note say that every number in it is computed from the records (not for publication)."""
    from ui import memo as memo_html

    rows = [
        {
            "statistic": r.statistic,
            "ε": r.epsilon,
            "accuracy it buys": f"{r.target} (probability {r.achieved:.3f} at this ε)",
            "privacy cost": r.cost,
        }
        for r in view.rows
    ]
    notes = [
        f"An attacker who was 1% sure of a fact about one person is at most "
        f"{percent_text(view.belief_from_1pct)} sure after the whole release."
    ]
    if view.cost is not None and view.cost.kind != "pure":
        notes.append(f"Privacy cost of the plan (sequential composition): {view.cost.text}.")
    title = "Decision memo: privacy budget plan"
    if confidential:
        title = "CONFIDENTIAL planning memo: computed from the confidential file (not for publication)"
        notes.insert(
            0,
            "CONFIDENTIAL: every ε and probability in this memo was computed from the confidential "
            "records (planning is not private). Do not publish them, and do not release with these "
            "exact ε: choose a round, public ε in Release mode (or plan on synthetic data).",
        )
    return memo_html.decision_memo_html(
        title=title,
        dataset=dataset,
        plan_rows=rows,
        total_epsilon=view.total_epsilon,
        cap_epsilon=budget,
        figures=[memo_html.epsilon_figure({r.statistic: r.epsilon for r in view.rows}, {})],
        notes=notes,
    )


def render_cost(cost: Any) -> None:
    """The plan's privacy cost when it is not pure ε: its currency and how it was composed."""
    if cost is None or cost.kind == "pure":
        return
    st.metric("Privacy cost of the plan (sequential composition)", cost.text.split(":")[0])
    if cost.explicit_conversion:
        st.caption(
            f"The zCDP part was converted to (ε, δ) at δ = {cost.conversion_delta:g} before it was added "
            "to the (ε, δ) parts (zCDP and (ε, δ) do not compose otherwise)."
        )
    elif cost.kind == "zcdp":
        st.caption(
            "The Gini's Laplace log-normal noise is ρ-zCDP: ρ adds up in zCDP (a pure ε counts as ε²/2); the "
            f"plan's total ε is its (ε, δ) at δ = {cost.conversion_delta:g}, the noise's δ — the smaller of "
            "converting the total ρ, or adding the pure ε to the converted ρ of the Gini (both valid)."
        )
    else:
        st.caption(
            "The Gini's Laplace noise is (ε, δ)-DP: the plan's ε and δ add up over the statistics "
            "(basic composition), so the plan's total ε comes with this δ."
        )


ANSWER_LABEL = "Total ε of the plan"


def _answer(
    view: AccuracyFirstView | HalfWidthView, budget: float, relax: str = "lower probability, larger error"
) -> None:
    """The plan's total ε, what it means for a person, whether it fits the budget, and its cost when not pure ε."""
    c1, c2, c3 = st.columns(3)
    c1.metric(
        ANSWER_LABEL,
        f"{view.total_epsilon:.4g}",
        help="The smallest ε of each statistic, added up (sequential composition: the statistics are "
        "computed on the same people).",
    )
    c2.metric(
        "Largest belief from a 1% prior",
        percent_text(view.belief_from_1pct),
        help="An attacker 1% sure of a fact about one person is at most this sure after the whole release.",
    )
    fits = view.total_epsilon <= budget * (1 + 1e-12)
    c3.metric(
        "Your total ε (slider above)", f"{budget:.4g}", help=f"The plan {'fits' if fits else 'exceeds'} this budget."
    )
    if not fits:
        st.warning(
            f"The plan needs ε = {view.total_epsilon:.4g} in total, more than the ε = {budget:.4g} you can "
            f"afford: relax a target ({relax}) or raise the total."
        )
    render_cost(view.cost)


def render_accuracy(
    view: AccuracyFirstView, budget: float, dataset: dict[str, Any], *, confidential: bool = True
) -> None:
    """The answer first (total ε, what it means, whether it fits the budget), then the table behind it.
    ``confidential``: the plan was solved on a confidential file (remembered with it; its memo is marked)."""
    _failures(view.failures)
    if not view.rows:
        return
    remember_plan(view, confidential=confidential, data_name=str(dataset.get("name", "")))
    table = _remembered("accuracy_table", view, lambda: accuracy_table(view))
    _answer(view, budget)
    st.markdown(
        "For each statistic, the **smallest ε** that meets its target on the planning data. Closed forms are "
        "exact; the percentiles need simulation, so their ε carries Monte Carlo uncertainty (we report the "
        "conservative end; see the CSV)."
    )
    st.markdown(INTERVAL_NOTE + sideways_cue(), unsafe_allow_html=True)
    st.table(
        _remembered("accuracy_table_shown", view, lambda: shown_accuracy_table(table)),
        alt="Smallest ε meeting each statistic's target",
    )
    show_figure(
        figure("fig_epsilons", view, table.rename(columns={"smallest ε": "epsilon"}), view.total_epsilon),
        width="stretch",
    )
    download_csv(table, "Download this table (CSV)", "planner_accuracy_first.csv", key="planner_dl_acc")
    st.download_button(
        "Download the decision memo (HTML, works offline)",
        lambda: plan_memo(view, budget, dataset, confidential=confidential).encode(),
        file_name="dp_plan_memo.html",
        mime="text/html",
        key="planner_dl_memo",
        help="A self-contained report of this plan for the people who approve the release.",
    )
    if view.dots:
        st.markdown(
            "**Plausible releases at the chosen ε** — each dot is 1/20 of the releases the mechanism could "
            "produce (a quantile dot plot); green dots are within the target."
        )
        frame = _remembered("dots_frame", view, lambda: plots_planner.dots_frame(view.dots))
        for dots in view.dots:
            title = f"{dots.statistic} at ε = {dots.epsilon:.3g} ({100 * dots.confidence:g}% target)"
            show_figure(
                _remembered("fig_quantile_dots", dots, functools.partial(_quantile_dots, frame, dots, title), title),
                width="stretch",
            )
        download_csv(frame, "Download the dot-plot data (CSV)", "planner_dots.csv", key="planner_dl_dots")


def _quantile_dots(frame: pd.DataFrame, dots: StatisticDots, title: str) -> go.Figure:
    """The dot plot of one statistic, its target in its own unit: Gini points for an absolute target (its dots
    ``errors_abs``), else % of the true value."""
    rows = frame[frame["statistic"] == dots.statistic]
    if dots.errors_abs is not None and dots.abs_error is not None:
        return plots_planner.fig_quantile_dots(rows, dots.abs_error, title, gini_points=True)
    return plots_planner.fig_quantile_dots(rows, 100 * dots.rel_error, title, gini_points=False)


# ---------------------------------------------------------------------------------------------
# Accuracy first, stated as the half-width of the published intervals
# ---------------------------------------------------------------------------------------------

#: how an accuracy-first target is stated (the choice at the top of Accuracy first)
RELATIVE_ERROR, HALF_WIDTH = "relative error", "interval half-width"
TARGET_MODES = [RELATIVE_ERROR, HALF_WIDTH]
#: the half-width targets of the accuracy-first view ({kind: {"half_width", "relative", "level"}}, or None in the
#: relative-error mode): the share view's script and the plan carry them
HALF_WIDTHS_KEY = "_planner_half_widths"
#: default half-widths in each statistic's unit (dpcore.views.planner.INTERVAL_UNITS) and in % of the value;
#: the percentiles' and medians' intervals are never narrower than their bins (PSEO's: about ±15% of the first
#: quartile), the relative risk's than its sampling uncertainty (about ±0.08 at n = 10,000)
HALF_WIDTH_DEFAULTS = {
    "gini": (0.01, 3),
    "mean": (1000.0, 2),
    "group_means": (1000.0, 3),
    "percentiles": (5000.0, 20),
    "group_medians": (5000.0, 15),
    "ratio": (0.1, 10),
    "count": (50.0, 5),
}
#: the unit an absolute half-width is typed in, per statistic
HALF_WIDTH_UNITS = {**planner_experiments.INTERVAL_UNITS, "gini": "Gini points, 0.01 = one point"}


def half_width_choice(kinds: list[str]) -> dict[str, dict[str, Any]] | None:
    """Accuracy first's choice of target: ``None`` for the relative error (the settings' targets), else the
    half-width of each statistic's published 95% interval, typed here ({kind: target as plain data})."""
    mode = qp_radio(
        "State each target as",
        "planner_target_mode",
        TARGET_MODES,
        RELATIVE_ERROR,
        horizontal=True,
        help="relative error: each released value within ±X% of the truth with probability Y% (set in the "
        "settings below); interval half-width: every published 95% interval at most ±X wide.",
    )
    if mode == RELATIVE_ERROR:
        st.session_state[HALF_WIDTHS_KEY] = None
        return None
    st.markdown(
        "Every released value is published with a **95% interval**: a range that anyone can compute from the "
        "published numbers and that contains the true value 95% of the time. Say how wide you can accept it, "
        "e.g. ±1,000 around a mean income; the page finds the smallest ε whose **expected** interval is that "
        "narrow (on the planning data)."
    )
    relative = qp_toggle(
        "Give each half-width as a % of the value",
        "planner_hw_relative",
        False,
        help="±X% of the statistic's value on the planning data (as every planning number).",
    )
    targets = {}
    # bottom-aligned: the labels wrap to different heights, and the fields sat at different heights under them
    columns = [column for _ in range(0, len(kinds), 4) for column in st.columns(4, vertical_alignment="bottom")]
    columns = columns[: len(kinds)]
    for column, kind in zip(columns, kinds, strict=True):
        absolute, percent = HALF_WIDTH_DEFAULTS[kind]
        label = planner.STAT_KINDS[kind]
        if relative:
            value = qp_number(
                f"{label}: ± % of the value",
                f"planner_hwp_{kind}",
                float(percent),
                min_value=0.1,
                max_value=100.0,
                step=1.0,
                container=column,
            )
            targets[kind] = {"half_width": float(value) / 100.0, "relative": True, "level": 0.95}
        else:
            value = qp_number(
                f"{label}: ± {HALF_WIDTH_UNITS[kind]}",
                f"planner_hw_{kind}",
                absolute,
                min_value=1e-6,
                max_value=1e12,
                step=absolute / 10,
                format="%g",
                container=column,
            )
            targets[kind] = {"half_width": float(value), "relative": False, "level": 0.95}
    st.session_state[HALF_WIDTHS_KEY] = targets
    return targets


def remembered_half_widths(kinds: list[str]) -> dict[str, dict[str, Any]] | None:
    """The half-width targets Accuracy first was last shown with, if they are for these statistics (else None: the
    relative-error plan)."""
    targets = st.session_state.get(HALF_WIDTHS_KEY)
    return targets if targets and list(targets) == list(kinds) else None


#: the expected half-width column of the half-width plan
HALF_WIDTH_COLUMN = "expected half-width of its 95% intervals at that ε"


def _half_width_text(row: Any) -> str:
    sol = row.solution
    text = f"±{100 * sol.achieved:.3g}% of the value" if sol.target.relative else "±" + _amount(sol.widest, sol.unit)
    if len(sol.half_widths) > 1:
        text = f"up to {text} (widest of {len(sol.half_widths)})"
    return text


def half_width_table(view: HalfWidthView) -> pd.DataFrame:
    """Every column of the half-width plan (the CSV download)."""
    return pd.DataFrame(
        [
            {
                "statistic": r.statistic,
                "target": r.target,
                "smallest ε": r.epsilon,
                HALF_WIDTH_COLUMN: _half_width_text(r),
                "how it was found": r.solution.method,
                "note": r.solution.note,
                "privacy cost": r.cost,
            }
            for r in view.rows
        ]
    )


def render_half_width(
    view: HalfWidthView, budget: float, dataset: dict[str, Any], *, confidential: bool = True
) -> None:
    """The half-width plan as the relative-error one: the answer first, then one row per statistic with its ε and
    the expected half-width of its published intervals there."""
    _failures(view.failures)
    if not view.rows:
        return
    remember_plan(view, confidential=confidential, data_name=str(dataset.get("name", "")))
    table = _remembered("half_width_table", view, lambda: half_width_table(view))
    _answer(view, budget, relax="a larger half-width")
    st.markdown(
        "For each statistic, the **smallest ε** at which every interval it publishes is expected to be within "
        "your half-width on the planning data (the Gini: its typical width on these data; the note gives the "
        "release's public model)." + sideways_cue(),
        unsafe_allow_html=True,
    )
    st.table(
        table[["statistic", "target", "smallest ε", HALF_WIDTH_COLUMN, "note"]]
        .style.format({"smallest ε": "{:.4g}"})
        .hide(axis="index"),
        alt="Smallest ε at which each statistic's intervals meet your half-width",
    )
    show_figure(
        figure("fig_epsilons", view, table.rename(columns={"smallest ε": "epsilon"}), view.total_epsilon),
        width="stretch",
    )
    download_csv(table, "Download this table (CSV)", "planner_half_width_first.csv", key="planner_dl_hw")


def budget_frame(view: BudgetFirstView) -> pd.DataFrame:
    widths = _widths_by_statistic(view.interval_widths)
    return pd.DataFrame(
        [
            {
                "statistic": r.statistic,
                "epsilon": r.epsilon,
                "relative_error_percent": 100 * r.relative_error,
                "error within ±": (
                    f"{r.abs_error:.4f} Gini points"
                    if r.abs_error is not None
                    else f"{100 * r.relative_error:.3g}% of the value"
                ),
                "confidence_percent": 100 * r.confidence,
                "privacy cost": r.cost,
                INTERVAL_COLUMN: interval_text(widths.get(r.statistic)),
            }
            for r in view.rows
        ]
    )


def render_budget(view: BudgetFirstView) -> None:
    _failures(view.failures)
    if not view.rows:
        return
    frame = _remembered("budget_frame", view, lambda: budget_frame(view))
    show_figure(figure("fig_budget", view, frame), width="stretch")
    render_cost(view.cost)
    st.markdown(INTERVAL_NOTE)
    st.dataframe(
        frame.drop(columns=["relative_error_percent"]).rename(columns={"confidence_percent": "with probability %"}),
        hide_index=True,
        width="stretch",
    )
    download_csv(frame, "Download the split (CSV)", "planner_budget_first.csv", key="planner_dl_budget")


#: the deployment table's columns shown in the editor (δ, ρ, model and source are in its CSV): all eight
#: scrolled sideways (1,621 px in 818 at 1280x720)
DEPLOYMENT_COLUMNS = ["organisation", "release", "epsilon", "privacy unit"]
DEPLOYMENT_COLUMN_CONFIG = {
    "organisation": st.column_config.TextColumn(width=150),
    "release": st.column_config.TextColumn(width=350),
    "epsilon": st.column_config.NumberColumn(width=80),
    "privacy unit": st.column_config.TextColumn(width=190),
}


def risk_controls() -> tuple[float, float]:
    """The epsilon and prior of the attacker-belief view."""
    st.markdown(
        "Suppose an attacker believes with probability *p* (the **prior**) that a given person is in the data, "
        "or has some attribute. Whatever else they know, after seeing an ε-DP release their belief can rise "
        "at most to **p·e^ε / (1 − p + p·e^ε)**."
    )
    c1, c2 = st.columns(2)
    eps = qp_slider("ε to examine", "planner_risk_eps", 0.05, 20.0, 1.0, 0.05, container=c1)
    prior = qp_slider("Attacker's prior belief, %", "planner_prior", 0.1, 99.0, 1.0, 0.1, container=c2)
    return float(eps), float(prior) / 100.0


def render_risk(view: AttackerBeliefView) -> None:
    st.metric(
        f"Largest belief after an ε = {view.epsilon:g} release, from a {100 * view.prior:g}% prior",
        f"{100 * view.largest_belief:.2f}%",
    )
    frame = plots_planner.posterior_frame(
        view.curve_epsilons, np.asarray(view.priors), [np.asarray(c) for c in view.curves]
    )
    show_figure(figure("fig_posterior", view, frame, view.prior), width="stretch")
    download_csv(frame, "Download the curves (CSV)", "planner_posterior.csv", key="planner_dl_post")
    st.markdown(
        "**ε used in real deployments** (editable: add your organisation's releases). The units differ "
        "(per person for the whole release, per user per day, local vs central DP), so compare with care."
    )
    edited = st.data_editor(
        pd.DataFrame(risk.deployments_table()),
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        key="planner_deploy_editor",
        column_order=DEPLOYMENT_COLUMNS,
        column_config=DEPLOYMENT_COLUMN_CONFIG,
    )
    with guard("the deployment table"):
        eps_col = pd.to_numeric(edited["epsilon"], errors="coerce")
        ok = eps_col.notna() & (eps_col > 0)
        table = edited.loc[ok, ["organisation", "release", "epsilon", "privacy unit"]].copy()
        table[f"largest belief from a {100 * view.prior:g}% prior, %"] = [
            100 * risk.max_posterior(view.prior, float(e)) for e in eps_col[ok]
        ]
        st.table(
            table.reset_index(drop=True)
            .style.format({"epsilon": "{:g}", table.columns[-1]: "{:.2f}"})
            .hide(axis="index"),
            alt="Deployments and the largest belief each ε allows",
        )
        download_csv(edited, "Download the deployment table (CSV)", "planner_deployments.csv", key="planner_dl_deploy")


def script_settings(
    specs: tuple[StatisticTarget, ...],
    dataset: Any,
    group_column: str | None,
    seed: int,
    alloc: dict[str, float],
    half_widths: dict[str, dict[str, Any]] | None = None,
) -> tuple[dict[str, Any], str]:
    """Keyword arguments of :func:`dpcore.views.planner.planner_view` for this view (plain
    literals), and the script's data argument (``values``, or ``frame`` when a group column is used);
    ``half_widths``: Accuracy first's half-width targets (:func:`remembered_half_widths`), if any."""
    kwargs: dict[str, Any] = {"statistics": [s.to_dict() for s in specs]}
    if group_column is not None:
        kwargs.update(income_column=dataset.column, group_column=group_column)
    kwargs.update(group_seed=int(seed), allocation=[float(alloc[s.kind]) for s in specs])
    if half_widths is not None:
        kwargs["half_widths"] = half_widths
    return kwargs, ("frame" if group_column is not None else "values")


def _gini_noise(specs: tuple[StatisticTarget, ...]) -> str:
    for spec in specs:
        if spec.kind == "gini":
            return str(dict(spec.params).get("noise", "cauchy"))
    return "cauchy"


def _refusal(noise: str) -> str | None:
    """The real release offers the Gini with "cauchy" and "laplace" only (dpcore.noise.smooth: check_real_release)."""
    if noise in ("cauchy", "laplace"):
        return None
    return REFUSED_REAL_RELEASE.get(
        noise,
        f"Plan only: a **real release** of the Gini with the {noise} noise is "
        "refused (no floating-point-safe sampler). Release with the Laplace or "
        "the generalized Cauchy noise.",
    )


def release_refusal(specs: tuple[StatisticTarget, ...]) -> str | None:
    """Why a real release of the planned statistics will be refused (before the user gets there), or None."""
    return _refusal(_gini_noise(specs))


def release_delta_note(specs: tuple[StatisticTarget, ...]) -> str | None:
    """What an (ε, δ) Gini needs from the ledger account (a δ cap at least its δ), or None."""
    if _gini_noise(specs) != "laplace":
        return None
    delta = dict(next(s for s in specs if s.kind == "gini").params)["delta"]
    return (
        f"The Gini with the Laplace noise is (ε, δ)-DP: each of its releases spends δ = {delta:g}. The ledger "
        f"refuses it unless the account's δ cap is at least {delta:g} (set with the ε cap when the account is "
        "created)."
    )


def release_plan_download(
    kinds: list[str],
    specs: tuple[StatisticTarget, ...],
    statistic_for: Callable[[str], Any],
    alloc: dict[str, float],
    dataset: Any,
    group_column: str | None,
    total: float,
) -> None:
    """The plan file for ``python -m dpcore release`` (docs/plan_format.md): exactly the release Release
    mode makes -- the same ε per statistic, the same cap and the same cells ([keys]: the group labels declared
    public; cell_sizes: "public" when their sizes are declared public too), from one function
    (:func:`ui.planner.choices.release_choices`: the Release fields' values, else the accuracy-first ε
    rounded up to the field's 4 decimals, else the budget-first split; the account's fixed cap, else the
    cap field; the declaration of the groups) -- and what it leaves out. Where Release mode cannot release the
    group statistics (their sizes not declared public), the page says so: the file is then the command line's
    release, with noisy cell sizes, which cost more and are said.

    The Gini is written with the noise it was planned with (the plan's ``noise`` field: "cauchy" or
    "laplace" with its delta, and ``cap_delta``), so the release uses the planner's calibration; the
    Laplace log-normal noise has no floating-point-safe sampler and is left out and named
    (:func:`dpcore.plan.plan_from_planner_choices`), never written with another noise than the one planned."""
    from dpcore.plan import write_plan

    account = existing_account(dataset)
    choices = release_choices(kinds, alloc, account, ds=dataset, group_column=group_column)
    if choices.planned_confidential:  # its ε are a function of the confidential records: never written as public
        st.warning(CONFIDENTIAL_PLAN_NOTE)
        source = (
            "the Release fields, else the budget-first split (the accuracy-first ε were solved on the "
            "confidential file)"
        )
    else:
        source = (
            "your accuracy-first plan" if choices.planned else "the budget-first split (no accuracy-first plan yet)"
        )
    if choices.problems:  # a Release field out of range: said in words, no file (Release mode refuses it too)
        st.warning(" ".join(choices.problems) + " Correct it in Release mode. No plan file is offered.")
        return
    if large_epsilon_warning(choices.total):
        st.warning(large_epsilon_warning(choices.total))
    if choices.total > total * (1 + 1e-12):
        st.warning(
            f"**This plan spends ε = {choices.total:.4g}, more than your total ε = {total:.4g}** (the slider "
            "above): meeting every accuracy target costs that much. Relax a target, drop a statistic, or "
            "accept the larger ε."
        )
    params_of = {s.kind: dict(s.params) for s in specs}
    plan, left_out = release_plan(choices, kinds, statistic_for, params_of.get, dataset, group_column)
    cost = plan.total_epsilon
    st.markdown(
        f"**The release plan** (for the command line): exactly what Release mode will release — ε per "
        f"statistic from {source}, "
        + ", ".join(f"{planner.STAT_KINDS[k]} {eps:g}" for k, eps in choices.epsilons.items())
        + f"; total ε = {cost:.4g}; cap ε = {choices.cap:.4g} "
        + (
            "(the fixed cap of these data's ledger account)."
            if choices.cap_fixed
            else "(the cap field of Release mode)."
        )
        + (
            f" The groups: the labels declared public ({len(choices.declared_labels or ()):,}), "
            + ("their sizes public." if choices.cell_sizes == "public" else "their sizes noisy.")
            if choices.keys
            else ""
        )
    )
    if (
        choices.groups_refusal is not None
        and group_column
        and any(k in planner_experiments.GROUPED_KINDS for k in kinds)
    ):
        st.info(
            "**Release mode cannot release the group statistics of this plan** (it needs the group labels and "
            "their sizes declared public, in Release mode). The command line can: "
            + (
                "each group's size is then a noisy count"
                if choices.keys
                else "the groups are selected with DP and each size is a noisy count"
            )
            + f", ε = {choices.noisy_cell_epsilon:.4g} more in all, included in the total above."
        )
    available = choices.cap if account is None else max(0.0, choices.cap - account.spent_epsilon())
    if cost > available * (1 + 1e-12):
        st.warning(
            f"{'Release mode' if choices.groups_refusal is None else 'The command line'} would refuse this plan: "
            f"it needs ε = {cost:.4g} and only ε = {available:.4g} is available under the cap of these data "
            f"{'(raise the cap in Release mode)' if account is None else ''}. No plan file is offered."
        )
        return
    text = write_plan(plan)
    st.download_button(
        "Download the release plan",
        text,
        file_name="release_plan.toml",
        mime="application/toml",
        key="planner_release_plan",
        help="Run it on the full data: python -m dpcore release release_plan.toml "
        "--data FILE --out DIR (docs/release_cli.md)",
    )
    if left_out:
        st.caption("Not in the plan: " + "; ".join(left_out))
    with st.expander("What the plan file says"):
        st.code(text, language=None, wrap_lines=True)  # plain: Streamlit's syntax colours fail WCAG contrast
