"""Release plan files (TOML, versioned): parse, validate, write.

A release plan says what to release from one dataset, with which privacy budget; the command line
(``python -m dpcore release PLAN --data SOURCE ...``, :mod:`dpcore.cli`) reads it and the planner page
writes it ("Download the release plan"). Format, field by field: ``docs/plan_format.md``. Example::

    version = 1
    dataset = "pseo-earnings-2019"      # the ledger account (its id and label)
    income = "earnings"                 # income column
    cap_epsilon = 3.0                   # the dataset's total budget in the ledger

    [[statistics]]
    kind = "percentiles"                # gini | percentiles | mean | relative_risk
    by = ["institution", "degree_level", "cohort"]
    epsilon = 1.0
    bins = "pseo"                       # or a list of public edges
    q = [25, 50, 75]

Privacy accounting of a plan (:attr:`ReleasePlan.total_epsilon`): inside one statistic the cells
(the distinct values of the ``by`` columns) are disjoint, so one statistic costs its ``epsilon`` once
(parallel composition, Dwork & Roth 2014, Thm 3.16 with disjoint inputs); statistics compose
sequentially, so the plan costs the sum of its statistics' epsilons. Cells are the plan's declared
``[keys]`` or selected with DP, and each cell's n is a noisy count costing ``n_epsilon`` more (plus
``selection_delta`` for a selection), unless ``cell_sizes = "public"`` (the PSEO assumption):
:mod:`dpcore.cell_keys`. A Gini's ``noise`` is "cauchy" (the default when the field is absent: pure
epsilon) or "laplace" (NRS 2007 (epsilon, delta) with the
entry's ``delta``; the plan then needs ``cap_delta`` >= the sum of those deltas, :attr:`ReleasePlan.noise_delta`). With a ``privacy_unit`` and
``max_rows_per_person = m`` every mechanism is calibrated for one person changing up to m rows
(see :mod:`dpcore.engines` and ``docs/release_cli.md``), so the cost per statistic stays ``epsilon``.

Reading uses the standard library's ``tomllib`` (Python 3.11+); writing uses the tiny writer
:func:`plan_to_toml` (the format only needs strings, numbers, booleans, flat lists and an array of
tables). Validation errors are :class:`PlanError` (a :class:`dpcore.DPInputError`) naming the
statistic (index from 1 and kind) and the field.

The package, one concern per module (this ``__init__`` imports their public names: ``dpcore.plan.<name>`` is their
public path): :mod:`~dpcore.plan.model` (the fields and their limits, :class:`StatisticSpec`,
:class:`ReleasePlan`, the plan-file form), :mod:`~dpcore.plan.validate` (:func:`plan_from_dict`,
:func:`parse_plan`, :func:`load_plan`), :mod:`~dpcore.plan.write` (the TOML writer) and
:mod:`~dpcore.plan.from_planner` (the planner page's choices as a plan).
"""

from __future__ import annotations

from . import model
from .from_planner import plan_from_planner, plan_from_planner_choices
from .model import *  # noqa: F403  (the plan's fields and limits: model.__all__)
from .validate import load_plan, parse_plan, plan_from_dict
from .write import plan_to_toml, write_plan

__all__ = [
    *model.__all__,
    "parse_plan",
    "load_plan",
    "plan_from_dict",
    "plan_to_toml",
    "write_plan",
    "plan_from_planner",
    "plan_from_planner_choices",
]
