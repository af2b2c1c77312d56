"""dpcore.intervals.optimise_gini_split: the pruned search returns the full grid's answer, its cheap bound on the
Cauchy's alpha is an upper bound, the shipped table of the Gini page's grid equals a fresh search, and the
mechanisms' file cache keeps the model's widths."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from dpcore import intervals, mechanisms
from dpcore import noise as noise_lib
from dpcore.gini_split_table import SPLITS
from dpcore.intervals import gini_split as intervals_gini_split
from dpcore.noise import smooth as smooth_noise
from dpcore.views import gini as gini_experiments

ROOT = Path(__file__).resolve().parent.parent


def _full_grid(eps, delta, noise, n, lo, hi, level=0.95, method="pivot", gamma=2.0, s_model=None):
    """The search as it was before the pruning: every (beta, split) certified, the first least width in grid order."""
    s_model = s_model or (lambda b: intervals.planning_smooth_sensitivity(n, lo, hi, b))
    common = dict(
        noise=noise,
        n=n,
        lower=lo,
        upper=hi,
        delta=delta,
        level=level,
        method=method,
        gamma=gamma,
        calibration_mode="tight",
    )
    etas = (1.0 - level) * np.array(intervals_gini_split._ETA_SHARES if method == "union" else (0.2,))
    best = (math.inf, None)
    for beta in intervals_gini_split._beta_candidates(eps, noise, gamma):
        s_typ = float(s_model(float(beta)))
        for f in intervals_gini_split._SPLITS:
            eps_s = f * eps
            if beta / eps_s > intervals.MAX_BOUND_SCALE:
                continue
            base = intervals_gini_split._try_plan(eps - eps_s, eps_s, float(beta), {**common, "eta": float(etas[0])})
            if base is None:
                continue
            widths = intervals_gini_split._model_widths(base, etas, s_typ)
            i = int(np.argmin(widths))
            if widths[i] < best[0]:
                best = (float(widths[i]), intervals.gini_plan_with_eta(base, float(etas[i])))
    return best


def _wavy(beta: float) -> float:
    """A caller's own S_typ that is NOT decreasing in beta (the search must then compute it at every beta)."""
    return 0.002 * (1.0 + 0.5 * math.sin(40.0 * beta)) + 1e-4 / beta


@pytest.mark.parametrize(
    "case",
    [
        dict(eps=4.0, delta=None, noise="cauchy", n=121, lo=0.0, hi=1e6),
        dict(eps=1.0, delta=None, noise="cauchy", n=300, lo=1000.0, hi=2e5, method="union", gamma=3.0),
        dict(eps=0.7, delta=None, noise="cauchy", n=50, lo=0.0, hi=1e6, s_model=_wavy),
        dict(eps=1.0, delta=1e-6, noise="laplace", n=500, lo=0.0, hi=1e6),
    ],
    ids=["cauchy", "cauchy-union-gamma3", "cauchy-own-s-typ", "laplace"],
)
def test_the_pruned_search_returns_the_full_grids_answer(case):
    case = dict(case)
    s_model = case.pop("s_model", None)
    width, expected = _full_grid(**case, s_model=s_model)
    eps, delta, noise, n, lo, hi = (case.pop(k) for k in ("eps", "delta", "noise", "n", "lo", "hi"))
    got = intervals.optimise_gini_split(eps, delta, noise, n, lo, hi, typical_smooth_sensitivity=s_model, **case)
    keys = ("epsilon_value", "epsilon_bound", "beta", "eta", "alpha", "bound_scale", "release_alpha")
    assert {k: getattr(got, k) for k in keys} == {k: getattr(expected, k) for k in keys}
    assert got.model_width == width


@pytest.mark.parametrize(
    "eps, gamma, beta", [(0.05, 2.0, 1e-4), (0.3, 2.0, 0.01), (1.0, 2.0, 0.2), (1.0, 4.0, 0.05), (4.0, 1.5, 0.5)]
)
def test_the_cheap_alpha_is_an_upper_bound_within_three_percent_of_the_certified_one(eps, gamma, beta):
    certified = noise_lib.smooth_noise_calibration(eps, gamma, beta=beta).alpha
    bound = intervals_gini_split._cauchy_alpha_upper(eps, gamma, beta)
    assert certified <= bound <= 1.03 * certified


@pytest.mark.parametrize("n, lo, hi", [(300, 1000.0, 2e5), (500, 0.0, 1e6), (50, 0.0, 1e6)])
def test_the_planning_s_beta_from_few_a_k_equals_the_profiles(n, lo, hi):
    from dpcore import gini as gini_lib

    mean = intervals.PLANNING_MEAN_SHARE * hi
    profile = gini_lib.ExactSensitivityProfile(intervals_gini_split._planning_values(n, lo, hi, mean), lo, hi)
    full = gini_lib.ExactSensitivityProfile(intervals_gini_split._planning_values(n, lo, hi, mean), lo, hi)
    for b in np.geomspace(1e-4, 2.0, 25):
        b = float(b)
        got = intervals.planning_smooth_sensitivity(n, lo, hi, b * intervals.PLANNING_BETA_SAFETY)
        assert got == pytest.approx(profile.smooth_sensitivity(b).value, rel=1e-15)
        assert got == pytest.approx(full.smooth_sensitivity(b, k_max=n).value, rel=1e-15)  # every k scanned


def _page_epsilons() -> list[float]:
    from dpcore import defaults

    assert "EPS_OPTIONS = list(defaults.GINI_EPSILON_STEPS)" in (ROOT / "app_pages" / "gini.py").read_text(
        encoding="utf-8"
    )
    return [float(v) for v in defaults.GINI_EPSILON_STEPS]


def _page_key(eps: float, noise: str) -> tuple:
    from dpcore import defaults
    from dpcore.data import DEFAULT_RECIPE

    delta = None if noise == "cauchy" else smooth_noise.DEFAULT_DELTA
    return intervals.gini_split.shipped_split_key(
        eps,
        delta,
        noise,
        DEFAULT_RECIPE["n"],
        0.0,
        float(defaults.INCOME_UPPER),
        gini_experiments.PUBLISHED_LEVEL,
        "pivot",
        2.0,
        "tight",
    )


def test_the_shipped_table_covers_the_gini_pages_grid_and_every_split_adds_up():
    for noise in gini_experiments.PUBLISHED_NOISES:
        for eps in _page_epsilons():
            entry = SPLITS[_page_key(eps, noise)]
            assert math.isclose(entry["epsilon_value"] + entry["epsilon_bound"], eps, rel_tol=1e-12, abs_tol=0.0)


# a sample of the table (the page's default epsilon and a small and a large one): each fresh search of n = 10,000
# costs a second or two; the rest of the table was written by the same code (benchmarks/bench_gini_split.py)
@pytest.mark.parametrize("eps, noise", [(1.0, "cauchy"), (0.15, "cauchy"), (3.0, "laplace")])
def test_shipped_entries_equal_a_fresh_search(eps, noise):
    key = _page_key(eps, noise)
    noise, eps, delta, n, lo, hi, level, method, gamma, mode = key
    fresh = intervals_gini_split._optimise(key, None, None)
    shipped = intervals.optimise_gini_split(eps, delta, noise, n, lo, hi, level, gamma=gamma)
    assert shipped.to_dict() == fresh.to_dict()
    assert {k: SPLITS[key][k] for k in ("beta", "eta", "model_width")} == {
        "beta": fresh.beta,
        "eta": fresh.eta,
        "model_width": fresh.model_width,
    }


def test_a_shipped_entry_that_does_not_add_up_is_not_used(monkeypatch):
    key = _page_key(2.0, "laplace")
    monkeypatch.setitem(SPLITS, key, {**SPLITS[key], "epsilon_bound": 0.5})
    assert intervals_gini_split._shipped_plan(key) is None


def test_the_file_cache_keeps_the_models_widths(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_CACHE_DIR", str(tmp_path))
    first = mechanisms.GiniIntervalMechanism(1.0, 0.0, 1e6, noise="cauchy", planning_n=150).plan
    again = mechanisms.GiniIntervalMechanism(1.0, 0.0, 1e6, noise="cauchy", planning_n=150).plan
    assert math.isfinite(first.model_width) and math.isfinite(first.model_oracle_width)
    assert again.to_dict() == first.to_dict()


def test_the_shipped_key_names_the_inputs_in_the_tables_order():
    """shipped_split_key gives the named inputs the table, the file cache and the search share; it equals the plain
    tuple the table is written with, and fixes every argument of gini_plan but the split."""
    key = _page_key(1.0, "cauchy")
    assert isinstance(key, intervals_gini_split.SplitInputs)
    assert (key.noise, key.epsilon, key.delta, key.method, key.calibration_mode) == (
        "cauchy",
        1.0,
        None,
        "pivot",
        "tight",
    )
    assert tuple(key) in SPLITS and SPLITS[key] is SPLITS[tuple(key)]
    plan = intervals.gini_plan(0.8, 0.2, 0.05, **key.plan_kwargs())
    assert plan.epsilon == pytest.approx(1.0) and plan.method == "pivot"
