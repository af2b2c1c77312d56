"""Version 2 of the fingerprint: every canonical value's 64-bit code and each row's two codes (the definition is
the comment below)."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pandas as pd

from .canonical import (
    NULL_MARK,
    arrow_text_canonical,
    canonical_values,
    few_distinct,
    frame_column,
    number_text,
    to_arrow_strings,
)

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
#: how version 1 writes a number (:func:`number_text`): an integer, Python's repr of a float, or an infinity
_NUMBER_RENDERING = r"^-?(inf|[0-9]+(\.[0-9]+)?(e[+-][0-9]+)?)$"


# ---------------------------------------------------------------------------------------------------------
# Version 2: the same canonical values, coded column by column. Version 1 writes every value as text, joins
# each row's texts and hashes the row twice with SipHash: most of its time goes to that text alone (the join,
# the bytes objects, the hashes; docs/benchmarks.md). Version 2 writes no text
# for a number: it codes it by its float64 bits.
#
# The definition. Every value has a 64-bit code, a function of its version-1 canonical text t alone
# (:func:`value_codes_from_text`): the null mark, "true" and "false" are constants; a t that version 1 writes for a
# number x (t == number_text(x), or "inf"/"-inf") is the bits of x xor a tag; any other t is its SipHash-2-4 under
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
        text = to_arrow_strings(np.asarray(list(text), dtype=object))
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
        again[finite] = number_text(values[finite])
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
    """Version 2's codes of an Arrow string column: version 1's canonical text (:func:`arrow_text_canonical`), its
    plain decimals coded by the float64 Arrow parsed (version 1 writes them as number_text of that float, whose
    code is the float's: the text reads back to the same float)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text, where, numbers = arrow_text_canonical(column)
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
        if few_distinct(column):
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


def frame_column_codes(column: pd.Series) -> np.ndarray:
    """Version 2's codes of one pandas column: :func:`arrow_value_codes` where :func:`frame_column` takes Arrow's
    path, else the definition from the reference text."""
    return frame_column(column, arrow_value_codes, value_codes_from_text)


def code_row_sums(
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
