"""Relative risks of every cell of a table: Shoham & Ligett's LaplaceNoisedCounts (:class:`RelativeRiskMechanism`).

The mathematics (Claims 3.1-3.4, the ratio's accuracy and interval) is :mod:`dpcore.ratio`'; the draw is here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import budget
from ..noise import guarantees as noise_guarantees
from ..noise import secure as secure_noise
from ..validation import DPInputError, check_epsilon, check_int
from .base import DrawProvenance, register

__all__ = ["RelativeRiskMechanism", "RelativeRiskDraw"]


@dataclass(frozen=True)
class RelativeRiskDraw(DrawProvenance):
    """One draw of :class:`RelativeRiskMechanism`: the noisy case counts, the relative risks (post-processing;
    NaN where a group is empty) and what drew the noise."""

    cases_exposed: np.ndarray
    cases_reference: np.ndarray
    relative_risk: np.ndarray


@register
@dataclass(frozen=True)
class RelativeRiskMechanism:
    """The one mechanism of every released relative risk: Shoham & Ligett's LaplaceNoisedCounts (Claim 3.1).

    Both case counts of every cell + Laplace of scale 2m/epsilon (epsilon/2 per count): one replaced record may
    change both counts of its cell by 1, and with m rows per person the vector of all counts moves by at most 2m
    in L1. The noise is OpenDP's floating-point-safe Laplace (continuous law, as in the paper, so Claim 3.2 and
    the interval of ``ratio_math_spec.md`` hold for it); the relative risk
    (x~ / n_x) / (max(y~, 1) / n_y) (Claim 3.4's max(y~, 1)) is post-processing with the public group sizes.
    Each noisy count is clamped to [0, its group's n] before it is published (post-processing: a count of cases
    cannot be negative nor exceed its group), so every released relative risk is in [0, n_y].
    """

    epsilon: float
    rows_per_person: int = 1

    kind = "relative_risk"
    interval_kind = "relative_risk"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "rows_per_person", check_int(self.rows_per_person, "rows per person", minimum=1))

    @property
    def sensitivity(self) -> float:
        return 2.0 * self.rows_per_person

    @property
    def noise_scale(self) -> float:
        """OpenDP's Laplace scale for epsilon at L1 sensitivity 2m (2m/epsilon up to its rounding allowance)."""
        return noise_guarantees.laplace_scale_for(self.epsilon, self.sensitivity)

    def privacy_cost(self):
        return budget.pure(self.epsilon)

    def record(self) -> dict[str, Any]:
        return {
            "noise": (
                f"Laplace, scale 2m/epsilon = {self.noise_scale!r} on both case counts of every cell "
                "(epsilon/2 per count, Claim 3.1), each clamped to [0, its group's n]; relative risk "
                "(x~/n_x) / (max(y~, 1)/n_y) (post-processing)"
            ),
            "noise_scale": self.noise_scale,
        }

    def draw(
        self, cases_exposed: Any, cases_reference: Any, n_exposed: Any, n_reference: Any, rng: Any = None
    ) -> RelativeRiskDraw:
        """Noisy counts and relative risks of every cell. ``rng`` None: the real sampler; a numpy Generator or
        seed: a simulation (NOT a release)."""
        x = np.asarray(cases_exposed, dtype=float).ravel()
        y = np.asarray(cases_reference, dtype=float).ravel()
        nx = np.asarray(n_exposed, dtype=float).ravel()
        ny = np.asarray(n_reference, dtype=float).ravel()
        if not x.shape == y.shape == nx.shape == ny.shape:
            raise DPInputError("one exposed count, reference count and group sizes per cell are needed")
        if x.size == 0:
            empty = np.zeros(0)
            return RelativeRiskDraw.without_cells(rng, cases_exposed=empty, cases_reference=empty, relative_risk=empty)
        d = secure_noise.release_real_values(
            np.concatenate([x, y]), scale=self.noise_scale, rng=rng, sensitivity=self.sensitivity
        )
        noisy = np.asarray(d.values, dtype=float)
        # a count of cases lies in [0, its group's n] (the n given: public, or a DP count): a noisy count outside is
        # clamped to it (post-processing, in the real and the simulated draw alike), so the relative risk is >= 0
        xn = np.clip(noisy[: x.size], 0.0, np.maximum(nx, 0.0))
        yn = np.clip(noisy[x.size :], 0.0, np.maximum(ny, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            rr = (xn / np.maximum(nx, 1.0)) / (np.maximum(yn, 1.0) / np.maximum(ny, 1.0))
        rr = np.where((nx > 0) & (ny > 0), rr, np.nan)
        return RelativeRiskDraw.from_noise(d, cases_exposed=xn, cases_reference=yn, relative_risk=rr)

    def certified_epsilon(self, draw: RelativeRiskDraw) -> float:
        """OpenDP's privacy map of its floating-point-safe Laplace at L1 sensitivity 2m (the draw's
        ``map_epsilon``; :func:`dpcore.noise.guarantees.laplace_scale_for` chose the scale so that it is <= epsilon)."""
        return float(draw.map_epsilon if draw.map_epsilon is not None else self.epsilon)
