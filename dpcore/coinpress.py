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
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from . import noise
from .stratified import MAX_GROUPS, _readonly, _resolve_weights, group_index
from .validation import (
    check_epsilon,
    DPInputError,
    as_finite_array,
    as_generator,
    check_bounds,
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
    "METHODS",
    "GLOBAL_METHODS",
    "MethodsSimulation",
    "simulate_methods",
    "mixture_sigma",
    "synthetic_sweep",
    "grouping_sweep",
    "real_epsilon_sweep",
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


def uvm_step(values: Any, lower: float, upper: float, *, sigma: float, rho: float, beta: float,
             rng: Any = None) -> UVMStep:
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
    half = math.sqrt(2.0 * (sigma ** 2 / n + sd ** 2) * math.log(2.0 / beta))
    return UVMStep(lower=z - half, upper=z + half, center=z, n=n, rho=rho, beta=beta, clamp_low=lo,
                   clamp_high=hi, sensitivity=sens, noise_sd=sd)


# ---------------------------------------------------------------------------------------------
# Vectorised core: UVMRec for k groups x S simulations at once
# ---------------------------------------------------------------------------------------------

def _prefix_sums(xs: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """Prefix sums (leading 0) of every group's sorted values, computed **within** the group so that
    no group's result depends on another group's data, not even through rounding."""
    return [np.concatenate([[0.0], np.cumsum(xs[int(s):int(s) + int(g)])]) for s, g in zip(starts, counts)]


def _clipped_sums(xs: np.ndarray, cs: list[np.ndarray], starts: np.ndarray, counts: np.ndarray, a: np.ndarray,
                  b: np.ndarray) -> np.ndarray:
    """``sum_{x in group j} clip(x, a[s, j], b[s, j])`` for every run s and group j, exactly.

    ``xs`` is sorted by group then value, ``cs[j]`` the prefix sums of group j. For sorted values:
    clip-sum = a * #(x < a) + b * #(x > b) + sum of the x in [a, b] -- two binary searches per
    (run, group) instead of touching every record in every run.
    """
    out = np.empty(a.shape)
    for j in range(counts.size):
        s, g = int(starts[j]), int(counts[j])
        seg = xs[s:s + g]
        ia = np.searchsorted(seg, a[:, j], side="left")
        ib = np.searchsorted(seg, b[:, j], side="right")
        out[:, j] = a[:, j] * ia + b[:, j] * (g - ib) + (cs[j][ib] - cs[j][ia])
    return out


def _uvmrec_core(x_sorted: np.ndarray, starts: np.ndarray, counts: np.ndarray, lower: float, upper: float,
                 sigma: np.ndarray, schedule: np.ndarray, beta_groups: np.ndarray, gen: Any,
                 n_sims: int, clamp_to_prior: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
        half = np.sqrt(2.0 * (sigma ** 2 / g + sd ** 2) * np.log(2.0 / b_s))
        lo, hi = z - half, z + half
    if clamp_to_prior:
        z = np.clip(z, lower, upper)
    return z, lo, hi


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


def coinpress_mean(values: Any, *, rho: float, lower: float, upper: float, sigma: float, t: int = 2,
                   beta: float = 0.05, rng: Any = None, clamp_to_prior: bool = False) -> CoinPressRelease:
    """rho-zCDP CoinPress mean (Algorithm 2, UVMRec) of all values.

    ``[lower, upper]`` is a public interval believed to contain the mean; ``sigma`` a public
    standard deviation (an upper bound is fine, only slower to converge). Neighbouring: replace
    one value, n public.
    """
    x = as_finite_array(values, "values", min_size=2)
    rho, lower, upper, schedule, beta = _check_common(rho, lower, upper, t, beta)
    sigma = check_positive(sigma, "sigma")
    z, lo, hi = _uvmrec_core(np.sort(x), np.array([0]), np.array([x.size]), lower, upper, np.array([sigma]),
                             schedule, np.array([beta]), as_generator(rng), 1, clamp_to_prior)
    return CoinPressRelease(value=float(z[0, 0]), interval=(float(lo[0, 0]), float(hi[0, 0])), rho=rho,
                            schedule=tuple(schedule.tolist()), beta=beta, sigma=sigma, n=int(x.size),
                            prior=(lower, upper))


@dataclass(frozen=True)
class StratifiedCoinPressRelease:
    """StratCoinpress / PubStratCoinpress (Algorithm 3): group means and their weighted combination.

    ``per_group`` follows the sorted ``labels``; ``overall = sum_i weights[i] per_group[i]``
    (weights normalised). An empty group releases the prior midpoint (no data, no budget).
    """

    overall: float
    per_group: np.ndarray
    labels: tuple
    counts: np.ndarray
    weights: np.ndarray
    weights_source: str
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
    return _resolve_weights(weights, labels, counts)


def _sigma_per_group(sigma: Any, k: int) -> np.ndarray:
    s = np.asarray(sigma, dtype=float)
    if s.ndim == 0:
        s = np.full(k, float(s))
    if s.shape != (k,) or not np.isfinite(s).all() or (s <= 0).any():
        raise DPInputError(f"sigma must be one number > 0 or one number > 0 per group ({k})")
    return s


def stratified_coinpress(values: Any, groups: Any, *, rho: float, lower: float, upper: float, sigma: Any,
                         t: int = 2, beta: float = 0.05, weights: Any = None, rng: Any = None,
                         levels: Sequence | None = None, max_groups: int = MAX_GROUPS,
                         clamp_to_prior: bool = False) -> StratifiedCoinPressRelease:
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
    z, lo, hi = _uvmrec_core(xs, starts, gi.counts[nonempty], lower, upper, sig[nonempty], schedule,
                             np.full(nonempty.size, beta / gi.k), as_generator(rng), 1, clamp_to_prior)
    est = np.full(gi.k, (lower + upper) / 2.0)
    intervals = np.tile([lower, upper], (gi.k, 1)).astype(float)
    est[nonempty] = z[0]
    intervals[nonempty, 0] = lo[0]
    intervals[nonempty, 1] = hi[0]
    empty = gi.counts == 0
    notes = tuple(f"group {lab!r} has no records: its released value is the prior midpoint "
                  f"{(lower + upper) / 2:g} (uses no data)" for lab, e in zip(gi.labels, empty) if e)
    return StratifiedCoinPressRelease(
        overall=float(w @ est), per_group=_readonly(est), labels=gi.labels, counts=gi.counts, weights=_readonly(w),
        weights_source=source, intervals=_readonly(intervals), rho=rho, schedule=tuple(schedule.tolist()),
        beta=beta, empty=_readonly(empty), notes=notes)


@dataclass(frozen=True)
class CoinPressSimulation:
    """``n_sims`` simulated releases: stratified (n_sims x k, n_sims) and global (n_sims)."""

    labels: tuple
    counts: np.ndarray
    weights: np.ndarray
    true_groups: np.ndarray
    true_overall: float
    strat_groups: np.ndarray
    strat_overall: np.ndarray
    global_overall: np.ndarray
    rho: float


def simulate_coinpress(values: Any, groups: Any, *, rho: float, lower: float, upper: float, sigma: Any,
                       sigma_global: float | None = None, t: int = 2, beta: float = 0.05, weights: Any = None,
                       n_sims: int = 200, rng: Any = None, max_groups: int = MAX_GROUPS,
                       include_global: bool = True, clamp_to_prior: bool = False) -> CoinPressSimulation:
    """Vectorised Monte Carlo of StratCoinpress (with the given weights) and global CoinPress.

    ``sigma_global`` (public) is used for the global run; default: the largest group sigma.
    Empty groups are not allowed here (simulations use observed groups only).
    """
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
    z, _, _ = _uvmrec_core(xs, starts, gi.counts, lower, upper, sig, schedule,
                           np.full(gi.k, beta / gi.k), gen, n_sims, clamp_to_prior)
    if include_global:
        sg = float(sig.max()) if sigma_global is None else check_positive(sigma_global, "sigma_global")
        zg, _, _ = _uvmrec_core(np.sort(x), np.array([0]), np.array([x.size]), lower, upper, np.array([sg]), schedule,
                                np.array([beta]), gen, n_sims, clamp_to_prior)
        glob = zg[:, 0]
    else:
        glob = np.full(n_sims, np.nan)
    true_groups = np.bincount(gi.codes, weights=x, minlength=gi.k) / gi.counts
    return CoinPressSimulation(labels=gi.labels, counts=gi.counts, weights=_readonly(w),
                               true_groups=_readonly(true_groups), true_overall=float(x.mean()),
                               strat_groups=_readonly(z), strat_overall=_readonly(z @ w),
                               global_overall=_readonly(glob), rho=rho)


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


def simulate_methods(values: Any, groups: Any, *, epsilon: float, clip_range: Any, rho: float | None = None,
                     lower: float, upper: float, sigma: Any, sigma_global: float | None = None, t: int = 2,
                     beta: float = 0.05, gamma: float = 0.1, public_w: Any = None, n_sims: int = 200,
                     methods: Sequence[str] = METHODS, rng: Any = None,
                     max_groups: int = MAX_GROUPS, clamp_to_prior: bool = False) -> MethodsSimulation:
    """Simulate every requested method ``n_sims`` times on one dataset (vectorised).

    Group-size weights are the (public by assumption) proportions; ``public_w`` are the PubStrat
    weights from a public hold-out (required for "PubStratCoinpress"), in sorted-label order.
    """
    from .stratified import simulate_laplace_releases

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
        ls = simulate_laplace_releases(x, groups, epsilon=epsilon, clip_range=clip_range, n_sims=n_sims,
                                       gamma=gamma, rng=gen, max_groups=max_groups)
        if "Global Laplace" in methods:
            out_o["Global Laplace"] = ls.global_overall
            out_g["Global Laplace"] = np.repeat(ls.global_overall[:, None], k, axis=1)
        if "Stratified Laplace" in methods:
            out_o["Stratified Laplace"] = ls.strat_overall
            out_g["Stratified Laplace"] = ls.strat_groups
    strat = [m for m in ("StratCoinpress", "PubStratCoinpress") if m in methods]
    pw = None
    if strat or "CoinPress" in methods:
        cs = simulate_coinpress(x, groups, rho=rho, lower=lower, upper=upper, sigma=sigma,
                                sigma_global=sigma_global, t=t, beta=beta, n_sims=n_sims, rng=gen,
                                max_groups=max_groups, include_global="CoinPress" in methods,
                                clamp_to_prior=clamp_to_prior)
        if "CoinPress" in methods:
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
    return MethodsSimulation(labels=gi.labels, counts=gi.counts, true_groups=true_groups,
                             true_overall=float(x.mean()), groups=out_g, overall=out_o, epsilon=float(epsilon),
                             rho=rho, weights=gi.counts / gi.counts.sum(), public_weights=pw)


def mixture_sigma(sizes: Any, mus: Any, sigmas: Any) -> float:
    """Standard deviation of a Gaussian mixture with the given group sizes, means and sds."""
    v = as_finite_array(sizes, "sizes")
    mus = as_finite_array(mus, "mus")
    sig = as_finite_array(sigmas, "sigmas")
    if not (v.size == mus.size == sig.size) or (v < 0).any() or v.sum() <= 0 or (sig < 0).any():
        raise DPInputError("sizes, mus and sigmas need one entry per group; sizes and sigmas must be >= 0")
    v = v / v.sum()
    m = float(v @ mus)
    return math.sqrt(max(float(v @ (sig ** 2 + mus ** 2)) - m * m, 0.0))


def synthetic_sweep(param: str, grid: Sequence[float], *, n: int = 10_000, k: int = 9, alpha: float = 0.3,
                    epsilon: float = 1.0, R: float = 3.0, t: int = 2, beta: float = 0.05, gamma: float = 0.1,
                    runs: int = 20, methods: Sequence[str] = METHODS, rng: Any = None,
                    progress: Any = None, clamp_to_prior: bool = False) -> list[dict]:
    """The paper's synthetic Gaussian-mixture experiment (Figs. 3, 6, 7; digest §4.5-4.6).

    For each value of ``param`` ("n", "k", "alpha" or "epsilon") and each of ``runs`` fresh
    datasets: draw a mixture of size 2n, keep n as private data and n as the public hold-out
    (PubStrat, as in the authors' code), and record every method's absolute error of the overall
    mean against the private data's true mean. Prior ``[-R, R]``; CoinPress knows each group's
    sigma (and the mixture's sigma for the global run); Laplace clips at the paper's
    ``R + sqrt(ln|G| / gamma)``. ``rho = epsilon^2 / 2``. ``progress(fraction, text)`` is called
    after each grid value. Returns one row per (value, run, method).
    """
    from .stratified import gaussian_mixture, split_public_private, public_weights

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
            sim = simulate_methods(pv, pg, epsilon=float(cfg["epsilon"]), clip_range=R, lower=-R, upper=R,
                                   sigma=sig, sigma_global=mixture_sigma(mix.sizes, mix.mus, mix.sigmas), t=t,
                                   beta=beta, gamma=gamma, public_w=pw, n_sims=1, methods=methods, rng=gen,
                                   clamp_to_prior=clamp_to_prior)
            for m in methods:
                rows.append({param: val, "run": run, "method": m,
                             "error": abs(float(sim.overall[m][0]) - sim.true_overall)})
        if progress is not None:
            progress((gi_ + 1) / len(grid), f"{param} = {val:g} done")
    return rows


def grouping_sweep(values: Any, strata: Sequence[tuple[str, Any]], *, epsilon: float, clip_range: Any,
                   lower: float, upper: float, sigma: float, t: int = 2, beta: float = 0.05, runs: int = 10,
                   methods: Sequence[str] = METHODS, rng: Any = None, progress: Any = None,
                   clamp_to_prior: bool = False) -> list[dict]:
    """The paper's Figure 2 on real data: error and parity error as the grouping gets finer.

    ``strata`` is a list of (name, labels-per-record). For each grouping and run, half of the
    records (shuffled) are the private data and half the public hold-out for PubStrat (as in the
    authors' code); every method's normalised error ``|est - mean| / |mean|`` of the overall mean
    and the parity error (Def. 11, omega = 1/k) are recorded (groups with true mean 0 skipped).
    ``sigma`` is a public standard deviation used by every CoinPress run.
    """
    from .stratified import parity_error, public_weights, split_public_private

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
            sim = simulate_methods(pv, pg, epsilon=epsilon, clip_range=clip_range, lower=lower, upper=upper,
                                   sigma=sigma, sigma_global=sigma, t=t, beta=beta, public_w=pw, n_sims=1,
                                   methods=methods, rng=gen, clamp_to_prior=clamp_to_prior)
            for m in methods:
                est_o = float(sim.overall[m][0])
                phi = parity_error(sim.true_overall, est_o, sim.true_groups, sim.groups[m][0], on_zero="skip")
                rows.append({"grouping": name, "k": len(labels), "run": run, "method": m,
                             "error": abs(est_o - sim.true_overall) / abs(sim.true_overall),
                             "parity error": float(phi)})
        if progress is not None:
            progress((si + 1) / len(strata), f"{name} done")
    return rows


def real_epsilon_sweep(values: Any, labels: Any, epsilons: Sequence[float], *, clip_range: Any, lower: float,
                       upper: float, sigma: float, t: int = 2, beta: float = 0.05, runs: int = 10,
                       methods: Sequence[str] = METHODS, rng: Any = None, progress: Any = None,
                       clamp_to_prior: bool = False) -> list[dict]:
    """Normalised error of the overall mean and parity error against epsilon on real data with one
    fixed grouping (same protocol as :func:`grouping_sweep`: a fresh random half per run)."""
    gen = as_generator(rng)
    rows: list[dict] = []
    eps_list = list(epsilons)
    codes = group_index(labels).codes
    for i, eps in enumerate(eps_list):
        for r in grouping_sweep(values, [("groups", codes)], epsilon=float(eps), clip_range=clip_range, lower=lower,
                                upper=upper, sigma=sigma, t=t, beta=beta, runs=runs, methods=methods, rng=gen,
                                clamp_to_prior=clamp_to_prior):
            r["epsilon"] = float(eps)
            rows.append(r)
        if progress is not None:
            progress((i + 1) / len(eps_list), f"epsilon = {eps:g} done")
    return rows
