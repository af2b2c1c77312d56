"""The ledger and the accounts of a release or a DP snapshot (the planner's Release mode, the private planning of
every page): the ledger opened (never created silently; lock waits said), the
identity of the data in use (an upload's record fingerprint, a demonstration account's recipe), the population an
upload's records belong to, and the rows a release puts back for a missing income."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import add_script_run_ctx, get_script_run_ctx

from dpcore import ledger as ledger_lib
from dpcore import record_fingerprint
from ui.common import guard

__all__ = [
    "lock_waits_said",
    "open_app_ledger",
    "ledger_place",
    "NoLedgerYet",
    "ledger_or_ask",
    "upload_bytes",
    "upload_population_account",
    "population_for_release",
    "is_source_fingerprint",
    "upload_records",
    "dataset_identity",
    "upload_memo",
    "upload_fingerprints",
    "missing_income_rows",
    "find_account",
    "existing_account",
    "WAIT_NOTE",
    "run_to_the_end",
    "wait_for_work_in_progress",
]

_T = TypeVar("_T")


def run_to_the_end(work: Callable[[], _T]) -> _T:
    """``work()`` run to its end even if the user clicks meanwhile; its value, or its exception raised here.

    Streamlit stops a script run at its next Streamlit call (an element drawn, a session-state write, a
    cached function's spinner) once a new click asks for a rerun, by raising an exception that no ``except
    Exception`` sees. Inside a release or a snapshot that would leave the ledger between its steps with the
    request already taken: an account created and nothing released or said (a double click on "Make the
    release", seen in the browser tests), or a charge without its outcome. The work runs in a thread that
    carries this run's context, so its Streamlit calls draw as usual (the ledger's lock-wait note), but the
    runner stops only its own script thread: the click is honoured at the script's next Streamlit call, after
    the work ended.

    With Streamlit's fast reruns (its default) a click does not wait for that call: it starts a second run of the
    session at once, beside this one, whose output is then the page's. So the work holds the session's
    :func:`_session_work_lock`, and the panels call :func:`wait_for_work_in_progress` before they read the ledger:
    the second run draws the page after the work, with its outcome (a double click on "Make the release" showed
    "0 releases so far" and no outcome, the release charged once: the second run had read the ledger during it)."""
    done: dict[str, Any] = {}
    lock = _session_work_lock()

    def target() -> None:
        try:
            with lock:
                done["value"] = work()
        except BaseException as exc:  # handed to the script thread, which raises it
            done["error"] = exc

    thread = threading.Thread(target=target, name="dpcore-release", daemon=True)
    add_script_run_ctx(thread, get_script_run_ctx())
    thread.start()
    thread.join()
    if "error" in done:
        raise done["error"]
    return done["value"]


_WORK_LOCK_KEY = "_dpcore_session_work_lock"
_WORK_LOCK_CREATION = threading.Lock()


def _session_work_lock() -> threading.Lock:
    """This browser session's lock for work that charges the ledger (:func:`run_to_the_end`), shared by every run
    of the session (two can execute together: :func:`run_to_the_end`)."""
    with _WORK_LOCK_CREATION:
        lock = st.session_state.get(_WORK_LOCK_KEY)
        if lock is None:
            lock = st.session_state[_WORK_LOCK_KEY] = threading.Lock()
        return lock


def wait_for_work_in_progress() -> None:
    """Wait until a charge that another run of this session is making has ended (:func:`run_to_the_end`), so what
    this run reads next (the account, the outcome kept in the session) includes it."""
    with _session_work_lock():
        pass


WAIT_NOTE = threading.local()  # the running script's placeholder for lock-wait notes (one per script thread)


_LOCK_WAITS_SAID = [0]  # lock-wait notes said in this process (tests release a held lock once one was said)


def lock_waits_said() -> int:
    """How many lock-wait notes the panel has said in this process."""
    return _LOCK_WAITS_SAID[0]


def _note_lock_wait(line: str) -> None:
    """``on_wait`` of the app's ledger: say in the running page that the release waits for the lock.

    The ledger calls it from the thread that waits, i.e. the script thread of the session releasing;
    the placeholder is that session's, so another session's wait is never shown here."""
    slot = getattr(WAIT_NOTE, "slot", None)
    if slot is not None:
        WAIT_NOTE.lines.append(line)
        _LOCK_WAITS_SAID[0] += 1
        slot.info(f"Waiting for the ledger: {line}", icon=":material/hourglass_top:")


@st.cache_resource(show_spinner=False, max_entries=4)
def open_app_ledger(url: str) -> ledger_lib.LedgerDB:
    """One LedgerDB per URL (the set-up runs once per process); a missing ledger raises (not cached)."""
    return ledger_lib.open_ledger(url, create=False, on_wait=_note_lock_wait)


def ledger_place(url: str) -> str:
    """Where the ledger at ``url`` lives, for a sentence (a file path, or host and database; no password)."""
    if url.startswith("sqlite:///"):
        return url[len("sqlite:///") :] or url
    try:
        parts = urlsplit(url)
        host = parts.hostname or "localhost"
        return f"PostgreSQL database {parts.path.lstrip('/') or '?'} on {host}:{parts.port or 5432}"
    except ValueError:
        return "the configured ledger database"


class NoLedgerYet:
    """Stands for a ledger that does not exist yet: no account, nothing spent (the panel still shows what
    a release would be, with the button disabled until the ledger is created)."""

    def find_account(self, dataset_id: str) -> None:
        return None

    def describe(self) -> str:
        return "not created yet"


def ledger_or_ask(url: str, outcome_key: str) -> Any:
    """The ledger at ``url``; a :class:`NoLedgerYet` after asking to create a missing one; None after
    an error naming a ledger that cannot be used. The creation's outcome is kept under
    ``st.session_state[outcome_key]``, for the calling panel to say after the rerun."""
    try:
        return open_app_ledger(url)
    except ledger_lib.LedgerMissing:
        place = ledger_place(url)
        st.warning(
            f"**No budget ledger exists at `{place}` yet. Create it?** The ledger keeps every release's "
            "privacy cost for good. It is created once, on purpose, so that a ledger that went missing is "
            "noticed instead of silently starting again with full budgets. "
            f"(Set `{ledger_lib.ENV_VAR}` to use another SQLite file or a PostgreSQL server.)"
        )
        if st.button("Create the budget ledger", key="planner_create_ledger"):
            with guard(f"the budget ledger at {place}"):
                ledger_lib.init_ledger(url)
                st.session_state[outcome_key] = ("success", f"Created the budget ledger at `{place}`.")
                st.rerun()
        return NoLedgerYet()
    except (ValueError, TypeError) as exc:  # every ledger fault is a DPInputError naming the ledger
        st.error(f"The budget ledger cannot be used: {exc}")
        st.caption(
            f"The ledger is `{ledger_place(url)}`. Set `{ledger_lib.ENV_VAR}` to a `sqlite:///...` file or "
            "a `postgresql://...` server."
        )
        return None


def upload_bytes() -> bytes | None:
    uploaded = st.session_state.get("data_upload")
    if uploaded is None or not hasattr(uploaded, "getvalue"):
        return None
    return uploaded.getvalue()


def upload_population_account(db: Any, fingerprint: Any, legacy_id: str | None) -> Any:
    """The population account an upload's records belong to, or None before their first release: the
    population the record fingerprints (``dpcore.ledger.dataset_fingerprints`` in the ledger's versions; one hex
    for a ledger that reads only the newest) are attached to; else (a ledger from before populations) the
    account keyed by ``legacy_id`` (``dpcore.ledger.file_bytes_fingerprint(bytes, income column)``),
    whose population the records then join."""
    acct = db.source_population(fingerprint)
    if acct is not None or legacy_id is None:
        return acct
    legacy = db.find_account(legacy_id)
    if legacy is None:
        return None
    population = db.population_of_account(legacy.dataset_id)
    return None if population is None else db.attach_source(fingerprint, population)


def population_for_release(db: Any, fingerprint: Any, name: str, cap: float, cap_delta: float) -> Any:
    """The account a first release of these records pays from: the population ``name`` (registered now with
    this cap when new; an existing one keeps its cap, and another cap typed here is refused), with the
    records attached to it (refused when they belong to another population)."""
    acct = db.population(name) if name.strip() else None
    if acct is None:
        acct = db.register_population(name, cap, cap_delta, label=name)
    return db.attach_source(fingerprint, acct.population)


def is_source_fingerprint(dataset_id: str) -> bool:
    return not dataset_id.startswith("demo:")


def upload_records() -> tuple[Any, bytes]:
    """(the upload's parsed records, or its bytes when the sidebar has no parse of them; its bytes)."""
    from ui.sidebar import current_dataset_key

    key = current_dataset_key()
    raw = upload_bytes()
    if raw is None:
        raise ledger_lib.DPInputError("the uploaded file's bytes are not available: upload it again in the sidebar")
    if len(key) > 2 and isinstance(key[1], str) and isinstance(key[2], str):
        from ui.sidebar import read_upload  # the sidebar's cached parse of these bytes: not parsed again

        return read_upload(key[1], key[2], raw)[0], raw
    return raw, raw


def dataset_identity(ds: Any) -> tuple[str, str]:
    """(identity, default name) of the data in use: the record fingerprint (the newest version's) of an upload's
    parsed records (a source, attached to a population), else a demonstration account id from the sidebar
    recipe."""
    from ui.sidebar import current_dataset_key

    key = current_dataset_key()
    if ds.source == "upload":
        memo_key = ("upload", key[1] if len(key) > 1 else None, ds.column)
        memo = st.session_state.get("_release_fingerprint")
        if memo and memo[0] == memo_key:
            return memo[1].latest, ds.name
        records, raw = upload_records()
        # every parsed record (all columns), as the command line's engines fingerprint the same file; the
        # bytes key of older ledgers is computed once here too (the page reruns on every widget change)
        fingerprints = ledger_lib.dataset_fingerprints(records, (record_fingerprint.LATEST_VERSION,))
        legacy_id = ledger_lib.file_bytes_fingerprint(raw, ds.column)
        st.session_state["_release_fingerprint"] = (memo_key, fingerprints, legacy_id)
        return fingerprints.latest, ds.name
    recipe = json.dumps([str(k) for k in key], separators=(",", ":"))
    return "demo:" + hashlib.sha256(recipe.encode()).hexdigest(), f"demonstration data: {ds.name}"


def upload_memo(dataset_id: str) -> tuple | None:
    """(key, record fingerprints, bytes key) that :func:`dataset_identity` kept for the upload ``dataset_id``."""
    memo = st.session_state.get("_release_fingerprint")
    return memo if memo and memo[1].latest == dataset_id else None


def upload_fingerprints(db: Any, dataset_id: str) -> Any:
    """The upload's record fingerprints in every version ``db`` reads (a ledger holding version-1 sources reads
    versions 1 and 2): the newest computed by :func:`dataset_identity`, the others here, once per upload."""
    memo = upload_memo(dataset_id)
    if memo is None:
        return dataset_id
    have = memo[1]
    needed = db.record_fingerprint_versions
    if all(v in have.versions for v in needed):
        return have
    fingerprints = ledger_lib.dataset_fingerprints(upload_records()[0], sorted({*needed, *have.versions}))
    st.session_state["_release_fingerprint"] = (memo[0], fingerprints, memo[2])
    return fingerprints


_ROW_MARK = "__dpcore_release_row__"


def missing_income_rows(ds: Any, group_column: str | None) -> tuple[int, list[str] | None]:
    """(how many rows of an upload the sidebar's cleaning removed, their group labels as text) -- the rows
    with a missing income, and with the 'drop' policy the negative ones. A release puts them back at each
    statistic's public lower bound (``dpcore.release.with_missing_incomes``), so the published n does not
    depend on whether one person's income is present. (0, None) for any other data."""
    from ui.sidebar import current_dataset_key

    key = current_dataset_key()
    raw = upload_bytes()
    if ds.source != "upload" or raw is None or len(key) < 5 or not all(isinstance(k, str) for k in key[1:5]):
        return 0, None
    from dpcore.data import clean_income_column
    from ui.sidebar import read_upload  # the sidebar's cached parse of these bytes: not parsed again

    memo_key = (tuple(key), group_column)
    memo = st.session_state.get("_release_missing_rows")
    if memo and memo[0] == memo_key:
        return memo[1]
    frame = read_upload(key[1], key[2], raw)[0]
    marked = frame.assign(**{_ROW_MARK: range(len(frame))})
    kept = clean_income_column(marked, ds.column, negative=key[4])[0][_ROW_MARK].to_numpy()
    removed = sorted(set(range(len(frame))) - set(kept.tolist()))
    if len(kept) != int(ds.n):  # another file than the one the sidebar cleaned: never mix two files
        raise ledger_lib.DPInputError("the uploaded file changed while the page was drawn: upload it again")
    labels = None
    if removed and group_column is not None and group_column in frame.columns:
        labels = frame[group_column].iloc[removed].astype(str).tolist()
    st.session_state["_release_missing_rows"] = (memo_key, (len(removed), labels))
    return len(removed), labels


def find_account(db: Any, ds: Any, dataset_id: str) -> Any:
    """The account of the data in use (a population for an upload's records, the demonstration account
    otherwise), or None before the first release."""
    if isinstance(db, NoLedgerYet):
        return None
    if ds.source == "upload" and is_source_fingerprint(dataset_id):
        memo = upload_memo(dataset_id)
        legacy_id = memo[2] if memo else None
        return upload_population_account(db, upload_fingerprints(db, dataset_id), legacy_id)
    return db.find_account(dataset_id)


def existing_account(ds: Any) -> Any:
    """The ledger account of the data in use when the ledger and the account exist, else None (a read:
    nothing is created; a missing or faulty ledger is said by Release mode, not here)."""
    try:
        return find_account(open_app_ledger(ledger_lib.default_url()), ds, dataset_identity(ds)[0])
    except (ValueError, TypeError):
        return None
