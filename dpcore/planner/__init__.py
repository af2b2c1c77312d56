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

from .budget_split import rebalance, split_budget
from .build import RELEASABLE, STAT_KINDS, make_statistic, planning_groups
from .closed_forms import (
    EPS_MAX,
    EPS_MIN,
    EXACT_REL,
    GRID_POINTS,
    AccuracyTarget,
    geometric_epsilon_for_error,
    laplace_epsilon_for_error,
)
from .counts_means import ClippedMean, CountAbove, GroupMeans, RatioStatistic
from .gini_statistic import GiniStatistic
from .percentile_statistics import (
    ExponentialPercentilesStatistic,
    PercentilesMethodAdvice,
    PercentilesStatistic,
    recommend_percentiles_method,
)
from .solve import EpsilonSolution, PlanTotal, plan_total, solve_epsilon
from .statistics import NEIGHBOURING, PlannedStatistic, StatisticRelease

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
    "RELEASABLE",
    "make_statistic",
    "StatisticRelease",
    "NEIGHBOURING",
    "planning_groups",
    "geometric_epsilon_for_error",
    "EPS_MIN",
    "EPS_MAX",
    "EXACT_REL",
    "GRID_POINTS",
]
