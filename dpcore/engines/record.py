"""The release record of a plan: its cost (per statistic and in total, from the plan alone) and the public text
every ``release_record.json`` carries (the neighbouring relation, what one person can change, the rules for
missing values, negative incomes and cells). Everything here is a function of the plan: nothing reads data.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Any

from .. import __version__, budget
from ..budget import PlanCost
from ..plan import ReleasePlan, StatisticSpec, plan_to_dict, plan_to_toml

__all__ = [
    "DEFAULT_GINI_CAP_DELTA",
    "SIMULATION_NOTE",
    "plan_cost",
    "statistic_delta",
    "delta_sources",
    "missing_values_rule",
    "NEGATIVE_INCOME_SENTENCES",
    "negative_incomes_rule",
    "relation_text",
    "cells_rule",
    "release_record",
]


#: delta cap of a ledger account created by a plan with a Gini statistic and no cap_delta
DEFAULT_GINI_CAP_DELTA = 1e-9


SIMULATION_NOTE = "simulation, not a release"


def statistic_delta(spec: StatisticSpec, m: int) -> float:
    """The plan's delta of a statistic: a "laplace" Gini's (its value's calibration keeps group privacy within
    it); 0 for the pure-DP mechanisms."""
    if spec.kind != "gini" or spec.noise == "cauchy":
        return 0.0
    return float(spec.delta or 0.0)


def plan_cost(plan: ReleasePlan) -> PlanCost:
    """The plan's cost, data-independent: every statistic's (epsilon, delta) composed sequentially
    (:func:`dpcore.budget.compose_plan`: epsilons and deltas add; ``per_statistic`` in the plan's order)."""
    m = plan.rows_per_person
    # a statistic with noisy cell sizes also costs n_epsilon, and its DP cell selection selection_delta
    # (dpcore.cell_keys): ReleasePlan.statistic_epsilon / statistic_selection_delta
    costs = []
    for s in plan.statistics:
        epsilon, delta = plan.statistic_epsilon(s), statistic_delta(s, m) + plan.statistic_selection_delta(s)
        costs.append((s.name or s.where, budget.approx(epsilon, delta) if delta > 0 else budget.pure(epsilon)))
    return budget.compose_plan(costs)


def delta_sources(plan: ReleasePlan) -> str:
    """Where a plan's delta comes from, in words ("" for a pure-epsilon plan): the DP cell selections (cells not
    declared, sizes protected) and the ``noise = "laplace"`` Ginis. The certified generalized-Cauchy sampler of a
    Gini runs in its pure-DP mode in every release, so it adds none."""
    m = plan.rows_per_person
    selections = sum(1 for s in plan.statistics if plan.statistic_selection_delta(s) > 0)
    laplace = sum(1 for s in plan.statistics if statistic_delta(s, m) > 0)
    parts = []
    if selections:
        parts.append(f"the DP cell selection of {selections} statistic(s)")
    if laplace:
        parts.append(f"{laplace} Gini(s) with noise = \"laplace\"")
    return " and ".join(parts)


def missing_values_rule(plan: ReleasePlan) -> dict[str, str]:
    """The public rule for missing values that a release follows (the record's ``missing_values``).

    Why a rule and not a filter: dropping a row with a missing value changes the published cell sizes (a
    one-person cell disappears), and with a ``privacy_unit`` it changes which rows of a person are kept, when
    only that person's value goes missing. Under these rules one person's value going missing (or coming
    back) is a change of that person's values, which the neighbouring relation already covers: only noisy
    numbers move. A missing outcome counts as not a case (no extra count and no extra epsilon; a noisy count of
    missing outcomes would need its own share of epsilon or a wider noise)."""
    if plan.missing_income == "refuse":
        income = (
            f"refuse: a missing or non-finite value of the income column {plan.income!r} stops the release "
            "before any charge (the data were checked to have none)"
        )
    else:
        income = (
            f"lower: a row whose income {plan.income!r} is missing or not finite stays in every n; the mean "
            "and the Gini count it at the statistic's public 'lower' bound, the percentiles' histogram in its "
            "first bin, an 'outcome_below' outcome as not a case"
        )
    return {
        "income": income,
        "outcome": "a missing outcome is a third value: the row stays in n_exposed / n_reference and is not a "
        "case (cases count the known positives only)",
        "cells": "a missing cell label ('by', the exposure group) is its own cell, shown empty",
        "privacy_unit": "the per-person row sample is taken from every row, before any missing value is looked at; "
        "a row whose privacy unit is missing (empty or null) is its own person: it is always kept and never pooled "
        "with other such rows (pooled, one person's id going missing would drop another person's row)",
    }


#: the record's sentence for each negative-income rule of a plan (dpcore.plan.NEGATIVE_INCOME_RULES)
NEGATIVE_INCOME_SENTENCES = {
    "refuse": "refuse: a negative income stops the release before any charge (the data were checked to have none)",
    "clip": "clip: a negative income is clipped to the statistic's public lower bound, as every income below it",
    "drop": "drop: a negative income counts as a missing income (the missing-values rule applies; the row stays in "
    "every n, so one person's sign moves only noisy numbers)",
}


def negative_incomes_rule(plan: ReleasePlan) -> str:
    """The public rule for negative incomes that a release follows (the record's ``negative_incomes``): the
    plan's field, refuse unless it says otherwise (a silent clip made the command line's n differ from the
    app's, which asks the user)."""
    return NEGATIVE_INCOME_SENTENCES[getattr(plan, "negative_incomes", "refuse")]


def relation_text(plan: ReleasePlan) -> dict[str, str]:
    m = plan.rows_per_person
    if plan.privacy_unit:
        who = (
            f"replace one person (one value of the privacy unit column {plan.privacy_unit!r}); each person "
            f"keeps at most {m} row(s), a seeded uniform sample of their rows (bounding_seed "
            f"{plan.bounding_seed}), so one person changes the values of at most {m} row(s), in any cells; a row "
            "whose privacy unit is missing (empty or null) is a person of its own (one row)"
        )
    else:
        who = "replace one record (row): one row's values change"
    public = (
        "public (not protected): the cells (values of the 'by' columns and of the exposure group) that "
        "the rows fall in and the number of rows of every cell (published in the tables, as PSEO "
        "publishes cell counts), the bounds, bins, percentile levels and thresholds of the plan. "
        "No row is left out for a missing value: a person's value going missing is a change of their values "
        "(rules in 'missing_values')."
    )
    change = (
        f"one person can change: every histogram (all cells together) by at most {2 * m} in L1; every "
        f"clipped sum by at most {m} x (upper - lower); every outcome count table by at most {m} "
        f"(calibrated as {2 * m}, epsilon/2 per count); every cell's Gini through at most {m} of its "
        f"incomes (group privacy: each cell's Gini is released at epsilon/{m})"
    )
    return {"neighbouring": who, "public": public, "what_one_person_can_change": change}


def cells_rule(plan: ReleasePlan) -> dict[str, Any]:
    """The record's ``cells``: how the listed cells and their n were obtained (:mod:`dpcore.cell_keys`)."""
    if plan.cell_sizes == "public":
        rule = {
            "cell_sizes": "public",
            "n": "exact (the PSEO assumption: cells present and their sizes are public)",
            "small_cell_threshold": plan.small_cell_threshold,
        }
    else:
        rule = {
            "cell_sizes": "noisy",
            "n_epsilon": plan.n_epsilon,
            "selection_delta": plan.selection_delta,
            "n": "a noisy count (discrete Laplace, scale 2m/n_epsilon), charged n_epsilon per statistic with cells",
            "cells": "declared in [keys] when every 'by' column is declared (absent cells released as n = 0 plus "
            "noise, undeclared rows dropped), else selected with DP (Laplace threshold, delta "
            "selection_delta)",
        }
    if plan.keys is not None:
        rule["keys"] = plan.keys.to_dict() if plan.keys.file is None else {"file": plan.keys.file}
    return rule


def release_record(
    plan: ReleasePlan,
    *,
    source: str,
    engine: str,
    cost: PlanCost,
    cell_warnings: list[str],
    seed: int | None = None,
) -> dict[str, Any]:
    """The release record before anything is drawn: what is charged with the release (everything public, no
    noisy number); the statistics, the files and the ledger's part are added as the release proceeds. ``seed``:
    a simulation's, recorded only there (its source was declared public)."""
    record: dict[str, Any] = {
        "record": "dpcore release record",
        "record_version": 1,
        "mode": SIMULATION_NOTE if seed is not None else "release",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "software": f"dpcore {__version__}",
        "dataset": plan.dataset,
        "source": source,
        "engine": engine,
        "plan": plan_to_dict(plan),
        "plan_sha256": hashlib.sha256(plan_to_toml(plan).encode("utf-8")).hexdigest(),
        "privacy": {
            **relation_text(plan),
            "composition": "cells of one statistic are disjoint (parallel composition: each statistic costs its "
            "epsilon once); statistics add up (sequential composition)",
            "cost": {"epsilon": cost.epsilon, "delta": cost.delta},
            "per_statistic": [
                {"name": s.name, "kind": s.kind, "epsilon": c.epsilon, "delta": c.delta}
                for s, (_, c) in zip(plan.statistics, cost.per_statistic, strict=True)
            ],
        },
        "missing_values": missing_values_rule(plan),
        "negative_incomes": negative_incomes_rule(plan),
        "cells": {**cells_rule(plan), "warnings": cell_warnings},
    }
    if plan.cell_sizes != "public":  # the cells and their sizes are protected, not public
        record["privacy"]["public"] = (
            "public (not protected): the declared [keys] cells, the bounds, bins, percentile levels and thresholds "
            "of the plan. Protected: which cell and exposure group each row falls in (rows may move between "
            "cells: the mean's sum sensitivity is m max(U - L, 2 max(|L|, |U|))) and every cell's n (noisy)."
        )
        record["privacy"]["what_one_person_can_change"] += (
            f"; their rows may also move between cells and exposure groups (cell_sizes = \"noisy\"): every clipped "
            f"sum table by at most {plan.rows_per_person} x max(upper - lower, 2 max(|lower|, |upper|)) in L1, every "
            f"table of cell sizes by at most {2 * plan.rows_per_person} (noise scale 2m/n_epsilon)"
        )
    if seed is not None:  # simulate: the seed is recorded only here (the source was declared public)
        record["simulation"] = {
            "seed": int(seed),
            "public_data": True,
            "note": "numpy noise with this seed; the ledger was not charged; the source was "
            "declared public (--public-data): these numbers are NOT a differentially "
            "private release and, with the seed, reveal the source's aggregates exactly",
        }
    return record
