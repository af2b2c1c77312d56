"""The noisy counts of Shoham & Ligett (Claim 3.1; Corollaries 4.3 / 4.4) and the checks every ratio module
shares (counts, confidence level, mechanism name). Neighbours: replace one record; n_x and n_y public."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import noise
from ..errors import DPInputError
from ..lazy import special
from ..rng import SecureRandom
from ..validation import as_generator, check_delta, check_epsilon, check_finite, check_int, check_probability

MECHANISMS = ("laplace", "gaussian")


def check_count(value: Any, name: str, minimum: int = 0) -> int:
    if isinstance(value, (float, np.floating)) and not math.isfinite(float(value)):
        raise DPInputError(f"{name} must be a finite whole number, got {value}")
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise DPInputError(f"{name} must be a whole number (a count), got {value}")
    return check_int(value, name, minimum=minimum)


def check_level(level: Any) -> float:
    v = check_finite(level, "level")
    if not 0 < v < 1:
        raise DPInputError(f"level (the confidence level) must be strictly between 0 and 1, e.g. 0.95; got {v:g}")
    return v


def normal_quantile(level: float) -> float:
    return float(special.ndtri(0.5 + level / 2.0))


def check_mechanism(mechanism: Any, allow_none: bool = False) -> str:
    options = MECHANISMS + (("none",) if allow_none else ())
    m = str(mechanism).lower()
    if m not in options:
        raise DPInputError(f"mechanism must be one of {', '.join(options)}; got {mechanism!r}")
    return m


def check_binomial_design(p_x: Any, p_y: Any, n_x: Any, n_y: Any, n_sims: Any) -> tuple[float, float, int, int, int]:
    """The public inputs of a Monte Carlo under X ~ Bin(n_x, p_x), Y ~ Bin(n_y, p_y): the outcome probabilities
    in (0, 1), the group sizes >= 1 and at least 10 simulations (checked in this order)."""
    return (
        check_probability(p_x, "p_x"),
        check_probability(p_y, "p_y"),
        check_count(n_x, "n_x", minimum=1),
        check_count(n_y, "n_y", minimum=1),
        check_count(n_sims, "n_sims", minimum=10),
    )


def monte_carlo_se(coverage: Any, n_sims: int) -> np.ndarray:
    """The Monte Carlo standard error sqrt(c (1 - c) / n_sims) of a coverage c (floored at 1e-12 inside the root)."""
    c = np.asarray(coverage, dtype=float)
    return np.sqrt(np.maximum(c * (1 - c), 1e-12) / n_sims)


# ---------------------------------------------------------------------------------------------
# Noisy counts (Claim 3.1; Corollaries 4.3 / 4.4)
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
    m = check_mechanism(mechanism)
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


def draw_count_noise(cn: CountNoise, size: Any, rng: Any) -> np.ndarray:
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
    x = check_count(x, "x")
    y = check_count(y, "y")
    e = draw_count_noise(cn, 2, as_generator(rng) if not isinstance(rng, SecureRandom) else rng)
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
