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
    written for a number: about 0.06 µs of CPU per row of the PSEO-like table against 0.35 µs for version 1.
  - **Which one**: a ledger computes the versions fixed in it (``LedgerDB.record_fingerprint_versions``):
    version 2 for a new ledger; versions 1 and 2, in one pass, for a ledger whose sources were attached by
    version 1 before it was upgraded (a re-saved copy of such a source must still find its population).

  A sum does not depend on the rows' order, and partial sums of chunks (or of Spark partitions) add up, so
  every engine can compute it in one streaming pass.
* **Two readings, one value**: a pandas chunk goes through :func:`canonical_values` (the reference); an Arrow
  chunk (the engines' readers) through :func:`canonical_arrow` / :func:`arrow_value_codes`, Arrow's kernels with
  exact shortcuts (version 1: about 0.4 µs of CPU per row of the PSEO-like table against 4-5 µs for the
  reference, measured on this project's 2-core VM). A large stream of version 1 is hashed on every core by
  worker processes (:func:`batches_fingerprints`): the hash holds the GIL, and partial sums add up.

What it does not do: records that differ in any value (one person's income edited, a column added or
dropped, a sample of the rows) are another source. Attaching such a source to a population is the
data owner's statement that it describes the same people (``python -m dpcore ledger ...``);
dpcore refuses only a source whose records are *already* attached elsewhere. The fingerprint is a
hash of confidential data: it stays in the ledger and never reaches a release record.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from . import defaults
from .validation import DPInputError, check_int

NULL_MARK = "\x00"
FIELD_SEP = "\x1f"
ROW_SEP = "\x1e"
#: the two SipHash keys (16 bytes each) of the row hashes; fixed forever (changing them changes every id)
ROW_HASH_KEYS = ("dpcore-rows-k1-0", "dpcore-rows-k2-0")
DOMAIN_TAG = b"dpcore-record-fingerprint-v1\x00"
#: the definitions of the fingerprint: 1 hashes each canonical row text; 2 codes the same canonical values column
#: by column (numbers by their float64 bits: no text is written). A ledger computes the versions it was created
#: with (``LedgerDB.record_fingerprint_versions``): a ledger holding version-1 sources keeps computing version 1
VERSIONS = (1, 2)
LATEST_VERSION = 2
DOMAIN_TAG_V2 = b"dpcore-record-fingerprint-v2\x00"
#: the SipHash key (16 bytes) of version 2's codes of the canonical texts that are not numbers; fixed forever
TEXT_HASH_KEY = "dpcore-values-k0"
#: version 2's codes: a number is its float64 bits xor a tag; missing, false and true are constants (the
#: fractional parts of the square roots of 2, 3, 5 and 7, SHA-256's initial words: any fixed distinct values do)
_NUMBER_TAG = np.uint64(0x6A09E667F3BCC908)
_NULL_CODE = np.uint64(0xBB67AE8584CAA73B)
_FALSE_CODE = np.uint64(0x3C6EF372FE94F82B)
_TRUE_CODE = np.uint64(0xA54FF53A5F1D36F1)
#: MurmurHash3's 64-bit finalizer (fmix64): a bijection of uint64 whose every output bit depends on every input bit
_FMIX_SHIFT = np.uint64(33)
_FMIX_MULTIPLIERS = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))
#: how version 1 writes a number (:func:`_number_text`): an integer, Python's repr of a float, or an infinity
_NUMBER_RENDERING = r"^-?(inf|[0-9]+(\.[0-9]+)?(e[+-][0-9]+)?)$"
#: pandas' default missing-value words (pandas._libs.parsers.STR_NA_VALUES), compared case-insensitively
MISSING_WORDS = frozenset(
    w.lower()
    for w in (
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    )
)
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")
#: decimal-comma spellings that cannot be anything else (1.234,56 / 1.234.567 / 45,5 / 45,5678)
_DECIMAL_COMMA = re.compile(r"^[+-]?(\d{1,3}(\.\d{3})+,\d+|\d{1,3}(\.\d{3}){2,}|\d+,(\d{1,2}|\d{4,}))$")
_EXACT_INT_LIMIT = float(2**53)


def _number_text(x: np.ndarray) -> np.ndarray:
    """Canonical text of finite float64 values (see the module docstring)."""
    x = np.asarray(x, dtype=float) + 0.0  # -0.0 + 0.0 == 0.0
    out = np.empty(x.shape, dtype=object)
    integral = (np.abs(x) < _EXACT_INT_LIMIT) & (np.floor(x) == x)
    if integral.any():
        out[integral] = x[integral].astype(np.int64).astype(str)
    rest = ~integral
    if rest.any():
        # NumPy's float64 -> str is the shortest round-trip text, identical to Python's repr (checked on
        # 500,000 values from 5e-324 to 1.8e308 in tests/test_population.py), and vectorised
        out[rest] = x[rest].astype(str).astype(object)
    return out


def canonical_values(column: pd.Series | np.ndarray | list) -> np.ndarray:
    """The canonical text of every value of one column (object array of str; ``NULL_MARK`` for missing).
    Any column is named, missing and infinite values included: it writes records, it does not check incomes."""
    s = column if isinstance(column, pd.Series) else pd.Series(column)
    s = s.reset_index(drop=True)
    n = len(s)
    out = np.empty(n, dtype=object)
    out[:] = NULL_MARK  # (np.full would turn the NUL character into an empty string)
    if n == 0:
        return out
    if pd.api.types.is_bool_dtype(s.dtype):
        present = s.notna().to_numpy()
        out[present] = np.where(s[present].astype(bool).to_numpy(), "true", "false")
        return out
    if pd.api.types.is_numeric_dtype(s.dtype):
        x = pd.to_numeric(s, errors="coerce").astype(float).to_numpy()
        finite = np.isfinite(x)
        out[finite] = _number_text(x[finite])
        infinite = np.isinf(x)
        out[infinite] = np.where(x[infinite] > 0, "inf", "-inf")
        return out
    present = s.notna().to_numpy()
    if not present.any():
        return out
    objects = s[present]
    if pd.api.types.infer_dtype(objects, skipna=True) == "string":  # text only (CSV read as text): no per-value work
        booleans = np.zeros(len(objects), dtype=bool)
        text = objects.astype(object)
    else:
        booleans = objects.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy()
        text = (
            objects.map(lambda v: ("true" if v else "false") if isinstance(v, (bool, np.bool_)) else _float_or_text(v))
            .astype(str)
            .astype(object)
        )
    text = pd.Series(text.to_numpy(dtype=object), dtype=object).str.strip()
    if not text.str.isascii().all():
        text = text.str.normalize("NFC")
    lower = text.str.lower()
    result = text.to_numpy(dtype=object, copy=True)
    missing = lower.isin(MISSING_WORDS).to_numpy() & ~booleans
    result[missing] = NULL_MARK
    truth = lower.isin(("true", "false")).to_numpy() & ~missing
    result[truth] = lower.to_numpy(dtype=object)[truth]
    candidates = ~missing & ~truth
    if candidates.any():
        cand = text[candidates]
        number = pd.to_numeric(cand, errors="coerce").astype(float).to_numpy(copy=True)
        # only texts that are not plain numbers can be numbers with separators (few, in most columns)
        retry = np.flatnonzero(np.isnan(number))
        if retry.size:
            maybe = cand.iloc[retry]
            retry = retry[(maybe.str.contains(",", regex=False) | maybe.str.contains(".", regex=False)).to_numpy()]
        if retry.size:
            other = cand.iloc[retry]
            thousands = other.str.match(_THOUSANDS).to_numpy(dtype=bool)
            decimal_comma = other.str.match(_DECIMAL_COMMA).to_numpy(dtype=bool)
            unsep = other.where(~thousands, other.str.replace(",", "", regex=False))
            unsep = unsep.where(
                ~decimal_comma, other.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
            )
            number[retry] = pd.to_numeric(unsep, errors="coerce").astype(float).to_numpy()
        # a text "inf"/"infinity" parses as a float: keep the float's own spelling
        is_number = ~np.isnan(number)
        idx = np.flatnonzero(candidates)[is_number]
        finite = np.isfinite(number[is_number])
        vals = number[is_number]
        texts = np.empty(vals.shape, dtype=object)
        texts[finite] = _number_text(vals[finite])
        texts[~finite] = np.where(vals[~finite] > 0, "inf", "-inf")
        result[idx] = texts
    out[present] = result
    return out


def _float_or_text(value: Any) -> Any:
    """Typed values other than text as the engines print them: numbers stay numbers (parsed again
    below), dates their ISO text, bytes decoded as UTF-8."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, (float, np.floating)) and np.isnan(value):
        return ""
    if hasattr(value, "isoformat") and not isinstance(value, str):
        text = value.isoformat()
        return text.replace("T", " ") if "T" in text else text
    return value


@dataclass
class RecordFingerprint:
    """Accumulates chunks of records (DataFrames) in one ``version`` of the definition; :meth:`hexdigest` is the
    fingerprint.

    Chunks may come in any order and be split anywhere: only the multiset of rows counts.
    ``merge`` adds a partial accumulator (e.g. one per Spark partition)."""

    rows: int = 0
    sum1: int = 0
    sum2: int = 0
    columns: tuple[str, ...] | None = None
    version: int = LATEST_VERSION

    def __post_init__(self) -> None:
        check_versions((self.version,))

    def update(self, frame: Any) -> RecordFingerprint:
        """Add one chunk: a pandas DataFrame, or a pyarrow RecordBatch / Table (read column by column with
        Arrow's compute kernels: :func:`canonical_arrow` / :func:`arrow_value_codes`, equal to the reference)."""
        if not _is_arrow(frame) and not isinstance(frame, pd.DataFrame):
            raise TypeError(
                f"a chunk of records must be a pandas DataFrame or a pyarrow RecordBatch, got {type(frame).__name__}"
            )
        return self._add(*_chunk_sums(frame, self.version))

    def _add(self, columns: tuple[str, ...] | None, s1: int, s2: int, n: int) -> RecordFingerprint:
        if columns is not None:
            if self.columns is None:
                self.columns = columns
            elif self.columns != columns:
                raise DPInputError(
                    f"the parts of the data have different columns: {list(self.columns)[:8]} and {list(columns)[:8]}"
                )
        self.rows += n
        self.sum1 = (self.sum1 + s1) % (1 << 64)
        self.sum2 = (self.sum2 + s2) % (1 << 64)
        return self

    def merge(self, rows: int, sum1: int, sum2: int, columns: Iterable[str] | None = None) -> RecordFingerprint:
        if columns is not None:
            columns = tuple(columns)
            if self.columns is not None and self.columns != columns:
                raise DPInputError("the parts of the data have different columns")
            self.columns = columns
        self.rows += int(rows)
        self.sum1 = (self.sum1 + int(sum1)) % (1 << 64)
        self.sum2 = (self.sum2 + int(sum2)) % (1 << 64)
        return self

    def hexdigest(self) -> str:
        if self.rows == 0:
            raise DPInputError("the data have no rows: there are no records to fingerprint")
        digest = hashlib.sha256(DOMAIN_TAG if self.version == 1 else DOMAIN_TAG_V2)
        digest.update(
            json.dumps({"rows": self.rows, "sum1": self.sum1, "sum2": self.sum2}, sort_keys=True).encode("utf-8")
        )
        return digest.hexdigest()


def _column_order(labels: Iterable[Any]) -> tuple[list[str], list[int]]:
    """The stripped column names and the positions in name order (the canonical row's column order)."""
    names = [str(c).strip() for c in labels]
    if len(set(names)) != len(names):
        raise DPInputError(
            "the data have two columns with the same name: their records cannot be fingerprinted (rename one)"
        )
    return names, sorted(range(len(names)), key=lambda i: names[i])


# ---------------------------------------------------------------------------------------------------------
# The same canonical text from Arrow columns, with Arrow's compute kernels (no Python object per value
# until the row hash). Every shortcut below is exact by an argument given beside it; whatever it cannot
# prove equal goes through canonical_values, so both paths give one fingerprint (tests/test_population.py
# compares them value by value on random and adversarial columns).
# ---------------------------------------------------------------------------------------------------------

#: the ASCII characters Python's str.strip() removes (str.isspace), so Arrow's trim equals the reference
_ASCII_WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "
#: a plain decimal: pandas' parser (an integer mantissa times an exact power of ten, at most 15 digits so
#: the mantissa is exact and the one division correctly rounded) and Arrow's (correctly rounded) agree on it
_PLAIN_DECIMAL = r"^-?([0-9]+\.?[0-9]*|\.[0-9]+)$"
_PLAIN_DECIMAL_DIGITS = 15
#: texts pandas' to_numeric might read as a number (its characters, and its words for infinity):
#: everything else is kept as text without asking it
_NUMBER_CHARACTERS = r"^[0-9+\-.eE,]+$"
_INFINITY_WORDS = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity")
#: Python writes a float without an exponent from 1e-4 up to 1e16 (repr's "r" format)
_FIXED_NOTATION = (1e-4, 1e16)


def _is_arrow(chunk: Any) -> bool:
    module = type(chunk).__module__ or ""
    return module.startswith("pyarrow") and hasattr(chunk, "num_rows") and hasattr(chunk, "column")


def _to_arrow_strings(values: np.ndarray) -> Any:
    import pyarrow as pa

    return pa.array(values, type=pa.string())


def _arrow_number_text(x: Any) -> Any:
    """Canonical text (as :func:`_number_text`) of a float64 Arrow array without nulls: integral values below
    2**53 through an int64 cast; others through Arrow's shortest round-trip formatting, kept where Python's
    repr has no exponent either (the same shortest digits, written the same way); the rest by NumPy."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pc.all(pc.and_(pc.equal(pc.floor(x), x), pc.less(pc.abs(x), _EXACT_INT_LIMIT))).as_py() is not False:
        return pc.cast(pc.cast(x, pa.int64()), pa.string())  # whole numbers only (e.g. whole dollars): -0.0 is "0"
    values = x.to_numpy(zero_copy_only=False) + 0.0  # -0.0 -> 0.0
    integral = (np.abs(values) < _EXACT_INT_LIMIT) & (np.floor(values) == values)
    floats = pa.array(values)
    ints = pa.array(np.where(integral, values, 0.0).astype(np.int64))
    text = pc.if_else(pa.array(integral), pc.cast(ints, pa.string()), pc.cast(floats, pa.string()))
    magnitude = np.abs(values)
    fixed = (magnitude >= _FIXED_NOTATION[0]) & (magnitude < _FIXED_NOTATION[1])
    redo = ~integral & ~(fixed & ~pc.match_substring(text, "e").to_numpy(zero_copy_only=False))
    if redo.any():
        out = text.to_numpy(zero_copy_only=False).astype(object)
        out[redo] = _number_text(values[redo])
        return _to_arrow_strings(out)
    return text


def _replace_at(text: Any, positions: np.ndarray, values: Any) -> Any:
    """``text`` with the entries at ``positions`` replaced by ``values`` (Arrow strings)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    mask = np.zeros(len(text), dtype=bool)
    mask[positions] = True
    index = np.cumsum(mask) - 1  # the k-th replaced position takes values[k]
    spread = pc.take(values, pa.array(np.where(mask, index, 0)))
    return pc.if_else(pa.array(mask), spread, text)


def _arrow_text_canonical(column: Any) -> tuple[Any, Any, Any]:
    """The canonical text of an Arrow string column (see :func:`canonical_values`) except its plain decimals:
    (text, their positions or None, their float64 values as an Arrow array or None). Version 1 writes them
    (:func:`_arrow_text_column`), version 2 codes their values (:func:`_arrow_text_codes`). Non-ASCII columns (NFC,
    Unicode blanks) go through the reference path."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pc.any(pc.invert(pc.string_is_ascii(column))).as_py():
        return _to_arrow_strings(canonical_values(pd.Series(column.to_pylist(), dtype=object))), None, None
    text = pc.utf8_trim(column, characters=_ASCII_WHITESPACE)
    lower = pc.ascii_lower(text)
    missing = pc.or_(pc.is_null(column), pc.fill_null(pc.is_in(lower, value_set=pa.array(sorted(MISSING_WORDS))), True))
    truth = pc.fill_null(pc.is_in(lower, value_set=pa.array(["true", "false"])), False)
    out = pc.if_else(missing, NULL_MARK, pc.if_else(truth, lower, text))
    candidates = pc.and_(pc.invert(missing), pc.invert(truth))
    digits = pc.subtract(pc.utf8_length(text), pc.add(pc.count_substring(text, "-"), pc.count_substring(text, ".")))
    plain = pc.and_(pc.match_substring_regex(text, _PLAIN_DECIMAL), pc.less_equal(digits, _PLAIN_DECIMAL_DIGITS))
    fast = pc.fill_null(pc.and_(candidates, plain), False).to_numpy(zero_copy_only=False)
    maybe = pc.or_(
        pc.match_substring_regex(text, _NUMBER_CHARACTERS), pc.is_in(lower, value_set=pa.array(_INFINITY_WORDS))
    )
    slow = pc.fill_null(pc.and_(candidates, maybe), False).to_numpy(zero_copy_only=False) & ~fast
    if slow.any():
        where = np.flatnonzero(slow)
        reference = canonical_values(pd.Series(pc.take(text, pa.array(where)).to_pylist(), dtype=object))
        out = _replace_at(out, where, _to_arrow_strings(reference))
    if not fast.any():
        return out, None, None
    where = np.flatnonzero(fast)
    return out, where, pc.cast(pc.take(text, pa.array(where)), pa.float64())


def _arrow_text_column(column: Any) -> Any:
    """Canonical text of an Arrow string column (see :func:`canonical_values`)."""
    out, where, numbers = _arrow_text_canonical(column)
    if where is None:
        return out
    return _replace_at(out, where, _arrow_number_text(numbers))


#: a text column of at least this many values is canonicalized through its dictionary when a sample of its values
#: has few distinct ones (:func:`_few_distinct`): the text kernels cost about 0.09 µs a value (trim, lower, the
#: missing words, the number patterns), dictionary encoding 0.008 µs (the 50 states of 2M rows read by DuckDB)
_DICTIONARY_MIN_VALUES = 8_192
_DICTIONARY_SAMPLE = 2_048


def _few_distinct(column: Any) -> bool:
    """Whether a string column is worth dictionary-encoding: long, and at most one distinct value in 16 among its
    first values (a wrong guess costs time, never a different text)."""
    import pyarrow.compute as pc

    if len(column) < _DICTIONARY_MIN_VALUES:
        return False
    sample = column.slice(0, _DICTIONARY_SAMPLE)
    return pc.count_distinct(sample).as_py() * 16 <= len(sample)


def canonical_arrow(column: Any) -> Any:
    """The canonical text of every value of one Arrow column (a pyarrow string array; ``NULL_MARK`` for
    missing), equal to :func:`canonical_values` of the column as pandas reads it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not isinstance(column, pa.Array):
        raise TypeError(
            f"canonical_arrow reads one pyarrow Array or ChunkedArray, got {type(column).__name__} "
            "(canonical_values reads pandas and Python values)"
        )
    kind = column.type
    if pa.types.is_dictionary(kind):  # each distinct value once, then spread by the indices
        spread = pc.take(canonical_arrow(column.dictionary), column.indices)
        return pc.fill_null(spread, NULL_MARK)
    if pa.types.is_large_string(kind):
        column = column.cast(pa.string())
        kind = column.type
    if pa.types.is_string(kind):
        if _few_distinct(column):  # e.g. states, sexes: each distinct text canonicalized once (the same texts)
            return canonical_arrow(pc.dictionary_encode(column))
        return _arrow_text_column(column)
    if pa.types.is_boolean(kind):
        return pc.fill_null(pc.if_else(column, "true", "false"), NULL_MARK)
    if pa.types.is_integer(kind) and len(column) and column.null_count < len(column):
        low, high = pc.min_max(column).values()
        if abs(int(low.as_py())) < _EXACT_INT_LIMIT and abs(int(high.as_py())) < _EXACT_INT_LIMIT:
            return pc.fill_null(pc.cast(column, pa.string()), NULL_MARK)
    if pa.types.is_floating(kind) and not pa.types.is_float16(kind):
        values = pc.cast(column, pa.float64())
        present = pc.and_(pc.is_valid(values), pc.is_finite(pc.fill_null(values, 0.0))).to_numpy(zero_copy_only=False)
        if present.all():
            return _arrow_number_text(values)
        out = canonical_values(column.to_pandas())
        return _to_arrow_strings(out)
    return _to_arrow_strings(canonical_values(column.to_pandas()))


def _frame_column(column: pd.Series, through_arrow: Any, from_reference: Any) -> Any:
    """One pandas column read by ``through_arrow`` (Arrow's kernels) for numbers, booleans and all-text columns,
    else ``from_reference(canonical_values(column))`` (mixed objects, categories, dates)."""
    import pyarrow as pa

    dtype = column.dtype
    numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)
    text = pd.api.types.is_string_dtype(dtype) and (
        not pd.api.types.is_object_dtype(dtype) or pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty")
    )
    if numeric or text:
        try:
            return through_arrow(pa.array(column, from_pandas=True))
        except (pa.ArrowException, TypeError, ValueError):
            pass
    return from_reference(canonical_values(column))


def _frame_column_text(column: pd.Series) -> Any:
    """Canonical text of one pandas column (Arrow strings): :func:`canonical_arrow` where :func:`_frame_column`
    takes Arrow's path (compared value by value with the reference in the tests), else :func:`canonical_values`."""
    return _frame_column(column, canonical_arrow, _to_arrow_strings)


def _text_row_sums(
    names: list[str], order: list[int], text_of: Any, rows: int
) -> tuple[tuple[str, ...], int, int, int]:
    """Join the canonical texts (``text_of(i)``, Arrow strings) into the row texts and sum their two hashes."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pandas.util import hash_array

    columns = tuple(names[i] for i in order)
    if rows == 0:
        return columns, 0, 0, 0
    pieces: list[Any] = []
    for k, i in enumerate(order):  # name \x1f value, joined by \x1e: one join with the names as scalars
        pieces += [(ROW_SEP if k else "") + names[i] + FIELD_SEP, text_of(i)]
    # as bytes objects, the UTF-8 that the hash reads: str objects would be encoded again for each key
    # (the same hashes; 0.15 s instead of 0.35 s per million rows)
    row_text = pc.binary_join_element_wise(*pieces, "").cast(pa.binary()).to_numpy(zero_copy_only=False)
    h1 = hash_array(row_text, hash_key=ROW_HASH_KEYS[0], categorize=False)
    h2 = hash_array(row_text, hash_key=ROW_HASH_KEYS[1], categorize=False)
    with np.errstate(over="ignore"):
        return columns, int(h1.sum(dtype=np.uint64)), int(h2.sum(dtype=np.uint64)), rows


# ---------------------------------------------------------------------------------------------------------
# Version 2: the same canonical values, coded column by column. Version 1 writes every value as text, joins
# each row's texts and hashes the row twice with SipHash: about 0.25 µs of CPU per row of the PSEO-like table
# goes to that text alone (the join 0.08, the bytes objects 0.06, the hashes 0.11). Version 2 writes no text
# for a number: it codes it by its float64 bits.
#
# The definition. Every value has a 64-bit code, a function of its version-1 canonical text t alone
# (:func:`value_codes_from_text`): the null mark, "true" and "false" are constants; a t that version 1 writes for a
# number x (t == _number_text(x), or "inf"/"-inf") is the bits of x xor a tag; any other t is its SipHash-2-4 under
# TEXT_HASH_KEY. The map t -> code is injective up to 64-bit hash collisions (distinct numbers have distinct bits;
# the kinds are told apart by t itself), so two values have one code exactly when version 1 writes them alike:
# the same re-saves, conversions and spellings are the same records in both versions. A row's two codes are
# fmix64(sum over its columns of fmix64(code xor K(column))) under two keys K derived from the column's stripped
# name (no column order, as version 1's name order); the fingerprint is SHA-256 over DOMAIN_TAG_V2, the row count
# and the two sums of the row codes mod 2**64 (any row order, any chunking, partial sums of workers and Spark
# partitions add up).
#
# The faster paths below code numbers, booleans and dictionaries without writing t; each is equal to the
# definition by the argument beside it, and tests/test_record_fingerprint_arrow.py compares them value by value
# with value_codes_from_text(canonical_values(...)) on random and adversarial columns.
# ---------------------------------------------------------------------------------------------------------


def _fmix64(x: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """MurmurHash3's fmix64 of a uint64 array, in place (``scratch``: an array of the same shape)."""
    for multiplier in _FMIX_MULTIPLIERS:
        np.right_shift(x, _FMIX_SHIFT, out=scratch)
        x ^= scratch
        x *= multiplier
    np.right_shift(x, _FMIX_SHIFT, out=scratch)
    x ^= scratch
    return x


def _column_keys(name: str) -> tuple[np.uint64, np.uint64]:
    """The two 64-bit keys of a column (its stripped name) in the row codes of version 2."""
    digest = hashlib.sha256(b"dpcore-record-fingerprint-v2-column\x00" + name.encode("utf-8")).digest()
    return np.uint64(int.from_bytes(digest[:8], "little")), np.uint64(int.from_bytes(digest[8:16], "little"))


def _number_codes(values: np.ndarray) -> np.ndarray:
    """Codes of numbers (float64, infinities included, no NaN): the bits of x + 0.0 (-0.0 is 0.0, as version 1
    writes it) xor the number tag."""
    x = np.asarray(values, dtype=np.float64) + 0.0
    codes = x.view(np.uint64)
    codes ^= _NUMBER_TAG
    return codes


def value_codes_from_text(text: Any) -> np.ndarray:
    """Version 2's code (uint64) of every canonical text (version 1's, as :func:`canonical_values` writes it; an Arrow
    string array or a sequence of str): the definition of version 2 (see the comment above). A text is a number's
    when it has the shape version 1 writes numbers in and reading it back (Python's float, correctly rounded)
    and writing it again gives the same text."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pandas.util import hash_array

    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    if not isinstance(text, pa.Array):
        text = _to_arrow_strings(np.asarray(list(text), dtype=object))
    n = len(text)
    codes = np.empty(n, dtype=np.uint64)
    if n == 0:
        return codes
    null = pc.equal(text, NULL_MARK).to_numpy(zero_copy_only=False)
    false = pc.equal(text, "false").to_numpy(zero_copy_only=False)
    true = pc.equal(text, "true").to_numpy(zero_copy_only=False)
    codes[null], codes[false], codes[true] = _NULL_CODE, _FALSE_CODE, _TRUE_CODE
    other = ~(null | false | true)
    number_like = pc.match_substring_regex(text, _NUMBER_RENDERING).to_numpy(zero_copy_only=False) & other
    if number_like.any():
        where = np.flatnonzero(number_like)
        written = pc.take(text, pa.array(where)).to_numpy(zero_copy_only=False).astype(object)
        values = written.astype(np.float64)  # float(str) per value
        finite = np.isfinite(values)
        again = np.empty(len(values), dtype=object)
        again[finite] = _number_text(values[finite])
        again[~finite] = np.where(values[~finite] > 0, "inf", "-inf")
        same = np.asarray(again == written, dtype=bool)
        codes[where[same]] = _number_codes(values[same])
        other[where[same]] = False
    if other.any():
        where = np.flatnonzero(other)
        texts = pc.take(text, pa.array(where)).to_numpy(zero_copy_only=False).astype(object)
        codes[where] = hash_array(texts, hash_key=TEXT_HASH_KEY, categorize=False)
    return codes


def _with_null_codes(codes: np.ndarray, column: Any) -> np.ndarray:
    if column.null_count:
        codes[column.is_null().to_numpy(zero_copy_only=False)] = _NULL_CODE
    return codes


def _arrow_text_codes(column: Any) -> np.ndarray:
    """Version 2's codes of an Arrow string column: version 1's canonical text (:func:`_arrow_text_canonical`), its
    plain decimals coded by the float64 Arrow parsed (version 1 writes them as _number_text of that float, whose
    code is the float's: the text reads back to the same float)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text, where, numbers = _arrow_text_canonical(column)
    if where is None:
        return value_codes_from_text(text)
    codes = np.empty(len(text), dtype=np.uint64)
    rest = np.ones(len(text), dtype=bool)
    rest[where] = False
    codes[rest] = value_codes_from_text(pc.filter(text, pa.array(rest)))
    codes[where] = _number_codes(numbers.to_numpy(zero_copy_only=False))
    return codes


def arrow_value_codes(column: Any) -> np.ndarray:
    """Version 2's code of every value of one Arrow column, equal to
    ``value_codes_from_text(canonical_arrow(column))`` without writing the numbers' text:

    * integers: the float64 of each value (NumPy's conversion rounds to nearest, as version 1's float does for
      |x| >= 2**53; below, the integer text reads back exactly);
    * floats: the float64 value (a float32 widens exactly); NaN and nulls are missing, infinities are numbers;
    * booleans: the constants; a dictionary: its values' codes, spread by the indices;
    * text: :func:`_arrow_text_codes` (a long column of few distinct values through its dictionary);
    * anything else (dates, decimals, float16, ...): the definition, from the reference text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not isinstance(column, pa.Array):
        raise TypeError(f"arrow_value_codes reads one pyarrow Array or ChunkedArray, got {type(column).__name__}")
    kind = column.type
    if pa.types.is_dictionary(kind):
        values = arrow_value_codes(column.dictionary)
        indices = pc.fill_null(column.indices, 0).to_numpy(zero_copy_only=False)
        codes = values[indices] if len(values) else np.full(len(column), _NULL_CODE, dtype=np.uint64)
        return _with_null_codes(codes, column)
    if pa.types.is_large_string(kind):
        column = column.cast(pa.string())
        kind = column.type
    if pa.types.is_string(kind):
        if _few_distinct(column):
            return arrow_value_codes(pc.dictionary_encode(column))
        return _arrow_text_codes(column)
    if pa.types.is_boolean(kind):
        truth = pc.fill_null(column, False).to_numpy(zero_copy_only=False)
        return _with_null_codes(np.where(truth, _TRUE_CODE, _FALSE_CODE).astype(np.uint64), column)
    if pa.types.is_integer(kind):
        values = pc.fill_null(column, 0).to_numpy(zero_copy_only=False).astype(np.float64)
        return _with_null_codes(_number_codes(values), column)
    if pa.types.is_floating(kind) and not pa.types.is_float16(kind):
        values = pc.fill_null(pc.cast(column, pa.float64()), 0.0).to_numpy(zero_copy_only=False)
        nan = np.isnan(values)
        codes = _number_codes(np.where(nan, 0.0, values))
        codes[nan] = _NULL_CODE
        return _with_null_codes(codes, column)
    return value_codes_from_text(canonical_values(column.to_pandas()))


def _frame_column_codes(column: pd.Series) -> np.ndarray:
    """Version 2's codes of one pandas column: :func:`arrow_value_codes` where :func:`_frame_column` takes Arrow's
    path, else the definition from the reference text."""
    return _frame_column(column, arrow_value_codes, value_codes_from_text)


def _code_row_sums(
    names: list[str], order: list[int], codes_of: Any, rows: int
) -> tuple[tuple[str, ...], int, int, int]:
    """Version 2's row codes from the columns' value codes (``codes_of(i)``), and their two sums."""
    columns = tuple(names[i] for i in order)
    if rows == 0:
        return columns, 0, 0, 0
    sums = (np.zeros(rows, dtype=np.uint64), np.zeros(rows, dtype=np.uint64))
    mixed = np.empty(rows, dtype=np.uint64)
    scratch = np.empty(rows, dtype=np.uint64)
    for i in order:
        codes = codes_of(i)
        for total, key in zip(sums, _column_keys(names[i]), strict=True):
            np.bitwise_xor(codes, key, out=mixed)
            total += _fmix64(mixed, scratch)
    return (
        columns,
        int(_fmix64(sums[0], scratch).sum(dtype=np.uint64)),
        int(_fmix64(sums[1], scratch).sum(dtype=np.uint64)),
        rows,
    )


def _chunk_sums(chunk: Any, version: int) -> tuple[tuple[str, ...], int, int, int]:
    """(column names in order, the two row sums, rows) of one chunk in ``version``: an Arrow RecordBatch or Table
    (the engines' readers) column by column with Arrow's kernels, or a pandas DataFrame (an upload the app parsed)
    through :func:`_frame_column`."""
    arrow = _is_arrow(chunk)
    names, order = _column_order(chunk.schema.names if arrow else chunk.columns)

    def column_of(i: int) -> Any:
        if arrow:
            return (canonical_arrow if version == 1 else arrow_value_codes)(chunk.column(i))
        return (_frame_column_text if version == 1 else _frame_column_codes)(chunk.iloc[:, i])

    combine = _text_row_sums if version == 1 else _code_row_sums
    return combine(names, order, column_of, chunk.num_rows if arrow else len(chunk))


def _add_chunk(accs: dict[int, RecordFingerprint], chunk: Any) -> None:
    """Add one chunk to the accumulator of each version."""
    for version, acc in accs.items():
        acc._add(*_chunk_sums(chunk, version))


def check_versions(versions: Any) -> tuple[int, ...]:
    """Fingerprint versions to compute: one of :data:`VERSIONS` or a non-empty collection of them, returned
    sorted without repeats."""
    if isinstance(versions, (int, np.integer)) and not isinstance(versions, bool):
        versions = (versions,)
    if isinstance(versions, (str, bytes)) or not isinstance(versions, Iterable):
        raise TypeError(f"versions must be a collection of record fingerprint versions {VERSIONS}, got {versions!r}")
    chosen = tuple(versions)
    for v in chosen:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) not in VERSIONS:
            raise ValueError(f"the record fingerprint versions are {VERSIONS}, got {versions!r}")
    if not chosen:
        raise ValueError(f"name at least one record fingerprint version of {VERSIONS}")
    return tuple(sorted({int(v) for v in chosen}))


@dataclass(frozen=True)
class RecordFingerprints:
    """The record fingerprints of one source, one per definition version computed (a ledger attaches the versions
    it reads: :attr:`dpcore.ledger.LedgerDB.record_fingerprint_versions`)."""

    by_version: tuple[tuple[int, str], ...]

    @property
    def versions(self) -> tuple[int, ...]:
        return tuple(v for v, _ in self.by_version)

    def of(self, version: int) -> str:
        for v, hexdigest in self.by_version:
            if v == version:
                return hexdigest
        raise ValueError(f"the record fingerprint version {version} was not computed (only {self.versions})")

    @property
    def latest(self) -> str:
        """The fingerprint of the newest version computed."""
        return self.by_version[-1][1]


def frame_fingerprint(frame: pd.DataFrame, *, version: int = LATEST_VERSION) -> str:
    """The record fingerprint of one DataFrame (every column; see the module docstring)."""
    return RecordFingerprint(version=version).update(frame).hexdigest()


def frame_fingerprints(frame: pd.DataFrame, versions: Any = VERSIONS) -> RecordFingerprints:
    """The record fingerprints of one DataFrame in each of ``versions``."""
    return RecordFingerprints(tuple((v, frame_fingerprint(frame, version=v)) for v in check_versions(versions)))


#: a stream is fingerprinted on several cores once it has passed this many rows: below it, starting worker
#: processes (about half a second each, to import pandas and pyarrow) costs more than it saves
PARALLEL_MIN_ROWS = 1_000_000
#: rows per task sent to a worker (Arrow buffers of a few MB: the memory of a task stays small)
PARALLEL_TASK_ROWS = 65_536


def _check_chunk(batch: Any) -> Any:
    if isinstance(batch, pd.DataFrame) or _is_arrow(batch):
        return batch
    raise TypeError(f"a record batch must be a pyarrow RecordBatch or a pandas DataFrame, got {type(batch).__name__}")


def _regrouped(batches: Iterable[Any], rows: int) -> Iterable[Any]:
    """Arrow batches regrouped into tables of about ``rows`` rows (fewer, larger tasks for the workers)."""
    import pyarrow as pa

    pending: list[Any] = []
    count = 0
    for batch in batches:
        if not _is_arrow(batch):
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
    the available cores when version 1 is asked (its row texts cost about 0.35 µs of CPU per row); one, this
    process, for version 2 alone (about 0.06 µs per row, as much as reading the rows: on this project's 2-core
    VM the workers made the first release of the PSEO-like table slower, 1.16 -> 1.35 s at 10M rows of the
    mean, 10.4 -> 10.9 s at 100M of the histogram). Workers are new interpreters (:class:`_WorkerPool`), never
    forks of this process, whose DuckDB or Arrow reader threads may hold locks. ``workers=1``: all in this
    process. ``large=True`` (the caller knows the stream passes that many rows): the workers start at once, and
    import while this process hashes the first chunks (0.3-0.4 s of one core sooner at 10M rows of version 1)."""
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
            _add_chunk(accs, chunk)
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
            if not _is_arrow(chunk):  # pandas chunks (rare: only Arrow readers stream here) stay in this process
                _add_chunk(accs, chunk)
                continue
            table = chunk if isinstance(chunk, pa.Table) else pa.Table.from_batches([chunk])
            names, order = _column_order(table.schema.names)
            for acc in accs.values():
                acc._add(tuple(names[i] for i in order), 0, 0, 0)  # another column set: refused here, at once
            if not pool.offer(table):  # every worker busy: this process's turn
                _add_chunk(accs, table)
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
                self.computed_here += [(v, _chunk_sums(table, v)) for v in self.versions]
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
            accs[v]._add(*sums)
        for proc in self.procs:
            out = proc.stdout.read()
            if proc.wait() != 0:
                raise _worker_failed(proc)
            part = json.loads(out)
            if part["rows"]:
                for v, (sum1, sum2) in part["sums"].items():
                    accs[int(v)]._add(tuple(part["columns"]), int(sum1), int(sum2), int(part["rows"]))

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

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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


def _serve_stream() -> None:
    """A worker: the partial row sums, in each version named by its arguments, of the Arrow IPC stream on stdin,
    as one JSON line on stdout."""
    import sys

    import pyarrow as pa

    accs = {v: RecordFingerprint(version=v) for v in check_versions([int(a) for a in sys.argv[1:]] or [LATEST_VERSION])}
    if sys.stdin.buffer.peek(1):  # type: ignore[union-attr]  # empty: no chunk was sent to this worker
        for batch in pa.ipc.open_stream(sys.stdin.buffer):
            _add_chunk(accs, batch)
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


if __name__ == "__main__":
    _serve_stream()
