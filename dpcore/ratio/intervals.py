"""Confidence intervals for RR = p_x / p_y (Katz eq. (2)-(3), Theorem 4.2, Theorem 4.5) and their coverage under
binomial sampling plus the privacy noise (Figure 3, Appendix D.2)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validation import DPInputError, as_generator, check_epsilon, check_finite, check_positive, check_probability
from .counts import (
    check_binomial_design,
    check_count,
    check_level,
    check_mechanism,
    count_noise,
    draw_count_noise,
    monte_carlo_se,
    normal_quantile,
)


@dataclass(frozen=True)
class RRInterval:
    """A confidence interval for RR = p_x / p_y with the pieces of its standard error."""

    estimate: float
    lower: float
    upper: float
    level: float
    method: str  # "katz" | "normal" (Thm 4.2) | "conservative" (Thm 4.5)
    se: float  # standard error used (log scale for Katz)
    se_sampling: float  # the sampling part alone
    privacy_share: float  # share of the variance that comes from the privacy noise (0 for Thm 4.2)
    noise_variance: tuple[float, float]
    n_x: int
    n_y: int

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def __iter__(self):
        """Unpacks as ``lower, upper = rr_confidence_interval(...)``."""
        return iter((self.lower, self.upper))


def _var_pair(noise_variance: Any) -> tuple[float, float]:
    if isinstance(noise_variance, (tuple, list, np.ndarray)):
        if len(noise_variance) != 2:
            raise DPInputError("noise_variance must be one number or a pair (var_x, var_y)")
        vx, vy = noise_variance
    else:
        vx = vy = noise_variance
    return (
        check_positive(vx, "noise_variance", allow_zero=True),
        check_positive(vy, "noise_variance", allow_zero=True),
    )


def _rr_normal(xn: np.ndarray, yn: np.ndarray, n_x: float, n_y: float, var_x: float, var_y: float):
    """Vectorised Theorem 4.2 / 4.5 pieces: estimate, sampling variance, privacy variance.

    sigma~^2 = RR~^2 ( (1-p~x)/(n_x p~x) + (1-p~y)/(n_y p~y) ), with p~(1-p~) treated as 0 when
    p~ > 1 (spec §4); privacy term RR~^2 (var_x / x~^2 + var_y / y~^2) (Theorem 4.5)."""
    est = (xn / n_x) / (yn / n_y)
    rel_samp = np.maximum(1.0 / xn - 1.0 / n_x, 0.0) + np.maximum(1.0 / yn - 1.0 / n_y, 0.0)
    rel_priv = var_x / xn**2 + var_y / yn**2
    return est, est**2 * rel_samp, est**2 * rel_priv


def _noisy_count_checks(x_noisy: Any, y_noisy: Any, clip: bool) -> tuple[float, float]:
    xn = check_finite(x_noisy, "x_noisy")
    yn = check_finite(y_noisy, "y_noisy")
    for v, name in ((xn, "x_noisy"), (yn, "y_noisy")):
        if v <= 0 and not clip:
            raise DPInputError(
                f"{name} = {v:g} is <= 0: the relative risk and its normal-approximation interval are not "
                "defined for a zero or negative count. Use more data or a larger epsilon, or pass clip=True to "
                "apply the paper's convention max(count, 1) (the interval is then very unreliable)."
            )
    if clip:
        xn, yn = max(xn, 1.0), max(yn, 1.0)
    return xn, yn


def rr_confidence_interval(
    x_noisy: Any,
    y_noisy: Any,
    n_x: Any,
    n_y: Any,
    *,
    level: float = 0.95,
    noise_variance: Any = 0.0,
    clip: bool = False,
) -> RRInterval:
    """Interval for RR = p_x/p_y from (noisy) counts: Theorem 4.2, or Theorem 4.5 when noise_variance > 0.

    RR~ = (x~/n_x)/(y~/n_y), interval RR~ +- z_{(1+level)/2} sigma, with
    sigma^2 = RR~^2 (1/x~ - 1/n_x + 1/y~ - 1/n_y) + RR~^2 (var_x/x~^2 + var_y/y~^2).
    ``noise_variance`` is the per-count noise variance (one number or a pair): 0 gives Theorem 4.2
    (valid asymptotically, ignores the noise); 8/eps^2 gives the conservative Laplace interval,
    sigma^2 of the calibrated Gaussian the conservative Gaussian one (Theorem 4.5).
    Post-processing of the released counts: no extra privacy cost. n_x, n_y are public.
    Worked example (spec §9): (60, 40, 100, 100) -> Thm 4.2 [1.06725, 1.93275]; with
    noise_variance=8 -> [1.00031, 1.99969]. The lower end is not truncated at 0.
    Zero or negative noisy counts raise DPInputError unless ``clip=True`` (then max(count, 1)).
    """
    n_x = check_count(n_x, "n_x", minimum=1)
    n_y = check_count(n_y, "n_y", minimum=1)
    level = check_level(level)
    vx, vy = _var_pair(noise_variance)
    xn, yn = _noisy_count_checks(x_noisy, y_noisy, clip)
    est, v_s, v_p = (float(v) for v in _rr_normal(np.array(xn), np.array(yn), n_x, n_y, vx, vy))
    se = math.sqrt(v_s + v_p)
    z = normal_quantile(level)
    total = v_s + v_p
    return RRInterval(
        est,
        est - z * se,
        est + z * se,
        level,
        "conservative" if (vx or vy) else "normal",
        se,
        math.sqrt(v_s),
        (v_p / total) if total > 0 else 0.0,
        (vx, vy),
        n_x,
        n_y,
    )


def katz_interval(x: Any, y: Any, n_x: Any, n_y: Any, *, level: float = 0.95) -> RRInterval:
    """Katz et al. (1978) log interval, equations (2)-(3): RR^ exp(+- z sqrt(1/x - 1/n_x + 1/y - 1/n_y)).

    Classic non-private interval on true counts (x, y >= 1 needed for the log). Worked example
    (spec §9): (60, 40, 100, 100) -> [1.12408, 2.00163].
    """
    n_x = check_count(n_x, "n_x", minimum=1)
    n_y = check_count(n_y, "n_y", minimum=1)
    xv = check_finite(x, "x")
    yv = check_finite(y, "y")
    if xv <= 0 or yv <= 0:
        raise DPInputError("Katz's interval needs both counts >= 1 (it uses log x and log y)")
    if xv > n_x or yv > n_y:
        raise DPInputError(f"counts cannot exceed their group sizes (x={xv:g} of n_x={n_x}, y={yv:g} of n_y={n_y})")
    level = check_level(level)
    est = (xv / n_x) / (yv / n_y)
    se = math.sqrt(max(1 / xv - 1 / n_x + 1 / yv - 1 / n_y, 0.0))
    z = normal_quantile(level)
    return RRInterval(
        est, est * math.exp(-z * se), est * math.exp(z * se), level, "katz", se, se, 0.0, (0.0, 0.0), n_x, n_y
    )


@dataclass(frozen=True)
class CoverageResult:
    """Empirical coverage of an RR interval under X ~ Bin(n_x, p_x), Y ~ Bin(n_y, p_y) plus noise."""

    coverage: float
    mean_width: float
    se: float  # Monte Carlo standard error of ``coverage``
    n_sims: int
    p_x: float
    p_y: float
    n_x: int
    n_y: int
    epsilon: float
    mechanism: str
    conservative: bool
    delta: float | None
    level: float
    interval: str
    noise_variance: float
    mean_privacy_share: float  # mean share of the interval variance due to privacy (Section 4.2)


def _binomial_rows(rng: np.random.Generator, n: int, p: np.ndarray, n_sims: int) -> np.ndarray:
    """Row i ~ Bin(n, p[i]) iid; one call per distinct p (numpy's sampler is much faster for a scalar p)."""
    out = np.empty((p.shape[0], n_sims))
    for value in np.unique(p):
        rows = np.nonzero(p == value)[0]
        out[rows] = rng.binomial(n, value, size=(rows.size, n_sims))
    return out


def _simulate_intervals(
    p_x: np.ndarray,
    p_y: np.ndarray,
    n_x: int,
    n_y: int,
    n_sims: int,
    var_noise: float,
    draw: Any,
    conservative: bool,
    z: float,
    interval: str,
    rng: np.random.Generator,
):
    """Vectorised core: rows are (p_x, p_y) cells, columns replications. Noisy counts clipped at 1."""
    m = p_x.shape[0]
    X = _binomial_rows(rng, n_x, p_x, n_sims)
    Y = _binomial_rows(rng, n_y, p_y, n_sims)
    if draw is not None:
        X = X + draw((m, n_sims))
        Y = Y + draw((m, n_sims))
    X = np.maximum(X, 1.0)
    Y = np.maximum(Y, 1.0)
    rr = (p_x / p_y)[:, None]
    if interval == "katz":
        est = (X / n_x) / (Y / n_y)
        se = np.sqrt(np.maximum(1 / X - 1 / n_x + 1 / Y - 1 / n_y, 0.0))
        lo, hi = est * np.exp(-z * se), est * np.exp(z * se)
        share = np.zeros(m)
    else:
        v = var_noise if conservative else 0.0
        est, v_s, v_p = _rr_normal(X, Y, n_x, n_y, v, v)
        se = np.sqrt(v_s + v_p)
        lo, hi = est - z * se, est + z * se
        tot = v_s + v_p
        with np.errstate(invalid="ignore", divide="ignore"):
            share_all = np.where(
                tot > 0,
                var_noise * est**2 * (1 / X**2 + 1 / Y**2) / (v_s + var_noise * est**2 * (1 / X**2 + 1 / Y**2)),
                0.0,
            )
        share = share_all.mean(axis=1) if var_noise > 0 else np.zeros(m)
    cover = (lo <= rr) & (rr <= hi)
    return cover.mean(axis=1), (hi - lo).mean(axis=1), share


def _coverage_setup(epsilon: Any, mechanism: Any, delta: Any, conservative: Any, interval: Any):
    m = check_mechanism(mechanism, allow_none=True)
    if interval not in ("normal", "katz"):
        raise DPInputError(f"interval must be 'normal' (Theorems 4.2/4.5) or 'katz'; got {interval!r}")
    if not isinstance(conservative, (bool, np.bool_)):
        raise TypeError("conservative must be True or False")
    if conservative and interval == "katz":
        raise DPInputError("the conservative correction (Theorem 4.5) is defined for the normal interval, not Katz's")
    if m == "none":
        eps = check_epsilon(epsilon)
        return m, eps, None, 0.0, None
    cn = count_noise(epsilon, mechanism=m, delta=delta)
    return m, cn.epsilon, cn.delta, cn.variance, cn


def simulate_rr_coverage(
    p_x: float,
    p_y: float,
    n_x: Any,
    n_y: Any,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    conservative: bool = False,
    delta: float | None = None,
    n_sims: int = 10_000,
    level: float = 0.95,
    rng: Any = None,
    interval: str = "normal",
) -> CoverageResult:
    """Monte Carlo coverage and mean width of an RR interval (Figure 3 / Appendix D.2 design).

    Model (equation (1)): X ~ Bin(n_x, p_x), Y ~ Bin(n_y, p_y) independent; the counts get the
    noise of :func:`count_noise` (mechanism "laplace", "gaussian" with ``delta``, or "none");
    noisy counts are clipped at 1 (spec §4). ``interval="normal"`` is Theorem 4.2, or Theorem 4.5
    with ``conservative=True`` (adds the per-count noise variance); ``interval="katz"`` is the
    classic log interval on the (noisy, clipped) counts. Returns coverage, mean width, and the
    Monte Carlo standard error sqrt(c (1-c) / n_sims).
    """
    p_x, p_y, n_x, n_y, n_sims = check_binomial_design(p_x, p_y, n_x, n_y, n_sims)
    level = check_level(level)
    m, eps, dlt, var, cn = _coverage_setup(epsilon, mechanism, delta, conservative, interval)
    gen = as_generator(rng)
    draw = None if cn is None else (lambda size: draw_count_noise(cn, size, gen))
    cov, width, share = _simulate_intervals(
        np.array([p_x]),
        np.array([p_y]),
        n_x,
        n_y,
        n_sims,
        var,
        draw,
        bool(conservative),
        normal_quantile(level),
        interval,
        gen,
    )
    c = float(cov[0])
    return CoverageResult(
        c,
        float(width[0]),
        float(monte_carlo_se(c, n_sims)),
        n_sims,
        p_x,
        p_y,
        n_x,
        n_y,
        eps,
        m,
        bool(conservative),
        dlt,
        level,
        interval,
        var,
        float(share[0]),
    )


@dataclass(frozen=True)
class RRSampling:
    """Simulated sampling distributions of the non-private and the private RR (same binomial draws)."""

    nonprivate: np.ndarray  # (X/n_x) / (max(Y, 1)/n_y)
    private: np.ndarray  # (max(X~, 1)/n_x) / (max(Y~, 1)/n_y)
    true_rr: float
    noise_variance: float


def simulate_rr_sampling(
    p_x: float,
    p_y: float,
    n_x: Any,
    n_y: Any,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    delta: float | None = None,
    n_sims: int = 20_000,
    rng: Any = None,
) -> RRSampling:
    """Draw X ~ Bin(n_x, p_x), Y ~ Bin(n_y, p_y) and their noisy versions (:func:`count_noise`), and
    return both RR estimates per draw: how much spread privacy adds on top of sampling."""
    p_x, p_y, n_x, n_y, n_sims = check_binomial_design(p_x, p_y, n_x, n_y, n_sims)
    cn = count_noise(epsilon, mechanism=mechanism, delta=delta)
    gen = as_generator(rng)
    X = gen.binomial(n_x, p_x, n_sims).astype(float)
    Y = gen.binomial(n_y, p_y, n_sims).astype(float)
    nonpriv = (X / n_x) / (np.maximum(Y, 1.0) / n_y)
    Xn = np.maximum(X + draw_count_noise(cn, n_sims, gen), 1.0)
    Yn = np.maximum(Y + draw_count_noise(cn, n_sims, gen), 1.0)
    return RRSampling(nonpriv, (Xn / n_x) / (Yn / n_y), p_x / p_y, cn.variance)


@dataclass(frozen=True)
class CoverageGrid:
    """Coverage and mean width over a grid: rows p_x, columns p_y (the paper's Appendix D.2 layout)."""

    p_values: tuple[float, ...]
    coverage: np.ndarray
    mean_width: np.ndarray
    se: np.ndarray
    n_sims: int
    n_x: int
    n_y: int
    epsilon: float
    mechanism: str
    conservative: bool
    delta: float | None
    level: float
    interval: str


def coverage_grid(
    p_values: Sequence[float],
    n_x: Any,
    n_y: Any,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    conservative: bool = False,
    delta: float | None = None,
    n_sims: int = 2_000,
    level: float = 0.95,
    rng: Any = None,
    interval: str = "normal",
) -> CoverageGrid:
    """:func:`simulate_rr_coverage` for every (p_x, p_y) pair of ``p_values`` in one vectorised pass."""
    ps = np.array([check_probability(p, "p") for p in p_values], dtype=float)
    if ps.size == 0:
        raise DPInputError("p_values is empty")
    n_x = check_count(n_x, "n_x", minimum=1)
    n_y = check_count(n_y, "n_y", minimum=1)
    n_sims = check_count(n_sims, "n_sims", minimum=10)
    level = check_level(level)
    m, eps, dlt, var, cn = _coverage_setup(epsilon, mechanism, delta, conservative, interval)
    gen = as_generator(rng)
    draw = None if cn is None else (lambda size: draw_count_noise(cn, size, gen))
    px, py = np.meshgrid(ps, ps, indexing="ij")
    cov, width, _ = _simulate_intervals(
        px.ravel(), py.ravel(), n_x, n_y, n_sims, var, draw, bool(conservative), normal_quantile(level), interval, gen
    )
    shape = (ps.size, ps.size)
    cov = cov.reshape(shape)
    se = monte_carlo_se(cov, n_sims)
    return CoverageGrid(
        tuple(ps.tolist()),
        cov,
        width.reshape(shape),
        se,
        n_sims,
        n_x,
        n_y,
        eps,
        m,
        bool(conservative),
        dlt,
        level,
        interval,
    )
