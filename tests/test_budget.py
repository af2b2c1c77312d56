"""Tests of dpcore.budget: conversions and composition against hand-computed cases, cap refusal."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore import budget as B
from dpcore.validation import DPInputError

# ---------------------------------------------------------------------------------------------
# conversions
# ---------------------------------------------------------------------------------------------


def test_pure_to_zcdp_hand_values():
    assert B.pure_to_zcdp(1.0) == 0.5
    assert B.pure_to_zcdp(0.2) == pytest.approx(0.02)
    assert B.pure(0.3).as_zcdp() == pytest.approx(0.045)


def test_bun_steinke_conversion_hand_value():
    # rho = 0.5, delta = 1e-6: 0.5 + 2 sqrt(0.5 * ln 1e6) = 0.5 + 2 sqrt(6.907755...) = 5.756521...
    expected = 0.5 + 2 * math.sqrt(0.5 * math.log(1e6))
    assert B.zcdp_to_approx_dp(0.5, 1e-6, method="bun-steinke") == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(5.7565217697, rel=1e-9)


def test_cks_formula_matches_direct_evaluation():
    # the CKS objective at its minimiser, evaluated by brute force on a fine alpha grid
    rho, delta = 0.1, 1e-5
    alphas = np.linspace(1.001, 200, 400_000)
    vals = alphas * rho + np.log1p(-1 / alphas) + (math.log(1 / delta) - np.log(alphas)) / (alphas - 1)
    assert B.zcdp_to_approx_dp(rho, delta) == pytest.approx(vals.min(), rel=1e-6)


@pytest.mark.parametrize("rho", [0.005, 0.05, 0.5, 2.0, 10.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_cks_tighter_than_bun_steinke_and_valid_for_gaussian(rho, delta):
    """CKS <= Bun-Steinke; and neither is below the exact epsilon of the Gaussian mechanism with
    the same rho (sensitivity 1, sigma^2 = 1/(2 rho)), which is rho-zCDP: a conversion below that
    curve would be an invalid privacy claim."""
    bs = B.zcdp_to_approx_dp(rho, delta, method="bun-steinke")
    cks = B.zcdp_to_approx_dp(rho, delta)
    assert cks <= bs + 1e-12
    sigma = math.sqrt(1 / (2 * rho))
    # exact Gaussian delta at the converted epsilon must not exceed the promised delta
    assert B.gaussian_exact_delta(cks, sigma) <= delta * (1 + 1e-9)
    # and the bound is not absurdly loose: within 25% + 0.1 of the exact Gaussian epsilon
    lo, hi = 0.0, cks
    for _ in range(100):
        mid = (lo + hi) / 2
        if B.gaussian_exact_delta(mid, sigma) > delta:
            lo = mid
        else:
            hi = mid
    assert cks <= 1.25 * hi + 0.1


def test_delta_for_epsilon_inverts_conversion():
    for rho in (0.01, 0.3, 3.0):
        eps = B.zcdp_to_approx_dp(rho, 1e-7)
        assert B.zcdp_delta_for_epsilon(rho, eps) == pytest.approx(1e-7, rel=2e-3)


def test_gaussian_exact_delta_against_monte_carlo_privacy_loss():
    """delta(eps) = E[(1 - e^(eps - L))_+] with the privacy loss L ~ N(mu, 2 mu), mu = 1/(2 sigma^2)."""
    sigma, eps = 1.3, 0.8
    rng = np.random.default_rng(7)
    mu = 1 / (2 * sigma**2)
    loss = rng.normal(mu, math.sqrt(2 * mu), 2_000_000)
    samples = np.maximum(0.0, 1 - np.exp(eps - loss))
    mc, se = samples.mean(), samples.std() / math.sqrt(samples.size)
    assert abs(B.gaussian_exact_delta(eps, sigma) - mc) < 5 * se


# ---------------------------------------------------------------------------------------------
# composition
# ---------------------------------------------------------------------------------------------


def test_sequential_composition_hand_cases():
    assert B.compose_sequential([B.pure(0.1), B.pure(0.25)]).epsilon == pytest.approx(0.35)
    c = B.compose_sequential([B.approx(0.5, 1e-6), B.approx(0.2, 1e-7), B.pure(0.3)])
    assert (c.kind, c.epsilon, c.delta) == ("approx", pytest.approx(1.0), pytest.approx(1.1e-6))
    z = B.compose_sequential([B.zcdp(0.1), B.pure(1.0)])
    assert (z.kind, z.rho) == ("zcdp", pytest.approx(0.6))
    with pytest.raises(DPInputError, match="delta"):
        B.compose_sequential([B.zcdp(0.1), B.approx(1, 1e-6)])
    with pytest.raises(DPInputError):
        B.compose_sequential([])


def test_parallel_composition_max_and_group_privacy():
    parts = [B.pure(0.5), B.pure(1.0), B.pure(0.2)]
    assert B.compose_parallel(parts, record_can_move=False).epsilon == pytest.approx(1.0)
    assert B.compose_parallel(parts, record_can_move=True).epsilon == pytest.approx(2.0)
    z = B.compose_parallel([B.zcdp(0.1), B.zcdp(0.3)], record_can_move=True)
    assert z.rho == pytest.approx(1.2)  # group privacy 2^2 * 0.3
    a = B.compose_parallel([B.approx(1.0, 1e-6), B.approx(0.5, 2e-6)], record_can_move=True)
    assert a.epsilon == pytest.approx(2.0) and a.delta == pytest.approx((1 + math.e) * 2e-6)


def test_parallel_max_is_exact_for_disjoint_laplace_counts():
    """Two disjoint cells, each count + Lap(1/eps_i); one record changes one cell's count by 1.
    The worst log-likelihood ratio of the joint output over a grid is max(eps_i) (fixed membership),
    and 2 * max(eps_i) when a replacement may move a record within/between cells."""
    eps = np.array([0.4, 0.9])
    z = np.linspace(-20, 20, 4001)

    def logpdf(v, c, e):
        return -e * np.abs(v - c)

    counts = np.array([10.0, 7.0])
    worst_fixed = 0.0
    for cell in range(2):  # change one cell by +-1 (membership fixed: add/remove within the cell)
        for d in (-1, 1):
            ratio = logpdf(z, counts[cell], eps[cell]) - logpdf(z, counts[cell] + d, eps[cell])
            worst_fixed = max(worst_fixed, np.abs(ratio).max())
    assert worst_fixed == pytest.approx(B.compose_parallel([B.pure(0.4), B.pure(0.9)], record_can_move=False).epsilon)
    # replacement inside the costliest cell with add/remove costs: count unchanged by size, but if the
    # part mechanism is only add/remove-DP its count can move by 2 (histogram of a sub-cell), loss 2 eps.
    ratio2 = logpdf(z, 10.0, 0.9) - logpdf(z, 12.0, 0.9)
    assert np.abs(ratio2).max() == pytest.approx(
        B.compose_parallel([B.pure(0.4), B.pure(0.9)], record_can_move=True).epsilon
    )


# ---------------------------------------------------------------------------------------------
# ledger
# ---------------------------------------------------------------------------------------------


def test_ledger_pure_cap_refusal_and_remaining():
    led = B.Ledger(cap=B.BudgetCap(epsilon=1.0))
    led.charge("gini", B.pure(0.4))
    led.charge_parallel("percentiles by cell", {"a": B.pure(0.3), "b": B.pure(0.5)}, record_can_move=False)
    assert led.spent_pure() == pytest.approx(0.9)
    assert led.remaining()["epsilon"] == pytest.approx(0.1)
    with pytest.raises(DPInputError, match="refused.*above the budget cap"):
        led.charge("ratio", B.pure(0.2))
    assert len(led.entries) == 2  # the refused charge left no trace
    led.charge("ratio", B.pure(0.1))
    assert led.remaining()["epsilon"] == pytest.approx(0.0, abs=1e-12)
    assert led.would_exceed(B.pure(1e-6))


def test_ledger_pure_cap_rejects_zcdp_and_approx():
    led = B.Ledger(cap=B.BudgetCap(epsilon=1.0))
    with pytest.raises(DPInputError, match="delta > 0"):
        led.charge("coinpress", B.zcdp(0.01))
    with pytest.raises(DPInputError):
        led.charge("gauss", B.approx(0.1, 1e-7))


def test_ledger_zcdp_cap():
    led = B.Ledger(cap=B.BudgetCap(rho=0.5))
    led.charge("coinpress", B.zcdp(0.25))
    led.charge("laplace", B.pure(0.5))  # 0.125
    assert led.spent_rho() == pytest.approx(0.375)
    assert led.remaining()["rho"] == pytest.approx(0.125)
    with pytest.raises(DPInputError, match="refused"):
        led.charge("more", B.zcdp(0.2))
    with pytest.raises(DPInputError, match="cannot be charged to a zCDP budget"):
        led.charge("gauss", B.approx(0.1, 1e-7))


def test_ledger_mixed_epsilon_delta_cap_hand_computed():
    cap = B.BudgetCap(epsilon=3.0, delta=1e-5)
    led = B.Ledger(cap=cap)
    led.charge("gauss", B.approx(0.5, 4e-6))
    led.charge("coinpress", B.zcdp(0.05))
    led.charge("laplace", B.pure(0.3))
    # zCDP part converted at the delta left (1e-5 - 4e-6 = 6e-6); best of (pure + conv(rho)) and conv(rho + eps^2/2)
    d = 6e-6
    a = 0.3 + B.zcdp_to_approx_dp(0.05, d)
    b = B.zcdp_to_approx_dp(0.05 + 0.045, d)
    eps, delta = led.spent_approx(d)
    assert eps == pytest.approx(0.5 + min(a, b))
    assert delta == pytest.approx(1e-5)
    assert led.remaining()["epsilon"] == pytest.approx(3.0 - eps)
    assert led.spent_pure() is None and led.spent_rho() is None
    assert "ε" in led.describe_spent()


def test_ledger_json_roundtrip_fields():
    import json

    led = B.Ledger(cap=B.BudgetCap(epsilon=2.0))
    led.charge("x", B.pure(0.5), note="test")
    data = json.loads(led.to_json())
    assert data["cap"]["epsilon"] == 2.0
    assert data["entries"][0]["cost"]["epsilon"] == 0.5 and data["entries"][0]["timestamp"]


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_bad_epsilon_rejected(bad):
    with pytest.raises(DPInputError):
        B.pure(bad)


def test_bad_inputs():
    with pytest.raises(DPInputError):
        B.approx(1.0, 1.0)
    with pytest.raises(DPInputError):
        B.zcdp(-0.1)
    with pytest.raises(DPInputError):
        B.BudgetCap()
    with pytest.raises(DPInputError):
        B.BudgetCap(epsilon=1.0, rho=1.0)
    with pytest.raises(DPInputError):
        B.zcdp_to_approx_dp(0.1, 0.0)
    with pytest.raises(TypeError):
        B.Ledger().charge("x", 0.5)
    with pytest.raises(DPInputError, match="no budget cap"):
        B.Ledger().remaining()
    with pytest.raises(DPInputError):
        B.compose_parallel([])


@pytest.mark.parametrize("rho", [1e-10, 1e-6, 1e-3, 100.0, 1e4])
@pytest.mark.parametrize("delta", [0.5, 1e-30])
def test_conversion_extremes_finite_and_valid(rho, delta):
    cks = B.zcdp_to_approx_dp(rho, delta)
    assert 0 <= cks <= B.zcdp_to_approx_dp(rho, delta, method="bun-steinke") + 1e-12
    sigma = math.sqrt(1 / (2 * rho))
    assert B.gaussian_exact_delta(cks, sigma) <= delta * (1 + 1e-9) + 1e-300


def test_wrong_types_raise_typeerror_and_overflow_is_handled():
    with pytest.raises(TypeError):
        B.group_privacy_2(float("nan"))
    with pytest.raises(TypeError):
        B.compose_sequential("abc")
    with pytest.raises(TypeError):
        B.compose_parallel([B.pure(1.0), 2.0])
    assert B.zcdp_delta_for_epsilon(1.44e16, 1.0) == 1.0  # no guarantee left: delta = 1, no OverflowError
