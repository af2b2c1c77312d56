"""The ledger's exceptions, and the notes its fault messages end with.

Every fault a caller can meet is a :class:`LedgerError` (a :class:`dpcore.DPInputError`, so a ``ValueError``: the
app shows it with ``st.error``, the command line exits 2) whose message is one line naming the ledger and what to
do; the backends translate their drivers' errors into these (:mod:`dpcore.ledger.backends`).
"""

from __future__ import annotations

from ..validation import DPInputError

__all__ = [
    "PopulationError",
    "BudgetExceeded",
    "LedgerError",
    "LedgerMissing",
    "LedgerExists",
    "LedgerCorrupt",
    "LedgerUnavailable",
]


class PopulationError(DPInputError):
    """A population that is not registered, registered again with other caps, or a source that belongs to
    another population (the message names it and says what to do)."""


class BudgetExceeded(DPInputError):
    """A charge that would bring the account's spending above its cap (nothing was charged)."""


class LedgerError(DPInputError):
    """A fault of the ledger database itself (the message names the ledger and what to do)."""

    #: True when the fault came from the commit of a write transaction, whose outcome is then unknown until
    #: someone looks (:meth:`Account.charge` does); a fault before the commit wrote nothing
    at_commit = False


class LedgerMissing(LedgerError):
    """No ledger where one was expected (``create=False``): the file or the tables do not exist."""


class LedgerExists(LedgerError):
    """:func:`init_ledger` on a location that already holds a ledger (or any file)."""


class LedgerCorrupt(LedgerError):
    """The location holds something that is not an intact ledger: 0 bytes, not SQLite, truncated,
    damaged, tables missing, a newer schema. Never taken as a new ledger (that would reset the caps)."""


class LedgerUnavailable(LedgerError):
    """The ledger exists but cannot be used now: read-only, locked too long, disk full, server down."""


#: how a missing ledger is created (formatted with the ledger's URL)
INIT_HINT = (
    "create it with 'python -m dpcore ledger init {url}' (or the release command's --init-ledger), "
    "or point DPCORE_LEDGER_URL / --ledger at the existing ledger"
)
#: what a fault before the commit of a transaction means: the database rolled it back
NOTHING_WRITTEN_NOTE = "Nothing was written to the ledger by this attempt: nothing was charged or released."
#: what a fault at the commit means when nobody could look afterwards (Account.charge looks, and says which)
CHARGE_NOTE = (
    "Nothing was revealed; the fault came at the commit, so the charge may or may not have been recorded: "
    "check the archive before releasing again."
)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's text (its type's name when it has none): messages are one line."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def outcome_note(at_commit: bool) -> str:
    """The note a fault message ends with: the outcome is unknown at the commit, else nothing was written."""
    return CHARGE_NOTE if at_commit else NOTHING_WRITTEN_NOTE


def mark_at_commit(fault: LedgerError, at_commit: bool) -> LedgerError:
    """Mark a fault raised by the commit itself (the only moment a transaction's outcome is unknown)."""
    fault.at_commit = at_commit
    return fault
