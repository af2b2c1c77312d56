"""Light-tailed noises for smooth-sensitivity releases, their calibrations and privacy statements.

Every smooth-sensitivity release in dpcore has the form (Nissim, Raskhodnikova & Smith 2007,
"NRS", Definition 2.1 / eq. (9) of the Gini paper)::

    release = f(X) + (S(X) / alpha) * Z,

with ``S`` a beta-smooth upper bound on the local sensitivity of ``f`` (S >= LS_f and
S(X') <= e^beta S(X) for neighbours). For neighbours X, X', in units of X's noise scale
S(X)/alpha, the output distribution is shifted by at most alpha and dilated by a factor
e^lambda with |lambda| <= beta. Everything below is about the noise ``Z`` and the constants
(alpha, beta); the statistic (Gini, percentile, ratio) supplies ``S``.

The registry :data:`SMOOTH_NOISES` (re-exported as ``dpcore.noise.smooth.SMOOTH_NOISES``) names the
choices; ``dpcore.gini.release_gini(..., noise=name)`` and the percentile and ratio rivals accept
these names:

``"cauchy"``
    The Gini paper's generalized Cauchy, density ∝ 1/(1+|z|^gamma): **pure epsilon-DP**
    (:func:`dpcore.noise.smooth_noise_calibration`, certified privacy loss). Heavy tails: no
    variance for gamma <= 3.
``"laplace"``
    NRS's Laplace variant, density e^{-|z|}/2: **(epsilon, delta)-DP**. Paper constants
    (NRS Lemma 2.9 as restated in the ratio paper's Lemma C.5 and ``dpcore.ratio``):
    alpha = epsilon/2, beta = epsilon/(2 ln(2/delta)). Certified (not just cited) by
    :func:`laplace_smooth_delta`, an exact closed-form upper bound on the hockey-stick divergence
    (see there); "tight" calibration takes the largest alpha whose certified delta is <= delta.
``"laplace_lognormal"``
    Bun & Steinke (2019), "Average-case averages: private algorithms for smooth sensitivity and
    mean estimation", Section 3.1: Z = X e^{sigma Y}, X ~ Laplace(1), Y ~ N(0, 1) ("LLN").
    With a t-smooth bound and scale S/s the release is (eps_c^2/2)-CDP, i.e. **rho-zCDP** with
    rho = eps_c^2 / 2, where eps_c = t/sigma + e^{3 sigma^2/2} s (their Theorem for LLN; the
    constants agree with the reference implementation of their Section 3.1.1 in Google's
    ``dp_multiq/csmooth.py``: s = e^{-3 sigma^2/2}(eps_c - t/sigma), sigma the root of
    5 (eps_c/t) sigma^3 - 5 sigma^2 - 1 = 0). In dpcore's notation alpha = s and beta = t.
    Variance 2 e^{2 sigma^2}. Certified (not just cited): :func:`lln_renyi_bound` proves the bound
    for every order a > 1 from three lemmas (log p is e^{3 sigma^2/2}-Lipschitz; a dilation is a
    Gaussian shift of log-scale; the zCDP chain rule), each checked against brute force, and the
    quadrature Renyi divergences (:func:`lln_renyi_divergence`) never exceed it; the calibration
    checks that :func:`lln_certified_rho` is <= the rho it records. See ``docs/light_tails.md``.

Comparing privacy: a release's target is given as (epsilon, delta). Pure noise ("cauchy")
spends epsilon (it is (epsilon, 0)-DP, a fortiori (epsilon, delta)). "laplace" spends
(epsilon, delta). "laplace_lognormal" takes the largest rho whose zCDP -> (epsilon, delta)
conversion (Canonne, Kamath & Steinke 2020, ``dpcore.budget.zcdp_to_approx_dp``) gives epsilon
at that delta; its cost is recorded as zCDP (rho), so it composes as zCDP in the ledger.
Pass ``rho=`` to set rho directly instead. The default delta is :data:`DEFAULT_DELTA` = 1e-6.

Neighbouring relation: whatever the statistic's S is smooth for (default: replace one record,
n public). All samplers take ``rng`` (Generator, int seed, None, or dpcore's SecureRandom).

The package, one concern per module (this ``__init__`` imports their public names: ``dpcore.noise.smooth.<name>``
is their public path): :mod:`~dpcore.noise.smooth.common` (the registry, :class:`SmoothCalibration` and the
checks), :mod:`~dpcore.noise.smooth.laplace` and :mod:`~dpcore.noise.smooth.gaussian` (NRS's variants and their
certified hockey-stick divergences), :mod:`~dpcore.noise.smooth.lognormal` (Bun & Steinke's Laplace log-normal
and its certified Renyi bound) and :mod:`~dpcore.noise.smooth.entry` (one entry point: calibrate any registered
noise, its law, its draws).
"""

from __future__ import annotations

from .common import DEFAULT_DELTA, SMOOTH_NOISES, SmoothCalibration, check_noise
from .entry import noise_distribution, noise_of_release, sample_smooth_noise, smooth_calibration
from .gaussian import gaussian_smooth_calibration, gaussian_smooth_delta, gaussian_smooth_hockey_stick
from .laplace import LaplaceNoise, laplace_smooth_calibration, laplace_smooth_delta, laplace_smooth_hockey_stick
from .lognormal import (
    LLN_BETA_FRACTION,
    LaplaceLogNormal,
    lln_calibration,
    lln_certified_rho,
    lln_epsilon_cdp,
    lln_log_density_lipschitz,
    lln_optimal_sigma,
    lln_renyi_bound,
    lln_renyi_divergence,
    rho_for_approx_dp,
    zcdp_chain_rho,
)

__all__ = [
    "SMOOTH_NOISES",
    "DEFAULT_DELTA",
    "SmoothCalibration",
    "smooth_calibration",
    "check_noise",
    "noise_distribution",
    "LaplaceNoise",
    "LaplaceLogNormal",
    "laplace_smooth_delta",
    "laplace_smooth_hockey_stick",
    "laplace_smooth_calibration",
    "gaussian_smooth_delta",
    "gaussian_smooth_hockey_stick",
    "gaussian_smooth_calibration",
    "lln_calibration",
    "LLN_BETA_FRACTION",
    "lln_epsilon_cdp",
    "lln_optimal_sigma",
    "lln_renyi_divergence",
    "lln_renyi_bound",
    "lln_certified_rho",
    "lln_log_density_lipschitz",
    "zcdp_chain_rho",
    "rho_for_approx_dp",
    "sample_smooth_noise",
    "noise_of_release",
]
