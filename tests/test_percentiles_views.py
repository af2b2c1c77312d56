"""The percentile page's view functions (dpcore.views.percentiles): each equals the mechanisms
called step by step with the documented seeds, returns plain JSON from ``.to_dict()``, and refuses bad
settings with a DPInputError."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.figures import assert_same_spec

from dpcore import percentiles
from dpcore.data import lognormal_incomes
from dpcore.validation import DPInputError
from dpcore.views import percentiles as percentile_experiments


@pytest.mark.parametrize(
    "settings",
    [
        dict(source="synthetic", n=200, epsilon=1.0, scheme="pseo", q=[25, 50, 75], relation="replace", seed=2026),
        dict(
            source="synthetic",
            n=57,
            epsilon=0.3,
            scheme="lognormal",
            n_bins=12,
            q=[10, 50, 90],
            relation="add_remove",
            calibration="paper",
            seed=4,
        ),
        dict(
            source="synthetic",
            n=500,
            epsilon=2.0,
            scheme="custom",
            custom_edges=[10_000, 30_000, 60_000, 614_597],
            q=[50],
            seed=1,
        ),
    ],
)
def test_cell_view_equals_the_mechanisms_step_by_step(settings):
    view = percentile_experiments.cell_view(**settings)
    seed, q = settings["seed"], np.asarray(settings["q"], dtype=float)
    cell = percentile_experiments.synthesize_cell_earnings(
        *percentile_experiments.SYNTH_QUARTILES, settings["n"], rng=percentile_experiments.DATA_SEED
    )
    edges = (
        percentiles.check_edges(settings["custom_edges"])
        if settings["scheme"] == "custom"
        else percentiles.bin_edges(settings["scheme"], settings.get("n_bins", 20))
    )
    relation = settings.get("relation", "replace")
    rel = percentiles.release_percentiles(
        cell, epsilon=settings["epsilon"], edges=edges, q=q, rng=np.random.default_rng(seed + 1), relation=relation
    )
    smooth = percentiles.release_percentiles_smooth(
        cell,
        epsilon=settings["epsilon"],
        q=q,
        rng=np.random.default_rng(seed + 3),
        calibration=settings.get("calibration", "tight"),
    )
    em = percentiles.release_percentiles_em(cell, epsilon=settings["epsilon"], q=q, rng=np.random.default_rng(seed + 4))
    ci = percentiles.percentile_credible_intervals(
        rel.noisy_counts,
        edges,
        epsilon_bin=rel.epsilon_per_bin,
        q=q,
        level=0.9,
        n_samples=2000,
        rng=np.random.default_rng(seed + 2),
    )
    np.testing.assert_array_equal(view.noisy_counts, rel.noisy_counts)
    np.testing.assert_allclose(view.histogram, rel.values, rtol=1e-15)
    np.testing.assert_allclose(view.smooth, smooth.values, rtol=1e-15)
    np.testing.assert_allclose(view.exponential_mechanism, em.values, rtol=1e-15)
    np.testing.assert_allclose(view.interval_histogram[0], ci.lower, rtol=1e-15)
    np.testing.assert_allclose(view.true, percentiles.empirical_percentile(cell, q), rtol=1e-15)
    assert view.epsilon_per_bin == (settings["epsilon"] / 2 if relation == "replace" else settings["epsilon"])
    out = view.to_dict()
    assert json.loads(json.dumps(out)) == out
    assert out["histogram"] == [float(v) for v in rel.values]


def test_cell_curves_view_equals_simulate_accuracy_on_the_same_cell():
    view = percentile_experiments.cell_curves_view(
        source="synthetic", n=150, q=75, n_bins=12, relation="add_remove", seed=8
    )
    cell = percentile_experiments.synthesize_cell_earnings(
        *percentile_experiments.SYNTH_QUARTILES, 150, rng=percentile_experiments.DATA_SEED
    )
    panel = percentile_experiments.make_cell_panel(cell, np.zeros(150, dtype=int), q=[75])
    hist = percentile_experiments.simulate_accuracy(
        panel,
        epsilons=percentile_experiments.CURVE_EPSILONS,
        q=75,
        bin_counts=(12,),
        schemes=("pseo", "lognormal", "even"),
        rivals=(),
        n_draws=200,
        relation="add_remove",
        rng=8,
    )
    expected = hist.groupby(["method", "epsilon"], observed=True, sort=False).rel_accuracy.mean().reset_index()
    got = view.curves[view.curves["method"].astype(str).isin(["pseo", "lognormal", "even"])]
    np.testing.assert_allclose(got["rel_accuracy"].to_numpy(), expected["rel_accuracy"].to_numpy(), rtol=1e-15)
    assert set(view.curves["method"].astype(str)) == {"pseo", "lognormal", "even", "smooth_paper", "smooth_tight", "em"}
    assert sorted(set(view.curves["epsilon"])) == list(percentile_experiments.CURVE_EPSILONS)
    assert json.loads(json.dumps(view.to_dict())) == view.to_dict()


def test_cell_view_on_sidebar_values_and_a_published_cell(pseo_path):
    values = np.r_[lognormal_incomes(3000, sigma=0.9, rng=3), [-10.0, 0.0]]
    view = percentile_experiments.cell_view(values, source="sidebar", n=400, seed=7)
    assert view.n == 400 and view.confidential_n_dropped == 2
    positive = values[values > 0]
    cell = np.random.default_rng(percentile_experiments.DATA_SEED).choice(positive, size=400, replace=False)
    np.testing.assert_allclose(view.true, percentiles.empirical_percentile(cell, (25, 50, 75)))
    published = percentile_experiments.cell_view(source="pseo", cell_number=1)
    largest = percentile_experiments.load_pseo_cells(pseo_path).sort_values("n", ascending=False).iloc[0]
    assert published.n == int(largest.n) and published.cell_info["p50"] == pytest.approx(float(largest.p50))


def test_cell_view_refuses_bad_settings():
    with pytest.raises(DPInputError, match="strictly increasing"):
        percentile_experiments.cell_view(scheme="custom", custom_edges=[10_000, 50_000, 40_000])
    with pytest.raises(DPInputError, match="only 1 person"):
        percentile_experiments.cell_view(n=1)
    with pytest.raises(DPInputError, match="cell source"):
        percentile_experiments.cell_view(source="elsewhere")
    with pytest.raises(DPInputError, match="sidebar"):
        percentile_experiments.cell_view(None, source="sidebar")


def test_many_cells_view_equals_the_steps(pseo_path):
    view = percentile_experiments.many_cells_view(n_cells=120, epsilon=0.5, n_bins=15, seed=3)
    cells = percentile_experiments.load_pseo_cells(pseo_path)
    sub = cells.sample(120, random_state=percentile_experiments.DATA_SEED).reset_index(drop=True)
    values, cell = percentile_experiments.synthesize_cells(sub, rng=percentile_experiments.DATA_SEED)
    panel = percentile_experiments.make_cell_panel(values, cell)
    gen = np.random.default_rng(3)
    for scheme in ("lognormal", "even", "pseo"):
        edges = percentiles.bin_edges(scheme, 15)
        counts = percentiles.cell_bin_counts(panel.values, panel.cell, panel.n_cells, edges)
        est = percentiles.simulate_histogram_percentiles(counts, edges, epsilon=0.5, q=[50], n_draws=20, rng=gen)[
            :, :, 0
        ]
        expected = percentiles.relative_accuracy(est, panel.true[:, 1][None, :]).mean(axis=0)
        got = view.per_cell[view.per_cell["method"] == scheme]["rel_accuracy"].to_numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-15)
    out = view.to_dict()
    assert json.loads(json.dumps(out)) == out and set(out["mean_rel_accuracy"]) == {"lognormal", "even", "pseo"}


@pytest.mark.slow
def test_figures_view_runs_small_and_reports_progress(pseo_path):
    calls = []
    view = percentile_experiments.figures_view(n_cells=50, n_draws=5, seed=2, progress=lambda f, t: calls.append(f))
    assert calls and calls[-1] == pytest.approx(1.0) and all(0 <= f <= 1 for f in calls)
    assert set(view.figure3.loc[view.figure3["method"] == "lognormal", "n_bins"]) == set(range(10, 31))
    assert sorted(set(view.figure1["epsilon"])) == list(percentile_experiments.FIGURE_EPSILONS)
    assert json.loads(json.dumps(view.to_dict())) == view.to_dict()


def test_moved_names_still_resolve_from_dpcore_percentiles():
    assert not hasattr(percentiles, "make_cell_panel")  # the experiments live in dpcore.views only
    assert not hasattr(percentiles, "SmoothSensitivity")  # one name per class
    assert not hasattr(percentiles, "METHOD_LABELS")  # display text lives in ui.percentiles.plots
    with pytest.raises(AttributeError):
        percentiles.no_such_name  # noqa: B018


@pytest.mark.parametrize(
    "view, settings",
    [(percentile_experiments.cell_view, dict(epsilon=bad)) for bad in (0.0, -1.0, float("nan"), float("inf"), "1")]
    + [(percentile_experiments.cell_view, dict(n=bad)) for bad in (0, -5, 1.5, float("nan"))]
    + [(percentile_experiments.cell_view, dict(q=bad)) for bad in ([], [0], [101], [float("nan")])]
    + [
        (percentile_experiments.cell_view, dict(relation="nearby")),
        (percentile_experiments.cell_view, dict(scheme="custom", custom_edges=None)),
        (percentile_experiments.cell_curves_view, dict(q=float("nan"))),
        (percentile_experiments.cell_curves_view, dict(seed=-1)),
    ],
)
def test_hostile_settings_raise_a_clear_error(view, settings):
    with pytest.raises((DPInputError, TypeError)) as caught:
        view(**settings)
    assert str(caught.value)


@pytest.mark.parametrize(
    "settings, y_range",
    [
        (dict(epsilon=0.3, scheme="pseo", q=[25, 50, 75], seed=3), None),
        (dict(epsilon=2.0, scheme="lognormal", n_bins=12, q=[10, 50, 90], seed=4), (-30.0, 70.0)),
        (dict(epsilon=0.1, n=40, scheme="even", n_bins=25, q=[50], relation="add_remove", seed=5), None),
    ],
)
def test_plain_figure_specs_equal_the_plotly_builders(settings, y_range):
    """The page draws the one-cell histogram and CDF from plain specs (no plotly validation per
    ε move); they must be exactly the go.Figure builders' figures."""
    from ui.percentiles import plots as plots_percentiles

    view = percentile_experiments.cell_view(source="synthetic", **settings)
    assert_same_spec(
        plots_percentiles.histogram_figure(view.edges, view.true_counts, view.noisy_counts, y_range=y_range).to_dict(),
        plots_percentiles.histogram_spec(view.edges, view.true_counts, view.noisy_counts, y_range=y_range),
    )
    cdf_args = (view.edges, view.true_counts, view.noisy_counts, view.q, view.histogram, view.true)
    assert_same_spec(plots_percentiles.cdf_figure(*cdf_args).to_dict(), plots_percentiles.cdf_spec(*cdf_args))


@pytest.mark.parametrize(
    "cell", [dict(source="synthetic", n=200), dict(source="synthetic", n=57, relation="add_remove")]
)
def test_answer_at_epsilon_is_the_first_half_of_the_cell_answer(cell):
    """The page computes the sentence per ε and the recommendation once per target: the
    sentence must be percentile_cell_answer's, number for number."""
    statistic = percentile_experiments.cell_answer_statistic(**cell)
    for epsilon in (0.3, 1.7, 0.3):
        full, _ = percentile_experiments.percentile_cell_answer(
            epsilon=epsilon, target_error=2_000.0, confidence=0.9, **cell
        )
        assert percentile_experiments.cell_answer_at_epsilon(statistic, epsilon=epsilon) == full
