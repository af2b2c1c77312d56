"""The Gini page's controls, its cached view calls and its answer box (the page, ``app_pages/gini.py``, wires
them: controls -> one cached :func:`dpcore.views.gini.gini_view` call -> the renderers of :mod:`ui.gini.views`).

The cached calls are keyed by the data's digest (:func:`ui.gini.views.data_digest`: computed once per data set)
and the settings' text (:func:`ui.gini.views.settings_key`); records and settings are passed unhashed, so a rerun
does not hash the records and walk the settings dicts once per call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from dpcore import defaults
from dpcore.views import answers as answer_experiments
from dpcore.views import gini as gini_experiments
from ui import answer_views
from ui.common import qp_number, qp_radio, qp_select_slider, qp_slider, run_on_button
from ui.gini import noise_choice
from ui.gini import views as gini_views

GAMMA_OPTIONS = [1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0]
BOUNDS_PUBLIC = "Public bounds (typed in, chosen without looking at the data)"
BOUNDS_DP = "Estimate U with DP (costs extra ε)"
LIGHT_EXACT_MIN_EPSILON = 1.0  # below it, light-tailed noises use the fast bound in the view (see slow_light)


# cache_resource: one shared, never-changed view object per setting (no pickling of its 40,000 draws per rerun);
# renderers only read it.
@st.cache_resource(show_spinner=False, max_entries=32)
def cached_view(data_digest: str, settings_key: str, _values: np.ndarray, _settings: dict) -> gini_experiments.GiniView:
    return gini_experiments.gini_view(_values, **_settings)


@st.cache_data(show_spinner=False, max_entries=32)
def cached_answer(
    data_digest: str, settings_key: str, _values: np.ndarray, _settings: dict
) -> answer_experiments.GiniAnswer:
    return answer_experiments.gini_answer(_values, **_settings)


@st.cache_data(show_spinner="Finding the ε for your target...", max_entries=32)
def cached_recommendation(
    data_digest: str, settings_key: str, _values: np.ndarray, _settings: dict
) -> answer_experiments.EpsilonRecommendation:
    return answer_experiments.gini_recommendation(_values, **_settings)


@st.cache_resource(show_spinner=False, max_entries=16)
def warm_calibrations(epsilons: tuple[float, ...], gamma: float, calibration: str, noise: str) -> object:
    """Once per process and setting, after the live view is drawn: the calibration of every ε of the slider
    (public), in a background thread (:func:`ui.gini.noise_choice.warm_slider_calibrations`), so a slider move
    finds it ready and a first visit does not wait for it."""
    return noise_choice.warm_slider_calibrations(list(epsilons), gamma=gamma, calibration=calibration, noise=noise)


@st.cache_data(show_spinner=False, max_entries=8)
def subsample(data_digest: str, _values: np.ndarray, n: int) -> np.ndarray:
    return gini_experiments.subsample(_values, n)


@dataclass(frozen=True)
class GiniControls:
    """What the controls hold (public settings); ``upper_area``: where the DP estimate of U is said, once known."""

    epsilon: float
    noise: str
    gamma: float
    n: int
    method: str
    calibration: str
    bounds_mode: str
    lower: float
    upper: float | None
    upper_epsilon: float
    upper_area: Any


def controls(ds: Any, epsilons: Sequence[float], default_upper: float) -> GiniControls:
    """Draw the page's controls (ε, the noise, n, the advanced settings, the income bounds) and the total ε."""
    c1, c2, c3 = st.columns(3)
    advanced = st.expander("Advanced: noise tail γ, noise calibration, sensitivity bound")
    eps = float(
        qp_select_slider(
            "Privacy loss ε (log scale)",
            "gini_eps",
            list(epsilons),
            1.0,
            container=c1,
            help="Smaller ε = stronger privacy = more noise. Steps are roughly "
            "evenly spaced on a log scale from 0.05 to 5.",
        )
    )
    noise = noise_choice.noise_selector("gini", container=c1)  # every number below follows it (sections.NOISE)
    gamma = float(
        qp_select_slider(
            "Noise tail γ (> 1)",
            "gini_gamma",
            GAMMA_OPTIONS,
            defaults.GINI_GAMMA,
            container=advanced,
            help="Noise density ∝ 1/(1+|z|^γ). The paper uses γ = 2 (Cauchy-like, "
            "no mean or variance). γ > 3 gives a finite variance (an RMSE).",
        )
    )
    n = ds.n
    if ds.n > 2:
        if st.session_state.get("gini_n", 0) > ds.n:
            st.session_state["gini_n"] = ds.n
        n = int(
            qp_slider(
                "Records used n (random sub-sample)",
                "gini_n",
                2,
                ds.n,
                ds.n,
                1,
                container=c2,
                help="A fixed random sub-sample of the sidebar data (the sidebar seed only redraws "
                "the noise). n is public.",
            )
        )
    method = qp_radio(
        "Sensitivity bound",
        "gini_method",
        ["exact", "fast"],
        "exact",
        container=advanced,
        format_func=gini_views.METHOD_LABELS.get,
        horizontal=True,
    )
    if method == "exact" and n > 200_000:
        advanced.caption(
            "On this many records the exact bound takes a few seconds per change; 'fast' is instant and never smaller."
        )
    calibration = qp_radio(
        "Noise calibration",
        "gini_cal",
        ["tight", "paper"],
        defaults.GINI_CALIBRATION,
        container=advanced,
        format_func=gini_views.CAL_LABELS.get,
        help="Both are ε-DP. 'paper' uses α = ε/(4γ); 'tight' the largest α whose "
        "privacy loss is certified ≤ ε (about 5× less noise at γ = 2).",
    )
    bounds_mode = qp_radio(
        "Income bounds [L, U]", "gini_bounds", [BOUNDS_PUBLIC, BOUNDS_DP], BOUNDS_PUBLIC, container=c3
    )

    b1, b2, b3 = st.columns(3)
    lower = float(
        qp_number(
            "Lower bound L",
            "gini_L",
            0.0,
            min_value=0.0,
            max_value=1e12,
            step=1000.0,
            container=b1,
            help="Incomes below L (including losses) are set to L.",
        )
    )
    upper: float | None = None
    upper_eps = 0.0
    if bounds_mode == BOUNDS_PUBLIC:
        upper = float(
            qp_number(
                "Upper bound U",
                "gini_U",
                default_upper,
                min_value=0.0,
                max_value=1e13,
                step=100_000.0,
                container=b2,
                help="Public: chosen from outside knowledge, never from this file. Incomes above U are clipped to U.",
            )
        )
    else:
        upper_eps = float(
            qp_select_slider(
                "ε spent on U",
                "gini_eps_u",
                [0.05, 0.1, 0.15, 0.2, 0.3, 0.5],
                0.15,
                container=b2,
                help="Paper: 0.075 for a noisy count + 0.075 for the AboveThreshold search; U = 2.5 × the estimate.",
            )
        )
    b3.metric(
        "Total privacy loss ε",
        f"{eps + upper_eps:g}",
        help="ε of the Gini release plus ε spent on U (sequential composition).",
    )
    if noise != "cauchy":
        b3.caption(f"plus δ = {noise_choice.DEFAULT_DELTA:.0e}: {noise_choice.NOISE_LABELS[noise]}")
    return GiniControls(
        eps, str(noise), gamma, int(n), str(method), str(calibration), str(bounds_mode), lower, upper, upper_eps, b2
    )


def answer(
    view: gini_experiments.GiniView,
    chosen: GiniControls,
    ds: Any,
    digest: str,
    *,
    target: tuple[float, float],
    slow_light: bool,
    epsilons: Sequence[float],
    container: Any,
) -> None:
    """The answer sentence at the chosen ε and the ε recommended for ``target`` (error, confidence), in
    ``container``; with a light-tailed noise at a small ε (``slow_light``) the answer waits for a click."""
    answer_settings = {
        "lower": chosen.lower,
        "upper": view.upper,
        "gamma": chosen.gamma,
        "calibration": chosen.calibration,
        "n": chosen.n,
        "noise": chosen.noise,
    }
    answer_args = {"epsilon": chosen.epsilon, **answer_settings}
    answer_key = gini_views.settings_key(answer_args)
    result = (
        run_on_button(
            "Compute the answer (exact bound; slow at small ε with this noise)",
            "gini_answer_run",
            lambda: cached_answer(digest, answer_key, ds.values, answer_args),
            what="the answer",
            state_key=f"gini_answer_{sorted(answer_args.items())}",
        )
        if slow_light
        else cached_answer(digest, answer_key, ds.values, answer_args)
    )
    if result is not None:
        target_error, target_confidence = target
        wanted = {
            "target_error": target_error,
            "confidence": target_confidence,
            **answer_settings,
            "max_epsilon": max(epsilons),
            "min_epsilon": min(epsilons),
        }
        recommendation = cached_recommendation(digest, gini_views.settings_key(wanted), ds.values, wanted)
        answer_views.gini_answer(result, recommendation, container)
        gini_views.answer_note(view)  # which accuracy the sentence means; the published interval's width
