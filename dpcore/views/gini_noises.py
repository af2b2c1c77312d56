"""The Gini page's noise choice: every smooth-sensitivity noise calibrated to the same (epsilon, delta), with the
exact error quantiles of the published Gini on one data set (:func:`compare_noises`, confidential: uses S(X) and
the true Gini; the published value is clamped to [0, 1], so no error exceeds 1) or the noise's quantiles per unit
of smooth sensitivity (:func:`unit_tradeoff`, public inputs only: multiples of S, not errors of a Gini), and the
error densities the page draws."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import budget
from .. import gini as gini_module
from ..noise.smooth import (
    DEFAULT_DELTA,
    SMOOTH_NOISES,
    LaplaceLogNormal,
    LaplaceNoise,
    lln_optimal_sigma,
    noise_distribution,
    smooth_calibration,
)
from ..noise.smooth.common import check_type
from ..noise.smooth.entry import CauchyAdapter
from ..validation import DPInputError, check_delta, check_epsilon, check_int
from .gini import published_abs_error_quantiles, published_rmse

__all__ = ["NoiseErrorRow", "NoiseComparison", "compare_noises", "unit_tradeoff", "error_density_curves"]


@dataclass(frozen=True)
class NoiseErrorRow:
    """Exact error quantiles of one noise for one Gini release (confidential: uses S(X)): of the published value
    (clamped to [0, 1]) in :func:`compare_noises`, of the noise per unit of S in :func:`unit_tradeoff`."""

    noise: str
    description: str
    alpha: float
    beta: float
    confidential_noise_scale: float
    median_abs_error: float
    q90_abs_error: float
    q99_abs_error: float
    rmse: float | None  # None: the noise has no variance (Cauchy with gamma <= 3)
    cost: budget.PrivacyCost
    statement: str

    def to_dict(self) -> dict[str, Any]:
        out = {
            k: getattr(self, k)
            for k in (
                "noise",
                "description",
                "alpha",
                "beta",
                "confidential_noise_scale",
                "median_abs_error",
                "q90_abs_error",
                "q99_abs_error",
                "rmse",
                "statement",
            )
        }
        out["cost"] = self.cost.describe()
        return out


@dataclass(frozen=True)
class NoiseComparison:
    """Every registry noise calibrated to the same target (epsilon, delta) for one Gini data set.

    Planning/teaching only: the quantiles are exact for the noise law times the confidential scale
    S_beta(X)/alpha (each noise has its own beta, hence its own S), clamped as a published Gini is around
    ``true_gini``. ``rows`` in registry order. ``true_gini`` None: :func:`unit_tradeoff`'s data-free numbers,
    multiples of the smooth sensitivity S (said so in :meth:`sentence`).
    """

    epsilon: float
    delta: float
    gamma: float
    rows: tuple[NoiseErrorRow, ...]
    true_gini: float | None = None

    @property
    def per_unit(self) -> bool:
        return self.true_gini is None

    def row(self, noise: str) -> NoiseErrorRow:
        for r in self.rows:
            if r.noise == noise:
                return r
        raise DPInputError(f"no row for noise {noise!r}")

    def sentence(self, noise: str) -> str:
        """The trade-off of ``noise`` against the paper's Cauchy in one sentence: the published Gini's errors on
        data; per unit of S (no data), the noises' shapes only, as ratios (errors of a Gini need the Gini)."""
        r, c = self.row(noise), self.row("cauchy")
        what = {
            "cauchy": "Generalized Cauchy (the paper's)",
            "laplace": "Laplace (NRS)",
            "laplace_lognormal": "Laplace log-normal (Bun & Steinke)",
        }[noise]
        cost = (
            r.cost.describe()
            if r.cost.kind != "zcdp"
            else f"{r.cost.describe()}, which implies (ε, δ) = ({self.epsilon:.3g}, {self.delta:.2g})"
        )
        if self.per_unit:
            if noise == "cauchy":
                return (
                    f"{what}: heavy tails, its 99th-percentile noise is {r.q99_abs_error / r.median_abs_error:.0f}× "
                    f"its median (a published Gini is clamped to [0, 1]); the noise has no variance; costs pure "
                    f"{r.cost.describe()}."
                )
            return (
                f"{what}: median noise {r.median_abs_error / c.median_abs_error:.2f}× the Cauchy's, 99th percentile "
                f"{r.q99_abs_error / c.q99_abs_error:.2f}× (same smooth sensitivity); the noise has a variance; it "
                f"costs {cost} instead of pure ε = {self.epsilon:.3g}."
            )
        if noise == "cauchy":
            return (
                f"{what}: half the published Ginis within ±{r.median_abs_error:.2g}, 99% within "
                f"±{r.q99_abs_error:.2g}; the noise has no variance; costs pure {r.cost.describe()}."
            )
        return (
            f"{what}: median error ±{r.median_abs_error:.2g} ({r.median_abs_error / c.median_abs_error:.2f}× the "
            f"Cauchy's), 99th percentile ±{r.q99_abs_error:.2g} ({r.q99_abs_error / c.q99_abs_error:.2f}×), RMSE "
            f"{r.rmse:.2g}; it costs {cost} instead of pure ε = {self.epsilon:.3g}."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "gamma": self.gamma,
            "true_gini": self.true_gini,
            "rows": [r.to_dict() for r in self.rows],
        }


def _error_row(name: str, cal: Any, scale: float, quantiles: Any, rmse: float | None) -> NoiseErrorRow:
    """One noise's row: its calibration, ``scale``, and the median, 90% and 99% absolute errors and RMSE given."""
    q50, q90, q99 = (float(v) for v in quantiles)
    return NoiseErrorRow(
        name, SMOOTH_NOISES[name], cal.alpha, cal.beta, scale, q50, q90, q99, rmse, cal.cost, cal.statement()
    )


def compare_noises(
    x: Any,
    *,
    epsilon: float,
    lower: float,
    upper: float,
    delta: float = DEFAULT_DELTA,
    gamma: float = 2.0,
    calibration: str = "tight",
    method: str = "exact",
    clip_negative: bool = True,
) -> NoiseComparison:
    """Calibrate every :data:`SMOOTH_NOISES` noise to (epsilon, delta) and give the exact error quantiles (and RMSE,
    for a noise with a variance) of the published Gini, clamped to [0, 1]
    (:func:`dpcore.views.gini.published_abs_error_quantiles`).

    Same privacy: the Cauchy is pure epsilon (hence (epsilon, delta)); "laplace" is (epsilon, delta);
    "laplace_lognormal" is the rho-zCDP that implies (epsilon, delta). Neighbours: replace one
    record, n, lower and upper public. Uses the confidential data through S_beta(X).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    xs, _, _ = gini_module.clip_incomes(x, lower=lower, upper=upper, clip_negative=clip_negative)
    true_gini = float(gini_module.gini(xs))
    rows = []
    cache: dict[float, float] = {}
    for name in SMOOTH_NOISES:
        cal = smooth_calibration(name, epsilon, delta=delta, gamma=gamma, mode=calibration)
        if cal.beta not in cache:
            cache[cal.beta] = gini_module.smooth_sensitivity(
                xs, lower=float(lower), upper=float(upper), beta=cal.beta, method=method
            ).value
        scale = cache[cal.beta] / cal.alpha
        dist = noise_distribution(cal)
        rmse = published_rmse(true_gini, scale, dist) if math.isfinite(float(dist.variance)) else None
        rows.append(_error_row(name, cal, scale, published_abs_error_quantiles(true_gini, scale, dist), rmse))
    return NoiseComparison(epsilon, delta, float(gamma), tuple(rows), true_gini)


def unit_tradeoff(
    epsilon: float, *, delta: float = DEFAULT_DELTA, gamma: float = 2.0, calibration: str = "tight"
) -> NoiseComparison:
    """Data-free version of :func:`compare_noises`: the noise's quantiles per unit of smooth sensitivity (S = 1),
    multiples of S (no Gini, hence no clamp: not errors of a published Gini).

    Exact when every noise's S_beta equals the local-sensitivity bound (k* = 0, typical of a Gini on
    thousands of records); otherwise the light-tailed noises (smaller beta) can have a larger S.
    Public inputs only, so a page can show it before touching the data.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    rows = []
    for name in SMOOTH_NOISES:
        cal = smooth_calibration(name, epsilon, delta=delta, gamma=gamma, mode=calibration)
        dist = noise_distribution(cal)
        scale = 1.0 / cal.alpha
        var = float(dist.variance)
        quantiles = [scale * float(dist.abs_quantile(p)) for p in (0.5, 0.9, 0.99)]
        rows.append(_error_row(name, cal, scale, quantiles, scale * math.sqrt(var) if math.isfinite(var) else None))
    return NoiseComparison(epsilon, delta, float(gamma), tuple(rows))


def error_density_curves(
    comparison: NoiseComparison, *, n_points: int = 301
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """noise -> (error grid, density of the release error) on a common range (±1.2 x the largest light-tailed 99th pct),
    cut to the errors a published Gini can have, [-g, 1 - g] (the clamp's ends hold the rest of the mass), when the
    comparison is on data."""
    check_type(comparison, NoiseComparison, "comparison")
    n_points = check_int(n_points, "n_points", minimum=11, maximum=5001)
    light = [r.q99_abs_error for r in comparison.rows if r.noise != "cauchy"]
    half = 1.2 * max(light) if light else 1.2 * comparison.rows[0].q99_abs_error
    g = comparison.true_gini
    grid = np.linspace(-half, half, n_points) if g is None else np.linspace(-min(half, g), min(half, 1 - g), n_points)
    out = {}
    for r in comparison.rows:
        dist: CauchyAdapter | LaplaceNoise | LaplaceLogNormal
        if r.noise == "cauchy":
            dist = CauchyAdapter(comparison.gamma)
        elif r.noise == "laplace":
            dist = LaplaceNoise()
        else:
            dist = LaplaceLogNormal(lln_optimal_sigma(math.sqrt(2.0 * r.cost.rho), r.beta))
        s = r.confidential_noise_scale
        out[r.noise] = (grid, np.asarray(dist.pdf(grid / s), dtype=float) / s)
    return out
