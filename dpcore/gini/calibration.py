"""The calibration of every released Gini index: :class:`GiniCalibration` (alpha, beta, the noise law, the
certificate, the cost, the record text and the simulated law). The real draw is
:class:`dpcore.mechanisms.GiniMechanism`'s: this calibration with the certified sampler."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validation import (
    DPInputError,
    as_generator,
    check_bounds,
    check_delta,
    check_epsilon,
    check_gamma,
    check_int,
    check_positive,
)

#: public floor of a real release's Gini noise scale S_beta(X)/alpha: max(S, alpha * floor) is again a beta-smooth
#: upper bound, and a floor lower-bounds every output cell's probability, which makes the certified sampler pure DP
#: (dpcore.noise.guarantees.gc_pure_sampler_excess)
GINI_MIN_SCALE = 1e-5
#: relative slack for the floating-point error of g(X) and S_beta(X) (double precision): the generalized-Cauchy
#: release uses alpha (1 - 2 FLOAT_SLACK) and certifies alpha (1 - FLOAT_SLACK) and beta (1 + FLOAT_SLACK)
FLOAT_SLACK = 1e-6
#: how a smooth-sensitivity release names its noise scale: the number depends on the data (it is not a DP
#: output) and must not reach a release record
CONFIDENTIAL_SCALE_LABEL = "S_beta(X)/alpha (data-dependent, not published)"


@dataclass(frozen=True)
class GiniParameters:
    """The public parameters of a released Gini: epsilon, the public bounds, the smooth noise, gamma, the
    calibration mode, delta and ``rows_per_person`` (:class:`GiniCalibration` says what each does). The value's
    calibration and :class:`dpcore.mechanisms.GiniIntervalMechanism` (the value with a DP bound) share them: the
    same names are the same numbers. A base class: each subclass checks them (it is built through one)."""

    epsilon: float
    lower: float
    upper: float
    noise: str = "cauchy"
    gamma: float = 2.0
    calibration: str = "tight"
    delta: float | None = None
    rows_per_person: int = 1


@dataclass(frozen=True)
class GiniCalibration(GiniParameters):
    """The calibration of every released Gini index (eqs. (9)-(10)): ``g(X) + (S_beta(X)/alpha) Z``, all public.

    Built from public parameters only: epsilon, the bounds, the noise (a ``dpcore.noise.smooth.SMOOTH_NOISES``
    name), gamma, the calibration mode, delta, and ``rows_per_person`` m (one person changes at most m records:
    each cell's Gini is calibrated at epsilon/m, and for "laplace" at delta / (m e^{(m-1) epsilon/m}), so group
    privacy over m records gives back (epsilon, delta)). It states alpha, beta, the noise law, the certificate
    and the cost, and simulates the law (:meth:`simulate`, the pages and :func:`release_gini`); the real draw is
    :class:`dpcore.mechanisms.GiniMechanism`'s (this calibration with a draw), so one grid, one clamp and one
    record text hold for every path.

    The real draw ("cauchy") is the certified generalized-Cauchy sampler in its pure-DP mode: window [0, 1],
    grid 1e-6, scale clamped to [GINI_MIN_SCALE, 1/alpha] (S_beta <= GS <= 1, so the top clamp never binds on a
    valid S; the floor keeps max(S, alpha floor) a beta-smooth bound), alpha shrunk by 2 FLOAT_SLACK
    (:attr:`release_alpha`) and the loss certified at alpha (1 - FLOAT_SLACK), beta (1 + FLOAT_SLACK), which
    covers a relative floating-point error up to FLOAT_SLACK in g(X) and S_beta(X). Cost: pure
    m max(certified loss + sampler excess, epsilon/m) (:attr:`certified`).
    "laplace": OpenDP's floating-point-safe Laplace at the confidential scale (NRS 2007's (epsilon, delta) with
    the certified delta of ``dpcore.noise.smooth.laplace_smooth_delta``); no floor (not needed by the sampler).
    "laplace_lognormal" has no floating-point-safe sampler: a real draw is refused (simulation only).
    Every value is published by :func:`dpcore.noise.guarantees.publish_gini` (clamp to [0, 1], grid 1e-6).
    """

    #: the smoothness of S_beta; None: the calibration's default (epsilon/gamma per cell). A release with a
    #: published interval chooses it from public inputs (dpcore.intervals.optimise_gini_split)
    beta: float | None = None

    def __post_init__(self) -> None:
        from ..noise import smooth as smooth_noise

        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        lo, hi = check_bounds(self.lower, self.upper, lower_name="lower bound", upper_name="upper bound")
        if lo < 0:
            raise DPInputError(f"lower must be >= 0 for the Gini index (incomes are non-negative), got {lo:g}")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "noise", smooth_noise.check_noise(self.noise))
        object.__setattr__(self, "gamma", check_gamma(self.gamma))
        if self.calibration not in ("tight", "paper"):
            raise DPInputError(f"calibration must be 'tight' or 'paper', got {self.calibration!r}")
        m = check_int(self.rows_per_person, "rows per person", minimum=1)
        object.__setattr__(self, "rows_per_person", m)
        if self.noise == "laplace_lognormal" and m > 1:
            raise DPInputError("noise 'laplace_lognormal' is offered for one row per person only")
        if self.delta is not None:
            object.__setattr__(self, "delta", check_delta(self.delta))
        if self.beta is not None:
            object.__setattr__(self, "beta", check_positive(self.beta, "beta"))

    # -- calibration (public) ------------------------------------------------------------------------------
    @property
    def epsilon_cell(self) -> float:
        """epsilon of one cell's Gini: epsilon / m (group privacy over the m records of one person)."""
        return self.epsilon / self.rows_per_person

    @property
    def delta_cell(self) -> float:
        """delta one cell is calibrated at: delta / (m e^{(m-1) epsilon/m}) (group privacy gives back delta);
        0 for the pure-DP Cauchy."""
        from ..noise import smooth as smooth_noise

        if self.noise == "cauchy":
            return 0.0
        d = smooth_noise.DEFAULT_DELTA if self.delta is None else self.delta
        m = self.rows_per_person
        if m == 1:
            return float(d)
        return float(d) / (m * math.exp((m - 1) * self.epsilon / m)) * (1.0 - 1e-12)

    @functools.cached_property
    def smooth_calibration(self):
        """The ``dpcore.noise.smooth.SmoothCalibration`` of one cell (alpha, beta, the certificate)."""
        from ..noise import smooth as smooth_noise

        return smooth_noise.smooth_calibration(
            self.noise,
            self.epsilon_cell,
            delta=self.delta_cell or None,
            gamma=self.gamma,
            mode=self.calibration,
            beta=self.beta,
        )

    @property
    def alpha(self) -> float:
        """alpha of the calibration: the law of the exploration draws (:meth:`simulate`, :meth:`noise_scale`)."""
        return self.smooth_calibration.alpha

    @property
    def release_alpha(self) -> float:
        """alpha a draw divides S_beta(X) by: the Cauchy's is shrunk by 2 FLOAT_SLACK (class docstring), a margin
        of 2e-6 of the noise scale, below any digit a page shows."""
        a = self.smooth_calibration.alpha
        return a * (1.0 - 2.0 * FLOAT_SLACK) if self.noise == "cauchy" else a

    @property
    def smoothness(self) -> float:
        """beta of S_beta: the engines and the planner compute S_beta(X) at this beta."""
        return self.smooth_calibration.beta

    @property
    def max_scale(self) -> float:
        return max(1.0 / self.release_alpha, GINI_MIN_SCALE)

    @functools.cached_property
    def certified(self) -> tuple[float, float]:
        """(certified loss of the continuous mechanism, sampler excess) of one Cauchy cell; (epsilon_cell, 0)
        for the other noises, whose certificate is their calibration's."""
        from .. import noise as noise_module
        from ..noise import guarantees as noise_guarantees

        if self.noise != "cauchy":
            return self.epsilon_cell, 0.0
        cal = self.smooth_calibration
        loss = noise_module.smooth_noise_privacy_loss(
            self.gamma, cal.alpha * (1.0 - FLOAT_SLACK), cal.beta * (1.0 + FLOAT_SLACK), tol=1e-3 * self.epsilon_cell
        )
        excess, _ = noise_guarantees.gc_pure_sampler_excess(
            self.gamma, noise_guarantees.GINI_GRID, noise_guarantees.GINI_WINDOW, GINI_MIN_SCALE, self.max_scale
        )
        return float(loss), float(excess)

    def privacy_cost(self):
        """The ``dpcore.budget.PrivacyCost`` of the statistic (every cell: disjoint cells compose in parallel)."""
        from .. import budget

        m = self.rows_per_person
        if self.noise == "cauchy":
            loss, excess = self.certified
            return budget.pure(m * max(loss + excess, self.epsilon_cell))
        if m == 1:
            return self.smooth_calibration.cost
        return budget.approx(self.epsilon, self.delta_cell * m * math.exp((m - 1) * self.epsilon_cell))

    def noise_law(self):
        """The standardised noise law Z (``.rvs``, ``.cdf``, ``.abs_quantile``)."""
        from ..noise import smooth as smooth_noise

        return smooth_noise.noise_distribution(self.smooth_calibration)

    def noise_scale(self, confidential_smooth_sensitivity: float) -> float:
        """S_beta(X)/alpha, the scale of the law the pages explore (confidential: it depends on the data)."""
        return float(confidential_smooth_sensitivity) / self.alpha

    def confidential_noise_scale(self, confidential_smooth_sensitivity: float) -> float:
        """S_beta(X)/alpha as a draw uses it (Cauchy: alpha with the float slack, clamped to [GINI_MIN_SCALE,
        1/alpha]). Confidential."""
        scale = float(confidential_smooth_sensitivity) / self.release_alpha
        if self.noise == "cauchy":
            scale = min(max(scale, GINI_MIN_SCALE), self.max_scale)
        return scale

    def record(self) -> dict[str, Any]:
        """The public description every release record of this statistic carries (one text for every path)."""
        cal = self.smooth_calibration
        out: dict[str, Any] = {
            "noise": self.noise,
            "gamma": self.gamma,
            "calibration": self.calibration,
            "epsilon_per_cell": self.epsilon_cell,
            "alpha": self.alpha,
            "beta": self.smoothness,
            "privacy_statement_per_cell": cal.statement(),
            "output_grid": 1e-6,
            "output_window": [0.0, 1.0],
            "output_rule": "dpcore.noise.guarantees.publish_gini: clamp to [0, 1], round to the grid (post-processing)",
            "noise_scale": CONFIDENTIAL_SCALE_LABEL,
        }
        if self.noise == "cauchy":
            loss, excess = self.certified
            out.update(
                alpha_used=self.release_alpha,
                min_noise_scale=GINI_MIN_SCALE,
                max_noise_scale=self.max_scale,
                float_slack=FLOAT_SLACK,
                certified_loss_per_cell=loss,
                sampler_excess_per_cell=excess,
            )
        else:
            out.update(delta_per_cell=self.delta_cell)
        return out

    def check_real_release(self) -> None:
        """Refuse, from public settings only and before any charge, a real draw without a floating-point-safe
        sampler (the log-normal factor of "laplace_lognormal": OpenDP samples Laplace and Gaussian only)."""
        if self.noise == "laplace_lognormal":
            raise DPInputError(
                "a real release of the Gini with noise='laplace_lognormal' is not offered: there is no "
                "floating-point-safe sampler for it. Use noise='laplace' (OpenDP's Laplace sampler) or "
                "noise='cauchy' (the certified generalized-Cauchy sampler); nothing was charged."
            )

    def simulate(
        self, confidential_gini: float, confidential_noise_scale: float, size: Any, rng: Any = None
    ) -> np.ndarray:
        """``size`` simulated noisy values g + scale Z of this calibration's law (numpy, vectorised; before the
        [0, 1] clamp, which is post-processing): exploration only, nothing is released or charged."""
        return float(confidential_gini) + float(confidential_noise_scale) * self.noise_law().rvs(
            size, as_generator(rng)
        )
