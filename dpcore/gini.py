"""Differentially private Gini index by smooth sensitivity (Lan & Reiter 2025).

Paper: ``../shared/papers/gini_lan_reiter_2025.md`` (sections 2-4, Appendix A).

Definition (one, used everywhere in the mechanism)
--------------------------------------------------
We use **eq. (1)** of the paper, the "population" Gini::

    g(X) = sum_i sum_j |x_i - x_j| / (2 n^2 xbar) = sum_i (2i - n - 1) x_(i) / (n * sum_i x_i)

with x sorted ascending. Its range is [0, (n - 1)/n]. The paper's toy example (Section 3)
uses eq. (2) (divide by n (n - 1) xbar, range [0, 1]); eq. (2) = eq. (1) * n / (n - 1).
``gini(x, definition="eq2")`` gives it, for that example only. Algorithms 1-2 of the paper
(``N / (n D)``) and the real-data check (CPS ASEC, 0.5361) are eq. (1). The paper's Section
4.1 derivations mix in eq. (2) (terms ``2/(n-1)``, ``w = (n+1)/(n-1)``); every bound in this
module is re-derived for eq. (1) (see :func:`local_sensitivity_bound`).

The all-zero data set has no Gini (0/0). Public functions refuse it; inside the sensitivity
analysis (whose neighbourhoods may reach it when ``lower = 0``) we use the convention
g(0, ..., 0) = 0 (perfect equality), so the mechanism is defined on every data set in
[L, U]^n.

Privacy model
-------------
Neighbouring relation: **replace one record** (bounded DP); the number of records ``n`` is
public, and so are the bounds ``[lower, upper]`` (chosen without looking at the data, or
released with DP by :mod:`dpcore.bounds` and charged to the budget). Data outside the bounds
are clipped to them (with a count that is confidential) before anything is computed.

Mechanism (eqs. (9)-(10)): ``g(X) + (S_beta(X)/alpha) Z`` with ``Z ~ GeneralizedCauchy(gamma)``,
``S_beta(X) = max_k e^{-beta k} A^(k)(X)`` a beta-smooth upper bound on the local sensitivity
(eq. (8)), and ``(alpha, beta)`` from :func:`dpcore.noise.smooth_noise_calibration`.

Where this module departs from the paper (each proven by a test)
---------------------------------------------------------------
1. The paper's local-sensitivity bound (eqs. (21)-(23), Theorem 4.3) rests on the claim that
   the largest change occurs at one of four rank pairs; that claim is argued with
   approximations ("n xbar >> U - x_1", "c_m is small") and mixes eqs. (1)/(2). We use our own
   rigorous bound (:func:`local_sensitivity_bound`), derived from the identity
   ``(g' - g) S' = dT/(2n) - g d`` with exact extremes of g and of the sum over the k-ball.
   It has the same structure as Theorem 4.3 (min/max Gini and min/max mean after k changes)
   and the same order of magnitude (about IQ (1 + g) / n).
2. Smoothness needs A^(k)(X') <= A^(k+1)(X) for neighbours. That holds here because A^(k) is
   a monotone function of exact extremes over the k-ball. The bound is capped at the global
   sensitivity, not at 1 (eq. (1) never changes by more than (n-1)/n).
3. Algorithm 3 sets beta = eps / (2 (gamma + 1)) while Section 2.3 uses beta = eps / gamma;
   we take beta (and alpha) from :func:`dpcore.noise.smooth_noise_calibration`.
4. Pruning (Section 4.4) uses the closed-form (fast) bound instead of the trivial bound 1:
   we stop at k once sup_{k' >= k} e^{-beta k'} A_fast(k') <= the current maximum. Since
   A_fast >= A_exact, the result equals the unpruned maximum.
5. Theorem 4.4 (fast bound) is replaced by the same rigorous bound evaluated on the relaxed
   box g in [0, (n-1)/n], sum in [S - k(U-L), S + k(U-L)]; its conditions as printed
   ("1/IQ - k/n <= (U-L)/L") are garbled.
6. Algorithm 1 (minimum) uses ternary search; we locate the minimiser exactly with the sign
   function phi_r (constant between order statistics, increasing in r) by binary search.
   Algorithm 2 (maximum) scans all windows s and all j = 0..k, O(nk) per k; N - tD is unimodal
   in s with a closed-form peak, so Dinkelbach's method finds the exact maximum in O(k) per
   step (``_gmax_k``; the O(n) scan ``_gmax_k_scan`` is kept as a test oracle).
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from .lru import BoundedCache, array_digest
from .rng import secure_generator
from .validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_bounds,
    check_delta,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
)

__all__ = [
    "GINI_DEFINITION",
    "gini",
    "ExactSensitivityProfile",
    "clip_incomes",
    "min_gini_after_k",
    "max_gini_after_k",
    "gini_extremes_curve",
    "mean_extremes_after_k",
    "gini_global_sensitivity",
    "local_sensitivity_bound",
    "exact_local_sensitivity",
    "smooth_sensitivity",
    "fast_smooth_sensitivity_iq",
    "minimal_iq",
    "GiniSmoothSensitivity",
    "GiniRelease",
    "GiniCalibration",
    "GINI_MIN_SCALE",
    "FLOAT_SLACK",
    "CONFIDENTIAL_SCALE_LABEL",
    "release_gini",
    "LaplaceGiniRelease",
    "release_gini_laplace",
    "GiniSimulation",
    "simulate_gini_releases",
    "simulate_releases_from_scale",
    "error_summary",
]

GINI_DEFINITION = "eq1"
_DEFINITIONS = ("eq1", "eq2")


# ---------------------------------------------------------------------------------------------
# The statistic
# ---------------------------------------------------------------------------------------------


def _sorted_gini(xs: np.ndarray) -> float:
    """eq. (1) on sorted non-negative data; 0 for the all-zero data set (convention)."""
    n = xs.size
    s = float(xs.sum())
    if s <= 0.0:
        return 0.0
    w = 2.0 * np.arange(1, n + 1, dtype=float) - n - 1.0
    return float(np.dot(w, xs) / (n * s))


def _check_definition(definition: str) -> str:
    if definition not in _DEFINITIONS:
        raise DPInputError(f"definition must be 'eq1' (divide by n^2 mean) or 'eq2' (n(n-1) mean), got {definition!r}")
    return definition


def gini(x: Any, definition: str = "eq1") -> float:
    """Gini index of non-negative incomes.

    ``definition="eq1"`` (default, the one the mechanism uses): eq. (1) of Lan & Reiter,
    ``sum_i (2i-n-1) x_(i) / (n sum x)``, range [0, (n-1)/n]. ``"eq2"``: eq. (2),
    the same times n/(n-1), range [0, 1] (the paper's toy example).

    Raises DPInputError for fewer than 2 values, NaN/inf, negative values or all-zero incomes
    (the Gini is 0/0 there).

    Example:

    >>> gini([1.0, 1.0, 1.0, 1.0])
    0.0
    >>> round(gini([0.0, 0.0, 0.0, 4.0]), 4)  # one person has everything: (n - 1)/n
    0.75
    """
    definition = _check_definition(definition)
    arr = as_finite_array(x, "incomes", min_size=2)
    if (arr < 0).any():
        raise DPInputError(
            f"incomes contain {int((arr < 0).sum())} negative values; the Gini index is defined for "
            "non-negative incomes (drop them or clip them at 0 first)"
        )
    if float(arr.sum()) <= 0.0:
        raise DPInputError("all incomes are zero: the Gini index is undefined (0/0)")
    n = arr.size
    g = _sorted_gini(np.sort(arr))
    return g * n / (n - 1) if definition == "eq2" else g


def clip_incomes(
    x: Any, *, lower: float, upper: float, clip_negative: bool = False, name: str = "incomes"
) -> tuple[np.ndarray, int, int]:
    """Validate and clip incomes to the public range [lower, upper]; return (sorted, n_below, n_above).

    Negative incomes are refused (DPInputError) unless ``clip_negative=True``; values in
    [0, lower) and above ``upper`` are clipped to the bounds. The two counts are confidential
    (they describe the data) and are meant for the data holder, not for publication.
    Requires 0 <= lower < upper, at least 2 values, and not all clipped values zero.
    """
    lower, upper = check_bounds(lower, upper)
    if lower < 0:
        raise DPInputError(f"lower must be >= 0 for the Gini index (incomes are non-negative), got {lower:g}")
    arr = as_finite_array(x, name, min_size=2)
    neg = int((arr < 0).sum())
    if neg and not clip_negative:
        raise DPInputError(
            f"{name} contain {neg} negative values; the Gini index needs non-negative incomes. "
            "Drop them, or allow clipping them to the lower bound (clip_negative=True)"
        )
    n_below = int((arr < lower).sum())
    n_above = int((arr > upper).sum())
    xs = np.sort(np.clip(arr, lower, upper))
    if float(xs.sum()) <= 0.0:
        raise DPInputError(f"all {name} are zero: the Gini index is undefined (0/0)")
    return xs, n_below, n_above


def _check_sorted_in_bounds(x_sorted: Any, lower: float | None = None, upper: float | None = None) -> np.ndarray:
    xs = as_finite_array(x_sorted, "x_sorted", min_size=2)
    if (xs < 0).any():
        raise DPInputError("x_sorted contains negative values; the Gini index needs non-negative incomes")
    if np.any(np.diff(xs) < 0):
        raise DPInputError("x_sorted must be sorted ascending (use numpy.sort first)")
    if lower is not None and xs[0] < lower:
        raise DPInputError(f"data below lower = {lower:g}: clip to [lower, upper] first (see clip_incomes)")
    if upper is not None and xs[-1] > upper:
        raise DPInputError(f"data above upper = {upper:g}: clip to [lower, upper] first (see clip_incomes)")
    return xs


class _Prefix:
    """Prefix sums of Appendix A.3 on sorted data y_0..y_{n-1} (0-based)."""

    def __init__(self, xs: np.ndarray):
        n = xs.size
        self.x = xs
        self.n = n
        t = np.arange(n, dtype=float)
        self.P = np.concatenate(([0.0], np.cumsum(xs)))  # sum_{u<t} y_u
        self.C = np.concatenate(([0.0], np.cumsum((2.0 * t + 1.0 - n) * xs)))  # sum (2(u+1)-n-1) y_u
        self.R = np.concatenate(([0.0], np.cumsum(t * xs)))  # sum u y_u
        self.S = float(self.P[-1])


# ---------------------------------------------------------------------------------------------
# Exact extremes after k replacements (Theorems 4.1-4.2, Algorithms 1-2, Appendix A.3)
# ---------------------------------------------------------------------------------------------


def _gmax_k_scan(pf: _Prefix, k: int, lower: float, upper: float) -> float:
    """Exact max over data sets replacing k records by values in [L, U].

    The Gini is quasi-convex in the replaced values (convex numerator sum|x_i - x_j| over a
    positive linear denominator), so the maximum is at a vertex: j values at L, k - j at U.
    By the exchange argument of Theorem 4.1 (quasi-convexity in one kept value) the removed
    records form a consecutive block x_(s+1..s+k). For fixed (k, s) the Gini is a concave
    quadratic over a positive linear function of j, hence quasi-concave in j: the best integer
    j is next to the stationary point j* = (D0 - sqrt(disc)) / (U - L). All windows s at once.
    """
    n, L, U = pf.n, lower, upper
    if k <= 0:
        return _sorted_gini(pf.x)
    k = min(k, n)
    P, C = pf.P, pf.C
    a = P[: n - k + 1]  # kept lows' sum, window starts s = 0..n-k
    b = pf.S - P[k:]  # kept highs' sum
    ab = a + b
    c0 = C[: n - k + 1] + (C[n] + U * k * (n - k)) - C[k:] - (2.0 * k) * b
    B1 = 2.0 * ab + (U * (2.0 * k - n) - L * n)
    D0 = ab + k * U
    dl = L - U
    disc = D0 * (D0 - B1) + c0 * dl
    np.maximum(disc, 0.0, out=disc)
    np.sqrt(disc, out=disc)
    jstar = (D0 - disc) / (U - L)
    # jstar may sit on the pole D0 + (L-U) j = 0; jp is the largest j with a positive denominator
    jf = np.floor(np.clip(jstar, 0.0, float(k)))
    jp = np.clip(np.ceil(D0 / (U - L)) - 1.0, 0.0, float(k))
    best = -np.inf
    for j in (jf, np.minimum(jf + 1.0, k), jp, np.maximum(jp - 1.0, 0.0), 0.0):  # jp - 1: rounding at the pole
        den = D0 + dl * j
        num = (dl * j + B1) * j + c0
        pos = den > 0
        g = np.divide(num, den, out=np.zeros_like(D0), where=pos)
        best = max(best, float(g.max()) / n)
    return best


def _gmax_k(pf: _Prefix, k: int, lower: float, upper: float) -> float:
    """Exact max after k replacements in O(k) per Dinkelbach step (same optimum as ``_gmax_k_scan``).

    With t = n * (a candidate Gini), F(s, j) = N - t D (eq. (59)) satisfies
    F(s+1, j) - F(s, j) = (w_{s+1} + 2j - t)(x_{s+1} - x_{s+k+1}), w_i = 2i - n - 1: F is unimodal
    in the window start s with its peak at s = ceil((n + 1 + t - 2j)/2) - 1. Dinkelbach's method
    (t <- best ratio found; stop when max F(t) <= 0) therefore needs only O(k) work per step and
    ends at the exact maximum over all windows s and all j = 0..k.
    """
    n, L, U = pf.n, lower, upper
    if k <= 0:
        return _sorted_gini(pf.x)
    k = min(k, n)
    P, C, S = pf.P, pf.C, pf.S
    j = np.arange(0, k + 1, dtype=float)
    u = k - j

    def ratio_and_F(sv: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
        si = sv.astype(np.int64)
        a = P[si]
        b = S - P[si + k]
        N = L * j * (j - n) + C[si] + 2.0 * j * a + (C[n] - C[si + k]) - 2.0 * u * b + U * u * (n - u)
        D = a + b + j * L + u * U
        g = np.divide(N, n * D, out=np.zeros_like(N), where=D > 0)
        return g, N - t * D

    best = -np.inf
    t = 0.0
    for _ in range(200):
        h = np.ceil((n + 1 + t - 2.0 * j) / 2.0) - 1.0
        fmax = -np.inf
        for off in (-1.0, 0.0, 1.0):
            sv = np.clip(h + off, 0, n - k)
            g, F = ratio_and_F(sv, t)
            best = max(best, float(g.max()))
            fmax = max(fmax, float(F.max()))
        t_new = n * best
        if fmax <= 1e-12 * max(abs(t) * (S + k * U), 1e-300) or t_new <= t:
            break
        t = t_new
    return best


def _gmin_k(pf: _Prefix, k: int) -> float:
    """Exact min over data sets replacing k records by values in [L, U].

    Averaging the replaced values over their permutations does not increase the (symmetric,
    quasi-convex) Gini, so all k new values are equal to one c. The kept records form a
    consecutive block y_i..y_{i+m-1} (m = n - k; Theorem 4.2: drop i lowest and k - i
    highest). With block sum S_B and T_B = sum over block pairs |y - y'|,
    g(c) = (T_B + 2k sum_block |y - c|) / (2n (S_B + k c)); between order statistics the sign
    of g'(c) is that of phi_r = 2(2r - n) S_B + 4k P_r - T_B, constant and increasing in r,
    so the minimiser is c = y_(r*) with r* = min{r : phi_r >= 0}. Binary search, all i at once.
    """
    n = pf.n
    if k <= 0:
        return _sorted_gini(pf.x)
    if k >= n - 1:
        return 0.0
    m = n - k
    i = np.arange(0, k + 1)
    SB = pf.P[i + m] - pf.P[i]
    WB = 2.0 * (pf.R[i + m] - pf.R[i]) + (1.0 - m - 2.0 * i) * SB  # sum (2 r_local - m - 1) y
    TB = 2.0 * WB

    def phi(r: np.ndarray) -> np.ndarray:
        return 2.0 * (2.0 * r - n) * SB + 4.0 * k * (pf.P[i + r] - pf.P[i]) - TB

    lo = np.ones_like(i)
    hi = np.full_like(i, m)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        ok = phi(mid) >= 0
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid + 1)
    r = lo
    c = pf.x[i + r - 1]
    Pr = pf.P[i + r] - pf.P[i]
    Dc = (2.0 * r - m) * c + SB - 2.0 * Pr
    den = SB + k * c
    with np.errstate(invalid="ignore", divide="ignore"):
        g = np.where(den > 0, (TB + 2.0 * k * Dc) / (2.0 * n * np.where(den > 0, den, 1.0)), 0.0)
    return float(max(g.min(), 0.0))


def min_gini_after_k(x_sorted: Any, k: int) -> float:
    """Exact minimum of eq. (1) over all data sets that replace k records of ``x_sorted``.

    Theorem 4.2 / Algorithm 1 of Lan & Reiter, with the exact minimiser (see ``_gmin_k``). The
    minimum does not depend on [L, U] (the optimal new value is a data value). k = 0 gives
    g(X); k >= n - 1 gives 0.
    """
    xs = _check_sorted_in_bounds(x_sorted)
    k = check_int(k, "k", minimum=0)
    return _gmin_k(_Prefix(xs), k)


def max_gini_after_k(x_sorted: Any, k: int, lower: float, upper: float) -> float:
    """Exact maximum of eq. (1) over all data sets that replace k records by values in [lower, upper].

    Theorem 4.1 / Algorithm 2 with eq. (59) of Appendix A.3 (see ``_gmax_k``); O(n) per k.
    """
    lower, upper = check_bounds(lower, upper)
    xs = _check_sorted_in_bounds(x_sorted, lower, upper)
    k = check_int(k, "k", minimum=0)
    return _gmax_k(_Prefix(xs), k, lower, upper)


def mean_extremes_after_k(x_sorted: Any, k: Any, lower: float, upper: float) -> tuple[np.ndarray, np.ndarray]:
    """(min sum, max sum) after replacing k records (vectorised over k): the k largest go to L / the k smallest to U."""
    lower, upper = check_bounds(lower, upper)
    xs = _check_sorted_in_bounds(x_sorted, lower, upper)
    pf = _Prefix(xs)
    try:
        k_arr = np.asarray(k, dtype=float)
    except (TypeError, ValueError):
        raise DPInputError(f"k must be a whole number of replaced records (or an array of them), got {k!r}") from None
    if not (np.all(np.isfinite(k_arr)) and np.all(k_arr >= 0) and np.all(k_arr == np.floor(k_arr))):
        raise DPInputError(f"k must be whole numbers >= 0 (records replaced), got {k!r}")
    kk = np.minimum(k_arr, pf.n).astype(int)
    return _sum_extremes(pf, kk, lower, upper)


def _sum_extremes(pf: _Prefix, kk: np.ndarray, lower: float, upper: float) -> tuple[np.ndarray, np.ndarray]:
    n = pf.n
    kk = np.minimum(kk, n)
    smin = pf.P[n - kk] + kk * lower
    smax = pf.S - pf.P[kk] + kk * upper
    return smin, smax


def gini_extremes_curve(x_sorted: Any, k_max: int, lower: float, upper: float) -> dict[str, np.ndarray]:
    """Exact min/max Gini and min/max sum for every k = 0..k_max (O(n k_max) in total).

    Returns a dict of arrays: ``k``, ``gmin``, ``gmax``, ``smin``, ``smax``.
    """
    lower, upper = check_bounds(lower, upper)
    xs = _check_sorted_in_bounds(x_sorted, lower, upper)
    k_max = check_int(k_max, "k_max", minimum=0)
    pf = _Prefix(xs)
    ks = np.arange(0, min(k_max, pf.n) + 1)
    gmin = np.array([_gmin_k(pf, int(k)) for k in ks])
    gmax = np.array([_gmax_k(pf, int(k), lower, upper) for k in ks])
    smin, smax = _sum_extremes(pf, ks, lower, upper)
    return {"k": ks, "gmin": gmin, "gmax": gmax, "smin": smin, "smax": smax}


# ---------------------------------------------------------------------------------------------
# Sensitivity
# ---------------------------------------------------------------------------------------------


def gini_global_sensitivity(n: int, lower: float, upper: float) -> float:
    """Global sensitivity of eq. (1) for replace-one neighbours with values in [lower, upper], n public.

    With ``(g' - g) max(S, S') = dT/(2n) - g_other d`` (S = sum, d = change of one value,
    |dT| <= 2(n-1)|d|, 0 <= g <= (n-1)/n) and max(S, S') >= nL + |d|:
    |g' - g| <= 2 (n-1)/n * (U-L) / (nL + U - L). The range of g is [0, (n-1)/n], so
    GS = min((n-1)/n, that). For lower = 0 the first term is attained:
    (0, ..., 0, U) has g = (n-1)/n and its neighbour (0, ..., 0) has g = 0 (convention).
    (The paper's "GS = 1" is for eq. (2).) Proven by brute force in tests/test_gini_bruteforce.py.
    """
    n = check_int(n, "n", minimum=2)
    lower, upper = check_bounds(lower, upper)
    c = (n - 1) / n
    width = upper - lower
    return float(min(c, 2.0 * c * width / (n * lower + width)))


def local_sensitivity_bound(
    n: int, lower: float, upper: float, gmin: Any, gmax: Any, smin: Any, smax: Any
) -> np.ndarray:
    """Upper bound on LS(Y) for every Y in [L, U]^n with g(Y) in [gmin, gmax], sum(Y) in [smin, smax].

    Vectorised over arrays of boxes. Derivation (eq. (1); one record v -> v + d, others fixed;
    T = sum_{i,j} |y_i - y_j|, dT = 2 delta, delta = sum_{j != i} (|v+d-y_j| - |v-y_j|), so
    |delta| <= (n-1)|d|, and for d > 0 also -delta <= sum_j (y_j - L) <= S - nL). With
    c = (n-1)/n, g' the new Gini:

    * (g' - g)(S + d) = delta/n - g d   and   (g' - g) S = delta/n - g' d.
    * d > 0, g up:    <= d (c - g) / (S + d),            d <= D = min(U-L, nU-S)        (B1)
    * d > 0, g down:  <= min(c d, (S-nL)/n)/(S+d) + g d/(S+d)                           (B2)
    * d = -e < 0, g up:   <= min(e (c + g)/(S - e), 2 c e / S),    e <= E = min(U-L, S-nL) (B3)
    * d = -e < 0, g down: <= min(e (c - g)/(S - e), c e / S)                            (B4)

    Refinements (same identities, triangle inequality sum_j |v - y_j| >= |n v - S| and
    sum_j |v' - y_j| <= (n-1)(v'-L) + S - v - (n-1)L): a value moving *down* raises g by at most
    2c (S - nL)/(n S) (B3'), and a value moving *up* lowers g by at most
    max(2 (S - nL)/(n S), (c + g)(S - nL)/((n-1) S)) (B2'), about 2/n whatever U is. So the
    bound is driven by B1/B4 (one value moved to or from the top), about IQ (1 - g)/n.

    Each term is maximised over the box by monotonicity in g and S (E/S and E/(S-E) are
    unimodal in S with the peak at S* = nL + U - L), so the result is nondecreasing when the box
    grows - which is what makes S_beta smooth. Capped at the global sensitivity; boxes that reach
    the all-zero data set (smin = 0) get the global sensitivity.
    """
    n = check_int(n, "n", minimum=2)
    lower, upper = check_bounds(lower, upper)
    gmin, gmax, smin, smax = (np.asarray(v, dtype=float) for v in (gmin, gmax, smin, smax))
    return _ls_bound(n, lower, upper, gmin, gmax, smin, smax)


def _ls_bound(
    n: int, L: float, U: float, gmin: np.ndarray, gmax: np.ndarray, smin: np.ndarray, smax: np.ndarray
) -> np.ndarray:
    c = (n - 1) / n
    W = U - L
    gs = gini_global_sensitivity(n, L, U)
    # a 1e-12 margin absorbs floating-point rounding in the exact extremes (keeps the bound rigorous)
    gmin = np.clip(gmin - 1e-12, 0.0, c)
    gmax = np.clip(gmax + 1e-12, 0.0, c)
    with np.errstate(divide="ignore", invalid="ignore"):
        sm = np.maximum(smin, 0.0)
        # increases of one value
        D = np.minimum(W, n * U - sm)
        r = D / (sm + D)
        b1 = r * (c - gmin)
        b2 = np.minimum(c * r, np.where(smax > 0, (smax - n * L) / (n * smax), 0.0)) + gmax * r
        # decreases of one value
        se = np.clip(n * L + W, sm, smax)
        E = np.minimum(W, se - n * L)
        f2 = np.where(se > 0, E / se, np.inf)
        f1 = np.where(se - E > 0, E / (se - E), np.inf)
        b3 = np.minimum(f1 * (c + gmax), 2.0 * c * f2)
        b4 = np.minimum(f1 * (c - gmin), c * f2)
        # Mean-based refinements of the two "dilution" cases (B2', B3'), increasing in S and g
        rel = np.where(smax > 0, (smax - n * L) / np.where(smax > 0, smax, 1.0), 0.0)
        b2 = np.minimum(b2, np.maximum(2.0 * rel / n, (c + gmax) * rel / (n - 1)))
        b3 = np.minimum(b3, 2.0 * c * rel / n)
        out = np.maximum(np.maximum(b1, b2), np.maximum(b3, b4))
    out = np.where(np.isfinite(out), out, gs)
    out = np.where(sm <= 0, gs, out)
    return np.minimum(out, gs)


def exact_local_sensitivity(x: Any, lower: float, upper: float) -> float:
    """Exact LS(X) = max over one-record replacements in [L, U] of |g(X') - g(X)| (eq. (1)).

    For each record, g as a function of the new value v is a ratio of linear functions between
    consecutive order statistics, so its extremes are at v in {L, U} or at a data value. Cost
    O(n^2) (vectorised per candidate value): a test oracle for a few hundred records.
    """
    lower, upper = check_bounds(lower, upper)
    xs = np.sort(as_finite_array(x, "x", min_size=2))
    if xs[0] < lower or xs[-1] > upper:
        raise DPInputError("data must lie in [lower, upper]")
    n = xs.size
    g0 = _sorted_gini(xs)
    cand = np.unique(np.concatenate((xs, [lower, upper])))
    # T(X) and, for value v, A(v) = sum_j |v - y_j| over all records
    S = xs.sum()
    P = np.concatenate(([0.0], np.cumsum(xs)))

    def absdev(v: np.ndarray) -> np.ndarray:
        cnt = np.searchsorted(xs, v, side="right")
        return cnt * v - P[cnt] + (S - P[cnt]) - (n - cnt) * v

    T = 2.0 * n * S * g0
    uniq = np.unique(xs)
    A_old = absdev(uniq)  # sum of distances from each removable value
    best = 0.0
    chunk = max(1, 2_000_000 // max(uniq.size, 1))
    for start in range(0, cand.size, chunk):
        v = cand[start : start + chunk, None]
        # remove one record of value u, insert v: T' = T - 2 A(u) + 2 (A(v) - |v - u|)
        Tn = T - 2.0 * A_old[None, :] + 2.0 * (absdev(v[:, 0])[:, None] - np.abs(v - uniq[None, :]))
        Sn = S - uniq[None, :] + v
        gn = np.divide(Tn, 2.0 * n * Sn, out=np.zeros_like(Tn), where=Sn > 0)
        best = max(best, float(np.max(np.abs(gn - g0))))
    return best


# ---------------------------------------------------------------------------------------------
# Smooth sensitivity (Theorem 4.3 / 4.4, Section 4.4 pruning)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GiniSmoothSensitivity:
    """beta-smooth upper bound S_beta(X) = max_k e^{-beta k} A^(k)(X) (eq. (8)).

    ``A[k]`` for k = 0..len(A)-1 (the range the computation needed, or ``k_max`` if asked),
    ``decay = e^{-beta k} A[k]``, ``k_star`` its argmax. ``value`` is the maximum over all k
    = 0..n (pruning never changes it). Confidential: it depends on the data.
    """

    value: float
    k_star: int
    A: np.ndarray
    decay: np.ndarray
    beta: float
    method: str
    n: int
    lower: float
    upper: float
    global_sensitivity: float

    @property
    def k(self) -> np.ndarray:
        return np.arange(self.A.size)

    @property
    def saturated(self) -> bool:
        """True when S_beta(X) reached the global sensitivity (the smooth bound gives nothing)."""
        return bool(self.value >= self.global_sensitivity * (1.0 - 1e-9))


def _fast_A(n: int, L: float, U: float, S: float, ks: np.ndarray) -> np.ndarray:
    """Closed-form bound on A^(k) from n, sum and [L, U] only (our version of Theorem 4.4)."""
    W = U - L
    smin = np.maximum(n * L, S - ks * W)
    smax = np.minimum(n * U, S + ks * W)
    c = (n - 1) / n
    return _ls_bound(n, L, U, np.zeros(ks.shape), np.full(ks.shape, c), smin, smax)


def _check_beta(beta: Any) -> float:
    b = check_finite(beta, "beta")
    if b <= 0:
        raise DPInputError(f"beta must be > 0, got {b:g}")
    return b


def smooth_sensitivity(
    x: Any, *, lower: float, upper: float, beta: float, method: str = "exact", k_max: int | None = None
) -> GiniSmoothSensitivity:
    """Smooth sensitivity of the eq. (1) Gini for replace-one neighbours, n and [lower, upper] public.

    ``method="exact"``: A^(k) = :func:`local_sensitivity_bound` on the exact box
    [min g_(k), max g_(k)] x [min sum_(k), max sum_(k)] (Theorem 4.3 structure; Theorems
    4.1-4.2 for the extremes), k = 0, 1, ... with Section 4.4 pruning against the fast bound.
    ``method="fast"``: the same bound on the relaxed box g in [0, (n-1)/n],
    sum in [S - k(U-L), S + k(U-L)] (Theorem 4.4 structure); closed form, vectorised.
    Both are valid beta-smooth upper bounds (A^(k)(X') <= A^(k+1)(X) for neighbours), with
    A_exact <= A_fast pointwise. ``k_max`` forces A to be reported for k = 0..k_max
    (for charts); the value is always the maximum over all k.

    Data must lie in [lower, upper] (clip first with :func:`clip_incomes`).
    """
    lower, upper = check_bounds(lower, upper)
    if lower < 0:
        raise DPInputError(f"lower must be >= 0 for the Gini index, got {lower:g}")
    beta = _check_beta(beta)
    if method not in ("exact", "fast"):
        raise DPInputError(f"method must be 'exact' or 'fast', got {method!r}")
    arr = as_finite_array(x, "incomes", min_size=2)
    xs = np.sort(arr)
    if xs[0] < lower or xs[-1] > upper:
        raise DPInputError(
            f"incomes outside [lower, upper] = [{lower:g}, {upper:g}]: clip them first "
            "(release_gini does it and reports how many)"
        )
    if float(xs.sum()) <= 0:
        raise DPInputError("all incomes are zero: the Gini index is undefined (0/0)")
    if k_max is not None:
        k_max = check_int(k_max, "k_max", minimum=0)
    if method == "exact":
        return ExactSensitivityProfile(xs, lower, upper).smooth_sensitivity(beta, k_max)
    n = xs.size
    pf = _Prefix(xs)
    gs = gini_global_sensitivity(n, lower, upper)
    g0 = _sorted_gini(xs)
    A0 = float(_ls_bound(n, lower, upper, np.array([g0]), np.array([g0]), np.array([pf.S]), np.array([pf.S]))[0])
    k_cap = _k_cap(n, gs, A0, beta, k_max)
    ks = np.arange(0, k_cap + 1)
    A = np.maximum(_fast_A_capped(n, lower, upper, pf.S, ks, gs), 0.0)
    A[0] = max(A[0], 0.0)
    decay = np.exp(-beta * np.arange(A.size)) * A
    k_star = int(np.argmax(decay))
    return GiniSmoothSensitivity(
        value=float(decay[k_star]),
        k_star=k_star,
        A=A,
        decay=decay,
        beta=beta,
        method=method,
        n=n,
        lower=lower,
        upper=upper,
        global_sensitivity=gs,
    )


def _k_cap(n: int, gs: float, a0: float, beta: float, k_max: int | None) -> int:
    """Beyond k_cap, e^{-beta k} * GS < A0 <= S_beta: nothing there can matter (Section 4.4 pruning)."""
    k_cap = int(min(n, math.ceil(math.log(gs / a0) / beta) + 1)) if a0 > 0 else n
    k_cap = max(k_cap, 1)
    if k_max is not None:
        k_cap = max(k_cap, min(k_max, n))
    return k_cap


def _fast_A_capped(n: int, lower: float, upper: float, total: float, ks: np.ndarray, gs: float) -> np.ndarray:
    """The closed-form A^(k) (Section 5.2), equal to GS once k >= n (every record replaced)."""
    a_fast = _fast_A(n, lower, upper, total, ks)
    a_fast[ks >= n] = gs
    return a_fast


class ExactSensitivityProfile:
    """The beta-free part of the exact smooth sensitivity on one sorted data set in [lower, upper].

    S_beta(X) = max_k e^(-beta k) A^(k)(X) (eq. (8)): A^(k) depends on the data and the bounds but not on
    beta, so it is computed once per k (:meth:`exact_a`, kept) and each beta only re-weights it
    (:meth:`smooth_sensitivity`, with the Section 4.4 pruning). ``smooth_sensitivity(method="exact")``
    is one call to a fresh profile; a page keeps a profile per data set so a new epsilon pays nothing
    for the k already seen. Thread-safe (Streamlit runs sessions in threads). The input must already be
    sorted and inside [lower, upper] (``smooth_sensitivity`` checks it).
    """

    def __init__(self, xs: np.ndarray, lower: float, upper: float) -> None:
        lower, upper = check_bounds(lower, upper)
        xs = _check_sorted_in_bounds(xs, lower, upper)
        if float(xs.sum()) <= 0:
            raise DPInputError("all incomes are zero: the Gini index is undefined (0/0)")
        self.lower, self.upper, self.n = float(lower), float(upper), int(xs.size)
        self._prefix = _Prefix(xs)
        self.global_sensitivity = gini_global_sensitivity(self.n, self.lower, self.upper)
        g0 = _sorted_gini(xs)
        s0 = np.array([self._prefix.S])
        self.a0 = float(_ls_bound(self.n, self.lower, self.upper, np.array([g0]), np.array([g0]), s0, s0)[0])
        self._exact: list[float] = [self.a0]  # A^(k) for k = 0..len-1, already capped by the fast bound
        self._sparse: dict[int, float] = {}  # A^(k) at single k beyond them (the pruning's probes)
        self._lock = threading.Lock()

    def _fast(self, ks: np.ndarray) -> np.ndarray:
        return _fast_A_capped(self.n, self.lower, self.upper, self._prefix.S, ks, self.global_sensitivity)

    def _a_at(self, j: int) -> float:
        """A^(j) alone (no j' < j needed): the exact box's bound capped by the closed form."""
        if j >= self.n:
            a_j = self.global_sensitivity
        else:
            pf, lo, hi = self._prefix, self.lower, self.upper
            gmin, gmax = _gmin_k(pf, j), _gmax_k(pf, j, lo, hi)
            smin, smax = _sum_extremes(pf, np.array([j]), lo, hi)
            a_j = float(_ls_bound(self.n, lo, hi, np.array([gmin]), np.array([gmax]), smin, smax)[0])
        return min(a_j, float(self._fast(np.array([j]))[0]))

    def exact_a(self, k: int) -> float:
        """min(exact A^(k), fast A^(k)): both are valid bounds and the exact box lies inside the relaxed one."""
        with self._lock:
            while len(self._exact) <= k:
                j = len(self._exact)
                probed = self._sparse.pop(j, None)
                self._exact.append(self._a_at(j) if probed is None else probed)
            return self._exact[k]

    def sparse_a(self, k: int) -> float:
        """A^(k) for one k, kept apart until :meth:`exact_a` reaches it (the same number either way)."""
        with self._lock:
            if k < len(self._exact):
                return self._exact[k]
            if k not in self._sparse:
                self._sparse[k] = self._a_at(k)
            return self._sparse[k]

    def smooth_sensitivity_value(self, beta: float) -> float:
        """S_beta(X) alone: ``smooth_sensitivity(beta).value`` without the A^(k) array up to k* (a planner that
        only needs the number at a small beta, where k* is large, skips the sequence)."""
        beta = _check_beta(beta)
        k_cap = _k_cap(self.n, self.global_sensitivity, self.a0, beta, None)
        k_star = self._probe(beta, k_cap, 0, self.a0)[1] if k_cap > 0 else 0
        a_star = self.exact_a(0) if k_star == 0 else self.sparse_a(k_star)
        return float(np.exp(-beta * np.arange(k_star + 1))[k_star] * a_star)

    def _probe(self, beta: float, k_cap: int, start: int, best: float) -> tuple[int, int]:
        """(the largest k in (start, k_cap] whose term e^{-beta k} A^(k) may exceed ``best``, ``start`` if none;
        the k of the largest term, the smallest among equal ones).

        A^(k) is the largest local sensitivity over the k-ball, and the balls are nested, so A^(k) is
        non-decreasing in k (and so are both bounds computed here: the exact box widens with k, the closed form
        grows with k). Every term with l < k < r is therefore at most e^{-beta (l+1)} A^(r): blocks between
        powers of two are halved only while that bound can beat the best term found. Where the closed-form
        suffix bound of the sequential scan needed A^(k) at every k up to ~1,700 (1.2 s for 10,000 records at
        beta 0.004), this needs a few dozen."""
        ends = sorted(
            {start, k_cap} | {start + (1 << i) for i in range((k_cap - start).bit_length()) if start + (1 << i) < k_cap}
        )
        top = (best, -start)  # (term, -k): the largest term, the smallest k among equal ones (np.argmax's)
        for k in ends[1:]:
            top = max(top, (math.exp(-beta * k) * self.sparse_a(k), -k))
        last = start
        blocks = list(itertools.pairwise(ends))
        while blocks:
            left, right = blocks.pop()
            if math.exp(-beta * right) * self.sparse_a(right) * (1.0 + 1e-9) >= top[0]:
                last = max(last, right)  # its own term may be the maximum
            if right - left <= 1 or math.exp(-beta * (left + 1)) * self.sparse_a(right) * (1.0 + 1e-9) < top[0]:
                continue
            mid = (left + right) // 2
            top = max(top, (math.exp(-beta * mid) * self.sparse_a(mid), -mid))
            blocks += [(left, mid), (mid, right)]
        return last, -top[1]

    def smooth_sensitivity(self, beta: float, k_max: int | None = None) -> GiniSmoothSensitivity:
        """S_beta(X) (eq. (8)) with the exact A^(k); k_max forces A^(k) up to k_max (for charts)."""
        beta = _check_beta(beta)
        if k_max is not None:
            k_max = check_int(k_max, "k_max", minimum=0)
        n, gs, a0 = self.n, self.global_sensitivity, self.a0
        k_cap = _k_cap(n, gs, a0, beta, k_max)
        ks = np.arange(0, k_cap + 1)
        decay_w = np.exp(-beta * ks)
        suffix = np.maximum.accumulate((decay_w * self._fast(ks))[::-1])[::-1]
        vals, best = [a0], a0
        for k in range(1, min(k_max or 0, k_cap) + 1):  # the k asked for (a chart) in full
            a_k = self.exact_a(k)
            vals.append(a_k)
            best = max(best, math.exp(-beta * k) * a_k)
        start = len(vals) - 1
        if start < k_cap and suffix[start + 1] > best:  # the closed form cannot prune the rest: probe A^(k)
            for k in range(start + 1, self._probe(beta, k_cap, start, best)[0] + 1):
                vals.append(self.exact_a(k))
        big_a = np.array(vals)
        decay = np.exp(-beta * np.arange(big_a.size)) * big_a
        k_star = int(np.argmax(decay))
        return GiniSmoothSensitivity(
            value=float(decay[k_star]),
            k_star=k_star,
            A=big_a,
            decay=decay,
            beta=beta,
            method="exact",
            n=n,
            lower=self.lower,
            upper=self.upper,
            global_sensitivity=gs,
        )


#: The exact profiles one process keeps: the last 8 data sets (each holds a few arrays of n floats).
SHARED_PROFILES = BoundedCache(8)


def shared_exact_profile(xs: np.ndarray, lower: float, upper: float) -> ExactSensitivityProfile:
    """The process-wide :class:`ExactSensitivityProfile` of these sorted, clipped data and bounds (kept in
    :data:`SHARED_PROFILES`, keyed by a digest of the records; thread-safe, as the profile is).

    One profile serves every caller on the same data (the Gini view and the planner's Gini statistics), so
    each A^(k) is computed once per process. Confidential like the data: it only ever yields
    S_beta(X), bit for bit what :func:`smooth_sensitivity` (``method="exact"``) returns."""
    key = (array_digest(xs), int(xs.size), float(lower), float(upper))
    return SHARED_PROFILES.get_or_build(key, lambda: ExactSensitivityProfile(xs, lower, upper))


def minimal_iq(g: float) -> float:
    """Proposition 5.1: inf IQ(X) = (U - L)/mean over data with Gini g (eq. (1)): 4g (g <= 1/2), 1/(1-g)."""
    g = check_finite(g, "g")
    if not 0 <= g < 1:
        raise DPInputError(f"the Gini index must be in [0, 1), got {g:g}")
    return 4.0 * g if g <= 0.5 else 1.0 / (1.0 - g)


def fast_smooth_sensitivity_iq(n: int, iq: float, beta: float, *, lower_over_mean: float | None = None) -> float:
    """Fast smooth sensitivity from n and the normalised range IQ = (U-L)/mean only (Section 5.2).

    Scale invariance: set mean = 1, L = lower_over_mean, U = L + IQ, sum = n. Default L:
    max(0, 1 - IQ/2), the two-point data set of Proposition 5.1's proof (half at L, half at U
    when g <= 1/2; L = 0 otherwise), which is what the paper simulates in Figures 3-4.
    """
    if lower_over_mean is None:
        lower_over_mean = max(0.0, 1.0 - float(check_finite(iq, "iq")) / 2.0)
    n = check_int(n, "n", minimum=2)
    iq = check_finite(iq, "iq")
    if iq <= 0:
        raise DPInputError(f"iq must be > 0, got {iq:g}")
    beta = _check_beta(beta)
    L = check_finite(lower_over_mean, "lower_over_mean")
    if not 0 <= L <= 1:
        raise DPInputError("lower_over_mean must be in [0, 1] (the mean is 1)")
    U = L + iq
    if U < 1:
        raise DPInputError("IQ too small: the upper bound would be below the mean")
    gs = gini_global_sensitivity(n, L, U)
    A0 = float(_fast_A(n, L, U, float(n), np.array([0]))[0])
    k_cap = int(min(n, math.ceil(math.log(gs / A0) / beta) + 1)) if A0 > 0 else n
    ks = np.arange(0, max(k_cap, 1) + 1)
    A = _fast_A(n, L, U, float(n), ks)
    A[ks >= n] = gs
    return float(np.max(np.exp(-beta * ks) * A))


# ---------------------------------------------------------------------------------------------
# Releases
# ---------------------------------------------------------------------------------------------


def _noise():
    from . import noise  # the lead's noise core

    return noise


def _saturated(smooth_value: float, gs: float, noise_scale: float, gamma: float, dist: Any = None) -> bool:
    # meaningless when S hit the cap, or the median |noise| is at least half the Gini's range
    if dist is None:
        med = noise_scale * float(_noise().GeneralizedCauchy(gamma).ppf(0.75))
    else:
        med = noise_scale * float(dist.abs_quantile(0.5))
    return bool(smooth_value >= gs * (1.0 - 1e-9) or med >= 0.5)


@dataclass(frozen=True)
class GiniRelease:
    """One DP release of the Gini index (eq. (1)) and the parameters that produced it.

    ``value`` is the only DP output. Every other data-dependent field is named ``confidential_*``
    and must not be published: ``confidential_noise_scale = S_beta(X)/alpha`` and
    ``confidential_smooth_sensitivity`` (the paper and the posterior treat them as known, but
    publishing them is not covered by the DP guarantee), ``confidential_k_star`` (the distance that
    maximises e^(-beta k) A^(k)), ``confidential_saturated`` (the release is meaningless: S_beta hit
    the global sensitivity, or the median absolute noise is >= 0.5), the clipping counts, and
    ``confidential_true_value`` (None unless asked for). ``noise_scale`` reads
    ``confidential_noise_scale`` (the name the public API uses).
    """

    value: float
    confidential_noise_scale: float
    alpha: float
    beta: float
    epsilon: float
    gamma: float
    confidential_smooth_sensitivity: float
    confidential_k_star: int
    calibration: str
    method: str
    n: int
    lower: float
    upper: float
    confidential_saturated: bool
    definition: str = GINI_DEFINITION
    confidential_n_clipped_below: int = 0
    confidential_n_clipped_above: int = 0
    confidential_true_value: float | None = None
    noise: str = "cauchy"  # a dpcore.noise.smooth.SMOOTH_NOISES name
    delta: float = 0.0  # 0 for the pure-DP Cauchy
    rho: float | None = None  # zCDP noises only
    privacy_cost: Any = None  # dpcore.budget.PrivacyCost of this release (pure / approx / zCDP)
    sigma: float | None = None  # Laplace log-normal shape (Bun & Steinke 2019)
    #: g(X) + scale Z before the clamp to [0, 1] on the 1e-6 grid (dpcore.noise.guarantees.publish_gini): a DP
    #: output too; the posterior needs it (a density applies to it, not to a clamped value)
    noisy_value: float | None = None

    @property
    def noise_scale(self) -> float:
        """S_beta(X)/alpha under the name of the public API (shared/design.md); confidential like
        ``confidential_noise_scale``, which it returns."""
        return self.confidential_noise_scale


#: public floor of a real release's Gini noise scale S_beta(X)/alpha: max(S, alpha * floor) is again a beta-smooth
#: upper bound, and a floor lower-bounds every output cell's probability, which makes the certified sampler pure DP
#: (dpcore.noise.guarantees.gc_pure_sampler_excess)
GINI_MIN_SCALE = 1e-5
#: relative slack for the floating-point error of g(X) and S_beta(X) (double precision): the generalized-Cauchy
#: release uses alpha (1 - 2 FLOAT_SLACK) and certifies alpha (1 - FLOAT_SLACK) and beta (1 + FLOAT_SLACK)
FLOAT_SLACK = 1e-6
#: how a smooth-sensitivity release names its noise scale: the number depends on the data (it is not a DP
#: output) and must not reach a release record
CONFIDENTIAL_SCALE_LABEL = "S_beta(X)/alpha (data-dependent, not published)"


@dataclass(frozen=True)
class GiniCalibration:
    """The calibration of every released Gini index (eqs. (9)-(10)): ``g(X) + (S_beta(X)/alpha) Z``, all public.

    Built from public parameters only: epsilon, the bounds, the noise (a ``dpcore.noise.smooth.SMOOTH_NOISES``
    name), gamma, the calibration mode, delta, and ``rows_per_person`` m (one person changes at most m records:
    each cell's Gini is calibrated at epsilon/m, and for "laplace" at delta / (m e^{(m-1) epsilon/m}), so group
    privacy over m records gives back (epsilon, delta)). It states alpha, beta, the noise law, the certificate
    and the cost, and simulates the law (:meth:`simulate`, the pages and :func:`release_gini`); the real draw is
    :class:`dpcore.mechanisms.GiniMechanism`'s (this calibration with a draw), so one grid, one clamp and one
    record text hold for every path.

    The real draw ("cauchy") is the certified generalized-Cauchy sampler in its pure-DP mode: window [0, 1],
    grid 1e-6, scale clamped to [GINI_MIN_SCALE, 1/alpha] (S_beta <= GS <= 1, so the top clamp never binds on a
    valid S; the floor keeps max(S, alpha floor) a beta-smooth bound), alpha shrunk by 2 FLOAT_SLACK
    (:attr:`release_alpha`) and the loss certified at alpha (1 - FLOAT_SLACK), beta (1 + FLOAT_SLACK), which
    covers a relative floating-point error up to FLOAT_SLACK in g(X) and S_beta(X). Cost: pure
    m max(certified loss + sampler excess, epsilon/m) (:attr:`certified`).
    "laplace": OpenDP's floating-point-safe Laplace at the confidential scale (NRS 2007's (epsilon, delta) with
    the certified delta of ``dpcore.noise.smooth.laplace_smooth_delta``); no floor (not needed by the sampler).
    "laplace_lognormal" has no floating-point-safe sampler: a real draw is refused (simulation only).
    Every value is published by :func:`dpcore.noise.guarantees.publish_gini` (clamp to [0, 1], grid 1e-6).
    """

    epsilon: float
    lower: float
    upper: float
    noise: str = "cauchy"
    gamma: float = 2.0
    calibration: str = "tight"
    delta: float | None = None
    rows_per_person: int = 1
    #: the smoothness of S_beta; None: the calibration's default (epsilon/gamma per cell). A release with a
    #: published interval chooses it from public inputs (dpcore.intervals.optimise_gini_split)
    beta: float | None = None

    def __post_init__(self) -> None:
        from .noise import smooth as smooth_noise

        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        lo, hi = check_bounds(self.lower, self.upper, lower_name="lower bound", upper_name="upper bound")
        if lo < 0:
            raise DPInputError(f"lower must be >= 0 for the Gini index (incomes are non-negative), got {lo:g}")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "noise", smooth_noise.check_noise(self.noise))
        object.__setattr__(self, "gamma", _check_gamma(self.gamma))
        if self.calibration not in ("tight", "paper"):
            raise DPInputError(f"calibration must be 'tight' or 'paper', got {self.calibration!r}")
        m = check_int(self.rows_per_person, "rows per person", minimum=1)
        object.__setattr__(self, "rows_per_person", m)
        if self.noise == "laplace_lognormal" and m > 1:
            raise DPInputError("noise 'laplace_lognormal' is offered for one row per person only")
        if self.delta is not None:
            object.__setattr__(self, "delta", check_delta(self.delta))
        if self.beta is not None:
            object.__setattr__(self, "beta", check_positive(self.beta, "beta"))

    # -- calibration (public) ------------------------------------------------------------------------------
    @property
    def epsilon_cell(self) -> float:
        """epsilon of one cell's Gini: epsilon / m (group privacy over the m records of one person)."""
        return self.epsilon / self.rows_per_person

    @property
    def delta_cell(self) -> float:
        """delta one cell is calibrated at: delta / (m e^{(m-1) epsilon/m}) (group privacy gives back delta);
        0 for the pure-DP Cauchy."""
        from .noise import smooth as smooth_noise

        if self.noise == "cauchy":
            return 0.0
        d = smooth_noise.DEFAULT_DELTA if self.delta is None else self.delta
        m = self.rows_per_person
        if m == 1:
            return float(d)
        return float(d) / (m * math.exp((m - 1) * self.epsilon / m)) * (1.0 - 1e-12)

    @functools.cached_property
    def smooth_calibration(self):
        """The ``dpcore.noise.smooth.SmoothCalibration`` of one cell (alpha, beta, the certificate)."""
        from .noise import smooth as smooth_noise

        return smooth_noise.smooth_calibration(
            self.noise,
            self.epsilon_cell,
            delta=self.delta_cell or None,
            gamma=self.gamma,
            mode=self.calibration,
            beta=self.beta,
        )

    @property
    def alpha(self) -> float:
        """alpha of the calibration: the law of the exploration draws (:meth:`simulate`, :meth:`noise_scale`)."""
        return self.smooth_calibration.alpha

    @property
    def release_alpha(self) -> float:
        """alpha a draw divides S_beta(X) by: the Cauchy's is shrunk by 2 FLOAT_SLACK (class docstring), a margin
        of 2e-6 of the noise scale, below any digit a page shows."""
        a = self.smooth_calibration.alpha
        return a * (1.0 - 2.0 * FLOAT_SLACK) if self.noise == "cauchy" else a

    @property
    def smoothness(self) -> float:
        """beta of S_beta: the engines and the planner compute S_beta(X) at this beta."""
        return self.smooth_calibration.beta

    @property
    def max_scale(self) -> float:
        return max(1.0 / self.release_alpha, GINI_MIN_SCALE)

    @functools.cached_property
    def certified(self) -> tuple[float, float]:
        """(certified loss of the continuous mechanism, sampler excess) of one Cauchy cell; (epsilon_cell, 0)
        for the other noises, whose certificate is their calibration's."""
        from . import noise as noise_module
        from .noise import guarantees as noise_guarantees

        if self.noise != "cauchy":
            return self.epsilon_cell, 0.0
        cal = self.smooth_calibration
        loss = noise_module.smooth_noise_privacy_loss(
            self.gamma, cal.alpha * (1.0 - FLOAT_SLACK), cal.beta * (1.0 + FLOAT_SLACK), tol=1e-3 * self.epsilon_cell
        )
        excess, _ = noise_guarantees.gc_pure_sampler_excess(
            self.gamma, noise_guarantees.GINI_GRID, noise_guarantees.GINI_WINDOW, GINI_MIN_SCALE, self.max_scale
        )
        return float(loss), float(excess)

    def privacy_cost(self):
        """The ``dpcore.budget.PrivacyCost`` of the statistic (every cell: disjoint cells compose in parallel)."""
        from . import budget

        m = self.rows_per_person
        if self.noise == "cauchy":
            loss, excess = self.certified
            return budget.pure(m * max(loss + excess, self.epsilon_cell))
        if m == 1:
            return self.smooth_calibration.cost
        return budget.approx(self.epsilon, self.delta_cell * m * math.exp((m - 1) * self.epsilon_cell))

    def noise_law(self):
        """The standardised noise law Z (``.rvs``, ``.cdf``, ``.abs_quantile``)."""
        from .noise import smooth as smooth_noise

        return smooth_noise.noise_distribution(self.smooth_calibration)

    def noise_scale(self, confidential_smooth_sensitivity: float) -> float:
        """S_beta(X)/alpha, the scale of the law the pages explore (confidential: it depends on the data)."""
        return float(confidential_smooth_sensitivity) / self.alpha

    def confidential_noise_scale(self, confidential_smooth_sensitivity: float) -> float:
        """S_beta(X)/alpha as a draw uses it (Cauchy: alpha with the float slack, clamped to [GINI_MIN_SCALE,
        1/alpha]). Confidential."""
        scale = float(confidential_smooth_sensitivity) / self.release_alpha
        if self.noise == "cauchy":
            scale = min(max(scale, GINI_MIN_SCALE), self.max_scale)
        return scale

    def record(self) -> dict[str, Any]:
        """The public description every release record of this statistic carries (one text for every path)."""
        cal = self.smooth_calibration
        out: dict[str, Any] = {
            "noise": self.noise,
            "gamma": self.gamma,
            "calibration": self.calibration,
            "epsilon_per_cell": self.epsilon_cell,
            "alpha": self.alpha,
            "beta": self.smoothness,
            "privacy_statement_per_cell": cal.statement(),
            "output_grid": 1e-6,
            "output_window": [0.0, 1.0],
            "output_rule": "dpcore.noise.guarantees.publish_gini: clamp to [0, 1], round to the grid (post-processing)",
            "noise_scale": CONFIDENTIAL_SCALE_LABEL,
        }
        if self.noise == "cauchy":
            loss, excess = self.certified
            out.update(
                alpha_used=self.release_alpha,
                min_noise_scale=GINI_MIN_SCALE,
                max_noise_scale=self.max_scale,
                float_slack=FLOAT_SLACK,
                certified_loss_per_cell=loss,
                sampler_excess_per_cell=excess,
            )
        else:
            out.update(delta_per_cell=self.delta_cell)
        return out

    def check_real_release(self) -> None:
        """Refuse, from public settings only and before any charge, a real draw without a floating-point-safe
        sampler (the log-normal factor of "laplace_lognormal": OpenDP samples Laplace and Gaussian only)."""
        if self.noise == "laplace_lognormal":
            raise DPInputError(
                "a real release of the Gini with noise='laplace_lognormal' is not offered: there is no "
                "floating-point-safe sampler for it. Use noise='laplace' (OpenDP's Laplace sampler) or "
                "noise='cauchy' (the certified generalized-Cauchy sampler); nothing was charged."
            )

    def simulate(
        self, confidential_gini: float, confidential_noise_scale: float, size: Any, rng: Any = None
    ) -> np.ndarray:
        """``size`` simulated noisy values g + scale Z of this calibration's law (numpy, vectorised; before the
        [0, 1] clamp, which is post-processing): exploration only, nothing is released or charged."""
        return float(confidential_gini) + float(confidential_noise_scale) * self.noise_law().rvs(
            size, as_generator(rng)
        )


def _check_gamma(gamma: Any) -> float:
    gamma = check_finite(gamma, "gamma")
    if gamma <= 1:
        raise DPInputError(f"gamma must be > 1 (the noise density 1/(1+|z|^gamma) needs it), got {gamma:g}")
    return gamma


def _prepare_release(x, epsilon, gamma, lower, upper, calibration, method, clip_negative, noise="cauchy", delta=None):
    mech = GiniCalibration(
        epsilon, float(lower), float(upper), noise=noise, gamma=gamma, calibration=calibration, delta=delta
    )
    if method not in ("exact", "fast"):
        raise DPInputError(f"method must be 'exact' or 'fast', got {method!r}")
    xs, n_below, n_above = clip_incomes(x, lower=lower, upper=upper, clip_negative=clip_negative)
    ss = smooth_sensitivity(xs, lower=float(lower), upper=float(upper), beta=mech.smoothness, method=method)
    return mech, xs, n_below, n_above, ss


def release_gini(
    x: Any,
    *,
    epsilon: float,
    gamma: float = 2.0,
    lower: float,
    upper: float,
    calibration: str = "tight",
    method: str = "exact",
    rng: Any = None,
    clip_negative: bool = False,
    include_confidential: bool = False,
    noise: str = "cauchy",
    delta: float | None = None,
) -> GiniRelease:
    """epsilon-DP Gini index: g(X) + (S_beta(X)/alpha) Z, Z ~ GeneralizedCauchy(gamma) (eqs. (9)-(10)), the law of
    :class:`GiniCalibration` (the calibration of every released Gini), drawn with numpy.

    Neighbours: replace one record; n, lower and upper public. (alpha, beta) from
    ``dpcore.noise.smooth_noise_calibration(epsilon, gamma, mode=calibration)`` ("tight":
    certified largest alpha; "paper": alpha = eps/(4 gamma), beta = eps/gamma). S_beta from
    :func:`smooth_sensitivity` (``method`` "exact" or "fast"). Incomes are clipped to
    [lower, upper]; negatives are refused unless ``clip_negative``. ``rng``: a seed or numpy Generator (a
    reproducible simulation), or None: the operating system's CSPRNG (:func:`dpcore.rng.secure_generator`), as
    the paper's other functions here draw. This is the paper's estimator, charged to no ledger: a release to
    publish is made by the release pipeline (``python -m dpcore release``, the app's Release mode,
    :func:`dpcore.release.make_release`), which charges a ledger first and draws with the certified sampler of
    :class:`dpcore.mechanisms.GiniMechanism`. ``value`` is published as every released Gini is
    (:func:`dpcore.noise.guarantees.publish_gini`: clamped to [0, 1] on the 1e-6 grid, post-processing);
    ``noisy_value`` is the noisy number before that step (the posterior's input).

    ``noise`` (a ``dpcore.noise.smooth.SMOOTH_NOISES`` name): "cauchy" (default, pure epsilon,
    the paper's), "laplace" (NRS, (epsilon, delta)-DP) or "laplace_lognormal" (Bun & Steinke 2019,
    rho-zCDP with rho implying (epsilon, delta); simulation only: it has no floating-point-safe sampler);
    ``delta`` defaults to 1e-6 for the last two and is ignored by "cauchy". ``.privacy_cost`` is the
    ``dpcore.budget.PrivacyCost`` the ledger composes.

    Example (a seeded simulation):

    >>> import numpy as np
    >>> x = np.random.default_rng(0).lognormal(10, 1, 2000)
    >>> r = release_gini(x, epsilon=1.0, lower=0.0, upper=2e6, rng=1)
    >>> 0.0 <= r.value <= 1.0 and r.privacy_cost.epsilon == 1.0
    True
    """
    mech, xs, n_below, n_above, ss = _prepare_release(
        x, epsilon, gamma, lower, upper, calibration, method, clip_negative, noise, delta
    )
    from .noise.guarantees import publish_gini

    g0 = _sorted_gini(xs)
    scale = mech.noise_scale(ss.value)
    noisy = float(mech.simulate(g0, scale, 1, secure_generator() if rng is None else rng)[0])
    cal = mech.smooth_calibration
    return GiniRelease(
        value=publish_gini(noisy),
        noisy_value=noisy,
        confidential_noise_scale=scale,
        alpha=mech.alpha,
        beta=mech.smoothness,
        epsilon=mech.epsilon,
        gamma=mech.gamma,
        confidential_smooth_sensitivity=ss.value,
        confidential_k_star=ss.k_star,
        calibration=calibration,
        method=method,
        n=xs.size,
        lower=float(lower),
        upper=float(upper),
        confidential_saturated=_saturated(ss.value, ss.global_sensitivity, scale, mech.gamma, mech.noise_law()),
        confidential_n_clipped_below=n_below,
        confidential_n_clipped_above=n_above,
        confidential_true_value=g0 if include_confidential else None,
        noise=cal.noise,
        delta=cal.delta,
        rho=cal.rho,
        privacy_cost=mech.privacy_cost(),
        sigma=cal.sigma,
    )


@dataclass(frozen=True)
class LaplaceGiniRelease:
    """Baseline: g(X) + Laplace(GS/epsilon) with the global sensitivity of eq. (1)."""

    value: float
    noise_scale: float
    epsilon: float
    global_sensitivity: float
    n: int
    lower: float
    upper: float
    confidential_n_clipped_below: int = 0
    confidential_n_clipped_above: int = 0


def release_gini_laplace(
    x: Any, *, epsilon: float, lower: float, upper: float, rng: Any = None, clip_negative: bool = False
) -> LaplaceGiniRelease:
    """The global-sensitivity Laplace mechanism the paper argues against (Section 2.2).

    GS from :func:`gini_global_sensitivity` ((n-1)/n when lower = 0: useless for any n).
    """
    epsilon = check_epsilon(epsilon)
    xs, n_below, n_above = clip_incomes(x, lower=lower, upper=upper, clip_negative=clip_negative)
    gs = gini_global_sensitivity(xs.size, lower, upper)
    nz = _noise()
    gen = secure_generator() if rng is None else as_generator(rng)
    scale = gs / epsilon
    val = _sorted_gini(xs) + float(nz.sample_laplace(scale, 1, gen)[0])
    return LaplaceGiniRelease(val, scale, epsilon, gs, xs.size, float(lower), float(upper), n_below, n_above)


def error_summary(errors: Any, *, gamma: float | None = None) -> dict[str, float | None]:
    """Median / 90% / 99% absolute error, and RMSE only when the noise has a variance (gamma > 3)."""
    e = np.abs(as_finite_array(errors, "errors"))
    if gamma is not None:
        gamma = _check_gamma(gamma)
    q50, q90, q99 = np.quantile(e, [0.5, 0.9, 0.99])
    rmse = None
    if gamma is None or gamma > 3:
        rmse = float(np.sqrt(np.mean(e * e)))
    return {"median_abs_error": float(q50), "q90_abs_error": float(q90), "q99_abs_error": float(q99), "rmse": rmse}


@dataclass(frozen=True, eq=False)
class GiniSimulation:
    """Many simulated releases of one data set (planning: this uses the confidential truth)."""

    releases: np.ndarray
    laplace_releases: np.ndarray
    confidential_true_value: float
    noise_scale: float
    laplace_scale: float
    alpha: float
    beta: float
    epsilon: float
    gamma: float
    smooth: GiniSmoothSensitivity
    summary: dict
    laplace_summary: dict
    saturated: bool
    noise: str = "cauchy"
    delta: float = 0.0
    privacy_cost: Any = None  # dpcore.budget.PrivacyCost of one release


def simulate_releases_from_scale(
    true_value: float, noise_scale: float, gamma: float, n_releases: int, rng: Any = None
) -> np.ndarray:
    """true_value + noise_scale * Z for n_releases independent Z ~ GeneralizedCauchy(gamma) (vectorised)."""
    true_value = check_finite(true_value, "true_value")
    noise_scale = check_finite(noise_scale, "noise_scale")
    if noise_scale < 0:
        raise DPInputError("noise_scale must be >= 0")
    gamma = _check_gamma(gamma)
    n_releases = check_int(n_releases, "n_releases", minimum=1, maximum=50_000_000)
    return true_value + noise_scale * _noise().GeneralizedCauchy(gamma).rvs(n_releases, as_generator(rng))


def simulate_gini_releases(
    x: Any,
    *,
    epsilon: float,
    gamma: float = 2.0,
    lower: float,
    upper: float,
    n_releases: int = 100_000,
    calibration: str = "tight",
    method: str = "exact",
    rng: Any = None,
    clip_negative: bool = False,
    noise: str = "cauchy",
    delta: float | None = None,
) -> GiniSimulation:
    """Simulate ``n_releases`` independent releases of :func:`release_gini` (and the Laplace baseline).

    S_beta(X) is computed once; the draws are vectorised. For planning and teaching only: the
    summary uses the confidential true value. ``noise`` and ``delta`` as in :func:`release_gini`
    (the RMSE is reported for the light-tailed noises, which have a variance).
    """
    mech, xs, _, _, ss = _prepare_release(
        x, epsilon, gamma, lower, upper, calibration, method, clip_negative, noise, delta
    )
    n_releases = check_int(n_releases, "n_releases", minimum=1, maximum=50_000_000)
    gen = as_generator(rng)
    g0 = _sorted_gini(xs)
    scale = mech.noise_scale(ss.value)
    rel = mech.simulate(g0, scale, n_releases, gen)
    gs = ss.global_sensitivity
    lap_scale = gs / mech.epsilon
    lap = g0 + gen.laplace(0.0, lap_scale, size=n_releases)
    cal = mech.smooth_calibration
    return GiniSimulation(
        releases=rel,
        laplace_releases=lap,
        confidential_true_value=g0,
        noise_scale=scale,
        laplace_scale=lap_scale,
        alpha=mech.alpha,
        beta=mech.smoothness,
        epsilon=mech.epsilon,
        gamma=mech.gamma,
        smooth=ss,
        summary=error_summary(rel - g0, gamma=mech.gamma if cal.noise == "cauchy" else None),
        laplace_summary=error_summary(lap - g0),
        saturated=_saturated(ss.value, gs, scale, mech.gamma, mech.noise_law()),
        noise=cal.noise,
        delta=cal.delta,
        privacy_cost=mech.privacy_cost(),
    )


try:  # the posterior lives in dpcore/posterior.py (another owner)
    from .posterior import gini_posterior  # noqa: F401,E402

    __all__.append("gini_posterior")
except ImportError:  # pragma: no cover
    pass
