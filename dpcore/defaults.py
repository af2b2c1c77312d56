"""One set of public defaults shared by every page, the planner and the generated scripts.

These are *public* inputs chosen without looking at any data set.

* ``INCOME_LOWER = 0`` and ``INCOME_UPPER = 1,000,000``: the Gini page used 2,000,000 and the planner
  1,000,000, so the same data gave two error figures (the Gini's smooth sensitivity grows with U:
  the error roughly halves from U = 2M to 1M). 1,000,000 is chosen: it is above the ACS 2019 and
  CPS personal-income top codes' typical range for all but a fraction of a percent of persons
  (clipping them to U moves the Gini by less than the noise at ε <= 1, and the page shows how many
  records were clipped), and it is a round public figure an agency can state without data.
* ``MEAN_CLIP_UPPER = 500,000``: the clip range of group means in the planner and on the
  group-means page for the sidebar's data set.
* ``GINI_GAMMA = 2`` (the papers' Cauchy-like tail) with the certified ``"tight"`` calibration.
* ``GINI_EPSILON_STEPS``: the Gini page's ε slider, 0.05 to 5 in steps roughly even on a log scale (the shipped
  interval splits and the app's start-up calibrations cover exactly these).
* ``PSEO_BINS``: the Census PSEO's 21 bins (Table 1), :data:`dpcore.percentiles.PSEO_BIN_EDGES`.
* ``ANSWER_TARGET_GINI = 0.01`` (one Gini point) reached ``ANSWER_CONFIDENCE = 0.9`` of the time:
  the target the answer sentence of the Gini page recommends an ε for, until the user types another.
"""

from __future__ import annotations

INCOME_LOWER: float = 0.0
INCOME_UPPER: float = 1_000_000.0
MEAN_CLIP_UPPER: float = 500_000.0
GINI_GAMMA: float = 2.0
GINI_CALIBRATION: str = "tight"
GINI_EPSILON_STEPS: tuple[float, ...] = (
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.4,
    0.5,
    0.75,
    1.0,
    1.5,
    2.0,
    3.0,
    4.0,
    5.0,
)
PSEO_BINS: str = "pseo"
ANSWER_TARGET_GINI: float = 0.01
ANSWER_CONFIDENCE: float = 0.9

__all__ = [
    "INCOME_LOWER",
    "INCOME_UPPER",
    "MEAN_CLIP_UPPER",
    "GINI_GAMMA",
    "GINI_CALIBRATION",
    "GINI_EPSILON_STEPS",
    "PSEO_BINS",
    "ANSWER_TARGET_GINI",
    "ANSWER_CONFIDENCE",
    "available_cores",
]


def available_cores() -> int:
    """The cores this process may run on (taskset, cgroups), at least 1: the default number of noise threads
    (``dpcore.noise.secure``), percentile workers and record-fingerprint processes."""
    import os

    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(os.cpu_count() or 1, 1)
