"""The registry of smooth-sensitivity noises, :class:`SmoothCalibration` (the constants of one release and the
privacy statement they certify), the bisection every "tight" calibration uses, and the checks the modules share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import budget
from ...validation import DPInputError, check_epsilon, check_finite, check_int, check_positive

#: name -> one-line description (the names outside checks use).
SMOOTH_NOISES: dict[str, str] = {
    "cauchy": "generalized Cauchy 1/(1+|z|^gamma) (the Gini paper's; pure epsilon-DP, heavy tails)",
    "laplace": "Laplace e^-|z| with NRS smooth sensitivity ((epsilon, delta)-DP, exponential tails)",
    "laplace_lognormal": "Laplace log-normal of Bun & Steinke 2019 (rho-zCDP, light tails)",
}

#: delta used when a light-tailed noise is asked for without one.
DEFAULT_DELTA = 1e-6


def check_noise(noise: Any) -> str:
    """The registry name, or a DPInputError listing the choices."""
    if not isinstance(noise, str) or noise not in SMOOTH_NOISES:
        raise DPInputError(f"noise must be one of {sorted(SMOOTH_NOISES)}, got {noise!r}")
    return noise


def law_parameter(value: float | None, noise: str, name: str) -> float:
    """A parameter of the noise law that a calibration of this ``noise`` always carries (gamma, sigma or rho)."""
    if value is None:
        raise DPInputError(f"a {noise!r} calibration needs its {name}")
    return value


@dataclass(frozen=True)
class SmoothCalibration:
    """Constants for one smooth-sensitivity release and the privacy statement they certify.

    ``alpha`` (Bun & Steinke's s) divides the smooth sensitivity; ``beta`` (their t) is its
    smoothness. ``cost`` is a :class:`dpcore.budget.PrivacyCost` (pure, approx or zCDP) that the
    ledger and planner compose. ``certificate``: the certified privacy loss (cauchy), the
    certified delta (laplace), or eps_c of the CDP theorem (laplace_lognormal). ``sigma`` is the
    LLN shape parameter, ``gamma`` the Cauchy exponent (None where they do not apply).
    """

    noise: str
    alpha: float
    beta: float
    epsilon: float
    delta: float
    mode: str
    cost: budget.PrivacyCost
    certificate: float
    gamma: float | None = None
    sigma: float | None = None
    rho: float | None = None

    def statement(self) -> str:
        """One sentence: what is guaranteed and why."""
        if self.noise == "cauchy":
            return (
                f"pure ε = {self.epsilon:.4g}-DP (generalized Cauchy γ = {self.gamma:g}; certified loss "
                f"{self.certificate:.4g})"
            )
        if self.noise in ("laplace", "gaussian"):
            law = "Laplace" if self.noise == "laplace" else "Gaussian"
            return (
                f"(ε, δ) = ({self.epsilon:.4g}, {self.delta:.2g})-DP ({law}, NRS smooth sensitivity; "
                f"certified δ = {self.certificate:.3g})"
            )
        rho = law_parameter(self.rho, self.noise, "rho")
        eps_at = budget.zcdp_to_approx_dp(rho, self.delta) if self.delta > 0 else float("nan")
        return (
            f"ρ = {self.rho:.4g}-zCDP (Laplace log-normal, Bun & Steinke 2019; certified), hence "
            f"(ε, δ) = ({eps_at:.4g}, {self.delta:.2g})-DP"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "noise": self.noise,
            "alpha": self.alpha,
            "beta": self.beta,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "mode": self.mode,
            "cost": self.cost.to_dict(),
            "certificate": self.certificate,
            "gamma": self.gamma,
            "sigma": self.sigma,
            "rho": self.rho,
        }


def largest_certified_alpha(
    certified_delta: Callable[[float, float, float], float],
    epsilon: float,
    delta: float,
    beta: float,
    *,
    upper: float,
    smallest: float,
    iterations: int,
    absolute_tolerance: float = 0.0,
    relative_tolerance: float = 0.0,
) -> tuple[float, float]:
    """The largest alpha in (0, upper] with ``certified_delta(epsilon, alpha, beta) <= delta``, and that delta.

    Bisection on [0, upper] (the certified delta increases with alpha): ``lo`` always stays on the
    certified side (delta(lo) <= delta, or lo = 0), ``hi`` on the refused side, and ``lo`` is returned,
    so the alpha given back is certified (its delta is recomputed and returned with it). ``smallest``
    is checked first and returned when the bisection never leaves 0; if even ``smallest`` misses delta
    the beta is refused. Stops after ``iterations`` halvings or once
    hi - lo <= max(absolute_tolerance, relative_tolerance * hi).
    """
    if certified_delta(epsilon, smallest, beta) > delta:
        raise DPInputError(
            f"beta = {beta:g} is too large for (epsilon, delta) = ({epsilon:g}, {delta:g}): "
            "even tiny alpha misses delta; choose a smaller beta"
        )
    lo, hi = 0.0, upper
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        if certified_delta(epsilon, mid, beta) <= delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= max(absolute_tolerance, relative_tolerance * hi):
            break
    alpha = lo if lo > 0 else smallest
    return alpha, certified_delta(epsilon, alpha, beta)


def check_certificate_args(epsilon: Any, alpha: Any, beta: Any) -> tuple[float, float, float]:
    """The checked (epsilon, alpha, beta) of a smooth-sensitivity delta certificate; beyond beta 25 or epsilon 700
    there is no privacy to certify (and e^epsilon overflows)."""
    epsilon = check_epsilon(epsilon)
    alpha = check_positive(alpha, "alpha")
    beta = check_positive(beta, "beta", allow_zero=True)
    if beta > 25.0 or epsilon > 700:
        raise DPInputError("beta must be <= 25 and epsilon <= 700 (no meaningful privacy beyond)")
    return epsilon, alpha, beta


def check_hockey_stick_args(epsilon: Any, shift: Any, log_dilation: Any) -> tuple[float, float, float]:
    """The checked (epsilon, shift, log_dilation) of an exact hockey-stick divergence (the brute-force oracles)."""
    epsilon = check_epsilon(epsilon)
    if epsilon > 700:
        raise DPInputError(f"epsilon must be <= 700 here (e^epsilon overflows), got {epsilon:g}")
    d = check_finite(shift, "shift")
    lam = check_finite(log_dilation, "log_dilation")
    if abs(lam) > 25.0 or abs(d) > 1e6:
        raise DPInputError(
            "|log_dilation| must be <= 25 and |shift| <= 1e6 (beyond that there is no privacy to measure)"
        )
    return epsilon, d, lam


def check_type(obj: Any, cls: type, name: str) -> None:
    if not isinstance(obj, cls):
        raise TypeError(f"{name} must be a dpcore.noise.smooth.{cls.__name__}, got {type(obj).__name__}")


def check_release(release: Any) -> None:
    needed = ("value", "noise_scale", "gamma", "noise")
    if not all(hasattr(release, a) for a in needed):
        raise TypeError(
            f"release must be a dpcore.gini.GiniRelease (with {', '.join(needed)}), got {type(release).__name__}"
        )


def check_size(size) -> int | tuple[int, ...]:
    if isinstance(size, tuple):
        return tuple(check_int(s, "size", minimum=0) for s in size)
    return check_int(size, "size", minimum=0)


def check_probabilities(p) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise DPInputError("probabilities must be in [0, 1]")
    return p
