"""The smallest epsilon meeting an accuracy target (closed forms bisected; Monte Carlo with a monotone search),
and the total of a plan (sequential composition)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .. import budget as _budget
from ..validation import (
    DPInputError,
    check_epsilon,
)
from .closed_forms import EPS_MAX, EPS_MIN, EXACT_REL, GRID_POINTS, MC_REL, Z_ONE_SIDED_95, AccuracyTarget
from .statistics import PlannedStatistic

__all__ = ["EpsilonSolution", "bisect_log", "solve_epsilon", "PlanTotal", "plan_total"]


@dataclass(frozen=True)
class EpsilonSolution:
    """The smallest epsilon meeting a target, with how it was found.

    ``epsilon``: the recommended value (for Monte Carlo statistics, the conservative one: the MC
    lower confidence bound of the success probability reaches the target). ``achieved``: success
    probability at ``epsilon`` (exact, or the MC estimate), ``mc_se`` its standard error (0 when
    exact). ``epsilon_interval``: epsilons compatible with the Monte Carlo error (point estimate of
    the crossing and the conservative end); equal ends for closed forms.
    """

    statistic: str
    epsilon: float
    target: AccuracyTarget
    method: str
    achieved: float
    mc_se: float
    epsilon_interval: tuple[float, float]
    parallel_note: str = ""


def bisect_log(ok: Callable[[float], bool], lo: float, hi: float, rel: float = 1e-6) -> float:
    """Smallest eps in [lo, hi] with ok(eps) (ok monotone: False ... True), to relative precision rel."""
    a, b = math.log(lo), math.log(hi)
    while b - a > rel:
        m = 0.5 * (a + b)
        if ok(math.exp(m)):
            b = m
        else:
            a = m
    return math.exp(b)


def solve_epsilon(
    stat: PlannedStatistic, target: AccuracyTarget, *, eps_min: float | None = None, eps_max: float | None = None
) -> EpsilonSolution:
    """Smallest epsilon whose (joint) accuracy meets ``target`` for ``stat`` on its planning data.

    Closed-form statistics: bracketing on a fixed log grid of 33 epsilons, then bisection in log
    epsilon on the exact, monotone success probability (relative precision 1e-5; the end that meets
    the target is returned). Monte Carlo statistics: a monotone search on the same log grid (the success curve made monotone by a running minimum from the right), refined by
    bisection, on the statistic's fixed common random numbers; the recommended epsilon is where the
    one-sided 95% lower confidence bound p - 1.645 SE reaches the target.
    Raises DPInputError when even eps_max does not meet the target (e.g. clipping bias too large).
    """
    if not isinstance(target, AccuracyTarget):
        raise TypeError("target must be an AccuracyTarget")
    if not isinstance(stat, PlannedStatistic):
        raise TypeError("stat must be a planned statistic (dpcore.planner.make_statistic builds one)")
    eps_min = getattr(stat, "eps_min", EPS_MIN) if eps_min is None else check_epsilon(eps_min, "eps_min")
    eps_max = getattr(stat, "eps_max", EPS_MAX) if eps_max is None else check_epsilon(eps_max, "eps_max")
    conf, tol = target.confidence, target.rel_error
    p_max, se_max = stat.prob_within(eps_max, tol)
    if p_max - (Z_ONE_SIDED_95 * se_max if not stat.exact else 0.0) < conf:
        raise DPInputError(
            f"{stat.name}: even epsilon = {eps_max:g} does not reach {target.describe()} "
            f"(success probability {p_max:.3f}); the error left at large epsilon comes from clipping or binning, "
            "not from noise: widen the clip range / bins or relax the target"
        )
    grid = np.exp(np.linspace(math.log(eps_min), math.log(eps_max), GRID_POINTS))
    if stat.exact:
        ok = lambda e: stat.prob_within(e, tol)[0] >= conf
        # bracket on the fixed grid (its evaluations are cached by the statistic across targets), then bisect.
        # ok(grid[-1]) is True (checked above); ok(grid[0]) = ok(eps_min) is asked only when the bracket ends
        # at the bottom (same answer as asking it first: ok is monotone), because eps_min is the costliest
        # point for a smooth-sensitivity statistic (smallest beta).
        lo_i, hi_i = 0, grid.size - 1
        while hi_i - lo_i > 1:
            mid_i = (lo_i + hi_i) // 2
            if ok(float(grid[mid_i])):
                hi_i = mid_i
            else:
                lo_i = mid_i
        if hi_i == 1 and ok(eps_min):
            eps = eps_min
        else:
            eps = bisect_log(ok, float(grid[hi_i - 1]), float(grid[hi_i]), rel=getattr(stat, "solve_rel", EXACT_REL))
        p, _ = stat.prob_within(eps, tol)
        return EpsilonSolution(
            stat.name,
            eps,
            target,
            "closed form, exact (bisection on a monotone formula, relative precision "
            f"{getattr(stat, 'solve_rel', EXACT_REL):.0e})",
            p,
            0.0,
            (eps, eps),
            stat.parallel_note,
        )

    ps = np.array([stat.prob_within(e, tol) for e in grid])  # (p, se)
    p_mono = np.minimum.accumulate(ps[::-1, 0])[::-1]
    se = ps[:, 1]
    lcb_mono = np.minimum.accumulate((ps[:, 0] - Z_ONE_SIDED_95 * se)[::-1])[::-1]

    def crossing(values: np.ndarray, ok: Callable[[float], bool]) -> float:
        idx = int(np.argmax(values >= conf))
        if values[idx] < conf:
            return math.inf
        if idx == 0:
            return float(grid[0])
        return bisect_log(ok, float(grid[idx - 1]), float(grid[idx]), rel=MC_REL)

    def p_ok(e):
        return stat.prob_within(e, tol)[0] >= conf

    def lcb_ok(e):
        p, s = stat.prob_within(e, tol)
        return p - Z_ONE_SIDED_95 * s >= conf

    eps_point = crossing(p_mono, p_ok)
    eps_safe = crossing(lcb_mono, lcb_ok)
    eps_safe = max(eps_safe, eps_point)
    p, s = stat.prob_within(eps_safe, tol)
    return EpsilonSolution(
        stat.name,
        eps_safe,
        target,
        f"Monte Carlo ({stat.n_sims:,} simulated releases, common random numbers) + monotone search",
        p,
        s,
        (eps_point, eps_safe),
        stat.parallel_note,
    )


@dataclass(frozen=True)
class PlanTotal:
    """Total epsilon of a plan: sequential composition over statistics (each already includes its own
    parallel composition over disjoint parts)."""

    epsilon: float
    per_statistic: tuple[tuple[str, float], ...]
    ledger: _budget.Ledger


def plan_total(solutions: Sequence[EpsilonSolution | tuple[str, float]]) -> PlanTotal:
    """Sequential composition of the per-statistic epsilons (pure DP): the total is their sum."""
    led = _budget.Ledger()
    per = []
    if isinstance(solutions, (str, bytes)) or not hasattr(solutions, "__iter__"):
        raise TypeError("solutions must be a list of EpsilonSolution or (name, epsilon) pairs")
    for s in solutions:
        if isinstance(s, EpsilonSolution):
            name, eps = s.statistic, s.epsilon
        elif isinstance(s, (tuple, list)) and len(s) == 2:
            name, eps = str(s[0]), s[1]
        else:
            raise TypeError(f"each plan item must be an EpsilonSolution or a (name, epsilon) pair, got {s!r}")
        eps = check_epsilon(eps, f"epsilon of {name}")
        led.charge(name, _budget.pure(eps))
        per.append((name, eps))
    if not per:
        raise DPInputError("the plan has no statistics")
    total = led.spent_pure()
    assert total is not None  # every charge above is pure
    return PlanTotal(total, tuple(per), led)
