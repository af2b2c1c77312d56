"""Coverage and width of the intervals computed from the published record alone (dpcore.intervals).

Run: .venv/bin/python benchmarks/bench_intervals.py [--reps 500] [--seed 2026]

Setting (the release targets in docs/secure_noise.md, "How each published interval is made"): 40 cells of
300-700 real incomes (ACS 2019 PUMS excerpt, PINCP, negatives dropped; a log-normal stand-in when the file is
absent), epsilon = 1 per statistic, level 0.95. Repeated releases are simulated with numpy draws of the
mechanisms' own laws (the real samplers draw the same laws; tests/test_noise_secure.py compares them).

Targets: coverage >= 0.93 for the mean, the Gini (noise laplace, delta 1e-6), p50 and the relative risk; mean
interval width / exact Laplace width <= 1.5; Gini median width / oracle median width <= 3 for every noise and
epsilon in {0.25, 1, 4} (the oracle knows S_beta(X)/alpha and spends the whole epsilon on the value, default
calibration); p50 interval narrower than half the median income.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpcore import data as data_lib
from dpcore import gini as gini_lib
from dpcore import intervals
from dpcore import percentiles as percentiles_lib
from dpcore.mechanisms import MeanMechanism, RelativeRiskMechanism
from dpcore.noise import smooth as smooth_noise

LEVEL = 0.95
EPSILON = 1.0
LOWER, UPPER = 0.0, 250_000.0
GINI_DELTA = 1e-6
N_EPSILON = 0.1  # the plan's default epsilon of a noisy cell size
ROWS: list[tuple[str, str, str, str]] = []


def _row(what: str, number: str, target: str, note: str = "") -> None:
    ROWS.append((what, number, target, note))
    print(f"{what:<58} {number:>16}  {target:<10} {note}", flush=True)


def load_cells(n_cells: int, rng: np.random.Generator) -> tuple[list[np.ndarray], list[np.ndarray], str]:
    """Incomes and sex (1/2) of ``n_cells`` disjoint random cells of 300-700 people."""
    acs = data_lib.load_shared("acs")
    if acs is not None:
        income = np.asarray(acs.values, dtype=float)
        sex = acs.frame["SEX"].to_numpy(dtype=int)
        source = "ACS 2019 PUMS excerpt (PINCP)"
    else:  # pragma: no cover - the ACS excerpt is bundled with dpcore
        income = np.round(rng.lognormal(10.3, 1.0, 30_000))
        sex = rng.integers(1, 3, income.size)
        source = "log-normal stand-in (ACS excerpt absent)"
    order = rng.permutation(income.size)
    sizes = rng.integers(300, 701, n_cells)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    cells = [order[starts[i] : starts[i + 1]] for i in range(n_cells)]
    return [income[c] for c in cells], [sex[c] for c in cells], source


def bench_mean(cells: list[np.ndarray], reps: int, rng: np.random.Generator) -> None:
    clipped = [np.clip(x, LOWER, UPPER) for x in cells]
    truth = np.array([c.mean() for c in clipped])
    n = np.array([c.size for c in clipped], dtype=float)
    sums = np.array([c.sum() for c in clipped])
    public = MeanMechanism(EPSILON, LOWER, UPPER)
    scale = public.noise_scale_cents / 100.0
    values = (sums[:, None] + rng.laplace(0.0, scale, (n.size, reps))) / n[:, None]
    lo, hi = intervals.mean_interval_bounds(
        values.ravel(), np.repeat(n, reps), sum_scale=scale, lower=LOWER, upper=UPPER, level=LEVEL
    )
    cover = np.mean((lo <= np.repeat(truth, reps)) & (np.repeat(truth, reps) <= hi))
    exact = 2.0 * intervals.laplace_quantile(LEVEL, scale) / np.repeat(n, reps)
    _row("mean, public n: coverage", f"{cover:.4f}", ">= 0.93")
    _row(
        "mean, public n: width / exact Laplace width (median)",
        f"{np.median((hi - lo) / exact):.3f}",
        "<= 1.5",
        "cut to [L, U] only",
    )
    moving = MeanMechanism(EPSILON, LOWER, UPPER, cells_move=True)
    m_scale = moving.noise_scale_cents / 100.0
    for n_epsilon in (N_EPSILON, 1.0):
        n_scale = 2.0 / n_epsilon
        noisy_n = n[:, None] + _discrete_laplace(rng, n_scale, (n.size, reps))
        noisy_sum = sums[:, None] + rng.laplace(0.0, m_scale, (n.size, reps))
        vals = np.where(noisy_n > 0, noisy_sum / np.maximum(noisy_n, 1), 0.0)
        t0 = time.process_time()
        lo, hi = intervals.mean_interval_bounds(
            vals.ravel(), noisy_n.ravel(), sum_scale=m_scale, lower=LOWER, upper=UPPER, level=LEVEL, n_scale=n_scale
        )
        took = time.process_time() - t0
        tr = np.repeat(truth, reps)
        exact = 2.0 * intervals.laplace_quantile(LEVEL, m_scale) / np.repeat(n, reps)
        _row(
            f"mean, noisy n (n_epsilon {n_epsilon:g}): coverage",
            f"{np.mean((lo <= tr) & (tr <= hi)):.4f}",
            ">= 0.93",
            f"{lo.size} intervals in {took:.1f} s",
        )
        _row(
            f"mean, noisy n (n_epsilon {n_epsilon:g}): width / Laplace width at the true n",
            f"{np.median((hi - lo) / exact):.3f}",
            "(<= 1.5)",
            f"median; count noise scale {n_scale:g}",
        )


def _discrete_laplace(rng: np.random.Generator, scale: float, shape: tuple[int, ...]) -> np.ndarray:
    eps = 1.0 / scale
    return np.floor(rng.standard_exponential(shape) / eps) - np.floor(rng.standard_exponential(shape) / eps)


def bench_percentiles(cells: list[np.ndarray], reps: int, rng: np.random.Generator) -> None:
    edges = percentiles_lib.PSEO_BIN_EDGES
    counts = np.vstack([percentiles_lib.histogram_counts(x, edges).counts for x in cells]).astype(float)
    truth = np.array([percentiles_lib.empirical_percentile(x, [50])[0] for x in cells])
    n = counts.sum(axis=1)
    scale = 2.0 / EPSILON  # HistogramMechanism: 2m/epsilon, replace-one
    noisy = counts[:, None, :] + _discrete_laplace(rng, scale, (len(cells), reps, counts.shape[1]))
    flat = noisy.reshape(-1, counts.shape[1])
    tr = np.repeat(truth, reps)
    for label, sizes in (("public n", np.repeat(n, reps)), ("noisy n", None)):
        t0 = time.process_time()
        res = intervals.percentile_interval(flat, edges, (50,), scale=scale, level=LEVEL, n=sizes)
        took = time.process_time() - t0
        lo, hi = res.lower[:, 0], res.upper[:, 0]
        share = (hi - lo) / tr
        _row(
            f"p50 ({label}): coverage",
            f"{np.mean((lo <= tr) & (tr <= hi)):.4f}",
            ">= 0.93",
            f"{lo.size} intervals in {took:.2f} s",
        )
        _row(
            f"p50 ({label}): width / true median (median; max)",
            f"{np.median(share):.3f}; {share.max():.3f}",
            "< 0.5",
            f"share of intervals < 0.5: {np.mean(share < 0.5):.3f}",
        )


def bench_relative_risk(cells: list[np.ndarray], sexes: list[np.ndarray], reps: int, rng: np.random.Generator) -> None:
    threshold = 25_000.0  # outcome: income below $25,000; exposure: SEX == 2 (reference SEX == 1)
    mech = RelativeRiskMechanism(EPSILON)
    scale = mech.noise_scale
    cover = {"data": [], "population": []}
    widths = []
    small = 0
    for x, s in zip(cells, sexes, strict=True):
        nx, ny = int(np.sum(s == 2)), int(np.sum(s == 1))
        cx, cy = int(np.sum((s == 2) & (x < threshold))), int(np.sum((s == 1) & (x < threshold)))
        rr_data = (cx / nx) / (cy / ny)
        bx, by = rng.binomial(nx, cx / nx, reps), rng.binomial(ny, cy / ny, reps)  # a fresh sample per release
        for target, base_x, base_y, truth in (
            ("data", np.full(reps, cx), np.full(reps, cy), rr_data),
            ("population", bx, by, rr_data),
        ):
            xs = base_x + rng.laplace(0.0, scale, reps)
            ys = base_y + rng.laplace(0.0, scale, reps)
            for xn, yn in zip(xs, ys, strict=True):
                ci = intervals.relative_risk_interval(xn, yn, nx, ny, scale=scale, level=LEVEL, target=target)
                cover[target].append(ci.lower <= truth <= ci.upper)
                if target == "population":
                    widths.append(ci.width / truth)
                    small += bool(ci.caveat)
    _row(
        "relative risk, data target (noise only): coverage",
        f"{np.mean(cover['data']):.4f}",
        ">= 0.93",
        "delta method on the Laplace noise",
    )
    _row(
        "relative risk, Shoham & Ligett Thm 4.5: coverage of p_x/p_y",
        f"{np.mean(cover['population']):.4f}",
        ">= 0.93",
        f"binomial resampling; width/RR median {np.median(widths):.3f}; counts < 30: {small}",
    )


def _oracle_widths(
    noise: str, epsilon: float, s0: np.ndarray, g: np.ndarray, reps: int, rng: np.random.Generator
) -> np.ndarray:
    cal = smooth_noise.smooth_calibration(noise, epsilon, delta=None if noise == "cauchy" else GINI_DELTA)
    law = smooth_noise.noise_distribution(cal)
    scale = s0 / cal.alpha
    q = float(law.abs_quantile(LEVEL))
    vals = np.round(np.clip(g[:, None] + scale[:, None] * law.rvs((g.size, reps), rng), 0, 1), 6)
    lo = np.clip(vals - q * scale[:, None], 0, 1)
    hi = np.clip(vals + q * scale[:, None], 0, 1)
    return (hi - lo).ravel()


def _gini_draws(
    plan: intervals.GiniIntervalPlan, s: np.ndarray, g: np.ndarray, reps: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    law = smooth_noise.noise_distribution(plan.calibration)
    scale = np.clip(s / plan.release_alpha, plan.min_scale, plan.max_scale)
    noisy = g[:, None] + scale[:, None] * law.rvs((g.size, reps), rng)
    values = np.round(np.clip(noisy, 0, 1), 6)
    s_hat = intervals.simulate_gini_bounds(s, plan=plan, size=reps, rng=rng)
    return intervals.gini_interval_bounds(values.ravel(), s_hat.ravel(), **plan.public_constants())


def bench_gini(cells: list[np.ndarray], reps: int, rng: np.random.Generator) -> None:
    sorted_cells = [np.sort(np.clip(x, LOWER, UPPER)) for x in cells]
    profiles = [gini_lib.ExactSensitivityProfile(x, LOWER, UPPER) for x in sorted_cells]
    g = np.array([gini_lib.gini(x) for x in sorted_cells])
    tr = np.repeat(g, reps)
    n_min = min(x.size for x in sorted_cells)
    for noise in smooth_noise.SMOOTH_NOISES:
        for epsilon in (0.25, 1.0, 4.0):
            cal0 = smooth_noise.smooth_calibration(noise, epsilon, delta=None if noise == "cauchy" else GINI_DELTA)
            s0 = np.array([p.smooth_sensitivity(cal0.beta).value for p in profiles])
            oracle = np.median(_oracle_widths(noise, epsilon, s0, g, reps, rng))
            out = {}
            for method in intervals.GINI_INTERVAL_METHODS:
                t0 = time.process_time()
                plan = intervals.optimise_gini_split(
                    epsilon, GINI_DELTA, noise, n_min, LOWER, UPPER, LEVEL, method=method
                )
                t_plan = time.process_time() - t0
                s = np.array([p.smooth_sensitivity(plan.beta).value for p in profiles])
                lo, hi = _gini_draws(plan, s, g, reps, rng)
                out[method] = (np.mean((lo <= tr) & (tr <= hi)), np.median(hi - lo) / oracle, plan, t_plan)
            cover, ratio, plan, t_plan = out["pivot"]
            model = plan.model_width / plan.model_oracle_width
            note = (
                f"eps_s {plan.epsilon_bound:.3g}, beta {plan.beta:.3g}; model {model:.2f};"
                f" union: {out['union'][1]:.2f} (coverage {out['union'][0]:.3f}); plan {t_plan:.1f} s"
            )
            target = ">= 0.93" if (noise == "laplace" and epsilon == 1.0) else "(>= 0.93)"
            _row(f"Gini {noise}, eps {epsilon:g}: coverage", f"{cover:.4f}", target)
            _row(f"Gini {noise}, eps {epsilon:g}: median width / oracle", f"{ratio:.2f}", "<= 3", note)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=500, help="releases simulated per cell")
    ap.add_argument("--cells", type=int, default=40)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    cells, sexes, source = load_cells(args.cells, rng)
    started, wall = time.process_time(), time.perf_counter()
    print(
        f"{args.cells} cells of {min(map(len, cells))}-{max(map(len, cells))} records from {source}; "
        f"epsilon {EPSILON:g} per statistic; level {LEVEL}; {args.reps} releases per cell; bounds [0, 250000]"
    )
    bench_mean(cells, args.reps, rng)
    bench_percentiles(cells, args.reps, rng)
    bench_relative_risk(cells, sexes, args.reps, rng)
    bench_gini(cells, args.reps, rng)
    print(
        f"\n{platform.machine()} {platform.processor() or ''} Python {platform.python_version()}, "
        f"{datetime.date.today().isoformat()}, total {time.process_time() - started:.0f} s CPU "
        f"({time.perf_counter() - wall:.0f} s wall); timings in the notes are CPU seconds"
    )
    print("\n| measure | value | target | note |\n|---|---|---|---|")
    for what, number, target, note in ROWS:
        print(f"| {what} | {number} | {target} | {note} |")


if __name__ == "__main__":
    main()
