"""Figure-spec helpers shared by the view tests (``from support.figures import assert_same_spec``)."""

from __future__ import annotations

from typing import Any


def assert_same_spec(built: Any, fast: Any, path: str = "figure") -> None:
    """Recursive equality of two figure specs, types included (an int where plotly wrote a float fails):
    the spec a page builds directly against the one plotly's builder gives."""
    if isinstance(built, dict):
        assert isinstance(fast, dict) and built.keys() == fast.keys(), (path, built.keys(), fast)
        for key in built:
            assert_same_spec(built[key], fast[key], f"{path}.{key}")
    elif isinstance(built, (list, tuple)):
        assert isinstance(fast, (list, tuple)) and len(built) == len(fast), (path, built, fast)
        for index, (a, b) in enumerate(zip(built, fast, strict=True)):
            assert_same_spec(a, b, f"{path}[{index}]")
    else:
        assert type(built) is type(fast) and built == fast, (path, built, fast)
