"""Brute-force oracles for the Gini sensitivity analysis (dpcore.gini).

Every test here compares the fast algorithms with an exhaustive enumeration on tiny data, or
with exact local sensitivities of random k-changes on a few hundred records. A broken
algorithm or a broken sensitivity bound fails these tests.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpcore.gini import (
    ExactSensitivityProfile,
    exact_local_sensitivity,
    gini_global_sensitivity,
    local_sensitivity_bound,
    max_gini_after_k,
    min_gini_after_k,
    smooth_sensitivity,
)
from dpcore.gini.sensitivity import _ls_bound
from dpcore.gini.statistic import PrefixSums, max_gini_k, min_gini_k, sorted_gini, sum_extremes


def g1(y) -> float:
    """Oracle Gini, eq. (1), from the pairwise definition (independent of the sorted formula)."""
    return float(g1_rows(np.asarray(y, dtype=float)[None, :])[0])


def g1_rows(Y: np.ndarray) -> np.ndarray:
    """Pairwise-definition Gini of every row of Y (0 for an all-zero row)."""
    s = Y.sum(axis=1)
    T = np.abs(Y[:, :, None] - Y[:, None, :]).sum(axis=(1, 2))
    return np.divide(T, 2 * Y.shape[1] * s, out=np.zeros_like(T), where=s > 0)


def ball(xs, k, grid) -> np.ndarray:
    """All data sets replacing k records of xs by values of grid (the k-ball on the grid), as rows."""
    xs = np.asarray(xs, dtype=float)
    n = len(xs)
    if k == 0:
        return xs[None, :]
    rows = []
    vals = np.array(list(itertools.product(grid, repeat=k)), dtype=float).reshape(-1, k)
    for idx in itertools.combinations(range(n), k):
        Y = np.repeat(xs[None, :], len(vals), axis=0)
        Y[:, list(idx)] = vals
        rows.append(Y)
    return np.concatenate(rows)


def neighbours(Y: np.ndarray, grid) -> np.ndarray:
    """For each row y of Y, all rows replacing one record by a grid value: shape (rows, n*|grid|, n)."""
    r, n = Y.shape
    grid = np.asarray(grid, dtype=float)
    Z = np.repeat(Y[:, None, :], n * grid.size, axis=1)
    pos = np.repeat(np.arange(n), grid.size)
    Z[:, np.arange(n * grid.size), pos] = np.tile(grid, n)[None, :]
    return Z


def ls_grid_rows(Y: np.ndarray, grid) -> np.ndarray:
    """Brute-force local sensitivity of every row (every record replaced by every grid value)."""
    out = np.empty(len(Y))
    step = max(1, 20000 // (Y.shape[1] * len(grid)))
    for a in range(0, len(Y), step):
        blk = Y[a : a + step]
        Z = neighbours(blk, grid)
        gz = g1_rows(Z.reshape(-1, Y.shape[1])).reshape(len(blk), -1)
        out[a : a + step] = np.abs(gz - g1_rows(blk)[:, None]).max(axis=1)
    return out


def ls_grid(y, grid) -> float:
    return float(ls_grid_rows(np.asarray(y, dtype=float)[None, :], grid)[0])


def random_case(rng, n_max=6, steps=8):
    n = int(rng.integers(2, n_max + 1))
    L = float(rng.choice([0.0, 0.0, 1.0, 2.0]))
    U = L + float(rng.integers(1, 9))
    grid = np.linspace(L, U, steps + 1)
    xs = np.sort(rng.choice(grid, n))
    return n, L, U, grid, xs


def test_oracle_gini_matches_sorted_formula(rng):
    for _ in range(50):
        y = rng.uniform(0, 10, int(rng.integers(2, 30)))
        assert sorted_gini(np.sort(y)) == pytest.approx(g1(y), rel=1e-12, abs=1e-15)


def test_min_max_after_k_equal_brute_force_on_grid():
    """n <= 6, k <= 2: the exact min/max equal the enumeration over all k-replacements."""
    rng = np.random.default_rng(2026)
    checked = 0
    while checked < 150:
        n, L, U, grid, xs = random_case(rng)
        if xs.sum() == 0:
            continue
        cand = np.unique(np.concatenate((grid, xs)))
        for k in range(1, min(2, n) + 1):
            vals = g1_rows(ball(xs, k, cand))
            assert min_gini_after_k(xs, k) == pytest.approx(vals.min(), abs=1e-12), (xs, L, U, k)
            assert max_gini_after_k(xs, k, L, U) == pytest.approx(vals.max(), abs=1e-12), (xs, L, U, k)
        checked += 1


def test_min_max_after_k_equal_subset_oracle_larger_n():
    """n <= 9, all k: the extremes equal an oracle that enumerates every kept subset.

    Oracle (independent of the consecutive-block theorems 4.1-4.2): for each kept subset K,
    max over new values in {L, U}^k (vertices; the Gini is quasi-convex) and min over a common
    new value c in K (symmetry + quasi-convexity).
    """
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(3, 10))
        L = float(rng.choice([0.0, 0.5]))
        U = L + float(rng.uniform(1, 20))
        xs = np.sort(np.where(rng.random(n) < 0.3, rng.uniform(L, U, n), rng.uniform(L, L + (U - L) / 5, n)))
        for k in range(1, n):
            rows_hi, rows_lo = [], []
            for keep in itertools.combinations(range(n), n - k):
                K = xs[list(keep)]
                for j in range(k + 1):
                    rows_hi.append(np.concatenate((K, [L] * j, [U] * (k - j))))
                for c in K:
                    rows_lo.append(np.concatenate((K, [c] * k)))
            lo = g1_rows(np.array(rows_lo)).min()
            hi = g1_rows(np.array(rows_hi)).max()
            assert min_gini_after_k(xs, k) == pytest.approx(lo, abs=1e-12), (xs, k)
            assert max_gini_after_k(xs, k, L, U) == pytest.approx(hi, abs=1e-12), (xs, k)


def test_exact_local_sensitivity_matches_dense_grid():
    """The candidate set {L, U, data values} finds the exact LS (dense grid can only be lower, and close)."""
    rng = np.random.default_rng(3)
    for _ in range(40):
        n = int(rng.integers(2, 7))
        L, U = 0.0, 10.0
        xs = np.sort(rng.uniform(L, U, n))
        dense = np.linspace(L, U, 2001)
        bf = ls_grid(xs, np.concatenate((dense, xs)))
        ex = exact_local_sensitivity(xs, L, U)
        assert ex >= bf - 1e-12
        # any v in [L, U] is within 0.005 of a dense point; the Gini is Lipschitz in v
        assert ex <= bf + 0.005 * 2 / max(xs.sum(), 1e-9) + 1e-9


def test_A_k_never_below_brute_force_max_local_sensitivity():
    """A^(k)(X) >= max over the k-ball of LS(X') (grid enumeration, k <= 2, n <= 5)."""
    rng = np.random.default_rng(11)
    checked = 0
    while checked < 70:
        n, L, U, grid, xs = random_case(rng, n_max=5, steps=6)
        if xs.sum() == 0:
            continue
        res = smooth_sensitivity(xs, lower=L, upper=U, beta=0.05, k_max=2)
        for k in range(0, min(2, n) + 1):
            worst = ls_grid_rows(ball(xs, k, grid), grid).max()
            assert res.A[k] >= worst - 1e-12, (xs, L, U, k, res.A[k], worst)
        checked += 1


def test_global_sensitivity_brute_force():
    """GS bounds every brute-force neighbour difference; attained for lower = 0."""
    for n in (2, 3, 4):
        for L, U in ((0.0, 4.0), (1.0, 4.0), (2.0, 3.0)):
            grid = np.linspace(L, U, 5)
            gs = gini_global_sensitivity(n, L, U)
            worst = ls_grid_rows(np.array(list(itertools.product(grid, repeat=n))), grid).max()
            assert worst <= gs + 1e-12
            if L == 0.0:
                assert worst == pytest.approx((n - 1) / n)
                assert gs == pytest.approx((n - 1) / n)


def test_local_sensitivity_bound_is_monotone_in_the_box(rng):
    """Growing the box never lowers the bound (this is what makes S_beta smooth)."""
    n, L, U = 50, 0.0, 100.0
    for _ in range(2000):
        g = np.sort(rng.uniform(0, 0.98, 2))
        s = np.sort(rng.uniform(n * L, n * U, 2))
        a = local_sensitivity_bound(n, L, U, g[0], g[1], s[0], s[1])
        g2 = np.array([max(0.0, g[0] - rng.uniform(0, 0.2)), min(0.98, g[1] + rng.uniform(0, 0.2))])
        s2 = np.array([max(0.0, s[0] - rng.uniform(0, 500)), min(n * U, s[1] + rng.uniform(0, 500))])
        b = local_sensitivity_bound(n, L, U, g2[0], g2[1], s2[0], s2[1])
        assert b >= a - 1e-15


def _income_like(rng, n):
    x = np.round(rng.lognormal(3.0, 1.0, n), 1)
    x[rng.random(n) < 0.08] = 0.0
    return x


@pytest.mark.slow
@pytest.mark.parametrize("method", ["exact", "fast"])
def test_random_k_changes_never_exceed_A_k(method):
    """A few hundred records: thousands of random k-changes X' have exact LS(X') <= A^(k)(X)."""
    rng = np.random.default_rng(99)
    n, L = 200, 0.0
    x = _income_like(rng, n)
    U = 2.5 * x.max()
    res = smooth_sensitivity(x, lower=L, upper=U, beta=0.1, method=method, k_max=6)
    worst_ratio = 0.0
    trials = 0
    for k in range(0, 7):
        for _ in range(250 if k else 1):
            y = x.copy()
            idx = rng.choice(n, k, replace=False)
            # adversarial-ish values: bounds, data values, uniform
            pick = rng.integers(0, 3, k)
            vals = np.where(
                pick == 0, rng.choice([L, U], k), np.where(pick == 1, rng.choice(x, k), rng.uniform(L, U, k))
            )
            y[idx] = vals
            ls = exact_local_sensitivity(y, L, U)
            assert ls <= res.A[k] + 1e-15, (k, ls, res.A[k])
            worst_ratio = max(worst_ratio, ls / res.A[k])
            trials += 1
    # targeted k-changes: the k largest to L (mean down), the k smallest to U (top heavier)
    order = np.argsort(x)
    for k in range(1, 7):
        y1 = x.copy()
        y1[order[-k:]] = L
        y2 = x.copy()
        y2[order[:k]] = U
        for y in (y1, y2):
            ls = exact_local_sensitivity(y, L, U)
            assert ls <= res.A[k] + 1e-15, (k, ls, res.A[k])
            worst_ratio = max(worst_ratio, ls / res.A[k])
    assert trials > 1500
    # the bound is not vacuous: within 2x of the truth (exact), 10x (fast)
    assert worst_ratio > (0.5 if method == "exact" else 0.1)


def test_many_random_k_changes_bound_holds_fast_oracle():
    """Thousands of random k-changes on 300 records (cheap oracle: LS <= bound on the point box)."""
    rng = np.random.default_rng(5)
    n, L = 300, 0.0
    x = _income_like(rng, n)
    U = 2.0 * x.max()
    res_e = smooth_sensitivity(x, lower=L, upper=U, beta=0.1, method="exact", k_max=5)
    res_f = smooth_sensitivity(x, lower=L, upper=U, beta=0.1, method="fast", k_max=5)
    for k in range(1, 6):
        for _ in range(600):
            y = x.copy()
            idx = rng.choice(n, k, replace=False)
            y[idx] = np.where(rng.random(k) < 0.5, rng.choice([L, U], k), rng.uniform(L, U, k))
            ys = np.sort(y)
            g, s = sorted_gini(ys), ys.sum()
            # every X' in the k-ball has (g, S) inside the exact box, hence a smaller point bound
            point = _ls_bound(n, L, U, np.array([g]), np.array([g]), np.array([s]), np.array([s]))[0]
            assert point <= res_e.A[k] + 1e-15
            assert res_e.A[k] <= res_f.A[k] + 1e-15


@pytest.mark.slow
def test_smoothness_S_X_le_e_beta_S_neighbour():
    """S(X) <= e^beta S(X') for random neighbours X' (both methods)."""
    rng = np.random.default_rng(17)
    for method in ("exact", "fast"):
        for trial in range(60):
            n = int(rng.integers(5, 120))
            L = 0.0
            x = _income_like(rng, n)
            if x.sum() == 0:
                continue
            U = float(max(x.max(), 1.0) * rng.uniform(1.0, 3.0))
            beta = float(rng.choice([0.02, 0.1, 0.5]))
            y = x.copy()
            y[rng.integers(n)] = rng.choice([L, U, rng.uniform(L, U)])
            if y.sum() == 0:
                continue
            sx = smooth_sensitivity(x, lower=L, upper=U, beta=beta, method=method).value
            sy = smooth_sensitivity(y, lower=L, upper=U, beta=beta, method=method).value
            assert sx <= math.exp(beta) * sy * (1 + 1e-12)
            assert sy <= math.exp(beta) * sx * (1 + 1e-12)


def test_pruning_does_not_change_the_value():
    """Exact S with pruning equals the unpruned max over all k = 0..n (small n)."""
    rng = np.random.default_rng(23)
    for _ in range(20):
        n = int(rng.integers(3, 40))
        x = _income_like(rng, n)
        if x.sum() == 0:
            continue
        U = float(x.max() * 2 + 1)
        beta = float(rng.choice([0.01, 0.1, 1.0]))
        pruned = smooth_sensitivity(x, lower=0.0, upper=U, beta=beta)
        full = smooth_sensitivity(x, lower=0.0, upper=U, beta=beta, k_max=n)
        assert full.A.size == n + 1
        assert pruned.value == pytest.approx(full.value, rel=1e-12)
        pf = PrefixSums(np.sort(x))
        ks = np.arange(n + 1)
        smin, smax = sum_extremes(pf, ks, 0.0, U)
        gmn = np.array([min_gini_k(pf, int(k)) for k in ks])
        gmx = np.array([max_gini_k(pf, int(k), 0.0, U) for k in ks])
        manual = _ls_bound(n, 0.0, U, gmn, gmx, smin, smax)
        manual[-1] = gini_global_sensitivity(n, 0.0, U)
        assert full.value == pytest.approx(float(np.max(np.exp(-beta * ks) * manual)), rel=1e-12)


@pytest.mark.parametrize("dist", ["lognormal", "uniform", "mostly_zero"])
def test_closed_form_choices_match_full_enumeration_at_scale(dist):
    """n = 20,000: the closed-form j (max) and the binary-searched c (min) equal enumerating every
    j = 0..k and every common value c in the kept block (no precision loss at scale)."""
    rng = np.random.default_rng(31)
    n = 20_000
    if dist == "lognormal":
        x = np.round(rng.lognormal(10.3, 1.0, n))
    elif dist == "uniform":
        x = rng.uniform(0, 1e5, n)
    else:
        x = np.where(rng.random(n) < 0.9, 0.0, rng.lognormal(10, 1, n))
    xs = np.sort(x)
    pf = PrefixSums(xs)
    L, U = 0.0, 2.5 * float(xs.max())
    P, C, S, R = pf.P, pf.C, pf.S, pf.R
    for k in (1, 4, 17):
        best = -1.0
        for j in range(k + 1):
            u = k - j
            a, b = P[: n - k + 1], S - P[k:]
            N = L * j * (j - n) + C[: n - k + 1] + 2 * j * a + (C[n] - C[k:]) - 2 * u * b + U * u * (n - u)
            D = a + b + j * L + u * U
            best = max(best, float((N / (n * D)).max()))
        assert max_gini_k(pf, k, L, U) == pytest.approx(best, abs=1e-13)
        lo = np.inf
        m = n - k
        for i in range(k + 1):
            blk = xs[i : i + m]
            SB = blk.sum()
            TB = 2 * np.dot(2 * np.arange(1, m + 1) - m - 1, blk)
            Pb = np.concatenate(([0.0], np.cumsum(blk)))
            r = np.arange(1, m + 1)
            Dc = (2 * r - m) * blk + SB - 2 * Pb[1:]  # sum_block |y - y_r|
            g = (TB + 2 * k * Dc) / (2 * n * (SB + k * blk))
            lo = min(lo, float(g.min()))
        assert min_gini_k(pf, k) == pytest.approx(lo, abs=1e-13)


def test_dinkelbach_max_equals_window_scan():
    """The O(k) Dinkelbach maximum equals the O(n) scan over every window (incl. k = n, all-zero kept sets)."""
    from dpcore.gini.statistic import _gmax_k_scan

    rng = np.random.default_rng(8)
    for trial in range(120):
        n = int(rng.integers(2, 150))
        kind = trial % 4
        if kind == 0:
            x = rng.lognormal(3, 1, n)
        elif kind == 1:
            x = rng.uniform(0, 10, n)
        elif kind == 2:
            x = np.where(rng.random(n) < 0.7, 0.0, rng.uniform(0, 5, n))
        else:
            x = rng.choice([0.0, 1.0, 5.0], n)
        xs = np.sort(x)
        if xs.sum() == 0:
            continue
        L = float(rng.choice([0.0, 0.0, xs.min() * 0.5]))
        U = float(xs.max() * rng.uniform(1, 4)) + 1e-9
        pf = PrefixSums(xs)
        for k in list(range(0, min(n, 8) + 1)) + [n]:
            assert max_gini_k(pf, k, L, U) == pytest.approx(_gmax_k_scan(pf, k, L, U), abs=1e-11), (n, k, kind)
    # the pole case that a rounding slip once missed: every record replaced, L = 0
    pf = PrefixSums(np.sort(rng.choice([0.0, 1.0, 5.0], 6)) + 1.0)
    assert max_gini_k(pf, 6, 0.0, 7.783012547779508) == pytest.approx(5 / 6)
    assert _gmax_k_scan(pf, 6, 0.0, 7.783012547779508) == pytest.approx(5 / 6)


# ---------------------------------------------------------------------------------------------
# Brute-force sensitivity of stratified.clipped_laplace_mean, calling it directly
# ---------------------------------------------------------------------------------------------


def test_clipped_laplace_mean_bruteforce_sensitivity_and_privacy_loss():
    """Every data set in V^3 and every replace-one neighbour (V has values outside the clip range):
    with the same seed the noise is the same, so value(D) - value(D') is the change of the function's
    own clipped mean. It must stay within the reported sensitivity (U - L)/n, reach it, and the exact
    Laplace log-density ratio |value(D) - value(D')| / noise_scale must stay within epsilon."""
    import itertools

    from dpcore import stratified

    values = (-5.0, 0.0, 2.0, 7.0, 10.0, 15.0)
    eps, clip = 0.8, (0.0, 10.0)
    n = 3
    out = {}
    for data in itertools.product(values, repeat=n):
        r = stratified.clipped_laplace_mean(np.array(data), epsilon=eps, clip_range=clip, rng=11)
        out[data] = r
    worst_shift, worst_loss = 0.0, 0.0
    for data, r in out.items():
        assert r.sensitivity == pytest.approx((clip[1] - clip[0]) / n)
        assert r.noise_scale == pytest.approx(r.sensitivity / eps)
        for i in range(n):
            for v in values:
                nb = list(data)
                nb[i] = v
                other = out[tuple(nb)]
                shift = abs(r.value - other.value)
                worst_shift = max(worst_shift, shift)
                # Laplace densities at any output y: |(|y - m| - |y - m'|)| / b <= |m - m'| / b
                worst_loss = max(worst_loss, shift / r.noise_scale)
    assert worst_shift <= (clip[1] - clip[0]) / n * (1 + 1e-12)
    assert worst_shift == pytest.approx((clip[1] - clip[0]) / n)  # the bound is attained (tight)
    assert worst_loss <= eps * (1 + 1e-12)


def test_probed_pruning_gives_the_value_of_the_full_scan():
    """The smooth sensitivity probes A^(k) at a few k beyond the closed form's reach (A^(k) is non-decreasing in
    k, so a block's terms are bounded by its right end): the value and k* must be those of the scan over every
    k = 0..n, on data where the closed form prunes little (many records, small beta)."""
    rng = np.random.default_rng(41)
    cases = [(np.sort(np.clip(rng.lognormal(10.5, 0.9, 800), 0, 1e6)), 0.0, 1e6, beta) for beta in (0.004, 0.02)]
    for _ in range(25):
        n = int(rng.choice([5, 40, 150, 300]))
        x = _income_like(rng, n)
        if x.sum() == 0:
            continue
        cases.append(
            (np.sort(x), 0.0, float(x.max() * rng.choice([1.0, 2.0, 10.0]) + 1), float(rng.choice([1e-3, 0.01, 0.1])))
        )
    for xs, lower, upper, beta in cases:
        pruned = smooth_sensitivity(xs, lower=lower, upper=upper, beta=beta)
        full = smooth_sensitivity(xs, lower=lower, upper=upper, beta=beta, k_max=xs.size)
        assert pruned.k_star == full.k_star, (xs.size, beta)
        assert pruned.value == pytest.approx(full.value, rel=1e-15, abs=0), (xs.size, beta)
        np.testing.assert_array_equal(pruned.A, full.A[: pruned.A.size])
        # the value alone (no A^(k) sequence up to k*): the same number, bit for bit
        assert ExactSensitivityProfile(xs, lower, upper).smooth_sensitivity_value(beta) == pruned.value
