"""Faults around a command-line release: what can be checked without the confidential values is refused
before the charge; after the charge, every failure says that epsilon was spent; nothing is left beside --out.

Real SQLite ledgers, real file systems (a read-only and a tiny tmpfs when the tests may mount them, i.e. as
root), real signals sent to real runs. A fault is injected in a child process by a small wrapper around
pandas' Parquet writer (the run sends itself the signal while its staging folder exists), so the signal lands
at a known step without timing races.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore import cli, ledger
from dpcore import plan as plan_module

ROOT = Path(__file__).resolve().parents[1]
DATASET = "pseo-earnings-2019"
#: the example plan (epsilon = 2 per release) with room for several releases on one account
PLAN = plan_module.EXAMPLE_PLAN.replace("cap_epsilon = 3.0", "cap_epsilon = 10.0")
COLUMNS = ["institution", "degree_level", "cohort", "state", "earnings"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    base = tmp_path_factory.mktemp("cli_faults")
    rng = np.random.default_rng(5)
    n = 600
    df = pd.DataFrame(
        {
            "institution": rng.choice(["A", "B"], n),
            "degree_level": rng.choice([1, 2, 3], n),
            "cohort": rng.choice([2010, 2015], n),
            "state": rng.choice(["CO", "TX"], n),
            "earnings": np.round(rng.lognormal(10.8, 0.8, n)),
        }
    )
    df.to_parquet(base / "data.parquet", index=False)
    (base / "plan.toml").write_text(PLAN)
    return base


@pytest.fixture()
def run(files, tmp_path):
    """(work dir, plan, data, ledger URL) with a ledger that exists and holds the plan's account, no charge."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    ledger.open_ledger(url).account(DATASET, cap_epsilon=10.0, label=DATASET, cap_delta=1e-9)
    return tmp_path, files / "plan.toml", files / "data.parquet", url


def _entries(url: str) -> int:
    return len(ledger.open_ledger(url).find_account(DATASET).entries())


def _cli(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(err: str, prefix: str = "dpcore:") -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith(prefix)]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _beside(out: Path) -> list[str]:
    """Hidden files and folders of this --out beside it (staging folders, lock, probe)."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


# ---------------------------------------------------------------------------------------------
# inputs with nothing to release
# ---------------------------------------------------------------------------------------------


def _header_only(path: Path) -> Path:
    path = path / "header.csv"
    path.write_text(",".join(COLUMNS) + "\n")
    return path


def _zero_rows(path: Path) -> Path:
    path = path / "zero.parquet"
    pd.DataFrame({c: pd.Series([], dtype="float64" if c == "earnings" else "object") for c in COLUMNS}).to_parquet(
        path, index=False
    )
    return path


# (an all-missing income is released: missing incomes stay in n, tests/test_missing_values.py)
@pytest.mark.parametrize("make", [_header_only, _zero_rows], ids=["header-only", "zero-rows"])
@pytest.mark.parametrize("engine", ["duckdb", "pandas"])
def test_an_input_with_no_rows_is_refused_before_the_charge(run, capsys, make, engine):
    tmp, plan, _, url = run
    data = make(tmp)
    code, _, err = _cli(
        capsys, "release", plan, "--data", data, "--out", tmp / "out", "--ledger", url, "--engine", engine
    )
    line = _one_line(err)
    assert code == 2 and "the data have no row" in line and "nothing was charged" in line
    assert _entries(url) == 0
    assert not (tmp / "out").exists() and _beside(tmp / "out") == []


# ---------------------------------------------------------------------------------------------
# --out that cannot take the output
# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _tmpfs(where: Path, options: str):
    """A tmpfs mounted at ``where`` (root only); skip with the reason when it cannot be mounted."""
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()[:200]}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@contextlib.contextmanager
def _read_only_dir(where: Path):
    """A directory nobody can write into: a read-only tmpfs as root (chmod does not stop root), else mode 0500."""
    if os.geteuid() == 0:
        with _tmpfs(where, "ro,size=1m") as mounted:
            yield mounted
        return
    where.mkdir()
    where.chmod(0o500)
    try:
        yield where
    finally:
        where.chmod(0o700)


def test_a_read_only_out_is_refused_before_the_charge(run, capsys):
    tmp, plan, data, url = run
    with _read_only_dir(tmp / "ro") as ro:
        code, _, err = _cli(capsys, "release", plan, "--data", data, "--out", ro / "out", "--ledger", url)
        line = _one_line(err)
        assert code == 2 and "cannot be written" in line and "nothing was charged" in line
        assert "Read-only file system" in line or "Permission denied" in line
        assert list(ro.iterdir()) == []
    assert _entries(url) == 0


def test_a_full_file_system_is_refused_before_the_charge(run, capsys):
    """16 KiB free: the lock and the probe fit, the three tables (CSV + Parquet) and the record do not."""
    tmp, plan, data, url = run
    with _tmpfs(tmp / "small", "size=16k") as small:
        code, _, err = _cli(capsys, "release", plan, "--data", data, "--out", small / "out", "--ledger", url)
        line = _one_line(err)
        assert code == 2 and "not enough free space" in line and "nothing was charged" in line
        assert list(small.iterdir()) == []
    assert _entries(url) == 0


def test_the_space_estimate_covers_what_a_release_writes(run, capsys):
    """The free-space estimate is about what a release writes (within a factor 2 either way), so that only an
    output that clearly does not fit is refused before the charge."""
    from dpcore.engines import output

    tmp, plan, data, url = run
    out = tmp / "sized"
    code, _, err = _cli(capsys, "release", plan, "--data", data, "--out", out, "--seed", 1, "--public-data", "--quiet")
    assert code == 0, err
    block = os.statvfs(tmp).f_frsize
    used = sum(-(-f.stat().st_size // block) * block for f in out.iterdir())
    loaded = plan_module.load_plan(plan)
    cells = {
        s.name: pd.read_csv(out / f"SIMULATION_{s.name}.csv", keep_default_na=False)[list(s.by)]
        for s in loaded.statistics
    }
    estimate = output.output_bytes(loaded, cells, block)
    assert used / 2 <= estimate <= 2 * used


# ---------------------------------------------------------------------------------------------
# two runs on one --out
# ---------------------------------------------------------------------------------------------


def test_a_second_run_on_the_same_out_is_refused_before_its_charge(run, capsys):
    """Run A holds --out while it waits for the ledger (a transaction of this test holds SQLite's write lock)
    and says that it waits; run B on the same --out is refused at once, charges nothing; A then finishes and is
    charged once."""
    tmp, plan, data, url = run
    out = tmp / "shared-out"
    blocker = sqlite3.connect(str(tmp / "ledger.db"), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    a = subprocess.Popen(
        [sys.executable, "-m", "dpcore", "release", str(plan), "--data", str(data), "--out", str(out), "--ledger", url],
        cwd=tmp,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen = []
        for line in a.stderr:  # A took --out before the ledger; it says so while it waits for the ledger's lock
            seen.append(line)
            if "waiting for the ledger lock" in line:
                break
        else:
            pytest.fail("run A ended without a note while waiting for the ledger lock: " + "".join(seen))
        assert "ledger.db" in seen[-1]
        code, _, err = _cli(capsys, "release", plan, "--data", data, "--out", out, "--ledger", url)
        line = _one_line(err)
        assert code == 2 and "another dpcore release is writing --out" in line and "nothing was charged" in line
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        stdout, rest = a.communicate(timeout=120)
    assert a.returncode == 0, "".join(seen) + rest
    assert stdout.strip().splitlines()[-1] == str(out)
    assert (out / "release_record.json").exists() and _entries(url) == 1
    assert _beside(out) == []  # the lock file is gone with A


# ---------------------------------------------------------------------------------------------
# signals after the charge; what a killed run leaves
# ---------------------------------------------------------------------------------------------


def _run_with_signal(args: list, signal_name: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m dpcore`` ``args`` in a child that sends itself ``signal_name`` right after writing its first
    Parquet table (after the charge, while the staging folder beside --out exists)."""
    script = textwrap.dedent(f"""
        import os, signal, sys
        import pandas as pd
        from dpcore import cli
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as from a shell, whatever the test runner set
        write = pd.DataFrame.to_parquet
        def write_then_signal(self, *args, **kwargs):
            write(self, *args, **kwargs)
            os.kill(os.getpid(), signal.{signal_name})
            import time; time.sleep(5)  # the signal is handled before this ends
        pd.DataFrame.to_parquet = write_then_signal
        sys.exit(cli.main({[str(a) for a in args]!r}))
    """)
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("signal_name, code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_after_the_charge_says_epsilon_was_spent_and_leaves_nothing(run, signal_name, code):
    tmp, plan, data, url = run
    out = tmp / "out"
    proc = _run_with_signal(["release", plan, "--data", data, "--out", out, "--ledger", url], signal_name, tmp)
    assert proc.returncode == code, proc.stderr
    line = _one_line(proc.stderr)
    assert line.startswith("dpcore: interrupted: epsilon = 2 was charged")
    assert (
        f"was charged to account '{DATASET}' (ledger entry 1) and nothing was written: interrupted by "
        f"{signal_name}" in line
    )
    assert _entries(url) == 1  # the charge stands
    assert not out.exists() and _beside(out) == []  # no staging folder, no lock file


def test_what_a_killed_run_left_is_reported_and_removed_by_the_next_run(run, capsys):
    tmp, plan, data, url = run
    out = tmp / "out"
    proc = _run_with_signal(["release", plan, "--data", data, "--out", out, "--ledger", url], "SIGKILL", tmp)
    assert proc.returncode == -signal.SIGKILL
    left = [name for name in _beside(out) if ".tmp-" in name]
    assert len(left) == 1 and any((tmp / left[0]).iterdir())  # noisy tables of the killed run
    assert _entries(url) == 1  # charged, never delivered
    (tmp / ".out.probe-99999").write_bytes(b"\0" * 4096)  # a run killed while probing --out leaves this
    code, stdout, err = _cli(capsys, "release", plan, "--data", data, "--out", out, "--ledger", url)
    assert code == 0, err
    assert f"removed leftover {left[0]} from an interrupted run" in err
    assert _beside(out) == [] and (out / "release_record.json").exists()
    assert _entries(url) == 2


def test_a_killed_runs_leftovers_of_another_shape_are_left_alone(run, capsys):
    """Only folders named and filled as a release's staging folder are removed: a user's folder that merely
    starts with the same name stays."""
    tmp, plan, data, url = run
    out = tmp / "out"
    mine = tmp / ".out.tmp-notes"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    lookalike = tmp / ".out.tmp-123-abcdefgh"
    lookalike.mkdir()
    (lookalike / "notes.txt").write_text("keep")
    code, _, err = _cli(capsys, "release", plan, "--data", data, "--out", out, "--seed", 1, "--public-data", "--quiet")
    assert code == 0, err
    assert mine.is_dir() and lookalike.is_dir()


def test_a_missing_ledger_is_refused_and_never_created(files, tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'nowhere' / 'ledger.db'}"
    code, _, err = _cli(
        capsys,
        "release",
        files / "plan.toml",
        "--data",
        files / "data.parquet",
        "--out",
        tmp_path / "out",
        "--ledger",
        url,
    )
    line = _one_line(err)
    assert code == 2 and "--init-ledger" in line and "ledger.db" in line
    assert not (tmp_path / "nowhere").exists() and not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------
# ledger faults on the command line
# ---------------------------------------------------------------------------------------------


def test_a_revealed_mark_that_cannot_reach_the_ledger_is_a_warning_and_is_replayed(run):
    """The tables are written, then another connection holds the ledger's write lock: the revealed mark cannot
    be recorded (short lock timeout and retries in the child, to keep the test fast), so it is journaled beside
    the ledger; the run exits 0 with one warning line naming the journal; the next open records the mark."""
    tmp, plan, data, url = run
    out = tmp / "out"
    script = textwrap.dedent(f"""
        import sqlite3, sys
        from dpcore import cli
        from dpcore.engines import execute
        from dpcore.ledger import accounts
        from dpcore.ledger.backends import sqlite as sqlite_backend
        sqlite_backend.BUSY_TIMEOUT_S, accounts.ATTACH_RETRY_DELAYS_S = 0.3, (0.05,)
        write = execute.write_outputs
        def write_then_lock(*args, **kwargs):
            hashes = write(*args, **kwargs)
            holder = sqlite3.connect({str(tmp / "ledger.db")!r}, isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
            execute._lock_holder = holder
            return hashes
        execute.write_outputs = write_then_lock
        sys.exit(cli.main({["release", str(plan), "--data", str(data), "--out", str(out), "--ledger", url]!r}))
    """)
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(tmp / "xdg")},
    )
    assert proc.returncode == 0, proc.stderr
    line = _one_line(proc.stderr, "dpcore: warning:")
    assert f"the release was written to {str(out)!r}" in line and "journaled at" in line and "entry 1" in line
    assert (out / "release_record.json").exists()
    (entry,) = ledger.open_ledger(url, create=False).find_account(DATASET).entries()
    assert entry.result is not None and entry.result["out_dir"] == str(out)


def _not_a_ledger(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as conn:  # another application's SQLite database
        conn.execute("CREATE TABLE customers(id INTEGER, name TEXT)")
        conn.commit()


@pytest.mark.parametrize("make", [lambda path: path.write_bytes(b""), _not_a_ledger], ids=["0-bytes", "other-sqlite"])
def test_a_ledger_fault_is_one_line_naming_the_ledger_before_any_data_is_read(files, tmp_path, capsys, make):
    path = tmp_path / "ledger.db"
    make(path)
    before = path.read_bytes()
    code, _, err = _cli(
        capsys,
        "release",
        files / "plan.toml",
        "--data",
        files / "data.parquet",
        "--out",
        tmp_path / "out",
        "--ledger",
        f"sqlite:///{path}",
    )
    line = _one_line(err)
    assert code == 2 and str(path) in line and "internal error" not in line
    assert path.read_bytes() == before and not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def postgres_url():
    from support.postgres import PostgresUnavailable, postgres_server

    try:
        with postgres_server() as url:
            yield url
    except PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL unavailable: {exc}")


def test_postgres_ledger_gone_after_the_charge_is_a_warning_and_is_replayed(postgres_url, files, tmp_path):
    """The case this guards against: the PostgreSQL ledger goes away right after the charge, while the noise is drawn and the
    tables written (its database stops accepting connections and the run's connection is ended). The tables are
    written, the run exits 0 with one warning naming the journal; once the database is back, the next open
    records the revealed mark."""
    import psycopg

    admin = postgres_url
    url = postgres_url.rsplit("/", 1)[0] + "/cli_ledger"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("CREATE DATABASE cli_ledger")
    ledger.init_ledger(url).account(DATASET, cap_epsilon=10.0, label=DATASET, cap_delta=1e-9)
    out = tmp_path / "out"
    argv = ["release", str(files / "plan.toml"), "--data", str(files / "data.parquet"), "--out", str(out)]
    argv += ["--ledger", url]
    script = textwrap.dedent(f"""
        import sys
        import psycopg
        from dpcore import cli, ledger
        from dpcore.engines import execute
        from dpcore.ledger import accounts
        accounts.ATTACH_RETRY_DELAYS_S = (0.05,)
        charge = ledger.Account.charge
        def charge_then_drop_the_database(*args, **kwargs):
            entry = charge(*args, **kwargs)
            with psycopg.connect({admin!r}, autocommit=True) as conn:
                conn.execute("ALTER DATABASE cli_ledger ALLOW_CONNECTIONS false")
                conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'cli_ledger'")
            return entry
        ledger.Account.charge = charge_then_drop_the_database
        sys.exit(cli.main({argv!r}))
    """)
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(tmp_path / "xdg")},
    )
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("ALTER DATABASE cli_ledger ALLOW_CONNECTIONS true")
    assert proc.returncode == 0, proc.stderr
    line = _one_line(proc.stderr, "dpcore: warning:")
    assert f"the release was written to {str(out)!r}" in line and "journaled at" in line and "cli_ledger" in line
    assert (out / "release_record.json").exists()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # where the child journaled the mark
        (entry,) = ledger.open_ledger(url, create=False).find_account(DATASET).entries()
    assert entry.result is not None and entry.result["out_dir"] == str(out)


def test_a_postgres_ledger_that_cannot_be_reached_is_one_line_naming_it(files, tmp_path, capsys):
    """Nothing listens at the ledger's address: exit 2 before any data is read, the ledger named."""
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, _, err = _cli(
        capsys,
        "release",
        files / "plan.toml",
        "--data",
        files / "data.parquet",
        "--out",
        tmp_path / "out",
        "--ledger",
        f"postgresql://dp@127.0.0.1:{port}/ledger",
    )
    line = _one_line(err)
    assert code == 2 and f"127.0.0.1:{port}" in line and "PostgreSQL" in line and "internal error" not in line
    assert not (tmp_path / "out").exists()


def test_a_read_only_ledger_is_one_line_naming_it_before_any_data_is_read(files, tmp_path, capsys):
    """The ledger's file system is read-only (a tmpfs remounted read-only as root; chmod does not stop root)."""
    import gc

    with _tmpfs(tmp_path / "ledgerfs", "size=1m") as mounted:
        url = f"sqlite:///{mounted / 'ledger.db'}"
        ledger.init_ledger(url).account(DATASET, cap_epsilon=10.0, label=DATASET, cap_delta=1e-9)
        gc.collect()  # the pooled connection is closed with its ledger object: nothing holds the file open
        proc = subprocess.run(["mount", "-o", "remount,ro", str(mounted)], capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.skip(f"cannot remount the tmpfs read-only: {proc.stderr.strip()[:200]}")
        code, _, err = _cli(
            capsys,
            "release",
            files / "plan.toml",
            "--data",
            files / "data.parquet",
            "--out",
            tmp_path / "out",
            "--ledger",
            url,
        )
        line = _one_line(err)
        assert code == 2 and str(mounted / "ledger.db") in line and "internal error" not in line
        assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------
# smaller faults: a card that did not fit, a device as --data, Parquet files that disagree on a type
# ---------------------------------------------------------------------------------------------


def test_a_release_card_that_could_not_be_written_is_said_on_stderr(run, capsys, monkeypatch):
    """The tables and the record are what was paid for; the card is post-processing. Its failure was written only
    inside the record: now one warning line too, even with --quiet (exit 0: the release is delivered)."""
    from dpcore.engines import output

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output, "write_release_card", full)
    tmp, plan, data, url = run
    code, out, err = _cli(capsys, "release", plan, "--data", data, "--out", tmp / "out", "--ledger", url, "--quiet")
    assert code == 0 and out.strip() == str(tmp / "out")
    line = _one_line(err)
    assert line.startswith("dpcore: warning: the release card was not written: [Errno 28] No space left on device")
    assert (tmp / "out" / "release_record.json").exists() and _entries(url) == 1


def test_a_device_as_data_is_not_called_missing(run, capsys):
    tmp, plan, _, url = run
    code, _, err = _cli(capsys, "release", plan, "--data", "/dev/zero", "--out", tmp / "out", "--ledger", url)
    line = _one_line(err)
    assert code == 2 and "--data '/dev/zero' is not a regular file (a device, a pipe or a socket)" in line, line
    assert _entries(url) == 0


@pytest.mark.parametrize("engine", ["duckdb", "pandas"])
def test_parquet_files_with_income_of_different_types_are_refused_before_the_charge(run, files, capsys, engine):
    tmp, plan, data, url = run
    folder = tmp / "parts"
    folder.mkdir()
    frame = pd.read_parquet(data)
    frame.iloc[:300].to_parquet(folder / "a.parquet", index=False)
    frame.iloc[300:].astype({"earnings": str}).to_parquet(folder / "b.parquet", index=False)  # text incomes
    code, _, err = _cli(
        capsys, "release", plan, "--data", folder, "--engine", engine, "--out", tmp / "out", "--ledger", url
    )
    line = _one_line(err)
    assert code == 2 and (
        "the Parquet files disagree on the column 'earnings': number in 'a.parquet', text in 'b.parquet'" in line
    ), line
    assert _entries(url) == 0 and not (tmp / "out").exists()
