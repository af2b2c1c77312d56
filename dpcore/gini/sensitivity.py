"""Sensitivity of the eq. (1) Gini: global, local (our rigorous bound) and smooth (Lan & Reiter 2025, Section 4).

Neighbouring relation: replace one record; n and the bounds [lower, upper] public (see :mod:`dpcore.gini`).

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
"""

from __future__ import annotations

import itertools
import math
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..lru import BoundedCache, array_digest
from ..validation import DPInputError, as_finite_array, check_bounds, check_finite, check_int
from .statistic import PrefixSums, check_sorted_in_bounds, max_gini_k, min_gini_k, sorted_gini, sum_extremes


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
    g0 = sorted_gini(xs)
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


def check_beta(beta: Any) -> float:
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
    beta = check_beta(beta)
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
    pf = PrefixSums(xs)
    gs = gini_global_sensitivity(n, lower, upper)
    g0 = sorted_gini(xs)
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
        xs = check_sorted_in_bounds(xs, lower, upper)
        if float(xs.sum()) <= 0:
            raise DPInputError("all incomes are zero: the Gini index is undefined (0/0)")
        self.lower, self.upper, self.n = float(lower), float(upper), int(xs.size)
        self._prefix = PrefixSums(xs)
        self.global_sensitivity = gini_global_sensitivity(self.n, self.lower, self.upper)
        g0 = sorted_gini(xs)
        s0 = np.array([self._prefix.S])
        self.a0 = float(_ls_bound(self.n, self.lower, self.upper, np.array([g0]), np.array([g0]), s0, s0)[0])
        self._exact: list[float] = [self.a0]  # A^(k) for k = 0..len-1, already capped by the fast bound
        self._sparse: dict[int, float] = {}  # A^(k) at single k beyond them (the pruning's probes)
        self._lock = threading.Lock()

    def _fast(self, ks: np.ndarray) -> np.ndarray:
        return _fast_A_capped(self.n, self.lower, self.upper, self._prefix.S, ks, self.global_sensitivity)

    def _a_at(self, j: int) -> float:
        """A^(j) alone (no j' < j needed): the exact box's bound capped by the closed form."""
        return float(self._a_many(np.array([j]))[0])

    def _a_many(self, js: np.ndarray) -> np.ndarray:
        """A^(j) for each j of ``js``: the extremes per j, then both bounds on all of them in one vectorised
        call each (elementwise, so each number is the one ``_a_at`` gives for its j alone)."""
        pf, lo, hi, n = self._prefix, self.lower, self.upper, self.n
        inside = js[js < n]
        a = np.full(js.shape, self.global_sensitivity)
        if inside.size:
            gmin = np.array([min_gini_k(pf, int(j)) for j in inside])
            gmax = np.array([max_gini_k(pf, int(j), lo, hi) for j in inside])
            smin, smax = sum_extremes(pf, inside, lo, hi)
            a[js < n] = _ls_bound(n, lo, hi, gmin, gmax, smin, smax)
        return np.minimum(a, self._fast(js))

    def exact_a(self, k: int) -> float:
        """min(exact A^(k), fast A^(k)): both are valid bounds and the exact box lies inside the relaxed one."""
        with self._lock:
            if len(self._exact) <= k:
                js = np.arange(len(self._exact), k + 1)
                probed = [self._sparse.pop(int(j), None) for j in js]
                todo = np.array([j for j, p in zip(js, probed, strict=True) if p is None], dtype=js.dtype)
                fresh = iter(self._a_many(todo).tolist()) if todo.size else iter(())
                self._exact += [next(fresh) if p is None else p for p in probed]
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
        beta = check_beta(beta)
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
        suffix bound of the sequential scan needed A^(k) at every k up to ~1,700 (10,000 records at beta
        0.004), this needs a few dozen."""
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
        beta = check_beta(beta)
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
    beta = check_beta(beta)
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
