"""Synthetic incomes: log-normal draws, a log-normal body with a Pareto top tail calibrated to a target
Gini, and the extremal two-point data of Lan & Reiter's Proposition 5.1.

:func:`lognormal_incomes`, :func:`pareto_mixture_incomes` (:class:`ParetoTailMixture`) and
:func:`two_point_incomes` (:class:`TwoPointData`, with :func:`min_iq_for_gini`, eq. (31)) all take ``rng``.
The sample Gini of the two-point data is computed by :func:`dpcore.gini.gini`, the package's one Gini
function (eq. (1) by default, eq. (2) on request).

Privacy assumptions: synthetic data are not confidential; nothing here releases anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..lazy import LazyModule
from ..validation import DPInputError, as_generator, check_finite, check_int, check_positive

if TYPE_CHECKING:
    from scipy import special
else:
    special = LazyModule("scipy.special")  # the default synthetic data never need it (cold start)

__all__ = [
    "lognormal_incomes",
    "ParetoTailMixture",
    "pareto_mixture_incomes",
    "TwoPointData",
    "min_iq_for_gini",
    "two_point_incomes",
]

#: The definitions :func:`dpcore.gini.gini` computes, checked before any data are built: eq. (1) of
#: Lan & Reiter (divide by 2 n^2 xbar) and eq. (2) (by n (n - 1) xbar). dpcore.gini is imported only where
#: a Gini is computed: it brings scipy.stats (~1.3 s), which importing dpcore.data must not cost.
_GINI_DEFINITIONS = ("eq1", "eq2")


def lognormal_incomes(n: int, *, mu: float = 10.5, sigma: float = 0.9, rng=None) -> np.ndarray:
    """n log-normal incomes exp(N(mu, sigma^2)); Gini = 2 Phi(sigma / sqrt 2) - 1."""
    n = check_int(n, "n", minimum=1)
    mu = check_finite(mu, "mu")
    sigma = check_positive(sigma, "sigma")
    return as_generator(rng).lognormal(mu, sigma, size=n)


_SIGMA_MIN, _SIGMA_MAX = 1e-4, 4.0


@dataclass(frozen=True)
class ParetoTailMixture:
    """Log-normal body with a Pareto top tail: the classic model of an income distribution.

    Quantile function (u in (0, 1), p = ``tail_share``, a = ``tail_index``, z_p = Phi^-1(1 - p)):

        Q(u) = exp(mu + sigma Phi^-1(u))                     for u < 1 - p   (log-normal body)
        Q(u) = x_m (p / (1 - u))^(1/a),  x_m = exp(mu + sigma z_p)   for u >= 1 - p  (Pareto tail)

    i.e. a mixture with weight 1 - p on the log-normal truncated to (0, x_m) and weight p on a
    Pareto(x_m, a) above it; Q is continuous at the splice. ``a > 1`` keeps the mean finite
    (``a > 2`` also the variance). The population Gini is exact up to quadrature error (~1e-10):
    G = 2 int_0^1 u Q(u) du / mean - 1, with the tail part in closed form. It does not depend on
    mu (scale invariance). :meth:`calibrated` solves for sigma so that G equals a target.
    """

    sigma: float
    tail_share: float = 0.1
    tail_index: float = 2.5
    mu: float = 10.0

    def __post_init__(self) -> None:
        check_positive(self.sigma, "sigma")
        check_finite(self.mu, "mu")
        p = check_finite(self.tail_share, "tail_share")
        if not 0 < p < 1:
            raise DPInputError(f"tail_share must be strictly between 0 and 1, got {p:g}")
        a = check_finite(self.tail_index, "tail_index")
        if a <= 1:
            raise DPInputError(f"tail_index must be > 1 (otherwise the mean income is infinite), got {a:g}")

    @property
    def _zp(self) -> float:
        return float(special.ndtri(1.0 - self.tail_share))

    @property
    def threshold(self) -> float:
        """x_m: the income where the Pareto tail starts (the (1 - p) quantile)."""
        return math.exp(self.mu + self.sigma * self._zp)

    @property
    def mean(self) -> float:
        p, a, s = self.tail_share, self.tail_index, self.sigma
        body = math.exp(self.mu + s * s / 2) * special.ndtr(self._zp - s)
        return float(body + self.threshold * p * a / (a - 1))

    @property
    def gini(self) -> float:
        """Population Gini (the n -> infinity limit of both eq. (1) and eq. (2))."""
        p, a, s, zp = self.tail_share, self.tail_index, self.sigma, self._zp
        # body: int_0^{1-p} u Q(u) du = exp(mu + s^2/2) int_{-inf}^{z_p} Phi(z) phi(z - s) dz
        f = lambda z: special.ndtr(z) * math.exp(-0.5 * (z - s) ** 2) / math.sqrt(2 * math.pi)
        lo = min(zp, s) - 12.0
        from scipy import integrate

        body_int, _ = integrate.quad(f, lo, zp, epsabs=1e-13, epsrel=1e-11, limit=200)
        body = math.exp(self.mu + s * s / 2) * body_int
        # tail: int_{1-p}^1 u x_m (p/(1-u))^{1/a} du = x_m (p a/(a-1) - p^2 a/(2a-1))
        tail = self.threshold * (p * a / (a - 1) - p * p * a / (2 * a - 1))
        return float(2.0 * (body + tail) / self.mean - 1.0)

    def ppf(self, u: Any) -> np.ndarray:
        """Quantile function Q(u)."""
        u = np.asarray(u, dtype=float)
        if np.any((u < 0) | (u > 1)) or np.any(np.isnan(u)):
            raise DPInputError("quantile levels must be in [0, 1]")
        p, a = self.tail_share, self.tail_index
        with np.errstate(divide="ignore", over="ignore"):
            body = np.exp(self.mu + self.sigma * special.ndtri(np.minimum(u, 1 - p)))
            tail = self.threshold * (p / (1.0 - np.maximum(u, 1 - p))) ** (1.0 / a)
        return np.where(u < 1 - p, body, tail)

    def cdf(self, x: Any) -> np.ndarray:
        """F(x), the inverse of :meth:`ppf`."""
        x = np.asarray(x, dtype=float)
        p, a, xm = self.tail_share, self.tail_index, self.threshold
        with np.errstate(divide="ignore", invalid="ignore"):
            body = special.ndtr((np.log(np.maximum(x, 1e-300)) - self.mu) / self.sigma)
            tail = 1.0 - p * (xm / np.maximum(x, xm)) ** a
        out = np.where(x < xm, body, tail)
        return np.where(x <= 0, 0.0, out)

    def rvs(self, n: int, rng=None) -> np.ndarray:
        """n draws by inversion (vectorised)."""
        n = check_int(n, "n", minimum=1)
        u = as_generator(rng).random(n)
        return self.ppf(u)

    @classmethod
    def calibrated(
        cls, gini: float, *, tail_share: float = 0.1, tail_index: float = 2.5, mu: float = 10.0
    ) -> ParetoTailMixture:
        """The mixture whose population Gini equals ``gini`` (solved for sigma by Brent's method).

        G is increasing in sigma; the reachable range is (G(sigma -> 0), G(sigma = 4)). A target
        outside raises DPInputError naming the range (raise ``tail_index`` for lower Ginis).
        """
        g = check_finite(gini, "gini")
        lo_m = cls(_SIGMA_MIN, tail_share, tail_index, mu)
        hi_m = cls(_SIGMA_MAX, tail_share, tail_index, mu)
        g_lo, g_hi = lo_m.gini, hi_m.gini
        if not g_lo < g < g_hi:
            raise DPInputError(
                f"a Pareto-tailed mixture with tail share {tail_share:g} and tail index {tail_index:g} "
                f"has a Gini between {g_lo:.3f} and {g_hi:.3f}; got target {g:g}. Choose a target in "
                "that range (a larger tail index allows lower Ginis)"
            )
        from scipy import optimize

        sigma = optimize.brentq(
            lambda s: cls(s, tail_share, tail_index, mu).gini - g, _SIGMA_MIN, _SIGMA_MAX, xtol=1e-12, rtol=1e-12
        )
        return cls(float(sigma), tail_share, tail_index, mu)


def pareto_mixture_incomes(
    n: int, *, gini: float = 0.45, tail_share: float = 0.1, tail_index: float = 2.5, median: float = 30_000.0, rng=None
) -> np.ndarray:
    """n incomes from the :class:`ParetoTailMixture` whose population Gini is ``gini``.

    ``median`` sets the scale (the median is exp(mu) when tail_share < 0.5). Default tail index
    2.5 is in the range estimated for top US incomes; tail share 0.1 = the top decile is Pareto.
    """
    n = check_int(n, "n", minimum=1)
    median = check_positive(median, "median")
    model = ParetoTailMixture.calibrated(gini, tail_share=tail_share, tail_index=tail_index, mu=math.log(median))
    return model.rvs(n, rng)


@dataclass(frozen=True)
class TwoPointData:
    """Two-point data of Lan & Reiter Prop. 5.1: ``n_low`` values ``a``, ``n - n_low`` values ``b``.

    ``lower``/``upper`` are the public bounds L <= a < b <= U with (U - L) / mean = ``iq``
    (the paper's normalized range IQ(X), Theorem 4.4), and ``gini`` is the exact Gini of
    ``values`` under ``definition``.
    """

    values: np.ndarray
    lower: float
    upper: float
    gini: float
    iq: float
    n_low: int
    low_value: float
    high_value: float
    definition: str


def min_iq_for_gini(gini: float, n: int | None = None, *, definition: str = "eq1") -> float:
    """inf{IQ(X) : g(X) = gini} of Lan & Reiter Proposition 5.1, eq. (31) / (61).

    The paper states 4g for g <= 1/2 and 1/(1-g) for 1/2 < g < 1. Its proof (Appendix A.4) sets the
    mean to 1 and writes g(X) = sum_ij |x_i - x_j| / n^2, which is a typo: with that denominator the
    two-point data would give 2 alpha (1 - alpha)(U - L), not eq. (62). Eq. (62) and hence (31) are
    right for eq. (1) (denominator 2 n^2 xbar). For eq. (2) (denominator n (n - 1) xbar), the same
    data have g2 = g1 n / (n - 1), so the infimum is eq. (31) evaluated at g1 = gini (n - 1) / n;
    ``definition="eq2"`` therefore needs ``n`` (and is only defined for gini < 1). Tested against a
    brute-force search over small datasets.
    """
    g = check_finite(gini, "gini")
    if definition not in _GINI_DEFINITIONS:
        raise DPInputError(f"definition must be 'eq1' or 'eq2', got {definition!r}")
    if definition == "eq2":
        if n is None:
            raise DPInputError("definition 'eq2' needs n (its Gini depends on n through n / (n - 1))")
        n = check_int(n, "n", minimum=2)
        g = g * (n - 1) / n
    if not 0 <= g < 1:
        raise DPInputError(f"gini must be in [0, 1), got {gini:g}")
    return 4.0 * g if g <= 0.5 else 1.0 / (1.0 - g)


def two_point_incomes(
    n: int, gini: float, iq: float | None = None, *, mean: float = 1.0, definition: str = "eq1", rng=None
) -> TwoPointData:
    """The two-point datasets of Lan & Reiter section 5.2.1 / Appendix A.4 with Gini g, size n and IQ.

    Construction (A.4, with the mean scaled to 1): a fraction alpha of the values equals a and the
    rest equals b, so g1 = alpha (1 - alpha)(b - a) (eq. (62), eq.-(1) Gini; eq. (2) multiplies by
    n / (n - 1)). At the minimum IQ of eq. (31) the values sit at the public bounds: alpha = 1/2,
    a = 1 - 2g, b = 1 + 2g when g <= 1/2; a = L = 0, alpha = g, b = 1/(1-g) when g > 1/2.
    For a larger ``iq`` (``None`` = the minimum) we keep a and b at the bounds and solve
    alpha (1 - alpha) iq = g1 with the root alpha >= 1/2, which keeps a = 1 - (1 - alpha) iq >= 0.

    With finite n the count n_low = alpha n must be an integer. We round it (keeping a >= 0), then
    recompute the spread b - a = g1 / (alpha (1 - alpha)) so the Gini is *exact*, and put any
    left-over width of the bounds (iq - (b - a), zero when alpha n is already an integer) around
    the data so (U - L) / mean = iq exactly with L >= 0. A requested ``iq`` below the minimum
    raises DPInputError. ``iq=None`` gives the smallest IQ reachable with integer counts: eq. (31)
    exactly when alpha n is an integer (e.g. g = 0.5 with n even, or g n an integer for g > 1/2),
    slightly above it otherwise (the paper treats alpha as continuous).

    ``rng`` only shuffles the order of the records (the data are a multiset).
    """
    n = check_int(n, "n", minimum=2)
    mean = check_positive(mean, "mean")
    g_in = check_finite(gini, "gini")
    if definition not in _GINI_DEFINITIONS:
        raise DPInputError(f"definition must be 'eq1' or 'eq2', got {definition!r}")
    factor = (n - 1) / n if definition == "eq2" else 1.0
    g1 = g_in * factor  # the eq.-(1) Gini to reach
    if not 0 < g1 < 1 - 1.0 / n:
        top = 1.0 if definition == "eq2" else 1 - 1.0 / n
        raise DPInputError(f"gini must be strictly between 0 and {top:g} for n = {n} ({definition}), got {g_in:g}")
    iq_inf = min_iq_for_gini(g1, definition="eq1")  # eq. (31): the continuous-alpha infimum
    if iq is not None:
        iq = check_positive(iq, "iq")
        if iq < iq_inf * (1 - 1e-12):
            raise DPInputError(
                f"iq = {iq:g} is below the minimum {iq_inf:.6g} that a Gini of {g_in:g} allows "
                "(Lan & Reiter Prop. 5.1): the bounds must span at least that many means"
            )
    # every integer split m = n_low in 1..n-1 at once (vectorised; n up to millions is cheap)
    m_all = np.arange(1, n)
    alpha = m_all / n
    spread = g1 / (alpha * (1 - alpha))
    a_all = 1.0 - (1 - alpha) * spread
    feasible = a_all >= -1e-12
    if iq is None:
        if not feasible.any():  # pragma: no cover - m = n-1 is always feasible for g1 < 1 - 1/n
            raise DPInputError(f"no two-point dataset of size {n} has Gini {g_in:g}")
        i = int(np.argmin(np.where(feasible, spread, np.inf)))
        iq = float(spread[i])
    else:
        feasible &= spread <= iq * (1 + 1e-12)
        if not feasible.any():
            best_iq = float(np.min(np.where(a_all >= -1e-12, spread, np.inf)))
            raise DPInputError(
                f"with n = {n} records a two-point dataset with Gini {g_in:g} needs iq >= {best_iq:.6g} "
                f"(the limit {iq_inf:.6g} of Prop. 5.1 needs alpha n to be an integer); got {iq:g}"
            )
        i = int(np.argmin(np.where(feasible, iq - spread, np.inf)))
    best = (max(0.0, iq - float(spread[i])), int(m_all[i]), max(float(a_all[i]), 0.0), float(spread[i]))
    slack, m, a, width = best
    b = a + width
    lower = max(0.0, a - slack / 2)
    upper = lower + iq
    values = np.concatenate([np.full(m, a), np.full(n - m, b)]) * mean
    if rng is not None:
        values = as_generator(rng).permutation(values)
    from ..gini import gini as sample_gini  # the package's one Gini (see _GINI_DEFINITIONS for why here)

    g_exact = sample_gini(values, definition=definition)
    return TwoPointData(
        values=values,
        lower=lower * mean,
        upper=upper * mean,
        gini=g_exact,
        iq=(upper - lower) * mean / float(values.mean()),
        n_low=m,
        low_value=a * mean,
        high_value=b * mean,
        definition=definition,
    )
