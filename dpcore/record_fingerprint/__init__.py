"""Record-canonical fingerprints: the identity of a data source's *records*, not of its bytes.

The ledger keeps one budget per population (the people protected); a data source is attached to its
population by this fingerprint. A fingerprint of the file's bytes let a re-save reset the budget (CRLF
line ends, reordered rows, a trailing newline, other quoting or encoding, a Parquet copy of a CSV all
gave a "new" file), so the fingerprint is computed from the parsed records instead:

* **Canonical value text** (:func:`canonical_values`), per value, after reading every column as text
  or as its typed value:

  - missing: a null, NaN, an empty or blank text, or one of pandas' default missing-value words
    (``NA``, ``N/A``, ``NULL``, ``nan``, ``None``, ``#N/A``, ...; case-insensitive) -> the null marker
    ``"\\x00"`` (the app's parser turns these words into NaN, the engines read them as text: both
    must give the same row);
  - a number (a numeric value, or a text that parses as one after removing surrounding blanks and
    thousands separators ``1,234.5``, or written with a decimal comma in a shape that cannot be anything
    else: ``1.234,56``, ``1.234.567``, ``45,5``) -> Python's ``repr`` of the float64, ``-0.0`` as ``0.0``,
    with integral values below 2**53 written without ``.0`` (``87000``): ``87000``, ``87000.0``,
    ``"87,000"`` and ``8.7e4`` are the same value, as the engines and the app read them. These are rules
    per value; the app decides a column's spelling from all its cells (``dpcore.data.detect_number_format``),
    so a column that only that rule resolves (``45,527`` beside ``45,5`` means 45.527 there, 45527 here)
    gives the app's upload and the file two fingerprints: two sources, which the data owner attaches to
    one population (``dpcore ledger population attach``);
  - a boolean, or the text ``true``/``false`` in any case -> ``true`` / ``false``;
  - anything else -> its text, stripped of surrounding blanks, in Unicode NFC (dates: their ISO text,
    e.g. ``2020-01-31``).

* **Two definitions of the hash** (``VERSIONS``), over the same canonical values: the same records have one
  fingerprint in each, and two values are one value in version 2 exactly when version 1 writes them alike.

  - **Version 1**: each row as text: for every column in the order of its (stripped) name,
    ``name \\x1f value``, joined by ``\\x1e``. Every column counts -- not only the income: another income
    column of the same records is the same people, and so is the same file read for another statistic. Each
    row text is hashed twice with SipHash-2-4 under two fixed keys (``pandas.util.hash_pandas_object``,
    stable since pandas 0.20); the fingerprint is SHA-256 over a domain tag, the row count and the two sums of
    the row hashes modulo 2**64.
  - **Version 2** (``LATEST_VERSION``; the comment above :func:`value_codes_from_text` defines it exactly):
    each value has a 64-bit code (a number its float64 bits, a text its SipHash, missing and booleans
    constants), each row two codes mixed from its values' codes under keys derived from the column names, and
    the fingerprint is SHA-256 over another tag, the row count and the two sums of the row codes. No text is
    written for a number, which makes it several times faster than version 1 (docs/benchmarks.md).
  - **Which one**: a ledger computes the versions fixed in it (``LedgerDB.record_fingerprint_versions``):
    version 2 for a new ledger; versions 1 and 2, in one pass, for a ledger whose sources were attached by
    version 1 before it was upgraded (a re-saved copy of such a source must still find its population).

  A sum does not depend on the rows' order, and partial sums of chunks (or of Spark partitions) add up, so
  every engine can compute it in one streaming pass.
* **Two readings, one value**: a pandas chunk goes through :func:`canonical_values` (the reference); an Arrow
  chunk (the engines' readers) through :func:`canonical_arrow` / :func:`arrow_value_codes`, Arrow's kernels with
  exact shortcuts, an order of magnitude faster than the reference (docs/benchmarks.md). A large stream of version 1 is hashed on every core by
  worker processes (:func:`batches_fingerprints`): the hash holds the GIL, and partial sums add up.

What it does not do: records that differ in any value (one person's income edited, a column added or
dropped, a sample of the rows) are another source. Attaching such a source to a population is the
data owner's statement that it describes the same people (``python -m dpcore ledger ...``);
dpcore refuses only a source whose records are *already* attached elsewhere. The fingerprint is a
hash of confidential data: it stays in the ledger and never reaches a release record.

The package, one concern per module (this ``__init__`` imports their public names: ``dpcore.record_fingerprint.<name>``
is their public path): :mod:`~dpcore.record_fingerprint.canonical` (the canonical value text, from pandas and from
Arrow, and version 1's row hashes), :mod:`~dpcore.record_fingerprint.codes` (version 2's value and row codes),
:mod:`~dpcore.record_fingerprint.accumulate` (the fingerprint of chunks, frames and versions) and
:mod:`~dpcore.record_fingerprint.streams` (a stream of batches, on several cores; ``python -m
dpcore.record_fingerprint`` is a worker).
"""

from __future__ import annotations

from .accumulate import (
    DOMAIN_TAG,
    DOMAIN_TAG_V2,
    LATEST_VERSION,
    VERSIONS,
    RecordFingerprint,
    RecordFingerprints,
    check_versions,
    frame_fingerprint,
    frame_fingerprints,
)
from .canonical import FIELD_SEP, MISSING_WORDS, NULL_MARK, ROW_HASH_KEYS, ROW_SEP, canonical_arrow, canonical_values
from .codes import TEXT_HASH_KEY, arrow_value_codes, value_codes_from_text
from .streams import PARALLEL_MIN_ROWS, PARALLEL_TASK_ROWS, batches_fingerprint, batches_fingerprints

__all__ = [
    "NULL_MARK",
    "FIELD_SEP",
    "ROW_SEP",
    "ROW_HASH_KEYS",
    "DOMAIN_TAG",
    "DOMAIN_TAG_V2",
    "VERSIONS",
    "LATEST_VERSION",
    "TEXT_HASH_KEY",
    "MISSING_WORDS",
    "canonical_values",
    "canonical_arrow",
    "value_codes_from_text",
    "arrow_value_codes",
    "RecordFingerprint",
    "RecordFingerprints",
    "check_versions",
    "frame_fingerprint",
    "frame_fingerprints",
    "PARALLEL_MIN_ROWS",
    "PARALLEL_TASK_ROWS",
    "batches_fingerprint",
    "batches_fingerprints",
]
