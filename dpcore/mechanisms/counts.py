"""Counts: a noisy count (:class:`CountMechanism`) and the noisy cell sizes of a table, with the DP selection of
its cells when they are not declared (:class:`CellSizesMechanism`).

Both add discrete Laplace noise (the two-sided geometric law, Ghosh, Roughgarden & Sundararajan 2009) to integer
counts: OpenDP's exact integer sampler in a real release (Canonne, Kamath & Steinke 2020), numpy's two-sided
geometric sampler in a simulation. The cell selection is OpenDP's Laplace threshold mechanism (Rogers et al.
2023, "A unifying privacy analysis framework for unknown domain algorithms"): why a table needs it, and the
neighbouring relation with private cell sizes, are in :mod:`dpcore.cell_keys`.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import budget
from ..noise import guarantees as noise_guarantees
from ..noise import secure as secure_noise
from ..validation import DPInputError, check_delta, check_epsilon, check_int
from .base import DrawProvenance, register

__all__ = ["CountMechanism", "CountDraw", "CellSizesMechanism", "NoisyCells", "selection_threshold"]


@dataclass(frozen=True)
class CountDraw(DrawProvenance):
    """One draw of :class:`CountMechanism`: the noisy counts (int64) and what drew the noise."""

    counts: np.ndarray


@register
@dataclass(frozen=True)
class CountMechanism:
    """Counts + discrete Laplace of scale sensitivity/epsilon (the two-sided geometric law, Ghosh et al. 2009):
    epsilon-DP when one person changes the vector of counts by at most ``sensitivity`` in L1 (1 for one count under
    replace-one). Real draws: OpenDP's exact integer sampler; simulations: the same law with numpy."""

    epsilon: float
    sensitivity: int = 1

    kind = "count"
    interval_kind = "count"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_int(self.sensitivity, "sensitivity", minimum=1))

    @property
    def noise_scale(self) -> float:
        return self.sensitivity / self.epsilon

    def privacy_cost(self) -> budget.PrivacyCost:
        return budget.pure(self.epsilon)

    def record(self) -> dict[str, Any]:
        return {
            "noise": f"discrete Laplace, scale sensitivity/epsilon = {self.noise_scale!r} (L1 sensitivity "
            f"{self.sensitivity}), clamped to [0, the public n] (post-processing)",
            "noise_scale": self.noise_scale,
        }

    def draw(self, counts: Any, rng: Any = None, upper: Any = None) -> CountDraw:
        """Noisy counts, each clamped to [0, ``upper``] (``upper``: the public largest count, e.g. the public n; None:
        no upper end): a count is never negative nor above the number of rows it counts, so a noisy one outside is
        clamped to the range (post-processing, in the real and the simulated draw alike)."""
        d = secure_noise.release_integer_counts(
            np.asarray(counts, dtype=np.int64).ravel(), scale=self.noise_scale, rng=rng, sensitivity=self.sensitivity
        )
        values = np.maximum(np.asarray(d.values, dtype=np.int64), 0)
        if upper is not None:
            values = np.minimum(values, np.asarray(upper, dtype=np.int64).ravel())
        return CountDraw.from_noise(d, counts=values)

    def certified_epsilon(self, draw: CountDraw) -> float:
        """OpenDP's privacy map of the discrete Laplace at the L1 sensitivity (the draw's ``map_epsilon``)."""
        return float(draw.map_epsilon if draw.map_epsilon is not None else self.sensitivity / self.noise_scale)


@functools.lru_cache(maxsize=64)
def selection_threshold(n_epsilon: float, delta: float, m: int) -> int:
    """The smallest integer threshold T for which OpenDP's Laplace threshold mechanism (scale 2m / n_epsilon,
    integer counts) maps the distance (l0, l1, linf) = (2m, 2m, m) to a delta <= ``delta``. Public (no data), so
    kept per (n_epsilon, delta, m): a search over OpenDP's privacy map, asked by the record and the draw."""
    n_epsilon = check_epsilon(n_epsilon, "n_epsilon")
    delta = check_delta(delta, "selection delta")
    m = check_int(m, "m", minimum=1)
    measurement = threshold_measurement
    lo, hi = m, m  # OpenDP refuses a threshold below the l-infinity distance m
    while measurement(n_epsilon, m, hi).map((2 * m, 2 * m, m))[1] > delta:
        lo, hi = hi, hi * 2
        if hi > 1 << 40:  # pragma: no cover - unreachable for delta > 0
            raise DPInputError(f"no selection threshold reaches delta = {delta:g}")
    while lo < hi:
        mid = (lo + hi) // 2
        if measurement(n_epsilon, m, mid).map((2 * m, 2 * m, m))[1] <= delta:
            hi = mid
        else:
            lo = mid + 1
    return int(hi)


def threshold_measurement(n_epsilon: float, m: int, threshold: int) -> Any:
    """OpenDP's Laplace threshold mechanism on a map cell key -> count (scale 2m / n_epsilon, ``threshold``)."""
    dp = noise_guarantees.load_opendp()
    domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=dp.i64))
    metric = dp.l01inf_distance(dp.absolute_distance(T=dp.i64))
    return dp.m.make_laplace_threshold(domain, metric, scale=2.0 * m / n_epsilon, threshold=int(threshold))


@dataclass(frozen=True)
class NoisyCells(DrawProvenance):
    """The cells a statistic releases and their noisy sizes (``counts[key]``), with how they were obtained
    (``info``: the record's text) and what drew them."""

    counts: dict
    info: dict


@register
@dataclass(frozen=True)
class CellSizesMechanism:
    """The noisy sizes of a statistic's cells, and with ``select`` the DP selection of which cells are listed.

    Noisy n (``select`` False: the cells are declared, public): discrete Laplace of scale 2m / n_epsilon on every
    cell's count; one person's m rows may each move between two cells, changing two counts by 1, so the L1
    sensitivity is 2m and the sizes cost pure n_epsilon. Selection (``select`` True: no declared cells): OpenDP's
    Laplace threshold mechanism with the same noise, keeping the cells whose noisy count reaches
    :func:`selection_threshold`; a cell present in one data set and absent from its neighbour is listed with
    probability <= ``selection_delta``, so the cost is (n_epsilon, selection_delta). The listed n of a kept cell is
    its noisy count (the same draw)."""

    n_epsilon: float
    rows_per_person: int = 1
    select: bool = False
    selection_delta: float = 1e-10

    kind = "cell_sizes"
    interval_kind = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_epsilon", check_epsilon(self.n_epsilon, "n_epsilon"))
        object.__setattr__(self, "rows_per_person", check_int(self.rows_per_person, "m", minimum=1))
        if not isinstance(self.select, bool):
            raise TypeError(f"select must be True or False, got {self.select!r}")
        if self.select:
            object.__setattr__(self, "selection_delta", check_delta(self.selection_delta, "selection delta"))

    @property
    def epsilon(self) -> float:
        return self.n_epsilon

    @property
    def noise_scale(self) -> float:
        return 2.0 * self.rows_per_person / self.n_epsilon

    @property
    def sensitivity(self) -> int:
        return 2 * self.rows_per_person

    @property
    def threshold(self) -> int:
        """The selection threshold (public: a function of n_epsilon, m and selection_delta)."""
        return selection_threshold(self.n_epsilon, self.selection_delta, self.rows_per_person)

    def privacy_cost(self) -> budget.PrivacyCost:
        if self.select:
            return budget.approx(self.n_epsilon, self.selection_delta)
        return budget.pure(self.n_epsilon)

    def record(self) -> dict[str, Any]:
        """The record's text (every field is the same for every data set, with or without cells)."""
        scale = self.noise_scale
        if not self.select:
            return {
                "cells": "declared in the plan's [keys] (public; absent cells released as n = 0 "
                "plus noise, rows of undeclared cells dropped)",
                "n_noise": f"discrete Laplace, scale 2m/n_epsilon = {scale!r} on every cell's count "
                f"(L1 sensitivity 2m = {self.sensitivity}: one person's rows may move between cells)",
                "n_epsilon": self.n_epsilon,
            }
        return {
            "cells": "selected with differential privacy (Laplace threshold mechanism, Rogers et al. 2023): only "
            "cells whose noisy count reaches the threshold are listed",
            "n_noise": f"discrete Laplace, scale 2m/n_epsilon = {scale!r}; the listed n is the noisy count",
            "n_epsilon": self.n_epsilon,
            "selection_delta": self.selection_delta,
            "selection_threshold": self.threshold,
        }

    def draw(self, keys: Any, counts: Any, rng: Any = None) -> NoisyCells:
        """The listed cells and their noisy sizes, from the cells present (``keys``, tuples of text) and their row
        counts. Real release (``rng`` None or a SecureRandom): OpenDP; simulation: the same law drawn by numpy."""
        if isinstance(keys, (str, bytes)) or not isinstance(keys, (list, tuple)):
            raise TypeError(f"cell keys must be a list of tuples of text, got {type(keys).__name__}")
        keys = list(keys)
        if not all(isinstance(k, tuple) for k in keys):
            raise TypeError("cell keys must be a list of tuples of text")
        counts = np.asarray(counts, dtype=np.int64)
        info = self.record()
        if not self.select:
            d = secure_noise.release_integer_counts(
                counts, scale=self.noise_scale, rng=rng, sensitivity=self.sensitivity
            )
            noisy = dict(zip(keys, (int(v) for v in np.asarray(d.values, dtype=np.int64)), strict=True))
            info["n_measurement"] = d.measurement
            return NoisyCells.from_noise(d, counts=noisy, info=info)
        threshold = int(info["selection_threshold"])
        if secure_noise.is_simulation(rng):
            d = secure_noise.release_integer_counts(
                counts, scale=self.noise_scale, rng=rng, sensitivity=self.sensitivity
            )
            noisy = {
                k: int(v) for k, v in zip(keys, np.asarray(d.values, dtype=np.int64), strict=True) if v >= threshold
            }
            info["n_measurement"] = d.measurement + f", kept when >= {threshold}"
            return NoisyCells(
                noisy,
                info,
                measurement=info["n_measurement"],
                privacy_map=d.privacy_map,
                map_epsilon=d.epsilon,
                simulated=True,
            )
        info["n_measurement"] = (
            f"opendp.measurements.make_laplace_threshold(map_domain(atom_domain(T=str), "
            f"atom_domain(T=i64)), l01inf_distance(absolute_distance(T=i64)), scale={self.noise_scale!r}, "
            f"threshold={threshold})"
        )
        measurement = threshold_measurement(self.n_epsilon, self.rows_per_person, threshold)
        m = self.rows_per_person
        map_epsilon, map_delta = measurement.map((2 * m, 2 * m, m))
        privacy_map = (
            f"(l0, l1, linf) distance d_in -> (epsilon, delta); map({(2 * m, 2 * m, m)}) = "
            f"({float(map_epsilon)!r}, {float(map_delta)!r})"
        )
        noisy = {}
        if keys:  # with nothing to select from, the measurement's output on an empty map is empty
            by_text = {json.dumps(list(k)): k for k in keys}
            released = measurement({json.dumps(list(k)): int(c) for k, c in zip(keys, counts, strict=True)})
            noisy = {by_text[t]: int(v) for t, v in released.items()}
        return NoisyCells(
            noisy,
            info,
            measurement=info["n_measurement"],
            privacy_map=privacy_map,
            map_epsilon=float(map_epsilon),
            simulated=False,
        )

    def certified_epsilon(self, draw: NoisyCells) -> float:
        """OpenDP's privacy map at the distance one person can cause: (2m in L1) for the noisy counts, (l0, l1,
        linf) = (2m, 2m, m) for the threshold mechanism."""
        return float(draw.map_epsilon if draw.map_epsilon is not None else self.n_epsilon)
