"""The record fingerprint read with Arrow's kernels, and on several cores, is the reference fingerprint.

:func:`dpcore.record_fingerprint.canonical_arrow` takes shortcuts (plain decimals parsed by Arrow, Arrow's
shortest float text where Python writes no exponent, a dictionary's values once); each is exact by an argument
in its comment, and these tests compare it value by value with :func:`canonical_values` (the reference, what
pandas reads) on random and adversarial columns. A changed canonical text would silently give every existing
source a new fingerprint, and with it a fresh budget.
"""

from __future__ import annotations

import datetime
import decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from dpcore import record_fingerprint as rf
from dpcore.record_fingerprint import accumulate as rf_accumulate
from dpcore.record_fingerprint import canonical as rf_canonical
from dpcore.record_fingerprint import codes as rf_codes
from dpcore.record_fingerprint import streams as rf_streams
from dpcore.validation import DPInputError

ADVERSARIAL_TEXT = [
    "87,000",
    " 87000.0 ",
    "8.7e4",
    "NA",
    "",
    None,
    "TRUE",
    "x",
    "-0",
    "1.5",
    "-.5",
    ".5",
    "5.",
    "-5.",
    "007",
    "0.0001",
    "0.00001",
    "-0.00012",
    "123456789012345",
    "1234567890123456",
    "12345678901234.5",
    "0.000000000000001",
    "-0.0",
    "inf",
    "-Infinity",
    "+inf",
    "INF",
    "1e5",
    "1E-3",
    "1,234.5",
    "1.234,56",
    "1.234.567",
    "45,5",
    "45,5678",
    "p001",
    "2020-01-31",
    "+5",
    "--5",
    "5-",
    "1.2.3",
    "\x1f7 ",
    "\t8\x0b",
    "\x1c9\x1d",
    "NaN",
    "nan",
    "-nan",
    "NULL",
    "n/a",
    "#N/A",
    "None",
    "1_000",
    "0x10",
    "  ",
    "e",
    ".",
    "-",
    "+.5e-3",
    "true ",
    " False",
    "00000000000000000001.5",
    "9007199254740993",
    "1" * 15 + ".0",
    "0." + "0" * 14 + "1",
]


def _reference(values: list) -> list:
    return list(rf.canonical_values(pd.Series(values, dtype=object)))


def _matches(column: pa.Array, reference: list) -> None:
    """Both versions of the fast path equal the reference: version 1's canonical text, and version 2's codes,
    which are defined from that text (:func:`value_codes_from_text`)."""
    assert rf.canonical_arrow(column).to_pylist() == reference, column.type
    assert np.array_equal(rf.arrow_value_codes(column), rf.value_codes_from_text(reference)), column.type


def test_text_columns_match_the_reference_value_by_value():
    _matches(pa.array(ADVERSARIAL_TEXT, type=pa.string()), _reference(ADVERSARIAL_TEXT))
    # a non-ASCII column (NFC, Unicode blanks) goes through the reference path as a whole
    other = ADVERSARIAL_TEXT + ["héllo", "ＮＡ", "\u00a012\u2003", "e\u0301"]
    _matches(pa.array(other, type=pa.large_string()), _reference(other))


def test_long_text_columns_of_few_values_go_through_their_dictionary_with_the_same_texts():
    values = (ADVERSARIAL_TEXT + [None, "héllo", "\u00a012\u2003"]) * 200  # 16,000 values, 113 distinct
    column = pa.array(values, type=pa.string())
    assert rf_canonical.few_distinct(column), "few distinct values: the dictionary path"
    _matches(column, _reference(values))
    sliced = column.slice(7, 9_000)  # an offset into the buffers
    _matches(sliced, _reference(values[7:9_007]))
    many = [str(i * 1.5) for i in range(20_000)]
    assert not rf_canonical.few_distinct(pa.array(many)), "distinct values: the text kernels on the column itself"
    _matches(pa.array(many), _reference(many))


def test_random_plain_decimals_match_the_reference():
    """The shortcut's claim: up to 15 digits, pandas' parser and Arrow's give the same double, and Arrow's
    shortest text without an exponent is Python's repr."""
    rng = np.random.default_rng(5)
    texts = []
    for _ in range(60_000):
        k = int(rng.integers(1, 17))
        digits = "".join(rng.choice(list("0123456789"), k))
        cut = int(rng.integers(0, k + 1))
        text = digits[:cut] + ("." if rng.random() < 0.7 else "") + digits[cut:]
        texts.append(("-" if rng.random() < 0.3 else "") + text + "0" * int(rng.integers(0, 3)))
    _matches(pa.array(texts), _reference(texts))


def test_typed_columns_match_the_reference():
    rng = np.random.default_rng(0)
    floats = np.concatenate(
        [
            rng.lognormal(10, 3, 50_000),
            -rng.lognormal(0, 20, 50_000),
            rng.standard_normal(2_000) * 1e-300,
            np.round(rng.lognormal(10, 1, 50_000), 2),
            [np.nan, np.inf, -np.inf, 0.0, -0.0, 2.0**60, 2.0**53, 2.0**53 - 1, 1e16, 1e-4],
        ]
    )
    for values in (floats, floats[np.isfinite(floats)]):
        _matches(pa.array(values), list(rf.canonical_values(pd.Series(values))))
        as_text = [repr(v) for v in values]  # the same numbers as a CSV read as text writes them
        _matches(pa.array(as_text), _reference(as_text))
    columns = [
        pa.array([1, None, -5, 2**60, 0], type=pa.int64()),
        pa.array([3, None, -7], type=pa.int8()),
        pa.array([2**63 + 5, 1], type=pa.uint64()),
        pa.array([True, None, False]),
        pa.array([1.5, None, 2.0], type=pa.float32()),
        pa.array(["CA", None, " NA", "12", "CA"]).dictionary_encode(),
        pa.array([datetime.date(2020, 1, 31), None]),
        pa.array([decimal.Decimal("87000.50"), None, decimal.Decimal("-0.00")]),
        pa.array(np.array([1.5, 2.0, np.nan], dtype=np.float16)),
        pa.array([None, None], type=pa.string()),
    ]
    for column in columns:
        _matches(column, list(rf.canonical_values(column.to_pandas())))


def _frame(n: int, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "pid": [f"p{i:05d}" for i in range(n)],
            "wage": np.round(rng.lognormal(10, 0.7, n), 2),
            "hours": rng.integers(10, 60, n),
            "state": rng.choice(["CA", "NA", "TX", " 7 "], n),
        }
    )


def test_arrow_chunks_pandas_frames_and_text_reads_give_one_fingerprint():
    frame = _frame(5_000)
    expected = rf.frame_fingerprint(frame)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    assert rf.batches_fingerprint(table.to_batches(max_chunksize=700), workers=1) == expected
    as_text = pa.Table.from_pandas(frame.astype(str), preserve_index=False)  # a CSV read with every column as text
    assert rf.batches_fingerprint(as_text.to_batches(max_chunksize=1_000), workers=1) == expected
    mixed = [table.slice(0, 100).to_pandas(), *table.slice(100).to_batches(max_chunksize=999)]
    assert rf.batches_fingerprint(mixed, workers=1) == expected


def test_worker_processes_give_the_same_fingerprint(monkeypatch):
    frame = _frame(12_000)
    expected = rf.frame_fingerprint(frame)
    monkeypatch.setattr(rf_streams, "PARALLEL_MIN_ROWS", 1_000)
    monkeypatch.setattr(rf_streams, "PARALLEL_TASK_ROWS", 1_500)
    batches = pa.Table.from_pandas(frame, preserve_index=False).to_batches(max_chunksize=800)
    assert rf.batches_fingerprint(batches, workers=2) == expected
    # the threshold reached at the very last chunk: no worker is needed
    assert rf.batches_fingerprint(batches[:2], workers=2) == rf.frame_fingerprint(frame.iloc[:1_600])
    # a stream known to be large: the workers start before the first chunk, the same sums
    assert rf.batches_fingerprint(batches, workers=2, large=True) == expected
    assert rf.batches_fingerprint(iter(batches), workers=2, large=True) == expected


def test_a_source_of_32_mb_or_more_is_fingerprinted_on_every_core_from_its_first_row(tmp_path):
    from dpcore.engines import fingerprint, parse_source

    small = tmp_path / "small.csv"
    small.write_text("income\n1\n")
    assert not fingerprint.is_large_source(parse_source(str(small)))
    big = tmp_path / "big.csv"
    with open(big, "wb") as fh:
        fh.write(b"income\n" + b"12345\n" * (fingerprint.LARGE_SOURCE_BYTES // 6 + 1))
    assert fingerprint.is_large_source(parse_source(str(big)))


def test_a_worker_failure_fails_the_fingerprint(monkeypatch):
    monkeypatch.setattr(rf_streams, "PARALLEL_MIN_ROWS", 10)
    monkeypatch.setattr(rf_streams, "PARALLEL_TASK_ROWS", 10)
    good = pa.table({"a": [str(i) for i in range(20)], "b": ["x"] * 20})
    other = pa.table({"a": ["1"] * 20, "c": ["x"] * 20})  # another column set: another source
    with pytest.raises(DPInputError, match="different columns"):
        rf.batches_fingerprint([*good.to_batches(10), *other.to_batches(10), *good.to_batches(10)], workers=2)
    with pytest.raises(TypeError, match="RecordBatch"):
        rf.batches_fingerprint([good, [1, 2]], workers=1)


def test_a_worker_that_fails_is_an_error_not_a_partial_sum():
    proc = rf_streams._start_worker()
    proc.stdin.write(b"not an Arrow stream, but long enough to be read as one" * 10)
    proc.stdin.close()
    assert proc.wait() != 0
    error = rf_streams._worker_failed(proc)
    assert isinstance(error, RuntimeError) and "worker failed" in str(error)


def test_chunks_with_other_column_types_are_hashed_in_this_process(monkeypatch):
    monkeypatch.setattr(rf_streams, "PARALLEL_MIN_ROWS", 10)
    monkeypatch.setattr(rf_streams, "PARALLEL_TASK_ROWS", 10)
    ints = pa.table({"a": pa.array(range(40), type=pa.int64())})
    floats = pa.table({"a": pa.array([float(i) for i in range(40, 80)])})  # a Parquet part typed otherwise
    expected = rf.frame_fingerprint(pd.DataFrame({"a": np.arange(80)}))
    assert rf.batches_fingerprint([*ints.to_batches(10), *floats.to_batches(10)], workers=2) == expected


def test_pandas_frames_of_every_dtype_give_the_reference_fingerprint():
    """A parsed upload (pandas) takes Arrow's kernels for numbers, booleans and text columns and the reference for
    the rest: the fingerprint equals the one built from the reference text of every column."""
    rng = np.random.default_rng(8)
    n = 3_000
    frame = pd.DataFrame(
        {
            "income": np.round(rng.lognormal(10, 1, n), 2),
            "whole": rng.integers(0, 10**6, n).astype(float),
            "big": rng.integers(2**53, 2**60, n),
            "small": rng.integers(-5, 5, n).astype(np.int8),
            "nullable": pd.array(rng.integers(0, 9, n), dtype="Int64"),
            "flag": rng.random(n) < 0.5,
            "text": rng.choice(["CA", " NA", "12", "1,234.5", "", "héllo", "x"], n),
            "str_dtype": pd.Series(rng.choice(["a", "b", None], n), dtype="str"),
            "mixed": pd.Series(rng.choice([1, "a", 2.5, None], n), dtype=object),
            "category": pd.Categorical(rng.choice(["u", "v"], n)),
            "when": pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 400, n), unit="D"),
            "infinite": np.where(rng.random(n) < 0.1, np.inf, rng.normal(0, 1, n)),
        }
    )
    frame.loc[::17, "income"] = np.nan
    frame.loc[::13, "nullable"] = pd.NA
    names, order = rf_canonical.column_order(frame.columns)
    reference = rf_canonical.text_row_sums(
        names, order, lambda i: rf_canonical.to_arrow_strings(rf.canonical_values(frame.iloc[:, i])), len(frame)
    )
    assert rf_accumulate.chunk_sums(frame, 1) == reference
    codes = rf_codes.code_row_sums(
        names, order, lambda i: rf.value_codes_from_text(list(rf.canonical_values(frame.iloc[:, i]))), len(frame)
    )
    assert rf_accumulate.chunk_sums(frame, 2) == codes
    for name in frame.columns:  # and column by column
        reference_text = list(rf.canonical_values(frame[name]))
        assert rf_canonical.frame_column_text(frame[name]).to_pylist() == reference_text, name
        assert np.array_equal(rf_codes.frame_column_codes(frame[name]), rf.value_codes_from_text(reference_text)), name


# ---------------------------------------------------------------------------------------------------------
# Version 2 and the versions together
# ---------------------------------------------------------------------------------------------------------
def _fmix64(x: int) -> int:
    mask = (1 << 64) - 1
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & mask
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & mask
    return x ^ (x >> 33)


def _version_2_by_hand(frame: pd.DataFrame) -> str:
    """Version 2 as its definition says, row by row in Python integers (no NumPy mixing, no Arrow)."""
    import hashlib
    import json

    names = [str(c).strip() for c in frame.columns]
    codes = [rf.value_codes_from_text(list(rf.canonical_values(frame.iloc[:, i]))) for i in range(len(names))]
    keys = []
    for name in names:
        digest = hashlib.sha256(b"dpcore-record-fingerprint-v2-column\x00" + name.encode("utf-8")).digest()
        keys.append((int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:16], "little")))
    sums = [0, 0]
    for row in range(len(frame)):
        for k in (0, 1):
            inner = sum(_fmix64(int(codes[i][row]) ^ keys[i][k]) for i in range(len(names))) % (1 << 64)
            sums[k] = (sums[k] + _fmix64(inner)) % (1 << 64)
    body = json.dumps({"rows": len(frame), "sum1": sums[0], "sum2": sums[1]}, sort_keys=True)
    return hashlib.sha256(b"dpcore-record-fingerprint-v2\x00" + body.encode("utf-8")).hexdigest()


def test_version_2_is_its_definition_and_both_versions_are_pinned():
    frame = pd.DataFrame(
        {
            "income": [52000.0, None, 87000.0, -0.0, float("inf")],
            " state ": ["CA", "NA", " TX", "héllo", "12"],
            "flag": [True, False, None, True, True],
        }
    )
    assert rf.frame_fingerprint(frame, version=2) == _version_2_by_hand(frame)
    assert rf.frame_fingerprint(_frame(300), version=2) == _version_2_by_hand(_frame(300))
    # a changed definition would give every attached source a new identity (a fresh budget): both are pinned
    assert rf.frame_fingerprint(frame, version=1) == "372d58bee93dab1a20b0061eb594f9a9a86dde434eed85da26b5c46c8f2fbdd0"
    assert rf.frame_fingerprint(frame, version=2) == "4eeac2bd8c7d5d991c4daf044c7e830f5751bb563ad0806e24107249257a39c2"


def test_version_2_codes_a_number_alike_however_it_is_written():
    texts = pa.array(["87,000", "87000.0", "8.7e4", " 87000 "])
    typed = [
        pa.array([87000]),
        pa.array([87000.0]),
        pa.array([87000.0], type=pa.float32()),
        pa.array([87000], pa.int32()),
    ]
    codes = {int(c) for column in [texts, *typed] for c in rf.arrow_value_codes(column)}
    assert len(codes) == 1
    # and text, missing values, booleans and numbers are told apart
    column = pa.array(["1", "true", "NA", "x", "-0", "0", "inf", "Infinity"])
    got = rf.arrow_value_codes(column)
    assert got[4] == got[5] and got[6] == got[7] and len(set(got.tolist())) == 6


def test_several_versions_in_one_pass_on_workers(monkeypatch):
    frame = _frame(12_000)
    expected = rf.RecordFingerprints(((1, rf.frame_fingerprint(frame, version=1)), (2, rf.frame_fingerprint(frame))))
    assert rf.frame_fingerprints(frame, (2, 1)) == expected
    monkeypatch.setattr(rf_streams, "PARALLEL_MIN_ROWS", 1_000)
    monkeypatch.setattr(rf_streams, "PARALLEL_TASK_ROWS", 1_500)
    batches = pa.Table.from_pandas(frame, preserve_index=False).to_batches(max_chunksize=800)
    assert rf.batches_fingerprints(batches, (1, 2), workers=2) == expected
    assert rf.batches_fingerprints(batches, (1, 2), workers=2, large=True) == expected
    assert rf.batches_fingerprint(batches, workers=2, version=1) == expected.of(1)
    assert expected.latest == expected.of(2) and expected.versions == (1, 2)
    with pytest.raises(ValueError, match="versions"):
        rf.check_versions((3,))
    with pytest.raises(ValueError, match="was not computed"):
        rf.frame_fingerprints(frame, (2,)).of(1)
