"""Plain data for the view results' ``to_dict()`` (what a generated script prints as JSON)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["to_plain"]


def to_plain(value: Any) -> Any:
    """``value`` as plain Python data: mappings -> dicts with string keys, numpy arrays, lists and tuples
    -> lists, numpy scalars -> int/float/bool; anything else unchanged."""
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return [to_plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
