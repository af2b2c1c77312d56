"""The Gini page's error against epsilon and the paper's experiments (Lan & Reiter 2025, Section 5: Figures 1, 3
and 4). Planning simulations: they use the confidential true Gini."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ... import gini as gini_mechanism
from ...data import two_point_incomes
from ...noise import GeneralizedCauchy, smooth_noise_calibration
from ...noise import smooth as smooth_noise
from ...validation import DPInputError, as_generator, check_epsilon, check_finite, check_gamma, check_int
from .errors import (
    CALIBRATIONS,
    COLUMNS,
    ExperimentResult,
    ProgressFn,
    check_calibrations,
    check_epsilons,
    empirical_summary,
    published_abs_error_quantiles,
    published_rmse,
    summary_row,
    tick,
)

FIG1_EPSILONS: tuple[float, ...] = (0.25, 0.5, 1.0, 1.5, 2.0)
FIG3_GINIS: tuple[float, ...] = (0.2, 0.5, 0.7)
FIG3_NS: tuple[int, ...] = (10_000, 100_000, 1_000_000)
FIG3_EPSILONS: tuple[float, ...] = (0.5, 1.0, 2.0)
FIG4_IQS: tuple[float, ...] = (2, 3, 4, 5, 7.5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100)
FIG4_EPSILONS: tuple[float, ...] = (0.5, 1.0, 2.0)
#: Section 5.1: epsilon spent on the DP upper bound (0.075 for the noisy n + 0.075 for the counts).
PAPER_UPPER_EPSILON = 0.15
#: Section 5.1: U = 2.5 x the DP estimate of the maximum.
PAPER_UPPER_INFLATION = 2.5


# ---------------------------------------------------------------------------------------------
# Error against epsilon for one data set (the page's live chart)
# ---------------------------------------------------------------------------------------------


def law_summary(scale: float, gamma: float, law: Any, noise: str, true_gini: float) -> dict[str, float]:
    """The published Gini's exact median/q90/q99 absolute error and its RMSE (inf for a noise without a variance:
    the Cauchy with gamma <= 3, whose pages show quantiles instead) for one registry noise; the error of the value
    clamped to [0, 1] (:func:`published_abs_error_quantiles`). ``noise_median_abs``: the noise's own median |s Z|
    (a release is saturated when it is half the Gini's range)."""
    law = GeneralizedCauchy(gamma) if noise == "cauchy" else law
    qs = published_abs_error_quantiles(true_gini, scale, law)
    variance = GeneralizedCauchy(gamma).variance if noise == "cauchy" else float(law.variance)
    rmse = published_rmse(true_gini, scale, law) if math.isfinite(variance) else math.inf
    noise_median = float(scale * np.asarray(law.ppf(0.75), dtype=float))
    return {**dict(zip(COLUMNS, map(float, qs), strict=True)), "rmse": rmse, "noise_median_abs": noise_median}


def laplace_summary(scale: float, true_gini: float) -> dict[str, float]:
    """The published Gini's errors under the Laplace global-sensitivity baseline (clamped to [0, 1] as every
    published Gini): median/q90/q99 and RMSE."""
    law = smooth_noise.LaplaceNoise()
    qs = published_abs_error_quantiles(true_gini, scale, law)
    return {
        **{f"laplace_{c}": float(v) for c, v in zip(COLUMNS, qs, strict=True)},
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
    gamma = check_gamma(gamma)
    noise = smooth_noise.check_noise(noise)
    eps_list = check_epsilons(epsilons)
    cals = check_calibrations(calibrations)
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
            summary = law_summary(scale, gamma, smooth_noise.noise_distribution(cal), noise, true_gini)
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
                    **laplace_summary(lap_scale, true_gini),
                }
            )
        tick(progress, i + 1, total, f"epsilon = {eps:g}")
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# Figure 1: an income file, epsilon in {0.25, ..., 2}, U public or estimated with DP
# ---------------------------------------------------------------------------------------------


def _dp_upper(values: np.ndarray, epsilon_u: float, rng: np.random.Generator) -> float:
    """One run of the paper's DP upper bound (Section 5.1, :func:`dpcore.bounds.dp_upper_bound`):
    epsilon_u split equally between the noisy n and the noisy counts (0.075 + 0.075 in the paper),
    L = 0, U = 2.5 x the AboveThreshold estimate. Returns U."""
    from ...bounds import dp_upper_bound

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
    gamma = check_gamma(gamma)
    eps_list = check_epsilons(epsilons)
    cals = check_calibrations(calibrations)
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
            tick(progress, done, total, f"epsilon = {eps:g}: U {b + 1}/{n_blocks}")
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
                    **empirical_summary(err),
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


def check_method(method: str) -> str:
    if method not in ("exact", "fast"):
        raise DPInputError(f"method must be 'exact' or 'fast', got {method!r}")
    return method


@dataclass(frozen=True)
class TwoPointErrorSettings:
    """How Figures 3 and 4 measure the error of the released Gini on two-point data (their shared settings,
    checked when built): the noise's ``gamma``, the ``calibrations`` compared, the smooth sensitivity's
    ``method`` ("fast": the closed form in IQ; "exact": computed on the records) and ``n_draws``, the number of
    simulated releases behind the ``sim_*`` columns."""

    gamma: float = 2.0
    calibrations: Sequence[str] = CALIBRATIONS
    method: str = "fast"
    n_draws: int = 100_000

    def __post_init__(self) -> None:
        object.__setattr__(self, "gamma", check_gamma(self.gamma))
        object.__setattr__(self, "calibrations", check_calibrations(self.calibrations))
        object.__setattr__(self, "method", check_method(self.method))
        object.__setattr__(self, "n_draws", check_int(self.n_draws, "n_draws", minimum=1, maximum=10_000_000))

    def abs_noise(self, gen: np.random.Generator) -> np.ndarray:
        """``n_draws`` draws of |Z|, Z of the unit generalized Cauchy: every configuration's simulated errors are its
        scale times these (common random numbers across configurations)."""
        return np.abs(GeneralizedCauchy(self.gamma).rvs(self.n_draws, gen))

    def params(self) -> dict[str, Any]:
        return {"gamma": self.gamma, "calibrations": self.calibrations, "method": self.method, "n_draws": self.n_draws}


def figure3(
    *,
    ginis: Sequence[float] = FIG3_GINIS,
    ns: Sequence[int] = FIG3_NS,
    epsilons: Sequence[float] = FIG3_EPSILONS,
    rng: Any = None,
    progress: ProgressFn | None = None,
    **settings: Any,
) -> ExperimentResult:
    """Figure 3: |released - g| for each (g, n, epsilon, calibration) at the minimal IQ (Prop. 5.1).

    Table: g, n, epsilon, calibration, iq, lower, upper (mean = 1), smooth_sensitivity,
    noise_scale, exact median/q90/q99 abs error, rmse, and the same quantiles from ``n_draws``
    simulated releases (``sim_*``, plus ``max_abs_error``, the paper's "largest errors").
    ``draws``: up to 2000 simulated abs errors per configuration, floored at 1e-6 as in the
    paper's log axis (``log10_abs_error``). ``settings``: the fields of :class:`TwoPointErrorSettings` (gamma,
    calibrations, method, n_draws).
    """
    run = TwoPointErrorSettings(**settings)
    gamma, cals, method, n_draws = run.gamma, tuple(run.calibrations), run.method, run.n_draws
    eps_list = check_epsilons(epsilons)
    g_list = [check_finite(g, "g") for g in ginis]
    n_list = [check_int(n, "n", minimum=2) for n in ns]
    gen = as_generator(rng)
    z = run.abs_noise(gen)
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
                            **summary_row(scale, gamma),
                            **empirical_summary(err),
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
                tick(progress, done, total, f"g = {g:g}, n = {n:,}, epsilon = {eps:g}")
    notes = (
        "Two-point data with the smallest normalised range IQ = (U - L)/mean that the Gini allows "
        "(Proposition 5.1): the most favourable data for this mechanism.",
    )
    params = dict(ginis=tuple(g_list), ns=tuple(n_list), epsilons=eps_list, **run.params())
    return ExperimentResult("figure3", pd.DataFrame(rows), params, pd.concat(draws, ignore_index=True), notes)


def figure4(
    *,
    iqs: Sequence[float] = FIG4_IQS,
    g: float = 0.5,
    n: int = 100_000,
    epsilons: Sequence[float] = FIG4_EPSILONS,
    rng: Any = None,
    progress: ProgressFn | None = None,
    **settings: Any,
) -> ExperimentResult:
    """Figure 4: error against the normalised range IQ (2..100) at g = 0.5, n = 1e5.

    Data: two-point records with Gini ``g`` whose bounds span ``iq`` means
    (:func:`dpcore.data.two_point_incomes`; an ``iq`` below the Prop. 5.1 minimum is refused).
    Table as in :func:`figure3`, one row per (iq, epsilon, calibration). ``rmse`` is exact and
    finite only for gamma > 3; ``empirical_rmse`` is the paper's sample RMSE (for gamma <= 3 it
    does not converge: more draws, larger value). ``settings``: as in :func:`figure3`.
    """
    run = TwoPointErrorSettings(**settings)
    gamma, cals, method = run.gamma, tuple(run.calibrations), run.method
    eps_list = check_epsilons(epsilons)
    iq_list = [check_finite(v, "iq") for v in iqs]
    g = check_finite(g, "g")
    n = check_int(n, "n", minimum=2)
    gen = as_generator(rng)
    z = run.abs_noise(gen)
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
                        **summary_row(scale, gamma),
                        **empirical_summary(scale * z),
                    }
                )
            done += 1
            tick(progress, done, total, f"IQ = {iq:g}, epsilon = {eps:g}")
    notes = []
    if gamma <= 3:
        notes.append(
            f"gamma = {gamma:g} <= 3: the noise has infinite variance, so the RMSE does not exist. "
            "We show the 90% absolute error instead (the paper's sample RMSE keeps growing with more draws)."
        )
    params = dict(iqs=tuple(iq_list), g=g, n=n, epsilons=eps_list, **run.params())
    return ExperimentResult("figure4", pd.DataFrame(rows), params, None, tuple(notes))
