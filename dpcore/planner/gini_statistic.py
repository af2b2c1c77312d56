"""The Gini index, planned (Lan & Reiter): the exact error law of its smooth-sensitivity noise."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import budget as _budget
from .. import noise
from ..validation import (
    DPInputError,
    as_generator,
    check_bounds,
    check_epsilon,
    check_finite,
    check_probability,
)
from .statistics import PlannedStatistic, StatisticRelease, check_values, gini_exact_profile, published_form

if TYPE_CHECKING:
    from ..mechanisms import GiniMechanism

__all__ = ["GiniStatistic"]


@dataclass(frozen=True, eq=False)
class GiniStatistic(PlannedStatistic):
    """Gini index (eq. (1)) by smooth sensitivity (Lan & Reiter), drawn by :class:`dpcore.mechanisms.GiniMechanism`.

    Truth: the Gini of the planning incomes with negatives set to 0. The release clips incomes to
    the public [lower, upper] (negatives to ``lower``), so the error is
    ``c + (S_beta(X)/alpha) Z`` with the clipping bias ``c = gini(clipped) - truth``;
    ``P(|c + sZ| <= t) = F_Z((t - c)/s) - F_Z((-t - c)/s)`` with the exact CDF of the noise law.

    ``noise``: a ``dpcore.noise.smooth.SMOOTH_NOISES`` name: "cauchy" (the paper's generalized Cauchy, pure
    epsilon), "laplace" (NRS, (epsilon, delta)) or "laplace_lognormal" (Bun & Steinke, rho-zCDP implying
    (epsilon, delta); planning and simulation only). The noise law, (alpha, beta) and the privacy cost come
    from the mechanism's calibration at (epsilon, ``delta``), so the ledger composes the cost in its own
    currency and :func:`solve_epsilon` solves epsilon for any noise unchanged.

    Below ``exact_min_epsilon`` (0.05) the planner uses the closed-form "fast" smooth sensitivity, a
    valid upper bound on the exact one (``dpcore.gini``: exact <= fast), because the exact one costs
    O(n) per k up to k ~ ln(GS/A0)/beta (about a minute at eps = 0.001, n = 10,000). The planned noise
    is then over-stated, never under-stated: the plan stays conservative. At such epsilons the Gini
    release is mostly noise anyway.

    ``calibration`` defaults to "tight" (the certified largest alpha of :mod:`dpcore.noise`, about
    5-7x less noise than the paper's constants, as on the Gini page and in ``release_gini``);
    "paper" (alpha = eps/(4 gamma), beta = eps/gamma, closed form) is also available. The release
    uses the same calibration as the plan. The search stops at relative precision 5e-3 in epsilon
    (each step needs a certified calibration) and at epsilon 10 (the tight calibration's certificate
    gets slow above it; a Gini needing more is not worth releasing).
    """

    values: np.ndarray
    lower: float
    upper: float
    gamma: float = 2.0
    calibration: str = "tight"
    method: str = "exact"
    noise: str = "cauchy"
    delta: float | None = None
    name: str = "Gini index"
    kind: str = "gini"
    eps_min: float = 0.01
    eps_max: float = 10.0
    exact_min_epsilon: float = 0.05
    solve_rel: float = 5e-3
    mechanism: str = "Gini + (S_beta/alpha) * GeneralizedCauchy(gamma) (smooth sensitivity, Lan & Reiter)"

    def __post_init__(self) -> None:
        from .. import gini as _g
        from ..noise import smooth as smooth_noise

        x = check_values(self.values)
        lo, hi = check_bounds(self.lower, self.upper, lower_name="lower bound", upper_name="upper bound")
        if self.calibration not in ("paper", "tight"):
            raise DPInputError(f"calibration must be 'paper' or 'tight', got {self.calibration!r}")
        g = check_finite(self.gamma, "gamma")
        if g <= 1:
            raise DPInputError(f"gamma must be > 1, got {g:g}")
        name = smooth_noise.check_noise(self.noise)
        if self.calibration == "paper" and name == "cauchy":
            noise.smooth_noise_calibration(1.0, g, mode="paper")  # refuses gammas where the constants fail
        if lo < 0:
            raise DPInputError(f"lower must be >= 0 for the Gini index (incomes are non-negative), got {lo:g}")
        # clip as release_gini does (negatives to lower); no refusal for all-zero data: the release
        # is defined on every data set in [lower, upper]^n (see _draw)
        xs = np.sort(np.clip(x, lo, hi))
        truth_data = np.maximum(x, 0.0)
        object.__setattr__(self, "values", x)
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "gamma", g)
        object.__setattr__(self, "noise", name)
        if name == "cauchy":
            object.__setattr__(self, "delta", 0.0)
        else:
            object.__setattr__(
                self,
                "delta",
                smooth_noise.DEFAULT_DELTA if self.delta is None else check_probability(self.delta, "delta"),
            )
            object.__setattr__(self, "mechanism", f"Gini + (S_beta/alpha) * Z, Z ~ {smooth_noise.SMOOTH_NOISES[name]}")
        # derived from the data and caches, not fields
        self._xs: np.ndarray
        self._truth: float
        self._clipped: float
        self._scales: dict[float, float]
        self._mechanisms: dict[float, GiniMechanism]
        self._Z: noise.GeneralizedCauchy
        object.__setattr__(self, "_xs", xs)
        object.__setattr__(self, "_truth", _g.gini(truth_data) if truth_data.sum() > 0 else math.nan)
        object.__setattr__(self, "_clipped", _g.gini(xs) if xs.sum() > 0 else 0.0)
        object.__setattr__(self, "_scales", {})
        object.__setattr__(self, "_mechanisms", {})
        object.__setattr__(self, "_Z", noise.GeneralizedCauchy(g))

    @property
    def truth(self):
        return np.array([self._truth])

    @property
    def labels(self):
        return ("Gini",)

    @property
    def bias(self) -> float:
        return self._clipped - self._truth

    def mechanism_at(self, epsilon):
        """The :class:`dpcore.mechanisms.GiniMechanism` of this statistic at ``epsilon`` (public parameters only)."""
        from ..mechanisms import GiniMechanism

        eps = check_epsilon(epsilon)
        key = round(eps, 12)
        mech = self._mechanisms.get(key)
        if mech is None:
            mech = GiniMechanism(
                eps,
                self.lower,
                self.upper,
                noise=self.noise,
                gamma=self.gamma,
                calibration=self.calibration,
                delta=self.delta or None,
            )
            self._mechanisms[key] = mech
        return mech

    def _alpha_beta(self, eps: float) -> tuple[float, float]:
        """(alpha, beta) of the planning scale. The Cauchy's "paper" constants in closed form (the release
        certifies them; certifying at every step of the search would cost seconds per step)."""
        if self.noise == "cauchy":
            if self.calibration == "paper":
                return eps / (4.0 * self.gamma), eps / self.gamma
            cal = noise.smooth_noise_calibration(eps, self.gamma, mode="tight")
            return cal.alpha, cal.beta
        cal = self.mechanism_at(eps).smooth_calibration
        return cal.alpha, cal.beta

    def scale(self, epsilon) -> float:
        """Noise scale S_beta(X)/alpha at this epsilon (cached per epsilon)."""
        eps = check_epsilon(epsilon)
        key = round(eps, 12)
        if key not in self._scales:
            alpha, beta = self._alpha_beta(eps)
            self._scales[key] = self.confidential_smooth_sensitivity(eps, beta) / alpha
        return self._scales[key]

    def confidential_smooth_sensitivity(self, eps: float, beta: float) -> float:
        """S_beta(X) (confidential). All-zero clipped data (possible only with lower = 0): g(0,...,0) := 0 (the
        convention of dpcore.gini's sensitivity analysis) and S_beta = GS = (n-1)/n exactly: replacing one
        zero by v > 0 gives g = (n-1)/n, so A^(0) = GS, and S_beta <= GS always. Smoothness holds with
        the neighbours' values, since A^(1)(X') >= |g(X') - g(0)| = GS for any neighbour X' of 0."""
        from .. import gini as _g

        if float(self._xs.sum()) <= 0.0:
            return _g.gini_global_sensitivity(self._xs.size, self.lower, self.upper)
        method = self.method if eps >= self.exact_min_epsilon else "fast"
        if method == "exact":
            return self._exact_smooth_sensitivity(beta)
        return _g.smooth_sensitivity(self._xs, lower=self.lower, upper=self.upper, beta=beta, method=method).value

    def _exact_smooth_sensitivity(self, beta: float) -> float:
        """Exact S_beta(X) = max_k e^(-beta k) A^(k)(X): :func:`dpcore.gini.smooth_sensitivity` with
        method "exact", computed by the same :class:`dpcore.gini.ExactSensitivityProfile` (so the same
        number bit for bit), kept per data set and bounds (:func:`gini_exact_profile`): A^(k) does not
        depend on beta, so each A^(k) is computed once per data set in this process and a new beta only
        re-weights them. The solver's bisection, and an answer at a new epsilon on data already seen (a
        page's slider; every statistic of those data shares the profile), pay only for the k not seen
        yet (the light-tailed noises' beta is ~15x smaller than the Cauchy's at the same epsilon)."""
        return gini_exact_profile(self._xs, self.lower, self.upper).smooth_sensitivity(beta).value

    def certified_cost(self, epsilon) -> tuple[float, float]:
        """(epsilon, delta) that the real release certifies (the mechanism's cost; public inputs only)."""
        cost = self.mechanism_at(epsilon).privacy_cost()
        if cost.kind == "zcdp":
            cal = self.mechanism_at(epsilon).smooth_calibration
            return float(cal.epsilon), float(cal.delta)
        return float(cost.epsilon), float(cost.delta)

    def privacy_cost(self, epsilon: float) -> _budget.PrivacyCost:
        """The mechanism's cost: pure max(epsilon, certified loss + sampler excess) for the Cauchy, (epsilon,
        delta) for "laplace", rho-zCDP for "laplace_lognormal"."""
        return self.mechanism_at(epsilon).privacy_cost()

    def check_real_release(self, epsilon) -> None:
        """Refuse, from public settings only and before any charge, a real release without a floating-point-safe
        sampler ("laplace_lognormal"). Planning and simulation are unaffected."""
        self.mechanism_at(epsilon).check_real_release()

    def noise_law(self, eps: float) -> Any:
        """The law of the standardised noise Z at ``eps`` (a scipy-style distribution, public): the release is the
        clipped Gini plus ``scale(eps) * Z``."""
        return self._Z if self.noise == "cauchy" else self.mechanism_at(eps).noise_law()

    def prob_within(self, epsilon, rel_error):
        eps = check_epsilon(epsilon)
        t = float(self._rel_tolerance(rel_error)[0])
        s = self.scale(eps)
        c = self.bias
        dist = self.noise_law(eps)
        p = float(dist.cdf((t - c) / s) - dist.cdf((-t - c) / s))
        return min(max(p, 0.0), 1.0), 0.0

    def simulate(self, epsilon, n, rng=None):
        eps = check_epsilon(epsilon)
        return self.mechanism_at(eps).simulate(self._clipped, self.scale(eps), n, as_generator(rng))[:, None]

    def _release_mechanism_at(self, epsilon, level: float = 0.95):
        """The :class:`dpcore.mechanisms.GiniIntervalMechanism` a release of this statistic draws with (the value and
        the DP bound on S_beta(X) its published interval needs; the command line's), or None for
        "laplace_lognormal", which has no floating-point-safe sampler (simulation only, no interval)."""
        from ..mechanisms import GiniIntervalMechanism

        if self.noise == "laplace_lognormal":
            return None
        return GiniIntervalMechanism(
            check_epsilon(epsilon),
            self.lower,
            self.upper,
            noise=self.noise,
            gamma=self.gamma,
            calibration=self.calibration,
            delta=None if self.noise == "cauchy" else self.delta,
            level=level,
        )

    def mechanisms_at(self, epsilon, level: float = 0.95):
        """The interval mechanism (value and bound); the value's alone for "laplace_lognormal" (simulation only)."""
        mech = self._release_mechanism_at(check_epsilon(epsilon), level)
        return (self.mechanism_at(epsilon),) if mech is None else (mech,)

    def _drawn(self, epsilon, drawer, level):
        """The release of :class:`dpcore.mechanisms.GiniIntervalMechanism` (the command line's): g(X) + (S_beta(X)/alpha)
        Z by :meth:`dpcore.mechanisms.GiniMechanism.draw` (certified sampler or OpenDP's Laplace, grid 1e-6, window
        [0, 1]) at epsilon_value, and the DP upper bound on S_beta(X) at epsilon_bound that the published interval
        is computed from. Defined for every data set in [lower, upper]^n, including all-zero incomes (g := 0,
        S_beta := GS, see ``confidential_smooth_sensitivity``): neighbours never differ in whether the release
        happens. The noise scale is confidential and stays out of the result. "laplace_lognormal": the value alone,
        simulated."""
        eps = check_epsilon(epsilon)
        notes = (
            "the noise scale S_beta(X)/alpha depends on the data and is not published",
            "clamped to [0, 1] and rounded to the grid 1e-6 (post-processing)",
        )
        mech = self._release_mechanism_at(eps, level)
        if mech is None:
            value_only = self.mechanism_at(eps)
            d = drawer(value_only, self._clipped, self.confidential_smooth_sensitivity(eps, value_only.smoothness))
            eps_out, delta_out = self.certified_cost(eps)
            return StatisticRelease(
                np.array([d.value]),
                d.measurement,
                d.privacy_map,
                eps_out,
                delta_out,
                self.neighbouring,
                d.simulated,
                notes,
            )
        d2 = drawer(mech, self._clipped, self.confidential_smooth_sensitivity(eps, mech.smoothness))
        cost = mech.privacy_cost()
        pub = None
        if np.isfinite(d2.smooth_sensitivity_upper):
            pub = published_form(
                "gini",
                {"gini": [d2.value], "smooth_sensitivity_bound": [d2.smooth_sensitivity_upper]},
                mech.record(),
                ["gini"],
                level,
                inputs=["smooth_sensitivity_bound"],
            )
        return StatisticRelease(
            np.array([d2.value]),
            d2.measurement,
            f"{d2.privacy_map}; bound: {d2.bound_measurement}",
            float(cost.epsilon),
            float(cost.delta),
            self.neighbouring,
            d2.simulated,
            notes
            + (
                f"epsilon split: {mech.plan.epsilon_value:.4g} for the value, "
                f"{mech.plan.epsilon_bound:.4g} for the published bound on S_beta(X)",
            ),
            pub,
        )

    def params(self):
        out = {
            "lower": self.lower,
            "upper": self.upper,
            "gamma": self.gamma,
            "calibration": self.calibration,
            "smooth_sensitivity_method": f"{self.method} (the closed-form 'fast' bound below epsilon "
            f"{self.exact_min_epsilon:g})",
            "definition": "eq. (1): sum (2i-n-1) x_(i) / (n sum x)",
            "noise": self.noise,
        }
        if self.noise != "cauchy":
            out["delta"] = self.delta
        return out
