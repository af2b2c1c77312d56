"""Light-tailed smooth-sensitivity noises: certified privacy, samplers, Gini wiring.

Every privacy test has a brute-force side (an exact or numerical computation for given shift d and
dilation lambda) that must never beat the certified / cited bound, and a broken-constant side
that must fail, so a wrong constant in dpcore.noise.smooth cannot pass.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore import budget, posterior
from dpcore import gini as G
from dpcore import noise as N
from dpcore.noise import smooth as S
from dpcore.validation import DPInputError

SETTINGS = [(0.25, 1e-6), (1.0, 1e-6), (4.0, 1e-6), (1.0, 1e-3)]


# ------------------------------------------------------------------------------------ registry


def test_registry_names():
    assert set(S.SMOOTH_NOISES) == {"cauchy", "laplace", "laplace_lognormal"}
    assert not hasattr(N, "SMOOTH_NOISES")  # the registry lives in dpcore.noise.smooth only (no import cycle)
    assert all(isinstance(v, str) and v for v in S.SMOOTH_NOISES.values())
    with pytest.raises(DPInputError, match="noise must be one of"):
        S.check_noise("gaussian-ish")


def test_cauchy_entry_is_the_papers_calibration():
    cal = S.smooth_calibration("cauchy", 1.0, gamma=2.0)
    ref = N.smooth_noise_calibration(1.0, 2.0)
    assert (cal.alpha, cal.beta) == (ref.alpha, ref.beta)
    assert cal.cost == budget.pure(1.0) and cal.delta == 0.0


# ------------------------------------------------------------------------------------ Laplace (NRS)


def _numeric_hockey_stick(eps, d, lam):
    """Independent oracle: integrate (p - e^eps q)_+ and (q - e^eps p)_+ by adaptive quadrature."""
    p = lambda u: 0.5 * math.exp(-abs(u))
    q = lambda u: 0.5 * math.exp(-lam) * math.exp(-math.exp(-lam) * abs(u - d))
    pts = sorted({0.0, d})
    out = []
    for f, g in ((p, q), (q, p)):
        h = lambda u: max(f(u) - math.exp(eps) * g(u), 0.0)
        total = 0.0
        edges = [-200.0] + pts + [200.0]
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            total += integrate.quad(h, a, b, limit=400, epsabs=1e-14)[0]
        out.append(total)
    return max(out)


@pytest.mark.parametrize("d,lam,eps", [(0.9, -0.3, 0.5), (-0.4, 0.5, 0.2), (0.3, -0.8, 1.0), (0.0, 0.6, 0.3)])
def test_exact_hockey_stick_matches_quadrature(d, lam, eps):
    exact = S.laplace_smooth_hockey_stick(eps, d, lam)
    assert exact > 1e-4  # a regime where the comparison means something
    assert exact == pytest.approx(_numeric_hockey_stick(eps, d, lam), rel=1e-6, abs=1e-10)


@pytest.mark.parametrize("eps,delta", SETTINGS)
@pytest.mark.parametrize("mode", ["paper", "tight"])
def test_laplace_brute_force_never_beats_certificate(eps, delta, mode):
    cal = S.laplace_smooth_calibration(eps, delta, mode=mode)
    assert cal.certificate <= delta
    assert cal.cost == budget.approx(eps, delta)
    worst = 0.0
    for d in np.linspace(-cal.alpha, cal.alpha, 13):
        for lam in np.linspace(-cal.beta, cal.beta, 13):
            worst = max(worst, S.laplace_smooth_hockey_stick(eps, d, lam))
    assert worst <= cal.certificate * (1 + 1e-9)


def test_laplace_paper_constants():
    cal = S.laplace_smooth_calibration(1.0, 1e-6, mode="paper")
    assert cal.alpha == 0.5
    assert cal.beta == pytest.approx(1.0 / (2 * math.log(2e6)))
    tight = S.laplace_smooth_calibration(1.0, 1e-6, mode="tight")
    assert tight.beta == cal.beta and tight.alpha > 1.2 * cal.alpha  # certified, and less noise


@pytest.mark.parametrize("eps,delta", SETTINGS)
def test_laplace_broken_constants_fail(eps, delta):
    """beta doubled, or alpha pushed past the tight one, gives an exact divergence above delta."""
    cal = S.laplace_smooth_calibration(eps, delta, mode="tight")
    doubled_beta = max(
        S.laplace_smooth_hockey_stick(eps, d, lam)
        for d in (-cal.alpha, cal.alpha)
        for lam in (-2 * cal.beta, 2 * cal.beta)
    )
    assert doubled_beta > delta
    assert S.laplace_smooth_delta(eps, cal.alpha, 2 * cal.beta) > delta
    too_big = 1.25 * cal.alpha
    if too_big < eps:
        assert S.laplace_smooth_delta(eps, too_big, cal.beta) > delta
    paper = S.laplace_smooth_calibration(eps, delta, mode="paper")
    assert max(S.laplace_smooth_hockey_stick(eps, d, paper.beta) for d in (-2 * paper.alpha, 2 * paper.alpha)) > delta


def test_laplace_certificate_monotone_and_refuses_bad_input():
    vals = [S.laplace_smooth_delta(1.0, a, 0.03) for a in (0.2, 0.4, 0.6, 0.8)]
    assert vals == sorted(vals)
    assert S.laplace_smooth_delta(1.0, 1.0, 0.03) == 1.0
    with pytest.raises(DPInputError):
        S.laplace_smooth_calibration(1.0, 0.0)
    with pytest.raises(DPInputError):
        S.laplace_smooth_calibration(1.0, 1e-6, mode="loose")
    with pytest.raises(DPInputError, match="too large"):
        S.laplace_smooth_calibration(1.0, 1e-6, beta=5.0)


def test_laplace_sampler_ks():
    z = S.LaplaceNoise().rvs(50_000, rng=np.random.default_rng(7))
    assert stats.kstest(z, S.LaplaceNoise().cdf).pvalue > 1e-3
    assert stats.kstest(z, stats.laplace.cdf).pvalue > 1e-3
    assert S.LaplaceNoise().abs_quantile(0.99) == pytest.approx(math.log(100))


# ------------------------------------------------------------------------------------ Laplace log-normal


def test_lln_constants_match_bun_steinke():
    cal = S.lln_calibration(rho=0.5, beta=0.05)
    eps_c = 1.0
    sigma = cal.sigma
    # the cubic of Section 3.1.1 and s = e^{-3 sigma^2 / 2}(eps_c - t/sigma)
    assert 5 * (eps_c / 0.05) * sigma**3 - 5 * sigma**2 - 1 == pytest.approx(0.0, abs=1e-9)
    assert cal.alpha == pytest.approx(math.exp(-1.5 * sigma**2) * (eps_c - 0.05 / sigma))
    assert S.lln_epsilon_cdp(cal.alpha, cal.beta, sigma) == pytest.approx(eps_c)
    assert cal.cost == budget.zcdp(0.5)


def test_lln_rho_matches_target_approx_dp():
    cal = S.lln_calibration(1.0, 1e-6)
    assert budget.zcdp_to_approx_dp(cal.rho, 1e-6) <= 1.0
    assert budget.zcdp_to_approx_dp(cal.rho * 1.01, 1e-6) > 1.0


@pytest.mark.parametrize("rho", [0.5, 0.03])
def test_lln_renyi_never_beats_the_theorem(rho):
    """Numerical Renyi divergences at the extreme (d, lambda) stay below a * rho; s doubled does not."""
    cal = S.lln_calibration(rho=rho)
    orders = np.array([1.1, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0])
    worst = np.zeros(orders.size)
    broken = np.zeros(orders.size)
    for d in (-1.0, 1.0):
        for lam in (-cal.beta, cal.beta):
            worst = np.maximum(worst, S.lln_renyi_divergence(orders, cal.sigma, d * cal.alpha, lam, n_grid=3001))
            broken = np.maximum(broken, S.lln_renyi_divergence(orders, cal.sigma, 2 * d * cal.alpha, lam, n_grid=3001))
    assert np.all(worst <= orders * cal.rho)
    assert np.any(broken > orders * cal.rho)


def test_lln_density_integrates_to_one_and_sampler_matches():
    dist = S.LaplaceLogNormal(0.4)
    w = np.linspace(-25, 25, 20001)
    mass = float(np.sum(dist.pdf(np.sinh(w)) * np.cosh(w)) * (w[1] - w[0]))
    assert mass == pytest.approx(1.0, abs=1e-6)
    z = dist.rvs(40_000, rng=np.random.default_rng(11))
    assert stats.kstest(z, dist.cdf).pvalue > 1e-3
    # quantiles of |Z| against the empirical ones (binomial standard error of the empirical CDF)
    for p in (0.5, 0.9, 0.99):
        r = float(dist.abs_quantile(p))
        emp = float(np.mean(np.abs(z) <= r))
        assert abs(emp - p) < 5 * math.sqrt(p * (1 - p) / z.size)
    assert dist.variance == pytest.approx(2 * math.exp(2 * 0.16))
    pts = np.concatenate([np.random.default_rng(3).standard_cauchy(500), [0.0, 1e-9, 3.0, -40.0]])
    reference = dist._log_expect_reference(pts, True) - math.log(2.0)  # one wide uniform y-grid
    assert np.max(np.abs(dist.logpdf(pts) - reference)) < 1e-8
    assert float(np.var(z)) == pytest.approx(dist.variance, rel=0.1)


# ------------------------------------------------------------------------------------ Gini wiring


@pytest.fixture(scope="module")
def incomes():
    return np.random.default_rng(2026).lognormal(10.5, 0.9, size=10_000)


def test_default_noise_is_unchanged(incomes):
    u = float(incomes.max())
    a = G.release_gini(incomes, epsilon=1.0, gamma=2.0, lower=0, upper=u, rng=3)
    b = G.release_gini(incomes, epsilon=1.0, gamma=2.0, lower=0, upper=u, rng=3, noise="cauchy")
    assert a.value == b.value and a.noise == "cauchy" and a.privacy_cost == budget.pure(1.0)


@pytest.mark.parametrize("name,kind", [("cauchy", "pure"), ("laplace", "approx"), ("laplace_lognormal", "zcdp")])
def test_release_and_simulation_for_each_noise(incomes, name, kind):
    u = float(incomes.max())
    rel = G.release_gini(incomes, epsilon=1.0, lower=0, upper=u, noise=name, rng=4)
    assert rel.noise == name and rel.privacy_cost.kind == kind and math.isfinite(rel.value)
    sim = G.simulate_gini_releases(incomes, epsilon=1.0, lower=0, upper=u, noise=name, n_releases=20_000, rng=5)
    assert sim.privacy_cost == rel.privacy_cost
    assert (sim.summary["rmse"] is None) == (name == "cauchy")
    post = posterior.release_posterior(rel)
    lo, hi = post.interval(0.95)
    assert 0 <= lo < hi <= 1
    with pytest.raises(DPInputError):
        G.release_gini(incomes, epsilon=1.0, lower=0, upper=u, noise="student_t")


def test_neighbours_get_alike_noise(incomes):
    """Replace one record: the Laplace release's scales stay within e^beta and the centres within alpha scales."""
    u = float(incomes.max())
    x2 = incomes.copy()
    x2[0] = u
    a = G.release_gini(incomes, epsilon=1.0, lower=0, upper=u, noise="laplace", rng=1, include_confidential=True)
    b = G.release_gini(x2, epsilon=1.0, lower=0, upper=u, noise="laplace", rng=1, include_confidential=True)
    assert math.exp(-a.beta) <= b.noise_scale / a.noise_scale <= math.exp(a.beta)
    shift = abs(a.confidential_true_value - b.confidential_true_value) / a.noise_scale
    assert shift <= a.alpha


def test_issue_target_light_tail_at_eps_1(incomes):
    """The light-tailed noise's target, exact quantiles: Laplace 99th-pct error <= 1/5 of the Cauchy's,
    median <= 1.5x."""
    u = float(incomes.max())
    cauchy = S.smooth_calibration("cauchy", 1.0, gamma=2.0)
    lap = S.smooth_calibration("laplace", 1.0, delta=1e-6)
    xs = np.clip(incomes, 0, u)
    sc = G.smooth_sensitivity(xs, lower=0, upper=u, beta=cauchy.beta).value / cauchy.alpha
    sl = G.smooth_sensitivity(xs, lower=0, upper=u, beta=lap.beta).value / lap.alpha
    dc, dl = S.noise_distribution(cauchy), S.noise_distribution(lap)
    assert sl * dl.abs_quantile(0.99) <= 0.2 * sc * dc.abs_quantile(0.99)
    assert sl * dl.abs_quantile(0.5) <= 1.5 * sc * dc.abs_quantile(0.5)
    assert math.isfinite(dl.variance)


# ------------------------------------------------------------------------------------ planner, ledger, rivals


def test_planner_solves_epsilon_for_each_noise_and_ledger_composes(incomes):
    from dpcore import planner

    u = float(incomes.max())
    target = planner.AccuracyTarget(0.01, 0.95)
    solved = {}
    for name, kind in (("cauchy", "pure"), ("laplace", "approx"), ("laplace_lognormal", "zcdp")):
        stat = planner.make_statistic("gini", incomes, upper=u, noise=name)
        assert stat.privacy_cost(1.0).kind == kind
        sol = planner.solve_epsilon(stat, target)
        solved[name] = sol.epsilon
        # at the solved epsilon the exact probability meets the target
        assert stat.prob_within(sol.epsilon * 1.001, 0.01)[0] >= 0.95 - 1e-9
    assert solved["laplace"] < 0.5 * solved["cauchy"]  # the light tail needs far less epsilon for 1% at 95%
    ledger = budget.Ledger(cap=budget.BudgetCap(epsilon=3.0, delta=1e-5))
    stat = planner.make_statistic("gini", incomes, upper=u, noise="laplace")
    ledger.charge("gini laplace", stat.privacy_cost(1.0))
    ledger.charge("gini cauchy", planner.make_statistic("gini", incomes, upper=u).privacy_cost(1.0))
    assert ledger.spent_approx(1e-6) == pytest.approx((2.0, 1e-6))
    zc = planner.make_statistic("gini", incomes, upper=u, noise="laplace_lognormal").privacy_cost(1.0)
    ledger.charge("gini lln", zc)
    eps_total, delta_total = ledger.spent_approx(1e-6)
    assert eps_total == pytest.approx(3.0, abs=1e-6) and delta_total == pytest.approx(2e-6)
    draw = stat._draw(1.0, rng=3)
    assert 0 <= draw.values[0] <= 1 and draw.delta == 1e-6


def test_percentile_and_ratio_rivals_take_noise():
    from dpcore import percentiles, ratio

    x = np.random.default_rng(1).lognormal(10.5, 0.9, 5000)
    for name, kind in (("cauchy", "pure"), ("laplace", "approx"), ("laplace_lognormal", "zcdp")):
        rel = percentiles.release_percentiles_smooth(x, epsilon=1.0, noise=name, rng=2, upper=300_000)
        assert rel.noise == name and rel.privacy_cost.kind == kind and np.all(np.isfinite(rel.values))
        rr = ratio.smooth_ratio_cauchy(500, 400, epsilon=1.0, noise=name, rng=1, calibration="paper")
        assert math.isfinite(rr.value)
        if name != "cauchy":
            assert rr.privacy_cost.kind == kind
    # laplace per-percentile deltas add up to the total (basic composition)
    lap = percentiles.release_percentiles_smooth(x, epsilon=1.0, noise="laplace", delta=3e-6, rng=2, upper=300_000)
    assert lap.privacy_cost == budget.approx(1.0, 3e-6)
    with pytest.raises(DPInputError):
        percentiles.release_percentiles_smooth(x, epsilon=1.0, noise="nope")


def test_make_release_charges_the_light_tailed_cost_and_labels_the_sampler(incomes, release_account):
    from dpcore import planner, release

    u = float(incomes.max())
    stats_ = [
        (planner.make_statistic("gini", incomes, upper=u, noise="laplace"), 1.0),
        (planner.make_statistic("gini", incomes, upper=u, noise="laplace_lognormal"), 1.0),
    ]
    # the Laplace noise is a real release (OpenDP's sampler), charged (epsilon, delta); the log-normal one has no
    # float-safe sampler, so it is only simulated (seeded numpy, never charged), its record in its own currency
    records = release.make_release([stats_[0]], release_account) + release.simulate_release(
        [stats_[1]], rng=np.random.default_rng(5)
    )
    assert [r.cost["kind"] for r in records] == ["approx", "zcdp"]
    assert "opendp" in records[0].measurement.lower() and "NOT for real releases" in records[1].sampler
    assert all(0.0 <= r.released[0] <= 1.0 for r in records)
    assert release_account.spent() == {"epsilon": pytest.approx(1.0), "delta": pytest.approx(1e-6)}


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-9), (2.0, 1e-2), (8.0, 1e-6), (0.5, 1e-4)])
def test_laplace_random_neighbours_never_beat_certificate(eps, delta):
    """Random (shift, dilation) inside the box, other (eps, delta) regimes: exact <= certified <= delta."""
    cal = S.laplace_smooth_calibration(eps, delta, mode="tight")
    gen = np.random.default_rng(int(eps * 1000) + 17)
    d = gen.uniform(-cal.alpha, cal.alpha, 300)
    lam = gen.uniform(-cal.beta, cal.beta, 300)
    worst = max(S.laplace_smooth_hockey_stick(eps, a, b) for a, b in zip(d, lam, strict=True))
    assert worst <= cal.certificate <= delta


@pytest.mark.parametrize("name", ["laplace", "laplace_lognormal"])
def test_posterior_interval_coverage_for_light_noise(name):
    """With g drawn from the prior (uniform), the 90% equal-tail interval covers g 90% of the time."""
    from dpcore.posterior import gini_posterior_batch

    cal = S.smooth_calibration(name, 1.0)
    dist = S.noise_distribution(cal)
    gen = np.random.default_rng(5)
    m, scale = 800, 0.05
    truth = gen.uniform(0, 1, m)
    released = truth + scale * dist.rvs(m, gen)
    batch = gini_posterior_batch(released, noise_scale=scale, noise=dist, level=0.9, n_uniform=257, n_local=150)
    covered = np.mean((batch.lower <= truth) & (truth <= batch.upper))
    assert abs(covered - 0.9) < 4 * math.sqrt(0.9 * 0.1 / m)


def test_lln_dilation_far_beyond_t_is_caught():
    """The Bun-Steinke bound has slack (numerical D_a <= 0.38 a rho at the extreme (s, t)), so t doubled is not
    detectable; a dilation of 4 t is (D_a > a rho at high orders): the check does see the t-direction."""
    cal = S.lln_calibration(rho=0.5)
    orders = np.array([8.0, 16.0, 32.0])
    worst = np.zeros(orders.size)
    for d in (-cal.alpha, cal.alpha):
        for lam in (-4 * cal.beta, 4 * cal.beta):
            worst = np.maximum(worst, S.lln_renyi_divergence(orders, cal.sigma, d, lam, n_grid=3001))
    assert np.any(worst > orders * cal.rho)


def test_light_noise_real_release_uses_opendp_laplace_and_refuses_lognormal_before_charging(tmp_path):
    """Release mode: the Laplace smooth noise is drawn by OpenDP's float-safe sampler; the
    log-normal one has no such sampler and is refused from public settings, before any charge."""
    from dpcore import ledger, planner, release

    x = np.random.default_rng(3).lognormal(10.0, 1.0, 500)
    acct = ledger.open_ledger(f"sqlite:///{tmp_path / 'l.db'}").account("light", cap_epsilon=5.0, cap_delta=1e-3)
    rec = release.make_release([(planner.make_statistic("gini", x, upper=1e6, noise="laplace"), 1.0)], acct)[0]
    assert "opendp" in rec.measurement.lower() and rec.delta > 0 and 0.0 <= rec.released[0] <= 1.0
    spent = acct.spent_epsilon()
    lognormal = planner.make_statistic("gini", x, upper=1e6, noise="laplace_lognormal")
    with pytest.raises(DPInputError, match="not offered"):
        release.make_release([(lognormal, 1.0)], acct)
    assert acct.spent_epsilon() == spent and len(acct.entries()) == 1
