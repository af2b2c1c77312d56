"""The light stratified synthesizer (stretch): privacy of the marginals, sampling, strata sizes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from dpcore.validation import DPInputError
from dpcore.views.stratified import (
    stratified_synthesize,
    synthesize_chain,
    synthesizer_sweep,
    synthetic_parity,
)
from dpcore.views.stratified.synthesizer import _noisy_chain


def _exact_chain(c, s):
    return [np.bincount(c[:, j] * s[j + 1] + c[:, j + 1], minlength=s[j] * s[j + 1]) for j in range(len(s) - 1)]


def test_marginals_l1_sensitivity_brute_force():
    """Replacing one record by any other record changes the m chain marginals by at most 2m in L1
    (the calibration Lap(2m/eps) assumes this), and some replacement attains it."""
    s = np.array([2, 3, 2])
    c = np.array([[0, 1, 1], [1, 2, 0], [0, 0, 0], [1, 1, 1]])
    base = _exact_chain(c, s)
    worst = 0
    for i, new in itertools.product(range(len(c)), itertools.product(*[range(v) for v in s])):
        d = c.copy()
        d[i] = new
        l1 = sum(int(np.abs(a - b).sum()) for a, b in zip(base, _exact_chain(d, s), strict=True))
        assert l1 <= 2 * (len(s) - 1)
        worst = max(worst, l1)
    assert worst == 2 * (len(s) - 1)
    syn = synthesize_chain(c, s, epsilon=0.5, n_out=10, rng=1)
    assert syn.noise_scale == pytest.approx(2 * 2 / 0.5)


def test_noisy_marginals_are_laplace_with_stated_scale():
    s = np.array([3, 4])
    c = np.zeros((50, 2), dtype=int)
    rng = np.random.default_rng(2)
    draws = []
    for _ in range(300):
        t = np.bincount(c[:, 0] * 4 + c[:, 1], minlength=12).reshape(3, 4).astype(float)
        noisy = _noisy_chain(c, s, 2.0, rng)[0]
        # cells whose true count is large are never clipped: noise = noisy - true
        draws.append(noisy[0, 0] - t[0, 0])
    assert stats.kstest(np.array(draws) / 2.0, stats.laplace.cdf).pvalue > 1e-3


def test_sampling_reproduces_chain_marginals_when_noise_is_negligible():
    rng = np.random.default_rng(3)
    n = 20_000
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(0, 2, n)) % 4
    c = np.column_stack([a, b])
    syn = synthesize_chain(c, [3, 4], epsilon=1e6, n_out=n, rng=4)
    out = np.column_stack([syn.strata, syn.codes[:, 0]])
    true = np.bincount(a * 4 + b, minlength=12)
    got = np.bincount(out[:, 0] * 4 + out[:, 1], minlength=12)
    mask = true > 0
    assert got[~mask].sum() == 0
    assert stats.chisquare(got[mask], true[mask] / true.sum() * got.sum()).pvalue > 1e-3


def test_stratified_sizes_follow_public_weights_and_use_parallel_budget():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(600, 3))
    strata = np.repeat([0, 1, 2], [100, 200, 300])
    w = [0.5, 0.25, 0.25]  # public, not the private shares
    syn = stratified_synthesize(X, [3, 3, 3], strata, 4, epsilon=1.0, weights=w + [0.0], n_out=1000, rng=1)
    assert np.bincount(syn.strata, minlength=4).tolist() == [500, 250, 250, 0]
    assert syn.noise_scale == pytest.approx(2 * 2 / 1.0)  # full epsilon in every stratum
    syn2 = stratified_synthesize(X, [3, 3, 3], strata, 4, epsilon=1.0, weights=[0.4, 0.2, 0.2, 0.2], n_out=100, rng=1)
    assert syn2.notes and "no records" in syn2.notes[0]
    with pytest.raises(DPInputError, match="sum to 1"):
        stratified_synthesize(X, [3, 3, 3], strata, 3, epsilon=1.0, weights=[0.5, 0.5, 0.5], n_out=10)


def test_synthetic_parity_zero_for_identical_data_and_bad_codes():
    rng = np.random.default_rng(6)
    X = rng.integers(0, 4, size=(300, 2))
    st = rng.integers(0, 3, 300)
    res = synthetic_parity(X, st, X, st, 3)
    assert res["parity (mean over variables)"] == 0.0 and res["max disparity"] == 0.0
    with pytest.raises(DPInputError):
        synthesize_chain(np.array([[0, 5], [1, 1]]), [2, 3], epsilon=1.0, n_out=5)
    with pytest.raises(DPInputError):
        synthesize_chain(np.array([[0.5, 1.0], [1.0, 1.0]]), [2, 3], epsilon=1.0, n_out=5)


def test_stratified_beats_vanilla_on_parity_for_group_specific_data():
    """Groups with very different distributions: the vanilla chain links the stratum only to the
    next column, so later columns lose their group differences; stratifying keeps them."""
    rng = np.random.default_rng(7)
    k, n = 4, 8000
    st = rng.integers(0, k, n)
    x1 = rng.integers(0, 3, n)
    x2 = (st + rng.integers(0, 2, n)) % 5  # depends on the group, not on x1
    X = np.column_stack([x1, x2])
    w = np.bincount(st, minlength=k) / n
    v = synthesize_chain(np.column_stack([st, X]), [k, 3, 5], epsilon=2.0, n_out=n, rng=1)
    s = stratified_synthesize(X, [3, 5], st, k, epsilon=2.0, weights=w, n_out=n, rng=1)
    pv = synthetic_parity(X, st, v.codes, v.strata, k)["parity (mean over variables)"]
    ps = synthetic_parity(X, st, s.codes, s.strata, k)["parity (mean over variables)"]
    assert ps < pv / 3


def test_synthesizer_sweep_rows_and_progress():
    rng = np.random.default_rng(8)
    X = rng.integers(0, 3, size=(500, 2))
    st = rng.integers(0, 3, 500)
    calls = []
    rows = synthesizer_sweep(
        X,
        [3, 3],
        st,
        3,
        public_w=[1 / 3] * 3,
        epsilons=[0.5, 5.0],
        runs=2,
        rng=1,
        progress=lambda f, t: calls.append(f),
    )
    assert len(rows) == 2 * 2 * 2 and calls == [0.5, 1.0]
    assert all(r["parity error"] >= 0 for r in rows)
