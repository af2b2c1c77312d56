"""What margins cost and give, for the chosen epsilon: the view of the planner and the Percentiles page.

A percentiles statistic with ``margins`` (``docs/plan_format.md``) measures every level of its hierarchy (the
cells, each margin, the total) with a share of its epsilon, then makes them consistent. Per level,
:func:`margins_view` gives the root mean square error of one bin count three ways, exactly (no simulation;
:func:`dpcore.consistency.level_errors`):

* **alone**: the level released on its own with the whole epsilon (what the table would cost without margins);
* **measured**: the level's own measurement at its share (releasing the levels as separate statistics);
* **consistent**: the least-squares estimate after consistency (never above "measured": Gauss-Markov); the
  published non-negative integers are within 1.05x of it (measured on PSEO's trees, ``docs/release_noise.md``).

The price of margins is consistent / alone (no split makes it 1.05x at every level: ``dpcore.consistency``); what
they give is tables that add up, non-negative, and consistent / measured <= 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import consistency
from ..validation import DPInputError, check_epsilon, check_int

__all__ = ["MarginsView", "margins_view", "pseo_margins_view", "SPLITS"]

#: how epsilon is split over the levels: evenly (the plan's default) or the minimax split (the worst level's
#: error as small as it can be: consistency.balanced_split; a plan writes its shares as epsilon_split)
SPLITS = ("even", "balanced")

#: the PSEO tree of the Percentiles page: institution x degree x cohort cells (aggregation level 44) with the
#: state margin and the nation
PSEO_AGG_LEVEL = 44
PSEO_BY = ("state", "institution", "degree_level", "cohort")


@dataclass(frozen=True)
class MarginsView:
    """Per level (cells first): its label, its number of nodes, its share of epsilon and the RMSE of one bin count
    alone (whole epsilon, the same for every level), measured (its share) and consistent (least squares)."""

    epsilon: float
    split: str
    labels: tuple[str, ...]
    nodes: tuple[int, ...]
    shares: tuple[float, ...]
    alone: float
    measured: tuple[float, ...]
    consistent: tuple[float, ...]

    @property
    def cost(self) -> tuple[float, ...]:
        """consistent / alone per level: what publishing every level costs each one."""
        return tuple(c / self.alone for c in self.consistent)

    @property
    def gain(self) -> tuple[float, ...]:
        """consistent / measured per level: what consistency gives back (<= 1)."""
        return tuple(c / m for c, m in zip(self.consistent, self.measured, strict=True))

    def rows(self) -> list[dict[str, Any]]:
        """One row per level, for a table."""
        return [
            {
                "level": label,
                "nodes": n,
                "epsilon": share,
                "alone (whole ε)": self.alone,
                "measured (its share)": m,
                "consistent": c,
                "consistent ÷ alone": c / self.alone,
                "consistent ÷ measured": c / m,
            }
            for label, n, share, m, c in zip(
                self.labels, self.nodes, self.shares, self.measured, self.consistent, strict=True
            )
        ]

    @property
    def sentence(self) -> str:
        """The view in one sentence (what the page says above its table)."""
        low, high = f"{min(self.cost):.1f}", f"{max(self.cost):.1f}"
        cost = f"{low}x" if low == high else f"{low}x to {high}x"
        gain_low, gain_high = f"{1 - max(self.gain):.0%}", f"{1 - min(self.gain):.0%}"
        gain = gain_low if gain_low == gain_high else f"{gain_low} to {gain_high}"
        return (
            f"Publishing these {len(self.labels)} levels at ε = {self.epsilon:g} ({self.split} split) makes every "
            f"table add up, with non-negative whole counts. Each level's bins err {cost} as much as that level "
            f"released alone with the whole ε (the price: the ε is shared), and the least squares over the "
            f"levels takes {gain} off the error of measuring each level at its share (the published whole counts "
            "gain more where counts are small)."
        )

    @property
    def plan_line(self) -> str:
        """The split as a plan writes it (the statistic's ``epsilon_split``: weights, cells first)."""
        return "epsilon_split = [" + ", ".join(f"{s / self.epsilon:.4g}" for s in self.shares) + "]"

    def to_dict(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "split": self.split,
            "plan_line": self.plan_line,
            "levels": self.rows(),
            "sentence": self.sentence,
        }


def _shares(hierarchy: consistency.Hierarchy, epsilon: float, split: str, sensitivity: float) -> np.ndarray:
    if split not in SPLITS:
        raise DPInputError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    if split == "balanced":
        return consistency.balanced_split(hierarchy, epsilon, sensitivity=sensitivity)
    return consistency.split_epsilon(epsilon, hierarchy.levels)


def margins_view(
    hierarchy: consistency.Hierarchy,
    epsilon: float,
    *,
    labels: Sequence[str] | None = None,
    split: str = "even",
    rows_per_person: int = 1,
) -> MarginsView:
    """Every level's bin error alone, measured at its share and consistent, for ``hierarchy`` released at
    ``epsilon`` (the histogram mechanism: noise scale 2m/epsilon_l under replace-one)."""
    if not isinstance(hierarchy, consistency.Hierarchy):
        raise TypeError(f"hierarchy must be a dpcore.consistency.Hierarchy, got {type(hierarchy).__name__}")
    epsilon = check_epsilon(epsilon)
    sensitivity = 2.0 * check_int(rows_per_person, "rows per person", minimum=1)
    names = list(labels) if labels is not None else [f"level {i}" for i in range(hierarchy.levels)]
    if len(names) != hierarchy.levels:
        raise DPInputError(f"need one label per level ({hierarchy.levels}), got {len(names)}")
    shares = _shares(hierarchy, epsilon, split, sensitivity)
    errors = consistency.level_errors(hierarchy, list(sensitivity / shares))
    alone = math.sqrt(consistency.discrete_laplace_variance(sensitivity / epsilon))
    return MarginsView(
        epsilon,
        split,
        tuple(str(n) for n in names),
        tuple(int(s) for s in hierarchy.sizes),
        tuple(float(s) for s in shares),
        alone,
        errors.measured,
        errors.least_squares,
    )


def pseo_tree() -> tuple[consistency.Hierarchy, tuple[str, ...]] | None:
    """The real PSEO table's tree of the Percentiles page (cells of aggregation level 44, the state margin, the
    nation) and its levels' labels; None when the table is not on this machine."""
    from .percentiles import pseo_cells

    cells = pseo_cells(PSEO_AGG_LEVEL)
    if cells is None:
        return None
    tree = consistency.hierarchy_from_keys(cells, PSEO_BY, [["state"], []])
    return tree, ("cells (institution × degree × cohort)", "state", "nation")


def pseo_margins_view(epsilon: float, *, split: str = "even") -> MarginsView | None:
    """:func:`margins_view` of the real PSEO table's tree (:func:`pseo_tree`); None without the table."""
    found = pseo_tree()
    if found is None:
        return None
    tree, labels = found
    return margins_view(tree, epsilon, labels=labels, split=split)
