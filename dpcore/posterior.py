"""Grid posteriors and credible intervals for any additive-noise release.

A DP mechanism of the form ``released = theta + scale * Z`` (Laplace, Gaussian, the generalized
Cauchy noise of smooth sensitivity, ...) lets an analyst compute, as pure post-processing (no
extra privacy budget), the posterior of the confidential statistic ``theta`` given the release:

    p(theta | released)  proportional to  p(theta) * f((released - theta) / scale) / scale,

where ``f`` is the density of the standardised noise ``Z``. This is eq. (11) of Lan & Reiter
(2025), "Differentially private computation of the Gini index", Section 3 ("Bayesian
post-processing"). The paper samples from (11) by importance resampling with a Uniform(0, 1)
proposal and mentions "a simple grid sampler" as an alternative; we use a deterministic grid,
which gives exact-to-grid-resolution quantiles, credible intervals and means with no Monte Carlo
error, and is vectorised over many releases (for coverage studies).

Discretisation (our choice, documented because it matters for accuracy):

* The support ``[lo, hi]`` of the statistic (``[0, 1]`` for the Gini index) is cut into cells
  whose edges are the union of a uniform grid over the whole support and a geometric grid
  centred on the released value (offsets ``scale * 10^-3 ... hi - lo``). So the posterior is
  resolved both when the noise is tiny (scale 1e-6, typical of a Gini on 1e5 records) and when it
  is as wide as the support.
* Cell masses are ``(prior CDF difference over the cell) * likelihood at the cell midpoint``. The
  prior enters through its CDF, so priors with integrable singularities (Beta(0.5, 0.5)) are
  handled exactly; the posterior is then a piecewise-constant density, for which quantiles,
  highest-posterior-density (HPD) sets and the mean are computed in closed form.
* All arithmetic is in log space (a release far outside the support does not underflow).

Privacy assumptions: the posterior treats the noise scale as **known**. For smooth-sensitivity
releases the scale ``S(X) / alpha`` depends on the confidential data through the smooth
sensitivity ``S(X)``; Lan & Reiter treat it as known (public) in their post-processing, and so
do we. Publishing the scale is *not* covered by the DP guarantee of the release itself; pages
that show the posterior say so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .lazy import special
from .validation import DPInputError, as_finite_array, check_finite, check_int, check_positive

__all__ = [
    "GridPosterior",
    "PosteriorBatch",
    "grid_posterior",
    "grid_posterior_batch",
    "gini_posterior",
    "gini_posterior_batch",
    "make_prior",
    "release_posterior",
]

# Grid sizes: a uniform grid over the support plus a geometric grid on each side of the release.
_N_UNIFORM = 513
_N_LOCAL = 400  # points per side of the released value
_LOCAL_MIN = 1e-3  # smallest offset from the released value, in units of the noise scale
_MAX_CELLS_PER_CHUNK = 4_000_000  # memory cap for the vectorised batch (cells per chunk)


# ---------------------------------------------------------------------------------------------
# Priors and noise densities
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Prior:
    name: str
    cdf: Callable[[np.ndarray], np.ndarray]
    uniform: bool = False


def make_prior(prior: Any, support: tuple[float, float]) -> _Prior:
    """A prior on ``support`` given as ``"uniform"``, ``("beta", a, b)`` or a scipy-like object.

    ``("beta", a, b)`` is a Beta(a, b) law rescaled to ``support``. Any object with a vectorised
    ``.cdf`` (e.g. a frozen ``scipy.stats`` distribution) is accepted; it is truncated to
    ``support`` (it must put positive mass there).
    """
    lo, hi = support
    width = hi - lo
    if isinstance(prior, str):
        if prior.lower() != "uniform":
            raise DPInputError(f"prior must be 'uniform', ('beta', a, b) or a distribution with .cdf, got {prior!r}")
        return _Prior("Uniform", lambda g: np.clip((g - lo) / width, 0.0, 1.0), uniform=True)
    if isinstance(prior, (tuple, list)):
        if len(prior) != 3 or not isinstance(prior[0], str) or prior[0].lower() != "beta":
            raise DPInputError(f"a tuple prior must be ('beta', a, b), got {prior!r}")
        a = check_positive(prior[1], "Beta prior parameter a")
        b = check_positive(prior[2], "Beta prior parameter b")
        return _Prior(f"Beta({a:g}, {b:g})", lambda g: special.betainc(a, b, np.clip((g - lo) / width, 0.0, 1.0)))
    cdf = getattr(prior, "cdf", None)
    if not callable(cdf):
        raise DPInputError(
            f"prior must be 'uniform', ('beta', a, b) or a distribution with .cdf, got {type(prior).__name__}"
        )
    c_lo, c_hi = float(cdf(lo)), float(cdf(hi))
    if not (math.isfinite(c_lo) and math.isfinite(c_hi)) or c_hi - c_lo <= 0:
        raise DPInputError("the prior puts no mass on the support of the statistic")
    return _Prior(
        getattr(prior, "name", type(prior).__name__),
        lambda g: (np.clip(np.asarray(cdf(g), dtype=float), c_lo, c_hi) - c_lo) / (c_hi - c_lo),
    )


def _noise_logpdf(noise: Any) -> Callable[[np.ndarray], np.ndarray]:
    """The log density of the standardised noise: ``noise.logpdf``, or ``log(noise.pdf)``, or a callable."""
    if isinstance(noise, str):
        # scipy.stats is imported here: its import would lengthen every command-line release's start-up (this
        # module is imported by the published intervals; the time: docs/benchmarks.md, "Timings behind choices in the code"), and only a named noise needs it
        from scipy import stats

        name = noise.lower()
        if name == "laplace":
            return stats.laplace.logpdf
        if name in ("gaussian", "normal"):
            return stats.norm.logpdf
        raise DPInputError(f"noise must be 'laplace', 'gaussian' or an object with .logpdf, got {noise!r}")
    logpdf = getattr(noise, "logpdf", None)
    if callable(logpdf):
        return logpdf
    pdf = getattr(noise, "pdf", None)
    if callable(pdf):
        return lambda z: np.log(pdf(z))
    if callable(noise):
        return noise
    raise DPInputError(f"noise must be 'laplace', 'gaussian' or an object with .logpdf, got {type(noise).__name__}")


def _check_support(support: Sequence[float]) -> tuple[float, float]:
    if len(support) != 2:
        raise DPInputError(f"support must be (lower, upper), got {support!r}")
    lo = check_finite(support[0], "support lower end")
    hi = check_finite(support[1], "support upper end")
    if not lo < hi:
        raise DPInputError(f"support lower end must be below the upper end, got {lo:g} and {hi:g}")
    return lo, hi


def _check_level(level: Any) -> float:
    v = check_finite(level, "credible level")
    if not 0 < v < 1:
        raise DPInputError(f"credible level must be strictly between 0 and 1 (e.g. 0.95), got {v:g}")
    return v


# ---------------------------------------------------------------------------------------------
# Vectorised core: rows are releases, columns are grid cells
# ---------------------------------------------------------------------------------------------


def _edges(released: np.ndarray, scale: float, lo: float, hi: float, n_uniform: int, n_local: int) -> np.ndarray:
    """Sorted cell edges per release, shape (N, n_uniform + 2 n_local + 1)."""
    uniform = np.linspace(lo, hi, n_uniform)
    top = max((hi - lo) / scale, _LOCAL_MIN * 10)
    offsets = scale * np.geomspace(_LOCAL_MIN, top, n_local)
    local = np.concatenate([-offsets[::-1], [0.0], offsets])
    e = np.clip(released[:, None] + local[None, :], lo, hi)
    e = np.concatenate([np.broadcast_to(uniform, (released.size, n_uniform)), e], axis=1)
    e.sort(axis=1, kind="stable")  # two sorted runs: timsort merges them in linear time
    return e


def _masses(
    released: np.ndarray,
    scale: float,
    lo: float,
    hi: float,
    prior: _Prior,
    logpdf: Callable[[np.ndarray], np.ndarray],
    n_uniform: int,
    n_local: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Cell edges (N, m+1) and normalised posterior cell masses (N, m)."""
    e = _edges(released, scale, lo, hi, n_uniform, n_local)
    mid = 0.5 * (e[:, 1:] + e[:, :-1])
    with np.errstate(divide="ignore"):
        # the edges lie in the support, so a uniform prior's cell mass is the cell width / (hi - lo)
        log_prior_mass = np.log(np.diff(e, axis=1) if prior.uniform else np.diff(prior.cdf(e), axis=1))
    loglik = np.asarray(logpdf((released[:, None] - mid) / scale), dtype=float)
    logw = log_prior_mass + loglik
    top = np.max(logw, axis=1, keepdims=True)
    if not np.all(np.isfinite(top)):
        raise DPInputError(
            "the release is impossible under this prior and noise model "
            "(zero posterior mass everywhere); check the noise scale and prior"
        )
    w = np.exp(logw - top)
    w /= w.sum(axis=1, keepdims=True)
    return e, w


def _quantiles(e: np.ndarray, w: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Quantiles (N, len(q)) of piecewise-constant densities with cell masses w on edges e."""
    cdf = np.cumsum(w, axis=1)
    cdf[:, -1] = 1.0
    out = np.empty((w.shape[0], q.size))
    rows = np.arange(w.shape[0])
    for j, qj in enumerate(q):
        idx = np.minimum((cdf < qj).sum(axis=1), w.shape[1] - 1)  # first cell whose cdf >= qj
        prev = np.where(idx > 0, cdf[rows, np.maximum(idx - 1, 0)], 0.0)
        mass = w[rows, idx]
        frac = np.where(mass > 0, (qj - prev) / np.where(mass > 0, mass, 1.0), 0.0)
        left, right = e[rows, idx], e[rows, idx + 1]
        out[:, j] = left + np.clip(frac, 0.0, 1.0) * (right - left)
    return out


def _hpd(e: np.ndarray, w: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Highest-posterior-density set of each row: (lower hull end, upper hull end, threshold density).

    Cells are taken in decreasing order of density until their mass reaches ``level``; the last
    cell is taken partially (its outer part is cut off, so the set stays an interval
    for unimodal posteriors). Returns the hull of the set and the density threshold.
    """
    width = np.diff(e, axis=1)
    dens = np.where(width > 0, w / np.where(width > 0, width, 1.0), 0.0)
    order = np.argsort(-dens, axis=1, kind="stable")
    rows = np.arange(w.shape[0])[:, None]
    w_sorted = w[rows, order]
    cum = np.cumsum(w_sorted, axis=1)
    n_take = np.minimum((cum < level).sum(axis=1) + 1, w.shape[1])  # cells needed (last one partial)
    taken = np.arange(w.shape[1])[None, :] < n_take[:, None]
    in_set = np.zeros_like(taken)
    in_set[rows, order] = taken
    left = np.where(in_set, e[:, :-1], np.inf).min(axis=1)
    right = np.where(in_set, e[:, 1:], -np.inf).max(axis=1)
    # trim the partially used last cell
    r = rows[:, 0]
    last = order[r, n_take - 1]
    before = np.where(n_take > 1, cum[r, n_take - 2], 0.0)
    need = np.clip(level - before, 0.0, None)
    frac = np.clip(need / np.where(w[r, last] > 0, w[r, last], 1.0), 0.0, 1.0)
    cut = (1.0 - frac) * width[r, last]
    at_left = e[r, last] == left  # exact: the hull ends are themselves cell edges
    at_right = e[r, last + 1] == right
    only = at_left & at_right
    left = np.where(at_left & ~only, left + cut, left)
    right = np.where(at_right & ~only, right - cut, right)
    return left, right, dens[r, last]


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GridPosterior:
    """Posterior of a statistic given one additive-noise release (piecewise-constant on a grid).

    Attributes: ``released``, ``noise_scale``, ``support``, ``prior`` (its name), ``noise`` (its
    name), ``edges`` (cell edges), ``grid`` (cell midpoints), ``density`` (posterior density on
    each cell), ``masses`` (posterior probability of each cell), ``mean`` (posterior mean),
    ``sd`` (posterior standard deviation).
    """

    released: float
    noise_scale: float
    support: tuple[float, float]
    prior: str
    noise: str
    edges: np.ndarray
    masses: np.ndarray
    mean: float
    sd: float

    @property
    def grid(self) -> np.ndarray:
        """Cell midpoints (x values for plotting ``density``)."""
        return 0.5 * (self.edges[1:] + self.edges[:-1])

    @property
    def density(self) -> np.ndarray:
        """Posterior density on each cell (integrates to 1 over the support)."""
        width = np.diff(self.edges)
        return np.where(width > 0, self.masses / np.where(width > 0, width, 1.0), 0.0)

    def cdf(self, value: float) -> float:
        """Posterior probability that the statistic is <= ``value``."""
        v = check_finite(value, "value")
        e, w = self.edges, self.masses
        cum = np.concatenate([[0.0], np.cumsum(w)])
        return float(np.clip(np.interp(v, e, cum), 0.0, 1.0))

    def quantile(self, q: float | Sequence[float]) -> np.ndarray | float:
        """Posterior quantile(s) (exact for the piecewise-constant posterior)."""
        qa = np.atleast_1d(np.asarray(q, dtype=float))
        if not np.all((qa >= 0) & (qa <= 1)):
            raise DPInputError(f"quantile levels must be in [0, 1], got {q!r}")
        out = _quantiles(self.edges[None, :], self.masses[None, :], qa)[0]
        return float(out[0]) if np.ndim(q) == 0 else out

    def interval(self, level: float = 0.95, kind: str = "equal_tail") -> tuple[float, float]:
        """Credible interval holding posterior probability ``level``.

        kind="equal_tail" (default; the paper's "central 95% posterior credible intervals",
        Figure 2): the (1-level)/2 and (1+level)/2 quantiles. kind="hpd": the highest posterior
        density interval (the shortest one for a unimodal posterior; for a multimodal posterior
        this is the hull of the HPD set).
        """
        lev = _check_level(level)
        if kind == "equal_tail":
            lo, hi = _quantiles(self.edges[None, :], self.masses[None, :], np.array([(1 - lev) / 2, (1 + lev) / 2]))[0]
            return float(lo), float(hi)
        if kind == "hpd":
            lo, hi, _ = _hpd(self.edges[None, :], self.masses[None, :], lev)
            return float(lo[0]), float(hi[0])
        raise DPInputError(f"kind must be 'equal_tail' or 'hpd', got {kind!r}")


@dataclass(frozen=True)
class PosteriorBatch:
    """Summaries of many posteriors (one per release): means, sds and credible intervals."""

    released: np.ndarray
    noise_scale: float
    level: float
    kind: str
    mean: np.ndarray
    sd: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def covers(self, truth: np.ndarray | float) -> np.ndarray:
        """Boolean array: does each interval contain the corresponding true value?"""
        t = np.asarray(truth, dtype=float)
        return (self.lower <= t) & (t <= self.upper)


def _prepare(noise_scale: Any, support: Sequence[float], prior: Any, noise: Any, n_uniform: int, n_local: int):
    scale = check_positive(noise_scale, "noise_scale")
    lo, hi = _check_support(support)
    check_int(n_uniform, "n_uniform", minimum=3)
    check_int(n_local, "n_local", minimum=2)
    return scale, lo, hi, make_prior(prior, (lo, hi)), _noise_logpdf(noise)


def _moments(e: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = e[:, :-1], e[:, 1:]
    mean = np.sum(w * 0.5 * (a + b), axis=1)
    second = np.sum(w * (a * a + a * b + b * b) / 3.0, axis=1)
    return mean, np.sqrt(np.maximum(second - mean * mean, 0.0))


def grid_posterior(
    released: float,
    *,
    noise: Any,
    noise_scale: float,
    support: Sequence[float] = (0.0, 1.0),
    prior: Any = "uniform",
    n_uniform: int = _N_UNIFORM,
    n_local: int = _N_LOCAL,
) -> GridPosterior:
    """Posterior of ``theta`` given ``released = theta + noise_scale * Z`` (Lan & Reiter eq. (11)).

    Parameters
    ----------
    released: the released (noisy) value; may lie outside ``support``.
    noise: the standardised noise law of ``Z``: ``"laplace"``, ``"gaussian"``, any object with a
        vectorised ``.logpdf`` (``dpcore.noise.GeneralizedCauchy``, a frozen scipy distribution)
        or a callable log density.
    noise_scale: the known, public scale of the noise (see the module docstring).
    support: where the statistic can lie ((0, 1) for the Gini index).
    prior: ``"uniform"``, ``("beta", a, b)`` (rescaled to ``support``) or an object with ``.cdf``.
    """
    r = check_finite(released, "released value")
    scale, lo, hi, pr, logpdf = _prepare(noise_scale, support, prior, noise, n_uniform, n_local)
    e, w = _masses(np.array([r]), scale, lo, hi, pr, logpdf, n_uniform, n_local)
    mean, sd = _moments(e, w)
    return GridPosterior(
        released=r,
        noise_scale=scale,
        support=(lo, hi),
        prior=pr.name,
        noise=getattr(noise, "name", str(noise) if isinstance(noise, str) else type(noise).__name__),
        edges=e[0],
        masses=w[0],
        mean=float(mean[0]),
        sd=float(sd[0]),
    )


def grid_posterior_batch(
    released: Any,
    *,
    noise: Any,
    noise_scale: float,
    support: Sequence[float] = (0.0, 1.0),
    prior: Any = "uniform",
    level: float = 0.95,
    kind: str = "equal_tail",
    n_uniform: int = _N_UNIFORM,
    n_local: int = _N_LOCAL,
) -> PosteriorBatch:
    """Vectorised :func:`grid_posterior` over many releases sharing one noise scale and prior.

    Returns the posterior mean, sd and ``level`` credible interval of each release (same
    numbers as calling :func:`grid_posterior` release by release). Used for coverage studies.
    """
    r = as_finite_array(released, "released values")
    scale, lo, hi, pr, logpdf = _prepare(noise_scale, support, prior, noise, n_uniform, n_local)
    lev = _check_level(level)
    if kind not in ("equal_tail", "hpd"):
        raise DPInputError(f"kind must be 'equal_tail' or 'hpd', got {kind!r}")
    m = n_uniform + 2 * n_local + 1
    chunk = max(1, _MAX_CELLS_PER_CHUNK // m)
    mean, sd, lower, upper = (np.empty(r.size) for _ in range(4))
    for start in range(0, r.size, chunk):
        sl = slice(start, start + chunk)
        e, w = _masses(r[sl], scale, lo, hi, pr, logpdf, n_uniform, n_local)
        mean[sl], sd[sl] = _moments(e, w)
        if kind == "equal_tail":
            qs = _quantiles(e, w, np.array([(1 - lev) / 2, (1 + lev) / 2]))
            lower[sl], upper[sl] = qs[:, 0], qs[:, 1]
        else:
            lower[sl], upper[sl], _ = _hpd(e, w, lev)
    return PosteriorBatch(
        released=r, noise_scale=scale, level=lev, kind=kind, mean=mean, sd=sd, lower=lower, upper=upper
    )


def _gini_noise(gamma: Any, noise: Any = None):
    if noise is not None and not (isinstance(noise, str) and noise == "cauchy"):
        # a light-tailed smooth noise: a dpcore.noise.smooth distribution object (its
        # .logpdf), e.g. ``smooth_noise.noise_distribution(calibration)``, or "laplace"
        return noise
    from .noise import GeneralizedCauchy  # the lead's noise core (imported lazily)

    return GeneralizedCauchy(gamma)


def gini_posterior(
    released: float,
    *,
    noise_scale: float,
    gamma: float = 2.0,
    prior: Any = "uniform",
    noise: Any = None,
    **grid_options: Any,
) -> GridPosterior:
    """Posterior of the confidential Gini index g given one smooth-sensitivity release.

    Mechanism (Lan & Reiter eqs. (9)-(10)): ``released = g(X) + (S(X)/alpha) * Z`` with
    ``Z ~ GeneralizedCauchy(gamma)`` (density proportional to 1/(1+|z|^gamma)); ``noise_scale``
    is ``S(X)/alpha`` (``release_gini(...).noise_scale``). Prior on [0, 1]: ``"uniform"`` (the
    paper's choice in Section 5) or ``("beta", a, b)``. The posterior is eq. (11) computed on a
    grid (see the module docstring); it lies in the feasible range [0, 1] even when the release
    does not.

    The noise scale is treated as known, as in the paper, although it depends on the
    confidential data through S(X): releasing it is not covered by the release's DP guarantee.

    ``noise``: None or "cauchy" (the paper's), or the noise law of a light-tailed release
    (``dpcore.noise.smooth.noise_distribution(calibration)``, "laplace"); see
    :func:`release_posterior` to go straight from a ``GiniRelease``.

    Returns a :class:`GridPosterior`: ``.interval(level)`` (equal-tail; ``kind="hpd"`` too),
    ``.mean``, ``.grid`` and ``.density`` for plotting.
    """
    return grid_posterior(
        released,
        noise=_gini_noise(gamma, noise),
        noise_scale=noise_scale,
        support=(0.0, 1.0),
        prior=prior,
        **grid_options,
    )


def gini_posterior_batch(
    released: Any,
    *,
    noise_scale: float,
    gamma: float = 2.0,
    prior: Any = "uniform",
    level: float = 0.95,
    kind: str = "equal_tail",
    noise: Any = None,
    **grid_options: Any,
) -> PosteriorBatch:
    """Vectorised :func:`gini_posterior` over many releases (same noise scale and prior)."""
    return grid_posterior_batch(
        released,
        noise=_gini_noise(gamma, noise),
        noise_scale=noise_scale,
        support=(0.0, 1.0),
        prior=prior,
        level=level,
        kind=kind,
        **grid_options,
    )


def release_posterior(release: Any, *, prior: Any = "uniform", **grid_options: Any):
    """Posterior of the confidential Gini given a ``GiniRelease`` of any noise (Lan & Reiter eq. (11)).

    Pure post-processing of ``release.value`` with the release's noise density and (known) scale;
    see :func:`dpcore.posterior.gini_posterior` for the caveat on publishing the scale.
    """
    from .noise import smooth as smooth_noise
    from .noise.smooth.common import check_release

    check_release(release)
    # the likelihood is the noise density at the noisy value; the published value is clamped to [0, 1], where
    # a density no longer applies, so the posterior reads the noisy value before that post-processing
    noisy = getattr(release, "noisy_value", None)
    return gini_posterior(
        release.value if noisy is None else noisy,
        noise_scale=release.confidential_noise_scale,
        gamma=release.gamma,
        prior=prior,
        noise=smooth_noise.noise_of_release(release),
        **grid_options,
    )
