"""Where a ledger lives: its URL (or the default), the SQLite file a URL names, private folders, journal files.

Where the ledger lives (:func:`default_url`): the URL given to :func:`dpcore.ledger.open_ledger`; else the
environment variable ``DPCORE_LEDGER_URL``; else the SQLite file ``$XDG_DATA_HOME/dpcore/ledger.db``
(``~/.local/share/dpcore/ledger.db``), outside the repository. URLs: ``sqlite:///relative/path.db`` and
``sqlite:////absolute/path.db`` (SQLAlchemy's convention: the path is what follows ``sqlite:///``), a
``pathlib.Path``, or ``postgresql://user@host:port/db`` (also ``postgres://``).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..validation import DPInputError

__all__ = ["ENV_VAR", "default_path", "default_url", "sqlite_path"]

#: Environment variable naming the ledger database URL.
ENV_VAR = "DPCORE_LEDGER_URL"


def default_path() -> Path:
    """``$XDG_DATA_HOME/dpcore/ledger.db`` (default ``~/.local/share/dpcore/ledger.db``)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "dpcore" / "ledger.db"


def default_url() -> str:
    """``DPCORE_LEDGER_URL`` when set (and not empty), else ``sqlite:///`` + :func:`default_path`."""
    url = os.environ.get(ENV_VAR, "").strip()
    return url if url else "sqlite:///" + str(default_path())


def sqlite_path(url: str) -> Path:
    """The file a ``sqlite:///...`` URL names (the path is what follows ``sqlite:///``); an in-memory database is
    refused (it would forget every charge when the process ends)."""
    if not isinstance(url, str):
        raise TypeError(f"a SQLite ledger URL is a string (sqlite:///path.db), got {type(url).__name__}")
    rest = url[len("sqlite://") :]
    if not rest.startswith("/"):
        raise DPInputError(
            f"a SQLite ledger URL is sqlite:///relative/path.db or sqlite:////absolute/path.db, got {url!r}"
        )
    path = rest[1:]
    if path in ("", ":memory:"):
        raise DPInputError(
            "an in-memory SQLite ledger forgets every charge when the process ends; "
            "give a file, e.g. sqlite:////var/lib/dpcore/ledger.db"
        )
    return Path(path).expanduser()


def parse_ledger_url(url: str | os.PathLike | None) -> tuple[str, str | Path]:
    """``("postgresql", url)`` or ``("sqlite", path)`` for a ledger URL, a ``pathlib.Path`` of a SQLite file, or
    None (:func:`default_url`). A bare string without a scheme is refused rather than silently creating a
    database file named after it."""
    if url is None:
        url = default_url()
    if isinstance(url, os.PathLike):
        url = "sqlite:///" + str(Path(url).expanduser().absolute())
    if not isinstance(url, str):
        raise TypeError(f"the ledger URL must be a string or a path, got {type(url).__name__}")
    url = url.strip()
    if not url:
        raise DPInputError("the ledger URL is empty: give sqlite:///path.db, postgresql://... or None for the default")
    if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        return "postgresql", url.replace("postgresql+psycopg://", "postgresql://", 1)
    if url.startswith("sqlite:"):
        if not url.startswith("sqlite://"):
            raise DPInputError(f"a SQLite ledger URL starts with sqlite:/// , got {url!r}")
        return "sqlite", sqlite_path(url)
    if "://" in url:
        raise DPInputError(
            f"unsupported ledger URL {url.split('://')[0]!r}://...: use sqlite:///path.db or postgresql://..."
        )
    # a bare string is refused rather than silently creating a database file named after it
    raise DPInputError(
        f"a ledger URL starts with sqlite:/// or postgresql://, got {url[:60]!r}; for a file give "
        "'sqlite:////absolute/path/ledger.db' or a pathlib.Path"
    )


def make_private_dirs(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each mode 0700 (they may hold the ledger or its journal)."""
    missing = []
    cur = folder
    while not cur.exists():
        missing.append(cur)
        if cur.parent == cur:
            break
        cur = cur.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(path, 0o700)  # mkdir's mode is masked by the umask; 0700 is what we mean


def user_journal_path(key: str) -> Path:
    """The journal of result marks for the ledger named by ``key``, under the user's data folder."""
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    return default_path().parent / "pending-results" / f"{digest}.jsonl"
