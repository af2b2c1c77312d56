"""dpcore.engines.base.sort_cells: the canonical cell order (the order noise is drawn in) and labels shared per
cell. Checked against the reference it replaced: object values sorted by pandas (missing first, stable)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.engines.base import sort_cells


def _reference(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    out = frame.copy()
    for col in by:
        out[col] = out[col].astype(object).where(out[col].notna(), None)
    return out.sort_values(list(by), na_position="first", kind="mergesort").reset_index(drop=True)


LABELS = ["CO", "TX", "co", "", " CO", "Zürich", "Å", "a\x00", "a", "10", "9", None, np.nan, "ß", "日本"]


@pytest.mark.parametrize("dtype", [object, "str"])
@pytest.mark.parametrize("seed", range(4))
def test_same_order_and_values_as_the_reference(seed, dtype):
    rng = np.random.default_rng(seed)
    n = 2_000
    frame = pd.DataFrame(
        {
            "a": pd.array(rng.choice(np.array(LABELS, dtype=object), n), dtype=dtype),
            "b": pd.array(rng.choice(np.array(LABELS[:6], dtype=object), n), dtype=dtype),
            "bin": rng.integers(0, 21, n),
            "count": np.arange(n),  # tells tied rows apart: the sort must be stable
        }
    )
    got = sort_cells(frame, ["a", "b"])
    want = _reference(frame, ["a", "b"])
    pd.testing.assert_frame_equal(got, want)
    assert all(v is None or type(v) is str for v in got["a"]), "labels are str or None"


def test_one_object_per_label():
    frame = pd.DataFrame({"state": pd.array(["TX", "CO"] * 5000, dtype="str"), "n": np.arange(10_000)})
    got = sort_cells(frame, ["state"])
    assert len({id(v) for v in got["state"]}) == 2
    assert got["state"].iloc[0] == "CO" and got["n"].iloc[:3].tolist() == [1, 3, 5]


def test_non_text_labels_are_an_engine_bug():
    with pytest.raises(TypeError, match="cell labels must be text"):
        sort_cells(pd.DataFrame({"a": ["x", 3]}), ["a"])


def test_empty_and_no_cells():
    empty = pd.DataFrame({"a": pd.Series([], dtype=object), "n": pd.Series([], dtype=np.int64)})
    assert sort_cells(empty, ["a"]).empty
    frame = pd.DataFrame({"n": [3, 1]})
    pd.testing.assert_frame_equal(sort_cells(frame, []), frame)


@pytest.mark.parametrize("seed", range(4))
def test_an_arrow_table_gives_the_frame_of_its_pandas_conversion(seed):
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    n = 3_000
    labels = [v if isinstance(v, str) else None for v in LABELS]
    table = pa.table(
        {
            "a": pa.array(rng.choice(np.array(labels, dtype=object), n).tolist(), type=pa.string()),
            "bin": pa.array(rng.integers(0, 21, n), type=pa.int32()),
            "b": pa.array(rng.choice(np.array(labels[:6], dtype=object), n).tolist(), type=pa.large_string()),
            "count": pa.array(np.arange(n), type=pa.int64()),  # tells tied rows apart: the sort must be stable
        }
    )
    chunked = pa.concat_tables([table.slice(0, 1_000), table.slice(1_000)])  # an engine's batches
    want = sort_cells(table.to_pandas(), ["a", "b"])
    pd.testing.assert_frame_equal(sort_cells(chunked, ["a", "b"]), want)
    pd.testing.assert_frame_equal(want, _reference(table.to_pandas(), ["a", "b"]))
    got = sort_cells(table, ["b"])
    assert len({id(v) for v in got["b"] if v is not None}) == len({v for v in labels[:6] if v is not None})


def test_an_arrow_table_of_non_text_labels_or_no_rows():
    import pyarrow as pa

    with pytest.raises(TypeError, match="cell labels must be text"):
        sort_cells(pa.table({"a": pa.array([1, 2]), "n": pa.array([3, 4])}), ["a"])
    empty = pa.table({"a": pa.array([], type=pa.string()), "n": pa.array([], type=pa.int64())})
    got = sort_cells(empty, ["a"])
    assert got.empty and list(got.columns) == ["a", "n"]
    assert got["a"].dtype == object, "the labels of an empty result are object, as the pandas path makes them"
    pandas_empty = pd.DataFrame({"a": pd.Series([], dtype=object), "n": pd.Series([], dtype=np.int64)})
    pd.testing.assert_frame_equal(got, sort_cells(pandas_empty, ["a"]))
