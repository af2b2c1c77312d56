"""One mechanism per statistic kind: the planner's real release (dpcore.release.make_release, the app's Release
mode) and the command line (dpcore.engines.execute.run_plan) fed the same data and public parameters call the
same mechanism object with the same confidential aggregate, and their draws carry the same public texts; only
the noise differs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from dpcore import gini, planner, release
from dpcore.engines import execute, parse_source
from dpcore.mechanisms import (
    CountMechanism,
    GiniMechanism,
    HistogramMechanism,
    MeanMechanism,
    RelativeRiskMechanism,
)
from dpcore.plan import plan_from_dict

MECHANISMS = (GiniMechanism, HistogramMechanism, MeanMechanism, RelativeRiskMechanism)


@pytest.fixture
def calls(monkeypatch):
    """Every draw of every mechanism class: (mechanism, positional inputs, result). The real draw runs."""
    seen: list[tuple] = []
    for cls in MECHANISMS:
        real = cls.draw

        def spy(self, *args, _real=real, **kwargs):
            out = _real(self, *args, **kwargs)
            seen.append((self, args, out))
            return out

        monkeypatch.setattr(cls, "draw", spy)
    return seen


def _values(n=400, seed=3):
    return np.round(np.random.default_rng(seed).lognormal(10.4, 0.9, n), 2)


def _cli(tmp_path, frame: pd.DataFrame, statistic: dict) -> None:
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    plan = plan_from_dict(
        {
            "version": 1,
            "dataset": "same",
            "income": "income",
            "cap_epsilon": 10.0,
            "cap_delta": 1e-5,
            "cell_sizes": "public",
            "statistics": [statistic],
        }
    )
    execute.run_plan(
        plan,
        parse_source(str(path)),
        engine="pandas",
        out_dir=tmp_path / "out",
        ledger_url=f"sqlite:///{tmp_path / 'ledger.db'}",
        init_ledger=True,
    )


def _planner(stat, eps, account):
    release.make_release([(stat, eps)], account)


def _same(calls, expected_calls=2):
    assert len(calls) == expected_calls
    (m1, a1, d1), (m2, a2, d2) = calls[0], calls[-1]
    assert type(m1) is type(m2) and m1 == m2  # one mechanism, the same public parameters
    for x, y in zip(a1, a2, strict=True):
        np.testing.assert_allclose(np.asarray(x, dtype=float), np.asarray(y, dtype=float), rtol=1e-12)
    assert (d1.measurement, d1.privacy_map, d1.simulated) == (d2.measurement, d2.privacy_map, d2.simulated)
    assert not d1.simulated


@pytest.mark.parametrize("noise", ["cauchy", "laplace"])
def test_gini_planner_and_command_line_draw_through_one_mechanism(tmp_path, calls, noise, release_account):
    x = _values()
    extra = {"noise": noise, "delta": 1e-6} if noise == "laplace" else {}
    _planner(planner.make_statistic("gini", x, lower=0, upper=2e6, **extra), 1.0, release_account)
    _cli(tmp_path, pd.DataFrame({"income": x}), {"kind": "gini", "epsilon": 1.0, "lower": 0, "upper": 2e6, **extra})
    _same(calls)


def test_mean_planner_and_command_line_draw_through_one_mechanism(tmp_path, calls, release_account):
    x = _values()
    _planner(planner.make_statistic("mean", x, lower=0, upper=5e5), 0.5, release_account)
    _cli(tmp_path, pd.DataFrame({"income": x}), {"kind": "mean", "epsilon": 0.5, "lower": 0, "upper": 5e5})
    _same(calls)


def test_group_means_use_the_mean_mechanism_with_the_group_sums(tmp_path, calls, release_account):
    x = _values()
    g = np.where(np.arange(x.size) % 3 == 0, "a", "b")
    _planner(planner.make_statistic("group_means", x, groups=g, lower=0, upper=5e5), 0.5, release_account)
    _cli(
        tmp_path,
        pd.DataFrame({"income": x, "g": g}),
        {"kind": "mean", "by": ["g"], "epsilon": 0.5, "lower": 0, "upper": 5e5},
    )
    _same(calls)


def test_percentiles_planner_and_command_line_draw_through_one_mechanism(tmp_path, calls, release_account):
    x = _values()
    g = np.where(np.arange(x.size) % 2 == 0, "a", "b")
    _planner(planner.make_statistic("percentiles", x, groups=g, q=(25, 50, 75)), 1.0, release_account)
    _cli(
        tmp_path,
        pd.DataFrame({"income": x, "g": g}),
        {"kind": "percentiles", "by": ["g"], "epsilon": 1.0, "bins": "pseo", "q": [25, 50, 75]},
    )
    _same(calls)


def test_relative_risk_planner_and_command_line_draw_through_one_mechanism(tmp_path, calls, release_account):
    x = _values(600)
    g = np.where(np.arange(x.size) % 2 == 0, "x", "y")
    _planner(
        planner.make_statistic("ratio", x, groups=g, threshold=20_000, group_x="x", group_y="y"), 1.0, release_account
    )
    _cli(
        tmp_path,
        pd.DataFrame({"income": x, "g": g}),
        {
            "kind": "relative_risk",
            "epsilon": 1.0,
            "group": "g",
            "exposed": "x",
            "reference": "y",
            "outcome_below": 20_000,
        },
    )
    _same(calls)


def test_release_gini_draws_the_law_of_the_gini_mechanism():
    """dpcore.gini.release_gini is the paper's function: the calibration of every released Gini (GiniCalibration,
    which GiniMechanism extends with the real draw), whose law it draws with numpy: with the same seed it gives
    the mechanism's simulated draw exactly. Without a seed it draws that law from the OS CSPRNG; a release to
    publish charges a ledger and draws through the mechanism's certified sampler."""
    x = _values()
    rel = gini.release_gini(x, epsilon=1.0, lower=0, upper=2e6, rng=7, include_confidential=True)
    d = GiniMechanism(1.0, 0.0, 2e6).draw(rel.confidential_true_value, rel.confidential_smooth_sensitivity, rng=7)
    assert (rel.value, rel.noisy_value) == (d.value, d.noisy_value) and d.simulated
    assert 0.0 <= gini.release_gini(x, epsilon=1.0, lower=0, upper=2e6).value <= 1.0


def test_mechanisms_are_frozen_and_built_from_public_parameters_only():
    for mech in (
        GiniMechanism(1.0, 0.0, 1e6),
        HistogramMechanism(1.0),
        MeanMechanism(1.0, 0.0, 1e5),
        RelativeRiskMechanism(1.0),
        CountMechanism(1.0),
    ):
        with pytest.raises(dataclasses.FrozenInstanceError):
            mech.epsilon = 2.0  # type: ignore[misc]
        assert mech.privacy_cost().epsilon == pytest.approx(1.0)
        assert isinstance(mech.record(), dict)
