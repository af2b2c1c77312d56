"""dpcore.gini: definition, paper's toy example, real data, releases, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore import gini as G
from dpcore.gini import (
    clip_incomes,
    error_summary,
    fast_smooth_sensitivity_iq,
    gini,
    gini_extremes_curve,
    gini_global_sensitivity,
    max_gini_after_k,
    mean_extremes_after_k,
    min_gini_after_k,
    minimal_iq,
    release_gini,
    release_gini_laplace,
    simulate_gini_releases,
    simulate_releases_from_scale,
    smooth_sensitivity,
)
from dpcore.noise import GeneralizedCauchy, smooth_noise_calibration, smooth_noise_privacy_loss
from dpcore.noise.guarantees import publish_gini
from dpcore.validation import DPInputError

TOY = np.array([3.0, 6.0, 7.0, 7.5])


# --------------------------------------------------------------------------- definition


def test_definitions_eq1_eq2():
    # eq. (1): sum (2i-n-1) x_i / (n sum x) = 14.5 / (4 * 23.5)
    assert gini(TOY) == pytest.approx(14.5 / 94.0, rel=1e-14)
    assert gini(TOY, definition="eq2") == pytest.approx(14.5 / 94.0 * 4 / 3, rel=1e-14)
    assert round(gini(TOY, definition="eq2"), 3) == 0.206  # the paper's g(X) ~ 0.206
    # eq. (1) equals the pairwise definition sum|xi-xj| / (2 n^2 mean)
    rng = np.random.default_rng(0)
    y = rng.lognormal(size=57)
    pair = np.abs(y[:, None] - y[None, :]).sum() / (2 * y.size**2 * y.mean())
    assert gini(y) == pytest.approx(pair, rel=1e-12)
    assert G.GINI_DEFINITION == "eq1"


def test_range_of_eq1():
    n = 10
    assert gini([0] * (n - 1) + [5]) == pytest.approx((n - 1) / n)
    assert gini([0] * (n - 1) + [5], definition="eq2") == pytest.approx(1.0)
    assert gini([3.0] * n) == 0.0


# --------------------------------------------------------------------------- toy example (Section 3)


@pytest.mark.parametrize("k, gmin, gmax", [(1, 0.054, 0.515), (2, 0.017, 0.809)])
def test_toy_example_numbers_under_eq2(k, gmin, gmax):
    f = 4 / 3  # eq. (2) = eq. (1) * n/(n-1)
    # the paper truncates to 3 decimals (0.0545 is printed as 0.054)
    assert min_gini_after_k(TOY, k) * f == pytest.approx(gmin, abs=1e-3)
    assert max_gini_after_k(TOY, k, 0.0, 10.0) * f == pytest.approx(gmax, abs=1e-3)


def test_toy_example_attaining_data_sets():
    # the paper's maximisers (3, 6, 0, 7.5) and (3, 0, 0, 7.5), minimisers (7,6,7,7.5), (7,7.5,7.5,7.5)
    f = 4 / 3
    assert gini([3, 6, 0, 7.5]) * f == pytest.approx(max_gini_after_k(TOY, 1, 0, 10) * f)
    assert gini([3, 0, 0, 7.5]) == pytest.approx(max_gini_after_k(TOY, 2, 0, 10))
    assert gini([7, 6, 7, 7.5]) == pytest.approx(min_gini_after_k(TOY, 1))
    assert gini([7, 7.5, 7.5, 7.5]) == pytest.approx(min_gini_after_k(TOY, 2))
    # k = 3: everything but one value goes to 0 -> eq.(2) Gini 1
    assert max_gini_after_k(TOY, 3, 0, 10) * f == pytest.approx(1.0)


def test_extremes_curve_is_monotone_and_consistent():
    rng = np.random.default_rng(1)
    x = np.sort(np.round(rng.lognormal(3, 1, 80), 1))
    U = 2 * x.max()
    cur = gini_extremes_curve(x, 15, 0.0, U)
    assert np.all(np.diff(cur["gmin"]) <= 1e-15)
    assert np.all(np.diff(cur["gmax"]) >= -1e-15)
    assert cur["gmin"][0] == pytest.approx(gini(x)) and cur["gmax"][0] == pytest.approx(gini(x))
    for k in (1, 7, 15):
        assert cur["gmin"][k] == pytest.approx(min_gini_after_k(x, k))
        assert cur["gmax"][k] == pytest.approx(max_gini_after_k(x, k, 0.0, U))
    smin, smax = mean_extremes_after_k(x, [0, 3], 0.0, U)
    assert smin[1] == pytest.approx(x.sum() - x[-3:].sum())
    assert smax[1] == pytest.approx(x.sum() - x[:3].sum() + 3 * U)
    for bad_k in (-1, 2.5, np.nan, -4.4e16, [0, -3], "two"):  # was IndexError / silent truncation
        with pytest.raises(DPInputError, match="k must be"):
            mean_extremes_after_k(x, bad_k, 0.0, U)


# --------------------------------------------------------------------------- real data


def test_cps_gini_matches_published_figure(cps_path):
    pd = pytest.importorskip("pandas")
    inc = pd.read_csv(cps_path, usecols=["INCTOT"])["INCTOT"].dropna().to_numpy(float)
    inc = inc[inc >= 0]
    assert inc.size == 8173
    assert round(gini(inc), 4) == 0.5361
    # the release machinery runs on it, with U = 2.5 max (a public bound would be used in practice)
    ss = smooth_sensitivity(inc, lower=0.0, upper=2.5 * inc.max(), beta=0.125)
    assert 0 < ss.value < 0.5
    assert ss.value >= ss.A[0] > 0


# --------------------------------------------------------------------------- smooth sensitivity


def test_smooth_sensitivity_result_fields():
    rng = np.random.default_rng(2)
    x = rng.lognormal(10, 1, 5000)
    ss = smooth_sensitivity(x, lower=0, upper=3 * x.max(), beta=0.1, k_max=20)
    assert ss.A.size >= 21
    np.testing.assert_allclose(ss.decay, np.exp(-0.1 * np.arange(ss.A.size)) * ss.A)
    assert ss.value == pytest.approx(ss.decay.max())
    assert ss.decay[ss.k_star] == ss.value
    assert np.all(np.diff(ss.A) >= -1e-15)  # A^(k) nondecreasing in k
    fast = smooth_sensitivity(x, lower=0, upper=3 * x.max(), beta=0.1, method="fast")
    assert fast.value >= ss.value  # fast is a looser valid bound
    # fast ignores g (box g in [0, (n-1)/n]): about 1/(1-g) = 2x looser here, not wildly more
    assert fast.value < 3 * ss.value
    assert not ss.saturated


def test_fast_iq_formula_matches_data_version():
    """Scale invariance: the IQ-only fast bound equals the data version on any data with that mean."""
    x = np.array([0.0] * 500 + [4.0] * 500)  # mean 2, g = 0.5 (Prop. 5.1 minimiser: IQ = 2)
    assert gini(x) == pytest.approx(0.5)
    ss = smooth_sensitivity(x, lower=0.0, upper=4.0, beta=0.2, method="fast")
    assert fast_smooth_sensitivity_iq(1000, 2.0, 0.2) == pytest.approx(ss.value, rel=1e-12)
    assert minimal_iq(0.5) == 2.0 and minimal_iq(0.2) == pytest.approx(0.8)
    assert minimal_iq(0.7) == pytest.approx(1 / 0.3)


def test_saturation_flag_for_tiny_data():
    ss = smooth_sensitivity([1.0, 2.0, 3.0], lower=0.0, upper=100.0, beta=0.01)
    assert ss.saturated and ss.value == pytest.approx(gini_global_sensitivity(3, 0.0, 100.0))
    rel = release_gini([1.0, 2.0, 3.0], epsilon=0.05, gamma=2, lower=0, upper=100, rng=1)
    assert rel.confidential_saturated


def test_global_sensitivity_formula():
    assert gini_global_sensitivity(100, 0.0, 10.0) == pytest.approx(0.99)
    # L > 0: 2 (n-1)/n (U-L) / (nL + U - L)
    assert gini_global_sensitivity(100, 1.0, 11.0) == pytest.approx(2 * 0.99 * 10 / 110)


# --------------------------------------------------------------------------- releases


def test_release_uses_calibration_and_generalized_cauchy():
    rng = np.random.default_rng(3)
    x = rng.lognormal(10, 0.8, 2000)
    U = 3 * x.max()
    for cal in ("tight", "paper"):
        rel = release_gini(x, epsilon=1.0, gamma=2.0, lower=0, upper=U, calibration=cal, rng=42)
        c = smooth_noise_calibration(1.0, 2.0, mode=cal)
        assert (rel.alpha, rel.beta) == (c.alpha, c.beta)
        assert smooth_noise_privacy_loss(2.0, rel.alpha, rel.beta) <= 1.0 + 1e-9
        ss = smooth_sensitivity(x, lower=0, upper=U, beta=c.beta)
        assert rel.noise_scale == pytest.approx(ss.value / c.alpha)
        z = GeneralizedCauchy(2.0).rvs(1, np.random.default_rng(42))[0]
        assert rel.noisy_value == pytest.approx(gini(x) + rel.noise_scale * z, rel=1e-12)
        assert rel.value == publish_gini(rel.noisy_value)  # clamped to [0, 1] on the 1e-6 grid
        assert rel.confidential_true_value is None  # the truth is not on the public result
    assert release_gini(
        x, epsilon=1, gamma=2, lower=0, upper=U, rng=1, include_confidential=True
    ).confidential_true_value == pytest.approx(gini(x))
    paper = release_gini(x, epsilon=1.0, gamma=2.0, lower=0, upper=U, calibration="paper", rng=1)
    assert paper.alpha == pytest.approx(1.0 / 8) and paper.beta == pytest.approx(0.5)


def test_release_without_rng_uses_secure_generator():
    rel = release_gini([1.0, 5.0, 9.0, 2.0, 7.0] * 20, epsilon=1, gamma=2, lower=0, upper=10)
    assert math.isfinite(rel.value)


def test_median_of_releases_is_the_truth_within_monte_carlo_error():
    rng = np.random.default_rng(4)
    x = rng.lognormal(10, 1.0, 3000)
    sim = simulate_gini_releases(x, epsilon=0.5, gamma=2.0, lower=0, upper=3 * x.max(), n_releases=200_000, rng=5)
    g = gini(x)
    assert sim.confidential_true_value == pytest.approx(g)
    N = sim.releases.size
    # SE of the sample median: scale / (2 h(0) sqrt(N)), h(0) the noise density at 0
    se = sim.noise_scale / (2 * GeneralizedCauchy(2.0).pdf(0.0) * math.sqrt(N))
    assert abs(np.median(sim.releases) - g) < 4 * se
    # the whole distribution: (release - g)/scale ~ GeneralizedCauchy(gamma) (KS, fixed seed)
    z = (sim.releases[:20000] - g) / sim.noise_scale
    assert stats.kstest(z, GeneralizedCauchy(2.0).cdf).pvalue > 1e-3
    # Laplace baseline: median |error| = b ln 2
    lap_err = np.abs(sim.laplace_releases - g)
    b = sim.laplace_scale
    assert sim.laplace_scale == pytest.approx(gini_global_sensitivity(x.size, 0, 3 * x.max()) / 0.5)
    se_lap = 1 / (2 * (1 / b) * math.exp(-math.log(2)) * math.sqrt(N))  # density of |Lap| at b ln2
    assert abs(np.median(lap_err) - b * math.log(2)) < 4 * se_lap
    assert sim.summary["rmse"] is None  # gamma = 2: no variance
    assert sim.summary["median_abs_error"] < sim.laplace_summary["median_abs_error"] / 10


def test_simulate_from_scale_and_error_summary():
    r = simulate_releases_from_scale(0.4, 0.01, 4.0, 100_000, rng=1)
    s = error_summary(r - 0.4, gamma=4.0)
    var = GeneralizedCauchy(4.0).variance * 0.01**2
    # RMSE exists for gamma > 3; its square is the variance (SE of mean of e^2 from the sample)
    e2 = (r - 0.4) ** 2
    assert abs(s["rmse"] ** 2 - var) < 6 * e2.std() / math.sqrt(e2.size) + 1e-12
    assert error_summary(r - 0.4, gamma=2.5)["rmse"] is None
    assert s["median_abs_error"] <= s["q90_abs_error"] <= s["q99_abs_error"]


def test_laplace_release():
    rel = release_gini_laplace([1.0, 2.0, 3.0, 10.0], epsilon=1.0, lower=0, upper=10, rng=3)
    assert rel.global_sensitivity == pytest.approx(0.75) and rel.noise_scale == pytest.approx(0.75)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "x, msg",
    [
        ([1.0], "at least 2"),
        ([], "at least 2"),
        ([1.0, float("nan"), 2.0], "missing or infinite"),
        ([1.0, -2.0, 3.0], "negative"),
        ([0.0, 0.0, 0.0], "all incomes are zero"),
    ],
)
def test_gini_bad_input(x, msg):
    with pytest.raises(DPInputError, match=msg):
        gini(x)


def test_bad_definition_and_k():
    with pytest.raises(DPInputError, match="definition"):
        gini(TOY, definition="eq3")
    with pytest.raises(DPInputError, match="k must be >= 0"):
        min_gini_after_k(TOY, -1)
    with pytest.raises(DPInputError, match="sorted"):
        max_gini_after_k(TOY[::-1], 1, 0, 10)
    with pytest.raises(DPInputError, match="above upper"):
        max_gini_after_k(TOY, 1, 0, 5)


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(epsilon=0.0), "epsilon must be > 0"),
        (dict(epsilon=-1.0), "epsilon must be > 0"),
        (dict(epsilon=float("nan")), "NaN"),
        (dict(gamma=1.0), "gamma must be > 1"),
        (dict(lower=5.0, upper=5.0), "must be smaller"),
        (dict(lower=-1.0), "lower must be >= 0"),
        (dict(calibration="loose"), "calibration"),
        (dict(method="slow"), "method"),
    ],
)
def test_release_bad_parameters(kwargs, msg):
    args = dict(epsilon=1.0, gamma=2.0, lower=0.0, upper=10.0, rng=1)
    args.update(kwargs)
    with pytest.raises(DPInputError, match=msg):
        release_gini([1.0, 2.0, 3.0], **args)


def test_negative_incomes_refused_or_clipped_with_count():
    x = [-5.0, 1.0, 2.0, 30.0, 4.0]
    with pytest.raises(DPInputError, match="1 negative"):
        release_gini(x, epsilon=1, gamma=2, lower=0, upper=10, rng=1)
    rel = release_gini(x, epsilon=1, gamma=2, lower=0, upper=10, rng=1, clip_negative=True, include_confidential=True)
    assert rel.confidential_n_clipped_below == 1 and rel.confidential_n_clipped_above == 1
    assert rel.confidential_true_value == pytest.approx(gini([0.0, 1.0, 2.0, 10.0, 4.0]))
    xs, below, above = clip_incomes(x, lower=0, upper=10, clip_negative=True)
    assert (below, above) == (1, 1) and xs.tolist() == [0.0, 1.0, 2.0, 4.0, 10.0]


def test_all_zero_and_too_small_refused_in_release():
    with pytest.raises(DPInputError, match="zero"):
        release_gini([0.0, 0.0, 0.0], epsilon=1, gamma=2, lower=0, upper=10, rng=1)
    with pytest.raises(DPInputError, match="at least 2"):
        release_gini([3.0], epsilon=1, gamma=2, lower=0, upper=10, rng=1)
    with pytest.raises(DPInputError, match="outside"):
        smooth_sensitivity([1.0, 20.0], lower=0, upper=10, beta=0.1)
    with pytest.raises(DPInputError, match="beta"):
        smooth_sensitivity([1.0, 2.0], lower=0, upper=10, beta=0.0)


def test_posterior_is_reexported():
    post = pytest.importorskip("dpcore.posterior")
    assert G.gini_posterior is post.gini_posterior


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(errors=[0.1, float("nan")]), "missing or infinite"),
        (dict(errors=[]), "at least 1"),
        (dict(errors=[0.1], gamma=1.0), "gamma must be > 1"),
        (dict(errors=[0.1], gamma=float("nan")), "gamma"),
    ],
)
def test_error_summary_bad_input(kwargs, msg):
    with pytest.raises(DPInputError, match=msg):
        error_summary(**kwargs)


def test_exact_profile_is_smooth_sensitivity_and_checks_its_input():
    """dpcore.gini.ExactSensitivityProfile: one profile, many beta, each equal to smooth_sensitivity(exact)."""
    from dpcore.gini import ExactSensitivityProfile, smooth_sensitivity

    xs = np.sort(np.random.default_rng(5).lognormal(10, 1, 300))
    upper = float(xs.max())
    profile = ExactSensitivityProfile(xs, 0.0, upper)
    for beta in (2.0, 0.5, 0.05, 1.0):
        got, want = (
            profile.smooth_sensitivity(beta),
            smooth_sensitivity(xs, lower=0.0, upper=upper, beta=beta, method="exact"),
        )
        assert got.value == want.value and got.k_star == want.k_star and np.array_equal(got.A, want.A)
    for bad in (xs[::-1], np.zeros(5), np.append(xs, upper * 2)):
        with pytest.raises(DPInputError):
            ExactSensitivityProfile(bad, 0.0, upper)
    with pytest.raises(DPInputError):
        profile.smooth_sensitivity(-1.0)
