"""Argument checks shared by every dpcore module.

Every check raises :class:`DPInputError` (a ``ValueError``) or ``TypeError`` with a message a
user can act on. Pages catch ``ValueError`` and show the message with ``st.error``; they never
show a traceback. Functions here never return NaN silently.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, SupportsInt, cast

import numpy as np

__all__ = [
    "DPInputError",
    "NotAnIntegerError",
    "as_generator",
    "check_epsilon",
    "check_delta",
    "check_positive",
    "check_finite",
    "check_probability",
    "check_gamma",
    "check_int",
    "check_bounds",
    "as_finite_array",
]


MAX_EPSILON = 1e6  # beyond this, e^epsilon overflows in some formulas and privacy is void anyway


from .errors import DPInputError, NotAnIntegerError  # noqa: E402 (re-exported: their home is dpcore.errors)
from .rng import as_generator  # noqa: E402


def _as_real(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        # allow 0-d numpy arrays
        if isinstance(value, np.ndarray) and value.ndim == 0 and np.issubdtype(value.dtype, np.number):
            value = value.item()
        else:
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def check_finite(value: Any, name: str) -> float:
    """A finite real number."""
    v = _as_real(value, name)
    if not math.isfinite(v):
        raise DPInputError(f"{name} must be a finite number, got {v}")
    return v


def check_positive(value: Any, name: str, *, allow_zero: bool = False) -> float:
    """A finite number > 0 (or >= 0 with ``allow_zero``)."""
    v = check_finite(value, name)
    if v < 0 or (v == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise DPInputError(f"{name} must be {bound}, got {v:g}")
    return v


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Privacy parameter epsilon: finite and > 0 (epsilon = 0 would need infinite noise)."""
    v = _as_real(epsilon, name)
    if math.isnan(v):
        raise DPInputError(f"{name} must be a number > 0, got NaN")
    if v <= 0:
        raise DPInputError(f"{name} must be > 0 (epsilon = 0 means infinite noise), got {v:g}")
    if not math.isfinite(v):
        raise DPInputError(f"{name} must be finite (epsilon = inf means no privacy), got {v}")
    if v > MAX_EPSILON:
        raise DPInputError(
            f"{name} = {v:g} is above {MAX_EPSILON:g}: such an epsilon gives no privacy at all and is not supported"
        )
    return v


def check_delta(delta: Any, name: str = "delta", *, allow_zero: bool = False) -> float:
    """Privacy parameter delta in (0, 1) (or [0, 1) with ``allow_zero``)."""
    v = check_finite(delta, name)
    if v >= 1 or v < 0 or (v == 0 and not allow_zero):
        lo = "[0" if allow_zero else "(0"
        raise DPInputError(f"{name} must be in {lo}, 1), got {v:g}")
    return v


def check_probability(p: Any, name: str, *, open_interval: bool = True) -> float:
    """A probability in (0, 1) (or [0, 1] with ``open_interval=False``)."""
    v = check_finite(p, name)
    if open_interval and not 0 < v < 1:
        raise DPInputError(f"{name} must be strictly between 0 and 1, got {v:g}")
    if not open_interval and not 0 <= v <= 1:
        raise DPInputError(f"{name} must be between 0 and 1, got {v:g}")
    return v


def check_gamma(gamma: Any) -> float:
    """The shape gamma > 1 of the generalized Cauchy noise (its density 1/(1+|z|^gamma) is integrable only then)."""
    v = check_finite(gamma, "gamma")
    if v <= 1:
        raise DPInputError(f"gamma must be > 1 (the noise density 1/(1+|z|^gamma) needs it), got {v:g}")
    return v


def check_int(value: Any, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (numpy ints and integral floats such as 10.0 accepted) within [minimum, maximum].
    Anything else (2.5, NaN, a string) raises :class:`NotAnIntegerError`: never truncated by ``int()``."""
    if isinstance(value, bool):
        raise NotAnIntegerError(f"{name} must be an integer, got bool")
    if isinstance(value, (Integral, np.integer)):
        v = int(value)
    elif isinstance(value, (Real, np.floating)) and math.isfinite(float(value)) and float(value).is_integer():
        v = int(cast(SupportsInt, value))  # typeshed's numbers.Real declares no __int__ (every Real has one)
    else:
        raise NotAnIntegerError(f"{name} must be an integer (a whole number), got {value!r}")
    if minimum is not None and v < minimum:
        raise DPInputError(f"{name} must be >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise DPInputError(f"{name} must be <= {maximum}, got {v}")
    return v


def check_bounds(
    lower: Any, upper: Any, *, lower_name: str = "lower", upper_name: str = "upper"
) -> tuple[float, float]:
    """Public bounds with lower < upper, both finite."""
    lo = check_finite(lower, lower_name)
    hi = check_finite(upper, upper_name)
    if not lo < hi:
        raise DPInputError(f"{lower_name} must be smaller than {upper_name}, got {lo:g} and {hi:g}")
    return lo, hi


def as_finite_array(x: Any, name: str = "x", *, min_size: int = 1) -> np.ndarray:
    """A 1-D float array with only finite values and at least ``min_size`` entries."""
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DPInputError(f"{name} must contain only numbers ({exc})") from None
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise DPInputError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size < min_size:
        raise DPInputError(f"{name} needs at least {min_size} values, got {arr.size}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise DPInputError(f"{name} has {int(bad.sum())} missing or infinite values; drop or impute them first")
    return arr
