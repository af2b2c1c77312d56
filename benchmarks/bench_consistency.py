"""Tables that add up, measured on the real PSEO table's hierarchies (prints Markdown tables; not part of pytest).

Run: .venv/bin/python benchmarks/bench_consistency.py [--quick] [--coverage]

Trees (cells: the published PSEO cells of one aggregation level, earnings synthesized from each cell's n and
quartiles, counted in PSEO's 21 bins; dpcore.views.percentiles):

* "state": institution x degree x cohort cells (agg level 44, 458 cells), margins [["state"], []];
* "institution": institution x degree x field x cohort cells (agg level 48, 5,073 cells), margins
  [["state", "institution"], ["state"], []].

Each level is measured with discrete Laplace noise of scale 2/epsilon_l (replace one record, one row per person),
epsilon split evenly unless said. Printed, per tree and epsilon, over repeated simulated releases
(dpcore.consistency.simulate): each level's bin RMSE (own measurement, least squares, published integers), the
ratio of the integers' RMSE to the own measurement's, the share of measured bins below 0, the p50 interval
coverage (published: widened to the published value; and the least-squares interval alone), the mean absolute
p50 error read off the measured and the consistent histograms. Then the splits: each level's exact least-squares
RMSE over the RMSE of releasing that level alone with the whole epsilon, even split and balanced split. Then the
time of one release's post-processing (make_consistent) and of the balanced split. ``--coverage`` prints only
the coverage of the published p25, p50 and p75 intervals at every level with the nodes' n public (cell_sizes =
"public": what a release with margins publishes) and not public (noisy cell sizes).
"""

from __future__ import annotations

import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcore import consistency
from dpcore import percentiles as percentile_mechanisms
from dpcore.data import real_data_path
from dpcore.views import percentiles as percentile_experiments

QUICK = "--quick" in sys.argv
TREES = {
    "state": (44, ["state", "institution", "degree_level", "cohort"], [["state"], []]),
    "institution": (
        48,
        ["state", "institution", "degree_level", "cipcode", "cohort"],
        [["state", "institution"], ["state"], []],
    ),
}
DRAWS = {"state": 60 if QUICK else 1000, "institution": 10 if QUICK else 200}


def tree_and_counts(name: str):
    agg, by, margins = TREES[name]
    cells = percentile_experiments.load_pseo_cells(real_data_path("pseo_earnings_co_tx.csv.gz"), agg_level=agg)
    counts = percentile_mechanisms.cell_bin_counts(
        *percentile_experiments.synthesize_cells(cells, rng=1), len(cells), percentile_mechanisms.PSEO_BIN_EDGES
    )
    return consistency.hierarchy_from_keys(cells, by, margins), counts


def fmt(values, digits=3) -> str:
    return " / ".join(f"{v:.{digits}f}" for v in values)


def accuracy_table(name: str, tree, counts, epsilons) -> None:
    print(f"\n#### {name} tree: levels {' / '.join(str(s) for s in tree.sizes)} nodes, {DRAWS[name]} releases each")
    print(
        "| ε (per level) | RMSE own / least squares / integers | integers ÷ own | measured bins < 0 | p50 coverage published (least squares) | p50 mean abs. error, measured → consistent | seconds |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for eps in epsilons:
        shares = consistency.split_epsilon(eps, tree.levels)
        t = time.perf_counter()
        sim = consistency.simulate(tree, counts, list(2.0 / shares), n_draws=DRAWS[name], rng=2026)
        sec = time.perf_counter() - t
        rmse = " ; ".join(
            f"{a:.2f} / {b:.2f} / {c:.2f}"
            for a, b, c in zip(sim.rmse_measured, sim.rmse_least_squares, sim.rmse_consistent, strict=True)
        )
        ratio = fmt(np.array(sim.rmse_consistent) / np.array(sim.rmse_measured))
        neg = fmt(sim.negative_measured, 3)
        cov = " / ".join(
            f"{a:.3f} ({b:.3f})" for a, b in zip(sim.coverage[50.0], sim.coverage_least_squares[50.0], strict=True)
        )
        err = " ; ".join(
            f"{a:,.0f} → {b:,.0f}"
            for a, b in zip(sim.abs_error_measured[50.0], sim.abs_error_consistent[50.0], strict=True)
        )
        assert sim.sum_violations == 0 and sim.negative_consistent == 0
        print(f"| {eps:g} ({shares[0]:.3g}) | {rmse} | {ratio} | {neg} | {cov} | {err} | {sec:.1f} |")


def splits_table(name: str, tree) -> None:
    print(f"\n#### {name} tree: exact least-squares RMSE of each level ÷ the level released alone at the whole ε")
    print("| split | shares (cells first) | ratio per level | worst |")
    print("| --- | --- | --- | --- |")
    alone = np.sqrt(consistency.discrete_laplace_variance(2.0))  # epsilon = 1 (the ratios hardly depend on it)
    t = time.perf_counter()
    balanced = consistency.balanced_split(tree, 1.0, sensitivity=2.0)
    sec = time.perf_counter() - t
    for label, shares in (("even", consistency.split_epsilon(1.0, tree.levels)), ("balanced", balanced)):
        r = np.array(consistency.level_errors(tree, list(2.0 / shares)).least_squares) / alone
        print(f"| {label} | {fmt(shares)} | {fmt(r, 2)} | {r.max():.2f} |")
    print(f"\nbalanced_split: {sec:.2f} s")


def timing(name: str, tree, counts) -> None:
    shares = consistency.split_epsilon(1.0, tree.levels)
    scales = list(2.0 / shares)
    rng = np.random.default_rng(3)
    truth = tree.aggregate(counts)
    noisy = [t + rng.laplace(0, s, t.shape).round() for t, s in zip(truth, scales, strict=True)]
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        consistency.make_consistent(tree, noisy, scales)
        runs.append(time.perf_counter() - t)
    bins = sum(tree.sizes) * counts.shape[1]
    print(
        f"make_consistent, {name} tree ({bins:,} noisy counts): median {np.median(runs) * 1000:.0f} ms, worst {max(runs) * 1000:.0f} ms"
    )


def coverage_table(name: str, tree, counts, epsilons, draws: int) -> None:
    print(f"\n#### {name} tree: coverage of the published 95% intervals per level (cells first), {draws} releases")
    print("| ε | n | p25 | p50 | p75 | p50 least squares alone |")
    print("| --- | --- | --- | --- | --- | --- |")
    for eps in epsilons:
        scales = list(2.0 / consistency.split_epsilon(eps, tree.levels))
        for public in (True, False):
            sim = consistency.simulate(tree, counts, scales, n_draws=draws, rng=2027, q=(25, 50, 75), n_public=public)
            cov = [fmt(sim.coverage[q]) for q in (25.0, 50.0, 75.0)]
            print(
                f"| {eps:g} | {'public' if public else 'noisy'} | {' | '.join(cov)} | "
                f"{fmt(sim.coverage_least_squares[50.0])} |"
            )


def main() -> None:
    if "--coverage" in sys.argv:
        print(f"Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()[0]:.1f}")
        for name, draws in (("state", 60 if QUICK else 400), ("institution", 10 if QUICK else 40)):
            tree, counts = tree_and_counts(name)
            coverage_table(name, tree, counts, (0.25, 1.0, 4.0), draws)
        print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
        return
    print(
        f"Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}"
    )
    for name in TREES:
        tree, counts = tree_and_counts(name)
        accuracy_table(name, tree, counts, (0.25, 1.0, 4.0) if name == "state" or not QUICK else (1.0,))
        splits_table(name, tree)
        timing(name, tree, counts)
    tree, counts = tree_and_counts("state")
    print("\n#### state tree, small noise: where integers that add up cost the cells (even split)")
    accuracy_table("state", tree, counts, (9.0, 12.0, 15.0, 30.0) if not QUICK else (15.0,))
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
