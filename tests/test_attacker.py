"""The attacker game (dpcore.views.attacker): bound, optimal attacker, intervals, rounds.

Monte Carlo tolerances come from the binomial standard error sqrt(p(1-p)/rounds) (4.5 SE: a false
alarm about once in 150,000 runs per check), never guessed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore import noise
from dpcore.validation import DPInputError
from dpcore.views import attacker as attacker_lib

ROUNDS = 200_000
Z = 4.5


def _mc_tolerance(p: float, rounds: int = ROUNDS) -> float:
    return Z * math.sqrt(p * (1 - p) / rounds)


def test_bound_formula():
    assert attacker_lib.attacker_bound(1.0) == pytest.approx(math.e / (1 + math.e), rel=1e-15)
    assert attacker_lib.attacker_bound(1e-9) == pytest.approx(0.5, abs=1e-9)
    assert attacker_lib.attacker_bound(50.0) == pytest.approx(1.0, abs=1e-15)
    with pytest.raises(DPInputError):
        attacker_lib.attacker_bound(0.0)


@pytest.mark.parametrize("mechanism", attacker_lib.MECHANISMS)
@pytest.mark.parametrize("epsilon", [0.25, 1.0, 3.0])
def test_optimal_attacker_within_bound_and_matches_exact(mechanism, epsilon):
    summary = attacker_lib.simulate_optimal_attacker(mechanism, epsilon, rounds=ROUNDS, seed=11)
    bound = attacker_lib.attacker_bound(epsilon)
    assert summary.rate <= bound + _mc_tolerance(bound)
    # the simulated optimal attacker agrees with its exact success probability (1/2 + TV/2)
    assert abs(summary.rate - summary.exact_success) <= _mc_tolerance(summary.exact_success)
    assert summary.exact_success <= bound + 1e-12


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0])
def test_laplace_count_gets_close_to_the_bound(epsilon):
    """Continuous Laplace count: exact success 1 - e^(-eps/2)/2, within eps^3/48 of the bound near 0;
    the discrete Laplace (two-sided geometric) count attains the bound exactly."""
    bound = attacker_lib.attacker_bound(epsilon)
    laplace = attacker_lib.simulate_optimal_attacker("count", epsilon, rounds=ROUNDS, seed=3)
    assert laplace.exact_success == pytest.approx(1 - 0.5 * math.exp(-epsilon / 2), rel=1e-14)
    assert bound - laplace.rate <= bound - laplace.exact_success + _mc_tolerance(bound)
    if epsilon <= 0.5:
        assert bound - laplace.rate <= 0.015 + _mc_tolerance(bound)
    geometric = attacker_lib.simulate_optimal_attacker("count_geometric", epsilon, rounds=ROUNDS, seed=4)
    assert geometric.exact_success == pytest.approx(bound, rel=1e-14)
    assert abs(geometric.rate - bound) <= _mc_tolerance(bound)


def test_percentile_exact_success_is_the_half_epsilon_bound():
    setup = attacker_lib.game_setup("percentile", 1.0)
    assert setup.exact_success == pytest.approx(attacker_lib.attacker_bound(0.5))


def test_gini_exact_success_by_enumeration_of_a_grid():
    """1/2 + TV/2 by a brute-force Riemann sum of max(p_in, p_out) on a wide grid."""
    setup = attacker_lib.game_setup("gini", 1.0)
    law = noise.GeneralizedCauchy(setup.gamma)
    y = np.linspace(-2000, 2000, 20_000_001)
    p_in = law.pdf((y - setup.statistic_in) / setup.noise_scale_in) / setup.noise_scale_in
    p_out = law.pdf((y - setup.statistic_out) / setup.noise_scale_out) / setup.noise_scale_out
    brute = 0.5 * np.sum(np.maximum(p_in, p_out)) * (y[1] - y[0])
    assert setup.exact_success == pytest.approx(brute, abs=2e-4)


def test_likelihood_ratio_is_bounded_by_epsilon():
    """Pure eps-DP: |log p_in(y) - log p_out(y)| <= eps at every release (what the bound rests on)."""
    for mechanism in attacker_lib.MECHANISMS:
        setup = attacker_lib.game_setup(mechanism, 0.7)
        if mechanism == "percentile":
            grid = np.stack(np.meshgrid(np.arange(-20, 25), np.arange(-20, 25)), -1).reshape(-1, 2)
        elif mechanism == "gini":
            grid = np.linspace(-50, 50, 200_001)
        else:
            centre = setup.statistic_in
            grid = np.linspace(centre - 40 * setup.noise_scale_in, centre + 40 * setup.noise_scale_in, 100_001)
            if mechanism == "count_geometric":
                grid = np.round(grid)
        llr = attacker_lib.log_likelihood_ratio(setup, grid)
        assert np.max(np.abs(llr)) <= 0.7 + 1e-9, mechanism
        if mechanism in ("count", "count_geometric", "percentile"):
            assert np.max(np.abs(llr)) == pytest.approx(0.7 if mechanism != "percentile" else 0.7)


def test_mean_sensitivity_uses_public_bounds():
    setup = attacker_lib.game_setup(
        "mean", 1.0, n=50, lower=0.0, upper=500_000.0, target_income=500_000.0, stand_in_income=0.0
    )
    assert setup.statistic_in - setup.statistic_out == pytest.approx(500_000.0 / 50)
    assert setup.noise_scale_in == pytest.approx(500_000.0 / 50)
    assert setup.exact_success == pytest.approx(1 - 0.5 * math.exp(-0.5))


def test_rounds_are_reproducible_and_secrets_balanced():
    setup = attacker_lib.game_setup("count", 1.0)
    a = attacker_lib.play_round(setup, 123)
    b = attacker_lib.play_round(setup, 123)
    assert a == b
    secrets = [attacker_lib.play_round(setup, s).confidential_secret for s in range(4000)]
    assert abs(np.mean(secrets) - 0.5) <= Z * math.sqrt(0.25 / 4000)


def test_view_to_dict_has_no_secret():
    view = attacker_lib.attacker_view("mean", 1.0, 5)
    text = repr(view.to_dict())
    assert "secret" not in text
    assert view.confidential_secret in (True, False)


def test_percentile_round_release_is_a_median_of_the_noisy_histogram():
    from dpcore import percentiles

    view = attacker_lib.attacker_view("percentile", 2.0, 9)
    assert percentiles.PSEO_BIN_EDGES[0] <= view.round.release <= percentiles.PSEO_BIN_EDGES[-1]
    assert view.round.release_bins is not None
    assert view.round.optimal_guess == bool(attacker_lib.optimal_guess(view.setup, [view.round.release_bins])[0])


def test_clopper_pearson_interval():
    low, high = attacker_lib.success_interval(7, 10, 0.95)
    assert low == pytest.approx(stats.beta.ppf(0.025, 7, 4))
    assert high == pytest.approx(stats.beta.ppf(0.975, 8, 3))
    assert attacker_lib.success_interval(0, 10)[0] == 0.0
    assert attacker_lib.success_interval(10, 10)[1] == 1.0
    assert attacker_lib.success_interval(0, 0) == (0.0, 1.0)
    # coverage: at p = 0.73 and 30 rounds the interval covers at least 95% of the time (exact computation)
    p, n = 0.73, 30
    covered = sum(
        stats.binom.pmf(k, n, p)
        for k in range(n + 1)
        if attacker_lib.success_interval(k, n)[0] <= p <= attacker_lib.success_interval(k, n)[1]
    )
    assert covered >= 0.95


def test_summary_for_a_player():
    summary = attacker_lib.success_summary(18, 25, epsilon=1.0, mechanism="count")
    assert summary.rate == pytest.approx(0.72)
    assert summary.bound == pytest.approx(attacker_lib.attacker_bound(1.0))
    assert summary.consistent_with_bound
    assert not attacker_lib.success_summary(990, 1000, epsilon=0.5).consistent_with_bound
    assert summary.to_dict()["interval"][0] < 0.72 < summary.to_dict()["interval"][1]


@pytest.mark.parametrize(
    "bad",
    [
        dict(mechanism="median", epsilon=1.0),
        dict(mechanism="count", epsilon=0.0),
        dict(mechanism="count", epsilon=1.0, target_income=50_000.0),  # same side of the threshold
        dict(mechanism="mean", epsilon=1.0, target_income=10_000.0),  # equals the stand-in
        dict(mechanism="mean", epsilon=1.0, target_income=900_000.0),  # outside the bounds
        dict(mechanism="count", epsilon=1.0, n=2),
    ],
)
def test_bad_settings_raise_dpinputerror(bad):
    with pytest.raises(DPInputError):
        attacker_lib.game_setup(**bad)


@pytest.mark.parametrize("mechanism", [m for m in attacker_lib.MECHANISMS if m != "percentile"])
def test_hint_densities_integrate_to_one_and_respect_epsilon(mechanism):
    from ui.attacker import plots as plots_attacker

    setup = attacker_lib.game_setup(mechanism, 1.0)
    grid, dens_in, dens_out, discrete = plots_attacker.release_densities(setup)
    mass = dens_in.sum() if discrete else np.trapezoid(dens_in, grid)
    assert 0.9 < mass <= 1.0 + 1e-9
    assert np.all(np.abs(np.log(dens_in) - np.log(dens_out)) <= 1.0 + 1e-9)
