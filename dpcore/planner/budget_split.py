"""Budget first: split a total epsilon by weights with locks, and rebalance after one statistic moved."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..validation import (
    DPInputError,
    as_finite_array,
    check_epsilon,
    check_int,
    check_positive,
)

__all__ = ["split_budget", "rebalance"]


def split_budget(total: float, weights: Sequence[float], locked: dict[int, float] | None = None) -> np.ndarray:
    """Split ``total`` epsilon: locked statistics keep their value, the rest is shared in proportion to
    ``weights``. Raises DPInputError when the locks use more than the total."""
    total = check_epsilon(total, "total epsilon")
    w = as_finite_array(weights, "weights")
    if np.any(w < 0):
        raise DPInputError("weights must be >= 0")
    locked = dict(locked or {})
    out = np.zeros(w.size)
    used = 0.0
    for i, v in locked.items():
        i = check_int(i, "locked index", minimum=0, maximum=w.size - 1)
        out[i] = check_epsilon(v, f"locked epsilon of statistic {i + 1}")
        used += out[i]
    free = [i for i in range(w.size) if i not in locked]
    left = total - used
    if not free and abs(left) > 1e-9 * total:
        raise DPInputError("every statistic is locked: unlock one so the total can change")
    if left < -1e-12 * total:
        raise DPInputError(f"the locked statistics use {used:.4g}, more than the total {total:.4g}")
    if free:
        if left <= 0:
            raise DPInputError("the locked statistics use the whole budget: unlock one or raise the total")
        wf = w[free]
        if wf.sum() <= 0:
            raise DPInputError("the unlocked statistics all have weight 0")
        out[free] = left * wf / wf.sum()
        if np.any(out[free] == 0):
            raise DPInputError("a statistic with weight 0 would get epsilon 0 (infinite noise): give it a weight > 0")
    return out


def rebalance(
    current: Sequence[float],
    index: int,
    new_value: float,
    locked: Sequence[int] = (),
    total: float | None = None,
    floor: float = 0.0,
) -> np.ndarray:
    """Set statistic ``index`` to ``new_value`` and re-spread the rest of ``total`` (default: the current
    sum) over the other unlocked statistics in proportion to their current epsilons; locked ones keep
    theirs. The moved value is capped so every other unlocked statistic keeps at least ``floor``
    (and a positive share)."""
    cur = as_finite_array(current, "current epsilons")
    if np.any(cur <= 0):
        raise DPInputError("every current epsilon must be > 0")
    index = check_int(index, "index", minimum=0, maximum=cur.size - 1)
    new_value = check_epsilon(new_value, "new epsilon")
    total = float(cur.sum()) if total is None else check_epsilon(total, "total epsilon")
    locked_set = {check_int(i, "locked index", minimum=0, maximum=cur.size - 1) for i in locked} - {index}
    others = [i for i in range(cur.size) if i != index and i not in locked_set]
    fixed = float(sum(cur[i] for i in locked_set))
    out = cur.copy()
    if not others:
        # nothing to rebalance against: the moved statistic takes whatever the locks leave
        out[index] = total - fixed
        if out[index] <= 0 or out[index] < floor:
            raise DPInputError("the locked statistics use (almost) the whole budget: unlock one or raise the total")
        return out
    room = total - fixed
    floor = check_positive(floor, "floor", allow_zero=True)
    k = len(others)
    if room <= floor * (k + 1):
        raise DPInputError("the locked statistics leave too little budget to move this one")
    new_value = min(max(new_value, floor), room - floor * k, room * (1 - 1e-3))
    out[index] = new_value
    share = cur[others] / cur[others].sum()
    out[others] = floor + (room - new_value - floor * k) * share
    return out
