"""The DP snapshot's mechanism (:class:`SnapshotMechanism`, kind "snapshot") and its public schema.

A snapshot is one DP release of public-format summaries of a confidential source, from which planning data are
drawn (:mod:`dpcore.snapshot`: the aggregation, the document, the post-processing). Per declared cell of a
:class:`SnapshotSchema`: a noisy histogram of incomes on fine public log-spaced bins
(:class:`HistogramMechanism`), a noisy count unless the sizes are declared public, and for a declared relative
risk the outcome x exposure table (:class:`CountMechanism`, L1 sensitivity 2 each).

Neighbouring relation: replace one record (its cell, exposure group and outcome may change too), n public; with
public cell sizes, replace one person within their cell, the declared cells and their sizes public. One replaced
record leaves one entry of each table and enters another: L1 sensitivity 2 per table (the draws' scale 2 /
epsilon_i), so each table is epsilon_i-DP and the three compose sequentially to ``planning_epsilon``, split by the
public :data:`DEFAULT_SHARES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import budget
from ..errors import DPInputError
from ..noise import secure as secure_noise
from ..validation import as_generator, check_bounds, check_epsilon, check_finite, check_int, check_positive
from .base import DrawProvenance, register
from .counts import CountMechanism
from .quantiles import HistogramMechanism

__all__ = [
    "DEFAULT_PLANNING_EPSILON",
    "DEFAULT_LOG_BINS",
    "DEFAULT_SHARES",
    "DEFAULT_SMOOTHING",
    "DEFAULT_BOOTSTRAP_FITS",
    "ALL_CELLS",
    "RISK_GROUPS",
    "RISK_OUTCOMES",
    "RiskSchema",
    "SnapshotSchema",
    "snapshot_edges",
    "ConfidentialTables",
    "SnapshotDraw",
    "SnapshotMechanism",
]

DEFAULT_PLANNING_EPSILON = 0.1
#: log-spaced bins between ``floor`` and ``upper``: 16 over three decades is a step of 54%. Fewer, wider bins carry
#: less noise in all (each bin has the same noise), more need the fitted density less to place people inside a bin;
#: measured on public synthetic incomes at n = 1,500 per cell (log-normal and Pareto-tailed, 10% zeros; 48 to 144
#: cell draws each): 12 to 20 bins give the snapshot's mean within 26% (sd) and the Gini's smooth sensitivity
#: within 0.67-1.5x in 80-88% of cells, 16 among the best; 30 and 45 bins are worse (43-57%)
DEFAULT_LOG_BINS = 16
#: weights of the public epsilon split between the snapshot's tables (normalised over the tables it has): the
#: histogram carries the shape every kind needs; a noisy count estimates a cell's size 9 times better than the
#: 21-bin histogram's total at the same epsilon, so it gets a share too
DEFAULT_SHARES = {"histogram": 3.0, "sizes": 1.0, "risk": 1.0}
#: penalty weight on the squared second differences of the fitted log-density (the data term is in units of the
#: noise variance); chosen on public synthetic incomes (log-normal and Pareto-tailed), not on the held-out files
DEFAULT_SMOOTHING = 10.0
#: parametric bootstrap fits behind the fit's bias correction
DEFAULT_BOOTSTRAP_FITS = 20
ALL_CELLS = "all"
#: the order of the relative risk table's last two axes
RISK_GROUPS = ("exposed", "reference")
RISK_OUTCOMES = ("case", "non_case")


# ---------------------------------------------------------------------------------------------
# The public schema
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RiskSchema:
    """The relative risk the snapshot prepares (public): the ``exposed`` and ``reference`` values of the exposure
    column (compared as text) and the outcome: income below the public ``outcome_below``, or (None) a 0/1 outcome
    given per record."""

    exposed: str
    reference: str
    outcome_below: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "exposed", str(self.exposed))
        object.__setattr__(self, "reference", str(self.reference))
        if self.exposed == self.reference:
            raise DPInputError("the exposed and the reference group of a relative risk must differ")
        if self.outcome_below is not None:
            object.__setattr__(self, "outcome_below", check_finite(self.outcome_below, "outcome_below"))

    def to_dict(self) -> dict[str, Any]:
        return {"exposed": self.exposed, "reference": self.reference, "outcome_below": self.outcome_below}


def snapshot_edges(lower: float, upper: float, n_log_bins: int = DEFAULT_LOG_BINS, floor: float | None = None):
    """The snapshot's public bin edges: ``lower``, then ``n_log_bins + 1`` geometric edges from ``floor`` (default
    upper / 1000, or ``lower`` itself when it is positive) to ``upper``. The first bin ``[lower, floor)`` holds the
    zero and near-zero incomes (a point mass in most income files) when ``floor > lower``."""
    lo, hi = check_bounds(lower, upper, lower_name="lower", upper_name="upper")
    k = check_int(n_log_bins, "number of log bins", minimum=2, maximum=200)
    if floor is None:
        floor = lo if lo > 0 else hi / 1000.0
    fl = check_positive(floor, "floor (the lowest log-spaced edge)")
    if not lo <= fl < hi:
        raise DPInputError(f"the floor {fl:g} must lie in [lower, upper) = [{lo:g}, {hi:g})")
    logs = np.geomspace(fl, hi, k + 1)
    return np.concatenate([[lo], logs]) if fl > lo else logs


@dataclass(frozen=True)
class SnapshotSchema:
    """Everything public about a snapshot: the income bounds and bins, the declared cells (labels, as text; empty:
    the whole source is one cell, :data:`ALL_CELLS`), their sizes when declared public, the relative risk, the
    total ``planning_epsilon`` and its split (``shares``), and the post-processing's public settings."""

    upper: float
    lower: float = 0.0
    n_log_bins: int = DEFAULT_LOG_BINS
    floor: float | None = None
    cells: tuple[str, ...] = ()
    cell_sizes: tuple[int, ...] | None = None
    risk: RiskSchema | None = None
    planning_epsilon: float = DEFAULT_PLANNING_EPSILON
    shares: Mapping[str, float] | tuple[tuple[str, float], ...] = tuple(sorted(DEFAULT_SHARES.items()))
    smoothing: float = DEFAULT_SMOOTHING
    bootstrap_fits: int = DEFAULT_BOOTSTRAP_FITS
    fit_seed: int = 0

    def __post_init__(self) -> None:
        edges = snapshot_edges(self.lower, self.upper, self.n_log_bins, self.floor)
        object.__setattr__(self, "lower", float(edges[0]))
        object.__setattr__(self, "upper", float(edges[-1]))
        object.__setattr__(self, "n_log_bins", int(self.n_log_bins))
        if self.floor is not None:
            object.__setattr__(self, "floor", float(self.floor))
        if isinstance(self.cells, (str, bytes)):
            raise DPInputError("cells must be a list of cell labels, not one text")
        cells = tuple(str(c) for c in self.cells)
        if len(set(cells)) != len(cells):
            raise DPInputError("each declared cell must be listed once")
        object.__setattr__(self, "cells", cells)
        if self.cell_sizes is not None:
            sizes = tuple(check_int(s, "cell size", minimum=0) for s in self.cell_sizes)
            if len(sizes) != len(self.labels):
                raise DPInputError(
                    f"one public size per declared cell is needed ({len(self.labels)}), got {len(sizes)}"
                )
            object.__setattr__(self, "cell_sizes", sizes)
        if self.risk is not None and not isinstance(self.risk, RiskSchema):
            raise TypeError("risk must be a RiskSchema")
        object.__setattr__(self, "planning_epsilon", check_epsilon(self.planning_epsilon, "planning_epsilon"))
        given = dict(self.shares)
        unknown = sorted(set(given) - set(DEFAULT_SHARES))
        if unknown:
            raise DPInputError(f"unknown snapshot tables in shares: {unknown}; they are {list(DEFAULT_SHARES)}")
        shares = {k: check_positive(given.get(k, w), f"share of the {k} table") for k, w in DEFAULT_SHARES.items()}
        object.__setattr__(self, "shares", tuple(sorted(shares.items())))  # pairs: the schema stays hashable
        object.__setattr__(self, "smoothing", check_positive(self.smoothing, "smoothing", allow_zero=True))
        object.__setattr__(self, "bootstrap_fits", check_int(self.bootstrap_fits, "bootstrap fits", minimum=0))
        object.__setattr__(self, "fit_seed", check_int(self.fit_seed, "fit seed", minimum=0))

    @property
    def labels(self) -> tuple[str, ...]:
        """The cells' labels in order (:data:`ALL_CELLS` alone without declared cells)."""
        return self.cells or (ALL_CELLS,)

    @property
    def edges(self) -> np.ndarray:
        return snapshot_edges(self.lower, self.upper, self.n_log_bins, self.floor)

    @property
    def has_floor_bin(self) -> bool:
        """Whether the first bin is ``[lower, floor)`` (the zeros and near-zero incomes), outside the log grid."""
        return self.floor_bin_edge > self.lower

    @property
    def floor_bin_edge(self) -> float:
        return float(self.edges[1]) if self.edges.size > self.n_log_bins + 1 else self.lower

    @property
    def sizes_public(self) -> bool:
        return self.cell_sizes is not None

    @property
    def tables(self) -> tuple[str, ...]:
        """The tables this snapshot releases, in order."""
        return ("histogram",) + (() if self.sizes_public else ("sizes",)) + (("risk",) if self.risk is not None else ())

    @property
    def epsilons(self) -> dict[str, float]:
        """The public split of ``planning_epsilon`` over :attr:`tables` (sequential composition: they add up)."""
        shares = dict(self.shares)
        weights = {t: shares[t] for t in self.tables}
        total = sum(weights.values())
        return {t: self.planning_epsilon * w / total for t, w in weights.items()}

    @property
    def neighbouring(self) -> str:
        if self.sizes_public:
            return (
                "replace one person within their cell; the declared cells, their sizes, the income bounds and the "
                "bins public"
            )
        return (
            "replace one record (its cell, exposure group and outcome may change too); n, the declared cells, the "
            "income bounds and the bins public"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "lower": self.lower,
            "upper": self.upper,
            "n_log_bins": self.n_log_bins,
            "floor": self.floor,
            "cells": list(self.cells),
            "cell_sizes": None if self.cell_sizes is None else list(self.cell_sizes),
            "risk": None if self.risk is None else self.risk.to_dict(),
            "planning_epsilon": self.planning_epsilon,
            "shares": dict(self.shares),
            "smoothing": self.smoothing,
            "bootstrap_fits": self.bootstrap_fits,
            "fit_seed": self.fit_seed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SnapshotSchema:
        if not isinstance(data, Mapping):
            raise DPInputError("a snapshot schema must be a JSON object")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise DPInputError(f"unknown snapshot schema fields: {unknown}")
        if "upper" not in data:
            raise DPInputError("a snapshot schema needs 'upper' (the public income upper bound)")
        kwargs = dict(data)
        kwargs["cells"] = tuple(kwargs.get("cells") or ())
        if kwargs.get("cell_sizes") is not None:
            kwargs["cell_sizes"] = tuple(kwargs["cell_sizes"])
        risk = kwargs.get("risk")
        if risk is not None:
            if not isinstance(risk, Mapping) or not {"exposed", "reference"} <= set(risk):
                raise DPInputError("a snapshot's risk needs 'exposed' and 'reference'")
            kwargs["risk"] = RiskSchema(risk["exposed"], risk["reference"], risk.get("outcome_below"))
        return cls(**kwargs)


# ---------------------------------------------------------------------------------------------
# The confidential aggregates and the mechanism
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfidentialTables:
    """The exact aggregates a snapshot adds noise to (confidential: never stored, never shown): the cells x bins
    histogram, the cell sizes and the cells x (exposed, reference) x (case, non-case) table (None without a
    relative risk)."""

    confidential_histogram: np.ndarray
    confidential_sizes: np.ndarray
    confidential_risk: np.ndarray | None


@dataclass(frozen=True, kw_only=True)
class SnapshotDraw(DrawProvenance):
    """One draw of :class:`SnapshotMechanism`: the noisy tables (DP outputs) and what drew them (public text: per
    table its measurement, privacy map and the epsilon of that map; joined, and summed, in the provenance)."""

    noisy_histogram: np.ndarray
    noisy_sizes: np.ndarray | None
    noisy_risk: np.ndarray | None
    measurements: tuple[str, ...]
    privacy_maps: tuple[str, ...]
    map_epsilons: tuple[float, ...]


@register
@dataclass(frozen=True)
class SnapshotMechanism:
    """The snapshot's mechanism: public parameters only (the schema), one mechanism object per table
    (:class:`HistogramMechanism` for the histogram, :class:`CountMechanism` of L1 sensitivity 2 for the sizes and
    the risk table), their costs composed sequentially (:mod:`dpcore.budget`). Its values carry no interval: they
    are read by planning, never published as statistics."""

    schema: SnapshotSchema

    kind = "snapshot"
    interval_kind = None

    @property
    def histogram_mechanism(self) -> HistogramMechanism:
        """Replace-one relation: scale 2/epsilon on every cell x bin count (the whole table has L1 sensitivity 2)."""
        return HistogramMechanism(self.schema.epsilons["histogram"], tuple(self.schema.edges), q=(50.0,))

    @property
    def sizes_mechanism(self) -> CountMechanism | None:
        """None with public sizes; else discrete Laplace of scale 2/epsilon per cell (L1 sensitivity 2)."""
        eps = self.schema.epsilons.get("sizes")
        return None if eps is None else CountMechanism(eps, sensitivity=2)

    @property
    def risk_mechanism(self) -> CountMechanism | None:
        eps = self.schema.epsilons.get("risk")
        return None if eps is None else CountMechanism(eps, sensitivity=2)

    @property
    def epsilon(self) -> float:
        return self.schema.planning_epsilon

    def privacy_cost(self) -> budget.PrivacyCost:
        """Sequential composition of the tables' pure costs: ``planning_epsilon``."""
        parts = [self.histogram_mechanism.privacy_cost()]
        parts += [m.privacy_cost() for m in (self.sizes_mechanism, self.risk_mechanism) if m is not None]
        return budget.compose_sequential(parts)

    def record(self) -> dict[str, Any]:
        """The public description a snapshot's record carries."""
        eps = self.schema.epsilons
        out: dict[str, Any] = {
            "noise": "discrete Laplace of scale 2/epsilon_i on every count of each table (L1 sensitivity 2): "
            + ", ".join(f"{t} epsilon {e:.6g}" for t, e in eps.items()),
            "neighbouring": self.schema.neighbouring,
            "epsilon": self.epsilon,
            "epsilons": self.schema.epsilons,
            "composition": "sequential over the tables (their epsilons add up to planning_epsilon)",
            "histogram": self.histogram_mechanism.record(),
        }
        if self.sizes_mechanism is not None:
            out["sizes"] = self.sizes_mechanism.record()
        if self.risk_mechanism is not None:
            out["risk"] = self.risk_mechanism.record()
        return out

    def draw(self, tables: ConfidentialTables, rng: Any = None) -> SnapshotDraw:
        """The noisy tables: ``rng`` None (or :class:`dpcore.rng.SecureRandom`) draws the real noise (OpenDP's
        discrete Laplace, through the tables' mechanisms); a numpy Generator or seed a simulation of the same law
        (NOT a release). The caller charges :meth:`privacy_cost` before a real draw (:func:`take_snapshot`)."""
        if not isinstance(tables, ConfidentialTables):
            raise TypeError("tables must be the ConfidentialTables of this schema (confidential_tables)")
        n_cells, n_bins = len(self.schema.labels), self.schema.edges.size - 1
        if tables.confidential_histogram.shape != (n_cells, n_bins):
            raise DPInputError(f"the histogram must be a ({n_cells} x {n_bins}) table for this schema")
        # one Generator for the three tables of a simulation (a seed given to each would repeat the noise)
        gen = as_generator(rng) if secure_noise.is_simulation(rng) else rng
        hist = self.histogram_mechanism.draw(tables.confidential_histogram, rng=gen)
        measurements, maps = [hist.measurement], [hist.privacy_map]
        certified = [self.histogram_mechanism.certified_epsilon(hist)]
        sizes = None
        if self.sizes_mechanism is not None:
            d = self.sizes_mechanism.draw(tables.confidential_sizes, rng=gen)
            sizes = d.counts
            measurements.append(d.measurement)
            maps.append(d.privacy_map)
            certified.append(self.sizes_mechanism.certified_epsilon(d))
        risk = None
        if self.risk_mechanism is not None:
            if tables.confidential_risk is None or tables.confidential_risk.shape != (n_cells, 2, 2):
                raise DPInputError(f"the relative risk table must be ({n_cells} x 2 x 2) for this schema")
            d = self.risk_mechanism.draw(tables.confidential_risk.ravel(), rng=gen)
            risk = d.counts.reshape(n_cells, 2, 2)
            measurements.append(d.measurement)
            maps.append(d.privacy_map)
            certified.append(self.risk_mechanism.certified_epsilon(d))
        return SnapshotDraw(
            noisy_histogram=np.asarray(hist.noisy_counts, dtype=np.int64),
            noisy_sizes=sizes,
            noisy_risk=risk,
            measurements=tuple(measurements),
            privacy_maps=tuple(maps),
            map_epsilons=tuple(certified),
            measurement="; ".join(measurements),
            privacy_map="; ".join(maps),
            map_epsilon=float(sum(certified)),
            simulated=bool(hist.simulated),
        )

    def certified_epsilon(self, draw: SnapshotDraw) -> float:
        """The sum of the tables' privacy maps (OpenDP's discrete Laplace at L1 distance 2): sequential
        composition, as charged."""
        return float(sum(draw.map_epsilons))
