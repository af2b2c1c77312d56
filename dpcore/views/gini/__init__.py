"""The Gini page's view and the experiments of Lan & Reiter (2025), Section 5, as functions.

A package of one concern per module (this ``__init__`` imports their public names: ``dpcore.views.gini.<name>`` is
their public path): :mod:`~dpcore.views.gini.errors` (exact error summaries of a release), :mod:`~dpcore.views.gini.experiments`
(the error against epsilon and the paper's Figures 1, 3 and 4) and :mod:`~dpcore.views.gini.page` (the page's view).

Paper: ``../shared/papers/gini_lan_reiter_2025.md``.

* :func:`gini_view` - the Gini page's live view (one call: settings + incomes -> :class:`GiniView`,
  whose ``.to_dict()`` is what the page's numbers table and its generated script print).
* :func:`figure1` - distribution of the DP Gini of an income file for
  epsilon in {0.25, 0.5, 1, 1.5, 2}, gamma = 2, L = 0 and U either public or estimated with DP
  (Section 5.1: AboveThreshold with 0.075 + 0.075, U = 2.5 x the estimate, re-run for every
  simulated release block), which adds its epsilon to the total.
* :func:`figure3` - absolute errors for g in {0.2, 0.5, 0.7}, n in {1e4, 1e5, 1e6},
  epsilon in {0.5, 1, 2} on the two-point data with the minimal normalised range IQ of
  Proposition 5.1 (``dpcore.data.two_point_incomes``).
* :func:`figure4` - error against IQ from 2 to 100 at g = 0.5, n = 1e5.
* :func:`error_vs_epsilon` - the same error summaries for the user's data over an epsilon grid.

Every experiment runs both calibrations side by side: ``"paper"`` (Nissim-Raskhodnikova-Smith
constants alpha = eps/(4 gamma), beta = eps/gamma, used by the paper) and ``"tight"`` (same
beta, the largest alpha whose certified privacy loss is <= eps, from
:func:`dpcore.noise.smooth_noise_calibration`). Both have the same beta, hence the same smooth
sensitivity S_beta(X); they differ only in alpha, so the noise scale S/alpha differs by the
ratio of the alphas.

Exact versus simulated errors. The release is ``g(X) + s Z`` with s = S_beta(X)/alpha and
``Z ~ GeneralizedCauchy(gamma)``; the absolute error is ``s |Z|``, whose quantiles are known in
closed form: q-quantile = ``s * F^-1((1 + q)/2)``. We report these exact quantiles (no Monte
Carlo error) and, as the paper does, also simulate draws (``n_draws``; the paper used 10^6) for
box plots and the largest observed errors. The tests check the simulated quantiles against the
exact ones within their Monte Carlo standard error.

RMSE. ``E Z^2`` is finite only for gamma > 3. The paper's Figure 4 plots an "RMSE" for its
gamma = 2 runs; for gamma <= 3 such a number is the root mean square of a finite sample that
does not converge (it grows with the number of draws). We therefore return ``rmse = inf`` for
gamma <= 3 and keep the sample value separately as ``empirical_rmse`` (labelled as not
converging); pages show RMSE only when gamma > 3 and otherwise the 90% absolute error.

Published errors. Every Gini is published clamped to [0, 1] (``dpcore.noise.guarantees.publish_gini``,
post-processing), so the error of a published Gini, ``|clamp(g + s Z, 0, 1) - g|``, is at most
max(g, 1 - g) <= 1 whatever the noise. The live view (:func:`gini_view`, :func:`error_vs_epsilon`) states
that error: its exact quantiles (:func:`published_abs_error_quantiles`), its RMSE, the simulated releases and
the dots, all clamped; the interval widths are those of the interval cut to [0, 1]. The paper's figures
(:func:`figure1`, :func:`figure3`, :func:`figure4`) keep the paper's errors of the noisy value.

Figures 3-4 use the fast bound (our rigorous version of Theorem 4.4, as the paper does in
Section 5: "we use the bounds from Theorem 4.4"): it needs only n, IQ and L/mean, so no records
are generated (:func:`dpcore.gini.fast_smooth_sensitivity_iq`). ``method="exact"`` builds the
two-point records and runs the exact bound instead (slow for n = 1e6).

Neighbouring relation (all experiments): replace one record; n, L and U public (or U released
with DP and charged to the budget). These are planning simulations: they use the confidential
true Gini and must not be run on confidential data that will not be released anyway.

Progress: every experiment takes ``progress(fraction, message)`` (e.g. a Streamlit progress
bar), called after each configuration.
"""

from __future__ import annotations

from .errors import (
    CALIBRATIONS,
    ExperimentResult,
    abs_error_quantiles,
    clamp_probability,
    laplace_abs_error_quantiles,
    noise_rmse,
    plausible_releases,
    published_abs_error_quantiles,
    published_rmse,
)
from .errors import ProgressFn as ProgressFn
from .experiments import (
    FIG1_EPSILONS,
    FIG3_EPSILONS,
    FIG3_GINIS,
    FIG3_NS,
    FIG4_EPSILONS,
    FIG4_IQS,
    TwoPointErrorSettings,
    error_vs_epsilon,
    figure1,
    figure3,
    figure4,
)
from .experiments import PAPER_UPPER_EPSILON as PAPER_UPPER_EPSILON
from .experiments import PAPER_UPPER_INFLATION as PAPER_UPPER_INFLATION
from .page import CURVE_EPSILONS as CURVE_EPSILONS
from .page import N_DOTS as N_DOTS
from .page import N_SIMULATED_RELEASES as N_SIMULATED_RELEASES
from .page import POSTERIOR_LEVEL as POSTERIOR_LEVEL
from .page import PUBLISHED_LEVEL as PUBLISHED_LEVEL
from .page import PUBLISHED_NOISES as PUBLISHED_NOISES
from .page import SEED_OFFSET_ONE_RELEASE as SEED_OFFSET_ONE_RELEASE
from .page import SEED_OFFSET_RELEASES as SEED_OFFSET_RELEASES
from .page import SEED_OFFSET_UPPER as SEED_OFFSET_UPPER
from .page import SUBSAMPLE_SEED as SUBSAMPLE_SEED
from .page import (
    GiniView,
    PublishedGini,
    calibrate_epsilons,
    expected_widths,
    gini_view,
    published_gini,
    subsample,
    typical_clipped_width,
)

__all__ = [
    "FIG1_EPSILONS",
    "FIG3_GINIS",
    "FIG3_NS",
    "FIG3_EPSILONS",
    "FIG4_IQS",
    "FIG4_EPSILONS",
    "CALIBRATIONS",
    "ExperimentResult",
    "abs_error_quantiles",
    "laplace_abs_error_quantiles",
    "published_abs_error_quantiles",
    "published_rmse",
    "clamp_probability",
    "noise_rmse",
    "plausible_releases",
    "error_vs_epsilon",
    "figure1",
    "figure3",
    "figure4",
    "TwoPointErrorSettings",
    "GiniView",
    "PublishedGini",
    "published_gini",
    "typical_clipped_width",
    "expected_widths",
    "gini_view",
    "subsample",
    "calibrate_epsilons",
]
