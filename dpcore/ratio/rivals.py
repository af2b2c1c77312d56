"""The rivals of LaplaceNoisedCounts: NaiveRelativeRisk and NoisedLog (Appendix B), the local and smooth sensitivity
of x/y (Appendix C, Claim C.6), propose-test-release (Algorithm 1), and the sample accuracy of every algorithm
(Figure 1 / Appendix E.1). They follow the paper's convention that one record changes one count by one."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import noise
from ..validation import DPInputError, as_generator, check_delta, check_epsilon, check_finite, check_positive
from .accuracy import SampleAccuracy, ratio_sample_accuracy
from .counts import check_count

# ---------------------------------------------------------------------------------------------
# Rivals: NaiveRelativeRisk, NoisedLog (Appendix B)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RatioRelease:
    """One private release of a ratio by a rival algorithm, with its parameters.

    ``value`` is the DP output. ``confidential_noise_scale`` is the scale of the noise that was added:
    public for the global-sensitivity rivals, but S(X)/alpha (data-dependent) for the smooth-sensitivity
    rivals, so it is named confidential for all.
    """

    value: float
    algorithm: str
    epsilon: float
    delta: float | None
    confidential_noise_scale: float
    note: str = ""
    privacy_cost: Any = None  # dpcore.budget.PrivacyCost, set by the smooth rivals' noise= path


def naive_sensitivity(n_x: Any, n_y: Any, *, both_counts: bool = False) -> float:
    """Global sensitivity of RR^ = (x/n_x)/(y/n_y) over 0 <= x <= n_x, 1 <= y <= n_y (Claim B.1).

    One count changes by one (paper): max(n_y/2, n_y/n_x) (the y-change at (n_x, 1) -> (n_x, 2)
    dominates for n_x >= 2; the spec's n_y/2). ``both_counts=True``: both counts may change by
    one, n_y (n_x + 1) / (2 n_x) (variant, not in the paper). Checked by brute force in the tests.
    """
    n_x = check_count(n_x, "n_x", minimum=1)
    n_y = check_count(n_y, "n_y", minimum=1)
    if both_counts:
        return max(n_y * (n_x + 1) / (2.0 * n_x), n_y / n_x) if n_y >= 2 else n_y / n_x
    return max(n_y / 2.0, n_y / n_x) if n_y >= 2 else n_y / n_x


def _check_ratio_counts(x: Any, y: Any, *, x_min: int = 0) -> tuple[int, int]:
    x = check_count(x, "x", minimum=x_min)
    y = check_count(y, "y")
    if y < 1:
        raise DPInputError("y must be >= 1: the ratio x/y is undefined for y = 0 (the paper assumes y > 0)")
    return x, y


def naive_relative_risk(x: Any, y: Any, n_x: Any, n_y: Any, *, epsilon: float, rng: Any = None) -> RatioRelease:
    """NaiveRelativeRisk (Appendix B): RR^ + Lap(Delta/eps), Delta = :func:`naive_sensitivity`.

    epsilon-DP (Claim B.1) for neighbours that change one count by one; accuracy
    beta = exp(-alpha eps / Delta) (Claim B.2), which gets worse as n_y grows.
    """
    x, y = _check_ratio_counts(x, y)
    n_x = check_count(n_x, "n_x", minimum=1)
    n_y = check_count(n_y, "n_y", minimum=1)
    if x > n_x or y > n_y:
        raise DPInputError(f"counts cannot exceed their group sizes (x={x} of n_x={n_x}, y={y} of n_y={n_y})")
    epsilon = check_epsilon(epsilon)
    scale = naive_sensitivity(n_x, n_y) / epsilon
    rr = (x / n_x) / (y / n_y)
    return RatioRelease(
        float(rr + noise.sample_laplace(scale, 1, as_generator(rng))[0]), "NaiveRelativeRisk", epsilon, None, scale
    )


def noised_log_bias_factor(epsilon: float) -> float:
    """E[e^L] = 1/(1 - 4/eps^2) for L ~ Lap(2/eps) (Claim B.5); it exists only for epsilon > 2."""
    epsilon = check_epsilon(epsilon)
    if epsilon <= 2:
        raise DPInputError(
            f"the NoisedLog bias correction does not exist for epsilon = {epsilon:g} <= 2: with Laplace(2/epsilon) "
            "noise on the log, E[exp(noise)] is infinite, so the estimator has no mean to correct. Use epsilon > 2 "
            "or report the uncorrected (median-unbiased) value."
        )
    return 1.0 / (1.0 - (2.0 / epsilon) * (2.0 / epsilon))


def noised_log(
    x: Any, y: Any, *, epsilon: float, n_x: Any = None, n_y: Any = None, debias: bool = False, rng: Any = None
) -> RatioRelease:
    """NoisedLog (Appendix B): exp(ln r + L), L ~ Lap(2/eps); r = x/y, or RR when n_x, n_y are given.

    Sensitivity 2 for ln x - ln y with x, y >= 1 (Claim B.3, SEED; covers both counts changing;
    the exact value is 2 ln 2). ``debias=True`` multiplies by 1 - 4/eps^2 (Claim B.5), only for
    eps > 2; otherwise DPInputError says the correction does not exist.
    """
    x, y = _check_ratio_counts(x, y, x_min=1)
    epsilon = check_epsilon(epsilon)
    factor = 1.0 / noised_log_bias_factor(epsilon) if debias else 1.0
    r = x / y
    if n_x is not None or n_y is not None:
        if n_x is None or n_y is None:
            raise DPInputError("give both n_x and n_y (for the relative risk) or neither (for x/y)")
        r = r * check_count(n_y, "n_y", minimum=1) / check_count(n_x, "n_x", minimum=1)
    b = 2.0 / epsilon
    L = noise.sample_laplace(b, 1, as_generator(rng))[0]
    return RatioRelease(
        float(factor * r * math.exp(L)), "NoisedLog" + (" (debiased)" if debias else ""), epsilon, None, b
    )


# ---------------------------------------------------------------------------------------------
# Local / smooth sensitivity of x/y (Appendix C, Claim C.6) and PTR (Algorithm 1)
# ---------------------------------------------------------------------------------------------


def ratio_local_sensitivity(x: Any, y: Any) -> np.ndarray:
    """LS of f = x/y when one record changes one count by one; domain x >= 0, y >= 1 (spec C.1.1).

    LS = max(1/y, x/(y(y-1))) for y >= 2 and max(1, x/2) for y = 1. Vectorised.
    """
    try:
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        raise DPInputError("x and y must be numbers (counts)") from None
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise DPInputError("x and y must be finite counts")
    if np.any(x < 0) or np.any(y < 1):
        raise DPInputError("local sensitivity needs x >= 0 and y >= 1")
    with np.errstate(divide="ignore", invalid="ignore"):
        ls_big = np.maximum(1.0 / y, x / (y * np.maximum(y - 1.0, 1.0)))
    return np.where(y >= 2, ls_big, np.maximum(1.0, x / 2.0))


def ratio_sensitivity_at_distance(x: Any, y: Any, k: Any) -> np.ndarray:
    """A^(k)(x, y) = max LS over datasets within k one-count changes (Claim C.6, spec closed form).

    y >= 2: LS(x, y-k) for k <= y-2, else max((x+k-y+2)/2, 1/2, 1[k >= y-1]); y = 1: max(1, (x+k)/2).
    Strategy: first decrease y, then increase x. Checked against brute force. Vectorised in k.
    """
    x = check_count(x, "x")
    y = check_count(y, "y", minimum=1)
    k = np.asarray(k, dtype=float)
    if np.any(k < 0):
        raise DPInputError("k must be >= 0")
    if y == 1:
        return np.maximum(1.0, (x + k) / 2.0)
    first = ratio_local_sensitivity(np.full_like(k, float(x)), np.maximum(y - k, 2.0))
    tail = np.maximum.reduce([(x + k - y + 2.0) / 2.0, np.full_like(k, 0.5), (k >= y - 1).astype(float)])
    return np.where(k <= y - 2, first, tail)


@dataclass(frozen=True)
class RatioSmoothSensitivity:
    """The smooth sensitivity of the ratio x/y: S*_beta(x, y) = max_k e^{-beta k} A^(k)(x, y)
    (Definition C.3) and where the max is reached."""

    value: float
    k_star: int
    beta: float
    local_sensitivity: float


def _k_max(x: int, y: int, beta: float) -> int:
    return max(y - 2, 0) + max(0, math.ceil(1.0 / beta - (x - y + 2))) + 2


def ratio_smooth_sensitivity(x: Any, y: Any, *, beta: float) -> RatioSmoothSensitivity:
    """beta-smooth sensitivity of x/y (Claim C.6): max over k of e^{-beta k} A^(k).

    The loop bound k_max = max(y-2, 0) + max(0, ceil(1/beta - (x-y+2))) + 2 covers the peak of the
    linear tail (spec §C.1.1); beyond it e^{-beta k}(x+k-y+2)/2 decreases.
    """
    x, y = _check_ratio_counts(x, y)
    beta = check_positive(beta, "beta")
    kmax = _k_max(x, y, beta)
    if kmax > 50_000_000:
        raise DPInputError("beta is too small for this computation; use a larger epsilon or delta")
    k = np.arange(kmax + 1, dtype=float)
    vals = np.exp(-beta * k) * ratio_sensitivity_at_distance(x, y, k)
    i = int(np.argmax(vals))
    return RatioSmoothSensitivity(float(vals[i]), i, beta, float(ratio_local_sensitivity(x, y)))


def smooth_laplace_beta(epsilon: float, delta: float) -> float:
    """Smoothing parameter for Laplace smooth-sensitivity noise: eps / (2 ln(2/delta)) (Lemma C.5, NRS)."""
    return check_epsilon(epsilon) / (2.0 * math.log(2.0 / check_delta(delta)))


def smooth_ratio_laplace(x: Any, y: Any, *, epsilon: float, delta: float, rng: Any = None) -> RatioRelease:
    """x/y + (2 S*_beta / eps) Lap(1) with beta = eps/(2 ln(2/delta)): (eps, delta)-DP (Lemma C.5).

    Neighbours: one record changes one count by one; domain x >= 0, y >= 1.
    Accuracy: P(|error| >= alpha) = exp(-alpha eps / (2 S*)).
    """
    x, y = _check_ratio_counts(x, y)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    ss = ratio_smooth_sensitivity(x, y, beta=smooth_laplace_beta(epsilon, delta))
    scale = 2.0 * ss.value / epsilon
    return RatioRelease(
        float(x / y + noise.sample_laplace(scale, 1, as_generator(rng))[0]),
        "Smooth sensitivity (Laplace)",
        epsilon,
        delta,
        scale,
    )


_CAL_CACHE: dict[tuple[float, float, str], Any] = {}
_noise_module = noise  # smooth_ratio_cauchy's parameter `noise` shadows the module name


def _cauchy_calibration(epsilon: float, gamma: float, calibration: str):
    key = (float(epsilon), float(gamma), calibration)
    if key not in _CAL_CACHE:
        _CAL_CACHE[key] = noise.smooth_noise_calibration(epsilon, gamma, mode=calibration)
    return _CAL_CACHE[key]


def smooth_ratio_cauchy(
    x: Any,
    y: Any,
    *,
    epsilon: float,
    gamma: float = 4.0,
    calibration: str = "tight",
    rng: Any = None,
    noise: str = "cauchy",
    delta: float | None = None,
) -> RatioRelease:
    """Pure epsilon-DP: x/y + (S*_beta / alpha) Z, Z ~ GeneralizedCauchy(gamma) (NRS; dpcore.noise).

    (alpha, beta) from ``dpcore.noise.smooth_noise_calibration(epsilon, gamma, mode=calibration)``: "tight"
    (the default) certifies the largest alpha, "paper" is alpha = eps/(4 gamma), beta = eps/gamma (more noise).
    gamma = 4 by default (finite variance).

    ``noise``: "cauchy" (default, the above), or a light-tailed
    ``dpcore.noise.smooth.SMOOTH_NOISES`` name: "laplace" ((epsilon, delta)-DP, certified tight NRS
    calibration) or "laplace_lognormal" (rho-zCDP implying (epsilon, delta)); delta defaults to 1e-6.
    See :func:`smooth_ratio_noise`.
    """
    if delta is not None:  # checked for every noise (ignored by the pure-DP Cauchy)
        delta = check_delta(delta)
    if noise != "cauchy":
        return smooth_ratio_noise(x, y, epsilon=epsilon, noise=noise, delta=delta, calibration=calibration, rng=rng)
    x, y = _check_ratio_counts(x, y)
    epsilon = check_epsilon(epsilon)
    cal = _cauchy_calibration(epsilon, check_finite(gamma, "gamma"), calibration)
    ss = ratio_smooth_sensitivity(x, y, beta=cal.beta)
    scale = ss.value / cal.alpha
    z = _noise_module.sample_generalized_cauchy(gamma, 1, as_generator(rng))[0]  # `noise` is the parameter here
    return RatioRelease(
        float(x / y + scale * z),
        "Smooth sensitivity (generalized Cauchy)",
        epsilon,
        None,
        scale,
        note=f"gamma={gamma:g}, alpha={cal.alpha:.4g}, beta={cal.beta:.4g}, {calibration}",
    )


def smooth_ratio_noise(
    x: Any,
    y: Any,
    *,
    epsilon: float,
    noise: str = "laplace",
    delta: float | None = None,
    calibration: str = "tight",
    gamma: float = 4.0,
    rng: Any = None,
) -> RatioRelease:
    """x/y + (S_beta / alpha) Z with any ``dpcore.noise.smooth.SMOOTH_NOISES`` noise.

    Constants from :func:`dpcore.noise.smooth.smooth_calibration` (same neighbours and smooth
    sensitivity, Claim C.6, as :func:`smooth_ratio_laplace`); ``.privacy_cost`` is the
    ``dpcore.budget.PrivacyCost`` (pure, approx or zCDP).
    """
    from ..noise import smooth as smooth_noise

    x, y = _check_ratio_counts(x, y)
    epsilon = check_epsilon(epsilon)
    cal = smooth_noise.smooth_calibration(
        noise, epsilon, delta=delta, gamma=check_finite(gamma, "gamma"), mode=calibration
    )
    ss = ratio_smooth_sensitivity(x, y, beta=cal.beta)
    scale = ss.value / cal.alpha
    z = float(smooth_noise.sample_smooth_noise(cal, 1, as_generator(rng))[0])
    return RatioRelease(
        float(x / y + scale * z),
        f"Smooth sensitivity ({cal.noise})",
        epsilon,
        cal.delta if cal.delta > 0 else None,
        scale,
        note=f"alpha={cal.alpha:.4g}, beta={cal.beta:.4g}; {cal.statement()}",
        privacy_cost=cal.cost,
    )


def _ptr_distances(x: int, y: int, bounds: np.ndarray) -> np.ndarray:
    """min{k : A^(k) > b} for each b (A^(k) is nondecreasing in k, so a sorted search suffices)."""
    kmax = max(y, 2) + int(math.ceil(2.0 * float(np.max(bounds)))) + 4  # A^(k) >= (x+k-y+2)/2 > b beyond
    a = ratio_sensitivity_at_distance(x, y, np.arange(kmax + 1, dtype=float))
    return np.searchsorted(a, bounds, side="right")


def ptr_distance(x: Any, y: Any, bound: float) -> int:
    """gamma = min{k : A^(k)(x, y) > bound}: distance to the nearest dataset whose LS exceeds ``bound``.

    It changes by at most one between neighbours (the key step of PTR's privacy proof; tested).
    """
    x, y = _check_ratio_counts(x, y)
    bound = check_positive(bound, "bound")
    return int(_ptr_distances(x, y, np.array([bound]))[0])


def _ptr_eps(epsilon: float) -> tuple[float, float]:
    return epsilon / 2.0, epsilon / 2.0  # (test, release): Theorem C.7 is (2 eps', delta) for eps' each


def ptr_failure_probability(distance: Any, *, epsilon: float, delta: float) -> np.ndarray:
    """P[FAIL] = P[gamma + Lap(1/eps_t) <= ln(1/delta)/eps_t] with eps_t = epsilon/2 (spec §C.2).

    = F_Lap(1/eps_t)(T - gamma), F(z) = e^{eps_t z}/2 for z < 0, 1 - e^{-eps_t z}/2 for z >= 0.
    """
    et, _ = _ptr_eps(check_epsilon(epsilon))
    delta = check_delta(delta)
    try:
        dist = np.asarray(distance, dtype=float)
    except (TypeError, ValueError):
        raise DPInputError("distance must be a number (a count of record changes)") from None
    if not np.all(np.isfinite(dist)) or np.any(dist < 0):
        raise DPInputError("distance must be finite and >= 0")
    zz = math.log(1.0 / delta) / et - dist
    return np.where(zz < 0, 0.5 * np.exp(et * np.minimum(zz, 0)), 1.0 - 0.5 * np.exp(-et * np.maximum(zz, 0)))


@dataclass(frozen=True)
class PTRRelease:
    """A propose-test-release outcome: ``failed`` (no value) or ``value`` = x/y + Lap(bound / (eps/2)).

    ``value`` and ``failed`` are the DP output. ``confidential_distance`` (the exact distance gamma to
    a data set whose local sensitivity exceeds the bound) and ``confidential_failure_probability``
    (P[FAIL] given that distance) describe the data and must not be published;
    """

    value: float | None
    failed: bool
    bound: float
    confidential_distance: int
    epsilon: float
    delta: float
    confidential_failure_probability: float


def ptr_ratio(
    x: Any, y: Any, *, epsilon: float, delta: float, bound: float | None = None, alpha: float = 0.1, rng: Any = None
) -> PTRRelease:
    """Propose-test-release (Algorithm 1, Dwork & Lei 2009) for x/y, (epsilon, delta)-DP overall.

    Test at eps/2: FAIL when gamma + Lap(2/eps) <= 2 ln(1/delta)/eps; release at eps/2:
    x/y + Lap(2 bound/eps). ``bound=None`` uses the *oracle* proposal of the paper (the bound that
    minimises P[FAIL] + P[|error| >= alpha], computed from the true counts: NOT private, a
    best case for PTR, as in the paper's Figure 1). Neighbours: one record changes one count.
    """
    x, y = _check_ratio_counts(x, y)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if bound is None:
        bound = ptr_oracle_bound(x, y, epsilon=epsilon, delta=delta, alpha=alpha)[0]
    bound = check_positive(bound, "bound")
    gen = as_generator(rng)
    et, er = _ptr_eps(epsilon)
    dist = ptr_distance(x, y, bound)
    pf = float(ptr_failure_probability(dist, epsilon=epsilon, delta=delta))
    noisy_dist = dist + noise.sample_laplace(1.0 / et, 1, gen)[0]
    if noisy_dist <= math.log(1.0 / delta) / et:
        return PTRRelease(None, True, bound, dist, epsilon, delta, pf)
    return PTRRelease(
        float(x / y + noise.sample_laplace(bound / er, 1, gen)[0]), False, bound, dist, epsilon, delta, pf
    )


def _ptr_error(x: int, y: int, epsilon: float, delta: float, alpha: float, bounds: np.ndarray) -> np.ndarray:
    """P[FAIL] + (1 - P[FAIL]) exp(-alpha eps_r / b): failures counted as errors (exact, not a union bound)."""
    _, er = _ptr_eps(epsilon)
    dists = _ptr_distances(x, y, bounds)
    pf = ptr_failure_probability(dists, epsilon=epsilon, delta=delta)
    return pf + (1.0 - pf) * np.exp(-alpha * er / bounds)


def ptr_oracle_bound(x: Any, y: Any, *, epsilon: float, delta: float, alpha: float) -> tuple[float, float]:
    """The oracle proposal (spec §C.2): the candidate bound A^(j), j >= 0, minimising the PTR error.

    Returns (bound, beta) with beta = P[FAIL] + (1 - P[FAIL]) e^{-alpha (eps/2) / bound}.
    """
    x, y = _check_ratio_counts(x, y)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    alpha = check_positive(alpha, "alpha")
    et, _ = _ptr_eps(epsilon)
    jmax = max(y, 2) + int(math.ceil(math.log(1.0 / delta) / et + 40.0 / et)) + 4
    cand = np.unique(ratio_sensitivity_at_distance(x, y, np.arange(jmax + 1, dtype=float)))
    err = _ptr_error(x, y, epsilon, delta, alpha, cand)
    i = int(np.argmin(err))
    return float(cand[i]), float(err[i])


# ---------------------------------------------------------------------------------------------
# Sample accuracy of every algorithm (Figure 1 / Appendix E.1)
# ---------------------------------------------------------------------------------------------

ALGORITHMS = (
    "LaplaceNoisedCounts",
    "NaiveRelativeRisk",
    "NoisedLog",
    "NoisedLog (debiased)",
    "Smooth sensitivity (Laplace)",
    "Smooth sensitivity (generalized Cauchy)",
    "PTR (oracle)",
)


def _noised_log_beta(r: float, alpha: float, epsilon: float, factor: float = 1.0) -> float:
    """P(|c r e^L - r| >= alpha), L ~ Lap(2/eps), c = factor (Claim B.4 for c = 1)."""
    a = alpha / r
    up = math.log((1 + a) / factor)
    p = 0.5 * math.exp(-up * epsilon / 2) if up >= 0 else 1 - 0.5 * math.exp(up * epsilon / 2)
    if a < 1:
        dn = math.log((1 - a) / factor)
        p += 0.5 * math.exp(dn * epsilon / 2) if dn <= 0 else 1 - 0.5 * math.exp(-dn * epsilon / 2)
    return min(p, 1.0)


def sample_accuracy_all(
    x: Any,
    y: Any,
    *,
    epsilon: float,
    alpha: float = 0.1,
    n: Any,
    delta: float | None = None,
    gamma: float = 4.0,
    calibration: str = "tight",
) -> dict[str, SampleAccuracy]:
    """beta = P(|estimate - x/y| >= alpha) for every algorithm (Figure 1 design: n_x = n_y = n, delta = 1/n).

    * LaplaceNoisedCounts: Claim 3.2 (unclipped ratio).
    * NaiveRelativeRisk: exp(-alpha eps / Delta), Delta = max(n/2, 1) (Claim B.2).
    * NoisedLog: Claim B.4; its debiased version (eps > 2 only) by the same argument.
    * Smooth sensitivity, Laplace: exp(-alpha eps / (2 S*)), beta_s = eps / (2 ln(2/delta)).
    * Smooth sensitivity, generalized Cauchy: 2 P(Z >= alpha a / S*) with (a, beta) from dpcore.noise.
    * PTR with the oracle proposal, failures counted as errors.
    Each is checked against a Monte Carlo of the mechanism itself in tests/test_ratio_rivals.py.
    """
    x, y = _check_ratio_counts(x, y)
    n = check_count(n, "n", minimum=1)
    if x > n or y > n:
        raise DPInputError(f"the counts cannot exceed the group size n = {n} (got x={x}, y={y})")
    epsilon = check_epsilon(epsilon)
    alpha = check_positive(alpha, "alpha")
    delta = 1.0 / n if delta is None else delta
    if n == 1 and delta == 1.0:
        raise DPInputError("n = 1 gives delta = 1/n = 1; give delta explicitly")
    delta = check_delta(delta)
    r = x / y
    common = dict(x=x, y=y, epsilon=epsilon, alpha=alpha)
    out: dict[str, SampleAccuracy] = {"LaplaceNoisedCounts": ratio_sample_accuracy(x, y, epsilon=epsilon, alpha=alpha)}
    delta_naive = naive_sensitivity(n, n)
    out["NaiveRelativeRisk"] = SampleAccuracy(
        math.exp(-alpha * epsilon / delta_naive), algorithm="NaiveRelativeRisk", **common
    )
    if x >= 1:
        out["NoisedLog"] = SampleAccuracy(_noised_log_beta(r, alpha, epsilon), algorithm="NoisedLog", **common)
        if epsilon > 2:
            f = 1.0 - 4.0 / epsilon**2
            out["NoisedLog (debiased)"] = SampleAccuracy(
                _noised_log_beta(r, alpha, epsilon, f), algorithm="NoisedLog (debiased)", **common
            )
    ss = ratio_smooth_sensitivity(x, y, beta=smooth_laplace_beta(epsilon, delta))
    out["Smooth sensitivity (Laplace)"] = SampleAccuracy(
        math.exp(-alpha * epsilon / (2 * ss.value)), algorithm="Smooth sensitivity (Laplace)", delta=delta, **common
    )
    cal = _cauchy_calibration(epsilon, float(gamma), calibration)
    ssc = ratio_smooth_sensitivity(x, y, beta=cal.beta)
    gc = noise.GeneralizedCauchy(gamma)
    out["Smooth sensitivity (generalized Cauchy)"] = SampleAccuracy(
        float(min(1.0, 2.0 * float(gc.sf(alpha * cal.alpha / ssc.value)))),
        algorithm="Smooth sensitivity (generalized Cauchy)",
        gamma=gamma,
        **common,
    )
    bound, beta_ptr = ptr_oracle_bound(x, y, epsilon=epsilon, delta=delta, alpha=alpha)
    out["PTR (oracle)"] = SampleAccuracy(beta_ptr, algorithm="PTR (oracle)", bound=bound, delta=delta, **common)
    return out
