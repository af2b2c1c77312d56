"""Cell keys of a large release (dpcore.cell_keys): before / after the vectorised key building.

A profiled 10M-row release with 28,600 cells spent 2-3 s in ``cell_counts`` / ``_keys_of`` (about 1.8M Python
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

from dpcore import cell_keys  # noqa: E402
from dpcore.cell_keys import cell_text  # noqa: E402

BINS = 21


# --- the code before the fix (reference) -------------------------------------------------------------------------
def old_keys_of(frame, by):
    if not len(frame):
        return []
    columns = [[cell_text(v) for v in frame[c].tolist()] for c in by]
    return list(zip(*columns))


def old_cell_counts_percentiles(frame, by):
    keys = old_keys_of(frame, by)
    totals = {}
    for k, c in zip(keys, frame["count"].to_numpy(np.int64)):
        totals[k] = totals.get(k, 0) + int(c)
    return list(totals), np.array(list(totals.values()), dtype=np.int64)


def old_restrict_to_cells(frame, by, cells):
    mask = np.array([k in cells for k in old_keys_of(frame, by)], dtype=bool)
    return frame.loc[mask].reset_index(drop=True)


def old_restrict_to_declared(frame, by, declared):
    order = {key: i for i, key in enumerate(declared)}
    position = np.array([order.get(k, -1) for k in old_keys_of(frame, by)], dtype=np.int64)
    kept = frame.loc[position >= 0].copy()
    kept_pos = position[position >= 0]
    for j, c in enumerate(by):
        kept[c] = [declared[p][j] for p in kept_pos]
    missing = sorted(set(range(len(declared))) - set(kept_pos.tolist()))
    if missing:
        zeros = {c: [declared[p][j] for p in missing] for j, c in enumerate(by)}
        for c in frame.columns:
            if c not in by:
                zeros[c] = [0] * len(missing)
        filler = pd.DataFrame(zeros, columns=list(frame.columns))
        for c in frame.columns:
            if c not in by and frame[c].dtype != object:
                filler[c] = filler[c].astype(frame[c].dtype)
        kept = pd.concat([kept, filler], ignore_index=True) if len(kept) else filler
        kept_pos = np.concatenate([kept_pos, np.array(missing, dtype=np.int64)])
    kept["_declared_order"] = kept_pos
    return kept.sort_values("_declared_order", kind="stable").drop(columns="_declared_order").reset_index(drop=True)


# --- the frame -----------------------------------------------------------------------------------------------------
def percentiles_frame(seed: int = 1) -> pd.DataFrame:
    """28,600 cells x 21 bins, cells in a shuffled order (as an engine's group-by may return them)."""
    rng = np.random.default_rng(seed)
    inst = np.array([f"institution {i:03d}" for i in range(286)], dtype=object)
    cells = pd.DataFrame({"institution": np.repeat(inst, 100),
                          "degree_level": np.tile(np.repeat(np.arange(1, 11), 10), 286),
                          "cohort": np.tile(np.arange(2001.0, 2011.0), 2860)})
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
        ("_keys_of (per-row keys)", lambda: old_keys_of(frame, by), lambda: cell_keys._keys_of(frame, by), None),
        ("cell_counts percentiles", lambda: old_cell_counts_percentiles(frame, by),
         lambda: cell_keys.cell_counts(frame, "percentiles", by), None),
        ("restrict_to_cells", lambda: old_restrict_to_cells(frame, by, selected),
         lambda: cell_keys.restrict_to_cells(frame, by, selected), pd.testing.assert_frame_equal),
        ("restrict_to_declared", lambda: old_restrict_to_declared(frame, by, declared),
         lambda: cell_keys.restrict_to_declared(frame, by, declared), pd.testing.assert_frame_equal),
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
