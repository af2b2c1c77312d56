"""Tests of dpcore.release: CSPRNG use, ledger charging and refusal, records without true values."""
from __future__ import annotations

import json

import numpy as np
import pytest

import dpcore
from dpcore import budget as B, noise, planner as P, release as R
from dpcore.validation import DPInputError


@pytest.fixture(scope="module")
def data():
    gen = np.random.default_rng(77)
    x = gen.lognormal(10.5, 0.9, 3000)
    g = gen.choice(np.array(["north", "south"]), x.size)
    return x, g


def _stats(data):
    x, g = data
    return [P.CountAbove(x, 50_000), P.ClippedMean(x, 0, 400_000), P.GroupMeans(x, g, 0, 400_000),
            P.RatioStatistic(120, 80, 1500, 1500), P.PercentilesStatistic([x[:1500], x[1500:]], n_sims=200),
            P.GiniStatistic(x, 0, 1_000_000)]


def test_release_charges_ledger_and_records_fields(data):
    led = B.Ledger(cap=B.BudgetCap(epsilon=10.0))
    stats = _stats(data)
    recs = R.make_release([(s, 1.0) for s in stats], led)
    assert led.spent_pure() == pytest.approx(6.0)
    assert len(led.entries) == 6
    for s, r in zip(stats, recs):
        assert r.labels == s.labels and len(r.released) == len(s.labels)
        assert np.all(np.isfinite(r.released))
        assert r.epsilon == 1.0 and r.delta == 0.0 and r.timestamp and r.software == f"dpcore {dpcore.__version__}"
        assert r.sampler in (R.CSPRNG, R.FALLBACK)
    doc = json.loads(R.records_to_json(recs, led))
    assert doc["dpcore_version"] == dpcore.__version__
    assert doc["epsilon_spent_by_this_release"] == pytest.approx(6.0)
    assert {"statistic", "released", "mechanism", "parameters", "epsilon", "delta", "timestamp"} <= set(doc["releases"][0])
    csv = R.records_to_csv(recs)
    assert csv.count("\n") == 1 + sum(len(r.labels) for r in recs)


def test_release_uses_csprng_for_samplers_that_accept_it(data, monkeypatch):
    calls = []
    orig = noise.SecureRandom.random

    def spy(self, size=None):
        calls.append(size)
        return orig(self, size)

    monkeypatch.setattr(noise.SecureRandom, "random", spy)
    x, _ = data
    recs = R.make_release([(P.CountAbove(x, 50_000), 1.0), (P.RatioStatistic(120, 80, 1500, 1500), 1.0)],
                          B.Ledger())
    assert calls, "the OS CSPRNG source was not used"
    assert all(r.sampler == R.CSPRNG for r in recs)


def test_release_never_contains_true_values(data):
    x, g = data
    stats = _stats(data)
    recs = R.make_release([(s, 2.0) for s in stats], B.Ledger())
    # a noisy value may coincide with the truth by chance (geometric noise is 0 with probability ~0.76 at
    # eps = 2), so search everything except the released numbers themselves
    doc = json.loads(R.records_to_json(recs))
    for r in doc["releases"]:
        r.pop("released")
    text = json.dumps(doc)
    for s in stats:
        for t in np.atleast_1d(s.truth):
            for fmt in (repr(float(t)), f"{t:.6f}", f"{t:.2f}"):
                assert fmt not in text, (s.name, fmt)
    assert repr(float(x.mean())) not in text


def test_refusal_before_noise_and_no_charge(data, monkeypatch):
    x, _ = data
    led = B.Ledger(cap=B.BudgetCap(epsilon=1.0))
    led.charge("earlier", B.pure(0.8))
    called = []
    monkeypatch.setattr(P.CountAbove, "release", lambda self, eps, rng=None: called.append(1) or np.array([1.0]))
    with pytest.raises(DPInputError, match="refused.*Nothing was released"):
        R.make_release([(P.CountAbove(x, 50_000), 0.5)], led)
    assert not called and len(led.entries) == 1


def test_failed_release_charges_nothing(data, monkeypatch):
    x, _ = data
    led = B.Ledger()

    def boom(self, eps, rng=None):
        raise DPInputError("bad data")

    monkeypatch.setattr(P.ClippedMean, "release", boom)
    with pytest.raises(DPInputError, match="bad data"):
        R.make_release([(P.CountAbove(x, 50_000), 0.5), (P.ClippedMean(x, 0, 1e5), 0.5)], led)
    assert led.entries == []


def test_rounding_grid_applied(data):
    x, _ = data
    rec = R.make_release([(P.ClippedMean(x, 0, 400_000), 1.0)], B.Ledger(), rng=np.random.default_rng(1))[0]
    v = rec.released[0]
    assert abs(v * 100 - round(v * 100)) < 1e-6
    assert "NOT for real releases" in rec.sampler


def test_seeded_release_matches_method_module(data):
    """With a seeded generator the release equals the method module's own output (same mechanism)."""
    from dpcore import stratified

    x, _ = data
    rec = R.make_release([(P.ClippedMean(x, 0, 400_000), 1.0)], B.Ledger(), rng=np.random.default_rng(5))[0]
    direct = stratified.clipped_laplace_mean(x, epsilon=1.0, clip_range=(0, 400_000), rng=np.random.default_rng(5))
    assert rec.released[0] == pytest.approx(round(direct.value, 2), abs=0.006)


def test_bad_inputs(data):
    x, _ = data
    with pytest.raises(DPInputError):
        R.make_release([], B.Ledger())
    with pytest.raises(DPInputError):
        R.make_release([(P.CountAbove(x, 1.0), 0.0)], B.Ledger())
    with pytest.raises(TypeError):
        R.make_release([(P.CountAbove(x, 1.0), 1.0)], None)


def test_records_type_checks():
    with pytest.raises(TypeError):
        R.records_to_json("abc")
    with pytest.raises(TypeError):
        R.records_to_csv([1, 2])
