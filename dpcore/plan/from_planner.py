"""The planner page's choices as a release plan: :func:`plan_from_planner_choices` and :func:`plan_from_planner`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..kinds import PLANNER_KINDS
from .model import DEFAULT_GINI_NOISE_DELTA, GINI_PLAN_NOISES, PLAN_VERSION, PlanError, ReleasePlan
from .validate import is_number, plan_from_dict

# ---------------------------------------------------------------------------------------------
# From the planner page
# ---------------------------------------------------------------------------------------------


def _from_planned(stat: Any, epsilon: float, by: Sequence[str]) -> dict[str, Any]:
    """Map a :class:`dpcore.planner.PlannedStatistic` to a plan statistic (dict form)."""
    kind = getattr(stat, "kind", None)
    if kind == "gini":
        noise_name = getattr(stat, "noise", "cauchy")
        gini = {"kind": "gini", "by": [], "epsilon": epsilon, "lower": stat.lower, "upper": stat.upper}
        if noise_name == "cauchy":
            return {**gini, "gamma": stat.gamma, "calibration": stat.calibration}
        if noise_name not in GINI_PLAN_NOISES:
            raise PlanError(
                f"the Gini with noise {noise_name!r} cannot be released (no floating-point-safe sampler); "
                "plan it with the Laplace or the generalized Cauchy noise to write it into a plan"
            )
        return {**gini, "noise": noise_name, "delta": float(stat.delta), "calibration": stat.calibration}
    if kind == "mean":
        return {"kind": "mean", "by": [], "epsilon": epsilon, "lower": stat.lower, "upper": stat.upper}
    if kind == "group_means":
        if not by:
            raise PlanError("a 'mean income by group' statistic needs the group column name (by=[...])")
        return {"kind": "mean", "by": list(by), "epsilon": epsilon, "lower": stat.lower, "upper": stat.upper}
    if kind in ("percentiles", "group_medians"):  # median income by group = percentiles with q = 50
        from .. import percentiles

        if not by:
            raise PlanError("a percentiles-by-cell statistic needs the cell column names (by=[...])")
        if getattr(stat, "relation", "replace") != "replace":
            raise PlanError(
                "release plans use the replace-one relation; the add/remove percentiles setting "
                "cannot be written into a plan"
            )
        if getattr(stat, "method", "histogram") == "exponential":
            grid = np.asarray(stat.edges, dtype=float)
            fine = percentiles.fine_candidate_grid()
            same = grid.shape == fine.shape and np.array_equal(grid, fine)
            return {
                "kind": "percentiles",
                "by": list(by),
                "epsilon": epsilon,
                "method": "exponential",
                "candidates": "pseo-fine" if same else [float(v) for v in grid],
                "q": [float(v) for v in stat.q],
            }
        edges = stat.edges if getattr(stat, "edges", None) is not None else percentiles.PSEO_BIN_EDGES
        edges = np.asarray(edges, dtype=float)
        same = edges.shape == percentiles.PSEO_BIN_EDGES.shape and np.array_equal(edges, percentiles.PSEO_BIN_EDGES)
        return {
            "kind": "percentiles",
            "by": list(by),
            "epsilon": epsilon,
            "bins": "pseo" if same else [float(v) for v in edges],
            "q": [float(v) for v in stat.q],
        }
    raise PlanError(
        f"the planner statistic {getattr(stat, 'name', kind)!r} (kind {kind!r}) has no release-plan "
        "form; give it as a dict (kind = gini | percentiles | mean | relative_risk)"
    )


def plan_from_planner_choices(
    kinds: Sequence[str],
    statistic_for: Any,
    allocation: Mapping[str, float],
    *,
    dataset: str,
    income: str,
    cap_epsilon: float,
    group_column: str | None = None,
    params_for: Any = None,
    keys: Mapping[str, Any] | None = None,
    cell_sizes: str = "noisy",
    negative_incomes: str = "refuse",
) -> tuple[ReleasePlan, list[str]]:
    """The planner page's choices as a plan: ``(plan, left_out)``.

    ``kinds``: the planner's statistic kinds; ``statistic_for(kind)``: its PlannedStatistic;
    ``allocation[kind]``: its epsilon; ``group_column``: the real data's group column (cells of the
    grouped statistics); ``params_for(kind)``: the page's settings (dict) -- the ratio needs its
    ``threshold``, ``group_x``, ``group_y`` (-> ``relative_risk`` with ``outcome_below``).
    Statistics that have no plan form (a count, or a grouped statistic without a group column) are
    left out and named in ``left_out`` (the page says so). ``cap_epsilon`` is at least the plan's total.
    """
    items: list[Any] = []
    left_out: list[str] = []
    by = [group_column] if group_column else []
    for kind in kinds:
        eps = float(allocation[kind])
        if kind == "ratio":
            params = dict(params_for(kind)) if params_for is not None else {}
            if not group_column or not {"threshold", "group_x", "group_y"} <= set(params):
                left_out.append(f"{kind}: needs a group column and the two groups")
                continue
            items.append(
                {
                    "kind": "relative_risk",
                    "epsilon": eps,
                    "group": group_column,
                    "exposed": str(params["group_x"]),
                    "reference": str(params["group_y"]),
                    "outcome_below": float(params["threshold"]),
                }
            )
            continue
        if PLANNER_KINDS[kind].grouped and not group_column:  # (a ratio is left out above)
            left_out.append(f"{kind}: needs a group (cell) column in the data")
            continue
        try:
            items.append(_from_planned(statistic_for(kind), eps, by))
        except PlanError as exc:
            left_out.append(f"{kind}: {exc}")
    if not items:
        raise PlanError("none of the chosen statistics can be written into a release plan: " + "; ".join(left_out))
    from ..cell_keys import DEFAULT_N_EPSILON

    noisy_cells = sum(1 for i in items if cell_sizes != "public" and (i.get("by") or i["kind"] == "relative_risk"))
    total = math.fsum(float(i["epsilon"]) for i in items) + noisy_cells * DEFAULT_N_EPSILON
    plan = plan_from_planner(
        items,
        dataset=dataset,
        income=income,
        cap_epsilon=max(float(cap_epsilon), total),
        keys=keys,
        cell_sizes=cell_sizes,
        negative_incomes=negative_incomes,
    )
    return plan, left_out


def plan_from_planner(
    statistics: Iterable[Any],
    *,
    dataset: str,
    income: str,
    cap_epsilon: float,
    by: Sequence[str] = (),
    privacy_unit: str | None = None,
    max_rows_per_person: int | None = None,
    bounding_seed: int = 0,
    description: str = "",
    keys: Mapping[str, Any] | None = None,
    cell_sizes: str = "noisy",
    negative_incomes: str = "refuse",
) -> ReleasePlan:
    """Build a validated plan from the planner page's choices.

    ``statistics``: items of either form

    * ``(planned_statistic, epsilon)`` with a :class:`dpcore.planner.PlannedStatistic` (what
      ``planner.make_statistic`` returns and ``release.make_release`` takes): gini, mean,
      group_means (-> mean by ``by``) and percentiles (cells = ``by``) are translated;
    * a dict in the plan-file form (``{"kind": "relative_risk", "epsilon": 0.5, "group": ..., ...}``).

    ``by``: the column names of the planner's group/cell column(s) in the real data (the planner only
    knows the planning data). Write the result with :func:`write_plan` (``write_plan(plan)`` returns
    the TOML text for a download button).

    ``keys``: the public cells, the plan's ``[keys]`` table (``{"state": ["AK", "CA"]}`` or ``{"file":
    "keys.csv"}``); ``cell_sizes``: "noisy" (the default: noisy n, cells from ``keys`` or selected with DP) or
    "public" (the PSEO assumption). Both are written into the plan (:mod:`dpcore.cell_keys`).
    """
    items = []
    for item in statistics:
        if isinstance(item, Mapping):
            items.append(dict(item))
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            items.append(_from_planned(item[0], float(item[1]), list(by)))
        else:
            raise PlanError(f"each planner statistic must be (statistic, epsilon) or a dict, got {item!r}")
    raw: dict[str, Any] = {
        "version": PLAN_VERSION,
        "dataset": dataset,
        "income": income,
        "cap_epsilon": cap_epsilon,
        "statistics": items,
        "cell_sizes": cell_sizes,
        "negative_incomes": negative_incomes,
    }
    if keys is not None:
        raw["keys"] = dict(keys)
    noise_deltas = [
        i.get("delta", DEFAULT_GINI_NOISE_DELTA)
        for i in items
        if i.get("kind") == "gini" and i.get("noise") == "laplace"
    ]
    if (
        noise_deltas and all(is_number(d) for d in noise_deltas)
    ):  # (a bad delta: validation names it)  # the account's delta cap: what the plan spends, as cap_epsilon is at least its epsilon
        raw["cap_delta"] = math.fsum(noise_deltas)
    if description:
        raw["description"] = description
    if privacy_unit is not None:
        raw["privacy_unit"] = privacy_unit
        raw["max_rows_per_person"] = max_rows_per_person
        raw["bounding_seed"] = bounding_seed
    return plan_from_dict(raw)
