"""One entry point: calibrate any registered noise to a target (epsilon, delta) (:func:`smooth_calibration`), its
standardised law, its draws, and the law of a release."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import budget
from ...validation import DPInputError, check_delta
from ..certificates import smooth_noise_calibration
from ..samplers import GeneralizedCauchy
from .common import (
    DEFAULT_DELTA,
    SmoothCalibration,
    check_noise,
    check_probabilities,
    check_release,
    check_size,
    check_type,
    law_parameter,
)
from .laplace import LaplaceNoise, laplace_smooth_calibration
from .lognormal import LaplaceLogNormal, lln_calibration


def smooth_calibration(
    noise: str,
    epsilon: float,
    *,
    delta: float | None = None,
    gamma: float = 2.0,
    mode: str = "tight",
    beta: float | None = None,
    rho: float | None = None,
) -> SmoothCalibration:
    """Calibrate ``noise`` (a :data:`SMOOTH_NOISES` name) to the target (epsilon, delta).

    "cauchy": pure epsilon (``dpcore.noise.smooth_noise_calibration``; delta ignored, recorded 0).
    "laplace": (epsilon, delta) by :func:`laplace_smooth_calibration` (mode "tight" or "paper").
    "laplace_lognormal": rho-zCDP by :func:`lln_calibration` (rho implying (epsilon, delta) unless
    ``rho`` is given; ``mode`` is ignored: the theorem's constants are used as they are).
    """
    noise = check_noise(noise)
    if delta is not None:
        delta = check_delta(delta)  # checked even where it is not used (cauchy): a bad value is a mistake
    if noise == "cauchy":
        cal = smooth_noise_calibration(epsilon, gamma, mode=mode, beta=beta)
        return SmoothCalibration(
            "cauchy",
            cal.alpha,
            cal.beta,
            cal.epsilon,
            0.0,
            cal.mode,
            budget.pure(cal.epsilon),
            cal.certified_loss,
            gamma=float(gamma),
        )
    d = DEFAULT_DELTA if delta is None else check_delta(delta)
    if noise == "laplace":
        return laplace_smooth_calibration(epsilon, d, mode=mode, beta=beta)
    if mode not in ("tight", "paper"):
        raise DPInputError(f"mode must be 'tight' or 'paper', got {mode!r}")
    return lln_calibration(epsilon, d, rho=rho, beta=beta)


def noise_distribution(calibration: SmoothCalibration) -> Any:
    """The standardised noise law Z of a calibration (``.rvs``, ``.pdf``, ``.logpdf``, ``.cdf``, ``.abs_quantile``)."""
    check_type(calibration, SmoothCalibration, "calibration")
    if calibration.noise == "cauchy":
        return CauchyAdapter(law_parameter(calibration.gamma, calibration.noise, "gamma"))
    if calibration.noise == "laplace":
        return LaplaceNoise()
    return LaplaceLogNormal(law_parameter(calibration.sigma, calibration.noise, "sigma"))


class CauchyAdapter(GeneralizedCauchy):
    """GeneralizedCauchy with ``abs_quantile`` (the shared interface of this module)."""

    name = "cauchy"

    def abs_quantile(self, p) -> np.ndarray:
        p = check_probabilities(p)
        return self.ppf(0.5 + 0.5 * p)


def sample_smooth_noise(calibration: SmoothCalibration, size, rng=None) -> np.ndarray:
    """Vectorised draws of the standardised noise Z of ``calibration``."""
    check_type(calibration, SmoothCalibration, "calibration")
    size = check_size(size)
    return noise_distribution(calibration).rvs(size, rng)


def noise_of_release(release: Any) -> Any:
    """The standardised noise law of a ``dpcore.gini.GiniRelease`` (any of the registry's noises)."""
    check_release(release)
    name = check_noise(getattr(release, "noise", "cauchy"))
    if name == "cauchy":
        return CauchyAdapter(release.gamma)
    if name == "laplace":
        return LaplaceNoise()
    return LaplaceLogNormal(release.sigma)
