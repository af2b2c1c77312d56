"""The group-means page's views and the experiments of Rosenblatt, Stoyanovich & Musco (AAAI 2024).

Paper digest: ``../shared/papers/stratification_spec.md``. Mechanisms (the clipped Laplace mean,
the stratified estimator, parity error, the Prop. 9 / Thm. 10 bounds, CoinPress) live in
:mod:`dpcore.stratified` and :mod:`dpcore.coinpress`; this module holds what is built on them:

* the paper's data: group-size presets (Table 3), the New York RACE example, the Gaussian mixture
  of Appendix B with Dirichlet(alpha) group sizes (:func:`gaussian_mixture`);
* vectorised Monte Carlo of many releases of every method on one dataset
  (:func:`simulate_laplace_releases`, :func:`simulate_methods`) and the sweeps behind Figures 2, 3,
  6 and 7 (:func:`synthetic_sweep`, :func:`grouping_sweep`, :func:`real_epsilon_sweep`);
* the light stratified synthesizer (an illustration of the paper's Section 6, not MST/GEM/AIM);
* **one function per page view** (settings + data -> a frozen result with ``.to_dict()``):
  :func:`group_means_view`, :func:`trend_view`, :func:`bounds_view`, :func:`accounting_view`,
  :func:`synthesizer_view`; the page's data comes from :func:`grouped_data` (a recipe of literals).
  The page renders these results and its generated script is the same call plus
  ``print(result.to_dict())``.

Neighbouring relation (every view): replace one person's value, keeping their group; n, the group
labels and sizes, clip range / bound R, the CoinPress prior interval and sigma, and the combination
weights are public. Laplace methods are epsilon-DP; CoinPress methods are rho-zCDP with
rho = epsilon^2 / 2 (the zCDP level epsilon-DP also satisfies). These are planning simulations:
they use the confidential true means and must not be run on a confidential file that will not be
released anyway.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import optimize, special

from .. import noise
from ..coinpress import pure_dp_to_zcdp, simulate_coinpress, zcdp_to_dp
from ..stratified import (
    DEFAULT_GAMMA,
    MAX_GROUPS,
    _check_nk,
    _clipped_group_means,
    _readonly,
    _resolve_weights,
    clip_thresholds,
    group_index,
    parity_error,
    privacy_accounting,
    public_weights,
    split_public_private,
    stratified_mean,
    sum_log_best_case,
    sum_log_expected_dirichlet,
    sum_log_lower_bound,
    sum_log_worst_case,
)
from ..validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
)
from .plain import to_plain

if TYPE_CHECKING:
    from ..planner import GroupMeans

__all__ = [
    # the paper's data and experiments
    "bound_curves",
    "fit_symmetric_dirichlet",
    "NYExample",
    "ny_race_example",
    "NY_RACE_COUNTS",
    "NY_SEX_RACE_COUNTS",
    "PRESETS",
    "preset_counts",
    "sizes_from_proportions",
    "dirichlet_group_sizes",
    "MixtureSample",
    "gaussian_mixture",
    "LaplaceSimulation",
    "simulate_laplace_releases",
    "ChainSynthesis",
    "synthesize_chain",
    "stratified_synthesize",
    "synthetic_parity",
    "synthesizer_sweep",
    "METHODS",
    "GLOBAL_METHODS",
    "MethodsSimulation",
    "simulate_methods",
    "mixture_sigma",
    "synthetic_sweep",
    "grouping_sweep",
    "real_epsilon_sweep",
    # page views
    "ACS_VARIABLES",
    "ACS_GROUPINGS",
    "ACS_CODE_NAMES",
    "SWEEPS",
    "N_SIMS",
    "DELTA",
    "GroupedData",
    "grouped_data",
    "synthetic_groups",
    "acs_groups",
    "column_groups",
    "parity_draws",
    "GroupMeansView",
    "group_means_view",
    "TrendView",
    "trend_view",
    "summarise",
    "BoundsView",
    "bounds_view",
    "AccountingView",
    "accounting_view",
    "SynthesizerView",
    "synthesizer_view",
    "acs_synthesizer_table",
    "acs_labels",
    "SYNTH_COLUMNS",
    "SYNTH_SIZES",
    "SYNTH_EPSILONS",
]


# ---------------------------------------------------------------------------------------------
# Figure 1 and the paper's New York example
# ---------------------------------------------------------------------------------------------


def bound_curves(n: int, k: int, alphas: Any) -> dict[str, np.ndarray]:
    """Figure 1: worst case, Theorem 10 expectation and informal lower bound against alpha."""
    a = np.asarray(alphas, dtype=float)
    return {
        "alpha": a,
        "worst case k ln(n/k) (Prop. 9)": np.full(a.shape, sum_log_worst_case(n, k)),
        "expected, Dirichlet (Thm. 10)": np.asarray(sum_log_expected_dirichlet(n, k, a), dtype=float),
        "informal lower bound k + ln n": np.full(a.shape, sum_log_lower_bound(n, k)),
    }


def fit_symmetric_dirichlet(proportions: Any) -> float:
    """Maximum-likelihood alpha of a symmetric Dirichlet for one observed proportion vector.

    Solves ``k psi(k alpha) - k psi(alpha) + sum_i ln v_i = 0``. The paper's "iterative Monte
    Carlo approach" is unspecified; on the NY RACE vector this MLE gives ~0.26, not 0.13.
    """
    v = as_finite_array(proportions, "proportions", min_size=2)
    if (v <= 0).any():
        raise DPInputError("every proportion must be > 0 to fit a Dirichlet")
    v = v / v.sum()
    k = v.size
    s = float(np.log(v).sum())

    def score(log_a: float) -> float:
        a = math.exp(log_a)
        return k * special.digamma(k * a) - k * special.digamma(a) + s

    if abs(s - k * math.log(1.0 / k)) < 1e-12:
        raise DPInputError("equal proportions: the Dirichlet MLE is alpha = infinity")
    return float(math.exp(optimize.brentq(score, math.log(1e-6), math.log(1e6), xtol=1e-12)))


# Paper Table 3 (ACSEmployment, NY 2018, n = 196,967), digest §5.
#: RACE (RAC1P codes 1..9) counts.
NY_RACE_COUNTS: dict[str, int] = {
    "White": 138474,
    "Black": 24024,
    "American Indian": 508,
    "Alaska Native": 5,
    "AIAN tribes": 244,
    "Asian": 17030,
    "NHPI": 72,
    "Some other race": 10964,
    "Two or more": 5646,
}
#: SEX x RACE counts (k = 18).
NY_SEX_RACE_COUNTS: dict[str, int] = {
    "Female White": 70881,
    "Male White": 67593,
    "Female Black": 12947,
    "Male Black": 11077,
    "Female Asian": 8900,
    "Male Asian": 8130,
    "Female Some other race": 5668,
    "Male Some other race": 5296,
    "Female Two or more": 3026,
    "Male Two or more": 2620,
    "Male American Indian": 277,
    "Female American Indian": 231,
    "Male AIAN tribes": 125,
    "Female AIAN tribes": 119,
    "Male NHPI": 42,
    "Female NHPI": 30,
    "Female Alaska Native": 3,
    "Male Alaska Native": 2,
}
PRESETS: dict[str, dict[str, int]] = {
    "NY RACE (k=9, paper Table 3)": NY_RACE_COUNTS,
    "NY SEX x RACE (k=18, paper Table 3)": NY_SEX_RACE_COUNTS,
}


def preset_counts(name: str) -> dict[str, int]:
    """Group counts of a preset (paper Table 3); see :data:`PRESETS`."""
    if name not in PRESETS:
        raise DPInputError(f"unknown preset {name!r}; choose one of {list(PRESETS)}")
    return dict(PRESETS[name])


@dataclass(frozen=True)
class NYExample:
    """The paper's New York RACE example (§"Practical implications"), recomputed."""

    n: int
    k: int
    alpha: float
    proportions: np.ndarray
    worst: float
    expected: float
    best: float
    lower: float
    actual: float
    improvement: float  # (worst - expected) / (worst - best)
    improvement_actual: float  # (worst - actual) / (worst - best)
    alpha_mle: float
    paper_claim: str = "~80% better than the worst case, relative to the best case (alpha ~ 0.13)"


def ny_race_example(alpha: float = 0.13) -> NYExample:
    """Recompute the NY RACE example: n = 196,967, k = 9, sizes from Table 3.

    We get (worst - expected)/(worst - best) ~ 0.72 at alpha = 0.13 (not the paper's ~0.80), and
    the symmetric-Dirichlet MLE of the real vector is alpha ~ 0.26 (digest §2.11).
    """
    alpha = check_positive(alpha, "alpha")
    counts = np.array(sorted(NY_RACE_COUNTS.values(), reverse=True), dtype=float)
    n, k = int(counts.sum()), counts.size
    worst = sum_log_worst_case(n, k)
    exp_ = float(sum_log_expected_dirichlet(n, k, alpha))
    best = sum_log_best_case(n, k)
    actual = float(np.log(counts).sum())
    return NYExample(
        n=n,
        k=k,
        alpha=alpha,
        proportions=_readonly(counts / n),
        worst=worst,
        expected=exp_,
        best=best,
        lower=sum_log_lower_bound(n, k),
        actual=actual,
        improvement=(worst - exp_) / (worst - best),
        improvement_actual=(worst - actual) / (worst - best),
        alpha_mle=fit_symmetric_dirichlet(counts / n),
    )


# ---------------------------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------------------------


def sizes_from_proportions(proportions: Any, n: int) -> np.ndarray:
    """Integer group sizes ``round(n v_i)``, each >= 1, summing to n (digest §4.5, our rule).

    Rounding: sizes below 1 are raised to 1; the difference to n is taken from (or given to) the
    largest group.
    """
    v = as_finite_array(proportions, "proportions", min_size=1)
    if (v < 0).any() or v.sum() <= 0:
        raise DPInputError("proportions must be >= 0 and not all 0")
    v = v / v.sum()
    k = v.size
    n = check_int(n, "n", minimum=2)
    if n < k:
        raise DPInputError(f"n ({n}) must be at least the number of groups ({k})")
    sizes = np.maximum(np.rint(n * v).astype(np.int64), 1)
    diff = n - int(sizes.sum())
    # move the difference onto the largest groups (never below 1)
    while diff != 0:
        j = int(np.argmax(sizes))
        step = diff if diff > 0 else max(diff, 1 - int(sizes[j]))
        if step == 0:  # pragma: no cover - impossible when n >= k
            raise DPInputError("cannot make group sizes sum to n")
        sizes[j] += step
        diff -= step
    return sizes


def dirichlet_group_sizes(n: int, k: int, alpha: float, rng: Any = None) -> np.ndarray:
    """Group sizes from ``v ~ Dirichlet(alpha, k)`` then :func:`sizes_from_proportions` (digest §4.5)."""
    n, k = _check_nk(n, k)
    alpha = check_positive(alpha, "alpha")
    g = as_generator(rng)
    v = g.dirichlet(np.full(k, alpha))
    if not np.isfinite(v).all() or v.sum() <= 0:  # tiny alpha can underflow to all zeros
        v = np.zeros(k)
        v[g.integers(k)] = 1.0
    return sizes_from_proportions(v + 0.0, n)


@dataclass(frozen=True)
class MixtureSample:
    """A simulated dataset: values, integer group codes 0..k-1, group sizes and the truth."""

    values: np.ndarray
    groups: np.ndarray
    sizes: np.ndarray
    mus: np.ndarray
    sigmas: np.ndarray

    @property
    def k(self) -> int:
        return int(self.sizes.size)


def gaussian_mixture(
    n: int,
    k: int,
    alpha: float,
    rng: Any = None,
    *,
    sizes: Any = None,
    sigma_range: tuple[float, float] = (0.1, 2.0),
    mu_sd: float = 1.0,
) -> MixtureSample:
    """The paper's synthetic model (Appendix B, digest §4.5).

    ``v ~ Dirichlet(alpha, k)``, ``|G_i| = round(n v_i)`` (>= 1, summing to n), ``sigma_i ~
    U(0.1, 2.0)``, ``mu_i ~ N(0, 1)``, group i draws ``N(mu_i, sigma_i)`` with sigma_i a standard
    deviation (our reading). ``sizes`` overrides the Dirichlet draw (e.g. a preset).
    """
    g = as_generator(rng)
    if sizes is None:
        sz = dirichlet_group_sizes(n, k, alpha, g)
    else:
        sz = np.asarray(sizes, dtype=np.int64)
        if sz.ndim != 1 or (sz < 0).any() or sz.sum() < 2:
            raise DPInputError("sizes must be non-negative integers with a total of at least 2")
        k = sz.size
    lo, hi = float(sigma_range[0]), float(sigma_range[1])
    if not 0 < lo <= hi:
        raise DPInputError("sigma_range must satisfy 0 < low <= high")
    mus = g.normal(0.0, check_positive(mu_sd, "mu_sd", allow_zero=True), size=k)
    sig = g.uniform(lo, hi, size=k)
    codes = np.repeat(np.arange(k), sz)
    vals = mus[codes] + sig[codes] * g.standard_normal(codes.size)
    return MixtureSample(
        values=_readonly(vals), groups=_readonly(codes), sizes=_readonly(sz), mus=_readonly(mus), sigmas=_readonly(sig)
    )


# ---------------------------------------------------------------------------------------------
# Vectorised Monte Carlo on one dataset (for the page's error bars)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LaplaceSimulation:
    """``n_sims`` simulated releases on one dataset.

    ``strat_groups`` (n_sims x k), ``strat_overall`` (n_sims): stratified Laplace.
    ``global_overall`` (n_sims): global Laplace (its per-group "estimate" is the same number).
    ``true_groups`` / ``true_overall``: the non-private (unclipped) means.
    """

    labels: tuple
    counts: np.ndarray
    weights: np.ndarray
    true_groups: np.ndarray
    true_overall: float
    strat_groups: np.ndarray
    strat_overall: np.ndarray
    global_overall: np.ndarray
    epsilon: float


def simulate_laplace_releases(
    values: Any,
    groups: Any,
    *,
    epsilon: float,
    clip_range: Any,
    n_sims: int = 200,
    weights: Any = None,
    gamma: float = DEFAULT_GAMMA,
    rng: Any = None,
    max_groups: int = MAX_GROUPS,
) -> LaplaceSimulation:
    """Simulate ``n_sims`` stratified and global Laplace releases (same parameters as
    :func:`stratified_mean` / :func:`clipped_laplace_mean`), vectorised."""
    x = as_finite_array(values, "values", min_size=2)
    epsilon = check_epsilon(epsilon)
    n_sims = check_int(n_sims, "n_sims", minimum=1, maximum=1_000_000)
    gi = group_index(groups, max_groups=max_groups)
    if gi.codes.size != x.size:
        raise DPInputError("values and groups must have the same length")
    w, _ = _resolve_weights(weights, gi.labels, gi.counts)
    lo, hi = clip_thresholds(clip_range, gi.counts, gamma=gamma)
    means, empty = _clipped_group_means(x, gi.codes, gi.counts, lo, hi)
    scales = np.where(empty, 0.0, (hi - lo) / np.maximum(gi.counts, 1) / epsilon)
    gen = as_generator(rng)
    z = noise.sample_laplace(1.0, n_sims * gi.k, rng=gen).reshape(n_sims, gi.k)
    strat = means[None, :] + scales[None, :] * z
    glo, ghi = clip_thresholds(clip_range, np.array([x.size]), gamma=gamma)
    gmean = float(np.clip(x, glo[0], ghi[0]).mean())
    gb = (ghi[0] - glo[0]) / x.size / epsilon
    glob = gmean + gb * noise.sample_laplace(1.0, n_sims, rng=gen)
    true_groups = np.bincount(gi.codes, weights=x, minlength=gi.k) / np.maximum(gi.counts, 1)
    return LaplaceSimulation(
        labels=gi.labels,
        counts=gi.counts,
        weights=_readonly(w),
        true_groups=_readonly(true_groups),
        true_overall=float(x.mean()),
        strat_groups=_readonly(strat),
        strat_overall=_readonly(strat @ w),
        global_overall=_readonly(glob),
        epsilon=epsilon,
    )


# ---------------------------------------------------------------------------------------------
# Stretch: a light stratified synthesizer (digest §6.6; an illustration, not MST/GEM/AIM)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChainSynthesis:
    """Synthetic records from noisy 2-way marginals along a chain of columns.

    ``codes`` (n_out x d) integer codes, ``strata`` (n_out) the stratum code of each row,
    ``noise_scale`` the Laplace scale per marginal cell (``2 m / epsilon`` for m marginals),
    ``epsilon`` the total budget (parallel over strata when stratified).
    """

    codes: np.ndarray
    strata: np.ndarray
    epsilon: float
    noise_scale: float
    method: str
    notes: tuple[str, ...] = ()


def _int_array(x: Any, name: str, *, maximum: float = 2**31) -> np.ndarray:
    """Integer codes/sizes given as ints or integral floats; finite and below ``maximum`` in size."""
    try:
        f = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise DPInputError(f"{name} must contain integers") from None
    if not np.all(np.isfinite(f)) or np.any(f != np.round(f)) or np.any(np.abs(f) > maximum):
        raise DPInputError(f"{name} must contain finite integers (at most {maximum:g} in size)")
    return f.astype(np.int64)


def _check_codes(codes: Any, sizes: Any) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(codes)
    s = _int_array(sizes, "sizes", maximum=MAX_GROUPS * 100)
    if c.ndim != 2 or c.shape[1] != s.size or c.shape[1] < 2:
        raise DPInputError("codes must be an (n x d) integer table with d >= 2 columns and one size per column")
    if not np.issubdtype(c.dtype, np.integer):
        raise DPInputError("codes must be integer category codes (0 .. size-1)")
    if (s < 1).any() or (c < 0).any() or (c >= s[None, :]).any():
        raise DPInputError("every code must lie in 0 .. size-1 of its column (public domain sizes)")
    return c.astype(np.int64), s


def _noisy_chain(c: np.ndarray, s: np.ndarray, scale: float, gen: Any) -> list[np.ndarray]:
    tables = []
    for j in range(s.size - 1):
        a, b = int(s[j]), int(s[j + 1])
        t = np.bincount(c[:, j] * b + c[:, j + 1], minlength=a * b).reshape(a, b).astype(float)
        t += noise.sample_laplace(scale, a * b, rng=gen).reshape(a, b)
        tables.append(np.maximum(t, 0.0))  # post-processing: counts cannot be negative
    return tables


def _sample_rows(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF sampling, one categorical row distribution per draw (rows of ``p`` sum to 1)."""
    cum = np.cumsum(p, axis=1)
    return np.minimum((u[:, None] > cum).sum(axis=1), p.shape[1] - 1)


def _sample_chain(tables: list[np.ndarray], n_out: int, gen: Any) -> np.ndarray:
    first = tables[0].sum(axis=1)
    k0 = first.size
    p0 = first / first.sum() if first.sum() > 0 else np.full(k0, 1.0 / k0)
    out = np.empty((n_out, len(tables) + 1), dtype=np.int64)
    out[:, 0] = _sample_rows(np.broadcast_to(p0, (n_out, k0)), gen.random(n_out))
    for j, t in enumerate(tables):
        rows = t[out[:, j]]
        tot = rows.sum(axis=1, keepdims=True)
        cond = np.where(tot > 0, rows / np.where(tot > 0, tot, 1.0), 1.0 / t.shape[1])
        out[:, j + 1] = _sample_rows(cond, gen.random(n_out))
    return out


def synthesize_chain(codes: Any, sizes: Any, *, epsilon: float, n_out: int, rng: Any = None) -> ChainSynthesis:
    """Non-stratified ("vanilla") light synthesizer: noisy 2-way marginals of consecutive columns
    (a chain), then sampling column by column. Column 0 is the stratum (so groups exist in the
    output); it is modelled like any other column.

    Privacy: replacing one record changes each of the m = d - 1 marginals in at most 2 cells by 1,
    so the L1 sensitivity of all marginals together is 2m and ``Lap(2m / epsilon)`` per cell is
    epsilon-DP. Domain sizes are public.
    """
    c, s = _check_codes(codes, sizes)
    epsilon = check_epsilon(epsilon)
    n_out = check_int(n_out, "n_out", minimum=1, maximum=5_000_000)
    gen = as_generator(rng)
    scale = 2.0 * (s.size - 1) / epsilon
    out = _sample_chain(_noisy_chain(c, s, scale, gen), n_out, gen)
    return ChainSynthesis(
        codes=_readonly(out[:, 1:]),
        strata=_readonly(out[:, 0]),
        epsilon=epsilon,
        noise_scale=scale,
        method="vanilla chain",
    )


def stratified_synthesize(
    codes: Any, sizes: Any, strata: Any, k: int, *, epsilon: float, weights: Any, n_out: int, rng: Any = None
) -> ChainSynthesis:
    """Stratified light synthesizer (paper §6 method, digest §6.6): an independent noisy-chain model
    per stratum with the **full** epsilon (strata are disjoint: parallel composition), sampled in
    proportion to **public** stratum weights: stratum s gets ``max(1, round(n_out w_s))`` rows when
    ``w_s > 0``. A stratum with public weight but no private records is sampled from the uniform
    distribution (no data, no budget) and noted.
    """
    c, s = _check_codes(codes, sizes)
    st_codes = _int_array(strata, "strata")
    k = check_int(k, "k", minimum=1, maximum=MAX_GROUPS)
    if st_codes.shape != (c.shape[0],) or (st_codes < 0).any() or (st_codes >= k).any():
        raise DPInputError("strata must be one code 0 .. k-1 per record")
    w, _ = _resolve_weights(weights, tuple(range(k)), np.bincount(st_codes, minlength=k))
    epsilon = check_epsilon(epsilon)
    n_out = check_int(n_out, "n_out", minimum=1, maximum=5_000_000)
    gen = as_generator(rng)
    scale = 2.0 * (s.size - 1) / epsilon
    parts, labels, notes = [], [], []
    order = np.argsort(st_codes, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(st_codes, minlength=k))])
    for g in range(k):
        if w[g] <= 0:
            continue
        m = max(1, int(round(n_out * w[g])))
        rows = c[order[bounds[g] : bounds[g + 1]]]
        if rows.shape[0] == 0:
            notes.append(f"stratum {g} has public weight but no records: sampled uniformly (uses no data)")
            tables = [np.ones((int(s[j]), int(s[j + 1]))) for j in range(s.size - 1)]
        else:
            tables = _noisy_chain(rows, s, scale, gen)
        parts.append(_sample_chain(tables, m, gen))
        labels.append(np.full(m, g, dtype=np.int64))
    return ChainSynthesis(
        codes=_readonly(np.concatenate(parts)),
        strata=_readonly(np.concatenate(labels)),
        epsilon=epsilon,
        noise_scale=scale,
        method="stratified chain",
        notes=tuple(notes),
    )


def synthetic_parity(real_codes: Any, real_strata: Any, syn_codes: Any, syn_strata: Any, k: int) -> dict:
    """Parity error (Def. 11, omega = 1/k) of the **means of every variable** between real and
    synthetic data, per variable and averaged over variables (our choice for the paper's
    "aggregate normalized difference of means across all variables"). Codes are shifted by +1 so
    that no mean is 0. A stratum with no synthetic rows is given the overall synthetic mean
    (stated). Also returns the max disparity ``max |real - syn| / |real|`` over strata and variables.
    """
    rc = _int_array(real_codes, "real_codes").astype(float) + 1.0
    sc = _int_array(syn_codes, "syn_codes").astype(float) + 1.0
    rs = _int_array(real_strata, "real_strata")
    ss = _int_array(syn_strata, "syn_strata")
    k = check_int(k, "k", minimum=1, maximum=MAX_GROUPS)
    if (
        rc.ndim != 2
        or sc.ndim != 2
        or rc.shape[1] != sc.shape[1]
        or rs.shape != (rc.shape[0],)
        or ss.shape != (sc.shape[0],)
        or sc.shape[0] == 0
    ):
        raise DPInputError("real and synthetic tables need the same columns and one stratum code per row")
    if (rs < 0).any() or (rs >= k).any() or (ss < 0).any() or (ss >= k).any():
        raise DPInputError("stratum codes must lie in 0 .. k-1")
    phis, maxdisp, empty = [], 0.0, 0
    rcount = np.bincount(rs, minlength=k)
    scount = np.bincount(ss, minlength=k)
    keep = rcount > 0
    for j in range(rc.shape[1]):
        rmean = np.bincount(rs, weights=rc[:, j], minlength=k)[keep] / rcount[keep]
        soverall = float(sc[:, j].mean())
        smean_all = np.where(
            scount > 0, np.bincount(ss, weights=sc[:, j], minlength=k) / np.maximum(scount, 1), soverall
        )
        smean = smean_all[keep]
        phi = parity_error(float(rc[:, j].mean()), soverall, rmean, smean, omega=1.0 / int(keep.sum()))
        phis.append(float(phi))
        maxdisp = max(maxdisp, float(np.max(phi.per_group)))
    empty = int(np.sum(keep & (scount == 0)))
    return {
        "parity per variable": phis,
        "parity (mean over variables)": float(np.mean(phis)),
        "max disparity": maxdisp,
        "strata without synthetic rows": empty,
    }


def synthesizer_sweep(
    codes: Any,
    sizes: Any,
    strata: Any,
    k: int,
    *,
    public_w: Any,
    epsilons: Sequence[float],
    runs: int = 3,
    n_out: int | None = None,
    rng: Any = None,
    progress: Any = None,
) -> list[dict]:
    """Paper Fig. 5 / 7a shape with the light synthesizer: parity error of means and max disparity
    against epsilon, vanilla chain vs stratified chain. ``public_w`` are the public stratum
    weights used to size the stratified output."""
    c, s = _check_codes(codes, sizes)
    st_codes = _int_array(strata, "strata")
    runs = check_int(runs, "runs", minimum=1, maximum=100)
    n_out = c.shape[0] if n_out is None else check_int(n_out, "n_out", minimum=1)
    gen = as_generator(rng)
    rows: list[dict] = []
    eps_list = list(epsilons)
    for i, eps in enumerate(eps_list):
        for run in range(runs):
            v = synthesize_chain(
                np.column_stack([st_codes, c]), np.concatenate([[k], s]), epsilon=eps, n_out=n_out, rng=gen
            )
            sy = stratified_synthesize(c, s, st_codes, k, epsilon=eps, weights=public_w, n_out=n_out, rng=gen)
            for name, syn in (("vanilla (one model)", v), ("stratified (one model per group)", sy)):
                res = synthetic_parity(c, st_codes, syn.codes, syn.strata, k)
                rows.append(
                    {
                        "epsilon": float(eps),
                        "run": run,
                        "method": name,
                        "parity error": res["parity (mean over variables)"],
                        "max disparity": res["max disparity"],
                    }
                )
        if progress is not None:
            progress((i + 1) / len(eps_list), f"epsilon = {eps:g} done")
    return rows


# ---------------------------------------------------------------------------------------------
# All methods side by side, and the sweeps behind the paper's Figures 2, 3, 6 and 7
# ---------------------------------------------------------------------------------------------

#: The five estimators compared on the page.
METHODS = ("Global Laplace", "Stratified Laplace", "CoinPress", "StratCoinpress", "PubStratCoinpress")
#: Methods whose per-group "estimate" is the single global number (what drives their parity error).
GLOBAL_METHODS = ("Global Laplace", "CoinPress")


@dataclass(frozen=True)
class MethodsSimulation:
    """``n_sims`` releases of every method on one dataset.

    ``groups[m]`` is (n_sims, k) (global methods repeat their overall value in every group),
    ``overall[m]`` is (n_sims,). ``true_groups``/``true_overall`` are the non-private means.
    Laplace methods are epsilon-DP; CoinPress methods are rho-zCDP with ``rho`` (by default
    ``epsilon^2 / 2``, the zCDP level epsilon-DP also satisfies).
    """

    labels: tuple
    counts: np.ndarray
    true_groups: np.ndarray
    true_overall: float
    groups: dict
    overall: dict
    epsilon: float
    rho: float
    weights: np.ndarray
    public_weights: np.ndarray | None


def simulate_methods(
    values: Any,
    groups: Any,
    *,
    epsilon: float,
    clip_range: Any,
    rho: float | None = None,
    lower: float,
    upper: float,
    sigma: Any,
    sigma_global: float | None = None,
    t: int = 2,
    beta: float = 0.05,
    gamma: float = 0.1,
    public_w: Any = None,
    n_sims: int = 200,
    methods: Sequence[str] = METHODS,
    rng: Any = None,
    max_groups: int = MAX_GROUPS,
    clamp_to_prior: bool = False,
) -> MethodsSimulation:
    """Simulate every requested method ``n_sims`` times on one dataset (vectorised).

    Group-size weights are the (public by assumption) proportions; ``public_w`` are the PubStrat
    weights from a public hold-out (required for "PubStratCoinpress"), in sorted-label order.
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise DPInputError(f"unknown methods {unknown}; choose from {list(METHODS)}")
    gen = as_generator(rng)
    x = as_finite_array(values, "values", min_size=2)
    rho = pure_dp_to_zcdp(epsilon) if rho is None else check_positive(rho, "rho")
    gi = group_index(groups, max_groups=max_groups)
    if gi.codes.size != x.size:
        raise DPInputError("values and groups must have the same length")
    k = gi.k
    groups = gi.codes  # integer codes in sorted-label order: the simulators below need not re-sort text
    out_g: dict[str, np.ndarray] = {}
    out_o: dict[str, np.ndarray] = {}
    if "Global Laplace" in methods or "Stratified Laplace" in methods:
        ls = simulate_laplace_releases(
            x,
            groups,
            epsilon=epsilon,
            clip_range=clip_range,
            n_sims=n_sims,
            gamma=gamma,
            rng=gen,
            max_groups=max_groups,
        )
        if "Global Laplace" in methods:
            out_o["Global Laplace"] = ls.global_overall
            out_g["Global Laplace"] = np.repeat(ls.global_overall[:, None], k, axis=1)
        if "Stratified Laplace" in methods:
            out_o["Stratified Laplace"] = ls.strat_overall
            out_g["Stratified Laplace"] = ls.strat_groups
    strat = [m for m in ("StratCoinpress", "PubStratCoinpress") if m in methods]
    pw = None
    if strat or "CoinPress" in methods:
        cs = simulate_coinpress(
            x,
            groups,
            rho=rho,
            lower=lower,
            upper=upper,
            sigma=sigma,
            sigma_global=sigma_global,
            t=t,
            beta=beta,
            n_sims=n_sims,
            rng=gen,
            max_groups=max_groups,
            include_global="CoinPress" in methods,
            clamp_to_prior=clamp_to_prior,
        )
        if "CoinPress" in methods:
            assert cs.global_overall is not None  # simulated: include_global is True here
            out_o["CoinPress"] = cs.global_overall
            out_g["CoinPress"] = np.repeat(cs.global_overall[:, None], k, axis=1)
        if "StratCoinpress" in methods:
            out_o["StratCoinpress"] = cs.strat_overall
            out_g["StratCoinpress"] = cs.strat_groups
        if "PubStratCoinpress" in methods:
            if public_w is None:
                raise DPInputError("PubStratCoinpress needs weights from a public hold-out sample")
            pw, _ = _resolve_weights(public_w, gi.labels, gi.counts)
            # the same private group releases, recombined with the public weights (post-processing)
            out_o["PubStratCoinpress"] = cs.strat_groups @ pw
            out_g["PubStratCoinpress"] = cs.strat_groups
    true_groups = np.bincount(gi.codes, weights=x, minlength=k) / np.maximum(gi.counts, 1)
    return MethodsSimulation(
        labels=gi.labels,
        counts=gi.counts,
        true_groups=true_groups,
        true_overall=float(x.mean()),
        groups=out_g,
        overall=out_o,
        epsilon=float(epsilon),
        rho=rho,
        weights=gi.counts / gi.counts.sum(),
        public_weights=pw,
    )


def mixture_sigma(sizes: Any, mus: Any, sigmas: Any) -> float:
    """Standard deviation of a Gaussian mixture with the given group sizes, means and sds."""
    v = as_finite_array(sizes, "sizes")
    mus = as_finite_array(mus, "mus")
    sig = as_finite_array(sigmas, "sigmas")
    if not (v.size == mus.size == sig.size) or (v < 0).any() or v.sum() <= 0 or (sig < 0).any():
        raise DPInputError("sizes, mus and sigmas need one entry per group; sizes and sigmas must be >= 0")
    v = v / v.sum()
    m = float(v @ mus)
    return math.sqrt(max(float(v @ (sig**2 + mus**2)) - m * m, 0.0))


def synthetic_sweep(
    param: str,
    grid: Sequence[float],
    *,
    n: int = 10_000,
    k: int = 9,
    alpha: float = 0.3,
    epsilon: float = 1.0,
    R: float = 3.0,
    t: int = 2,
    beta: float = 0.05,
    gamma: float = 0.1,
    runs: int = 20,
    methods: Sequence[str] = METHODS,
    rng: Any = None,
    progress: Any = None,
    clamp_to_prior: bool = False,
) -> list[dict]:
    """The paper's synthetic Gaussian-mixture experiment (Figs. 3, 6, 7; digest §4.5-4.6).

    For each value of ``param`` ("n", "k", "alpha" or "epsilon") and each of ``runs`` fresh
    datasets: draw a mixture of size 2n, keep n as private data and n as the public hold-out
    (PubStrat, as in the authors' code), and record every method's absolute error of the overall
    mean against the private data's true mean. Prior ``[-R, R]``; CoinPress knows each group's
    sigma (and the mixture's sigma for the global run); Laplace clips at the paper's
    ``R + sqrt(ln|G| / gamma)``. ``rho = epsilon^2 / 2``. ``progress(fraction, text)`` is called
    after each grid value. Returns one row per (value, run, method).
    """
    if param not in ("n", "k", "alpha", "epsilon"):
        raise DPInputError("param must be one of 'n', 'k', 'alpha', 'epsilon'")
    runs = check_int(runs, "runs", minimum=1, maximum=500)
    gen = as_generator(rng)
    rows: list[dict] = []
    grid = list(grid)
    for gi_, val in enumerate(grid):
        cfg = dict(n=n, k=k, alpha=alpha, epsilon=epsilon)
        cfg[param] = val
        nn, kk = int(cfg["n"]), int(cfg["k"])
        for run in range(runs):
            mix = gaussian_mixture(2 * nn, kk, float(cfg["alpha"]), gen)
            pv, pg, _, pubg = split_public_private(mix.values, mix.groups, public_fraction=0.5, rng=gen)
            labels = group_index(pg).labels
            pw = public_weights(pubg, labels)
            sig = mix.sigmas[np.asarray(labels, dtype=int)]
            sim = simulate_methods(
                pv,
                pg,
                epsilon=float(cfg["epsilon"]),
                clip_range=R,
                lower=-R,
                upper=R,
                sigma=sig,
                sigma_global=mixture_sigma(mix.sizes, mix.mus, mix.sigmas),
                t=t,
                beta=beta,
                gamma=gamma,
                public_w=pw,
                n_sims=1,
                methods=methods,
                rng=gen,
                clamp_to_prior=clamp_to_prior,
            )
            for m in methods:
                rows.append(
                    {param: val, "run": run, "method": m, "error": abs(float(sim.overall[m][0]) - sim.true_overall)}
                )
        if progress is not None:
            progress((gi_ + 1) / len(grid), f"{param} = {val:g} done")
    return rows


def grouping_sweep(
    values: Any,
    strata: Sequence[tuple[str, Any]],
    *,
    epsilon: float,
    clip_range: Any,
    lower: float,
    upper: float,
    sigma: float,
    t: int = 2,
    beta: float = 0.05,
    runs: int = 10,
    methods: Sequence[str] = METHODS,
    rng: Any = None,
    progress: Any = None,
    clamp_to_prior: bool = False,
) -> list[dict]:
    """The paper's Figure 2 on real data: error and parity error as the grouping gets finer.

    ``strata`` is a list of (name, labels-per-record). For each grouping and run, half of the
    records (shuffled) are the private data and half the public hold-out for PubStrat (as in the
    authors' code); every method's normalised error ``|est - mean| / |mean|`` of the overall mean
    and the parity error (Def. 11, omega = 1/k) are recorded (groups with true mean 0 skipped).
    ``sigma`` is a public standard deviation used by every CoinPress run.
    """
    runs = check_int(runs, "runs", minimum=1, maximum=500)
    x = as_finite_array(values, "values", min_size=4)
    gen = as_generator(rng)
    rows: list[dict] = []
    for si, (name, labels_all) in enumerate(strata):
        codes_all = group_index(labels_all).codes  # integer codes once: every run then works on ints
        for run in range(runs):
            pv, pg, _, pubg = split_public_private(x, codes_all, public_fraction=0.5, rng=gen)
            labels = group_index(pg).labels
            pw = public_weights(pubg, labels)
            sim = simulate_methods(
                pv,
                pg,
                epsilon=epsilon,
                clip_range=clip_range,
                lower=lower,
                upper=upper,
                sigma=sigma,
                sigma_global=sigma,
                t=t,
                beta=beta,
                public_w=pw,
                n_sims=1,
                methods=methods,
                rng=gen,
                clamp_to_prior=clamp_to_prior,
            )
            for m in methods:
                est_o = float(sim.overall[m][0])
                phi = parity_error(sim.true_overall, est_o, sim.true_groups, sim.groups[m][0], on_zero="skip")
                rows.append(
                    {
                        "grouping": name,
                        "k": len(labels),
                        "run": run,
                        "method": m,
                        "error": abs(est_o - sim.true_overall) / abs(sim.true_overall),
                        "parity error": float(phi),
                    }
                )
        if progress is not None:
            progress((si + 1) / len(strata), f"{name} done")
    return rows


def real_epsilon_sweep(
    values: Any,
    labels: Any,
    epsilons: Sequence[float],
    *,
    clip_range: Any,
    lower: float,
    upper: float,
    sigma: float,
    t: int = 2,
    beta: float = 0.05,
    runs: int = 10,
    methods: Sequence[str] = METHODS,
    rng: Any = None,
    progress: Any = None,
    clamp_to_prior: bool = False,
) -> list[dict]:
    """Normalised error of the overall mean and parity error against epsilon on real data with one
    fixed grouping (same protocol as :func:`grouping_sweep`: a fresh random half per run)."""
    gen = as_generator(rng)
    rows: list[dict] = []
    eps_list = list(epsilons)
    codes = group_index(labels).codes
    for i, eps in enumerate(eps_list):
        for r in grouping_sweep(
            values,
            [("groups", codes)],
            epsilon=float(eps),
            clip_range=clip_range,
            lower=lower,
            upper=upper,
            sigma=sigma,
            t=t,
            beta=beta,
            runs=runs,
            methods=methods,
            rng=gen,
            clamp_to_prior=clamp_to_prior,
        ):
            r["epsilon"] = float(eps)
            rows.append(r)
        if progress is not None:
            progress((i + 1) / len(eps_list), f"epsilon = {eps:g} done")
    return rows


# ---------------------------------------------------------------------------------------------
# The group-means page: data recipes and one function per view
# ---------------------------------------------------------------------------------------------

#: Simulated releases behind every error bar of the group-means view (release 0 is "one release").
N_SIMS = 200
#: delta used to express the CoinPress zCDP budget as (epsilon, delta)-DP on the page.
DELTA = 1e-6
#: ACS variables of the group-means view. sigma: the standard deviation published in the paper's
#: Table 1 (ACS New York 2018, a different, public dataset) given to CoinPress; prior: a generous
#: public prior interval; clip: the default public clip range (max: the slider's end, step: its step).
ACS_VARIABLES: dict[str, dict[str, Any]] = {
    "PINCP (personal income, $)": dict(
        col="PINCP",
        sigma=76_027.3,
        prior=(-20_000.0, 500_000.0),
        clip=(0.0, 200_000.0),
        clip_max=1_000_000.0,
        step=5_000.0,
    ),
    "AGEP (age, years)": dict(
        col="AGEP", sigma=23.554, prior=(0.0, 100.0), clip=(0.0, 100.0), clip_max=120.0, step=1.0
    ),
}
#: Groupings of the ACS excerpt (columns whose codes are combined, joined by " × ").
ACS_GROUPINGS: dict[str, tuple[str, ...]] = {
    "SEX × RAC1P": ("SEX", "RAC1P"),
    "RAC1P": ("RAC1P",),
    "SEX": ("SEX",),
    "SEX × HISP": ("SEX", "HISP"),
    "SEX × RAC1P × HISP": ("SEX", "RAC1P", "HISP"),
}
#: Short names of the ACS codes (PUMS 2019 data dictionary).
ACS_CODE_NAMES: dict[str, dict[int, str]] = {
    "SEX": {1: "Male", 2: "Female"},
    "RAC1P": {
        1: "White",
        2: "Black",
        3: "AmInd",
        4: "AlaskaNat",
        5: "AIAN tribes",
        6: "Asian",
        7: "NHPI",
        8: "Other race",
        9: "Two+ races",
    },
    "HISP": {0: "Not Hisp.", 1: "Mexican", 2: "Puerto Rican", 3: "Cuban", 4: "Other Hisp."},
}
#: The trend experiments: id -> (swept parameter, grid). "acs" sweeps the grouping (Figure 2).
SWEEPS: dict[str, tuple[str, tuple[float, ...] | None]] = {
    "n": ("n", (2000, 4000, 6000, 8000, 10_000)),
    "k": ("k", (2, 3, 6, 9, 12, 18)),
    "alpha": ("alpha", (0.1, 0.2, 0.3, 0.5, 1.0, 3.0, 10.0)),
    "epsilon": ("epsilon", (0.1, 0.2, 0.5, 1.0, 2.0, 5.0)),
    "acs": ("k", None),
    "acs_eps": ("epsilon", (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)),
}
#: The light synthesizer's public column domains (age band, education, married, income band).
SYNTH_COLUMNS = ("age band", "education", "married", "income band")
SYNTH_SIZES = (5, 5, 2, 6)
SYNTH_EPSILONS = (0.05, 0.1, 0.5, 1.0, 5.0)


@dataclass(frozen=True)
class GroupedData:
    """The group-means page's data: a private half and the public hold-out's group labels.

    ``sigma`` is what CoinPress is told (one sd per group in sorted-label order, or one public
    number); ``sigma_global`` the sd for the global CoinPress run; ``shares`` the synthetic group
    shares (None for real data). ``recipe`` is the plain-dict recipe that rebuilds it."""

    values: np.ndarray
    groups: np.ndarray
    public_groups: np.ndarray
    sigma: Any
    sigma_global: float | None
    shares: np.ndarray | None
    recipe: dict = field(default_factory=dict)

    @property
    def k(self) -> int:
        return self.index.k

    @functools.cached_property
    def index(self):
        """The private groups' :func:`dpcore.stratified.group_index` (sorted labels, codes, counts), built
        once per dataset: sorting text labels is most of a view's cost. Not a dataclass field."""
        return group_index(self.groups)

    @functools.cached_property
    def pubstrat_weights(self) -> np.ndarray:
        """PubStrat weights (:func:`dpcore.stratified.public_weights`) of the public hold-out, in the
        order of ``index.labels``; built once per dataset."""
        return public_weights(self.public_groups, self.index.labels)


def synthetic_groups(n: int, k: int, alpha: float, preset: str | None = None, *, seed: int) -> GroupedData:
    """The paper's mixture (Appendix B): Dirichlet(alpha) shares (or a Table 3 preset's shares),
    ``sigma_i ~ U(0.1, 2)``, ``mu_i ~ N(0, 1)``; the public hold-out is an independent sample of n/2
    group labels from the same shares. CoinPress is told each group's sigma_i (sorted labels) and
    the mixture's sd for the global run."""
    n = check_int(n, "n", minimum=2, maximum=10_000_000)
    g = np.random.default_rng(check_int(seed, "seed", minimum=0))
    if preset is None:
        k = check_int(k, "k (number of groups)", minimum=1, maximum=MAX_GROUPS)
        alpha = check_positive(alpha, "alpha")
        shares = g.dirichlet(np.full(k, alpha))
        sizes = sizes_from_proportions(shares, n)
        names = [f"G{i + 1}" for i in range(k)]
    else:
        counts = preset_counts(preset)
        names = list(counts)
        shares = np.array(list(counts.values()), dtype=float)
        shares /= shares.sum()
        sizes = sizes_from_proportions(shares, n)
    mix = gaussian_mixture(n, len(sizes), alpha, g, sizes=sizes)
    labels = np.array(names, dtype=object)[mix.groups]
    pub = np.array(names, dtype=object)[g.choice(len(names), size=max(n // 2, 1), p=shares)]
    order = np.argsort(names)  # sorted-label order used by dpcore
    return GroupedData(
        values=np.asarray(mix.values),
        groups=labels.astype(str),
        public_groups=pub.astype(str),
        sigma=np.asarray(mix.sigmas)[order],
        sigma_global=mixture_sigma(mix.sizes, mix.mus, mix.sigmas),
        shares=shares,
        recipe=dict(source="synthetic", n=int(n), k=int(k), alpha=float(alpha), preset=preset, seed=int(seed)),
    )


def acs_labels(frame: Any, columns: Sequence[str]) -> np.ndarray:
    """Group labels of ACS records: the short code names of ``columns`` joined by " × "."""
    parts = []
    for c in columns:
        if c not in ACS_CODE_NAMES:
            raise DPInputError(f"cannot group the ACS excerpt by {c!r}; choose from {list(ACS_CODE_NAMES)}")
        parts.append(frame[c].astype(int).map(ACS_CODE_NAMES[c]).fillna(frame[c].astype(str)))
    out = parts[0]
    for p in parts[1:]:
        out = out + " × " + p
    return out.to_numpy()


def _acs(frame: Any = None) -> Any:
    if frame is not None:
        return frame
    from ..data import acs_frame

    loaded = acs_frame()
    if loaded is None:
        raise DPInputError(
            "the ACS excerpt is not available on this machine (neither ../shared/data nor the "
            "copy bundled in dpcore/examples)"
        )
    return loaded


def acs_groups(variable: str, grouping: str, *, seed: int, frame: Any = None) -> GroupedData:
    """The ACS 2019 excerpt (20 PUMAs, unweighted): a random half is the 'private' file, the other
    half the public hold-out (only its group shares are used, for PubStrat), as in the authors'
    experiments. CoinPress is told the paper's published sd (:data:`ACS_VARIABLES`)."""
    if variable not in ACS_VARIABLES:
        raise DPInputError(f"unknown ACS variable {variable!r}; choose one of {list(ACS_VARIABLES)}")
    if grouping not in ACS_GROUPINGS:
        raise DPInputError(f"unknown grouping {grouping!r}; choose one of {list(ACS_GROUPINGS)}")
    spec = ACS_VARIABLES[variable]
    df = _acs(frame).dropna(subset=[spec["col"]])
    labels = acs_labels(df, ACS_GROUPINGS[grouping])
    pv, pg, _, pubg = split_public_private(
        df[spec["col"]].to_numpy(float), labels, public_fraction=0.5, rng=check_int(seed, "seed", minimum=0)
    )
    return GroupedData(
        values=pv,
        groups=np.asarray(pg).astype(str),
        public_groups=np.asarray(pubg).astype(str),
        sigma=spec["sigma"],
        sigma_global=spec["sigma"],
        shares=None,
        recipe=dict(source="acs", variable=variable, grouping=grouping, seed=int(seed)),
    )


def column_groups(values: Any, frame: Any, columns: Sequence[str], *, sigma: float, seed: int) -> GroupedData:
    """Any dataset with group columns (the sidebar's): labels are the columns' values joined by " × ";
    a random half plays the private file, the other half only gives the group shares (PubStrat).
    ``sigma`` is the public guess of the standard deviation given to CoinPress."""
    if frame is None:
        raise DPInputError("this dataset has no columns to group by")
    columns = [str(c) for c in columns]
    if not columns or any(c not in frame.columns for c in columns):
        raise DPInputError(f"choose group columns of the dataset (got {columns})")
    sigma = check_positive(sigma, "sigma (public guess of the standard deviation)")
    lab = frame[columns[0]].astype(str)
    for c in columns[1:]:
        lab = lab + " × " + frame[c].astype(str)
    labels = lab.to_numpy().astype(str)
    group_index(labels)  # the level cap, with a clear message
    pv, pg, _, pubg = split_public_private(
        np.asarray(values, float), labels, public_fraction=0.5, rng=check_int(seed, "seed", minimum=0)
    )
    return GroupedData(
        values=pv,
        groups=pg,
        public_groups=pubg,
        sigma=float(sigma),
        sigma_global=float(sigma),
        shares=None,
        recipe=dict(source="columns", columns=columns, sigma=float(sigma), seed=int(seed)),
    )


def grouped_data(recipe: Mapping[str, Any], *, values: Any = None, frame: Any = None) -> GroupedData:
    """Build the page's data from a plain-dict recipe (what the page and its script share):

    * ``{"source": "synthetic", "n", "k", "alpha", "preset", "seed"}`` -> :func:`synthetic_groups`
    * ``{"source": "acs", "variable", "grouping", "seed"}`` -> :func:`acs_groups`
    * ``{"source": "columns", "columns", "sigma", "seed", "dataset"}`` -> :func:`column_groups` on
      ``values`` / ``frame`` (the income file's values and its table) or, when they are not given, on
      the dataset that the recipe ``dataset`` builds (:func:`dpcore.data.build_dataset`).
    """
    if not isinstance(recipe, Mapping) or "source" not in recipe:
        raise DPInputError("a data recipe is a dict with a 'source' ('synthetic', 'acs' or 'columns')")
    r = dict(recipe)
    source = r.pop("source")
    try:
        if source == "synthetic":
            return synthetic_groups(r["n"], r.get("k", 9), r.get("alpha", 1.0), r.get("preset"), seed=r["seed"])
        if source == "acs":
            return acs_groups(r["variable"], r["grouping"], seed=r["seed"], frame=frame)
        if source == "columns":
            dataset = r.get("dataset")
            if values is None and dataset is not None:
                from ..data import build_dataset

                built = build_dataset(dataset)
                values, frame = built.values, built.frame
            out = column_groups(values, frame, r["columns"], sigma=r["sigma"], seed=r["seed"])
            if dataset is not None:
                out.recipe["dataset"] = dataset
            return out
    except KeyError as exc:
        raise DPInputError(f"the {source!r} data recipe needs {exc.args[0]!r}") from None
    raise DPInputError(f"unknown data source {source!r}; choose 'synthetic', 'acs' or 'columns'")


def parity_draws(sim: MethodsSimulation, method: str) -> np.ndarray:
    """Parity error (Definition 11, omega = 1/k) of every simulated release of one method (vectorised).
    Groups whose true mean is 0 are left out (their relative error is undefined); an overall true
    mean of 0 contributes 0."""
    if method not in sim.groups:
        raise DPInputError(f"method {method!r} was not simulated; choose from {list(sim.groups)}")
    t = sim.true_groups
    ok = t != 0
    rel = np.abs(sim.groups[method][:, ok] - t[ok]) / np.abs(t[ok])
    over = np.abs(sim.overall[method] - sim.true_overall) / abs(sim.true_overall) if sim.true_overall != 0 else 0.0
    return over / sim.true_groups.size + rel.sum(axis=1)


def _clip_setting(clip: Any) -> Any:
    """A bound R (float) or a public (low, high) interval, as stratified_mean takes it."""
    if isinstance(clip, (list, tuple, np.ndarray)):
        lo, hi = (check_finite(c, "clip range") for c in clip)
        return (lo, hi)
    return check_positive(clip, "the bound R")


@dataclass(frozen=True)
class GroupMeansView:
    """The group-means view: ``n_sims`` simulated releases of every method on one dataset.

    Per group (sorted-label order): ``labels``, ``sizes``, ``shares`` (the public group shares),
    ``pubstrat_shares`` (from the public hold-out), ``true_means``, ``release`` (release 0 of
    ``method``), ``q05``/``q95``/``sd`` of its releases. Per method: ``overall[m]`` (n_sims overall
    estimates) and ``parity[m]`` (n_sims parity errors, Def. 11). ``notes`` come from one real
    stratified release (seed + 2). Laplace methods cost ``epsilon``; CoinPress ``rho`` (zCDP),
    i.e. ``(epsilon_at_delta, delta)``-DP."""

    epsilon: float
    rho: float
    delta: float
    epsilon_at_delta: float
    method: str
    n_sims: int
    seed: int
    clip: Any
    prior: tuple[float, float]
    labels: tuple[str, ...]
    sizes: np.ndarray
    shares: np.ndarray
    pubstrat_shares: np.ndarray
    true_means: np.ndarray
    release: np.ndarray
    q05: np.ndarray
    q95: np.ndarray
    sd: np.ndarray
    true_overall: float
    overall: Mapping[str, np.ndarray]
    parity: Mapping[str, np.ndarray]
    notes: tuple[str, ...]
    recipe: dict
    match: str = "same_rho"

    @property
    def n(self) -> int:
        return int(self.sizes.sum())

    @property
    def k(self) -> int:
        return len(self.labels)

    def group_rows(self) -> list[dict]:
        """One row per group, largest group first (the page's table)."""
        order = np.argsort(-self.sizes, kind="stable")
        return [
            {
                "group": self.labels[i],
                "size": int(self.sizes[i]),
                "share (public)": float(self.shares[i]),
                "PubStrat share": float(self.pubstrat_shares[i]),
                "true mean": float(self.true_means[i]),
                "release": float(self.release[i]),
                "q05": float(self.q05[i]),
                "q95": float(self.q95[i]),
                "sd of releases": float(self.sd[i]),
            }
            for i in order
        ]

    def method_rows(self) -> list[dict]:
        """One row per method: one release, the true overall mean, RMSE of the overall mean over the
        simulated releases, and the parity error's mean and 5%/95% quantiles."""
        rows = []
        for m in METHODS:
            e = self.overall[m] - self.true_overall
            ph = self.parity[m]
            rows.append(
                {
                    "method": m,
                    "one release": float(self.overall[m][0]),
                    "true overall mean": float(self.true_overall),
                    "RMSE of overall": float(np.sqrt(np.mean(e**2))),
                    "mean parity error": float(ph.mean()),
                    "parity q05": float(np.quantile(ph, 0.05)),
                    "parity q95": float(np.quantile(ph, 0.95)),
                }
            )
        return rows

    def to_dict(self) -> dict:
        return to_plain(
            {
                "epsilon": self.epsilon,
                "privacy_match": self.match,
                "coinpress_rho": self.rho,
                "coinpress_epsilon_at_delta": {"delta": self.delta, "epsilon": self.epsilon_at_delta},
                "people n": self.n,
                "groups k": self.k,
                "smallest group": int(self.sizes.min()),
                "largest group": int(self.sizes.max()),
                "group means": {"method": self.method, "groups": self.group_rows()},
                "overall mean by method": {r.pop("method"): r for r in self.method_rows()},
                "notes": list(self.notes),
                "data": self.recipe,
            }
        )


#: how CoinPress's zCDP budget is matched to the Laplace methods' epsilon ("equal privacy")
PRIVACY_MATCHES = ("same_rho", "epsilon_delta")


def coinpress_rho(epsilon: float, match: str = "same_rho", delta: float = DELTA) -> float:
    """CoinPress's rho for a comparison with Laplace methods at ``epsilon``.

    ``"same_rho"`` (the paper's convention): rho = epsilon^2/2, the zCDP level epsilon-DP implies
    (Bun & Steinke 2016, Prop. 1.4); both are then rho-zCDP, but CoinPress is only
    (rho + 2 sqrt(rho ln(1/delta)), delta)-DP, e.g. (5.76, 1e-6) at epsilon = 1.
    ``"epsilon_delta"``: the largest rho whose (Prop. 1.3) conversion gives (epsilon, delta)-DP,
    rho = (sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))^2, so every method is (epsilon, delta)-DP
    (Laplace even with delta = 0): equal privacy in the (epsilon, delta) currency.
    """
    epsilon = check_epsilon(epsilon)
    if match == "same_rho":
        return pure_dp_to_zcdp(epsilon)
    if match == "epsilon_delta":
        log_term = math.log(1.0 / delta)
        rho = (math.sqrt(log_term + epsilon) - math.sqrt(log_term)) ** 2
        while zcdp_to_dp(rho, delta) > epsilon:  # rounding: never above epsilon
            rho -= 4 * math.ulp(rho)
        return rho
    raise DPInputError(f"unknown privacy match {match!r}; choose from {list(PRIVACY_MATCHES)}")


def group_means_view(
    data: GroupedData | Mapping[str, Any],
    *,
    epsilon: float,
    clip: Any,
    prior: Sequence[float],
    clamp: bool = False,
    method: str = "Stratified Laplace",
    seed: int,
    n_sims: int = N_SIMS,
    values: Any = None,
    frame: Any = None,
    match: str = "same_rho",
) -> GroupMeansView:
    """The group-means view: every method simulated ``n_sims`` times (rng ``seed + 1``) on ``data``
    (a :class:`GroupedData` or a recipe for :func:`grouped_data`, which then uses ``values`` /
    ``frame``), plus one real stratified release (rng ``seed + 2``) for its notes.

    ``clip``: a bound R (synthetic data: Laplace clips at ``R + sqrt(ln|G|/0.1)``, paper Eq. 3) or a
    public ``(low, high)`` range; ``prior``: CoinPress's public prior interval; ``clamp``: clamp
    CoinPress estimates into the prior (free post-processing). Neighbours: replace one person's
    value within their group; Laplace epsilon-DP, CoinPress rho-zCDP with rho from
    :func:`coinpress_rho` (``match``: ``"same_rho"`` = epsilon^2/2, or ``"epsilon_delta"`` = every
    method (epsilon, DELTA)-DP; the page uses the latter).
    """
    rho = coinpress_rho(epsilon, match)
    if not isinstance(data, GroupedData):
        data = grouped_data(data, values=values, frame=frame)
    epsilon = check_epsilon(epsilon)
    if method not in METHODS:
        raise DPInputError(f"unknown method {method!r}; choose from {list(METHODS)}")
    clip = _clip_setting(clip)
    prior = tuple(float(p) for p in prior)
    if len(prior) != 2:
        raise DPInputError("prior must be a (lower, upper) interval")
    seed = check_int(seed, "seed", minimum=0)
    index = data.index
    pw = data.pubstrat_weights
    # the integer codes (sorted-label order) instead of the text labels: the same groups in the same
    # order, hence the same draws, without sorting the text again (simulate_methods codes them anyway)
    sim = simulate_methods(
        data.values,
        index.codes,
        epsilon=epsilon,
        clip_range=clip,
        lower=prior[0],
        upper=prior[1],
        sigma=data.sigma,
        sigma_global=data.sigma_global,
        public_w=pw,
        n_sims=n_sims,
        rng=seed + 1,
        clamp_to_prior=bool(clamp),
        rho=rho,
    )
    draws = sim.groups[method]
    # one real release (seed + 2) only for its notes, which exist only for single-member groups
    notes = (
        stratified_mean(data.values, data.groups, epsilon=epsilon, clip_range=clip, rng=seed + 2).notes
        if int(index.counts.min()) <= 1
        else ()
    )
    return GroupMeansView(
        epsilon=epsilon,
        rho=rho,
        delta=DELTA,
        epsilon_at_delta=zcdp_to_dp(rho, DELTA),
        method=method,
        n_sims=int(n_sims),
        seed=seed,
        clip=clip,
        prior=prior,
        labels=tuple(str(x) for x in index.labels),
        sizes=np.asarray(sim.counts),
        shares=np.asarray(sim.weights),
        pubstrat_shares=np.asarray(pw),
        true_means=np.asarray(sim.true_groups),
        release=draws[0],
        q05=np.quantile(draws, 0.05, axis=0),
        q95=np.quantile(draws, 0.95, axis=0),
        sd=draws.std(axis=0),
        true_overall=float(sim.true_overall),
        overall=dict(sim.overall),
        parity={m: parity_draws(sim, m) for m in METHODS},
        notes=tuple(notes),
        recipe=dict(data.recipe),
        match=match,
    )


def group_means_answer_statistic(values: Any, groups: Any, *, clip: Sequence[float]):
    """The planner statistic behind :func:`dpcore.views.answers.group_means_answer` (the same
    call): every group's mean by stratified Laplace on values clipped to the public ``clip``
    (Laplace((U - L) / (n_g epsilon)) per group, parallel composition; neighbouring: replace one
    person's value within their group, group sizes public). It does not depend on epsilon, so the page
    builds it once per data and clip range."""
    from ..validation import check_finite

    lower, upper = (check_finite(v, "clip bound") for v in clip)
    statistic = _planner().make_statistic("group_means", values, groups, lower=lower, upper=upper)
    return _group_means_once_class()(**{f.name: getattr(statistic, f.name) for f in dataclasses.fields(statistic)})


def _planner():
    from .. import planner as planner_lib

    return planner_lib


@functools.lru_cache(maxsize=1)
def _group_means_once_class() -> type[GroupMeans]:
    """``dpcore.planner.GroupMeans`` whose true group means and clipping bias (properties recomputed
    over all n values at every call, ~90 calls per answer sentence) are computed once: the same
    numbers, half the time."""
    from ..planner import GroupMeans

    class GroupMeansComputedOnce(GroupMeans):
        @functools.cached_property
        def truth(self) -> np.ndarray:
            return super().truth

        @functools.cached_property
        def bias(self) -> np.ndarray:
            return super().bias

    return GroupMeansComputedOnce


def group_means_answer_at_epsilon(statistic: Any, *, epsilon: float):
    """The sentence half of :func:`dpcore.views.answers.group_means_answer` for a statistic from
    :func:`group_means_answer_statistic` (the same numbers and sentence), without the epsilon
    recommendation, which does not depend on ``epsilon`` (the page computes it once per target)."""
    from . import answers as answer_experiments

    return answer_experiments.group_means_sentence(statistic, epsilon=epsilon)


def summarise(rows: Sequence[Mapping[str, Any]], x: str, y: str):
    """Mean, sd, count and standard error of column ``y`` per (``x``, method), sorted by ``x``."""
    import pandas as pd

    df = pd.DataFrame(list(rows))
    if df.empty or x not in df or y not in df:
        raise DPInputError(f"no rows with columns {x!r} and {y!r} to summarise")
    g = df.groupby([x, "method"], sort=False)[y]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["se"] = out["std"].fillna(0) / np.sqrt(out["count"])
    return out.sort_values([x])


@dataclass(frozen=True)
class TrendView:
    """A trend experiment (paper Figs. 2, 3, 6, 7): one row per (value, run, method) in ``rows``;
    ``x`` the swept column; ``measures`` the summarised columns ("error", and "parity error" on
    real data)."""

    experiment: str
    x: str
    grid: tuple
    runs: int
    rows: tuple[dict, ...]
    measures: tuple[str, ...]
    settings: dict

    def summary(self, measure: str = "error"):
        return summarise(self.rows, self.x, measure)

    def to_dict(self) -> dict:
        return to_plain(
            {
                "experiment": self.experiment,
                "x": self.x,
                "grid": list(self.grid),
                "runs": self.runs,
                "settings": self.settings,
                "summary": {m: self.summary(m).to_dict("records") for m in self.measures},
            }
        )


def trend_view(
    experiment: str,
    *,
    runs: int = 20,
    seed: int,
    clamp: bool = False,
    epsilon: float = 1.0,
    n: int = 10_000,
    k: int = 9,
    alpha: float = 0.3,
    R: float = 3.0,
    variable: str = "PINCP (personal income, $)",
    frame: Any = None,
    progress: Any = None,
) -> TrendView:
    """The trend experiments of the page (:data:`SWEEPS`): ``"n"``, ``"k"``, ``"alpha"``, ``"epsilon"``
    re-run the synthetic mixture (:func:`synthetic_sweep`, n capped at 20,000); ``"acs"`` sweeps the
    ACS grouping (:func:`grouping_sweep`, Figure 2) and ``"acs_eps"`` epsilon on SEX × RAC1P
    (:func:`real_epsilon_sweep`), both on the ACS excerpt (``frame``, loaded when None)."""
    if experiment not in SWEEPS:
        raise DPInputError(f"unknown experiment {experiment!r}; choose one of {list(SWEEPS)}")
    x, grid = SWEEPS[experiment]
    seed = check_int(seed, "seed", minimum=0)
    if experiment in ("acs", "acs_eps"):
        if variable not in ACS_VARIABLES:
            raise DPInputError(f"unknown ACS variable {variable!r}; choose one of {list(ACS_VARIABLES)}")
        spec = ACS_VARIABLES[variable]
        df = _acs(frame).dropna(subset=[spec["col"]])
        common = dict(
            clip_range=spec["clip"],
            lower=spec["prior"][0],
            upper=spec["prior"][1],
            sigma=spec["sigma"],
            runs=runs,
            rng=seed,
            clamp_to_prior=bool(clamp),
            progress=progress,
        )
        settings = dict(variable=variable, epsilon=float(epsilon))
        if experiment == "acs_eps":
            assert grid is not None  # SWEEPS gives acs_eps its epsilon grid
            rows = real_epsilon_sweep(df[spec["col"]].to_numpy(float), acs_labels(df, ("SEX", "RAC1P")), grid, **common)
            settings.pop("epsilon")
        else:
            strata = [
                (name, acs_labels(df, cols)) for name, cols in sorted(ACS_GROUPINGS.items(), key=lambda kv: len(kv[1]))
            ]
            strata.append(("RAC1P × HISP", acs_labels(df, ("RAC1P", "HISP"))))
            rows = grouping_sweep(df[spec["col"]].to_numpy(float), strata, epsilon=float(epsilon), **common)
            grid = tuple(sorted({r["k"] for r in rows}))
        measures: tuple[str, ...] = ("error", "parity error")
    else:
        assert grid is not None  # SWEEPS gives every synthetic sweep its grid
        n = min(check_int(n, "n", minimum=2), 20_000)
        settings = dict(n=n, k=int(k), alpha=float(alpha), epsilon=float(epsilon), R=float(R))
        rows = synthetic_sweep(
            x,
            grid,
            n=n,
            k=int(k),
            alpha=float(alpha),
            epsilon=float(epsilon),
            R=float(R),
            runs=runs,
            rng=seed,
            clamp_to_prior=bool(clamp),
            progress=progress,
        )
        measures = ("error",)
    return TrendView(
        experiment=experiment,
        x=x,
        grid=tuple(grid),
        runs=int(runs),
        rows=tuple(rows),
        measures=measures,
        settings=dict(settings, clamp=bool(clamp), seed=seed),
    )


@dataclass(frozen=True)
class BoundsView:
    """Figure 1 (worst case, Theorem 10 expectation and informal lower bound of ``sum_i ln|G_i|``
    against alpha) for (n, k), the paper's New York RACE example, and the actual ``sum ln|G_i|`` of
    the NY sizes when (n, k) is the NY example's."""

    n: int
    k: int
    curves: Mapping[str, np.ndarray]
    example: NYExample
    actual: float | None

    def to_dict(self) -> dict:
        ex = self.example
        return to_plain(
            {
                "n": self.n,
                "k": self.k,
                "curves": dict(self.curves),
                "actual": self.actual,
                "ny_example": {
                    "n": ex.n,
                    "k": ex.k,
                    "alpha": ex.alpha,
                    "worst": ex.worst,
                    "expected": ex.expected,
                    "best": ex.best,
                    "lower": ex.lower,
                    "actual": ex.actual,
                    "improvement": ex.improvement,
                    "improvement_actual": ex.improvement_actual,
                    "alpha_mle": ex.alpha_mle,
                },
            }
        )


def bounds_view(n: int, k: int, *, alpha_mark: float = 0.13) -> BoundsView:
    """The theory view: :func:`bound_curves` on alpha in [0.1, 1] (91 points) and :func:`ny_race_example`."""
    curves = bound_curves(n, k, np.linspace(0.1, 1.0, 91))
    ex = ny_race_example(alpha_mark)
    actual = ex.actual if (int(n), int(k)) == (ex.n, ex.k) else None
    return BoundsView(n=int(n), k=int(k), curves=curves, example=ex, actual=actual)


@dataclass(frozen=True)
class AccountingView:
    """What each release costs (Def. 7, Prop. 8): Laplace in epsilon, CoinPress in rho (zCDP) and
    its (epsilon, delta)-DP equivalent."""

    accounting: Any  # dpcore.stratified.PrivacyAccounting
    rho: float
    delta: float
    coinpress_epsilon: float
    coinpress_fresh_epsilon: float

    def to_dict(self) -> dict:
        a = self.accounting
        return to_plain(
            {
                "lines": list(a.lines),
                "all_groups": a.all_groups,
                "combined_overall": a.combined_overall,
                "groups_plus_fresh_global": a.groups_plus_fresh_global,
                "if_group_can_change": a.if_group_can_change,
                "coinpress_rho": self.rho,
                "delta": self.delta,
                "coinpress_epsilon": self.coinpress_epsilon,
                "coinpress_plus_fresh_rho": 2 * self.rho,
                "coinpress_plus_fresh_epsilon": self.coinpress_fresh_epsilon,
            }
        )


def accounting_view(epsilon: float, k: int) -> AccountingView:
    """The privacy-accounting view for ``k`` groups at ``epsilon`` (CoinPress at rho = epsilon^2/2)."""
    acc = privacy_accounting(epsilon, k)
    rho = pure_dp_to_zcdp(epsilon)
    return AccountingView(
        accounting=acc,
        rho=rho,
        delta=DELTA,
        coinpress_epsilon=zcdp_to_dp(rho, DELTA),
        coinpress_fresh_epsilon=zcdp_to_dp(2 * rho, DELTA),
    )


def acs_synthesizer_table(frame: Any = None, *, seed: int) -> dict:
    """ACS excerpt (people with PINCP) coded into 4 small public domains (:data:`SYNTH_COLUMNS`);
    strata SEX × RAC1P. A random half is private, the other half only gives the public stratum shares."""
    df = _acs(frame).dropna(subset=["PINCP"])
    codes = np.column_stack(
        [
            np.digitize(df["AGEP"], [25, 35, 50, 65]),  # 15-24, 25-34, 35-49, 50-64, 65+
            np.digitize(df["EDU"].fillna(0), [1, 8, 9, 10]),  # n/a, up to HS, some college, BA, graduate
            (df["MSP"] == 1).astype(int).to_numpy(),  # married, spouse present
            np.digitize(df["PINCP"], [1, 10_000, 25_000, 50_000, 100_000]),  # <=0, <10k, <25k, <50k, <100k, 100k+
        ]
    ).astype(np.int64)
    labels = acs_labels(df, ("SEX", "RAC1P")).astype(str)
    gi = group_index(labels)
    perm = np.random.default_rng(check_int(seed, "seed", minimum=0)).permutation(len(df))
    priv, pub = perm[: len(df) // 2], perm[len(df) // 2 :]
    pw = np.bincount(gi.codes[pub], minlength=gi.k) / pub.size
    return dict(codes=codes[priv], strata=gi.codes[priv], k=gi.k, labels=gi.labels, public_w=pw)


@dataclass(frozen=True)
class SynthesizerView:
    """The light synthesizer (one model vs one model per SEX × RAC1P stratum) on the ACS excerpt:
    parity error of means and max disparity per (epsilon, run, method)."""

    runs: int
    epsilons: tuple[float, ...]
    rows: tuple[dict, ...]

    def summary(self, measure: str):
        return summarise(self.rows, "epsilon", measure)

    def to_dict(self) -> dict:
        return to_plain(
            {
                "runs": self.runs,
                "epsilons": list(self.epsilons),
                "summary": {m: self.summary(m).to_dict("records") for m in ("parity error", "max disparity")},
            }
        )


def synthesizer_view(*, runs: int = 3, seed: int, frame: Any = None, progress: Any = None) -> SynthesizerView:
    """The synthetic-data view: :func:`synthesizer_sweep` on :func:`acs_synthesizer_table` (data seed
    ``seed``, the same seed for the noise), epsilons :data:`SYNTH_EPSILONS`."""
    tab = acs_synthesizer_table(frame, seed=seed)
    rows = synthesizer_sweep(
        tab["codes"],
        SYNTH_SIZES,
        tab["strata"],
        tab["k"],
        public_w=tab["public_w"],
        epsilons=list(SYNTH_EPSILONS),
        runs=runs,
        rng=seed,
        progress=progress,
    )
    return SynthesizerView(runs=int(runs), epsilons=SYNTH_EPSILONS, rows=tuple(rows))
