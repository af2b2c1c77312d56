"""DP earnings percentiles from a noisy histogram: the Census PSEO system, and its rivals.

Paper: Foote, Machanavajjhala & McKinney, "Releasing earnings distributions using differential
privacy: disclosure avoidance system for Post-Secondary Employment Outcomes (PSEO)" (2019).

What is here
------------
One concern per module; this ``__init__`` imports their public names (``dpcore.percentiles.<name>`` is their
public path).

* :mod:`~dpcore.percentiles.common`: bins (Section 4.1.1, Table 1, footnote 18): :data:`PSEO_BIN_EDGES`,
  :func:`lognormal_bin_edges`, :func:`even_bin_edges`, :func:`bin_edges`; the checks of the public inputs every
  method shares (levels, relation, earnings range, a cell's earnings); accuracy (Section 5.2):
  :func:`relative_accuracy` (eq. 5.1), :func:`summed_l1_error`.
* :mod:`~dpcore.percentiles.histogram`: the histogram mechanism (Section 4.1, Proposition 4.1):
  :func:`histogram_counts`, :func:`noisy_histogram` (two-sided geometric noise on every bin),
  :func:`percentiles_from_histogram` (eq. 4.2 + footnote 17), :func:`release_percentiles`; credible intervals
  for the percentiles of a released histogram: :func:`percentile_credible_intervals`; vectorised helpers for
  many cells and many draws: :func:`cell_bin_counts`, :func:`simulate_histogram_percentiles`.
* :mod:`~dpcore.percentiles.rivals`: the smooth-sensitivity rival (Section 4.2, eq. 4.6):
  :func:`percentile_smooth_sensitivity`, :func:`release_percentiles_smooth`,
  :func:`smooth_sensitivity_many_betas`; the exponential-mechanism quantile (Smith 2011, Algorithm 2; the
  paper's footnote 6): :func:`exponential_mechanism_log_density`, :func:`release_percentiles_em`.
* :mod:`~dpcore.percentiles.candidates`: the public candidate grids of the exponential-mechanism quantile that
  plans release with ``method = "exponential"`` (:func:`candidate_grid`). The mechanisms of every released
  percentile, with their real draws, are :class:`dpcore.mechanisms.HistogramMechanism` and
  :class:`dpcore.mechanisms.ExponentialQuantileMechanism`.

The PSEO table loader, the planning-data synthesizer, the page's view functions and the paper's
accuracy experiments (Figures 1-3: ``load_pseo_cells``, ``synthesize_cell_earnings``, ``make_cell_panel``,
``simulate_accuracy``, ...) live in :mod:`dpcore.views.percentiles`.

Neighbouring relation and what is public
----------------------------------------
Project default (docs/CONVENTIONS.md): **replace one person's record inside a cell; the cell size n
is public** (PSEO publishes cell counts). Moving one person from bin a to bin b changes two bin
counts by 1 each: the histogram has L1 sensitivity 2, so each bin gets two-sided geometric noise
with parameter epsilon/2 and the whole histogram is epsilon-DP. The paper itself (Section 3.2)
protects the *addition or removal* of one person; then one count changes by 1 (L1 sensitivity 1)
and each bin gets the full epsilon. Pass ``relation="add_remove"`` to reproduce that calibration.
The smooth-sensitivity and exponential-mechanism rivals are defined for replacement only (their
target rank depends on n), so they always use ``relation="replace"``.

Public, not protected: the bin edges (chosen without looking at the data: Table 1 comes from ACS
public-use data), the earnings range [lower, upper] of the rivals, the percentile levels, the cell
definitions and the cell sizes. Cells of one aggregation level are disjoint, so releasing all of
them costs epsilon once (parallel composition, Theorem 2.2); the real PSEO table also has nested
aggregate cells (all programs, all cohorts), and releasing several levels costs epsilon per level.

Choices where the paper is inconsistent (each proved by a test in tests/test_percentiles*.py)
---------------------------------------------------------------------------------------------
1. Footnote 17 writes the interpolation fraction as (Y/100 * sum_{i<=J} q_i - sum_{i<J} q_i) / q_J.
   That is a typo: the words ("W of the way through bin J") and eq. (4.2) need the *total*
   sum_{i<=M} q_i in place of sum_{i<=J} q_i; the literal formula can put the percentile below b_J.
2. Table 1 / footnote 18: the inner edges are the 5th..95th percentiles of LN(11.003, 0.753^2),
   the 20th edge the 97.5th percentile, and the top bin is closed at the 99.9th (614,597) for
   interpolation only (values above it are counted in the top bin). Our generic log-normal scheme
   with M bins uses the j/M quantiles (j = 1..M-1), the $10,000 floor and the 99.9th-percentile
   top; PSEO's 21 bins are that 20-bin scheme with its top bin split at the 97.5th percentile.
3. Eq. (4.6) gives the smooth sensitivity of an order statistic x_(M) for *replacement*
   neighbours with data in a public range [L, U] (x_(i) = L for i < 1 and U for i > n). The paper
   sets M = (N+1)X/100, which is not an integer in general; we release the order statistic
   x_(M) with M = ceil(X N / 100) (the smallest value whose empirical CDF reaches X/100, the same
   reading as eq. 4.2). With this M, eq. (4.6) matches brute force exactly (test).
4. Section 4.2 writes the noise density as 1/|1+x|^4 (not integrable) and calls it Gamma(1/eps);
   we use h(z) ∝ 1/(1+|z|^4) (``GeneralizedCauchy(4)``), scale S_beta/alpha with (alpha, beta) from
   ``dpcore.noise.smooth_noise_calibration(epsilon_x, 4)``. "paper" mode is the NRS constants
   alpha = eps_x/16, beta = eps_x/4 (the text writes eps/16 but means the per-percentile eps_x).
"""

from __future__ import annotations

from .candidates import (
    CANDIDATE_SCHEMES,
    MAX_EXPONENTIAL_QUANTILES,
    PSEO_FINE_EDGES,
    candidate_grid,
    fine_candidate_grid,
)
from .common import (
    PSEO_BIN_EDGES,
    PSEO_LOG_MEAN,
    PSEO_LOG_SD,
    PSEO_LOWER,
    PSEO_TOP,
    RELATIONS,
    bin_edges,
    check_edges,
    epsilon_per_bin,
    even_bin_edges,
    lognormal_bin_edges,
    relative_accuracy,
    summed_l1_error,
)
from .common import check_earnings as check_earnings
from .common import check_q as check_q
from .common import check_relation as check_relation
from .histogram import (
    BinnedData,
    NoisyHistogram,
    PercentileIntervals,
    PercentileRelease,
    cell_bin_counts,
    histogram_counts,
    noisy_histogram,
    percentile_credible_intervals,
    percentiles_from_histogram,
    posterior_count_samples,
    release_percentiles,
    simulate_histogram_percentiles,
)
from .rivals import (
    EMPercentileRelease,
    PercentileSmoothSensitivity,
    SmoothPercentileRelease,
    empirical_percentile,
    exponential_mechanism_log_density,
    local_sensitivity_profile,
    percentile_rank,
    percentile_smooth_sensitivity,
    release_percentiles_em,
    release_percentiles_smooth,
    sample_exponential_mechanism,
    smooth_sensitivity_many_betas,
)

__all__ = [
    "MAX_EXPONENTIAL_QUANTILES",
    "PSEO_FINE_EDGES",
    "CANDIDATE_SCHEMES",
    "fine_candidate_grid",
    "candidate_grid",
    "PSEO_BIN_EDGES",
    "PSEO_LOWER",
    "PSEO_TOP",
    "PSEO_LOG_MEAN",
    "PSEO_LOG_SD",
    "RELATIONS",
    "check_edges",
    "lognormal_bin_edges",
    "even_bin_edges",
    "bin_edges",
    "epsilon_per_bin",
    "BinnedData",
    "histogram_counts",
    "NoisyHistogram",
    "noisy_histogram",
    "percentiles_from_histogram",
    "PercentileRelease",
    "release_percentiles",
    "percentile_rank",
    "empirical_percentile",
    "local_sensitivity_profile",
    "PercentileSmoothSensitivity",
    "percentile_smooth_sensitivity",
    "SmoothPercentileRelease",
    "release_percentiles_smooth",
    "exponential_mechanism_log_density",
    "sample_exponential_mechanism",
    "EMPercentileRelease",
    "release_percentiles_em",
    "posterior_count_samples",
    "PercentileIntervals",
    "percentile_credible_intervals",
    "relative_accuracy",
    "summed_l1_error",
    "cell_bin_counts",
    "simulate_histogram_percentiles",
    "smooth_sensitivity_many_betas",
]
