"""Plan on planning data drawn from a DP snapshot: the smallest epsilon per statistic for an interval half-width.

:func:`solve_plan` runs the planner's own half-width solver (:func:`dpcore.views.planner.solve_epsilon_for_half_width`)
on :class:`dpcore.snapshot.PlanningData`: synthetic data drawn from a snapshot (:func:`dpcore.snapshot.synthetic_data`,
publishable: post-processing of a DP release) or the records themselves
(:func:`dpcore.snapshot.planning_data_from_records`, the yardstick: as private as the records). The same call on
both is how the snapshot's honesty is measured (``benchmarks/bench_snapshot.py``, docs/planner.md).

A statistic is planned on the whole source or, with ``by_cell``, on every declared cell: the release draws every
cell at one epsilon (parallel composition over disjoint cells), so the answer is the largest cell's epsilon, the
smallest at which every cell's expected half-width meets the target. The grouped kinds of the planner (percentiles,
group medians, group means) have the cells as their groups, and their solver finds that epsilon in one search. A cell whose target cannot be
met (its bins or its size make the interval too wide) makes the statistic fail, with the solver's reason. On a
snapshot, a histogram percentile's width is averaged over the data sets drawn from the snapshot's law
(``PlanningData.draws``): where a percentile falls between two bin edges is known there only to a few percent of
the ranks, and its epsilon is a step function of it.

Exact or approximate (:func:`is_exact`): a planning number is exact when it depends on public inputs only. The
count's half-width in people never depends on the data; a mean's absolute half-width depends only on the public
clip range and n, so it is exact when the cell sizes are public (else the snapshot's noisy sizes enter). Every
other number (a relative half-width, a percentile's, a Gini's, a relative risk's) depends on the data and is
approximate on a snapshot.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import planner
from ..snapshot import PlanningData
from ..validation import DPInputError, check_int
from .planner import HalfWidthSolution, HalfWidthTarget, solve_epsilon_for_half_width

__all__ = [
    "PlanItem",
    "PlanRow",
    "PrivatePlanView",
    "plan_items",
    "is_exact",
    "solve_plan",
    "plan_statistics",
    "BY_CELL_KINDS",
    "bin_limited",
    "BIN_LIMITED_NOTE",
    "RISK_NOISE_NOTE",
    "risk_within_noise",
    "CELL_GROUPED_KINDS",
]

#: the planner kinds whose groups are the snapshot's cells
CELL_GROUPED_KINDS = ("percentiles", "group_medians", "group_means")
#: the kinds that can be planned on the whole source or per cell (``by_cell``)
BY_CELL_KINDS = ("mean", "gini", "count", "ratio")


@dataclass(frozen=True)
class PlanItem:
    """One statistic to plan: a planner kind (:data:`dpcore.planner.STAT_KINDS`), its public settings (keyword
    arguments of :func:`dpcore.planner.make_statistic`, as sorted pairs; the relative risk takes none: its groups
    and outcome are the snapshot's), its :class:`dpcore.views.planner.HalfWidthTarget` and ``by_cell``: one per
    cell for :data:`BY_CELL_KINDS` (else one on the whole source); the grouped kinds' groups are the cells either
    way, ``by_cell`` solves their cells one by one (each cell's epsilon is then known; one search over all cells at
    once is faster: a percentile width at an epsilon costs the same for one cell or many)."""

    kind: str
    params: tuple[tuple[str, Any], ...]
    target: HalfWidthTarget
    by_cell: bool = False

    def __post_init__(self) -> None:
        if self.kind not in planner.STAT_KINDS:
            raise DPInputError(f"unknown statistic {self.kind!r}; choose one of {', '.join(planner.STAT_KINDS)}")
        if not isinstance(self.target, HalfWidthTarget):
            raise TypeError("target must be a HalfWidthTarget")
        if not isinstance(self.by_cell, bool):
            raise TypeError(f"by_cell must be True or False, got {self.by_cell!r}")
        if self.kind == "ratio" and self.params:
            raise DPInputError(
                "the relative risk is planned on the snapshot's exposure groups and outcome: it takes no params"
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "params": {k: list(v) if isinstance(v, tuple) else v for k, v in self.params},
            "target": self.target.to_dict(),
            "by_cell": self.by_cell,
        }


def plan_items(items: Sequence[Mapping[str, Any] | PlanItem]) -> tuple[PlanItem, ...]:
    """Items from plain dicts ``{"kind", "params", "half_width", "relative", "level", "by_cell"}``."""
    if isinstance(items, (str, bytes, Mapping)) or not hasattr(items, "__iter__"):
        raise TypeError("items must be a list of {'kind', 'params', 'half_width', ...} dicts")
    out = []
    for item in items:
        if isinstance(item, PlanItem):
            out.append(item)
            continue
        if not isinstance(item, Mapping) or "kind" not in item or "half_width" not in item:
            raise DPInputError(f"each statistic to plan needs a 'kind' and a 'half_width', got {item!r}")
        params = item.get("params") or {}
        if not isinstance(params, Mapping):
            raise DPInputError(f"the params of {item['kind']!r} must be a dict")
        frozen = tuple(sorted((str(k), tuple(v) if isinstance(v, list) else v) for k, v in params.items()))
        target = HalfWidthTarget(
            float(item["half_width"]), bool(item.get("relative", False)), float(item.get("level", 0.95))
        )
        out.append(PlanItem(str(item["kind"]), frozen, target, bool(item.get("by_cell", False))))
    if not out:
        raise DPInputError("the plan has no statistics: give at least one")
    return tuple(out)


def is_exact(item: PlanItem, sizes_public: bool) -> bool:
    """Whether ``item``'s planned epsilon depends on public inputs only (module docstring): a count's absolute
    half-width always, a mean's absolute half-width with public cell sizes; nothing else."""
    if item.target.relative:
        return False
    if item.kind == "count":
        return True
    return item.kind in ("mean", "group_means") and sizes_public


@dataclass(frozen=True)
class PlanRow:
    """One planned statistic: its epsilon (the largest over its cells), each cell's (``cells``: label, epsilon),
    whether the number is exact, and the first cell's solution (how it was found)."""

    kind: str
    statistic: str
    by_cell: bool
    target: str
    epsilon: float
    cells: tuple[tuple[str, float], ...]
    exact: bool
    method: str
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "statistic": self.statistic,
            "by_cell": self.by_cell,
            "target": self.target,
            "epsilon": self.epsilon,
            "cells": [[c, e] for c, e in self.cells],
            "exact": self.exact,
            "method": self.method,
            "note": self.note,
        }


@dataclass(frozen=True)
class PrivatePlanView:
    """The plan: one row per statistic that could be planned, the others in ``failures`` (label, reason), the
    total under sequential composition (pure epsilons add), where the planning data came from and the snapshot's
    epsilon (None when planned on the records)."""

    rows: tuple[PlanRow, ...]
    failures: tuple[tuple[str, str], ...]
    total_epsilon: float
    source: str
    snapshot_epsilon: float | None

    def row(self, kind: str) -> PlanRow:
        for r in self.rows:
            if r.kind == kind:
                return r
        raise KeyError(f"no planned statistic of kind {kind!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "snapshot_epsilon": self.snapshot_epsilon,
            "rows": [r.to_dict() for r in self.rows],
            "failures": [list(f) for f in self.failures],
            "total_epsilon": self.total_epsilon,
        }


def _ratio_statistic(counts: np.ndarray, name: str) -> planner.RatioStatistic:
    """The planner's relative risk from one (exposed, reference) x (case, non-case) table of counts."""
    c = np.rint(np.maximum(np.asarray(counts, dtype=float), 0.0)).astype(int)
    n_x, n_y = int(c[0].sum()), int(c[1].sum())
    if n_x < 1 or n_y < 1:
        raise DPInputError(f"{name}: a group of the relative risk has no one in the planning data")
    stat = planner.RatioStatistic(int(c[0, 0]), int(c[1, 0]), n_x, n_y)
    object.__setattr__(stat, "name", name)
    return stat


def plan_statistics(data: PlanningData, item: PlanItem) -> list[tuple[str, planner.PlannedStatistic]]:
    """The planned statistic(s) of ``item`` on ``data``: one for the whole source (a grouped kind: one over every
    cell), or one per cell (``by_cell``; a grouped kind's statistic on one cell has that cell as its one group)."""
    params = dict(item.params)
    if item.kind == "ratio":
        if data.risk is None or data.risk_schema is None:
            raise DPInputError("the planning data have no relative risk: declare one in the snapshot's schema")
        rs = data.risk_schema
        what = f"Relative risk ({rs.exposed} vs {rs.reference})"
        if item.by_cell:
            return [(lab, _ratio_statistic(data.risk[i], f"{what}, cell {lab}")) for i, lab in enumerate(data.labels)]
        return [("all", _ratio_statistic(data.risk.sum(axis=0), what))]
    if item.kind in CELL_GROUPED_KINDS and not item.by_cell:
        stat = planner.make_statistic(item.kind, data.values, data.cells, **params)
        return [("all", _with_draws(stat, data, data.labels))]
    if not item.by_cell:
        return [("all", planner.make_statistic(item.kind, data.values, None, **params))]
    out = []
    for lab in data.labels:
        values = data.cell_values(lab)
        groups = np.full(values.size, lab) if item.kind in CELL_GROUPED_KINDS else None
        out.append((lab, _with_draws(planner.make_statistic(item.kind, values, groups, **params), data, (lab,))))
    return out


def _with_draws(stat: planner.PlannedStatistic, data: PlanningData, labels: Sequence[str]) -> planner.PlannedStatistic:
    """A histogram percentile's statistic with the planning data's further draws (a snapshot's: its interval width
    is then averaged over them, :meth:`dpcore.planner.PercentilesStatistic.with_draws`); any other unchanged. The
    groups of a grouped statistic are the cells in ``data.labels`` order (:func:`dpcore.planner.make_statistic`
    names them)."""
    if not data.draws or not isinstance(stat, planner.PercentilesStatistic):
        return stat
    if isinstance(stat, planner.ExponentialPercentilesStatistic):
        return stat
    order = list(stat.cell_labels or ())
    if not set(order) <= set(labels):  # pragma: no cover - the groups are the data's cells
        return stat
    per_label = {lab: data.cell_draws(lab) for lab in order}
    return stat.with_draws([[per_label[lab][k] for lab in order] for k in range(len(data.draws))])


#: said of a percentile target within the resolution of its bins (:func:`bin_limited`)
BIN_LIMITED_NOTE = (
    "the target lets a percentile's interval span at most two bins: its epsilon then depends on where each "
    "percentile falls between two bin edges (a few people), which planning data see only roughly; a wider target "
    "plans more reliably"
)


def bin_limited(stat: planner.PlannedStatistic, target: HalfWidthTarget) -> bool:
    """Whether a histogram percentile's target is within the resolution of its bins on these planning data: twice
    the half-width below the summed width of the bin of some planning value and its two neighbours, so the interval
    may span at most two bins. The solved epsilon is then a step function of where each percentile sits between
    two edges (measured: the median by state on the CPS at +-4,000 with 1-bin intervals needs epsilon 0.73, at
    +-5,000 0.17), which a snapshot cannot place to a few people. False for every other statistic."""
    if not isinstance(stat, planner.PercentilesStatistic) or isinstance(stat, planner.ExponentialPercentilesStatistic):
        return False
    edges = np.asarray(stat.edges, dtype=float)
    values = np.asarray(stat.truth, dtype=float).ravel()
    values = values[np.isfinite(values)]
    if values.size == 0:
        return False
    m = edges.size - 1
    j = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, m - 1)
    lo, hi = np.maximum(j - 1, 0), np.minimum(j + 1, m - 1)
    three = edges[hi + 1] - edges[lo]
    half = target.half_width * (np.abs(values) if target.relative else 1.0)
    return bool(np.any(2.0 * half < three))


#: said of a relative risk planned on counts that the snapshot's noise hides (:func:`risk_within_noise`)
RISK_NOISE_NOTE = (
    "the snapshot's risk table does not resolve every count this relative risk is planned on (a count below twice "
    "its noise's sd), so its epsilon may be off either way several-fold (measured per state at 1,500 records: "
    "0.24-12x the epsilon solved on the records); give the relative risk's epsilon directly, or take the snapshot "
    "at a larger planning_epsilon"
)


def risk_within_noise(data: PlanningData, item: PlanItem) -> bool:
    """Whether a relative risk ``item`` is planned on a snapshot's counts of which one is below twice the sd of
    its noise (per cell with ``by_cell``; else the table summed over the cells, whose noise sd is sqrt(cells) times
    a count's). Such a count is read as its posterior mean (:func:`dpcore.snapshot.risk_counts`), which the noise
    moves by about its own size, and the planned epsilon goes as the counts' inverse squares: the ACS and CPS
    states at 1,500 records (118-430 cases against an sd of 141) gave 0.24-12x the epsilon solved on the records
    (docs/planner.md). False on the records themselves and for every other kind."""
    if item.kind != "ratio" or data.risk is None or data.risk_noise_sd is None:
        return False
    counts = np.asarray(data.risk, dtype=float)
    if not item.by_cell:
        return bool(np.any(counts.sum(axis=0) < 2.0 * data.risk_noise_sd * math.sqrt(counts.shape[0])))
    return bool(np.any(counts < 2.0 * data.risk_noise_sd))


def _solve(stat: planner.PlannedStatistic, target: HalfWidthTarget, seed: int) -> HalfWidthSolution:
    return solve_epsilon_for_half_width(stat, target, seed=seed)


def solve_plan(data: PlanningData, items: Sequence[Mapping[str, Any] | PlanItem], *, seed: int = 0) -> PrivatePlanView:
    """The smallest epsilon of every item on ``data`` (module docstring); a row is ``exact`` on a snapshot when it
    depends on public inputs only (:func:`is_exact`, the cell sizes public when the snapshot's schema declares
    them), and always on the records themselves. ``seed``: of the percentile widths' simulated histograms
    (:func:`dpcore.views.planner.solve_epsilon_for_half_width`)."""
    if not isinstance(data, PlanningData):
        raise TypeError("data must be PlanningData (dpcore.snapshot.synthetic_data or planning_data_from_records)")
    seed = check_int(seed, "seed", minimum=0)
    rows, failures = [], []
    for item in plan_items(items):
        label = planner.STAT_KINDS[item.kind] + (" by cell" if item.by_cell and item.kind in BY_CELL_KINDS else "")
        try:
            stats = plan_statistics(data, item)
            sols = [(cell, _solve(stat, item.target, seed)) for cell, stat in stats]
        except ValueError as exc:
            failures.append((label, str(exc)))
            continue
        eps = max(s.epsilon for _, s in sols)
        first = sols[0][1]
        notes = [first.note] if first.note else []
        if data.upper is not None and "upper" in dict(item.params) and float(dict(item.params)["upper"]) > data.upper:
            notes.append(
                f"planned on data bounded by the snapshot's upper bound {data.upper:,.0f}, below this statistic's"
            )
        if any(bin_limited(stat, item.target) for _, stat in stats):
            notes.append(BIN_LIMITED_NOTE)
        if risk_within_noise(data, item):
            notes.append(RISK_NOISE_NOTE)
        note = "; ".join(notes)
        rows.append(
            PlanRow(
                item.kind,
                label,
                item.by_cell,
                item.target.describe(first.unit),
                float(eps),
                tuple((c, float(s.epsilon)) for c, s in sols) if item.by_cell else (),
                data.source == "data" or is_exact(item, data.sizes_public),
                first.method,
                note,
            )
        )
    total = float(sum(r.epsilon for r in rows))
    return PrivatePlanView(tuple(rows), tuple(failures), total, data.source, data.snapshot_epsilon)
