"""A throw-away PostgreSQL server for tests: Debian's initdb + pg_ctl in a temp dir, on a free local port.

``postgres_server(tmp_dir)`` is a context manager yielding a ``postgresql://`` URL, or raising
``PostgresUnavailable`` with a reason (binaries missing, server would not start); test fixtures turn
that into ``pytest.skip(reason)``. PostgreSQL refuses to run as root, so as root the data directory is
chowned to ``nobody`` and the binaries run through ``runuser -u nobody --``. The server listens on
127.0.0.1 only and on a Unix socket inside the temp dir, with trust authentication (local tests only),
and is stopped (``pg_ctl stop -m immediate``) at the end.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["PostgresUnavailable", "find_pg_bin", "fresh_database", "postgres_server"]


class PostgresUnavailable(RuntimeError):
    """The test PostgreSQL server cannot run here (the message says why)."""


def find_pg_bin() -> Path | None:
    """The newest /usr/lib/postgresql/<version>/bin holding initdb and pg_ctl, or the ones on PATH."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: [int(x) if x.isdigit() else 0 for x in Path(p).parent.name.split(".")],
    )
    for cand in reversed(candidates):
        if os.access(os.path.join(cand, "initdb"), os.X_OK) and os.access(os.path.join(cand, "pg_ctl"), os.X_OK):
            return Path(cand)
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb and pg_ctl and Path(initdb).parent == Path(pg_ctl).parent:
        return Path(initdb).parent
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_user() -> tuple[list[str], str | None]:
    """(command prefix, user name) so that the server does not run as root."""
    if os.geteuid() != 0:
        return [], None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PostgresUnavailable(
            "running as root and 'runuser' is missing: cannot start PostgreSQL as a non-root user"
        )
    return [runuser, "-u", "nobody", "--"], "nobody"


@contextlib.contextmanager
def postgres_server(base_dir: str | os.PathLike | None = None, *, start_timeout: int = 60) -> Iterator[str]:
    """Start a private PostgreSQL server; yield its URL (user postgres, database postgres); stop it."""
    bin_dir = find_pg_bin()
    if bin_dir is None:
        raise PostgresUnavailable(
            "PostgreSQL binaries (initdb, pg_ctl) not found: install Debian's 'postgresql' package (.ci/run does)"
        )
    prefix, user = _as_user()
    tmp = Path(tempfile.mkdtemp(prefix="dpcore-pg-", dir=base_dir))
    data, sock_dir, log = tmp / "data", tmp / "sock", tmp / "server.log"
    sock_dir.mkdir()
    if user is not None:
        import pwd

        entry = pwd.getpwnam(user)
        for path in (tmp, sock_dir):
            os.chown(path, entry.pw_uid, entry.pw_gid)
        os.chmod(tmp, 0o755)
        # the temp dir's parents must be traversable by that user
        parent = tmp.parent
        if not os.access(parent, os.X_OK):
            raise PostgresUnavailable(f"{parent} is not traversable by {user}")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    started = False
    try:
        try:
            out = subprocess.run(
                [
                    *prefix,
                    str(bin_dir / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    "postgres",
                    "-A",
                    "trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                ],
                capture_output=True,
                text=True,
                env=env,
                cwd=str(tmp),
                timeout=120,
            )
            if out.returncode != 0:
                raise PostgresUnavailable(f"initdb failed: {(out.stderr or out.stdout).strip()[-500:]}")
            port = _free_port()
            opts = f"-c listen_addresses=127.0.0.1 -p {port} -k {sock_dir} -c max_connections=50"
            out = subprocess.run(
                [
                    *prefix,
                    str(bin_dir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(log),
                    "-o",
                    opts,
                    "-w",
                    "-t",
                    str(start_timeout),
                    "start",
                ],
                capture_output=True,
                text=True,
                env=env,
                cwd=str(tmp),
                timeout=start_timeout + 30,
            )
            started = True  # stop it even when pg_ctl timed out waiting
            if out.returncode != 0:
                tail = log.read_text(errors="replace")[-800:] if log.exists() else out.stderr
                raise PostgresUnavailable(f"PostgreSQL did not start: {tail.strip()}")
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PostgresUnavailable(f"PostgreSQL could not be run: {exc}") from None
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        if started:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run(
                    [*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=str(tmp),
                    timeout=120,
                )
        shutil.rmtree(tmp, ignore_errors=True)


_DATABASES_MADE = [0]


def fresh_database(server_url: str, prefix: str) -> str:
    """A new, empty database on the test server (one per test, so tests never see each other's tables):
    its ``postgresql://`` URL. ``prefix`` names the test file's databases."""
    import psycopg

    _DATABASES_MADE[0] += 1
    name = f"{prefix}_{os.getpid()}_{_DATABASES_MADE[0]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server_url.rsplit("/", 1)[0] + "/" + name
