"""Every record of a source, every column, in chunks: the input of the record fingerprint
(:mod:`dpcore.record_fingerprint`) that attaches a source to its population in the ledger.

The engines read only the columns a plan needs; the fingerprint needs all of them (the same records
released for another income column are the same people). This reader is Arrow's (as the pandas engine
reads): CSV with every column as text, named from the header layout the engines share
(:func:`dpcore.engines.csv_layout`), Parquet with its types, a DuckDB query through DuckDB's Arrow
reader, a PostgreSQL query staged to Parquet. The DuckDB and Spark engines compute the same
fingerprint with their own scans; the canonical value text makes typed and text readings agree.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from typing import Any

from ..data.io import MAX_CSV_ROW_BYTES
from ..validation import DPInputError
from .base import Progress, Source, csv_layout, first_line, shown, stage_postgres

CHUNK_ROWS = 65_536
#: files of at least this many bytes hold more than ``record_fingerprint.PARALLEL_MIN_ROWS`` rows (a 1M-row
#: PSEO-like Parquet file is 13 MB, as CSV about 45 MB): their fingerprint starts its worker processes at once
LARGE_SOURCE_BYTES = 32 * 2**20


def is_large_source(source: Source) -> bool:
    """Whether ``source``'s files are large enough to fingerprint on every core from the first row."""
    size = source.file_bytes()
    return size is not None and size >= LARGE_SOURCE_BYTES


def arrow_record_batches(
    source: Source, *, workdir: str | None = None, progress: Progress | None = None
) -> Iterator[Any]:
    """pyarrow RecordBatches of every column of ``source``."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    if source.kind == "csv":
        for path in source.paths:
            layout = csv_layout(path)
            if layout.columns:
                read = pacsv.ReadOptions(
                    block_size=MAX_CSV_ROW_BYTES, skip_rows=1, column_names=[c.strip() for c in layout.columns]
                )
                types = {c.strip(): pa.string() for c in layout.columns}
            else:
                read = pacsv.ReadOptions(block_size=MAX_CSV_ROW_BYTES)
                types = None
            parse = layout.arrow_parse_options()
            convert = pacsv.ConvertOptions(
                column_types=types, null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=True
            )
            try:
                with pa.input_stream(path, compression="detect") as stream:
                    yield from pacsv.open_csv(stream, read_options=read, parse_options=parse, convert_options=convert)
            except (OSError, pa.ArrowException) as exc:
                raise DPInputError(
                    f"cannot read the CSV file {shown(os.path.basename(path))} to fingerprint its "
                    f"records: {first_line(exc)}"
                ) from None
        return
    if source.kind == "duckdb":
        import duckdb

        con = duckdb.connect(source.location, read_only=True)
        try:
            yield from con.sql(source.sql_query).to_arrow_reader(CHUNK_ROWS)
        except duckdb.Error as exc:
            raise DPInputError(
                f"DuckDB could not read the data to fingerprint its records: {first_line(exc)}"
            ) from None
        finally:
            con.close()
        return
    if source.kind == "postgresql":
        paths: tuple[str, ...] = (stage_postgres(source, workdir or ".", progress),)
    elif source.kind == "parquet":
        paths = source.paths
    else:  # pragma: no cover
        raise DPInputError(f"unknown source kind {source.kind!r}")
    for path in paths:
        try:
            yield from pq.ParquetFile(path).iter_batches(batch_size=CHUNK_ROWS)
        except (OSError, pa.ArrowException) as exc:
            raise DPInputError(
                f"cannot read the Parquet file {shown(os.path.basename(path))} to fingerprint its "
                f"records: {first_line(exc)}"
            ) from None


def source_record_fingerprints(
    source: Source, versions: Any = None, *, workdir: str | None = None, progress: Progress | None = None
) -> Any:
    """The record fingerprints (``record_fingerprint.RecordFingerprints``, in each of ``versions``; default the
    newest) of every row and column of ``source`` (Arrow reading, chunk by chunk, one pass)."""
    from ..record_fingerprint import LATEST_VERSION, batches_fingerprints

    return batches_fingerprints(
        arrow_record_batches(source, workdir=workdir, progress=progress),
        (LATEST_VERSION,) if versions is None else versions,
        large=is_large_source(source),
    )


def engine_record_fingerprints(engine: Any, versions: Any = None) -> Any:
    """The record fingerprints (in each of ``versions``; default the newest) of an open engine's source: the
    engine's own scan (``record_fingerprints(versions)``) when it has one, else the Arrow reading above (the same
    fingerprints by construction)."""
    from ..record_fingerprint import LATEST_VERSION

    versions = (LATEST_VERSION,) if versions is None else versions
    own = getattr(engine, "record_fingerprints", None)
    if callable(own):
        return own(versions)
    return source_record_fingerprints(
        engine.source, versions, workdir=getattr(engine, "workdir", None), progress=getattr(engine, "progress", None)
    )


def file_fingerprints(path: str | os.PathLike, versions: Any = None) -> Any:
    """The record fingerprints (in each of ``versions``; default the newest) of a CSV (optionally compressed) or
    Parquet file, read with Arrow in chunks: CSV with every column as text (the header layout the engines use),
    Parquet with its types."""
    from pathlib import Path

    path = Path(path).expanduser()
    if not path.is_file():
        raise DPInputError(f"no such file to fingerprint: {str(path)!r}")
    with open(path, "rb") as fh:
        parquet = fh.read(4) == b"PAR1"
    source = Source(kind="parquet" if parquet else "csv", location=str(path), paths=(str(path),))
    return source_record_fingerprints(source, versions)


#: domain tag of :func:`source_bytes_key` (a byte key is never equal to a record fingerprint)
BYTES_KEY_TAG = b"dpcore-source-bytes-v1\x00"


def source_bytes_key(source: Source) -> str | None:
    """A key of the exact bytes of a file source (CSV or Parquet; None for a database): SHA-256 over a domain
    tag, the kind and the sorted SHA-256 digests of its files (about 1.3 GB/s here, against ~0.3 µs of CPU per
    row for the record fingerprint on two cores).

    The same bytes are the same records, read by the same rules, so a byte key attached to a population in
    the ledger (beside the record fingerprint computed from those bytes, which is attached there too) lets a
    release of the same files skip the record fingerprint and reach the same decision: attach to that
    population, or refuse another. Bytes seen for the first time are fingerprinted record by record."""
    if source.kind not in ("csv", "parquet") or not source.paths:
        return None
    digests = []
    for path in source.paths:
        try:
            contents = hashlib.sha256()
            with open(path, "rb") as fh:
                while block := fh.read(1 << 23):
                    contents.update(block)
            digests.append(contents.hexdigest())
        except OSError as exc:
            raise DPInputError(
                f"cannot read {shown(os.path.basename(path))} to key its bytes: {exc.strerror or exc}"
            ) from None
    key = hashlib.sha256(BYTES_KEY_TAG + source.kind.encode("ascii") + b"\x00")
    for file_digest in sorted(digests):
        key.update(file_digest.encode("ascii"))
    return key.hexdigest()
