"""The odds ratio from a noisy 2x2 table: the release of the four cells, the delta-method (Woolf) interval with the
noise variance added, and its coverage. Neighbours: replace one record (total n public)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import noise
from ..validation import DPInputError, as_generator, check_delta, check_epsilon, check_finite, check_positive
from .counts import check_binomial_design, check_count, check_level, check_mechanism, monte_carlo_se, normal_quantile
from .intervals import CoverageResult


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
    m = check_mechanism(mechanism)
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
    cells = [check_count(v, name) for v, name in zip((a, b, c, d), "abcd", strict=True)]
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
    level = check_level(level)
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
    z = normal_quantile(level)
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
    p_x, p_y, n_x, n_y, n_sims = check_binomial_design(p_x, p_y, n_x, n_y, n_sims)
    level = check_level(level)
    m = check_mechanism(mechanism, allow_none=True)
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
    z = normal_quantile(level)
    true = math.log(p_x * (1 - p_y) / ((1 - p_x) * p_y))
    cover = np.abs(log_or - true) <= z * se
    c = float(cover.mean())
    width = float(np.mean(np.exp(log_or + z * se) - np.exp(log_or - z * se)))
    return CoverageResult(
        c,
        width,
        float(monte_carlo_se(c, n_sims)),
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
