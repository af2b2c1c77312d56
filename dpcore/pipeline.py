"""The one release transaction: check, charge, draw, record.

:func:`release` is called by every real release: the command line's (:func:`dpcore.engines.execute.run_plan`,
after the engine's aggregation; the app's Release mode runs the same plan through it) and
:func:`dpcore.release.make_release` (planned statistics). Its order is the safety argument, written once:

1. **check**, from public inputs only: the account is a durable ledger account (:class:`dpcore.ledger.Account`:
   an in-memory :class:`dpcore.budget.Ledger` is no release); the noise comes from the secure samplers (a
   caller's seeded generator would let anyone regenerate and subtract the noise); every mechanism that may draw
   is registered (:class:`dpcore.mechanisms.Drawer`: no object that merely has a ``draw`` or ``release``
   method) and the charged cost covers their composed cost; the cap holds (:meth:`Account.would_exceed`);
2. **charge** the total in one transaction that re-checks the cap under the account's lock
   (:meth:`dpcore.ledger.Account.charge`), with the release record (everything public, no noisy number), while
   SIGINT and SIGTERM are held: racing sessions cannot overspend, and an interrupt lands before the charge
   (nothing spent) or after it (spent, and said so);
3. **draw** through the release's :class:`dpcore.mechanisms.Drawer` only (the command line starts drawing beside
   the source's fingerprint, before the charge, but nothing drawn is used before it);
4. **deliver** (write the tables, build the records) and **record**: the released output is attached to the
   charged entry (:meth:`dpcore.ledger.Account.attach_result`, which retries and then journals the mark
   locally); a ledger that can keep no mark leaves a warning, never an undelivered release.

A failure after the charge keeps the charge (a lost release is acceptable, a lost charge never) and raises
:class:`ReleaseNotDelivered` (or the caller's error), whose text says the epsilon was spent;
:class:`InterruptedAfterCharge` on SIGINT/SIGTERM.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from . import budget
from .mechanisms import Drawer
from .validation import DPInputError

__all__ = [
    "release",
    "Released",
    "ChargeNotice",
    "ReleaseNotDelivered",
    "InterruptedAfterCharge",
    "SEEDED_REAL_RELEASE",
    "signals_held",
]

T = TypeVar("T")

#: the refusal of a real release whose noise a caller could regenerate
SEEDED_REAL_RELEASE = (
    "refused: {rng} would make this release reproducible from the caller's generator, so the noise could be "
    "regenerated and subtracted (the true values exactly, whatever epsilon is charged). A release charged to a "
    "ledger account always draws from the secure sampler: leave rng=None. To explore with seeded noise, use "
    "dpcore.release.simulate_release(items, rng) or statistic.simulate_draw(epsilon, rng) (no ledger; not a "
    "release). Nothing was charged or released."
)


@dataclass(frozen=True)
class ChargeNotice:
    """A charge that is on the ledger: what a failure after it must say (the epsilon is spent whatever follows)."""

    epsilon: float
    delta: float
    account: str
    entry_id: int

    def lost(self, reason: str) -> str:
        spent = f"epsilon = {self.epsilon:g}" + (f" (delta = {self.delta:.3g})" if self.delta > 0 else "")
        return (
            f"{spent} was charged to account {self.account!r} (ledger entry {self.entry_id}) and nothing was "
            f"written: {reason}"
        )


class ReleaseNotDelivered(DPInputError):
    """A failure after the charge: the epsilon is spent (the charge stands: a lost release is acceptable, a lost
    charge never) and nothing was delivered. ``str()`` is the one line that says both."""

    def __init__(self, notice: ChargeNotice, reason: str) -> None:
        super().__init__(notice.lost(reason))
        self.notice, self.reason = notice, reason


class InterruptedAfterCharge(KeyboardInterrupt):
    """SIGINT/SIGTERM after the charge: still an interrupt for the caller (a ``KeyboardInterrupt``), and its text
    says that the epsilon was spent. ``signal_number`` is the signal that stopped the run; ``written_to`` is
    where the release was already delivered (then only the ledger's revealed mark is missing: the entry still
    counts in full)."""

    def __init__(self, notice: ChargeNotice, signal_number: int, written_to: Path | None = None) -> None:
        name = signal.Signals(signal_number).name
        if written_to is None:
            text = notice.lost(f"interrupted by {name}")
        else:
            text = (
                f"{name} after the release was written to {str(written_to)!r}: epsilon = "
                f"{notice.epsilon:g} is charged to account {notice.account!r} (ledger entry {notice.entry_id}), "
                "which may not be marked revealed"
            )
        super().__init__(text)
        self.notice, self.signal_number, self.written_to = notice, signal_number, written_to


@dataclass(frozen=True)
class Released(Generic[T]):
    """What :func:`release` delivered: the charged entry's id, the drawn output (the caller's), and None or one
    line saying that the ledger could not mark the entry revealed (the release is delivered and charged)."""

    entry_id: int
    output: T
    link_warning: str | None = None
    #: the ledger's answer to the revealed mark (``dpcore.ledger.ResultLink``), None when it raised
    link: Any = None


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the charge commits, then deliver them.

    An interrupt inside the charge's transaction would leave the caller not knowing whether epsilon was spent
    (the commit may or may not have happened); held, it lands either before the charge (nothing spent) or after
    it (spent, and said so). Python signal handlers run in the main thread only: elsewhere nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(sig)
        if handler is None:  # installed outside Python: leave it alone
            continue
        previous[sig] = signal.signal(sig, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])


def _no_phase(name: str) -> contextlib.AbstractContextManager[Any]:
    return contextlib.nullcontext()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text or type(exc).__name__)[:400]


def _covers(total: budget.PrivacyCost, drawer: Drawer) -> bool:
    """Whether ``total`` (what is charged) covers the composed cost of every mechanism the release may draw with
    (basic composition: the epsilons and the deltas add; a zCDP cost is compared by its rho)."""
    costs = [m.privacy_cost() for m in drawer.mechanisms]
    if not costs:
        return True
    if total.kind == "zcdp" or any(c.kind == "zcdp" for c in costs):
        composed = budget.compose_sequential(costs)
        return composed.kind == total.kind and composed.rho <= total.rho * (1 + 1e-9)
    eps = sum(c.epsilon for c in costs)
    delta = sum(c.delta for c in costs)
    return eps <= total.epsilon * (1 + 1e-9) and delta <= total.delta * (1 + 1e-9) + 1e-300


# the release's steps in order (check, charge, draw, deliver, record): the order is the safety argument, and each
# step's failure says what was spent
def release(
    account: Any,
    *,
    label: str,
    cost: budget.PrivacyCost,
    record: Any,
    drawer: Drawer,
    draw: Callable[[], T],
    deliver: Callable[[T, int], tuple[Any, Path | None]],
    account_name: str | None = None,
    undelivered: Callable[[ChargeNotice, Exception], BaseException] | None = None,
    phase: Callable[[str], contextlib.AbstractContextManager[Any]] = _no_phase,
) -> Released[T]:
    """Check, charge, draw, deliver and record one release (module docstring).

    ``account``: the durable :class:`dpcore.ledger.Account` that pays; ``label`` names the charge; ``cost`` is
    the release's total (sequential composition over its statistics), which must cover the composed cost of the
    ``drawer``'s mechanisms; ``record``: the release record charged with it (public inputs only). ``draw()``
    returns the drawn output (drawing through ``drawer``, or taking what was drawn through it beside an earlier
    step); ``deliver(output, entry_id)`` writes or builds what is released and returns ``(result, where)``:
    ``result`` is attached to the entry, ``where`` names where it was written (None: nowhere on disk).
    ``undelivered(notice, exc)``: the error raised for a failure after the charge (default
    :class:`ReleaseNotDelivered`); ``phase(name)``: a context manager around each step ("charge", "draw",
    "deliver", "record"), for progress lines and timings.
    """
    from . import ledger

    if not isinstance(account, ledger.Account):
        raise TypeError(
            "a release is paid from a durable ledger account (dpcore.ledger.open_ledger(...).account(...) or "
            f".population(...)), got {type(account).__name__}; an in-memory budget is no release: explore with "
            "dpcore.release.simulate_release"
        )
    if not isinstance(drawer, Drawer):
        raise TypeError(f"a release draws through a dpcore.mechanisms.Drawer, got {type(drawer).__name__}")
    if not drawer.real:
        raise DPInputError(SEEDED_REAL_RELEASE.format(rng=f"rng={drawer.rng!r}"))
    if not isinstance(cost, budget.PrivacyCost):
        raise TypeError("cost must be a dpcore.budget.PrivacyCost")
    if not _covers(cost, drawer):
        raise DPInputError(
            f"refused: the release charges {cost.describe()}, less than its mechanisms cost together; nothing was "
            "charged or released"
        )
    if account.would_exceed(cost):
        raise ledger.BudgetExceeded(
            f"refused: this release costs {cost.describe()} and the account {account.display_name()!r} has "
            f"{account.describe()} (cap {account.cap.describe()}). Nothing was charged or released."
        )
    notice: ChargeNotice | None = None
    delivered_to: Path | None = None
    try:
        with phase("charge"), signals_held():
            entry = account.charge(label, cost=cost, record=record)
            notice = ChargeNotice(
                float(cost.epsilon), float(cost.delta), account_name or account.display_name(), int(entry.id)
            )
        with phase("draw"):
            output = draw()
        with phase("deliver"):
            result, delivered_to = deliver(output, int(entry.id))
        with phase("record"):
            link, warning = _mark_revealed(account, int(entry.id), result, delivered_to, notice)
    except KeyboardInterrupt as exc:
        if notice is None:
            raise
        raise InterruptedAfterCharge(
            notice, int(getattr(exc, "signal_number", signal.SIGINT)), written_to=delivered_to
        ) from exc
    except Exception as exc:
        if notice is None:
            raise
        if undelivered is not None:
            raise undelivered(notice, exc) from exc
        raise ReleaseNotDelivered(notice, _one_line(exc)) from exc
    return Released(int(entry.id), output, warning, link)


def _mark_revealed(
    account: Any, entry_id: int, result: Any, where: Path | None, notice: ChargeNotice
) -> tuple[Any, str | None]:
    """Attach the released output to the charged entry (marks it revealed); when that fails, a one-line warning.

    The release is delivered and the charge is on the ledger, so it stands whatever happens here: an entry not
    marked revealed still counts in full against the cap (the ledger never under-counts).
    :meth:`dpcore.ledger.Account.attach_result` retries, then journals the mark locally (replayed by the next
    :func:`dpcore.ledger.open_ledger`) and says where; when even the journal cannot be written it raises."""
    shown = f"written to {str(where)!r}" if where is not None else "delivered"
    try:
        link = account.attach_result(entry_id, result)
    except Exception as exc:
        return None, (
            f"the release was {shown} and epsilon = {notice.epsilon:g} is charged to account "
            f"{notice.account!r} (ledger entry {entry_id}), but the ledger could not mark the entry revealed "
            f"and no journal could keep the mark: {_one_line(exc)}"
        )
    if getattr(link, "recorded", True):
        return link, None
    return link, f"the release was {shown}; {link.message}"


def composed_cost(costs: Sequence[budget.PrivacyCost]) -> budget.PrivacyCost:
    """The sequential composition of a release's statistics' costs (what :func:`release` charges)."""
    return budget.compose_sequential(list(costs))
