"""The Gini's published interval: the plan of its release (the split of epsilon between the value and the DP
bound on S_beta, beta, eta), the pivot of the value's and the bound's noise inverted exactly, the known-scale
oracle and the Bayesian variant (Lan & Reiter 2025, eqs. (8)-(10); docs/secure_noise.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from .. import gini as gini_lib
from .. import noise as noise_lib
from ..lazy import LazyModule
from ..noise import guarantees as noise_guarantees
from ..noise import smooth as smooth_noise
from ..validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_bounds,
    check_delta,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
    check_probability,
)
from .basic import DEFAULT_LEVEL, IntervalEnds, check_level

__all__ = [
    "GiniInterval",
    "GiniIntervalPlan",
    "simulate_gini_bounds",
    "GINI_INTERVAL_METHODS",
    "gini_plan",
    "gini_interval_quantile",
    "pivot_quantile",
    "pivot_tail",
    "gini_interval_from_release",
    "gini_interval_bounds",
    "gini_oracle_interval",
    "gini_posterior_interval",
    "check_plan",
    "assemble_plan",
    "bound_scale",
    "noise_law",
    "check_eta",
    "abs_quantile",
]


@dataclass(frozen=True)
class GiniInterval(IntervalEnds):
    """An interval for a released Gini index and what it cost.

    ``s_upper``: the published DP upper bound on S_beta(X) it used (None for the oracle); ``eta`` the bound's
    stated failure probability; ``epsilon`` / ``delta``: the privacy cost of value and bound together (None
    where not given)."""

    value: float
    lower: float
    upper: float
    level: float
    method: str
    caveat: str
    s_upper: float | None = None
    eta: float | None = None
    epsilon: float | None = None
    delta: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in ("value", "lower", "upper", "level", "method", "caveat", "s_upper", "eta", "epsilon", "delta")
        }


# ---------------------------------------------------------------------------------------------
# The Gini: a DP upper bound on the smooth sensitivity
# ---------------------------------------------------------------------------------------------


def bound_scale(epsilon_bound: float, beta: float) -> float:
    """OpenDP's Laplace scale whose privacy map at L1 sensitivity beta is <= epsilon_bound (beta/epsilon_bound)."""
    return noise_guarantees.laplace_scale_for(epsilon_bound, beta)


def simulate_gini_bounds(
    confidential_smooth_sensitivity: Any, *, plan: GiniIntervalPlan, size: int, rng: Any = None
) -> np.ndarray:
    """``size`` simulated bounds S_hat for each S given (shape (len(S), size)): numpy draws of the law of
    :func:`dpcore.mechanisms.gini_bound_release` (exploration and coverage studies; nothing is released or charged)."""
    s = as_finite_array(confidential_smooth_sensitivity, "confidential_smooth_sensitivity")
    if np.any(s <= 0):
        raise DPInputError("smooth sensitivities must be > 0")
    plan = check_plan(plan)
    size = check_int(size, "size", minimum=1)
    noise = as_generator(rng).laplace(0.0, plan.bound_scale, size=(s.size, size))
    return np.exp(np.log(s)[:, None] + noise + plan.bound_margin)


# ---------------------------------------------------------------------------------------------
# The Gini: plan (split of epsilon, beta) and the published interval
# ---------------------------------------------------------------------------------------------

#: the two ways of turning the published bound into an interval (see :func:`gini_interval_from_release`)
GINI_INTERVAL_METHODS = ("pivot", "union")


def noise_law(noise: str, gamma: float, sigma: float | None) -> Any:
    noise = smooth_noise.check_noise(noise)
    if noise == "cauchy":
        return _Cauchy(gamma)
    if noise == "laplace":
        return smooth_noise.LaplaceNoise()
    if sigma is None:
        raise DPInputError("noise 'laplace_lognormal' needs its sigma (the calibration's)")
    return smooth_noise.LaplaceLogNormal(sigma)


class _Cauchy(noise_lib.GeneralizedCauchy):
    """The generalized Cauchy with ``abs_quantile`` / ``abs_sf`` (the interface of ``dpcore.noise.smooth``' laws)."""

    def abs_quantile(self, p: Any) -> np.ndarray:
        return self.ppf(0.5 + 0.5 * np.asarray(p, dtype=float))

    def abs_sf(self, r: Any) -> np.ndarray:
        return 2.0 * self.sf(np.abs(np.asarray(r, dtype=float)))


def _abs_sf(law: Any, r: np.ndarray) -> np.ndarray:
    """P(|Z| > r) for r >= 0 (the Laplace law has no ``abs_sf``: |Z| is exponential)."""
    if isinstance(law, smooth_noise.LaplaceNoise):
        return np.exp(-r)
    return np.asarray(law.abs_sf(r), dtype=float)


def abs_quantile(noise: str, p: float, gamma: float, sigma: float | None) -> float:
    """The p-quantile of |Z| for the standardised smooth noise Z."""
    return float(noise_law(noise, gamma, sigma).abs_quantile(p))


#: Gauss-Laguerre nodes per side of the Laplace law in :func:`pivot_quantile` (the integrand is smooth in l)
_LAGUERRE_NODES = 64


@lru_cache(maxsize=1)
def _laguerre() -> tuple[np.ndarray, np.ndarray]:
    nodes, weights = special.roots_laguerre(_LAGUERRE_NODES)
    return nodes, weights


def pivot_tail(noise: str, x: float, bound_scale: float, gamma: float = 2.0, sigma: float | None = None) -> float:
    """P(|Z| e^{-L} > x) = E_L P(|Z| > x e^L), L ~ Laplace(bound_scale): on each side of 0,
    (1/2) int_0^inf P(|Z| > x e^{+-b u}) e^{-u} du by Gauss-Laguerre quadrature (64 nodes; the integrand is
    smooth and bounded in u, and the tests compare with a fine trapezoidal rule and with Monte Carlo)."""
    b = check_positive(bound_scale, "bound_scale")
    law = noise_law(noise, gamma, sigma)
    nodes, weights = _laguerre()
    r = check_positive(x, "x") * np.exp(np.concatenate([b * nodes, -b * nodes]))
    return float(0.5 * np.dot(np.concatenate([weights, weights]), _abs_sf(law, r)))


@lru_cache(maxsize=2048)
def pivot_quantile(
    noise: str, level: float, bound_scale: float, gamma: float = 2.0, sigma: float | None = None
) -> float:
    """The level-quantile of |Z| e^{-L}: Z the value's standardised noise, L ~ Laplace(bound_scale) independent
    (:func:`pivot_tail`), by bisection in ln x to a relative 1e-7; the upper end of the final bracket is
    returned (never below the quantile, up to the quadrature's error)."""
    lev = check_level(level)
    b = check_positive(bound_scale, "bound_scale")
    law = noise_law(noise, gamma, sigma)

    def tail(x: float) -> float:
        return pivot_tail(noise, x, b, gamma, sigma)

    lo = hi = float(law.abs_quantile(lev))
    while tail(lo) <= 1.0 - lev:
        lo /= 2.0
    while tail(hi) > 1.0 - lev:
        hi *= 2.0
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        if tail(mid) > 1.0 - lev:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-7 * hi:
            break
    return hi


@dataclass(frozen=True)
class GiniIntervalPlan:
    """Everything public about a Gini released with its interval: the split, beta, eta and what it costs.

    The value is released at (epsilon_value, delta) with the smooth-noise calibration ``calibration`` (alpha,
    beta); the bound on S_beta(X) at (epsilon_bound, 0) (:func:`dpcore.mechanisms.gini_bound_release`, Laplace scale
    ``bound_scale``, margin ``bound_margin`` = bound_scale ln(1/(2 eta))). Basic composition: the pair costs
    (epsilon, delta) = (epsilon_value + epsilon_bound, delta) (for "laplace_lognormal", whose value is rho-zCDP,
    the (epsilon_value, delta) it implies). ``method``: "pivot" (default, exact) or "union" (eta in the level).
    ``release_alpha`` and ``min_scale`` / ``max_scale``: what a real draw divides S by and clamps to
    (``dpcore.gini.GiniCalibration``: the Cauchy's float slack and scale window). ``model_width`` /
    ``model_oracle_width``: the median-width model the split was chosen by (planning numbers, no data).
    """

    noise: str
    epsilon: float
    delta: float
    level: float
    epsilon_value: float
    epsilon_bound: float
    beta: float
    alpha: float
    eta: float
    gamma: float
    sigma: float | None
    bound_scale: float
    bound_margin: float
    release_alpha: float
    min_scale: float
    max_scale: float
    n: int
    lower: float
    upper: float
    method: str = "pivot"
    model_width: float = math.nan
    model_oracle_width: float = math.nan
    calibration: Any = field(default=None, repr=False, compare=False)

    def quantile(self) -> float:
        """The multiplier q of the published half-width q * scale_hat (:func:`gini_interval_quantile`)."""
        return gini_interval_quantile(
            self.noise,
            self.level,
            bound_scale=self.bound_scale,
            eta=self.eta,
            method=self.method,
            gamma=self.gamma,
            sigma=self.sigma,
            clamped=self.min_scale > 0,
        )

    def interval(self, value: float, s_upper: float) -> GiniInterval:
        """The published interval from the published value and bound (:func:`gini_interval_from_release`)."""
        return gini_interval_from_release(
            value, s_upper, **self.public_constants(), epsilon=self.epsilon, delta=self.delta
        )

    def public_constants(self) -> dict[str, Any]:
        """The keyword arguments of :func:`gini_interval_from_release` / :func:`gini_interval_bounds`."""
        return {
            "noise": self.noise,
            "alpha": self.release_alpha,
            "bound_scale": self.bound_scale,
            "eta": self.eta,
            "level": self.level,
            "method": self.method,
            "gamma": self.gamma,
            "sigma": self.sigma,
            "min_scale": self.min_scale,
            "max_scale": self.max_scale,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in (
                "noise",
                "epsilon",
                "delta",
                "level",
                "epsilon_value",
                "epsilon_bound",
                "beta",
                "alpha",
                "eta",
                "gamma",
                "sigma",
                "bound_scale",
                "bound_margin",
                "release_alpha",
                "min_scale",
                "max_scale",
                "n",
                "lower",
                "upper",
                "method",
                "model_width",
                "model_oracle_width",
            )
        }


def check_plan(plan: Any) -> GiniIntervalPlan:
    if not isinstance(plan, GiniIntervalPlan):
        raise TypeError(
            f"plan must be a dpcore.intervals.GiniIntervalPlan (gini_plan / optimise_gini_split), got "
            f"{type(plan).__name__}"
        )
    return plan


def gini_plan(
    epsilon_value: float,
    epsilon_bound: float,
    beta: float,
    *,
    noise: str,
    n: int,
    lower: float,
    upper: float,
    delta: float | None = None,
    level: float = DEFAULT_LEVEL,
    eta: float | None = None,
    method: str = "pivot",
    gamma: float = 2.0,
    calibration_mode: str = "tight",
) -> GiniIntervalPlan:
    """A :class:`GiniIntervalPlan` from explicit public choices (the optimiser calls this; so can a user).

    ``beta``: the calibration's smoothness (the value is calibrated at it and S_beta(X) computed at it).
    ``delta``: the value's (ignored for "cauchy", pure DP). ``eta``: the bound's stated failure probability
    (default (1 - level)/5); with ``method="union"`` it must be below 1 - level, since it is part of the miss
    probability there."""
    noise = smooth_noise.check_noise(noise)
    eps_v, eps_s = check_epsilon(epsilon_value, "epsilon_value"), check_epsilon(epsilon_bound, "epsilon_bound")
    lev = check_level(level)
    eta = check_eta(eta, lev, method)
    n = check_int(n, "n", minimum=2)
    lo, hi = check_bounds(lower, upper)
    d = None if noise == "cauchy" or delta is None else check_delta(delta)
    cal = smooth_noise.smooth_calibration(
        noise, eps_v, delta=d, gamma=gamma, mode=calibration_mode, beta=check_positive(beta, "beta")
    )
    return assemble_plan(
        noise,
        eps_v,
        eps_s,
        lev,
        eta,
        n,
        lo,
        hi,
        method,
        float(gamma),
        cal.alpha,
        cal.beta,
        float(cal.delta),
        cal.sigma,
        cal,
    )


def assemble_plan(
    noise: str,
    eps_v: float,
    eps_s: float,
    lev: float,
    eta: float,
    n: int,
    lo: float,
    hi: float,
    method: str,
    gamma: float,
    alpha: float,
    beta: float,
    delta: float,
    sigma: float | None,
    cal: Any,
) -> GiniIntervalPlan:
    """The plan of checked public choices and a calibration's (alpha, beta) (:func:`gini_plan`; the optimiser's
    screening also builds one from an upper bound on alpha, ``cal`` None, never returned)."""
    scale = bound_scale(eps_s, beta)
    release_alpha = alpha * (1.0 - 2.0 * gini_lib.FLOAT_SLACK) if noise == "cauchy" else alpha
    min_scale, max_scale = (
        (gini_lib.GINI_MIN_SCALE, max(1.0 / release_alpha, gini_lib.GINI_MIN_SCALE))
        if noise == "cauchy"
        else (0.0, math.inf)
    )
    return GiniIntervalPlan(
        noise,
        eps_v + eps_s,
        delta,
        lev,
        eps_v,
        eps_s,
        beta,
        alpha,
        eta,
        gamma,
        sigma,
        scale,
        scale * math.log(1.0 / (2.0 * eta)),
        release_alpha,
        min_scale,
        max_scale,
        n,
        lo,
        hi,
        method,
        calibration=cal,
    )


def check_eta(eta: Any, level: float, method: str) -> float:
    if method not in GINI_INTERVAL_METHODS:
        raise DPInputError(f"method must be one of {GINI_INTERVAL_METHODS}, got {method!r}")
    eta = (1.0 - level) / 5.0 if eta is None else check_probability(eta, "eta")
    if method == "union" and eta >= 1.0 - level:
        raise DPInputError(f"eta must be below 1 - level = {1.0 - level:g} (its failure counts against the level)")
    return eta


def gini_interval_quantile(
    noise: str,
    level: float,
    *,
    bound_scale: float,
    eta: float,
    method: str = "pivot",
    gamma: float = 2.0,
    sigma: float | None = None,
    clamped: bool = False,
) -> float:
    """The multiplier q of the published half-width q * scale_hat, scale_hat = clamp(S_hat e^{-margin} / alpha).

    "pivot": q = the level-quantile of |Z| e^{-L} (:func:`pivot_quantile`), and also >= the level-quantile of |Z|
    when the scale has a lower clamp (``clamped``, the Cauchy release's floor). "union": q = the
    (level + eta)-quantile of |Z| times e^{margin} (S_hat itself is used: an upper bound with probability
    1 - eta)."""
    lev = check_level(level)
    eta = check_eta(eta, lev, method)
    b = check_positive(bound_scale, "bound_scale")
    if method == "union":
        return abs_quantile(noise, lev + eta, gamma, sigma) * math.exp(b * math.log(1.0 / (2.0 * eta)))
    q = pivot_quantile(noise, lev, b, float(gamma), sigma)
    return max(q, abs_quantile(noise, lev, gamma, sigma)) if clamped else q


def gini_interval_bounds(
    values: Any,
    s_upper: Any,
    *,
    noise: str,
    alpha: float,
    bound_scale: float,
    eta: float,
    level: float = DEFAULT_LEVEL,
    method: str = "pivot",
    gamma: float = 2.0,
    sigma: float | None = None,
    min_scale: float = 0.0,
    max_scale: float = math.inf,
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`gini_interval_from_release`: (lower ends, upper ends) for arrays of values and bounds."""
    vals = as_finite_array(values, "values")
    s_hat = as_finite_array(s_upper, "s_upper")
    if vals.shape != s_hat.shape or np.any(s_hat <= 0):
        raise DPInputError("one positive bound s_upper per released value is needed")
    alpha = check_positive(alpha, "alpha")
    min_scale = check_positive(min_scale, "min_scale", allow_zero=True)
    q = gini_interval_quantile(
        noise, level, bound_scale=bound_scale, eta=eta, method=method, gamma=gamma, sigma=sigma, clamped=min_scale > 0
    )
    margin = bound_scale * math.log(1.0 / (2.0 * eta))
    scale_hat = np.minimum(np.maximum(s_hat * math.exp(-margin) / alpha, min_scale), float(max_scale))
    half = q * scale_hat + 0.5 * noise_guarantees.GINI_GRID
    lo, hi = noise_guarantees.GINI_WINDOW
    return np.clip(vals - half, lo, hi), np.clip(vals + half, lo, hi)


def gini_interval_from_release(
    value: float,
    s_upper: float,
    *,
    noise: str,
    alpha: float,
    bound_scale: float,
    eta: float,
    level: float = DEFAULT_LEVEL,
    method: str = "pivot",
    gamma: float = 2.0,
    sigma: float | None = None,
    min_scale: float = 0.0,
    max_scale: float = math.inf,
    epsilon: float | None = None,
    delta: float | None = None,
) -> GiniInterval:
    """The published Gini interval value -+ q * scale_hat, from published numbers only.

    Inputs: the published value (``dpcore.noise.guarantees.publish_gini``: clamped to [0, 1] on the 1e-6 grid), the
    published bound S_hat = exp(T) (:func:`dpcore.mechanisms.gini_bound_release`: T = ln S + L + margin, L ~ Laplace(bound_scale),
    margin = bound_scale ln(1/(2 eta))), and public constants: the noise law (``noise``, ``gamma``, ``sigma``),
    the ``alpha`` the draw divided by and its scale window (``min_scale``, ``max_scale``: the Cauchy release
    clamps S/alpha there). scale_hat = clamp(S_hat e^{-margin} / alpha) = clamp(S e^L / alpha).

    ``method="pivot"`` (default; exact). The noisy value is g + s Z, s = clamp(S/alpha), Z independent of L.
    Without a clamp, (noisy - g) / scale_hat = Z e^{-L}: a pivot whose law does not depend on the data, so with q
    its level-quantile (:func:`pivot_quantile`) P(|noisy - g| <= q scale_hat) = level exactly. With the Cauchy's
    floor s = max(S/alpha, m): S is fixed by the data, so either S/alpha >= m (then s = S/alpha and
    scale_hat >= S e^L/alpha: a miss needs |Z| e^{-L} > q) or S/alpha < m (then s = m <= scale_hat: a miss needs
    |Z| > q); q = the larger of the two quantiles covers both. (The ceiling 1/alpha is never reached: S <= GS < 1.)

    ``method="union"`` (the direct argument). On the event S_hat >= S (probability 1 - eta, the bound's margin)
    the scale from S_hat is >= s, so a miss needs S_hat < S or |Z| > q', q' the (level + eta)-quantile of |Z|:
    misses <= eta + (1 - level - eta). Same release, a wider interval (the benchmark compares them).

    Both: clamping to [0, 1] and rounding to the grid are monotone, so the interval of the published value,
    widened by half a grid step and cut to [0, 1] (where every Gini of non-negative incomes lies), still
    contains g whenever the noisy one did. Caveat (in the result): it covers the Gini of the incomes clipped to
    the public [lower, upper].
    """
    v = check_finite(value, "value")
    lows, ups = gini_interval_bounds(
        [v],
        [check_positive(s_upper, "s_upper")],
        noise=noise,
        alpha=alpha,
        bound_scale=bound_scale,
        eta=eta,
        level=level,
        method=method,
        gamma=gamma,
        sigma=sigma,
        min_scale=min_scale,
        max_scale=max_scale,
    )
    caveat = "covers the Gini of the incomes clipped to the public bounds"
    if method == "union":
        caveat += f"; the bound S_hat >= S_beta(X) fails with probability {eta:g}, counted in the level"
    return GiniInterval(
        v,
        float(lows[0]),
        float(ups[0]),
        float(level),
        f"published bound S_hat, {method} ({noise} noise)",
        caveat,
        float(s_upper),
        float(eta),
        epsilon,
        delta,
    )


def gini_oracle_interval(
    value: float,
    confidential_noise_scale: float,
    *,
    noise: str,
    level: float = DEFAULT_LEVEL,
    gamma: float = 2.0,
    sigma: float | None = None,
) -> GiniInterval:
    """NOT PUBLISHABLE: value -+ q_Z(level) S_beta(X)/alpha with the confidential scale known (what the Gini page
    showed before; the benchmark's yardstick). The scale depends on the data and is not a DP output."""
    v = check_finite(value, "value")
    half = abs_quantile(noise, check_level(level), gamma, sigma) * check_positive(
        confidential_noise_scale, "confidential_noise_scale"
    )
    return GiniInterval(
        v,
        max(v - half, 0.0),
        min(v + half, 1.0),
        float(level),
        "oracle: known S_beta(X)/alpha (confidential; not publishable)",
        "uses a data-dependent scale: not covered by the release's DP guarantee",
    )


# The Gini: posterior over the value and the bound
# ---------------------------------------------------------------------------------------------


def _log_scale_grid(plan: GiniIntervalPlan, s_upper: float) -> tuple[np.ndarray, np.ndarray]:
    """Grid over ln S and the posterior weights of ln S given the bound alone (prior uniform on ln S over its
    public range [ln GS - n beta, ln GS]: S_beta >= e^{-n beta} A^(n) = e^{-n beta} GS and S_beta <= GS)."""
    gs = gini_lib.gini_global_sensitivity(plan.n, plan.lower, plan.upper)
    centre = math.log(s_upper) - plan.bound_margin
    lo = max(math.log(gs) - plan.n * plan.beta, centre - 30.0 * plan.bound_scale)
    hi = min(math.log(gs), centre + 30.0 * plan.bound_scale)
    if hi <= lo:  # the bound lies outside S's public range: the range's nearer end carries all the weight
        lo = hi = min(max(centre, math.log(gs) - plan.n * plan.beta), math.log(gs))
    u = np.linspace(lo, hi, 241)
    logw = -np.abs(centre - u) / plan.bound_scale
    w = np.exp(logw - logw.max())
    return u, w / w.sum()


def _value_loglik(value: float, g: np.ndarray, scales: np.ndarray, law: Any) -> np.ndarray:
    """log P(published value | g, scale) on the (scales x g) grid: a density inside (0, 1), a tail at a clamp."""
    z = (value - g[None, :]) / scales[:, None]
    with np.errstate(divide="ignore"):
        if value <= noise_guarantees.GINI_WINDOW[0]:
            return np.log(np.maximum(law.cdf(z), 1e-300))
        if value >= noise_guarantees.GINI_WINDOW[1]:
            return np.log(np.maximum(law.sf(z), 1e-300))
        return np.asarray(law.logpdf(z), dtype=float) - np.log(scales)[:, None]


def gini_posterior_interval(
    value: float, s_upper: float, *, plan: GiniIntervalPlan, level: float | None = None
) -> GiniInterval:
    """Credible interval for the Gini given the published value and bound, integrating over the unknown S.

    Model (Lan & Reiter's eq. (11) with the scale unknown): prior uniform on g in [0, 1] and on ln S over its
    public range; bound T = ln S + Laplace(scale) + margin; value = clamp(g + (S/alpha) Z). The posterior of g is
    the mixture over S of the known-scale posteriors, weighted by p(ln S | T) and the value's likelihood:
        p(g | value, T) ∝ sum_i p(ln S_i | T) f_Z((value - g) alpha/S_i) alpha/S_i
    (a clamped value contributes the tail probability instead of a density). Computed on a grid: 241 values of
    ln S (+-30 bound scales), g on a uniform grid plus a geometric one around the value; equal-tailed quantiles.
    A Bayesian interval: its frequentist coverage is measured (tests), not guaranteed.
    """
    plan = check_plan(plan)
    v = check_finite(value, "value")
    s_hat = check_positive(s_upper, "s_upper")
    lev = plan.level if level is None else check_level(level)
    u, w_s = _log_scale_grid(plan, s_hat)
    scales = np.clip(np.exp(u) / plan.release_alpha, plan.min_scale or 1e-12, plan.max_scale)
    keep = w_s > 1e-12
    scales, w_s = scales[keep], w_s[keep]
    smin = float(scales.min())
    offsets = smin * np.geomspace(1e-3, max(1.0 / smin, 1e-2), 300)
    edges = np.unique(np.clip(np.concatenate([np.linspace(0.0, 1.0, 1025), v - offsets, v + offsets]), 0.0, 1.0))
    mids = 0.5 * (edges[1:] + edges[:-1])
    law = noise_law(plan.noise, plan.gamma, plan.sigma)
    loglik = _value_loglik(v, mids, scales, law) + np.log(w_s)[:, None]
    top = loglik.max()
    mass = np.exp(loglik - top).sum(axis=0) * np.diff(edges)
    cdf = np.concatenate([[0.0], np.cumsum(mass) / mass.sum()])
    lo_q, hi_q = np.interp([(1 - lev) / 2, (1 + lev) / 2], cdf, edges)
    return GiniInterval(
        v,
        float(lo_q),
        float(hi_q),
        lev,
        "posterior over g and S (uniform priors on g and ln S)",
        "a credible interval: its frequentist coverage is measured, not guaranteed",
        s_hat,
        plan.eta,
        plan.epsilon,
        plan.delta,
    )


#: scipy.special costs about 0.2 s to import (its array-API layer pulls numpy.f2py); a command-line release
#: of counts or means never calls it
special = LazyModule("scipy.special")
