"""Means of every cell of a table (stratified paper Eq. 2/3): :class:`MeanMechanism`.

The mathematics (clipping to cents, the sums' sensitivity with public or moving cells) is
:mod:`dpcore.stratified`'; the draw is here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import budget
from ..noise import guarantees as noise_guarantees
from ..noise import secure as secure_noise
from ..stratified import bound_cents, mean_sum_sensitivity_cents
from ..validation import DPInputError, check_bounds, check_epsilon, check_int
from .base import DrawProvenance, register

__all__ = ["MeanMechanism", "MeanDraw"]


@dataclass(frozen=True)
class MeanDraw(DrawProvenance):
    """One draw of :class:`MeanMechanism`: the released means (in [lower, upper]; NaN for an empty cell) and what
    drew the noise."""

    means: np.ndarray


@register
@dataclass(frozen=True)
class MeanMechanism:
    """The one mechanism of every released mean (stratified paper Eq. 2/3): the clipped sum of each cell in cents
    + Laplace, divided by the cell's n (public, or a DP count when cells move).

    Public parameters only: epsilon, [lower, upper], ``rows_per_person`` m and ``cells_move`` (cell sizes
    protected: one person's rows may move between cells, which widens the sensitivity). One person changes the
    vector of clipped sums by at most :func:`mean_sum_sensitivity_cents` in L1, so OpenDP's floating-point-safe
    Laplace at the scale whose privacy map gives epsilon at that sensitivity is epsilon-DP for all cells together
    (disjoint cells: one L1 ball). Real draws: :func:`dpcore.noise.secure.release_real_values` (every core);
    simulations: the same law with numpy.
    """

    epsilon: float
    lower: float
    upper: float
    rows_per_person: int = 1
    cells_move: bool = False

    kind = "mean"
    interval_kind = "mean"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        lo, hi = check_bounds(self.lower, self.upper, lower_name="clip lower", upper_name="clip upper")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "rows_per_person", check_int(self.rows_per_person, "rows per person", minimum=1))

    @property
    def sensitivity_cents(self) -> float:
        return mean_sum_sensitivity_cents(
            bound_cents(self.lower), bound_cents(self.upper), self.rows_per_person, bool(self.cells_move)
        )

    @property
    def noise_scale_cents(self) -> float:
        """OpenDP's Laplace scale for epsilon at the sensitivity (sensitivity/epsilon up to its rounding allowance)."""
        return noise_guarantees.laplace_scale_for(self.epsilon, self.sensitivity_cents)

    def privacy_cost(self):
        return budget.pure(self.epsilon)

    def record(self) -> dict[str, Any]:
        rule = "m max(cU - cL, 2 max(|cL|, |cU|)): rows may move between cells" if self.cells_move else "m (cU - cL)"
        return {
            "noise": (
                f"Laplace on the clipped sum in cents, scale {self.noise_scale_cents!r} (sensitivity {rule} = "
                f"{self.sensitivity_cents:g} cents), divided by the "
                + ("noisy n" if self.cells_move else "public n")
                + ", clamped to [clip_lower, clip_upper] (post-processing)"
            ),
            "clip_lower": self.lower,
            "clip_upper": self.upper,
            "noise_scale_cents": self.noise_scale_cents,
        }

    def draw(self, clipped_sums_cents: Any, n: Any, rng: Any = None) -> MeanDraw:
        """Released means of cells with these clipped sums (cents) and sizes n. ``rng`` None: the real sampler; a
        numpy Generator or seed: a simulation (NOT a release)."""
        sums = np.asarray(clipped_sums_cents, dtype=np.float64).ravel()
        sizes = np.asarray(n, dtype=float).ravel()
        if sums.shape != sizes.shape:
            raise DPInputError("one n per clipped sum is needed")
        if sums.size == 0:
            return MeanDraw.without_cells(rng, means=np.zeros(0))
        d = secure_noise.release_real_values(
            sums, scale=self.noise_scale_cents, rng=rng, sensitivity=self.sensitivity_cents
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            means = np.where(sizes > 0, np.asarray(d.values, dtype=float) / 100.0 / np.maximum(sizes, 1), np.nan)
        # every clipped income lies in [lower, upper], so their mean does: a noisy mean outside is clamped to the
        # range (post-processing of the noisy sum, in the real and the simulated draw alike). It never moves away
        # from the true mean, so an interval valid for the unclamped value stays valid for the clamped one.
        means = np.clip(means, self.lower, self.upper)
        return MeanDraw.from_noise(d, means=means)

    def certified_epsilon(self, draw: MeanDraw) -> float:
        """OpenDP's privacy map of its floating-point-safe Laplace at the sums' L1 sensitivity in cents (the draw's
        ``map_epsilon``; :func:`dpcore.noise.guarantees.laplace_scale_for` chose the scale so that it is <= epsilon)."""
        return float(draw.map_epsilon if draw.map_epsilon is not None else self.epsilon)
