"""Every released value stays within its statistic's public range, also for cells of one to three people.

A mean of incomes clipped to [lower, upper] lies in [lower, upper], a count of cases in [0, its group's n], a
relative risk is >= 0, a Gini in [0, 1], a percentile read off a histogram in [first edge, last edge], an
exponential-mechanism quantile on its candidate grid. Noise alone can carry a small cell's value far outside (an
n = 1 mean was published as 2,000,000 with bounds [0, 500,000], outside its own interval): the mechanisms clamp as
post-processing in the real and the simulated draw alike, and the published intervals stay inside the range too.
2,000 small cells per kind, drawn with the real samplers (one vector draw) and simulated; the app's path and the
command line's on a few hundred more.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore import ledger, planner, release
from dpcore.engines import execute, parse_source
from dpcore.mechanisms import (
    CountMechanism,
    ExponentialQuantileMechanism,
    GiniIntervalMechanism,
    HistogramMechanism,
    MeanMechanism,
    RelativeRiskMechanism,
)
from dpcore.plan import plan_from_dict
from dpcore.published import NOISY_BIN_PREFIX, published_table

CELLS = 2_000
LOWER, UPPER = 0.0, 500_000.0
#: None: the real samplers (OpenDP, certified); a seed: the simulation of the same law
SOURCES = [None, 20261207]


def _sizes(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(1, 4, CELLS)  # one to three people per cell


@pytest.mark.parametrize("rng", SOURCES, ids=["real", "simulated"])
@pytest.mark.parametrize("cells_move", [False, True], ids=["public-n", "noisy-n"])
def test_means_of_small_cells_stay_in_the_clip_range_and_inside_their_interval(rng, cells_move):
    n = _sizes()
    gen = np.random.default_rng(2)
    sums = np.where(gen.random(CELLS) < 0.5, 0, n * int(UPPER * 100))  # every income at a bound: the worst case
    mech = MeanMechanism(1.0, LOWER, UPPER, cells_move=cells_move)
    d = mech.draw(sums, n, rng=rng)
    assert np.all((d.means >= LOWER) & (d.means <= UPPER))
    record = mech.record()
    if cells_move:  # the published n is then a noisy count (the pivot interval of a noisy n)
        record["n_noise_scale"] = 20.0
    out = published_table("mean", pd.DataFrame({"n": n, "mean": d.means}), record, 0.95)
    mean, lo, hi = (out[c].to_numpy() for c in ("mean", "mean_lower", "mean_upper"))
    assert np.all((mean >= LOWER) & (mean <= UPPER) & (lo >= LOWER) & (hi <= UPPER))
    assert np.all((lo <= mean) & (mean <= hi))


@pytest.mark.parametrize("rng", SOURCES, ids=["real", "simulated"])
def test_case_counts_stay_in_their_group_and_the_relative_risk_is_not_negative(rng):
    nx, ny = _sizes(3), _sizes(4)
    gen = np.random.default_rng(5)
    x, y = gen.integers(0, nx + 1), gen.integers(0, ny + 1)
    mech = RelativeRiskMechanism(1.0)
    d = mech.draw(x, y, nx, ny, rng=rng)
    assert np.all((d.cases_exposed >= 0) & (d.cases_exposed <= nx))
    assert np.all((d.cases_reference >= 0) & (d.cases_reference <= ny))
    assert np.all((d.relative_risk >= 0) & (d.relative_risk <= ny))
    table = pd.DataFrame(
        {
            "n_exposed": nx,
            "n_reference": ny,
            "cases_exposed": d.cases_exposed,
            "cases_reference": d.cases_reference,
            "relative_risk": d.relative_risk,
        }
    )
    out = published_table("relative_risk", table, mech.record(), 0.95)
    assert np.all((out["cases_exposed"] >= 0) & (out["cases_exposed"] <= nx))
    assert np.all((out["relative_risk"] >= 0) & (out["relative_risk_lower"] >= 0))


@pytest.mark.parametrize("rng", SOURCES, ids=["real", "simulated"])
def test_counts_stay_between_zero_and_n(rng):
    n = _sizes(6)
    counts = np.random.default_rng(7).integers(0, n + 1)
    d = CountMechanism(0.5).draw(counts, rng=rng, upper=n)
    assert np.all((d.counts >= 0) & (d.counts <= n))
    out = published_table("count", pd.DataFrame({"count": d.counts, "n": n}), CountMechanism(0.5).record(), 0.95)
    assert np.all((out["count_lower"] >= 0) & (out["count_upper"] <= n))


@pytest.mark.parametrize("rng", SOURCES, ids=["real", "simulated"])
def test_percentiles_of_small_cells_stay_on_their_grid(rng):
    edges = [10_000.0, 20_000.0, 50_000.0, 100_000.0, 600_000.0]
    n = _sizes(8)
    bins = np.random.default_rng(9).integers(0, len(edges) - 1, CELLS)
    counts = np.zeros((CELLS, len(edges) - 1), dtype=np.int64)
    counts[np.arange(CELLS), bins] = n
    hist = HistogramMechanism(1.0, edges, (25, 50, 75)).draw(counts, rng=rng)
    assert np.all((hist.percentiles >= edges[0]) & (hist.percentiles <= edges[-1]))
    exp = ExponentialQuantileMechanism(1.0, edges, (50,)).draw(counts, rng=rng)
    assert np.isin(exp.percentiles, edges).all()


def test_ginis_of_small_cells_stay_in_zero_one_and_inside_their_interval():
    mech = GiniIntervalMechanism(1.0, LOWER, UPPER)
    gen = np.random.default_rng(10)
    n = _sizes(11)
    draws = [mech.draw(0.5, 1.0 - 1.0 / k, rng=gen) for k in n]  # the largest smooth sensitivity of a small cell
    draws += [mech.draw(0.5, 0.5) for _ in range(100)]  # the certified sampler (a real draw takes about 12 ms)
    table = pd.DataFrame(
        {
            "gini": [d.value for d in draws],
            "smooth_sensitivity_bound": [d.smooth_sensitivity_upper for d in draws],
        }
    )
    assert table["gini"].between(0.0, 1.0).all()
    out = published_table("gini", table, mech.record(), 0.95)
    assert out["gini"].between(0.0, 1.0).all()
    out = out[out["gini_lower"].notna()]  # a one-person cell releases 0 exactly, without an interval
    assert len(out) > CELLS // 2
    assert (out["gini_lower"] >= 0).all() and (out["gini_upper"] <= 1).all()
    assert ((out["gini_lower"] <= out["gini"]) & (out["gini"] <= out["gini_upper"])).all()


def test_the_apps_real_release_of_a_two_person_mean_and_count_stays_in_range(tmp_path):
    """The app's path (dpcore.release.make_release, the real samplers): a mean of two people at the upper bound
    and a count of two, 200 releases each."""
    values = np.array([UPPER, UPPER])
    mean = planner.make_statistic("mean", values, upper=UPPER)
    count = planner.make_statistic("count", values, threshold=UPPER)
    led = ledger.init_ledger(f"sqlite:///{tmp_path}/ledger.db").account("two people", cap_epsilon=1e6)
    for _ in range(200):
        m_rec, c_rec = release.make_release([(mean, 0.5), (count, 0.5)], led)
        assert LOWER <= m_rec.released[0] <= UPPER
        assert m_rec.released_lower[0] <= m_rec.released[0] <= m_rec.released_upper[0]
        assert 0 <= c_rec.released[0] <= 2 and c_rec.released_upper[0] <= 2


def test_the_command_lines_real_release_of_one_person_cells_stays_in_range(tmp_path):
    """The audit's case through the command line: cells of one or two people (public cell sizes, the PSEO
    setting), every table's values and intervals in range."""
    rng = np.random.default_rng(12)
    cells = np.repeat(np.arange(150), rng.integers(1, 3, 150))
    frame = pd.DataFrame(
        {
            "cell": [f"c{c:03d}" for c in cells],
            "group": rng.choice(["yes", "no"], cells.size),
            "income": rng.choice([LOWER, UPPER, 2_000_000.0], cells.size),
        }
    )
    frame.to_csv(tmp_path / "data.csv", index=False)
    plan = plan_from_dict(
        {
            "version": 1,
            "dataset": "ranges",
            "income": "income",
            "cap_epsilon": 10.0,
            "cell_sizes": "public",
            "small_cell_threshold": 0,
            "keys": {"cell": [f"c{c:03d}" for c in range(150)]},  # declared: one-person cells are listed
            "statistics": [
                {"kind": "mean", "by": ["cell"], "epsilon": 1.0, "lower": LOWER, "upper": UPPER},
                {"kind": "percentiles", "by": ["cell"], "epsilon": 1.0, "bins": [0, 100_000, 1_000_000], "q": [50]},
                {
                    "kind": "relative_risk",
                    "by": ["cell"],
                    "epsilon": 1.0,
                    "group": "group",
                    "exposed": "yes",
                    "reference": "no",
                    "outcome_below": 100_000,
                },
            ],
        }
    )
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    tables = execute.run_plan(
        plan, parse_source(str(tmp_path / "data.csv")), out_dir=tmp_path / "out", ledger_url=url, init_ledger=True
    ).tables
    mean = tables["01_mean_by_cell"]
    assert mean["mean"].between(LOWER, UPPER).all()
    assert ((mean["mean_lower"] <= mean["mean"]) & (mean["mean"] <= mean["mean_upper"])).all()
    assert tables["02_percentiles_by_cell"]["p50"].between(0, 1_000_000).all()
    assert not any(c.startswith(NOISY_BIN_PREFIX) and c.endswith("_lower") for c in tables["02_percentiles_by_cell"])
    rr = tables["03_relative_risk_by_cell"]
    for cases, n in (("cases_exposed", "n_exposed"), ("cases_reference", "n_reference")):
        assert ((rr[cases] >= 0) & (rr[cases] <= rr[n])).all()
    assert (rr["relative_risk"].dropna() >= 0).all()


def test_a_small_cells_value_is_rounded_to_at_most_a_twentieth_of_its_range():
    """The rounding step comes from a public width (a mean's Laplace quantile over n, a Gini's 2 q s_hat) that a
    small cell makes far wider than the range: cut at the range's width, the step is at most 1/20 of the range (it
    was a multiple of the range, which rounded every mean of [0, 12,345] and every such Gini to 0)."""
    gen = np.random.default_rng(13)
    mech = MeanMechanism(1.0, 0.0, 12_345.0)
    d = mech.draw(np.full(500, 1_000_000), np.ones(500), rng=gen)  # one person at 10,000.00
    out = published_table("mean", pd.DataFrame({"n": np.ones(500), "mean": d.means}), mech.record(), 0.95)
    assert np.all(np.abs(out["mean"].to_numpy() - d.means) <= 12_345.0 / 40 + 1e-6)
    gini = GiniIntervalMechanism(0.2, LOWER, UPPER)
    draws = [gini.draw(0.4, 0.9, rng=gen) for _ in range(300)]
    table = pd.DataFrame(
        {"gini": [x.value for x in draws], "smooth_sensitivity_bound": [x.smooth_sensitivity_upper for x in draws]}
    )
    out = published_table("gini", table, gini.record(), 0.95)
    assert np.all(np.abs(out["gini"].to_numpy() - table["gini"].to_numpy()) <= 1.0 / 40 + 1e-9)
