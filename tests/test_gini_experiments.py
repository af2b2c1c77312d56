"""dpcore.views.gini: the Gini page's view, exact error summaries, the paper's Figures 1, 3, 4 and error
vs epsilon.

Monte Carlo tolerances are 4 standard errors. For a sample q-quantile of N draws of a variable
with density f, the standard error is sqrt(q (1 - q) / N) / f(x_q); for a sample median of
g + s Z it is s / (2 f_Z(0) sqrt(N)).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore import gini as gini_mechanism
from dpcore import posterior
from dpcore.data import two_point_incomes
from dpcore.noise import GeneralizedCauchy, smooth_noise_calibration
from dpcore.validation import DPInputError
from dpcore.views import gini as gini_experiments
from dpcore.views.gini import page as gini_page


def _quantile_se(q: float, n: int, density_at_quantile: float) -> float:
    return math.sqrt(q * (1 - q) / n) / density_at_quantile


def _published_cdf(t: float, g: float, s: float, cdf) -> float:
    """P(|clamp(g + s Z, 0, 1) - g| <= t): the error above the truth is cut at 1 - g, below it at g."""
    above = 1.0 if t >= 1 - g else float(cdf(t / s))
    below = 0.0 if t >= g else float(cdf(-t / s))
    return above - below


def _published_quantile(q: float, g: float, s: float, cdf) -> float:
    """The smallest t with P(published error <= t) >= q, by bisection (independent of dpcore's closed form)."""
    low, high = 0.0, max(g, 1 - g)
    for _ in range(200):
        mid = 0.5 * (low + high)
        low, high = (low, mid) if _published_cdf(mid, g, s, cdf) >= q else (mid, high)
    return high


def _published_rmse(g: float, s: float, cdf) -> float:
    """sqrt(E error^2) = sqrt(int_0^b 2 t P(error > t) dt), by quadrature."""
    b = max(g, 1 - g)
    value, _ = integrate.quad(lambda t: 2 * t * (1 - _published_cdf(t, g, s, cdf)), 0.0, b, points=[min(g, 1 - g)])
    return math.sqrt(value)


def _laplace_cdf(x: float) -> float:
    return stats.laplace.cdf(x)


# ---------------------------------------------------------------------------------------------
# Exact error summaries
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [1.5, 2.0, 4.0])
def test_abs_error_quantiles_match_simulation(gamma):
    n, s = 200_000, 0.013
    gc = GeneralizedCauchy(gamma)
    err = np.abs(s * gc.rvs(n, np.random.default_rng(7)))
    levels = (0.5, 0.9, 0.99)
    exact = gini_experiments.abs_error_quantiles(s, gamma, levels)
    for q, x_q in zip(levels, exact, strict=True):
        dens = 2 * float(gc.pdf(x_q / s)) / s  # density of |sZ| at its q-quantile
        assert abs(np.quantile(err, q) - x_q) <= 4 * _quantile_se(q, n, dens), (q, np.quantile(err, q), x_q)


def test_abs_error_quantiles_definition():
    # P(|sZ| <= x_q) = q exactly (checked through the CDF, not through ppf)
    gc = GeneralizedCauchy(3.0)
    for q, x in zip((0.5, 0.9, 0.99), gini_experiments.abs_error_quantiles(2.0, 3.0), strict=True):
        assert float(gc.cdf(x / 2) - gc.cdf(-x / 2)) == pytest.approx(q, abs=1e-12)
    for q, x in zip((0.5, 0.9, 0.99), gini_experiments.laplace_abs_error_quantiles(0.7), strict=True):
        assert stats.laplace.cdf(x, scale=0.7) - stats.laplace.cdf(-x, scale=0.7) == pytest.approx(q, abs=1e-12)


def test_noise_rmse_exists_only_for_gamma_above_3():
    assert gini_experiments.noise_rmse(1.0, 2.0) == math.inf
    assert gini_experiments.noise_rmse(1.0, 3.0) == math.inf
    for gamma in (4.0, 6.0):
        c = 1 / integrate.quad(lambda z: 1 / (1 + abs(z) ** gamma), -np.inf, np.inf)[0]
        var = integrate.quad(lambda z: c * z * z / (1 + abs(z) ** gamma), -np.inf, np.inf)[0]
        assert gini_experiments.noise_rmse(0.3, gamma) == pytest.approx(0.3 * math.sqrt(var), rel=1e-6)


def test_plausible_releases_are_equal_probability_quantiles():
    dots = gini_experiments.plausible_releases(0.4, 0.02, 2.0, n_dots=20)
    assert dots.shape == (20,) and np.all(np.diff(dots) > 0)
    p = GeneralizedCauchy(2.0).cdf((dots - 0.4) / 0.02)
    np.testing.assert_allclose(p, (np.arange(20) + 0.5) / 20, atol=1e-12)
    np.testing.assert_allclose(dots + dots[::-1], 0.8, atol=1e-12)  # symmetric around the truth


# ---------------------------------------------------------------------------------------------
# Error against epsilon (the page's live chart)
# ---------------------------------------------------------------------------------------------


def test_error_vs_epsilon_matches_direct_computation():
    x = np.sort(np.random.default_rng(3).lognormal(10, 1, 3000))
    upper = float(x.max() * 2)
    table = gini_experiments.error_vs_epsilon(x, lower=0.0, upper=upper, gamma=2.0, epsilons=[0.5, 2.0], method="exact")
    assert list(table.calibration) == ["paper", "tight", "paper", "tight"]
    for _, row in table.iterrows():
        cal = smooth_noise_calibration(row.epsilon, 2.0, mode=row.calibration)
        ss = gini_mechanism.smooth_sensitivity(x, lower=0.0, upper=upper, beta=cal.beta, method="exact")
        assert row.noise_scale == pytest.approx(ss.value / cal.alpha, rel=1e-12)
        gc, g = GeneralizedCauchy(2.0), gini_mechanism.gini(x)
        # errors of the published Gini, clamped to [0, 1]
        assert row.median_abs_error == pytest.approx(_published_quantile(0.5, g, row.noise_scale, gc.cdf), rel=1e-9)
        assert row.q99_abs_error == pytest.approx(_published_quantile(0.99, g, row.noise_scale, gc.cdf), rel=1e-9)
        assert row.rmse == math.inf
        assert row.laplace_scale == pytest.approx(
            gini_mechanism.gini_global_sensitivity(x.size, 0.0, upper) / row.epsilon
        )
        assert row.laplace_median_abs_error == pytest.approx(
            _published_quantile(0.5, g, row.laplace_scale, _laplace_cdf), rel=1e-9
        )
        assert max(row.q99_abs_error, row.laplace_q99_abs_error) <= max(g, 1 - g)
    paper, tight = table[table.calibration == "paper"], table[table.calibration == "tight"]
    assert np.all(tight.noise_scale.to_numpy() < paper.noise_scale.to_numpy())
    assert paper.noise_scale.iloc[1] < paper.noise_scale.iloc[0]  # more epsilon, less noise


def test_error_vs_epsilon_flags_saturation():
    # n = 200: at epsilon = 0.05 the median noise (about 15) dwarfs the Gini's range; at 5 it is 0.03
    x = np.random.default_rng(4).lognormal(10, 1, 200)
    table = gini_experiments.error_vs_epsilon(
        x,
        lower=0.0,
        upper=float(x.max() * 1.5),
        gamma=2.0,
        epsilons=[0.05, 5.0],
        calibrations=("tight",),
        method="fast",
    )
    assert bool(table.saturated.iloc[0]) and not bool(table.saturated.iloc[1])


# ---------------------------------------------------------------------------------------------
# Figure 3 / Figure 4: two-point data of Proposition 5.1
# ---------------------------------------------------------------------------------------------


def test_figure3_structure_and_paper_claims():
    calls = []
    res = gini_experiments.figure3(n_draws=20_000, rng=11, progress=lambda f, m: calls.append(f))
    t = res.table
    assert len(t) == 3 * 3 * 3 * 2
    assert calls == sorted(calls) and calls[-1] == pytest.approx(1.0) and len(calls) == 27
    for (
        g
    ) in gini_experiments.FIG3_GINIS:  # the minimal IQ of Proposition 5.1 (exact for these n: alpha n is an integer)
        assert np.allclose(t[t.g == g].iq, gini_mechanism.minimal_iq(g))
    # tight < paper by exactly the ratio of the alphas (same beta, same S)
    for eps in gini_experiments.FIG3_EPSILONS:
        p = t[(t.calibration == "paper") & (t.epsilon == eps)].noise_scale.to_numpy()
        q = t[(t.calibration == "tight") & (t.epsilon == eps)].noise_scale.to_numpy()
        ratio = smooth_noise_calibration(eps, 2.0).alpha / smooth_noise_calibration(eps, 2.0, mode="paper").alpha
        np.testing.assert_allclose(p / q, ratio, rtol=1e-9)
    paper = t[t.calibration == "paper"]
    piv = paper.pivot_table(index=["n", "epsilon"], columns="g", values="q90_abs_error")
    assert np.all(np.diff(piv.to_numpy(), axis=1) > 0)  # errors grow with g (larger minimal IQ)
    piv_n = paper.pivot_table(index=["g", "epsilon"], columns="n", values="q90_abs_error")
    assert np.all(np.diff(piv_n.to_numpy(), axis=1) < 0)  # and shrink with n
    # simulated medians agree with the exact ones (4 SE; density of |Z| at its median)
    gc = GeneralizedCauchy(2.0)
    row = t.iloc[0]
    dens = 2 * float(gc.pdf(gc.ppf(0.75))) / row.noise_scale
    assert abs(row.sim_median_abs_error - row.median_abs_error) <= 4 * _quantile_se(0.5, 20_000, dens)
    assert set(res.draws.columns) >= {"g", "n", "epsilon", "calibration", "log10_abs_error"}
    assert res.draws.log10_abs_error.min() >= -6


def test_figure3_fast_shortcut_equals_bound_on_the_records_and_exact_is_smaller():
    # The IQ-only shortcut (no records) must equal the fast bound computed on actual two-point records,
    # and the exact bound on those records can only be smaller.
    kw = dict(ginis=(0.3, 0.7), ns=(4000,), epsilons=(1.0,), calibrations=("paper",), n_draws=100, rng=1)
    fast = gini_experiments.figure3(method="fast", **kw).table
    exact = gini_experiments.figure3(method="exact", **kw).table
    beta = smooth_noise_calibration(1.0, 2.0, mode="paper").beta
    for g, s_fast, s_exact in zip(fast.g, fast.smooth_sensitivity, exact.smooth_sensitivity, strict=True):
        td = two_point_incomes(4000, g, definition="eq1")
        direct = gini_mechanism.smooth_sensitivity(
            td.values, lower=td.lower, upper=td.upper, beta=beta, method="fast"
        ).value
        assert s_fast == pytest.approx(direct, rel=1e-9)
        assert s_exact <= s_fast * (1 + 1e-12)


def test_figure4_rmse_and_monotone_in_iq():
    res = gini_experiments.figure4(iqs=(2, 10, 100), epsilons=(0.5, 2.0), n_draws=1000, rng=2, gamma=2.0)
    t = res.table
    assert len(t) == 3 * 2 * 2
    assert np.all(np.isinf(t.rmse)) and any("RMSE does not exist" in n for n in res.notes)
    for (eps, cal), grp in t.groupby(["epsilon", "calibration"]):
        assert np.all(np.diff(grp.sort_values("iq").noise_scale.to_numpy()) > 0)
    res4 = gini_experiments.figure4(iqs=(2, 50), epsilons=(1.0,), n_draws=1000, rng=2, gamma=4.0)
    var = GeneralizedCauchy(4.0).variance
    np.testing.assert_allclose(res4.table.rmse, res4.table.noise_scale * math.sqrt(var))
    assert not res4.notes
    with pytest.raises(DPInputError, match="below the minimum"):
        gini_experiments.figure4(iqs=(1.5,), n_draws=10)


def test_figures_3_and_4_share_one_checked_settings_object():
    """Figures 3 and 4 take their shared settings (gamma, calibrations, method, n_draws) as one checked
    TwoPointErrorSettings: the same checks for both, the same record in params, a misspelt setting refused."""
    settings = gini_experiments.TwoPointErrorSettings(gamma=4.0, calibrations=["paper"], n_draws=500)
    assert settings.calibrations == ("paper",)
    fig3 = gini_experiments.figure3(ginis=(0.5,), ns=(10_000,), epsilons=(1.0,), rng=3, **dataclasses.asdict(settings))
    fig4 = gini_experiments.figure4(iqs=(2,), epsilons=(1.0,), rng=3, **dataclasses.asdict(settings))
    for res in (fig3, fig4):
        assert {k: res.params[k] for k in ("gamma", "calibrations", "method", "n_draws")} == settings.params()
    for bad, match in [({"method": "slow"}, "method"), ({"n_draws": 0}, "n_draws"), ({"gamma": 1.0}, "gamma")]:
        with pytest.raises(DPInputError, match=match):
            gini_experiments.TwoPointErrorSettings(**bad)
        for figure in (gini_experiments.figure3, gini_experiments.figure4):
            with pytest.raises(DPInputError, match=match):
                figure(epsilons=(1.0,), **bad)
    with pytest.raises(TypeError, match="n_draw"):
        gini_experiments.figure4(n_draw=10)  # a misspelt setting is refused, never ignored


# ---------------------------------------------------------------------------------------------
# Figure 1: one income file
# ---------------------------------------------------------------------------------------------


def test_figure1_public_upper_is_median_unbiased():
    x = np.random.default_rng(5).lognormal(10.5, 0.9, 5000)
    upper = float(x.max() * 1.5)
    n_rel = 40_000
    res = gini_experiments.figure1(x, upper=upper, epsilons=(0.5, 2.0), n_releases=n_rel, rng=3)
    t = res.table
    g0 = gini_mechanism.gini(x)
    assert np.allclose(t.true_gini, g0) and np.allclose(t.total_epsilon, t.epsilon)
    gc = GeneralizedCauchy(2.0)
    for _, row in t.iterrows():
        se = row.mean_noise_scale / (2 * float(gc.pdf(0.0)) * math.sqrt(n_rel))
        assert abs(row["median"] - g0) <= 4 * se, (row.epsilon, row.calibration)
    assert len(res.draws) == 4 * 2000


def test_figure1_dp_upper_adds_epsilon_and_clips():
    x = np.random.default_rng(6).lognormal(10.5, 0.9, 3000)
    xmax = float(x.max())
    draws = iter([0.5 * xmax, 3 * xmax] * 10)
    res = gini_experiments.figure1(
        x,
        upper=None,
        upper_epsilon=0.15,
        epsilons=(1.0,),
        n_releases=1000,
        n_upper_draws=2,
        rng=1,
        upper_sampler=lambda v, e, r: next(draws),
    )
    t = res.table
    assert np.allclose(t.total_epsilon, 1.15)
    assert np.allclose(t.share_upper_below_max, 0.5)
    assert t.upper_min.iloc[0] == pytest.approx(0.5 * xmax)
    assert any("total epsilon" in n for n in res.notes)


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


def test_bad_input():
    x = np.random.default_rng(0).lognormal(10, 1, 100)
    with pytest.raises(DPInputError, match="negative"):
        gini_experiments.figure1(np.r_[x, -5.0], upper=1e7, n_releases=10)
    with pytest.raises(DPInputError, match="at least 2"):
        gini_experiments.figure1([5.0], upper=10.0, n_releases=10)
    with pytest.raises(DPInputError, match="epsilon"):
        gini_experiments.figure3(epsilons=(0.0,), n_draws=10)
    with pytest.raises(DPInputError, match="calibrations"):
        gini_experiments.figure3(calibrations=("loose",), n_draws=10)
    with pytest.raises(DPInputError, match="gamma"):
        gini_experiments.error_vs_epsilon(x, lower=0, upper=1e7, gamma=1.0, epsilons=[1.0])
    with pytest.raises(DPInputError, match="quantile levels"):
        gini_experiments.abs_error_quantiles(1.0, 2.0, (0.5, 1.0))
    with pytest.raises(DPInputError, match="noise_scale"):
        gini_experiments.abs_error_quantiles(-1.0, 2.0)


# ---------------------------------------------------------------------------------------------
# Real data (skips cleanly without ../shared/data)
# ---------------------------------------------------------------------------------------------


def test_figure1_on_cps_with_the_dp_upper_bound(cps_path):
    import pandas as pd

    inc = pd.read_csv(cps_path, usecols=["INCTOT"])["INCTOT"].dropna().to_numpy(dtype=float)
    x = inc[inc >= 0]
    assert x.size == 8173
    n_rel = 20_000
    res = gini_experiments.figure1(x, epsilons=(0.25, 2.0), n_releases=n_rel, n_upper_draws=1, rng=21)
    t = res.table
    assert t.true_gini.iloc[0] == pytest.approx(0.5361, abs=5e-5)  # eq. (1), the README's figure
    np.testing.assert_allclose(t.total_epsilon, t.epsilon + 0.15)  # Section 5.1's U costs 0.15
    u = float(t.upper_min.iloc[0])
    assert t.clipped_gini.iloc[0] == pytest.approx(gini_mechanism.gini(np.minimum(x, u)), rel=1e-12)
    if u < x.max():  # the DP bound clipped the top incomes: the releases centre on the clipped Gini
        assert t.clipped_gini.iloc[0] < t.true_gini.iloc[0]
        assert any("clipped" in note for note in res.notes)
    # median-unbiased for the Gini of the (clipped) data the mechanism saw
    f0 = float(GeneralizedCauchy(2.0).pdf(0.0))
    for _, row in t.iterrows():
        se = row.mean_noise_scale / (2 * f0 * math.sqrt(n_rel))
        assert abs(row["median"] - row.clipped_gini) <= 4 * se


# ---------------------------------------------------------------------------------------------
# The page's view (gini_view): equal to the pipeline written out step by step
# ---------------------------------------------------------------------------------------------


def _pipeline(
    values,
    *,
    epsilon,
    gamma,
    lower,
    upper,
    upper_epsilon=0.0,
    calibration="tight",
    method="exact",
    n=None,
    prior="uniform",
    seed=2026,
):
    """The Gini page's numbers computed step by step from the mechanisms (an independent oracle)."""
    from dpcore.bounds import dp_upper_bound
    from dpcore.posterior import gini_posterior

    x = np.asarray(values, dtype=float)
    if n is not None and n < x.size:
        x = np.random.default_rng(7919).choice(x, size=n, replace=False)
    if upper is None:
        upper = float(
            dp_upper_bound(
                x,
                epsilon_n=upper_epsilon / 2,
                epsilon_count=upper_epsilon / 2,
                lower=lower,
                rng=np.random.default_rng(seed + 11),
            ).upper
        )
    else:
        upper_epsilon = 0.0
    xs, _, _ = gini_mechanism.clip_incomes(x, lower=lower, upper=upper, clip_negative=True)
    cal = smooth_noise_calibration(epsilon, gamma, mode=calibration)
    ss = gini_mechanism.smooth_sensitivity(xs, lower=lower, upper=upper, beta=cal.beta, method=method)
    true_g = gini_mechanism.gini(xs)
    scale = ss.value / cal.alpha
    noise = GeneralizedCauchy(gamma)
    # errors of the published value, clamped to [0, 1]; saturated when the noise's own median is half the range
    med, q90, q99 = (_published_quantile(q, true_g, scale, noise.cdf) for q in (0.5, 0.9, 0.99))
    lap_scale = ss.global_sensitivity / epsilon
    lap_med, lap_q90, lap_q99 = (_published_quantile(q, true_g, lap_scale, _laplace_cdf) for q in (0.5, 0.9, 0.99))
    saturated = bool(ss.value >= ss.global_sensitivity * (1 - 1e-9) or scale * noise.ppf(0.75) >= 0.5)
    clamped = noise.cdf(-true_g / scale) + 1 - noise.cdf((1 - true_g) / scale)
    out = dict(
        n=xs.size,
        lower=lower,
        upper=upper,
        upper_epsilon=upper_epsilon,
        total_epsilon=epsilon + upper_epsilon,
        true_gini=true_g,
        smooth_sensitivity=ss.value,
        k_star=ss.k_star,
        alpha=cal.alpha,
        beta=cal.beta,
        noise_scale=scale,
        median_abs_error=med,
        q90_abs_error=q90,
        q99_abs_error=q99,
        laplace_median_abs_error=lap_med,
        laplace_q90_abs_error=lap_q90,
        laplace_q99_abs_error=lap_q99,
        saturated=float(saturated),
        clamp_probability=clamped,
    )
    if gamma > 3:
        out.update(
            rmse=_published_rmse(true_g, scale, noise.cdf),
            laplace_rmse=_published_rmse(true_g, lap_scale, _laplace_cdf),
        )
    if not saturated:
        from dpcore.noise.guarantees import publish_gini

        one = float(true_g + scale * noise.rvs(1, np.random.default_rng(seed + 3))[0])
        post = gini_posterior(one, noise_scale=scale, gamma=gamma, prior=prior)  # the noisy value's likelihood
        (lo, hi), (h_lo, h_hi) = post.interval(0.95), post.interval(0.95, kind="hpd")
        out.update(
            released_gini=publish_gini(one),
            posterior_mean=post.mean,
            posterior_interval_lower=lo,
            posterior_interval_upper=hi,
            posterior_hpd_lower=h_lo,
            posterior_hpd_upper=h_hi,
        )
    out.update(
        _published_pipeline(
            xs,
            true_g,
            epsilon=epsilon,
            gamma=gamma,
            lower=lower,
            upper=upper,
            calibration=calibration,
            method=method,
            seed=seed,
        )
    )
    return out


def _published_pipeline(xs, true_g, *, epsilon, gamma, lower, upper, calibration, method, seed) -> dict:
    """The release drawn as a real one (value + DP bound on S_beta) and its interval from the published numbers,
    step by step; the expected widths are the optimiser's own model numbers. {} where no split is feasible."""
    from dpcore import intervals
    from dpcore.mechanisms import GiniIntervalMechanism

    try:
        mech = GiniIntervalMechanism(epsilon, lower, upper, gamma=gamma, calibration=calibration, planning_n=xs.size)
        plan = mech.plan
    except DPInputError:
        return {}
    s = gini_mechanism.smooth_sensitivity(xs, lower=lower, upper=upper, beta=plan.beta, method=method).value
    d = mech.draw(true_g, s, rng=np.random.default_rng(seed + 3))
    ci = plan.interval(d.value, d.smooth_sensitivity_upper)
    model = intervals.optimise_gini_split(
        epsilon, None, "cauchy", xs.size, lower, upper, 0.95, gamma=gamma, calibration_mode=calibration
    )
    scale = min(max(s / plan.release_alpha, plan.min_scale), plan.max_scale)
    h = plan.quantile() * scale  # the interval v -+ h cut to [0, 1], v the published value
    v = np.clip(true_g + scale * GeneralizedCauchy(gamma).rvs(400_000, np.random.default_rng(seed + 99)), 0.0, 1.0)
    return dict(
        confidential_published_typical_width=float(np.median(np.minimum(v + h, 1.0) - np.maximum(v - h, 0.0))),
        published_gini=d.value,
        published_smooth_sensitivity_bound=d.smooth_sensitivity_upper,
        published_interval_lower=ci.lower,
        published_interval_upper=ci.upper,
        published_epsilon_value=plan.epsilon_value,
        published_epsilon_bound=plan.epsilon_bound,
        published_expected_width=min(model.model_width, 1.0),  # an interval cut to [0, 1]
        oracle_expected_width=min(model.model_oracle_width, 1.0),
    )


GINI_VIEW_CASES = [
    dict(epsilon=1.0, gamma=2.0, lower=0.0, upper=2_000_000.0),  # the page's defaults
    dict(
        epsilon=2.0,
        gamma=4.0,
        lower=0.0,
        upper=None,
        upper_epsilon=0.15,
        calibration="paper",
        method="fast",
        n=3000,
        prior=("beta", 6.0, 7.0),
        seed=5,
    ),  # RMSE, DP upper bound, sub-sample, Beta prior
    dict(epsilon=0.05, gamma=2.0, lower=0.0, upper=2_000_000.0, n=200),  # saturated: no release
    dict(epsilon=0.5, gamma=3.5, lower=5_000.0, upper=150_000.0, seed=9),  # clipping at both ends
]


@pytest.mark.parametrize("settings", GINI_VIEW_CASES)
def test_gini_view_equals_the_pipeline_step_by_step(settings):
    from dpcore.data import lognormal_incomes

    values = lognormal_incomes(10_000, sigma=0.9, rng=2026)
    view = gini_experiments.gini_view(values, **settings)
    expected = _pipeline(values, **settings)
    got = view.numbers()
    assert set(got) == set(expected)
    # computed differently here: the RMSE by one quadrature of the two-sided CDF (dpcore: one per side), the typical
    # width by 400,000 draws (dpcore: the median over 4,000 quantiles), the quantiles by bisection
    loose = {"rmse": 1e-6, "laplace_rmse": 1e-6, "confidential_published_typical_width": 1e-2}
    for key, value in expected.items():
        assert got[key] == pytest.approx(float(value), rel=loose.get(key, 1e-9), abs=1e-15), key
        if "error" in key or "width" in key or "rmse" in key or key.startswith("released"):
            assert got[key] <= 1.0, key  # of the published Gini, in [0, 1]
    out = view.to_dict()
    assert json.loads(json.dumps(out)) == out  # plain JSON
    if view.saturated:
        assert "plausible_releases" not in out and view.simulated_releases is None
    else:
        np.testing.assert_allclose(
            out["plausible_releases"],
            np.clip(gini_experiments.plausible_releases(view.true_gini, view.noise_scale, view.gamma, 20), 0, 1),
        )
        assert view.simulated_releases.size == gini_experiments.N_SIMULATED_RELEASES
        assert 0.0 <= view.simulated_releases.min() and view.simulated_releases.max() <= 1.0
        # the error chart uses the fast bound and the chosen calibration at the page's epsilons
        assert list(view.error_curve["epsilon"]) == list(gini_experiments.CURVE_EPSILONS)
        assert set(view.error_curve["calibration"]) == {view.calibration}
    # the exact bound is never above the fast one, and the chart's exact curve starts at the same A(0)
    assert view.exact_curve["decay"].max() <= view.fast_curve["decay"].max() * (1 + 1e-12)


def test_gini_view_clipping_counts_and_bad_input():
    x = np.r_[np.linspace(1_000, 90_000, 200), [-50.0, -1.0, 500_000.0]]
    view = gini_experiments.gini_view(x, epsilon=1.0, gamma=2.0, lower=2_000.0, upper=100_000.0)
    assert view.confidential_n_negative == 2
    assert view.confidential_n_below == 2 + int((x[x >= 0] < 2_000).sum())
    assert view.confidential_n_above == 1
    with pytest.raises(DPInputError, match="must be above the lower bound"):
        gini_experiments.gini_view(x, epsilon=1.0, gamma=2.0, lower=5_000.0, upper=1_000.0)
    with pytest.raises(DPInputError, match="all incomes are zero"):
        gini_experiments.gini_view(np.zeros(50), epsilon=1.0, gamma=2.0, lower=0.0, upper=10.0)
    with pytest.raises(DPInputError, match="at least n = 2"):
        gini_experiments.gini_view([5.0], epsilon=1.0, gamma=2.0, lower=0.0, upper=10.0)
    with pytest.raises(DPInputError, match="prior"):
        gini_experiments.gini_view(x, epsilon=1.0, gamma=2.0, lower=0.0, upper=1e6, prior="flat")
    with pytest.raises(DPInputError, match="calibration"):
        gini_experiments.gini_view(x, epsilon=1.0, gamma=2.0, lower=0.0, upper=1e6, calibration="loose")


def test_the_gini_experiments_have_one_module():
    import importlib.util

    assert importlib.util.find_spec("dpcore.gini_experiments") is None  # no second name for dpcore.views.gini


# ---------------------------------------------------------------------------------------------
# The page's view with a light-tailed noise: every number follows the chosen noise
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("noise", ["cauchy", "laplace", "laplace_lognormal"])
def test_gini_view_follows_the_chosen_noise(noise):
    """The view's release, its posterior, error quantiles, RMSE, dots and error curve are those of
    ``release_gini(noise=...)`` (same seed) and of that noise's law: an independent path through
    dpcore.gini / dpcore.noise.smooth, not the view's code."""
    from dpcore.data import lognormal_incomes
    from dpcore.noise import smooth as smooth_noise

    values = lognormal_incomes(10_000, sigma=0.9, rng=2026)
    view = gini_experiments.gini_view(values, epsilon=1.0, gamma=2.0, lower=0.0, upper=1e6, seed=4, noise=noise)
    assert view.noise == noise
    xs, _, _ = gini_mechanism.clip_incomes(values, lower=0.0, upper=1e6, clip_negative=True)
    release = gini_mechanism.release_gini(xs, epsilon=1.0, gamma=2.0, lower=0.0, upper=1e6, rng=4 + 3, noise=noise)
    law = smooth_noise.noise_of_release(release)
    assert view.noise_scale == pytest.approx(release.confidential_noise_scale, rel=1e-12)
    # the view shows the published value (clamped to [0, 1]); its posterior reads the noisy value before the clamp
    assert view.released_gini == release.value
    post = posterior.release_posterior(release)
    assert view.posterior_interval == pytest.approx(post.interval(0.95), rel=1e-9)
    assert view.posterior_mean == pytest.approx(post.mean, rel=1e-9)
    g, scale = view.true_gini, release.confidential_noise_scale
    expected = np.array([_published_quantile(q, g, scale, law.cdf) for q in (0.5, 0.9, 0.99)])
    np.testing.assert_allclose(view.abs_error_quantiles, expected, rtol=1e-9)
    # dots: equal-probability quantiles of this noise's law, clamped to [0, 1] as published
    inside = (view.plausible_releases > 0) & (view.plausible_releases < 1)
    p = law.cdf((view.plausible_releases - view.true_gini) / view.noise_scale)
    np.testing.assert_allclose(p[inside], ((np.arange(20) + 0.5) / 20)[inside], atol=1e-6)
    assert inside.sum() >= 16 and np.all((view.plausible_releases >= 0) & (view.plausible_releases <= 1))
    # simulated releases: their median |error| agrees with the exact one (4 Monte Carlo standard errors)
    err = np.abs(view.simulated_releases - view.true_gini)
    dens = 2 * float(law.pdf(expected[0] / view.noise_scale)) / view.noise_scale
    assert abs(np.median(err) - expected[0]) <= 4 * _quantile_se(0.5, err.size, dens)
    numbers = view.numbers()
    if noise == "cauchy":
        assert view.rmse is None and "delta" not in numbers and release.delta == 0.0
    else:  # light tails: a finite RMSE, and the price (delta; rho for the zCDP noise) in the numbers
        assert view.rmse == pytest.approx(_published_rmse(g, scale, law.cdf), rel=1e-6)
        assert numbers["delta"] == 1e-6 and ("rho" in numbers) == (noise == "laplace_lognormal")
        assert (
            view.abs_error_quantiles[2]
            < 0.5
            * gini_experiments.gini_view(
                values, epsilon=1.0, gamma=2.0, lower=0.0, upper=1e6, seed=4
            ).abs_error_quantiles[2]
        )
    curve = view.error_curve.set_index("epsilon")
    cal = smooth_noise.smooth_calibration(noise, 1.0, gamma=2.0, mode="tight")
    assert curve.loc[1.0, "alpha"] == pytest.approx(cal.alpha, rel=1e-12)
    fast = gini_mechanism.smooth_sensitivity(xs, lower=0.0, upper=1e6, beta=cal.beta, method="fast").value
    assert curve.loc[1.0, "q99_abs_error"] == pytest.approx(fast / cal.alpha * float(law.abs_quantile(0.99)), rel=1e-9)


# ---------------------------------------------------------------------------------------------
# The page's release with its interval from the published numbers alone
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("noise", ["cauchy", "laplace"])
def test_published_interval_is_recomputed_from_the_published_numbers_alone(noise):
    """The view's published interval equals dpcore.published's recomputation from the release's record and the
    published value and bound (rounded there to honest digits, so it may only be a little wider), and the oracle's
    expected width is the one of the value alone at the full epsilon."""
    import pandas as pd

    from dpcore.data import lognormal_incomes
    from dpcore.mechanisms import GiniIntervalMechanism
    from dpcore.published import published_table

    values = lognormal_incomes(2_000, sigma=0.9, rng=2026)
    view = gini_experiments.gini_view(values, epsilon=1.0, gamma=2.0, lower=0.0, upper=1e6, seed=4, noise=noise)
    pub = view.published
    assert pub is not None and view.published_note == ""
    assert pub.epsilon_value + pub.epsilon_bound == pytest.approx(view.epsilon, rel=1e-12)
    assert pub.lower <= pub.value <= pub.upper and 0.0 <= pub.lower < pub.upper <= 1.0
    mech = GiniIntervalMechanism(
        1.0, 0.0, 1e6, noise=noise, delta=None if noise == "cauchy" else 1e-6, planning_n=view.n
    )
    record = mech.record()
    table = published_table(
        "gini", pd.DataFrame({"gini": [pub.value], "smooth_sensitivity_bound": [pub.s_upper]}), record, 0.95
    )
    lo, hi = float(table["gini_lower"].iloc[0]), float(table["gini_upper"].iloc[0])
    assert lo <= pub.lower + 1e-12 and pub.upper <= hi + 1e-12  # honest digits only widen it
    assert hi - lo <= pub.width * 1.15 + 2e-6
    # the expected widths: finite, and the published one within the 3x of the oracle's
    assert 0.0 < pub.expected_width < 3.0 * pub.oracle_expected_width
    # on these data: the median width over the bound's noise (the value's noise does not move the width), by
    # simulation of the bound's law (log-scale standard error of the median <= bound_scale / sqrt(N))
    from dpcore import intervals

    xs, _, _ = gini_mechanism.clip_incomes(values, lower=0.0, upper=1e6, clip_negative=True)
    s = gini_mechanism.smooth_sensitivity(xs, lower=0.0, upper=1e6, beta=pub.beta, method="exact").value
    bounds = intervals.simulate_gini_bounds([s], plan=mech.plan, size=4001, rng=1)[0]
    lows, highs = intervals.gini_interval_bounds(np.full(bounds.size, 0.5), bounds, **mech.plan.public_constants())
    assert np.median(highs - lows) == pytest.approx(pub.confidential_typical_width, rel=0.04, abs=2e-6)
    out = view.to_dict()
    assert json.loads(json.dumps(out)) == out
    assert out["published_interval_lower"] == pub.lower and out["oracle_expected_width"] == pub.oracle_expected_width


def test_published_interval_covers_the_gini():
    """Coverage over the release's noise (value and bound) for fixed data: the pivot is exact, so >= 0.95 up to
    3 Monte Carlo standard errors over 300 seeds (a wrong alpha or bound margin would show well below)."""
    from dpcore.data import lognormal_incomes

    xs = np.sort(np.clip(lognormal_incomes(500, sigma=0.9, rng=11), 0.0, 250_000.0))
    truth = gini_mechanism.gini(xs)
    profile = gini_mechanism.shared_exact_profile(xs, 0.0, 250_000.0)
    hits = [
        gini_experiments.published_gini(
            xs,
            epsilon=1.0,
            lower=0.0,
            upper=250_000.0,
            noise="laplace",
            gamma=2.0,
            calibration="tight",
            delta=None,
            method="exact",
            seed=s,
            profile=profile,
        )
        for s in range(300)
    ]
    coverage = np.mean([p.lower <= truth <= p.upper for p in hits])
    assert coverage >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 300)


def test_no_published_interval_is_said_why():
    """A noise that is never released, and settings a real release refuses, give a note and no numbers."""
    from dpcore.data import lognormal_incomes

    values = lognormal_incomes(1_000, sigma=0.9, rng=2026)
    view = gini_experiments.gini_view(values, epsilon=1.0, gamma=2.0, lower=0.0, upper=1e6, noise="laplace_lognormal")
    assert view.published is None and "never released" in view.published_note
    assert "published_interval_lower" not in view.numbers()
    view = gini_experiments.gini_view(values, epsilon=2.0, gamma=4.0, lower=0.0, upper=1e6, calibration="paper")
    assert view.published is None and "not possible at these settings" in view.published_note


def test_gini_view_refuses_an_unknown_noise():
    x = np.linspace(1_000, 90_000, 200)
    with pytest.raises(DPInputError, match="noise"):
        gini_experiments.gini_view(x, epsilon=1.0, gamma=2.0, lower=0.0, upper=1e5, noise="student_t")


# ---------------------------------------------------------------------------------------------
# The view's per-data memo of A^(k): exactly dpcore.gini.smooth_sensitivity
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", ["lognormal", "two_point", "small"])
def test_memoised_exact_smooth_sensitivity_equals_the_mechanism(data):
    rng = np.random.default_rng(11)
    if data == "lognormal":
        x, lower, upper = rng.lognormal(10, 1, 1500), 0.0, 400_000.0
    elif data == "two_point":
        td = two_point_incomes(1000, 0.5, None, definition="eq1")
        x, lower, upper = td.values, td.lower, td.upper
    else:
        x, lower, upper = rng.uniform(0, 10, 7), 0.0, 10.0
    xs, _, _ = gini_mechanism.clip_incomes(x, lower=lower, upper=upper, clip_negative=True)
    memo = gini_mechanism.ExactSensitivityProfile(xs, lower, upper)
    # small and large beta, in an order that makes the memo both extend and reuse its A^(k)
    for beta in (0.5, 0.05, 2.0, 0.02, 0.1):
        for k_max in (None, 0, 5, 100):
            got = memo.smooth_sensitivity(beta, k_max=k_max)
            want = gini_mechanism.smooth_sensitivity(
                xs, lower=lower, upper=upper, beta=beta, method="exact", k_max=k_max
            )
            assert (got.value, got.k_star, got.global_sensitivity) == (want.value, want.k_star, want.global_sensitivity)
            np.testing.assert_array_equal(got.A, want.A)
            np.testing.assert_array_equal(got.decay, want.decay)


def test_the_view_and_the_planner_share_one_exact_profile_per_data_set():
    """dpcore.gini.shared_exact_profile: the Gini view's memo and the planner's Gini statistics hold the same
    A^(k) for the same clipped data (each A^(k) computed once per process, not once in each)."""
    from dpcore.planner import statistics as planner_statistics

    xs = np.sort(np.random.default_rng(5).uniform(0, 10, 50))
    view_profile, curves = gini_page._profile_and_curves(xs, 0.0, 10.0)
    assert planner_statistics.gini_exact_profile(xs, 0.0, 10.0) is view_profile
    assert gini_page._profile_and_curves(xs, 0.0, 10.0)[1] is curves
    assert gini_mechanism.shared_exact_profile(xs[1:], 0.0, 10.0) is not view_profile  # other data, other profile
