"""Accuracy and bias of the ratio of LaplaceNoisedCounts: the CDF of a ratio of two Laplace variables (Claim F.1),
the sample accuracy (Claim 3.2) and the bias of the maxed ratio (Claim 3.4), binomial-weighted (Figure 2)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..lazy import special
from ..validation import DPInputError, check_epsilon, check_positive, check_probability
from .counts import check_count

# ---------------------------------------------------------------------------------------------
# Claim F.1: CDF of a ratio of two Laplace variables; Claim 3.2: sample accuracy
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
    x = check_count(x, "x")
    y = check_count(y, "y", minimum=1)
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
# Claim 3.4: bias of the maxed ratio (exponential integrals), binomial-weighted (Figure 2)
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
    n = check_count(n, "n", minimum=1)
    p_x = check_probability(p_x, "p_x")
    p_y = check_probability(p_y, "p_y")
    epsilon = check_epsilon(epsilon)
    from scipy import stats  # here, not at the top: its import would lengthen every command-line start-up

    k = np.arange(n + 1)
    w = stats.binom.pmf(k, n, p_y)
    priv = n * p_x * float(np.sum(w * expected_inverse_clipped(k, epsilon)))
    nonpriv = n * p_x * float(np.sum(w / np.maximum(k, 1)))
    return BinomialBias(n, p_x, p_y, epsilon, p_x / p_y, priv, nonpriv)
