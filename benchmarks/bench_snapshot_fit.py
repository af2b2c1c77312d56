"""Two post-processing questions of the DP snapshot, measured on its real draws.

1. **The tail of the fitted histogram** (``dpcore.snapshot.fit_histogram``): on the 2,000-row
   log-normal file of the release-panel tests (numpy default_rng(3838); income = round(lognormal(10.6, 0.8), 2);
   region north/south/west) with the app's snapshot (``SnapshotSchema(upper=1e6, cells=..., planning_epsilon=0.1)``),
   the planner's group means (clip [0, 500,000], relative error 5% with 95% probability, ``planner.solve_epsilon``)
   on each snapshot's synthetic data: the share of snapshots whose target is unreachable (the synthetic clipping
   bias alone exceeds it), the cells whose clipping bias exceeds 4% of their mean, the synthetic people above
   500,000 (the data have 0-1 per cell), the error of the synthetic cell means, and how uncertain the snapshot's
   noise alone leaves the clipping bias (the noisy counts of the bins from 500,000 up, each person at the bin's
   geometric middle: the sd of their excess over 500,000 per person, in % of the cell's mean).
2. **The relative risk's counts** (``dpcore.snapshot.risk_counts``: posterior means under the known noise law)
   against the noisy counts clamped at 0, at the default split and with the risk table's share doubled: on the
   ACS excerpt by state (1,500 records per state, women vs men, income below 20,000), the epsilon solved per cell
   for a ±0.5 half-width (``dpcore.views.private_plan.solve_plan``'s solver) and pooled over the states for ±0.1,
   against the epsilon solved on the records: the share of snapshots declaring the target unreachable and the
   share within 0.67-1.5x.

Run:  .venv/bin/python benchmarks/bench_snapshot_fit.py [--snapshots 100] [--part tail risk]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def lognormal_file() -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(3838)
    income = np.round(gen.lognormal(10.6, 0.8, 2000), 2)
    region = gen.choice(np.array(["north", "south", "west"]), 2000)
    return income, region


def tail(snapshots: int) -> list[str]:
    from dpcore import planner
    from dpcore import snapshot as snap_lib
    from dpcore.mechanisms.snapshot import SnapshotSchema

    income, region = lognormal_file()
    schema = SnapshotSchema(upper=1e6, cells=("north", "south", "west"), planning_epsilon=0.1)
    truth = np.array([income[region == c].mean() for c in schema.labels])
    sizes_true = np.array([np.sum(region == c) for c in schema.labels])
    clip = 500_000.0
    # what the snapshot's noise alone leaves of the clipping bias at 500,000: the bins from the one holding the clip
    # up, each person there at the bin's geometric middle, each bin's count known to the noise's sd
    edges = schema.edges
    first = int(np.searchsorted(edges, clip, side="right")) - 1
    middles = np.sqrt(edges[first:-1] * edges[first + 1 :])
    scale = 2.0 / schema.epsilons["histogram"]
    noise_var = 2.0 * math.exp(-1.0 / scale) / (1.0 - math.exp(-1.0 / scale)) ** 2
    bias_sd = math.sqrt(noise_var * np.sum(np.maximum(middles - clip, 0.0) ** 2)) / sizes_true / truth
    t0 = time.perf_counter()
    unreachable, biased, above, errors = 0, 0, [], []
    for s in range(snapshots):
        snap = snap_lib.take_snapshot(income, schema, cells=region, rng=10_000 + s)
        syn = snap_lib.synthetic_data(snap, seed=s)
        stat = planner.make_statistic("group_means", syn.values, syn.cells, lower=0.0, upper=clip)
        biased += int(np.sum(np.abs(stat.bias / stat.truth) > 0.04))
        above += [int(np.sum(syn.cell_values(c) > clip)) for c in schema.labels]
        errors += (stat.truth / truth - 1.0).tolist()
        try:
            planner.solve_epsilon(stat, planner.AccuracyTarget(0.05))
        except ValueError:
            unreachable += 1
    err = np.abs(np.array(errors))
    data_above = [int(np.sum(income[region == c] > clip)) for c in schema.labels]
    row = (
        f"| {unreachable}/{snapshots} ({100 * unreachable / snapshots:.0f}%) | {biased}/{3 * snapshots} | "
        f"{np.mean(above):.1f} (max {max(above)}; the data: {', '.join(map(str, data_above))}) | "
        f"{100 * np.median(err):.1f}% / {100 * np.percentile(err, 90):.1f}% | "
        f"{', '.join(f'{100 * b:.0f}%' for b in bias_sd)} | {time.perf_counter() - t0:.0f} s |"
    )
    print(row, flush=True)
    head = [
        "| snapshots: 5% target unreachable | cells with clipping bias > 4% | synthetic people above 500,000 per cell: "
        "mean (max) | cell mean's error: median / 90th percentile | sd of the clipping bias from the noise alone, "
        "per cell (% of its mean) | time |",
        "|---|---|---|---|---|---|",
    ]
    return head + [row]


def risk(snapshots: int) -> list[str]:
    from bench_snapshot import cells_of

    from dpcore import snapshot as snap_lib
    from dpcore.mechanisms.snapshot import DEFAULT_SHARES, RiskSchema, SnapshotSchema
    from dpcore.views.planner import HalfWidthTarget, solve_epsilon_for_half_width
    from dpcore.views.private_plan import _ratio_statistic

    found = cells_of("acs", 1500)
    if found is None:
        return ["(no ACS data)"]
    x, g, exposure = found
    labels = tuple(sorted(set(g.tolist())))
    rs = RiskSchema("2", "1", outcome_below=20_000.0)

    def solve(counts: np.ndarray, half_width: float) -> float:
        try:
            return solve_epsilon_for_half_width(_ratio_statistic(counts, "rr"), HalfWidthTarget(half_width)).epsilon
        except ValueError:
            return math.inf

    def plan(table: np.ndarray) -> dict[str, float]:
        return {
            "by state (±0.5)": max(solve(table[i], 0.5) for i in range(len(labels))),
            "pooled (±0.1)": solve(table.sum(axis=0), 0.1),
        }

    schema = SnapshotSchema(upper=1e6, cells=labels, risk=rs)
    truth = snap_lib.planning_data_from_records(x, schema, cells=g, risk_groups=exposure).risk
    direct = plan(truth)
    rows = []
    for weight in (DEFAULT_SHARES["risk"], 2 * DEFAULT_SHARES["risk"]):
        schema = SnapshotSchema(upper=1e6, cells=labels, risk=rs, shares={**DEFAULT_SHARES, "risk": weight})
        split = schema.epsilons
        eps_r = split["risk"]
        got: dict[tuple[str, str], list[float]] = {}
        for s in range(snapshots):
            snap = snap_lib.take_snapshot(x, schema, cells=g, risk_groups=exposure, rng=2000 + s)
            tables = {"clamped at 0": np.maximum(snap.noisy_risk, 0), "posterior mean": snap_lib.risk_counts(snap)}
            for rule, table in tables.items():
                for what, eps in plan(table).items():
                    got.setdefault((what, rule), []).append(eps)
        for (what, rule), eps in got.items():
            r = np.array(eps) / direct[what]
            rows.append(
                f"| {what} | {direct[what]:.3g} | {eps_r:.3g} (histogram {split['histogram']:.3g}, sizes {split['sizes']:.3g}) | {rule} | "
                f"{100 * np.mean(np.isinf(r)):.0f}% | {100 * np.mean((r >= 0.67) & (r <= 1.5)):.0f}% | "
                f"{np.median(r):.2f} |"
            )
            print(rows[-1], flush=True)
    head = [
        "| relative risk | ε on the data | ε of the risk table | counts | snapshots: unreachable | within 0.67–1.5× | median ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    return head + rows


def main() -> None:
    from run_all import machine_facts, machine_line

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshots", type=int, default=100)
    parser.add_argument("--part", nargs="+", default=["tail", "risk"], choices=["tail", "risk"])
    args = parser.parse_args()
    facts = machine_facts()
    t0 = time.perf_counter()
    out = []
    if "tail" in args.part:
        out += tail(args.snapshots) + [""]
    if "risk" in args.part:
        out += risk(args.snapshots)
    print()
    print(machine_line(facts, f"{args.snapshots} snapshots per row; total {time.perf_counter() - t0:.0f} s"))
    print()
    print("\n".join(out))


if __name__ == "__main__":
    main()
