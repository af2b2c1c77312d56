"""The Gini: choosing the split of epsilon and beta of a release with a published interval, from public inputs
only (a planning model of log-normal incomes; the shipped table of choices, :mod:`dpcore.gini_split_table`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from .. import gini as gini_lib
from ..lazy import LazyModule
from ..noise import certificates as noise_certificates
from ..noise import smooth as smooth_noise
from ..validation import (
    DPInputError,
    check_bounds,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
)
from .basic import DEFAULT_LEVEL, check_level
from .gini import GiniIntervalPlan, abs_quantile, assemble_plan, check_eta, check_plan, gini_plan, noise_law

__all__ = [
    "PLANNING_GINI",
    "PLANNING_MEAN_SHARE",
    "PLANNING_BETA_SAFETY",
    "MAX_BOUND_SCALE",
    "planning_smooth_sensitivity",
    "gini_plan_with_eta",
    "optimise_gini_split",
    "shipped_split_key",
    "SplitInputs",
    "shipped_epsilons",
]


# The Gini: choosing the split of epsilon and beta
# ---------------------------------------------------------------------------------------------

#: the planning model's data: log-normal incomes with this Gini (a public, typical value)
PLANNING_GINI = 0.5
#: default planning mean as a share of the upper clip bound (bounds are usually set at several times the mean)
PLANNING_MEAN_SHARE = 0.2
#: the planning S_beta curve is read at beta / this factor: real cells' S_beta falls to its k = 0 value at a beta
#: up to ~8% above the planning sample's (measured on 24 ACS 2019 cells of 300-700 records, L = 0, U = 250,000)
PLANNING_BETA_SAFETY = 1.25
#: largest k the planning model evaluates exactly (above it the closed-form bound: cost O(k^2))
_PLANNING_K_EXACT = 3000
#: the bound's noise scale beta/epsilon_bound is kept <= this (E[S_hat] is finite only below 1)
MAX_BOUND_SCALE = 0.5
_SPLITS = (0.05, 0.08, 0.12, 0.16, 0.2, 0.25, 0.3, 0.4, 0.5)
_ETA_SHARES = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6)


def _planning_values(n: int, lower: float, upper: float, mean: float) -> np.ndarray:
    """n log-normal quantiles (Gini PLANNING_GINI before clipping) scaled to ``mean``, clipped to the bounds."""
    sigma = math.sqrt(2.0) * float(special.ndtri(0.5 + 0.5 * PLANNING_GINI))
    x = np.exp(sigma * special.ndtri((np.arange(n) + 0.5) / n))
    return np.sort(np.clip(x / x.mean() * mean, lower, upper))


@lru_cache(maxsize=64)
def _planning_profile(n: int, lower: float, upper: float, mean: float) -> gini_lib.ExactSensitivityProfile:
    return gini_lib.ExactSensitivityProfile(_planning_values(n, lower, upper, mean), lower, upper)


def planning_smooth_sensitivity(
    n: int, lower: float, upper: float, beta: float, *, planning_mean: float | None = None
) -> float:
    """A public typical S_beta for n records in [lower, upper]: the exact S_beta of a synthetic log-normal sample
    (Gini :data:`PLANNING_GINI`, mean ``planning_mean``, default :data:`PLANNING_MEAN_SHARE` * upper), read at
    beta / :data:`PLANNING_BETA_SAFETY`. No data enters. For beta so small that the exact profile would need
    more than 3,000 values of k, the closed-form ("fast") bound of the same sample (an over-estimate)."""
    n = check_int(n, "n", minimum=2)
    lo, hi = check_bounds(lower, upper)
    mean = PLANNING_MEAN_SHARE * hi if planning_mean is None else check_positive(planning_mean, "planning_mean")
    if not lo < mean < hi:
        raise DPInputError("planning_mean must lie strictly between lower and upper")
    b = check_positive(beta, "beta") / PLANNING_BETA_SAFETY
    profile = _planning_profile(n, lo, hi, float(mean))
    k_cap = math.log(profile.global_sensitivity / profile.a0) / b if profile.a0 > 0 else math.inf
    if n <= _PLANNING_K_EXACT or k_cap <= _PLANNING_K_EXACT:
        return profile.smooth_sensitivity_value(b)  # probes A^(k) at a few k (the profile's pruning)
    xs = _planning_values(n, lo, hi, float(mean))
    return float(gini_lib.smooth_sensitivity(xs, lower=lo, upper=hi, beta=b, method="fast").value)


def _beta_candidates(epsilon: float, noise: str, gamma: float) -> np.ndarray:
    top = epsilon / max(1.0, gamma - 1.0) if noise == "cauchy" else epsilon / 2.0
    return np.geomspace(epsilon * 2e-3, top * 0.95, 18)


def _try_plan(eps_v: float, eps_s: float, beta: float, common: dict) -> GiniIntervalPlan | None:
    try:
        return gini_plan(eps_v, eps_s, beta, **common)
    except DPInputError:  # beta infeasible for this noise at epsilon_value (the calibration says so)
        return None


def _model_widths(plan: GiniIntervalPlan, etas: np.ndarray, s_typ: float) -> np.ndarray:
    """Median width model for each eta: 2 q * median(scale_hat); median(S_hat e^{-margin}) = S (the bound's
    Laplace noise has median 0). "pivot" does not depend on eta; "union" in one vectorised quantile call."""
    if plan.method == "pivot":
        return np.full(etas.shape, 2.0 * plan.quantile() * s_typ / plan.release_alpha)
    law = noise_law(plan.noise, plan.gamma, plan.sigma)
    q = np.asarray(law.abs_quantile(plan.level + etas), dtype=float)
    return 2.0 * q * s_typ * np.exp(plan.bound_scale * np.log(1.0 / (2.0 * etas))) / plan.release_alpha


def gini_plan_with_eta(plan: GiniIntervalPlan, eta: float) -> GiniIntervalPlan:
    """The same plan with another eta (the bound's margin changes, and for "union" the noise quantile's level)."""
    plan = check_plan(plan)
    eta = check_eta(eta, plan.level, plan.method)
    return replace(plan, eta=eta, bound_margin=plan.bound_scale * math.log(1 / (2 * eta)))


def optimise_gini_split(
    epsilon_total: float,
    delta: float | None,
    noise: str,
    n: int,
    lower: float,
    upper: float,
    level: float = DEFAULT_LEVEL,
    *,
    method: str = "pivot",
    gamma: float = 2.0,
    typical_smooth_sensitivity: Callable[[float], float] | None = None,
    planning_mean: float | None = None,
    calibration_mode: str = "tight",
) -> GiniIntervalPlan:
    """The split epsilon_total = epsilon_value + epsilon_bound and the calibration's beta (and, for "union", eta)
    that minimise the modelled median width of the published interval, at a fixed total (epsilon_total, delta).

    Width model (what is minimised): 2 q S_typ(beta) / alpha, where alpha = alpha(epsilon_value, beta, delta) is
    the certified calibration of ``noise``, q the interval's multiplier (:func:`gini_interval_quantile`: the
    pivot's quantile of |Z| e^{-L} with L ~ Laplace(beta/epsilon_bound); for "union", the (level + eta)-quantile
    of |Z| times the median of S_hat/S, (1/(2 eta))^(beta/epsilon_bound)), and S_typ(beta) a public typical smooth
    sensitivity: ``typical_smooth_sensitivity(beta)`` if given, else :func:`planning_smooth_sensitivity` (no data).
    beta sets two costs: a small beta makes S_beta(X) large (e^{-k beta} decays slowly, distant data sets count),
    a large beta makes the bound noisy (scale beta/epsilon_bound) and, for "laplace", shrinks alpha (NRS needs
    beta ~ epsilon/(2 ln(2/delta))). The search is a grid: 18 betas (log-spaced up to the noise's limit), 9
    splits (epsilon_bound = 5%..50% of the total), and for "union" 8 etas (5%..60% of 1 - level); the bound's
    scale is kept <= :data:`MAX_BOUND_SCALE`; a branch and bound (:class:`_SplitSearch`) returns the full grid's
    answer while certifying only the few candidates that can still win. ``n``: the smallest public cell size the
    plan serves (S_beta decays to its k = 0 value at a larger beta for small n, so planning at the smallest n is the
    safe side).
    ``model_oracle_width``: the same model for the oracle (value at the full epsilon with the default beta, scale
    known), for comparison.
    """
    eps = check_epsilon(epsilon_total, "epsilon_total")
    noise = smooth_noise.check_noise(noise)
    lev = check_level(level)
    check_eta(None, lev, method)
    n = check_int(n, "n", minimum=2)
    lo, hi = check_bounds(lower, upper)
    if lo < 0:
        raise DPInputError(f"lower must be >= 0 for the Gini index, got {lo:g}")
    d = None if noise == "cauchy" else check_delta(smooth_noise.DEFAULT_DELTA if delta is None else delta)
    if planning_mean is not None:
        planning_mean = check_positive(planning_mean, "planning_mean")
    inputs = shipped_split_key(eps, d, noise, n, lo, hi, lev, method, float(gamma), calibration_mode)
    if typical_smooth_sensitivity is None and planning_mean is None:
        shipped = _shipped_plan(inputs)
        if shipped is not None:
            return shipped
    return _optimise(inputs, typical_smooth_sensitivity, planning_mean)


class SplitInputs(NamedTuple):
    """The checked public inputs a split depends on (but a planning model given by the caller), in the order of the
    keys of the shipped table :data:`dpcore.gini_split_table.SPLITS` (equal to those plain tuples)."""

    noise: str
    epsilon: float
    delta: float | None
    n: int
    lower: float
    upper: float
    level: float
    method: str
    gamma: float
    calibration_mode: str

    def plan_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`dpcore.intervals.gini_plan` these inputs fix (all but the split)."""
        return {
            "noise": self.noise,
            "n": self.n,
            "lower": self.lower,
            "upper": self.upper,
            "delta": self.delta,
            "level": self.level,
            "method": self.method,
            "gamma": self.gamma,
            "calibration_mode": self.calibration_mode,
        }


def shipped_split_key(
    eps: float,
    d: float | None,
    noise: str,
    n: int,
    lo: float,
    hi: float,
    lev: float,
    method: str,
    gamma: float,
    calibration_mode: str,
) -> SplitInputs:
    """The key of :data:`dpcore.gini_split_table.SPLITS` for checked inputs of :func:`optimise_gini_split`."""
    return SplitInputs(noise, eps, d, n, lo, hi, lev, method, gamma, calibration_mode)


def shipped_epsilons(
    noise: str,
    d: float | None,
    n: int,
    lo: float,
    hi: float,
    lev: float,
    method: str = "pivot",
    gamma: float = 2.0,
    calibration_mode: str = "tight",
) -> list[float]:
    """The epsilons whose split :func:`optimise_gini_split` reads from the shipped table for these public inputs
    (sorted; empty when the table has none): a search over epsilon can bracket its answer there first."""
    from ..gini_split_table import SPLITS

    rest = (d, n, lo, hi, lev, method, gamma, calibration_mode)
    return sorted(key[1] for key in SPLITS if key[0] == noise and key[2:] == rest)


def _shipped_plan(inputs: SplitInputs) -> GiniIntervalPlan | None:
    """The optimiser's answer read from the shipped table of the Gini page's epsilon grid at its default public
    inputs (:mod:`dpcore.gini_split_table`; a test compares entries with a fresh search), or None.

    The plan is rebuilt with :func:`gini_plan` (its calibration certified again) from the stored split, beta and eta,
    and kept only if the split adds up to epsilon (as the mechanisms' file cache requires): the table can change a
    width, never a privacy cost."""
    from ..gini_split_table import SPLITS

    entry = SPLITS.get(inputs)
    if entry is None or not math.isclose(
        entry["epsilon_value"] + entry["epsilon_bound"], inputs.epsilon, rel_tol=1e-12, abs_tol=0.0
    ):
        return None
    plan = gini_plan(
        entry["epsilon_value"], entry["epsilon_bound"], entry["beta"], eta=entry["eta"], **inputs.plan_kwargs()
    )
    return replace(plan, model_width=entry["model_width"], model_oracle_width=entry["model_oracle_width"])


@lru_cache(maxsize=128)
def _optimise(
    inputs: SplitInputs,
    typical_smooth_sensitivity: Callable[[float], float] | None,
    planning_mean: float | None,
) -> GiniIntervalPlan:
    """The grid search of :func:`optimise_gini_split` (arguments checked; plans are frozen, so cached)."""
    eps, noise, gamma = inputs.epsilon, inputs.noise, inputs.gamma
    s_model = typical_smooth_sensitivity or (
        lambda b: planning_smooth_sensitivity(inputs.n, inputs.lower, inputs.upper, b, planning_mean=planning_mean)
    )
    common = inputs.plan_kwargs()
    search = _SplitSearch(
        eps,
        [float(b) for b in _beta_candidates(eps, noise, gamma)],
        common,
        s_model,
        monotone=typical_smooth_sensitivity is None,
    )
    width, plan = search.run()
    if plan is None:
        raise DPInputError(f"no split of epsilon = {eps:g} gives a feasible calibration for noise {noise!r}")
    oracle_cal = smooth_noise.smooth_calibration(
        noise, eps, delta=inputs.delta, gamma=gamma, mode=inputs.calibration_mode
    )
    oracle = (
        2.0
        * abs_quantile(noise, inputs.level, gamma, oracle_cal.sigma)
        * float(s_model(oracle_cal.beta))
        / oracle_cal.alpha
    )
    return replace(plan, model_width=width, model_oracle_width=oracle)


#: relative slack of the search's pruning test: a candidate whose lower bound is within it of the best width is
#: evaluated exactly (room for the rounding of the bounds' arithmetic; far below the grid's steps)
_PRUNE_SLACK = 1e-9
#: scaled outputs u on the linear part of the grid of :func:`_cauchy_alpha_upper`
_ALPHA_GRID_POINTS = 2001


@lru_cache(maxsize=4096)
def _cauchy_alpha_upper(epsilon_value: float, gamma: float, beta: float) -> float:
    """An upper bound on the alpha of the Cauchy's certified 'tight' calibration at (epsilon_value, gamma, beta)
    (``dpcore.noise.smooth_noise_calibration``), for ~2 ms instead of a certification; 0 when no alpha is certified.

    Why it is an upper bound: the privacy loss at one scaled output u (``dpcore.noise.certificates.loss_profiles``:
    the sup over the shift |delta| <= alpha and the dilation |lambda| <= beta, solved exactly) is non-decreasing in
    alpha (the shift's range grows), and its maximum over a FIXED grid of u is <= its supremum over u <= the
    certificate. So a certified alpha (certificate <= epsilon_value) has grid loss <= epsilon_value and lies below
    every alpha whose grid loss exceeds epsilon_value; the bisection keeps such an alpha as its upper end and returns
    it. A certified alpha is never below 1e-12 (the calibration refuses then), so an upper end below 1e-13 means none.
    Measured: 1.000-1.03 times the certified alpha (epsilon 0.05-9, gamma 1.5-4)."""
    ref = 2.0 * epsilon_value + 1.0
    u = np.concatenate(
        [
            np.linspace(0.0, 4.0 * ref + 4.0, _ALPHA_GRID_POINTS),
            np.geomspace(4.0 * ref + 4.0, 1e6 * (ref + 1.0), _ALPHA_GRID_POINTS // 5),
        ]
    )
    phi_u = noise_certificates.output_phi(u, gamma)

    def excess(alpha: float) -> float:
        return float(noise_certificates.loss_profiles(u, gamma, alpha, beta, phi_u).max()) - epsilon_value

    low, high = 0.0, epsilon_value
    last = (high, excess(high))
    while last[1] <= 0.0:
        low, high = high, 2.0 * high
        last, before = (high, excess(high)), last
    # The bracket [low, high] (no excess at low, an excess at high) is narrowed to 1e-4 of high, as a bisection
    # would, but each probe is the secant estimate of the root through the last two probes (the excess is smooth in
    # alpha between its grid's kinks), moved by a third of the tolerance away from the last probe's side, so that
    # once the estimate is good the other end moves next and the bracket closes (measured: 7 probes on average
    # instead of 16). An estimate outside the bracket, or two probes in a row that did not halve it, make the next
    # probe a bisection. Any probe keeps the bracket, so the answer is an upper bound as the bisection's was.
    before = (low, math.nan) if low == 0.0 else before
    slow = 0
    while high - low > 1e-4 * high:
        if high < 1e-13:
            return 0.0
        width = high - low
        (x1, f1), (x0, f0) = last, before
        estimate = x1 - f1 * (x1 - x0) / (f1 - f0) if f1 != f0 else math.nan
        probe = estimate + (-1.0 if f1 > 0.0 else 1.0) * 1e-4 * high / 3.0
        if slow >= 2 or not low < probe < high:
            probe, slow = 0.5 * (low + high), 0
        f_probe = excess(probe)
        if f_probe > 0.0:
            high = probe
        else:
            low = probe
        last, before = (probe, f_probe), last
        slow = slow + 1 if high - low > 0.5 * width else 0
    return high


class _SplitSearch:
    """The minimum of the width model over the grid of :func:`optimise_gini_split` (18 betas x 9 splits), found by
    branch and bound, with the full grid's answer: the first (beta, split) in grid order of least modelled width.

    A candidate's width is 2 q S_typ(beta) / alpha (:func:`_model_widths`). Lower bounds, cheap: alpha <= the
    upper bound of :func:`_cauchy_alpha_upper` (Cauchy; the other noises' calibrations are closed forms, computed
    exactly), and S_typ(beta) >= S_typ(beta') for beta' > beta (S_beta = max_k e^{-k beta} A^(k) decreases in beta,
    Lan & Reiter eq. (8); the planning model's exact and closed-form branches both keep it). The search evaluates
    the candidate of least lower bound: it computes S_typ one beta further down from the largest (a small beta is
    reached only if its bound can still win) or certifies its calibration (~50 ms), and stops when every bound left
    exceeds the best exact width. Each pruned candidate's width is at least its bound, so the answer is the full
    grid's (ties: grid order). ``monotone`` False (a caller's own S_typ): every S_typ is computed first, only the
    calibrations are pruned."""

    def __init__(
        self, eps: float, betas: list[float], common: dict, s_model: Callable[[float], float], monotone: bool
    ) -> None:
        self.eps, self.betas, self.common, self.s_model = eps, betas, common, s_model
        share = _ETA_SHARES if common["method"] == "union" else (0.2,)
        self.etas = (1.0 - common["level"]) * np.array(share)
        self.s_known: dict[int, float] = {}
        for i in range(len(betas)) if not monotone else (len(betas) - 1,):
            self.s_known[i] = float(s_model(betas[i]))
        self.unit: dict[tuple[int, int], float] = {}  # candidate -> its width bound per unit of S_typ
        self.exact: dict[tuple[int, int], GiniIntervalPlan] = {}  # candidates already calibrated exactly
        for i, beta in enumerate(betas):
            for j, f in enumerate(_SPLITS):
                self._screen(i, j, beta, f * eps)  # epsilon_bound = f eps, epsilon_value = eps - f eps

    def _screen(self, i: int, j: int, beta: float, eps_s: float) -> None:
        if beta / eps_s > MAX_BOUND_SCALE:
            return
        eps_v, common, eta = self.eps - eps_s, self.common, float(self.etas[0])
        if common["noise"] != "cauchy":  # closed-form calibrations: the exact plan is the screen
            plan = _try_plan(eps_v, eps_s, beta, {**common, "eta": eta})
            if plan is not None:
                self.exact[(i, j)] = plan
                self.unit[(i, j)] = float(np.min(_model_widths(plan, self.etas, 1.0)))
            return
        if max(1.0, common["gamma"] - 1.0) * beta >= eps_v:  # the calibration's own refusal (tail loss)
            return
        alpha = _cauchy_alpha_upper(eps_v, common["gamma"], beta)
        if alpha > 0:
            screen = assemble_plan(
                "cauchy",
                eps_v,
                eps_s,
                common["level"],
                eta,
                common["n"],
                common["lower"],
                common["upper"],
                common["method"],
                common["gamma"],
                alpha,
                beta,
                0.0,
                None,
                None,
            )
            self.unit[(i, j)] = float(np.min(_model_widths(screen, self.etas, 1.0)))

    def _s_lower(self, i: int) -> float:
        if i in self.s_known:
            return self.s_known[i]
        return self.s_known[min(k for k in self.s_known if k > i)] * (1.0 - _PRUNE_SLACK)

    def run(self) -> tuple[float, GiniIntervalPlan | None]:
        best: tuple[float, int, int, GiniIntervalPlan | None] = (math.inf, 0, 0, None)
        while self.unit:
            key = min(self.unit, key=lambda c: (self.unit[c] * self._s_lower(c[0]), c))
            if self.unit[key] * self._s_lower(key[0]) > best[0] * (1.0 + _PRUNE_SLACK):
                break
            i, j = key
            if i not in self.s_known:  # one beta further down: tightens the bound of every smaller beta
                below = min(self.s_known) - 1
                self.s_known[below] = float(self.s_model(self.betas[below]))
                continue
            del self.unit[key]
            eps_s = _SPLITS[j] * self.eps  # the full grid's arithmetic, so the split adds up the same way
            base = self.exact.get(key) or _try_plan(
                self.eps - eps_s, eps_s, self.betas[i], {**self.common, "eta": float(self.etas[0])}
            )
            if base is None:
                continue
            widths = _model_widths(base, self.etas, self.s_known[i])
            k = int(np.argmin(widths))
            if (float(widths[k]), i, j) < best[:3]:
                best = (float(widths[k]), i, j, gini_plan_with_eta(base, float(self.etas[k])))
        return best[0], best[3]


# ---------------------------------------------------------------------------------------------

#: scipy.special costs about 0.2 s to import (its array-API layer pulls numpy.f2py); a command-line release
#: of counts or means never calls it
special = LazyModule("scipy.special")
