"""Light-tailed noises for smooth-sensitivity releases, their calibrations and privacy statements.

Every smooth-sensitivity release in dpcore has the form (Nissim, Raskhodnikova & Smith 2007,
"NRS", Definition 2.1 / eq. (9) of the Gini paper)::

    release = f(X) + (S(X) / alpha) * Z,

with ``S`` a beta-smooth upper bound on the local sensitivity of ``f`` (S >= LS_f and
S(X') <= e^beta S(X) for neighbours). For neighbours X, X', in units of X's noise scale
S(X)/alpha, the output distribution is shifted by at most alpha and dilated by a factor
e^lambda with |lambda| <= beta. Everything below is about the noise ``Z`` and the constants
(alpha, beta); the statistic (Gini, percentile, ratio) supplies ``S``.

The registry :data:`SMOOTH_NOISES` (re-exported as ``dpcore.noise.smooth.SMOOTH_NOISES``) names the
choices; ``dpcore.gini.release_gini(..., noise=name)`` and the percentile and ratio rivals accept
these names:

``"cauchy"``
    The Gini paper's generalized Cauchy, density ∝ 1/(1+|z|^gamma): **pure epsilon-DP**
    (:func:`dpcore.noise.smooth_noise_calibration`, certified privacy loss). Heavy tails: no
    variance for gamma <= 3.
``"laplace"``
    NRS's Laplace variant, density e^{-|z|}/2: **(epsilon, delta)-DP**. Paper constants
    (NRS Lemma 2.9 as restated in the ratio paper's Lemma C.5 and ``dpcore.ratio``):
    alpha = epsilon/2, beta = epsilon/(2 ln(2/delta)). Certified (not just cited) by
    :func:`laplace_smooth_delta`, an exact closed-form upper bound on the hockey-stick divergence
    (see there); "tight" calibration takes the largest alpha whose certified delta is <= delta.
``"laplace_lognormal"``
    Bun & Steinke (2019), "Average-case averages: private algorithms for smooth sensitivity and
    mean estimation", Section 3.1: Z = X e^{sigma Y}, X ~ Laplace(1), Y ~ N(0, 1) ("LLN").
    With a t-smooth bound and scale S/s the release is (eps_c^2/2)-CDP, i.e. **rho-zCDP** with
    rho = eps_c^2 / 2, where eps_c = t/sigma + e^{3 sigma^2/2} s (their Theorem for LLN; the
    constants agree with the reference implementation of their Section 3.1.1 in Google's
    ``dp_multiq/csmooth.py``: s = e^{-3 sigma^2/2}(eps_c - t/sigma), sigma the root of
    5 (eps_c/t) sigma^3 - 5 sigma^2 - 1 = 0). In dpcore's notation alpha = s and beta = t.
    Variance 2 e^{2 sigma^2}. Certified (not just cited): :func:`lln_renyi_bound` proves the bound
    for every order a > 1 from three lemmas (log p is e^{3 sigma^2/2}-Lipschitz; a dilation is a
    Gaussian shift of log-scale; the zCDP chain rule), each checked against brute force, and the
    quadrature Renyi divergences (:func:`lln_renyi_divergence`) never exceed it; the calibration
    checks that :func:`lln_certified_rho` is <= the rho it records. See ``docs/light_tails.md``.

Comparing privacy: a release's target is given as (epsilon, delta). Pure noise ("cauchy")
spends epsilon (it is (epsilon, 0)-DP, a fortiori (epsilon, delta)). "laplace" spends
(epsilon, delta). "laplace_lognormal" takes the largest rho whose zCDP -> (epsilon, delta)
conversion (Canonne, Kamath & Steinke 2020, ``dpcore.budget.zcdp_to_approx_dp``) gives epsilon
at that delta; its cost is recorded as zCDP (rho), so it composes as zCDP in the ledger.
Pass ``rho=`` to set rho directly instead. The default delta is :data:`DEFAULT_DELTA` = 1e-6.

Neighbouring relation: whatever the statistic's S is smooth for (default: replace one record,
n public). All samplers take ``rng`` (Generator, int seed, None, or dpcore's SecureRandom).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .. import budget
from ..validation import (
    DPInputError,
    as_generator,
    check_delta,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
)
from .certificates import smooth_noise_calibration
from .samplers import GeneralizedCauchy

__all__ = [
    "SMOOTH_NOISES",
    "DEFAULT_DELTA",
    "SmoothCalibration",
    "smooth_calibration",
    "check_noise",
    "noise_distribution",
    "LaplaceNoise",
    "LaplaceLogNormal",
    "laplace_smooth_delta",
    "laplace_smooth_hockey_stick",
    "laplace_smooth_calibration",
    "gaussian_smooth_delta",
    "gaussian_smooth_hockey_stick",
    "gaussian_smooth_calibration",
    "lln_calibration",
    "lln_epsilon_cdp",
    "lln_optimal_sigma",
    "lln_renyi_divergence",
    "lln_renyi_bound",
    "lln_certified_rho",
    "lln_log_density_lipschitz",
    "zcdp_chain_rho",
    "rho_for_approx_dp",
    "sample_smooth_noise",
    "noise_of_release",
]

#: name -> one-line description (the names outside checks use).
SMOOTH_NOISES: dict[str, str] = {
    "cauchy": "generalized Cauchy 1/(1+|z|^gamma) (the Gini paper's; pure epsilon-DP, heavy tails)",
    "laplace": "Laplace e^-|z| with NRS smooth sensitivity ((epsilon, delta)-DP, exponential tails)",
    "laplace_lognormal": "Laplace log-normal of Bun & Steinke 2019 (rho-zCDP, light tails)",
}

#: delta used when a light-tailed noise is asked for without one.
DEFAULT_DELTA = 1e-6


def check_noise(noise: Any) -> str:
    """The registry name, or a DPInputError listing the choices."""
    if not isinstance(noise, str) or noise not in SMOOTH_NOISES:
        raise DPInputError(f"noise must be one of {sorted(SMOOTH_NOISES)}, got {noise!r}")
    return noise


# ---------------------------------------------------------------------------------------------
# Laplace (NRS): certified hockey-stick divergence
# ---------------------------------------------------------------------------------------------


def _tail_part(lam: float, eps2: float) -> float:
    """sup_c P(|Z| > c) - e^eps2 P(|e^-lam Z| > c)... written for Q = e^{-|lam|} Z (narrower), Z ~ Lap(1).

    E = sup_c e^{-c} - e^{eps2} e^{-c k}, k = e^{|lam|} > 1; the maximiser is
    c* = (eps2 + |lam|)/(k - 1) and the value e^{-c*} (1 - 1/k).
    """
    a = abs(lam)
    if a == 0.0:
        return 0.0
    c = (eps2 + a) / math.expm1(a)
    return math.exp(-c) * (-math.expm1(-a))


def _centre_part(lam: float, eps2: float) -> float:
    """sup_c P(|Z| < c) - e^eps2 P(|Q| < c) for Q = e^{|lam|} Z (wider), Z ~ Lap(1).

    P(|Z| < c) = 1 - e^{-c}, P(|Q| < c) = 1 - e^{-c/k}; stationary point c* = (a - eps2)/(1 - 1/k)
    (a = |lam|, k = e^a); zero when a <= eps2.
    """
    a = abs(lam)
    if a <= eps2:
        return 0.0
    k = math.exp(a)
    c = (a - eps2) / (-math.expm1(-a))
    return max(0.0, -math.expm1(-c) - math.exp(eps2) * (-math.expm1(-c / k)))


def laplace_smooth_delta(epsilon: float, alpha: float, beta: float) -> float:
    """Certified delta of f(X) + (S(X)/alpha) Z, Z ~ Laplace(1), S beta-smooth, at a given epsilon.

    Upper bound on sup over neighbours of the hockey-stick divergence E_eps (both directions),
    i.e. the release is (epsilon, delta)-DP with delta = the returned value. Derivation (exact
    apart from one composition step): in units of X's scale, the neighbour's output is
    Q = e^lam Z + d with |d| <= alpha, |lam| <= beta. Go through R = Z + d:

    * P = Z vs R: a Laplace shift by |d| <= alpha, pure alpha-DP both ways.
    * R vs Q: equal to Z vs e^lam Z (translate by d). The likelihood ratio is monotone in |u|, so
      by Neyman-Pearson the worst sets are tails {|u| > c} or centres {|u| < c}; Q_lam of a tail set
      increases with lam and of a centre set decreases, so the worst lam over [-beta, beta] is
      -beta for tails and +beta for centres; both sups over c are in closed form
      (``_tail_part``, ``_centre_part``). The reverse direction is the same function (scale
      invariance maps e^lam Z vs Z to Z vs e^-lam Z).
    * Composition: P(S) <= e^alpha R(S) <= e^eps Q(S) + e^alpha delta_2 and
      Q(S) <= e^(eps-alpha) R(S) + delta_2 <= e^eps P(S) + delta_2, with
      delta_2 = max(tail(beta), centre(beta)) at eps_2 = eps - alpha.

    Returns 1.0 (no guarantee) when alpha >= epsilon. Brute-force check:
    :func:`laplace_smooth_hockey_stick` computes the exact joint divergence for given (d, lam)
    and the tests show it never exceeds this bound.
    """
    epsilon = check_epsilon(epsilon)
    alpha = check_positive(alpha, "alpha")
    beta = check_positive(beta, "beta", allow_zero=True)
    if beta > 25.0 or epsilon > 700:
        raise DPInputError("beta must be <= 25 and epsilon <= 700 (no meaningful privacy beyond)")
    eps2 = epsilon - alpha
    if eps2 <= 0:
        return 1.0
    d2 = max(_tail_part(beta, eps2), _centre_part(beta, eps2))
    return min(1.0, math.exp(alpha) * d2)


def _laplace_interval_mass(a: float, b: float, loc: float, scale: float) -> float:
    """P(a < loc + scale W < b) for W ~ Laplace(1), computed without cancellation in the tails."""
    if b <= a:
        return 0.0
    za, zb = (a - loc) / scale, (b - loc) / scale

    def sf(z: float) -> float:  # P(W > z)
        return 0.5 * math.exp(-z) if z >= 0 else 1.0 - 0.5 * math.exp(z)

    def cdf(z: float) -> float:
        return 0.5 * math.exp(z) if z <= 0 else 1.0 - 0.5 * math.exp(-z)

    if za >= 0:
        return sf(za) - sf(zb) if math.isfinite(zb) else sf(za)
    return (cdf(zb) if math.isfinite(zb) else 1.0) - (cdf(za) if math.isfinite(za) else 0.0)


def laplace_smooth_hockey_stick(epsilon: float, shift: float, log_dilation: float) -> float:
    """Exact max(E_eps(P || Q), E_eps(Q || P)) for P = Laplace(1), Q = e^lam P + d (brute-force oracle).

    The log-likelihood ratio ln p(u) - ln q(u) = -|u| + lam + e^{-lam} |u - d| is piecewise linear
    with breakpoints 0 and d; on each piece the set where it exceeds eps is an interval found in
    closed form, and E = sum over those intervals of P(I) - e^eps Q(I) (Laplace CDFs). Exact up to
    rounding; no composition step, no worst case over (d, lam).
    """
    epsilon = check_epsilon(epsilon)
    if epsilon > 700:
        raise DPInputError(f"epsilon must be <= 700 here (e^epsilon overflows), got {epsilon:g}")
    d = check_finite(shift, "shift")
    lam = check_finite(log_dilation, "log_dilation")
    if abs(lam) > 25.0 or abs(d) > 1e6:
        raise DPInputError(
            "|log_dilation| must be <= 25 and |shift| <= 1e6 (beyond that there is no privacy to measure)"
        )
    k = math.exp(-lam)
    lo, hi = min(0.0, d), max(0.0, d)
    pieces = [(-math.inf, lo), (lo, hi), (hi, math.inf)]

    def divergence(sign: float) -> float:
        # sign=+1: E(P||Q), region sign*L(u) > eps; sign=-1: E(Q||P)
        total = 0.0
        for a, b in pieces:
            if b <= a:
                continue
            mid = 0.5 * (a + b) if math.isfinite(a) and math.isfinite(b) else (b - 1.0 if math.isfinite(b) else a + 1.0)
            s_u = 1.0 if mid >= 0 else -1.0
            s_ud = 1.0 if mid >= d else -1.0
            # L(u) = c0 + c1 u on this piece
            c1 = -s_u + k * s_ud
            c0 = lam - k * s_ud * d
            c0, c1 = sign * c0, sign * c1
            # {u in (a, b): c0 + c1 u > eps}
            if c1 == 0.0:
                if c0 <= epsilon:
                    continue
                ia, ib = a, b
            elif c1 > 0:
                ia, ib = max(a, (epsilon - c0) / c1), b
            else:
                ia, ib = a, min(b, (epsilon - c0) / c1)
            if ib <= ia:
                continue
            p_mass = _laplace_interval_mass(ia, ib, 0.0, 1.0)
            q_mass = _laplace_interval_mass(ia, ib, d, math.exp(lam))
            if sign > 0:
                total += p_mass - math.exp(epsilon) * q_mass
            else:
                total += q_mass - math.exp(epsilon) * p_mass
        return max(total, 0.0)

    return max(divergence(1.0), divergence(-1.0))


def _law_parameter(value: float | None, noise: str, name: str) -> float:
    """A parameter of the noise law that a calibration of this ``noise`` always carries (gamma, sigma or rho)."""
    if value is None:
        raise DPInputError(f"a {noise!r} calibration needs its {name}")
    return value


@dataclass(frozen=True)
class SmoothCalibration:
    """Constants for one smooth-sensitivity release and the privacy statement they certify.

    ``alpha`` (Bun & Steinke's s) divides the smooth sensitivity; ``beta`` (their t) is its
    smoothness. ``cost`` is a :class:`dpcore.budget.PrivacyCost` (pure, approx or zCDP) that the
    ledger and planner compose. ``certificate``: the certified privacy loss (cauchy), the
    certified delta (laplace), or eps_c of the CDP theorem (laplace_lognormal). ``sigma`` is the
    LLN shape parameter, ``gamma`` the Cauchy exponent (None where they do not apply).
    """

    noise: str
    alpha: float
    beta: float
    epsilon: float
    delta: float
    mode: str
    cost: budget.PrivacyCost
    certificate: float
    gamma: float | None = None
    sigma: float | None = None
    rho: float | None = None

    def statement(self) -> str:
        """One sentence: what is guaranteed and why."""
        if self.noise == "cauchy":
            return (
                f"pure ε = {self.epsilon:.4g}-DP (generalized Cauchy γ = {self.gamma:g}; certified loss "
                f"{self.certificate:.4g})"
            )
        if self.noise in ("laplace", "gaussian"):
            law = "Laplace" if self.noise == "laplace" else "Gaussian"
            return (
                f"(ε, δ) = ({self.epsilon:.4g}, {self.delta:.2g})-DP ({law}, NRS smooth sensitivity; "
                f"certified δ = {self.certificate:.3g})"
            )
        rho = _law_parameter(self.rho, self.noise, "rho")
        eps_at = budget.zcdp_to_approx_dp(rho, self.delta) if self.delta > 0 else float("nan")
        return (
            f"ρ = {self.rho:.4g}-zCDP (Laplace log-normal, Bun & Steinke 2019; certified), hence "
            f"(ε, δ) = ({eps_at:.4g}, {self.delta:.2g})-DP"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "noise": self.noise,
            "alpha": self.alpha,
            "beta": self.beta,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "mode": self.mode,
            "cost": self.cost.to_dict(),
            "certificate": self.certificate,
            "gamma": self.gamma,
            "sigma": self.sigma,
            "rho": self.rho,
        }


def laplace_smooth_calibration(
    epsilon: float, delta: float = DEFAULT_DELTA, mode: str = "tight", beta: float | None = None
) -> SmoothCalibration:
    """(alpha, beta) for Laplace smooth-sensitivity noise with a certified (epsilon, delta).

    mode="paper": NRS's alpha = eps/2, beta = eps/(2 ln(2/delta)); its certified delta
    (:func:`laplace_smooth_delta`) is checked and must be <= delta.
    mode="tight": the same beta (unless ``beta`` is given: choose it without the data) and the
    largest alpha whose certified delta is <= delta (bisection; the bound increases with alpha).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if mode not in ("tight", "paper"):
        raise DPInputError(f"mode must be 'tight' or 'paper', got {mode!r}")
    paper_beta = epsilon / (2.0 * math.log(2.0 / delta))
    b = paper_beta if beta is None else check_positive(beta, "beta")
    if mode == "paper":
        if beta is not None and not math.isclose(b, paper_beta):
            raise DPInputError("mode='paper' fixes beta = epsilon / (2 ln(2/delta)); use mode='tight' for another beta")
        alpha = epsilon / 2.0
        cert = laplace_smooth_delta(epsilon, alpha, b)
        if cert > delta:  # pragma: no cover - the tests show this never happens
            raise DPInputError(f"NRS constants give certified delta {cert:.3g} > {delta:g}")
    else:
        alpha, cert = _laplace_tight(epsilon, delta, b)
    return SmoothCalibration("laplace", alpha, b, epsilon, delta, mode, budget.approx(epsilon, delta), cert)


def _largest_certified_alpha(
    certified_delta: Callable[[float, float, float], float],
    epsilon: float,
    delta: float,
    beta: float,
    *,
    upper: float,
    smallest: float,
    iterations: int,
    absolute_tolerance: float = 0.0,
    relative_tolerance: float = 0.0,
) -> tuple[float, float]:
    """The largest alpha in (0, upper] with ``certified_delta(epsilon, alpha, beta) <= delta``, and that delta.

    Bisection on [0, upper] (the certified delta increases with alpha): ``lo`` always stays on the
    certified side (delta(lo) <= delta, or lo = 0), ``hi`` on the refused side, and ``lo`` is returned,
    so the alpha given back is certified (its delta is recomputed and returned with it). ``smallest``
    is checked first and returned when the bisection never leaves 0; if even ``smallest`` misses delta
    the beta is refused. Stops after ``iterations`` halvings or once
    hi - lo <= max(absolute_tolerance, relative_tolerance * hi).
    """
    if certified_delta(epsilon, smallest, beta) > delta:
        raise DPInputError(
            f"beta = {beta:g} is too large for (epsilon, delta) = ({epsilon:g}, {delta:g}): "
            "even tiny alpha misses delta; choose a smaller beta"
        )
    lo, hi = 0.0, upper
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        if certified_delta(epsilon, mid, beta) <= delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= max(absolute_tolerance, relative_tolerance * hi):
            break
    alpha = lo if lo > 0 else smallest
    return alpha, certified_delta(epsilon, alpha, beta)


@lru_cache(maxsize=512)
def _laplace_tight(epsilon: float, delta: float, beta: float) -> tuple[float, float]:
    return _largest_certified_alpha(
        laplace_smooth_delta,
        epsilon,
        delta,
        beta,
        upper=epsilon,
        smallest=epsilon * 1e-9,
        iterations=100,
        absolute_tolerance=1e-10 * epsilon,
    )


# ---------------------------------------------------------------------------------------------
# Gaussian (NRS's Gaussian variant): certified hockey-stick divergence. Library only: not in
# SMOOTH_NOISES yet (the pages' noise dictionaries would need an entry first).
# ---------------------------------------------------------------------------------------------


def _gaussian_dilation_delta(beta: float, eps2: float) -> float:
    """sup over |lam| <= beta and events of P(A) - e^eps2 Q(A), P = N(0,1), Q = N(0, e^{2 lam}) (either order).

    The likelihood ratio p/q(u) = e^lam exp(-u^2 (1 - e^{-2 lam}) / 2) is monotone in |u|, so by
    Neyman-Pearson the worst events are centres {|u| < c} (lam > 0) or tails {|u| > c} (lam < 0). Q of a
    centre decreases with lam and Q of a tail increases, so the worst lam is +beta for centres and -beta
    for tails; the sups over c are at the stationary points (closed form):
    centre: c^2 = 2 (beta - eps2) / (1 - e^{-2 beta}) (zero when beta <= eps2: then p/q <= e^beta <= e^eps2);
    tail:   c^2 = 2 (eps2 + beta) / (e^{2 beta} - 1).
    The reverse order (Q vs P) is the same function: e^lam Z vs Z is Z vs e^-lam Z after scaling.
    """
    from scipy import special

    if beta == 0.0:
        return 0.0
    c = math.sqrt(2.0 * (eps2 + beta) / math.expm1(2.0 * beta))
    tail = 2.0 * (special.ndtr(-c) - math.exp(eps2) * special.ndtr(-c * math.exp(beta)))
    centre = 0.0
    if beta > eps2:
        c = math.sqrt(2.0 * (beta - eps2) / -math.expm1(-2.0 * beta))
        centre = (2.0 * special.ndtr(c) - 1.0) - math.exp(eps2) * (2.0 * special.ndtr(c * math.exp(-beta)) - 1.0)
    return max(0.0, float(tail), float(centre))


def gaussian_smooth_delta(epsilon: float, alpha: float, beta: float) -> float:
    """Certified delta of f(X) + (S(X)/alpha) Z, Z ~ N(0, 1), S beta-smooth, at a given epsilon (both directions).

    In units of X's scale the neighbour's output is Q = e^lam Z + d, |d| <= alpha, |lam| <= beta
    (NRS 2007, Definition 2.1; replace one record). Chain P = Z -> R = Z + d -> Q, split epsilon = e1 + e2:

    * P vs R: a Gaussian shift by |d| <= alpha, exactly (e1, delta_A) with the Balle & Wang (2018,
      Theorem 8) delta_A = Phi(alpha/2 - e1/alpha) - e^e1 Phi(-alpha/2 - e1/alpha) (largest at |d| = alpha;
      :func:`dpcore.noise.analytic_gaussian_delta`), the same in both directions.
    * R vs Q: Z vs e^lam Z, exactly (e2, delta_B) with delta_B = ``_gaussian_dilation_delta(beta, e2)``.
    * Chain: P(S) <= e^e1 R(S) + delta_A <= e^eps Q(S) + delta_A + e^e1 delta_B, and
      Q(S) <= e^eps P(S) + delta_B + e^e2 delta_A.

    Returns the minimum over a grid of splits of the larger of the two (every split is valid), or 1.0.
    Brute force: :func:`gaussian_smooth_hockey_stick` (exact divergence for given (d, lam)).
    """
    from .samplers import analytic_gaussian_delta

    epsilon = check_epsilon(epsilon)
    alpha = check_positive(alpha, "alpha")
    beta = check_positive(beta, "beta", allow_zero=True)
    if beta > 25.0 or epsilon > 700:
        raise DPInputError("beta must be <= 25 and epsilon <= 700 (no meaningful privacy beyond)")
    best = 1.0
    for frac in np.linspace(0.02, 0.98, 97):
        e1, e2 = frac * epsilon, (1.0 - frac) * epsilon
        delta_a = analytic_gaussian_delta(1.0, e1, alpha)
        delta_b = _gaussian_dilation_delta(beta, e2)
        best = min(best, max(delta_a + math.exp(e1) * delta_b, delta_b + math.exp(e2) * delta_a))
    return min(1.0, best)


def gaussian_smooth_hockey_stick(epsilon: float, shift: float, log_dilation: float) -> float:
    """Exact max(E_eps(P || Q), E_eps(Q || P)) for P = N(0, 1), Q = N(d, e^{2 lam}) (brute-force oracle).

    ln p(u) - ln q(u) = lam - u^2/2 + (u - d)^2 e^{-2 lam} / 2 is quadratic in u; the set where it exceeds
    eps (or falls below -eps) is an interval or the complement of one, found from the roots, and E is its
    P-mass minus e^eps times its Q-mass (normal CDFs). No composition step, no worst case over (d, lam).
    """
    from scipy import special

    epsilon = check_epsilon(epsilon)
    if epsilon > 700:
        raise DPInputError(f"epsilon must be <= 700 here (e^epsilon overflows), got {epsilon:g}")
    d = check_finite(shift, "shift")
    lam = check_finite(log_dilation, "log_dilation")
    if abs(lam) > 25.0 or abs(d) > 1e6:
        raise DPInputError("|log_dilation| must be <= 25 and |shift| <= 1e6")
    k = math.exp(-2.0 * lam)
    sd_q = math.exp(lam)

    def mass(lo: float, hi: float, loc: float, scale: float) -> float:
        if hi <= lo:
            return 0.0
        a, b = (lo - loc) / scale, (hi - loc) / scale
        if a > 0:  # upper tail: difference of survival functions keeps precision
            return float(special.ndtr(-a) - special.ndtr(-b))
        return float(special.ndtr(b) - special.ndtr(a))

    def region(sign: float) -> list[tuple[float, float]]:
        # sign * (A u^2 + B u + C) > eps with A = (k - 1)/2, B = -k d, C = lam + k d^2 / 2
        a2, b1, c0 = sign * (k - 1.0) / 2.0, sign * (-k * d), sign * (lam + k * d * d / 2.0) - epsilon
        if abs(a2) < 1e-15:
            if b1 == 0.0:
                return [(-math.inf, math.inf)] if c0 > 0 else []
            root = -c0 / b1
            return [(root, math.inf)] if b1 > 0 else [(-math.inf, root)]
        disc = b1 * b1 - 4.0 * a2 * c0
        if disc <= 0:
            return [(-math.inf, math.inf)] if a2 > 0 else []
        r1, r2 = sorted(((-b1 - math.sqrt(disc)) / (2 * a2), (-b1 + math.sqrt(disc)) / (2 * a2)))
        return [(-math.inf, r1), (r2, math.inf)] if a2 > 0 else [(r1, r2)]

    forward = sum(mass(lo, hi, 0.0, 1.0) - math.exp(epsilon) * mass(lo, hi, d, sd_q) for lo, hi in region(1.0))
    backward = sum(mass(lo, hi, d, sd_q) - math.exp(epsilon) * mass(lo, hi, 0.0, 1.0) for lo, hi in region(-1.0))
    return max(0.0, forward, backward)


def gaussian_smooth_calibration(
    epsilon: float, delta: float = DEFAULT_DELTA, *, beta: float | None = None
) -> SmoothCalibration:
    """(alpha, beta) for Gaussian smooth-sensitivity noise with a certified (epsilon, delta) ("tight" only).

    beta: given (choose it without the data), or the public default epsilon / (4 (1 + ln(2/delta))).
    alpha: the largest with :func:`gaussian_smooth_delta` <= delta (bisection; the bound increases with
    alpha). Not in :data:`SMOOTH_NOISES` (the pages do not offer it yet); Z ~ N(0, 1).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    b = epsilon / (4.0 * (1.0 + math.log(2.0 / delta))) if beta is None else check_positive(beta, "beta")
    alpha, cert = _gaussian_tight(epsilon, delta, b)
    return SmoothCalibration("gaussian", alpha, b, epsilon, delta, "tight", budget.approx(epsilon, delta), cert)


@lru_cache(maxsize=256)
def _gaussian_tight(epsilon: float, delta: float, beta: float) -> tuple[float, float]:
    return _largest_certified_alpha(
        gaussian_smooth_delta,
        epsilon,
        delta,
        beta,
        upper=4.0 * epsilon + 4.0,
        smallest=epsilon * 1e-6,
        iterations=60,
        relative_tolerance=1e-9,
    )


class LaplaceNoise:
    """Laplace(1): density e^{-|z|}/2 (the standardised noise Z of the "laplace" choice)."""

    name = "laplace"
    variance = 2.0

    def __repr__(self) -> str:
        return "LaplaceNoise()"

    def logpdf(self, z) -> np.ndarray:
        return -np.abs(np.asarray(z, dtype=float)) - math.log(2.0)

    def pdf(self, z) -> np.ndarray:
        return np.exp(self.logpdf(z))

    def sf(self, z) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        return np.where(z >= 0, 0.5 * np.exp(-np.abs(z)), 1.0 - 0.5 * np.exp(-np.abs(z)))

    def cdf(self, z) -> np.ndarray:
        return self.sf(-np.asarray(z, dtype=float))

    def abs_quantile(self, p) -> np.ndarray:
        """The p-quantile of |Z| (|Z| ~ Exp(1))."""
        p = _check_probabilities(p)
        return -np.log1p(-p)

    def ppf(self, p) -> np.ndarray:
        p = _check_probabilities(p)
        q = np.minimum(p, 1.0 - p)
        mag = -np.log(2.0 * q)
        return np.where(p >= 0.5, mag, -mag)

    def rvs(self, size, rng=None) -> np.ndarray:
        return as_generator(rng).laplace(0.0, 1.0, size=_size(size))


# ---------------------------------------------------------------------------------------------
# Laplace log-normal (Bun & Steinke 2019)
# ---------------------------------------------------------------------------------------------


def lln_epsilon_cdp(alpha: float, beta: float, sigma: float) -> float:
    """eps_c = t/sigma + e^{3 sigma^2 / 2} s (Bun & Steinke 2019, Section 3.1; s = alpha, t = beta).

    The release f(X) + (S_t(X)/s) Z, Z ~ LLN(sigma), is (eps_c^2/2)-CDP (= rho-zCDP with
    rho = eps_c^2/2).
    """
    alpha = check_positive(alpha, "alpha")
    beta = check_positive(beta, "beta", allow_zero=True)
    sigma = check_positive(sigma, "sigma")
    if sigma > 5:
        raise DPInputError(f"sigma must be <= 5 (the calibration never needs more), got {sigma:g}")
    return beta / sigma + math.exp(1.5 * sigma * sigma) * alpha


def lln_optimal_sigma(epsilon_cdp: float, beta: float) -> float:
    """sigma minimising the LLN noise variance for given eps_c and t (Bun & Steinke 2019, Sec. 3.1.1).

    The unique root > t/eps_c of 5 (eps_c/t) sigma^3 - 5 sigma^2 - 1 = 0 (bisection).
    """
    eps = check_positive(epsilon_cdp, "epsilon_cdp")
    t = check_positive(beta, "beta")

    def f(s: float) -> float:
        return 5.0 * (eps / t) * s**3 - 5.0 * s * s - 1.0

    lo, hi = t / eps, max(2.0 * t / eps, 0.5)
    while f(hi) < 0:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@lru_cache(maxsize=512)
def _rho_for_approx(epsilon: float, delta: float) -> float:
    # bracket: Bun-Steinke's rho + 2 sqrt(rho ln(1/delta)) <= epsilon gives a valid lower end (CKS is never
    # larger); rho = epsilon is above the answer (the conversion is >= rho). Bisection in log rho.
    log1d = math.log(1.0 / delta)
    lo = (math.sqrt(log1d + epsilon) - math.sqrt(log1d)) ** 2
    hi = epsilon
    if budget.zcdp_to_approx_dp(hi, delta) <= epsilon:  # pragma: no cover - the conversion exceeds rho
        return hi
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if budget.zcdp_to_approx_dp(mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-7 * hi:
            break
    return lo


def rho_for_approx_dp(epsilon: float, delta: float) -> float:
    """The largest rho whose zCDP guarantee implies (epsilon, delta)-DP (CKS 2020 conversion)."""
    return _rho_for_approx(check_epsilon(epsilon), check_delta(delta))


#: default t for LLN, as a fraction of eps_c (a public rule, chosen without data: smaller t gives less noise
#: when S_t does not grow, but the exact Gini smooth sensitivity gets slow below beta ~ 0.02; 0.1 costs
#: ~20% more noise than 0.05 and is ~15x faster at epsilon = 1)
LLN_BETA_FRACTION = 0.1


def lln_calibration(
    epsilon: float | None = None, delta: float = DEFAULT_DELTA, *, rho: float | None = None, beta: float | None = None
) -> SmoothCalibration:
    """(s, t, sigma) for the Laplace log-normal at rho-zCDP (Bun & Steinke 2019, Section 3.1).

    rho: given, or the largest rho implying (epsilon, delta)-DP. eps_c = sqrt(2 rho);
    t = ``beta`` or ``LLN_BETA_FRACTION * eps_c`` (choose it without the data); sigma from the
    cubic of Section 3.1.1; s = e^{-3 sigma^2/2} (eps_c - t/sigma) (so eps_c is met exactly).
    """
    delta = check_delta(delta)
    if rho is None:
        if epsilon is None:
            raise DPInputError("give epsilon (with delta) or rho")
        epsilon = check_epsilon(epsilon)
        rho_v = rho_for_approx_dp(epsilon, delta)
    else:
        rho_v = check_positive(rho, "rho")
        epsilon = budget.zcdp_to_approx_dp(rho_v, delta)
    if rho_v <= 0:
        raise DPInputError("epsilon is too small for a positive rho at this delta")
    eps_c = math.sqrt(2.0 * rho_v)
    t = LLN_BETA_FRACTION * eps_c if beta is None else check_positive(beta, "beta")
    sigma = lln_optimal_sigma(eps_c, t)
    s = math.exp(-1.5 * sigma * sigma) * (eps_c - t / sigma)
    if s <= 0:
        raise DPInputError(f"beta = {t:g} is too large for rho = {rho_v:g}")
    # certified, not just computed: the proven bound (lln_certified_rho) must not exceed the rho recorded;
    # rounding can put it 1 ulp above, so s is shrunk by a relative 1e-12 (never more than a few steps)
    for _ in range(8):
        if lln_certified_rho(s, t, sigma) <= rho_v:
            break
        s *= 1.0 - 1e-12
    else:  # pragma: no cover - the tests show the loop ends at once
        raise DPInputError("could not certify the Laplace log-normal constants")
    return SmoothCalibration(
        "laplace_lognormal",
        s,
        t,
        float(epsilon),
        delta,
        "paper",
        budget.zcdp(rho_v),
        lln_epsilon_cdp(s, t, sigma),
        sigma=sigma,
        rho=rho_v,
    )


class LaplaceLogNormal:
    """Z = X e^{sigma Y}, X ~ Laplace(1), Y ~ N(0, 1) (Bun & Steinke 2019, "LLN(sigma)").

    Density p(z) = E_Y[ e^{-sigma Y} exp(-|z| e^{-sigma Y}) ] / 2, computed by the trapezoidal rule
    around the integrand's mode in y (see ``_log_expect``; exponentially accurate for this smooth,
    log-concave integrand; the tests compare it with a wide uniform grid, check that it integrates
    to 1 and that the sampler matches the CDF).
    P(|Z| > r) = E_Y[exp(-r e^{-sigma Y})]. Var Z = 2 e^{2 sigma^2}; every moment is finite.
    """

    name = "laplace_lognormal"

    def __init__(self, sigma: float):
        self.sigma = check_positive(sigma, "sigma")
        if self.sigma > 5:
            raise DPInputError(f"sigma must be <= 5 (the calibration never needs more), got {self.sigma:g}")
        self.variance = 2.0 * math.exp(2.0 * self.sigma**2)

    def __repr__(self) -> str:
        return f"LaplaceLogNormal(sigma={self.sigma:g})"

    def _log_expect_reference(self, z: np.ndarray, density: bool) -> np.ndarray:
        """Slow reference: one wide uniform y-grid for every point (tests compare with it)."""
        az = np.abs(np.asarray(z, dtype=float))
        flat = az.ravel()
        amax = float(flat.max()) if flat.size else 0.0
        top = 12.0 + max(0.0, math.log(max(amax, 1e-300)) / self.sigma if amax > 1 else 0.0)
        h = min(0.02, 0.1 * self.sigma)
        y = np.arange(-12.0, top + h, h)
        log_phi = -0.5 * y * y - 0.5 * math.log(2 * math.pi) + math.log(h)
        sy = self.sigma * y
        out = np.empty(flat.size)
        for start in range(0, flat.size, 512):
            chunk = flat[start : start + 512]
            expo = -chunk[:, None] * np.exp(-sy)[None, :] + log_phi[None, :]
            if density:
                expo = expo - sy[None, :]
            m = expo.max(axis=1)
            out[start : start + 512] = m + np.log(np.exp(expo - m[:, None]).sum(axis=1))
        return out.reshape(az.shape)

    def _log_expect(self, z: np.ndarray, density: bool) -> np.ndarray:
        """log E_Y[e^{-c sigma Y} exp(-|z| e^{-sigma Y})] (c = 1 for the density, 0 for the tail), Y ~ N(0, 1).

        The integrand in y is log-concave with curvature >= 1 and a mode y* in closed form (Lambert W:
        sigma (y* + c sigma) = W(sigma^2 |z| e^{c sigma^2})); with the local width
        w = (1 + sigma (y* + c sigma))^(-1/2) <= 1, the substitution y = y* + w sinh(t), t in [-T, T],
        sinh(T) = 12 / w, covers y* +- 12 in absolute units (where the integrand has dropped by e^-72 at
        least) with a fine step near the mode. Trapezoidal rule in t (161 points per z).
        """
        from scipy.special import lambertw

        az = np.abs(np.asarray(z, dtype=float))
        flat = az.ravel()
        sig = self.sigma
        c = 1.0 if density else 0.0
        with np.errstate(over="ignore", divide="ignore"):
            log_arg = 2.0 * math.log(sig) + np.log(flat) + c * sig * sig  # log(sigma^2 |z| e^{c sigma^2})
            arg = np.exp(np.minimum(log_arg, 700.0))
        wv = np.real(lambertw(arg))
        big = log_arg > 700.0  # W(e^L) ~ L - log L for huge L (never reached for |z| < e^{600})
        wv = np.where(big, log_arg - np.log(np.maximum(log_arg, 1.0)), wv)
        wv = np.where(flat == 0, 0.0, wv)
        ystar = wv / sig - c * sig
        width = 1.0 / np.sqrt(1.0 + sig * (ystar + c * sig))
        tmax = np.arcsinh(12.0 / width)
        t = np.linspace(-1.0, 1.0, 161)
        out = np.empty(flat.size)
        for start in range(0, flat.size, 4096):
            sl = slice(start, start + 4096)
            tt = tmax[sl, None] * t[None, :]
            y = ystar[sl, None] + width[sl, None] * np.sinh(tt)
            log_jac = np.log(width[sl, None] * np.cosh(tt) * (tmax[sl, None] * (t[1] - t[0])))
            expo = (
                -0.5 * y * y - 0.5 * math.log(2 * math.pi) - c * sig * y - flat[sl, None] * np.exp(-sig * y) + log_jac
            )
            m = expo.max(axis=1)
            out[sl] = m + np.log(np.exp(expo - m[:, None]).sum(axis=1))
        return out.reshape(az.shape)

    def exact_logpdf(self, z) -> np.ndarray:
        """log p(z) by the y-quadrature directly (what the privacy check uses)."""
        return self._log_expect(z, density=True) - math.log(2.0)

    def logpdf(self, z) -> np.ndarray:
        return self.exact_logpdf(z)

    def pdf(self, z) -> np.ndarray:
        return np.exp(self.logpdf(z))

    def abs_sf(self, r) -> np.ndarray:
        """P(|Z| > r) for r >= 0."""
        return np.minimum(1.0, np.exp(self._log_expect(r, density=False)))

    def sf(self, z) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        half = 0.5 * self.abs_sf(np.abs(z))
        return np.where(z >= 0, half, 1.0 - half)

    def cdf(self, z) -> np.ndarray:
        return self.sf(-np.asarray(z, dtype=float))

    def abs_quantile(self, p) -> np.ndarray:
        """The p-quantile of |Z| (bisection in log r on the exact tail)."""
        if np.ndim(p) == 0:
            return np.asarray(_lln_abs_quantile(self.sigma, float(_check_probabilities(p))))
        return self._abs_quantile(p)

    def _abs_quantile(self, p) -> np.ndarray:
        p = _check_probabilities(p)
        flat = p.ravel()
        lo = np.full(flat.shape, -40.0)
        hi = np.full(flat.shape, 40.0 * max(1.0, self.sigma**2))
        for _ in range(70):
            mid = 0.5 * (lo + hi)
            tail = self.abs_sf(np.exp(mid))
            above = tail > 1.0 - flat  # r too small
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
        out = np.exp(0.5 * (lo + hi))
        out = np.where(flat <= 0, 0.0, np.where(flat >= 1, np.inf, out))
        return out.reshape(p.shape)

    def ppf(self, p) -> np.ndarray:
        p = _check_probabilities(p)
        mag = self.abs_quantile(np.abs(2.0 * p - 1.0))
        return np.where(p >= 0.5, mag, -mag)

    def rvs(self, size, rng=None) -> np.ndarray:
        gen = as_generator(rng)
        size = _size(size)
        return gen.laplace(0.0, 1.0, size=size) * np.exp(self.sigma * gen.standard_normal(size=size))


@lru_cache(maxsize=4096)
def _lln_abs_quantile(sigma: float, p: float) -> float:
    return float(LaplaceLogNormal(sigma)._abs_quantile(np.array([p]))[0])


def lln_renyi_divergence(
    order: Any, sigma: float, shift: float, log_dilation: float, *, n_grid: int = 6001
) -> np.ndarray:
    """max(D_a(P || Q), D_a(Q || P)) for P = LLN(sigma), Q = e^lam P + d, by quadrature (brute force).

    Quadrature on z = sinh(w) over a wide w-range, log densities from :meth:`LaplaceLogNormal.logpdf`;
    returned for every order in ``order``. Not a bound: it is the brute-force side that the certified
    :func:`lln_renyi_bound` must never be beaten by (tests/test_smooth_noise_certificates.py).
    """
    orders = np.atleast_1d(np.asarray(order, dtype=float))
    if np.any(orders <= 1):
        raise DPInputError("Renyi orders must be > 1")
    dist = LaplaceLogNormal(sigma)
    d = check_finite(shift, "shift")
    lam = check_finite(log_dilation, "log_dilation")
    n_grid = check_int(n_grid, "n_grid", minimum=101)
    out = np.empty(orders.size)
    grids: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for i, a in enumerate(orders):
        # window in u = ln|z|: the integrand p^a q^(1-a) is largest near u = (a - 1)|lam| (a Gaussian shift in
        # ln-scale, width sigma), so the window grows with the order and the dilation (capped at |z| = e^60);
        # each order gets its own window so that low orders keep a fine grid
        top_u = min(60.0, max(14.0 * dist.sigma + 12.0, (a - 1.0) * abs(lam) + 12.0 * dist.sigma + 12.0))
        key = min(60.0, 5.0 * math.ceil(top_u / 5.0))  # windows shared between nearby orders
        if key not in grids:
            w = np.linspace(-math.asinh(math.exp(key)), math.asinh(math.exp(key)), n_grid)
            z = np.sinh(w)
            log_jac = np.log(np.cosh(w) * (w[1] - w[0]))
            grids[key] = (log_jac, dist.exact_logpdf(z), dist.exact_logpdf((z - d) * math.exp(-lam)) - lam)
        log_jac, log_p, log_q = grids[key]
        vals = []
        for lp, lq in ((log_p, log_q), (log_q, log_p)):
            # integral of p (p/q)^(a-1) = 1 + integral of p expm1((a-1)(ln p - ln q)): the "1" is exact
            # (p integrates to 1), which removes the quadrature error of the normalisation at orders near 1
            t = (a - 1.0) * (lp - lq)
            if float(t.max()) < 30.0:
                excess = float(np.sum(np.exp(lp + log_jac) * np.expm1(t)))
                vals.append(math.log1p(max(excess, -1.0 + 1e-300)) / (a - 1.0))
            else:
                expo = lp + t + log_jac
                m = float(expo.max())
                vals.append((m + math.log(float(np.exp(expo - m).sum()))) / (a - 1.0))
        out[i] = max(vals)
    return out


# ---------------------------------------------------------------------------------------------
# Laplace log-normal: the certified Renyi bound
# ---------------------------------------------------------------------------------------------


def lln_log_density_lipschitz(sigma: float) -> float:
    """L = e^{3 sigma^2 / 2}: the Lipschitz constant of log p for the LLN(sigma) density p (tight, attained at z -> 0).

    Proof. p(z) = E[W exp(-|z| W)] / 2 with W = e^{-sigma Y}, Y ~ N(0, 1). For z > 0 (differentiating under
    E is allowed: the z-derivative is dominated by W^2, and E W^2 < inf),
    (log p)'(z) = -E_z[W], where E_z is the expectation under the tilted law with density proportional
    to W exp(-z W). Its z-derivative is -Var_z(W) <= 0, so |(log p)'| is largest as z -> 0+, where it is
    E[W^2] / E[W] = e^{2 sigma^2} / e^{sigma^2 / 2} = e^{3 sigma^2 / 2}. p is even and continuous, so
    log p is L-Lipschitz on R. Consequence: p(z) / p(z - d) <= e^{L |d|}, i.e. a shift by d is a pure
    (L |d|)-DP pair. Brute-force side: the tests difference the numerical log density on a fine grid and
    find slopes up to 0.9999 L and never above L.
    """
    sigma = check_positive(sigma, "sigma")
    if sigma > 5:
        raise DPInputError(f"sigma must be <= 5 (the calibration never needs more), got {sigma:g}")
    return math.exp(1.5 * sigma * sigma)


def zcdp_chain_rho(rho_first: float, rho_second: float) -> float:
    """(sqrt(rho_1) + sqrt(rho_2))^2: Renyi bounds linear in the order compose along a chain P -> R -> Q.

    If D_b(P || R) <= b rho_1 and D_b(R || Q) <= b rho_2 for every order b > 1, then
    D_a(P || Q) <= a (sqrt(rho_1) + sqrt(rho_2))^2 for every a > 1. Proof (the argument of Bun & Steinke
    2016, Proposition 27, group privacy): write p^a q^{1-a} = r (p/r)^a (r/q)^{a-1} and apply Hoelder
    under r with exponents k = 1 + u and k/(k-1) = 1 + 1/u:
    (a-1) D_a(P||Q) <= ((ka-1)/k) D_{ka}(P||R) + (a-1) D_{1+(a-1)(1+1/u)}(R||Q), hence
    D_a(P||Q) <= a rho_1 + u a^2 rho_1/(a-1) + a rho_2 + (a-1) rho_2 / u; at u = (a-1) sqrt(rho_2/rho_1)/a
    this is a (sqrt(rho_1) + sqrt(rho_2))^2. Exact for Gaussians (N(0,1), N(m1,1), N(m1+m2,1)), which the
    tests use as the witness that the constant cannot be lowered.
    """
    r1 = check_positive(rho_first, "rho_first", allow_zero=True)
    r2 = check_positive(rho_second, "rho_second", allow_zero=True)
    return (math.sqrt(r1) + math.sqrt(r2)) ** 2


def lln_renyi_bound(order: Any, sigma: float, shift: float, log_dilation: float) -> np.ndarray:
    """Certified upper bound on max(D_a(P || Q), D_a(Q || P)), P = LLN(sigma), Q = e^lam P + d, every order a > 1.

    Returns a (|lam|/sigma + e^{3 sigma^2/2} |d|)^2 / 2 for each order in ``order`` (Bun & Steinke 2019,
    Section 3.1: the Laplace log-normal with smooth sensitivity is (eps^2/2)-CDP, eps = t/sigma +
    e^{3 sigma^2/2} s). We do not rely on the citation; the bound is the chain P -> R = P + d -> Q with
    three proven steps, each checked against brute force in tests/test_smooth_noise_certificates.py:

    1. P vs R = P + d, both directions: log p is L-Lipschitz with L = e^{3 sigma^2/2}
       (:func:`lln_log_density_lipschitz`), so the pair is pure (L|d|)-DP and therefore
       D_b <= b (L|d|)^2 / 2 for every b (Bun & Steinke 2016, Proposition 3: pure eps -> eps^2/2-zCDP).
    2. R vs Q = e^lam P + d, both directions: equal to P vs e^lam P (translate by d). With P = X e^{sigma Y},
       e^lam P = X e^{sigma (Y + lam/sigma)}: the image of (X, Y + lam/sigma) under (x, y) -> x e^{sigma y},
       so by data processing D_b <= D_b(N(0,1) || N(lam/sigma, 1)) = b lam^2 / (2 sigma^2) (symmetric).
    3. Chain: :func:`zcdp_chain_rho` with rho_1 = (L|d|)^2/2, rho_2 = lam^2/(2 sigma^2) gives
       D_a <= a (sqrt(rho_1) + sqrt(rho_2))^2 = a (|lam|/sigma + L|d|)^2 / 2, in both directions
       (the reverse chain Q -> R -> P uses the same two symmetric steps).

    Smooth sensitivity (NRS 2007, Definition 2.1): for neighbours X, X' (replace one record) and release
    f(X) + (S(X)/s) Z, in units of X's scale the neighbour's output is e^lam Z + d with |d| <= s (S >= LS)
    and |lam| <= t (S is t-smooth); normalising at X' instead covers the other direction. Hence the release is
    rho-zCDP with rho = (t/sigma + e^{3 sigma^2/2} s)^2 / 2 (:func:`lln_certified_rho`).
    """
    orders = np.atleast_1d(np.asarray(order, dtype=float))
    if orders.size == 0 or not np.all(np.isfinite(orders)) or np.any(orders <= 1):
        raise DPInputError("Renyi orders must be finite and > 1")
    lipschitz = lln_log_density_lipschitz(sigma)
    d = abs(check_finite(shift, "shift"))
    lam = abs(check_finite(log_dilation, "log_dilation"))
    return orders * 0.5 * (lam / float(sigma) + lipschitz * d) ** 2


def lln_certified_rho(alpha: float, beta: float, sigma: float) -> float:
    """Certified rho of f(X) + (S_beta(X)/alpha) Z, Z ~ LLN(sigma): sup over |d| <= alpha, |lam| <= beta of
    :func:`lln_renyi_bound` divided by the order, i.e. (beta/sigma + e^{3 sigma^2/2} alpha)^2 / 2."""
    alpha = check_positive(alpha, "alpha")
    beta = check_positive(beta, "beta", allow_zero=True)
    return float(lln_renyi_bound(2.0, sigma, alpha, beta)[0]) / 2.0


# ---------------------------------------------------------------------------------------------
# One entry point
# ---------------------------------------------------------------------------------------------


def smooth_calibration(
    noise: str,
    epsilon: float,
    *,
    delta: float | None = None,
    gamma: float = 2.0,
    mode: str = "tight",
    beta: float | None = None,
    rho: float | None = None,
) -> SmoothCalibration:
    """Calibrate ``noise`` (a :data:`SMOOTH_NOISES` name) to the target (epsilon, delta).

    "cauchy": pure epsilon (``dpcore.noise.smooth_noise_calibration``; delta ignored, recorded 0).
    "laplace": (epsilon, delta) by :func:`laplace_smooth_calibration` (mode "tight" or "paper").
    "laplace_lognormal": rho-zCDP by :func:`lln_calibration` (rho implying (epsilon, delta) unless
    ``rho`` is given; ``mode`` is ignored: the theorem's constants are used as they are).
    """
    noise = check_noise(noise)
    if delta is not None:
        delta = check_delta(delta)  # checked even where it is not used (cauchy): a bad value is a mistake
    if noise == "cauchy":
        cal = smooth_noise_calibration(epsilon, gamma, mode=mode, beta=beta)
        return SmoothCalibration(
            "cauchy",
            cal.alpha,
            cal.beta,
            cal.epsilon,
            0.0,
            cal.mode,
            budget.pure(cal.epsilon),
            cal.certified_loss,
            gamma=float(gamma),
        )
    d = DEFAULT_DELTA if delta is None else check_delta(delta)
    if noise == "laplace":
        return laplace_smooth_calibration(epsilon, d, mode=mode, beta=beta)
    if mode not in ("tight", "paper"):
        raise DPInputError(f"mode must be 'tight' or 'paper', got {mode!r}")
    return lln_calibration(epsilon, d, rho=rho, beta=beta)


def noise_distribution(calibration: SmoothCalibration) -> Any:
    """The standardised noise law Z of a calibration (``.rvs``, ``.pdf``, ``.logpdf``, ``.cdf``, ``.abs_quantile``)."""
    _check_type(calibration, SmoothCalibration, "calibration")
    if calibration.noise == "cauchy":
        return _CauchyAdapter(_law_parameter(calibration.gamma, calibration.noise, "gamma"))
    if calibration.noise == "laplace":
        return LaplaceNoise()
    return LaplaceLogNormal(_law_parameter(calibration.sigma, calibration.noise, "sigma"))


class _CauchyAdapter(GeneralizedCauchy):
    """GeneralizedCauchy with ``abs_quantile`` (the shared interface of this module)."""

    name = "cauchy"

    def abs_quantile(self, p) -> np.ndarray:
        p = _check_probabilities(p)
        return self.ppf(0.5 + 0.5 * p)


def sample_smooth_noise(calibration: SmoothCalibration, size, rng=None) -> np.ndarray:
    """Vectorised draws of the standardised noise Z of ``calibration``."""
    _check_type(calibration, SmoothCalibration, "calibration")
    size = _size(size)
    return noise_distribution(calibration).rvs(size, rng)


def noise_of_release(release: Any) -> Any:
    """The standardised noise law of a ``dpcore.gini.GiniRelease`` (any of the registry's noises)."""
    _check_release(release)
    name = check_noise(getattr(release, "noise", "cauchy"))
    if name == "cauchy":
        return _CauchyAdapter(release.gamma)
    if name == "laplace":
        return LaplaceNoise()
    return LaplaceLogNormal(release.sigma)


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _check_type(obj: Any, cls: type, name: str) -> None:
    if not isinstance(obj, cls):
        raise TypeError(f"{name} must be a dpcore.noise.smooth.{cls.__name__}, got {type(obj).__name__}")


def _check_release(release: Any) -> None:
    needed = ("value", "noise_scale", "gamma", "noise")
    if not all(hasattr(release, a) for a in needed):
        raise TypeError(
            f"release must be a dpcore.gini.GiniRelease (with {', '.join(needed)}), got {type(release).__name__}"
        )


def _size(size) -> int | tuple[int, ...]:
    if isinstance(size, tuple):
        return tuple(check_int(s, "size", minimum=0) for s in size)
    return check_int(size, "size", minimum=0)


def _check_probabilities(p) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise DPInputError("probabilities must be in [0, 1]")
    return p
