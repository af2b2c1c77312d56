"""What the samplers of real releases guarantee and publish, computed from public inputs without drawing.

:mod:`dpcore.noise.secure` draws; this module holds the public numbers its draws are calibrated and
certified by, so that the layers which plan a release or compute its published interval (``dpcore.gini``,
``dpcore.intervals``) read them without importing the samplers:

* :func:`laplace_scale_for` -- the smallest scale of OpenDP's floating-point-safe Laplace whose privacy map
  at a sensitivity is within a target epsilon (the map includes the 2^k rounding allowance);
* the certified generalized-Cauchy sampler's bounds: :func:`generalized_cauchy_sampler_tv` (total variation
  from the ideal snapped law) and :func:`gc_pure_sampler_excess` (the pure-DP mode's excess loss), with the
  sampler's precision constants (docs/secure_noise.md has the argument);
* the public output rule of every released Gini index: :data:`GINI_GRID`, :data:`GINI_WINDOW`,
  :func:`publish_gini` (post-processing).

OpenDP is imported inside the functions (:func:`load_opendp`): the app's start-up does not pay for it.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from ..validation import DPInputError, check_epsilon, check_finite, check_int, check_positive

__all__ = [
    "GC_UNIFORM_BITS",
    "GC_WORKING_BITS",
    "GC_CDF_ERROR_BITS",
    "DEFAULT_HALF_WINDOW_CELLS",
    "GINI_GRID",
    "GINI_WINDOW",
    "publish_gini",
    "load_opendp",
    "float_laplace_measurement",
    "laplace_scale_for",
    "cell_range",
    "generalized_cauchy_sampler_tv",
    "gc_pure_sampler_excess",
]


def load_opendp() -> Any:
    """``opendp.prelude`` with the contrib features enabled (imported here: heavy, and only real releases and
    OpenDP's privacy maps need it)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


#: random bits of the uniform that the generalized-Cauchy sampler inverts
GC_UNIFORM_BITS = 128
#: working precision (bits) of the exact CDF evaluation
GC_WORKING_BITS = 192
#: stated bound eta = 2^-GC_CDF_ERROR_BITS on |computed CDF - exact CDF| at 192-bit precision
#: (tests compare with a 384-bit evaluation; the observed error is below 2^-170)
GC_CDF_ERROR_BITS = 150
#: the one public grid of every released Gini index (command line, app release, planner, dpcore.gini.release_gini)
GINI_GRID = 1e-6
#: the one public window of every released Gini index: the Gini of non-negative incomes lies in [0, 1]
GINI_WINDOW = (0.0, 1.0)
_GINI_GRID_DECIMALS = 6  # GINI_GRID = 10^-6: a grid point is the nearest double to a 6-decimal number


def publish_gini(value: Any) -> float:
    """The published form of a noisy Gini index: clamped to :data:`GINI_WINDOW` = [0, 1] and rounded to
    the nearest point of :data:`GINI_GRID` = 1e-6 (returned as the double nearest that 6-decimal number).

    Both steps use only the noisy value and public constants, so they are post-processing: the release keeps
    the noise's (epsilon, delta). Clamping can only move the value towards the truth (the Gini of
    non-negative incomes lies in [0, 1]), and one grid for every path (command line, app release, planner,
    :func:`dpcore.gini.release_gini`) means the same statistic is never published to different precisions.
    An infinite value (a heavy-tailed draw overflowing) goes to the nearer end; NaN is refused.

    Example:

    >>> publish_gini(0.4321234567), publish_gini(-0.2), publish_gini(1.7)
    (0.432123, 0.0, 1.0)
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DPInputError(f"a released Gini must be a number, got {value!r}") from None
    if math.isnan(number):
        raise DPInputError("a released Gini cannot be NaN: the noisy value was not computed")
    lo, hi = GINI_WINDOW
    return round(min(max(number, lo), hi), _GINI_GRID_DECIMALS)


#: default public clamp window of the generalized-Cauchy output, in grid units (+-2^52 cells)
DEFAULT_HALF_WINDOW_CELLS = 2**52


def float_laplace_measurement(scale: float) -> Any:
    """OpenDP's floating-point-safe Laplace of ``scale`` on float vectors under the L1 distance."""
    dp = load_opendp()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
    return dp.m.make_laplace(*space, scale=float(scale))


@lru_cache(maxsize=512)
def laplace_scale_for(epsilon: float, sensitivity: float) -> float:
    """Smallest scale (within 1e-9 relative) whose OpenDP float-Laplace privacy map at ``sensitivity``
    is <= ``epsilon``: sensitivity/epsilon, enlarged by OpenDP's rounding allowance (about 1e-6)."""
    eps = check_epsilon(epsilon)
    sens = check_positive(sensitivity, "sensitivity")
    scale = sens / eps
    for _ in range(60):
        got = float(float_laplace_measurement(scale).map(sens))
        if got <= eps:
            return scale
        scale *= (got / eps) * (1.0 + 1e-12)
    raise DPInputError("could not find an OpenDP Laplace scale for this epsilon")  # pragma: no cover


def cell_range(grid: float, window: Any) -> tuple[int, int]:
    """Grid indices k_lo = ceil(lo/grid), k_hi = floor(hi/grid) of the public window (exact rationals)."""
    if window is None:
        return -DEFAULT_HALF_WINDOW_CELLS, DEFAULT_HALF_WINDOW_CELLS
    try:
        lo, hi = window
    except (TypeError, ValueError):
        raise DPInputError("window must be a pair (lower, upper) of public numbers") from None
    lo = check_finite(lo, "window lower")
    hi = check_finite(hi, "window upper")
    g = Fraction(grid)
    k_lo = math.ceil(Fraction(lo) / g)
    k_hi = math.floor(Fraction(hi) / g)
    if k_hi <= k_lo:
        raise DPInputError("the window must contain at least two grid points")
    return k_lo, k_hi


def generalized_cauchy_sampler_tv(n_boundaries: int, bits: int = GC_UNIFORM_BITS) -> float:
    """tau = N_b (2^-bits + 2 eta), eta = 2^-(bits + 64 - 42) (the CDF error at bits + 64 working bits;
    2^-150 at the default 128 bits): bound on the total-variation distance between what
    :func:`dpcore.noise.secure.release_generalized_cauchy` samples and the ideal snapped law (any data)."""
    n_boundaries = check_int(n_boundaries, "n_boundaries", minimum=0)
    bits = check_int(bits, "bits", minimum=8, maximum=4096)
    eta = 2.0 ** -(bits + 64 - (GC_WORKING_BITS - GC_CDF_ERROR_BITS))
    return float(n_boundaries) * (2.0**-bits + 2.0 * eta)


def _gc_min_cell_log_mass(gamma: float, grid: float, width: float, scales) -> float:
    """ln of a lower bound on the probability of every output cell, for any centre in the window and
    any noise scale in [min(scales), max(scales)]: each cell (the clamp cells included) contains an
    interval of length ``grid`` at distance <= width + grid from the centre, so its mass is at least
    (grid/s) h((width + grid)/s), h(z) = C/(1+|z|^gamma); this is unimodal in s, so its minimum over
    the scale range is at an end."""
    c = math.log(gamma * math.sin(math.pi / gamma) / (2 * math.pi))
    d = width + grid
    vals = []
    for sc in scales:
        z = d / sc
        vals.append(math.log(grid / sc) + c - float(np.logaddexp(0.0, gamma * math.log(z))))
    return min(vals)


def gc_pure_sampler_excess(
    gamma: float, grid: float, window: Any, min_scale: float, max_scale: float, bits: int | None = None
) -> tuple[float, int]:
    """(excess, bits) of the pure-DP mode of :func:`dpcore.noise.secure.release_generalized_cauchy`.

    Every sampled cell probability is within tau1 = 2 (2^-bits + eta) of the ideal one, and every ideal
    cell probability is >= p_min (:func:`_gc_min_cell_log_mass`), so the sampled law's likelihood ratio
    exceeds the ideal one's by at most (1 + r)/(1 - r), r = tau1 / p_min: the sampler is
    (epsilon + ln((1 + r)/(1 - r)))-DP, delta = 0. ``bits`` defaults to the smallest multiple of 64
    (>= 128) with r <= 2^-100. Public inputs only.
    """
    k_lo, k_hi = cell_range(grid, window)
    width = (k_hi - k_lo) * grid
    log_pmin = _gc_min_cell_log_mass(gamma, grid, width, (min_scale, max_scale))
    if bits is None:
        need = -log_pmin / math.log(2) + 102
        bits = max(128, 64 * math.ceil(need / 64))
    eta_log2 = -(bits + 64 - (GC_WORKING_BITS - GC_CDF_ERROR_BITS))  # eta at working precision bits + 64
    log_tau1 = math.log(2.0) + float(np.logaddexp(-bits * math.log(2), eta_log2 * math.log(2) + math.log(2)))
    r = math.exp(min(log_tau1 - log_pmin, 0.0))
    if r >= 0.5:
        raise DPInputError("the certified sampler cannot bound this configuration; use more bits")
    return float(math.log1p(r) - math.log1p(-r)), int(bits)
