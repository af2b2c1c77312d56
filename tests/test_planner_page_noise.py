"""The planner page: the Gini's smooth-sensitivity noise is a choice (dpcore.noise.smooth.SMOOTH_NOISES),
the page solves epsilon for the chosen noise exactly as the library does, states each statistic's cost in its
own currency (pure, (eps, delta), rho-zCDP with its (eps, delta)) and composes the plan's cost; the plan file
never carries a noise it cannot express; a refused real release is announced before Release mode.
Also the library change behind the speed of those solves (dpcore.planner: the exact smooth sensitivity reuses
its beta-free A^(k) profile)."""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_clean, metrics, open_page, page_text

from dpcore import budget, gini
from dpcore import planner as planner_lib
from dpcore.data import lognormal_incomes
from dpcore.gini import sensitivity as gini_sensitivity
from dpcore.lru import BoundedCache
from dpcore.noise.smooth import SMOOTH_NOISES
from ui.planner import sections as planner_sections

PAGE = "app_pages/planner.py"
DELTA = 1e-6
GINI_POINTS = 0.05  # the Gini's target in Gini points (absolute ±, as on the Gini page)
QUERY = {"data_n": "2000", "planner_stats": "gini,mean", "planner_gini_err": str(GINI_POINTS)}
TARGETS = {"gini": 0.90, "mean": planner_lib.AccuracyTarget(0.05, 0.95)}


def _open(**query):
    return open_page(PAGE, timeout=300, **{**QUERY, **query})


def _library_plan(values: np.ndarray, noise: str) -> tuple[float, float, budget.PrivacyCost]:
    """(Gini epsilon, mean epsilon, Gini cost) straight from dpcore.planner on the page's data and defaults."""
    extra = {} if noise == "cauchy" else {"noise": noise, "delta": DELTA}
    stat = planner_lib.make_statistic("gini", values, upper=1e6, **extra)
    target = planner_lib.AccuracyTarget(GINI_POINTS / stat.truth[0], TARGETS["gini"])  # ±points = (points/G) G
    eps_gini = planner_lib.solve_epsilon(stat, target).epsilon
    mean = planner_lib.make_statistic("mean", values, upper=500_000.0)
    eps_mean = planner_lib.solve_epsilon(mean, TARGETS["mean"]).epsilon
    return eps_gini, eps_mean, stat.privacy_cost(eps_gini)


@pytest.mark.parametrize("noise", list(SMOOTH_NOISES))
def test_page_solves_epsilon_per_noise_and_composes_its_cost(noise):
    at = _open(planner_gini_noise=noise)
    assert_clean(at)
    assert at.selectbox(key="planner_gini_noise").value == noise
    values = np.asarray(at.session_state["dataset"].values, dtype=float)
    eps_gini, eps_mean, gini_cost = _library_plan(values, noise)
    table = at.table[0].value
    row = table[table["statistic"] == "Gini index"].iloc[0]
    assert row["smallest ε"] == eps_gini  # the library's number, not a re-derivation
    shown = metrics(at)
    total = float(shown["Total ε of the plan"])
    if noise == "cauchy":
        assert gini_cost.kind == "pure" and row["privacy cost"] == f"ε = {eps_gini:.4g} (pure)"
        assert total == pytest.approx(eps_gini + eps_mean, rel=5e-4)
        assert "Privacy cost of the plan (sequential composition)" not in shown
    elif noise == "laplace":
        # (eps, delta)-DP: basic composition, epsilons and deltas add (the mean is pure: delta 0)
        assert gini_cost.kind == "approx" and gini_cost.delta == DELTA
        assert row["privacy cost"] == f"(ε, δ) = ({eps_gini:.4g}, {DELTA:.3g})"
        assert total == pytest.approx(eps_gini + eps_mean, rel=5e-4)
        assert (
            shown["Privacy cost of the plan (sequential composition)"]
            == f"(ε, δ) = ({eps_gini + eps_mean:.4g}, {DELTA:.3g})"
        )
    else:
        # rho-zCDP: rho such that its (eps, delta) at the noise's delta is the planned epsilon; the plan
        # composes in zCDP (pure eps -> eps^2/2) or adds the pure epsilon to the converted rho, the smaller
        rho = gini_cost.rho
        assert gini_cost.kind == "zcdp" and rho > 0
        assert budget.zcdp_to_approx_dp(rho, DELTA) == pytest.approx(eps_gini, rel=1e-6)
        expected = min(
            eps_mean + budget.zcdp_to_approx_dp(rho, DELTA), budget.zcdp_to_approx_dp(rho + eps_mean**2 / 2, DELTA)
        )
        assert expected < eps_gini + eps_mean  # composing in zCDP is better than adding epsilons here
        assert total == pytest.approx(expected, rel=5e-4)
        assert row["privacy cost"].startswith(f"ρ = {rho:.4g} (zCDP), i.e. (ε, δ) = ({eps_gini:.4g}, ")
        assert shown["Privacy cost of the plan (sequential composition)"].startswith(
            f"ρ = {rho + eps_mean**2 / 2:.4g} (zCDP)"
        )
        text = page_text(at)
        assert "real release" in text and "refused" in text  # said in Plan mode, before Release mode


def test_release_mode_announces_the_refused_noise_and_the_plan_file_has_the_laplace_gini_not_the_lln():
    at = _open(planner_gini_noise="laplace_lognormal", planner_mode="Release: make the real release (spends budget)")
    assert not at.exception
    assert any("refused" in str(w.value) for w in at.warning)
    at = _open(
        planner_gini_noise="laplace",
        planner_gini_delta="1e-07",
        planner_mode="Release: make the real release (spends budget)",
    )
    assert not at.exception
    assert any("spends δ = 1e-07" in str(i.value) and "δ cap" in str(i.value) for i in at.info)
    # the plan file has a noise field (tests/test_plan_light_noise.py): the Laplace Gini is written into it
    at = _open(planner_gini_noise="laplace", planner_view=planner_sections.SHARE.heading)
    assert_clean(at)
    assert "Download the release plan" in [b.label for b in at.get("download_button")]
    assert "Not in the plan: gini" not in " ".join(str(c.value) for c in at.caption)
    # the Laplace log-normal has no floating-point-safe sampler: left out, and the reason said
    at = _open(planner_gini_noise="laplace_lognormal", planner_view=planner_sections.SHARE.heading)
    assert_clean(at)
    caption = " ".join(str(c.value) for c in at.caption)
    assert "Not in the plan: gini: the Gini with noise 'laplace_lognormal' cannot be released" in caption
    at = _open(planner_view=planner_sections.SHARE.heading)  # the paper's noise is written into the plan
    assert "Not in the plan: gini" not in " ".join(str(c.value) for c in at.caption)


def test_exact_smooth_sensitivity_reuse_equals_a_fresh_computation(monkeypatch):
    """Every GiniStatistic on the same data shares one A^(k) profile (dpcore.gini.shared_exact_profile, also the Gini view's): its
    S_beta equals a fresh dpcore.gini.smooth_sensitivity bit for bit, and each A^(k) is computed once however
    many statistics and betas ask (a page's answer at each new ε builds a new statistic)."""
    values = lognormal_incomes(1500, sigma=0.9, rng=3)
    xs = np.sort(np.clip(values, 0, 1e6))
    betas = (0.5, 0.01, 0.05, 0.02, 0.012, 0.3)
    fresh = {beta: gini.smooth_sensitivity(xs, lower=0.0, upper=1e6, beta=beta).value for beta in betas}
    monkeypatch.setattr(gini_sensitivity, "SHARED_PROFILES", BoundedCache(8))  # nothing kept from other tests
    computed_k = []
    library = gini_sensitivity.min_gini_k  # called once per new A^(k)

    def counted(prefix, k):
        computed_k.append(k)
        return library(prefix, k)

    monkeypatch.setattr(gini_sensitivity, "min_gini_k", counted)
    # large beta first (short profile), then a small one (longer profile), then betas served from it, each time
    # by a new statistic on the same data
    for beta, value in fresh.items():
        stat = planner_lib.make_statistic("gini", values, upper=1e6)
        assert stat._exact_smooth_sensitivity(beta) == value
    # every k at most once (the pruning probes a few k ahead of the sequence, which then reuses them)
    assert len(computed_k) == len(set(computed_k)) and min(computed_k) == 1
    assert len(computed_k) > 1
    assert len(gini_sensitivity.SHARED_PROFILES) == 1
    other = planner_lib.make_statistic("gini", values[:-1], upper=1e6)  # other data: its own profile
    assert (
        other._exact_smooth_sensitivity(0.3)
        == gini.smooth_sensitivity(np.sort(np.clip(values[:-1], 0, 1e6)), lower=0.0, upper=1e6, beta=0.3).value
    )
    assert len(gini_sensitivity.SHARED_PROFILES) == 2


def test_solve_epsilon_at_the_bottom_of_the_range_still_returns_eps_min():
    stat = planner_lib.make_statistic("mean", lognormal_incomes(5000, sigma=0.9, rng=4), upper=500_000.0)
    loose = planner_lib.AccuracyTarget(0.5, 0.5)
    assert planner_lib.solve_epsilon(stat, loose, eps_min=0.05).epsilon == 0.05
