"""One mechanism object per released statistic kind: the front door to every real draw.

Each object is frozen, built from public parameters only, and carries its calibration, its cost
(:meth:`privacy_cost`, a ``dpcore.budget.PrivacyCost``), a ``draw`` (``rng`` None: the real sampler, OpenDP's or
the certified one; a numpy Generator or seed: a simulation of the same law) and a ``record`` (the one public text
every release record of that kind carries). Every release path draws through them: the planner's statistics and
``dpcore.release.make_release`` (the app's Release mode), the command line's engines, ``dpcore.gini.release_gini``
and the generated scripts, so a grid, a clamp or a sensitivity is written once.

=====================  ===========================================================================
kind                   mechanism (module where its mathematics lives)
=====================  ===========================================================================
gini                   :class:`dpcore.gini.GiniMechanism` (smooth sensitivity, Lan & Reiter)
percentiles            :class:`dpcore.percentiles.HistogramMechanism` (PSEO noisy histogram, Foote et al.)
exponential quantiles  :class:`dpcore.percentiles.ExponentialQuantileMechanism` (exponential mechanism on a
                       public candidate grid, permute-and-flip form; plans' ``method = "exponential"``)
mean, group means      :class:`dpcore.stratified.MeanMechanism` (clipped Laplace mean, Rosenblatt et al.)
relative risk          :class:`dpcore.ratio.RelativeRiskMechanism` (LaplaceNoisedCounts, Shoham & Ligett)
count                  :class:`CountMechanism` (discrete Laplace on one count)
=====================  ===========================================================================
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import budget, release_noise
from .gini import GiniDraw, GiniMechanism
from .percentiles import ExponentialQuantileDraw, ExponentialQuantileMechanism, HistogramDraw, HistogramMechanism
from .ratio import RelativeRiskDraw, RelativeRiskMechanism
from .stratified import MeanDraw, MeanMechanism
from .validation import check_epsilon, check_int

__all__ = ["GiniMechanism", "GiniDraw", "HistogramMechanism", "HistogramDraw", "ExponentialQuantileMechanism",
           "ExponentialQuantileDraw", "MeanMechanism", "MeanDraw",
           "RelativeRiskMechanism", "RelativeRiskDraw", "CountMechanism", "CountDraw"]


@dataclass(frozen=True)
class CountDraw:
    """One draw of :class:`CountMechanism`: the noisy counts (int64) and what drew the noise."""

    counts: np.ndarray
    measurement: str
    privacy_map: str
    map_epsilon: float | None
    simulated: bool


@dataclass(frozen=True)
class CountMechanism:
    """Counts + discrete Laplace of scale sensitivity/epsilon (the two-sided geometric law, Ghosh et al. 2009):
    epsilon-DP when one person changes the vector of counts by at most ``sensitivity`` in L1 (1 for one count under
    replace-one). Real draws: OpenDP's exact integer sampler; simulations: the same law with numpy."""

    epsilon: float
    sensitivity: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_int(self.sensitivity, "sensitivity", minimum=1))

    @property
    def noise_scale(self) -> float:
        return self.sensitivity / self.epsilon

    def privacy_cost(self) -> budget.PrivacyCost:
        return budget.pure(self.epsilon)

    def record(self) -> dict[str, Any]:
        return {"noise": f"discrete Laplace, scale sensitivity/epsilon = {self.noise_scale!r} (L1 sensitivity "
                         f"{self.sensitivity})"}

    def draw(self, counts: Any, rng: Any = None) -> CountDraw:
        d = release_noise.release_integer_counts(np.asarray(counts, dtype=np.int64).ravel(), scale=self.noise_scale,
                                                 rng=rng, sensitivity=self.sensitivity)
        return CountDraw(np.asarray(d.values, dtype=np.int64), d.measurement, d.privacy_map, d.epsilon, d.simulated)
