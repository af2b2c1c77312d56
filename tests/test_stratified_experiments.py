"""The method comparison and the sweeps behind the page's paper figures (dpcore.coinpress)."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.coinpress import pure_dp_to_zcdp, stratified_coinpress
from dpcore.stratified import public_weights
from dpcore.validation import DPInputError
from dpcore.views.stratified import (
    GLOBAL_METHODS,
    METHODS,
    gaussian_mixture,
    grouping_sweep,
    mixture_sigma,
    real_epsilon_sweep,
    simulate_methods,
    synthetic_sweep,
)


def _data():
    m = gaussian_mixture(3000, 4, 1.0, rng=5)
    labels = np.array(["a", "b", "c", "d"])[m.groups]
    return m, labels


def test_simulate_methods_structure_and_recombination():
    m, labels = _data()
    pw = public_weights(np.array(["a", "b", "b", "c", "d", "d"]), ["a", "b", "c", "d"])
    sim = simulate_methods(
        m.values,
        labels,
        epsilon=0.8,
        clip_range=3.0,
        lower=-3,
        upper=3,
        sigma=m.sigmas,
        sigma_global=mixture_sigma(m.sizes, m.mus, m.sigmas),
        public_w=pw,
        n_sims=50,
        rng=1,
    )
    assert sim.rho == pytest.approx(pure_dp_to_zcdp(0.8)) == pytest.approx(0.32)
    assert set(sim.overall) == set(METHODS)
    for meth in GLOBAL_METHODS:  # a global method tells every group the overall number
        assert np.all(sim.groups[meth] == sim.overall[meth][:, None])
    np.testing.assert_allclose(sim.overall["StratCoinpress"], sim.groups["StratCoinpress"] @ (m.sizes / m.sizes.sum()))
    np.testing.assert_allclose(sim.overall["PubStratCoinpress"], sim.groups["StratCoinpress"] @ pw)
    np.testing.assert_allclose(
        sim.overall["Stratified Laplace"], sim.groups["Stratified Laplace"] @ (m.sizes / m.sizes.sum())
    )
    np.testing.assert_allclose(sim.true_groups, [m.values[m.groups == j].mean() for j in range(4)])
    with pytest.raises(DPInputError, match="public hold-out"):
        simulate_methods(m.values, labels, epsilon=1, clip_range=3.0, lower=-3, upper=3, sigma=1.0, n_sims=2)
    with pytest.raises(DPInputError, match="unknown methods"):
        simulate_methods(
            m.values, labels, epsilon=1, clip_range=3.0, lower=-3, upper=3, sigma=1.0, n_sims=2, methods=["Magic"]
        )


def test_mixture_sigma_matches_sample():
    m = gaussian_mixture(200_000, 5, 1.0, rng=2)
    assert mixture_sigma(m.sizes, m.mus, m.sigmas) == pytest.approx(m.values.std(), rel=0.01)


def test_clamp_to_prior_is_post_processing_inside_the_prior():
    x = np.array([0.0, 0.1, -0.1, 0.2, 2.5])
    g = np.array([0, 0, 0, 0, 1])  # group 1 has one member: its estimate is very noisy
    outs = [stratified_coinpress(x, g, rho=0.05, lower=-3, upper=3, sigma=1.0, rng=s).per_group[1] for s in range(30)]
    assert max(abs(o) for o in outs) > 3  # without clamping the paper's algorithm can leave the prior
    clamped = [
        stratified_coinpress(x, g, rho=0.05, lower=-3, upper=3, sigma=1.0, rng=s, clamp_to_prior=True).per_group[1]
        for s in range(30)
    ]
    assert all(-3 <= c <= 3 for c in clamped)
    # same noise: clamping only changes the outputs that were outside
    for o, c in zip(outs, clamped, strict=True):
        assert c == pytest.approx(min(max(o, -3), 3))


def test_synthetic_sweep_shape_and_progress():
    calls = []
    rows = synthetic_sweep("n", [1000, 16000], k=4, alpha=1.0, runs=12, rng=3, progress=lambda f, t: calls.append(f))
    assert len(rows) == 2 * 12 * len(METHODS)
    assert calls == [0.5, 1.0]
    err = {(r["n"], r["method"]): [] for r in rows}
    for r in rows:
        err[(r["n"], r["method"])].append(r["error"])
    # noise of the overall mean scales like 1/n: 16x more data is clearly more accurate
    for meth in ("Stratified Laplace", "Global Laplace", "StratCoinpress"):
        assert np.mean(err[(16000, meth)]) < np.mean(err[(1000, meth)])
    with pytest.raises(DPInputError):
        synthetic_sweep("gamma", [1], runs=1)


def test_grouping_sweep_parity_global_vs_stratified():
    rng = np.random.default_rng(0)
    g2 = np.repeat(["x", "y"], 2000)
    g4 = np.repeat(["p", "q", "r", "s"], 1000)
    values = np.concatenate([rng.normal(10, 1, 2000), rng.normal(30, 1, 2000)])
    rows = grouping_sweep(
        values,
        [("two", g2), ("four", g4)],
        epsilon=1.0,
        clip_range=(0.0, 50.0),
        lower=0,
        upper=50,
        sigma=2.0,
        runs=3,
        rng=1,
    )
    assert {r["k"] for r in rows} == {2, 4}
    by = {}
    for r in rows:
        by.setdefault((r["grouping"], r["method"]), []).append(r["parity error"])
    # groups with means 10 and 30: telling both "20" costs relative errors 1 + 1/3; stratifying costs ~0
    assert np.mean(by[("two", "Global Laplace")]) > 1.2
    assert np.mean(by[("two", "Stratified Laplace")]) < 0.05
    assert np.mean(by[("two", "StratCoinpress")]) < 0.05


def test_real_epsilon_sweep_rows():

    rng = np.random.default_rng(1)
    values = np.concatenate([rng.normal(10, 1, 500), rng.normal(30, 1, 500)])
    labels = np.repeat(["x", "y"], 500)
    calls = []
    rows = real_epsilon_sweep(
        values,
        labels,
        [0.1, 1.0],
        clip_range=(0, 50),
        lower=0,
        upper=50,
        sigma=2.0,
        runs=2,
        rng=2,
        progress=lambda f, t: calls.append(f),
    )
    assert len(rows) == 2 * 2 * len(METHODS) and calls == [0.5, 1.0]
    assert {r["epsilon"] for r in rows} == {0.1, 1.0}


def test_laplace_and_coinpress_simulations_are_one_kind_of_result():
    """Both simulations are SimulatedGroupMeans built by one function: the same true means, labels, counts and
    weights on the same data, and the overall release the weighted sum of the group releases."""
    from dpcore.coinpress import simulate_coinpress
    from dpcore.stratified import SimulatedGroupMeans
    from dpcore.views.stratified import simulate_laplace_releases

    m, labels = _data()
    weights = {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}
    lap = simulate_laplace_releases(m.values, labels, epsilon=1.0, clip_range=3.0, weights=weights, n_sims=20, rng=1)
    cp = simulate_coinpress(m.values, labels, rho=0.5, lower=-5, upper=5, sigma=1.0, weights=weights, n_sims=20, rng=1)
    for sim in (lap, cp):
        assert isinstance(sim, SimulatedGroupMeans)
        np.testing.assert_allclose(sim.strat_overall, sim.strat_groups @ sim.weights)
        assert sim.strat_groups.shape == (20, 4) and not sim.strat_groups.flags.writeable
    for field in ("labels", "counts", "weights", "true_groups", "true_overall"):
        np.testing.assert_array_equal(getattr(lap, field), getattr(cp, field), err_msg=field)
    np.testing.assert_allclose(lap.true_groups, [m.values[labels == k].mean() for k in "abcd"])
