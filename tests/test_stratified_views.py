"""The group-means page's view functions (dpcore.views.stratified), called directly: one test per
view function, each checking its numbers against an independent computation."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from support.figures import assert_same_spec

from dpcore import coinpress, stratified
from dpcore.data import build_dataset
from dpcore.validation import DPInputError
from dpcore.views import stratified as strat_experiments

SYNTH = dict(source="synthetic", n=3000, k=5, alpha=1.0, preset=None, seed=11)


def test_the_experiments_live_in_the_views_only():
    assert not hasattr(stratified, "simulate_laplace_releases") and not hasattr(coinpress, "synthetic_sweep")
    assert not hasattr(stratified, "ParityError") and not hasattr(stratified, "global_laplace_mean")  # one name each
    assert not issubclass(stratified.ParityResult, Exception)
    with pytest.raises(AttributeError):
        stratified.no_such_name  # noqa: B018


def test_grouped_data_synthetic_is_the_papers_mixture():
    data = strat_experiments.grouped_data(SYNTH)
    again = strat_experiments.synthetic_groups(3000, 5, 1.0, seed=11)
    assert np.array_equal(data.values, again.values) and np.array_equal(data.groups, again.groups)
    assert data.values.size == 3000 and data.public_groups.size == 1500 and data.k == 5
    assert sorted(set(data.groups)) == [f"G{i}" for i in range(1, 6)]
    assert data.sigma.shape == (5,) and np.all((data.sigma >= 0.1) & (data.sigma <= 2.0))  # U(0.1, 2)
    assert data.sigma_global == pytest.approx(data.values.std(), rel=0.1)
    preset = strat_experiments.grouped_data(
        dict(source="synthetic", n=5000, preset="NY RACE (k=9, paper Table 3)", seed=3)
    )
    assert preset.k == 9
    with pytest.raises(DPInputError, match="unknown data source"):
        strat_experiments.grouped_data(dict(source="magic", seed=1))
    with pytest.raises(DPInputError, match="needs 'n'"):
        strat_experiments.grouped_data(dict(source="synthetic", seed=1))


def test_grouped_data_acs_and_columns():
    acs = strat_experiments.grouped_data(dict(source="acs", variable="AGEP (age, years)", grouping="SEX", seed=5))
    assert set(acs.groups) == {"Male", "Female"} and acs.sigma == 23.554
    assert acs.values.size + acs.public_groups.size in (27_253, 27_252)  # every person, split in halves
    recipe = dict(kind="lognormal", n=400, sigma=0.9, seed=3)
    ds = build_dataset(recipe)
    frame = pd.DataFrame({"income": ds.values, "region": np.tile(["n", "s"], 200)})
    direct = strat_experiments.column_groups(ds.values, frame, ["region"], sigma=1000.0, seed=2)
    assert set(direct.groups) == {"n", "s"} and direct.values.size == 200 and direct.sigma == 1000.0
    with pytest.raises(DPInputError, match="group columns"):
        strat_experiments.column_groups(ds.values, frame, ["nope"], sigma=1.0, seed=2)
    with pytest.raises(DPInputError, match="no columns"):
        strat_experiments.column_groups(ds.values, None, ["region"], sigma=1.0, seed=2)


def test_group_means_view_numbers():
    data = strat_experiments.grouped_data(SYNTH)
    view = strat_experiments.group_means_view(
        data, epsilon=0.5, clip=3.0, prior=[-3.0, 3.0], method="StratCoinpress", seed=4, n_sims=300
    )
    labels = sorted(set(data.groups))
    assert view.labels == tuple(labels) and view.n == 3000 and view.k == 5
    true = [data.values[data.groups == g].mean() for g in labels]
    np.testing.assert_allclose(view.true_means, true, rtol=1e-12)
    assert view.true_overall == pytest.approx(data.values.mean(), rel=1e-12)
    np.testing.assert_allclose(view.shares, [np.mean(data.groups == g) for g in labels])
    np.testing.assert_allclose(view.pubstrat_shares, [np.mean(data.public_groups == g) for g in labels])
    assert view.rho == pytest.approx(0.125) and view.epsilon_at_delta == pytest.approx(
        coinpress.zcdp_to_dp(0.125, 1e-6)
    )
    # the overall StratCoinpress estimate recombines the group releases with the public group shares
    rows = {r["method"]: r for r in view.method_rows()}
    for m in strat_experiments.METHODS:
        e = view.overall[m] - view.true_overall
        assert rows[m]["RMSE of overall"] == pytest.approx(np.sqrt(np.mean(e**2)), rel=1e-12)
        assert rows[m]["one release"] == view.overall[m][0]
        # a global method tells every group the overall number: Definition 11 release by release
        if m in strat_experiments.GLOBAL_METHODS:
            for i in (0, 17, 299):
                phi = stratified.parity_error(
                    view.true_overall, view.overall[m][i], view.true_means, np.full(5, view.overall[m][i])
                )
                assert view.parity[m][i] == pytest.approx(float(phi), rel=1e-12)
        assert rows[m]["mean parity error"] == pytest.approx(view.parity[m].mean(), rel=1e-12)
    assert all(q5 <= q95 for q5, q95 in zip(view.q05, view.q95, strict=True))
    table = view.group_rows()
    assert [r["size"] for r in table] == sorted(view.sizes, reverse=True)
    out = view.to_dict()
    assert json.loads(json.dumps(out)) == out  # plain data only
    assert out["groups k"] == 5 and out["group means"]["method"] == "StratCoinpress"
    again = strat_experiments.group_means_view(
        SYNTH, epsilon=0.5, clip=3.0, prior=[-3.0, 3.0], method="StratCoinpress", seed=4, n_sims=300
    )
    assert again.to_dict() == out  # a recipe gives the very same numbers (what the script relies on)
    with pytest.raises(DPInputError):
        strat_experiments.group_means_view(data, epsilon=0.5, clip=3.0, prior=[-3.0, 3.0], method="Magic", seed=1)


def test_parity_draws_match_definition_11():
    data = strat_experiments.grouped_data(SYNTH)
    labels = stratified.group_index(data.groups).labels
    sim = strat_experiments.simulate_methods(
        data.values,
        data.groups,
        epsilon=1.0,
        clip_range=3.0,
        lower=-3,
        upper=3,
        sigma=data.sigma,
        sigma_global=data.sigma_global,
        public_w=stratified.public_weights(data.public_groups, labels),
        n_sims=20,
        rng=1,
    )
    for m in strat_experiments.METHODS:
        draws = strat_experiments.parity_draws(sim, m)
        for i in range(0, 20, 7):
            phi = stratified.parity_error(sim.true_overall, sim.overall[m][i], sim.true_groups, sim.groups[m][i])
            assert draws[i] == pytest.approx(float(phi), rel=1e-12)


def test_trend_view_synthetic_and_summaries():
    view = strat_experiments.trend_view("k", runs=2, seed=3, n=1000, alpha=1.0)
    assert view.x == "k" and view.grid == (2, 3, 6, 9, 12, 18)
    assert len(view.rows) == 6 * 2 * len(strat_experiments.METHODS)
    summary = view.summary("error")
    first = summary[(summary["k"] == 2) & (summary["method"] == "CoinPress")].iloc[0]
    errors = [r["error"] for r in view.rows if r["k"] == 2 and r["method"] == "CoinPress"]
    assert first["mean"] == pytest.approx(np.mean(errors)) and first["count"] == 2
    assert first["se"] == pytest.approx(np.std(errors, ddof=1) / np.sqrt(2))
    assert set(view.to_dict()["summary"]) == {"error"}
    capped = strat_experiments.trend_view("epsilon", runs=1, seed=3, n=50_000, k=3)
    assert capped.settings["n"] == 20_000  # the page's cap
    with pytest.raises(DPInputError, match="unknown experiment"):
        strat_experiments.trend_view("gamma", seed=1)


def test_trend_view_acs_epsilon_has_parity():
    view = strat_experiments.trend_view("acs_eps", runs=1, seed=2, variable="AGEP (age, years)")
    assert view.measures == ("error", "parity error") and view.grid == strat_experiments.SWEEPS["acs_eps"][1]
    parity = view.summary("parity error")
    assert (parity["mean"] > 0).all()


def test_bounds_view_is_figure_1_and_the_ny_example():
    view = strat_experiments.bounds_view(196_967, 9)
    assert view.actual == pytest.approx(view.example.actual)  # the NY sizes: n and k match
    a = view.curves["alpha"]
    assert a[0] == pytest.approx(0.1) and a[-1] == pytest.approx(1.0) and a.size == 91
    np.testing.assert_allclose(
        view.curves["expected, Dirichlet (Thm. 10)"], stratified.sum_log_expected_dirichlet(196_967, 9, a)
    )
    assert view.example.improvement == pytest.approx(0.72, abs=0.01)  # not the paper's ~80 %
    assert strat_experiments.bounds_view(1000, 9).actual is None
    assert json.loads(json.dumps(view.to_dict()))["ny_example"]["k"] == 9
    with pytest.raises(DPInputError, match="at least k"):
        strat_experiments.bounds_view(50, 100)


def test_accounting_view_costs():
    view = strat_experiments.accounting_view(0.5, 12)
    d = view.to_dict()
    assert d["all_groups"] == 0.5 and d["groups_plus_fresh_global"] == 1.0 and d["if_group_can_change"] == 1.0
    assert d["coinpress_rho"] == 0.125
    assert d["coinpress_epsilon"] == pytest.approx(0.125 + 2 * np.sqrt(0.125 * np.log(1e6)))
    assert d["coinpress_plus_fresh_epsilon"] == pytest.approx(0.25 + 2 * np.sqrt(0.25 * np.log(1e6)))
    assert any("parallel composition" in line for line in d["lines"])


def test_synthesizer_view_runs_on_the_acs_excerpt():
    view = strat_experiments.synthesizer_view(runs=1, seed=4)
    assert view.epsilons == strat_experiments.SYNTH_EPSILONS
    assert len(view.rows) == len(view.epsilons) * 2
    parity = view.summary("parity error")
    assert set(parity["method"]) == {"vanilla (one model)", "stratified (one model per group)"}
    assert set(view.to_dict()["summary"]) == {"parity error", "max disparity"}


def test_group_means_view_on_a_fresh_machine_uses_the_bundled_acs(monkeypatch, tmp_path):
    """Without ../shared/data the ACS views read the copy bundled in dpcore/examples: same numbers."""
    from dpcore.data import catalogue as dpdata

    recipe = dict(source="acs", variable="PINCP (personal income, $)", grouping="SEX × RAC1P", seed=2026)
    settings = dict(epsilon=1.0, clip=(0.0, 200_000.0), prior=[-20_000.0, 500_000.0], seed=2026, n_sims=20)
    with_shared = strat_experiments.group_means_view(recipe, **settings).to_dict()
    monkeypatch.setattr(dpdata, "SHARED_DATA_DIR", tmp_path / "no-shared")
    dpdata._acs_columns.cache_clear()
    try:
        assert dpdata.shared_data_path("acs2019_nist_excerpt_national.csv.gz") is None
        fresh = strat_experiments.group_means_view(recipe, **settings).to_dict()
    finally:
        dpdata._acs_columns.cache_clear()
    assert fresh == with_shared and fresh["groups k"] == 16


def test_columns_recipe_rebuilds_the_sidebar_dataset():
    """What the page's script does for "Sidebar dataset": the recipe carries the dataset's own recipe,
    and grouped_data rebuilds it (dpcore.data.build_dataset) before grouping: same data as the page's."""
    dataset = {"kind": "example", "name": "acs"}
    ds = build_dataset(dataset)
    page = strat_experiments.grouped_data(
        dict(source="columns", columns=["ST"], sigma=50_000.0, seed=3), values=ds.values, frame=ds.frame
    )
    script = strat_experiments.grouped_data(
        dict(source="columns", columns=["ST"], sigma=50_000.0, seed=3, dataset=dataset)
    )
    assert np.array_equal(page.values, script.values) and np.array_equal(page.groups, script.groups)
    assert script.recipe["dataset"] == dataset and page.k == 16  # 16 states in the excerpt


@pytest.mark.parametrize("method, y_range", [("Stratified Laplace", None), ("CoinPress", (-4.0, 4.0))])
def test_plain_figure_specs_equal_the_plotly_builders(method, y_range):
    """The group-means view draws its three charts from plain specs (no plotly validation per
    ε move); each must be exactly the go.Figure builder's figure."""
    from ui.stratified import plots as plots_stratified

    data = strat_experiments.grouped_data(dict(source="synthetic", n=2000, k=6, alpha=0.3, seed=3))
    view = strat_experiments.group_means_view(
        data, epsilon=0.5, clip=3.0, prior=[-3.0, 3.0], method=method, seed=3, n_sims=50
    )
    table = pd.DataFrame(view.group_rows())
    assert_same_spec(
        plots_stratified.group_means_figure(table, method, y_range=y_range, value_label="v").to_dict(),
        plots_stratified.group_means_spec(table, method, y_range=y_range, value_label="v"),
    )
    errs = pd.concat(
        [pd.DataFrame({"method": m, "error": view.overall[m] - view.true_overall}) for m in strat_experiments.METHODS],
        ignore_index=True,
    )
    assert_same_spec(plots_stratified.overall_errors_figure(errs).to_dict(), plots_stratified.overall_errors_spec(errs))
    perr = pd.DataFrame(
        [
            {"method": r["method"], "mean": r["mean parity error"], "q05": r["parity q05"], "q95": r["parity q95"]}
            for r in view.method_rows()
        ]
    )
    assert_same_spec(plots_stratified.parity_figure(perr).to_dict(), plots_stratified.parity_spec(perr))


def test_answer_at_epsilon_is_the_first_half_of_the_group_means_answer():
    """The page builds the answer's statistic once, the sentence per ε and the recommendation per target:
    the sentence must be group_means_answer's, number for number."""
    from dpcore.views import answers

    data = strat_experiments.grouped_data(
        dict(
            source="acs",
            variable=list(strat_experiments.ACS_VARIABLES)[0],
            grouping=list(strat_experiments.ACS_GROUPINGS)[0],
            seed=0,
        )
    )
    clip = (0.0, 150_000.0)
    statistic = strat_experiments.group_means_answer_statistic(data.values, data.groups, clip=clip)
    for epsilon in (0.1, 2.0):
        full, _ = answers.group_means_answer(data.values, data.groups, epsilon=epsilon, clip=clip, target_error=1000.0)
        assert repr(strat_experiments.group_means_answer_at_epsilon(statistic, epsilon=epsilon)) == repr(full)  # NaN


@pytest.mark.parametrize(
    "recipe",
    [
        dict(source="synthetic", n=1000, k=40, alpha=0.05, seed=1),  # single-member groups
        dict(source="synthetic", n=3000, k=5, alpha=1.0, seed=2),
    ],
)
def test_group_means_view_equals_the_simulation_on_the_text_labels(recipe):
    """The view simulates on integer group codes and skips the note-only release when no group has a
    single member: the draws, labels and notes must be those of the text-label calls."""
    data = strat_experiments.grouped_data(recipe)
    view = strat_experiments.group_means_view(
        data, epsilon=0.3, clip=3.0, prior=[-3.0, 3.0], method="StratCoinpress", seed=5, n_sims=100
    )
    labels = stratified.group_index(data.groups).labels
    pw = stratified.public_weights(data.public_groups, labels)
    sim = strat_experiments.simulate_methods(
        data.values,
        data.groups,
        epsilon=0.3,
        clip_range=3.0,
        lower=-3.0,
        upper=3.0,
        sigma=data.sigma,
        sigma_global=data.sigma_global,
        public_w=pw,
        n_sims=100,
        rng=6,
        rho=view.rho,
    )
    assert view.labels == tuple(str(x) for x in sim.labels)
    for m in strat_experiments.METHODS:
        np.testing.assert_array_equal(view.overall[m], sim.overall[m])
    np.testing.assert_array_equal(view.release, sim.groups["StratCoinpress"][0])
    np.testing.assert_array_equal(view.pubstrat_shares, pw)
    notes = stratified.stratified_mean(data.values, data.groups, epsilon=0.3, clip_range=3.0, rng=7).notes
    assert view.notes == tuple(notes)
    assert bool(notes) == (min(view.sizes) <= 1)
