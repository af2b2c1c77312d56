"""Plan mode of the planner page (``app_pages/planner.py``): its controls and renderers, one concern per module.

The page reads its controls here, makes one cached call to a view function of :mod:`dpcore.views.planner` and hands
the result to a ``render_*`` function; nothing here recomputes a mechanism. This ``__init__`` imports the modules'
public names, so ``ui.planner.views.<name>`` is their public path:

* :mod:`~ui.planner.views.settings` - the statistics, the groups / cells, each statistic's settings and target;
* :mod:`~ui.planner.views.rendering` - what the renderers share: the answer box, the privacy cost, the interval
  column, figures and tables remembered per view;
* :mod:`~ui.planner.views.accuracy` - Accuracy first with relative-error targets;
* :mod:`~ui.planner.views.half_width` - Accuracy first stated as interval half-widths;
* :mod:`~ui.planner.views.budget` - Budget first: the ε sliders and the accuracy they buy;
* :mod:`~ui.planner.views.risk` - what ε means for a person;
* :mod:`~ui.planner.views.exports` - the decision memo, the script's arguments, the release plan file.

The state Plan and Release mode share (the total ε, its split, the remembered plan) lives in
:mod:`ui.planner.plan_state`; what a release would use (also the plan file written here) in
:mod:`ui.planner.choices`; Release mode's renderers in :mod:`ui.planner.release_panel`, which this package never
imports (nor it this one).
"""

from __future__ import annotations

from .accuracy import SHOWN_ACCURACY_COLUMNS, accuracy_table, render_accuracy, shown_accuracy_table
from .budget import budget_frame, budget_sliders, on_total_change, render_budget
from .exports import plan_memo, release_plan_download, script_settings
from .half_width import (
    HALF_WIDTH,
    HALF_WIDTH_COLUMN,
    HALF_WIDTH_DEFAULTS,
    HALF_WIDTH_UNITS,
    HALF_WIDTHS_KEY,
    RELATIVE_ERROR,
    TARGET_MODES,
    half_width_choice,
    half_width_table,
    remembered_half_widths,
    render_half_width,
)
from .rendering import (
    ANSWER_LABEL,
    INTERVAL_COLUMN,
    INTERVAL_NOTE,
    SIDEWAYS_CUE,
    figure,
    interval_text,
    percent_text,
    render_cost,
    sideways_cue,
)
from .risk import DEPLOYMENT_COLUMN_CONFIG, DEPLOYMENT_COLUMNS, render_risk, risk_controls
from .settings import (
    DEFAULT_TARGETS,
    GINI_ERR_KEY,
    GINI_ERR_MAX,
    GINI_ERR_MIN,
    LEGACY_GINI_TOL,
    NOISE_DELTAS,
    NOISE_LABELS,
    RANDOM_GROUPS,
    REFUSED_REAL_RELEASE,
    choose_groups,
    dataset_summary,
    fingerprint,
    group_rejections,
    qp_multiselect,
    release_delta_note,
    release_refusal,
    small_cell_advice,
    statistic_settings,
)

__all__ = [
    # settings
    "RANDOM_GROUPS",
    "DEFAULT_TARGETS",
    "GINI_ERR_KEY",
    "LEGACY_GINI_TOL",
    "GINI_ERR_MIN",
    "GINI_ERR_MAX",
    "NOISE_LABELS",
    "NOISE_DELTAS",
    "REFUSED_REAL_RELEASE",
    "qp_multiselect",
    "fingerprint",
    "group_rejections",
    "small_cell_advice",
    "choose_groups",
    "statistic_settings",
    "dataset_summary",
    "release_refusal",
    "release_delta_note",
    # rendering
    "percent_text",
    "figure",
    "INTERVAL_COLUMN",
    "interval_text",
    "INTERVAL_NOTE",
    "SIDEWAYS_CUE",
    "sideways_cue",
    "render_cost",
    "ANSWER_LABEL",
    # accuracy
    "accuracy_table",
    "SHOWN_ACCURACY_COLUMNS",
    "shown_accuracy_table",
    "render_accuracy",
    # half_width
    "RELATIVE_ERROR",
    "HALF_WIDTH",
    "TARGET_MODES",
    "HALF_WIDTHS_KEY",
    "HALF_WIDTH_DEFAULTS",
    "HALF_WIDTH_UNITS",
    "half_width_choice",
    "remembered_half_widths",
    "HALF_WIDTH_COLUMN",
    "half_width_table",
    "render_half_width",
    # budget
    "on_total_change",
    "budget_sliders",
    "budget_frame",
    "render_budget",
    # risk
    "DEPLOYMENT_COLUMNS",
    "DEPLOYMENT_COLUMN_CONFIG",
    "risk_controls",
    "render_risk",
    # exports
    "plan_memo",
    "script_settings",
    "release_plan_download",
]
