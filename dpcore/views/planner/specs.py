"""The plan's statistics (:class:`StatisticSpec`: a kind, its public settings and its accuracy target) and the
privacy cost of a plan, each statistic in its mechanism's own currency, composed sequentially."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import budget, planner
from ...validation import DPInputError, check_epsilon, check_int, check_positive, check_probability

#: Dots per statistic in a quantile dot plot (each dot = 1/20 of the plausible releases).
N_DOTS = 20
#: Simulated releases behind each dot plot.
N_PLAUSIBLE = 2000
#: Statistics computed on groups or cells (they need a group label per record).
GROUPED_KINDS = ("percentiles", "group_medians", "group_means", "ratio")
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
class StatisticSpec:
    """One statistic of the plan: ``kind`` (a key of :data:`dpcore.planner.STAT_KINDS`), its public
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


def statistic_specs(statistics: Sequence[Mapping[str, Any] | StatisticSpec]) -> tuple[StatisticSpec, ...]:
    """Specs from plain dicts ``{"kind", "params", "rel_error", "confidence"}`` (the script's literals)."""
    if isinstance(statistics, (str, bytes, Mapping)) or not hasattr(statistics, "__iter__"):
        raise TypeError("statistics must be a list of {'kind', 'params', 'rel_error', 'confidence'} dicts")
    out = []
    for item in statistics:
        if isinstance(item, StatisticSpec):
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
                StatisticSpec(
                    str(item["kind"]),
                    frozen,
                    None,
                    float(item.get("confidence", 0.9)),
                    abs_error=float(item["abs_error"]),
                )
            )
        else:
            out.append(
                StatisticSpec(
                    str(item["kind"]), frozen, float(item.get("rel_error", 0.1)), float(item.get("confidence", 0.9))
                )
            )
    if not out:
        raise DPInputError("the plan has no statistics: choose at least one")
    kinds = [s.kind for s in out]
    if len(set(kinds)) != len(kinds):
        raise DPInputError(f"each statistic can be planned once, got {kinds}")
    return tuple(out)


def build_statistics(values: Any, groups: Any, specs: Sequence[StatisticSpec]) -> tuple[planner.PlannedStatistic, ...]:
    """The planned statistics of ``specs`` on the planning data (``groups``: one label per record)."""
    return tuple(planner.make_statistic(s.kind, values, groups, **dict(s.params)) for s in specs)


def quantile_dots(sim_rel_errors: np.ndarray, n_dots: int = N_DOTS) -> np.ndarray:
    """Quantiles (i + 1/2)/n_dots of each column: a quantile dot plot, each dot = 1/n_dots of the releases.

    ``sim_rel_errors``: (n_sims, k) relative errors of simulated releases; returns (k, n_dots)."""
    n_dots = check_int(n_dots, "n_dots", minimum=1, maximum=1000)
    levels = (np.arange(n_dots) + 0.5) / n_dots
    return np.quantile(np.asarray(sim_rel_errors, dtype=float), levels, axis=0).T


def check_pair(statistics: Sequence[Any], specs: Sequence[StatisticSpec]) -> None:
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


@dataclass(frozen=True)
class PlanCost:
    """The privacy cost of a plan: its statistics composed sequentially (:class:`dpcore.budget.Ledger`).

    ``kind``: "pure" (epsilon), "approx" ((epsilon, delta): epsilons and deltas add, Dwork & Roth
    Thm 3.16) or "zcdp" (rho: rhos add, pure epsilon counted as epsilon^2/2, Bun & Steinke 2016
    Lemma 2.3 / Prop. 1.4). ``epsilon``/``delta``: the plan as (epsilon, delta)-DP; when zCDP is in the
    plan it is converted at ``conversion_delta`` (the plan's delta, Canonne-Kamath-Steinke 2020),
    which is included in ``delta``. ``rho``: total rho when the plan has no (epsilon, delta) part.
    ``explicit_conversion``: zCDP and (epsilon, delta) parts were both present, so the zCDP part was
    converted to (epsilon, delta) at ``conversion_delta`` before composing (``compose_sequential``
    refuses to mix them without a delta)."""

    kind: str
    epsilon: float
    delta: float
    rho: float | None
    conversion_delta: float | None
    explicit_conversion: bool
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
            "conversion_delta": self.conversion_delta,
            "explicit_conversion": self.explicit_conversion,
            "text": self.text,
        }


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


def plan_cost(costs: Sequence[tuple[str, budget.PrivacyCost]], *, delta: float | None = None) -> PlanCost:
    """Sequential composition of ``(name, cost)`` pairs (one per statistic, each already composed in
    parallel over its groups or cells) with :class:`dpcore.budget.Ledger`.

    ``delta``: the plan's delta, used to state a zCDP part as (epsilon, delta) (needed only then; the
    views pass the delta the zCDP statistic was calibrated at). Pure + approximate: (sum epsilon, sum delta). Pure + zCDP: rho (pure as epsilon^2/2) and
    its (epsilon, delta) at ``delta`` (the better of two valid accountings, ``Ledger.spent_approx``).
    zCDP + approximate: the zCDP part converted to (epsilon, delta) at ``delta`` explicitly, then
    basic composition (deltas add)."""
    if not costs:
        raise DPInputError("the plan has no statistics")
    ledger = budget.Ledger()
    for name, cost in costs:
        ledger.charge(name, cost)
    kinds = ledger.kinds
    if kinds == {"pure"}:
        spent = ledger.spent_pure()
        assert spent is not None  # every charge is pure
        eps = float(spent)
        return PlanCost("pure", eps, 0.0, None, None, False, f"ε = {eps:.4g} (pure ε-DP)")
    if "zcdp" in kinds and delta is None:
        raise DPInputError("a plan with a zCDP statistic needs the plan's delta to state its (epsilon, delta)")
    conversion = check_probability(delta, "delta") if "zcdp" in kinds else None
    eps, total_delta = ledger.spent_approx(conversion if conversion is not None else 1e-300)
    rho = ledger.spent_rho()
    if "approx" in kinds and "zcdp" in kinds:
        text = (
            f"(ε, δ) = ({eps:.4g}, {total_delta:.3g}): the zCDP part converted to (ε, δ) at δ = "
            f"{conversion:.3g} before adding the (ε, δ) parts"
        )
        return PlanCost("approx", float(eps), float(total_delta), None, conversion, True, text)
    if "zcdp" in kinds:
        assert rho is not None  # zCDP and pure parts only: no (epsilon, delta) entry
        text = f"ρ = {rho:.4g} (zCDP), i.e. (ε, δ) = ({eps:.4g}, {total_delta:.3g})"
        return PlanCost("zcdp", float(eps), float(total_delta), float(rho), conversion, False, text)
    return PlanCost(
        "approx", float(eps), float(total_delta), None, None, False, f"(ε, δ) = ({eps:.4g}, {total_delta:.3g})"
    )


def plan_delta(statistics: Sequence[planner.PlannedStatistic]) -> float | None:
    """The delta a light-noise statistic of the plan was calibrated at (its (epsilon, delta) target), if any:
    where a zCDP cost is stated as (epsilon, delta)."""
    deltas = [float(s.delta) for s in statistics if getattr(s, "noise", "cauchy") != "cauchy" and hasattr(s, "delta")]
    return max(deltas) if deltas else None
