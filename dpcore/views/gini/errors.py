"""Exact error summaries of a Gini release ``g(X) + s Z``: quantiles of |s Z| (and of the published, clamped
value's error), RMSE where the noise has a variance, the quantile dot plot of plausible releases, and the helpers
the experiments share."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...noise import GeneralizedCauchy
from ...validation import DPInputError, check_epsilon, check_finite, check_gamma, check_int, check_positive

ProgressFn = Callable[[float, str], object]  # what it returns is ignored (st.progress returns its element)


CALIBRATIONS: tuple[str, ...] = ("paper", "tight")
LEVELS = (0.5, 0.9, 0.99)
COLUMNS = ("median_abs_error", "q90_abs_error", "q99_abs_error")


def check_levels(levels: Sequence[float]) -> np.ndarray:
    q = np.asarray(levels, dtype=float)
    if q.ndim != 1 or q.size == 0 or not np.all((q > 0) & (q < 1)):
        raise DPInputError(f"quantile levels must be numbers strictly between 0 and 1, got {levels!r}")
    return q


def abs_error_quantiles(noise_scale: float, gamma: float, levels: Sequence[float] = LEVELS) -> np.ndarray:
    """Exact quantiles of |s Z|, Z ~ GeneralizedCauchy(gamma): s * F^-1((1 + q)/2)."""
    s = check_finite(noise_scale, "noise_scale")
    if s < 0:
        raise DPInputError(f"noise_scale must be >= 0, got {s:g}")
    q = check_levels(levels)
    return s * GeneralizedCauchy(check_gamma(gamma)).ppf((1.0 + q) / 2.0)


def laplace_abs_error_quantiles(scale: float, levels: Sequence[float] = LEVELS) -> np.ndarray:
    """Exact quantiles of |Laplace(scale)|: the absolute value is Exponential(scale), q -> -scale ln(1-q)."""
    s = check_finite(scale, "scale")
    if s < 0:
        raise DPInputError(f"scale must be >= 0, got {s:g}")
    return -s * np.log1p(-check_levels(levels))


def published_inputs(true_gini: float, noise_scale: float, law: Any) -> tuple[float, float, Any]:
    g = check_finite(true_gini, "true_gini")
    if not 0.0 <= g <= 1.0:
        raise DPInputError(f"a Gini lies in [0, 1], got {g:g}")
    s = check_finite(noise_scale, "noise_scale")
    if s < 0:
        raise DPInputError(f"noise_scale must be >= 0, got {s:g}")
    if not callable(getattr(law, "ppf", None)):
        raise DPInputError(f"law must be a symmetric noise law with a .ppf method, got {law!r}")
    return g, s, law


def published_abs_error_quantiles(
    true_gini: float, noise_scale: float, law: Any, levels: Sequence[float] = LEVELS
) -> np.ndarray:
    """Exact quantiles of the error of a published Gini, E = |clamp(g + s Z, 0, 1) - g|, for Z symmetric about 0
    with quantile function ``law.ppf`` (the release's noise law: ``GeneralizedCauchy(gamma)``, a
    ``dpcore.noise.smooth`` law, ``LaplaceNoise()`` for the baseline).

    With a = min(g, 1 - g), b = max(g, 1 - g): below a the clamp changes nothing, P(E <= t) = P(|s Z| <= t); on
    [a, b) the side of the nearer end is clamped (its errors are a), so P(E <= t) = P(s Z <= t), the noise's
    one-sided law; from b on P(E <= t) = 1. Hence the q-quantile is s F_|Z|^-1(q) = s F^-1((1 + q)/2) when that
    is below a, else min(b, max(a, s F^-1(q))): never above b <= 1."""
    g, s, law = published_inputs(true_gini, noise_scale, law)
    q = check_levels(levels)
    a, b = min(g, 1.0 - g), max(g, 1.0 - g)
    both_sides = s * np.asarray(law.ppf((1.0 + q) / 2.0), dtype=float)
    one_side = s * np.asarray(law.ppf(q), dtype=float)
    return np.where(both_sides < a, both_sides, np.minimum(b, np.maximum(a, one_side)))


def published_rmse(true_gini: float, noise_scale: float, law: Any) -> float:
    """Root mean squared error of a published (clamped) Gini, sqrt E|clamp(g + s Z, 0, 1) - g|^2: finite for
    every noise (the error is at most 1). E X^2 = int_0^c 2t P(X > t) dt for each side, the error above the truth
    cut at c = 1 - g and below at c = g, with P(s Z > t) = 1 - F(t/s) for the symmetric Z: two quadratures."""
    from scipy import integrate

    g, s, law = published_inputs(true_gini, noise_scale, law)
    if s == 0:
        return 0.0

    def side(cut: float) -> float:
        if cut <= 0:
            return 0.0
        value, _ = integrate.quad(lambda t: 2.0 * t * (1.0 - float(law.cdf(t / s))), 0.0, cut, limit=200)
        return value

    return float(math.sqrt(side(1.0 - g) + side(g)))


def clamp_probability(true_gini: float, noise_scale: float, law: Any) -> float:
    """P(a release is published at 0 or 1, the clamp's ends): F(-g/s) + 1 - F((1 - g)/s)."""
    g, s, law = published_inputs(true_gini, noise_scale, law)
    if s == 0:
        return 0.0
    return float(law.cdf(-g / s) + (1.0 - law.cdf((1.0 - g) / s)))


def noise_rmse(noise_scale: float, gamma: float) -> float:
    """sqrt(E (s Z)^2) = s sqrt(Var Z): finite only for gamma > 3 (inf otherwise)."""
    var = GeneralizedCauchy(check_gamma(gamma)).variance
    return math.inf if not math.isfinite(var) else float(noise_scale) * math.sqrt(var)


def plausible_releases(
    true_value: float, noise_scale: float, gamma: float, n_dots: int = 20, *, noise_law: Any = None
) -> np.ndarray:
    """Quantile dot plot: the (i - 1/2)/n_dots quantiles of the release, i = 1..n_dots.

    "n_dots equally likely releases": each dot stands for a 1/n_dots chance. ``noise_law``: the
    standardised noise (anything with ``.ppf``, e.g. ``dpcore.noise.smooth.noise_distribution(cal)``);
    default the generalized Cauchy(gamma) of the paper.
    """
    t = check_finite(true_value, "true_value")
    n_dots = check_int(n_dots, "n_dots", minimum=1, maximum=1000)
    p = (np.arange(n_dots) + 0.5) / n_dots
    s = check_positive(noise_scale, "noise_scale", allow_zero=True)
    if noise_law is None:
        law = GeneralizedCauchy(check_gamma(gamma))
    elif callable(getattr(noise_law, "ppf", None)):
        law = noise_law
    else:
        raise DPInputError(
            "noise_law must be a noise distribution with a .ppf method (e.g. "
            f"dpcore.noise.smooth.noise_distribution(cal)) or None, got {noise_law!r}"
        )
    dots = t + s * np.asarray(law.ppf(p), dtype=float)
    if dots.shape != p.shape:
        raise DPInputError(f"noise_law.ppf must give one quantile per dot (shape {p.shape}), got shape {dots.shape}")
    if not np.isfinite(dots).all():
        raise DPInputError(
            "noise_law.ppf gave non-finite quantiles: the dots need a law with finite quantiles in (0, 1)"
        )
    return dots


def summary_row(scale: float, gamma: float) -> dict[str, float]:
    qs = abs_error_quantiles(scale, gamma)
    return {**dict(zip(COLUMNS, map(float, qs), strict=True)), "rmse": noise_rmse(scale, gamma)}


def empirical_summary(err: np.ndarray, prefix: str = "sim_") -> dict[str, float]:
    a = np.abs(err)
    q = np.quantile(a, LEVELS)
    return {f"{prefix}{c}": float(v) for c, v in zip(COLUMNS, q, strict=True)} | {
        "empirical_rmse": float(np.sqrt(np.mean(a * a))),
        "max_abs_error": float(a.max()),
    }


def tick(progress: ProgressFn | None, done: int, total: int, message: str) -> None:
    if progress is not None:
        progress(min(1.0, done / max(total, 1)), message)


def check_calibrations(calibrations: Sequence[str]) -> tuple[str, ...]:
    cals = tuple(calibrations)
    if not cals or any(c not in CALIBRATIONS for c in cals):
        raise DPInputError(f"calibrations must be among {CALIBRATIONS}, got {calibrations!r}")
    return cals


def check_epsilons(epsilons: Sequence[float]) -> tuple[float, ...]:
    eps = tuple(check_epsilon(e) for e in epsilons)
    if not eps:
        raise DPInputError("give at least one epsilon")
    return eps


@dataclass(frozen=True, eq=False)
class ExperimentResult:
    """One experiment: a tidy ``table`` (one row per configuration) and the parameters used.

    ``draws`` (optional) holds a small sample of simulated errors per configuration for plots.
    ``notes`` are plain-language caveats to show with the figure.
    """

    name: str
    table: pd.DataFrame
    params: dict
    draws: pd.DataFrame | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
