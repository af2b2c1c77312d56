"""Releases of the Gini index: :func:`release_gini` (the law of :class:`~dpcore.gini.calibration.GiniCalibration`), the
global-sensitivity Laplace baseline the paper argues against, and simulations of many releases (planning)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..rng import secure_generator
from ..validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_epsilon,
    check_finite,
    check_gamma,
    check_int,
)
from .calibration import GiniCalibration
from .sensitivity import GiniSmoothSensitivity, gini_global_sensitivity, smooth_sensitivity
from .statistic import GINI_DEFINITION, clip_incomes, sorted_gini


def _noise():
    from .. import noise

    return noise


def _saturated(smooth_value: float, gs: float, noise_scale: float, gamma: float, dist: Any = None) -> bool:
    # meaningless when S hit the cap, or the median |noise| is at least half the Gini's range
    if dist is None:
        med = noise_scale * float(_noise().GeneralizedCauchy(gamma).ppf(0.75))
    else:
        med = noise_scale * float(dist.abs_quantile(0.5))
    return bool(smooth_value >= gs * (1.0 - 1e-9) or med >= 0.5)


@dataclass(frozen=True)
class GiniRelease:
    """One DP release of the Gini index (eq. (1)) and the parameters that produced it.

    ``value`` is the only DP output. Every other data-dependent field is named ``confidential_*``
    and must not be published: ``confidential_noise_scale = S_beta(X)/alpha`` and
    ``confidential_smooth_sensitivity`` (the paper and the posterior treat them as known, but
    publishing them is not covered by the DP guarantee), ``confidential_k_star`` (the distance that
    maximises e^(-beta k) A^(k)), ``confidential_saturated`` (the release is meaningless: S_beta hit
    the global sensitivity, or the median absolute noise is >= 0.5), the clipping counts, and
    ``confidential_true_value`` (None unless asked for). ``noise_scale`` reads
    ``confidential_noise_scale`` (the name the public API uses).
    """

    value: float
    confidential_noise_scale: float
    alpha: float
    beta: float
    epsilon: float
    gamma: float
    confidential_smooth_sensitivity: float
    confidential_k_star: int
    calibration: str
    method: str
    n: int
    lower: float
    upper: float
    confidential_saturated: bool
    definition: str = GINI_DEFINITION
    confidential_n_clipped_below: int = 0
    confidential_n_clipped_above: int = 0
    confidential_true_value: float | None = None
    noise: str = "cauchy"  # a dpcore.noise.smooth.SMOOTH_NOISES name
    delta: float = 0.0  # 0 for the pure-DP Cauchy
    rho: float | None = None  # zCDP noises only
    privacy_cost: Any = None  # dpcore.budget.PrivacyCost of this release (pure / approx / zCDP)
    sigma: float | None = None  # Laplace log-normal shape (Bun & Steinke 2019)
    #: g(X) + scale Z before the clamp to [0, 1] on the 1e-6 grid (dpcore.noise.guarantees.publish_gini): a DP
    #: output too; the posterior needs it (a density applies to it, not to a clamped value)
    noisy_value: float | None = None

    @property
    def noise_scale(self) -> float:
        """S_beta(X)/alpha under the name of the public API (docs/api.md); confidential like
        ``confidential_noise_scale``, which it returns."""
        return self.confidential_noise_scale


def _prepare_release(x, epsilon, gamma, lower, upper, calibration, method, clip_negative, noise="cauchy", delta=None):
    mech = GiniCalibration(
        epsilon, float(lower), float(upper), noise=noise, gamma=gamma, calibration=calibration, delta=delta
    )
    if method not in ("exact", "fast"):
        raise DPInputError(f"method must be 'exact' or 'fast', got {method!r}")
    xs, n_below, n_above = clip_incomes(x, lower=lower, upper=upper, clip_negative=clip_negative)
    ss = smooth_sensitivity(xs, lower=float(lower), upper=float(upper), beta=mech.smoothness, method=method)
    return mech, xs, n_below, n_above, ss


def release_gini(
    x: Any,
    *,
    epsilon: float,
    gamma: float = 2.0,
    lower: float,
    upper: float,
    calibration: str = "tight",
    method: str = "exact",
    rng: Any = None,
    clip_negative: bool = False,
    include_confidential: bool = False,
    noise: str = "cauchy",
    delta: float | None = None,
) -> GiniRelease:
    """epsilon-DP Gini index: g(X) + (S_beta(X)/alpha) Z, Z ~ GeneralizedCauchy(gamma) (eqs. (9)-(10)), the law of
    :class:`GiniCalibration` (the calibration of every released Gini), drawn with numpy.

    Neighbours: replace one record; n, lower and upper public. (alpha, beta) from
    ``dpcore.noise.smooth_noise_calibration(epsilon, gamma, mode=calibration)`` ("tight":
    certified largest alpha; "paper": alpha = eps/(4 gamma), beta = eps/gamma). S_beta from
    :func:`smooth_sensitivity` (``method`` "exact" or "fast"). Incomes are clipped to
    [lower, upper]; negatives are refused unless ``clip_negative``. ``rng``: a seed or numpy Generator (a
    reproducible simulation), or None: the operating system's CSPRNG (:func:`dpcore.rng.secure_generator`), as
    the paper's other functions here draw. This is the paper's estimator, charged to no ledger: a release to
    publish is made by the release pipeline (``python -m dpcore release``, the app's Release mode,
    :func:`dpcore.release.make_release`), which charges a ledger first and draws with the certified sampler of
    :class:`dpcore.mechanisms.GiniMechanism`. ``value`` is published as every released Gini is
    (:func:`dpcore.noise.guarantees.publish_gini`: clamped to [0, 1] on the 1e-6 grid, post-processing);
    ``noisy_value`` is the noisy number before that step (the posterior's input).

    ``noise`` (a ``dpcore.noise.smooth.SMOOTH_NOISES`` name): "cauchy" (default, pure epsilon,
    the paper's), "laplace" (NRS, (epsilon, delta)-DP) or "laplace_lognormal" (Bun & Steinke 2019,
    rho-zCDP with rho implying (epsilon, delta); simulation only: it has no floating-point-safe sampler);
    ``delta`` defaults to 1e-6 for the last two and is ignored by "cauchy". ``.privacy_cost`` is the
    ``dpcore.budget.PrivacyCost`` the ledger composes.

    Example (a seeded simulation):

    >>> import numpy as np
    >>> x = np.random.default_rng(0).lognormal(10, 1, 2000)
    >>> r = release_gini(x, epsilon=1.0, lower=0.0, upper=2e6, rng=1)
    >>> 0.0 <= r.value <= 1.0 and r.privacy_cost.epsilon == 1.0
    True
    """
    mech, xs, n_below, n_above, ss = _prepare_release(
        x, epsilon, gamma, lower, upper, calibration, method, clip_negative, noise, delta
    )
    from ..noise.guarantees import publish_gini

    g0 = sorted_gini(xs)
    scale = mech.noise_scale(ss.value)
    noisy = float(mech.simulate(g0, scale, 1, secure_generator() if rng is None else rng)[0])
    cal = mech.smooth_calibration
    return GiniRelease(
        value=publish_gini(noisy),
        noisy_value=noisy,
        confidential_noise_scale=scale,
        alpha=mech.alpha,
        beta=mech.smoothness,
        epsilon=mech.epsilon,
        gamma=mech.gamma,
        confidential_smooth_sensitivity=ss.value,
        confidential_k_star=ss.k_star,
        calibration=calibration,
        method=method,
        n=xs.size,
        lower=float(lower),
        upper=float(upper),
        confidential_saturated=_saturated(ss.value, ss.global_sensitivity, scale, mech.gamma, mech.noise_law()),
        confidential_n_clipped_below=n_below,
        confidential_n_clipped_above=n_above,
        confidential_true_value=g0 if include_confidential else None,
        noise=cal.noise,
        delta=cal.delta,
        rho=cal.rho,
        privacy_cost=mech.privacy_cost(),
        sigma=cal.sigma,
    )


@dataclass(frozen=True)
class LaplaceGiniRelease:
    """Baseline: g(X) + Laplace(GS/epsilon) with the global sensitivity of eq. (1)."""

    value: float
    noise_scale: float
    epsilon: float
    global_sensitivity: float
    n: int
    lower: float
    upper: float
    confidential_n_clipped_below: int = 0
    confidential_n_clipped_above: int = 0


def release_gini_laplace(
    x: Any, *, epsilon: float, lower: float, upper: float, rng: Any = None, clip_negative: bool = False
) -> LaplaceGiniRelease:
    """The global-sensitivity Laplace mechanism the paper argues against (Section 2.2).

    GS from :func:`gini_global_sensitivity` ((n-1)/n when lower = 0: useless for any n).
    """
    epsilon = check_epsilon(epsilon)
    xs, n_below, n_above = clip_incomes(x, lower=lower, upper=upper, clip_negative=clip_negative)
    gs = gini_global_sensitivity(xs.size, lower, upper)
    nz = _noise()
    gen = secure_generator() if rng is None else as_generator(rng)
    scale = gs / epsilon
    val = sorted_gini(xs) + float(nz.sample_laplace(scale, 1, gen)[0])
    return LaplaceGiniRelease(val, scale, epsilon, gs, xs.size, float(lower), float(upper), n_below, n_above)


def error_summary(errors: Any, *, gamma: float | None = None) -> dict[str, float | None]:
    """Median / 90% / 99% absolute error, and RMSE only when the noise has a variance (gamma > 3)."""
    e = np.abs(as_finite_array(errors, "errors"))
    if gamma is not None:
        gamma = check_gamma(gamma)
    q50, q90, q99 = np.quantile(e, [0.5, 0.9, 0.99])
    rmse = None
    if gamma is None or gamma > 3:
        rmse = float(np.sqrt(np.mean(e * e)))
    return {"median_abs_error": float(q50), "q90_abs_error": float(q90), "q99_abs_error": float(q99), "rmse": rmse}


@dataclass(frozen=True, eq=False)
class GiniSimulation:
    """Many simulated releases of one data set (planning: this uses the confidential truth)."""

    releases: np.ndarray
    laplace_releases: np.ndarray
    confidential_true_value: float
    noise_scale: float
    laplace_scale: float
    alpha: float
    beta: float
    epsilon: float
    gamma: float
    smooth: GiniSmoothSensitivity
    summary: dict
    laplace_summary: dict
    saturated: bool
    noise: str = "cauchy"
    delta: float = 0.0
    privacy_cost: Any = None  # dpcore.budget.PrivacyCost of one release


def simulate_releases_from_scale(
    true_value: float, noise_scale: float, gamma: float, n_releases: int, rng: Any = None
) -> np.ndarray:
    """true_value + noise_scale * Z for n_releases independent Z ~ GeneralizedCauchy(gamma) (vectorised)."""
    true_value = check_finite(true_value, "true_value")
    noise_scale = check_finite(noise_scale, "noise_scale")
    if noise_scale < 0:
        raise DPInputError("noise_scale must be >= 0")
    gamma = check_gamma(gamma)
    n_releases = check_int(n_releases, "n_releases", minimum=1, maximum=50_000_000)
    return true_value + noise_scale * _noise().GeneralizedCauchy(gamma).rvs(n_releases, as_generator(rng))


def simulate_gini_releases(
    x: Any,
    *,
    epsilon: float,
    gamma: float = 2.0,
    lower: float,
    upper: float,
    n_releases: int = 100_000,
    calibration: str = "tight",
    method: str = "exact",
    rng: Any = None,
    clip_negative: bool = False,
    noise: str = "cauchy",
    delta: float | None = None,
) -> GiniSimulation:
    """Simulate ``n_releases`` independent releases of :func:`release_gini` (and the Laplace baseline).

    S_beta(X) is computed once; the draws are vectorised. For planning and teaching only: the
    summary uses the confidential true value. ``noise`` and ``delta`` as in :func:`release_gini`
    (the RMSE is reported for the light-tailed noises, which have a variance).
    """
    mech, xs, _, _, ss = _prepare_release(
        x, epsilon, gamma, lower, upper, calibration, method, clip_negative, noise, delta
    )
    n_releases = check_int(n_releases, "n_releases", minimum=1, maximum=50_000_000)
    gen = as_generator(rng)
    g0 = sorted_gini(xs)
    scale = mech.noise_scale(ss.value)
    rel = mech.simulate(g0, scale, n_releases, gen)
    gs = ss.global_sensitivity
    lap_scale = gs / mech.epsilon
    lap = g0 + gen.laplace(0.0, lap_scale, size=n_releases)
    cal = mech.smooth_calibration
    return GiniSimulation(
        releases=rel,
        laplace_releases=lap,
        confidential_true_value=g0,
        noise_scale=scale,
        laplace_scale=lap_scale,
        alpha=mech.alpha,
        beta=mech.smoothness,
        epsilon=mech.epsilon,
        gamma=mech.gamma,
        smooth=ss,
        summary=error_summary(rel - g0, gamma=mech.gamma if cal.noise == "cauchy" else None),
        laplace_summary=error_summary(lap - g0),
        saturated=_saturated(ss.value, gs, scale, mech.gamma, mech.noise_law()),
        noise=cal.noise,
        delta=cal.delta,
        privacy_cost=mech.privacy_cost(),
    )
