"""Differentially private Gini index by smooth sensitivity (Lan & Reiter 2025).

Paper: ``../shared/papers/gini_lan_reiter_2025.md`` (sections 2-4, Appendix A).

Definition (one, used everywhere in the mechanism)
--------------------------------------------------
We use **eq. (1)** of the paper, the "population" Gini::

    g(X) = sum_i sum_j |x_i - x_j| / (2 n^2 xbar) = sum_i (2i - n - 1) x_(i) / (n * sum_i x_i)

with x sorted ascending. Its range is [0, (n - 1)/n]. The paper's toy example (Section 3)
uses eq. (2) (divide by n (n - 1) xbar, range [0, 1]); eq. (2) = eq. (1) * n / (n - 1).
``gini(x, definition="eq2")`` gives it, for that example only. Algorithms 1-2 of the paper
(``N / (n D)``) and the real-data check (CPS ASEC, 0.5361) are eq. (1). The paper's Section
4.1 derivations mix in eq. (2) (terms ``2/(n-1)``, ``w = (n+1)/(n-1)``); every bound in this
package is re-derived for eq. (1) (see :func:`local_sensitivity_bound`).

The all-zero data set has no Gini (0/0). Public functions refuse it; inside the sensitivity
analysis (whose neighbourhoods may reach it when ``lower = 0``) we use the convention
g(0, ..., 0) = 0 (perfect equality), so the mechanism is defined on every data set in
[L, U]^n.

Privacy model
-------------
Neighbouring relation: **replace one record** (bounded DP); the number of records ``n`` is
public, and so are the bounds ``[lower, upper]`` (chosen without looking at the data, or
released with DP by :mod:`dpcore.bounds` and charged to the budget). Data outside the bounds
are clipped to them (with a count that is confidential) before anything is computed.

Mechanism (eqs. (9)-(10)): ``g(X) + (S_beta(X)/alpha) Z`` with ``Z ~ GeneralizedCauchy(gamma)``,
``S_beta(X) = max_k e^{-beta k} A^(k)(X)`` a beta-smooth upper bound on the local sensitivity
(eq. (8)), and ``(alpha, beta)`` from :func:`dpcore.noise.smooth_noise_calibration`.

The package, one concern per module (this ``__init__`` imports their public names: ``dpcore.gini.<name>`` is
their public path):

* :mod:`dpcore.gini.statistic`: the statistic, the clipping to [L, U] and its exact extremes after k replaced
  records (Theorems 4.1-4.2, Algorithms 1-2, Appendix A.3);
* :mod:`dpcore.gini.sensitivity`: global, local and smooth sensitivity (Theorems 4.3-4.4, Section 4.4 pruning;
  where we depart from the paper is listed there);
* :mod:`dpcore.gini.calibration`: :class:`GiniCalibration`, the calibration of every released Gini (alpha, beta,
  the law, the certificate, the cost; its real draw is :class:`dpcore.mechanisms.GiniMechanism`'s);
* :mod:`dpcore.gini.release`: :func:`release_gini`, the Laplace baseline and the simulations of many releases.
"""

from __future__ import annotations

from ..posterior import gini_posterior  # the public API names the Gini's posterior here too (docs/api.md)
from .calibration import CONFIDENTIAL_SCALE_LABEL, FLOAT_SLACK, GINI_MIN_SCALE, GiniCalibration
from .release import (
    GiniRelease,
    GiniSimulation,
    LaplaceGiniRelease,
    error_summary,
    release_gini,
    release_gini_laplace,
    simulate_gini_releases,
    simulate_releases_from_scale,
)
from .sensitivity import (
    ExactSensitivityProfile,
    GiniSmoothSensitivity,
    exact_local_sensitivity,
    fast_smooth_sensitivity_iq,
    gini_global_sensitivity,
    local_sensitivity_bound,
    minimal_iq,
    smooth_sensitivity,
)
from .sensitivity import shared_exact_profile as shared_exact_profile
from .statistic import (
    GINI_DEFINITION,
    clip_incomes,
    gini,
    gini_extremes_curve,
    max_gini_after_k,
    mean_extremes_after_k,
    min_gini_after_k,
)

__all__ = [
    "GINI_DEFINITION",
    "gini",
    "ExactSensitivityProfile",
    "clip_incomes",
    "min_gini_after_k",
    "max_gini_after_k",
    "gini_extremes_curve",
    "mean_extremes_after_k",
    "gini_global_sensitivity",
    "local_sensitivity_bound",
    "exact_local_sensitivity",
    "smooth_sensitivity",
    "fast_smooth_sensitivity_iq",
    "minimal_iq",
    "GiniSmoothSensitivity",
    "GiniRelease",
    "GiniCalibration",
    "GINI_MIN_SCALE",
    "FLOAT_SLACK",
    "CONFIDENTIAL_SCALE_LABEL",
    "release_gini",
    "LaplaceGiniRelease",
    "release_gini_laplace",
    "GiniSimulation",
    "simulate_gini_releases",
    "simulate_releases_from_scale",
    "error_summary",
    "gini_posterior",
]
