"""Quantiles of every cell of a table: the PSEO noisy histogram (:class:`HistogramMechanism`) and the
exponential-mechanism quantile on a public candidate grid (:class:`ExponentialQuantileMechanism`, plans'
``method = "exponential"``).

The mathematics (bins and candidate grids, the eq. (4.2) read-off, the vectorised simulation of many noisy
histograms) is :mod:`dpcore.percentiles`'; the draws are here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .. import budget
from ..defaults import available_cores
from ..noise import guarantees as noise_guarantees
from ..noise import secure as secure_noise
from ..percentiles import (
    MAX_EXPONENTIAL_QUANTILES,
    PSEO_BIN_EDGES,
    candidate_grid,
    check_edges,
    check_q,
    check_relation,
    epsilon_per_bin,
    percentiles_from_histogram,
    simulate_histogram_percentiles,
)
from ..validation import DPInputError, as_finite_array, as_generator, check_epsilon, check_int
from .base import DrawProvenance, register

__all__ = ["HistogramMechanism", "HistogramDraw", "ExponentialQuantileMechanism", "ExponentialQuantileDraw"]


@dataclass(frozen=True)
class HistogramDraw(DrawProvenance):
    """One draw of :class:`HistogramMechanism`: the noisy counts (cells x bins, int64), the percentiles read off
    them (cells x q, post-processing), and what drew the noise (public text)."""

    noisy_counts: np.ndarray
    percentiles: np.ndarray


@register
@dataclass(frozen=True)
class HistogramMechanism:
    """The one mechanism of every released PSEO table (Foote et al. 2019, Section 4.1): every cell x bin count +
    discrete Laplace (the two-sided geometric law) of scale ``noise_scale``, then the eq. (4.2) read-off.

    Public parameters only: epsilon, the bin edges, the percentile levels, ``rows_per_person`` m and the
    neighbouring ``relation``. Replace-one (default): one person moves between two bins, changing two counts by
    1 each, and with m rows per person the whole table (all cells together) has L1 sensitivity 2m: scale 2m/epsilon
    is epsilon-DP (parallel composition over the disjoint cells is implied: one L1 ball for the whole table).
    ``relation="add_remove"`` (the paper's Section 3.2, the planner's option): scale 1/epsilon, which is epsilon-DP
    for adding or removing one person and 2 epsilon under replace-one: the cost charged is 2 epsilon.
    Real draws: OpenDP's exact discrete Laplace on every core (:func:`dpcore.noise.secure.release_integer_counts`,
    one measurement for the whole table); simulations: the same law with numpy, one seeded draw per cell row.
    """

    epsilon: float
    edges: Any = None
    q: Any = (25.0, 50.0, 75.0)
    rows_per_person: int = 1
    relation: str = "replace"

    kind = "histogram"
    interval_kind = "percentiles"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        # a tuple, so that two mechanisms with the same public parameters compare equal
        object.__setattr__(
            self, "edges", tuple(float(v) for v in check_edges(PSEO_BIN_EDGES if self.edges is None else self.edges))
        )
        object.__setattr__(self, "q", tuple(float(v) for v in check_q(self.q)))
        object.__setattr__(self, "rows_per_person", check_int(self.rows_per_person, "rows per person", minimum=1))
        object.__setattr__(self, "relation", check_relation(self.relation))
        if self.relation == "add_remove" and self.rows_per_person > 1:
            raise DPInputError("relation 'add_remove' is offered for one row per person only")

    @property
    def sensitivity(self) -> int:
        """L1 sensitivity of the whole table under replace-one: 2m."""
        return 2 * self.rows_per_person

    @property
    def noise_scale(self) -> float:
        """Scale of the discrete Laplace on every count: 2m/epsilon (replace), 1/epsilon (add_remove)."""
        return self.rows_per_person / epsilon_per_bin(self.epsilon, self.relation)

    def privacy_cost(self):
        """Replace-one cost: epsilon (relation "replace"), 2 epsilon (relation "add_remove")."""
        return budget.pure(2.0 * self.epsilon if self.relation == "add_remove" else self.epsilon)

    def record(self) -> dict[str, Any]:
        """The public description every release record of this statistic carries."""
        return {
            "noise": (
                f"discrete Laplace, scale {'2m' if self.relation == 'replace' else 'm'}/epsilon = "
                f"{self.noise_scale!r} on every cell x bin count (L1 sensitivity of the whole table "
                f"{self.sensitivity})"
            ),
            "bin_edges": list(self.edges),
            "q": list(self.q),
            "relation": self.relation,
            "noise_scale": self.noise_scale,
            "read_off": "eq. (4.2) of Foote et al. on each noisy histogram (post-processing)",
        }

    def draw(self, counts: Any, rng: Any = None) -> HistogramDraw:
        """Noisy counts and percentiles for a (cells x bins) table of integer counts. ``rng`` None: the real
        sampler; a numpy Generator or seed: a simulation (one seeded draw per cell, NOT a release)."""
        table = np.asarray(counts)
        if table.ndim != 2 or table.shape[1] != len(self.edges) - 1:
            raise DPInputError(f"counts must be a (cells x {len(self.edges) - 1}) table, got shape {table.shape}")
        table = table.astype(np.int64)
        if table.shape[0] == 0:
            return HistogramDraw.without_cells(rng, noisy_counts=table, percentiles=np.zeros((0, len(self.q))))
        if not secure_noise.is_simulation(rng):
            d = secure_noise.release_integer_counts(
                table.ravel(), scale=self.noise_scale, rng=rng, sensitivity=self.sensitivity
            )
            noisy = np.asarray(d.values, dtype=np.int64).reshape(table.shape)
        else:
            rows = [
                secure_noise.release_integer_counts(row, scale=self.noise_scale, rng=rng, sensitivity=self.sensitivity)
                for row in table
            ]
            noisy = np.vstack([np.asarray(row.values, dtype=np.int64) for row in rows])
            d = rows[0]  # every row's draw has the same measurement and map (one scale, one sensitivity)
        values = np.atleast_2d(percentiles_from_histogram(noisy.astype(float), np.asarray(self.edges), list(self.q)))
        return HistogramDraw.from_noise(d, noisy_counts=noisy, percentiles=values.reshape(table.shape[0], len(self.q)))

    def certified_epsilon(self, draw: HistogramDraw) -> float:
        """OpenDP's privacy map of the discrete Laplace at the table's L1 sensitivity (2m) (the draw's
        ``map_epsilon``): epsilon under replace-one, 2 epsilon for relation "add_remove" (its scale is m/epsilon)."""
        return float(draw.map_epsilon if draw.map_epsilon is not None else self.sensitivity / self.noise_scale)

    def simulate(self, counts: Any, n_draws: int, rng: Any = None) -> np.ndarray:
        """Percentiles of ``n_draws`` simulated releases of each row: (n_draws, cells, q) (numpy, vectorised)."""
        return simulate_histogram_percentiles(
            np.asarray(counts, dtype=float),
            np.asarray(self.edges),
            epsilon=self.epsilon,
            q=self.q,
            n_draws=n_draws,
            rng=rng,
            relation=self.relation,
        )


def _check_open_q(q: Any) -> tuple[float, ...]:
    qa = as_finite_array(q, "quantile levels", min_size=1)
    if np.any((qa <= 0) | (qa >= 100)):
        raise DPInputError(
            f"the exponential mechanism's quantile levels must be in (0, 100), got {qa.tolist()} "
            "(the 100th percentile is the maximum: no rank to aim at)"
        )
    if qa.size > MAX_EXPONENTIAL_QUANTILES:
        raise DPInputError(
            f"the exponential mechanism releases at most {MAX_EXPONENTIAL_QUANTILES} quantiles per "
            f"cell (epsilon is split across them), got {qa.size}; use the noisy histogram "
            "(method 'histogram'), which gives every percentile for one epsilon"
        )
    if np.unique(qa).size != qa.size:
        raise DPInputError(f"a quantile level is listed twice: {qa.tolist()}")
    return tuple(float(v) for v in qa)


@dataclass(frozen=True)
class ExponentialQuantileDraw(DrawProvenance):
    """One draw of :class:`ExponentialQuantileMechanism`: per cell and quantile the index of the chosen candidate
    (cells x q, int) and its value (cells x q, ordered along q), and what drew it (public text)."""

    choices: np.ndarray
    percentiles: np.ndarray


@register
@dataclass(frozen=True)
class ExponentialQuantileMechanism:
    """Each cell's quantiles chosen among public candidates by the exponential mechanism (McSherry & Talwar 2007;
    Smith 2011, Algorithm 2 on a grid; the paper's footnote 6) in its report-noisy-max form.

    Public parameters only: ``epsilon`` (the whole statistic: epsilon / len(q) per quantile, sequential
    composition), ``candidates`` (a strictly increasing tuple of edges c_0 < ... < c_K; default None: the
    "pseo-fine" grid of :func:`fine_candidate_grid`, 1,001 geometric points from $10,000 to $614,597), the levels
    ``q`` in (0, 100) (at most :data:`MAX_EXPONENTIAL_QUANTILES`), ``rows_per_person`` m and ``cells_move``.

    Input: the (cells x K) histogram of the rows on the candidate grid (the engines' histogram scan with the
    candidates as edges; values outside [c_0, c_K) counted in the end bins, as every histogram here), so
    #(x < c_j) = C_j is a cumulative count and nothing is done per value. Score of candidate c_j for level q:
    u_j = -|C_j - q n / 100|, n the cell's number of rows (C_K = n).

    Neighbours and sensitivity: replace one person; n is the public cell size of the project's replace-one
    relation (``cells_move=False``: a person's rows keep their cells, their values change). One changed row
    moves every C_j of its cell by at most 1 and n not at all, so one person (m rows, in any cells) moves the
    score vectors of the cells by at most m_k in L-infinity, sum_k m_k <= m: score sensitivity m. With
    ``cells_move=True`` (plans with ``cell_sizes = "noisy"``) a row may also leave one cell and enter another:
    adding or removing a row changes u_j by at most max(q, 100 - q)/100 <= 1 in each of the two cells (n moves
    too), so the sensitivity is 2m. Each cell's choice is an independent mechanism whose privacy loss is
    linear in its own score change, so the cells together cost what one vector with the summed change costs.

    The draw: OpenDP ``make_noisy_max`` (MaxDivergence) on the score vector with scale b = 2 sensitivity /
    (epsilon / len(q)); its privacy map at d_in = sensitivity is 2 d_in / b = epsilon / len(q) (checked on every
    draw; the scores, the sensitivity and the scale are multiplied by one whole factor when the levels allow, so
    that OpenDP's int64 sampler, twice as fast, draws the same law). OpenDP adds exponential noise of scale b to
    every score and reports the argmax: report-noisy-max with
    exponential noise, which is the permute-and-flip mechanism (McKenna & Sheldon 2020; Ding et al. 2021):
    P(c_r) = p_r * integral_0^1 prod_{j != r} (1 - p_j t) dt with p_j = exp((u_j - max u) / b). It has the
    exponential mechanism's epsilon at the same scale and is never less accurate in expectation (McKenna &
    Sheldon, Theorem 2). OpenDP 0.16 offers the Gumbel-max law exp(epsilon u / (2 sensitivity)) only under zCDP:
    its deprecated ``make_report_noisy_max_gumbel`` is this same exponential-noise measurement (measured).
    Simulations (``rng`` given): numpy exponential noise, the argmax of the same law.

    Output: the chosen candidate c_j itself, not a point inside an interval. The score is exact at the edges
    (the grid histogram gives #(x < c_j) exactly) and says nothing about where rows lie inside a bin, so a
    uniform point would add error and no information; the best-scoring edges bracket the cell's order statistic
    x_(M), M = ceil(q n / 100), within one grid step. Several quantiles of a cell are drawn independently and
    then sorted (post-processing; with an ordered truth, sorting never increases any |error|^p summed over q).
    """

    epsilon: float
    candidates: Any = None
    q: Any = (50.0,)
    rows_per_person: int = 1
    cells_move: bool = False

    kind = "exponential_quantile"
    interval_kind = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        grid = candidate_grid() if self.candidates is None else candidate_grid(self.candidates)
        # a tuple, so that two mechanisms with the same public parameters compare equal
        object.__setattr__(self, "candidates", tuple(float(v) for v in grid))
        object.__setattr__(self, "q", _check_open_q(self.q))
        object.__setattr__(self, "rows_per_person", check_int(self.rows_per_person, "rows per person", minimum=1))
        if not isinstance(self.cells_move, bool):
            raise TypeError(f"cells_move must be True or False, got {self.cells_move!r}")

    @property
    def sensitivity(self) -> int:
        """L-infinity change of all cells' score vectors that one person can cause: m (2m when rows move)."""
        return self.rows_per_person * (2 if self.cells_move else 1)

    @property
    def epsilon_per_quantile(self) -> float:
        return self.epsilon / len(self.q)

    @property
    def noise_scale(self) -> float:
        """Scale b of the exponential noise on every score: 2 sensitivity / (epsilon / len(q))."""
        return 2.0 * self.sensitivity / self.epsilon_per_quantile

    def privacy_cost(self):
        """epsilon (pure): epsilon / len(q) per quantile, composed sequentially over the quantiles."""
        return budget.pure(self.epsilon)

    def record(self) -> dict[str, Any]:
        """The public description every release record of this statistic carries."""
        return {
            "method": "exponential",
            "mechanism": (
                "exponential-mechanism quantile on a public candidate grid, report-noisy-max form: "
                "OpenDP make_noisy_max (exponential noise = permute-and-flip) on the scores "
                "-|#(x < c) - q n / 100| of every candidate c, per cell and quantile"
            ),
            "noise": (
                f"exponential noise of scale 2 x sensitivity / (epsilon / {len(self.q)}) = "
                f"{self.noise_scale!r} on every score (score sensitivity {self.sensitivity}: "
                f"{'2m, rows may move between cells' if self.cells_move else 'm, cell sizes public'})"
            ),
            "epsilon_per_quantile": self.epsilon_per_quantile,
            "q": list(self.q),
            "candidates": list(self.candidates),
            "output": "the chosen candidate (an edge of the grid); several quantiles of a cell sorted",
        }

    def _table(self, counts: Any) -> np.ndarray:
        table = np.asarray(counts)
        k = len(self.candidates) - 1
        if table.ndim != 2 or table.shape[1] != k:
            raise DPInputError(f"counts must be a (cells x {k}) table on the candidate grid, got shape {table.shape}")
        if table.dtype.kind not in "iu":
            if not np.all(np.isfinite(table)) or np.any(table != np.round(table)):
                raise DPInputError("counts must be whole numbers of rows")
        table = table.astype(np.int64)
        if np.any(table < 0):
            raise DPInputError("counts must be >= 0 (rows per cell and candidate bin)")
        return table

    def scores(self, counts: Any) -> np.ndarray:
        """u = -|#(x < c_j) - q n / 100| for every cell, level and candidate: shape (cells, q, K + 1)."""
        table = self._table(counts)
        below = np.concatenate([np.zeros((table.shape[0], 1), dtype=np.int64), np.cumsum(table, axis=1)], axis=1)
        target = below[:, -1:].astype(float) * np.asarray(self.q)[None, :] / 100.0  # (cells, q)
        return -np.abs(below[:, None, :].astype(float) - target[:, :, None])

    def selection_probabilities(self, counts: Any) -> np.ndarray:
        """The exact law of the choice (permute-and-flip), shape (cells, q, K + 1): P(c_r) = p_r integral_0^1
        prod_{j != r} (1 - p_j t) dt, by Gauss-Legendre quadrature, exact for this polynomial of degree K."""
        u = self.scores(counts)
        p = np.exp((u - u.max(axis=2, keepdims=True)) / self.noise_scale)
        t, w = _gauss_legendre_unit(max(1, (p.shape[2] + 1) // 2))
        pt = p[..., None] * t  # (cells, q, K + 1, nodes); p t < 1 at every node (t < 1)
        log_one_minus = np.log1p(-pt)
        others = log_one_minus.sum(axis=2, keepdims=True) - log_one_minus
        prob = p * (np.exp(others) * w).sum(axis=3)
        return prob / prob.sum(axis=2, keepdims=True)

    def ordered(self, choices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sorted along the levels: the k-th smallest level gets the k-th smallest choice (candidates increase)."""
        out = np.empty_like(choices)
        out[..., np.argsort(self.q, kind="stable")] = np.sort(choices, axis=-1)
        return out, np.asarray(self.candidates)[out]

    def draw(self, counts: Any, rng: Any = None) -> ExponentialQuantileDraw:
        """The chosen candidates of a (cells x K) table of counts on the grid. ``rng`` None: OpenDP (a real
        release); a numpy Generator or seed: a simulation of the same law (NOT a release)."""
        u = self.scores(counts)
        if secure_noise.is_simulation(rng):
            choices, percentiles = self.ordered(self._simulated_choices(u, as_generator(rng)))
            return ExponentialQuantileDraw(
                choices,
                percentiles,
                measurement=f"numpy simulation of report-noisy-max with exponential noise, scale {self.noise_scale!r}",
                privacy_map="simulation: no privacy map",
                map_epsilon=self.epsilon_per_quantile,
                simulated=True,
            )
        n_max = int(np.max(np.sum(self._table(counts), axis=1), initial=0))
        factor = self._score_factor(n_max)
        if factor is not None:  # the same scores times a whole factor: OpenDP's integer sampler is twice as fast
            u = np.rint(u * factor).astype(np.int64)
        measurement, map_eps = self._measurement(factor)
        choices = _noisy_max_on_cores(measurement, u.reshape(-1, u.shape[2])).reshape(u.shape[:2])
        atom = "f64" if factor is None else "i64"
        scale, d_in = (
            (self.noise_scale, self.sensitivity)
            if factor is None
            else (factor * self.noise_scale, factor * self.sensitivity)
        )
        text = (
            f"OpenDP make_noisy_max(vector_domain(atom_domain(T={atom})), linf_distance(T={atom}), "
            f"max_divergence(), scale={scale!r}) per cell and quantile"
            + ("" if factor is None else f", on the scores times {factor} (whole numbers)")
        )
        ordered, percentiles = self.ordered(choices)
        return ExponentialQuantileDraw(
            ordered,
            percentiles,
            measurement=text,
            privacy_map=f"d_in -> 2 d_in / scale; at d_in = {d_in}: {map_eps!r} per quantile",
            map_epsilon=map_eps,
            simulated=False,
        )

    def certified_epsilon(self, draw: ExponentialQuantileDraw) -> float:
        """OpenDP's privacy map of the noisy max at the score sensitivity, per quantile (the draw's
        ``map_epsilon``), composed over the quantiles (checked against epsilon / len(q) on every real draw)."""
        per = draw.map_epsilon if draw.map_epsilon is not None else self.epsilon_per_quantile
        return float(per) * len(self.q)

    def _score_factor(self, n_max: int) -> int | None:
        """D = 100 x 10^d (d <= 4 the decimals of the levels), so that D u = -|D #(x < c) - (10^d q) n| is a whole
        number; None (float scores) when the levels have more decimals or D n could leave int64. Multiplying the
        scores, their sensitivity and the noise scale by D changes neither the law of the choice nor the map."""
        for decimals in range(5):
            scaled = np.asarray(self.q) * 10**decimals
            if np.all(np.abs(scaled - np.round(scaled)) < 1e-9):
                factor = 100 * 10**decimals
                return factor if factor * max(n_max, 1) < 2**60 else None
        return None

    def _measurement(self, factor: int | None = None) -> tuple[Any, float]:
        """OpenDP's noisy max at this scale, on float scores (``factor`` None) or on the scores times ``factor``
        (int64), and its privacy map at the stated sensitivity (refused above epsilon / len(q))."""
        dp = noise_guarantees.load_opendp()
        if factor is None:
            space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
            meas = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=self.noise_scale)
            map_eps = float(meas.map(float(self.sensitivity)))
        else:
            space = dp.vector_domain(dp.atom_domain(T="i64")), dp.linf_distance(T="i64")
            meas = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=float(factor * self.noise_scale))
            map_eps = float(meas.map(int(factor * self.sensitivity)))
        if map_eps > self.epsilon_per_quantile * (1 + 1e-9):
            raise DPInputError(
                f"OpenDP's privacy map gives {map_eps!r} per quantile, above the charged "
                f"{self.epsilon_per_quantile!r}: refusing to draw"
            )
        return meas, map_eps

    def _simulated_choices(self, u: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        return np.argmax(u + gen.exponential(self.noise_scale, u.shape), axis=-1)

    def simulate(self, counts: Any, n_draws: int, rng: Any = None) -> np.ndarray:
        """Quantiles of ``n_draws`` simulated releases of each cell: (n_draws, cells, q) (numpy, chunked so that
        at most about 4 million noise values are held at once)."""
        n_draws = check_int(n_draws, "n_draws", minimum=1)
        gen = as_generator(rng)
        u = self.scores(counts)
        per_draw = max(u.size, 1)
        chunk = max(1, 4_000_000 // per_draw)
        out = np.empty((n_draws,) + u.shape[:2])
        for start in range(0, n_draws, chunk):
            stop = min(n_draws, start + chunk)
            choices = self._simulated_choices(np.broadcast_to(u, (stop - start,) + u.shape), gen)
            out[start:stop] = self.ordered(choices)[1]
        return out


@lru_cache(maxsize=8)
def _gauss_legendre_unit(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [0, 1] (cached: 0.3 s for the 501 nodes of the "pseo-fine" grid)."""
    nodes, weights = np.polynomial.legendre.leggauss(n_nodes)
    t, w = (nodes + 1.0) / 2.0, weights / 2.0
    t.setflags(write=False)
    w.setflags(write=False)
    return t, w


def _noisy_max_on_cores(measurement: Any, scores: np.ndarray) -> np.ndarray:
    """``measurement`` (OpenDP noisy max) on every row of ``scores``, rows split across a thread pool: each call
    is independent and OpenDP releases the GIL while it samples, so the law is that of one call per row."""
    rows = np.ascontiguousarray(scores)
    out = np.empty(rows.shape[0], dtype=np.int64)

    def run(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            out[i] = int(measurement(rows[i]))

    workers = max(1, min(available_cores(), rows.shape[0] // 64))
    if workers == 1:
        run(0, rows.shape[0])
        return out
    from concurrent.futures import ThreadPoolExecutor

    cuts = np.linspace(0, rows.shape[0], workers + 1).round().astype(np.int64)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dpcore-noisy-max") as pool:
        for done in [pool.submit(run, int(cuts[i]), int(cuts[i + 1])) for i in range(workers)]:
            done.result()
    return out
