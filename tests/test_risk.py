"""Tests of dpcore.risk: the posterior bound is Bayes' rule at the worst likelihood ratio e^eps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore import risk
from dpcore.validation import DPInputError


def test_hand_values():
    # eps = ln 3, p = 0.5: 0.5*3 / (0.5 + 1.5) = 0.75
    assert risk.max_posterior(0.5, math.log(3)) == pytest.approx(0.75)
    # p = 0.01, eps = 1: 0.01 e / (0.99 + 0.01 e) = 0.027098...
    assert risk.max_posterior(0.01, 1.0) == pytest.approx(0.01 * math.e / (0.99 + 0.01 * math.e))
    assert risk.min_posterior(0.5, math.log(3)) == pytest.approx(0.25)
    assert risk.max_posterior(0.0, 5.0) == 0.0 and risk.max_posterior(1.0, 5.0) == 1.0


def test_bound_is_attained_by_randomised_response_and_never_exceeded():
    """Randomised response with keep-probability e^eps/(1+e^eps) is eps-DP and reaches the bound exactly;
    random eps-DP output distributions (likelihood ratios within e^+-eps) never exceed it."""
    eps = 0.7
    keep = math.exp(eps) / (1 + math.exp(eps))
    for p in (0.01, 0.2, 0.5, 0.9):
        post = p * keep / (p * keep + (1 - p) * (1 - keep))
        assert post == pytest.approx(risk.max_posterior(p, eps), rel=1e-12)
    rng = np.random.default_rng(3)
    q = rng.uniform(0.01, 1, size=(2000, 5))
    q /= q.sum(axis=1, keepdims=True)
    ratio = np.exp(rng.uniform(-eps, eps, size=q.shape))
    r = q * ratio
    r /= r.sum(axis=1, keepdims=True)
    lr = r / q
    ok = np.all(np.abs(np.log(lr)) <= eps, axis=1)  # keep only pairs that are eps-DP after normalising
    p = 0.3
    post = p * r[ok] / (p * r[ok] + (1 - p) * q[ok])
    assert ok.sum() > 100
    assert post.max() <= risk.max_posterior(p, eps) + 1e-12
    assert post.min() >= risk.min_posterior(p, eps) - 1e-12


def test_curve_and_inverse():
    c = risk.posterior_curve(1.0)
    assert c.prior.shape == c.upper.shape == (201,)
    assert np.all(c.upper >= c.prior - 1e-15) and np.all(c.lower <= c.prior + 1e-15)
    assert np.all(np.diff(c.upper) >= 0)
    eps = risk.epsilon_for_posterior(0.01, 0.5)
    assert eps == pytest.approx(math.log(99))
    assert risk.max_posterior(0.01, eps) == pytest.approx(0.5)


def test_large_epsilon_stable():
    assert risk.max_posterior(1e-6, 50.0) == pytest.approx(1.0, abs=1e-9)
    assert np.isfinite(risk.posterior_curve(700.0).upper).all()


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon(bad):
    with pytest.raises(DPInputError):
        risk.max_posterior(0.5, bad)


def test_bad_prior():
    with pytest.raises(DPInputError):
        risk.max_posterior(1.5, 1.0)
    with pytest.raises(DPInputError):
        risk.max_posterior(float("nan"), 1.0)
    with pytest.raises(DPInputError):
        risk.epsilon_for_posterior(0.5, 0.4)


def test_deployments_table_has_sources():
    rows = risk.deployments_table()
    assert len(rows) >= 8
    orgs = {r["organisation"] for r in rows}
    assert {"US Census Bureau", "Apple", "Google", "LinkedIn", "Microsoft"} <= orgs
    assert all(r["source"] and r["privacy unit"] for r in rows)
    census = [r for r in rows if "redistricting" in r["release"]][0]
    assert census["rho (zCDP)"] == 2.56
