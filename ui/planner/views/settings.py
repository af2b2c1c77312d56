"""What the planner plans: the statistics, the groups / cells, each statistic's public settings and accuracy target.

The page reads its settings here, above the answer: the statistics (:func:`qp_multiselect`), the group column or
random groups and the notes on the data's columns (:func:`choose_groups`, with the planning data's cache key,
:func:`fingerprint`), and one row of widgets per statistic (:func:`statistic_settings`: its public parameters and
its target, as the :class:`dpcore.views.planner.StatisticTarget` specs the view functions take). What the Gini's
chosen noise implies for a real release (:func:`release_refusal`, :func:`release_delta_note`) lives beside the
noise selector that decides it. Only controls: nothing here computes a plan.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import defaults, planner
from dpcore.noise import smooth as smooth_noise
from dpcore.noise.smooth import SMOOTH_NOISES
from dpcore.views import planner as planner_experiments
from dpcore.views.planner import StatisticTarget
from ui.common import qp_number, qp_selectbox, qp_slider, write_url_value

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


def dataset_summary(dataset: Any) -> dict[str, Any]:
    return {
        "name": dataset.name,
        "income column": dataset.column,
        "n": dataset.n,
        "source": "uploaded file (confidential)" if dataset.confidential else dataset.source,
    }


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
