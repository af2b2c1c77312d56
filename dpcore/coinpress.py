"""CoinPress univariate mean estimation under zCDP and its stratified variants.

Biswas, Dong, Kamath & Ullman (NeurIPS 2020), as restated in Rosenblatt, Stoyanovich & Musco
(AAAI 2024) Appendix B, Algorithms 1-3; digest ``../shared/papers/stratification_spec.md`` §4.

* :func:`uvm_step` -- Algorithm 1 (UVM): clamp to ``[l - w, r + w]`` with
  ``w = sigma sqrt(2 ln(2n/beta_s))``, Gaussian mechanism with L2 sensitivity
  ``Delta = (r - l + 2w)/n`` and noise sd ``Delta / sqrt(2 rho_s)`` (Def. 6), new interval
  ``Z +- sqrt(2 (sigma^2/n + Delta^2/(2 rho_s)) ln(2/beta_s))``.
* :func:`coinpress_mean` -- Algorithm 2 (UVMRec), t steps; returns the midpoint of the *last*
  interval ``[l_t, r_t]`` (the printed ``[l_i, r_i]`` is a typo, digest §4.2), i.e. the last Z.
  Failure probabilities ``beta/(4(t-1))`` for steps 1..t-1 (printed "beta/4(t-1)") and ``beta/4``
  for the last step. Each step fails with probability at most ``2 beta_s`` (a point outside the
  clamp window: ``n * 2 exp(-w^2/(2 sigma^2)) = beta_s``; the Gaussian tail of
  ``(mean - mu) + noise``: ``beta_s``), so the final interval contains mu with probability at least
  ``1 - beta``: ``|value - mu| <= half-width`` is the *stated error*.
* :func:`stratified_coinpress` -- Algorithm 3 (StratCoinpress / PubStratCoinpress): every stratum
  runs UVMRec with the **full** schedule ``rho_1..rho_t`` (the printed per-stratum ``rho_i`` clashes
  with the step notation; the stated total ``sum_j rho_j`` confirms the full-schedule reading),
  ``beta_i = beta/k``, and the overall mean is ``sum_i w~_i mu_i`` with the weights
  **normalised** ``w~_i = w_i / sum_j w_j`` (the printed ``(1/k) sum_i w_i mu_i`` is only a mean
  when ``w_i = k |G_i|/n``, digest §4.4).
* Budget split (reference code, digest §4.3): t = 1: ``[rho]``; otherwise the first t - 1 steps
  share ``rho/4`` equally and the last gets ``3 rho/4``.

Privacy: each step is the Gaussian mechanism (rho_j-zCDP, Bun & Steinke 2016 Prop. 1.6) and reads
the whole (group's) data, so UVMRec is ``sum_j rho_j = rho``-zCDP (sequential composition); the
strata are disjoint, so all group estimates together are still rho-zCDP (parallel composition) and
the weighted overall mean is post-processing with public weights. rho-zCDP implies
``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP for every delta (Bun & Steinke 2016, Prop. 1.3;
the paper drops the ``rho`` term, digest §1.4): :func:`zcdp_to_dp`.

Neighbouring relation: replace one person's value inside their group; n, the group labels and
sizes, sigma, the prior interval ``[lower, upper]`` and the weights are public.

Deviation from the reference code (digest §4.3): we implement the paper's Algorithm 1, which
carries sigma explicitly (the reference step assumes sigma = 1), and we clamp the original data at
every step (the reference clips in place; both are private).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import noise
from .stratified import MAX_GROUPS, SimulatedGroupMeans, WeightedGroupMeans, group_index, readonly, resolve_weights
from .validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_bounds,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
)

__all__ = [
    "zcdp_to_dp",
    "pure_dp_to_zcdp",
    "coinpress_schedule",
    "UVMStep",
    "uvm_step",
    "CoinPressRelease",
    "coinpress_mean",
    "StratifiedCoinPressRelease",
    "stratified_coinpress",
    "CoinPressSimulation",
    "simulate_coinpress",
]

MAX_STEPS = 20


def zcdp_to_dp(rho: float, delta: float) -> float:
    """epsilon such that rho-zCDP implies (epsilon, delta)-DP: ``rho + 2 sqrt(rho ln(1/delta))``.

    Bun & Steinke (2016), Proposition 1.3 (the exact form; the paper's ``eps sqrt(2 ln(1/delta))``
    drops the ``rho`` term).
    """
    rho = check_positive(rho, "rho")
    delta = check_probability(delta, "delta")
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def pure_dp_to_zcdp(epsilon: float) -> float:
    """epsilon-DP implies (epsilon^2 / 2)-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    return check_epsilon(epsilon) ** 2 / 2.0


def coinpress_schedule(rho: float, t: int) -> np.ndarray:
    """Per-step budgets summing to rho: ``[rho]`` for t = 1, else ``[rho/(4(t-1))] * (t-1) + [3 rho/4]``."""
    rho = check_positive(rho, "rho")
    t = check_int(t, "t (number of CoinPress steps)", minimum=1, maximum=MAX_STEPS)
    if t == 1:
        return np.array([rho])
    return np.array([rho / (4.0 * (t - 1))] * (t - 1) + [0.75 * rho])


def _step_betas(beta: float, t: int) -> np.ndarray:
    if t == 1:
        return np.array([beta / 4.0])
    return np.array([beta / (4.0 * (t - 1))] * (t - 1) + [beta / 4.0])


@dataclass(frozen=True)
class UVMStep:
    """One UVM step (Algorithm 1): the released interval and the public parameters."""

    lower: float
    upper: float
    center: float  # Z, the noisy clamped mean
    n: int
    rho: float
    beta: float
    clamp_low: float
    clamp_high: float
    sensitivity: float  # Delta = (r - l + 2w)/n
    noise_sd: float  # Delta / sqrt(2 rho)


def uvm_step(
    values: Any, lower: float, upper: float, *, sigma: float, rho: float, beta: float, rng: Any = None
) -> UVMStep:
    """One rho-zCDP interval-shrinking step (paper Appendix B, Algorithm 1)."""
    x = as_finite_array(values, "values", min_size=1)
    lower, upper = check_bounds(lower, upper, lower_name="lower", upper_name="upper")
    sigma = check_positive(sigma, "sigma")
    rho = check_positive(rho, "rho")
    beta = check_probability(beta, "beta")
    n = x.size
    w = sigma * math.sqrt(2.0 * math.log(2.0 * n / beta))
    lo, hi = lower - w, upper + w
    sens = (hi - lo) / n
    sd = sens / math.sqrt(2.0 * rho)
    z = float(np.clip(x, lo, hi).mean() + noise.sample_gaussian(sd, 1, rng=as_generator(rng))[0])
    half = math.sqrt(2.0 * (sigma**2 / n + sd**2) * math.log(2.0 / beta))
    return UVMStep(
        lower=z - half,
        upper=z + half,
        center=z,
        n=n,
        rho=rho,
        beta=beta,
        clamp_low=lo,
        clamp_high=hi,
        sensitivity=sens,
        noise_sd=sd,
    )


# ---------------------------------------------------------------------------------------------
# Vectorised core: UVMRec for k groups x S simulations at once
# ---------------------------------------------------------------------------------------------


def _prefix_sums(xs: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """Prefix sums (leading 0) of every group's sorted values, computed **within** the group so that
    no group's result depends on another group's data, not even through rounding."""
    return [
        np.concatenate([[0.0], np.cumsum(xs[int(s) : int(s) + int(g)])]) for s, g in zip(starts, counts, strict=True)
    ]


def _clipped_sums(
    xs: np.ndarray, cs: list[np.ndarray], starts: np.ndarray, counts: np.ndarray, a: np.ndarray, b: np.ndarray
) -> np.ndarray:
    """``sum_{x in group j} clip(x, a[s, j], b[s, j])`` for every run s and group j, exactly.

    ``xs`` is sorted by group then value, ``cs[j]`` the prefix sums of group j. For sorted values:
    clip-sum = a * #(x < a) + b * #(x > b) + sum of the x in [a, b] -- two binary searches per
    (run, group) instead of touching every record in every run.
    """
    out = np.empty(a.shape)
    for j in range(counts.size):
        s, g = int(starts[j]), int(counts[j])
        seg = xs[s : s + g]
        ia = np.searchsorted(seg, a[:, j], side="left")
        ib = np.searchsorted(seg, b[:, j], side="right")
        out[:, j] = a[:, j] * ia + b[:, j] * (g - ib) + (cs[j][ib] - cs[j][ia])
    return out


def _uvmrec_core(
    x_sorted: np.ndarray,
    starts: np.ndarray,
    counts: np.ndarray,
    lower: float,
    upper: float,
    sigma: np.ndarray,
    schedule: np.ndarray,
    beta_groups: np.ndarray,
    gen: Any,
    n_sims: int,
    clamp_to_prior: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """UVMRec on k non-empty groups, ``n_sims`` independent runs (``clamp_to_prior``: clip the
    final estimates into ``[lower, upper]``, a post-processing step not in the paper).

    ``x_sorted`` holds the records sorted by group then value (group j at
    ``starts[j]:starts[j]+counts[j]``). Returns (estimates (S, k), final lower, final upper).
    """
    k = counts.size
    t = schedule.size
    g = counts.astype(float)
    cs = _prefix_sums(x_sorted, starts, counts)
    lo = np.full((n_sims, k), float(lower))
    hi = np.full((n_sims, k), float(upper))
    z = np.zeros((n_sims, k))
    for j in range(t):
        b_s = beta_groups / (4.0 * (t - 1)) if j < t - 1 else beta_groups / 4.0
        w = sigma * np.sqrt(2.0 * np.log(2.0 * g / b_s))  # (k,)
        clo, chi = lo - w, hi + w  # (S, k) clamp window [l - w, r + w]
        sd = (chi - clo) / g / math.sqrt(2.0 * schedule[j])  # Delta / sqrt(2 rho_j)
        means = _clipped_sums(x_sorted, cs, starts, counts, clo, chi) / g
        z = means + sd * noise.sample_gaussian(1.0, (n_sims, k), rng=gen)
        half = np.sqrt(2.0 * (sigma**2 / g + sd**2) * np.log(2.0 / b_s))
        lo, hi = z - half, z + half
    if clamp_to_prior:
        z = np.clip(z, lower, upper)
    return z, lo, hi


def _uvmrec_one_group(
    x: np.ndarray,
    lower: float,
    upper: float,
    sigma: float,
    schedule: np.ndarray,
    beta: float,
    gen: Any,
    n_sims: int,
    clamp_to_prior: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_uvmrec_core` on all the values as one group (CoinPress's global mean)."""
    starts, counts, sigmas, betas = np.array([0]), np.array([x.size]), np.array([sigma]), np.array([beta])
    return _uvmrec_core(np.sort(x), starts, counts, lower, upper, sigmas, schedule, betas, gen, n_sims, clamp_to_prior)


def _prepare(x: np.ndarray, codes: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    o1 = np.argsort(x)  # by value, then a stable sort by group (radix sort on small ints): faster than lexsort
    order = o1[np.argsort(codes[o1], kind="stable")]
    nonempty = np.flatnonzero(counts > 0)
    c = counts[nonempty]
    starts = np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64)
    return x[order], starts, nonempty


def _check_common(rho: Any, lower: Any, upper: Any, t: Any, beta: Any) -> tuple[float, float, float, np.ndarray, float]:
    rho = check_positive(rho, "rho")
    lower, upper = check_bounds(lower, upper, lower_name="prior lower end", upper_name="prior upper end")
    schedule = coinpress_schedule(rho, t)
    beta = check_probability(beta, "beta")
    return rho, lower, upper, schedule, beta


@dataclass(frozen=True)
class CoinPressRelease:
    """A CoinPress (UVMRec) estimate: ``value`` lies in ``interval`` with probability >= 1 - beta
    (when the data are N(mu, sigma^2) with mu in the prior interval)."""

    value: float
    interval: tuple[float, float]
    rho: float
    schedule: tuple[float, ...]
    beta: float
    sigma: float
    n: int
    prior: tuple[float, float]

    def epsilon(self, delta: float) -> float:
        """(epsilon, delta)-DP equivalent of this rho (Bun & Steinke Prop. 1.3)."""
        return zcdp_to_dp(self.rho, delta)

    @property
    def stated_error(self) -> float:
        return (self.interval[1] - self.interval[0]) / 2.0


def coinpress_mean(
    values: Any,
    *,
    rho: float,
    lower: float,
    upper: float,
    sigma: float,
    t: int = 2,
    beta: float = 0.05,
    rng: Any = None,
    clamp_to_prior: bool = False,
) -> CoinPressRelease:
    """rho-zCDP CoinPress mean (Algorithm 2, UVMRec) of all values.

    ``[lower, upper]`` is a public interval believed to contain the mean; ``sigma`` a public
    standard deviation (an upper bound is fine, only slower to converge). Neighbouring: replace
    one value, n public.
    """
    x = as_finite_array(values, "values", min_size=2)
    rho, lower, upper, schedule, beta = _check_common(rho, lower, upper, t, beta)
    sigma = check_positive(sigma, "sigma")
    z, lo, hi = _uvmrec_one_group(x, lower, upper, sigma, schedule, beta, as_generator(rng), 1, clamp_to_prior)
    return CoinPressRelease(
        value=float(z[0, 0]),
        interval=(float(lo[0, 0]), float(hi[0, 0])),
        rho=rho,
        schedule=tuple(schedule.tolist()),
        beta=beta,
        sigma=sigma,
        n=int(x.size),
        prior=(lower, upper),
    )


@dataclass(frozen=True)
class StratifiedCoinPressRelease(WeightedGroupMeans):
    """StratCoinpress / PubStratCoinpress (Algorithm 3): group means and their weighted combination.

    ``per_group`` follows the sorted ``labels``; ``overall = sum_i weights[i] per_group[i]``
    (weights normalised). An empty group releases the prior midpoint (no data, no budget).
    """

    intervals: np.ndarray  # (k, 2) final intervals (prior interval for empty groups)
    rho: float
    schedule: tuple[float, ...]
    beta: float
    empty: np.ndarray
    notes: tuple[str, ...] = field(default_factory=tuple)

    def epsilon(self, delta: float) -> float:
        return zcdp_to_dp(self.rho, delta)


def _normalise_weights(weights: Any, labels: tuple, counts: np.ndarray) -> tuple[np.ndarray, str]:
    """Public weights, checked to be >= 0 and to sum to one (the normalised w~ of Algorithm 3)."""
    return resolve_weights(weights, labels, counts)


def _sigma_per_group(sigma: Any, k: int) -> np.ndarray:
    s = np.asarray(sigma, dtype=float)
    if s.ndim == 0:
        s = np.full(k, float(s))
    if s.shape != (k,) or not np.isfinite(s).all() or (s <= 0).any():
        raise DPInputError(f"sigma must be one number > 0 or one number > 0 per group ({k})")
    return s


def stratified_coinpress(
    values: Any,
    groups: Any,
    *,
    rho: float,
    lower: float,
    upper: float,
    sigma: Any,
    t: int = 2,
    beta: float = 0.05,
    weights: Any = None,
    rng: Any = None,
    levels: Sequence | None = None,
    max_groups: int = MAX_GROUPS,
    clamp_to_prior: bool = False,
) -> StratifiedCoinPressRelease:
    """rho-zCDP StratCoinpress (Algorithm 3): UVMRec in every group with the full schedule.

    ``weights``: None = the group proportions (public by assumption: StratCoinpress); PubStrat =
    pass :func:`dpcore.stratified.public_weights` of a public hold-out. ``sigma``: one public value
    or one per group. ``beta`` is split equally, ``beta_i = beta/k``.
    """
    x = as_finite_array(values, "values", min_size=2)
    rho, lower, upper, schedule, beta = _check_common(rho, lower, upper, t, beta)
    lev = list(weights.keys()) if isinstance(weights, Mapping) else levels
    gi = group_index(groups, levels=lev, max_groups=max_groups)
    if gi.codes.size != x.size:
        raise DPInputError(f"values ({x.size}) and groups ({gi.codes.size}) must have the same length")
    sig = _sigma_per_group(sigma, gi.k)
    w, source = _normalise_weights(weights, gi.labels, gi.counts)
    xs, starts, nonempty = _prepare(x, gi.codes, gi.counts)
    z, lo, hi = _uvmrec_core(
        xs,
        starts,
        gi.counts[nonempty],
        lower,
        upper,
        sig[nonempty],
        schedule,
        np.full(nonempty.size, beta / gi.k),
        as_generator(rng),
        1,
        clamp_to_prior,
    )
    est = np.full(gi.k, (lower + upper) / 2.0)
    intervals = np.tile([lower, upper], (gi.k, 1)).astype(float)
    est[nonempty] = z[0]
    intervals[nonempty, 0] = lo[0]
    intervals[nonempty, 1] = hi[0]
    empty = gi.counts == 0
    notes = tuple(
        f"group {lab!r} has no records: its released value is the prior midpoint {(lower + upper) / 2:g} (uses no data)"
        for lab, e in zip(gi.labels, empty, strict=True)
        if e
    )
    return StratifiedCoinPressRelease(
        overall=float(w @ est),
        per_group=readonly(est),
        labels=gi.labels,
        counts=gi.counts,
        weights=readonly(w),
        weights_source=source,
        intervals=readonly(intervals),
        rho=rho,
        schedule=tuple(schedule.tolist()),
        beta=beta,
        empty=readonly(empty),
        notes=notes,
    )


@dataclass(frozen=True)
class CoinPressSimulation(SimulatedGroupMeans):
    """``n_sims`` simulated releases: stratified (n_sims x k, n_sims) and global (n_sims)."""

    global_overall: np.ndarray | None  # None when include_global=False (not simulated)
    rho: float


def simulate_coinpress(
    values: Any,
    groups: Any,
    *,
    rho: float,
    lower: float,
    upper: float,
    sigma: Any,
    sigma_global: float | None = None,
    t: int = 2,
    beta: float = 0.05,
    weights: Any = None,
    n_sims: int = 200,
    rng: Any = None,
    max_groups: int = MAX_GROUPS,
    include_global: bool = True,
    clamp_to_prior: bool = False,
) -> CoinPressSimulation:
    """Vectorised Monte Carlo of StratCoinpress (with the given weights) and global CoinPress.

    ``sigma_global`` (public) is used for the global run; default: the largest group sigma.
    Empty groups are not allowed here (simulations use observed groups only).
    ``include_global`` (a bool): also simulate global CoinPress; without it ``global_overall`` is None.
    """
    if not isinstance(include_global, (bool, np.bool_)):
        raise DPInputError(f"include_global must be True or False, got {include_global!r}")
    x = as_finite_array(values, "values", min_size=2)
    rho, lower, upper, schedule, beta = _check_common(rho, lower, upper, t, beta)
    n_sims = check_int(n_sims, "n_sims", minimum=1, maximum=100_000)
    gi = group_index(groups, max_groups=max_groups)
    if gi.codes.size != x.size:
        raise DPInputError("values and groups must have the same length")
    sig = _sigma_per_group(sigma, gi.k)
    w, _ = _normalise_weights(weights, gi.labels, gi.counts)
    gen = as_generator(rng)
    xs, starts, nonempty = _prepare(x, gi.codes, gi.counts)
    z, _, _ = _uvmrec_core(
        xs, starts, gi.counts, lower, upper, sig, schedule, np.full(gi.k, beta / gi.k), gen, n_sims, clamp_to_prior
    )
    if include_global:
        sg = float(sig.max()) if sigma_global is None else check_positive(sigma_global, "sigma_global")
        zg, _, _ = _uvmrec_one_group(x, lower, upper, sg, schedule, beta, gen, n_sims, clamp_to_prior)
        glob = zg[:, 0]
    else:
        glob = None
    return CoinPressSimulation(
        **CoinPressSimulation.common_fields(gi, w, x, z),
        global_overall=None if glob is None else readonly(glob),
        rho=rho,
    )
