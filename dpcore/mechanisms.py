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

import functools
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from . import budget
from .gini import GiniDraw, GiniMechanism
from .noise import secure as secure_noise
from .percentiles import ExponentialQuantileDraw, ExponentialQuantileMechanism, HistogramDraw, HistogramMechanism
from .ratio import RelativeRiskDraw, RelativeRiskMechanism
from .stratified import MeanDraw, MeanMechanism
from .validation import DPInputError, check_epsilon, check_int

__all__ = [
    "GiniMechanism",
    "GiniDraw",
    "HistogramMechanism",
    "HistogramDraw",
    "ExponentialQuantileMechanism",
    "ExponentialQuantileDraw",
    "MeanMechanism",
    "MeanDraw",
    "RelativeRiskMechanism",
    "RelativeRiskDraw",
    "CountMechanism",
    "CountDraw",
    "GiniIntervalMechanism",
    "GiniIntervalDraw",
    "GINI_PLANNING_N",
]


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
        return CountDraw(values, d.measurement, d.privacy_map, d.epsilon, d.simulated)


#: the cell size the Gini's epsilon split and beta are optimised for when the release does not say (a typical
#: PSEO-size cell). The choice only moves the interval's width, never its coverage: every interval is valid for
#: any n, and a smaller cell than planned gets a wider interval.
GINI_PLANNING_N = 500


@dataclass(frozen=True)
class GiniIntervalDraw:
    """One cell of :class:`GiniIntervalMechanism`: the published value, the noisy value before the [0, 1] clamp,
    the published DP upper bound on S_beta(X) (NaN for a cell with n <= 1, which releases 0 exactly), and what drew
    them."""

    value: float
    noisy_value: float
    smooth_sensitivity_upper: float
    measurement: str
    privacy_map: str
    bound_measurement: str
    simulated: bool


@dataclass(frozen=True)
class GiniIntervalMechanism:
    """A Gini released with an interval anyone can recompute: the value by :class:`dpcore.gini.GiniMechanism` at
    epsilon_value, plus a DP upper bound on S_beta(X) at epsilon_bound (:func:`dpcore.intervals.gini_bound_release`:
    ln S_beta changes by at most beta between neighbours), with epsilon_value + epsilon_bound = epsilon and beta
    chosen by :func:`dpcore.intervals.optimise_gini_split` from public inputs only (epsilon, delta, the noise, the
    bounds, ``level`` and a planning cell size). The published interval is
    :func:`dpcore.intervals.gini_interval_from_release` of the value and the bound (``dpcore.published``).

    Cost (basic composition; per cell, then group privacy over ``rows_per_person`` m, the cells being disjoint):
    the value's cost at m epsilon_value plus the bound's pure m epsilon_bound = epsilon in total, with the value's
    delta ("laplace") or none ("cauchy")."""

    epsilon: float
    lower: float
    upper: float
    noise: str = "cauchy"
    gamma: float = 2.0
    calibration: str = "tight"
    delta: float | None = None
    rows_per_person: int = 1
    level: float = 0.95
    planning_n: int = GINI_PLANNING_N

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "rows_per_person", check_int(self.rows_per_person, "rows per person", minimum=1))
        object.__setattr__(self, "planning_n", check_int(self.planning_n, "planning cell size", minimum=2))
        GiniMechanism(
            self.epsilon,
            self.lower,
            self.upper,
            noise=self.noise,
            gamma=self.gamma,
            calibration=self.calibration,
            delta=self.delta,
            rows_per_person=self.rows_per_person,
        )

    @functools.cached_property
    def plan(self):
        """The :class:`dpcore.intervals.GiniIntervalPlan` of one cell (public: the split, beta, eta).

        The optimiser takes a few tenths of a second (the Gini page's grid is shipped with it); its choice (split,
        beta, eta) and the model's widths depend on public inputs only, so they are kept in a file cache
        (:func:`_split_cache_dir`) and every process with the same inputs reuses them. The plan is rebuilt from the
        cached choice with :func:`dpcore.intervals.gini_plan` (which certifies the value's calibration again), after
        checking that the split adds up to the cell's epsilon: a damaged or edited cache file can change the
        interval's width, never the privacy cost."""
        from . import intervals

        cell = GiniMechanism(
            self.epsilon,
            self.lower,
            self.upper,
            noise=self.noise,
            gamma=self.gamma,
            calibration=self.calibration,
            delta=self.delta,
            rows_per_person=self.rows_per_person,
        )
        delta = cell.delta_cell or None
        key = {
            "v": 1,
            "epsilon": cell.epsilon_cell,
            "delta": delta,
            "noise": cell.noise,
            "n": self.planning_n,
            "lower": cell.lower,
            "upper": cell.upper,
            "level": self.level,
            "gamma": cell.gamma,
            "calibration": cell.calibration,
        }
        choice = _read_split(key, cell.epsilon_cell)
        if choice is not None:
            try:
                plan = intervals.gini_plan(
                    choice["epsilon_value"],
                    choice["epsilon_bound"],
                    choice["beta"],
                    noise=cell.noise,
                    n=self.planning_n,
                    lower=cell.lower,
                    upper=cell.upper,
                    delta=delta,
                    level=self.level,
                    eta=choice["eta"],
                    method=choice["method"],
                    gamma=cell.gamma,
                    calibration_mode=cell.calibration,
                )
                return replace(plan, **_cached_widths(choice))
            except DPInputError:
                pass  # an unusable cached choice: optimise again
        plan = intervals.optimise_gini_split(
            cell.epsilon_cell,
            delta,
            cell.noise,
            self.planning_n,
            cell.lower,
            cell.upper,
            self.level,
            gamma=cell.gamma,
            calibration_mode=cell.calibration,
        )
        _write_split(
            key,
            {
                k: getattr(plan, k)
                for k in (
                    "epsilon_value",
                    "epsilon_bound",
                    "beta",
                    "eta",
                    "method",
                    "model_width",
                    "model_oracle_width",
                )
            },
        )
        return plan

    @functools.cached_property
    def value_mechanism(self) -> GiniMechanism:
        """The value's mechanism: epsilon_value per cell, the plan's beta."""
        return GiniMechanism(
            self.rows_per_person * self.plan.epsilon_value,
            self.lower,
            self.upper,
            noise=self.noise,
            gamma=self.gamma,
            calibration=self.calibration,
            delta=self.delta,
            rows_per_person=self.rows_per_person,
            beta=self.plan.beta,
        )

    @property
    def smoothness(self) -> float:
        """beta of S_beta: the engines compute S_beta(X) at this beta."""
        return self.value_mechanism.smoothness

    def privacy_cost(self) -> budget.PrivacyCost:
        value = self.value_mechanism.privacy_cost()
        bound_eps = self.rows_per_person * self.plan.epsilon_bound
        if value.kind == "pure":
            return budget.pure(value.epsilon + bound_eps)
        if value.kind == "approx":
            return budget.approx(value.epsilon + bound_eps, value.delta)
        raise DPInputError("a Gini with a published interval is offered for the 'cauchy' and 'laplace' noises")

    def interval_constants(self) -> dict[str, Any]:
        """What the published interval is computed from besides the table: the plan, with the alpha and the scale
        window of the value's actual draw (``dpcore.published``)."""
        mech = self.value_mechanism
        out = dict(self.plan.to_dict())
        out.update(
            release_alpha=mech.release_alpha,
            min_scale=gini_min_scale(mech),
            max_scale=mech.max_scale if mech.noise == "cauchy" else float("inf"),
        )
        return out

    def record(self) -> dict[str, Any]:
        rec = dict(self.value_mechanism.record())
        rec.update(
            interval_plan=self.interval_constants(),
            interval_level=self.level,
            epsilon_value=self.rows_per_person * self.plan.epsilon_value,
            epsilon_bound=self.rows_per_person * self.plan.epsilon_bound,
            bound=(
                "smooth_sensitivity_bound = exp(ln S_beta(X) + Laplace(beta/epsilon_bound per cell) + "
                "margin): a DP upper bound on S_beta(X) that fails with probability eta"
            ),
        )
        return rec

    def draw(
        self, confidential_gini: float, confidential_smooth_sensitivity: float, rng: Any = None
    ) -> GiniIntervalDraw:
        from . import intervals

        s = float(confidential_smooth_sensitivity)
        d = self.value_mechanism.draw(confidential_gini, s, rng=rng)
        if s <= 0.0:
            return GiniIntervalDraw(
                d.value, d.noisy_value, float("nan"), d.measurement, d.privacy_map, "none: n <= 1", d.simulated
            )
        plan = self.plan
        bound = intervals.gini_bound_release(
            s, beta=self.smoothness, epsilon_bound=plan.epsilon_bound, eta=plan.eta, rng=rng
        )
        return GiniIntervalDraw(
            d.value, d.noisy_value, bound.s_upper, d.measurement, d.privacy_map, bound.measurement, d.simulated
        )


def gini_min_scale(mechanism: GiniMechanism) -> float:
    """The floor a draw clamps the Gini's noise scale to (the Cauchy's; none for the other noises)."""
    from .gini import GINI_MIN_SCALE

    return GINI_MIN_SCALE if mechanism.noise == "cauchy" else 0.0


def _split_cache_dir():
    """Where the Gini split choices are kept: $DPCORE_CACHE_DIR, else $XDG_CACHE_HOME/dpcore, else ~/.cache/dpcore."""
    import os
    from pathlib import Path

    base = os.environ.get("DPCORE_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dpcore"


def _split_file(key: dict):
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()[:32]
    return _split_cache_dir() / f"gini_split_{digest}.json"


def _read_split(key: dict, epsilon_cell: float) -> dict | None:
    """The cached choice for these public inputs, or None (missing, unreadable, or not adding up to epsilon)."""
    import json
    import math

    try:
        saved = json.loads(_split_file(key).read_text(encoding="utf-8"))
        choice = saved["choice"] if saved.get("key") == key else None
        if choice is None:
            return None
        ev, eb, beta, eta = (float(choice[k]) for k in ("epsilon_value", "epsilon_bound", "beta", "eta"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ok = (
        ev > 0
        and eb > 0
        and beta > 0
        and 0 < eta < 1
        and choice.get("method") in ("pivot", "union")
        and math.isclose(ev + eb, epsilon_cell, rel_tol=1e-12, abs_tol=0.0)
    )
    return choice if ok else None


def _cached_widths(choice: dict) -> dict:
    """The planning model's widths kept with a cached choice (public numbers; without them the Gini view recomputes
    them from the planning S_beta at a small beta, seconds for n = 10,000), when they are positive numbers."""
    import math

    widths = {k: choice.get(k) for k in ("model_width", "model_oracle_width")}
    ok = all(isinstance(v, float) and math.isfinite(v) and v > 0 for v in widths.values())
    return widths if ok else {}


def _write_split(key: dict, choice: dict) -> None:
    """Keep a choice for the next process (best effort: a read-only home only costs the optimisation again)."""
    import json
    import os

    path = _split_file(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "choice": choice}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
