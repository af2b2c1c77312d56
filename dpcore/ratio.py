"""Differentially private ratios and relative risk from noisy counts (Shoham & Ligett 2025).

Paper: T. Shoham and K. Ligett, *Differentially private ratio statistics*, arXiv:2505.20351.
Our copy lost its formulas; ``../shared/papers/ratio_math_spec.md`` rebuilds them and labels each
(RECOVERED / SEED / STANDARD / DERIVED / INFERRED-SIM). Every DERIVED formula used here is checked
by a Monte Carlo or brute-force test in ``tests/test_ratio*.py``.

Setting and privacy assumptions
-------------------------------
Two groups of public sizes ``n_x`` (e.g. exposed) and ``n_y`` (unexposed). The confidential counts
are ``x`` = people in group x with the outcome and ``y`` = people in group y with the outcome.
Relative risk RR = p_x / p_y; with n_x = n_y the ratio of counts x / y equals RR.

Neighbouring relation (as in the paper): replace one person's record; n_x and n_y are public.

* :func:`laplace_noised_counts` / :func:`gaussian_noised_counts` spend epsilon/2 (and delta/2) on
  each count (Claim 3.1, basic composition), so they stay private even when one record changes
  *both* counts by one (a person moving between cells). Everything computed from the two noisy
  counts (ratios, intervals, bias estimates) is post-processing.
* The rivals of Appendix B/C (:func:`naive_relative_risk`, smooth sensitivity, PTR) follow the
  paper's convention that one record changes *one* count by one (true when group membership is
  public); :func:`noised_log` uses sensitivity 2, which covers both counts changing.
* The 2x2 table for the odds ratio (:func:`noisy_two_by_two`) has L1 sensitivity 2 (one record
  leaves one cell and enters another), so each cell gets Laplace(2/epsilon).

Choices where the paper is silent or inconsistent (each is tested):

* Claim 3.2 holds for the *unclipped* ratio x~/y~ (its proof integrates over all of R). We return
  beta = P(|x~/y~ - x/y| >= alpha) and use the closed form (spec §3.1, boxed) when alpha < x/y and
  the general CDF of Claim F.1 otherwise.
* Claim 3.4 needs a moment, so the denominator is clipped at 1 (y_bar = max(y~, 1)); intervals and
  coverage simulations clip both noisy counts at 1 (spec §4, INFERRED-SIM). The public interval
  functions refuse noisy counts <= 0 unless ``clip=True`` (the normal approximation is meaningless
  there; say so rather than return a silent number).
* PTR (Theorem C.7) is (2 eps, delta)-DP in the textbook; we run the test and the release at
  epsilon/2 each, so the whole algorithm is (epsilon, delta)-DP like its rivals.
* NoisedLog keeps the paper's sensitivity 2 for ln x - ln y (SEED); the exact value under our
  domain x, y >= 1 is 2 ln 2, so the paper's choice is valid but conservative.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import noise
from .lazy import LazyModule
from .rng import SecureRandom
from .validation import (
    DPInputError,
    as_generator,
    check_delta,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
    check_probability,
)

#: scipy.special costs about 0.2 s to import (its array-API layer pulls numpy.f2py); a command-line release
#: of counts or means never calls it
special = LazyModule("scipy.special")

__all__ = [
    "CountNoise",
    "count_noise",
    "NoisedCounts",
    "laplace_noised_counts",
    "gaussian_noised_counts",
    "laplace_ratio_cdf",
    "SampleAccuracy",
    "ratio_sample_accuracy",
    "expected_inverse_clipped",
    "RatioBias",
    "ratio_bias",
    "BinomialBias",
    "binomial_ratio_bias",
    "RRInterval",
    "katz_interval",
    "rr_confidence_interval",
    "CoverageResult",
    "simulate_rr_coverage",
    "RRSampling",
    "simulate_rr_sampling",
    "CoverageGrid",
    "coverage_grid",
    "RatioRelease",
    "naive_sensitivity",
    "naive_relative_risk",
    "noised_log",
    "noised_log_bias_factor",
    "ratio_local_sensitivity",
    "ratio_sensitivity_at_distance",
    "RatioSmoothSensitivity",
    "ratio_smooth_sensitivity",
    "smooth_laplace_beta",
    "smooth_ratio_laplace",
    "smooth_ratio_cauchy",
    "smooth_ratio_noise",
    "ptr_distance",
    "ptr_failure_probability",
    "PTRRelease",
    "ptr_ratio",
    "ptr_oracle_bound",
    "ALGORITHMS",
    "sample_accuracy_all",
    "NoisyTable",
    "noisy_two_by_two",
    "ORInterval",
    "or_confidence_interval",
    "simulate_or_coverage",
]

MECHANISMS = ("laplace", "gaussian")


# ---------------------------------------------------------------------------------------------
# small validation helpers
# ---------------------------------------------------------------------------------------------


def _count(value: Any, name: str, minimum: int = 0) -> int:
    if isinstance(value, (float, np.floating)) and not math.isfinite(float(value)):
        raise DPInputError(f"{name} must be a finite whole number, got {value}")
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise DPInputError(f"{name} must be a whole number (a count), got {value}")
    return check_int(value, name, minimum=minimum)


def _level(level: Any) -> float:
    v = check_finite(level, "level")
    if not 0 < v < 1:
        raise DPInputError(f"level (the confidence level) must be strictly between 0 and 1, e.g. 0.95; got {v:g}")
    return v


def _z(level: float) -> float:
    return float(special.ndtri(0.5 + level / 2.0))


def _mechanism(mechanism: Any, allow_none: bool = False) -> str:
    options = MECHANISMS + (("none",) if allow_none else ())
    m = str(mechanism).lower()
    if m not in options:
        raise DPInputError(f"mechanism must be one of {', '.join(options)}; got {mechanism!r}")
    return m


# ---------------------------------------------------------------------------------------------
# 1. Noisy counts (Claim 3.1; Corollaries 4.3 / 4.4)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CountNoise:
    """The noise added to each count: mechanism, its scale and variance, and the budget."""

    mechanism: str  # "laplace" | "gaussian"
    epsilon: float  # total epsilon for the pair of counts
    delta: float | None  # total delta (Gaussian only)
    scale: float  # Laplace b per count, or Gaussian sigma per count
    variance: float  # per-count noise variance: 2 b^2 (Laplace) or sigma^2 (Gaussian)


def count_noise(epsilon: float, *, mechanism: str = "laplace", delta: float | None = None) -> CountNoise:
    """Per-count noise of the two-count release at total budget (epsilon[, delta]).

    Laplace: b = 2/epsilon per count (epsilon/2 each, sensitivity 1), variance 8/epsilon^2
    (spec §3.1). Gaussian: sigma = analytic Gaussian (Balle & Wang 2018, Theorem A.6) at
    (epsilon/2, delta/2) per count with sensitivity 1; at (1, 1e-4) this is 6.25, the value that
    reproduces the paper's coverage tables (spec §5, INFERRED-SIM).
    Neighbours: replace one record; it may change both counts by one.
    """
    m = _mechanism(mechanism)
    epsilon = check_epsilon(epsilon)
    if m == "laplace":
        if delta is not None:
            check_delta(delta, allow_zero=True)
        b = noise.laplace_scale(epsilon / 2.0, 1.0)
        return CountNoise("laplace", epsilon, None, b, 2.0 * b * b)
    if delta is None:
        raise DPInputError("the Gaussian mechanism needs delta in (0, 1), e.g. 1e-5; got none")
    delta = check_delta(delta)
    sigma = noise.analytic_gaussian_sigma(epsilon / 2.0, delta / 2.0, 1.0)
    return CountNoise("gaussian", epsilon, delta, sigma, sigma * sigma)


def _draw(cn: CountNoise, size: Any, rng: Any) -> np.ndarray:
    if cn.mechanism == "laplace":
        return noise.sample_laplace(cn.scale, size, rng)
    return noise.sample_gaussian(cn.scale, size, rng)


@dataclass(frozen=True)
class NoisedCounts:
    """A private release of two counts. The true counts are not stored.

    ``ratio`` is the paper's post-processed ratio x~ / max(y~, 1) (Claim 3.4); ``ratio_unclipped``
    is x~ / y~ (Claim 3.2; it has no mean).
    """

    x_noisy: float
    y_noisy: float
    mechanism: str
    epsilon: float
    delta: float | None
    noise_scale: float
    noise_variance: float

    def __iter__(self):
        """Unpacks as ``x_noisy, y_noisy = laplace_noised_counts(...)``."""
        return iter((self.x_noisy, self.y_noisy))

    @property
    def y_clipped(self) -> float:
        return max(self.y_noisy, 1.0)

    @property
    def ratio(self) -> float:
        return self.x_noisy / self.y_clipped

    @property
    def ratio_unclipped(self) -> float:
        if self.y_noisy == 0:
            raise DPInputError("the noisy denominator is exactly 0; use .ratio (clipped at 1)")
        return self.x_noisy / self.y_noisy


def _noised_counts(x: Any, y: Any, cn: CountNoise, rng: Any) -> NoisedCounts:
    x = _count(x, "x")
    y = _count(y, "y")
    e = _draw(cn, 2, as_generator(rng) if not isinstance(rng, SecureRandom) else rng)
    return NoisedCounts(float(x + e[0]), float(y + e[1]), cn.mechanism, cn.epsilon, cn.delta, cn.scale, cn.variance)


def laplace_noised_counts(x: Any, y: Any, *, epsilon: float, rng: Any = None) -> NoisedCounts:
    """Algorithm LaplaceNoisedCounts (Claim 3.1): x~ = x + Lap(2/eps), y~ = y + Lap(2/eps).

    epsilon-DP by basic composition of two epsilon/2 Laplace mechanisms, also when one record
    changes both counts by one. Neighbours: replace one record; n_x, n_y public.
    Post-processing with max(y~, 1) is available as ``.ratio``.
    """
    return _noised_counts(x, y, count_noise(epsilon, mechanism="laplace"), rng)


def gaussian_noised_counts(x: Any, y: Any, *, epsilon: float, delta: float, rng: Any = None) -> NoisedCounts:
    """Gaussian variant (Corollary 4.4): each count + N(0, sigma^2), sigma analytic at (eps/2, delta/2).

    (epsilon, delta)-DP by composition; neighbours: replace one record; n_x, n_y public.
    """
    return _noised_counts(x, y, count_noise(epsilon, mechanism="gaussian", delta=delta), rng)


# ---------------------------------------------------------------------------------------------
# 2. Claim F.1: CDF of a ratio of two Laplace variables; Claim 3.2: sample accuracy
# ---------------------------------------------------------------------------------------------


def _scaled_expm1(logscale: np.ndarray | float, z: np.ndarray | float) -> np.ndarray:
    """exp(logscale) * expm1(z) without overflow or cancellation."""
    logscale, z = np.broadcast_arrays(np.asarray(logscale, float), np.asarray(z, float))
    small = np.abs(z) < 1.0
    zs = np.where(small, z, 0.0)
    zl = np.where(small, 0.0, z)
    with np.errstate(over="ignore"):
        out_small = np.exp(logscale) * np.expm1(zs)
        out_large = np.exp(logscale + zl) - np.exp(logscale)
    return np.where(small, out_small, out_large)


def laplace_ratio_cdf(t: Any, a: float, c: float, b: float) -> np.ndarray:
    """F(t) = P[(a + L1)/(c + L2) <= t] with L1, L2 iid Laplace(b) (Claim F.1, spec §3.1).

    Closed form with D = a - c t and g(t) = (t|t| e^{-|D|/(|t| b)} - e^{-|D|/b}) / (2 (t^2 - 1)):
    F = e^{-c/b}/2 - e^{-(a+c)/b}/(2(1+t)) + g(t) when D >= 0, and 1 + ... - g(t) when D < 0.
    The removable singularities at t = 1 and t = -1 are evaluated with expm1/log1p rewrites
    (derived here; a test compares with numerical integration and Monte Carlo), so the function
    is accurate for every real t. Requires a >= 0, c > 0, b > 0.
    """
    a = check_positive(a, "a", allow_zero=True)
    c = check_positive(c, "c")
    b = check_positive(b, "b")
    t = np.asarray(t, dtype=float)
    if not np.all(np.isfinite(t)):
        raise DPInputError("t must be finite")
    out = np.empty_like(t)
    e_c = math.exp(-c / b)
    log_e0 = -(a + c) / b

    pos = t > 0
    if pos.any():
        tp = t[pos]
        d = a - c * tp
        u = np.abs(d) / b
        s = tp - 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            num = _scaled_expm1(-u, 2.0 * np.log1p(s) + u * s / tp)
            g = np.where(s == 0.0, np.exp(-u) * (2.0 + u) / 4.0, num / (2.0 * np.where(s == 0, 1.0, s) * (tp + 1.0)))
        base = 0.5 * e_c - math.exp(log_e0) / (2.0 * (1.0 + tp))
        out[pos] = np.where(d >= 0, base + g, 1.0 + base - g)

    zero = t == 0
    if zero.any():
        out[zero] = 0.5 * math.exp(-a / b) + 0.5 * e_c - 0.5 * math.exp(log_e0)

    neg = t < 0
    if neg.any():
        w = t[neg] + 1.0  # t = w - 1, |t| = 1 - w, here D = a + c|t| > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            q = 2.0 * np.log1p(-w) - a * w / (b * (1.0 - w))
            inner = _scaled_expm1(log_e0, q) + _scaled_expm1(log_e0, c * w / b) + math.exp(log_e0) * w
            limit = math.exp(log_e0) * (-1.0 + (c - a) / b) / 4.0
            s_term = np.where(w == 0.0, limit, inner / (2.0 * np.where(w == 0, 1.0, w) * (2.0 - w)))
        out[neg] = 0.5 * e_c + s_term
    return np.clip(out, 0.0, 1.0)


class SampleAccuracy(float):
    """beta = P(|M(D) - r| >= alpha) as a float, with the parameters that produced it.

    It *is* the float beta (so ``ratio_sample_accuracy(...) < 0.1`` works); ``.beta``,
    ``.accuracy`` (= 1 - beta, what the paper's Figure 1 plots) and the inputs are attributes.
    """

    __slots__ = ("_params",)
    _params: dict[str, Any]

    def __new__(cls, beta: float, **params: Any) -> SampleAccuracy:
        obj = super().__new__(cls, beta)
        obj._params = dict(params)
        return obj

    def __getattr__(self, name: str) -> Any:
        try:
            return object.__getattribute__(self, "_params")[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def beta(self) -> float:
        return float(self)

    @property
    def accuracy(self) -> float:
        return 1.0 - float(self)

    def __repr__(self) -> str:
        return f"SampleAccuracy(beta={float(self):.6g}, {', '.join(f'{k}={v!r}' for k, v in self._params.items())})"

    def __reduce__(self):  # keep pickling (st.cache_data) working
        return (_make_accuracy, (float(self), self._params))


def _make_accuracy(beta: float, params: dict) -> SampleAccuracy:
    return SampleAccuracy(beta, **params)


def _claim_32_closed_form(x: int, y: int, epsilon: float, alpha: float) -> float:
    """Spec §3.1 boxed form, valid for 0 < alpha < r = x/y:
    beta = h(r+alpha) + h(r-alpha) - alpha e^{-eps(x+y)/2} / ((1+r)^2 - alpha^2),
    h(s) = (s^2 e^{-u/s} - e^{-u}) / (2 (s^2 - 1)), u = eps alpha y / 2, h(1) = e^{-u}(2+u)/4."""
    r = x / y
    u = epsilon * alpha * y / 2.0

    def h(s: float) -> float:
        if s == 1.0:
            return math.exp(-u) * (2.0 + u) / 4.0
        sm1 = s - 1.0
        return float(_scaled_expm1(-u, 2.0 * math.log1p(sm1) + u * sm1 / s)) / (2.0 * sm1 * (s + 1.0))

    last = alpha * math.exp(-epsilon * (x + y) / 2.0) / ((1.0 + r) ** 2 - alpha**2)
    return h(r + alpha) + h(r - alpha) - last


def ratio_sample_accuracy(x: Any, y: Any, *, epsilon: float, alpha: float) -> SampleAccuracy:
    """Claim 3.2 / F.2: beta = P(|x~/y~ - x/y| >= alpha) for LaplaceNoisedCounts at epsilon.

    The probability is over the mechanism only (Definition 2.2); x and y are the true counts.
    For 0 < alpha < x/y the closed form of spec §3.1 (boxed); otherwise 1 - F(r+alpha) + F(r-alpha)
    with the Claim F.1 CDF at t = r - alpha <= 0. Reference values (spec): (10, 20, eps=1,
    alpha=0.1) -> 0.44544; (30, 30, 1, 0.1) -> 0.39006; (50, 100, 0.5, 0.1) -> 0.10844.
    Returns a :class:`SampleAccuracy` (a float equal to beta).
    """
    x = _count(x, "x")
    y = _count(y, "y", minimum=1)
    epsilon = check_epsilon(epsilon)
    alpha = check_positive(alpha, "alpha")
    r = x / y
    b = 2.0 / epsilon
    if alpha < r:
        beta = _claim_32_closed_form(x, y, epsilon, alpha)
        method = "closed form (spec §3.1)"
    else:
        f = laplace_ratio_cdf(np.array([r + alpha, r - alpha]), float(x), float(y), b)
        beta = 1.0 - f[0] + f[1]
        method = "Claim F.1 CDF"
    beta = float(min(max(beta, 0.0), 1.0))
    return SampleAccuracy(beta, x=x, y=y, epsilon=epsilon, alpha=alpha, algorithm="LaplaceNoisedCounts", method=method)


# ---------------------------------------------------------------------------------------------
# 3. Claim 3.4: bias of the maxed ratio (exponential integrals), binomial-weighted (Figure 2)
# ---------------------------------------------------------------------------------------------


def _asymptotic(z: np.ndarray, sign: float) -> np.ndarray:
    """sum_{k<30} sign^k k! / z^{k+1} (terms built by recursion: no overflow for any z > 60)."""
    term = 1.0 / z
    total = term.copy()
    for k in range(1, 30):
        term = term * (sign * k / z)
        total = total + term
    return total


def _exp_neg_ei(z: np.ndarray) -> np.ndarray:
    """e^{-z} Ei(z) for z > 0 (asymptotic series beyond z = 60, where Ei overflows)."""
    z = np.asarray(z, float)
    big = z > 60
    out = np.empty_like(z)
    out[~big] = np.exp(-z[~big]) * special.expi(z[~big])
    if big.any():
        out[big] = _asymptotic(z[big], sign=1.0)
    return out


def _exp_e1(z: np.ndarray) -> np.ndarray:
    """e^{z} E1(z) for z > 0 (asymptotic alternating series beyond z = 60)."""
    z = np.asarray(z, float)
    big = z > 60
    out = np.empty_like(z)
    out[~big] = np.exp(z[~big]) * special.exp1(z[~big])
    if big.any():
        out[big] = _asymptotic(z[big], sign=-1.0)
    return out


def expected_inverse_clipped(y: Any, epsilon: float) -> np.ndarray:
    """E[1 / max(y + L, 1)] with L ~ Laplace(2/epsilon), for y >= 0 (Claim 3.4, spec §3.2).

    y >= 1: e^{-(y-1)/b}/2 + (1/(2b)) [e^{-y/b}(Ei(y/b) - Ei(1/b)) + e^{y/b} E1(y/b)];
    0 <= y < 1: 1 - e^{-(1-y)/b}/2 + (1/(2b)) e^{y/b} E1(1/b); b = 2/epsilon.
    Vectorised over y (y need not be an integer).
    """
    epsilon = check_epsilon(epsilon)
    y = np.asarray(y, dtype=float)
    if not np.all(np.isfinite(y)) or np.any(y < 0):
        raise DPInputError("y must be finite and >= 0 (a count)")
    b = 2.0 / epsilon
    with np.errstate(over="ignore", under="ignore"):  # huge y/b: the terms go to 0 or their limits
        return _expected_inverse_clipped(y, b)


def _expected_inverse_clipped(y: np.ndarray, b: float) -> np.ndarray:
    out = np.empty_like(y)
    hi = y >= 1
    if hi.any():
        yh = y[hi]
        zy = yh / b
        # e^{-y/b} Ei(1/b) = e^{-(y-1)/b} [e^{-1/b} Ei(1/b)]: every factor stays finite for any epsilon
        part_ei = _exp_neg_ei(zy) - np.exp(-(yh - 1.0) / b) * _exp_neg_ei(np.array([1.0 / b]))[0]
        out[hi] = 0.5 * np.exp(-(yh - 1.0) / b) + (part_ei + _exp_e1(zy)) / (2.0 * b)
    lo = ~hi
    if lo.any():
        yl = y[lo]
        # e^{y/b} E1(1/b) = e^{-(1-y)/b} [e^{1/b} E1(1/b)]
        out[lo] = (
            1.0 - 0.5 * np.exp(-(1.0 - yl) / b) + np.exp(-(1.0 - yl) / b) * _exp_e1(np.array([1.0 / b]))[0] / (2.0 * b)
        )
    return out


@dataclass(frozen=True)
class RatioBias:
    """Claim 3.4 for fixed counts: E[x~ / max(y~, 1)] and its bias against x / y."""

    x: float
    y: float
    epsilon: float
    expected: float  # exact E[r_bar] (exponential integrals)
    true_ratio: float
    bias: float  # expected - true_ratio
    approx_expected: float  # large-y approximation (x/y)(1 + 8/(eps^2 y^2))
    clip_probability: float  # P[y~ < 1] = e^{-(y-1) eps/2}/2 for y >= 1


def ratio_bias(x: Any, y: Any, *, epsilon: float) -> RatioBias:
    """Claim 3.4: the bias of the maxed ratio x~/max(y~, 1) of LaplaceNoisedCounts (exact).

    E[r_bar] = x E[1/max(y~, 1)] because x~ is independent of y~ and E[L1] = 0. Reference values
    (spec): (10, 5, eps=1) -> 2.79390; (20, 30, 1) -> 0.672973 (approximation 0.67259).
    """
    x = check_positive(x, "x", allow_zero=True)
    y = check_positive(y, "y")
    epsilon = check_epsilon(epsilon)
    inv = float(expected_inverse_clipped(np.array([y]), epsilon)[0])
    expected = x * inv
    true = x / y
    clip_p = 0.5 * math.exp(-(y - 1.0) * epsilon / 2.0) if y >= 1 else 1.0 - 0.5 * math.exp(-(1.0 - y) * epsilon / 2.0)
    return RatioBias(x, y, epsilon, expected, true, expected - true, true * (1 + 8.0 / (epsilon**2 * y**2)), clip_p)


@dataclass(frozen=True)
class BinomialBias:
    """Figure 2: X ~ Bin(n, p_x), Y ~ Bin(n, p_y) independent; means of the ratio estimators."""

    n: int
    p_x: float
    p_y: float
    epsilon: float
    true_ratio: float  # p_x / p_y
    expected_private: float  # E[X~ / max(Y~, 1)] (Claim 3.4 weighted by Bin(n, p_y))
    expected_nonprivate: float  # E[X / max(Y, 1)]

    @property
    def bias_private(self) -> float:
        return self.expected_private - self.true_ratio

    @property
    def bias_nonprivate(self) -> float:
        return self.expected_nonprivate - self.true_ratio


def binomial_ratio_bias(n: Any, p_x: float, p_y: float, *, epsilon: float) -> BinomialBias:
    """Binomial-weighted Claim 3.4 (spec §3.2, DERIVED): E[r~] = n p_x sum_k Bin(k; n, p_y) E[1/max(k+L, 1)].

    The non-private counterpart uses X / max(Y, 1). Both are exact sums over k = 0..n.
    """
    n = _count(n, "n", minimum=1)
    p_x = check_probability(p_x, "p_x")
    p_y = check_probability(p_y, "p_y")
    epsilon = check_epsilon(epsilon)
    from scipy import stats  # here, not at the top: 0.3 s of the command line's start-up

    k = np.arange(n + 1)
    w = stats.binom.pmf(k, n, p_y)
    priv = n * p_x * float(np.sum(w * expected_inverse_clipped(k, epsilon)))
    nonpriv = n * p_x * float(np.sum(w / np.maximum(k, 1)))
    return BinomialBias(n, p_x, p_y, epsilon, p_x / p_y, priv, nonpriv)


# ---------------------------------------------------------------------------------------------
# 4. Confidence intervals for RR (Katz eq. (2)-(3), Theorem 4.2, Theorem 4.5)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RRInterval:
    """A confidence interval for RR = p_x / p_y with the pieces of its standard error."""

    estimate: float
    lower: float
    upper: float
    level: float
    method: str  # "katz" | "normal" (Thm 4.2) | "conservative" (Thm 4.5)
    se: float  # standard error used (log scale for Katz)
    se_sampling: float  # the sampling part alone
    privacy_share: float  # share of the variance that comes from the privacy noise (0 for Thm 4.2)
    noise_variance: tuple[float, float]
    n_x: int
    n_y: int

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def __iter__(self):
        """Unpacks as ``lower, upper = rr_confidence_interval(...)``."""
        return iter((self.lower, self.upper))


def _var_pair(noise_variance: Any) -> tuple[float, float]:
    if isinstance(noise_variance, (tuple, list, np.ndarray)):
        if len(noise_variance) != 2:
            raise DPInputError("noise_variance must be one number or a pair (var_x, var_y)")
        vx, vy = noise_variance
    else:
        vx = vy = noise_variance
    return (
        check_positive(vx, "noise_variance", allow_zero=True),
        check_positive(vy, "noise_variance", allow_zero=True),
    )


def _rr_normal(xn: np.ndarray, yn: np.ndarray, n_x: float, n_y: float, var_x: float, var_y: float):
    """Vectorised Theorem 4.2 / 4.5 pieces: estimate, sampling variance, privacy variance.

    sigma~^2 = RR~^2 ( (1-p~x)/(n_x p~x) + (1-p~y)/(n_y p~y) ), with p~(1-p~) treated as 0 when
    p~ > 1 (spec §4); privacy term RR~^2 (var_x / x~^2 + var_y / y~^2) (Theorem 4.5)."""
    est = (xn / n_x) / (yn / n_y)
    rel_samp = np.maximum(1.0 / xn - 1.0 / n_x, 0.0) + np.maximum(1.0 / yn - 1.0 / n_y, 0.0)
    rel_priv = var_x / xn**2 + var_y / yn**2
    return est, est**2 * rel_samp, est**2 * rel_priv


def _noisy_count_checks(x_noisy: Any, y_noisy: Any, clip: bool) -> tuple[float, float]:
    xn = check_finite(x_noisy, "x_noisy")
    yn = check_finite(y_noisy, "y_noisy")
    for v, name in ((xn, "x_noisy"), (yn, "y_noisy")):
        if v <= 0 and not clip:
            raise DPInputError(
                f"{name} = {v:g} is <= 0: the relative risk and its normal-approximation interval are not "
                "defined for a zero or negative count. Use more data or a larger epsilon, or pass clip=True to "
                "apply the paper's convention max(count, 1) (the interval is then very unreliable)."
            )
    if clip:
        xn, yn = max(xn, 1.0), max(yn, 1.0)
    return xn, yn


def rr_confidence_interval(
    x_noisy: Any,
    y_noisy: Any,
    n_x: Any,
    n_y: Any,
    *,
    level: float = 0.95,
    noise_variance: Any = 0.0,
    clip: bool = False,
) -> RRInterval:
    """Interval for RR = p_x/p_y from (noisy) counts: Theorem 4.2, or Theorem 4.5 when noise_variance > 0.

    RR~ = (x~/n_x)/(y~/n_y), interval RR~ +- z_{(1+level)/2} sigma, with
    sigma^2 = RR~^2 (1/x~ - 1/n_x + 1/y~ - 1/n_y) + RR~^2 (var_x/x~^2 + var_y/y~^2).
    ``noise_variance`` is the per-count noise variance (one number or a pair): 0 gives Theorem 4.2
    (valid asymptotically, ignores the noise); 8/eps^2 gives the conservative Laplace interval,
    sigma^2 of the calibrated Gaussian the conservative Gaussian one (Theorem 4.5).
    Post-processing of the released counts: no extra privacy cost. n_x, n_y are public.
    Worked example (spec §9): (60, 40, 100, 100) -> Thm 4.2 [1.06725, 1.93275]; with
    noise_variance=8 -> [1.00031, 1.99969]. The lower end is not truncated at 0.
    Zero or negative noisy counts raise DPInputError unless ``clip=True`` (then max(count, 1)).
    """
    n_x = _count(n_x, "n_x", minimum=1)
    n_y = _count(n_y, "n_y", minimum=1)
    level = _level(level)
    vx, vy = _var_pair(noise_variance)
    xn, yn = _noisy_count_checks(x_noisy, y_noisy, clip)
    est, v_s, v_p = (float(v) for v in _rr_normal(np.array(xn), np.array(yn), n_x, n_y, vx, vy))
    se = math.sqrt(v_s + v_p)
    z = _z(level)
    total = v_s + v_p
    return RRInterval(
        est,
        est - z * se,
        est + z * se,
        level,
        "conservative" if (vx or vy) else "normal",
        se,
        math.sqrt(v_s),
        (v_p / total) if total > 0 else 0.0,
        (vx, vy),
        n_x,
        n_y,
    )


def katz_interval(x: Any, y: Any, n_x: Any, n_y: Any, *, level: float = 0.95) -> RRInterval:
    """Katz et al. (1978) log interval, equations (2)-(3): RR^ exp(+- z sqrt(1/x - 1/n_x + 1/y - 1/n_y)).

    Classic non-private interval on true counts (x, y >= 1 needed for the log). Worked example
    (spec §9): (60, 40, 100, 100) -> [1.12408, 2.00163].
    """
    n_x = _count(n_x, "n_x", minimum=1)
    n_y = _count(n_y, "n_y", minimum=1)
    xv = check_finite(x, "x")
    yv = check_finite(y, "y")
    if xv <= 0 or yv <= 0:
        raise DPInputError("Katz's interval needs both counts >= 1 (it uses log x and log y)")
    if xv > n_x or yv > n_y:
        raise DPInputError(f"counts cannot exceed their group sizes (x={xv:g} of n_x={n_x}, y={yv:g} of n_y={n_y})")
    level = _level(level)
    est = (xv / n_x) / (yv / n_y)
    se = math.sqrt(max(1 / xv - 1 / n_x + 1 / yv - 1 / n_y, 0.0))
    z = _z(level)
    return RRInterval(
        est, est * math.exp(-z * se), est * math.exp(z * se), level, "katz", se, se, 0.0, (0.0, 0.0), n_x, n_y
    )


@dataclass(frozen=True)
class CoverageResult:
    """Empirical coverage of an RR interval under X ~ Bin(n_x, p_x), Y ~ Bin(n_y, p_y) plus noise."""

    coverage: float
    mean_width: float
    se: float  # Monte Carlo standard error of ``coverage``
    n_sims: int
    p_x: float
    p_y: float
    n_x: int
    n_y: int
    epsilon: float
    mechanism: str
    conservative: bool
    delta: float | None
    level: float
    interval: str
    noise_variance: float
    mean_privacy_share: float  # mean share of the interval variance due to privacy (Section 4.2)


def _binomial_rows(rng: np.random.Generator, n: int, p: np.ndarray, n_sims: int) -> np.ndarray:
    """Row i ~ Bin(n, p[i]) iid; one call per distinct p (numpy's sampler is much faster for a scalar p)."""
    out = np.empty((p.shape[0], n_sims))
    for value in np.unique(p):
        rows = np.nonzero(p == value)[0]
        out[rows] = rng.binomial(n, value, size=(rows.size, n_sims))
    return out


def _simulate_intervals(
    p_x: np.ndarray,
    p_y: np.ndarray,
    n_x: int,
    n_y: int,
    n_sims: int,
    var_noise: float,
    draw: Any,
    conservative: bool,
    z: float,
    interval: str,
    rng: np.random.Generator,
):
    """Vectorised core: rows are (p_x, p_y) cells, columns replications. Noisy counts clipped at 1."""
    m = p_x.shape[0]
    X = _binomial_rows(rng, n_x, p_x, n_sims)
    Y = _binomial_rows(rng, n_y, p_y, n_sims)
    if draw is not None:
        X = X + draw((m, n_sims))
        Y = Y + draw((m, n_sims))
    X = np.maximum(X, 1.0)
    Y = np.maximum(Y, 1.0)
    rr = (p_x / p_y)[:, None]
    if interval == "katz":
        est = (X / n_x) / (Y / n_y)
        se = np.sqrt(np.maximum(1 / X - 1 / n_x + 1 / Y - 1 / n_y, 0.0))
        lo, hi = est * np.exp(-z * se), est * np.exp(z * se)
        share = np.zeros(m)
    else:
        v = var_noise if conservative else 0.0
        est, v_s, v_p = _rr_normal(X, Y, n_x, n_y, v, v)
        se = np.sqrt(v_s + v_p)
        lo, hi = est - z * se, est + z * se
        tot = v_s + v_p
        with np.errstate(invalid="ignore", divide="ignore"):
            share_all = np.where(
                tot > 0,
                var_noise * est**2 * (1 / X**2 + 1 / Y**2) / (v_s + var_noise * est**2 * (1 / X**2 + 1 / Y**2)),
                0.0,
            )
        share = share_all.mean(axis=1) if var_noise > 0 else np.zeros(m)
    cover = (lo <= rr) & (rr <= hi)
    return cover.mean(axis=1), (hi - lo).mean(axis=1), share


def _coverage_setup(epsilon: Any, mechanism: Any, delta: Any, conservative: Any, interval: Any):
    m = _mechanism(mechanism, allow_none=True)
    if interval not in ("normal", "katz"):
        raise DPInputError(f"interval must be 'normal' (Theorems 4.2/4.5) or 'katz'; got {interval!r}")
    if not isinstance(conservative, (bool, np.bool_)):
        raise TypeError("conservative must be True or False")
    if conservative and interval == "katz":
        raise DPInputError("the conservative correction (Theorem 4.5) is defined for the normal interval, not Katz's")
    if m == "none":
        eps = check_epsilon(epsilon)
        return m, eps, None, 0.0, None
    cn = count_noise(epsilon, mechanism=m, delta=delta)
    return m, cn.epsilon, cn.delta, cn.variance, cn


def simulate_rr_coverage(
    p_x: float,
    p_y: float,
    n_x: Any,
    n_y: Any,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    conservative: bool = False,
    delta: float | None = None,
    n_sims: int = 10_000,
    level: float = 0.95,
    rng: Any = None,
    interval: str = "normal",
) -> CoverageResult:
    """Monte Carlo coverage and mean width of an RR interval (Figure 3 / Appendix D.2 design).

    Model (equation (1)): X ~ Bin(n_x, p_x), Y ~ Bin(n_y, p_y) independent; the counts get the
    noise of :func:`count_noise` (mechanism "laplace", "gaussian" with ``delta``, or "none");
    noisy counts are clipped at 1 (spec §4). ``interval="normal"`` is Theorem 4.2, or Theorem 4.5
    with ``conservative=True`` (adds the per-count noise variance); ``interval="katz"`` is the
    classic log interval on the (noisy, clipped) counts. Returns coverage, mean width, and the
    Monte Carlo standard error sqrt(c (1-c) / n_sims).
    """
    p_x = check_probability(p_x, "p_x")
    p_y = check_probability(p_y, "p_y")
    n_x = _count(n_x, "n_x", minimum=1)
    n_y = _count(n_y, "n_y", minimum=1)
    n_sims = _count(n_sims, "n_sims", minimum=10)
    level = _level(level)
    m, eps, dlt, var, cn = _coverage_setup(epsilon, mechanism, delta, conservative, interval)
    gen = as_generator(rng)
    draw = None if cn is None else (lambda size: _draw(cn, size, gen))
    cov, width, share = _simulate_intervals(
        np.array([p_x]), np.array([p_y]), n_x, n_y, n_sims, var, draw, bool(conservative), _z(level), interval, gen
    )
    c = float(cov[0])
    return CoverageResult(
        c,
        float(width[0]),
        math.sqrt(max(c * (1 - c), 1e-12) / n_sims),
        n_sims,
        p_x,
        p_y,
        n_x,
        n_y,
        eps,
        m,
        bool(conservative),
        dlt,
        level,
        interval,
        var,
        float(share[0]),
    )


@dataclass(frozen=True)
class RRSampling:
    """Simulated sampling distributions of the non-private and the private RR (same binomial draws)."""

    nonprivate: np.ndarray  # (X/n_x) / (max(Y, 1)/n_y)
    private: np.ndarray  # (max(X~, 1)/n_x) / (max(Y~, 1)/n_y)
    true_rr: float
    noise_variance: float


def simulate_rr_sampling(
    p_x: float,
    p_y: float,
    n_x: Any,
    n_y: Any,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    delta: float | None = None,
    n_sims: int = 20_000,
    rng: Any = None,
) -> RRSampling:
    """Draw X ~ Bin(n_x, p_x), Y ~ Bin(n_y, p_y) and their noisy versions (:func:`count_noise`), and
    return both RR estimates per draw: how much spread privacy adds on top of sampling."""
    p_x = check_probability(p_x, "p_x")
    p_y = check_probability(p_y, "p_y")
    n_x = _count(n_x, "n_x", minimum=1)
    n_y = _count(n_y, "n_y", minimum=1)
    n_sims = _count(n_sims, "n_sims", minimum=10)
    cn = count_noise(epsilon, mechanism=mechanism, delta=delta)
    gen = as_generator(rng)
    X = gen.binomial(n_x, p_x, n_sims).astype(float)
    Y = gen.binomial(n_y, p_y, n_sims).astype(float)
    nonpriv = (X / n_x) / (np.maximum(Y, 1.0) / n_y)
    Xn = np.maximum(X + _draw(cn, n_sims, gen), 1.0)
    Yn = np.maximum(Y + _draw(cn, n_sims, gen), 1.0)
    return RRSampling(nonpriv, (Xn / n_x) / (Yn / n_y), p_x / p_y, cn.variance)


@dataclass(frozen=True)
class CoverageGrid:
    """Coverage and mean width over a grid: rows p_x, columns p_y (the paper's Appendix D.2 layout)."""

    p_values: tuple[float, ...]
    coverage: np.ndarray
    mean_width: np.ndarray
    se: np.ndarray
    n_sims: int
    n_x: int
    n_y: int
    epsilon: float
    mechanism: str
    conservative: bool
    delta: float | None
    level: float
    interval: str


def coverage_grid(
    p_values: Sequence[float],
    n_x: Any,
    n_y: Any,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    conservative: bool = False,
    delta: float | None = None,
    n_sims: int = 2_000,
    level: float = 0.95,
    rng: Any = None,
    interval: str = "normal",
) -> CoverageGrid:
    """:func:`simulate_rr_coverage` for every (p_x, p_y) pair of ``p_values`` in one vectorised pass."""
    ps = np.array([check_probability(p, "p") for p in p_values], dtype=float)
    if ps.size == 0:
        raise DPInputError("p_values is empty")
    n_x = _count(n_x, "n_x", minimum=1)
    n_y = _count(n_y, "n_y", minimum=1)
    n_sims = _count(n_sims, "n_sims", minimum=10)
    level = _level(level)
    m, eps, dlt, var, cn = _coverage_setup(epsilon, mechanism, delta, conservative, interval)
    gen = as_generator(rng)
    draw = None if cn is None else (lambda size: _draw(cn, size, gen))
    px, py = np.meshgrid(ps, ps, indexing="ij")
    cov, width, _ = _simulate_intervals(
        px.ravel(), py.ravel(), n_x, n_y, n_sims, var, draw, bool(conservative), _z(level), interval, gen
    )
    shape = (ps.size, ps.size)
    cov = cov.reshape(shape)
    se = np.sqrt(np.maximum(cov * (1 - cov), 1e-12) / n_sims)
    return CoverageGrid(
        tuple(ps.tolist()),
        cov,
        width.reshape(shape),
        se,
        n_sims,
        n_x,
        n_y,
        eps,
        m,
        bool(conservative),
        dlt,
        level,
        interval,
    )


# ---------------------------------------------------------------------------------------------
# 5. Rivals: NaiveRelativeRisk, NoisedLog (Appendix B)
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
    n_x = _count(n_x, "n_x", minimum=1)
    n_y = _count(n_y, "n_y", minimum=1)
    if both_counts:
        return max(n_y * (n_x + 1) / (2.0 * n_x), n_y / n_x) if n_y >= 2 else n_y / n_x
    return max(n_y / 2.0, n_y / n_x) if n_y >= 2 else n_y / n_x


def _check_ratio_counts(x: Any, y: Any, *, x_min: int = 0) -> tuple[int, int]:
    x = _count(x, "x", minimum=x_min)
    y = _count(y, "y")
    if y < 1:
        raise DPInputError("y must be >= 1: the ratio x/y is undefined for y = 0 (the paper assumes y > 0)")
    return x, y


def naive_relative_risk(x: Any, y: Any, n_x: Any, n_y: Any, *, epsilon: float, rng: Any = None) -> RatioRelease:
    """NaiveRelativeRisk (Appendix B): RR^ + Lap(Delta/eps), Delta = :func:`naive_sensitivity`.

    epsilon-DP (Claim B.1) for neighbours that change one count by one; accuracy
    beta = exp(-alpha eps / Delta) (Claim B.2), which gets worse as n_y grows.
    """
    x, y = _check_ratio_counts(x, y)
    n_x = _count(n_x, "n_x", minimum=1)
    n_y = _count(n_y, "n_y", minimum=1)
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
        r = r * _count(n_y, "n_y", minimum=1) / _count(n_x, "n_x", minimum=1)
    b = 2.0 / epsilon
    L = noise.sample_laplace(b, 1, as_generator(rng))[0]
    return RatioRelease(
        float(factor * r * math.exp(L)), "NoisedLog" + (" (debiased)" if debias else ""), epsilon, None, b
    )


# ---------------------------------------------------------------------------------------------
# 6. Local / smooth sensitivity of x/y (Appendix C, Claim C.6) and PTR (Algorithm 1)
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
    x = _count(x, "x")
    y = _count(y, "y", minimum=1)
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

    (alpha, beta) from ``dpcore.noise.smooth_noise_calibration(epsilon, gamma, mode=calibration)``.
    Default "paper" (alpha = eps/(4 gamma), beta = eps/gamma): "tight" gives less noise but its
    certification currently takes minutes per epsilon. gamma = 4 by default (finite variance).

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
    from .noise import smooth as smooth_noise

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
# 7. Sample accuracy of every algorithm (Figure 1 / Appendix E.1)
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
    n = _count(n, "n", minimum=1)
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


# ---------------------------------------------------------------------------------------------
# 8. Odds ratio from a noisy 2x2 table (delta method)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoisyTable:
    """Noisy 2x2 table (a, b; c, d) = (exposed with / without outcome; unexposed with / without)."""

    cells: tuple[float, float, float, float]
    mechanism: str
    epsilon: float
    delta: float | None
    noise_scale: float
    noise_variance: float


def _table_noise(epsilon: float, mechanism: str, delta: float | None) -> tuple[float, float]:
    """Per-cell (scale, variance): Laplace(2/eps) (L1 sensitivity 2), or analytic Gaussian with L2 sensitivity sqrt 2."""
    m = _mechanism(mechanism)
    epsilon = check_epsilon(epsilon)
    if delta is not None:
        check_delta(delta, allow_zero=True)
    if m == "laplace":
        b = noise.laplace_scale(epsilon, 2.0)
        return b, 2 * b * b
    if delta is None:
        raise DPInputError("the Gaussian mechanism needs delta in (0, 1), e.g. 1e-5; got none")
    s = noise.analytic_gaussian_sigma(epsilon, check_delta(delta), math.sqrt(2.0))
    return s, s * s


def noisy_two_by_two(
    a: Any,
    b: Any,
    c: Any,
    d: Any,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    delta: float | None = None,
    rng: Any = None,
) -> NoisyTable:
    """Release the four cells with noise. Neighbours: replace one record (total n public); the record
    leaves one cell and enters another, so the table has L1 sensitivity 2 and L2 sensitivity sqrt 2:
    Laplace(2/eps) per cell is eps-DP; Gaussian sigma = analytic(eps, delta, sqrt 2) is (eps, delta)-DP."""
    cells = [_count(v, name) for v, name in zip((a, b, c, d), "abcd", strict=True)]
    scale, var = _table_noise(epsilon, mechanism, delta)
    gen = as_generator(rng)
    e = noise.sample_laplace(scale, 4, gen) if mechanism == "laplace" else noise.sample_gaussian(scale, 4, gen)
    noisy = np.array(cells) + e
    return NoisyTable(
        (float(noisy[0]), float(noisy[1]), float(noisy[2]), float(noisy[3])),
        str(mechanism).lower(),
        check_epsilon(epsilon),
        None if delta is None else float(delta),
        scale,
        var,
    )


@dataclass(frozen=True)
class ORInterval:
    """Delta-method interval for the odds ratio ad/(bc): exp(ln OR +- z se)."""

    estimate: float
    lower: float
    upper: float
    level: float
    se_log: float
    se_log_sampling: float
    privacy_share: float
    noise_variance: float


def or_confidence_interval(
    a: Any, b: Any, c: Any, d: Any, *, level: float = 0.95, noise_variance: float = 0.0, clip: bool = False
) -> ORInterval:
    """Woolf / delta-method interval for OR = (a d)/(b c) on (noisy) cells, adding the noise variance.

    Var(ln cell~) ~= Var(cell)/cell^2 + var_noise/cell^2 ~= 1/cell + var_noise/cell^2, so
    se^2 = sum over cells of (1/n_i + var_noise/n_i^2) (Woolf 1955 plus the Theorem 4.5 idea).
    noise_variance = 0 gives Woolf's classic interval. Cells <= 0 raise DPInputError unless clip=True.
    """
    level = _level(level)
    var = check_positive(noise_variance, "noise_variance", allow_zero=True)
    vals = []
    for v, name in zip((a, b, c, d), "abcd", strict=True):
        v = check_finite(v, name)
        if v <= 0 and not clip:
            raise DPInputError(
                f"cell {name} = {v:g} is <= 0: the odds ratio needs positive cells; use more data, a "
                "larger epsilon, or clip=True (max(cell, 1))"
            )
        vals.append(max(v, 1.0) if clip else v)
    arr = np.array(vals)
    samp = float(np.sum(1.0 / arr))
    priv = float(np.sum(var / arr**2))
    se = math.sqrt(samp + priv)
    est = arr[0] * arr[3] / (arr[1] * arr[2])
    z = _z(level)
    return ORInterval(
        float(est),
        float(est * math.exp(-z * se)),
        float(est * math.exp(z * se)),
        level,
        se,
        math.sqrt(samp),
        priv / (samp + priv),
        var,
    )


def simulate_or_coverage(
    p_x: float,
    p_y: float,
    n_x: Any,
    n_y: Any,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    delta: float | None = None,
    conservative: bool = True,
    n_sims: int = 10_000,
    level: float = 0.95,
    rng: Any = None,
) -> CoverageResult:
    """Coverage of :func:`or_confidence_interval` with a = X ~ Bin(n_x, p_x), b = n_x - X, c = Y, d = n_y - Y,
    each cell noised as in :func:`noisy_two_by_two` and clipped at 1. OR = p_x (1-p_y) / ((1-p_x) p_y)."""
    p_x = check_probability(p_x, "p_x")
    p_y = check_probability(p_y, "p_y")
    n_x = _count(n_x, "n_x", minimum=1)
    n_y = _count(n_y, "n_y", minimum=1)
    n_sims = _count(n_sims, "n_sims", minimum=10)
    level = _level(level)
    m = _mechanism(mechanism, allow_none=True)
    if delta is not None:
        delta = check_delta(delta, allow_zero=True)
    if not isinstance(conservative, (bool, np.bool_)):
        raise TypeError("conservative must be True or False")
    gen = as_generator(rng)
    X = gen.binomial(n_x, p_x, n_sims).astype(float)
    Y = gen.binomial(n_y, p_y, n_sims).astype(float)
    cells = np.stack([X, n_x - X, Y, n_y - Y])
    var = 0.0
    if m != "none":
        scale, var = _table_noise(epsilon, m, delta)
        e = (
            noise.sample_laplace(scale, cells.shape, gen)
            if m == "laplace"
            else noise.sample_gaussian(scale, cells.shape, gen)
        )
        cells = cells + e
    cells = np.maximum(cells, 1.0)
    v = var if conservative else 0.0
    se = np.sqrt(np.sum(1.0 / cells + v / cells**2, axis=0))
    log_or = np.log(cells[0]) + np.log(cells[3]) - np.log(cells[1]) - np.log(cells[2])
    z = _z(level)
    true = math.log(p_x * (1 - p_y) / ((1 - p_x) * p_y))
    cover = np.abs(log_or - true) <= z * se
    c = float(cover.mean())
    width = float(np.mean(np.exp(log_or + z * se) - np.exp(log_or - z * se)))
    return CoverageResult(
        c,
        width,
        math.sqrt(max(c * (1 - c), 1e-12) / n_sims),
        n_sims,
        p_x,
        p_y,
        n_x,
        n_y,
        check_epsilon(epsilon),
        m,
        bool(conservative),
        delta,
        level,
        "odds ratio",
        var,
        0.0,
    )
