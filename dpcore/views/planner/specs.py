"""The planner's statistics (:class:`StatisticTarget`: a kind, its public settings and its accuracy target; a
release plan's statistic, with its epsilon, is :class:`dpcore.plan.StatisticSpec`) and the privacy cost of each
in its mechanism's own currency (a plan's, composed sequentially, is :func:`dpcore.budget.compose_plan`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import budget, planner
from ...kinds import grouped_kinds
from ...validation import DPInputError, check_epsilon, check_int, check_positive, check_probability

#: Dots per statistic in a quantile dot plot (each dot = 1/20 of the plausible releases).
N_DOTS = 20
#: Simulated releases behind each dot plot.
N_PLAUSIBLE = 2000
#: Statistics computed on groups or cells (they need a group label per record).
GROUPED_KINDS = grouped_kinds()
#: Statistics whose accuracy target may be absolute (one number in [0, 1]: the Gini, in Gini points).
ABSOLUTE_TARGET_KINDS = ("gini",)


def _plain(value: Any) -> Any:
    """A setting as plain data (tuples -> lists, numpy scalars -> Python), for to_dict and scripts."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class StatisticTarget:
    """One statistic the planner solves for: ``kind`` (a key of :data:`dpcore.planner.STAT_KINDS`), its public
    settings ``params`` (keyword arguments of :func:`dpcore.planner.make_statistic`, as sorted
    pairs so the spec is hashable) and its accuracy target, over the noise only, with probability
    ``confidence``: a relative error at most ``rel_error`` (a share of the true value), or, for the
    Gini only, an absolute error at most ``abs_error`` Gini points (0.01 = one point), the unit the
    Gini page states its answers in.

    An absolute Gini target is exactly a relative one: ``|G~ - G| <= a`` is ``|G~ - G| <= (a / G) G``,
    so :meth:`target_for` hands :func:`dpcore.planner.solve_epsilon` the relative error ``a / G`` of
    the planning data's Gini ``G`` (planning numbers are computed on the planning data anyway)."""

    kind: str
    params: tuple[tuple[str, Any], ...]
    rel_error: float | None
    confidence: float
    abs_error: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in planner.STAT_KINDS:
            raise DPInputError(f"unknown statistic {self.kind!r}; choose one of {', '.join(planner.STAT_KINDS)}")
        if self.abs_error is not None:
            if self.kind not in ABSOLUTE_TARGET_KINDS:
                raise DPInputError(
                    f"an absolute error target (abs_error) is for the Gini only, got it for {self.kind!r}; "
                    "give rel_error (a share of the true value) instead"
                )
            if self.rel_error is not None:
                raise DPInputError("give either rel_error or abs_error for a statistic, not both")
            check_positive(self.abs_error, "Gini error target (Gini points)")
            if self.abs_error >= 1.0:
                raise DPInputError(
                    f"a Gini error target of ±{self.abs_error:g} is at least the whole range [0, 1] "
                    "of the Gini: give Gini points, e.g. 0.01 for one point"
                )
            check_probability(self.confidence, "confidence level")
        elif self.rel_error is None:
            raise DPInputError(f"the target of {self.kind!r} needs rel_error (a share of the true value)")
        else:
            planner.AccuracyTarget(self.rel_error, self.confidence)  # validates both

    @property
    def target(self) -> planner.AccuracyTarget:
        """The relative target (a spec with a relative error only; see :meth:`target_for`)."""
        if self.rel_error is None:
            raise DPInputError("an absolute Gini target depends on the data's Gini: use target_for(statistic)")
        return planner.AccuracyTarget(self.rel_error, self.confidence)

    def target_for(self, stat: planner.PlannedStatistic) -> planner.AccuracyTarget:
        """The target as :func:`dpcore.planner.solve_epsilon` takes it, for the planned statistic ``stat``
        (an absolute Gini target divided by the statistic's Gini, see the class docstring)."""
        if self.abs_error is None:
            return self.target
        truth = abs(float(np.asarray(stat.truth, dtype=float).ravel()[0]))
        if not truth > 0:
            raise DPInputError(
                "the Gini of these data is 0 (every income equal after clipping): there is no inequality to measure"
            )
        return planner.AccuracyTarget(self.abs_error / truth, self.confidence)

    def describe_target(self) -> str:
        """The target in words, in its own unit."""
        if self.abs_error is None:
            return self.target.describe()
        points = 100 * self.abs_error
        return (
            f"within ±{self.abs_error:.4g} of the true Gini ({points:.4g} Gini point{'' if points == 1 else 's'}) "
            f"with {100 * self.confidence:g}% probability"
        )

    @property
    def label(self) -> str:
        return planner.STAT_KINDS[self.kind]

    def to_dict(self) -> dict[str, Any]:
        out = {
            "kind": self.kind,
            "params": {k: _plain(v) for k, v in self.params},
            "rel_error": self.rel_error,
            "confidence": self.confidence,
        }
        if self.abs_error is not None:
            out = {
                "kind": self.kind,
                "params": out["params"],
                "abs_error": self.abs_error,
                "confidence": self.confidence,
            }
        return out


def statistic_specs(statistics: Sequence[Mapping[str, Any] | StatisticTarget]) -> tuple[StatisticTarget, ...]:
    """Specs from plain dicts ``{"kind", "params", "rel_error", "confidence"}`` (the script's literals)."""
    if isinstance(statistics, (str, bytes, Mapping)) or not hasattr(statistics, "__iter__"):
        raise TypeError("statistics must be a list of {'kind', 'params', 'rel_error', 'confidence'} dicts")
    out = []
    for item in statistics:
        if isinstance(item, StatisticTarget):
            out.append(item)
            continue
        if not isinstance(item, Mapping) or "kind" not in item:
            raise DPInputError(f"each statistic needs a 'kind', got {item!r}")
        params = item.get("params") or {}
        if not isinstance(params, Mapping):
            raise DPInputError(f"the params of {item['kind']!r} must be a dict")
        frozen = tuple(sorted((str(k), tuple(v) if isinstance(v, list) else v) for k, v in params.items()))
        if item.get("abs_error") is not None:
            out.append(
                StatisticTarget(
                    str(item["kind"]),
                    frozen,
                    None,
                    float(item.get("confidence", 0.9)),
                    abs_error=float(item["abs_error"]),
                )
            )
        else:
            out.append(
                StatisticTarget(
                    str(item["kind"]), frozen, float(item.get("rel_error", 0.1)), float(item.get("confidence", 0.9))
                )
            )
    if not out:
        raise DPInputError("the plan has no statistics: choose at least one")
    kinds = [s.kind for s in out]
    if len(set(kinds)) != len(kinds):
        raise DPInputError(f"each statistic can be planned once, got {kinds}")
    return tuple(out)


def build_statistics(
    values: Any, groups: Any, specs: Sequence[StatisticTarget]
) -> tuple[planner.PlannedStatistic, ...]:
    """The planned statistics of ``specs`` on the planning data (``groups``: one label per record)."""
    return tuple(planner.make_statistic(s.kind, values, groups, **dict(s.params)) for s in specs)


def quantile_dots(sim_rel_errors: np.ndarray, n_dots: int = N_DOTS) -> np.ndarray:
    """Quantiles (i + 1/2)/n_dots of each column: a quantile dot plot, each dot = 1/n_dots of the releases.

    ``sim_rel_errors``: (n_sims, k) relative errors of simulated releases; returns (k, n_dots)."""
    n_dots = check_int(n_dots, "n_dots", minimum=1, maximum=1000)
    levels = (np.arange(n_dots) + 0.5) / n_dots
    return np.quantile(np.asarray(sim_rel_errors, dtype=float), levels, axis=0).T


def check_pair(statistics: Sequence[Any], specs: Sequence[StatisticTarget]) -> None:
    if len(statistics) != len(specs) or not specs:
        raise DPInputError("one spec per statistic is needed (and at least one statistic)")


# ---------------------------------------------------------------------------------------------
# Privacy cost of a plan (pure, approximate, zCDP) composed sequentially
# ---------------------------------------------------------------------------------------------


def statistic_cost(stat: planner.PlannedStatistic, epsilon: float) -> budget.PrivacyCost:
    """What one statistic planned at ``epsilon`` costs, in its mechanism's own currency.

    A Gini with a light-tailed smooth noise (``noise`` "laplace" or "laplace_lognormal",
    ``dpcore.planner.make_statistic("gini", ..., noise=...)``) costs its calibration's statement:
    (epsilon, delta) for "laplace" (NRS), rho-zCDP for "laplace_lognormal" (Bun & Steinke 2019;
    rho is the largest whose conversion gives epsilon at the statistic's delta). Every other statistic
    of the planner (including the generalized-Cauchy Gini) is pure epsilon-DP at its planned epsilon."""
    eps = check_epsilon(epsilon)
    if getattr(stat, "noise", "cauchy") != "cauchy":
        return stat.privacy_cost(eps)
    return budget.pure(eps)


def describe_cost(cost: budget.PrivacyCost, delta: float | None = None) -> str:
    """One statistic's cost as text; a zCDP cost also in (epsilon, delta) at ``delta``."""
    if cost.kind == "pure":
        return f"ε = {cost.epsilon:.4g} (pure)"
    if cost.kind == "approx":
        return f"(ε, δ) = ({cost.epsilon:.4g}, {cost.delta:.3g})"
    if delta is None:
        return f"ρ = {cost.rho:.4g} (zCDP)"
    eps, d = cost.as_approx(delta)
    return f"ρ = {cost.rho:.4g} (zCDP), i.e. (ε, δ) = ({eps:.4g}, {d:.3g})"


def plan_delta(statistics: Sequence[planner.PlannedStatistic]) -> float | None:
    """The delta a light-noise statistic of the plan was calibrated at (its (epsilon, delta) target), if any:
    where a zCDP cost is stated as (epsilon, delta)."""
    deltas = [float(s.delta) for s in statistics if getattr(s, "noise", "cauchy") != "cauchy" and hasattr(s, "delta")]
    return max(deltas) if deltas else None
