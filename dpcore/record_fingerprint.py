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

* **Canonical row text**: for every column in the order of its (stripped) name, ``name \\x1f value``,
  joined by ``\\x1e``. Every column counts -- not only the income: another income column of the same
  records is the same people, and so is the same file read for another statistic.
* **Combination**: each row text is hashed twice with SipHash-2-4 under two fixed keys
  (``pandas.util.hash_pandas_object``, stable since pandas 0.20); the fingerprint is SHA-256 over a
  domain tag, the row count and the two sums of the row hashes modulo 2**64. A sum does not depend on
  the rows' order, and partial sums of chunks (or of Spark partitions) add up, so every engine can
  compute it in one streaming pass.

What it does not do: records that differ in any value (one person's income edited, a column added or
dropped, a sample of the rows) are another source. Attaching such a source to a population is the
data owner's statement that it describes the same people (``python -m dpcore ledger ...``);
dpcore refuses only a source whose records are *already* attached elsewhere. The fingerprint is a
hash of confidential data: it stays in the ledger and never reaches a release record.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .validation import DPInputError

NULL_MARK = "\x00"
FIELD_SEP = "\x1f"
ROW_SEP = "\x1e"
#: the two SipHash keys (16 bytes each) of the row hashes; fixed forever (changing them changes every id)
ROW_HASH_KEYS = ("dpcore-rows-k1-0", "dpcore-rows-k2-0")
DOMAIN_TAG = b"dpcore-record-fingerprint-v1\x00"
#: pandas' default missing-value words (pandas._libs.parsers.STR_NA_VALUES), compared case-insensitively
MISSING_WORDS = frozenset(w.lower() for w in (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
    "NA", "NULL", "NaN", "None", "n/a", "nan", "null"))
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")
#: decimal-comma spellings that cannot be anything else (1.234,56 / 1.234.567 / 45,5 / 45,5678)
_DECIMAL_COMMA = re.compile(r"^[+-]?(\d{1,3}(\.\d{3})+,\d+|\d{1,3}(\.\d{3}){2,}|\d+,(\d{1,2}|\d{4,}))$")
_EXACT_INT_LIMIT = float(2 ** 53)


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
        text = objects.map(lambda v: ("true" if v else "false") if isinstance(v, (bool, np.bool_))
                           else _float_or_text(v)).astype(str).astype(object)
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
            unsep = unsep.where(~decimal_comma,
                                other.str.replace(".", "", regex=False).str.replace(",", ".", regex=False))
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
    """Accumulates chunks of records (DataFrames); :meth:`hexdigest` is the fingerprint.

    Chunks may come in any order and be split anywhere: only the multiset of rows counts.
    ``merge`` adds a partial accumulator (e.g. one per Spark partition)."""

    rows: int = 0
    sum1: int = 0
    sum2: int = 0
    columns: tuple[str, ...] | None = None

    def update(self, frame: pd.DataFrame) -> RecordFingerprint:
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"a chunk of records must be a pandas DataFrame, got {type(frame).__name__}")
        names = [str(c).strip() for c in frame.columns]
        if len(set(names)) != len(names):
            raise DPInputError("the data have two columns with the same name: their records cannot be "
                               "fingerprinted (rename one)")
        order = sorted(range(len(names)), key=lambda i: names[i])
        columns = tuple(names[i] for i in order)
        if self.columns is None:
            self.columns = columns
        elif self.columns != columns:
            raise DPInputError("the parts of the data have different columns: "
                               f"{list(self.columns)[:8]} and {list(columns)[:8]}")
        if len(frame) == 0:
            return self
        row_text = None
        for i in order:
            part = names[i] + FIELD_SEP + pd.Series(canonical_values(frame.iloc[:, i]), dtype=object)
            row_text = part if row_text is None else row_text + ROW_SEP + part
        s1, s2, n = row_hash_sums(row_text)
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
        digest = hashlib.sha256(DOMAIN_TAG)
        digest.update(json.dumps({"rows": self.rows, "sum1": self.sum1, "sum2": self.sum2},
                                 sort_keys=True).encode("utf-8"))
        return digest.hexdigest()


def row_hash_sums(row_text: pd.Series) -> tuple[int, int, int]:
    """(sum of the first row hashes mod 2**64, same with the second key, number of rows)."""
    from pandas.util import hash_pandas_object

    row_text = pd.Series(row_text, dtype=object).reset_index(drop=True)
    h1 = hash_pandas_object(row_text, index=False, hash_key=ROW_HASH_KEYS[0], categorize=False).to_numpy()
    h2 = hash_pandas_object(row_text, index=False, hash_key=ROW_HASH_KEYS[1], categorize=False).to_numpy()
    with np.errstate(over="ignore"):
        return int(h1.sum(dtype=np.uint64)), int(h2.sum(dtype=np.uint64)), len(row_text)


def frame_fingerprint(frame: pd.DataFrame) -> str:
    """The record fingerprint of one DataFrame (every column; see the module docstring)."""
    return RecordFingerprint().update(frame).hexdigest()


def batches_fingerprint(batches: Iterable[Any]) -> str:
    """The record fingerprint of a stream of pyarrow RecordBatches or pandas DataFrames."""
    acc = RecordFingerprint()
    for batch in batches:
        if not isinstance(batch, pd.DataFrame) and not callable(getattr(batch, "to_pandas", None)):
            raise TypeError(f"a record batch must be a pyarrow RecordBatch or a pandas DataFrame, got "
                            f"{type(batch).__name__}")
        acc.update(batch if isinstance(batch, pd.DataFrame) else batch.to_pandas())
    return acc.hexdigest()
