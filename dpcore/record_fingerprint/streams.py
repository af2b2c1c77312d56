"""The record fingerprints of a stream of record batches, hashed on several cores by worker processes once the
stream is long (the row sums of chunks add up in any order)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from .. import defaults
from ..validation import DPInputError, check_int
from .accumulate import LATEST_VERSION, RecordFingerprint, RecordFingerprints, add_chunk, check_versions, chunk_sums
from .canonical import column_order, is_arrow

#: a stream is fingerprinted on several cores once it has passed this many rows: below it, starting worker
#: processes (about half a second each, to import pandas and pyarrow) costs more than it saves
PARALLEL_MIN_ROWS = 1_000_000
#: rows per task sent to a worker (Arrow buffers of a few MB: the memory of a task stays small)
PARALLEL_TASK_ROWS = 65_536


def _check_chunk(batch: Any) -> Any:
    if isinstance(batch, pd.DataFrame) or is_arrow(batch):
        return batch
    raise TypeError(f"a record batch must be a pyarrow RecordBatch or a pandas DataFrame, got {type(batch).__name__}")


def _regrouped(batches: Iterable[Any], rows: int) -> Iterable[Any]:
    """Arrow batches regrouped into tables of about ``rows`` rows (fewer, larger tasks for the workers)."""
    import pyarrow as pa

    pending: list[Any] = []
    count = 0
    for batch in batches:
        if not is_arrow(batch):
            yield batch
            continue
        pending.append(batch)
        count += batch.num_rows
        if count >= rows:
            yield pa.Table.from_batches(pending) if len(pending) > 1 else pending[0]
            pending, count = [], 0
    if pending:
        yield pa.Table.from_batches(pending) if len(pending) > 1 else pending[0]


def batches_fingerprint(
    batches: Iterable[Any], *, workers: int | None = None, large: bool = False, version: int = LATEST_VERSION
) -> str:
    """The record fingerprint (one ``version``) of a stream of record batches: :func:`batches_fingerprints`."""
    return batches_fingerprints(batches, (version,), workers=workers, large=large).of(version)


def batches_fingerprints(
    batches: Iterable[Any], versions: Any = (LATEST_VERSION,), *, workers: int | None = None, large: bool = False
) -> RecordFingerprints:
    """The record fingerprints, in each of ``versions``, of a stream of pyarrow RecordBatches / Tables or pandas
    DataFrames (one pass over the stream).

    The row sums add up over chunks in any order, so once the stream has passed :data:`PARALLEL_MIN_ROWS` rows
    the rest is hashed by ``workers`` processes (the hash holds the GIL, so threads would not help). Default:
    the available cores when version 1 is asked (its row texts are worth other cores); one, this process, for
    version 2 alone (it costs about as much as reading the rows: on two cores the workers made the first release
    of the PSEO-like table slower; docs/benchmarks.md, "Timings behind choices in the code"). Workers are new interpreters (:class:`_WorkerPool`), never
    forks of this process, whose DuckDB or Arrow reader threads may hold locks. ``workers=1``: all in this
    process. ``large=True`` (the caller knows the stream passes that many rows): the workers start at once, and
    import while this process hashes the first chunks."""
    versions = check_versions(versions)
    accs = {v: RecordFingerprint(version=v) for v in versions}
    if workers is None:  # version 1's row texts are worth other cores; version 2 is about as fast as the reading
        workers = defaults.available_cores() if 1 in versions else 1
    workers = check_int(workers, "workers", minimum=1)
    stream = iter(_regrouped((_check_chunk(b) for b in batches), PARALLEL_TASK_ROWS))
    if large and workers > 1:
        _on_workers(stream, accs, workers)
    else:
        for chunk in stream:
            add_chunk(accs, chunk)
            if workers > 1 and accs[versions[0]].rows >= PARALLEL_MIN_ROWS:
                following = next(stream, None)  # start the workers only when more rows follow
                if following is not None:
                    _on_workers(itertools.chain([following], stream), accs, workers)
                break
    return RecordFingerprints(tuple((v, acc.hexdigest()) for v, acc in accs.items()))


def _on_workers(stream: Iterable[Any], accs: dict[int, RecordFingerprint], workers: int) -> None:
    """Hash the rest of ``stream`` on this process and ``workers - 1`` worker processes into ``accs`` (one per
    version; :class:`_WorkerPool`); when every worker is busy this process hashes the chunk itself, so a worker
    still starting (importing pyarrow and pandas) or a slower one never holds the stream up."""
    import pyarrow as pa

    with _WorkerPool(workers - 1, tuple(accs)) as pool:
        for chunk in stream:
            if not is_arrow(chunk):  # pandas chunks (rare: only Arrow readers stream here) stay in this process
                add_chunk(accs, chunk)
                continue
            table = chunk if isinstance(chunk, pa.Table) else pa.Table.from_batches([chunk])
            names, order = column_order(table.schema.names)
            for acc in accs.values():
                acc.add_sums(tuple(names[i] for i in order), 0, 0, 0)  # another column set: refused here, at once
            if not pool.offer(table):  # every worker busy: this process's turn
                add_chunk(accs, table)
        pool.finish(accs)


class _WorkerPool:
    """Worker processes ``python -m dpcore.record_fingerprint``, each reading an Arrow IPC stream on its stdin and
    printing its partial sums at the end (plain subprocesses, not multiprocessing: that would re-run the caller's
    main script in every worker, and fork a process whose reader threads hold locks). A feeder thread per worker
    takes chunks from a queue as fast as its worker reads them. A worker that fails (or cannot start) makes the
    whole fingerprint fail with its message: a partial sum is never used."""

    def __init__(self, size: int, versions: tuple[int, ...]) -> None:
        import queue
        import threading

        self.versions = versions
        self.procs = [_start_worker(versions) for _ in range(size)]
        self.chunks: queue.Queue = queue.Queue(maxsize=max(size, 1))
        self.computed_here: list[tuple[int, tuple[tuple[str, ...], int, int, int]]] = []
        self.failed: list[Any] = []
        self.feeders = [threading.Thread(target=self._feed, args=(proc,), daemon=True) for proc in self.procs]
        for thread in self.feeders:
            thread.start()

    def __enter__(self) -> _WorkerPool:
        return self

    def offer(self, table: Any) -> bool:
        """Hand ``table`` to a free worker; False when all are busy (the caller hashes it)."""
        import queue

        try:
            self.chunks.put_nowait(table)
        except queue.Full:
            return False
        return True

    def _feed(self, proc: Any) -> None:
        import pyarrow as pa

        writer: Any = None
        schema: Any = None
        while (table := self.chunks.get()) is not None:
            if self.failed:
                continue  # drain: the fingerprint fails anyway
            if writer is None:
                writer, schema = pa.ipc.new_stream(proc.stdin, table.schema), table.schema
            elif not schema.equals(table.schema):  # other column types than this worker's stream
                self.computed_here += [(v, chunk_sums(table, v)) for v in self.versions]
                continue
            try:
                writer.write_table(table)
            except (pa.ArrowInvalid, OSError):
                self.failed.append(proc)
        try:
            if writer is not None:
                writer.close()
            proc.stdin.close()
        except OSError:
            self.failed.append(proc)

    def finish(self, accs: dict[int, RecordFingerprint]) -> None:
        """End the streams and add every worker's partial sums to ``accs`` (one per version)."""
        for _ in self.feeders:
            self.chunks.put(None)
        for thread in self.feeders:
            thread.join()
        if self.failed:
            raise _worker_failed(self.failed[0])
        for v, sums in self.computed_here:
            accs[v].add_sums(*sums)
        for proc in self.procs:
            out = proc.stdout.read()
            if proc.wait() != 0:
                raise _worker_failed(proc)
            part = json.loads(out)
            if part["rows"]:
                for v, (sum1, sum2) in part["sums"].items():
                    accs[int(v)].add_sums(tuple(part["columns"]), int(sum1), int(sum2), int(part["rows"]))

    def __exit__(self, *exc: Any) -> None:
        import queue

        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for thread in self.feeders:  # after a failure: unblock the feeders so they end
            while thread.is_alive():
                try:
                    self.chunks.put_nowait(None)
                except queue.Full:
                    pass
                thread.join(timeout=0.05)


def _start_worker(versions: tuple[int, ...] = (LATEST_VERSION,)) -> Any:
    import os
    import subprocess
    import sys
    import tempfile

    root = str(Path(__file__).resolve().parents[2])  # the folder holding the dpcore package
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    errors = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpcore.record_fingerprint", *map(str, versions)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errors,
        env=env,
    )
    proc.error_file = errors  # type: ignore[attr-defined]
    return proc


def _worker_failed(proc: Any) -> Exception:
    proc.kill()
    proc.wait()
    proc.error_file.seek(0)
    lines = [line for line in proc.error_file.read().decode("utf-8", "replace").splitlines() if line.strip()]
    message = lines[-1] if lines else f"exit status {proc.returncode}"
    if message.startswith("dpcore.errors.") or "DPInputError" in message:
        return DPInputError(message.split(": ", 1)[-1])
    return RuntimeError(f"a record-fingerprint worker failed: {message}")


def serve_stream() -> None:
    """A worker: the partial row sums, in each version named by its arguments, of the Arrow IPC stream on stdin,
    as one JSON line on stdout."""
    import sys

    import pyarrow as pa

    accs = {v: RecordFingerprint(version=v) for v in check_versions([int(a) for a in sys.argv[1:]] or [LATEST_VERSION])}
    if sys.stdin.buffer.peek(1):  # type: ignore[union-attr]  # empty: no chunk was sent to this worker
        for batch in pa.ipc.open_stream(sys.stdin.buffer):
            add_chunk(accs, batch)
    first = next(iter(accs.values()))
    print(
        json.dumps(
            {
                "columns": list(first.columns or ()),
                "rows": first.rows,
                "sums": {str(v): [str(acc.sum1), str(acc.sum2)] for v, acc in accs.items()},
            }
        )
    )
