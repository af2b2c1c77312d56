"""The Gini index (eq. (1)), the clipping to the public range, and its exact extremes after k replaced records.

Theorems 4.1-4.2, Algorithms 1-2 and Appendix A.3 of Lan & Reiter (2025), for eq. (1) (see :mod:`dpcore.gini`).
Where this module departs from the paper (proven by tests/test_gini_bruteforce.py): Algorithm 1 (minimum) uses
ternary search; we locate the minimiser exactly with the sign function phi_r (constant between order statistics,
increasing in r) by binary search. Algorithm 2 (maximum) scans all windows s and all j = 0..k, O(nk) per k;
N - tD is unimodal in s with a closed-form peak, so Dinkelbach's method finds the exact maximum in O(k) per step
(:func:`max_gini_k`; the O(n) scan ``_gmax_k_scan`` is kept as a test oracle).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import DPInputError, as_finite_array, check_bounds, check_int

GINI_DEFINITION = "eq1"
_DEFINITIONS = ("eq1", "eq2")


def sorted_gini(xs: np.ndarray) -> float:
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
    g = sorted_gini(np.sort(arr))
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


def check_sorted_in_bounds(x_sorted: Any, lower: float | None = None, upper: float | None = None) -> np.ndarray:
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


class PrefixSums:
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


def _gmax_k_scan(pf: PrefixSums, k: int, lower: float, upper: float) -> float:
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
        return sorted_gini(pf.x)
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


def max_gini_k(pf: PrefixSums, k: int, lower: float, upper: float) -> float:
    """Exact max after k replacements in O(k) per Dinkelbach step (same optimum as ``_gmax_k_scan``).

    With t = n * (a candidate Gini), F(s, j) = N - t D (eq. (59)) satisfies
    F(s+1, j) - F(s, j) = (w_{s+1} + 2j - t)(x_{s+1} - x_{s+k+1}), w_i = 2i - n - 1: F is unimodal
    in the window start s with its peak at s = ceil((n + 1 + t - 2j)/2) - 1. Dinkelbach's method
    (t <- best ratio found; stop when max F(t) <= 0) therefore needs only O(k) work per step and
    ends at the exact maximum over all windows s and all j = 0..k.
    """
    n, L, U = pf.n, lower, upper
    if k <= 0:
        return sorted_gini(pf.x)
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

    # The peak's window start and its two neighbours, as the three rows of one array: one pass of numpy calls
    # per Dinkelbach step instead of three, the same numbers elementwise (about half the CPU: docs/benchmarks.md,
    # "The exact Gini profile's A^(k) in batches, the Cauchy's certificate").
    offsets = np.array([[-1.0], [0.0], [1.0]])
    best = -np.inf
    t = 0.0
    for _ in range(200):
        h = np.ceil((n + 1 + t - 2.0 * j) / 2.0) - 1.0
        sv = np.clip(h + offsets, 0, n - k)
        g, F = ratio_and_F(sv, t)
        best = max(best, float(g.max()))
        fmax = float(F.max())
        t_new = n * best
        if fmax <= 1e-12 * max(abs(t) * (S + k * U), 1e-300) or t_new <= t:
            break
        t = t_new
    return best


def min_gini_k(pf: PrefixSums, k: int) -> float:
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
        return sorted_gini(pf.x)
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

    Theorem 4.2 / Algorithm 1 of Lan & Reiter, with the exact minimiser (see ``min_gini_k``). The
    minimum does not depend on [L, U] (the optimal new value is a data value). k = 0 gives
    g(X); k >= n - 1 gives 0.
    """
    xs = check_sorted_in_bounds(x_sorted)
    k = check_int(k, "k", minimum=0)
    return min_gini_k(PrefixSums(xs), k)


def max_gini_after_k(x_sorted: Any, k: int, lower: float, upper: float) -> float:
    """Exact maximum of eq. (1) over all data sets that replace k records by values in [lower, upper].

    Theorem 4.1 / Algorithm 2 with eq. (59) of Appendix A.3 (see ``max_gini_k``); O(n) per k.
    """
    lower, upper = check_bounds(lower, upper)
    xs = check_sorted_in_bounds(x_sorted, lower, upper)
    k = check_int(k, "k", minimum=0)
    return max_gini_k(PrefixSums(xs), k, lower, upper)


def mean_extremes_after_k(x_sorted: Any, k: Any, lower: float, upper: float) -> tuple[np.ndarray, np.ndarray]:
    """(min sum, max sum) after replacing k records (vectorised over k): the k largest go to L / the k smallest to U."""
    lower, upper = check_bounds(lower, upper)
    xs = check_sorted_in_bounds(x_sorted, lower, upper)
    pf = PrefixSums(xs)
    try:
        k_arr = np.asarray(k, dtype=float)
    except (TypeError, ValueError):
        raise DPInputError(f"k must be a whole number of replaced records (or an array of them), got {k!r}") from None
    if not (np.all(np.isfinite(k_arr)) and np.all(k_arr >= 0) and np.all(k_arr == np.floor(k_arr))):
        raise DPInputError(f"k must be whole numbers >= 0 (records replaced), got {k!r}")
    kk = np.minimum(k_arr, pf.n).astype(int)
    return sum_extremes(pf, kk, lower, upper)


def sum_extremes(pf: PrefixSums, kk: np.ndarray, lower: float, upper: float) -> tuple[np.ndarray, np.ndarray]:
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
    xs = check_sorted_in_bounds(x_sorted, lower, upper)
    k_max = check_int(k_max, "k_max", minimum=0)
    pf = PrefixSums(xs)
    ks = np.arange(0, min(k_max, pf.n) + 1)
    gmin = np.array([min_gini_k(pf, int(k)) for k in ks])
    gmax = np.array([max_gini_k(pf, int(k), lower, upper) for k in ks])
    smin, smax = sum_extremes(pf, ks, lower, upper)
    return {"k": ks, "gmin": gmin, "gmax": gmax, "smin": smin, "smax": smax}
