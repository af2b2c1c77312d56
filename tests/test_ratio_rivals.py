"""The rivals of Appendix B/C: NaiveRelativeRisk, NoisedLog, smooth sensitivity (Claim C.6) with Laplace
and generalized Cauchy noise, propose-test-release; and sample accuracy of every algorithm (Figure 1).

Privacy proofs are attacked directly: sensitivities against brute force, the smooth bound's two
defining properties on every neighbour, the actual privacy loss / hockey-stick divergence of the
released densities for neighbouring datasets, PTR's distance being 1-Lipschitz.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore import noise, ratio
from dpcore.ratio import rivals as ratio_rivals
from dpcore.validation import DPInputError


def _neighbours(x, y):
    """One record changes one count by one; domain x >= 0, y >= 1."""
    out = [(x + 1, y), (x, y + 1)]
    if x >= 1:
        out.append((x - 1, y))
    if y >= 2:
        out.append((x, y - 1))
    return out


# ------------------------------------------------------------------ NaiveRelativeRisk / NoisedLog


@pytest.mark.parametrize("nx,ny", [(1, 1), (1, 5), (2, 3), (5, 4), (7, 7), (3, 12)])
def test_naive_sensitivity_brute_force(nx, ny):
    rr = lambda x, y: (x / nx) / (y / ny)
    one = both = 0.0
    for x in range(nx + 1):
        for y in range(1, ny + 1):
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    x2, y2 = x + dx, y + dy
                    if 0 <= x2 <= nx and 1 <= y2 <= ny:
                        d = abs(rr(x, y) - rr(x2, y2))
                        both = max(both, d)
                        if abs(dx) + abs(dy) <= 1:
                            one = max(one, d)
    assert ratio.naive_sensitivity(nx, ny) == pytest.approx(one)
    assert ratio.naive_sensitivity(nx, ny, both_counts=True) == pytest.approx(both)


def test_naive_release_scale_and_accuracy_claim_b2():
    rel = ratio.naive_relative_risk(30, 40, 100, 100, epsilon=1.0, rng=1)
    assert rel.confidential_noise_scale == pytest.approx(50.0)  # n_y / 2 / eps
    # Claim B.2: P(|Lap(b)| >= alpha) = exp(-alpha / b), via the release function itself
    rng = np.random.default_rng(2)
    vals = np.array([ratio.naive_relative_risk(3, 4, 10, 10, epsilon=1.0, rng=rng).value for _ in range(4000)])
    beta = math.exp(-0.5 * 1.0 / ratio.naive_sensitivity(10, 10))
    emp = np.mean(np.abs(vals - 3 / 4) >= 0.5)
    assert abs(emp - beta) <= 4 * math.sqrt(beta * (1 - beta) / 4000)


def test_naive_bad_input():
    with pytest.raises(DPInputError, match="exceed"):
        ratio.naive_relative_risk(30, 40, 20, 100, epsilon=1.0)
    with pytest.raises(DPInputError, match="y must be >= 1"):
        ratio.naive_relative_risk(3, 0, 20, 100, epsilon=1.0)


def test_noised_log_sensitivity_brute_force():
    """ln x - ln y over x, y >= 1: one count changing moves it by <= ln 2, both by <= 2 ln 2 <= 2 (Claim B.3)."""
    xs = np.arange(1, 200)
    one = np.log(xs + 1) - np.log(xs)
    assert one.max() == pytest.approx(math.log(2))
    assert 2 * one.max() <= 2.0


def test_noised_log_accuracy_claim_b4_and_debias_claim_b5():
    rng = np.random.default_rng(3)
    for eps, x, y in [(1.0, 30, 30), (0.5, 10, 40), (3.0, 8, 2)]:
        acc = ratio.sample_accuracy_all(x, y, epsilon=eps, alpha=0.1, n=100)["NoisedLog"]
        vals = np.array([ratio.noised_log(x, y, epsilon=eps, rng=rng).value for _ in range(3000)])
        emp = np.mean(np.abs(vals - x / y) >= 0.1)
        assert abs(emp - acc) <= 4 * math.sqrt(acc * (1 - acc) / 3000)
    # Claim B.5: E[e^L] = 1/(1 - 4/eps^2); eps = 6 -> Var(e^L) finite, SE from the sample
    L = rng.laplace(0, 2 / 6, 2_000_000)
    e = np.exp(L)
    assert abs(e.mean() - ratio.noised_log_bias_factor(6.0)) <= 4 * e.std() / math.sqrt(e.size)
    deb = np.array([ratio.noised_log(5, 4, epsilon=6.0, debias=True, rng=rng).value for _ in range(20000)])
    assert abs(deb.mean() - 5 / 4) <= 4 * deb.std() / math.sqrt(deb.size)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_noised_log_debias_does_not_exist_for_small_epsilon(eps):
    with pytest.raises(DPInputError, match="does not exist"):
        ratio.noised_log(5, 4, epsilon=eps, debias=True)
    with pytest.raises(DPInputError, match="does not exist"):
        ratio.noised_log_bias_factor(eps)


def test_noised_log_relative_risk_scaling():
    a = ratio.noised_log(5, 4, epsilon=1.0, n_x=50, n_y=100, rng=4)
    b = ratio.noised_log(5, 4, epsilon=1.0, rng=4)
    assert a.value == pytest.approx(b.value * 100 / 50)
    with pytest.raises(DPInputError, match="x must be >= 1"):
        ratio.noised_log(0, 4, epsilon=1.0)


# ------------------------------------------------------------------ local / smooth sensitivity (Claim C.6)

XMAX, YMAX, KMAX = 14, 14, 18


def _ls_brute(x, y):
    f = x / y
    return max(abs(f - a / b) for a, b in _neighbours(x, y))


def test_local_sensitivity_brute_force():
    for x in range(0, 40):
        for y in range(1, 40):
            assert ratio.ratio_local_sensitivity(x, y) == pytest.approx(_ls_brute(x, y))


def _ls_table(xmax, ymax):
    xs, ys = np.meshgrid(np.arange(xmax + 1), np.arange(1, ymax + 1), indexing="ij")
    return ratio.ratio_local_sensitivity(xs, ys)  # [x, y-1]


def test_claim_c6_closed_form_matches_brute_force():
    """A^(k)(x, y) = max LS over all (x', y') with |x-x'| + |y-y'| <= k in the domain, for x, y < 15, k < 19."""
    size = XMAX + KMAX + 1
    ls = _ls_table(size, YMAX + KMAX + 1)
    xs, ys = np.meshgrid(np.arange(size + 1), np.arange(1, YMAX + KMAX + 2), indexing="ij")
    mismatches = 0
    for x in range(XMAX + 1):
        for y in range(1, YMAX + 1):
            dist = np.abs(xs - x) + np.abs(ys - y)
            closed = ratio.ratio_sensitivity_at_distance(x, y, np.arange(KMAX + 1))
            for k in range(KMAX + 1):
                brute = ls[dist <= k].max()
                mismatches += not math.isclose(closed[k], brute, rel_tol=1e-12)
    assert mismatches == 0


def test_a_k_is_nondecreasing():
    for x, y in [(0, 1), (3, 1), (5, 9), (40, 7), (2, 60)]:
        a = ratio.ratio_sensitivity_at_distance(x, y, np.arange(300))
        assert np.all(np.diff(a) >= 0)


@pytest.mark.parametrize("beta", [0.02, 0.1, 0.5, 1.0])
def test_smooth_sensitivity_is_a_beta_smooth_upper_bound(beta):
    """Definition C.2 on every neighbour: S >= LS and S(D) <= e^beta S(D'); and S* equals the brute-force
    max_k e^{-beta k} A^(k) over a k range far beyond the loop bound k_max."""
    for x in range(0, 18):
        for y in range(1, 18):
            s = ratio.ratio_smooth_sensitivity(x, y, beta=beta).value
            assert s >= ratio.ratio_local_sensitivity(x, y) - 1e-15
            for a, b in _neighbours(x, y):
                assert s <= math.exp(beta) * ratio.ratio_smooth_sensitivity(a, b, beta=beta).value * (1 + 1e-12)
            k = np.arange(4 * ratio_rivals._k_max(x, y, beta) + 50)
            assert s == pytest.approx(np.max(np.exp(-beta * k) * ratio.ratio_sensitivity_at_distance(x, y, k)))


def _laplace_hockey_stick(m0, s0, m1, s1, eps):
    """delta(eps) = int max(0, p0 - e^eps p1) for p_i = Laplace(m_i, s_i), exactly: ln p0 - ln p1 - eps
    is linear between the kinks m0, m1, so the positive set is a union of intervals found in closed
    form, and each piece integrates through the Laplace CDFs."""

    def lap_cdf(z, m, sc):
        if z == math.inf:
            return 1.0
        if z == -math.inf:
            return 0.0
        return 0.5 * math.exp((z - m) / sc) if z < m else 1.0 - 0.5 * math.exp(-(z - m) / sc)

    F0 = lambda z: lap_cdf(z, m0, s0)
    F1 = lambda z: lap_cdf(z, m1, s1)

    def h(z):
        return (-abs(z - m0) / s0 - math.log(s0)) - (-abs(z - m1) / s1 - math.log(s1)) - eps

    knots = sorted({m0, m1})
    edges = [-math.inf] + knots + [math.inf]
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        # h is linear on (lo, hi): evaluate its slope and a point
        a = lo if math.isfinite(lo) else (hi - 1.0 if math.isfinite(hi) else 0.0)
        b = hi if math.isfinite(hi) else a + 1.0
        if not math.isfinite(lo):
            a, b = b - 1.0, b
        slope = (h(b) - h(a)) / (b - a)
        cuts = [lo, hi]
        if slope != 0:
            root = a - h(a) / slope
            if lo < root < hi:
                cuts = [lo, root, hi]
        for l, u in zip(cuts[:-1], cuts[1:], strict=True):
            mid = (l + u) / 2 if math.isfinite(l) and math.isfinite(u) else (u - 1.0 if math.isfinite(u) else l + 1.0)
            if h(mid) > 0:
                total += (F0(u) - F0(l)) - math.exp(eps) * (F1(u) - F1(l))
    return max(total, 0.0)


def test_hockey_stick_helper_against_known_values():
    # same scale, shift d: delta(eps) for Laplace = max(0, 1 - e^{(eps - d/s)/2}) (Laplace mechanism)
    for d, s, e in [(1.0, 1.0, 0.5), (2.0, 1.0, 1.0), (1.0, 2.0, 0.2)]:
        want = max(0.0, 1 - math.exp((e - d / s) / 2))
        assert _laplace_hockey_stick(0.0, s, d, s, e) == pytest.approx(want, abs=1e-12)
    assert _laplace_hockey_stick(0.0, 1.0, 1.0, 1.0, 1.0) == pytest.approx(0.0, abs=1e-15)


def test_smooth_laplace_mechanism_is_eps_delta_on_neighbours():
    """The released densities of x/y + (2 S*/eps) Lap(1) for every neighbouring pair (x, y < 16) have
    hockey-stick divergence <= delta at eps (Lemma C.5 with beta = eps / (2 ln(2/delta)))."""
    eps, delta = 1.0, 0.01
    beta = ratio.smooth_laplace_beta(eps, delta)
    worst = 0.0
    for x in range(0, 16):
        for y in range(1, 16):
            s0 = 2 * ratio.ratio_smooth_sensitivity(x, y, beta=beta).value / eps
            for a, b in _neighbours(x, y):
                s1 = 2 * ratio.ratio_smooth_sensitivity(a, b, beta=beta).value / eps
                worst = max(worst, _laplace_hockey_stick(x / y, s0, a / b, s1, eps))
    assert worst <= delta
    # the same check catches a broken calibration: local sensitivity instead of smooth
    x, y, a, b = 0, 1, 0, 2
    bad = _laplace_hockey_stick(
        x / y,
        2 * ratio.ratio_local_sensitivity(x, y) / eps,
        a / b,
        2 * float(ratio.ratio_local_sensitivity(a, b)) / eps,
        eps,
    )
    bad2 = max(
        _laplace_hockey_stick(
            5 / 2,
            2 * float(ratio.ratio_local_sensitivity(5, 2)) / eps,
            5 / 1,
            2 * float(ratio.ratio_local_sensitivity(5, 1)) / eps,
            eps,
        ),
        bad,
    )
    assert bad2 > delta


def test_smooth_cauchy_privacy_loss_on_neighbours():
    """Pure DP: sup_z |ln p0(z) - ln p1(z)| <= eps for the generalized-Cauchy release on every neighbour
    (log-spaced grid out to 1e8 scales; the calibration's certificate from dpcore.noise also <= eps)."""
    eps, gamma = 1.0, 4.0
    cal = noise.smooth_noise_calibration(eps, gamma, mode="paper")
    assert cal.certified_loss <= eps
    gc = noise.GeneralizedCauchy(gamma)
    u = np.concatenate([-np.logspace(-4, 8, 3000)[::-1], [0.0], np.logspace(-4, 8, 3000)])

    def worst_loss(scale_of):
        worst = 0.0
        for x in range(0, 12):
            for y in range(1, 12):
                s0 = scale_of(x, y) / cal.alpha
                for a, b in _neighbours(x, y):
                    s1 = scale_of(a, b) / cal.alpha
                    z = x / y + s0 * u
                    l0 = gc.logpdf((z - x / y) / s0) - math.log(s0)
                    l1 = gc.logpdf((z - a / b) / s1) - math.log(s1)
                    worst = max(worst, float(np.max(np.abs(l0 - l1))))
        return worst

    assert worst_loss(lambda x, y: ratio.ratio_smooth_sensitivity(x, y, beta=cal.beta).value) <= eps
    # the check fails for broken scales: local sensitivity (about 3.3 eps) or a 3x too large beta (about 2.3 eps)
    assert worst_loss(lambda x, y: float(ratio.ratio_local_sensitivity(x, y))) > eps
    assert worst_loss(lambda x, y: ratio.ratio_smooth_sensitivity(x, y, beta=3 * cal.beta).value) > eps


def test_smooth_releases_run_and_validate():
    r1 = ratio.smooth_ratio_laplace(10, 20, epsilon=1.0, delta=1e-3, rng=1)
    beta = ratio.smooth_laplace_beta(1.0, 1e-3)
    assert r1.confidential_noise_scale == pytest.approx(2 * ratio.ratio_smooth_sensitivity(10, 20, beta=beta).value)
    r2 = ratio.smooth_ratio_cauchy(10, 20, epsilon=1.0, rng=1)
    assert r2.confidential_noise_scale > 0 and math.isfinite(r2.value)
    with pytest.raises(DPInputError):
        ratio.smooth_ratio_laplace(10, 20, epsilon=1.0, delta=1.0)
    with pytest.raises(DPInputError, match="y must be >= 1"):
        ratio.smooth_ratio_cauchy(10, 0, epsilon=1.0)


# ------------------------------------------------------------------ PTR


def test_ptr_distance_is_one_lipschitz_and_matches_brute_force():
    """gamma(D) = min{k: A^(k)(D) > b} changes by at most one between neighbours (PTR's proof)."""
    for b in (0.05, 0.2, 0.6, 1.5):
        for x in range(0, 20):
            for y in range(1, 20):
                g = ratio.ptr_distance(x, y, b)
                a = ratio.ratio_sensitivity_at_distance(x, y, np.arange(g + 1))
                assert a[g] > b and (g == 0 or a[g - 1] <= b)
                for nx_, ny_ in _neighbours(x, y):
                    assert abs(ratio.ptr_distance(nx_, ny_, b) - g) <= 1


@pytest.mark.slow
def test_ptr_failure_rate_matches_formula():
    rng = np.random.default_rng(6)
    for x, y, b in [(30, 30, 0.05), (30, 30, 0.1), (10, 40, 0.03)]:
        runs = [ratio.ptr_ratio(x, y, epsilon=1.0, delta=0.01, bound=b, rng=rng) for _ in range(2000)]
        fails = np.mean([r.failed for r in runs])
        p = float(ratio.ptr_failure_probability(ratio.ptr_distance(x, y, b), epsilon=1.0, delta=0.01))
        assert runs[0].confidential_failure_probability == pytest.approx(p)
        assert abs(fails - p) <= 4 * math.sqrt(max(p * (1 - p), 1e-4) / 2000)
        assert all((r.value is None) == r.failed for r in runs)
    # when the proposal is below the local sensitivity (gamma = 0) PTR fails with prob >= 1 - delta/2
    assert ratio.ptr_failure_probability(0, epsilon=1.0, delta=0.01) >= 1 - 0.005


def _ptr_worst_delta(fail_prob, eps, bounds, size):
    """Exact hockey-stick divergence at eps of the whole PTR output (FAIL atom + Laplace density at eps/2)
    over every neighbouring pair with x, y < size; ``fail_prob(x, y, b)`` gives P[FAIL]."""
    _, er = ratio_rivals._ptr_eps(eps)
    worst = 0.0
    for b in bounds:
        for x in range(0, size):
            for y in range(1, size):
                for a, c in _neighbours(x, y):
                    for (u0, v0), (u1, v1) in (((x, y), (a, c)), ((a, c), (x, y))):
                        f0, f1 = fail_prob(u0, v0, b), fail_prob(u1, v1, b)
                        d = max(0.0, f0 - math.exp(eps) * f1)
                        if f0 < 1 and f1 < 1:
                            shift = math.log((1 - f1) / (1 - f0))
                            d += (1 - f0) * _laplace_hockey_stick(u0 / v0, b / er, u1 / v1, b / er, eps + shift)
                        elif f0 < 1:
                            d += 1 - f0
                        worst = max(worst, d)
    return worst


@pytest.mark.slow
def test_ptr_whole_mechanism_is_eps_delta_on_neighbours():
    """Theorem C.7 with eps/2 for the test and eps/2 for the release: the exact divergence of the whole
    output is <= delta on every neighbouring pair; and whenever PTR can release (gamma >= 1), the ratio
    moves by at most the proposed bound between neighbours (the release step's sensitivity)."""
    eps, delta = 1.0, 0.01
    bounds = (0.03, 0.1, 0.3, 1.0)

    def pf(x, y, b):
        return float(ratio.ptr_failure_probability(ratio.ptr_distance(x, y, b), epsilon=eps, delta=delta))

    assert _ptr_worst_delta(pf, eps, bounds, 11) <= delta
    for b in bounds:
        for x in range(0, 20):
            for y in range(1, 20):
                if ratio.ptr_distance(x, y, b) >= 1:
                    assert all(abs(x / y - a / c) <= b + 1e-15 for a, c in _neighbours(x, y))
    # the same check rejects a broken test step (threshold 0 instead of ln(1/delta)/eps_t)
    et, _ = ratio_rivals._ptr_eps(eps)

    def pf_broken(x, y, b):
        g = ratio.ptr_distance(x, y, b)
        return 0.5 * math.exp(-et * g)

    assert _ptr_worst_delta(pf_broken, eps, (0.1,), 8) > delta


def test_ptr_oracle_minimises_total_error():
    bound, beta = ratio.ptr_oracle_bound(30, 30, epsilon=1.0, delta=1 / 200, alpha=0.1)
    cands = ratio.ratio_sensitivity_at_distance(30, 30, np.arange(200))
    errs = ratio_rivals._ptr_error(30, 30, 1.0, 1 / 200, 0.1, np.unique(cands))
    assert beta == pytest.approx(errs.min())
    assert bound in np.unique(cands)


# ------------------------------------------------------------------ sample accuracy of every algorithm


def _simulate_errors(name, x, y, eps, alpha, n, rng, reps):
    """Draw releases from the actual release functions and return the error frequency (FAIL = error)."""
    delta = 1 / n
    errs = 0
    for _ in range(reps):
        if name == "LaplaceNoisedCounts":
            c = ratio.laplace_noised_counts(x, y, epsilon=eps, rng=rng)
            v = c.ratio_unclipped
        elif name == "NaiveRelativeRisk":
            v = ratio.naive_relative_risk(x, y, n, n, epsilon=eps, rng=rng).value
        elif name == "NoisedLog":
            v = ratio.noised_log(x, y, epsilon=eps, rng=rng).value
        elif name == "NoisedLog (debiased)":
            v = ratio.noised_log(x, y, epsilon=eps, debias=True, rng=rng).value
        elif name == "Smooth sensitivity (Laplace)":
            v = ratio.smooth_ratio_laplace(x, y, epsilon=eps, delta=delta, rng=rng).value
        elif name == "Smooth sensitivity (generalized Cauchy)":
            v = ratio.smooth_ratio_cauchy(x, y, epsilon=eps, rng=rng).value
        else:
            out = ratio.ptr_ratio(x, y, epsilon=eps, delta=delta, alpha=alpha, rng=rng)
            v = None if out.failed else out.value
        errs += v is None or abs(v - x / y) >= alpha
    return errs / reps


@pytest.mark.slow
@pytest.mark.parametrize("x,y,eps", [(30, 30, 1.0), (60, 120, 3.0)])
def test_sample_accuracy_every_algorithm_monte_carlo(x, y, eps):
    """Figure 1's design (alpha = 0.1, delta = 1/n): each closed form against the release function itself."""
    n = 200
    acc = ratio.sample_accuracy_all(x, y, epsilon=eps, alpha=0.1, n=n)
    assert set(acc) == set(ratio.ALGORITHMS) - (set() if eps > 2 else {"NoisedLog (debiased)"})
    rng = np.random.default_rng(x + y)
    reps = 1500
    for name, beta in acc.items():
        emp = _simulate_errors(name, x, y, eps, 0.1, n, rng, reps)
        assert abs(emp - beta) <= 4 * math.sqrt(max(beta * (1 - beta), 1e-3) / reps), name


def test_sample_accuracy_all_values_and_ordering():
    acc = ratio.sample_accuracy_all(60, 60, epsilon=1.0, alpha=0.1, n=200)
    # the paper's message (Section 5): at moderate eps and small samples LaplaceNoisedCounts wins
    assert acc["LaplaceNoisedCounts"] == min(acc.values())
    assert acc["NaiveRelativeRisk"] == pytest.approx(math.exp(-0.1 * 1.0 / 100))
    b4 = 0.5 * (1 + 0.1) ** (-0.5) + 0.5 * (1 - 0.1) ** 0.5
    assert acc["NoisedLog"] == pytest.approx(b4)
    with pytest.raises(DPInputError, match="exceed"):
        ratio.sample_accuracy_all(60, 300, epsilon=1.0, n=200)
