"""Every released Gini is published the same way: clamped to [0, 1] on the public 1e-6 grid.

The audit found the command line publishing Ginis of -0.129 and -0.197 at epsilon = 0.5 on a 1e-9 grid
with no window, while the app's release used a 1e-6 grid on [0, 1] and dpcore.gini.release_gini neither.
One function (dpcore.noise.guarantees.publish_gini) now gives the published form on every path; the clamp
and the rounding use only the noisy value and public constants (post-processing).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpcore import cli, gini, planner, posterior
from dpcore.noise import guarantees as noise_guarantees
from dpcore.validation import DPInputError


def _on_grid(value: float) -> bool:
    return 0.0 <= value <= 1.0 and value == round(value, 6)


def test_publish_gini_clamps_to_the_unit_interval_on_the_grid():
    assert noise_guarantees.GINI_GRID == 1e-6 and noise_guarantees.GINI_WINDOW == (0.0, 1.0)
    assert noise_guarantees.publish_gini(-0.129) == 0.0
    assert noise_guarantees.publish_gini(1.7) == 1.0
    assert noise_guarantees.publish_gini(0.123456789) == 0.123457
    assert noise_guarantees.publish_gini(float("-inf")) == 0.0 and noise_guarantees.publish_gini(float("inf")) == 1.0
    with pytest.raises(DPInputError, match="NaN"):
        noise_guarantees.publish_gini(float("nan"))


def test_command_line_ginis_lie_in_the_unit_interval_on_the_one_grid(tmp_path, capsys):
    # 30 cells of 4 rows at epsilon 0.5: the noise scale is about 10 per cell, so the old code published
    # values far outside [0, 1] in almost every cell
    rng = np.random.default_rng(5)
    states = [f"S{i:02d}" for i in range(30)]
    frame = pd.DataFrame({"state": np.repeat(states, 4), "earnings": np.round(rng.lognormal(10.5, 1.2, 120))})
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    plan = tmp_path / "plan.toml"
    plan.write_text(
        'version = 1\ndataset = "gini-grid"\nincome = "earnings"\ncap_epsilon = 1.0\n'
        'cell_sizes = "public"\n\n'
        '[[statistics]]\nkind = "gini"\nby = ["state"]\nepsilon = 0.5\nlower = 0\nupper = 2000000\n'
    )
    out = tmp_path / "out"
    code = cli.main(
        [
            "release",
            str(plan),
            "--data",
            str(data),
            "--out",
            str(out),
            "--engine",
            "pandas",
            "--ledger",
            f"sqlite:///{tmp_path / 'ledger.db'}",
            "--init-ledger",
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(out / "01_gini_by_state.csv")
    assert len(table) == 30
    assert all(_on_grid(float(v)) for v in table["gini"]), table["gini"].tolist()
    record = json.loads((out / "release_record.json").read_text())
    stat = record["statistics"][0]
    assert stat["output_grid"] == 1e-6 and stat["output_window"] == [0.0, 1.0]
    assert "publish_gini" in stat["output_rule"]
    # the certified sampler's pure-DP mode (window [0, 1], scale floor): no delta, a tiny certified excess
    assert stat["min_noise_scale"] == 1e-5 and 0 < stat["sampler_excess_per_cell"] < 1e-30
    assert record["privacy"]["cost"]["delta"] == 0.0
    assert "grid 1e-06" in stat["measurement"]  # the sampler itself uses the same grid


def test_release_gini_is_published_like_the_others_and_the_posterior_reads_the_noisy_value():
    x = np.random.default_rng(1).lognormal(10, 1, 50)
    releases = [gini.release_gini(x, epsilon=0.05, lower=0.0, upper=1e6, rng=seed) for seed in range(20)]
    assert all(_on_grid(r.value) for r in releases)
    assert any(not 0.0 <= r.noisy_value <= 1.0 for r in releases)  # the clamp did something (simulated draws)
    for r in releases[:3]:
        assert r.value == noise_guarantees.publish_gini(r.noisy_value)
        post = posterior.release_posterior(r)
        direct = posterior.release_posterior(r.__class__(**{**r.__dict__, "value": r.noisy_value}))
        assert post.mean == pytest.approx(direct.mean)


@pytest.mark.parametrize("noise", ["cauchy", "laplace"])
def test_app_release_gini_is_on_the_grid(noise):
    x = np.random.default_rng(3).lognormal(10, 1, 8)
    if noise == "cauchy":
        stat = planner.make_statistic("gini", x, upper=1e6)
    else:
        stat = planner.make_statistic("gini", x, upper=1e6, noise="laplace")
    # the statistic's real draw (the OS's randomness, the release samplers), without a ledger: the published
    # form is what is tested here; charging is dpcore.release.make_release's
    real_draw = stat._draw  # no seed: the real draw
    values = [float(real_draw(0.05).values[0]) for _ in range(3)]
    assert all(_on_grid(v) for v in values), values
