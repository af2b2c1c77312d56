"""A differentially private upper bound U on incomes (Lan & Reiter 2025, Section 5.1).

The Gini mechanism needs public bounds [L, U]. When no public U exists, Section 5.1 spends a
little budget on a DP estimate of the maximum with AboveThreshold "in the style of Durfee
(2023)", then inflates it: U = 2.5 * estimate (post-processing, free).

Algorithm (AboveThreshold / sparse vector, Dwork & Roth 2014 Alg. 1; Lyu, Su & Li 2017 Alg. 1):

* threshold: the noisy size n~ = n + Lap(1/epsilon_n)        (the paper's "noisy n", epsilon_1)
* candidates t_i = lower + growth^i - 1, i = 1, 2, ... (Durfee's geometric grid, shifted so that
  it starts just above ``lower``)
* queries q_i(X) = #{x <= t_i}, answered as q_i + Lap(2/epsilon_count)       (epsilon_2)
* output the first t_i with q_i + noise >= n~; U = inflation * t_i.

Privacy: each q_i has sensitivity 1 (replace one record: the count moves by at most 1; add or
remove one record: by at most 1, and n moves by 1, which the threshold noise Lap(1/epsilon_n)
covers). The standard AboveThreshold proof with threshold noise Lap(Delta/epsilon_1) and query
noise Lap(2 Delta/epsilon_2) gives (epsilon_1 + epsilon_2)-DP for the index of the first
crossing, whatever the number of candidates. (For these monotone counting queries Lap(1/eps_2)
would already suffice; we keep the general constant.) Only that index is released; U is
post-processing. tests/test_bounds.py checks the privacy loss exactly by numerical
integration on small data sets.

The paper's wording ("counts the number of observations that exceed that guess ... stops at
the first instance the noisy count exceeds n~") cannot be literal (a count of exceedances never
exceeds n); we read it as Durfee's: stop when the noisy count of observations <= the guess
reaches the noisy n.

The search is capped at ``max_value`` (a public constant): if no candidate crosses, the output
is the cap (still DP: it is a fixed function of "no crossing").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .validation import DPInputError, as_finite_array, as_generator, check_epsilon, check_finite

if TYPE_CHECKING:
    from .rng import SecureRandom

__all__ = ["above_threshold_noise_scales", "candidate_grid", "DPUpperBound", "dp_upper_bound"]


def above_threshold_noise_scales(epsilon_n: float, epsilon_count: float) -> tuple[float, float]:
    """(threshold noise scale, query noise scale) = (1/epsilon_n, 2/epsilon_count) for sensitivity 1."""
    e1 = check_epsilon(epsilon_n, "epsilon_n")
    e2 = check_epsilon(epsilon_count, "epsilon_count")
    return 1.0 / e1, 2.0 / e2


def candidate_grid(lower: float, growth: float, i: Any) -> np.ndarray:
    """Candidates t_i = lower + growth^i - 1 (i >= 1)."""
    lower = check_finite(lower, "lower")
    growth = check_finite(growth, "growth")
    if growth <= 1:
        raise DPInputError(f"growth must be > 1 (the ratio between candidate guesses), got {growth:g}")
    idx = as_finite_array(i, "i")
    with np.errstate(over="ignore"):
        out = lower + np.expm1(idx * math.log(growth))
    if not np.all(np.isfinite(out)):
        raise DPInputError("candidate index too large: the guess overflows")
    return out


@dataclass(frozen=True)
class DPUpperBound:
    """A DP upper bound on incomes: ``upper = inflation * estimate``; ``epsilon`` is what it cost.

    ``estimate`` (the AboveThreshold output) and ``upper`` are DP releases; add ``epsilon``
    (= epsilon_n + epsilon_count) to the total budget of the analysis that uses ``upper``.
    ``capped``: no candidate crossed before ``max_value`` (the output is the cap).
    """

    upper: float
    estimate: float
    epsilon: float
    epsilon_n: float
    epsilon_count: float
    inflation: float
    growth: float
    lower: float
    capped: bool


def dp_upper_bound(
    x: Any,
    *,
    epsilon_n: float = 0.075,
    epsilon_count: float = 0.075,
    inflation: float = 2.5,
    lower: float = 0.0,
    growth: float = 1.001,
    max_value: float = 1e15,
    rng: Any = None,
) -> DPUpperBound:
    """DP estimate of max(x) by AboveThreshold and U = inflation * estimate (Section 5.1).

    Defaults are the paper's: epsilon_1 = epsilon_2 = 0.075 (0.15 in total), inflation 2.5,
    L = 0. Neighbouring relation: replace one record (n public) or add/remove one record; both
    give (epsilon_n + epsilon_count)-DP. Values below ``lower`` (e.g. negative incomes) simply
    count as below every candidate. ``rng=None`` uses the OS CSPRNG (a real release).
    """
    e1 = check_epsilon(epsilon_n, "epsilon_n")
    e2 = check_epsilon(epsilon_count, "epsilon_count")
    inflation = check_finite(inflation, "inflation")
    if inflation < 1:
        raise DPInputError(
            f"inflation must be >= 1 (it protects against underestimating the maximum), got {inflation:g}"
        )
    lower = check_finite(lower, "lower")
    if lower < 0:
        raise DPInputError(f"lower must be >= 0 for incomes, got {lower:g}")
    growth = check_finite(growth, "growth")
    if not 1 < growth <= 2:
        raise DPInputError(f"growth must be in (1, 2] (the ratio between candidate guesses), got {growth:g}")
    max_value = check_finite(max_value, "max_value")
    if max_value <= lower:
        raise DPInputError("max_value must be above lower")
    xs = np.sort(as_finite_array(x, "incomes", min_size=1))
    gen: np.random.Generator | SecureRandom
    if rng is None:
        from .rng import secure_generator

        gen = secure_generator()
    else:
        gen = as_generator(rng)
    b1, b2 = above_threshold_noise_scales(e1, e2)
    n = xs.size
    threshold = n + float(gen.laplace(0.0, b1, size=1)[0])
    i_last = int(math.ceil(math.log1p(max_value - lower) / math.log(growth)))
    chunk = 8192
    start = 1
    while start <= i_last:
        idx = np.arange(start, min(start + chunk, i_last + 1))
        t = candidate_grid(lower, growth, idx)
        counts = np.searchsorted(xs, t, side="right")
        noisy = counts + gen.laplace(0.0, b2, size=idx.size)
        hit = np.flatnonzero(noisy >= threshold)
        if hit.size:
            est = float(t[hit[0]])
            return DPUpperBound(inflation * est, est, e1 + e2, e1, e2, inflation, growth, lower, False)
        start += chunk
    return DPUpperBound(inflation * max_value, max_value, e1 + e2, e1, e2, inflation, growth, lower, True)
