"""The planned statistic: its truth on planning data, its accuracy, its simulation and its draw through the
registered mechanisms a release of it declares (:class:`PlannedStatistic`), and what one draw gives
(:class:`StatisticRelease`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import budget as _budget
from ..kinds import PLANNER_KINDS
from ..validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_epsilon,
    check_positive,
    check_probability,
)
from .closed_forms import EPS_MAX, EPS_MIN

__all__ = [
    "NEIGHBOURING",
    "StatisticRelease",
    "PlannedStatistic",
    "published_form",
    "from_mechanism_draw",
    "cell_histogram",
    "check_values",
    "gini_exact_profile",
]


#: neighbouring relation per statistic kind; the release record's ``neighbouring`` field. Group / cell
#: labels and sizes are public in every grouped relation, so the number of groups is public too: a
#: refusal that depends on it (a relative risk needs two groups) is decided from public inputs.
NEIGHBOURING = {kind.name: kind.neighbouring for kind in PLANNER_KINDS.values()}


# ---------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StatisticRelease:
    """One real (or, with ``rng`` given, simulated) release of a planned statistic.

    ``values``: the released numbers (the only DP output). ``measurement``: the OpenDP
    measurement(s) or the certified dpcore sampler that drew the noise; ``privacy_map``: its
    privacy-map statement; ``epsilon``/``delta``: what the maps certify for this statistic under
    ``neighbouring`` (the relation the charge is stated in). Data-independent by construction:
    every field except ``values`` is a function of public inputs only.
    """

    values: np.ndarray
    measurement: str
    privacy_map: str
    epsilon: float
    delta: float
    neighbouring: str
    simulated: bool = False
    notes: tuple[str, ...] = ()
    #: the published form (``dpcore.published.published_table``): the values with honest digits, their interval
    #: ends at ``level`` and the extra DP outputs the interval is computed from (a noisy histogram, a bound)
    published: dict | None = None


def published_form(
    kind: str, table: Any, record: dict, values: Sequence[str], level: float, inputs: Sequence[str] = ()
) -> dict:
    """The published form of a planned release: :func:`dpcore.published.published_table` on the same columns the
    command line publishes, so the app's release and the command line's carry the same intervals."""
    import pandas as pd

    from ..published import published_table

    out = published_table(kind, pd.DataFrame(table), record, level)

    def cell_major(suffix: str) -> np.ndarray:  # as the released vector: cell 1 p25, p50, p75, cell 2 ...
        return np.stack([out[f"{v}{suffix}"].to_numpy(float) for v in values], axis=1).ravel()

    return {
        "values": cell_major(""),
        "lower": cell_major("_lower"),
        "upper": cell_major("_upper"),
        "level": float(level),
        "inputs": {c: out[c].tolist() for c in inputs},
    }


def from_mechanism_draw(
    draw, values, epsilon: float, neighbouring: str, notes=(), published: dict | None = None
) -> StatisticRelease:
    """The StatisticRelease of one mechanism draw (any of dpcore.mechanisms' ``*Draw``): pure DP, delta 0."""
    return StatisticRelease(
        np.asarray(values, dtype=float),
        draw.measurement,
        draw.privacy_map,
        float(epsilon),
        0.0,
        neighbouring,
        bool(draw.simulated),
        tuple(notes),
        published,
    )


class PlannedStatistic:
    """One statistic of a planned release, on planning data.

    Subclasses define ``truth`` (array of the true values, one per released number),
    ``prob_within(epsilon, rel_error) -> (p, se)`` (se = 0 for closed forms), ``simulate(epsilon,
    n, rng) -> (n, k) array of plausible released values``, ``mechanism_at(epsilon)`` (its registered mechanism
    of :mod:`dpcore.mechanisms`) and ``_drawn(epsilon, drawer, level)`` (one draw through that mechanism: real
    noise only through :func:`dpcore.release.make_release`, which charges a ledger first; :meth:`simulate_draw`
    for one seeded numpy draw), ``labels`` and ``mechanism``.
    ``partition_parts`` is the number of disjoint parts the statistic is computed on (parallel composition
    inside it).
    """

    name: str = "statistic"
    kind: str = "generic"
    mechanism: str = ""
    exact: bool = True
    eps_min: float = EPS_MIN
    eps_max: float = EPS_MAX
    parallel_note: str = ""
    #: simulated releases behind ``prob_within`` (the Monte Carlo statistics, ``exact`` False, set their own)
    n_sims: int = 0

    @property
    def labels(self) -> tuple[str, ...]:
        """One label per released number (none by default)."""
        return ()

    @property
    def truth(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def prob_within(self, epsilon: float, rel_error: float) -> tuple[float, float]:  # pragma: no cover
        raise NotImplementedError

    def simulate(self, epsilon: float, n: int, rng=None) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def mechanisms_at(self, epsilon: float, level: float = 0.95) -> tuple[Any, ...]:
        """The registered mechanisms (:mod:`dpcore.mechanisms`) a release of this statistic at ``epsilon`` draws
        with: what :func:`dpcore.release.make_release` declares to :func:`dpcore.pipeline.release`, whose charge
        covers them. Public parameters only. ``level``: of the published intervals."""
        return (self.mechanism_at(epsilon),)

    def mechanism_at(self, epsilon: float) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def check_real_release(self, epsilon: float) -> None:
        """Refuse, from public settings only and before any charge, a real release these settings cannot make
        (every statistic here can, except a Gini with a noise that has no floating-point-safe sampler)."""

    def _draw(self, epsilon: float, rng=None, level: float = 0.95, *, drawer: Any = None) -> StatisticRelease:
        """One draw of the statistic, through ``drawer`` (the :class:`dpcore.mechanisms.Drawer` of a release, which
        declared :meth:`mechanisms_at` and was charged for them: :func:`dpcore.release.make_release`) or, without
        one, through a drawer of this statistic's own mechanisms with ``rng``: None (or
        :class:`dpcore.rng.SecureRandom`) the real noise of :mod:`dpcore.noise.secure`, a numpy Generator or seed a
        simulation of the same law. Private: a real release is made by :func:`dpcore.release.make_release`, after the
        ledger is charged. ``level``: of the published intervals."""
        from ..mechanisms import Drawer

        eps = check_epsilon(epsilon)
        if drawer is None:
            drawer = Drawer(self.mechanisms_at(eps, level), rng)
        return self._drawn(eps, drawer, level)

    def _drawn(self, epsilon: float, drawer: Any, level: float) -> StatisticRelease:  # pragma: no cover - abstract
        """The draw of :meth:`_draw` through ``drawer``."""
        raise NotImplementedError

    def simulate_draw(self, epsilon: float, rng=None) -> np.ndarray:
        """One SIMULATED draw of the released numbers, for exploration: numpy noise of the mechanism's law,
        reproducible from ``rng`` (a seed or a numpy Generator; None: a fresh unseeded Generator).

        This is NOT a release: nothing is charged, and with a known seed the noise can be subtracted, so the
        output reveals the planning data exactly. Use it on public or synthetic data only; a real release is
        :func:`dpcore.release.make_release` with a ledger account (charged first, secure sampler)."""
        from ..rng import SecureRandom

        if isinstance(rng, SecureRandom):
            raise DPInputError(
                "simulate_draw draws numpy noise for exploration and never the secure sampler: a real "
                "release is dpcore.release.make_release(items, ledger_account), which charges first"
            )
        return np.asarray(self._draw(epsilon, rng=as_generator(rng)).values, dtype=float)

    @property
    def neighbouring(self) -> str:
        """The neighbouring relation the release's privacy cost is stated in (public)."""
        return NEIGHBOURING.get(self.kind, "replace one record; n public")

    def params(self) -> dict[str, Any]:
        return {}

    def privacy_cost(self, epsilon: float) -> _budget.PrivacyCost:
        return _budget.pure(epsilon)

    def error_quantile(self, epsilon: float, confidence: float) -> tuple[float, float]:
        """Relative error r such that P(all numbers within r) = confidence, and its MC standard error
        in probability units (0 for closed forms). Found by bisection on r (prob_within is monotone in r)."""
        eps = check_epsilon(epsilon)
        conf = check_probability(confidence, "confidence")
        lo, hi = 0.0, 1e-3
        while self.prob_within(eps, hi)[0] < conf:
            lo, hi = hi, hi * 4
            if hi > 1e9:
                return math.inf, 0.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if self.prob_within(eps, mid)[0] >= conf:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-6 * hi:
                break
        return hi, self.prob_within(eps, hi)[1]

    def _rel_tolerance(self, rel_error: float) -> np.ndarray:
        truth = self.truth
        if not np.all(np.isfinite(truth)):
            raise DPInputError(
                f"{self.name}: a true value is undefined on this planning data (e.g. an empty cell, "
                "all-zero incomes or a zero denominator), so a relative error target is undefined; "
                "use planning data where the statistic is defined"
            )
        t = np.abs(truth) * check_positive(rel_error, "relative error")
        if np.any(t == 0):
            raise DPInputError(
                f"{self.name}: a true value is 0, so a relative error target is undefined; "
                "use planning data where the statistic is not 0"
            )
        return t


def cell_histogram(values, edges: np.ndarray) -> np.ndarray:
    """Counts of b_j <= e < b_{j+1} with out-of-range values in the end bins (as
    dpcore.percentiles.histogram_counts), for a cell of any size including 0."""
    x = as_finite_array(values, "earnings", min_size=0) if np.size(values) else np.zeros(0)
    m = edges.size - 1
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, m - 1)
    return np.bincount(idx, minlength=m).astype(np.int64)


def check_values(values, name="income values", min_size=2) -> np.ndarray:
    return as_finite_array(values, name, min_size=min_size)


def gini_exact_profile(xs: np.ndarray, lower: float, upper: float):
    """The :class:`dpcore.gini.ExactSensitivityProfile` of these sorted, clipped data and bounds, shared by
    every :class:`GiniStatistic` on them and by the Gini view (:func:`dpcore.gini.shared_exact_profile`)."""
    from .. import gini as _g

    return _g.shared_exact_profile(xs, lower, upper)
