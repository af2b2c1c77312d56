"""The exceptions every dpcore module raises, in a module that imports nothing of dpcore: the lowest layer
(``dpcore.rng`` and ``dpcore.validation`` both use them; ``dpcore.validation`` re-exports them)."""

from __future__ import annotations

__all__ = ["DPInputError", "NotAnIntegerError"]


class DPInputError(ValueError):
    """A bad argument or bad data given to a dpcore function (the message says what to change)."""


class NotAnIntegerError(DPInputError, TypeError):
    """A count, size or seed given something that is not an integer (2.5, NaN, inf, a string, None):
    refused by :func:`dpcore.validation.check_int`, never truncated. A :class:`DPInputError` (so a
    ``ValueError``) and, as ``check_int`` raised before, a ``TypeError``: callers catching either keep working."""
