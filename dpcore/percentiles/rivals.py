"""The rivals of the histogram: smooth sensitivity (Section 4.2, eq. 4.6) and the exponential-mechanism quantile
(Smith 2011, Algorithm 2; the paper's footnote 6). Both for replace-one neighbours with n public and earnings
clipped to the public range [lower, upper] (see :mod:`dpcore.percentiles`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..lazy import special
from ..validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
)
from .common import PSEO_LOWER, PSEO_TOP, check_clip_range, check_earnings, check_q

# ---------------------------------------------------------------------------------------------
# The smooth-sensitivity rival (Section 4.2)
# ---------------------------------------------------------------------------------------------


def percentile_rank(n: int, q: float) -> int:
    """Rank M = ceil(q n / 100), clipped to [1, n]: the order statistic released for percentile q.

    x_(M) is the smallest data value whose empirical CDF reaches q/100 (the reading of eq. 4.2).
    For the median of an odd n it is (n+1)/2, as in eq. (4.4).
    """
    n = check_int(n, "n", minimum=1)
    q = float(check_q([q])[0])
    m = math.ceil(round(q * n / 100.0, 9))
    return int(min(max(m, 1), n))


def empirical_percentile(values: Any, q: Any = (25, 50, 75)) -> np.ndarray:
    """The order statistics x_(M), M = ceil(q n / 100): the 'true' percentiles we measure error against."""
    x = np.sort(as_finite_array(values, "earnings", min_size=1))
    qa = check_q(q)
    return np.array([x[percentile_rank(x.size, qi) - 1] for qi in qa])


def local_sensitivity_profile(x_sorted: np.ndarray, rank: int, lower: float, upper: float, k_max: int) -> np.ndarray:
    """A^(k) = max local sensitivity of x_(rank) over datasets at replacement distance <= k.

    Eq. (4.6): A^(k) = max_{t=0..k+1} (x_(M+t) - x_(M+t-k-1)) with x_(i) = lower for i < 1 and
    upper for i > n, for k = 0..k_max. ``x_sorted`` must be sorted and inside [lower, upper];
    ``rank`` in 1..n. For k >= n every dataset is reachable, so A^(k) = upper - lower there (only
    k <= n is computed). Vectorised in blocks.
    """
    x = as_finite_array(x_sorted, "x_sorted", min_size=1)
    lower, upper = check_clip_range(lower, upper)
    n = x.size
    if np.any(np.diff(x) < 0):
        raise DPInputError("x_sorted must be sorted in increasing order")
    if x[0] < lower or x[-1] > upper:
        raise DPInputError(f"x_sorted must lie in [lower, upper] = [{lower:g}, {upper:g}]; clip it first")
    rank = check_int(rank, "rank", minimum=1, maximum=n)
    k_req = check_int(k_max, "k_max", minimum=0)
    k_max = min(k_req, n)
    ext_pad = k_max + 2
    ext = np.concatenate([np.full(ext_pad, lower), x, np.full(ext_pad, upper)])
    # position of x_(i) (1-based) in ext is i - 1 + ext_pad
    base = rank - 1 + ext_pad
    out = np.empty(k_max + 1)
    block = 64
    for k0 in range(0, k_max + 1, block):
        ks = np.arange(k0, min(k0 + block, k_max + 1))
        ts = np.arange(ks[-1] + 2)
        hi_idx = base + ts[None, :] + 0 * ks[:, None]
        lo_idx = hi_idx - ks[:, None] - 1
        diff = ext[hi_idx] - ext[lo_idx]
        diff[ts[None, :] > ks[:, None] + 1] = -np.inf
        out[ks] = diff.max(axis=1)
    if k_req > k_max:
        out = np.concatenate([out, np.full(k_req - k_max, upper - lower)])
    return out


@dataclass(frozen=True)
class PercentileSmoothSensitivity:
    """beta-smooth sensitivity of one percentile (eq. 4.6). Data-dependent: not itself private."""

    value: float
    k_star: int
    A: np.ndarray  # A^(k) for k = 0..len(A)-1 (enough k for the maximum)
    rank: int
    beta: float


def smooth_from_profile(
    xs: np.ndarray, rank: int, lo: float, hi: float, betas: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """S_beta = max_k e^{-k beta} A^(k) for several betas, growing k until no larger k can win."""
    n = xs.size
    betas = np.asarray(betas, dtype=float)
    width = hi - lo
    k_done = -1
    prof = np.empty(0)
    step = 128
    while True:
        k_hi = min(n, k_done + step)
        prof = local_sensitivity_profile(xs, rank, lo, hi, k_hi)
        k_done = k_hi
        ks = np.arange(k_done + 1)
        vals = np.exp(-np.outer(betas, ks)) * prof[None, :]
        best = vals.max(axis=1)
        # A^(k) <= width for every k, so k > k_done cannot beat best once e^{-(k_done+1) beta} width <= best
        if k_done >= n or np.all(np.exp(-(k_done + 1) * betas) * width <= best):
            return best, vals.argmax(axis=1), prof
        step *= 2


def percentile_smooth_sensitivity(
    values: Any, q: float, *, beta: float, lower: float = PSEO_LOWER, upper: float = PSEO_TOP
) -> PercentileSmoothSensitivity:
    """beta-smooth sensitivity of the q-th percentile x_(M), M = ceil(q n / 100) (eq. 4.6).

    S*_beta(x) = max_{k=0..n} e^{-k beta} max_{t=0..k+1} (x_(M+t) - x_(M+t-k-1)),
    Nissim-Raskhodnikova-Smith (2007) for the median, generalised to any rank. Valid for
    replacement neighbours with n public and data clipped to the public range [lower, upper]
    (values outside are clipped here). Checked against brute force in the tests.
    """
    lo, hi = check_clip_range(lower, upper)
    x = np.sort(np.clip(check_earnings(values), lo, hi))
    beta = check_positive(beta, "beta")
    q = float(check_q([q])[0])
    rank = percentile_rank(x.size, q)
    best, kstar, prof = smooth_from_profile(x, rank, lo, hi, np.array([beta]))
    return PercentileSmoothSensitivity(float(best[0]), int(kstar[0]), prof, rank, beta)


def _split_epsilon(epsilon: float, n_q: int, weights: Any) -> np.ndarray:
    if weights is None:
        return np.full(n_q, epsilon / n_q)
    w = as_finite_array(weights, "epsilon weights", min_size=1)
    if w.size != n_q or np.any(w <= 0):
        raise DPInputError(f"epsilon weights must be {n_q} positive numbers, one per percentile")
    return epsilon * w / w.sum()


@dataclass(frozen=True)
class SmoothPercentileRelease:
    """Percentiles released with smooth-sensitivity noise (Section 4.2).

    ``confidential_smooth_sensitivity`` and ``confidential_noise_scale`` (S*_beta(X)/alpha) depend on
    the confidential data: kept for teaching and auditing, never published.
    """

    values: np.ndarray
    q: np.ndarray
    epsilon: float
    epsilon_per_percentile: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    gamma: float
    confidential_smooth_sensitivity: np.ndarray
    confidential_noise_scale: np.ndarray
    calibration: str
    lower: float
    upper: float
    noise: str = "cauchy"  # a dpcore.noise.smooth.SMOOTH_NOISES name
    delta: float = 0.0
    privacy_cost: Any = None  # dpcore.budget.PrivacyCost of the whole release


def release_percentiles_smooth(
    values: Any,
    *,
    epsilon: float,
    q: Any = (25, 50, 75),
    rng=None,
    lower: float = PSEO_LOWER,
    upper: float = PSEO_TOP,
    gamma: float = 4.0,
    calibration: str = "tight",
    epsilon_weights: Any = None,
    noise: str = "cauchy",
    delta: float | None = None,
) -> SmoothPercentileRelease:
    """The rival of Section 4.2: each percentile + (S*_beta / alpha) Z, Z ~ h(z) ∝ 1/(1+|z|^gamma).

    epsilon is split across the percentiles (sequential composition; equal split by default,
    footnote 19). For percentile x with eps_x: (alpha, beta) = smooth_noise_calibration(eps_x,
    gamma, calibration); "paper" gives alpha = eps_x/(4 gamma), beta = eps_x/gamma (eps_x/16 and
    eps_x/4 for gamma = 4, as in the paper); "tight" keeps beta and takes the largest alpha whose
    certified privacy loss is <= eps_x. Neighbours: replace one person, n public; values clipped
    to the public range [lower, upper]. The released values need not be ordered (the paper's
    point); we do not sort them.

    ``noise`` (:mod:`dpcore.noise.smooth`): "cauchy" (default, the above, pure epsilon),
    "laplace" (NRS, each percentile (eps_x, delta/k)-DP: (epsilon, delta) in total by basic
    composition) or "laplace_lognormal" (Bun & Steinke; rho implying (epsilon, delta) in total,
    split in proportion to eps_x: zCDP composition adds rho). ``delta`` defaults to 1e-6.
    """
    from .. import budget
    from .. import noise as noise_module  # the parameter `noise` shadows the module name here
    from ..noise import smooth as smooth_noise

    epsilon = check_epsilon(epsilon)
    lo, hi = check_clip_range(lower, upper)
    qa = check_q(q)
    gamma = check_finite(gamma, "gamma")
    if gamma <= 3:
        raise DPInputError(f"gamma must be > 3 here (finite-variance noise, as the paper's gamma = 4), got {gamma:g}")
    noise_name = smooth_noise.check_noise(noise)
    if delta is not None:  # checked for every noise (ignored by the pure-DP Cauchy)
        from ..validation import check_delta

        delta = check_delta(delta)
    x = np.sort(np.clip(check_earnings(values), lo, hi))
    eps_q = _split_epsilon(epsilon, qa.size, epsilon_weights)
    # the Cauchy's noise.SmoothNoiseCalibration or the light tails' smooth_noise.SmoothCalibration (both give
    # alpha and beta; only the latter are passed to sample_smooth_noise)
    cals: list[Any]
    if noise_name == "cauchy":
        cals = [noise_module.smooth_noise_calibration(float(e), gamma, mode=calibration) for e in eps_q]
        delta_v, cost = 0.0, budget.pure(epsilon)
    elif noise_name == "laplace":
        delta_v = smooth_noise.DEFAULT_DELTA if delta is None else delta
        cals = [
            smooth_noise.smooth_calibration("laplace", float(e), delta=delta_v / qa.size, mode=calibration)
            for e in eps_q
        ]
        cost = budget.approx(epsilon, delta_v)
    else:
        delta_v = smooth_noise.DEFAULT_DELTA if delta is None else delta
        rho = smooth_noise.rho_for_approx_dp(epsilon, delta_v)
        cals = [smooth_noise.lln_calibration(rho=rho * float(e) / epsilon, delta=delta_v) for e in eps_q]
        cost = budget.zcdp(rho)
    alpha = np.array([c.alpha for c in cals])
    beta = np.array([c.beta for c in cals])
    s = np.empty(qa.size)
    true = np.empty(qa.size)
    for i, qi in enumerate(qa):
        rank = percentile_rank(x.size, qi)
        true[i] = x[rank - 1]
        s[i] = smooth_from_profile(x, rank, lo, hi, beta[i : i + 1])[0][0]
    scale = s / alpha
    if noise_name == "cauchy":
        z = noise_module.GeneralizedCauchy(gamma).rvs(qa.size, rng=rng)
    else:
        gen = as_generator(rng)
        z = np.array([float(smooth_noise.sample_smooth_noise(c, 1, gen)[0]) for c in cals])
    return SmoothPercentileRelease(
        true + scale * z,
        qa,
        epsilon,
        eps_q,
        alpha,
        beta,
        gamma,
        s,
        scale,
        calibration,
        lo,
        hi,
        noise=noise_name,
        delta=delta_v,
        privacy_cost=cost,
    )


def smooth_sensitivity_many_betas(
    values: Any, q: float, betas: Any, *, lower: float = PSEO_LOWER, upper: float = PSEO_TOP
) -> tuple[float, np.ndarray]:
    """(true percentile, S*_beta for every beta): the A^(k) profile is computed once for all betas."""
    lo, hi = check_clip_range(lower, upper)
    x = np.sort(np.clip(check_earnings(values), lo, hi))
    rank = percentile_rank(x.size, float(check_q([q])[0]))
    b = np.asarray(betas, dtype=float)
    if np.any(~np.isfinite(b)) or np.any(b <= 0):
        raise DPInputError("betas must be positive numbers")
    best, _, _ = smooth_from_profile(x, rank, lo, hi, b)
    return float(x[rank - 1]), best


# ---------------------------------------------------------------------------------------------
# The exponential mechanism (Smith 2011, Algorithm 2)
# ---------------------------------------------------------------------------------------------


def _em_intervals(
    values: Any, q: float, lower: float, upper: float, epsilon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.sort(np.clip(check_earnings(values), lower, upper))
    n = x.size
    pts = np.concatenate([[lower], x, [upper]])
    lengths = np.diff(pts)  # interval i = [x_(i), x_(i+1)], i = 0..n, holds i data points below it
    utility = -np.abs(np.arange(n + 1) - q * n / 100.0)
    with np.errstate(divide="ignore"):
        logw = np.log(lengths) + 0.5 * epsilon * utility
    logz = special.logsumexp(logw)
    return pts, lengths, logw - logz


def exponential_mechanism_log_density(
    values: Any, y: Any, *, epsilon: float, q: float, lower: float = PSEO_LOWER, upper: float = PSEO_TOP
) -> np.ndarray:
    """Log output density of the exponential-mechanism quantile at points y in [lower, upper].

    Density ∝ exp(-(epsilon/2) |#{i: x_i < y} - q n / 100|) on [lower, upper] (Smith 2011,
    Algorithm 2). Replacing one person changes the count below y by at most 1 (utility
    sensitivity 1, n public), so the density ratio of neighbours is at most e^epsilon (tested by
    computing it).
    """
    epsilon = check_epsilon(epsilon)
    lo, hi = check_clip_range(lower, upper)
    qv = float(check_q([q])[0])
    pts, lengths, logp = _em_intervals(values, qv, lo, hi, epsilon)
    ya = np.asarray(y, dtype=float)
    if np.any((ya < lo) | (ya > hi)):
        raise DPInputError("y must lie in [lower, upper]")
    i = np.clip(np.searchsorted(pts, ya, side="right") - 1, 0, lengths.size - 1)
    # density inside interval i: P(i) / length_i  (skip zero-length intervals: measure zero)
    with np.errstate(divide="ignore"):
        return logp[i] - np.log(lengths[i])


def sample_exponential_mechanism(
    values: Any,
    *,
    epsilon: float,
    q: float,
    size: int = 1,
    rng=None,
    lower: float = PSEO_LOWER,
    upper: float = PSEO_TOP,
) -> np.ndarray:
    """``size`` independent draws of the exponential-mechanism q-th percentile (each costs epsilon)."""
    epsilon = check_epsilon(epsilon)
    lo, hi = check_clip_range(lower, upper)
    qv = float(check_q([q])[0])
    size = check_int(size, "size", minimum=1)
    gen = as_generator(rng)
    pts, lengths, logp = _em_intervals(values, qv, lo, hi, epsilon)
    cdf = np.cumsum(np.exp(logp))
    i = np.searchsorted(cdf, gen.random(size) * cdf[-1], side="right")
    i = np.minimum(i, lengths.size - 1)
    return pts[i] + gen.random(size) * lengths[i]


@dataclass(frozen=True)
class EMPercentileRelease:
    """Percentiles released by the exponential mechanism, epsilon split equally across them."""

    values: np.ndarray
    q: np.ndarray
    epsilon: float
    epsilon_per_percentile: np.ndarray
    lower: float
    upper: float


def release_percentiles_em(
    values: Any,
    *,
    epsilon: float,
    q: Any = (25, 50, 75),
    rng=None,
    lower: float = PSEO_LOWER,
    upper: float = PSEO_TOP,
    epsilon_weights: Any = None,
) -> EMPercentileRelease:
    """Each percentile by the exponential mechanism (Smith 2011, Algorithm 2), epsilon split across them.

    Neighbours: replace one person, n public; values clipped to the public range [lower, upper].
    """
    epsilon = check_epsilon(epsilon)
    lo, hi = check_clip_range(lower, upper)
    qa = check_q(q)
    x = check_earnings(values)
    eps_q = _split_epsilon(epsilon, qa.size, epsilon_weights)
    gen = as_generator(rng)
    vals = np.array(
        [
            sample_exponential_mechanism(x, epsilon=float(e), q=float(qi), size=1, rng=gen, lower=lo, upper=hi)[0]
            for e, qi in zip(eps_q, qa, strict=True)
        ]
    )
    return EMPercentileRelease(vals, qa, epsilon, eps_q, lo, hi)
