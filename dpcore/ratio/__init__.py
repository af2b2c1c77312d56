"""Differentially private ratios and relative risk from noisy counts (Shoham & Ligett 2025).

Paper: T. Shoham and K. Ligett, *Differentially private ratio statistics*, arXiv:2505.20351.
Our copy lost its formulas; ``../shared/papers/ratio_math_spec.md`` rebuilds them and labels each
(RECOVERED / SEED / STANDARD / DERIVED / INFERRED-SIM). Every DERIVED formula used here is checked
by a Monte Carlo or brute-force test in ``tests/test_ratio*.py``.

Setting and privacy assumptions
-------------------------------
Two groups of public sizes ``n_x`` (e.g. exposed) and ``n_y`` (unexposed). The confidential counts
are ``x`` = people in group x with the outcome and ``y`` = people in group y with the outcome.
Relative risk RR = p_x / p_y; with n_x = n_y the ratio of counts x / y equals RR.

Neighbouring relation (as in the paper): replace one person's record; n_x and n_y are public.

* :func:`laplace_noised_counts` / :func:`gaussian_noised_counts` spend epsilon/2 (and delta/2) on
  each count (Claim 3.1, basic composition), so they stay private even when one record changes
  *both* counts by one (a person moving between cells). Everything computed from the two noisy
  counts (ratios, intervals, bias estimates) is post-processing.
* The rivals of Appendix B/C (:func:`naive_relative_risk`, smooth sensitivity, PTR) follow the
  paper's convention that one record changes *one* count by one (true when group membership is
  public); :func:`noised_log` uses sensitivity 2, which covers both counts changing.
* The 2x2 table for the odds ratio (:func:`noisy_two_by_two`) has L1 sensitivity 2 (one record
  leaves one cell and enters another), so each cell gets Laplace(2/epsilon).

Choices where the paper is silent or inconsistent (each is tested):

* Claim 3.2 holds for the *unclipped* ratio x~/y~ (its proof integrates over all of R). We return
  beta = P(|x~/y~ - x/y| >= alpha) and use the closed form (spec §3.1, boxed) when alpha < x/y and
  the general CDF of Claim F.1 otherwise.
* Claim 3.4 needs a moment, so the denominator is clipped at 1 (y_bar = max(y~, 1)); intervals and
  coverage simulations clip both noisy counts at 1 (spec §4, INFERRED-SIM). The public interval
  functions refuse noisy counts <= 0 unless ``clip=True`` (the normal approximation is meaningless
  there; say so rather than return a silent number).
* PTR (Theorem C.7) is (2 eps, delta)-DP in the textbook; we run the test and the release at
  epsilon/2 each, so the whole algorithm is (epsilon, delta)-DP like its rivals.
* NoisedLog keeps the paper's sensitivity 2 for ln x - ln y (SEED); the exact value under our
  domain x, y >= 1 is 2 ln 2, so the paper's choice is valid but conservative.

The package, one concern per module (this ``__init__`` imports their public names: ``dpcore.ratio.<name>`` is
their public path):

* :mod:`~dpcore.ratio.counts`: the noisy counts (Claim 3.1; Corollaries 4.3 / 4.4) and the checks every module
  shares;
* :mod:`~dpcore.ratio.accuracy`: the CDF of a ratio of two Laplace variables (Claim F.1), the sample accuracy
  (Claim 3.2) and the bias of the maxed ratio (Claim 3.4, Figure 2);
* :mod:`~dpcore.ratio.intervals`: confidence intervals for RR (Katz, Theorems 4.2 and 4.5) and their coverage;
* :mod:`~dpcore.ratio.rivals`: NaiveRelativeRisk and NoisedLog (Appendix B), smooth sensitivity and PTR
  (Appendix C), and the sample accuracy of every algorithm (Figure 1);
* :mod:`~dpcore.ratio.odds`: the odds ratio from a noisy 2x2 table (delta method).

The mechanism of every released relative risk (its real draw) is :class:`dpcore.mechanisms.RelativeRiskMechanism`.
"""

from __future__ import annotations

from .accuracy import (
    BinomialBias,
    RatioBias,
    SampleAccuracy,
    binomial_ratio_bias,
    expected_inverse_clipped,
    laplace_ratio_cdf,
    ratio_bias,
    ratio_sample_accuracy,
)
from .counts import MECHANISMS, CountNoise, NoisedCounts, count_noise, gaussian_noised_counts, laplace_noised_counts
from .intervals import (
    CoverageGrid,
    CoverageResult,
    RRInterval,
    RRSampling,
    coverage_grid,
    katz_interval,
    rr_confidence_interval,
    simulate_rr_coverage,
    simulate_rr_sampling,
)
from .odds import NoisyTable, ORInterval, noisy_two_by_two, or_confidence_interval, simulate_or_coverage
from .rivals import (
    ALGORITHMS,
    PTRRelease,
    RatioRelease,
    RatioSmoothSensitivity,
    naive_relative_risk,
    naive_sensitivity,
    noised_log,
    noised_log_bias_factor,
    ptr_distance,
    ptr_failure_probability,
    ptr_oracle_bound,
    ptr_ratio,
    ratio_local_sensitivity,
    ratio_sensitivity_at_distance,
    ratio_smooth_sensitivity,
    sample_accuracy_all,
    smooth_laplace_beta,
    smooth_ratio_cauchy,
    smooth_ratio_laplace,
    smooth_ratio_noise,
)

__all__ = [
    "MECHANISMS",
    "CountNoise",
    "count_noise",
    "NoisedCounts",
    "laplace_noised_counts",
    "gaussian_noised_counts",
    "laplace_ratio_cdf",
    "SampleAccuracy",
    "ratio_sample_accuracy",
    "expected_inverse_clipped",
    "RatioBias",
    "ratio_bias",
    "BinomialBias",
    "binomial_ratio_bias",
    "RRInterval",
    "katz_interval",
    "rr_confidence_interval",
    "CoverageResult",
    "simulate_rr_coverage",
    "RRSampling",
    "simulate_rr_sampling",
    "CoverageGrid",
    "coverage_grid",
    "RatioRelease",
    "naive_sensitivity",
    "naive_relative_risk",
    "noised_log",
    "noised_log_bias_factor",
    "ratio_local_sensitivity",
    "ratio_sensitivity_at_distance",
    "RatioSmoothSensitivity",
    "ratio_smooth_sensitivity",
    "smooth_laplace_beta",
    "smooth_ratio_laplace",
    "smooth_ratio_cauchy",
    "smooth_ratio_noise",
    "ptr_distance",
    "ptr_failure_probability",
    "PTRRelease",
    "ptr_ratio",
    "ptr_oracle_bound",
    "ALGORITHMS",
    "sample_accuracy_all",
    "NoisyTable",
    "noisy_two_by_two",
    "ORInterval",
    "or_confidence_interval",
    "simulate_or_coverage",
]
