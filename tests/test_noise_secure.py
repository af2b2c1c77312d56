"""dpcore.noise.secure: OpenDP noise for real releases and the certified generalized-Cauchy sampler.

The OpenDP draws cannot be seeded; their tests use sample sizes where a wrong law fails by a wide
margin and a correct one fails with probability about 1e-6 (p-value threshold).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpcore import noise
from dpcore.noise import guarantees as noise_guarantees
from dpcore.noise import secure as secure_noise
from dpcore.validation import DPInputError

P_MIN = 1e-6  # p-value threshold of the goodness-of-fit tests


def _chi_square_p(draws: np.ndarray, pmf_at) -> float:
    """Chi-square goodness of fit of integer draws to a PMF, cells pooled so every expected count is >= 5."""
    ks = np.arange(draws.min(), draws.max() + 1)
    observed = np.array([(draws == k).sum() for k in ks], dtype=float)
    expected = pmf_at(ks) * draws.size
    below = np.sum(draws < ks[0])
    assert below == 0
    tail_mass = 1.0 - expected.sum() / draws.size
    obs, exp = [], []
    acc_o = acc_e = 0.0
    for o, e in zip(observed, expected, strict=True):
        acc_o += o
        acc_e += e
        if acc_e >= 5:
            obs.append(acc_o)
            exp.append(acc_e)
            acc_o = acc_e = 0.0
    obs[-1] += acc_o
    exp[-1] += acc_e + tail_mass * draws.size
    return float(stats.chisquare(obs, np.array(exp) * sum(obs) / sum(exp)).pvalue)


# ---------------------------------------------------------------------------------------------
# OpenDP measurements: the law of the real release equals the exploration sampler's
# ---------------------------------------------------------------------------------------------


def test_integer_counts_opendp_law_matches_two_sided_geometric_and_numpy_sampler():
    scale = 1.5
    real = secure_noise.release_integer_counts(np.zeros(20_000, dtype=int), scale=scale)
    assert real.values.dtype == np.int64 and not real.simulated
    assert "make_laplace" in real.measurement and "i64" in real.measurement
    assert real.epsilon == pytest.approx(1 / scale) and real.delta == 0.0
    sim = secure_noise.release_integer_counts(np.zeros(20_000, dtype=int), scale=scale, rng=7)
    assert sim.simulated and "simulation" in sim.measurement
    pmf = lambda k: noise.two_sided_geometric_pmf(k, 1.0 / scale)
    assert _chi_square_p(np.asarray(real.values), pmf) > P_MIN
    assert _chi_square_p(np.asarray(sim.values), pmf) > 1e-3
    # a wrong scale is rejected by the same test (the test has power)
    wrong = lambda k: noise.two_sided_geometric_pmf(k, 1.0 / (1.2 * scale))
    assert _chi_square_p(np.asarray(real.values), wrong) < P_MIN


def test_integer_counts_are_added_to_the_input_and_map_is_exact():
    d = secure_noise.release_integer_counts([10**6, 0, 5], scale=0.01, sensitivity=2)
    assert abs(int(d.values[0]) - 10**6) < 50 and d.epsilon == pytest.approx(200.0)
    assert np.asarray(d).shape == (3,) and len(d) == 3 and d[2] == d.values[2]
    with pytest.raises(DPInputError):
        secure_noise.release_integer_counts([1.5], scale=1.0)
    with pytest.raises(DPInputError):
        secure_noise.release_integer_counts([1], scale=0.0)


def test_real_values_opendp_laplace_law_and_privacy_map():
    scale = 2.0
    real = secure_noise.release_real_values(np.zeros(20_000), scale=scale, sensitivity=1.0)
    assert "make_laplace" in real.measurement and "f64" in real.measurement
    assert real.epsilon <= 0.5 * (1 + 1e-5)
    sim = secure_noise.release_real_values(np.zeros(20_000), scale=scale, rng=3)
    assert stats.kstest(real.values, stats.laplace(scale=scale).cdf).pvalue > P_MIN
    assert stats.kstest(sim.values, stats.laplace(scale=scale).cdf).pvalue > 1e-3
    assert stats.ks_2samp(real.values, sim.values).pvalue > P_MIN
    assert stats.kstest(real.values, stats.laplace(scale=1.15 * scale).cdf).pvalue < P_MIN


@pytest.mark.parametrize("epsilon, sensitivity", [(1.0, 1.0), (0.3, 100.0), (2.0, 2.0), (0.1, 1e-3)])
def test_laplace_scale_for_meets_epsilon_exactly_per_opendp_map(epsilon, sensitivity):
    scale = noise_guarantees.laplace_scale_for(epsilon, sensitivity)
    assert scale >= sensitivity / epsilon
    assert scale <= sensitivity / epsilon * (1 + 1e-4)
    d = secure_noise.release_real_values([0.0], scale=scale, sensitivity=sensitivity)
    assert d.epsilon <= epsilon


def test_gaussian_opendp_law_and_zcdp_map():
    sigma = 3.0
    real = secure_noise.release_gaussian_values(np.zeros(20_000), sigma=sigma, sensitivity=1.0, delta=1e-6)
    assert "make_gaussian" in real.measurement
    assert real.rho == pytest.approx(1.0 / (2 * sigma**2), rel=1e-3)
    assert real.delta == 1e-6 and 0 < real.epsilon < 3
    assert stats.kstest(real.values, stats.norm(scale=sigma).cdf).pvalue > P_MIN
    sim = secure_noise.release_gaussian_values(np.zeros(20_000), sigma=sigma, rng=1)
    assert stats.ks_2samp(real.values, sim.values).pvalue > P_MIN


# ---------------------------------------------------------------------------------------------
# Certified generalized-Cauchy sampler: exact enumeration on small grids
# ---------------------------------------------------------------------------------------------

GRID = 1.0 / 32  # exact in binary: the window's grid points are exact
WINDOW = (0.0, 1.0)


@pytest.mark.parametrize("gamma", [2.0, 4.0])
def test_ideal_pmf_matches_independent_scipy_cdf(gamma):
    value, scale = 0.37, 0.11
    ks, ideal, sampled = secure_noise._gc_exact_pmfs(value, scale, gamma, GRID, WINDOW)
    dist = noise.GeneralizedCauchy(gamma)
    b = (np.array(ks[:-1]) + 0.5) * GRID
    cdf = dist.cdf((b - value) / scale)
    ref = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
    assert np.allclose([float(p) for p in ideal], ref, atol=1e-13)
    assert float(sum(ideal)) == pytest.approx(1.0, abs=1e-40)
    assert sum(sampled) == 1
    tau1 = 2 * (2.0**-128 + 2.0**-150)
    assert max(abs(float(q) - float(p)) for p, q in zip(ideal, sampled, strict=True)) <= tau1


def test_cdf_evaluation_error_is_below_the_stated_eta():
    lo = secure_noise._GCExactCDF(0.3, 0.05, 2.5, GRID, prec=192)
    hi = secure_noise._GCExactCDF(0.3, 0.05, 2.5, GRID, prec=384)
    eta = 2.0**-noise_guarantees.GC_CDF_ERROR_BITS
    for k in list(range(-5, 40)) + [10**6, -(10**6)]:
        assert abs(float(lo.cdf_at(k) - hi.ctx.mpf(hi.cdf_at(k)))) <= eta


def _neighbour_gini_scales(eps: float, gamma: float):
    """(centre, noise scale) of the Gini release for a data set and a neighbour (one record replaced)."""
    from dpcore import planner

    x = np.array([0.0, 10_000.0, 20_000.0, 35_000.0, 60_000.0, 90_000.0])
    x2 = x.copy()
    x2[-1] = 0.0
    out = []
    for data in (x, x2):
        st = planner.make_statistic("gini", data, upper=100_000.0, gamma=gamma)
        mech = st.mechanism_at(eps)
        loss, excess = mech.certified
        out.append(
            (st._clipped, mech.confidential_noise_scale(st.confidential_smooth_sensitivity(eps, mech.smoothness)))
        )
    return out, loss, excess


def _max_log_ratio(p, q) -> float:
    return max(abs(math.log(float(a) / float(b))) for a, b in zip(p, q, strict=True))


@pytest.mark.parametrize("gamma", [2.0, 4.0])
def test_gini_neighbours_sampled_pmf_within_certified_epsilon(gamma):
    eps = 1.0
    ((c1, s1), (c2, s2)), loss, excess = _neighbour_gini_scales(eps, gamma)
    assert loss <= eps * (1 + 1e-9)
    assert abs(c1 - c2) > 0.05 and s1 != s2  # a real neighbour pair: the centre moves
    _, ideal1, samp1 = secure_noise._gc_exact_pmfs(c1, s1, gamma, GRID, WINDOW)
    _, ideal2, samp2 = secure_noise._gc_exact_pmfs(c2, s2, gamma, GRID, WINDOW)
    # the ideal snapped law is post-processing of the continuous mechanism: within the certificate
    assert _max_log_ratio(ideal1, ideal2) <= loss
    # what is actually sampled (exact counts of 128-bit uniforms): pure DP with the stated excess
    ex, bits = noise_guarantees.gc_pure_sampler_excess(gamma, GRID, WINDOW, min(s1, s2), max(s1, s2), bits=128)
    assert _max_log_ratio(samp1, samp2) <= loss + ex


def test_enumeration_detects_a_scale_that_breaks_smoothness():
    # the oracle has teeth: a neighbour whose scale grew by e^(3 beta) (not beta-smooth) exceeds epsilon
    eps, gamma = 1.0, 2.0
    ((c1, s1), (c2, s2)), loss, _ = _neighbour_gini_scales(eps, gamma)
    beta = eps / gamma
    _, ideal1, _ = secure_noise._gc_exact_pmfs(c1, s1, gamma, GRID, WINDOW)
    _, bad, _ = secure_noise._gc_exact_pmfs(c1, s1 * math.exp(3 * beta), gamma, GRID, WINDOW)
    assert _max_log_ratio(ideal1, bad) > eps


def test_few_bits_sampler_breaks_pure_dp_but_stays_within_stated_delta():
    # with a 12-bit uniform the sampled law has cells of probability 0 where the ideal one has mass:
    # no pure epsilon; the hockey-stick divergence stays below delta = (1 + e^eps) tau(bits)
    gamma, bits = 2.0, 12
    ((c1, s1), (c2, s2)), loss, _ = _neighbour_gini_scales(1.0, gamma)
    s_small = 0.003  # concentrated noise: far cells have mass below 2^-12
    _, _, q1 = secure_noise._gc_exact_pmfs(c1, s_small, gamma, GRID, WINDOW, bits=bits)
    _, ideal2, q2 = secure_noise._gc_exact_pmfs(c2, s_small, gamma, GRID, WINDOW, bits=bits)
    k_lo, k_hi = noise_guarantees.cell_range(GRID, WINDOW)
    tau = noise_guarantees.generalized_cauchy_sampler_tv(k_hi - k_lo, bits)
    # the ideal ratio for equal scales and a shift |c1 - c2| <= s_small * alpha-free bound: compute it
    _, ideal1, _ = secure_noise._gc_exact_pmfs(c1, s_small, gamma, GRID, WINDOW)
    eps_ideal = _max_log_ratio(ideal1, ideal2)
    delta = (1 + math.exp(eps_ideal)) * tau
    hockey = sum(max(float(a) - math.exp(eps_ideal) * float(b), 0.0) for a, b in zip(q1, q2, strict=True))
    assert any(float(b) == 0 and float(a) > 0 for a, b in zip(q1, q2, strict=True))  # pure DP broken at 12 bits
    assert 0 < hockey <= delta
    # and the sampled law is within tau of the ideal one in total variation
    tv = 0.5 * sum(abs(float(a) - float(b)) for a, b in zip(q1, ideal1, strict=True))
    assert tv <= tau


def test_real_gc_draws_follow_the_enumerated_pmf():
    value, scale, gamma = 0.4, 0.15, 2.0
    ks, ideal, _ = secure_noise._gc_exact_pmfs(value, scale, gamma, GRID, WINDOW)
    draws = np.array(
        [
            secure_noise.release_generalized_cauchy(value, scale=scale, gamma=gamma, grid=GRID, window=WINDOW).values[0]
            for _ in range(400)
        ]
    )
    idx = np.round(draws / GRID).astype(int)
    pmf = dict(zip(ks, [float(p) for p in ideal], strict=True))
    assert _chi_square_p(idx, lambda k: np.array([pmf.get(int(v), 0.0) for v in k])) > P_MIN
    sim = np.array(
        [
            secure_noise.release_generalized_cauchy(
                value, scale=scale, gamma=gamma, grid=GRID, window=WINDOW, rng=np.random.default_rng(i)
            ).values[0]
            for i in range(3000)
        ]
    )
    assert _chi_square_p(np.round(sim / GRID).astype(int), lambda k: np.array([pmf.get(int(v), 0.0) for v in k])) > 1e-3


@pytest.mark.parametrize("byte", [b"\x00", b"\xff"])
def test_gc_sampler_with_extreme_words_gives_the_window_ends(monkeypatch, byte):
    monkeypatch.setattr(secure_noise.os, "urandom", lambda n: byte * n)
    d = secure_noise.release_generalized_cauchy(
        0.5, scale=0.01, gamma=2.0, grid=1e-6, window=(0.0, 1.0), epsilon=1.0, min_scale=1e-5, max_scale=10.0
    )
    assert math.isfinite(d.values[0]) and d.values[0] == (0.0 if byte == b"\x00" else 1.0)
    assert d.delta == 0.0 and d.epsilon == pytest.approx(1.0)


def test_gc_pure_mode_excess_is_negligible_and_bits_grow_with_gamma():
    ex2, bits2 = noise_guarantees.gc_pure_sampler_excess(2.0, 1e-6, (0.0, 1.0), 1e-5, 100.0)
    ex10, bits10 = noise_guarantees.gc_pure_sampler_excess(10.0, 1e-6, (0.0, 1.0), 1e-5, 100.0)
    assert ex2 < 1e-25 and ex10 < 1e-25 and bits10 > bits2 >= 128
    with pytest.raises(DPInputError):
        secure_noise.release_generalized_cauchy(0.5, scale=1.0, gamma=2.0, grid=0.1, min_scale=0.1, max_scale=1.0)


def test_gc_delta_mode_states_tau():
    d = secure_noise.release_generalized_cauchy(0.2, scale=0.3, gamma=4.0, grid=GRID, window=WINDOW, epsilon=1.0)
    tau = noise_guarantees.generalized_cauchy_sampler_tv(32, 128)
    assert d.delta == pytest.approx((1 + math.e) * tau) and d.values[0] * 32 == round(d.values[0] * 32)
    assert Fraction(d.values[0]) * 32 == int(Fraction(d.values[0]) * 32)
