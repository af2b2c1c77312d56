"""dpcore.bounds: the AboveThreshold upper bound of Lan & Reiter Section 5.1.

Privacy is checked exactly: the output distribution of AboveThreshold is an integral over the
threshold noise, computed numerically for every pair of neighbouring tiny data sets; the
implementation is tied to that analysis by a chi-square test of its empirical output.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpcore.bounds import above_threshold_noise_scales, candidate_grid, dp_upper_bound
from dpcore.validation import DPInputError

GROWTH, MAXV = 2.0, 100.0  # candidates 1, 3, 7, 15, 31, 63, 127 (7 of them)
CANDS = candidate_grid(0.0, GROWTH, np.arange(1, 8))


def _lap_cdf(z, b):
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0) / b), 1 - 0.5 * np.exp(-np.maximum(z, 0) / b))


def output_pmf(data, b_threshold, b_query, cands=CANDS):
    """P(first crossing at candidate i), i = 0..m-1, and P(no crossing): integral over threshold noise."""
    data = np.sort(np.asarray(data, float))
    n = data.size
    q = np.searchsorted(data, cands, side="right")
    r = np.arange(-45 * b_threshold, 45 * b_threshold + 1e-9, 0.005)
    w = np.exp(-np.abs(r) / b_threshold) / (2 * b_threshold)
    w[0] *= 0.5
    w[-1] *= 0.5
    w *= 0.005
    below = _lap_cdf(n + r[:, None] - q[None, :], b_query)  # P(no crossing at candidate j | r)
    surv = np.cumprod(np.hstack((np.ones((r.size, 1)), below)), axis=1)
    stop = surv[:, :-1] * (1 - below)
    pmf = np.append(w @ stop, w @ surv[:, -1])
    return pmf / pmf.sum()


def max_privacy_loss(b_threshold, b_query, values=(0.5, 2.0, 5.0, 20.0, 50.0, 200.0), n=3, cands=CANDS):
    """Largest |log P(out | X) - log P(out | X')| over all neighbouring X, X' in values^n (replace one)."""
    pmfs = {
        d: np.log(output_pmf(d, b_threshold, b_query, cands=cands))
        for d in itertools.combinations_with_replacement(values, n)
    }
    worst = 0.0
    for data, lp in pmfs.items():
        for i in range(n):
            for v in values:
                nb = list(data)
                nb[i] = v
                worst = max(worst, float(np.max(np.abs(lp - pmfs[tuple(sorted(nb))]))))
    return worst


def test_noise_scales_follow_the_above_threshold_proof():
    assert above_threshold_noise_scales(0.075, 0.075) == pytest.approx((1 / 0.075, 2 / 0.075))
    assert above_threshold_noise_scales(0.5, 2.0) == pytest.approx((2.0, 1.0))


@pytest.mark.slow
@pytest.mark.parametrize("e1, e2", [(1.0, 1.0), (0.5, 1.5)])
def test_exact_privacy_loss_within_budget(e1, e2):
    b1, b2 = above_threshold_noise_scales(e1, e2)
    loss = max_privacy_loss(b1, b2)
    assert loss <= e1 + e2 + 1e-3
    assert loss > 0.3 * (e1 + e2)  # the oracle sees real differences


def test_privacy_oracle_catches_too_little_noise():
    """With 4x less threshold and query noise the same oracle reports a loss above the budget."""
    b1, b2 = above_threshold_noise_scales(1.0, 1.0)
    assert max_privacy_loss(b1 / 4, b2 / 4) > 2.0 + 0.1


#: a finer oracle: 29 candidate thresholds 0.25, 0.56, ..., 645 (growth 1.25). With the 7
#: candidates above, halving both noise scales stays below the budget (only a constants test caught it);
#: with 29 the exact loss of the halved mechanism is 2.92 > 2.
FINE_CANDS = candidate_grid(0.0, 1.25, np.arange(1, 30))


def test_fine_oracle_certifies_the_budget_and_catches_halved_noise():
    b1, b2 = above_threshold_noise_scales(1.0, 1.0)
    assert FINE_CANDS.size == 29
    assert max_privacy_loss(b1, b2, cands=FINE_CANDS) <= 2.0 + 1e-3
    assert max_privacy_loss(b1 / 2, b2 / 2, cands=FINE_CANDS) > 2.0 + 0.5


def test_implementation_output_matches_analysed_distribution():
    """Chi-square: dp_upper_bound's estimates follow output_pmf (so the privacy proof applies to the code)."""
    data = [0.5, 2.0, 5.0, 40.0]
    e1, e2 = 1.0, 1.0
    pmf = output_pmf(data, *above_threshold_noise_scales(e1, e2))
    rng = np.random.default_rng(2024)
    N = 20000
    est = np.array(
        [
            dp_upper_bound(
                data, epsilon_n=e1, epsilon_count=e2, growth=GROWTH, max_value=MAXV, inflation=1.0, rng=rng
            ).estimate
            for _ in range(N)
        ]
    )
    # the code's grid stops at the first candidate >= max_value (127 > 100) and reports the cap otherwise
    idx = np.searchsorted(CANDS, est)
    idx[est == MAXV] = len(CANDS)
    obs = np.bincount(idx, minlength=len(CANDS) + 1)
    exp = pmf * N
    keep = exp > 5
    chi2 = ((obs[keep] - exp[keep]) ** 2 / exp[keep]).sum() + 0.0
    # lump the rare cells together
    rare_o, rare_e = obs[~keep].sum(), exp[~keep].sum()
    if rare_e > 0:
        chi2 += (rare_o - rare_e) ** 2 / max(rare_e, 1e-9)
    dof = int(keep.sum()) - (0 if rare_e > 0 else 1)
    assert stats.chi2.sf(chi2, dof) > 1e-3


def test_budget_and_post_processing():
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1e5, 5000)
    r = dp_upper_bound(x, rng=3)
    assert r.epsilon == pytest.approx(0.15) and (r.epsilon_n, r.epsilon_count) == (0.075, 0.075)
    assert r.upper == pytest.approx(2.5 * r.estimate)
    assert r.upper > r.lower == 0.0 and not r.capped
    # reproducible from the seed
    assert dp_upper_bound(x, rng=3) == r


def test_utility_light_tail_covers_the_maximum():
    """Uniform incomes: U = 2.5 * estimate exceeds the maximum in (almost) every run."""
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1e5, 5000)
    ups = np.array([dp_upper_bound(x, rng=s).upper for s in range(200)])
    assert np.mean(ups >= x.max()) >= 0.97
    assert np.median(ups) < 3 * x.max()


def test_utility_heavy_tail_is_reported_honestly(cps_path):
    """CPS incomes: AboveThreshold stops around the n - O(1/eps_2)-th order statistic, so 2.5 x it can
    fall below the maximum (the paper's 'always exceeds' is data-specific). U stays within a
    factor of the maximum and above the 99th percentile (only a few dozen records get clipped)."""
    pd = pytest.importorskip("pandas")
    x = pd.read_csv(cps_path, usecols=["INCTOT"])["INCTOT"].dropna().to_numpy(float)
    x = x[x >= 0]
    ups = np.array([dp_upper_bound(x, rng=s).upper for s in range(100)])
    assert np.all(ups > np.quantile(x, 0.99))
    assert np.all(ups < 10 * x.max())
    clipped = np.array([(x > u).sum() for u in ups])
    assert np.median(clipped) < 60


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(epsilon_n=0.0), "epsilon_n must be > 0"),
        (dict(epsilon_count=-1.0), "epsilon_count must be > 0"),
        (dict(inflation=0.5), "inflation"),
        (dict(growth=1.0), "growth"),
        (dict(lower=-1.0), "lower"),
    ],
)
def test_bad_parameters(kwargs, msg):
    with pytest.raises(DPInputError, match=msg):
        dp_upper_bound([1.0, 2.0], rng=1, **kwargs)


def test_bad_data():
    with pytest.raises(DPInputError, match="at least 1"):
        dp_upper_bound([], rng=1)
    with pytest.raises(DPInputError, match="missing or infinite"):
        dp_upper_bound([1.0, math.nan], rng=1)


def test_cap_is_reported():
    r = dp_upper_bound([1e9] * 10, max_value=10.0, rng=1, epsilon_n=5, epsilon_count=5)
    assert r.capped and r.estimate == 10.0 and r.upper == 25.0


def test_candidate_grid_validates():
    np.testing.assert_allclose(candidate_grid(0.0, 2.0, [1, 2, 3]), [1.0, 3.0, 7.0])
    for kwargs, msg in (
        (dict(lower=math.nan, growth=2.0, i=1), "lower"),
        (dict(lower=0.0, growth=1.0, i=1), "growth"),
        (dict(lower=0.0, growth=2.0, i=[math.nan]), "missing or infinite"),
        (dict(lower=0.0, growth=2.0, i=[1e6]), "overflows"),
    ):
        with pytest.raises(DPInputError, match=msg):
            candidate_grid(**kwargs)
