"""Tables that add up (dpcore.consistency): the least-squares estimate over a hierarchy is the dense GLS, the
integer counts are non-negative and add up in every draw, no level loses accuracy to consistency, the p50
intervals cover at every level, and no split of epsilon makes every level as good as released alone.

Monte Carlo sizes: each bound is checked with a margin of several standard errors of its estimate (said at each
test); the same tests fail when the weights of the least squares are dropped (ordinary least squares), when the
intervals use the level's noise variance or half of the GLS variance, or when the rounding ignores the parent."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpcore import consistency, intervals, noise
from dpcore import percentiles as percentile_mechanisms
from dpcore.validation import DPInputError
from dpcore.views import percentiles as percentile_experiments

# a tree with unequal fan-outs: 12 cells -> 5 groups -> 2 regions -> the total
PARENTS = (np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 4, 4]), np.array([0, 0, 1, 1, 1]), np.array([0, 0]))
TREE = consistency.Hierarchy((12, 5, 2, 1), PARENTS)


def _dense_gls(hierarchy, noisy, variances):
    """The textbook GLS: stack every level's aggregation matrix, solve the weighted normal equations."""
    a_level = [np.eye(hierarchy.sizes[0])]
    for p in hierarchy.parents:
        agg = np.zeros((p.max() + 1, p.size))
        agg[p, np.arange(p.size)] = 1.0
        a_level.append(agg @ a_level[-1])
    a = np.vstack(a_level)
    w = np.concatenate([np.full(m.shape[0], 1.0 / v) for m, v in zip(a_level, variances, strict=True)])
    normal = a.T @ (w[:, None] * a)
    y = np.concatenate(noisy, axis=-2)  # (..., all nodes, bins)
    cells = np.linalg.solve(normal, np.einsum("nk,...kb->...nb", a.T * w[None, :], y))
    cov = np.linalg.inv(normal)
    return [np.einsum("ln,...nb->...lb", m, cells) for m in a_level], [np.diag(m @ cov @ m.T) for m in a_level]


def test_least_squares_is_the_dense_gls_with_its_variances():
    rng = np.random.default_rng(1)
    variances = [4.0, 2.0, 9.0, 1.5]  # one per level, deliberately unequal
    truth = TREE.aggregate(rng.integers(0, 20, (3, 12, 4)).astype(float))  # 3 draws, 4 bins
    noisy = [t + rng.normal(0.0, math.sqrt(v), t.shape) for t, v in zip(truth, variances, strict=True)]
    fit = consistency.least_squares(TREE, noisy, variances)
    dense, dense_var = _dense_gls(TREE, noisy, variances)
    for level in range(TREE.levels):
        np.testing.assert_allclose(fit.estimates[level], dense[level], atol=1e-9)
        np.testing.assert_allclose(fit.variance[level], dense_var[level], rtol=1e-12)
        assert np.all(fit.variance[level] <= variances[level])  # no node loses to its own measurement
        if level:
            np.testing.assert_allclose(TREE.sum_children(fit.estimates[level - 1], level), fit.estimates[level])
    # Hay et al.'s recurrence is the special case of one variance and equal fan-outs: the parent's gap in 1/k shares
    two = consistency.Hierarchy((4, 1), (np.zeros(4, dtype=np.int64),))
    y = [np.array([[3.0], [5.0], [1.0], [7.0]]), np.array([[20.0]])]
    z = consistency.least_squares(two, y, [1.0, 1.0])
    root = (20.0 * 1.0 + 16.0 / 4.0) / (1.0 + 1.0 / 4.0)  # inverse-variance average of 20 (var 1) and 16 (var 4)
    assert z.estimates[1][0, 0] == pytest.approx(root)
    np.testing.assert_allclose(z.estimates[0][:, 0], y[0][:, 0] + (root - 16.0) / 4.0)


def test_projection_is_the_weighted_simplex_projection():
    """Each family's step before rounding: argmin sum (c - x)^2 / w, c >= 0, sum c = total (checked by
    bisection on tau), so the integers are within 1 of it."""
    rng = np.random.default_rng(2)
    x = rng.normal(1.0, 5.0, (7, 3, 12))
    w = rng.uniform(0.5, 3.0, 12)
    total = rng.integers(0, 15, (7, 3, 5)).astype(float)
    got = consistency._project_families(TREE, 0, x, w, total)
    for f, a, b in itertools.product(range(5), range(7), range(3)):
        kids = np.flatnonzero(PARENTS[0] == f)
        lo, hi = -1e6, 1e6
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if np.maximum(0.0, x[a, b, kids] + w[kids] * mid).sum() < total[a, b, f] else (lo, mid)
        want = np.maximum(0.0, x[a, b, kids] + w[kids] * hi) if total[a, b, f] > 0 else 0.0
        np.testing.assert_allclose(got[a, b, kids], want, atol=1e-9)
        assert got[a, b, kids].sum() == pytest.approx(total[a, b, f])


def test_rounding_is_the_nearest_integer_vector_with_the_family_sum():
    """Largest remainders: among integer vectors summing to the parent, none is closer in L1 (brute force)."""
    family = consistency.Hierarchy((4, 1), (np.zeros(4, dtype=np.int64),))
    rng = np.random.default_rng(3)
    for _ in range(40):
        x = rng.uniform(-3.0, 8.0, 4)
        fit = consistency.least_squares(family, [x[:, None], np.array([[x.sum() + rng.normal(0, 2)]])], [4.0, 4.0])
        counts = consistency.nonnegative_integer_counts(family, fit.estimates, fit.subtree_variance)
        p = int(counts[1][0, 0])
        real = consistency._project_families(family, 0, fit.estimates[0].T, fit.subtree_variance[0], np.array([[p]]))
        best = min(
            np.abs(np.array(c) - real[0]).sum() for c in itertools.product(range(p + 1), repeat=4) if sum(c) == p
        )
        assert np.abs(counts[0][:, 0] - real[0]).sum() == pytest.approx(best)
        assert counts[0].sum() == p and counts[0].min() >= 0
    # ties and float sums a hair off an integer: still exact sums, nothing negative
    for x, parent, want in (
        ([0.5, 0.5, 0.5, 0.5], 2.0, None),
        ([2.9999999999, 1.0000000001, 0.0, 0.0], 4.0, [3, 1, 0, 0]),
        ([1e7 + 0.1, 0.2, 0.3, 0.4 - 1e-9], 1e7 + 1.0, [1e7, 0, 0, 1]),
    ):
        est = [np.array(x)[:, None], np.array([[parent]])]
        got = consistency.nonnegative_integer_counts(family, est, [np.ones(4), np.ones(1)])[0][:, 0]
        assert got.sum() == parent and got.min() >= 0 and np.all(np.abs(got - np.array(x)) < 1)
        if want is not None:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("scale", [0.3, 3.0, 40.0])
def test_counts_are_nonnegative_integers_that_add_up_in_every_draw(scale):
    rng = np.random.default_rng(4)
    cells = rng.integers(0, 3, (12, 21))  # mostly tiny counts: the noise pushes many below 0
    cells[0] = 10_000_000  # and one huge cell: float sums of large numbers must still round exactly
    truth = TREE.aggregate(cells)
    noisy = [t[None] + noise.sample_two_sided_geometric(1.0 / scale, (200, *t.shape), rng=rng) for t in truth]
    result = consistency.make_consistent(TREE, noisy, [scale] * 4)
    assert any(np.any(n < 0) for n in noisy)
    for level in range(TREE.levels):
        assert result.counts[level].dtype == np.int64
        assert result.counts[level].min() >= 0
        if level:
            np.testing.assert_array_equal(TREE.sum_children(result.counts[level - 1], level), result.counts[level])


def test_consistent_measurements_are_kept():
    """Non-negative integer measurements that already add up are what is published (nothing to correct)."""
    cells = np.random.default_rng(5).integers(0, 30, (12, 21))
    truth = TREE.aggregate(cells)
    result = consistency.make_consistent(TREE, truth, [2.0, 3.0, 1.0, 5.0])
    for level in range(TREE.levels):
        np.testing.assert_array_equal(result.counts[level], truth[level])
        np.testing.assert_allclose(result.estimates[level], truth[level], atol=1e-9)


# A tree of 2 margins x 4 cells + the total. Every node's median is "tight": D_J* = C_J* - n/2 = 0 and the bin
# below holds the rest of the lower half (bin 10 holds one count), so each one-sided test fails with probability
# close to its nominal 2.5% and the coverage is near the level (0.95-0.975): a variance twice too large gives
# coverage ~0.995, half as large ~0.88.
TIGHT_CELL = np.zeros(21, dtype=np.int64)
TIGHT_CELL[8], TIGHT_CELL[9], TIGHT_CELL[10] = 400, 1, 401
TIGHT = consistency.Hierarchy((8, 2, 1), (np.repeat([0, 1], 4), np.array([0, 0])))


@pytest.mark.parametrize("n_public", [False, True])
def test_p50_intervals_cover_at_every_level(n_public):
    """3,000 draws: coverage standard error <= 0.4 points per level (8, 2 and 1 nodes per draw)."""
    cells = np.tile(TIGHT_CELL, (8, 1))
    shares = consistency.split_epsilon(1.0, 3, (3, 1, 1))
    sim = consistency.simulate(
        TIGHT, cells, list(0.2 / shares), n_draws=3000, rng=6, q=(50,), n_public=n_public
    )  # scales 0.33, 1, 1
    for level in range(3):
        own, published = sim.coverage_least_squares[50.0][level], sim.coverage[50.0][level]
        assert 0.93 <= own <= 0.985, (level, own)
        assert published >= own  # widening to the published value only adds
    assert sim.sum_violations == 0 and sim.negative_consistent == 0


def test_published_interval_holds_its_value_and_contains_the_least_squares_one():
    rng = np.random.default_rng(7)
    truth = TREE.aggregate(rng.integers(0, 5, (12, 21)))
    noisy = [t + noise.sample_two_sided_geometric(0.25, t.shape, rng=rng) for t in truth]
    result = consistency.make_consistent(TREE, noisy, [4.0] * 4)
    edges = percentile_mechanisms.PSEO_BIN_EDGES
    values = percentile_mechanisms.percentiles_from_histogram(result.counts[0].astype(float), edges, [25, 50, 75])
    own = consistency.percentile_intervals(result.estimates[0], result.variance[0], edges, (25, 50, 75))
    published = consistency.percentile_intervals(
        result.estimates[0], result.variance[0], edges, (25, 50, 75), values=values
    )
    assert np.all(published.lower <= values) and np.all(values <= published.upper)
    assert np.all(published.lower <= own.lower) and np.all(own.upper <= published.upper)


def _rmse_setup():
    rng = np.random.default_rng(8)
    cells = rng.integers(0, 60, (12, 21))
    return cells, rng


@pytest.mark.parametrize("weights", [None, (3, 1, 1, 1), (1, 1, 1, 4)])
def test_no_level_loses_accuracy_to_consistency(weights):
    """At every level the published integers' RMSE is <= 1.05x that of the level's own measurement (what releasing
    it alone at its share gives), and the GLS part matches its exact value. 1,000 draws: the RMSE's relative
    standard error is below 1% at the total (21,000 squared errors) and smaller below; an unweighted least
    squares gives the cells 1.10x at the (3, 1, 1, 1) split and the total 2.1x at (1, 1, 1, 4)."""
    cells, rng = _rmse_setup()
    shares = consistency.split_epsilon(1.0, 4, weights)
    scales = list(2.0 / shares)
    sim = consistency.simulate(TREE, cells, scales, n_draws=1000, rng=rng)
    exact = consistency.level_errors(TREE, scales)
    for level in range(4):
        assert sim.rmse_consistent[level] <= 1.05 * sim.rmse_measured[level], level
        assert sim.rmse_measured[level] == pytest.approx(exact.measured[level], rel=0.03)
        assert sim.rmse_least_squares[level] == pytest.approx(exact.least_squares[level], rel=0.03)
    assert sim.sum_violations == 0 and sim.negative_consistent == 0


def test_no_split_makes_every_level_as_good_as_alone():
    """The module docstring's bound: with k >= 2 cells under one total, every split of epsilon leaves one level
    worse than 1.05x the level released alone with all of epsilon (exact GLS errors on a grid of splits); the
    balanced split equalises the levels and is the best of the grid."""
    for k in (2, 5, 40):
        tree = consistency.Hierarchy((k, 1), (np.zeros(k, dtype=np.int64),))
        alone = math.sqrt(consistency.discrete_laplace_variance(2.0))  # epsilon = 1, scale 2/epsilon
        worst = []
        for share in np.linspace(0.01, 0.99, 99):
            errors = consistency.level_errors(tree, [2.0 / share, 2.0 / (1.0 - share)]).least_squares
            worst.append(max(errors) / alone)
        assert min(worst) > 1.05
        balanced = consistency.balanced_split(tree, 1.0, sensitivity=2.0)
        errors = consistency.level_errors(tree, list(2.0 / balanced)).least_squares
        assert balanced.sum() == pytest.approx(1.0)
        assert max(errors) / alone <= min(worst) + 1e-6
        if k > 2:  # each level's error falls with its own share: the minimax equalises them
            assert errors[0] == pytest.approx(errors[1], rel=1e-4)
    # many members per group: each level about epsilon/epsilon_l worse, even is nearly the balanced split
    wide = consistency.Hierarchy((400, 20, 1), (np.repeat(np.arange(20), 20), np.zeros(20, dtype=np.int64)))
    np.testing.assert_allclose(consistency.balanced_split(wide, 1.0, sensitivity=2.0), 1 / 3, rtol=0.05)


def test_pseo_table_by_state(pseo_path):
    """The real PSEO table's cells of two states (institution x degree x cohort; synthesized earnings from each
    published cell) with the state and national margins: sums exact, no level loses, p50 covered."""
    cells = percentile_experiments.load_pseo_cells(pseo_path, agg_level=44)
    cells = cells[cells.state.isin(["MI", "WI"])].reset_index(drop=True)
    edges = percentile_mechanisms.PSEO_BIN_EDGES
    counts = percentile_mechanisms.cell_bin_counts(
        *percentile_experiments.synthesize_cells(cells, rng=1), len(cells), edges
    )
    tree = consistency.hierarchy_from_keys(cells, ["state", "institution", "degree_level", "cohort"], [["state"], []])
    assert tree.sizes == (len(cells), 2, 1)
    scales = list(2.0 / consistency.split_epsilon(1.0, 3))
    sim = consistency.simulate(tree, counts, scales, n_draws=300, rng=9)
    assert sim.sum_violations == 0 and sim.negative_consistent == 0 and max(sim.negative_measured) > 0
    for level in range(3):
        assert sim.rmse_consistent[level] <= 1.05 * sim.rmse_measured[level]
        assert sim.coverage[50.0][level] >= 0.93


def test_hierarchy_from_keys():
    cells = {"state": ["CO", "CO", "TX", "CO", "TX"], "inst": ["a", "a", "c", "b", "c"], "degree": [1, 2, 1, 1, 3]}
    tree = consistency.hierarchy_from_keys(cells, ["state", "inst", "degree"], [[], ["inst", "state"], ["state"]])
    assert tree.columns == (("state", "inst", "degree"), ("state", "inst"), ("state",), ())
    assert tree.sizes == (5, 3, 2, 1)
    assert tree.keys[1] == (("CO", "a"), ("TX", "c"), ("CO", "b")) and tree.keys[2] == (("CO",), ("TX",))
    np.testing.assert_array_equal(tree.parents[0], [0, 0, 1, 2, 1])
    np.testing.assert_array_equal(tree.parents[1], [0, 1, 0])
    np.testing.assert_array_equal(tree.parents[2], [0, 0])
    with pytest.raises(DPInputError, match="same values"):
        consistency.hierarchy_from_keys({"a": [1, 1], "b": [2, 2]}, ["a", "b"], [[]])
    with pytest.raises(DPInputError, match="lack the by columns"):
        consistency.hierarchy_from_keys({"a": [1]}, ["a", "b"], [[]])


@pytest.mark.parametrize(
    ("margins", "message"),
    [
        ([["state"], ["degree"]], "nested"),
        ([["county"]], "not among"),
        ([["state", "state"]], "twice"),
        ([["state"], ["state"]], "listed twice"),
        ([["state", "degree"]], "cells themselves"),
        ("state", "list of lists"),
        ([], "empty"),
        (["state"], "each margin must be a list"),
    ],
)
def test_bad_margins_are_refused_with_what_to_change(margins, message):
    with pytest.raises(DPInputError, match=message):
        consistency.check_margins(["state", "degree"], margins)


def test_bad_inputs():
    with pytest.raises(DPInputError, match="no children"):
        consistency.Hierarchy((3, 3), (np.array([0, 0, 1]),))
    with pytest.raises(DPInputError, match="of 4 levels, got 3"):
        consistency.least_squares(TREE, [np.zeros((12, 2))] * 3, [1.0] * 4)
    with pytest.raises(DPInputError, match="same bins"):
        consistency.least_squares(
            TREE, [np.zeros((12, 2)), np.zeros((5, 3)), np.zeros((2, 2)), np.zeros((1, 2))], [1] * 4
        )
    with pytest.raises(DPInputError, match="finite"):
        consistency.make_consistent(TREE, [np.full((n, 2), np.nan) for n in TREE.sizes], [1.0] * 4)
    with pytest.raises(DPInputError, match="weights"):
        consistency.split_epsilon(1.0, 3, (1, 2))
    with pytest.raises(DPInputError, match="variance"):
        consistency.percentile_intervals(np.ones((2, 21)), [1.0], percentile_mechanisms.PSEO_BIN_EDGES)


def test_discrete_laplace_variance():
    k = np.arange(-2000, 2001)
    for scale in (0.3, 2.0, 20.0):
        pmf = np.exp(-np.abs(k) / scale)
        assert consistency.discrete_laplace_variance(scale) == pytest.approx((pmf * k**2).sum() / pmf.sum(), rel=1e-9)
        assert consistency.discrete_laplace_variance(scale) < 2 * scale**2


def test_percentile_interval_unchanged_by_the_shared_inversion():
    """intervals.percentile_interval is the shared inversion with its exact half-widths."""
    counts = np.array([5, 9, 20, 31, 12, 4, 0, 0, 1, 3, 7, 2, 0, 0, 5, 6, 1, 0, 0, 2, 1], dtype=float)
    r = intervals.percentile_interval(counts, percentile_mechanisms.PSEO_BIN_EDGES, (25, 50), scale=2.0)
    # the values of the code before the inversion was shared (and 300 random tables compared equal)
    assert r.method.endswith("; n noisy") and r.bin_lower.tolist() == [3, 4] and r.bin_upper.tolist() == [4, 5]
