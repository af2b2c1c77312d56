"""Released numbers as the card prints them: honest digits (no digit finer than the noise allows)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import intervals as intervals_lib

# ---------------------------------------------------------------------------------------------
# Numbers, rounded honestly
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CardNumber:
    """One released number as the card shows it.

    ``value``: the released value rounded to ``step`` (None when not finite: an undefined ratio); ``lower`` /
    ``upper``: the interval rounded outwards to the same step (None without an interval); ``step``: the public
    rounding step (None when the value is shown as the table has it: no interval to set the digits);
    ``text`` / ``interval_text``: what the card prints."""

    value: float | None
    lower: float | None
    upper: float | None
    step: float | None
    text: str
    interval_text: str


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-12))


def _fmt(x: float, decimals: int) -> str:
    return f"{x + 0.0:,.{decimals}f}"  # + 0.0: never "-0"


def as_float(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _exact_decimals(*xs: float) -> int:
    """The fewest decimals (at most 12) that write every x exactly: how a number already rounded to a public grid
    is printed, without adding or dropping a digit."""
    for d in range(13):
        if all(abs(round(x, d) - x) <= 1e-9 * max(1.0, abs(x)) for x in xs):
            return d
    return 12


def _one_sided(lo: float | None, hi: float | None, text: Any) -> str:
    if lo is not None and hi is None:
        return f"{text(lo)} or more"
    if hi is not None and lo is None:
        return f"up to {text(hi)}"
    return "not available"


def card_number(
    value: Any, lower: Any = None, upper: Any = None, *, integer: bool = False, published: bool = False
) -> CardNumber:
    """``value`` (and its interval [lower, upper]) as the card prints it.

    ``published``: the release already rounded the value and its interval to public grids (its tables carry
    honest digits, :mod:`dpcore.published`): the card prints them exactly as the table has them, with the fewest
    decimals that write them, and never rounds them again (another grid would change a published number).

    Otherwise, with a finite interval of positive width: the step is :func:`dpcore.intervals.honest_grid` (1, 2
    or 5 x 10^k between width/50 and width/20), the value is rounded to it
    (:func:`~dpcore.intervals.round_to_grid`) and the interval outwards (:func:`~dpcore.intervals.round_interval`,
    so rounding never loses coverage): the card never shows a digit the noise makes meaningless.
    Post-processing of published numbers only.

    Without an interval (or a zero-width one): whole numbers (``integer``, or a value that is whole) as they
    are, others to 6 significant digits; a one-sided interval (an open top bin) prints as "X or more"."""
    v, lo, hi = as_float(value), as_float(lower), as_float(upper)
    if v is None:
        return CardNumber(None, None, None, None, "undefined", "")
    two_sided = lo is not None and hi is not None and hi > lo
    if published:
        ends = [x for x in (lo, hi) if x is not None]
        d = _exact_decimals(v, *ends)
        step = intervals_lib.honest_grid(lo, hi) if two_sided and lo is not None and hi is not None else None
        interval = (
            f"{_fmt(lo, d)} to {_fmt(hi, d)}"
            if lo is not None and hi is not None
            else _one_sided(lo, hi, lambda x: _fmt(x, d))
            if ends
            else ""
        )
        return CardNumber(v, lo, hi, step, _fmt(v, d), interval)
    if two_sided and lo is not None and hi is not None:
        step = intervals_lib.honest_grid(lo, hi)
        d = _decimals(step)
        rv = float(intervals_lib.round_to_grid(v, step))
        rlo, rhi = intervals_lib.round_interval(lo, hi, step)
        return CardNumber(rv, rlo, rhi, step, _fmt(rv, d), f"{_fmt(rlo, d)} to {_fmt(rhi, d)}")
    text = f"{int(round(v)):,}" if integer or float(v).is_integer() else f"{v:,.6g}"
    interval = _one_sided(lo, hi, lambda x: f"{x:,.6g}") if (lo is None) != (hi is None) else ""
    return CardNumber(v, lo, hi, None, text, interval)
