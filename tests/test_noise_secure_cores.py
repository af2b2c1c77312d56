"""Real-release noise on every core (dpcore.noise.secure.draw_on_cores) and the release's step times.

One OpenDP measurement is invoked on contiguous slices of the input in a thread pool. Each measurement
used for releases adds independent noise per entry, so the concatenated draws must have the law of one
call: the tests check the pooled draws against the exact discrete Laplace PMF (chi-square, the helper of
test_noise_secure), that the slices are not copies of one another, that the measurement text and the
privacy map do not change, and that a release through ``run_plan`` states the same measurement.
"""

from __future__ import annotations

import io
import threading

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from test_noise_secure import P_MIN, _chi_square_p

from dpcore import noise
from dpcore.engines import Progress, execute, parse_source
from dpcore.noise import secure as secure_noise
from dpcore.plan import plan_from_dict
from dpcore.validation import DPInputError

SLICE = secure_noise.MIN_DRAWS_PER_THREAD


def test_sliced_counts_keep_measurement_and_privacy_map_and_pool_to_discrete_laplace():
    scale = 2.0
    whole = secure_noise.release_integer_counts(np.zeros(8, dtype=np.int64), scale=scale, sensitivity=2, threads=1)
    sliced = secure_noise.release_integer_counts(
        np.zeros(4 * SLICE, dtype=np.int64), scale=scale, sensitivity=2, threads=4
    )
    assert (sliced.measurement, sliced.privacy_map, sliced.epsilon, sliced.delta) == (
        whole.measurement,
        whole.privacy_map,
        whole.epsilon,
        whole.delta,
    )
    values = np.asarray(sliced.values)
    assert values.dtype == np.int64 and values.shape == (4 * SLICE,) and not sliced.simulated
    pmf = lambda k: noise.two_sided_geometric_pmf(k, 1.0 / scale)
    assert _chi_square_p(values, pmf) > P_MIN
    # the test has power: a 15% larger scale is rejected on the same draws
    assert _chi_square_p(values, lambda k: noise.two_sided_geometric_pmf(k, 1.0 / (1.15 * scale))) < P_MIN
    parts = values.reshape(4, SLICE)
    for a in range(4):  # independent slices: no thread repeats another's stream
        for b in range(a + 1, 4):
            assert not np.array_equal(parts[a], parts[b])
            assert abs(np.corrcoef(parts[a], parts[b])[0, 1]) < 6 / np.sqrt(SLICE)


def test_sliced_real_values_keep_the_float_laplace_and_gaussian_measurements():
    lap_one = secure_noise.release_real_values(np.zeros(4), scale=3.0, sensitivity=1.0, threads=1)
    lap = secure_noise.release_real_values(np.zeros(2 * SLICE), scale=3.0, sensitivity=1.0, threads=2)
    assert (lap.measurement, lap.privacy_map, lap.epsilon) == (
        lap_one.measurement,
        lap_one.privacy_map,
        lap_one.epsilon,
    )
    assert stats.kstest(lap.values, stats.laplace(scale=3.0).cdf).pvalue > P_MIN
    gauss_one = secure_noise.release_gaussian_values(np.zeros(4), sigma=2.0, sensitivity=1.0, threads=1)
    gauss = secure_noise.release_gaussian_values(np.zeros(2 * SLICE), sigma=2.0, sensitivity=1.0, threads=2)
    assert (gauss.measurement, gauss.privacy_map, gauss.rho) == (
        gauss_one.measurement,
        gauss_one.privacy_map,
        gauss_one.rho,
    )
    assert stats.kstest(gauss.values, stats.norm(scale=2.0).cdf).pvalue > P_MIN


def test_draw_on_cores_hands_contiguous_numpy_slices_to_one_measurement_on_several_threads():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    measurement = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), scale=0.05)
    calls: list[tuple[int, type, int, int]] = []
    lock = threading.Lock()
    # every slice waits for the other two before drawing: the three are drawn at the same time, on three
    # threads (without it a fast first slice could free its thread for the next one on a loaded machine)
    together = threading.Barrier(3, timeout=60)

    def recorded(values):  # the real measurement, with a note of what each thread handed it
        with lock:
            calls.append((threading.get_ident(), type(values), int(values[0]), int(values.size)))
        together.wait()
        return measurement(values)

    n = 3 * SLICE + 5
    values = np.arange(n, dtype=np.int64) * 1000
    out = secure_noise.draw_on_cores(recorded, values, threads=3)
    assert out.dtype == np.int64 and out.shape == (n,)
    assert len(calls) == 3 and len({c[0] for c in calls}) == 3
    assert all(c[1] is np.ndarray for c in calls)  # numpy buffers, never Python lists
    starts = sorted((c[2] // 1000, c[3]) for c in calls)
    assert starts[0][0] == 0 and all(a + la == b for (a, la), (b, _) in zip(starts[:-1], starts[1:], strict=True))
    assert sum(size for _, size in starts) == n
    assert np.abs(out - values).max() < 1000  # each noisy value is in its own place (scale 0.05: tiny noise)


def test_noise_threads_keeps_slices_large_and_checks_its_arguments():
    assert secure_noise.noise_threads(SLICE - 1, threads=8) == 1
    assert secure_noise.noise_threads(5 * SLICE, threads=8) == 5
    assert secure_noise.noise_threads(10 * SLICE, threads=3) == 3
    assert secure_noise.noise_threads(0) == 1
    with pytest.raises(DPInputError, match="threads"):
        secure_noise.noise_threads(10, threads=0)
    with pytest.raises(DPInputError, match="one-dimensional"):
        secure_noise.draw_on_cores(len, np.zeros((2, 2), dtype=np.int64))


def test_real_release_states_the_single_call_measurement_and_reports_step_times(tmp_path):
    """A real release (ledger charged) through run_plan: the record names the measurement of one call."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"earnings": np.round(rng.lognormal(10.5, 0.8, 2000))})
    frame.to_parquet(tmp_path / "data.parquet", index=False)
    plan = plan_from_dict(
        {
            "version": 1,
            "dataset": "cores-test",
            "income": "earnings",
            "cap_epsilon": 2.0,
            "statistics": [
                {"kind": "percentiles", "epsilon": 1.0, "bins": "pseo", "q": [50]},
                {"kind": "mean", "epsilon": 0.5, "lower": 0, "upper": 500_000},
            ],
        }
    )
    stream = io.StringIO()
    result = execute.run_plan(
        plan,
        parse_source(str(tmp_path / "data.parquet")),
        engine="duckdb",
        out_dir=tmp_path / "out",
        ledger_url=f"sqlite:///{tmp_path}/ledger.db",
        init_ledger=True,
        progress=Progress(stream=stream),
    )
    percentiles_info, mean_info = result.record["statistics"]
    one_call = secure_noise.release_integer_counts([0], scale=2.0, sensitivity=2, threads=1)
    assert percentiles_info["measurement"] == one_call.measurement
    assert percentiles_info["privacy_map"] == one_call.privacy_map and percentiles_info["map_epsilon"] == 1.0
    assert "make_laplace" in mean_info["measurement"] and "f64" in mean_info["measurement"]
    assert np.isfinite(result.tables[mean_info["name"]]["mean"]).all()
    step_lines = [line for line in stream.getvalue().splitlines() if "step times:" in line]
    assert len(step_lines) == 1
    for phase in ("ledger", "scan", "aggregate", "noise", "write", "other", "total"):
        assert f"{phase} " in step_lines[0]


def test_app_release_of_cell_percentiles_draws_every_cell_in_one_measurement(monkeypatch, release_account):
    """The app's release mode (dpcore.release.make_release on a planner statistic, secure sampler): all the
    cells' histogram counts go to OpenDP in one draw (so on every core), with the per-cell measurement text."""
    from dpcore import planner, release

    rng = np.random.default_rng(5)
    cells = [rng.lognormal(10.7, 0.6, 4000) for _ in range(12)]
    stat = planner.PercentilesStatistic(cells, seed=1, n_sims=100)
    real_draw = secure_noise.release_integer_counts
    sizes: list[int] = []

    def noted_draw(counts, **kw):  # the real sampler, with a note of each call's size
        sizes.append(int(np.asarray(counts).size))
        return real_draw(counts, **kw)

    monkeypatch.setattr(secure_noise, "release_integer_counts", noted_draw)
    (record,) = release.make_release([(stat, 2.0)], release_account)
    n_bins = stat.edges.size - 1
    assert sizes == [12 * n_bins]
    one_cell = real_draw(np.zeros(n_bins, dtype=np.int64), scale=1.0 / stat.eps_bin(2.0), sensitivity=2)
    assert record.measurement == one_cell.measurement and record.privacy_map == one_cell.privacy_map
    released = np.asarray(record.released, dtype=float).reshape(12, len(stat.q))
    truth = np.asarray(stat.truth).reshape(12, len(stat.q))
    assert np.all(np.abs(released / truth - 1) < 0.15)  # 4,000 people a cell, epsilon 2: within a few percent
    sizes.clear()  # a seeded simulation still draws cell by cell (the numbers of a seed do not change)
    stat.simulate_draw(2.0, rng=3)
    assert sizes == [n_bins] * 12
