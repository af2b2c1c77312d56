"""Honest digits: the public step a released value is rounded to, and its interval rounded outwards."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..validation import (
    DPInputError,
    check_finite,
    check_positive,
)

__all__ = ["honest_grid", "round_to_grid", "round_interval"]


# Honest digits
# ---------------------------------------------------------------------------------------------


def honest_grid(lower: float, upper: float) -> float:
    """A public rounding step for a value whose interval is [lower, upper]: the largest 1, 2 or 5 x 10^k that is
    <= width/20, so between width/50 and width/20 (the noise makes finer digits meaningless; coarser would move
    the value by a visible share of its interval). Computed from the published interval: post-processing.

    Example:

    >>> honest_grid(54_200.0, 55_180.0)  # width 980: a step of 20 (980/20 = 49 -> 20)
    20.0
    """
    lo, hi = check_finite(lower, "lower"), check_finite(upper, "upper")
    if not hi > lo:
        raise DPInputError(f"an interval needs lower < upper to set a rounding step, got [{lo:g}, {hi:g}]")
    target = (hi - lo) / 20.0
    power = 10.0 ** math.floor(math.log10(target))
    for mult in (5.0, 2.0, 1.0):
        if mult * power <= target * (1 + 1e-12):
            return mult * power
    return power  # pragma: no cover - power <= target always


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-12))


def round_to_grid(value: Any, step: float) -> Any:
    """``value`` rounded to the nearest multiple of ``step`` (scalars stay floats; arrays stay arrays), written with
    no more decimals than the step has (so 54691.12429 with step 500 is 54500.0, not 54499.99999).

    Example:

    >>> round_to_grid(54691.12429423175, 20.0)
    54700.0
    """
    step = check_positive(step, "step")
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise DPInputError("values to round must be finite")
    out = np.round(np.round(arr / step) * step, _decimals(step))
    return float(out) if out.ndim == 0 else out


def round_interval(lower: float, upper: float, step: float) -> tuple[float, float]:
    """The interval's ends rounded outwards to the grid (lower down, upper up), so rounding never loses
    coverage."""
    step = check_positive(step, "step")
    lo, hi = check_finite(lower, "lower"), check_finite(upper, "upper")
    d = _decimals(step)
    return (
        float(np.round(math.floor(lo / step + 1e-9) * step, d)),
        float(np.round(math.ceil(hi / step - 1e-9) * step, d)),
    )
