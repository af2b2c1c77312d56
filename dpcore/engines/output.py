"""The ``--out`` slot of a release and its atomic writing: checked, locked and probed before any data is read or
anything is charged (:class:`OutputSlot`); the tables (CSV and Parquet), ``plan.toml``, the release card and
``release_record.json`` written into a staging folder beside ``--out`` and renamed into place at the end
(:func:`write_outputs`): nothing is left in ``--out`` on failure or signal.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..plan import ReleasePlan, StatisticSpec, plan_to_toml
from ..release_card import card_bytes_estimate, write_release_card
from ..validation import DPInputError
from . import Progress

__all__ = [
    "RECORD_FILE",
    "SIMULATION_PREFIX",
    "OutputSlot",
    "output_bytes",
    "write_outputs",
    "write_release_folder",
    "table_stem",
    "one_line",
]


RECORD_FILE = "release_record.json"


#: the staging folder beside --out: ``.<name>.tmp-<pid>-<random>``; a folder of this shape whose run is gone
#: (no lock held on --out) is what a killed run (kill -9, power loss) left
_STAGING = ".{name}.tmp-"


_STAGING_SUFFIX = re.compile(r"(?:[0-9]+-)?[a-z0-9_]{8}")


#: what a staging folder holds: the tables, plan.toml, the record (and half-written files of them)
_RELEASE_FILE = re.compile(r"[A-Za-z0-9_.-]+\.(?:csv|parquet)|plan\.toml|release_record\.json")


#: typical CSV bytes per number with its comma (measured 9 for 60,000 percentile cells: counts and noisy
#: percentiles such as 24936.444444444445; a full float repr is 18-24): an estimate, not a bound, so that only an
#: output that clearly does not fit is refused before the charge (a near miss fails after it, and says so)
_CSV_BYTES_PER_VALUE = 12


#: a Parquet file's fixed part (footer, schema, pandas metadata: 2.2 KiB measured for 3 columns, 4.3 KiB for 7);
#: its data part is taken as a quarter of the CSV's (measured 0.19 for the 60,000 cells)
_PARQUET_OVERHEAD = 4096


#: the record's part per statistic (the record of the example plan, 3 statistics: 6 KiB measured)
_RECORD_PER_STATISTIC = 4096


class OutputSlot:
    """``--out`` made ready for one run, before any data is read or anything is charged.

    Entered: ``--out`` is absent or an empty directory, its parent exists; a lock file ``.<name>.lock`` beside
    it is held (``fcntl.flock``, so a second run writing the same ``--out`` is refused at once, before its
    charge; the kernel drops the lock when a run dies, even by kill -9); staging folders left by a killed run
    are reported and removed; a probe file is created, written and removed in the parent (a read-only or
    full file system, or a directory without write permission, is found now, not after the charge).
    :meth:`check_space` (after aggregation, before the charge) refuses when the free space is clearly short of
    what the tables need. Left: the lock file is removed.
    """

    def __init__(self, out_dir: str | os.PathLike, progress: Progress) -> None:
        self.out = Path(out_dir).expanduser().absolute()
        self.progress = progress
        self.lock_path = self.out.parent / f".{self.out.name}.lock"
        self._lock_fd: int | None = None

    def __enter__(self) -> OutputSlot:
        self._check_empty()
        if not self.out.parent.is_dir():
            raise DPInputError(f"the parent directory of --out ({str(self.out.parent)!r}) does not exist")
        self._lock()
        try:
            self._remove_leftovers()
            self._check_empty()  # again under the lock: a run that finished meanwhile filled it
            self._probe()
        except BaseException:
            self._unlock()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self._unlock()

    def _check_empty(self) -> None:
        out = self.out
        if out.exists() or out.is_symlink():
            if not out.is_dir():
                raise DPInputError(f"--out {str(out)!r} exists and is not a directory")
            if any(out.iterdir()):
                raise DPInputError(
                    f"--out {str(out)!r} is not empty: give a new or empty directory (nothing is overwritten)"
                )

    def _lock(self) -> None:
        import fcntl

        while True:
            try:
                fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise DPInputError(
                    f"--out {str(self.out)!r} cannot be written: cannot create the lock file "
                    f"{self.lock_path.name!r} beside it ({exc.strerror or exc}); nothing was charged"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise DPInputError(
                    f"another dpcore release is writing --out {str(self.out)!r} (it holds "
                    f"{self.lock_path.name!r}); nothing was charged: wait for it or choose another "
                    "--out"
                ) from None
            # the holder before us may have removed the file between our open and our flock: then we hold a
            # lock on a name nobody sees; start again on the current file
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.lock_path))
            except FileNotFoundError:
                same = False
            if same:
                self._lock_fd = fd
                os.ftruncate(fd, 0)  # the holder's pid, for a person looking at the file
                os.write(fd, f"{os.getpid()}\n".encode())
                return
            os.close(fd)

    def _unlock(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is None:
            return
        try:  # remove the name while still holding the lock (a waiter re-checks the name, _lock)
            if os.path.samestat(os.fstat(fd), os.stat(self.lock_path)):
                os.unlink(self.lock_path)
        except OSError:
            pass
        os.close(fd)

    def _remove_leftovers(self) -> None:
        """Remove staging folders of this --out left by a killed run: we hold the lock, so no live run owns one.

        Only a folder named as :func:`write_outputs` names them (``.<name>.tmp-<pid>-<random>``, or the
        ``.<name>.tmp-<random>`` of earlier versions) and holding only the files a release writes is removed."""
        prefix = _STAGING.format(name=self.out.name)
        probe = f".{self.out.name}.probe-"
        try:
            listing = os.listdir(self.out.parent)
        except OSError:
            return
        for name in listing:  # a probe file of a run killed between creating and removing it (zeros)
            if name.startswith(probe) and name[len(probe) :].isdigit():
                with contextlib.suppress(OSError):
                    os.unlink(self.out.parent / name)
        names = sorted(n for n in listing if n.startswith(prefix) and _STAGING_SUFFIX.fullmatch(n[len(prefix) :]))
        for name in names:
            path = self.out.parent / name
            try:
                if path.is_symlink() or not path.is_dir():
                    continue
                if not all(child.is_file() and _RELEASE_FILE.fullmatch(child.name) for child in path.iterdir()):
                    continue
            except OSError:
                continue
            shutil.rmtree(path, ignore_errors=True)
            if not path.exists():
                self.progress.say(f"removed leftover {name} from an interrupted run")

    def _probe(self) -> None:
        probe = self.out.parent / f".{self.out.name}.probe-{os.getpid()}"
        try:
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, b"\0" * 4096)
                os.fsync(fd)
            finally:
                os.close(fd)
                os.unlink(probe)
        except OSError as exc:
            raise DPInputError(
                f"--out {str(self.out)!r} cannot be written ({exc.strerror or exc}); nothing was charged"
            ) from None

    def check_space(self, needed: int) -> None:
        """Refuse when the free space beside --out is below ``needed`` bytes (an estimate, :func:`output_bytes`)."""
        try:
            st = os.statvfs(self.out.parent)
        except OSError:
            return
        free = st.f_bavail * st.f_frsize
        if free < needed:
            raise DPInputError(
                f"not enough free space for --out {str(self.out)!r}: the tables need about "
                f"{_human_bytes(needed)} and {_human_bytes(free)} are free; nothing was charged"
            )


def _human_bytes(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover


def _numeric_columns(spec: StatisticSpec) -> int:
    """Columns a statistic's table has besides its cell labels (n and the released values)."""
    if spec.kind == "percentiles":
        assert spec.q is not None  # the plan parser sets the levels of every percentiles statistic
        if spec.margins is not None and spec.bins is not None:
            # every level (each has at most as many rows as the cells): the consistent counts, the least-squares
            # estimates and their standard deviation beside n and the percentiles
            return (1 + len(spec.margins)) * (2 + len(spec.q) + 2 * (len(spec.bins) - 1))
        return 1 + len(spec.q)
    if spec.kind == "relative_risk":
        return 5  # n_exposed, n_reference, cases_exposed, cases_reference, relative_risk
    return 2  # n and the mean or the Gini


def output_bytes(plan: ReleasePlan, cells: dict[str, pd.DataFrame], block: int) -> int:
    """About the bytes the output will take, from every statistic's cells (one table row per cell; public: the
    cells and their sizes are released): per table a CSV (labels plus _CSV_BYTES_PER_VALUE per number) and a
    Parquet file (a footer plus a quarter of the CSV), each rounded up to the file system's block; plan.toml and
    the record. ``cells``: per statistic a frame with one row per cell holding its label columns (``by``).
    Measured: 1.35 x the bytes written for 60,000 cells, 1.4 x for the example plan's 16 cells."""

    def blocks(n: int) -> int:
        return -(-max(int(n), 1) // block) * block

    total = blocks(len(plan_to_toml(plan).encode())) + blocks(_RECORD_PER_STATISTIC * (1 + len(plan.statistics)))
    total += 3 * blocks(card_bytes_estimate([len(cells[s.name]) for s in plan.statistics]) // 3)  # the card's files
    for s in plan.statistics:
        frame = cells[s.name]
        label_bytes = sum(int(frame[c].astype(str).str.len().sum()) + len(frame) for c in s.by if c in frame.columns)
        csv = label_bytes + len(frame) * _numeric_columns(s) * _CSV_BYTES_PER_VALUE
        total += blocks(csv) + blocks(_PARQUET_OVERHEAD + csv // 4)
    return total


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_outputs(
    out: Path, plan: ReleasePlan, tables: dict[str, pd.DataFrame], record: dict, *, simulation: bool = False
) -> dict[str, str]:
    tmp = Path(tempfile.mkdtemp(prefix=_STAGING.format(name=out.name) + f"{os.getpid()}-", dir=out.parent))
    try:
        hashes = {}
        for name, table in tables.items():
            stem = table_stem(name, simulation)
            csv_path, pq_path = tmp / f"{stem}.csv", tmp / f"{stem}.parquet"
            table.to_csv(csv_path, index=False)
            table.to_parquet(pq_path, index=False)
            hashes[csv_path.name] = _sha256(csv_path)
            hashes[pq_path.name] = _sha256(pq_path)
        (tmp / "plan.toml").write_text(plan_to_toml(plan), encoding="utf-8")
        hashes["plan.toml"] = _sha256(tmp / "plan.toml")
        record.update(_write_card(tmp, record, tables, hashes))  # a card not written: the caller says so too
        (tmp / RECORD_FILE).write_text(
            json.dumps({**record, "files": hashes}, indent=2, sort_keys=False, default=_json_default), encoding="utf-8"
        )
        if out.exists():
            out.rmdir()  # empty (checked); a race that filled it makes this fail and leaves it alone
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return hashes


def write_release_folder(
    out: str | os.PathLike, plan: ReleasePlan, record: dict, tables: dict[str, pd.DataFrame]
) -> dict[str, str]:
    """Write a release made elsewhere (a release of planned statistics: dpcore.release) as the command line writes
    its ``--out`` folder, with the command line's own writer: each statistic's table (CSV and Parquet),
    ``plan.toml``, ``release_card.html`` / ``.md`` and the registry entry, and ``release_record.json`` (``record``
    with each statistic's files and every file's SHA-256). ``out`` must not exist or be empty;
    ``record["statistics"]`` names the tables (``tables`` by statistic name). Returns the SHA-256 of every file."""
    statistics = [
        {**stat, "files": [f"{table_stem(stat['name'], False)}.csv", f"{table_stem(stat['name'], False)}.parquet"]}
        for stat in record.get("statistics", [])
    ]
    if sorted(s["name"] for s in statistics) != sorted(tables):
        raise DPInputError("the record's statistics and the tables do not match")
    return write_outputs(Path(out), plan, tables, {**record, "statistics": statistics})


def _write_card(tmp: Path, record: dict, tables: dict[str, pd.DataFrame], hashes: dict[str, str]) -> dict:
    """The card for publication and the registry entry (post-processing of the record and the tables), added to
    ``hashes``. A failure here loses the card, never the charged release: the record says why it is missing."""
    try:
        paths = write_release_card(tmp, record, tables)  # all three or none
    except Exception as exc:  # the tables and the record are what was paid for; the card can be remade from them
        return {
            "release_card": f"not written: {one_line(exc)} (remake it with dpcore.release_card from this "
            "record and the tables)"
        }
    hashes.update({path.name: _sha256(path) for path in paths})
    return {}


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


#: file-name prefix of every table a simulation writes (a simulated table is never mistaken for a release)
SIMULATION_PREFIX = "SIMULATION_"


def table_stem(name: str, simulation: bool) -> str:
    return SIMULATION_PREFIX + name if simulation else name


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text or type(exc).__name__)[:400]
