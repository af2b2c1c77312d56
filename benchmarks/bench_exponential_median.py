"""The median of every PSEO-like cell two ways at the same epsilon: the PSEO noisy histogram (21 bins, eq. 4.2
read-off) and the exponential-mechanism quantile on the "pseo-fine" candidate grid (method = "exponential").

Cells: institution x degree_level x cohort of ``benchmarks/make_pseo_like.py`` (28,600 cells; sizes from a
handful of rows to tens of thousands). Truth: each cell's order statistic x_(M), M = ceil(n / 2), of the
earnings clipped to the public range [$10,000, $614,597] (what both methods can see: values outside are counted
in the end bins). Error: |released p50 - truth|, pooled over cells and ``--draws`` releases; the median absolute
error (MAE below) overall and by cell size. The first draw of each method is a real one (OpenDP, as the command
line draws it) and is timed; the others are numpy simulations of the same laws (the mechanisms' ``simulate``).
``--cli`` also times the command line end to end (DuckDB engine, a throw-away SQLite ledger) for both methods.

Run: .venv/bin/python benchmarks/make_pseo_like.py --rows 10000000
     .venv/bin/python benchmarks/bench_exponential_median.py --rows 10000000 [--draws 5] [--cli]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BY = ["institution", "degree_level", "cohort"]
SIZE_CLASSES = ((1, 30), (30, 300), (300, 3000), (3000, 10**9))


def load_cells(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(cell id per row, earnings) of the PSEO-like parquet folder."""
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=[*BY, "earnings"]).to_pandas()
    ids = table.groupby(BY, sort=True, observed=True).ngroup().to_numpy()
    return ids, table["earnings"].to_numpy(dtype=float)


def cell_tables(ids: np.ndarray, x: np.ndarray):
    """Counts on the PSEO bins, counts on the candidate grid, and the true clipped medians, per cell."""
    from dpcore import percentiles

    fine = percentiles.fine_candidate_grid()
    n_cells = int(ids.max()) + 1
    hist = percentiles.cell_bin_counts(x, ids, n_cells, percentiles.PSEO_BIN_EDGES)
    grid = percentiles.cell_bin_counts(x, ids, n_cells, fine)
    clipped = np.clip(x, percentiles.PSEO_LOWER, percentiles.PSEO_TOP)
    order = np.lexsort((clipped, ids))
    n = np.bincount(ids, minlength=n_cells)
    start = np.concatenate([[0], np.cumsum(n)[:-1]])
    truth = clipped[order][start + np.ceil(n / 2).astype(np.int64) - 1]
    return hist, grid, truth, n


def errors(hist, grid, truth, *, epsilon: float, draws: int, seed: int) -> dict:
    """Absolute errors (draws x cells) of both methods, and the wall time of one real draw of each."""
    from dpcore.mechanisms import ExponentialQuantileMechanism, HistogramMechanism

    h_mech = HistogramMechanism(epsilon, q=(50,))
    e_mech = ExponentialQuantileMechanism(epsilon, q=(50,))
    t0 = time.perf_counter()
    h_real = h_mech.draw(hist).percentiles[:, 0]
    t_hist = time.perf_counter() - t0
    t0 = time.perf_counter()
    e_real = e_mech.draw(grid).percentiles[:, 0]
    t_em = time.perf_counter() - t0
    h_sim = e_sim = np.empty((0, truth.size))
    if draws > 1:
        h_sim = h_mech.simulate(hist, draws - 1, rng=seed)[:, :, 0]
        e_sim = np.vstack([e_mech.simulate(grid, 1, rng=seed + 1 + i)[:, :, 0] for i in range(draws - 1)])
    h = np.abs(np.vstack([h_real[None], h_sim]) - truth[None])
    e = np.abs(np.vstack([e_real[None], e_sim]) - truth[None])
    return {"histogram": h, "exponential": e, "t_histogram": t_hist, "t_exponential": t_em}


def run_cli(data: Path, method: str, epsilon: float) -> float:
    """Wall seconds of one real release of the median by cell through the command line (DuckDB engine)."""
    from dpcore import cli

    extra = 'method = "exponential"\nq = [50]\n' if method == "exponential" else 'q = [50]\n'
    plan_text = (
        f'version = 1\ndataset = "pseo-like"\nincome = "earnings"\ncap_epsilon = {epsilon}\n'
        f'cell_sizes = "public"\nsmall_cell_threshold = 0\n\n[[statistics]]\nkind = "percentiles"\n'
        f'name = "median"\nby = {BY!r}\nepsilon = {epsilon}\n'.replace("'", '"')
        + extra
    )
    with tempfile.TemporaryDirectory() as tmp:
        plan = Path(tmp) / "plan.toml"
        plan.write_text(plan_text)
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):  # the command line prints the output folder
            code = cli.main(
                [
                    "release",
                    str(plan),
                    "--data",
                    str(data),
                    "--out",
                    str(Path(tmp) / "out"),
                    "--quiet",
                    "--ledger",
                    f"sqlite:///{Path(tmp) / 'ledger.db'}",
                    "--init-ledger",
                ]
            )
        wall = time.perf_counter() - t0
    if code != 0:
        raise SystemExit(f"the {method} release failed (exit {code})")
    return wall


def report(res: dict, n: np.ndarray, epsilon: float) -> None:
    print(
        f"epsilon = {epsilon}, {n.size:,} cells, {int(n.sum()):,} rows, {res['histogram'].shape[0]} release(s) "
        "per method; MAE = median absolute error of p50 ($)"
    )
    print("| cells | cells (count) | histogram (PSEO 21 bins) MAE | exponential (pseo-fine) MAE |")
    print("| --- | ---: | ---: | ---: |")
    rows = [("all", np.ones(n.size, bool))] + [
        (f"n in [{lo:,}, {hi:,})" if hi < 10**9 else f"n >= {lo:,}", (n >= lo) & (n < hi)) for lo, hi in SIZE_CLASSES
    ]
    for label, keep in rows:
        if keep.any():
            print(
                f"| {label} | {int(keep.sum()):,} | {np.median(res['histogram'][:, keep]):,.0f} | "
                f"{np.median(res['exponential'][:, keep]):,.0f} |"
            )
    print(
        f"one real draw (OpenDP) over all cells: histogram {res['t_histogram']:.2f} s, "
        f"exponential {res['t_exponential']:.2f} s ({os.cpu_count()} cores)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--data", type=Path, default=None, help="default artifacts/pseo_like_<rows>")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cli", action="store_true", help="also time the command line's release of both methods")
    args = ap.parse_args()
    data = args.data or ROOT / "artifacts" / f"pseo_like_{args.rows}"
    if not data.exists():
        raise SystemExit(f"{data} is missing: run benchmarks/make_pseo_like.py --rows {args.rows} first")
    t0 = time.perf_counter()
    ids, x = load_cells(data)
    hist, grid, truth, n = cell_tables(ids, x)
    print(f"read and counted {x.size:,} rows in {time.perf_counter() - t0:.1f} s")
    report(errors(hist, grid, truth, epsilon=args.epsilon, draws=args.draws, seed=args.seed), n, args.epsilon)
    if args.cli:
        for method in ("histogram", "exponential"):
            print(f"command line, median by cell, {method}: {run_cli(data, method, args.epsilon):.1f} s")


if __name__ == "__main__":
    main()
