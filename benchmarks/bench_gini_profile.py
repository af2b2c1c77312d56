"""CPU of the exact Gini sensitivity profile's A^(k) sequence (dpcore.gini.sensitivity.ExactSensitivityProfile).

Two measurements in the same run, each against the way it was computed before, kept here as the reference:
* A^(k) for k = 0..K filled in one batch (``exact_a(K)``: the extremes per k, then both bounds vectorised over
  every k) against one k at a time (``_a_at(k)`` per k: two bounds per k on one-element arrays);
* ``max_gini_k`` (one Dinkelbach step over the three window starts as one array) against the step as three passes;
* the Cauchy noise's certified privacy loss (``dpcore.noise.certificates._certified_loss``: the loss profile computed
  at a refinement's new points only) against the profile recomputed on the whole grid each round, over the tight
  calibrations of a grid of (epsilon, gamma) (the Gini page's and the split search's noise).
Run: .venv/bin/python benchmarks/bench_gini_profile.py [--repeats 3]
Data: log-normal incomes (mu 10.5, sigma 0.9) clipped to [0, 1e6], as tests/test_gini_bruteforce.py's full scans.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpcore.gini.sensitivity import ExactSensitivityProfile
from dpcore.gini.statistic import PrefixSums, max_gini_k, sorted_gini
from dpcore.noise import certificates


def max_gini_k_three_passes(pf: PrefixSums, k: int, lower: float, upper: float) -> float:
    """The reference: max_gini_k with the three window starts of each step in three passes."""
    n, L, U = pf.n, lower, upper
    if k <= 0:
        return sorted_gini(pf.x)
    k = min(k, n)
    P, C, S = pf.P, pf.C, pf.S
    j = np.arange(0, k + 1, dtype=float)
    u = k - j

    def ratio_and_F(sv, t):
        si = sv.astype(np.int64)
        a = P[si]
        b = S - P[si + k]
        N = L * j * (j - n) + C[si] + 2.0 * j * a + (C[n] - C[si + k]) - 2.0 * u * b + U * u * (n - u)
        D = a + b + j * L + u * U
        g = np.divide(N, n * D, out=np.zeros_like(N), where=D > 0)
        return g, N - t * D

    best = -np.inf
    t = 0.0
    for _ in range(200):
        h = np.ceil((n + 1 + t - 2.0 * j) / 2.0) - 1.0
        fmax = -np.inf
        for off in (-1.0, 0.0, 1.0):
            g, F = ratio_and_F(np.clip(h + off, 0, n - k), t)
            best = max(best, float(g.max()))
            fmax = max(fmax, float(F.max()))
        t_new = n * best
        if fmax <= 1e-12 * max(abs(t) * (S + k * U), 1e-300) or t_new <= t:
            break
        t = t_new
    return best


def certified_loss_whole_grid(gamma: float, alpha: float, beta: float, tol: float) -> float:
    """The reference: ``_certified_loss`` with the loss profile computed on the whole grid at every round."""
    u_split = 4.0 * alpha + 4.0
    u_max = max(1e6 * (alpha + 1.0), 1e3 * u_split)
    grid = np.unique(
        np.concatenate(
            [
                np.linspace(0.0, u_split, 4001),
                np.geomspace(u_split, u_max, 4001),
                [alpha, max(alpha * (gamma - 1.0) ** (-1.0 / gamma), 0.0)],
            ]
        )
    )
    tail = certificates._tail_bound(u_max, gamma, alpha, beta)
    certificate = math.inf
    for _ in range(60):
        vals = certificates.loss_profiles(grid, gamma, alpha, beta)
        left, right = grid[:-1], grid[1:]
        lip = certificates._local_lipschitz(left, right, gamma, alpha, beta)
        interval_ub = 0.5 * (vals[:-1] + vals[1:]) + 0.5 * lip * (right - left)
        best = max(float(vals.max()), tail)
        certificate = max(float(interval_ub.max()), tail)
        if certificate - best <= tol or grid.size > 3_000_000:
            return certificate
        refine = interval_ub > best + tol / 2
        lo, hi = left[refine], right[refine]
        new = (lo[:, None] + (hi - lo)[:, None] * np.linspace(0, 1, 9)[None, 1:-1]).ravel()
        grid = np.unique(np.concatenate([grid, new]))
    return certificate


def certified_losses(loss) -> list[float]:
    """The certified losses that the tight calibrations of a grid of (epsilon, gamma) evaluate, by ``loss``."""
    certificates._certified_loss.cache_clear()
    certificates._tight.cache_clear()
    asked: list[tuple[float, float, float, float]] = []
    kept = certificates._certified_loss

    def spy(gamma: float, alpha: float, beta: float, tol: float) -> float:
        asked.append((gamma, alpha, beta, tol))
        return kept.__wrapped__(gamma, alpha, beta, tol)

    certificates._certified_loss = spy
    try:
        for eps in (0.1, 0.3, 1.0, 2.0):
            for gamma in (2.0, 3.0, 4.0):
                certificates.smooth_noise_calibration(eps, gamma)
    finally:
        certificates._certified_loss = kept
        certificates._tight.cache_clear()
    return [loss(*args) for args in asked]


def cpu(fn, repeats: int) -> float:
    ts = []
    for _ in range(repeats):
        t = time.process_time()
        fn()
        ts.append(time.process_time() - t)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print("| case | before (CPU s) | now (CPU s) | ratio | same numbers |")
    print("|---|---:|---:|---:|---|")
    for n, k_top in ((800, 800), (10_000, 2_000)):
        xs = np.sort(np.clip(rng.lognormal(10.5, 0.9, n), 0, 1e6))
        ks = range(k_top + 1)
        one = [ExactSensitivityProfile(xs, 0.0, 1e6)._a_at(k) for k in ks]
        batch = ExactSensitivityProfile(xs, 0.0, 1e6)
        batch.exact_a(k_top)
        t_one = cpu(lambda: [ExactSensitivityProfile(xs, 0.0, 1e6)._a_at(k) for k in ks], args.repeats)
        t_batch = cpu(lambda: ExactSensitivityProfile(xs, 0.0, 1e6).exact_a(k_top), args.repeats)
        same = one == batch._exact
        print(
            f"| A^(k), k = 0..{k_top:,}, n = {n:,}: batch vs one k at a time | {t_one:.2f} | {t_batch:.2f} "
            f"| {t_one / t_batch:.2f} | {same} |"
        )
        pf = PrefixSums(xs)
        old = [max_gini_k_three_passes(pf, k, 0.0, 1e6) for k in ks]
        new = [max_gini_k(pf, k, 0.0, 1e6) for k in ks]
        t_old = cpu(lambda: [max_gini_k_three_passes(pf, k, 0.0, 1e6) for k in ks], args.repeats)
        t_new = cpu(lambda: [max_gini_k(pf, k, 0.0, 1e6) for k in ks], args.repeats)
        print(
            f"| max_gini_k, k = 0..{k_top:,}, n = {n:,}: one pass vs three | {t_old:.2f} | {t_new:.2f} "
            f"| {t_old / t_new:.2f} | {old == new} |"
        )

    now = certified_losses(certificates._certified_loss.__wrapped__)
    before = certified_losses(certified_loss_whole_grid)
    t_before = cpu(lambda: certified_losses(certified_loss_whole_grid), args.repeats)
    t_now = cpu(lambda: certified_losses(certificates._certified_loss.__wrapped__), args.repeats)
    print(
        f"| Cauchy certified loss, {len(now)} certificates of 12 tight calibrations: new points only vs whole grid "
        f"| {t_before:.2f} | {t_now:.2f} | {t_before / t_now:.2f} | {before == now} |"
    )


if __name__ == "__main__":
    main()
