"""The canonical text of every value (see :mod:`dpcore.record_fingerprint`): from pandas (:func:`canonical_values`,
the reference) and from Arrow (:func:`canonical_arrow`, Arrow's kernels with exact shortcuts), and version 1's row
hashes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ..validation import DPInputError

NULL_MARK = "\x00"
FIELD_SEP = "\x1f"
ROW_SEP = "\x1e"
#: the two SipHash keys (16 bytes each) of the row hashes; fixed forever (changing them changes every id)
ROW_HASH_KEYS = ("dpcore-rows-k1-0", "dpcore-rows-k2-0")
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


def number_text(x: np.ndarray) -> np.ndarray:
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
        out[finite] = number_text(x[finite])
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
        texts[finite] = number_text(vals[finite])
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


def column_order(labels: Iterable[Any]) -> tuple[list[str], list[int]]:
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


def is_arrow(chunk: Any) -> bool:
    module = type(chunk).__module__ or ""
    return module.startswith("pyarrow") and hasattr(chunk, "num_rows") and hasattr(chunk, "column")


def to_arrow_strings(values: np.ndarray) -> Any:
    import pyarrow as pa

    return pa.array(values, type=pa.string())


def _arrow_number_text(x: Any) -> Any:
    """Canonical text (as :func:`number_text`) of a float64 Arrow array without nulls: integral values below
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
        out[redo] = number_text(values[redo])
        return to_arrow_strings(out)
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


def arrow_text_canonical(column: Any) -> tuple[Any, Any, Any]:
    """The canonical text of an Arrow string column (see :func:`canonical_values`) except its plain decimals:
    (text, their positions or None, their float64 values as an Arrow array or None). Version 1 writes them
    (:func:`_arrow_text_column`), version 2 codes their values (:func:`_arrow_text_codes`). Non-ASCII columns (NFC,
    Unicode blanks) go through the reference path."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pc.any(pc.invert(pc.string_is_ascii(column))).as_py():
        return to_arrow_strings(canonical_values(pd.Series(column.to_pylist(), dtype=object))), None, None
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
        out = _replace_at(out, where, to_arrow_strings(reference))
    if not fast.any():
        return out, None, None
    where = np.flatnonzero(fast)
    return out, where, pc.cast(pc.take(text, pa.array(where)), pa.float64())


def _arrow_text_column(column: Any) -> Any:
    """Canonical text of an Arrow string column (see :func:`canonical_values`)."""
    out, where, numbers = arrow_text_canonical(column)
    if where is None:
        return out
    return _replace_at(out, where, _arrow_number_text(numbers))


#: a text column of at least this many values is canonicalized through its dictionary when a sample of its values
#: has few distinct ones (:func:`few_distinct`): dictionary encoding costs about a tenth of the text kernels (trim,
#: lower, the missing words, the number patterns) per value (docs/benchmarks.md, "Timings behind choices in the code")
_DICTIONARY_MIN_VALUES = 8_192
_DICTIONARY_SAMPLE = 2_048


def few_distinct(column: Any) -> bool:
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
        if few_distinct(column):  # e.g. states, sexes: each distinct text canonicalized once (the same texts)
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
        return to_arrow_strings(out)
    return to_arrow_strings(canonical_values(column.to_pandas()))


def frame_column(column: pd.Series, through_arrow: Any, from_reference: Any) -> Any:
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


def frame_column_text(column: pd.Series) -> Any:
    """Canonical text of one pandas column (Arrow strings): :func:`canonical_arrow` where :func:`frame_column`
    takes Arrow's path (compared value by value with the reference in the tests), else :func:`canonical_values`."""
    return frame_column(column, canonical_arrow, to_arrow_strings)


def text_row_sums(names: list[str], order: list[int], text_of: Any, rows: int) -> tuple[tuple[str, ...], int, int, int]:
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
    # as bytes objects, the UTF-8 that the hash reads: str objects would be encoded again for each key (the same
    # hashes in less than half the time: docs/benchmarks.md, "Timings behind choices in the code")
    row_text = pc.binary_join_element_wise(*pieces, "").cast(pa.binary()).to_numpy(zero_copy_only=False)
    h1 = hash_array(row_text, hash_key=ROW_HASH_KEYS[0], categorize=False)
    h2 = hash_array(row_text, hash_key=ROW_HASH_KEYS[1], categorize=False)
    with np.errstate(over="ignore"):
        return columns, int(h1.sum(dtype=np.uint64)), int(h2.sum(dtype=np.uint64)), rows
