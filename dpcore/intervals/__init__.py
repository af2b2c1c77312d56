"""Intervals computed from the published record alone: every released number with a confidence interval.

Everything here is **post-processing** of published numbers (the released values, the public parameters of
their mechanisms, and, for the Gini, one extra DP quantity that the release publishes and charges): an analyst
holding only ``release_record.json`` and the tables can recompute every interval. Nothing here reads
confidential data, except the two functions whose argument is named ``confidential_*`` (the DP upper bound on
the Gini's smooth sensitivity, which is itself a DP release, and the known-scale oracle, which is labelled
as not publishable).

Neighbouring relation: as the statistic's mechanism (default: replace one record, n public); the intervals
add no privacy cost except the Gini bound, whose cost is stated on :class:`GiniIntervalPlan`.

Which law each interval inverts (``docs/secure_noise.md``, "How each published interval is made"):

* counts, sums, means: the exact quantiles of the noise law (discrete Laplace, Laplace, Gaussian) with the
  public scale; a mean over a noisy count is inverted as a pivot (:func:`mean_interval`);
* PSEO percentiles (Foote et al. 2019, Section 4.1): one-sided tests on the noisy cumulative counts at the
  fixed bin that holds the true percentile, mapped to bin edges (:func:`percentile_interval`): valid
  whatever the earnings inside a bin;
* relative risk: Shoham & Ligett's conservative interval (their Theorem 4.5, ``dpcore.ratio``) from the noisy
  counts (:func:`relative_risk_interval`);
* the Gini with smooth-sensitivity noise (Lan & Reiter 2025, eqs. (8)-(10)): a DP upper bound on S_beta(X),
  released and charged, turns the confidential noise scale into a public one (:func:`dpcore.mechanisms.gini_bound_release`);
  the noise of value and bound together form a pivot of known law, inverted exactly
  (:func:`gini_interval_from_release`); :func:`optimise_gini_split` chooses the split of epsilon and beta;
  :func:`gini_posterior_interval` is the Bayesian variant;
* honest digits: :func:`honest_grid`, :func:`round_to_grid`, :func:`round_interval`.

Coverage is a frequentist statement over the noise: for fixed confidential data, the interval covers the
mechanism's target (the statistic of the data clipped to the public bounds) with probability >= ``level``
(exactly for the inversions, asymptotically for the relative risk). Clipping bias is not in any interval:
each result's ``caveat`` says so where it applies.
"""

from .basic import (
    DEFAULT_LEVEL,
    RR_MIN_COUNT,
    NoiseInterval,
    PercentileInterval,
    count_interval,
    discrete_laplace_quantile,
    gaussian_quantile,
    laplace_quantile,
    mean_interval,
    mean_interval_bounds,
    percentile_interval,
    percentile_interval_from_estimates,
    relative_risk_interval,
    sum_interval,
)
from .gini import (
    GINI_INTERVAL_METHODS,
    GiniInterval,
    GiniIntervalPlan,
    gini_interval_bounds,
    gini_interval_from_release,
    gini_interval_quantile,
    gini_oracle_interval,
    gini_plan,
    gini_posterior_interval,
    pivot_quantile,
    pivot_tail,
    simulate_gini_bounds,
)
from .gini_split import (
    MAX_BOUND_SCALE,
    PLANNING_BETA_SAFETY,
    PLANNING_GINI,
    PLANNING_MEAN_SHARE,
    gini_plan_with_eta,
    optimise_gini_split,
    planning_smooth_sensitivity,
    shipped_epsilons,
)
from .rounding import honest_grid, round_interval, round_to_grid

__all__ = [
    "DEFAULT_LEVEL",
    "NoiseInterval",
    "PercentileInterval",
    "GiniInterval",
    "GiniIntervalPlan",
    "laplace_quantile",
    "discrete_laplace_quantile",
    "gaussian_quantile",
    "count_interval",
    "sum_interval",
    "RR_MIN_COUNT",
    "mean_interval",
    "mean_interval_bounds",
    "percentile_interval",
    "percentile_interval_from_estimates",
    "relative_risk_interval",
    "simulate_gini_bounds",
    "GINI_INTERVAL_METHODS",
    "gini_plan",
    "gini_plan_with_eta",
    "gini_interval_quantile",
    "pivot_quantile",
    "pivot_tail",
    "optimise_gini_split",
    "shipped_epsilons",
    "PLANNING_GINI",
    "PLANNING_MEAN_SHARE",
    "PLANNING_BETA_SAFETY",
    "MAX_BOUND_SCALE",
    "planning_smooth_sensitivity",
    "gini_interval_from_release",
    "gini_interval_bounds",
    "gini_oracle_interval",
    "gini_posterior_interval",
    "honest_grid",
    "round_to_grid",
    "round_interval",
]
