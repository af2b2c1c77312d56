"""dpcore.views.planner: each view function against the dpcore.planner / dpcore.risk calls it
stands for, its failures, and the whole-plan view from an array or from a table."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpcore import planner as planner_lib
from dpcore.data import lognormal_incomes
from dpcore.validation import DPInputError
from dpcore.views import planner as planner_experiments

VALUES = lognormal_incomes(3000, sigma=0.9, rng=11)
GROUPS = planner_lib.planning_groups(VALUES.size, seed=11)
PLAN = [
    {"kind": "gini", "params": {"upper": 1e6}, "rel_error": 0.1, "confidence": 0.9},
    {"kind": "group_means", "params": {"upper": 5e5}, "rel_error": 0.05, "confidence": 0.95},
    {"kind": "ratio", "params": {"threshold": 20_000.0}, "rel_error": 0.1, "confidence": 0.95},
]


@pytest.fixture(scope="module")
def specs_and_stats():
    specs = planner_experiments.statistic_specs(PLAN)
    return specs, planner_experiments.build_statistics(VALUES, GROUPS, specs)


def test_accuracy_first_is_solve_epsilon_per_statistic(specs_and_stats):
    specs, stats = specs_and_stats
    view = planner_experiments.accuracy_first(stats, specs, dots_seed=5, n_plausible=400)
    expected = [planner_lib.solve_epsilon(s, sp.target).epsilon for s, sp in zip(stats, specs, strict=True)]
    assert [r.epsilon for r in view.rows] == expected
    assert view.total_epsilon == pytest.approx(sum(expected), rel=1e-12)
    total = view.total_epsilon
    assert view.belief_from_1pct == pytest.approx(0.01 * math.exp(total) / (0.99 + 0.01 * math.exp(total)))
    assert not view.failures and [r.kind for r in view.rows] == ["gini", "group_means", "ratio"]
    # dots: quantiles (i + 1/2)/20 of the simulated relative errors, in percent, same seed
    gini = stats[0]
    sims = gini.simulate(expected[0], 400, rng=5)
    ref = 100 * np.quantile(sims / gini.truth[None, :] - 1, (np.arange(20) + 0.5) / 20, axis=0).T
    np.testing.assert_allclose(view.dots[0].errors_percent, ref, rtol=1e-12)
    assert len(view.dots) == 3 and len(view.dots[1].labels) == 3  # three group means
    json.dumps(view.to_dict())


def test_accuracy_first_reports_an_unreachable_target_and_plans_the_rest():
    plan = [dict(PLAN[0], params={"upper": 5_000.0}), PLAN[1]]
    specs = planner_experiments.statistic_specs(plan)
    view = planner_experiments.accuracy_first(planner_experiments.build_statistics(VALUES, GROUPS, specs), specs)
    assert [label for label, _ in view.failures] == ["Gini index"]
    assert "does not reach" in view.failures[0][1]
    assert [r.kind for r in view.rows] == ["group_means"] and view.dots == ()
    assert view.total_epsilon == view.rows[0].epsilon


def test_budget_first_is_error_quantile(specs_and_stats):
    specs, stats = specs_and_stats
    view = planner_experiments.budget_first(stats, specs, [0.5, 0.25, 1.0])
    for row, stat, spec, eps in zip(view.rows, stats, specs, [0.5, 0.25, 1.0], strict=True):
        assert row.relative_error == stat.error_quantile(eps, spec.confidence)[0]
        assert row.epsilon == eps and row.confidence == spec.confidence
    assert view.total_epsilon == pytest.approx(1.75)
    # more epsilon, less error (the same statistic)
    more = planner_experiments.budget_first(stats, specs, [1.0, 0.5, 2.0])
    assert all(a.relative_error < b.relative_error for a, b in zip(more.rows, view.rows, strict=True))
    with pytest.raises(DPInputError, match="one epsilon per statistic"):
        planner_experiments.budget_first(stats, specs, [1.0])
    with pytest.raises(DPInputError):
        planner_experiments.budget_first(stats, specs, [1.0, -1.0, 1.0])


def test_attacker_belief_formula():
    view = planner_experiments.attacker_belief(3.0, 0.01)
    assert view.largest_belief == pytest.approx(0.01 * math.exp(3) / (0.99 + 0.01 * math.exp(3)), rel=1e-12)
    assert view.curve_epsilons == (0.1, 1.0, 3.0, 5.0)
    priors = np.asarray(view.priors)
    for eps, curve in zip(view.curve_epsilons, view.curves, strict=True):
        np.testing.assert_allclose(curve, priors * math.exp(eps) / (1 - priors + priors * math.exp(eps)), rtol=1e-12)
    with pytest.raises(DPInputError):
        planner_experiments.attacker_belief(1.0, 1.5)


def test_planner_view_from_a_table_equals_the_arrays():
    frame = pd.DataFrame({"income": VALUES, "region": GROUPS})
    by_table = planner_experiments.planner_view(
        frame, statistics=PLAN, income_column="income", group_column="region", allocation=[1.0, 1.0, 1.0]
    )
    specs = planner_experiments.statistic_specs(PLAN)
    stats = planner_experiments.build_statistics(VALUES, GROUPS.astype(str), specs)
    direct = planner_experiments.accuracy_first(stats, specs)
    assert by_table.accuracy.rows == direct.rows
    assert by_table.budget.rows == planner_experiments.budget_first(stats, specs, [1.0, 1.0, 1.0]).rows
    # an array: random planning groups drawn with group_seed
    by_array = planner_experiments.planner_view(VALUES, statistics=PLAN, group_seed=11)
    assert by_array.accuracy.rows == direct.rows and by_array.budget is None
    out = by_table.to_dict()
    assert out["statistics"][0] == {"kind": "gini", "params": {"upper": 1e6}, "rel_error": 0.1, "confidence": 0.9}
    json.dumps(out)


@pytest.mark.parametrize(
    "plan, match",
    [
        ([], "no statistics"),
        ([PLAN[0], PLAN[0]], "planned once"),
        ([{"kind": "median"}], "unknown statistic"),
        ([{"kind": "gini", "rel_error": -0.1}], "rel"),
        ([{"kind": "gini", "confidence": 1.5}], "confidence"),
        ([{"params": {}}], "needs a 'kind'"),
    ],
)
def test_bad_plans(plan, match):
    with pytest.raises(DPInputError, match=match):
        planner_experiments.statistic_specs(plan)


def test_planner_view_bad_columns():
    frame = pd.DataFrame({"income": VALUES[:50], "region": GROUPS[:50]})
    with pytest.raises(DPInputError, match="income_column"):
        planner_experiments.planner_view(frame, statistics=PLAN[:1], income_column="wage")
    with pytest.raises(DPInputError, match="group_column"):
        planner_experiments.planner_view(VALUES, statistics=PLAN[:1], group_column="region")


# ---------------------------------------------------------------------------------------------
# The plan's privacy cost in each currency
# ---------------------------------------------------------------------------------------------


def test_plan_cost_pure_adds_epsilons():
    from dpcore import budget

    cost = budget.compose_plan([("a", budget.pure(0.5)), ("b", budget.pure(0.25))])
    assert (cost.kind, cost.epsilon, cost.delta, cost.rho) == ("pure", 0.75, 0.0, None)


def test_plan_cost_approx_adds_epsilons_and_deltas():
    from dpcore import budget

    cost = budget.compose_plan(
        [("gini", budget.approx(0.4, 1e-6)), ("mean", budget.pure(0.6)), ("other", budget.approx(0.1, 2e-7))]
    )
    assert cost.kind == "approx" and not cost.explicit_conversion
    assert cost.epsilon == pytest.approx(1.1, rel=1e-12) and cost.delta == pytest.approx(1.2e-6, rel=1e-12)


def test_plan_cost_zcdp_composes_rho_and_states_its_epsilon_delta():
    from dpcore import budget

    rho, eps, delta = 0.004, 0.3, 1e-6
    cost = budget.compose_plan([("gini", budget.zcdp(rho)), ("mean", budget.pure(eps))], delta=delta)
    assert cost.kind == "zcdp" and cost.rho == pytest.approx(rho + eps**2 / 2, rel=1e-12)
    # the better of: pure epsilon + converted rho, or everything in zCDP converted (Ledger.spent_approx)
    expected = min(eps + budget.zcdp_to_approx_dp(rho, delta), budget.zcdp_to_approx_dp(rho + eps**2 / 2, delta))
    assert cost.epsilon == pytest.approx(expected, rel=1e-9) and cost.delta == delta
    assert cost.conversion_delta == delta and cost.text.startswith(f"ρ = {rho + eps**2 / 2:.4g} (zCDP)")
    with pytest.raises(DPInputError, match="delta"):
        budget.compose_plan([("gini", budget.zcdp(rho))])


def test_plan_cost_converts_zcdp_explicitly_before_mixing_with_epsilon_delta():
    from dpcore import budget

    rho, delta = 0.01, 1e-7
    with pytest.raises(DPInputError):  # what the library refuses without a delta
        budget.compose_sequential([budget.zcdp(rho), budget.approx(0.5, 1e-6)])
    cost = budget.compose_plan([("a", budget.zcdp(rho)), ("b", budget.approx(0.5, 1e-6))], delta=delta)
    assert cost.kind == "approx" and cost.explicit_conversion and cost.conversion_delta == delta
    assert cost.epsilon == pytest.approx(0.5 + budget.zcdp_to_approx_dp(rho, delta), rel=1e-9)
    assert cost.delta == pytest.approx(1e-6 + delta, rel=1e-12)
    assert "converted to (ε, δ) at δ = 1e-07" in cost.text


@pytest.mark.parametrize("noise, kind", [("cauchy", "pure"), ("laplace", "approx"), ("laplace_lognormal", "zcdp")])
def test_views_cost_the_gini_in_its_noise_currency(noise, kind):
    from dpcore import budget

    params = {"upper": 1e6} if noise == "cauchy" else {"upper": 1e6, "noise": noise, "delta": 1e-6}
    specs = planner_experiments.statistic_specs(
        [{"kind": "gini", "params": params, "rel_error": 0.2, "confidence": 0.8}, PLAN[1]]
    )
    stats = planner_experiments.build_statistics(VALUES, GROUPS, specs)
    view = planner_experiments.budget_first(stats, specs, [0.5, 0.5])
    assert view.cost.kind == kind and view.total_epsilon == 1.0
    gini_cost = planner_experiments.statistic_cost(stats[0], 0.5)
    assert gini_cost == (stats[0].privacy_cost(0.5) if noise != "cauchy" else budget.pure(0.5))
    if kind == "zcdp":
        assert view.cost.epsilon < 1.0  # composing in zCDP beats adding the epsilons
    else:
        assert view.cost.epsilon == pytest.approx(1.0, rel=1e-12)
    json.dumps(view.to_dict())


# ---------------------------------------------------------------------------------------------
# How wide the published intervals will be, before any budget is spent
# ---------------------------------------------------------------------------------------------


def _published_widths(stat, epsilon: float, seed: int) -> np.ndarray:
    """The widths of one simulated release's published intervals (dpcore.published, honest digits)."""
    pub = stat._draw(epsilon, rng=np.random.default_rng(seed)).published
    return np.asarray(pub["upper"], dtype=float) - np.asarray(pub["lower"], dtype=float)


def test_expected_mean_widths_are_the_published_intervals_before_rounding(specs_and_stats):
    """Group means: exact, 2 q_0.95(|Laplace(b)|)/n_g with OpenDP's scale; a release's published interval is that
    width widened by honest-digit rounding only (outwards, at most 2 steps of <= width/20 plus half a step a side)."""
    from dpcore import intervals

    _, stats = specs_and_stats
    means = stats[1]
    width = planner_experiments.expected_interval_width(means, 0.5)
    b = means.mechanism_at(0.5).noise_scale_cents / 100.0
    np.testing.assert_allclose(width.widths, 2 * intervals.laplace_quantile(0.95, b) / means.counts, rtol=1e-12)
    assert width.labels == means.labels and width.unit == "income units" and width.note == ""
    published = _published_widths(means, 0.5, seed=3)
    assert np.all(published >= np.asarray(width.widths) * (1 - 1e-12))
    assert np.all(published <= np.asarray(width.widths) * 1.2)


def test_expected_ratio_and_gini_widths_use_the_release_functions(specs_and_stats):
    from dpcore import gini as gini_mechanism
    from dpcore import intervals
    from dpcore.mechanisms import GiniIntervalMechanism, GiniMechanism

    _, stats = specs_and_stats
    gini, _, ratio = stats
    got = planner_experiments.expected_interval_width(ratio, 1.0)
    ci = intervals.relative_risk_interval(
        ratio.x, ratio.y, ratio.n_x, ratio.n_y, scale=ratio.mechanism_at(1.0).noise_scale, level=0.95
    )
    assert got.widths == (pytest.approx(ci.width, rel=1e-12),)
    got = planner_experiments.expected_interval_width(gini, 1.0)
    cell = GiniMechanism(1.0, gini.lower, gini.upper)
    model = intervals.optimise_gini_split(
        cell.epsilon_cell,
        None,
        "cauchy",
        VALUES.size,
        gini.lower,
        gini.upper,
        0.95,
        gamma=2.0,
        calibration_mode="tight",
    )
    assert got.widths == (pytest.approx(model.model_width, rel=1e-9),) and got.unit == "Gini points"
    # beside the public model, the median width on the planning data: 2 q S_beta(X)/alpha (no clamp reached here)
    plan = GiniIntervalMechanism(1.0, gini.lower, gini.upper, planning_n=VALUES.size).plan
    xs = np.sort(np.clip(VALUES, gini.lower, gini.upper))
    s = gini_mechanism.smooth_sensitivity(xs, lower=gini.lower, upper=gini.upper, beta=plan.beta).value
    assert got.note == f"on the planning data: typically {2 * plan.quantile() * s / plan.release_alpha:.4f}"
    assert planner_experiments.expected_interval_width(gini, 4.0).widest < got.widest  # more epsilon, narrower


def test_expected_percentile_widths_agree_with_independent_releases():
    """The median width over seeded noisy histograms lies between the quartiles of the published widths of 60
    independent simulated releases (the same law; widths are differences of bin edges, so discrete)."""
    stat = planner_lib.make_statistic("percentiles", VALUES, GROUPS)
    width = planner_experiments.expected_interval_width(stat, 0.2)
    assert len(width.widths) == len(stat.labels) and width.note == ""
    published = np.array([_published_widths(stat, 0.2, seed=100 + i) for i in range(60)])
    lo, hi = np.quantile(published, [0.25, 0.75], axis=0)
    assert np.all((lo <= np.asarray(width.widths)) & (np.asarray(width.widths) <= hi))


def test_statistics_without_a_published_interval_say_why():
    exponential = planner_lib.make_statistic("percentiles", VALUES, GROUPS, method="exponential")
    got = planner_experiments.expected_interval_width(exponential, 1.0)
    assert got.widths == () and got.widest is None and "exponential mechanism" in got.note
    lognormal = planner_lib.make_statistic("gini", VALUES, upper=1e6, noise="laplace_lognormal")
    assert "never released" in planner_experiments.expected_interval_width(lognormal, 1.0).note
    with pytest.raises(DPInputError):
        planner_experiments.expected_interval_width(exponential, 0.0)


def test_accuracy_and_budget_views_carry_the_widths_at_their_epsilons(specs_and_stats):
    specs, stats = specs_and_stats
    view = planner_experiments.accuracy_first(stats, specs)
    assert [w.statistic for w in view.interval_widths] == [r.statistic for r in view.rows]
    for w, r, stat in zip(view.interval_widths, view.rows, stats, strict=True):
        assert w.epsilon == r.epsilon
        assert w == planner_experiments.expected_interval_width(stat, r.epsilon)
    budget = planner_experiments.budget_first(stats, specs, [0.5, 1.0, 2.0])
    assert [w.epsilon for w in budget.interval_widths] == [0.5, 1.0, 2.0]
    out = {**view.to_dict(), **budget.to_dict()}
    assert json.loads(json.dumps(out)) == out
    assert len(out["interval_widths"]) == 3 and len(out["budget_interval_widths"]) == 3
    assert planner_experiments.accuracy_first(stats, specs, interval_level=None).interval_widths == ()


def test_widths_too_slow_to_compute_are_said_not_computed(specs_and_stats):
    """Below the floors (measured: minutes of exact convolution or of calibrations) the width is a note, quickly;
    a view asked to skip a kind says so in its place."""
    specs, stats = specs_and_stats
    percentiles = planner_lib.make_statistic("percentiles", VALUES, GROUPS)
    got = planner_experiments.expected_interval_width(percentiles, 0.01)
    assert got.widths == () and "not computed" in got.note
    got = planner_experiments.expected_interval_width(stats[0], 0.02)
    assert got.widths == () and "not computed below ε = 0.05" in got.note
    budget = planner_experiments.budget_first(stats, specs, [0.5, 1.0, 2.0], interval_skip=("gini",))
    assert budget.interval_widths[0].note == planner_experiments.SKIPPED_NOTE
    assert budget.interval_widths[1].widths  # the others are still computed


def test_accuracy_first_dots_of_an_absolute_gini_target_are_in_gini_points():
    spec = planner_experiments.StatisticTarget("gini", (("upper", 1e6),), None, 0.9, abs_error=0.02)
    (stat,) = planner_experiments.build_statistics(VALUES, GROUPS, (spec,))
    view = planner_experiments.accuracy_first((stat,), (spec,), dots_seed=5, n_plausible=400)
    (dots,) = view.dots
    assert dots.errors_percent == () and dots.abs_error == 0.02
    sims = stat.simulate(view.rows[0].epsilon, 400, rng=5)
    ref = np.quantile(sims - stat.truth[None, :], (np.arange(20) + 0.5) / 20, axis=0).T
    np.testing.assert_allclose(dots.errors_abs, ref, rtol=1e-12)
    json.dumps(view.to_dict())
