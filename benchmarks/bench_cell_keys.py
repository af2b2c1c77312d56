"""Cell keys of a large release (dpcore.cell_keys): before / after the vectorised key building.

A profiled 10M-row release with 28,600 cells spent 2-3 s in ``cell_counts`` / ``keys_of`` (about 1.8M Python
``cell_text`` calls: one per label per aggregate row, and the percentiles frame has 21 rows per cell). The
frame here: 28,600 cells (institution text x degree level integer x cohort float) x 21 bins = 600,600 rows.
"Before" is the row-by-row code of the module before the fix, kept below as the reference; every "after"
result is checked identical to it.

Run: .venv/bin/python benchmarks/bench_cell_keys.py   (about 30 s)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from test_keys import _ref_cell_counts, _ref_keys_of, _ref_restrict_to_cells, _ref_restrict_to_declared

from dpcore import cell_keys

BINS = 21


# --- the code before the fix: the reference implementation tests/test_keys.py checks the fast path against ----
def old_keys_of(frame, by):
    return _ref_keys_of(frame, by)


def old_cell_counts_percentiles(frame, by):
    return _ref_cell_counts(frame, "percentiles", by)


old_restrict_to_cells = _ref_restrict_to_cells
old_restrict_to_declared = _ref_restrict_to_declared


# --- the frame -----------------------------------------------------------------------------------------------------
def percentiles_frame(seed: int = 1) -> pd.DataFrame:
    """28,600 cells x 21 bins, cells in a shuffled order (as an engine's group-by may return them)."""
    rng = np.random.default_rng(seed)
    inst = np.array([f"institution {i:03d}" for i in range(286)], dtype=object)
    cells = pd.DataFrame(
        {
            "institution": np.repeat(inst, 100),
            "degree_level": np.tile(np.repeat(np.arange(1, 11), 10), 286),
            "cohort": np.tile(np.arange(2001.0, 2011.0), 2860),
        }
    )
    cells = cells.iloc[rng.permutation(len(cells))].reset_index(drop=True)
    frame = cells.loc[cells.index.repeat(BINS)].reset_index(drop=True)
    frame["bin"] = np.tile(np.arange(BINS), len(cells))
    frame["count"] = rng.integers(0, 40, len(frame))
    return frame


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    frame = percentiles_frame()
    by = ["institution", "degree_level", "cohort"]
    ref_keys, ref_counts = old_cell_counts_percentiles(frame, by)
    assert len(ref_keys) == 28_600 and len(frame) == 28_600 * BINS and ref_counts.sum() == frame["count"].sum()
    rng = np.random.default_rng(2)
    selected = {k for k in ref_keys if rng.random() < 0.7}
    declared = [k for k in ref_keys if rng.random() < 0.9] + [("institution 999", "1", "2001")]
    cases = [
        ("keys_of (per-row keys)", lambda: old_keys_of(frame, by), lambda: cell_keys.keys_of(frame, by), None),
        (
            "cell_counts percentiles",
            lambda: old_cell_counts_percentiles(frame, by),
            lambda: cell_keys.cell_counts(frame, "percentiles", by),
            None,
        ),
        (
            "restrict_to_cells",
            lambda: old_restrict_to_cells(frame, by, selected),
            lambda: cell_keys.restrict_to_cells(frame, by, selected),
            pd.testing.assert_frame_equal,
        ),
        (
            "restrict_to_declared",
            lambda: old_restrict_to_declared(frame, by, declared),
            lambda: cell_keys.restrict_to_declared(frame, by, declared),
            pd.testing.assert_frame_equal,
        ),
    ]
    print(f"frame: {len(frame):,} rows = 28,600 cells x {BINS} bins, by = {by}")
    print(f"{'function':<26} {'before s':>9} {'after s':>9} {'speed-up':>9}")
    for name, old, new, check in cases:
        t_old, out_old = timed(old, 3)
        t_new, out_new = timed(new, 5)
        if check is not None:
            check(out_new, out_old)
        elif isinstance(out_old, tuple):
            assert out_new[0] == out_old[0] and out_new[1].tolist() == out_old[1].tolist(), name
        else:
            assert out_new == out_old, name
        print(f"{name:<26} {t_old:>9.3f} {t_new:>9.3f} {t_old / t_new:>8.1f}x")


if __name__ == "__main__":
    main()
