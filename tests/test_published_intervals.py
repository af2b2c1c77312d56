"""Every released value carries its interval, computed from the published files alone: the command line's
published columns equal dpcore.release.recompute_intervals(record, tables) on the files it wrote; the rounding is
honest (a step between 1/50 and 1/20 of the interval) and idempotent; neighbouring data give records that differ
only in the released numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore import release
from dpcore.engines import execute, parse_source
from dpcore.plan import plan_from_dict

PLAN = {
    "version": 1,
    "dataset": "intervals",
    "income": "earnings",
    "cap_epsilon": 5.0,
    "cap_delta": 1e-5,
    "cell_sizes": "public",
    "level": 0.9,
    "statistics": [
        {"kind": "percentiles", "by": ["state"], "epsilon": 1.0, "bins": "pseo", "q": [25, 50, 75]},
        {
            "kind": "gini",
            "by": ["state"],
            "epsilon": 1.0,
            "lower": 0,
            "upper": 2_000_000,
            "noise": "laplace",
            "delta": 1e-6,
        },
        {"kind": "mean", "by": ["state"], "epsilon": 1.0, "lower": 0, "upper": 500_000},
        {
            "kind": "relative_risk",
            "by": ["institution"],
            "epsilon": 1.0,
            "group": "state",
            "exposed": "CO",
            "reference": "TX",
            "outcome_below": 25_000,
        },
    ],
}


def _data(tmp_path, seed=1, n=6000):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "state": rng.choice(["CO", "TX", "NY"], n),
            "institution": rng.choice(["a", "b"], n),
            "earnings": np.round(rng.lognormal(10.6, 0.8, n), 2),
        }
    )
    path = tmp_path / f"data{seed}.parquet"
    frame.to_parquet(path)
    return path


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("published")
    result = execute.run_plan(
        plan_from_dict(PLAN),
        parse_source(str(_data(tmp))),
        engine="pandas",
        out_dir=tmp / "out",
        ledger_url=f"sqlite:///{tmp / 'l.db'}",
        init_ledger=True,
    )
    return tmp / "out", result


def test_every_released_value_has_its_interval_at_the_plans_level(released):
    _, result = released
    columns = {
        "01_percentiles_by_state": ["p25", "p50", "p75"],
        "02_gini_by_state": ["gini"],
        "03_mean_by_state": ["mean"],
        "04_relative_risk_by_institution": ["relative_risk"],
    }
    for name, values in columns.items():
        table = result.tables[name]
        for v in values:
            lo, hi = table[f"{v}_lower"].to_numpy(float), table[f"{v}_upper"].to_numpy(float)
            assert np.all(lo <= table[v].to_numpy(float)) and np.all(table[v].to_numpy(float) <= hi), name
    assert all(s["interval_level"] == 0.9 for s in result.record["statistics"])


def test_the_published_columns_equal_the_ones_recomputed_from_the_files(released):
    out, _ = released
    record, tables = release.read_release(out)
    again = release.recompute_intervals(record, tables)
    for name, table in tables.items():
        pd.testing.assert_frame_equal(again[name][table.columns], table, check_dtype=False, rtol=0, atol=0)


def test_honest_digits_no_finer_than_a_fiftieth_of_the_interval(released):
    _, result = released
    mean = result.tables["03_mean_by_state"]
    width = (mean["mean_upper"] - mean["mean_lower"]).to_numpy(float)
    for value, w in zip(mean["mean"].to_numpy(float), width, strict=True):
        step = 10.0 ** np.floor(np.log10(w / 20))
        assert abs(value / step - round(value / step)) < 1e-6  # on a grid at least 1/200 of the width


def test_neighbouring_data_differ_only_in_the_released_numbers(tmp_path):
    records = []
    for seed, changed in ((5, False), (5, True)):
        path = _data(tmp_path, seed)
        if changed:
            frame = pd.read_parquet(path)
            frame.loc[0, "earnings"] = 1_900_000.0  # one person's income replaced
            path = tmp_path / "neighbour.parquet"
            frame.to_parquet(path)
        result = execute.run_plan(
            plan_from_dict(PLAN),
            parse_source(str(path)),
            engine="pandas",
            out_dir=tmp_path / f"out{changed}",
            ledger_url=f"sqlite:///{tmp_path}/{changed}.db",
            init_ledger=True,
        )
        stats = [{k: v for k, v in s.items() if k not in ("measurement",)} for s in result.record["statistics"]]
        records.append(stats)
    assert records[0] == records[1]


def test_a_cached_gini_split_can_change_only_the_width_never_the_cost(tmp_path, monkeypatch):
    from dpcore import mechanisms

    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    first = mechanisms.GiniIntervalMechanism(1.0, 0.0, 1e6, noise="laplace", delta=1e-6).plan
    (cached,) = tmp_path.glob("gini_split_*.json")
    again = mechanisms.GiniIntervalMechanism(1.0, 0.0, 1e6, noise="laplace", delta=1e-6).plan
    assert (again.epsilon_value, again.epsilon_bound, again.beta) == (
        first.epsilon_value,
        first.epsilon_bound,
        first.beta,
    )
    # an edited cache file whose split does not add up to epsilon is ignored (optimised again)
    import json

    saved = json.loads(cached.read_text())
    saved["choice"]["epsilon_bound"] = 5.0
    cached.write_text(json.dumps(saved))
    mech = mechanisms.GiniIntervalMechanism(1.0, 0.0, 1e6, noise="laplace", delta=1e-6)
    assert mech.plan.epsilon_value + mech.plan.epsilon_bound == pytest.approx(1.0)
    assert mech.privacy_cost().epsilon == pytest.approx(1.0)


def test_vectorised_steps_and_rounding_equal_the_scalar_functions():
    """published_table rounds a whole column at once: the same steps (intervals.honest_grid) and the same rounded
    values (intervals.round_to_grid) as one call per row, bit for bit, over 24 decades and at the 1-2-5 edges."""
    from dpcore import published
    from dpcore.intervals import round_to_grid

    rng = np.random.default_rng(11)
    edges = np.array([20.0 * 10.0**k for k in range(-8, 10)] + [40.0, 100.0, 2e-5])
    widths = np.concatenate(
        [
            10 ** rng.uniform(-12, 12, 50_000),
            edges,
            np.nextafter(edges, 0),
            np.nextafter(edges, np.inf),
            [0.0, -1.0, np.nan, np.inf],
        ]
    )
    scalar = np.array([published._step(w) for w in widths])
    np.testing.assert_array_equal(published._steps(widths), scalar)  # NaN where there is no step, on both sides
    values = rng.normal(50_000, 30_000, widths.size)
    values[::9] = np.nan
    expected = values.copy()
    fine = np.isfinite(scalar) & np.isfinite(values)
    expected[fine] = [round_to_grid(v, s) for v, s in zip(values[fine], scalar[fine], strict=True)]
    np.testing.assert_array_equal(published._rounded(values, scalar), expected)
