"""The exponential-mechanism quantile on a public candidate grid (dpcore.mechanisms.ExponentialQuantileMechanism).

The law is checked twice: the numpy simulation and OpenDP's real draws against the exact permute-and-flip
probabilities; the score sensitivity by brute force over every neighbour of small data; the privacy of the
exact law by the largest log-ratio over neighbours; OpenDP's privacy map against the charged epsilon."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from dpcore import mechanisms
from dpcore.mechanisms import ExponentialQuantileMechanism
from dpcore.percentiles import (
    MAX_EXPONENTIAL_QUANTILES,
    candidate_grid,
    fine_candidate_grid,
    histogram_counts,
)
from dpcore.validation import DPInputError

GRID = (0.0, 10.0, 20.0, 30.0, 40.0, 50.0)  # 6 candidates, 5 bins
VALUES = (5.0, 12.0, 13.0, 25.0, 31.0, 44.0, 47.0)  # one value per bin at least: a score with a clear peak


def _counts(values, grid=GRID) -> np.ndarray:
    return histogram_counts(np.asarray(values, dtype=float), grid, min_size=1).counts[None, :]


def _chi_square_p(choices: np.ndarray, probs: np.ndarray) -> float:
    observed = np.bincount(choices, minlength=probs.size)
    expected = probs * choices.size
    keep = expected >= 5  # pool the rare candidates into one class, as the chi-square test needs
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 5:
        obs, exp = obs[:-1], exp[:-1]
    return float(stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


def test_mechanism_is_in_the_front_door():
    assert mechanisms.ExponentialQuantileMechanism is ExponentialQuantileMechanism
    assert "ExponentialQuantileMechanism" in mechanisms.__all__


def test_simulated_choices_follow_the_exact_law():
    mech = ExponentialQuantileMechanism(1.0, GRID, q=(50,))
    counts = _counts(VALUES)
    probs = mech.selection_probabilities(counts)[0, 0]
    draws = mech.simulate(counts, 40_000, rng=7)[:, 0, 0]
    choices = np.searchsorted(np.asarray(GRID), draws)
    assert _chi_square_p(choices, probs) > 1e-3


def test_opendp_draws_follow_the_same_law():
    """The real sampler (OpenDP, rng=None) and the simulation draw the same law."""
    mech = ExponentialQuantileMechanism(1.0, GRID, q=(50,))
    counts = np.repeat(_counts(VALUES), 3000, axis=0)  # 3,000 cells = 3,000 independent real draws
    d = mech.draw(counts)
    assert not d.simulated and d.map_epsilon == pytest.approx(1.0)
    probs = mech.selection_probabilities(counts[:1])[0, 0]
    assert _chi_square_p(d.choices[:, 0], probs) > 1e-3


def test_law_is_permute_and_flip_not_gumbel():
    """The exact law is permute-and-flip: it puts at least the exponential mechanism's mass on the best candidate
    (McKenna & Sheldon 2020, Theorem 2) and differs from exp(eps u / (2 sensitivity)) on this data."""
    mech = ExponentialQuantileMechanism(1.0, GRID, q=(50,))
    counts = _counts(VALUES)
    u = mech.scores(counts)[0, 0]
    gumbel = np.exp(mech.epsilon * u / (2 * mech.sensitivity))
    gumbel /= gumbel.sum()
    probs = mech.selection_probabilities(counts)[0, 0]
    best = np.argmax(u)
    assert probs[best] > gumbel[best] + 0.01
    assert probs.sum() == pytest.approx(1.0)


def _all_neighbours(values, support):
    for i, v in itertools.product(range(len(values)), support):
        yield values[:i] + (v,) + values[i + 1 :]


@pytest.mark.parametrize("q", [25.0, 50.0, 90.0])
def test_score_sensitivity_by_brute_force(q):
    """Replacing one value (n fixed) moves every score by at most 1, and some neighbour moves one by exactly 1;
    adding or removing one value (rows moving between cells) moves every score by at most 1 too."""
    grid = (5.0,) + GRID[1:]
    mech = ExponentialQuantileMechanism(1.0, grid, q=(q,))
    support = (1.0, 5.0, 9.0, 10.0, 27.0, 50.0, 80.0)  # inside, on the edges and outside the grid
    base = (3.0, 12.0, 25.0, 25.0, 49.0)
    u0 = mech.scores(_counts(base, grid))
    worst = max(np.max(np.abs(mech.scores(_counts(nb, grid)) - u0)) for nb in _all_neighbours(base, support))
    assert worst == pytest.approx(1.0)
    grown = [base + (v,) for v in support] + [base[:i] + base[i + 1 :] for i in range(len(base))]
    assert max(np.max(np.abs(mech.scores(_counts(nb, grid)) - u0)) for nb in grown) <= 1.0 + 1e-12


@pytest.mark.parametrize("m,cells_move", [(1, False), (2, False), (1, True)])
def test_neighbours_release_alike_within_epsilon(m, cells_move):
    """Neighbouring tables both release (none refused) and the exact laws differ by at most e^(epsilon/len(q))."""
    mech = ExponentialQuantileMechanism(0.7, GRID, q=(25, 75), rows_per_person=m, cells_move=cells_move)
    base = (3.0, 12.0, 25.0, 25.0, 49.0, 33.0)
    support = (0.0, 15.0, 45.0, 70.0)
    neighbours = list(_all_neighbours(base, support))
    if m == 2:
        neighbours = [nb2 for nb in neighbours[:8] for nb2 in _all_neighbours(nb, support)]
    if cells_move:
        neighbours += [base + (v,) for v in support] + [base[1:]]
    log_p0 = np.log(mech.selection_probabilities(_counts(base)))
    worst = 0.0
    for nb in neighbours:
        d = mech.draw(_counts(nb), rng=1)
        assert d.percentiles.shape == (1, 2)
        worst = max(worst, float(np.max(np.abs(np.log(mech.selection_probabilities(_counts(nb))) - log_p0))))
    assert worst <= mech.epsilon_per_quantile * (1 + 1e-9)
    assert worst > 0.3 * mech.epsilon_per_quantile  # the bound is not vacuous on this data


@pytest.mark.parametrize("factor", [None, 100, 1000])
@pytest.mark.parametrize("m,cells_move,q", [(1, False, (50,)), (3, False, (25, 50, 75)), (2, True, (10, 90))])
def test_opendp_privacy_map_equals_the_charged_epsilon(m, cells_move, q, factor):
    """Float scores (factor None) or the scores times a whole factor (int64): the same map at the stated
    sensitivity (times the factor), equal to the charged epsilon per quantile."""
    mech = ExponentialQuantileMechanism(1.3, GRID, q=q, rows_per_person=m, cells_move=cells_move)
    meas, map_eps = mech._measurement(factor)
    assert mech.sensitivity == m * (2 if cells_move else 1)
    assert map_eps == pytest.approx(1.3 / len(q), rel=1e-9)
    above = (mech.sensitivity + 1) * (factor or 1)
    assert float(meas.map(above if factor else float(above))) > mech.epsilon_per_quantile
    assert mech.privacy_cost().epsilon == pytest.approx(1.3)


def test_integer_scores_when_the_levels_allow_and_float_otherwise():
    counts = _counts(VALUES)
    whole = ExponentialQuantileMechanism(1.0, GRID, q=(50,)).draw(counts)
    assert "T=i64" in whole.measurement and "times 100" in whole.measurement
    assert "T=i64" in ExponentialQuantileMechanism(1.0, GRID, q=(2.5,)).draw(counts).measurement  # factor 1000
    third = ExponentialQuantileMechanism(1.0, GRID, q=(100 / 3,)).draw(counts)
    assert "T=f64" in third.measurement and third.map_epsilon == pytest.approx(1.0)


def test_several_quantiles_are_ordered_and_record_is_public():
    mech = ExponentialQuantileMechanism(0.5, GRID, q=(75, 25, 50))
    draws = mech.simulate(_counts(VALUES), 500, rng=3)
    assert np.all(draws[:, :, 1] <= draws[:, :, 2]) and np.all(draws[:, :, 2] <= draws[:, :, 0])  # q 25 <= 50 <= 75
    record = mech.record()
    assert record["method"] == "exponential" and record["candidates"] == list(GRID)
    assert record["q"] == [75.0, 25.0, 50.0] and record["epsilon_per_quantile"] == pytest.approx(0.5 / 3)


def test_default_grid_is_the_fine_pseo_grid():
    grid = fine_candidate_grid()
    assert grid[0] == 10_000 and grid[-1] == 614_597 and grid.size == 1001
    assert np.array_equal(candidate_grid("pseo-fine"), grid)
    assert ExponentialQuantileMechanism(1.0).candidates == tuple(grid)
    assert np.max(grid[1:] / grid[:-1]) < 1.006  # relative resolution about 0.4%


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"candidates": []}, "candidate grid"),
        ({"candidates": [5.0]}, "candidate grid"),
        ({"candidates": [0.0, 20.0, 10.0]}, "strictly increasing"),
        ({"candidates": "fine"}, "candidates must be"),
        ({"q": (0,)}, r"\(0, 100\)"),
        ({"q": (100,)}, r"\(0, 100\)"),
        ({"q": (-5, 50)}, r"\(0, 100\)"),
        ({"q": (50, 50)}, "twice"),
        ({"q": tuple(range(10, 10 + 10 * (MAX_EXPONENTIAL_QUANTILES + 1), 10))}, "histogram"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"rows_per_person": 0}, "rows per person"),
    ],
)
def test_bad_input_raises(kwargs, match):
    args = {"epsilon": 1.0, "candidates": GRID, **kwargs}
    with pytest.raises(DPInputError, match=match):
        ExponentialQuantileMechanism(**args)


def test_bad_counts_raise():
    mech = ExponentialQuantileMechanism(1.0, GRID)
    with pytest.raises(DPInputError, match="cells x 5"):
        mech.draw(np.ones((2, 4), dtype=int), rng=0)
    with pytest.raises(DPInputError, match=">= 0"):
        mech.draw(np.array([[1, -1, 0, 0, 0]]), rng=0)
    with pytest.raises(DPInputError, match="whole numbers"):
        mech.draw(np.array([[1.5, 0, 0, 0, 0]]), rng=0)
