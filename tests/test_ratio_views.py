"""The ratios page's view functions (dpcore.views.ratio), called directly: one test per view
function, each checked against dpcore.ratio's mechanisms with the documented seeds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpcore import data as dpdata
from dpcore import ratio
from dpcore.validation import DPInputError
from dpcore.views import ratio as ratio_experiments

NOISE = dict(epsilon=1.0, mechanism="laplace", delta=None)


def _plain_json(d: dict) -> None:
    assert json.loads(json.dumps(d)) == d


def test_sampling_view_summarises_simulate_rr_sampling():
    view = ratio_experiments.sampling_view(0.3, 0.2, 200, 200, **NOISE, seed=5)
    s = ratio.simulate_rr_sampling(0.3, 0.2, 200, 200, epsilon=1.0, n_sims=ratio_experiments.N_SAMPLING, rng=5)
    assert view.sd_private == s.private.std() and view.median_nonprivate == np.median(s.nonprivate)
    assert view.true_rr == pytest.approx(1.5)
    assert view.privacy_variance_share == pytest.approx(1 - s.nonprivate.var() / s.private.var())
    width = view.bin_mid[1] - view.bin_mid[0]
    assert view.density_private.sum() * width == pytest.approx(1.0)  # a density on the shared bins
    _plain_json(view.to_dict())


def test_intervals_view_simulated_study():
    view = ratio_experiments.intervals_view(200, 150, **NOISE, level=0.9, seed=3, p_x=0.3, p_y=0.2)
    gen = np.random.default_rng(3 + 61)  # the documented offset
    x, y = int(gen.binomial(200, 0.3)), int(gen.binomial(150, 0.2))
    released = ratio.laplace_noised_counts(x, y, epsilon=1.0, rng=gen)
    assert view.true_counts == (x, y) and view.noisy_counts == (released.x_noisy, released.y_noisy)
    names = [r["method"] for r in view.intervals]
    assert names == [
        "Katz on true counts (no privacy)",
        "Theorem 4.2 on true counts (no privacy)",
        "Theorem 4.2 on noisy counts",
        "Theorem 4.5 conservative",
    ]
    cons = ratio.rr_confidence_interval(
        released.x_noisy,
        released.y_noisy,
        200,
        150,
        level=0.9,
        noise_variance=ratio.count_noise(1.0).variance,
        clip=True,
    )
    assert view.intervals[-1]["lower"] == cons.lower and view.privacy_share == cons.privacy_share
    assert [r["method"] for r in view.coverage] == [spec[0] for spec in ratio_experiments.COVER_SPECS]
    base = next(r for r in view.coverage if r["method"] == "Theorem 4.2, no privacy")
    assert base["width / non-private width"] == 1.0
    katz = ratio.simulate_rr_coverage(
        0.3,
        0.2,
        200,
        150,
        epsilon=1.0,
        mechanism="none",
        n_sims=ratio_experiments.N_COVER,
        level=0.9,
        rng=3,
        interval="katz",
    )
    assert view.coverage[0]["coverage"] == katz.coverage
    _plain_json(view.to_dict())


def test_intervals_view_observed_counts_and_bad_input():
    view = ratio_experiments.intervals_view(100, 100, **NOISE, seed=1, x_obs=60.0, y_obs=40.0)
    want = ratio.rr_confidence_interval(60, 40, 100, 100, noise_variance=8.0)
    assert view.true_counts is None and view.coverage is None and "coverage" not in view.to_dict()
    assert view.intervals[-1]["lower"] == pytest.approx(want.lower) and view.intervals[-1]["upper"] == pytest.approx(
        want.upper
    )
    with pytest.raises(DPInputError, match="<= 0"):
        ratio_experiments.intervals_view(100, 100, **NOISE, seed=1, x_obs=-3.0, y_obs=40.0)
    with pytest.raises(DPInputError, match="either"):
        ratio_experiments.intervals_view(100, 100, **NOISE, seed=1)


def test_coverage_heatmap_view():
    view = ratio_experiments.coverage_heatmap_view(100, 300, **NOISE, n_sims=200, seed=4)
    grid = ratio.coverage_grid(ratio_experiments.P_GRID, 100, 300, epsilon=1.0, conservative=True, n_sims=200, rng=4)
    ref = ratio.coverage_grid(ratio_experiments.P_GRID, 100, 300, epsilon=1.0, mechanism="none", n_sims=200, rng=5)
    np.testing.assert_array_equal(view.coverage, grid.coverage)
    np.testing.assert_allclose(view.width_ratio, grid.mean_width / ref.mean_width, rtol=1e-15)
    assert view.small_counts[0, 0] and not view.small_counts[-1, -1]  # 100 * 0.1 < 30, 100 * 0.9 >= 30
    assert len(view.rows()) == 81
    nonprivate = [
        ratio_experiments.coverage_heatmap_view(
            100, 300, epsilon=e, n_sims=200, seed=4, method="Katz (classic, no privacy)"
        )
        for e in (0.1, 8.0)
    ]
    np.testing.assert_array_equal(nonprivate[0].coverage, nonprivate[1].coverage)  # no noise: epsilon plays no part
    with pytest.raises(DPInputError, match="interval method"):
        ratio_experiments.coverage_heatmap_view(100, 300, **NOISE, seed=4, method="Magic")
    _plain_json(view.to_dict())


def test_accuracy_view_is_sample_accuracy_all():
    view = ratio_experiments.accuracy_view(0.45, 0.2, 200, 150, alpha=0.2)
    assert (view.x, view.y, view.n) == (90, 30, 200)
    rows = [r for r in view.rows if r["epsilon"] == 2.0]
    want = ratio.sample_accuracy_all(90, 30, epsilon=2.0, alpha=0.2, n=200)
    assert {r["algorithm"]: r["accuracy"] for r in rows} == {k: 1.0 - float(v) for k, v in want.items()}
    assert {r["epsilon"] for r in view.rows} == set(ratio_experiments.ACC_EPS)
    _plain_json(view.to_dict())


def test_bias_view_is_claim_3_4():
    view = ratio_experiments.bias_view(0.3, 0.1, epsilon=0.25)
    assert [r["n"] for r in view.rows] == list(ratio_experiments.BIAS_N)
    b = ratio.binomial_ratio_bias(50, 0.3, 0.1, epsilon=0.25)
    row = next(r for r in view.rows if r["n"] == 50)
    assert row["private"] == b.bias_private / b.true_ratio and row["E private"] == b.expected_private
    _plain_json(view.to_dict())


def test_odds_ratio_view():
    view = ratio_experiments.odds_ratio_view(0.3, 0.2, 200, 200, epsilon=1.0, mechanism="gaussian", delta=1e-4, seed=5)
    gen = np.random.default_rng(5 + 71)
    x, y = int(gen.binomial(200, 0.3)), int(gen.binomial(200, 0.2))
    table = ratio.noisy_two_by_two(x, 200 - x, y, 200 - y, epsilon=1.0, mechanism="gaussian", delta=1e-4, rng=gen)
    assert view.true_cells == (x, 200 - x, y, 200 - y) and view.noisy_cells == tuple(table.cells)
    assert view.true_or == pytest.approx(0.3 * 0.8 / (0.7 * 0.2))
    assert set(view.coverage) == {"ignoring the noise", "with noise variance", "no privacy"}
    assert view.intervals[-1]["privacy share"] > 0 and view.intervals[0]["privacy share"] == 0
    _plain_json(view.to_dict())


def test_poverty_view_on_the_acs_excerpt():
    view = ratio_experiments.poverty_view("SEX", 2, 1, **NOISE, seed=2026)
    frame = dpdata.acs_frame(("POVPIP", "SEX"))
    x, n_x, y, n_y = dpdata.poverty_counts(frame, "SEX", 2, 1)
    assert view.people == (n_x, n_y) and view.confidential_in_poverty == (x, y)
    released = ratio.laplace_noised_counts(x, y, epsilon=1.0, rng=np.random.default_rng(2026 + 81))
    assert view.noisy_counts == (released.x_noisy, released.y_noisy)
    assert view.rr_without_privacy == pytest.approx((x / n_x) / (y / n_y))
    with pytest.raises(DPInputError, match="two different groups"):
        ratio_experiments.poverty_view("SEX", 1, 1, **NOISE, seed=1)
    _plain_json(view.to_dict())


# ---- bad group sizes and accuracy targets: a DPInputError naming the parameter ----


@pytest.mark.parametrize("view", ["intervals", "odds_ratio", "accuracy"])
@pytest.mark.parametrize(
    "n_x,n_y,message",
    [
        (-5, 100, "n_x must be >= 1"),
        (100, -5, "n_y must be >= 1"),
        (0, 100, "n_x must be >= 1"),
        (2.5, 100, "n_x must be an integer"),
        (100, float("nan"), "n_y must be an integer"),
    ],
)
def test_views_refuse_bad_group_sizes(view, n_x, n_y, message):
    # numpy's bare "n < 0" from the binomial draw (negative), curves for an empty group (0) and int()
    # truncation (2.5) used to come out instead
    calls = {
        "intervals": lambda: ratio_experiments.intervals_view(n_x, n_y, **NOISE, seed=1, p_x=0.3, p_y=0.2),
        "odds_ratio": lambda: ratio_experiments.odds_ratio_view(0.3, 0.2, n_x, n_y, epsilon=1.0, seed=1),
        "accuracy": lambda: ratio_experiments.accuracy_view(0.3, 0.2, n_x, n_y),
    }
    with pytest.raises(DPInputError, match=message):
        calls[view]()


def test_accuracy_view_alpha_is_an_error_tolerance_not_a_probability():
    """alpha is Definition 2.2's accuracy target, an absolute error in x/y: alpha >= x/y is valid (spec 3.1:
    the general CDF), so 1.5 gives an answer; alpha <= 0 or NaN is refused."""
    view = ratio_experiments.accuracy_view(0.3, 0.2, 100, 120, alpha=1.5)
    want = ratio.sample_accuracy_all(30, 24, epsilon=1.0, alpha=1.5, n=120)
    got = {r["algorithm"]: r["accuracy"] for r in view.rows if r["epsilon"] == 1.0}
    assert got == {k: 1.0 - float(v) for k, v in want.items()}
    for bad in (0.0, -0.1, float("nan"), float("inf")):
        with pytest.raises(DPInputError, match="alpha"):
            ratio_experiments.accuracy_view(0.3, 0.2, 100, 120, alpha=bad)
    with pytest.raises(DPInputError, match="p_x"):
        ratio_experiments.accuracy_view(1.5, 0.2, 100, 120)
