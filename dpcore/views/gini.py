"""The Gini page's view and the experiments of Lan & Reiter (2025), Section 5, as functions.

Paper: ``../shared/papers/gini_lan_reiter_2025.md``.

* :func:`gini_view` - the Gini page's live view (one call: settings + incomes -> :class:`GiniView`,
  whose ``.to_dict()`` is what the page's numbers table and its generated script print).
* :func:`figure1` - distribution of the DP Gini of an income file for
  epsilon in {0.25, 0.5, 1, 1.5, 2}, gamma = 2, L = 0 and U either public or estimated with DP
  (Section 5.1: AboveThreshold with 0.075 + 0.075, U = 2.5 x the estimate, re-run for every
  simulated release block), which adds its epsilon to the total.
* :func:`figure3` - absolute errors for g in {0.2, 0.5, 0.7}, n in {1e4, 1e5, 1e6},
  epsilon in {0.5, 1, 2} on the two-point data with the minimal normalised range IQ of
  Proposition 5.1 (``dpcore.data.two_point_incomes``).
* :func:`figure4` - error against IQ from 2 to 100 at g = 0.5, n = 1e5.
* :func:`error_vs_epsilon` - the same error summaries for the user's data over an epsilon grid.

Every experiment runs both calibrations side by side: ``"paper"`` (Nissim-Raskhodnikova-Smith
constants alpha = eps/(4 gamma), beta = eps/gamma, used by the paper) and ``"tight"`` (same
beta, the largest alpha whose certified privacy loss is <= eps, from
:func:`dpcore.noise.smooth_noise_calibration`). Both have the same beta, hence the same smooth
sensitivity S_beta(X); they differ only in alpha, so the noise scale S/alpha differs by the
ratio of the alphas.

Exact versus simulated errors. The release is ``g(X) + s Z`` with s = S_beta(X)/alpha and
``Z ~ GeneralizedCauchy(gamma)``; the absolute error is ``s |Z|``, whose quantiles are known in
closed form: q-quantile = ``s * F^-1((1 + q)/2)``. We report these exact quantiles (no Monte
Carlo error) and, as the paper does, also simulate draws (``n_draws``; the paper used 10^6) for
box plots and the largest observed errors. The tests check the simulated quantiles against the
exact ones within their Monte Carlo standard error.

RMSE. ``E Z^2`` is finite only for gamma > 3. The paper's Figure 4 plots an "RMSE" for its
gamma = 2 runs; for gamma <= 3 such a number is the root mean square of a finite sample that
does not converge (it grows with the number of draws). We therefore return ``rmse = inf`` for
gamma <= 3 and keep the sample value separately as ``empirical_rmse`` (labelled as not
converging); pages show RMSE only when gamma > 3 and otherwise the 90% absolute error.

Published errors. Every Gini is published clamped to [0, 1] (``dpcore.noise.secure.publish_gini``,
post-processing), so the error of a published Gini, ``|clamp(g + s Z, 0, 1) - g|``, is at most
max(g, 1 - g) <= 1 whatever the noise. The live view (:func:`gini_view`, :func:`error_vs_epsilon`) states
that error: its exact quantiles (:func:`published_abs_error_quantiles`), its RMSE, the simulated releases and
the dots, all clamped; the interval widths are those of the interval cut to [0, 1]. The paper's figures
(:func:`figure1`, :func:`figure3`, :func:`figure4`) keep the paper's errors of the noisy value.

Figures 3-4 use the fast bound (our rigorous version of Theorem 4.4, as the paper does in
Section 5: "we use the bounds from Theorem 4.4"): it needs only n, IQ and L/mean, so no records
are generated (:func:`dpcore.gini.fast_smooth_sensitivity_iq`). ``method="exact"`` builds the
two-point records and runs the exact bound instead (slow for n = 1e6).

Neighbouring relation (all experiments): replace one record; n, L and U public (or U released
with DP and charged to the budget). These are planning simulations: they use the confidential
true Gini and must not be run on confidential data that will not be released anyway.

Progress: every experiment takes ``progress(fraction, message)`` (e.g. a Streamlit progress
bar), called after each configuration.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import gini as gini_mechanism
from .. import intervals as intervals_lib
from ..data import two_point_incomes
from ..noise import GeneralizedCauchy, smooth_noise_calibration
from ..noise import smooth as smooth_noise
from ..validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
)

__all__ = [
    "FIG1_EPSILONS",
    "FIG3_GINIS",
    "FIG3_NS",
    "FIG3_EPSILONS",
    "FIG4_IQS",
    "FIG4_EPSILONS",
    "CALIBRATIONS",
    "ExperimentResult",
    "abs_error_quantiles",
    "laplace_abs_error_quantiles",
    "published_abs_error_quantiles",
    "published_rmse",
    "clamp_probability",
    "noise_rmse",
    "plausible_releases",
    "error_vs_epsilon",
    "figure1",
    "figure3",
    "figure4",
    "GiniView",
    "PublishedGini",
    "published_gini",
    "typical_clipped_width",
    "expected_widths",
    "gini_view",
    "subsample",
    "calibrate_epsilons",
]

ProgressFn = Callable[[float, str], None]

FIG1_EPSILONS: tuple[float, ...] = (0.25, 0.5, 1.0, 1.5, 2.0)
FIG3_GINIS: tuple[float, ...] = (0.2, 0.5, 0.7)
FIG3_NS: tuple[int, ...] = (10_000, 100_000, 1_000_000)
FIG3_EPSILONS: tuple[float, ...] = (0.5, 1.0, 2.0)
FIG4_IQS: tuple[float, ...] = (2, 3, 4, 5, 7.5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100)
FIG4_EPSILONS: tuple[float, ...] = (0.5, 1.0, 2.0)
CALIBRATIONS: tuple[str, ...] = ("paper", "tight")
#: Section 5.1: epsilon spent on the DP upper bound (0.075 for the noisy n + 0.075 for the counts).
PAPER_UPPER_EPSILON = 0.15
#: Section 5.1: U = 2.5 x the DP estimate of the maximum.
PAPER_UPPER_INFLATION = 2.5

_LEVELS = (0.5, 0.9, 0.99)
_COLS = ("median_abs_error", "q90_abs_error", "q99_abs_error")


# ---------------------------------------------------------------------------------------------
# Exact error summaries
# ---------------------------------------------------------------------------------------------


def _check_gamma(gamma: Any) -> float:
    g = check_finite(gamma, "gamma")
    if g <= 1:
        raise DPInputError(f"gamma must be > 1 (the noise density 1/(1+|z|^gamma) needs it), got {g:g}")
    return g


def _check_levels(levels: Sequence[float]) -> np.ndarray:
    q = np.asarray(levels, dtype=float)
    if q.ndim != 1 or q.size == 0 or not np.all((q > 0) & (q < 1)):
        raise DPInputError(f"quantile levels must be numbers strictly between 0 and 1, got {levels!r}")
    return q


def abs_error_quantiles(noise_scale: float, gamma: float, levels: Sequence[float] = _LEVELS) -> np.ndarray:
    """Exact quantiles of |s Z|, Z ~ GeneralizedCauchy(gamma): s * F^-1((1 + q)/2)."""
    s = check_finite(noise_scale, "noise_scale")
    if s < 0:
        raise DPInputError(f"noise_scale must be >= 0, got {s:g}")
    q = _check_levels(levels)
    return s * GeneralizedCauchy(_check_gamma(gamma)).ppf((1.0 + q) / 2.0)


def laplace_abs_error_quantiles(scale: float, levels: Sequence[float] = _LEVELS) -> np.ndarray:
    """Exact quantiles of |Laplace(scale)|: the absolute value is Exponential(scale), q -> -scale ln(1-q)."""
    s = check_finite(scale, "scale")
    if s < 0:
        raise DPInputError(f"scale must be >= 0, got {s:g}")
    return -s * np.log1p(-_check_levels(levels))


def _published_inputs(true_gini: float, noise_scale: float, law: Any) -> tuple[float, float, Any]:
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
    true_gini: float, noise_scale: float, law: Any, levels: Sequence[float] = _LEVELS
) -> np.ndarray:
    """Exact quantiles of the error of a published Gini, E = |clamp(g + s Z, 0, 1) - g|, for Z symmetric about 0
    with quantile function ``law.ppf`` (the release's noise law: ``GeneralizedCauchy(gamma)``, a
    ``dpcore.noise.smooth`` law, ``LaplaceNoise()`` for the baseline).

    With a = min(g, 1 - g), b = max(g, 1 - g): below a the clamp changes nothing, P(E <= t) = P(|s Z| <= t); on
    [a, b) the side of the nearer end is clamped (its errors are a), so P(E <= t) = P(s Z <= t), the noise's
    one-sided law; from b on P(E <= t) = 1. Hence the q-quantile is s F_|Z|^-1(q) = s F^-1((1 + q)/2) when that
    is below a, else min(b, max(a, s F^-1(q))): never above b <= 1."""
    g, s, law = _published_inputs(true_gini, noise_scale, law)
    q = _check_levels(levels)
    a, b = min(g, 1.0 - g), max(g, 1.0 - g)
    both_sides = s * np.asarray(law.ppf((1.0 + q) / 2.0), dtype=float)
    one_side = s * np.asarray(law.ppf(q), dtype=float)
    return np.where(both_sides < a, both_sides, np.minimum(b, np.maximum(a, one_side)))


#: quantile points of the midpoint rule behind the typical interval width (:func:`typical_clipped_width`)
_MIDPOINTS = (np.arange(4000) + 0.5) / 4000


def published_rmse(true_gini: float, noise_scale: float, law: Any) -> float:
    """Root mean squared error of a published (clamped) Gini, sqrt E|clamp(g + s Z, 0, 1) - g|^2: finite for
    every noise (the error is at most 1). E X^2 = int_0^c 2t P(X > t) dt for each side, the error above the truth
    cut at c = 1 - g and below at c = g, with P(s Z > t) = 1 - F(t/s) for the symmetric Z: two quadratures."""
    from scipy import integrate

    g, s, law = _published_inputs(true_gini, noise_scale, law)
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
    g, s, law = _published_inputs(true_gini, noise_scale, law)
    if s == 0:
        return 0.0
    return float(law.cdf(-g / s) + (1.0 - law.cdf((1.0 - g) / s)))


def noise_rmse(noise_scale: float, gamma: float) -> float:
    """sqrt(E (s Z)^2) = s sqrt(Var Z): finite only for gamma > 3 (inf otherwise)."""
    var = GeneralizedCauchy(_check_gamma(gamma)).variance
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
        law = GeneralizedCauchy(_check_gamma(gamma))
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


def _summary_row(scale: float, gamma: float) -> dict[str, float]:
    qs = abs_error_quantiles(scale, gamma)
    return {**dict(zip(_COLS, map(float, qs), strict=True)), "rmse": noise_rmse(scale, gamma)}


def _empirical(err: np.ndarray, prefix: str = "sim_") -> dict[str, float]:
    a = np.abs(err)
    q = np.quantile(a, _LEVELS)
    return {f"{prefix}{c}": float(v) for c, v in zip(_COLS, q, strict=True)} | {
        "empirical_rmse": float(np.sqrt(np.mean(a * a))),
        "max_abs_error": float(a.max()),
    }


def _tick(progress: ProgressFn | None, done: int, total: int, message: str) -> None:
    if progress is not None:
        progress(min(1.0, done / max(total, 1)), message)


def _calibrations(calibrations: Sequence[str]) -> tuple[str, ...]:
    cals = tuple(calibrations)
    if not cals or any(c not in CALIBRATIONS for c in cals):
        raise DPInputError(f"calibrations must be among {CALIBRATIONS}, got {calibrations!r}")
    return cals


def _epsilons(epsilons: Sequence[float]) -> tuple[float, ...]:
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


# ---------------------------------------------------------------------------------------------
# Error against epsilon for one data set (the page's live chart)
# ---------------------------------------------------------------------------------------------


def _law_summary(scale: float, gamma: float, law: Any, noise: str, true_gini: float) -> dict[str, float]:
    """The published Gini's exact median/q90/q99 absolute error and its RMSE (inf for a noise without a variance:
    the Cauchy with gamma <= 3, whose pages show quantiles instead) for one registry noise; the error of the value
    clamped to [0, 1] (:func:`published_abs_error_quantiles`). ``noise_median_abs``: the noise's own median |s Z|
    (a release is saturated when it is half the Gini's range)."""
    law = GeneralizedCauchy(gamma) if noise == "cauchy" else law
    qs = published_abs_error_quantiles(true_gini, scale, law)
    variance = GeneralizedCauchy(gamma).variance if noise == "cauchy" else float(law.variance)
    rmse = published_rmse(true_gini, scale, law) if math.isfinite(variance) else math.inf
    noise_median = float(scale * np.asarray(law.ppf(0.75), dtype=float))
    return {**dict(zip(_COLS, map(float, qs), strict=True)), "rmse": rmse, "noise_median_abs": noise_median}


def _laplace_summary(scale: float, true_gini: float) -> dict[str, float]:
    """The published Gini's errors under the Laplace global-sensitivity baseline (clamped to [0, 1] as every
    published Gini): median/q90/q99 and RMSE."""
    law = smooth_noise.LaplaceNoise()
    qs = published_abs_error_quantiles(true_gini, scale, law)
    return {
        **{f"laplace_{c}": float(v) for c, v in zip(_COLS, qs, strict=True)},
        "laplace_rmse": published_rmse(true_gini, scale, law),
    }


def error_vs_epsilon(
    x: Any,
    *,
    lower: float,
    upper: float,
    gamma: float,
    epsilons: Sequence[float],
    calibrations: Sequence[str] = CALIBRATIONS,
    method: str = "exact",
    progress: ProgressFn | None = None,
    noise: str = "cauchy",
    delta: float | None = None,
) -> pd.DataFrame:
    """Exact absolute-error quantiles of the published (clamped) Gini of the smooth-sensitivity release and of the
    Laplace baseline.

    One row per (epsilon, calibration): epsilon, calibration, alpha, beta, smooth_sensitivity,
    k_star, noise_scale, median/q90/q99 abs error, rmse (inf for the Cauchy with gamma <= 3), saturated,
    and the Laplace global-sensitivity baseline's laplace_scale, laplace median/q90/q99 abs errors and
    laplace_rmse; every error is that of the value clamped to [0, 1] (:func:`published_abs_error_quantiles`).
    ``noise``: a ``dpcore.noise.smooth.SMOOTH_NOISES`` name (default the paper's generalized Cauchy),
    calibrated by :func:`dpcore.noise.smooth.smooth_calibration` at (epsilon, ``delta``).
    ``x`` must already lie in [lower, upper] (see :func:`dpcore.gini.clip_incomes`).
    """
    gamma = _check_gamma(gamma)
    noise = smooth_noise.check_noise(noise)
    eps_list = _epsilons(epsilons)
    cals = _calibrations(calibrations)
    xs = np.sort(np.asarray(x, dtype=float))
    true_gini = gini_mechanism.gini(xs)
    rows = []
    total = len(eps_list)
    for i, eps in enumerate(eps_list):
        sens: dict[float, Any] = {}  # one smooth sensitivity per beta (the Cauchy's calibrations share it)
        for c in cals:
            cal = smooth_noise.smooth_calibration(noise, eps, delta=delta, gamma=gamma, mode=c)
            if cal.beta not in sens:
                sens[cal.beta] = gini_mechanism.smooth_sensitivity(
                    xs, lower=lower, upper=upper, beta=cal.beta, method=method
                )
            ss = sens[cal.beta]
            lap_scale = ss.global_sensitivity / eps
            scale = ss.value / cal.alpha
            summary = _law_summary(scale, gamma, smooth_noise.noise_distribution(cal), noise, true_gini)
            noise_median = summary.pop("noise_median_abs")
            rows.append(
                {
                    "epsilon": eps,
                    "calibration": c,
                    "alpha": cal.alpha,
                    "beta": cal.beta,
                    "smooth_sensitivity": ss.value,
                    "k_star": ss.k_star,
                    "noise_scale": scale,
                    **summary,
                    "saturated": bool(ss.saturated or noise_median >= 0.5),
                    "laplace_scale": lap_scale,
                    **_laplace_summary(lap_scale, true_gini),
                }
            )
        _tick(progress, i + 1, total, f"epsilon = {eps:g}")
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# Figure 1: an income file, epsilon in {0.25, ..., 2}, U public or estimated with DP
# ---------------------------------------------------------------------------------------------


def _dp_upper(values: np.ndarray, epsilon_u: float, rng: np.random.Generator) -> float:
    """One run of the paper's DP upper bound (Section 5.1, :func:`dpcore.bounds.dp_upper_bound`):
    epsilon_u split equally between the noisy n and the noisy counts (0.075 + 0.075 in the paper),
    L = 0, U = 2.5 x the AboveThreshold estimate. Returns U."""
    from ..bounds import dp_upper_bound

    res = dp_upper_bound(values, epsilon_n=epsilon_u / 2, epsilon_count=epsilon_u / 2, rng=rng)
    assert math.isclose(res.epsilon, epsilon_u)
    return float(res.upper)


def figure1(
    values: Any,
    *,
    epsilons: Sequence[float] = FIG1_EPSILONS,
    gamma: float = 2.0,
    lower: float = 0.0,
    upper: float | None = None,
    upper_epsilon: float = PAPER_UPPER_EPSILON,
    method: str = "fast",
    calibrations: Sequence[str] = CALIBRATIONS,
    n_releases: int = 100_000,
    n_upper_draws: int = 20,
    rng: Any = None,
    progress: ProgressFn | None = None,
    upper_sampler: Callable[[np.ndarray, float, np.random.Generator], float] | None = None,
) -> ExperimentResult:
    """Figure 1: many DP Gini releases of one income file for each epsilon, both calibrations.

    ``upper=None`` (the paper's setting): U is released with DP for every block of releases
    (``n_upper_draws`` independent runs of the Section 5.1 AboveThreshold procedure with
    ``upper_epsilon``, default 0.15; each block of ``n_releases / n_upper_draws`` releases uses
    one U), data above that U are clipped, and the total epsilon is epsilon + upper_epsilon.
    A number ``upper`` is a public bound (chosen without the data): total = epsilon.
    Negative incomes must be removed first (or clipped by the caller).

    Table columns: epsilon, total_epsilon, calibration, true_gini, clipped_gini (the Gini of the
    data clipped at each block's U, averaged over the releases: the centre of the releases), mean,
    q01, q25, median, q75, q99 of the releases, the simulated abs-error quantiles (against the
    unclipped truth, so clipping bias counts as error), the mean noise scale, the U range and
    ``share_upper_below_max`` (share of U draws below the data maximum: those blocks are biased down).
    The same U draws and the same Z draws are used for both calibrations.
    """
    x = np.sort(np.asarray(values, dtype=float))
    if x.size < 2:
        raise DPInputError(f"need at least 2 incomes, got {x.size}")
    if not np.all(np.isfinite(x)):
        raise DPInputError("incomes contain missing or infinite values; drop them first")
    if x[0] < 0:
        raise DPInputError(f"incomes contain {int((x < 0).sum())} negative values; drop or clip them first")
    gamma = _check_gamma(gamma)
    eps_list = _epsilons(epsilons)
    cals = _calibrations(calibrations)
    n_releases = check_int(n_releases, "n_releases", minimum=1, maximum=10_000_000)
    gen = as_generator(rng)
    true_g = gini_mechanism.gini(x)
    dp_u = upper is None
    if dp_u:
        upper_epsilon = check_epsilon(upper_epsilon, "upper_epsilon")
        n_upper_draws = check_int(n_upper_draws, "n_upper_draws", minimum=1, maximum=10_000)
        sampler = upper_sampler or _dp_upper
        uppers = np.array([sampler(x, upper_epsilon, gen) for _ in range(n_upper_draws)], dtype=float)
    else:
        uppers = np.array([check_finite(upper, "upper")])
    n_blocks = uppers.size
    block = np.full(n_blocks, n_releases // n_blocks)
    block[: n_releases % n_blocks] += 1
    gc = GeneralizedCauchy(gamma)
    z = gc.rvs(n_releases, gen)  # shared across epsilons and calibrations (common random numbers)
    rows, draws = [], []
    total = len(eps_list) * n_blocks
    done = 0
    for eps in eps_list:
        cal = {c: smooth_noise_calibration(eps, gamma, mode=c) for c in cals}
        beta = cal[cals[0]].beta
        g_blocks, s_blocks = np.empty(n_blocks), np.empty(n_blocks)
        for b, u in enumerate(uppers):
            if not u > lower:
                raise DPInputError(f"upper bound {u:g} is not above lower = {lower:g}")
            xb = np.clip(x, lower, u)
            g_blocks[b] = gini_mechanism.gini(xb)
            s_blocks[b] = gini_mechanism.smooth_sensitivity(xb, lower=lower, upper=u, beta=beta, method=method).value
            done += 1
            _tick(progress, done, total, f"epsilon = {eps:g}: U {b + 1}/{n_blocks}")
        g_rel = np.repeat(g_blocks, block)
        s_rel = np.repeat(s_blocks, block)
        for c in cals:
            scale = s_rel / cal[c].alpha
            rel = g_rel + scale * z
            err = rel - true_g
            q = np.quantile(rel, [0.01, 0.25, 0.5, 0.75, 0.99])
            rows.append(
                {
                    "epsilon": eps,
                    "total_epsilon": eps + (upper_epsilon if dp_u else 0.0),
                    "calibration": c,
                    "true_gini": true_g,
                    "clipped_gini": float(np.average(g_blocks, weights=block)),
                    "mean": float(rel.mean()),
                    "q01": q[0],
                    "q25": q[1],
                    "median": q[2],
                    "q75": q[3],
                    "q99": q[4],
                    **_empirical(err),
                    "mean_noise_scale": float(scale.mean()),
                    "upper_min": float(uppers.min()),
                    "upper_max": float(uppers.max()),
                    "share_upper_below_max": float(np.mean(uppers < x[-1])),
                }
            )
            keep = gen.choice(n_releases, size=min(n_releases, 2000), replace=False)
            draws.append(pd.DataFrame({"epsilon": eps, "calibration": c, "release": rel[keep]}))
    notes = ["Releases of one file; the spread is the DP noise only (the data are fixed)."]
    if dp_u:
        notes.append(
            f"U is estimated with DP in each of {n_blocks} blocks (epsilon {upper_epsilon:g} each time), "
            f"so the total epsilon is epsilon + {upper_epsilon:g}."
        )
        below = float(np.mean(uppers < x[-1]))
        if below > 0:
            notes.append(
                f"In {below:.0%} of the blocks the DP upper bound fell below the largest income, so the top "
                f"incomes were clipped and the releases centre on a lower Gini "
                f"({float(np.average(g_blocks, weights=block)):.4f} instead of {true_g:.4f})."
            )
    if gamma <= 2:
        notes.append(
            "With gamma <= 2 the noise has no mean: the sample mean of the releases is unstable; "
            "read the median and quartiles."
        )
    params = dict(
        epsilons=eps_list,
        gamma=gamma,
        lower=lower,
        upper=upper,
        upper_epsilon=upper_epsilon if dp_u else 0.0,
        method=method,
        calibrations=cals,
        n_releases=n_releases,
        n=int(x.size),
        true_gini=true_g,
    )
    return ExperimentResult("figure1", pd.DataFrame(rows), params, pd.concat(draws, ignore_index=True), tuple(notes))


# ---------------------------------------------------------------------------------------------
# Figures 3 and 4: two-point data (Proposition 5.1)
# ---------------------------------------------------------------------------------------------


def _two_point_scale_inputs(
    n: int, g: float, iq: float | None, method: str
) -> tuple[float, float, float, np.ndarray | None]:
    """(lower/mean, upper/mean, iq) of the Prop. 5.1 data (mean 1), and the records for method="exact"."""
    td = two_point_incomes(n, g, iq, definition="eq1")
    return td.lower, td.upper, td.iq, (td.values if method == "exact" else None)


def _smooth_value(
    n: int, lo: float, hi: float, iq: float, beta: float, method: str, values: np.ndarray | None
) -> float:
    if method == "fast":
        return gini_mechanism.fast_smooth_sensitivity_iq(n, iq, beta, lower_over_mean=lo)
    return gini_mechanism.smooth_sensitivity(values, lower=lo, upper=hi, beta=beta, method="exact").value


def _noise_scales(
    n: int,
    lo: float,
    hi: float,
    iq: float,
    vals: np.ndarray | None,
    eps: float,
    gamma: float,
    cals: Sequence[str],
    method: str,
) -> tuple[float, dict[str, float]]:
    """S_beta of the two-point data (both calibrations share beta = eps/gamma) and S/alpha per calibration."""
    cal = {c: smooth_noise_calibration(eps, gamma, mode=c) for c in cals}
    s_val = _smooth_value(n, lo, hi, iq, cal[cals[0]].beta, method, vals)
    return s_val, {c: s_val / cal[c].alpha for c in cals}


def _check_method(method: str) -> str:
    if method not in ("exact", "fast"):
        raise DPInputError(f"method must be 'exact' or 'fast', got {method!r}")
    return method


def figure3(
    *,
    ginis: Sequence[float] = FIG3_GINIS,
    ns: Sequence[int] = FIG3_NS,
    epsilons: Sequence[float] = FIG3_EPSILONS,
    gamma: float = 2.0,
    calibrations: Sequence[str] = CALIBRATIONS,
    method: str = "fast",
    n_draws: int = 100_000,
    rng: Any = None,
    progress: ProgressFn | None = None,
) -> ExperimentResult:
    """Figure 3: |released - g| for each (g, n, epsilon, calibration) at the minimal IQ (Prop. 5.1).

    Table: g, n, epsilon, calibration, iq, lower, upper (mean = 1), smooth_sensitivity,
    noise_scale, exact median/q90/q99 abs error, rmse, and the same quantiles from ``n_draws``
    simulated releases (``sim_*``, plus ``max_abs_error``, the paper's "largest errors").
    ``draws``: up to 2000 simulated abs errors per configuration, floored at 1e-6 as in the
    paper's log axis (``log10_abs_error``).
    """
    gamma = _check_gamma(gamma)
    cals = _calibrations(calibrations)
    method = _check_method(method)
    eps_list = _epsilons(epsilons)
    g_list = [check_finite(g, "g") for g in ginis]
    n_list = [check_int(n, "n", minimum=2) for n in ns]
    n_draws = check_int(n_draws, "n_draws", minimum=1, maximum=10_000_000)
    gen = as_generator(rng)
    z = np.abs(GeneralizedCauchy(gamma).rvs(n_draws, gen))
    keep = gen.choice(n_draws, size=min(n_draws, 2000), replace=False)
    rows, draws = [], []
    total = len(g_list) * len(n_list) * len(eps_list)
    done = 0
    for g in g_list:
        for n in n_list:
            lo, hi, iq, vals = _two_point_scale_inputs(n, g, None, method)
            for eps in eps_list:
                s_val, scales = _noise_scales(n, lo, hi, iq, vals, eps, gamma, cals, method)
                for c, scale in scales.items():
                    err = scale * z
                    rows.append(
                        {
                            "g": g,
                            "n": n,
                            "epsilon": eps,
                            "calibration": c,
                            "iq": iq,
                            "lower": lo,
                            "upper": hi,
                            "smooth_sensitivity": s_val,
                            "noise_scale": scale,
                            **_summary_row(scale, gamma),
                            **_empirical(err),
                        }
                    )
                    draws.append(
                        pd.DataFrame(
                            {
                                "g": g,
                                "n": n,
                                "epsilon": eps,
                                "calibration": c,
                                "log10_abs_error": np.log10(np.maximum(err[keep], 1e-6)),
                            }
                        )
                    )
                done += 1
                _tick(progress, done, total, f"g = {g:g}, n = {n:,}, epsilon = {eps:g}")
    notes = (
        "Two-point data with the smallest normalised range IQ = (U - L)/mean that the Gini allows "
        "(Proposition 5.1): the most favourable data for this mechanism.",
    )
    params = dict(
        ginis=tuple(g_list),
        ns=tuple(n_list),
        epsilons=eps_list,
        gamma=gamma,
        calibrations=cals,
        method=method,
        n_draws=n_draws,
    )
    return ExperimentResult("figure3", pd.DataFrame(rows), params, pd.concat(draws, ignore_index=True), notes)


def figure4(
    *,
    iqs: Sequence[float] = FIG4_IQS,
    g: float = 0.5,
    n: int = 100_000,
    epsilons: Sequence[float] = FIG4_EPSILONS,
    gamma: float = 2.0,
    calibrations: Sequence[str] = CALIBRATIONS,
    method: str = "fast",
    n_draws: int = 100_000,
    rng: Any = None,
    progress: ProgressFn | None = None,
) -> ExperimentResult:
    """Figure 4: error against the normalised range IQ (2..100) at g = 0.5, n = 1e5.

    Data: two-point records with Gini ``g`` whose bounds span ``iq`` means
    (:func:`dpcore.data.two_point_incomes`; an ``iq`` below the Prop. 5.1 minimum is refused).
    Table as in :func:`figure3`, one row per (iq, epsilon, calibration). ``rmse`` is exact and
    finite only for gamma > 3; ``empirical_rmse`` is the paper's sample RMSE (for gamma <= 3 it
    does not converge: more draws, larger value).
    """
    gamma = _check_gamma(gamma)
    cals = _calibrations(calibrations)
    method = _check_method(method)
    eps_list = _epsilons(epsilons)
    iq_list = [check_finite(v, "iq") for v in iqs]
    g = check_finite(g, "g")
    n = check_int(n, "n", minimum=2)
    n_draws = check_int(n_draws, "n_draws", minimum=1, maximum=10_000_000)
    gen = as_generator(rng)
    z = np.abs(GeneralizedCauchy(gamma).rvs(n_draws, gen))
    rows = []
    total = len(iq_list) * len(eps_list)
    done = 0
    for iq_req in iq_list:
        lo, hi, iq, vals = _two_point_scale_inputs(n, g, iq_req, method)
        for eps in eps_list:
            s_val, scales = _noise_scales(n, lo, hi, iq, vals, eps, gamma, cals, method)
            for c, scale in scales.items():
                rows.append(
                    {
                        "iq": iq,
                        "g": g,
                        "n": n,
                        "epsilon": eps,
                        "calibration": c,
                        "lower": lo,
                        "upper": hi,
                        "smooth_sensitivity": s_val,
                        "noise_scale": scale,
                        **_summary_row(scale, gamma),
                        **_empirical(scale * z),
                    }
                )
            done += 1
            _tick(progress, done, total, f"IQ = {iq:g}, epsilon = {eps:g}")
    notes = []
    if gamma <= 3:
        notes.append(
            f"gamma = {gamma:g} <= 3: the noise has infinite variance, so the RMSE does not exist. "
            "We show the 90% absolute error instead (the paper's sample RMSE keeps growing with more draws)."
        )
    params = dict(
        iqs=tuple(iq_list), g=g, n=n, epsilons=eps_list, gamma=gamma, calibrations=cals, method=method, n_draws=n_draws
    )
    return ExperimentResult("figure4", pd.DataFrame(rows), params, None, tuple(notes))


# ---------------------------------------------------------------------------------------------
# The Gini page's view: one call, settings + incomes -> GiniView
# ---------------------------------------------------------------------------------------------

#: The page's fixed random sub-sample of n records (the sidebar seed redraws the noise only).
SUBSAMPLE_SEED = 7919
#: Epsilons of the page's error-against-epsilon chart.
CURVE_EPSILONS: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0)
#: Simulated releases behind the page's histogram of releases.
N_SIMULATED_RELEASES = 20_000
#: Dots of the quantile dot plot ("20 equally likely releases").
N_DOTS = 20
#: Credible level of the posterior interval.
POSTERIOR_LEVEL = 0.95
#: Seed offsets (added to the sidebar seed) of the view's draws.
SEED_OFFSET_RELEASES, SEED_OFFSET_ONE_RELEASE, SEED_OFFSET_UPPER = 2, 3, 11
#: Level of the interval an analyst computes from the published numbers alone (the release's default).
PUBLISHED_LEVEL = intervals_lib.DEFAULT_LEVEL
#: The noises a release with a published interval is offered for (``GiniIntervalMechanism``'s): the
#: Laplace log-normal has no floating-point-safe sampler, so it is never released.
PUBLISHED_NOISES = ("cauchy", "laplace")


#: Error-against-epsilon tables of each data set, kept as long as its shared exact profile is
#: (:func:`dpcore.gini.shared_exact_profile`: the Gini view and the planner share one A^(k) per data set).
_CURVES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CURVES_LOCK = threading.Lock()


def _profile_and_curves(
    xs: np.ndarray, lower: float, upper: float
) -> tuple[gini_mechanism.ExactSensitivityProfile, dict[tuple, pd.DataFrame]]:
    """This clipped data set's shared exact smooth-sensitivity profile (a new epsilon only
    re-weights A^(k)) and its error-against-epsilon tables (beta-free inputs only)."""
    profile = gini_mechanism.shared_exact_profile(xs, lower, upper)
    with _CURVES_LOCK:
        curves = _CURVES.setdefault(profile, {})
    return profile, curves


def calibrate_epsilons(
    epsilons: Sequence[float],
    *,
    gamma: float,
    calibration: str = "tight",
    noise: str = "cauchy",
    delta: float | None = None,
) -> tuple[Any, ...]:
    """The smooth-noise calibrations of ``noise`` at every epsilon of ``epsilons`` (public inputs only).

    A page calls this once per process for its slider's epsilons: the calibrations (the certified
    tight alpha of the generalized Cauchy costs 20-80 ms each) are remembered by :mod:`dpcore.noise` /
    :mod:`dpcore.noise.smooth`, so a later slider move only does the data-dependent work.
    """
    gamma = _check_gamma(gamma)
    return tuple(
        smooth_noise.smooth_calibration(noise, e, delta=delta, gamma=gamma, mode=calibration)
        for e in _epsilons(epsilons)
    )


def subsample(values: Any, n: int, seed: int = SUBSAMPLE_SEED) -> np.ndarray:
    """The page's random sub-sample of ``n`` records (all of them when n >= their number), drawn
    with its own fixed seed so that the sidebar seed redraws only the noise."""
    x = as_finite_array(values, "incomes", min_size=2)
    n = check_int(n, "n", minimum=2)
    if n >= x.size:
        return x
    return np.random.default_rng(seed).choice(x, size=n, replace=False)


@dataclass(frozen=True)
class PublishedGini:
    """The simulated release drawn the way a real one is (:class:`dpcore.mechanisms.GiniIntervalMechanism`: the
    value at epsilon_value plus a DP upper bound on S_beta(X) at epsilon_bound) and the interval an analyst computes
    from those published numbers alone (:func:`dpcore.intervals.gini_interval_from_release`).

    Every field is a DP output or public: ``value`` and ``s_upper`` are the release; ``lower``/``upper`` the interval
    at ``level`` (post-processing); the split, beta and eta come from public inputs only; ``expected_width`` is the
    plan's median-width model (:attr:`dpcore.intervals.GiniIntervalPlan.model_width`, no data) and
    ``oracle_expected_width`` the same model for the oracle that knows S(X)/alpha (``model_oracle_width``), both at
    most 1 (the interval is cut to [0, 1], where every Gini lies)."""

    value: float
    s_upper: float
    lower: float
    upper: float
    level: float
    epsilon_value: float
    epsilon_bound: float
    beta: float
    eta: float
    expected_width: float
    oracle_expected_width: float
    planning_n: int
    #: the median width on THESE data (planning, not private) of the interval v -+ q clamp(S_beta(X)/alpha) cut to
    #: [0, 1] (:func:`typical_clipped_width`); the bound's noise has median 0, so the margin cancels in the median
    #: of S_hat e^{-margin}
    confidential_typical_width: float = math.nan

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def numbers(self) -> dict[str, float]:
        return {
            "published_gini": self.value,
            "published_smooth_sensitivity_bound": self.s_upper,
            "published_interval_lower": self.lower,
            "published_interval_upper": self.upper,
            "published_epsilon_value": self.epsilon_value,
            "published_epsilon_bound": self.epsilon_bound,
            "published_expected_width": self.expected_width,
            "oracle_expected_width": self.oracle_expected_width,
            "confidential_published_typical_width": self.confidential_typical_width,
        }


@dataclass(frozen=True, eq=False)
class GiniView:
    """Everything the Gini page shows for one setting (a planning view, not a release).

    Every number here is computed from the confidential incomes (the true Gini, the smooth
    sensitivity, the noise scale and the clipping counts describe the data): the page is for
    planning. The one simulated release (``released_gini``) and its posterior are what an analyst
    would see if the agency published at these settings with this seed.

    Every number about the Gini is that of the published value, clamped to [0, 1]: the error quantiles
    (``abs_error_quantiles``, ``laplace_abs_error_quantiles``), the RMSEs, the simulated releases, the dots,
    ``released_gini`` and the published interval's widths.

    ``to_dict()`` gives the page's numbers table (plain floats, one per quantity) and the dot plot;
    the generated script prints exactly that.
    """

    n: int
    epsilon: float
    gamma: float
    lower: float
    upper: float
    upper_epsilon: float
    total_epsilon: float
    calibration: str
    method: str
    confidential_n_negative: int
    confidential_n_below: int
    confidential_n_above: int
    true_gini: float
    smooth_sensitivity: float
    k_star: int
    sensitivity_saturated: bool
    global_sensitivity: float
    alpha: float
    beta: float
    noise_scale: float
    abs_error_quantiles: tuple[float, float, float]
    laplace_scale: float
    laplace_abs_error_quantiles: tuple[float, float, float]
    rmse: float | None
    laplace_rmse: float | None
    saturated: bool
    fast_curve: pd.DataFrame
    exact_curve: pd.DataFrame | None
    fast_k_star: int
    exact_k_star: int | None
    error_curve: pd.DataFrame
    simulated_releases: np.ndarray | None = None
    simulated_laplace_releases: np.ndarray | None = None
    plausible_releases: np.ndarray | None = None
    released_gini: float | None = None
    prior: Any = "uniform"
    posterior_grid: np.ndarray | None = None
    posterior_density: np.ndarray | None = None
    posterior_mean: float | None = None
    posterior_interval: tuple[float, float] | None = None
    posterior_hpd: tuple[float, float] | None = None
    noise: str = "cauchy"
    delta: float = 0.0
    rho: float | None = None
    privacy_statement: str = ""
    published: PublishedGini | None = None  # the release with its interval from the published numbers alone
    published_note: str = ""  # why there is no published interval (a noise that is never released)
    #: P(a release is published at 0 or 1): the clamp's share (planning: uses the true Gini)
    clamp_probability: float = 0.0
    #: the one release was clamped to 0 or 1 (the oracle posterior reads the noisy value before the clamp)
    released_clamped: bool = False

    def numbers(self) -> dict[str, float]:
        """The page's full-precision numbers table: quantity -> value (floats; booleans as 0/1)."""
        med, q90, q99 = self.abs_error_quantiles
        lap_med, lap_q90, lap_q99 = self.laplace_abs_error_quantiles
        out: dict[str, Any] = {
            "n": float(self.n),
            "lower": self.lower,
            "upper": self.upper,
            "upper_epsilon": self.upper_epsilon,
            "total_epsilon": self.total_epsilon,
            "true_gini": self.true_gini,
            "smooth_sensitivity": self.smooth_sensitivity,
            "k_star": float(self.k_star),
            "alpha": self.alpha,
            "beta": self.beta,
            "noise_scale": self.noise_scale,
            "median_abs_error": med,
            "q90_abs_error": q90,
            "q99_abs_error": q99,
            "laplace_median_abs_error": lap_med,
            "laplace_q90_abs_error": lap_q90,
            "laplace_q99_abs_error": lap_q99,
            "saturated": float(self.saturated),
            "clamp_probability": self.clamp_probability,
        }
        if self.noise != "cauchy":  # the light-tailed noises' price: delta (and rho for the zCDP one)
            out.update(delta=self.delta, **({} if self.rho is None else {"rho": self.rho}))
        if self.rmse is not None:
            out.update(rmse=self.rmse, laplace_rmse=self.laplace_rmse)
        if self.released_gini is not None:
            assert self.posterior_interval is not None and self.posterior_hpd is not None  # set with released_gini
            out.update(
                released_gini=self.released_gini,
                posterior_mean=self.posterior_mean,
                posterior_interval_lower=self.posterior_interval[0],
                posterior_interval_upper=self.posterior_interval[1],
                posterior_hpd_lower=self.posterior_hpd[0],
                posterior_hpd_upper=self.posterior_hpd[1],
            )
        if self.published is not None:
            out.update(self.published.numbers())
        return {k: float(v) for k, v in out.items()}

    def error_table(self) -> pd.DataFrame:
        """Error summary of the two mechanisms (median, 90% and 99% absolute error; RMSE when gamma > 3)."""
        table = pd.DataFrame(
            {
                "mechanism": ["smooth sensitivity (this page)", "Laplace, global sensitivity"],
                "median |error|": [self.abs_error_quantiles[0], self.laplace_abs_error_quantiles[0]],
                "90% of errors below": [self.abs_error_quantiles[1], self.laplace_abs_error_quantiles[1]],
                "99% of errors below": [self.abs_error_quantiles[2], self.laplace_abs_error_quantiles[2]],
            }
        )
        if self.rmse is not None:
            table["RMSE"] = [self.rmse, self.laplace_rmse]
        return table

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.numbers())
        if self.plausible_releases is not None:
            out["plausible_releases"] = [float(v) for v in self.plausible_releases]
        return out


def published_gini(
    xs: np.ndarray,
    *,
    epsilon: float,
    lower: float,
    upper: float,
    noise: str,
    gamma: float,
    calibration: str,
    delta: float | None,
    method: str,
    seed: int,
    profile: gini_mechanism.ExactSensitivityProfile | None = None,
) -> PublishedGini:
    """One simulated release of the Gini of the clipped incomes ``xs`` drawn as a real one is, and the interval from
    the published numbers alone.

    Mechanism: :class:`dpcore.mechanisms.GiniIntervalMechanism` at ``epsilon`` (split into epsilon_value for the
    value and epsilon_bound for the DP upper bound on S_beta(X), ln S_beta being beta-sensitive: Lan & Reiter eq. (8)
    and ``dpcore.intervals.gini_bound_release``), the split and beta optimised for n = len(xs) (n is public), drawn
    with the numpy generator of ``seed`` (a simulation of the same law, not a release). S_beta(X) is computed at the
    plan's beta, exactly (``profile``) or by the closed form (``method="fast"``, never smaller). The interval is
    :func:`dpcore.intervals.gini_interval_from_release` at :data:`PUBLISHED_LEVEL` with the record's constants:
    value and bound plus public parameters, nothing confidential."""
    from ..mechanisms import GiniIntervalMechanism

    mech = GiniIntervalMechanism(
        epsilon,
        lower,
        upper,
        noise=noise,
        gamma=gamma,
        calibration=calibration,
        delta=None if noise == "cauchy" else delta,
        level=PUBLISHED_LEVEL,
        planning_n=max(int(xs.size), 2),
    )
    beta = mech.smoothness
    if method == "fast" or profile is None:
        s = gini_mechanism.smooth_sensitivity(xs, lower=lower, upper=upper, beta=beta, method=method).value
    else:
        s = profile.smooth_sensitivity(beta).value
    draw = mech.draw(gini_mechanism.gini(xs), float(s), rng=np.random.default_rng(seed))
    constants = mech.interval_constants()
    ci = intervals_lib.gini_interval_from_release(
        draw.value,
        draw.smooth_sensitivity_upper,
        noise=constants["noise"],
        alpha=constants["release_alpha"],
        bound_scale=constants["bound_scale"],
        eta=constants["eta"],
        level=PUBLISHED_LEVEL,
        method=constants["method"],
        gamma=constants["gamma"],
        sigma=constants["sigma"],
        min_scale=constants["min_scale"],
        max_scale=constants["max_scale"],
    )
    plan = mech.plan
    width, oracle_width = expected_widths(
        plan,
        gini_mechanism.GiniMechanism(
            epsilon, lower, upper, noise=noise, gamma=gamma, calibration=calibration, delta=delta
        ),
    )
    scale = min(max(float(s) / constants["release_alpha"], constants["min_scale"]), constants["max_scale"])
    typical = typical_clipped_width(
        gini_mechanism.gini(xs), scale, plan.quantile() * scale, mech.value_mechanism.noise_law()
    )
    return PublishedGini(
        float(draw.value),
        float(draw.smooth_sensitivity_upper),
        float(ci.lower),
        float(ci.upper),
        PUBLISHED_LEVEL,
        float(plan.epsilon_value),
        float(plan.epsilon_bound),
        float(plan.beta),
        float(plan.eta),
        min(width, 1.0),  # the interval is cut to [0, 1]: no wider than 1, whatever the model says
        min(oracle_width, 1.0),
        int(plan.n),
        float(typical),
    )


def typical_clipped_width(true_gini: float, noise_scale: float, half_width: float, law: Any) -> float:
    """The median width of the published interval [v - h, v + h] cut to [0, 1] (``dpcore.intervals``:
    :func:`gini_interval_from_release`), v = clamp(g + s Z, 0, 1) the published value, at the typical half-width
    h (the bound's noise has median 0): the median over the midpoint quantiles of Z. Never above 1."""
    g, s, law = _published_inputs(true_gini, noise_scale, law)
    h = check_positive(half_width, "half_width", allow_zero=True)
    v = np.clip(g + s * np.asarray(law.ppf(_MIDPOINTS), dtype=float), 0.0, 1.0)
    return float(np.median(np.minimum(v + h, 1.0) - np.maximum(v - h, 0.0)))


def _published_or_note(xs: np.ndarray, **settings: Any) -> dict[str, Any]:
    """``published`` (:func:`published_gini`), or ``published_note`` saying why these public settings have no
    release with an interval (a real release refuses them too, before any draw)."""
    if settings["noise"] not in PUBLISHED_NOISES:
        return {
            "published_note": "this noise has no floating-point-safe sampler, so it is never released and has no "
            "published interval"
        }
    try:
        return {"published": published_gini(xs, **settings)}
    except DPInputError as exc:  # e.g. no split of epsilon with a feasible calibration (the "paper" constants)
        return {"published_note": f"a release with an interval is not possible at these settings ({exc})"}


def expected_widths(
    plan: intervals_lib.GiniIntervalPlan, full_epsilon: gini_mechanism.GiniMechanism
) -> tuple[float, float]:
    """(published, oracle) median widths of the plan's model (public inputs only, no data):
    :attr:`dpcore.intervals.GiniIntervalPlan.model_width` and ``model_oracle_width``.

    A plan rebuilt from the mechanism's file cache of split choices carries no model widths (NaN), so they are
    recomputed here with the optimiser's own model (:func:`dpcore.intervals.optimise_gini_split`, "pivot"): published
    2 q S_typ(beta) / alpha_release, q the pivot's quantile (:meth:`GiniIntervalPlan.quantile`), and oracle
    2 q_Z(level) S_typ(beta_full) / alpha_full for the value alone at the full epsilon (``full_epsilon``'s
    calibration), S_typ = :func:`dpcore.intervals.planning_smooth_sensitivity` at the plan's n. A test checks both
    against the optimiser's numbers."""
    if math.isfinite(plan.model_width) and math.isfinite(plan.model_oracle_width):
        return float(plan.model_width), float(plan.model_oracle_width)
    if plan.method != "pivot":
        fresh = intervals_lib.optimise_gini_split(
            plan.epsilon,
            plan.delta or None,
            plan.noise,
            plan.n,
            plan.lower,
            plan.upper,
            plan.level,
            method=plan.method,
            gamma=plan.gamma,
        )
        return float(fresh.model_width), float(fresh.model_oracle_width)
    s_typ = intervals_lib.planning_smooth_sensitivity(plan.n, plan.lower, plan.upper, plan.beta)
    width = 2.0 * plan.quantile() * s_typ / plan.release_alpha
    cal = full_epsilon.smooth_calibration
    q_full = float(np.asarray(full_epsilon.noise_law().ppf(0.5 + 0.5 * plan.level), dtype=float))
    oracle = (
        2.0 * q_full * intervals_lib.planning_smooth_sensitivity(plan.n, plan.lower, plan.upper, cal.beta) / cal.alpha
    )
    return float(width), float(oracle)


def _check_prior(prior: Any) -> Any:
    if prior == "uniform":
        return "uniform"
    if isinstance(prior, (tuple, list)) and len(prior) == 3 and prior[0] == "beta":
        return ("beta", check_finite(prior[1], "prior a"), check_finite(prior[2], "prior b"))
    raise DPInputError(f"prior must be 'uniform' or ('beta', a, b), got {prior!r}")


def gini_view(
    values: Any,
    *,
    epsilon: float,
    gamma: float,
    lower: float,
    upper: float | None,
    upper_epsilon: float = 0.0,
    calibration: str = "tight",
    method: str = "exact",
    n: int | None = None,
    prior: Any = "uniform",
    seed: int = 2026,
    noise: str = "cauchy",
    delta: float | None = None,
) -> GiniView:
    """The Gini page's view for one setting: the smooth-sensitivity mechanism of Lan & Reiter (2025)
    on ``values`` (a fixed random sub-sample of ``n`` records), its exact error quantiles next to the
    Laplace global-sensitivity baseline, the smooth-sensitivity curves (eq. (8)), the error against
    epsilon, and, unless the noise swamps the Gini, simulated releases, the quantile dot plot and one
    release with its posterior (eq. (11), noise scale treated as known as in the paper).

    Neighbouring relation: replace one record; n, L, U (or U's DP estimate), epsilon and gamma public.
    ``upper=None`` estimates U with DP (Section 5.1, :func:`dpcore.bounds.dp_upper_bound`, epsilon
    ``upper_epsilon`` split equally between the noisy n and the counts, seed + 11); its epsilon is
    added to the total. Incomes below L (and losses) are raised to L, those above U clipped to U.
    Draws: simulated releases with ``seed + 2``, the one release with ``seed + 3``.

    ``noise``: a ``dpcore.noise.smooth.SMOOTH_NOISES`` name, as ``noise=`` of
    :func:`dpcore.gini.release_gini`: "cauchy" (default, the paper's, pure epsilon), "laplace"
    ((epsilon, delta), NRS) or "laplace_lognormal" (rho-zCDP implying (epsilon, delta), Bun & Steinke);
    ``delta`` defaults to 1e-6 for the last two. Every number follows the chosen noise: the error
    quantiles, the RMSE (the light-tailed noises have one), the simulated releases, the dots, the one
    release and its posterior (that noise's density), and the error-against-epsilon curve.
    """
    epsilon = check_epsilon(epsilon)
    gamma = _check_gamma(gamma)
    noise = smooth_noise.check_noise(noise)
    if calibration not in CALIBRATIONS:
        raise DPInputError(f"calibration must be 'tight' or 'paper', got {calibration!r}")
    method = _check_method(method)
    prior = _check_prior(prior)
    seed = check_int(seed, "seed", minimum=0)
    x = as_finite_array(values, "incomes", min_size=0)
    if x.size < 2:
        raise DPInputError(
            f"Cannot compute the Gini index: the data have {x.size} record(s); at least n = 2 are needed."
        )
    x = subsample(x, x.size if n is None else n)
    lower = check_finite(lower, "lower bound L")
    upper_epsilon = float(upper_epsilon)
    if upper is None:
        from ..bounds import dp_upper_bound  # released with DP; charged to the budget

        upper_epsilon = check_epsilon(upper_epsilon, "upper_epsilon")
        res = dp_upper_bound(
            x,
            epsilon_n=upper_epsilon / 2,
            epsilon_count=upper_epsilon / 2,
            lower=lower,
            rng=np.random.default_rng(seed + SEED_OFFSET_UPPER),
        )
        upper, upper_epsilon = float(res.upper), float(res.epsilon)
    else:
        upper, upper_epsilon = check_finite(upper, "upper bound U"), 0.0
    if not upper > lower:
        raise DPInputError(f"the upper bound U = {upper:,.6g} must be above the lower bound L = {lower:,.6g}")
    n_negative = int((x < 0).sum())
    xs, n_below, n_above = gini_mechanism.clip_incomes(x, lower=lower, upper=upper, clip_negative=True)
    mech = gini_mechanism.GiniMechanism(
        epsilon, lower, upper, noise=noise, gamma=gamma, calibration=calibration, delta=delta
    )
    cal = mech.smooth_calibration
    law = mech.noise_law()
    true_g = gini_mechanism.gini(xs)
    fast = gini_mechanism.smooth_sensitivity(xs, lower=lower, upper=upper, beta=cal.beta, method="fast")
    # The exact curve for the chart, over the same k range as the fast one. Forcing k = 0..k_max
    # disables pruning (O(n) per k), so k_max is capped on big data; the value S(X) is the maximum
    # over all k whatever k_max, so this one call also serves as the exact bound itself.
    # A^(k) does not depend on epsilon: it comes from the data set's shared profile (same numbers).
    profile, curves = _profile_and_curves(xs, lower, upper)
    exact = None
    if xs.size <= 200_000:
        chart_k = 100 if xs.size <= 50_000 else 25
        profile.exact_a(min(chart_k, xs.size - 1))  # the chart's A^(k) at once (the first view of a data set pays)
        exact = profile.smooth_sensitivity(cal.beta, k_max=min(fast.A.size - 1, chart_k))
    if method == "fast":
        ss = fast
    else:
        ss = exact if exact is not None else profile.smooth_sensitivity(cal.beta)
    scale = mech.noise_scale(ss.value)
    summary = _law_summary(scale, gamma, law, noise, true_g)
    errors = (summary[_COLS[0]], summary[_COLS[1]], summary[_COLS[2]])  # of the published value, clamped to [0, 1]
    lap_scale = ss.global_sensitivity / epsilon
    lap_summary = _laplace_summary(lap_scale, true_g)
    lap_errors = (
        lap_summary[f"laplace_{_COLS[0]}"],
        lap_summary[f"laplace_{_COLS[1]}"],
        lap_summary[f"laplace_{_COLS[2]}"],
    )
    # saturated: the noise's own median reaches half the Gini's range (the published errors, clamped, never do)
    saturated = bool(ss.saturated or summary["noise_median_abs"] >= 0.5)
    finite_variance = math.isfinite(summary["rmse"])
    curve_key = (gamma, calibration, noise, delta)  # the curve does not depend on epsilon: once per data set
    if curve_key not in curves:
        curves[curve_key] = error_vs_epsilon(
            xs,
            lower=lower,
            upper=upper,
            gamma=gamma,
            epsilons=CURVE_EPSILONS,
            method="fast",
            calibrations=(calibration,),
            noise=noise,
            delta=delta,
        )
    error_curve = curves[curve_key].copy()

    def curve(result: Any) -> pd.DataFrame:
        return pd.DataFrame({"k": np.arange(result.A.size), "A": result.A, "decay": result.decay})

    extra: dict[str, Any] = {}
    if not saturated:
        # every release as it would be published: clamped to [0, 1] (dpcore.noise.secure.publish_gini)
        sim_rng = np.random.default_rng(seed + SEED_OFFSET_RELEASES)
        releases = np.clip(mech.simulate(true_g, scale, N_SIMULATED_RELEASES, sim_rng), 0.0, 1.0)
        laplace_releases = np.clip(true_g + sim_rng.laplace(0.0, lap_scale, N_SIMULATED_RELEASES), 0.0, 1.0)
        one = mech.draw(true_g, ss.value, rng=np.random.default_rng(seed + SEED_OFFSET_ONE_RELEASE))
        from ..posterior import gini_posterior

        # the oracle's likelihood is the noise density at the noisy value (a DP output too), not at the clamped one
        post = gini_posterior(
            one.noisy_value, noise_scale=scale, gamma=gamma, prior=prior, noise=None if noise == "cauchy" else law
        )
        dots = (
            plausible_releases(true_g, scale, gamma, N_DOTS)
            if noise == "cauchy"
            else plausible_releases(true_g, scale, gamma, N_DOTS, noise_law=law)
        )
        extra = dict(
            simulated_releases=releases,
            simulated_laplace_releases=laplace_releases,
            plausible_releases=np.clip(dots, 0.0, 1.0),
            released_gini=float(one.value),
            released_clamped=bool(one.value != one.noisy_value and one.value in (0.0, 1.0)),
            posterior_grid=post.grid,
            posterior_density=post.density,
            posterior_mean=float(post.mean),
            posterior_interval=tuple(float(v) for v in post.interval(POSTERIOR_LEVEL)),
            posterior_hpd=tuple(float(v) for v in post.interval(POSTERIOR_LEVEL, kind="hpd")),
        )
    extra.update(
        _published_or_note(
            xs,
            epsilon=epsilon,
            lower=lower,
            upper=upper,
            noise=noise,
            gamma=gamma,
            calibration=calibration,
            delta=delta,
            method=method,
            seed=seed + SEED_OFFSET_ONE_RELEASE,
            profile=profile,
        )
    )
    return GiniView(
        n=int(xs.size),
        epsilon=epsilon,
        gamma=gamma,
        lower=lower,
        upper=upper,
        upper_epsilon=upper_epsilon,
        total_epsilon=epsilon + upper_epsilon,
        calibration=calibration,
        method=method,
        confidential_n_negative=n_negative,
        confidential_n_below=int(n_below),
        confidential_n_above=int(n_above),
        true_gini=float(true_g),
        smooth_sensitivity=float(ss.value),
        k_star=int(ss.k_star),
        sensitivity_saturated=bool(ss.saturated),
        global_sensitivity=float(ss.global_sensitivity),
        alpha=float(cal.alpha),
        beta=float(cal.beta),
        noise_scale=float(scale),
        abs_error_quantiles=errors,
        laplace_scale=float(lap_scale),
        laplace_abs_error_quantiles=lap_errors,
        rmse=summary["rmse"] if finite_variance else None,
        laplace_rmse=lap_summary["laplace_rmse"] if finite_variance else None,
        clamp_probability=clamp_probability(true_g, scale, GeneralizedCauchy(gamma) if noise == "cauchy" else law),
        saturated=saturated,
        fast_curve=curve(fast),
        exact_curve=None if exact is None else curve(exact),
        fast_k_star=int(fast.k_star),
        exact_k_star=None if exact is None else int(exact.k_star),
        error_curve=error_curve,
        prior=prior,
        noise=noise,
        delta=float(cal.delta),
        rho=None if cal.rho is None else float(cal.rho),
        privacy_statement=cal.statement(),
        **extra,
    )
