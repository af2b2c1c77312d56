"""Class mode of the "Play the attacker" game: a teacher's session code and the class's pooled guesses.

Stored: for a session, its code and the one statistic (mechanism) its students play; for each guess,
the session code, the round id (its seed), the mechanism, epsilon, the guess and whether it was right.
Nothing else: no names, no IP addresses, no times, no browser ids (students are anonymous; the pooled
rate is all a teacher sees).

One statistic per session: the pooled rate is compared with e^eps/(1+e^eps), and only a mechanism
that reaches that bound (the discrete Laplace count, :data:`DEFAULT_CLASS_MECHANISM`) makes the
class's rate approach it; a class whose students mixed statistics would split the teacher's table
into rows of a few guesses each, whose intervals say nothing.

Rounds differ per student (:func:`student_round_seed`): a round's seed is derived from the session
code, a random id that lives only in the student's browser session, and the round number. Were
every student on round 1 given seed 1, the answers could be passed around the room and the pooled
rate would measure the class's chat, not the attacker's chance. The id itself is never stored; the
stored round id is a 63-bit hash, so one student's rounds cannot be linked without it.

Where: ``DPCORE_CLASSROOM_URL`` when set; else next to the budget ledger (``dpcore.ledger``): a file
``classroom.db`` in the folder of a SQLite ledger (``DPCORE_LEDGER_URL`` or the default ledger path),
or the same PostgreSQL database when the ledger URL is ``postgresql://...`` (tables
``dpcore_classroom_*``). URLs as in :func:`dpcore.ledger.open_ledger`: ``sqlite:///path.db``,
``sqlite:////absolute/path.db``, a ``pathlib.Path``, or ``postgresql://user@host:port/db`` (psycopg 3).
Each operation opens a short connection (SQLite in WAL mode; a class of 50 is a few writes a second).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpcore import ledger as ledger_lib
from dpcore.validation import DPInputError, check_epsilon, check_int
from dpcore.views.attacker import MECHANISMS

__all__ = [
    "ENV_VAR",
    "DEFAULT_CLASS_MECHANISM",
    "Classroom",
    "ClassSession",
    "PooledRate",
    "open_classroom",
    "default_url",
    "normalise_code",
    "new_student_id",
    "student_round_seed",
]

ENV_VAR = "DPCORE_CLASSROOM_URL"
#: unambiguous characters (no 0/O, 1/I/L) for codes read aloud or written on a board
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
#: the class's statistic when the teacher does not choose: the discrete Laplace count is the one mechanism
#: whose optimal attacker reaches e^eps/(1+e^eps) exactly, so the pooled rate can be read against the bound
DEFAULT_CLASS_MECHANISM = "count_geometric"
_STUDENT_ID_HEX = 16

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS dpcore_classroom_sessions (code TEXT PRIMARY KEY, mechanism TEXT)",
    "CREATE TABLE IF NOT EXISTS dpcore_classroom_guesses (code TEXT NOT NULL REFERENCES dpcore_classroom_sessions(code), "
    "round_id BIGINT NOT NULL, mechanism TEXT NOT NULL, epsilon DOUBLE PRECISION NOT NULL, "
    "guess BOOLEAN NOT NULL, correct BOOLEAN NOT NULL)",
    "CREATE INDEX IF NOT EXISTS dpcore_classroom_guesses_code ON dpcore_classroom_guesses(code)",
)


def default_url() -> str:
    """``DPCORE_CLASSROOM_URL``, else beside the ledger (same PostgreSQL database, or classroom.db next to
    the SQLite ledger file)."""
    url = os.environ.get(ENV_VAR, "").strip()
    if url:
        return url
    ledger_url = ledger_lib.default_url()
    if ledger_url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        return ledger_url
    try:
        folder = ledger_lib.sqlite_path(ledger_url).parent if ledger_url.startswith("sqlite://") else None
    except DPInputError:
        folder = None
    return "sqlite:///" + str((folder or ledger_lib.default_path().parent) / "classroom.db")


def normalise_code(code: Any) -> str:
    """A session code as stored: upper case, spaces and dashes removed; refuses anything else.

    The refusal does not quote the input: it comes from a URL or a text box and is shown on a page
    (a code that passes is made of :data:`CODE_ALPHABET` only, so it is safe to show)."""
    if not isinstance(code, str):
        raise TypeError(f"a session code is a string, got {type(code).__name__}")
    text = code.strip().upper().replace("-", "").replace(" ", "")
    if len(text) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in text):
        raise DPInputError(
            f"that is not a session code: a code has {CODE_LENGTH} characters from A-Z and 2-9 "
            "(no 0, O, 1, I or L), e.g. K7QX2M"
        )
    return text


def check_mechanism(mechanism: Any) -> str:
    """One of the attacker game's statistics (``dpcore.views.attacker.MECHANISMS``)."""
    if mechanism not in MECHANISMS:
        raise DPInputError(f"the class's statistic is one of {', '.join(MECHANISMS)}")
    return str(mechanism)


def new_student_id() -> str:
    """A random id for one student's browser session (kept there, never stored): see :func:`student_round_seed`."""
    return secrets.token_hex(_STUDENT_ID_HEX // 2)


def student_round_seed(code: str, student_id: str, round_number: int) -> int:
    """The seed of a student's round ``round_number`` in session ``code``: a 63-bit hash of the three.

    Different students get unrelated rounds (answers cannot be passed around, see the module
    docstring); the same student replays the same round from the same number. The hash keeps the
    stored round id from revealing the student id or linking one student's rounds."""
    code = normalise_code(code)
    if not isinstance(student_id, str) or not (1 <= len(student_id) <= 64) or not student_id.isalnum():
        raise DPInputError("a student id is a short letters-and-digits token (dpcore.classroom.new_student_id())")
    round_number = check_int(round_number, "round number", minimum=0, maximum=10**12)
    digest = hashlib.blake2b(
        f"{code}|{student_id}|{round_number}".encode(), digest_size=8, person=b"dpcore-class"
    ).digest()
    return int.from_bytes(digest, "big") >> 1


@dataclass(frozen=True)
class ClassSession:
    """A class session: its code and the statistic its students play (None: a session made before
    sessions carried one; any statistic is pooled then)."""

    code: str
    mechanism: str | None


@dataclass(frozen=True)
class PooledRate:
    """The class's guesses for one (mechanism, epsilon): how many, how many right."""

    mechanism: str
    epsilon: float
    guesses: int
    correct: int

    @property
    def rate(self) -> float:
        return self.correct / self.guesses if self.guesses else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "guesses": self.guesses,
            "correct": self.correct,
            "rate": self.rate,
        }


class Classroom:
    """The class-mode store (see the module docstring). Create with :func:`open_classroom`."""

    def __init__(self, url: str) -> None:
        self.url = url
        if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
            self.backend = "postgresql"
            self._pg_url = url.replace("postgresql+psycopg://", "postgresql://", 1)
            self.ph = "%s"
        else:
            self.backend = "sqlite"
            self.path = ledger_lib.sqlite_path(url)
            self.ph = "?"
        with self._connection() as conn:
            for statement in _SCHEMA:
                conn.execute(statement)
            self._add_mechanism_column(conn)

    def _add_mechanism_column(self, conn: Any) -> None:
        """Stores made before sessions carried their statistic have a one-column sessions table."""
        if self.backend == "postgresql":
            conn.execute("ALTER TABLE dpcore_classroom_sessions ADD COLUMN IF NOT EXISTS mechanism TEXT")
            return
        columns = [row[1] for row in conn.execute("PRAGMA table_info(dpcore_classroom_sessions)")]
        if "mechanism" not in columns:
            conn.execute("ALTER TABLE dpcore_classroom_sessions ADD COLUMN mechanism TEXT")

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        if self.backend == "postgresql":
            try:
                import psycopg
            except ImportError:
                raise DPInputError(
                    "a PostgreSQL classroom store needs psycopg: pip install 'psycopg[binary]'"
                ) from None
            try:
                conn = psycopg.connect(self._pg_url, autocommit=True, connect_timeout=30)
            except psycopg.Error as exc:
                raise DPInputError(
                    f"cannot connect to the classroom database: {str(exc).strip().splitlines()[0]}"
                ) from None
            try:
                yield conn
            finally:
                conn.close()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lite = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None)
            lite.execute("PRAGMA journal_mode=WAL")
            lite.execute("PRAGMA foreign_keys=ON")
        except (OSError, sqlite3.Error) as exc:
            raise DPInputError(f"cannot open the classroom database {self.path}: {exc}") from None
        try:
            yield lite
        finally:
            lite.close()

    def create_session(self, mechanism: str = DEFAULT_CLASS_MECHANISM) -> str:
        """A new random session code (6 characters) for a teacher; its students play ``mechanism``."""
        mechanism = check_mechanism(mechanism)
        for _ in range(20):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if not self.session_exists(code):
                with self._connection() as conn:
                    conn.execute(
                        f"INSERT INTO dpcore_classroom_sessions(code, mechanism) VALUES ({self.ph}, {self.ph})",
                        (code, mechanism),
                    )
                return code
        raise DPInputError("could not find a free session code")  # pragma: no cover - 31^6 codes

    def session(self, code: str) -> ClassSession | None:
        """The session with ``code`` (refused when ``code`` is not a code), None when there is none."""
        code = normalise_code(code)
        with self._connection() as conn:
            row = conn.execute(
                f"SELECT code, mechanism FROM dpcore_classroom_sessions WHERE code = {self.ph}", (code,)
            ).fetchone()
        return None if row is None else ClassSession(str(row[0]), None if row[1] is None else str(row[1]))

    def session_exists(self, code: str) -> bool:
        return self.session(code) is not None

    def record_guess(
        self, code: str, *, round_id: int, mechanism: str, epsilon: float, guess: bool, correct: bool
    ) -> None:
        """Store one guess of a student who joined session ``code`` (refused for an unknown code, and for
        a statistic other than the session's: the class pools one statistic)."""
        code = normalise_code(code)
        round_id = check_int(round_id, "round id", minimum=0, maximum=2**63 - 1)
        epsilon = check_epsilon(epsilon)
        mechanism = check_mechanism(mechanism)
        session = self.session(code)
        if session is None:
            raise DPInputError(f"no class session with code {code}: ask your teacher for the code")
        if session.mechanism is not None and session.mechanism != mechanism:
            raise DPInputError(f"class session {code} pools guesses at {session.mechanism} only, not {mechanism}")
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO dpcore_classroom_guesses(code, round_id, mechanism, epsilon, guess, correct) "
                f"VALUES ({', '.join([self.ph] * 6)})",
                (code, round_id, mechanism, epsilon, bool(guess), bool(correct)),
            )

    def pooled(self, code: str) -> list[PooledRate]:
        """The class's pooled guesses per (mechanism, epsilon), sorted."""
        code = normalise_code(code)
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT mechanism, epsilon, COUNT(*), SUM(CASE WHEN correct THEN 1 ELSE 0 END) "
                f"FROM dpcore_classroom_guesses WHERE code = {self.ph} GROUP BY mechanism, epsilon "
                "ORDER BY mechanism, epsilon",
                (code,),
            ).fetchall()
        return [PooledRate(str(m), float(e), int(n), int(c or 0)) for m, e, n, c in rows]


def open_classroom(url: str | os.PathLike | None = None) -> Classroom:
    """Open (creating tables when missing) the class-mode store at ``url`` (None: :func:`default_url`)."""
    if url is None:
        url = default_url()
    if isinstance(url, os.PathLike):
        url = "sqlite:///" + str(Path(url).expanduser().absolute())
    if not isinstance(url, str):
        raise TypeError(f"the classroom URL must be a string or a path, got {type(url).__name__}")
    url = url.strip()
    if not (url.startswith("sqlite://") or url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://"))):
        raise DPInputError(f"a classroom URL starts with sqlite:/// or postgresql://, got {url[:60]!r}")
    return Classroom(url)
