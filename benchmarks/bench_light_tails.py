"""Error of each smooth-sensitivity noise for the DP Gini at the same privacy.

Run: .venv/bin/python benchmarks/bench_light_tails.py [--draws 200000] [--markdown] [--certificates]

Data: CPS ASEC 2016 INCTOT (negatives dropped; skipped when ../shared/data is absent) and n = 10,000
log-normal incomes (mu 10.5, sigma 0.9, seed 2026). Bounds: L = 0, U = the data maximum, treated
as public (as on the Gini page with a public U). Neighbours: replace one record, n public.

Same privacy: every noise is calibrated to (epsilon, delta = 1e-6)-DP. The Cauchy is pure
epsilon-DP (a fortiori (epsilon, 1e-6)); "laplace" spends (epsilon, 1e-6); "laplace_lognormal"
takes the largest rho whose zCDP implies (epsilon, 1e-6) (CKS 2020 conversion). An extra row,
"lln at rho = eps^2/2", shows the LLN at the rho a pure epsilon-DP mechanism also satisfies: a
weaker guarantee than (epsilon, 1e-6) for one release, reported only because zCDP composes better.

Errors: |released - true Gini|. Median / 90th / 99th percentiles and RMSE are exact (noise scale
times the noise law's quantiles / standard deviation); a Monte Carlo run of ``--draws`` releases
checks them (largest relative gap printed). The Cauchy (gamma = 2) has no variance: RMSE = inf.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpcore import data as income_data
from dpcore import gini
from dpcore.noise import smooth as smooth_noise

EPSILONS = (0.25, 1.0, 4.0)
DELTA = 1e-6


def variants(epsilon: float):
    yield "cauchy (γ=2, tight), pure ε", smooth_noise.smooth_calibration("cauchy", epsilon, gamma=2.0)
    yield "laplace (tight), (ε, 1e-6)", smooth_noise.smooth_calibration("laplace", epsilon, delta=DELTA)
    yield (
        "laplace (NRS paper), (ε, 1e-6)",
        smooth_noise.smooth_calibration("laplace", epsilon, delta=DELTA, mode="paper"),
    )
    yield (
        "laplace_lognormal, ρ ⇒ (ε, 1e-6)",
        smooth_noise.smooth_calibration("laplace_lognormal", epsilon, delta=DELTA),
    )
    yield "laplace_lognormal, ρ = ε²/2", smooth_noise.lln_calibration(rho=epsilon * epsilon / 2, delta=DELTA)


def rows_for(values: np.ndarray, label: str, draws: int, rng: np.random.Generator):
    upper = float(values.max())
    xs = np.clip(values, 0.0, upper)
    truth = gini.gini(xs)
    out = []
    worst_gap = 0.0
    for eps in EPSILONS:
        for name, cal in variants(eps):
            s = gini.smooth_sensitivity(xs, lower=0.0, upper=upper, beta=cal.beta).value
            scale = s / cal.alpha
            dist = smooth_noise.noise_distribution(cal)
            q50, q90, q99 = (scale * float(dist.abs_quantile(p)) for p in (0.5, 0.9, 0.99))
            var = dist.variance
            rmse = scale * math.sqrt(var) if math.isfinite(var) else math.inf
            err = np.abs(scale * dist.rvs(draws, rng))
            sim = np.quantile(err, [0.5, 0.9, 0.99])
            worst_gap = max(worst_gap, float(np.max(np.abs(sim / np.array([q50, q90, q99]) - 1))))
            out.append((label, eps, name, q50, q90, q99, rmse, cal.cost.describe()))
    return truth, out, worst_gap


def certificates() -> None:
    """The certified privacy statements at the benchmark's settings, next to the brute force they must dominate."""
    print(
        "| ε | laplace: certified δ | exact δ (13×13 neighbours) | lln: recorded ρ | certified ρ "
        "| max D_a/(a ρ), quadrature, a ∈ [1.1, 128], corners | seconds |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    orders = np.array([1.1, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0])
    for eps in EPSILONS:
        t0 = time.perf_counter()
        lap = smooth_noise.smooth_calibration("laplace", eps, delta=DELTA)
        exact = max(
            smooth_noise.laplace_smooth_hockey_stick(eps, d, lam)
            for d in np.linspace(-lap.alpha, lap.alpha, 13)
            for lam in np.linspace(-lap.beta, lap.beta, 13)
        )
        lln = smooth_noise.smooth_calibration("laplace_lognormal", eps, delta=DELTA)
        certified = smooth_noise.lln_certified_rho(lln.alpha, lln.beta, lln.sigma)
        worst = max(
            float(
                np.max(smooth_noise.lln_renyi_divergence(orders, lln.sigma, d, lam, n_grid=4001) / (orders * lln.rho))
            )
            for d in (-lln.alpha, lln.alpha)
            for lam in (-lln.beta, lln.beta)
        )
        print(
            f"| {eps:g} | {lap.certificate:.3g} | {exact:.3g} | {lln.rho:.4g} | {certified:.4g} | {worst:.3f} | "
            f"{time.perf_counter() - t0:.1f} |"
        )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=200_000)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument(
        "--certificates",
        action="store_true",
        help="print only the certified privacy statements against their brute force (no data)",
    )
    args = ap.parse_args(argv)
    if args.certificates:
        certificates()
        return
    rng = np.random.default_rng(17)
    datasets = [("log-normal n=10,000", income_data.lognormal_incomes(10_000, rng=2026))]
    cps = income_data.load_cps(negative="drop")
    if cps is not None:
        datasets.insert(0, (f"CPS INCTOT n={cps.values.size:,}", np.asarray(cps.values, dtype=float)))
    else:
        print("CPS file absent: skipping it")
    t0 = time.perf_counter()
    print(
        f"# machine: {platform.node()} {platform.machine()} python {platform.python_version()}; "
        f"date {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"
    )
    print("| data | ε | noise | median | 90th | 99th | RMSE | privacy cost |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    gaps = []
    for label, values in datasets:
        truth, rows, gap = rows_for(values, label, args.draws, rng)
        gaps.append(gap)
        for lab, eps, name, q50, q90, q99, rmse, cost in rows:
            r = "∞" if not math.isfinite(rmse) else f"{rmse:.2e}"
            print(f"| {lab} (G={truth:.4f}) | {eps:g} | {name} | {q50:.2e} | {q90:.2e} | {q99:.2e} | {r} | {cost} |")
    print(
        f"\nMonte Carlo check ({args.draws:,} draws each): largest relative gap to the exact quantiles "
        f"{max(gaps):.3f}; total {time.perf_counter() - t0:.1f} s"
    )


if __name__ == "__main__":
    main()
