"""Every data-dependent field other than the released value is named ``confidential_*``,
and release records never contain confidential values.

Method: each release function runs on a data set and on a neighbour (one record replaced) with the
SAME seed, so the noise draws are identical and every field that differs is a function of the data.
Such a field must be a declared DP output of its class or be named ``confidential_*``. The test also
walks the modules: every release dataclass they define must be covered here, so a new one cannot
slip through unchecked.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math

import numpy as np
import pytest

from dpcore import gini, percentiles, planner, ratio, release, stratified

#: class -> fields that are DP outputs (or post-processing of them)
DP_OUTPUTS = {
    "GiniRelease": {"value", "noisy_value"},
    "LaplaceGiniRelease": {"value"},
    "PercentileRelease": {"values", "noisy_counts", "fallback"},
    "SmoothPercentileRelease": {"values"},
    "EMPercentileRelease": {"values"},
    "NoisedCounts": {"x_noisy", "y_noisy"},
    "RatioRelease": {"value"},
    "PTRRelease": {"value", "failed"},
    "LaplaceMeanRelease": {"value"},
    "StratifiedMeanRelease": {"overall", "per_group"},
    # published: the values with honest digits, their intervals and the extra DP outputs the intervals use
    "StatisticRelease": {"values", "published"},
    "ReleaseRecord": {"released", "timestamp", "released_lower", "released_upper", "published_inputs"},
}

INCOMES = np.array(
    [
        12_000.0,
        18_000,
        25_000,
        31_000,
        40_000,
        47_000,
        55_000,
        68_000,
        80_000,
        95_000,
        20_000,
        33_000,
        41_000,
        59_000,
        72_000,
        110_000,
    ]
)
NEIGHBOUR = INCOMES.copy()
NEIGHBOUR[2] = 150_000.0  # group a: one fewer below 30,000, one more at or above it
GROUPS = np.array(["a"] * 8 + ["b"] * 8)


def _same(a, b) -> bool:
    try:
        if isinstance(a, dict) or isinstance(b, dict):
            return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)
        aa, bb = np.asarray(a), np.asarray(b)
        if aa.dtype.kind in "fc" or bb.dtype.kind in "fc":
            return aa.shape == bb.shape and bool(np.all((aa == bb) | (np.isnan(aa) & np.isnan(bb))))
        return bool(np.all(aa == bb)) and aa.shape == bb.shape
    except Exception:
        return a == b


def _releases():
    """(name, release on the data, release on a neighbour) for every release function, same seed."""
    out = []

    def pair(name, fn):
        out.append((name, fn(INCOMES), fn(NEIGHBOUR)))

    pair("gini.release_gini", lambda x: gini.release_gini(x, epsilon=1.0, gamma=2.0, lower=0.0, upper=2e5, rng=5))
    pair("gini.release_gini_laplace", lambda x: gini.release_gini_laplace(x, epsilon=1.0, lower=0.0, upper=2e5, rng=5))
    pair("percentiles.release_percentiles", lambda x: percentiles.release_percentiles(x, epsilon=1.0, rng=5))
    pair(
        "percentiles.release_percentiles_smooth",
        lambda x: percentiles.release_percentiles_smooth(x, epsilon=1.0, rng=5),
    )
    pair("percentiles.release_percentiles_em", lambda x: percentiles.release_percentiles_em(x, epsilon=1.0, rng=5))

    def counts(x):
        return int(np.count_nonzero(x[:8] < 30_000)), int(np.count_nonzero(x[8:] < 30_000)) + 1

    pair("ratio.laplace_noised_counts", lambda x: ratio.laplace_noised_counts(*counts(x), epsilon=1.0, rng=5))
    pair("ratio.naive_relative_risk", lambda x: ratio.naive_relative_risk(*counts(x), 8, 8, epsilon=1.0, rng=5))
    pair("ratio.smooth_ratio_laplace", lambda x: ratio.smooth_ratio_laplace(*counts(x), epsilon=1.0, delta=1e-6, rng=5))
    pair("ratio.smooth_ratio_cauchy", lambda x: ratio.smooth_ratio_cauchy(*counts(x), epsilon=1.0, rng=5))
    pair(
        "ratio.ptr_ratio",
        lambda x: ratio.ptr_ratio(*(c + 400 for c in counts(x)), epsilon=1.0, delta=1e-6, bound=0.05, rng=5),
    )
    pair(
        "stratified.clipped_laplace_mean",
        lambda x: stratified.clipped_laplace_mean(x, epsilon=1.0, clip_range=(0.0, 2e5), rng=5),
    )
    pair(
        "stratified.stratified_mean",
        lambda x: stratified.stratified_mean(x, GROUPS, epsilon=1.0, clip_range=(0.0, 2e5), rng=5),
    )
    for kind, kw in [
        ("count", dict(threshold=30_000)),
        ("mean", dict(upper=2e5)),
        ("group_means", dict(upper=2e5)),
        ("gini", dict(upper=2e5)),
        ("percentiles", dict(n_sims=100)),
        ("ratio", dict(threshold=30_000)),
    ]:
        pair(
            f"planner.{kind}._draw",
            lambda x, kind=kind, kw=kw: planner.make_statistic(kind, x, GROUPS, **kw)._draw(1.0, rng=5),
        )
        pair(
            f"release.simulate_release[{kind}]",
            lambda x, kind=kind, kw=kw: release.simulate_release(
                [(planner.make_statistic(kind, x, GROUPS, **kw), 1.0)], rng=5
            )[0],
        )
    return out


RELEASES = _releases()


@pytest.mark.parametrize("name, a, b", RELEASES, ids=[r[0] for r in RELEASES])
def test_data_dependent_fields_are_outputs_or_confidential(name, a, b):
    cls = type(a).__name__
    assert cls in DP_OUTPUTS, f"{name} returns {cls}: declare its DP outputs in DP_OUTPUTS"
    differing = []
    for f in dataclasses.fields(a):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if not _same(va, vb):
            differing.append(f.name)
    leaks = [n for n in differing if n not in DP_OUTPUTS[cls] and not n.startswith("confidential_")]
    assert not leaks, f"{name}: data-dependent fields not named confidential_*: {leaks}"
    if name == "release.simulate_release[gini]":
        return  # 16 records: honest digits of so noisy a Gini can be equal for both; planner.gini._draw checks the draw
    assert set(differing) & DP_OUTPUTS[cls], f"{name}: the neighbour pair did not change the output (weak test)"


def test_every_release_dataclass_is_covered():
    seen = set()
    for module in (gini, percentiles, ratio, stratified, planner, release):
        for name, obj in vars(module).items():  # a package: the names its __init__ imports
            if (
                inspect.isclass(obj)
                and dataclasses.is_dataclass(obj)
                and (obj.__module__ == module.__name__ or obj.__module__.startswith(module.__name__ + "."))
                and ("Release" in name or name == "NoisedCounts" or name == "ReleaseRecord")
            ):
                seen.add(name)
    assert seen <= set(DP_OUTPUTS), f"release dataclasses not checked here: {sorted(seen - set(DP_OUTPUTS))}"


def test_confidential_fields_have_one_name():
    r = gini.release_gini(INCOMES, epsilon=1.0, gamma=2.0, lower=0.0, upper=2e5, rng=1)
    for old in ("smooth_sensitivity", "k_star", "saturated"):
        assert not hasattr(r, old)  # only the confidential_* name
    assert r.noise_scale == r.confidential_noise_scale  # a read-only view of the confidential_* field
    p = ratio.ptr_ratio(3, 5, epsilon=1.0, delta=1e-6, bound=0.5, rng=1)
    assert not hasattr(p, "distance") and not hasattr(p, "failure_probability")
    s = percentiles.release_percentiles_smooth(INCOMES, epsilon=1.0, rng=1)
    assert not hasattr(s, "noise_scale") and not hasattr(s, "smooth_sensitivity")


def _walk(obj, path=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield f"{path}.{k}", k, v
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _walk(v, f"{path}[{i}]")


@pytest.mark.parametrize(
    "kind, kw",
    [
        ("gini", dict(upper=2e5)),
        ("mean", dict(upper=2e5)),
        ("ratio", dict(threshold=30_000)),
        ("percentiles", dict(n_sims=100)),
    ],
)
def test_records_never_contain_confidential_values(kind, kw, release_account):
    stat = planner.make_statistic(kind, INCOMES, GROUPS, **kw)
    rec = release.make_release([(stat, 1.0)], release_account)[0]
    doc = json.loads(release.records_to_json([rec]))
    for path, key, _ in _walk(doc):
        assert not str(key).startswith("confidential"), path
    text = json.dumps(doc)
    assert "confidential_" not in text.replace("confidential (", "")
    # numbers that describe the data other than through the DP output must not appear
    secrets = [float(v) for v in np.atleast_1d(stat.truth) if math.isfinite(float(v))]
    if kind == "gini":
        beta = stat.mechanism_at(1.0).smoothness
        secrets.append(stat.confidential_smooth_sensitivity(1.0, beta))
        secrets.append(stat._clipped)
    numbers = [v for _, _, v in _walk(doc) if isinstance(v, float)]
    for s in secrets:
        assert all(not math.isclose(v, s, rel_tol=1e-9) for v in numbers), (kind, s)
