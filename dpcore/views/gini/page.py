"""The Gini page's view: one call, settings + incomes -> :class:`GiniView` (a planning view, not a release)."""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ... import gini as gini_mechanism
from ... import intervals as intervals_lib
from ...noise import GeneralizedCauchy
from ...noise import smooth as smooth_noise
from ...noise.guarantees import publish_gini
from ...validation import (
    DPInputError,
    as_finite_array,
    check_epsilon,
    check_finite,
    check_gamma,
    check_int,
    check_positive,
)
from .errors import CALIBRATIONS, COLUMNS, check_epsilons, clamp_probability, plausible_releases, published_inputs
from .experiments import check_method, error_vs_epsilon, laplace_summary, law_summary

#: quantile points of the midpoint rule behind the typical interval width (:func:`typical_clipped_width`)
_MIDPOINTS = (np.arange(4000) + 0.5) / 4000

# The Gini page's view: one call, settings + incomes -> GiniView
# ---------------------------------------------------------------------------------------------

#: The page's fixed random sub-sample of n records (the sidebar seed redraws the noise only).
SUBSAMPLE_SEED = 7919
#: Epsilons of the page's error-against-epsilon chart.
CURVE_EPSILONS: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0)
#: Simulated releases behind the page's histogram of releases.
N_SIMULATED_RELEASES = 20_000
#: Dots of the quantile dot plot ("20 equally likely releases").
N_DOTS = 20
#: Credible level of the posterior interval.
POSTERIOR_LEVEL = 0.95
#: Seed offsets (added to the sidebar seed) of the view's draws.
SEED_OFFSET_RELEASES, SEED_OFFSET_ONE_RELEASE, SEED_OFFSET_UPPER = 2, 3, 11
#: Level of the interval an analyst computes from the published numbers alone (the release's default).
PUBLISHED_LEVEL = intervals_lib.DEFAULT_LEVEL
#: The noises a release with a published interval is offered for (``GiniIntervalMechanism``'s): the
#: Laplace log-normal has no floating-point-safe sampler, so it is never released.
PUBLISHED_NOISES = ("cauchy", "laplace")


#: Error-against-epsilon tables of each data set, kept as long as its shared exact profile is
#: (:func:`dpcore.gini.shared_exact_profile`: the Gini view and the planner share one A^(k) per data set).
_CURVES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CURVES_LOCK = threading.Lock()


def _profile_and_curves(
    xs: np.ndarray, lower: float, upper: float
) -> tuple[gini_mechanism.ExactSensitivityProfile, dict[tuple, pd.DataFrame]]:
    """This clipped data set's shared exact smooth-sensitivity profile (a new epsilon only
    re-weights A^(k)) and its error-against-epsilon tables (beta-free inputs only)."""
    profile = gini_mechanism.shared_exact_profile(xs, lower, upper)
    with _CURVES_LOCK:
        curves = _CURVES.setdefault(profile, {})
    return profile, curves


def calibrate_epsilons(
    epsilons: Sequence[float],
    *,
    gamma: float,
    calibration: str = "tight",
    noise: str = "cauchy",
    delta: float | None = None,
) -> tuple[Any, ...]:
    """The smooth-noise calibrations of ``noise`` at every epsilon of ``epsilons`` (public inputs only).

    A page calls this once per process for its slider's epsilons: the calibrations (the certified
    tight alpha of the generalized Cauchy is a search: docs/benchmarks.md, "Timings behind choices in the code") are remembered by :mod:`dpcore.noise` /
    :mod:`dpcore.noise.smooth`, so a later slider move only does the data-dependent work.
    """
    gamma = check_gamma(gamma)
    return tuple(
        smooth_noise.smooth_calibration(noise, e, delta=delta, gamma=gamma, mode=calibration)
        for e in check_epsilons(epsilons)
    )


def subsample(values: Any, n: int, seed: int = SUBSAMPLE_SEED) -> np.ndarray:
    """The page's random sub-sample of ``n`` records (all of them when n >= their number), drawn
    with its own fixed seed so that the sidebar seed redraws only the noise."""
    x = as_finite_array(values, "incomes", min_size=2)
    n = check_int(n, "n", minimum=2)
    if n >= x.size:
        return x
    return np.random.default_rng(seed).choice(x, size=n, replace=False)


@dataclass(frozen=True)
class PublishedGini:
    """The simulated release drawn the way a real one is (:class:`dpcore.mechanisms.GiniIntervalMechanism`: the
    value at epsilon_value plus a DP upper bound on S_beta(X) at epsilon_bound) and the interval an analyst computes
    from those published numbers alone (:func:`dpcore.intervals.gini_interval_from_release`).

    Every field is a DP output or public: ``value`` and ``s_upper`` are the release; ``lower``/``upper`` the interval
    at ``level`` (post-processing); the split, beta and eta come from public inputs only; ``expected_width`` is the
    plan's median-width model (:attr:`dpcore.intervals.GiniIntervalPlan.model_width`, no data) and
    ``oracle_expected_width`` the same model for the oracle that knows S(X)/alpha (``model_oracle_width``), both at
    most 1 (the interval is cut to [0, 1], where every Gini lies)."""

    value: float
    s_upper: float
    lower: float
    upper: float
    level: float
    epsilon_value: float
    epsilon_bound: float
    beta: float
    eta: float
    expected_width: float
    oracle_expected_width: float
    planning_n: int
    #: the median width on THESE data (planning, not private) of the interval v -+ q clamp(S_beta(X)/alpha) cut to
    #: [0, 1] (:func:`typical_clipped_width`); the bound's noise has median 0, so the margin cancels in the median
    #: of S_hat e^{-margin}
    confidential_typical_width: float = math.nan

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def numbers(self) -> dict[str, float]:
        return {
            "published_gini": self.value,
            "published_smooth_sensitivity_bound": self.s_upper,
            "published_interval_lower": self.lower,
            "published_interval_upper": self.upper,
            "published_epsilon_value": self.epsilon_value,
            "published_epsilon_bound": self.epsilon_bound,
            "published_expected_width": self.expected_width,
            "oracle_expected_width": self.oracle_expected_width,
            "confidential_published_typical_width": self.confidential_typical_width,
        }


@dataclass(frozen=True, eq=False)
class GiniView:
    """Everything the Gini page shows for one setting (a planning view, not a release).

    Every number here is computed from the confidential incomes (the true Gini, the smooth
    sensitivity, the noise scale and the clipping counts describe the data): the page is for
    planning. The one simulated release (``released_gini``) and its posterior are what an analyst
    would see if the agency published at these settings with this seed.

    Every number about the Gini is that of the published value, clamped to [0, 1]: the error quantiles
    (``abs_error_quantiles``, ``laplace_abs_error_quantiles``), the RMSEs, the simulated releases, the dots,
    ``released_gini`` and the published interval's widths.

    ``to_dict()`` gives the page's numbers table (plain floats, one per quantity) and the dot plot;
    the generated script prints exactly that.
    """

    n: int
    epsilon: float
    gamma: float
    lower: float
    upper: float
    upper_epsilon: float
    total_epsilon: float
    calibration: str
    method: str
    confidential_n_negative: int
    confidential_n_below: int
    confidential_n_above: int
    true_gini: float
    smooth_sensitivity: float
    k_star: int
    sensitivity_saturated: bool
    global_sensitivity: float
    alpha: float
    beta: float
    noise_scale: float
    abs_error_quantiles: tuple[float, float, float]
    laplace_scale: float
    laplace_abs_error_quantiles: tuple[float, float, float]
    rmse: float | None
    laplace_rmse: float | None
    saturated: bool
    fast_curve: pd.DataFrame
    exact_curve: pd.DataFrame | None
    fast_k_star: int
    exact_k_star: int | None
    error_curve: pd.DataFrame
    simulated_releases: np.ndarray | None = None
    simulated_laplace_releases: np.ndarray | None = None
    plausible_releases: np.ndarray | None = None
    released_gini: float | None = None
    prior: Any = "uniform"
    posterior_grid: np.ndarray | None = None
    posterior_density: np.ndarray | None = None
    posterior_mean: float | None = None
    posterior_interval: tuple[float, float] | None = None
    posterior_hpd: tuple[float, float] | None = None
    noise: str = "cauchy"
    delta: float = 0.0
    rho: float | None = None
    privacy_statement: str = ""
    published: PublishedGini | None = None  # the release with its interval from the published numbers alone
    published_note: str = ""  # why there is no published interval (a noise that is never released)
    #: P(a release is published at 0 or 1): the clamp's share (planning: uses the true Gini)
    clamp_probability: float = 0.0
    #: the one release was clamped to 0 or 1 (the oracle posterior reads the noisy value before the clamp)
    released_clamped: bool = False

    def numbers(self) -> dict[str, float]:
        """The page's full-precision numbers table: quantity -> value (floats; booleans as 0/1)."""
        med, q90, q99 = self.abs_error_quantiles
        lap_med, lap_q90, lap_q99 = self.laplace_abs_error_quantiles
        out: dict[str, Any] = {
            "n": float(self.n),
            "lower": self.lower,
            "upper": self.upper,
            "upper_epsilon": self.upper_epsilon,
            "total_epsilon": self.total_epsilon,
            "true_gini": self.true_gini,
            "smooth_sensitivity": self.smooth_sensitivity,
            "k_star": float(self.k_star),
            "alpha": self.alpha,
            "beta": self.beta,
            "noise_scale": self.noise_scale,
            "median_abs_error": med,
            "q90_abs_error": q90,
            "q99_abs_error": q99,
            "laplace_median_abs_error": lap_med,
            "laplace_q90_abs_error": lap_q90,
            "laplace_q99_abs_error": lap_q99,
            "saturated": float(self.saturated),
            "clamp_probability": self.clamp_probability,
        }
        if self.noise != "cauchy":  # the light-tailed noises' price: delta (and rho for the zCDP one)
            out.update(delta=self.delta, **({} if self.rho is None else {"rho": self.rho}))
        if self.rmse is not None:
            out.update(rmse=self.rmse, laplace_rmse=self.laplace_rmse)
        if self.released_gini is not None:
            assert self.posterior_interval is not None and self.posterior_hpd is not None  # set with released_gini
            out.update(
                released_gini=self.released_gini,
                posterior_mean=self.posterior_mean,
                posterior_interval_lower=self.posterior_interval[0],
                posterior_interval_upper=self.posterior_interval[1],
                posterior_hpd_lower=self.posterior_hpd[0],
                posterior_hpd_upper=self.posterior_hpd[1],
            )
        if self.published is not None:
            out.update(self.published.numbers())
        return {k: float(v) for k, v in out.items()}

    def error_table(self) -> pd.DataFrame:
        """Error summary of the two mechanisms (median, 90% and 99% absolute error; RMSE when gamma > 3)."""
        table = pd.DataFrame(
            {
                "mechanism": ["smooth sensitivity (this page)", "Laplace, global sensitivity"],
                "median |error|": [self.abs_error_quantiles[0], self.laplace_abs_error_quantiles[0]],
                "90% of errors below": [self.abs_error_quantiles[1], self.laplace_abs_error_quantiles[1]],
                "99% of errors below": [self.abs_error_quantiles[2], self.laplace_abs_error_quantiles[2]],
            }
        )
        if self.rmse is not None:
            table["RMSE"] = [self.rmse, self.laplace_rmse]
        return table

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.numbers())
        if self.plausible_releases is not None:
            out["plausible_releases"] = [float(v) for v in self.plausible_releases]
        return out


def published_gini(
    xs: np.ndarray,
    *,
    epsilon: float,
    lower: float,
    upper: float,
    noise: str,
    gamma: float,
    calibration: str,
    delta: float | None,
    method: str,
    seed: int,
    profile: gini_mechanism.ExactSensitivityProfile | None = None,
) -> PublishedGini:
    """One simulated release of the Gini of the clipped incomes ``xs`` drawn as a real one is, and the interval from
    the published numbers alone.

    Mechanism: :class:`dpcore.mechanisms.GiniIntervalMechanism` at ``epsilon`` (split into epsilon_value for the
    value and epsilon_bound for the DP upper bound on S_beta(X), ln S_beta being beta-sensitive: Lan & Reiter eq. (8)
    and ``dpcore.mechanisms.gini_bound_release``), the split and beta optimised for n = len(xs) (n is public), drawn
    with the numpy generator of ``seed`` (a simulation of the same law, not a release). S_beta(X) is computed at the
    plan's beta, exactly (``profile``) or by the closed form (``method="fast"``, never smaller). The interval is
    :func:`dpcore.intervals.gini_interval_from_release` at :data:`PUBLISHED_LEVEL` with the record's constants:
    value and bound plus public parameters, nothing confidential."""
    from ...mechanisms import GiniIntervalMechanism

    mech = GiniIntervalMechanism(
        epsilon,
        lower,
        upper,
        noise=noise,
        gamma=gamma,
        calibration=calibration,
        delta=None if noise == "cauchy" else delta,
        level=PUBLISHED_LEVEL,
        planning_n=max(int(xs.size), 2),
    )
    beta = mech.smoothness
    if method == "fast" or profile is None:
        s = gini_mechanism.smooth_sensitivity(xs, lower=lower, upper=upper, beta=beta, method=method).value
    else:
        s = profile.smooth_sensitivity(beta).value
    draw = mech.draw(gini_mechanism.gini(xs), float(s), rng=np.random.default_rng(seed))
    constants = mech.interval_constants()
    ci = intervals_lib.gini_interval_from_release(
        draw.value,
        draw.smooth_sensitivity_upper,
        noise=constants["noise"],
        alpha=constants["release_alpha"],
        bound_scale=constants["bound_scale"],
        eta=constants["eta"],
        level=PUBLISHED_LEVEL,
        method=constants["method"],
        gamma=constants["gamma"],
        sigma=constants["sigma"],
        min_scale=constants["min_scale"],
        max_scale=constants["max_scale"],
    )
    plan = mech.plan
    width, oracle_width = expected_widths(
        plan,
        gini_mechanism.GiniCalibration(
            epsilon, lower, upper, noise=noise, gamma=gamma, calibration=calibration, delta=delta
        ),
    )
    scale = min(max(float(s) / constants["release_alpha"], constants["min_scale"]), constants["max_scale"])
    typical = typical_clipped_width(
        gini_mechanism.gini(xs), scale, plan.quantile() * scale, mech.value_mechanism.noise_law()
    )
    return PublishedGini(
        float(draw.value),
        float(draw.smooth_sensitivity_upper),
        float(ci.lower),
        float(ci.upper),
        PUBLISHED_LEVEL,
        float(plan.epsilon_value),
        float(plan.epsilon_bound),
        float(plan.beta),
        float(plan.eta),
        min(width, 1.0),  # the interval is cut to [0, 1]: no wider than 1, whatever the model says
        min(oracle_width, 1.0),
        int(plan.n),
        float(typical),
    )


def typical_clipped_width(true_gini: float, noise_scale: float, half_width: float, law: Any) -> float:
    """The median width of the published interval [v - h, v + h] cut to [0, 1] (``dpcore.intervals``:
    :func:`gini_interval_from_release`), v = clamp(g + s Z, 0, 1) the published value, at the typical half-width
    h (the bound's noise has median 0): the median over the midpoint quantiles of Z. Never above 1."""
    g, s, law = published_inputs(true_gini, noise_scale, law)
    h = check_positive(half_width, "half_width", allow_zero=True)
    v = np.clip(g + s * np.asarray(law.ppf(_MIDPOINTS), dtype=float), 0.0, 1.0)
    return float(np.median(np.minimum(v + h, 1.0) - np.maximum(v - h, 0.0)))


def _published_or_note(xs: np.ndarray, **settings: Any) -> dict[str, Any]:
    """``published`` (:func:`published_gini`), or ``published_note`` saying why these public settings have no
    release with an interval (a real release refuses them too, before any draw)."""
    if settings["noise"] not in PUBLISHED_NOISES:
        return {
            "published_note": "this noise has no floating-point-safe sampler, so it is never released and has no "
            "published interval"
        }
    try:
        return {"published": published_gini(xs, **settings)}
    except DPInputError as exc:  # e.g. no split of epsilon with a feasible calibration (the "paper" constants)
        return {"published_note": f"a release with an interval is not possible at these settings ({exc})"}


def expected_widths(
    plan: intervals_lib.GiniIntervalPlan, full_epsilon: gini_mechanism.GiniCalibration
) -> tuple[float, float]:
    """(published, oracle) median widths of the plan's model (public inputs only, no data):
    :attr:`dpcore.intervals.GiniIntervalPlan.model_width` and ``model_oracle_width``.

    A plan rebuilt from the mechanism's file cache of split choices carries no model widths (NaN), so they are
    recomputed here with the optimiser's own model (:func:`dpcore.intervals.optimise_gini_split`, "pivot"): published
    2 q S_typ(beta) / alpha_release, q the pivot's quantile (:meth:`GiniIntervalPlan.quantile`), and oracle
    2 q_Z(level) S_typ(beta_full) / alpha_full for the value alone at the full epsilon (``full_epsilon``'s
    calibration), S_typ = :func:`dpcore.intervals.planning_smooth_sensitivity` at the plan's n. A test checks both
    against the optimiser's numbers."""
    if math.isfinite(plan.model_width) and math.isfinite(plan.model_oracle_width):
        return float(plan.model_width), float(plan.model_oracle_width)
    if plan.method != "pivot":
        fresh = intervals_lib.optimise_gini_split(
            plan.epsilon,
            plan.delta or None,
            plan.noise,
            plan.n,
            plan.lower,
            plan.upper,
            plan.level,
            method=plan.method,
            gamma=plan.gamma,
        )
        return float(fresh.model_width), float(fresh.model_oracle_width)
    s_typ = intervals_lib.planning_smooth_sensitivity(plan.n, plan.lower, plan.upper, plan.beta)
    width = 2.0 * plan.quantile() * s_typ / plan.release_alpha
    cal = full_epsilon.smooth_calibration
    q_full = float(np.asarray(full_epsilon.noise_law().ppf(0.5 + 0.5 * plan.level), dtype=float))
    oracle = (
        2.0 * q_full * intervals_lib.planning_smooth_sensitivity(plan.n, plan.lower, plan.upper, cal.beta) / cal.alpha
    )
    return float(width), float(oracle)


def _check_prior(prior: Any) -> Any:
    if prior == "uniform":
        return "uniform"
    if isinstance(prior, (tuple, list)) and len(prior) == 3 and prior[0] == "beta":
        return ("beta", check_finite(prior[1], "prior a"), check_finite(prior[2], "prior b"))
    raise DPInputError(f"prior must be 'uniform' or ('beta', a, b), got {prior!r}")


def gini_view(
    values: Any,
    *,
    epsilon: float,
    gamma: float,
    lower: float,
    upper: float | None,
    upper_epsilon: float = 0.0,
    calibration: str = "tight",
    method: str = "exact",
    n: int | None = None,
    prior: Any = "uniform",
    seed: int = 2026,
    noise: str = "cauchy",
    delta: float | None = None,
) -> GiniView:
    """The Gini page's view for one setting: the smooth-sensitivity mechanism of Lan & Reiter (2025)
    on ``values`` (a fixed random sub-sample of ``n`` records), its exact error quantiles next to the
    Laplace global-sensitivity baseline, the smooth-sensitivity curves (eq. (8)), the error against
    epsilon, and, unless the noise swamps the Gini, simulated releases, the quantile dot plot and one
    release with its posterior (eq. (11), noise scale treated as known as in the paper).

    Neighbouring relation: replace one record; n, L, U (or U's DP estimate), epsilon and gamma public.
    ``upper=None`` estimates U with DP (Section 5.1, :func:`dpcore.bounds.dp_upper_bound`, epsilon
    ``upper_epsilon`` split equally between the noisy n and the counts, seed + 11); its epsilon is
    added to the total. Incomes below L (and losses) are raised to L, those above U clipped to U.
    Draws: simulated releases with ``seed + 2``, the one release with ``seed + 3``.

    ``noise``: a ``dpcore.noise.smooth.SMOOTH_NOISES`` name, as ``noise=`` of
    :func:`dpcore.gini.release_gini`: "cauchy" (default, the paper's, pure epsilon), "laplace"
    ((epsilon, delta), NRS) or "laplace_lognormal" (rho-zCDP implying (epsilon, delta), Bun & Steinke);
    ``delta`` defaults to 1e-6 for the last two. Every number follows the chosen noise: the error
    quantiles, the RMSE (the light-tailed noises have one), the simulated releases, the dots, the one
    release and its posterior (that noise's density), and the error-against-epsilon curve.
    """
    epsilon = check_epsilon(epsilon)
    gamma = check_gamma(gamma)
    noise = smooth_noise.check_noise(noise)
    if calibration not in CALIBRATIONS:
        raise DPInputError(f"calibration must be 'tight' or 'paper', got {calibration!r}")
    method = check_method(method)
    prior = _check_prior(prior)
    seed = check_int(seed, "seed", minimum=0)
    x = as_finite_array(values, "incomes", min_size=0)
    if x.size < 2:
        raise DPInputError(
            f"Cannot compute the Gini index: the data have {x.size} record(s); at least n = 2 are needed."
        )
    x = subsample(x, x.size if n is None else n)
    lower = check_finite(lower, "lower bound L")
    upper_epsilon = float(upper_epsilon)
    if upper is None:
        from ...bounds import dp_upper_bound  # released with DP; charged to the budget

        upper_epsilon = check_epsilon(upper_epsilon, "upper_epsilon")
        res = dp_upper_bound(
            x,
            epsilon_n=upper_epsilon / 2,
            epsilon_count=upper_epsilon / 2,
            lower=lower,
            rng=np.random.default_rng(seed + SEED_OFFSET_UPPER),
        )
        upper, upper_epsilon = float(res.upper), float(res.epsilon)
    else:
        upper, upper_epsilon = check_finite(upper, "upper bound U"), 0.0
    if not upper > lower:
        raise DPInputError(f"the upper bound U = {upper:,.6g} must be above the lower bound L = {lower:,.6g}")
    n_negative = int((x < 0).sum())
    xs, n_below, n_above = gini_mechanism.clip_incomes(x, lower=lower, upper=upper, clip_negative=True)
    mech = gini_mechanism.GiniCalibration(
        epsilon, lower, upper, noise=noise, gamma=gamma, calibration=calibration, delta=delta
    )
    cal = mech.smooth_calibration
    law = mech.noise_law()
    true_g = gini_mechanism.gini(xs)
    fast = gini_mechanism.smooth_sensitivity(xs, lower=lower, upper=upper, beta=cal.beta, method="fast")
    # The exact curve for the chart, over the same k range as the fast one. Forcing k = 0..k_max
    # disables pruning (O(n) per k), so k_max is capped on big data; the value S(X) is the maximum
    # over all k whatever k_max, so this one call also serves as the exact bound itself.
    # A^(k) does not depend on epsilon: it comes from the data set's shared profile (same numbers).
    profile, curves = _profile_and_curves(xs, lower, upper)
    exact = None
    if xs.size <= 200_000:
        chart_k = 100 if xs.size <= 50_000 else 25
        profile.exact_a(min(chart_k, xs.size - 1))  # the chart's A^(k) at once (the first view of a data set pays)
        exact = profile.smooth_sensitivity(cal.beta, k_max=min(fast.A.size - 1, chart_k))
    if method == "fast":
        ss = fast
    else:
        ss = exact if exact is not None else profile.smooth_sensitivity(cal.beta)
    scale = mech.noise_scale(ss.value)
    summary = law_summary(scale, gamma, law, noise, true_g)
    errors = (
        summary[COLUMNS[0]],
        summary[COLUMNS[1]],
        summary[COLUMNS[2]],
    )  # of the published value, clamped to [0, 1]
    lap_scale = ss.global_sensitivity / epsilon
    lap_summary = laplace_summary(lap_scale, true_g)
    lap_errors = (
        lap_summary[f"laplace_{COLUMNS[0]}"],
        lap_summary[f"laplace_{COLUMNS[1]}"],
        lap_summary[f"laplace_{COLUMNS[2]}"],
    )
    # saturated: the noise's own median reaches half the Gini's range (the published errors, clamped, never do)
    saturated = bool(ss.saturated or summary["noise_median_abs"] >= 0.5)
    finite_variance = math.isfinite(summary["rmse"])
    curve_key = (gamma, calibration, noise, delta)  # the curve does not depend on epsilon: once per data set
    if curve_key not in curves:
        curves[curve_key] = error_vs_epsilon(
            xs,
            lower=lower,
            upper=upper,
            gamma=gamma,
            epsilons=CURVE_EPSILONS,
            method="fast",
            calibrations=(calibration,),
            noise=noise,
            delta=delta,
        )
    error_curve = curves[curve_key].copy()

    def curve(result: Any) -> pd.DataFrame:
        return pd.DataFrame({"k": np.arange(result.A.size), "A": result.A, "decay": result.decay})

    extra: dict[str, Any] = {}
    if not saturated:
        # every release as it would be published: clamped to [0, 1] (dpcore.noise.guarantees.publish_gini)
        sim_rng = np.random.default_rng(seed + SEED_OFFSET_RELEASES)
        releases = np.clip(mech.simulate(true_g, scale, N_SIMULATED_RELEASES, sim_rng), 0.0, 1.0)
        laplace_releases = np.clip(true_g + sim_rng.laplace(0.0, lap_scale, N_SIMULATED_RELEASES), 0.0, 1.0)
        # the simulated draw of the Gini mechanism (dpcore.mechanisms.GiniMechanism.draw with a seed): the
        # calibration's law, then the published form
        one_noisy = float(mech.simulate(true_g, scale, 1, np.random.default_rng(seed + SEED_OFFSET_ONE_RELEASE))[0])
        one_value = publish_gini(one_noisy)
        from ...posterior import gini_posterior

        # the oracle's likelihood is the noise density at the noisy value (a DP output too), not at the clamped one
        post = gini_posterior(
            one_noisy, noise_scale=scale, gamma=gamma, prior=prior, noise=None if noise == "cauchy" else law
        )
        dots = (
            plausible_releases(true_g, scale, gamma, N_DOTS)
            if noise == "cauchy"
            else plausible_releases(true_g, scale, gamma, N_DOTS, noise_law=law)
        )
        extra = dict(
            simulated_releases=releases,
            simulated_laplace_releases=laplace_releases,
            plausible_releases=np.clip(dots, 0.0, 1.0),
            released_gini=float(one_value),
            released_clamped=bool(one_value != one_noisy and one_value in (0.0, 1.0)),
            posterior_grid=post.grid,
            posterior_density=post.density,
            posterior_mean=float(post.mean),
            posterior_interval=tuple(float(v) for v in post.interval(POSTERIOR_LEVEL)),
            posterior_hpd=tuple(float(v) for v in post.interval(POSTERIOR_LEVEL, kind="hpd")),
        )
    extra.update(
        _published_or_note(
            xs,
            epsilon=epsilon,
            lower=lower,
            upper=upper,
            noise=noise,
            gamma=gamma,
            calibration=calibration,
            delta=delta,
            method=method,
            seed=seed + SEED_OFFSET_ONE_RELEASE,
            profile=profile,
        )
    )
    return GiniView(
        n=int(xs.size),
        epsilon=epsilon,
        gamma=gamma,
        lower=lower,
        upper=upper,
        upper_epsilon=upper_epsilon,
        total_epsilon=epsilon + upper_epsilon,
        calibration=calibration,
        method=method,
        confidential_n_negative=n_negative,
        confidential_n_below=int(n_below),
        confidential_n_above=int(n_above),
        true_gini=float(true_g),
        smooth_sensitivity=float(ss.value),
        k_star=int(ss.k_star),
        sensitivity_saturated=bool(ss.saturated),
        global_sensitivity=float(ss.global_sensitivity),
        alpha=float(cal.alpha),
        beta=float(cal.beta),
        noise_scale=float(scale),
        abs_error_quantiles=errors,
        laplace_scale=float(lap_scale),
        laplace_abs_error_quantiles=lap_errors,
        rmse=summary["rmse"] if finite_variance else None,
        laplace_rmse=lap_summary["laplace_rmse"] if finite_variance else None,
        clamp_probability=clamp_probability(true_g, scale, GeneralizedCauchy(gamma) if noise == "cauchy" else law),
        saturated=saturated,
        fast_curve=curve(fast),
        exact_curve=None if exact is None else curve(exact),
        fast_k_star=int(fast.k_star),
        exact_k_star=None if exact is None else int(exact.k_star),
        error_curve=error_curve,
        prior=prior,
        noise=noise,
        delta=float(cal.delta),
        rho=None if cal.rho is None else float(cal.rho),
        privacy_statement=cal.statement(),
        **extra,
    )
