"""The planner's exponential-mechanism median (ExponentialPercentilesStatistic) and the method recommendation."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore import percentiles, planner
from dpcore.plan import parse_plan, plan_from_planner, write_plan
from dpcore.validation import DPInputError


@pytest.fixture(scope="module")
def cells():
    rng = np.random.default_rng(11)
    x = np.round(np.exp(11.0 + 0.75 * rng.standard_normal(1200)))
    return x, rng.choice(["A", "B"], x.size)


def test_one_median_needs_less_epsilon_than_the_histogram(cells):
    """The reason for the recommendation, on planning data: the same target (every cell's median within 3% with
    probability 0.9) is met at a smaller epsilon by the exponential mechanism."""
    x, g = cells
    target = planner.AccuracyTarget(0.03, 0.9)
    em = planner.make_statistic("percentiles", x, g, method="exponential", n_sims=400)
    hist = planner.make_statistic("percentiles", x, g, q=(50,), n_sims=400)
    assert isinstance(em, planner.ExponentialPercentilesStatistic) and em.q == (50.0,)
    eps_em = planner.solve_epsilon(em, target).epsilon
    eps_hist = planner.solve_epsilon(hist, target).epsilon
    assert eps_em < 0.7 * eps_hist


def test_draws_are_candidates_and_cost_is_epsilon(cells):
    x, g = cells
    em = planner.make_statistic("percentiles", x, g, method="exponential", q=(25, 75), n_sims=100)
    values = em.simulate_draw(1.0, rng=3)
    assert values.shape == (4,) and set(values) <= set(percentiles.fine_candidate_grid())
    assert values[0] <= values[1] and values[2] <= values[3]  # per cell: p25 <= p75
    assert em.privacy_cost(0.8).epsilon == pytest.approx(0.8)
    assert em.simulate(1.0, 50, rng=1).shape == (50, 4)
    with pytest.raises(DPInputError, match="replace-one"):
        planner.ExponentialPercentilesStatistic((x,), relation="add_remove")
    with pytest.raises(DPInputError, match="method"):
        planner.make_statistic("percentiles", x, g, method="smooth")


def test_plan_from_planner_writes_the_exponential_method(cells):
    x, g = cells
    em = planner.make_statistic("percentiles", x, g, method="exponential", n_sims=100)
    plan = plan_from_planner([(em, 1.0)], dataset="d", income="earnings", cap_epsilon=2.0, by=["group"])
    spec = parse_plan(write_plan(plan)).statistics[0]
    assert (spec.method, spec.bins_scheme, spec.q) == ("exponential", "pseo-fine", (50.0,))


@pytest.mark.parametrize(
    "q,method,words",
    [
        ((50,), "exponential", "whole ε"),
        ((90,), "exponential", "p90"),
        ((25, 50, 75), "histogram", "p25, p50, p75 and the histogram itself"),
        ((100,), "histogram", "below 100"),
    ],
)
def test_recommendation(q, method, words):
    advice = planner.recommend_percentiles_method(q)
    assert advice.method == method and words in advice.reason
