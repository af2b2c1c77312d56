"""Which epsilon a real release of planned statistics starts from.

The accuracy-first plan's epsilon of a statistic is the smallest that meets its target **on the data it was solved
on**: a function of those records. Solved on synthetic or public planning data it is a public choice and may start
a release (rounded up to the field's precision, so the release never has less epsilon than planned); solved on a
confidential file it is not a DP output, so copying it into a release (or a plan file, or a record) would publish a
number computed from the records: such an epsilon never pre-fills a release, which starts from the budget-first
split instead (a public split of a public total). An unknown source counts as confidential.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ..validation import DPInputError, check_epsilon

__all__ = ["EPSILON_PRECISION", "round_up", "release_epsilons"]

#: the precision of a release's epsilon fields (4 decimals)
EPSILON_PRECISION = 1e-4


def round_up(value: float, precision: float = EPSILON_PRECISION) -> float:
    """``value`` rounded up to ``precision`` (a release never has less epsilon than the plan it starts from)."""
    scale = round(1.0 / precision)
    return math.ceil(float(value) * scale - 1e-9) / scale


def release_epsilons(
    kinds: Sequence[str],
    planned: Mapping[str, float] | None,
    split: Mapping[str, float],
    *,
    planned_on_confidential: bool | None,
    default: float = 0.1,
) -> dict[str, float]:
    """The epsilon each statistic of ``kinds`` starts a release from: the accuracy-first plan's (``planned``, kind ->
    smallest epsilon), rounded up to :data:`EPSILON_PRECISION`, when that plan was solved on public or synthetic
    data (``planned_on_confidential`` False); else the budget-first ``split`` (``default`` for a kind it lacks).
    ``planned_on_confidential`` None (the source of the plan is unknown) counts as confidential."""
    confidential = planned_on_confidential is not False
    start = {} if confidential or not planned else {k: check_epsilon(v) for k, v in planned.items()}
    out = {}
    for kind in kinds:
        if not isinstance(kind, str):
            raise DPInputError(f"a statistic kind is a name, got {kind!r}")
        out[kind] = round_up(start.get(kind, split.get(kind, default)))
    return out
