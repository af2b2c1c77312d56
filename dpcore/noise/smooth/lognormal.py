"""The Laplace log-normal noise of Bun & Steinke (2019): its calibration to rho-zCDP, its law, and the certified
Renyi bound that proves the calibration for every order."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from ... import budget
from ...errors import DPInputError
from ...validation import as_generator, check_delta, check_epsilon, check_finite, check_int, check_positive
from .common import DEFAULT_DELTA, SmoothCalibration, check_probabilities, check_size


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
#: when S_t does not grow; 0.1 costs ~20% more noise than 0.05, and about the same time in the exact Gini smooth
#: sensitivity at epsilon = 1: docs/benchmarks.md, "Timings behind choices in the code")
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
            return np.asarray(_lln_abs_quantile(self.sigma, float(check_probabilities(p))))
        return self.abs_quantile_uncached(p)

    def abs_quantile_uncached(self, p) -> np.ndarray:
        """:meth:`abs_quantile` for any shape of ``p``, computed again each time (the scalar path keeps its results)."""
        p = check_probabilities(p)
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
        p = check_probabilities(p)
        mag = self.abs_quantile(np.abs(2.0 * p - 1.0))
        return np.where(p >= 0.5, mag, -mag)

    def rvs(self, size, rng=None) -> np.ndarray:
        gen = as_generator(rng)
        size = check_size(size)
        return gen.laplace(0.0, 1.0, size=size) * np.exp(self.sigma * gen.standard_normal(size=size))


@lru_cache(maxsize=4096)
def _lln_abs_quantile(sigma: float, p: float) -> float:
    return float(LaplaceLogNormal(sigma).abs_quantile_uncached(np.array([p]))[0])


@lru_cache(maxsize=64)
def _lln_grid(sigma: float, key: float, n_grid: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(z, log of the quadrature weight, log p(z)) of :func:`lln_renyi_divergence`'s window ``key`` (read only).

    The side P = LLN(sigma) does not depend on the neighbour (shift, dilation): a grid of neighbours (the
    certificate's brute-force check) computes its densities once instead of once per neighbour, half of the
    quadrature's cost."""
    w = np.linspace(-math.asinh(math.exp(key)), math.asinh(math.exp(key)), n_grid)
    z = np.sinh(w)
    log_jac = np.log(np.cosh(w) * (w[1] - w[0]))
    log_p = LaplaceLogNormal(sigma).exact_logpdf(z)
    for array in (z, log_jac, log_p):
        array.setflags(write=False)
    return z, log_jac, log_p


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
            z, log_jac, log_p = _lln_grid(dist.sigma, key, n_grid)
            grids[key] = (log_jac, log_p, dist.exact_logpdf((z - d) * math.exp(-lam)) - lam)
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
