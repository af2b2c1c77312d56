"""dpcore.percentiles on the real PSEO release table (skips cleanly when ../shared/data is absent)."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore import DPInputError, percentiles
from dpcore.views import percentiles as percentile_experiments


def test_load_pseo_cells_counts_and_levels(pseo_path):
    all_levels = percentile_experiments.load_pseo_cells(pseo_path, agg_level=None)
    assert len(all_levels) == 7679  # the README: 7,679 published y1 cells
    finest = percentile_experiments.load_pseo_cells(pseo_path)
    assert len(finest) == 5073 and set(finest.agg_level) == {48}
    assert (finest.p25 <= finest.p50).all() and (finest.p50 <= finest.p75).all() and (finest.n >= 30).all()
    assert len(percentile_experiments.load_pseo_cells(pseo_path, horizon="y5", agg_level=None)) == 5968
    with pytest.raises(DPInputError, match="horizon"):
        percentile_experiments.load_pseo_cells(pseo_path, horizon="y2")


def test_synthetic_cells_reproduce_published_quartiles(pseo_path):
    cells = percentile_experiments.load_pseo_cells(pseo_path).sample(400, random_state=3)
    vals, cell = percentile_experiments.synthesize_cells(cells, rng=1)
    panel = percentile_experiments.make_cell_panel(vals, cell)
    target = cells[["p25", "p50", "p75"]].to_numpy()
    rel = np.abs(panel.true / target - 1)
    # stratified draws: a sample quartile is within one stratum (1/n of probability) of the target;
    # the two-piece log-normal has density such that this is < 10% even for n = 30, and tiny for big cells
    assert np.all(rel < 0.10)
    big = cells.n.to_numpy() >= 300
    assert np.all(rel[big] < 0.02)
    np.testing.assert_array_equal(panel.n, cells.n.to_numpy())


def test_many_cells_release_is_ordered_for_every_cell(pseo_path):
    cells = percentile_experiments.load_pseo_cells(pseo_path)
    vals, cell = percentile_experiments.synthesize_cells(cells, rng=5)
    counts = percentiles.cell_bin_counts(vals, cell, len(cells), percentiles.PSEO_BIN_EDGES)
    assert counts.sum() == cells.n.sum()
    est = percentiles.simulate_histogram_percentiles(
        counts, percentiles.PSEO_BIN_EDGES, epsilon=0.5, q=(25, 50, 75), n_draws=2, rng=6
    )
    assert est.shape == (2, len(cells), 3)
    assert np.all(np.diff(est, axis=2) >= 0)
