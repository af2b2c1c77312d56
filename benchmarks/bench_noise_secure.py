"""Real-release cost per statistic kind: dpcore.release.make_release with OpenDP / the certified
generalized-Cauchy sampler, vs the numpy simulation of the same law. Run:
    .venv/bin/python benchmarks/bench_noise_secure.py
Prints seconds per release (median of 5, after one warm-up that pays the OpenDP import)."""

from __future__ import annotations

import statistics
import tempfile
import time

import numpy as np

from dpcore import ledger, planner, release


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.lognormal(10.5, 0.8, 5000)
    groups = rng.choice(["a", "b", "c"], 5000)
    kinds = [
        ("count", dict(threshold=30_000)),
        ("mean", dict(upper=2e5)),
        ("group_means", dict(upper=2e5)),
        ("gini", dict(upper=2e5)),
        ("percentiles", dict(n_sims=500)),
        ("ratio", dict(threshold=20_000)),
    ]
    folder = tempfile.mkdtemp()  # a real release is charged to a durable ledger: a throw-away one
    account = ledger.init_ledger(f"sqlite:///{folder}/ledger.db").account("bench", cap_epsilon=1000.0)
    for kind, kw in kinds:
        stat = planner.make_statistic(kind, x, groups, **kw)
        release.make_release([(stat, 1.0)], account)  # warm-up
        real, sim = [], []
        for i in range(5):
            t = time.perf_counter()
            release.make_release([(stat, 1.0)], account)
            real.append(time.perf_counter() - t)
            t = time.perf_counter()
            stat.simulate_draw(1.0, rng=i)
            sim.append(time.perf_counter() - t)
        print(
            f"{kind:12s} real release {statistics.median(real) * 1e3:8.2f} ms   simulation {statistics.median(sim) * 1e3:8.2f} ms"
        )


if __name__ == "__main__":
    main()
