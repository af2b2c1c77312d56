"""Choose epsilon before a release: accuracy first (smallest epsilon per target) and budget first.

Planning works on **planning data** (synthetic or public look-alike data). Planning on the
confidential file is itself not private: every number computed here reveals something about the
data it is computed on. The page says so; the release itself is made by :mod:`dpcore.release`.

Accuracy targets
----------------
A target reads "relative error at most ``rel_error`` with probability at least ``confidence``":
``P(|released - truth| <= rel_error * |truth|) >= confidence``, where *truth* is the statistic on
the (planning) data without any privacy protection and clipping, and the probability is over
the mechanism's noise only (the data are fixed). For a statistic made of several numbers (group
means, percentiles) the target is **joint**: every number within its tolerance at once.

How each statistic is solved (closed forms where they exist)
-----------------------------------------------------------
* Count above a threshold, two-sided geometric noise (sensitivity 1 under replace-one):
  ``P(|K| <= m) = 1 - 2 q^(m+1) / (1 + q)``, ``q = e^-eps``, ``m = floor(tol * count)``;
  solved exactly (bisection on a monotone closed form).
* Clipped Laplace mean (stratified paper Eq. 2): the error is ``c + L`` with the clipping bias
  ``c = mean(clip(x)) - mean(x)`` and ``L ~ Lap((U - L)/(n eps))``; ``P(|c + L| <= t)`` is the
  Laplace CDF difference ``F(t - c) - F(-t - c)``: exact.
* Group means (stratified paper Eq. 3): independent per-group Laplace errors, so the joint
  probability is the product of the per-group closed forms: exact. Groups are disjoint and
  group sizes are public, so the whole set costs epsilon (parallel composition).
* Gini (Lan & Reiter, smooth sensitivity + generalized Cauchy noise): the noise is
  ``(S_beta(X)/alpha) Z``; ``P(|noise| <= t) = 2 F_Z(t alpha / S_beta) - 1``: exact given the
  smooth sensitivity (beta = eps/gamma depends on epsilon, so S is recomputed at each step).
* Ratio of two noisy counts (Shoham & Ligett, LaplaceNoisedCounts): Claim 3.2 gives
  ``P(|r~ - r| >= alpha)`` in closed form (``dpcore.ratio.ratio_sample_accuracy``).
* Percentiles from the PSEO noisy histogram: no closed form; Monte Carlo with common random
  numbers (the geometric noise is written ``floor(E1/eps) - floor(E2/eps)`` with fixed
  exponentials E1, E2, so each draw's noise shrinks as epsilon grows) and a monotone search.
  The solver returns the smallest epsilon whose one-sided 95% Monte Carlo **lower** confidence
  bound on the success probability reaches the target (a conservative answer), plus the
  interval of epsilons compatible with the Monte Carlo error.

Totals: statistics released on the same data compose sequentially (epsilons add); a statistic
computed on disjoint parts (cells, groups) with public membership costs the maximum over parts
(parallel composition; :mod:`dpcore.budget`).

Budget first: :func:`split_budget` splits a total by weights with locks, :func:`rebalance`
moves one statistic's epsilon and re-spreads the rest over the unlocked ones in proportion to
their current values; :meth:`PlannedStatistic.error_quantile` gives the resulting accuracy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import budget as _budget
from . import noise
from .noise import secure as _secure_noise
from .validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_bounds,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
    check_probability,
)

__all__ = [
    "AccuracyTarget",
    "EpsilonSolution",
    "PlannedStatistic",
    "CountAbove",
    "ClippedMean",
    "GroupMeans",
    "GiniStatistic",
    "PercentilesStatistic",
    "ExponentialPercentilesStatistic",
    "PercentilesMethodAdvice",
    "recommend_percentiles_method",
    "RatioStatistic",
    "solve_epsilon",
    "plan_total",
    "PlanTotal",
    "split_budget",
    "rebalance",
    "laplace_epsilon_for_error",
    "STAT_KINDS",
    "make_statistic",
    "StatisticRelease",
    "NEIGHBOURING",
    "planning_groups",
    "geometric_epsilon_for_error",
    "EPS_MIN",
    "EPS_MAX",
]

#: neighbouring relation per statistic kind; the release record's ``neighbouring`` field. Group / cell
#: labels and sizes are public in every grouped relation, so the number of groups is public too: a
#: refusal that depends on it (a relative risk needs two groups) is decided from public inputs.
NEIGHBOURING = {
    "count": "replace one record; n public",
    "mean": "replace one record; n and the clip range public",
    "group_means": "replace one person's value within their group; group labels and sizes public",
    "percentiles": "replace one person within a cell; cell labels and sizes and the bin edges public",
    "group_medians": "replace one person within a group; group labels and sizes and the bin edges public",
    "gini": "replace one record; n and [lower, upper] public",
    "ratio": "replace one record (it may change both counts); group labels, n_x and n_y public",
}

EPS_MIN = 1e-4
EPS_MAX = 100.0
Z_ONE_SIDED_95 = 1.6448536269514722
GRID_POINTS = 33  # log grid of the monotone search (ratio about 1.4 between points over [1e-4, 100])
EXACT_REL = 1e-5  # relative precision of the exact bisection (the upper end is returned: it meets the target)
MC_REL = 5e-3  # bisection precision inside the MC search: well below the Monte Carlo uncertainty of epsilon (~2-3%)


@dataclass(frozen=True)
class AccuracyTarget:
    """``P(|released - truth| <= rel_error * |truth|) >= confidence`` (joint over a statistic's numbers)."""

    rel_error: float = 0.05
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_positive(self.rel_error, "relative error target")
        check_probability(self.confidence, "confidence level")

    def describe(self) -> str:
        return f"relative error at most {100 * self.rel_error:g}% with {100 * self.confidence:g}% probability"


# ---------------------------------------------------------------------------------------------
# Closed forms for the two basic noises
# ---------------------------------------------------------------------------------------------


def laplace_epsilon_for_error(abs_error: float, sensitivity: float, confidence: float) -> float:
    """Smallest epsilon with P(|Lap(s/eps)| <= t) >= confidence: eps = s ln(1/(1-confidence)) / t.

    From P(|L| > t) = exp(-t/b), b = s/eps (Dwork & Roth 2014, Fact 3.7).
    """
    t = check_positive(abs_error, "error tolerance")
    s = check_positive(sensitivity, "sensitivity")
    c = check_probability(confidence, "confidence")
    return s * math.log(1.0 / (1.0 - c)) / t


def _geometric_prob_within(m: int, epsilon: float) -> float:
    """P(|K| <= m) for the two-sided geometric P(k) ∝ e^(-eps|k|): 1 - 2 q^(m+1) / (1 + q)."""
    q = math.exp(-epsilon)
    return 1.0 - 2.0 * q ** (m + 1) / (1.0 + q)


def geometric_epsilon_for_error(abs_error: float, confidence: float) -> float:
    """Smallest epsilon with P(|K| <= abs_error) >= confidence, K two-sided geometric (integer noise).

    With m = floor(abs_error) and q = e^-eps the condition 2 q^(m+1)/(1+q) <= 1 - confidence is
    monotone in q; solved by bisection on q to 1e-12.
    """
    t = check_positive(abs_error, "error tolerance", allow_zero=True)
    c = check_probability(confidence, "confidence")
    m = int(math.floor(t))
    lo, hi = 0.0, 1.0  # q range; feasible at q -> 0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if 2.0 * mid ** (m + 1) / (1.0 + mid) <= 1.0 - c:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    return -math.log(lo)


def _laplace_cdf(x: np.ndarray) -> np.ndarray:
    """The standard Laplace CDF, F(x) = 1 - e^(-x)/2 (x > 0), e^x/2 (x <= 0): the formula of
    ``scipy.stats.laplace.cdf`` (its ``_cdf``; equal bit for bit, including at +-inf and NaN, a test checks
    it) without the distribution object's argument handling, which cost ~10 us per call and the planner
    calls it thousands of times per answer."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore"):
        return np.where(x > 0, 1.0 - 0.5 * np.exp(-x), 0.5 * np.exp(x))


def _laplace_interval_prob(t: np.ndarray, c: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(|c + L| <= t) for L ~ Lap(b), elementwise (0 when t < |c| - ... handled by the CDF)."""
    upper = _laplace_cdf((t - c) / b)
    lower = _laplace_cdf((-t - c) / b)
    return np.clip(upper - lower, 0.0, 1.0)


# ---------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StatisticRelease:
    """One real (or, with ``rng`` given, simulated) release of a planned statistic.

    ``values``: the released numbers (the only DP output). ``measurement``: the OpenDP
    measurement(s) or the certified dpcore sampler that drew the noise; ``privacy_map``: its
    privacy-map statement; ``epsilon``/``delta``: what the maps certify for this statistic under
    ``neighbouring`` (the relation the charge is stated in). Data-independent by construction:
    every field except ``values`` is a function of public inputs only.
    """

    values: np.ndarray
    measurement: str
    privacy_map: str
    epsilon: float
    delta: float
    neighbouring: str
    simulated: bool = False
    notes: tuple[str, ...] = ()
    #: the published form (``dpcore.published.published_table``): the values with honest digits, their interval
    #: ends at ``level`` and the extra DP outputs the interval is computed from (a noisy histogram, a bound)
    published: dict | None = None


def _published(
    kind: str, table: Any, record: dict, values: Sequence[str], level: float, inputs: Sequence[str] = ()
) -> dict:
    """The published form of a planned release: :func:`dpcore.published.published_table` on the same columns the
    command line publishes, so the app's release and the command line's carry the same intervals."""
    import pandas as pd

    from .published import published_table

    out = published_table(kind, pd.DataFrame(table), record, level)

    def cell_major(suffix: str) -> np.ndarray:  # as the released vector: cell 1 p25, p50, p75, cell 2 ...
        return np.stack([out[f"{v}{suffix}"].to_numpy(float) for v in values], axis=1).ravel()

    return {
        "values": cell_major(""),
        "lower": cell_major("_lower"),
        "upper": cell_major("_upper"),
        "level": float(level),
        "inputs": {c: out[c].tolist() for c in inputs},
    }


def _from_mechanism(
    draw, values, epsilon: float, neighbouring: str, notes=(), published: dict | None = None
) -> StatisticRelease:
    """The StatisticRelease of one mechanism draw (any of dpcore.mechanisms' ``*Draw``): pure DP, delta 0."""
    return StatisticRelease(
        np.asarray(values, dtype=float),
        draw.measurement,
        draw.privacy_map,
        float(epsilon),
        0.0,
        neighbouring,
        bool(draw.simulated),
        tuple(notes),
        published,
    )


class PlannedStatistic:
    """One statistic of a planned release, on planning data.

    Subclasses define ``truth`` (array of the true values, one per released number),
    ``prob_within(epsilon, rel_error) -> (p, se)`` (se = 0 for closed forms), ``simulate(epsilon,
    n, rng) -> (n, k) array of plausible released values``, ``_draw(epsilon, rng)`` (the mechanism
    from the method module: real noise only through :func:`dpcore.release.make_release`, which charges a
    ledger first; :meth:`simulate_draw` for one seeded numpy draw), ``labels`` and ``mechanism``.
    ``partition_parts`` is the number of disjoint parts the statistic is computed on (parallel composition
    inside it).
    """

    name: str = "statistic"
    kind: str = "generic"
    mechanism: str = ""
    exact: bool = True
    eps_min: float = EPS_MIN
    eps_max: float = EPS_MAX
    parallel_note: str = ""
    #: simulated releases behind ``prob_within`` (the Monte Carlo statistics, ``exact`` False, set their own)
    n_sims: int = 0

    @property
    def labels(self) -> tuple[str, ...]:
        """One label per released number (none by default)."""
        return ()

    @property
    def truth(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def prob_within(self, epsilon: float, rel_error: float) -> tuple[float, float]:  # pragma: no cover
        raise NotImplementedError

    def simulate(self, epsilon: float, n: int, rng=None) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _draw(self, epsilon: float, rng=None, level: float = 0.95) -> StatisticRelease:  # pragma: no cover
        """One draw of the mechanism: ``rng`` None (or :class:`dpcore.rng.SecureRandom`) draws the real noise of
        :mod:`dpcore.noise.secure`, a numpy Generator a simulation of the same law. Private: a real draw is only
        made by :func:`dpcore.release.make_release`, after the ledger is charged (:meth:`_draw_real`). ``level``: of
        the published intervals."""
        raise NotImplementedError

    def simulate_draw(self, epsilon: float, rng=None) -> np.ndarray:
        """One SIMULATED draw of the released numbers, for exploration: numpy noise of the mechanism's law,
        reproducible from ``rng`` (a seed or a numpy Generator; None: a fresh unseeded Generator).

        This is NOT a release: nothing is charged, and with a known seed the noise can be subtracted, so the
        output reveals the planning data exactly. Use it on public or synthetic data only; a real release is
        :func:`dpcore.release.make_release` with a ledger account (charged first, secure sampler)."""
        from .rng import SecureRandom

        if isinstance(rng, SecureRandom):
            raise DPInputError(
                "simulate_draw draws numpy noise for exploration and never the secure sampler: a real "
                "release is dpcore.release.make_release(items, ledger_account), which charges first"
            )
        return np.asarray(self._draw(epsilon, rng=as_generator(rng)).values, dtype=float)

    def _draw_real(self, epsilon: float, level: float = 0.95) -> StatisticRelease:
        """The real draw (OpenDP / certified sampler), with no ledger of its own: only
        :func:`dpcore.release.make_release` calls it, after it has charged the cost. ``level``: of the published
        intervals."""
        return self._draw(epsilon, rng=None, level=level)

    @property
    def neighbouring(self) -> str:
        """The neighbouring relation the release's privacy cost is stated in (public)."""
        return NEIGHBOURING.get(self.kind, "replace one record; n public")

    def params(self) -> dict[str, Any]:
        return {}

    def privacy_cost(self, epsilon: float) -> _budget.PrivacyCost:
        return _budget.pure(epsilon)

    def error_quantile(self, epsilon: float, confidence: float) -> tuple[float, float]:
        """Relative error r such that P(all numbers within r) = confidence, and its MC standard error
        in probability units (0 for closed forms). Found by bisection on r (prob_within is monotone in r)."""
        eps = check_epsilon(epsilon)
        conf = check_probability(confidence, "confidence")
        lo, hi = 0.0, 1e-3
        while self.prob_within(eps, hi)[0] < conf:
            lo, hi = hi, hi * 4
            if hi > 1e9:
                return math.inf, 0.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if self.prob_within(eps, mid)[0] >= conf:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-6 * hi:
                break
        return hi, self.prob_within(eps, hi)[1]

    def _rel_tolerance(self, rel_error: float) -> np.ndarray:
        truth = self.truth
        if not np.all(np.isfinite(truth)):
            raise DPInputError(
                f"{self.name}: a true value is undefined on this planning data (e.g. an empty cell, "
                "all-zero incomes or a zero denominator), so a relative error target is undefined; "
                "use planning data where the statistic is defined"
            )
        t = np.abs(truth) * check_positive(rel_error, "relative error")
        if np.any(t == 0):
            raise DPInputError(
                f"{self.name}: a true value is 0, so a relative error target is undefined; "
                "use planning data where the statistic is not 0"
            )
        return t


def _cell_histogram(values, edges: np.ndarray) -> np.ndarray:
    """Counts of b_j <= e < b_{j+1} with out-of-range values in the end bins (as
    dpcore.percentiles.histogram_counts), for a cell of any size including 0."""
    x = as_finite_array(values, "earnings", min_size=0) if np.size(values) else np.zeros(0)
    m = edges.size - 1
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, m - 1)
    return np.bincount(idx, minlength=m).astype(np.int64)


def _check_values(values, name="income values", min_size=2) -> np.ndarray:
    return as_finite_array(values, name, min_size=min_size)


def _gini_exact_profile(xs: np.ndarray, lower: float, upper: float):
    """The :class:`dpcore.gini.ExactSensitivityProfile` of these sorted, clipped data and bounds, shared by
    every :class:`GiniStatistic` on them and by the Gini view (:func:`dpcore.gini.shared_exact_profile`)."""
    from . import gini as _g

    return _g.shared_exact_profile(xs, lower, upper)


@dataclass(frozen=True, eq=False)
class CountAbove(PlannedStatistic):
    """Number of records with value >= threshold, released with two-sided geometric noise (sensitivity 1
    under replace-one: one replacement changes the count by at most 1; Ghosh et al. 2009)."""

    values: np.ndarray
    threshold: float
    name: str = "Count above threshold"
    kind: str = "count"
    mechanism: str = "count + two-sided geometric noise P(k) ∝ exp(-eps|k|) (sensitivity 1)"

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", _check_values(self.values))
        object.__setattr__(self, "threshold", check_finite(self.threshold, "threshold"))

    @property
    def count(self) -> int:
        return int(np.count_nonzero(self.values >= self.threshold))

    @property
    def truth(self) -> np.ndarray:
        return np.array([float(self.count)])

    @property
    def labels(self) -> tuple[str, ...]:
        return (f"count >= {self.threshold:,.0f}",)

    def prob_within(self, epsilon, rel_error):
        m = int(math.floor(self._rel_tolerance(rel_error)[0]))
        return _geometric_prob_within(m, check_epsilon(epsilon)), 0.0

    def simulate(self, epsilon, n, rng=None):
        k = noise.sample_two_sided_geometric(epsilon, n, rng=as_generator(rng))
        return np.clip(self.count + k, 0, self.values.size).astype(float)[:, None]  # the release's clamp to [0, n]

    def mechanism_at(self, epsilon):
        from .mechanisms import CountMechanism

        return CountMechanism(epsilon, sensitivity=1)

    def _draw(self, epsilon, rng=None, level: float = 0.95):
        mech = self.mechanism_at(epsilon)
        d = mech.draw([self.count], rng=rng, upper=[self.values.size])  # n is public: a count is in [0, n]
        pub = _published("count", {"count": d.counts, "n": [self.values.size]}, mech.record(), ["count"], level)
        return _from_mechanism(d, d.counts, check_epsilon(epsilon), self.neighbouring, published=pub)

    def params(self):
        return {"threshold": self.threshold, "sensitivity": 1}


@dataclass(frozen=True, eq=False)
class ClippedMean(PlannedStatistic):
    """Mean income, clipped to a public [lower, upper], plus Lap((upper - lower)/(n eps)) (stratified
    paper Eq. 2, :func:`dpcore.stratified.clipped_laplace_mean`). Replace-one, n public."""

    values: np.ndarray
    lower: float
    upper: float
    name: str = "Mean income (clipped)"
    kind: str = "mean"
    mechanism: str = "clipped mean + Laplace((U - L)/(n eps))"

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", _check_values(self.values))
        lo, hi = check_bounds(self.lower, self.upper, lower_name="clip lower", upper_name="clip upper")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    @property
    def truth(self) -> np.ndarray:
        return np.array([float(self.values.mean())])

    @property
    def labels(self):
        return ("mean",)

    @property
    def bias(self) -> float:
        return float(np.clip(self.values, self.lower, self.upper).mean() - self.values.mean())

    def scale(self, epsilon) -> float:
        return (self.upper - self.lower) / (self.values.size * check_epsilon(epsilon))

    def prob_within(self, epsilon, rel_error):
        t = self._rel_tolerance(rel_error)
        p = _laplace_interval_prob(t, np.array([self.bias]), np.array([self.scale(epsilon)]))
        return float(p[0]), 0.0

    def simulate(self, epsilon, n, rng=None):
        z = noise.sample_laplace(self.scale(epsilon), n, rng=as_generator(rng))
        return np.clip(self.truth[0] + self.bias + z, self.lower, self.upper)[:, None]  # the release's clamp

    def mechanism_at(self, epsilon):
        from .stratified import MeanMechanism

        return MeanMechanism(epsilon, self.lower, self.upper)

    def _draw(self, epsilon, rng=None, level: float = 0.95):
        """(Clipped sum in cents + OpenDP's floating-point-safe Laplace) / n (Eq. 2) by
        :class:`dpcore.stratified.MeanMechanism`, the command line's mechanism."""
        from .stratified import clipped_cents

        mech = self.mechanism_at(epsilon)
        d = mech.draw([int(clipped_cents(self.values, self.lower, self.upper).sum())], [self.values.size], rng=rng)
        pub = _published("mean", {"n": [self.values.size], "mean": d.means}, mech.record(), ["mean"], level)
        return _from_mechanism(
            d, d.means, mech.epsilon, "replace one record; n and the clip range public", published=pub
        )

    def params(self):
        return {"clip_lower": self.lower, "clip_upper": self.upper, "n": int(self.values.size)}


@dataclass(frozen=True, eq=False)
class GroupMeans(PlannedStatistic):
    """One clipped Laplace mean per group (stratified paper Eq. 3, :func:`dpcore.stratified.stratified_mean`).

    Neighbouring: replace one person's value inside their group; group labels and sizes public.
    Groups are disjoint, so all group means together cost epsilon (parallel composition).
    """

    values: np.ndarray
    groups: np.ndarray
    lower: float
    upper: float
    name: str = "Mean income by group"
    kind: str = "group_means"
    mechanism: str = "per-group clipped mean + Laplace((U - L)/(|G_i| eps)); parallel over groups"
    parallel_note: str = "groups are disjoint with public sizes: parallel composition (cost = epsilon once)"

    def __post_init__(self) -> None:
        from . import stratified

        x = _check_values(self.values)
        g = np.asarray(self.groups)
        if g.shape[0] != x.size:
            raise DPInputError(f"values ({x.size}) and groups ({g.shape[0]}) must have the same length")
        lo, hi = check_bounds(self.lower, self.upper, lower_name="clip lower", upper_name="clip upper")
        gi = stratified.group_index(g)
        if np.any(gi.counts == 0):
            raise DPInputError("a group is empty: remove it or give planning data with every group")
        object.__setattr__(self, "values", x)
        object.__setattr__(self, "groups", g)
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        self._gi: stratified.GroupIndex  # derived from the data, not a field
        object.__setattr__(self, "_gi", gi)

    @property
    def labels(self):
        return tuple(str(v) for v in self._gi.labels)

    @property
    def counts(self) -> np.ndarray:
        return self._gi.counts

    @property
    def truth(self) -> np.ndarray:
        return self._group_means()[0].copy()

    @property
    def bias(self) -> np.ndarray:
        return self._group_means()[1].copy()

    def _group_means(self) -> tuple[np.ndarray, np.ndarray]:
        """(true group means, clipping bias), computed once: the answer's error law asks for them at every
        step of its bisections. The data are never changed after __post_init__."""
        cached = self.__dict__.get("_truth_bias")
        if cached is None:
            truth = np.bincount(self._gi.codes, weights=self.values, minlength=self._gi.k) / self.counts
            clipped = np.clip(self.values, self.lower, self.upper)
            bias = np.bincount(self._gi.codes, weights=clipped, minlength=self._gi.k) / self.counts - truth
            cached = (truth, bias)
            object.__setattr__(self, "_truth_bias", cached)
        return cached

    def scale(self, epsilon) -> np.ndarray:
        return (self.upper - self.lower) / (self.counts * check_epsilon(epsilon))

    def prob_within(self, epsilon, rel_error):
        t = self._rel_tolerance(rel_error)
        p = _laplace_interval_prob(t, self.bias, self.scale(epsilon))
        return float(np.prod(p)), 0.0

    def simulate(self, epsilon, n, rng=None):
        b = self.scale(epsilon)
        z = noise.sample_laplace(1.0, (n, b.size), rng=as_generator(rng))
        return np.clip((self.truth + self.bias)[None, :] + b[None, :] * z, self.lower, self.upper)  # as released

    def mechanism_at(self, epsilon):
        from .stratified import MeanMechanism

        return MeanMechanism(epsilon, self.lower, self.upper)

    def _draw(self, epsilon, rng=None, level: float = 0.95):
        """Per group: (clipped sum in cents + Laplace) / |G_i| (Eq. 3) by :class:`dpcore.stratified.MeanMechanism`:
        one person changes one group's sum by at most U - L, so the whole vector costs epsilon (the groups are
        disjoint with public labels and sizes: parallel composition)."""
        from .stratified import clipped_cents

        mech = self.mechanism_at(epsilon)
        cents = clipped_cents(self.values, self.lower, self.upper)
        sums = np.zeros(self._gi.k, dtype=np.int64)
        np.add.at(sums, self._gi.codes, cents)
        d = mech.draw(sums, self.counts, rng=rng)
        pub = _published("mean", {"n": self.counts, "mean": d.means}, mech.record(), ["mean"], level)
        return _from_mechanism(
            d,
            d.means,
            mech.epsilon,
            "replace one person's value within their group; group labels and sizes public",
            published=pub,
        )

    def params(self):
        return {
            "clip_lower": self.lower,
            "clip_upper": self.upper,
            "group_sizes": {lab: int(c) for lab, c in zip(self.labels, self.counts, strict=True)},
        }


@dataclass(frozen=True, eq=False)
class GiniStatistic(PlannedStatistic):
    """Gini index (eq. (1)) by smooth sensitivity (Lan & Reiter), drawn by :class:`dpcore.gini.GiniMechanism`.

    Truth: the Gini of the planning incomes with negatives set to 0. The release clips incomes to
    the public [lower, upper] (negatives to ``lower``), so the error is
    ``c + (S_beta(X)/alpha) Z`` with the clipping bias ``c = gini(clipped) - truth``;
    ``P(|c + sZ| <= t) = F_Z((t - c)/s) - F_Z((-t - c)/s)`` with the exact CDF of the noise law.

    ``noise``: a ``dpcore.noise.smooth.SMOOTH_NOISES`` name: "cauchy" (the paper's generalized Cauchy, pure
    epsilon), "laplace" (NRS, (epsilon, delta)) or "laplace_lognormal" (Bun & Steinke, rho-zCDP implying
    (epsilon, delta); planning and simulation only). The noise law, (alpha, beta) and the privacy cost come
    from the mechanism's calibration at (epsilon, ``delta``), so the ledger composes the cost in its own
    currency and :func:`solve_epsilon` solves epsilon for any noise unchanged.

    Below ``exact_min_epsilon`` (0.05) the planner uses the closed-form "fast" smooth sensitivity, a
    valid upper bound on the exact one (``dpcore.gini``: exact <= fast), because the exact one costs
    O(n) per k up to k ~ ln(GS/A0)/beta (about a minute at eps = 0.001, n = 10,000). The planned noise
    is then over-stated, never under-stated: the plan stays conservative. At such epsilons the Gini
    release is mostly noise anyway.

    ``calibration`` defaults to "tight" (the certified largest alpha of :mod:`dpcore.noise`, about
    5-7x less noise than the paper's constants, as on the Gini page and in ``release_gini``);
    "paper" (alpha = eps/(4 gamma), beta = eps/gamma, closed form) is also available. The release
    uses the same calibration as the plan. The search stops at relative precision 5e-3 in epsilon
    (each step needs a certified calibration) and at epsilon 10 (the tight calibration's certificate
    gets slow above it; a Gini needing more is not worth releasing).
    """

    values: np.ndarray
    lower: float
    upper: float
    gamma: float = 2.0
    calibration: str = "tight"
    method: str = "exact"
    noise: str = "cauchy"
    delta: float | None = None
    name: str = "Gini index"
    kind: str = "gini"
    eps_min: float = 0.01
    eps_max: float = 10.0
    exact_min_epsilon: float = 0.05
    solve_rel: float = 5e-3
    mechanism: str = "Gini + (S_beta/alpha) * GeneralizedCauchy(gamma) (smooth sensitivity, Lan & Reiter)"

    def __post_init__(self) -> None:
        from . import gini as _g
        from .noise import smooth as smooth_noise

        x = _check_values(self.values)
        lo, hi = check_bounds(self.lower, self.upper, lower_name="lower bound", upper_name="upper bound")
        if self.calibration not in ("paper", "tight"):
            raise DPInputError(f"calibration must be 'paper' or 'tight', got {self.calibration!r}")
        g = check_finite(self.gamma, "gamma")
        if g <= 1:
            raise DPInputError(f"gamma must be > 1, got {g:g}")
        name = smooth_noise.check_noise(self.noise)
        if self.calibration == "paper" and name == "cauchy":
            noise.smooth_noise_calibration(1.0, g, mode="paper")  # refuses gammas where the constants fail
        if lo < 0:
            raise DPInputError(f"lower must be >= 0 for the Gini index (incomes are non-negative), got {lo:g}")
        # clip as release_gini does (negatives to lower); no refusal for all-zero data: the release
        # is defined on every data set in [lower, upper]^n (see _draw)
        xs = np.sort(np.clip(x, lo, hi))
        truth_data = np.maximum(x, 0.0)
        object.__setattr__(self, "values", x)
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "gamma", g)
        object.__setattr__(self, "noise", name)
        if name == "cauchy":
            object.__setattr__(self, "delta", 0.0)
        else:
            object.__setattr__(
                self,
                "delta",
                smooth_noise.DEFAULT_DELTA if self.delta is None else check_probability(self.delta, "delta"),
            )
            object.__setattr__(self, "mechanism", f"Gini + (S_beta/alpha) * Z, Z ~ {smooth_noise.SMOOTH_NOISES[name]}")
        # derived from the data and caches, not fields
        self._xs: np.ndarray
        self._truth: float
        self._clipped: float
        self._scales: dict[float, float]
        self._mechanisms: dict[float, _g.GiniMechanism]
        self._Z: noise.GeneralizedCauchy
        object.__setattr__(self, "_xs", xs)
        object.__setattr__(self, "_truth", _g.gini(truth_data) if truth_data.sum() > 0 else math.nan)
        object.__setattr__(self, "_clipped", _g.gini(xs) if xs.sum() > 0 else 0.0)
        object.__setattr__(self, "_scales", {})
        object.__setattr__(self, "_mechanisms", {})
        object.__setattr__(self, "_Z", noise.GeneralizedCauchy(g))

    @property
    def truth(self):
        return np.array([self._truth])

    @property
    def labels(self):
        return ("Gini",)

    @property
    def bias(self) -> float:
        return self._clipped - self._truth

    def mechanism_at(self, epsilon):
        """The :class:`dpcore.gini.GiniMechanism` of this statistic at ``epsilon`` (public parameters only)."""
        from . import gini as _g

        eps = check_epsilon(epsilon)
        key = round(eps, 12)
        mech = self._mechanisms.get(key)
        if mech is None:
            mech = _g.GiniMechanism(
                eps,
                self.lower,
                self.upper,
                noise=self.noise,
                gamma=self.gamma,
                calibration=self.calibration,
                delta=self.delta or None,
            )
            self._mechanisms[key] = mech
        return mech

    def _alpha_beta(self, eps: float) -> tuple[float, float]:
        """(alpha, beta) of the planning scale. The Cauchy's "paper" constants in closed form (the release
        certifies them; certifying at every step of the search would cost seconds per step)."""
        if self.noise == "cauchy":
            if self.calibration == "paper":
                return eps / (4.0 * self.gamma), eps / self.gamma
            cal = noise.smooth_noise_calibration(eps, self.gamma, mode="tight")
            return cal.alpha, cal.beta
        cal = self.mechanism_at(eps).smooth_calibration
        return cal.alpha, cal.beta

    def scale(self, epsilon) -> float:
        """Noise scale S_beta(X)/alpha at this epsilon (cached per epsilon)."""
        eps = check_epsilon(epsilon)
        key = round(eps, 12)
        if key not in self._scales:
            alpha, beta = self._alpha_beta(eps)
            self._scales[key] = self._smooth_sensitivity(eps, beta) / alpha
        return self._scales[key]

    def _smooth_sensitivity(self, eps: float, beta: float) -> float:
        """S_beta(X) (confidential). All-zero clipped data (possible only with lower = 0): g(0,...,0) := 0 (the
        convention of dpcore.gini's sensitivity analysis) and S_beta = GS = (n-1)/n exactly: replacing one
        zero by v > 0 gives g = (n-1)/n, so A^(0) = GS, and S_beta <= GS always. Smoothness holds with
        the neighbours' values, since A^(1)(X') >= |g(X') - g(0)| = GS for any neighbour X' of 0."""
        from . import gini as _g

        if float(self._xs.sum()) <= 0.0:
            return _g.gini_global_sensitivity(self._xs.size, self.lower, self.upper)
        method = self.method if eps >= self.exact_min_epsilon else "fast"
        if method == "exact":
            return self._exact_smooth_sensitivity(beta)
        return _g.smooth_sensitivity(self._xs, lower=self.lower, upper=self.upper, beta=beta, method=method).value

    def _exact_smooth_sensitivity(self, beta: float) -> float:
        """Exact S_beta(X) = max_k e^(-beta k) A^(k)(X): :func:`dpcore.gini.smooth_sensitivity` with
        method "exact", computed by the same :class:`dpcore.gini.ExactSensitivityProfile` (so the same
        number bit for bit), kept per data set and bounds (:func:`_gini_exact_profile`): A^(k) does not
        depend on beta, so each A^(k) is computed once per data set in this process and a new beta only
        re-weights them. The solver's bisection, and an answer at a new epsilon on data already seen (a
        page's slider; every statistic of those data shares the profile), pay only for the k not seen
        yet (the light-tailed noises' beta is ~15x smaller than the Cauchy's at the same epsilon)."""
        return _gini_exact_profile(self._xs, self.lower, self.upper).smooth_sensitivity(beta).value

    def certified_cost(self, epsilon) -> tuple[float, float]:
        """(epsilon, delta) that the real release certifies (the mechanism's cost; public inputs only)."""
        cost = self.mechanism_at(epsilon).privacy_cost()
        if cost.kind == "zcdp":
            cal = self.mechanism_at(epsilon).smooth_calibration
            return float(cal.epsilon), float(cal.delta)
        return float(cost.epsilon), float(cost.delta)

    def privacy_cost(self, epsilon: float) -> _budget.PrivacyCost:
        """The mechanism's cost: pure max(epsilon, certified loss + sampler excess) for the Cauchy, (epsilon,
        delta) for "laplace", rho-zCDP for "laplace_lognormal"."""
        return self.mechanism_at(epsilon).privacy_cost()

    def check_real_release(self, epsilon) -> None:
        """Refuse, from public settings only and before any charge, a real release without a floating-point-safe
        sampler ("laplace_lognormal"). Planning and simulation are unaffected."""
        self.mechanism_at(epsilon).check_real_release()

    def _dist(self, eps: float):
        return self._Z if self.noise == "cauchy" else self.mechanism_at(eps).noise_law()

    def prob_within(self, epsilon, rel_error):
        eps = check_epsilon(epsilon)
        t = float(self._rel_tolerance(rel_error)[0])
        s = self.scale(eps)
        c = self.bias
        dist = self._dist(eps)
        p = float(dist.cdf((t - c) / s) - dist.cdf((-t - c) / s))
        return min(max(p, 0.0), 1.0), 0.0

    def simulate(self, epsilon, n, rng=None):
        eps = check_epsilon(epsilon)
        return self.mechanism_at(eps).simulate(self._clipped, self.scale(eps), n, as_generator(rng))[:, None]

    def _release_mechanism_at(self, epsilon, level: float = 0.95):
        """The :class:`dpcore.mechanisms.GiniIntervalMechanism` a release of this statistic draws with (the value and
        the DP bound on S_beta(X) its published interval needs; the command line's), or None for
        "laplace_lognormal", which has no floating-point-safe sampler (simulation only, no interval)."""
        from .mechanisms import GiniIntervalMechanism

        if self.noise == "laplace_lognormal":
            return None
        return GiniIntervalMechanism(
            check_epsilon(epsilon),
            self.lower,
            self.upper,
            noise=self.noise,
            gamma=self.gamma,
            calibration=self.calibration,
            delta=None if self.noise == "cauchy" else self.delta,
            level=level,
        )

    def _draw(self, epsilon, rng=None, level: float = 0.95):
        """The release of :class:`dpcore.mechanisms.GiniIntervalMechanism` (the command line's): g(X) + (S_beta(X)/alpha)
        Z by :meth:`dpcore.gini.GiniMechanism.draw` (certified sampler or OpenDP's Laplace, grid 1e-6, window
        [0, 1]) at epsilon_value, and the DP upper bound on S_beta(X) at epsilon_bound that the published interval
        is computed from. Defined for every data set in [lower, upper]^n, including all-zero incomes (g := 0,
        S_beta := GS, see ``_smooth_sensitivity``): neighbours never differ in whether the release happens. The
        noise scale is confidential and stays out of the result. "laplace_lognormal": the value alone, simulated."""
        eps = check_epsilon(epsilon)
        notes = (
            "the noise scale S_beta(X)/alpha depends on the data and is not published",
            "clamped to [0, 1] and rounded to the grid 1e-6 (post-processing)",
        )
        mech = self._release_mechanism_at(eps, level)
        if mech is None:
            value_only = self.mechanism_at(eps)
            if not _secure_noise._simulated(rng):
                value_only.check_real_release()
            d = value_only.draw(self._clipped, self._smooth_sensitivity(eps, value_only.smoothness), rng=rng)
            eps_out, delta_out = self.certified_cost(eps)
            return StatisticRelease(
                np.array([d.value]),
                d.measurement,
                d.privacy_map,
                eps_out,
                delta_out,
                self.neighbouring,
                d.simulated,
                notes,
            )
        d2 = mech.draw(self._clipped, self._smooth_sensitivity(eps, mech.smoothness), rng=rng)
        cost = mech.privacy_cost()
        pub = None
        if np.isfinite(d2.smooth_sensitivity_upper):
            pub = _published(
                "gini",
                {"gini": [d2.value], "smooth_sensitivity_bound": [d2.smooth_sensitivity_upper]},
                mech.record(),
                ["gini"],
                level,
                inputs=["smooth_sensitivity_bound"],
            )
        return StatisticRelease(
            np.array([d2.value]),
            d2.measurement,
            f"{d2.privacy_map}; bound: {d2.bound_measurement}",
            float(cost.epsilon),
            float(cost.delta),
            self.neighbouring,
            d2.simulated,
            notes
            + (
                f"epsilon split: {mech.plan.epsilon_value:.4g} for the value, "
                f"{mech.plan.epsilon_bound:.4g} for the published bound on S_beta(X)",
            ),
            pub,
        )

    def params(self):
        out = {
            "lower": self.lower,
            "upper": self.upper,
            "gamma": self.gamma,
            "calibration": self.calibration,
            "smooth_sensitivity_method": f"{self.method} (the closed-form 'fast' bound below epsilon "
            f"{self.exact_min_epsilon:g})",
            "definition": "eq. (1): sum (2i-n-1) x_(i) / (n sum x)",
            "noise": self.noise,
        }
        if self.noise != "cauchy":
            out["delta"] = self.delta
        return out


@dataclass(frozen=True, eq=False)
class PercentilesStatistic(PlannedStatistic):
    """Percentiles of every cell of a table by the PSEO noisy histogram (:func:`dpcore.percentiles.release_percentiles`).

    ``cells``: one array of earnings per cell (disjoint sets of people). All cells are released with
    the same epsilon; cells are disjoint with public sizes, so the table costs epsilon once
    (parallel composition). Target: in **every** cell, **every** percentile within the relative
    tolerance of the cell's empirical percentile (:func:`dpcore.percentiles.empirical_percentile`)
    with the stated probability; so ``prob_within`` is the minimum over cells of the per-cell joint
    success probability, and the solved epsilon is the maximum of the per-cell epsilons (the rule
    of the PSEO paper, Section 5.5). The binning error (reading a percentile off a histogram) is part
    of the error, so a target tighter than the bins allows is refused.

    Monte Carlo with common random numbers: per bin the noise is floor(E1/e) - floor(E2/e) with
    e = epsilon per bin and fixed E1, E2 ~ Exp(1) (difference of two geometric failure counts with
    success probability 1 - e^-e: exactly the two-sided geometric law), so one set of draws serves
    every epsilon and the success curve is nearly monotone.
    """

    cells: tuple
    edges: np.ndarray | None = None
    q: tuple = (25.0, 50.0, 75.0)
    relation: str = "replace"
    cell_labels: tuple | None = None
    n_sims: int = 4000
    seed: int = 0
    name: str = "Percentiles by cell (PSEO histogram)"
    kind: str = "percentiles"
    exact: bool = False
    eps_min: float = 0.005
    eps_max: float = 50.0
    mechanism: str = "noisy histogram (two-sided geometric per bin) + eq. (4.2) read-off; parallel over cells"
    parallel_note: str = "cells are disjoint with public sizes: parallel composition (cost = epsilon once)"

    def __post_init__(self) -> None:
        from . import percentiles as _p

        cells = self.cells
        if isinstance(cells, np.ndarray) and cells.ndim == 1 and cells.dtype != object:
            cells = (cells,)
        cells = tuple(cells)
        if not cells:
            raise DPInputError("give at least one cell of earnings")
        edges = _p.check_edges(_p.PSEO_BIN_EDGES if self.edges is None else self.edges)
        qa = tuple(float(v) for v in _p.check_q(self.q))
        # histograms of any cell size (an empty cell or a single person still releases a noisy
        # histogram: under add/remove a cell's size is not public); the planning truth is NaN there
        counts = np.vstack([_cell_histogram(c, edges) for c in cells]).astype(float)
        truth = np.vstack(
            [_p.empirical_percentile(c, qa) if np.size(c) >= 1 else np.full(len(qa), math.nan) for c in cells]
        )
        n_sims = check_int(self.n_sims, "n_sims", minimum=100, maximum=200_000)
        if self.relation not in _p.RELATIONS:
            raise DPInputError(f"relation must be one of {_p.RELATIONS}")
        labels = self.cell_labels or tuple(f"cell {i + 1}" for i in range(len(cells)))
        if len(labels) != len(cells):
            raise DPInputError("one label per cell is needed")
        gen = as_generator(self.seed)
        object.__setattr__(self, "cells", tuple(np.asarray(c, dtype=float) for c in cells))
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "q", qa)
        object.__setattr__(self, "n_sims", n_sims)
        object.__setattr__(self, "cell_labels", tuple(str(v) for v in labels))
        # derived from the data (and the common random numbers) and a cache, not fields
        self._counts: np.ndarray
        self._truth: np.ndarray
        self._E1: np.ndarray
        self._E2: np.ndarray
        self._cache: dict[float, np.ndarray]
        object.__setattr__(self, "_counts", counts)
        object.__setattr__(self, "_truth", truth)
        shape = (n_sims, counts.shape[0], counts.shape[1])
        object.__setattr__(self, "_E1", gen.standard_exponential(shape))
        object.__setattr__(self, "_E2", gen.standard_exponential(shape))
        object.__setattr__(self, "_cache", {})

    @property
    def truth(self) -> np.ndarray:
        return self._truth.ravel()

    @property
    def labels(self):
        assert self.cell_labels is not None  # set by __post_init__
        return tuple(f"{c}: p{q:g}" for c in self.cell_labels for q in self.q)

    def eps_bin(self, epsilon) -> float:
        from . import percentiles as _p

        return _p.epsilon_per_bin(epsilon, self.relation)

    def _max_rel_errors(self, epsilon) -> np.ndarray:
        """Per simulated release and cell, the largest relative error over the percentiles: (n_sims, cells).
        Computed once per epsilon under the common random numbers (cached), so any tolerance is cheap."""
        from . import percentiles as _p

        key = round(float(epsilon), 12)
        hit = self._cache.get(key)
        if hit is None:
            e = self.eps_bin(epsilon)
            k = np.floor(self._E1 / e) - np.floor(self._E2 / e)
            noisy = (self._counts[None] + k).reshape(-1, self._counts.shape[1])
            vals = _p.percentiles_from_histogram(noisy, self.edges, self.q)
            vals = vals.reshape(self.n_sims, self._counts.shape[0], len(self.q))
            hit = np.max(np.abs(vals / self._truth[None] - 1.0), axis=2)
            if len(self._cache) >= 512:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def prob_within(self, epsilon, rel_error):
        eps = check_epsilon(epsilon)
        self._rel_tolerance(rel_error)  # refuses a zero true percentile
        ok = self._max_rel_errors(eps) <= rel_error * (1 + 1e-12)
        p = float(ok.mean(axis=0).min())
        return p, math.sqrt(max(p * (1 - p), 1.0 / self.n_sims) / self.n_sims)

    def simulate(self, epsilon, n, rng=None):
        return self.mechanism_at(epsilon).simulate(self._counts, n, as_generator(rng)).reshape(n, -1)

    @property
    def neighbouring(self) -> str:
        if self.relation == "add_remove":
            return (
                "replace one person within a cell; cell labels and bin edges public. The noise is calibrated "
                "for add/remove (epsilon per bin), which is 2 epsilon under replace-one: charged 2 epsilon"
            )
        return NEIGHBOURING["percentiles"]

    def privacy_cost(self, epsilon: float) -> _budget.PrivacyCost:
        """Replace-one cost. relation="replace": epsilon/2 per bin, L1 sensitivity 2 -> epsilon.
        relation="add_remove": epsilon per bin is epsilon-DP for adding/removing a person but 2 epsilon
        under replace-one (one person leaves a bin and enters another), so 2 epsilon is charged."""
        eps = check_epsilon(epsilon)
        return _budget.pure(2.0 * eps if self.relation == "add_remove" else eps)

    def mechanism_at(self, epsilon):
        from .percentiles import HistogramMechanism

        return HistogramMechanism(epsilon, self.edges, self.q, relation=self.relation)

    def _draw(self, epsilon, rng=None, level: float = 0.95):
        """Every cell's histogram + discrete Laplace, then the eq. (4.2) read-off, by
        :class:`dpcore.percentiles.HistogramMechanism` (the command line's mechanism). Cells are disjoint: one L1
        ball for the whole table."""
        mech = self.mechanism_at(epsilon)
        d = mech.draw(self._counts.astype(np.int64), rng=rng)
        cols = ["p" + f"{q:g}".replace(".", "_") for q in mech.q]
        table: dict[str, Any] = {"n": self._counts.sum(axis=1)}
        table.update({c: d.percentiles[:, j] for j, c in enumerate(cols)})
        bins = [f"noisy_bin_{j + 1:02d}" for j in range(self._counts.shape[1])]
        table.update({b: np.asarray(d.noisy_counts)[:, j] for j, b in enumerate(bins)})
        pub = _published("percentiles", table, mech.record(), cols, level, inputs=bins)
        return _from_mechanism(
            d, np.ravel(d.percentiles), mech.privacy_cost().epsilon, self.neighbouring, published=pub
        )

    def params(self):
        assert self.edges is not None and self.cell_labels is not None  # set by __post_init__
        return {
            "edges": [float(v) for v in self.edges],
            "q": list(self.q),
            "relation": self.relation,
            "cells": {lab: int(c.size) for lab, c in zip(self.cell_labels, self.cells, strict=True)},
        }


@dataclass(frozen=True, eq=False)
class ExponentialPercentilesStatistic(PercentilesStatistic):
    """One (or a few) quantiles of every cell by the exponential mechanism on a public candidate grid
    (:class:`dpcore.percentiles.ExponentialQuantileMechanism`, a plan's ``method = "exponential"``).

    ``edges`` are the candidates (default None: the "pseo-fine" grid); ``q`` at most
    ``dpcore.percentiles.MAX_EXPONENTIAL_QUANTILES`` levels in (0, 100), epsilon split equally across them.
    Replace-one with public cell sizes (the add/remove setting of the histogram does not apply). The target and
    ``prob_within`` are those of :class:`PercentilesStatistic` (every level of every cell within the relative
    tolerance); the Monte Carlo uses common random numbers without storing them: the same seeded stream of
    standard exponentials E for every epsilon, the choice being argmax(u / b + E) (b the noise scale), so the
    success curve is nearly monotone in epsilon and memory stays bounded by one chunk.
    """

    q: tuple = (50.0,)
    n_sims: int = 1000
    name: str = "Median by cell (exponential mechanism)"
    mechanism: str = (
        "exponential-mechanism quantile on a public candidate grid (OpenDP noisy max, permute-and-flip "
        "form); epsilon split across the levels; parallel over cells"
    )
    method: str = "exponential"

    def __post_init__(self) -> None:
        from . import percentiles as _p

        cells = self.cells
        if isinstance(cells, np.ndarray) and cells.ndim == 1 and cells.dtype != object:
            cells = (cells,)
        cells = tuple(np.asarray(c, dtype=float) for c in cells)
        if not cells:
            raise DPInputError("give at least one cell of earnings")
        if self.relation != "replace":
            raise DPInputError("the exponential mechanism is defined for replace-one neighbours (cell sizes public)")
        mech = _p.ExponentialQuantileMechanism(1.0, self.edges, self.q)  # checks the grid and the levels
        edges = np.asarray(mech.candidates)
        labels = self.cell_labels or tuple(f"cell {i + 1}" for i in range(len(cells)))
        if len(labels) != len(cells):
            raise DPInputError("one label per cell is needed")
        truth = np.vstack(
            [_p.empirical_percentile(c, mech.q) if c.size >= 1 else np.full(len(mech.q), math.nan) for c in cells]
        )
        object.__setattr__(self, "cells", cells)
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "q", mech.q)
        object.__setattr__(self, "n_sims", check_int(self.n_sims, "n_sims", minimum=100, maximum=200_000))
        object.__setattr__(self, "cell_labels", tuple(str(v) for v in labels))
        object.__setattr__(self, "_counts", np.vstack([_cell_histogram(c, edges) for c in cells]).astype(np.int64))
        object.__setattr__(self, "_truth", truth)
        object.__setattr__(self, "_cache", {})

    def _max_rel_errors(self, epsilon) -> np.ndarray:
        """(n_sims, cells): the largest relative error over the levels, per simulated release and cell."""
        key = round(float(epsilon), 12)
        hit = self._cache.get(key)
        if hit is None:
            mech = self.mechanism_at(epsilon)
            u = mech.scores(self._counts) / mech.noise_scale  # (cells, q, K + 1)
            gen = as_generator(self.seed)  # the same stream for every epsilon: common random numbers
            chunk = max(1, 4_000_000 // max(u.size, 1))
            hit = np.empty((self.n_sims, u.shape[0]))
            for start in range(0, self.n_sims, chunk):
                stop = min(self.n_sims, start + chunk)
                choices = np.argmax(u + gen.standard_exponential((stop - start,) + u.shape), axis=-1)
                vals = mech._ordered(choices)[1]
                hit[start:stop] = np.max(np.abs(vals / self._truth[None] - 1.0), axis=2)
            if len(self._cache) >= 512:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def privacy_cost(self, epsilon: float) -> _budget.PrivacyCost:
        """epsilon: epsilon / len(q) per level (sequential composition), parallel over the disjoint cells."""
        return _budget.pure(check_epsilon(epsilon))

    def mechanism_at(self, epsilon):
        from .percentiles import ExponentialQuantileMechanism

        return ExponentialQuantileMechanism(epsilon, self.edges, self.q)

    def _draw(self, epsilon, rng=None, level: float = 0.95):
        """Every cell's levels by :class:`dpcore.percentiles.ExponentialQuantileMechanism` (the command line's)."""
        mech = self.mechanism_at(epsilon)
        d = mech.draw(self._counts, rng=rng)
        return _from_mechanism(d, np.ravel(d.percentiles), mech.privacy_cost().epsilon, self.neighbouring)

    def params(self):
        return {**super().params(), "method": "exponential"}


@dataclass(frozen=True)
class PercentilesMethodAdvice:
    """Which percentiles method to use for the wanted levels, and why (one sentence a page shows)."""

    method: str
    reason: str


def recommend_percentiles_method(q: Sequence[float]) -> PercentilesMethodAdvice:
    """The exponential mechanism when a single percentile is wanted, the noisy histogram otherwise.

    One level: the exponential mechanism spends all of epsilon on it and chooses among fine public candidates, so
    its error is smaller than that of a read-off from a few noisy bins (docs/percentiles.md, "One median":
    measured on PSEO-like cells). Several levels: the exponential mechanism splits epsilon across them, while
    the histogram gives every percentile and the histogram itself for the same epsilon."""
    from .percentiles import check_q

    levels = check_q(q)
    if levels.size == 1 and levels[0] < 100:
        return PercentilesMethodAdvice(
            "exponential",
            (
                f"For one percentile (p{levels[0]:g}) use the exponential mechanism: it spends the whole ε on that "
                "percentile and picks it among fine public candidates, so it is more accurate than a value read off "
                "21 noisy bins (median absolute error of the median $1,100 against $2,864 over 28,600 PSEO-like cells at "
                "ε = 1)."
            ),
        )
    return PercentilesMethodAdvice(
        "histogram",
        (
            f"For {levels.size} percentiles use the noisy histogram: it gives "
            f"{', '.join(f'p{v:g}' for v in levels)} and the histogram itself for the same ε, while the exponential "
            f"mechanism would split ε {levels.size} ways."
            if levels.size > 1
            else "For the 100th percentile (the maximum) use the noisy histogram: the exponential mechanism needs a level "
            "below 100."
        ),
    )


@dataclass(frozen=True, eq=False)
class RatioStatistic(PlannedStatistic):
    """Relative risk (x/n_x)/(y/n_y) from LaplaceNoisedCounts (Shoham & Ligett, Claim 3.1; eps/2 per count).

    Neighbours: replace one record (it may change both counts); n_x, n_y public. Accuracy from
    Claim 3.2 (:func:`dpcore.ratio.ratio_sample_accuracy`) for the unclipped ratio of noisy counts;
    the relative error of RR equals that of x/y because n_y/n_x is a public constant.
    """

    x: int
    y: int
    n_x: int
    n_y: int
    name: str = "Relative risk"
    kind: str = "ratio"
    mechanism: str = "LaplaceNoisedCounts: x + Lap(2/eps), y + Lap(2/eps), ratio (Claim 3.2)"

    def __post_init__(self) -> None:
        # x = 0 and y = 0 are valid data: the release never refuses them (a refusal that depends on one
        # person leaks); only planning (a relative error target) needs x > 0 and y > 0, see prob_within
        x = check_int(self.x, "x (cases in group x)", minimum=0)
        y = check_int(self.y, "y (cases in group y)", minimum=0)
        nx = check_int(self.n_x, "n_x", minimum=1)
        ny = check_int(self.n_y, "n_y", minimum=1)
        if x > nx or y > ny:
            raise DPInputError("a count cannot exceed its group size")
        for k, v in (("x", x), ("y", y), ("n_x", nx), ("n_y", ny)):
            object.__setattr__(self, k, v)

    @property
    def truth(self):
        if self.y == 0:
            return np.array([math.nan])  # undefined: planning refuses it, the release does not care
        return np.array([(self.x / self.n_x) / (self.y / self.n_y)])

    @property
    def labels(self):
        return ("relative risk",)

    def prob_within(self, epsilon, rel_error):
        from . import ratio as _r

        if self.x == 0 or self.y == 0:
            raise DPInputError(
                f"{'x' if self.x == 0 else 'y'} = 0 on the planning data: the relative risk is "
                f"{'0' if self.x == 0 else 'undefined'} and a relative error target is undefined; "
                "plan on data with cases in both groups"
            )
        alpha = check_positive(rel_error, "relative error") * self.x / self.y
        beta = float(_r.ratio_sample_accuracy(self.x, self.y, epsilon=epsilon, alpha=alpha))
        return 1.0 - beta, 0.0

    def simulate(self, epsilon, n, rng=None):
        b = 2.0 / check_epsilon(epsilon)
        gen = as_generator(rng)
        xs = np.clip(self.x + noise.sample_laplace(b, n, rng=gen), 0.0, self.n_x)  # the release's clamp to [0, n]
        ys = np.clip(self.y + noise.sample_laplace(b, n, rng=gen), 0.0, self.n_y)
        return ((xs / np.maximum(ys, 1.0)) * (self.n_y / self.n_x))[:, None]

    def mechanism_at(self, epsilon):
        from .ratio import RelativeRiskMechanism

        return RelativeRiskMechanism(epsilon)

    def _draw(self, epsilon, rng=None, level: float = 0.95):
        """LaplaceNoisedCounts (Claim 3.1) by :class:`dpcore.ratio.RelativeRiskMechanism` (the command line's
        mechanism); the ratio (x~/n_x) / (max(y~, 1)/n_y) (Claim 3.4) is post-processing."""
        mech = self.mechanism_at(epsilon)
        d = mech.draw([self.x], [self.y], [self.n_x], [self.n_y], rng=rng)
        table = {
            "n_exposed": [self.n_x],
            "n_reference": [self.n_y],
            "cases_exposed": d.cases_exposed,
            "cases_reference": d.cases_reference,
            "relative_risk": d.relative_risk,
        }
        pub = _published(
            "relative_risk", table, mech.record(), ["relative_risk"], level, inputs=["cases_exposed", "cases_reference"]
        )
        return _from_mechanism(d, d.relative_risk, mech.epsilon, self.neighbouring, published=pub)

    def params(self):
        return {
            "n_x": self.n_x,
            "n_y": self.n_y,
            "split": "epsilon/2 per count",
            "denominator": "max(y~, 1) in the released ratio (Claim 3.4)",
        }


# ---------------------------------------------------------------------------------------------
# Building statistics from a planning dataset (used by the page and by generated scripts)
# ---------------------------------------------------------------------------------------------

#: kind -> plain-language name, in the order the page lists them.
STAT_KINDS = {
    "gini": "Gini index",
    "percentiles": "Earnings percentiles by cell (PSEO)",
    "group_means": "Mean income by group",
    "group_medians": "Median income by group",
    "ratio": "Relative risk of low income (group x vs group y)",
    "mean": "Mean income",
    "count": "Number of people above an income",
}


def planning_groups(n: int, *, shares: Sequence[float] = (0.5, 0.3, 0.2), seed: int = 0) -> np.ndarray:
    """Group labels "group A", "group B", ... drawn at random with the given shares, for planning data
    that has no grouping column (synthetic incomes). Random groups have equal expected means; they
    show the effect of group size, which is what the privacy noise depends on."""
    n = check_int(n, "n", minimum=2)
    sh = as_finite_array(shares, "shares")
    if np.any(sh <= 0):
        raise DPInputError("group shares must be > 0")
    labels = np.array([f"group {chr(65 + i)}" for i in range(sh.size)])
    return labels[as_generator(seed).choice(sh.size, size=n, p=sh / sh.sum())]


def _percentiles_statistic(cells: tuple, labels: tuple, params: dict) -> PercentilesStatistic:
    """The percentiles statistic of ``make_statistic``: the noisy histogram, or the exponential mechanism."""
    method = params.get("method", "histogram")
    if method == "exponential":
        return ExponentialPercentilesStatistic(
            cells,
            edges=params.get("candidates"),
            q=tuple(params.get("q", (50,))),
            cell_labels=labels,
            n_sims=int(params.get("n_sims", 1000)),
            seed=int(params.get("seed", 0)),
        )
    if method != "histogram":
        raise DPInputError(f"percentiles method must be 'histogram' or 'exponential', got {method!r}")
    return PercentilesStatistic(
        cells,
        q=tuple(params.get("q", (25, 50, 75))),
        cell_labels=labels,
        n_sims=int(params.get("n_sims", 4000)),
        seed=int(params.get("seed", 0)),
        relation=params.get("relation", "replace"),
    )


def make_statistic(kind: str, values, groups=None, **params) -> PlannedStatistic:
    """Build a planned statistic of one of :data:`STAT_KINDS` from planning data.

    values: incomes; groups: one label per record (needed by "percentiles" (cells = groups),
    "group_means" and "ratio"). params per kind:
    gini: lower=0, upper, gamma=2, calibration="tight"; percentiles: q=(25, 50, 75), n_sims, seed,
    relation="replace" (negative incomes are set to 0: PSEO bins start at $10,000 anyway), method="histogram" or
    "exponential" (:class:`ExponentialPercentilesStatistic`: q=(50,), candidates=None for "pseo-fine");
    group_means / mean: lower, upper (clip range); count: threshold;
    ratio: threshold (low income = below it), group_x, group_y (default: the first two labels).
    """
    x = _check_values(values)
    if kind not in STAT_KINDS:
        raise DPInputError(f"unknown statistic {kind!r}; choose one of {list(STAT_KINDS)}")
    if kind in ("percentiles", "group_medians", "group_means", "ratio"):
        if groups is None:
            raise DPInputError(f"{STAT_KINDS[kind]} needs a group (cell) for every record")
        g = np.asarray(groups).astype(str)
        if g.shape[0] != x.size:
            raise DPInputError(f"values ({x.size}) and groups ({g.shape[0]}) must have the same length")
        labels = sorted(set(g.tolist()))
    if kind == "gini":
        return GiniStatistic(
            x,
            float(params.get("lower", 0.0)),
            float(params["upper"]),
            gamma=float(params.get("gamma", 2.0)),
            calibration=params.get("calibration", "tight"),
            noise=params.get("noise", "cauchy"),
            delta=params.get("delta"),
        )
    if kind == "mean":
        return ClippedMean(x, float(params.get("lower", 0.0)), float(params["upper"]))
    if kind == "count":
        return CountAbove(x, float(params["threshold"]))
    if kind == "group_means":
        return GroupMeans(x, g, float(params.get("lower", 0.0)), float(params["upper"]))
    if kind == "group_medians":  # the PSEO histogram machinery with q = 50
        cells = tuple(np.maximum(x[g == lab], 0.0) for lab in labels)
        return PercentilesStatistic(
            cells,
            q=(50.0,),
            cell_labels=tuple(labels),
            n_sims=int(params.get("n_sims", 4000)),
            seed=int(params.get("seed", 0)),
            relation=params.get("relation", "replace"),
            name="Median income by group (PSEO histogram)",
            kind="group_medians",
        )
    if kind == "percentiles":
        return _percentiles_statistic(tuple(np.maximum(x[g == lab], 0.0) for lab in labels), tuple(labels), params)
    # ratio
    if len(labels) < 2:
        raise DPInputError("a relative risk needs two groups; the data have one")
    gx = str(params.get("group_x", labels[0]))
    gy = str(params.get("group_y", labels[1]))
    if gx == gy:
        raise DPInputError("choose two different groups for the relative risk")
    for lab in (gx, gy):
        if lab not in labels:
            raise DPInputError(f"there is no group {lab!r}; groups are {labels[:10]}")
    thr = check_finite(params["threshold"], "low-income threshold")
    in_x, in_y = g == gx, g == gy
    stat = RatioStatistic(
        int(np.count_nonzero(x[in_x] < thr)), int(np.count_nonzero(x[in_y] < thr)), int(in_x.sum()), int(in_y.sum())
    )
    object.__setattr__(stat, "name", f"Relative risk of income < {thr:,.0f}: {gx} vs {gy}")
    return stat


# ---------------------------------------------------------------------------------------------
# Solvers
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EpsilonSolution:
    """The smallest epsilon meeting a target, with how it was found.

    ``epsilon``: the recommended value (for Monte Carlo statistics, the conservative one: the MC
    lower confidence bound of the success probability reaches the target). ``achieved``: success
    probability at ``epsilon`` (exact, or the MC estimate), ``mc_se`` its standard error (0 when
    exact). ``epsilon_interval``: epsilons compatible with the Monte Carlo error (point estimate of
    the crossing and the conservative end); equal ends for closed forms.
    """

    statistic: str
    epsilon: float
    target: AccuracyTarget
    method: str
    achieved: float
    mc_se: float
    epsilon_interval: tuple[float, float]
    parallel_note: str = ""


def _bisect_log(ok: Callable[[float], bool], lo: float, hi: float, rel: float = 1e-6) -> float:
    """Smallest eps in [lo, hi] with ok(eps) (ok monotone: False ... True), to relative precision rel."""
    a, b = math.log(lo), math.log(hi)
    while b - a > rel:
        m = 0.5 * (a + b)
        if ok(math.exp(m)):
            b = m
        else:
            a = m
    return math.exp(b)


def solve_epsilon(
    stat: PlannedStatistic, target: AccuracyTarget, *, eps_min: float | None = None, eps_max: float | None = None
) -> EpsilonSolution:
    """Smallest epsilon whose (joint) accuracy meets ``target`` for ``stat`` on its planning data.

    Closed-form statistics: bracketing on a fixed log grid of 33 epsilons, then bisection in log
    epsilon on the exact, monotone success probability (relative precision 1e-5; the end that meets
    the target is returned). Monte Carlo statistics: a monotone search on the same log grid (the success curve made monotone by a running minimum from the right), refined by
    bisection, on the statistic's fixed common random numbers; the recommended epsilon is where the
    one-sided 95% lower confidence bound p - 1.645 SE reaches the target.
    Raises DPInputError when even eps_max does not meet the target (e.g. clipping bias too large).
    """
    if not isinstance(target, AccuracyTarget):
        raise TypeError("target must be an AccuracyTarget")
    if not isinstance(stat, PlannedStatistic):
        raise TypeError("stat must be a planned statistic (dpcore.planner.make_statistic builds one)")
    eps_min = getattr(stat, "eps_min", EPS_MIN) if eps_min is None else check_epsilon(eps_min, "eps_min")
    eps_max = getattr(stat, "eps_max", EPS_MAX) if eps_max is None else check_epsilon(eps_max, "eps_max")
    conf, tol = target.confidence, target.rel_error
    p_max, se_max = stat.prob_within(eps_max, tol)
    if p_max - (Z_ONE_SIDED_95 * se_max if not stat.exact else 0.0) < conf:
        raise DPInputError(
            f"{stat.name}: even epsilon = {eps_max:g} does not reach {target.describe()} "
            f"(success probability {p_max:.3f}); the error left at large epsilon comes from clipping or binning, "
            "not from noise: widen the clip range / bins or relax the target"
        )
    grid = np.exp(np.linspace(math.log(eps_min), math.log(eps_max), GRID_POINTS))
    if stat.exact:
        ok = lambda e: stat.prob_within(e, tol)[0] >= conf  # noqa: E731
        # bracket on the fixed grid (its evaluations are cached by the statistic across targets), then bisect.
        # ok(grid[-1]) is True (checked above); ok(grid[0]) = ok(eps_min) is asked only when the bracket ends
        # at the bottom (same answer as asking it first: ok is monotone), because eps_min is the costliest
        # point for a smooth-sensitivity statistic (smallest beta).
        lo_i, hi_i = 0, grid.size - 1
        while hi_i - lo_i > 1:
            mid_i = (lo_i + hi_i) // 2
            if ok(float(grid[mid_i])):
                hi_i = mid_i
            else:
                lo_i = mid_i
        if hi_i == 1 and ok(eps_min):
            eps = eps_min
        else:
            eps = _bisect_log(ok, float(grid[hi_i - 1]), float(grid[hi_i]), rel=getattr(stat, "solve_rel", EXACT_REL))
        p, _ = stat.prob_within(eps, tol)
        return EpsilonSolution(
            stat.name,
            eps,
            target,
            "closed form, exact (bisection on a monotone formula, relative precision "
            f"{getattr(stat, 'solve_rel', EXACT_REL):.0e})",
            p,
            0.0,
            (eps, eps),
            stat.parallel_note,
        )

    ps = np.array([stat.prob_within(e, tol) for e in grid])  # (p, se)
    p_mono = np.minimum.accumulate(ps[::-1, 0])[::-1]
    se = ps[:, 1]
    lcb_mono = np.minimum.accumulate((ps[:, 0] - Z_ONE_SIDED_95 * se)[::-1])[::-1]

    def crossing(values: np.ndarray, ok: Callable[[float], bool]) -> float:
        idx = int(np.argmax(values >= conf))
        if values[idx] < conf:
            return math.inf
        if idx == 0:
            return float(grid[0])
        return _bisect_log(ok, float(grid[idx - 1]), float(grid[idx]), rel=MC_REL)

    def p_ok(e):
        return stat.prob_within(e, tol)[0] >= conf

    def lcb_ok(e):
        p, s = stat.prob_within(e, tol)
        return p - Z_ONE_SIDED_95 * s >= conf

    eps_point = crossing(p_mono, p_ok)
    eps_safe = crossing(lcb_mono, lcb_ok)
    eps_safe = max(eps_safe, eps_point)
    p, s = stat.prob_within(eps_safe, tol)
    return EpsilonSolution(
        stat.name,
        eps_safe,
        target,
        f"Monte Carlo ({stat.n_sims:,} simulated releases, common random numbers) + monotone search",
        p,
        s,
        (eps_point, eps_safe),
        stat.parallel_note,
    )


@dataclass(frozen=True)
class PlanTotal:
    """Total epsilon of a plan: sequential composition over statistics (each already includes its own
    parallel composition over disjoint parts)."""

    epsilon: float
    per_statistic: tuple[tuple[str, float], ...]
    ledger: _budget.Ledger


def plan_total(solutions: Sequence[EpsilonSolution | tuple[str, float]]) -> PlanTotal:
    """Sequential composition of the per-statistic epsilons (pure DP): the total is their sum."""
    led = _budget.Ledger()
    per = []
    if isinstance(solutions, (str, bytes)) or not hasattr(solutions, "__iter__"):
        raise TypeError("solutions must be a list of EpsilonSolution or (name, epsilon) pairs")
    for s in solutions:
        if isinstance(s, EpsilonSolution):
            name, eps = s.statistic, s.epsilon
        elif isinstance(s, (tuple, list)) and len(s) == 2:
            name, eps = str(s[0]), s[1]
        else:
            raise TypeError(f"each plan item must be an EpsilonSolution or a (name, epsilon) pair, got {s!r}")
        eps = check_epsilon(eps, f"epsilon of {name}")
        led.charge(name, _budget.pure(eps))
        per.append((name, eps))
    if not per:
        raise DPInputError("the plan has no statistics")
    total = led.spent_pure()
    assert total is not None  # every charge above is pure
    return PlanTotal(total, tuple(per), led)


# ---------------------------------------------------------------------------------------------
# Budget first: split with weights and locks, rebalance
# ---------------------------------------------------------------------------------------------


def split_budget(total: float, weights: Sequence[float], locked: dict[int, float] | None = None) -> np.ndarray:
    """Split ``total`` epsilon: locked statistics keep their value, the rest is shared in proportion to
    ``weights``. Raises DPInputError when the locks use more than the total."""
    total = check_epsilon(total, "total epsilon")
    w = as_finite_array(weights, "weights")
    if np.any(w < 0):
        raise DPInputError("weights must be >= 0")
    locked = dict(locked or {})
    out = np.zeros(w.size)
    used = 0.0
    for i, v in locked.items():
        i = check_int(i, "locked index", minimum=0, maximum=w.size - 1)
        out[i] = check_epsilon(v, f"locked epsilon of statistic {i + 1}")
        used += out[i]
    free = [i for i in range(w.size) if i not in locked]
    left = total - used
    if not free and abs(left) > 1e-9 * total:
        raise DPInputError("every statistic is locked: unlock one so the total can change")
    if left < -1e-12 * total:
        raise DPInputError(f"the locked statistics use {used:.4g}, more than the total {total:.4g}")
    if free:
        if left <= 0:
            raise DPInputError("the locked statistics use the whole budget: unlock one or raise the total")
        wf = w[free]
        if wf.sum() <= 0:
            raise DPInputError("the unlocked statistics all have weight 0")
        out[free] = left * wf / wf.sum()
        if np.any(out[free] == 0):
            raise DPInputError("a statistic with weight 0 would get epsilon 0 (infinite noise): give it a weight > 0")
    return out


def rebalance(
    current: Sequence[float],
    index: int,
    new_value: float,
    locked: Sequence[int] = (),
    total: float | None = None,
    floor: float = 0.0,
) -> np.ndarray:
    """Set statistic ``index`` to ``new_value`` and re-spread the rest of ``total`` (default: the current
    sum) over the other unlocked statistics in proportion to their current epsilons; locked ones keep
    theirs. The moved value is capped so every other unlocked statistic keeps at least ``floor``
    (and a positive share)."""
    cur = as_finite_array(current, "current epsilons")
    if np.any(cur <= 0):
        raise DPInputError("every current epsilon must be > 0")
    index = check_int(index, "index", minimum=0, maximum=cur.size - 1)
    new_value = check_epsilon(new_value, "new epsilon")
    total = float(cur.sum()) if total is None else check_epsilon(total, "total epsilon")
    locked_set = {check_int(i, "locked index", minimum=0, maximum=cur.size - 1) for i in locked} - {index}
    others = [i for i in range(cur.size) if i != index and i not in locked_set]
    fixed = float(sum(cur[i] for i in locked_set))
    out = cur.copy()
    if not others:
        # nothing to rebalance against: the moved statistic takes whatever the locks leave
        out[index] = total - fixed
        if out[index] <= 0 or out[index] < floor:
            raise DPInputError("the locked statistics use (almost) the whole budget: unlock one or raise the total")
        return out
    room = total - fixed
    floor = check_positive(floor, "floor", allow_zero=True)
    k = len(others)
    if room <= floor * (k + 1):
        raise DPInputError("the locked statistics leave too little budget to move this one")
    new_value = min(max(new_value, floor), room - floor * k, room * (1 - 1e-3))
    out[index] = new_value
    share = cur[others] / cur[others].sum()
    out[others] = floor + (room - new_value - floor * k) * share
    return out
