"""dpcore.percentiles: bins, the eq. (4.2) rule, privacy of the histogram, brute-force eq. (4.6),
privacy loss of the smooth and exponential-mechanism rivals, bad input. Deterministic (fixed seeds)."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from scipy import special

from dpcore import noise, percentiles
from dpcore.validation import DPInputError
from dpcore.views import percentiles as percentile_experiments

# ------------------------------------------------------------------ bins


def test_pseo_edges_are_table1_and_the_lognormal_quantiles_of_footnote_18():
    e = percentiles.PSEO_BIN_EDGES
    assert e.shape == (22,) and np.all(np.diff(e) > 0)
    assert e[0] == 10_000 and e[-1] == 614_597 and e[-2] == 262_475
    # footnote 18: 5th..95th percentiles, then 97.5th, then 99.9th of LN(11.003, 0.753^2)
    probs = np.concatenate([np.arange(1, 20) * 0.05, [0.975, 0.999]])
    ln = np.exp(percentiles.PSEO_LOG_MEAN + percentiles.PSEO_LOG_SD * special.ndtri(probs))
    # the published edges come from unrounded parameters: agree to 0.15%
    assert np.max(np.abs(ln / e[1:] - 1)) < 1.5e-3
    with pytest.raises(ValueError):
        e[3] = 1.0  # read-only


@pytest.mark.parametrize("m", [10, 15, 20, 25, 30])
def test_lognormal_edges_give_equal_probability_inner_bins(m):
    e = percentiles.lognormal_bin_edges(m)
    assert e.size == m + 1 and e[0] == 10_000 and np.all(np.diff(e) > 0)
    cdf = special.ndtr((np.log(e) - percentiles.PSEO_LOG_MEAN) / percentiles.PSEO_LOG_SD)
    np.testing.assert_allclose(np.diff(cdf)[1:-1], 1.0 / m, rtol=1e-9)
    assert cdf[-1] == pytest.approx(0.999)


def test_pseo_is_twenty_bin_scheme_with_split_top():
    """PSEO's 21 bins = the 20-bin log-normal scheme with its top bin split at the 97.5th percentile."""
    e20 = percentiles.lognormal_bin_edges(20)
    np.testing.assert_allclose(percentiles.PSEO_BIN_EDGES[:20], e20[:20], rtol=1.5e-3)


def test_even_edges_and_scheme_names():
    e = percentiles.even_bin_edges(10)
    assert e.size == 11 and np.allclose(np.diff(e), (percentiles.PSEO_TOP - percentiles.PSEO_LOWER) / 10)
    assert percentiles.bin_edges("pseo").size == 22
    assert percentiles.bin_edges("lognormal", 12).size == 13
    with pytest.raises(DPInputError, match="bin scheme"):
        percentiles.bin_edges("quantum", 10)


@pytest.mark.parametrize("bad", [[1, 1, 2], [3, 2, 1], [1.0], [], [1, np.nan, 3]])
def test_edges_not_increasing_or_too_few_are_rejected(bad):
    with pytest.raises(DPInputError):
        percentiles.check_edges(bad)


# ------------------------------------------------------------------ counting and bad input


def test_histogram_counts_clips_and_reports_out_of_range_values():
    edges = [10, 20, 30]
    b = percentiles.histogram_counts([5, 10, 15, 20, 29.9, 30, 100], edges)
    assert b.counts.tolist() == [3, 4] and b.n_below == 1 and b.n_above == 2 and b.n == 7


@pytest.mark.parametrize(
    "values, msg",
    [
        ([], "empty"),
        ([50_000.0], "only 1 person"),
        ([1.0, -3.0, 5.0], "negative"),
        ([1.0, np.nan], "missing"),
        ([1.0, np.inf], "missing"),
    ],
)
def test_bad_cells_raise_precise_errors(values, msg):
    with pytest.raises(DPInputError, match=msg):
        percentiles.release_percentiles(values, epsilon=1.0, rng=0)


@pytest.mark.parametrize("eps", [0, -1, float("nan"), float("inf")])
def test_bad_epsilon(eps):
    x = np.linspace(20_000, 90_000, 50)
    for f in (
        percentiles.release_percentiles,
        percentiles.release_percentiles_smooth,
        percentiles.release_percentiles_em,
    ):
        with pytest.raises(DPInputError, match="epsilon"):
            f(x, epsilon=eps, rng=0)


def test_bad_percentiles_and_relation():
    x = np.linspace(20_000, 90_000, 50)
    with pytest.raises(DPInputError, match="percentiles"):
        percentiles.release_percentiles(x, epsilon=1, q=(0, 50))
    with pytest.raises(DPInputError, match="percentiles"):
        percentiles.release_percentiles(x, epsilon=1, q=(50, 101))
    with pytest.raises(DPInputError, match="relation"):
        percentiles.release_percentiles(x, epsilon=1, relation="bounded")
    with pytest.raises(DPInputError, match="one entry per bin"):
        percentiles.percentiles_from_histogram([1, 2, 3], [0, 1, 2])
    with pytest.raises(DPInputError, match="strictly increasing"):
        percentiles.release_percentiles(x, epsilon=1, edges=[10_000, 50_000, 40_000])


# ------------------------------------------------------------------ privacy of the histogram


def _hist_log_likelihood(out, counts, eps_bin):
    return np.log(noise.two_sided_geometric_pmf(out - counts, eps_bin)).sum(axis=-1)


@pytest.mark.parametrize("relation, l1, eps", [("replace", 2, 1.0), ("add_remove", 1, 1.0), ("replace", 2, 0.3)])
def test_histogram_sensitivity_and_actual_privacy_loss_by_brute_force(relation, l1, eps):
    """Enumerate every dataset of 3 people over 4 bins and every neighbour; the L1 sensitivity is
    2 (replace) or 1 (add/remove), and the largest log-likelihood ratio of any output equals epsilon."""
    edges = np.array([10_000, 20_000, 30_000, 40_000, 50_000.0])
    mids = (edges[:-1] + edges[1:]) / 2
    eps_bin = percentiles.epsilon_per_bin(eps, relation)
    assert eps_bin == pytest.approx(eps / l1)
    grid = np.array(list(itertools.product(range(-2, 6), repeat=4)))  # outputs around the counts (0..3)
    worst_l1, worst_loss = 0, 0.0
    cache = {}

    def loglik(counts):
        key = tuple(counts)
        if key not in cache:
            cache[key] = _hist_log_likelihood(grid, counts, eps_bin)
        return cache[key]

    for data in itertools.product(range(4), repeat=3):
        c = percentiles.histogram_counts(mids[list(data)], edges, min_size=1).counts
        if relation == "replace":
            neighbours = [data[:i] + (v,) + data[i + 1 :] for i in range(3) for v in range(4)]
        else:
            neighbours = [data[:i] + data[i + 1 :] for i in range(3)] + [data + (v,) for v in range(4)]
        for nb in neighbours:
            c2 = percentiles.histogram_counts(mids[list(nb)], edges, min_size=1).counts if nb else np.zeros(4, int)
            worst_l1 = max(worst_l1, int(np.abs(c - c2).sum()))
            loss = np.abs(loglik(c) - loglik(c2)).max()
            worst_loss = max(worst_loss, loss)
    assert worst_l1 == l1
    assert worst_loss == pytest.approx(eps, rel=1e-9)


def test_geometric_privacy_loss_of_one_count_change_is_eps_per_bin():
    k = np.arange(-60, 61)
    for eps in (0.05, 0.5, 1.5):
        ratio = np.log(noise.two_sided_geometric_pmf(k, eps) / noise.two_sided_geometric_pmf(k - 1, eps))
        assert np.max(np.abs(ratio)) == pytest.approx(eps, rel=1e-12)


def test_noisy_histogram_uses_the_stated_per_bin_epsilon(monkeypatch):
    seen = []
    real = noise.sample_two_sided_geometric

    def spy(epsilon, size, rng=None):
        seen.append(epsilon)
        return real(epsilon, size, rng)

    monkeypatch.setattr(noise, "sample_two_sided_geometric", spy)
    x = np.linspace(20_000, 90_000, 40)
    h = percentiles.noisy_histogram(x, epsilon=0.8, rng=1)
    h2 = percentiles.noisy_histogram(x, epsilon=0.8, rng=1, relation="add_remove")
    assert seen == [0.4, 0.8] and h.epsilon_per_bin == 0.4 and h2.epsilon_per_bin == 0.8
    assert h.counts.dtype == np.int64 and h.counts.shape == (21,)


def test_release_is_reproducible_and_percentiles_are_post_processing():
    x = percentile_experiments.synthesize_cell_earnings(30_000, 40_000, 55_000, 300, rng=3)
    a = percentiles.release_percentiles(x, epsilon=1.0, rng=11)
    b = percentiles.release_percentiles(x, epsilon=1.0, rng=11)
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.values, percentiles.percentiles_from_histogram(a.noisy_counts, a.edges, a.q))
    h = percentiles.noisy_histogram(x, epsilon=1.0, rng=11)
    np.testing.assert_array_equal(h.counts, a.noisy_counts)


# ------------------------------------------------------------------ the eq. (4.2) rule


def test_rule_without_noise_hand_cases():
    e = [0, 1, 2, 3, 4.0]
    c = [10, 10, 10, 10]
    np.testing.assert_allclose(percentiles.percentiles_from_histogram(c, e, (25, 50, 75, 100)), [1, 2, 3, 4])
    np.testing.assert_allclose(percentiles.percentiles_from_histogram(c, e, (10, 60)), [0.4, 2.4])
    # zero bins: the first crossing stops at the end of the last non-empty bin before the gap
    np.testing.assert_allclose(percentiles.percentiles_from_histogram([5, 0, 5, 0], e, (50, 75)), [1.0, 2.5])


def test_rule_without_noise_is_the_inverse_histogram_cdf():
    gen = np.random.default_rng(5)
    for _ in range(200):
        m = int(gen.integers(1, 30))
        edges = np.cumsum(gen.uniform(0.5, 5, m + 1))
        counts = gen.integers(1, 50, m)
        q = np.sort(gen.uniform(0.5, 100, 7))
        cum = np.concatenate([[0], np.cumsum(counts)])
        expect = np.interp(q / 100 * cum[-1], cum, edges)
        np.testing.assert_allclose(percentiles.percentiles_from_histogram(counts, edges, q), expect, rtol=1e-12)


def test_footnote17_literal_formula_is_a_typo():
    """Footnote 17 as printed uses Y/100 * sum_{i<=J}; with the total it is the inverse CDF."""
    e = np.array([0, 1, 2, 3, 4.0])
    c = np.array([10, 10, 10, 10])
    cum = np.cumsum(c)
    j = 0  # 25th percentile: J = first bin, cum_1 = 10 >= 0.25 * 40
    literal = e[j] + (e[j + 1] - e[j]) * (0.25 * cum[j] - 0) / c[j]
    assert literal == pytest.approx(0.25)  # a quarter of the way into bin 1: wrong
    assert percentiles.percentiles_from_histogram(c, e, [25])[0] == pytest.approx(1.0)  # the true 25th percentile


def test_rule_is_ordered_and_in_range_for_every_noise_draw():
    """Property test over many seeds, small cells (many negative counts), 41 percentile levels."""
    q = np.linspace(1, 100, 41)
    for relation, edges in [("replace", percentiles.PSEO_BIN_EDGES), ("add_remove", percentiles.even_bin_edges(30))]:
        for seed in range(300):
            gen = np.random.default_rng(seed)
            n = int(gen.integers(2, 40))
            x = np.exp(gen.normal(10.8, 0.8, n))
            rel = percentiles.release_percentiles(
                x, epsilon=float(gen.uniform(0.05, 3)), edges=edges, q=q, rng=gen, relation=relation
            )
            v = rel.values
            assert np.all(np.isfinite(v)) and np.all(np.diff(v) >= 0)
            assert v[0] >= edges[0] and v[-1] <= edges[-1]
    # vectorised: 20,000 noisy histograms at once, heavy noise
    counts = np.zeros((20_000, 21), dtype=np.int64)
    counts[:, 5] = 3
    noisy = counts + noise.sample_two_sided_geometric(0.1, counts.shape, rng=9)
    v = percentiles.percentiles_from_histogram(noisy, percentiles.PSEO_BIN_EDGES, q)
    assert np.all(np.diff(v, axis=1) >= 0) and np.all(np.isfinite(v))
    assert (noisy.sum(axis=1) <= 0).sum() > 1000  # the non-positive-total path was exercised


def test_non_positive_total_falls_back_without_crashing():
    e = np.array([0, 1, 2, 3, 4.0])
    # total <= 0: zero the negatives, read the rest
    np.testing.assert_allclose(percentiles.percentiles_from_histogram([-5, 2, -3, 0], e, (50, 100)), [1.5, 2.0])
    # nothing left: flat histogram
    np.testing.assert_allclose(percentiles.percentiles_from_histogram([-5, 0, -3, 0], e, (25, 50)), [1.0, 2.0])
    np.testing.assert_allclose(percentiles.percentiles_from_histogram([0, 0, 0, 0], e, (50,)), [2.0])
    # clip post-processing ignores negative bins
    np.testing.assert_allclose(
        percentiles.percentiles_from_histogram([4, -2, 4, 0], e, (50,), postprocess="clip"), [1.0]
    )
    raw = percentiles.percentiles_from_histogram([4, -2, 4, 0], e, (50,))
    assert raw[0] == pytest.approx(0.75)  # t = 3: cum = (4, 2, 6, 6) first reaches 3 in bin 1


def test_rule_2d_matches_rows():
    gen = np.random.default_rng(2)
    c = gen.integers(-3, 10, (50, 21))
    v2 = percentiles.percentiles_from_histogram(c, percentiles.PSEO_BIN_EDGES)
    for i in range(50):
        np.testing.assert_array_equal(v2[i], percentiles.percentiles_from_histogram(c[i], percentiles.PSEO_BIN_EDGES))


# ------------------------------------------------------------------ eq. (4.6) against brute force

L, U = 0.0, 10.0
GRID = np.array([0.0, 1.0, 2.5, 4.0, 6.0, 7.5, 10.0])


def _stat(y, rank):
    return np.sort(y)[rank - 1]


@functools.cache
def _ls_brute_cached(sorted_y: tuple, rank: int) -> float:
    """Local sensitivity by brute force: replace each entry by every value in [L, U] (a grid with
    L and U suffices: the order statistic is monotone in the replaced value). Vectorised."""
    y = np.array(sorted_y)
    n = y.size
    trials = np.repeat(y[None, :], n * GRID.size, axis=0)
    trials[np.arange(n * GRID.size), np.repeat(np.arange(n), GRID.size)] = np.tile(GRID, n)
    return float(np.max(np.abs(np.sort(trials, axis=1)[:, rank - 1] - y[rank - 1])))


def _ls_brute(y, rank):
    return _ls_brute_cached(tuple(np.sort(y)), rank)


def _a_brute_all(x, rank, k_max):
    """[max LS over every dataset at replacement distance <= k for k = 0..k_max] (values from the grid)."""
    n = x.size
    exact = np.zeros(k_max + 1)
    for kk in range(k_max + 1):
        best = 0.0
        for pos in itertools.combinations(range(n), kk):
            for vals in itertools.product(GRID, repeat=kk):
                y = x.copy()
                y[list(pos)] = vals
                best = max(best, _ls_brute(y, rank))
        exact[kk] = best
    return np.maximum.accumulate(exact)


@pytest.mark.parametrize("seed", range(4))
def test_eq_4_6_profile_matches_brute_force(seed):
    gen = np.random.default_rng(seed)
    n = int(gen.integers(3, 6))
    x = np.sort(gen.choice(GRID[1:-1], n))
    for q in (25, 50, 75, 90):
        rank = percentiles.percentile_rank(n, q)
        prof = percentiles.local_sensitivity_profile(x, rank, L, U, n)
        k_top = n if n <= 4 else 3
        brute = _a_brute_all(x, rank, k_top)
        np.testing.assert_allclose(prof[: brute.size], brute, atol=1e-12)
        assert prof[n] == U - L  # at distance n anything is possible
        for beta in (0.1, 0.7):
            s = percentiles.percentile_smooth_sensitivity(x, q, beta=beta, lower=L, upper=U).value
            ks = np.arange(brute.size)
            if k_top == n:
                assert s == pytest.approx(np.max(np.exp(-ks * beta) * brute))
            assert s >= np.max(np.exp(-ks * beta) * brute) - 1e-12


def test_paper_rank_non_integer_needs_the_released_order_statistic():
    """(N+1)X/100 is not an integer; eq. (4.6) is only right for the rank actually released."""
    x = np.array([1.0, 2.5, 6.0, 7.5])
    rank = percentiles.percentile_rank(4, 75)
    assert rank == 3
    paper_rank = round((4 + 1) * 75 / 100)  # 3.75 -> 4
    ls_true = _ls_brute(x, rank)
    assert percentiles.local_sensitivity_profile(x, rank, L, U, 0)[0] == ls_true
    assert percentiles.local_sensitivity_profile(x, paper_rank, L, U, 0)[0] != ls_true


def test_smooth_sensitivity_is_smooth_and_an_upper_bound_on_larger_data():
    gen = np.random.default_rng(3)
    lo, hi = 10_000.0, 614_597.0
    for _ in range(60):
        n = int(gen.integers(5, 80))
        x = np.exp(gen.normal(10.7, 0.9, n)).clip(lo, hi)
        q = float(gen.choice([10, 25, 50, 75, 90]))
        beta = float(gen.uniform(0.01, 0.5))
        s = percentiles.percentile_smooth_sensitivity(x, q, beta=beta, lower=lo, upper=hi)
        rank = percentiles.percentile_rank(n, q)
        xs = np.sort(x)
        assert s.value >= percentiles.local_sensitivity_profile(xs, rank, lo, hi, 0)[0]
        for _ in range(10):
            y = x.copy()
            y[gen.integers(n)] = gen.choice([lo, hi, float(gen.uniform(lo, hi))])
            s2 = percentiles.percentile_smooth_sensitivity(y, q, beta=beta, lower=lo, upper=hi).value
            assert s.value <= math.exp(beta) * s2 * (1 + 1e-12)
            # the neighbour's percentile moved by at most its local sensitivity <= S
            assert abs(np.sort(y)[rank - 1] - xs[rank - 1]) <= s.value + 1e-9


# ------------------------------------------------------------------ privacy loss of the smooth release


@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_smooth_release_calibration_and_certified_loss(calibration):
    x = percentile_experiments.synthesize_cell_earnings(25_000, 38_000, 52_000, 120, rng=4)
    r = percentiles.release_percentiles_smooth(x, epsilon=1.5, rng=1, calibration=calibration)
    np.testing.assert_allclose(r.epsilon_per_percentile, 0.5)
    assert r.epsilon_per_percentile.sum() == pytest.approx(1.5)
    np.testing.assert_allclose(r.beta, 0.5 / 4)
    if calibration == "paper":
        np.testing.assert_allclose(r.alpha, 0.5 / 16)  # the paper's eps_x / 16
    for a, b in zip(r.alpha, r.beta, strict=True):
        assert noise.smooth_noise_privacy_loss(4.0, a, b) <= 0.5 * (1 + 1e-6)


@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_smooth_release_actual_privacy_loss_on_neighbours(calibration):
    """Compute the log density ratio of the released median for neighbouring cells on a grid."""
    gen = np.random.default_rng(8)
    h = noise.GeneralizedCauchy(4.0)
    eps = 0.6
    cal = noise.smooth_noise_calibration(eps, 4.0, mode=calibration)
    lo, hi = 10_000.0, 614_597.0
    worst = 0.0
    for _ in range(40):
        n = int(gen.integers(3, 25))
        x = np.exp(gen.normal(10.7, 0.9, n)).clip(lo, hi)
        y = x.copy()
        y[gen.integers(n)] = gen.choice([lo, hi, float(gen.uniform(lo, hi))])
        out = []
        for d in (x, y):
            f, s = percentiles.smooth_sensitivity_many_betas(d, 50, [cal.beta], lower=lo, upper=hi)
            out.append((f, s[0] / cal.alpha))
        (f1, b1), (f2, b2) = out
        grid = np.concatenate(
            [np.linspace(min(f1, f2) - 50 * max(b1, b2), max(f1, f2) + 50 * max(b1, b2), 20001), [f1, f2]]
        )
        l1 = h.logpdf((grid - f1) / b1) - math.log(b1)
        l2 = h.logpdf((grid - f2) / b2) - math.log(b2)
        worst = max(worst, float(np.max(np.abs(l1 - l2))))
    assert worst <= eps * (1 + 1e-6)


def test_smooth_release_reconstructs_from_its_parts():
    x = percentile_experiments.synthesize_cell_earnings(25_000, 38_000, 52_000, 200, rng=4)
    r = percentiles.release_percentiles_smooth(x, epsilon=1.0, q=(25, 50, 75), rng=7, calibration="paper")
    z = noise.GeneralizedCauchy(4.0).rvs(3, rng=7)
    truth = percentiles.empirical_percentile(x, (25, 50, 75))
    np.testing.assert_allclose(r.values, truth + r.confidential_noise_scale * z)
    with pytest.raises(DPInputError, match="gamma"):
        percentiles.release_percentiles_smooth(x, epsilon=1.0, gamma=2.0)


# ------------------------------------------------------------------ exponential mechanism


def test_exponential_mechanism_privacy_loss_by_computation():
    gen = np.random.default_rng(12)
    lo, hi = 10_000.0, 100_000.0
    worst = 0.0
    for _ in range(60):
        n = int(gen.integers(2, 12))
        x = np.round(gen.uniform(lo, hi, n), -3)
        eps = float(gen.uniform(0.1, 2))
        q = float(gen.choice([25, 50, 75]))
        y = x.copy()
        y[gen.integers(n)] = gen.choice([lo, hi, float(np.round(gen.uniform(lo, hi), -3))])
        # evaluate at points strictly inside the elementary intervals of both datasets
        cuts = np.unique(np.concatenate([[lo, hi], np.clip(x, lo, hi), np.clip(y, lo, hi)]))
        pts = np.concatenate([cuts[:-1] + 0.3 * np.diff(cuts), cuts[:-1] + 0.7 * np.diff(cuts)])
        a = percentiles.exponential_mechanism_log_density(x, pts, epsilon=eps, q=q, lower=lo, upper=hi)
        b = percentiles.exponential_mechanism_log_density(y, pts, epsilon=eps, q=q, lower=lo, upper=hi)
        worst = max(worst, float(np.max(np.abs(a - b)) / eps))
    assert worst <= 1 + 1e-9
    assert worst > 0.5  # the check is not vacuous


def test_exponential_mechanism_density_integrates_to_one():
    x = np.array([12_000, 30_000, 31_000, 45_000, 90_000.0])
    grid = np.linspace(10_000, 100_000, 400_001)
    d = np.exp(percentiles.exponential_mechanism_log_density(x, grid, epsilon=1.0, q=50, lower=10_000, upper=100_000))
    assert np.trapezoid(d, grid) == pytest.approx(1.0, abs=2e-4)


# ------------------------------------------------------------------ accuracy measures


def test_relative_accuracy_eq_5_1_and_l1():
    assert percentiles.relative_accuracy(110, 100) == pytest.approx(0.9)
    assert percentiles.relative_accuracy(0, 100) == pytest.approx(0.0)
    assert percentiles.relative_accuracy(250, 100) == pytest.approx(-0.5)
    np.testing.assert_allclose(percentiles.relative_accuracy([90, 100], [100, 100]), [0.9, 1.0])
    assert percentiles.summed_l1_error([1, 2, 3], [2, 2, 5]) == pytest.approx(3)
    with pytest.raises(DPInputError):
        percentiles.relative_accuracy(1, 0)
    with pytest.raises(DPInputError):
        percentiles.relative_accuracy(np.nan, 1)


def test_synthetic_cell_matches_quartiles():
    x = percentile_experiments.synthesize_cell_earnings(31_000, 42_000, 56_000, 4_000, rng=1)
    got = percentiles.empirical_percentile(x, (25, 50, 75))
    np.testing.assert_allclose(got, [31_000, 42_000, 56_000], rtol=2e-3)
    with pytest.raises(DPInputError):
        percentile_experiments.synthesize_cell_earnings(50_000, 40_000, 60_000, 10)


def test_local_sensitivity_profile_validates_and_caps_k():
    for bad in (np.array([]), np.array([1.0, np.nan]), np.array([3.0, 2.0])):
        with pytest.raises(DPInputError):
            percentiles.local_sensitivity_profile(bad, 1, L, U, 3)
    with pytest.raises(DPInputError, match="lie in"):
        percentiles.local_sensitivity_profile(np.array([1.0, 20.0]), 1, L, U, 3)
    with pytest.raises(DPInputError, match="rank"):
        percentiles.local_sensitivity_profile(np.array([1.0, 2.0]), 3, L, U, 3)
    prof = percentiles.local_sensitivity_profile(
        np.array([1.0, 2.0, 4.0]), 2, L, U, 66_452
    )  # fast: only k <= n computed
    assert prof.size == 66_453 and np.all(prof[3:] == U - L) and np.all(np.diff(prof) >= 0)
    with pytest.raises(DPInputError, match="infinite"):
        percentiles.lognormal_bin_edges(20, log_mean=800.0)


def test_noisy_histogram_is_array_like():
    x = np.linspace(20_000, 90_000, 40)
    h = percentiles.noisy_histogram(x, percentiles.PSEO_BIN_EDGES, epsilon=1.0, rng=3)
    true = percentiles.histogram_counts(x).counts
    np.testing.assert_array_equal(np.asarray(h), h.counts)
    assert len(h) == 21 and h[0] == h.counts[0] and list(h) == h.counts.tolist()
    np.testing.assert_array_equal(h - true, h.counts - true)
    np.testing.assert_array_equal(true - h, true - h.counts)
