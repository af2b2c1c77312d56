"""Noise for real releases: OpenDP's exact samplers, and a certified generalized-Cauchy sampler.

Exploration pages and Monte Carlo use the fast numpy samplers of :mod:`dpcore.noise`. A real
release draws its noise here, always through a mechanism of :mod:`dpcore.mechanisms` (the only callers
outside this package), where floating-point artefacts (Mironov 2012) cannot break the guarantee. What the
draws are calibrated and certified by (OpenDP's Laplace scale for an epsilon, the certified sampler's
bounds, the Gini's output grid) is computed without drawing in :mod:`dpcore.noise.guarantees`:

* :func:`release_integer_counts` -- discrete Laplace (two-sided geometric) noise on integers,
  OpenDP ``make_laplace`` on ``vector_domain(atom_domain(T=i64))`` / ``l1_distance(T=i64)``
  (Canonne, Kamath & Steinke 2020; exact integer sampling). Pure epsilon-DP, privacy map
  ``d_in -> d_in / scale``.
* :func:`release_real_values` -- OpenDP's floating-point-safe Laplace on float vectors (discrete
  Laplace on a grid 2^k, then rounded; OpenDP's privacy map accounts for the rounding, so the map
  can exceed ``d_in / scale`` by about 1e-6 relative; :func:`dpcore.noise.guarantees.laplace_scale_for`
  returns the smallest scale whose map is within a target epsilon).
* :func:`release_gaussian_values` -- OpenDP ``make_gaussian`` (discrete Gaussian on a grid):
  rho-zCDP with ``rho = map(d_in)``; with ``delta`` given, also (epsilon, delta) by OpenDP's
  ``make_zCDP_to_approxDP`` + ``make_fix_delta``.
* :func:`release_generalized_cauchy` -- OpenDP has no generalized-Cauchy sampler. This one samples
  the grid cell of ``value + scale * Z`` (Z with density ∝ 1/(1+|z|^gamma)) **exactly by
  inversion**: a 128-bit uniform from ``os.urandom`` is compared with the exact CDF at the cell
  boundaries evaluated in 192-bit arithmetic (``mpmath``). The ideal mechanism (continuous noise,
  then snapped to the public grid and clamped to the public window) is post-processing of the
  continuous one, so it has the continuous mechanism's certified epsilon; what is actually
  sampled differs from it in total variation by at most
  ``tau = N_boundaries * (2^-128 + 2 eta)`` (eta <= 2^-150 the CDF evaluation error), which adds
  ``delta = (1 + e^epsilon) tau`` (docs/secure_noise.md has the argument; the tests enumerate the
  output PMF on small grids).

The vector samplers draw on every core: the input (a numpy array, never a Python list) is cut into
contiguous slices and ONE OpenDP measurement is invoked on each slice in a thread pool
(:func:`draw_on_cores`; the OpenDP call releases the GIL while it samples). That is the same mechanism
as one call on the whole vector: each of these measurements adds noise to every entry independently,
so the joint law of the concatenated slices is the joint law of one call, and the privacy map (a
function of the measurement alone) is the one stated on the draw.

Every function returns a :class:`NoiseDraw` (values + the measurement's name, its privacy-map
statement, the epsilon / delta the map gives for the stated sensitivity). ``rng`` given (a numpy
Generator or a seed) means a **simulation**: the same law drawn with the numpy samplers of
:mod:`dpcore.noise`, reproducible, and labelled as such (never for a real release).

OpenDP and mpmath are imported inside the functions: the app's start-up does not pay for them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from ..rng import SecureRandom
from ..validation import DPInputError, as_generator, check_finite, check_positive
from .ahead import AheadReport, discrete_laplace, drawn_ahead, take_ahead
from .guarantees import (
    GC_UNIFORM_BITS,
    GC_WORKING_BITS,
    cell_range,
    float_laplace_measurement,
    gc_pure_sampler_excess,
    generalized_cauchy_sampler_tv,
    load_opendp,
)
from .samplers import GeneralizedCauchy, sample_gaussian, sample_laplace, sample_two_sided_geometric

__all__ = [
    "NoiseDraw",
    "is_simulation",
    "release_integer_counts",
    "integer_noise_ahead",
    "release_real_values",
    "release_gaussian_values",
    "release_generalized_cauchy",
    "draw_on_cores",
    "noise_threads",
]


@dataclass(frozen=True)
class NoiseDraw:
    """Noisy values and what produced them.

    ``values``: the noisy numbers (int64 for integer counts, float otherwise). ``measurement``: the
    OpenDP constructor (or dpcore sampler) with its domain, metric and scale. ``privacy_map``: the
    statement "d_in -> loss" of that measurement. ``epsilon``: the loss its privacy map gives for
    the stated ``sensitivity`` (None when no sensitivity was given; for the Gaussian, the epsilon at
    ``delta``). ``delta``: the delta of the draw (0 for the pure-DP samplers; the sampler's delta for
    the generalized Cauchy). ``rho``: zCDP parameter of the Gaussian. ``simulated``: True when the
    numpy samplers drew it (rng given): the same law, NOT a real release.
    Array-like: ``np.asarray(draw)``, ``len(draw)`` and ``draw[i]`` read ``values``.
    """

    values: np.ndarray
    measurement: str
    privacy_map: str
    delta: float = 0.0
    epsilon: float | None = None
    rho: float | None = None
    sensitivity: float | None = None
    simulated: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.values, dtype=dtype)

    def __len__(self) -> int:
        return int(np.asarray(self.values).size)

    def __getitem__(self, i):
        return self.values[i]

    def to_dict(self) -> dict[str, Any]:
        return {
            "values": np.asarray(self.values).tolist(),
            "measurement": self.measurement,
            "privacy_map": self.privacy_map,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
            "sensitivity": self.sensitivity,
            "simulated": self.simulated,
            "notes": list(self.notes),
        }


@lru_cache(maxsize=1)
def _opendp_version() -> str:
    try:
        from importlib.metadata import version

        return f"OpenDP {version('opendp')}"
    except Exception:  # pragma: no cover - metadata missing
        return "OpenDP"


#: fewest draws given to one thread: OpenDP's exact discrete Laplace costs about 6.5 us a draw (18 us for
#: the float Laplace), so a slice this size takes 25-75 ms, far above the ~0.1 ms of handing it to a thread
MIN_DRAWS_PER_THREAD = 4_096


def noise_threads(n_draws: int, threads: int | None = None) -> int:
    """How many threads :func:`draw_on_cores` uses for ``n_draws`` draws: ``threads`` (default: the cores
    this process may use), but never so many that a thread gets fewer than MIN_DRAWS_PER_THREAD draws."""
    from ..defaults import available_cores
    from ..validation import check_int

    n_draws = check_int(n_draws, "n_draws", minimum=0)
    wanted = available_cores() if threads is None else check_int(threads, "threads", minimum=1, maximum=1024)
    return max(1, min(wanted, n_draws // MIN_DRAWS_PER_THREAD))


def draw_on_cores(measurement: Any, values: np.ndarray, *, threads: int | None = None) -> np.ndarray:
    """``measurement(values)`` computed as ``measurement`` on contiguous slices of ``values`` in a thread pool.

    ``measurement``: an OpenDP measurement on a vector domain whose noise is independent per entry
    (``make_laplace`` / ``make_gaussian`` on ``vector_domain(atom_domain(...))``). Then the slices' outputs,
    concatenated, have exactly the law of one call on the whole vector, and nothing about the mechanism
    (its privacy map, its measurement text) changes. ``values``: a one-dimensional numpy array of the
    measurement's atom type (int64 or float64), handed to OpenDP as a buffer (no per-value Python work);
    the OpenDP call releases the GIL while it samples, so the threads run on separate cores. Returns a
    new array of the same dtype. ``threads``: see :func:`noise_threads`.
    """
    values = np.ascontiguousarray(values)
    if values.ndim != 1:
        raise DPInputError(f"values must be one-dimensional, got shape {values.shape}")
    n = values.size
    workers = noise_threads(n, threads)
    if workers == 1:
        return np.asarray(measurement(values), dtype=values.dtype)
    from concurrent.futures import ThreadPoolExecutor

    cuts = np.linspace(0, n, workers + 1).round().astype(np.int64)
    out = np.empty(n, dtype=values.dtype)

    def draw_slice(i: int) -> None:
        lo, hi = int(cuts[i]), int(cuts[i + 1])
        out[lo:hi] = np.asarray(measurement(values[lo:hi]), dtype=values.dtype)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dpcore-noise") as pool:
        for done in [pool.submit(draw_slice, i) for i in range(workers)]:
            done.result()  # re-raises a slice's error here
    return out


def is_simulation(rng: Any) -> bool:
    """True when ``rng`` asks for a simulation (a numpy Generator or a seed: the numpy samplers, reproducible),
    False for a real draw (None or :class:`dpcore.rng.SecureRandom`: OpenDP or the certified sampler)."""
    return rng is not None and not isinstance(rng, SecureRandom)


def _int_vector(counts: Any) -> np.ndarray:
    try:
        arr = np.asarray(counts)
    except Exception:  # pragma: no cover
        raise DPInputError("counts must be integers") from None
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise DPInputError(f"counts must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        try:
            f = arr.astype(float)
        except (TypeError, ValueError):
            raise DPInputError("counts must be integers") from None
        if not np.all(np.isfinite(f)) or np.any(f != np.round(f)):
            raise DPInputError("counts must be finite integers")
        arr = f
    if arr.size and np.max(np.abs(arr.astype(float))) > 2.0**62:
        raise DPInputError("counts must be below 2^62 in absolute value")
    return arr.astype(np.int64)


def _float_vector(values: Any, name: str = "values") -> np.ndarray:
    from ..validation import as_finite_array

    return as_finite_array(values, name, min_size=1)


def _sensitivity(sensitivity: Any) -> float | None:
    return None if sensitivity is None else check_positive(sensitivity, "sensitivity")


# ---------------------------------------------------------------------------------------------
# Integer counts: discrete Laplace
# ---------------------------------------------------------------------------------------------


def _discrete_laplace(scale: float) -> Any:
    """OpenDP's exact discrete Laplace of ``scale`` on integer vectors (L1 distance)."""
    return discrete_laplace(load_opendp(), scale)


def _saturating_add(counts: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """``counts + noise`` in int64, saturating at its ends as OpenDP's own addition does (a noise value beyond
    2^62 in absolute value has probability below exp(-2^62 / scale); the counts are below 2^62)."""
    total = counts + noise
    wrapped = ((counts >= 0) == (noise >= 0)) & ((total >= 0) != (counts >= 0))
    if wrapped.any():
        info = np.iinfo(np.int64)
        total[wrapped] = np.where(counts[wrapped] >= 0, info.max, info.min)
    return total


@contextmanager
def integer_noise_ahead(scales: Iterable[float]) -> Iterator[AheadReport]:
    """Within the block, the discrete Laplace noise of each public ``scale`` is drawn ahead, in the CPU time the
    release leaves idle (:mod:`dpcore.noise.ahead`: why ``counts + measurement(zeros)`` is the same release as
    ``measurement(counts)``), and :func:`release_integer_counts` of that scale takes it before drawing the rest."""
    with drawn_ahead(check_positive(s, "scale") for s in scales) as report:
        yield report


def release_integer_counts(
    counts: Any, *, scale: float, rng: Any = None, sensitivity: int | None = 1, threads: int | None = None
) -> NoiseDraw:
    """counts + discrete Laplace noise, P(k) ∝ exp(-|k| / scale), independently per entry.

    Real release (``rng`` None or a ``SecureRandom``): OpenDP ``make_laplace`` on
    ``vector_domain(atom_domain(T=i64))`` with ``l1_distance(T=i64)`` (exact sampling, no floating
    point; Ghosh, Roughgarden & Sundararajan 2009; Canonne, Kamath & Steinke 2020). Privacy map:
    L1 distance ``d_in`` -> epsilon ``d_in / scale`` (pure DP). ``sensitivity`` (L1, an integer) is
    the d_in the caller's neighbouring relation implies; the draw's ``epsilon`` is the map at it.
    The real draw runs on every core (:func:`draw_on_cores`, ``threads``): the same measurement on
    contiguous slices, the same law and privacy map. Inside :func:`integer_noise_ahead` of this scale, the
    first entries take the noise drawn ahead (the same measurement on zeros, added here).
    Simulation (``rng`` a Generator / seed): :func:`dpcore.noise.sample_two_sided_geometric` with
    epsilon = 1/scale, the same law.
    """
    scale = check_positive(scale, "scale")
    arr = _int_vector(counts)
    sens = None if sensitivity is None else int(check_positive(sensitivity, "sensitivity"))
    if is_simulation(rng):
        k = sample_two_sided_geometric(1.0 / scale, arr.size, rng=as_generator(rng))
        eps = None if sens is None else sens / scale
        return NoiseDraw(
            arr + k,
            f"simulation: dpcore.noise.sample_two_sided_geometric(epsilon=1/{scale!r}) "
            "(numpy; the law of OpenDP's discrete Laplace; NOT a real release)",
            f"d_in -> d_in / {scale!r} (L1, pure DP)",
            0.0,
            eps,
            None,
            sens,
            True,
        )
    meas = _discrete_laplace(scale)
    ahead = take_ahead(scale, arr.size)  # the measurement on zeros: noise alone
    out = np.empty(arr.size, dtype=np.int64)
    out[: ahead.size] = _saturating_add(arr[: ahead.size], ahead)
    if ahead.size < arr.size:
        out[ahead.size :] = draw_on_cores(meas, arr[ahead.size :], threads=threads)
    eps = None if sens is None else float(meas.map(sens))
    name = (
        f"{_opendp_version()}: opendp.measurements.make_laplace(vector_domain(atom_domain(T=i64)), "
        f"l1_distance(T=i64), scale={scale!r}) -- discrete Laplace, exact integer sampling"
    )
    stmt = f"L1 distance d_in -> epsilon = d_in / {scale!r} (MaxDivergence)"
    if sens is not None:
        stmt += f"; map({sens}) = {eps!r}"
    return NoiseDraw(out, name, stmt, 0.0, eps, None, sens, False)


# ---------------------------------------------------------------------------------------------
# Real values: OpenDP's floating-point-safe Laplace
# ---------------------------------------------------------------------------------------------


def release_real_values(
    values: Any,
    *,
    scale: float,
    rng: Any = None,
    sensitivity: float | None = None,
    confidential_scale_label: str | None = None,
    threads: int | None = None,
) -> NoiseDraw:
    """values + Laplace(scale) noise per entry, floating-point safe.

    ``confidential_scale_label``: for a scale that depends on the data (smooth sensitivity: S_beta(X)/alpha),
    the text written in the draw's description and statement instead of the number, which then appears
    nowhere in the draw but its values (a release record may show the description).

    Real release: OpenDP ``make_laplace`` on ``vector_domain(atom_domain(T=f64, nan=False))`` with
    ``l1_distance(T=f64)``: the input is rounded to a grid 2^k and discrete Laplace noise is added
    there (Canonne-Kamath-Steinke), so no floating-point artefact carries information; OpenDP's
    privacy map includes the rounding. ``epsilon`` = map(sensitivity) when a sensitivity is given.
    The real draw runs on every core (:func:`draw_on_cores`, ``threads``).
    Simulation: :func:`dpcore.noise.sample_laplace`, the continuous Laplace (the two laws agree up
    to the 2^k grid; a test checks it).
    """
    scale = check_positive(scale, "scale")
    arr = _float_vector(values)
    sens = _sensitivity(sensitivity)
    shown = repr(scale) if confidential_scale_label is None else confidential_scale_label
    if is_simulation(rng):
        z = sample_laplace(scale, arr.size, rng=as_generator(rng))
        return NoiseDraw(
            arr + z,
            f"simulation: dpcore.noise.sample_laplace(scale={shown}) (numpy; NOT a real release)",
            f"d_in -> d_in / {shown} (L1, pure DP)",
            0.0,
            None if sens is None else sens / scale,
            None,
            sens,
            True,
        )
    meas = float_laplace_measurement(scale)
    out = draw_on_cores(meas, np.asarray(arr, dtype=np.float64), threads=threads)
    eps = None if sens is None else float(meas.map(sens))
    name = (
        f"{_opendp_version()}: opendp.measurements.make_laplace(vector_domain(atom_domain(T=f64, nan=False)), "
        f"l1_distance(T=f64), scale={shown}) -- floating-point-safe Laplace (discrete Laplace on a 2^k grid)"
    )
    stmt = "L1 distance d_in -> epsilon = map(d_in) (MaxDivergence, about d_in/scale plus the 2^k rounding allowance)"
    if sens is not None:
        stmt += f"; map({sens!r}) = {eps!r}"
    return NoiseDraw(out, name, stmt, 0.0, eps, None, sens, False)


# ---------------------------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------------------------


def release_gaussian_values(
    values: Any,
    *,
    sigma: float,
    rng: Any = None,
    sensitivity: float | None = None,
    delta: float | None = None,
    threads: int | None = None,
) -> NoiseDraw:
    """values + N(0, sigma^2) noise per entry.

    Real release: OpenDP ``make_gaussian`` on float vectors with ``l2_distance(T=f64)`` (discrete
    Gaussian on a 2^k grid, Canonne-Kamath-Steinke 2020): rho-zCDP with rho = map(L2 sensitivity)
    (about d^2 / (2 sigma^2)). With ``delta`` the draw also states the epsilon at that delta from
    OpenDP's ``make_zCDP_to_approxDP`` + ``make_fix_delta``. The real draw runs on every core
    (:func:`draw_on_cores`, ``threads``). Simulation: numpy normal noise.
    """
    sigma = check_positive(sigma, "sigma")
    arr = _float_vector(values)
    sens = _sensitivity(sensitivity)
    if delta is not None:
        from ..validation import check_delta

        delta = check_delta(delta)
    if is_simulation(rng):
        z = sample_gaussian(sigma, arr.size, rng=as_generator(rng))
        rho = None if sens is None else sens * sens / (2 * sigma * sigma)
        return NoiseDraw(
            arr + z,
            f"simulation: dpcore.noise.sample_gaussian(sigma={sigma!r}) (numpy; NOT a real release)",
            f"L2 distance d_in -> rho = d_in^2 / (2 {sigma!r}^2) (zCDP)",
            float(delta or 0.0),
            None,
            rho,
            sens,
            True,
        )
    dp = load_opendp()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)
    meas = dp.m.make_gaussian(*space, scale=float(sigma))
    out = draw_on_cores(meas, np.asarray(arr, dtype=np.float64), threads=threads)
    name = (
        f"{_opendp_version()}: opendp.measurements.make_gaussian(vector_domain(atom_domain(T=f64, nan=False)), "
        f"l2_distance(T=f64), scale={sigma!r}) -- discrete Gaussian on a 2^k grid"
    )
    stmt = "L2 distance d_in -> rho = map(d_in) (ZeroConcentratedDivergence)"
    rho = eps = None
    if sens is not None:
        rho = float(meas.map(sens))
        stmt += f"; map({sens!r}) = rho {rho!r}"
        if delta is not None:
            approx = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(meas), float(delta))
            eps, _ = approx.map(sens)
            eps = float(eps)
            stmt += f"; make_fix_delta(make_zCDP_to_approxDP(.), {delta!r}).map({sens!r}) = ({eps!r}, {delta!r})"
    return NoiseDraw(out, name, stmt, float(delta or 0.0), eps, rho, sens, False)


# ---------------------------------------------------------------------------------------------
# Generalized Cauchy: exact inversion on a public grid, certified
# ---------------------------------------------------------------------------------------------


class _GCExactCDF:
    """F(b) = P(value + scale Z <= b), Z density ∝ 1/(1+|z|^gamma), in GC_WORKING_BITS-bit arithmetic.

    P(Z > t) = 1/2 I_{1/(1+t^gamma)}(1 - 1/gamma, 1/gamma) for t >= 0 (|Z|^gamma is beta-prime,
    see :class:`dpcore.noise.GeneralizedCauchy`). value, scale, gamma and the grid are taken as the
    exact rationals of their doubles.
    """

    def __init__(self, value: float, scale: float, gamma: float, grid: float, prec: int = GC_WORKING_BITS):
        import mpmath

        self.ctx = mpmath.MPContext()
        self.ctx.prec = prec
        ctx = self.ctx
        self.value = ctx.mpf(value)
        self.scale = ctx.mpf(scale)
        self.gamma = ctx.mpf(gamma)
        self.grid = ctx.mpf(grid)
        self.a = 1 / self.gamma
        self.b = 1 - self.a

    def boundary(self, k: int):
        """Upper boundary (k + 1/2) grid of the cell of grid point k (exact)."""
        return (self.ctx.mpf(k) + self.ctx.mpf(0.5)) * self.grid

    def cdf_at(self, k: int):
        ctx = self.ctx
        z = (self.boundary(k) - self.value) / self.scale
        if z == 0:
            return ctx.mpf(0.5)
        t = abs(z) ** self.gamma
        tail = ctx.betainc(self.b, self.a, 0, 1 / (1 + t), regularized=True) / 2
        return 1 - tail if z > 0 else tail


def _find_cell(cdf: _GCExactCDF, u, k_lo: int, k_hi: int, guess: int) -> int:
    """Smallest k in [k_lo, k_hi] with u <= F(b_k) (F(b_{k_hi}) := 1), by galloping + bisection from guess."""

    def ok(k: int) -> bool:
        return k >= k_hi or u <= cdf.cdf_at(k)

    k = min(max(guess, k_lo), k_hi)
    if ok(k):
        hi, step = k, 1
        lo = k - 1
        while lo >= k_lo and ok(lo):
            hi, lo, step = lo, lo - step, step * 2
        lo = max(lo, k_lo - 1)  # not ok(lo) (or below the range)
    else:
        lo, step = k, 1
        hi = k + 1
        while not ok(hi):
            lo, hi, step = hi, min(hi + step, k_hi), step * 2
    while hi - lo > 1:  # invariant: not ok(lo) (or lo = k_lo - 1), ok(hi)
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def release_generalized_cauchy(
    value: float,
    *,
    scale: float,
    gamma: float,
    grid: float,
    rng: Any = None,
    window: Any = None,
    epsilon: float | None = None,
    bits: int | None = None,
    min_scale: float | None = None,
    max_scale: float | None = None,
) -> NoiseDraw:
    """value + scale * Z, Z with density ∝ 1/(1+|z|^gamma), snapped to the public grid {k grid} and
    clamped to the public ``window`` (default +-2^52 grid cells): returned as one float.

    Real release: the output cell is found by **exact inversion** -- a ``bits``-bit uniform
    U = (m + 1/2) 2^-bits (m from ``os.urandom``) is compared with the CDF of value + scale Z at the
    cell boundaries (k + 1/2) grid, evaluated with mpmath at 192 bits (|error| <= eta = 2^-150).
    The ideal mechanism "continuous noise, then snap and clamp" is post-processing, so it keeps the
    continuous mechanism's epsilon (for smooth-sensitivity noise: the certificate of
    :func:`dpcore.noise.smooth_noise_privacy_loss`). The sampled law is within total variation
    tau = N_b (2^-bits + 2 eta) of the ideal one (N_b = number of finite cell boundaries), so with
    the ideal mechanism epsilon-DP, the sampler is (epsilon, (1 + e^epsilon) tau)-DP. Pass
    ``epsilon`` to get that delta on the draw (otherwise ``delta`` is tau and a note says so).
    docs/secure_noise.md has the proof; tests enumerate the sampled PMF on small grids.

    Pure-DP mode (``min_scale`` and ``max_scale`` given, with a ``window``): the noise scale is
    clamped to [min_scale, max_scale] and the centre to the window (both public; for smooth
    sensitivity, max(S, alpha min_scale) is again a beta-smooth upper bound and clipping the centre
    does not increase its sensitivity). Then every ideal cell has probability >= p_min and the
    sampler is (epsilon + ln((1+r)/(1-r)), 0)-DP with r = 2 (2^-bits + eta)/p_min
    (:func:`gc_pure_sampler_excess`; bits chosen so that r <= 2^-100): ``epsilon`` on the draw is
    that total, ``delta`` is 0.

    Simulation (``rng`` a Generator / seed): ``value + scale * GeneralizedCauchy(gamma).rvs`` with
    numpy, snapped and clamped the same way.
    """
    value = check_finite(value, "value")
    scale = check_positive(scale, "scale")
    gamma = check_finite(gamma, "gamma")
    if gamma <= 1:
        raise DPInputError(f"gamma must be > 1, got {gamma:g}")
    grid = check_positive(grid, "grid")
    pure = min_scale is not None or max_scale is not None
    if pure:
        if min_scale is None or max_scale is None or window is None:
            raise DPInputError("the pure-DP mode needs min_scale, max_scale and a window")
        min_scale = check_positive(min_scale, "min_scale")
        max_scale = check_positive(max_scale, "max_scale")
        if max_scale < min_scale:
            raise DPInputError("max_scale must be >= min_scale")
        scale = min(max(scale, min_scale), max_scale)
        excess, bits = gc_pure_sampler_excess(gamma, grid, window, min_scale, max_scale, bits)
    bits = GC_UNIFORM_BITS if bits is None else int(bits)
    if not 8 <= bits <= 4096:
        raise DPInputError("bits must be between 8 and 4096")
    k_lo, k_hi = cell_range(grid, window)
    if pure:
        value = min(max(value, k_lo * grid), k_hi * grid)
    n_boundaries = k_hi - k_lo
    tau = generalized_cauchy_sampler_tv(n_boundaries, bits)
    if epsilon is not None:
        from ..validation import check_epsilon

        epsilon = check_epsilon(epsilon)
    notes: tuple[str, ...] = ()
    if pure:
        delta = 0.0
        if epsilon is not None:
            epsilon = epsilon + excess
    elif epsilon is not None:
        delta = min((1.0 + math.exp(min(epsilon, 700.0))) * tau, 1.0)
    else:
        delta = tau
        notes = ("delta here is the total-variation bound tau; the mechanism's delta is (1 + e^epsilon) tau",)
    window_txt = f"[{k_lo} grid, {k_hi} grid]"
    dist = GeneralizedCauchy(gamma)
    if is_simulation(rng):
        gen = as_generator(rng)
        y = value + scale * float(dist.rvs(1, gen)[0])
        k = int(min(max(round(y / grid), k_lo), k_hi)) if math.isfinite(y) else (k_hi if y > 0 else k_lo)
        return NoiseDraw(
            np.array([k * grid]),
            f"simulation: value + scale * dpcore.noise.GeneralizedCauchy({gamma!r}).rvs "
            f"(numpy), snapped to grid {grid!r}, clamped to {window_txt} (NOT a real release)",
            "post-processing of the continuous mechanism (its epsilon)",
            delta,
            epsilon,
            None,
            None,
            True,
            notes,
        )
    cdf = _GCExactCDF(value, scale, gamma, grid, prec=bits + 64)
    m = int.from_bytes(os.urandom((bits + 7) // 8), "big") >> (8 * ((bits + 7) // 8) - bits)
    u = (cdf.ctx.mpf(m) + cdf.ctx.mpf(0.5)) * cdf.ctx.ldexp(1, -bits)
    # starting guess from the double-precision quantile (any guess gives the same cell)
    zg = float(dist.ppf(min(max(float(u), 1e-300), 1.0 - 2.0**-53)))
    yg = value + scale * zg
    guess = int(round(yg / grid)) if math.isfinite(yg) and abs(yg / grid) < 2.0**62 else (k_hi if yg > 0 else k_lo)
    k = _find_cell(cdf, u, k_lo, k_hi, guess)
    name = (
        f"dpcore certified generalized-Cauchy sampler (gamma={gamma!r}, scale = S(X)/alpha not published): "
        f"exact inversion of a {bits}-bit os.urandom uniform against the CDF at the cell boundaries in "
        f"{bits + 64}-bit mpmath arithmetic; grid {grid!r}, window {window_txt}"
    )
    if pure:
        stmt = (
            f"epsilon of the continuous mechanism (post-processing: grid + window) + sampler excess "
            f"ln((1+r)/(1-r)) = {excess:.3g} (scale in [{min_scale!r}, {max_scale!r}], every cell >= p_min); delta = 0"
        )
    else:
        stmt = (
            f"epsilon of the continuous mechanism (post-processing: grid + window); sampler total variation "
            f"tau = {n_boundaries} boundaries x (2^-{bits} + 2 eta) = {tau:.3g}; delta = (1 + e^epsilon) tau"
        )
    return NoiseDraw(
        np.array([float(Fraction(k) * Fraction(grid))]), name, stmt, delta, epsilon, None, None, False, notes
    )


def _gc_exact_pmfs(
    value: float,
    scale: float,
    gamma: float,
    grid: float,
    window: Any,
    bits: int = GC_UNIFORM_BITS,
    prec: int | None = None,
):
    """For tests and docs: (ks, ideal, sampled) over the window's grid points.

    ideal[k] = F(b_k) - F(b_{k-1}) (the snapped, clamped continuous law, at ``prec`` bits);
    sampled[k] = exact probability that :func:`release_generalized_cauchy` returns k, i.e.
    #{m : F(b_{k-1}) < (m + 1/2) 2^-bits <= F(b_k)} / 2^bits, as Fractions.
    """
    k_lo, k_hi = cell_range(grid, window)
    cdf = _GCExactCDF(value, scale, gamma, grid, bits + 64 if prec is None else prec)
    ctx = cdf.ctx
    two_b = 2**bits
    fs = [cdf.cdf_at(k) for k in range(k_lo, k_hi)]

    def count_le(v) -> int:  # #{m in [0, 2^bits) : (m + 1/2) 2^-bits <= v}
        c = int(ctx.floor(v * two_b - ctx.mpf(0.5))) + 1
        return min(max(c, 0), two_b)

    cum_ideal = [ctx.mpf(0)] + fs + [ctx.mpf(1)]
    cum_counts = [0] + [count_le(f) for f in fs] + [two_b]
    ks = list(range(k_lo, k_hi + 1))
    ideal = [cum_ideal[i + 1] - cum_ideal[i] for i in range(len(ks))]
    sampled = [Fraction(cum_counts[i + 1] - cum_counts[i], two_b) for i in range(len(ks))]
    return ks, ideal, sampled
