"""Cells found from runs of equal labels (dpcore.cell_keys._run_starts) are the cells found row by row.

An engine's aggregate frame is sorted by cell, so a run of rows with equal text labels has one cell; only a
text-only column may be read that way (``True == 1`` in Python, but their cell texts differ). Checked here
against the row-by-row path on sorted, shuffled, missing-laden and mixed-type columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore import cell_keys


def _row_by_row(frame, by, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(cell_keys, "_run_starts", lambda frame, by: None)
        return cell_keys._cells_of(frame, by)


def _frame(rng, n, *, sort, missing, mixed=False):
    labels = np.array(["CO", "TX", " WA", "WA", "é", "e\u0301", "10", "1e1"], dtype=object)
    a = labels[rng.integers(0, len(labels), n)]
    b = rng.choice(np.array(["BA", "MA", "PhD", ""], dtype=object), n)
    if missing:
        a[rng.random(n) < 0.1] = None
        b[rng.random(n) < 0.1] = np.nan
    if mixed:
        b[rng.random(n) < 0.2] = True
        b[rng.random(n) < 0.2] = 1
    frame = pd.DataFrame({"state": a, "degree": b, "bin": rng.integers(0, 21, n), "count": rng.integers(0, 9, n)})
    if sort:
        frame = frame.sort_values(["state", "degree"], key=lambda c: c.astype(str), kind="stable")
        frame = frame.loc[frame.index.repeat(rng.integers(1, 4, len(frame)))].reset_index(drop=True)
    return frame


@pytest.mark.parametrize("seed", range(12))
def test_runs_give_the_cells_and_groups_of_the_row_by_row_path(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    for sort in (True, False):
        for missing in (False, True):
            frame = _frame(rng, int(rng.integers(1, 400)), sort=sort, missing=missing)
            by = ["state", "degree"]
            group, cells = cell_keys._cells_of(frame, by)
            ref_group, ref_cells = _row_by_row(frame, by, monkeypatch)
            assert cells == ref_cells
            assert np.array_equal(group, ref_group)
            keys, counts = cell_keys.cell_counts(frame, "percentiles", by)
            assert keys == ref_cells
            assert np.array_equal(counts, np.bincount(ref_group, weights=frame["count"], minlength=len(ref_cells)))


def test_a_column_of_booleans_and_numbers_is_not_read_by_runs(monkeypatch):
    frame = pd.DataFrame({"g": np.array([True, 1, 1, True, "x", "x"], dtype=object), "count": [1] * 6})
    assert cell_keys._run_starts(frame, ["g"]) is None
    group, cells = cell_keys._cells_of(frame, ["g"])
    assert cells == _row_by_row(frame, ["g"], monkeypatch)[1] and len(cells) == 3
    mixed = _frame(np.random.default_rng(1), 300, sort=True, missing=True, mixed=True)
    assert cell_keys._run_starts(mixed, ["state", "degree"]) is None


def test_a_sorted_histogram_frame_collapses_to_one_row_per_cell():
    frame = pd.DataFrame({"state": ["CO"] * 21 + ["TX"] * 21, "level": ["1"] * 21 + ["1"] * 21, "count": np.arange(42)})
    assert cell_keys._run_starts(frame, ["state", "level"]).tolist() == [0, 21]
    keys, counts = cell_keys.cell_counts(frame, "percentiles", ["state", "level"])
    assert keys == [("CO", "1"), ("TX", "1")] and counts.tolist() == [sum(range(21)), sum(range(21, 42))]


def test_pd_na_falls_back_to_the_row_by_row_path():
    frame = pd.DataFrame({"g": pd.array(["a", pd.NA, "a", "b"], dtype=object), "count": [1, 1, 1, 1]})
    keys, counts = cell_keys.cell_counts(frame, "percentiles", ["g"])
    assert len(keys) == 3 and counts.sum() == 4
