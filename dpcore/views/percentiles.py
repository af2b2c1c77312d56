"""The percentile page's views and the PSEO paper's experiments (Foote, Machanavajjhala & McKinney 2019).

Mechanisms (bins, noisy histogram, read-off, smooth-sensitivity and exponential-mechanism rivals,
credible intervals) are in :mod:`dpcore.percentiles`; this module builds on them:

* Planning data from the real PSEO table: :func:`load_pseo_cells` (published cells), :func:`pseo_cells`
  (the table from ../shared/data or the bundled copy), :func:`synthesize_cell_earnings` /
  :func:`synthesize_cells` (earnings whose quartiles match a published cell; the microdata are
  confidential).
* The paper's accuracy experiments (Section 5, Figures 1-3): :func:`make_cell_panel`,
  :func:`simulate_accuracy`, :func:`size_category`.
* One function per page view, each returning a frozen result with ``.to_dict()`` (what the page's
  generated script prints): :func:`cell_view` (one cell step by step), :func:`many_cells_view`
  (a whole PSEO table), :func:`figures_view` (the paper's Figures 1-3); the one-cell view's accuracy
  curves are :func:`cell_curves_view` (separate because they do not depend on epsilon, so the page
  caches them across epsilon changes).

Neighbouring relation: replace one person inside a cell, the cell size public (default; each bin
gets epsilon/2), or the paper's add/remove (``relation="add_remove"``, each bin gets epsilon). Cells
of one aggregation level are disjoint: a whole table costs epsilon once (parallel composition).
Everything here is planning on simulated or confidential earnings, not a release.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from .. import defaults, noise
from .. import percentiles as percentile_mechanisms
from ..mechanisms import ExponentialQuantileMechanism, HistogramMechanism
from ..percentiles import (
    PSEO_LOWER,
    PSEO_TOP,
    bin_edges,
    cell_bin_counts,
    check_earnings,
    check_q,
    check_relation,
    percentile_rank,
    relative_accuracy,
    simulate_histogram_percentiles,
)
from ..percentiles.rivals import smooth_from_profile
from ..validation import DPInputError, as_finite_array, as_generator, check_epsilon, check_int, check_positive
from . import answers as answer_experiments

__all__ = [
    "AGG_LEVELS",
    "PSEO_FILE",
    "load_pseo_cells",
    "pseo_cells",
    "synthesize_cell_earnings",
    "synthesize_cells",
    "CELL_SIZE_BREAKS",
    "CELL_SIZE_LABELS",
    "size_category",
    "CellPanel",
    "make_cell_panel",
    "simulate_accuracy",
    "CellView",
    "cell_view",
    "CellCurvesView",
    "cell_curves_view",
    "ManyCellsView",
    "many_cells_view",
    "FiguresView",
    "figures_view",
    "percentile_cell_answer",
    "ExponentialCellView",
    "exponential_cell_view",
]

#: The real PSEO table (Census, public domain): ../shared/data or the copy bundled in dpcore/examples.
PSEO_FILE = "pseo_earnings_co_tx.csv.gz"
#: The planning data have their own seed: the page's seed redraws the noise only.
DATA_SEED = 20190
#: About the mean published p25/p50/p75 (first year) of a PSEO cell: the synthetic cell's quartiles.
SYNTH_QUARTILES = (31_000.0, 42_000.0, 56_000.0)
#: Epsilons of the one-cell accuracy curves, and of the paper's Figures 1-2 (0.1 to 3 by 0.1).
CURVE_EPSILONS = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 2.5, 3.0)
FIGURE_EPSILONS = tuple(float(e) for e in np.round(np.arange(0.1, 3.0001, 0.1), 1))
CELL_SOURCES = ("synthetic", "pseo", "sidebar")

# ---------------------------------------------------------------------------------------------
# Many cells from the real PSEO table
# ---------------------------------------------------------------------------------------------

AGG_LEVELS = {
    48: "institution x degree x 4-digit field x cohort (finest, disjoint)",
    44: "institution x degree x cohort (all fields)",
    42: "institution x degree x 4-digit field (all cohorts)",
    38: "institution x degree (all fields, all cohorts)",
}


def load_pseo_cells(path: str | Path, *, horizon: str = "y1", agg_level: int | None = 48):
    """Published cells of the PSEO release table: n, p25, p50, p75 and labels (a pandas DataFrame): institution,
    degree_level, cipcode, cohort (the first graduation year), state (the institution's) and agg_level.

    Keeps rows with status 1 (published) for the chosen horizon ("y1", "y5", "y10") and, when
    ``agg_level`` is given, one aggregation level (cells of one level are disjoint).
    """
    import pandas as pd

    if horizon not in ("y1", "y5", "y10"):
        raise DPInputError(f"horizon must be 'y1', 'y5' or 'y10', got {horizon!r}")
    try:
        frame = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise DPInputError(f"cannot read the PSEO table {path}: {exc}") from None
    need = [
        f"status_{horizon}_earnings",
        f"{horizon}_grads_earn",
        f"{horizon}_p25_earnings",
        f"{horizon}_p50_earnings",
        f"{horizon}_p75_earnings",
        "agg_level_pseo",
    ]
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise DPInputError(f"the PSEO table lacks columns {missing}")
    keep = frame[f"status_{horizon}_earnings"] == 1
    if agg_level is not None:
        keep &= frame["agg_level_pseo"] == int(agg_level)
    sub = frame.loc[keep]
    out = pd.DataFrame(
        {
            "n": sub[f"{horizon}_grads_earn"].astype(int).to_numpy(),
            "p25": sub[f"{horizon}_p25_earnings"].astype(float).to_numpy(),
            "p50": sub[f"{horizon}_p50_earnings"].astype(float).to_numpy(),
            "p75": sub[f"{horizon}_p75_earnings"].astype(float).to_numpy(),
            "institution": sub.get("institution_name", pd.Series("", index=sub.index)).astype(str).to_numpy(),
            "degree_level": sub["degree_level"].to_numpy() if "degree_level" in sub else 0,
            "cipcode": sub["cipcode"].astype(str).to_numpy() if "cipcode" in sub else "",
            "cohort": sub["grad_cohort"].to_numpy() if "grad_cohort" in sub else 0,
            "state": sub.get("institution_state", pd.Series("", index=sub.index)).astype(str).to_numpy(),
            "agg_level": sub["agg_level_pseo"].to_numpy(),
        }
    )
    out = out[(out.n >= 2) & (out.p25 > 0) & (out.p25 <= out.p50) & (out.p50 <= out.p75)]
    if out.empty:
        raise DPInputError("no published cells match this selection")
    return out.reset_index(drop=True)


_Z75 = float(special.ndtri(0.75))


def synthesize_cell_earnings(p25: float, p50: float, p75: float, n: int, rng=None) -> np.ndarray:
    """n earnings whose quartiles match (p25, p50, p75): a two-piece log-normal, stratified draws.

    log e = ln p50 + s z, z standard normal, s = ln(p50/p25)/z_.75 below the median and
    ln(p75/p50)/z_.75 above: its quartiles are exactly p25, p50, p75. Draws use stratified
    uniforms u_i = (pi(i) + V_i)/n, so sample quartiles land within one stratum of the targets.
    Stands in for the confidential microdata behind a published cell (planning data).
    """
    n = check_int(n, "cell size", minimum=1)
    p25 = check_positive(p25, "p25")
    p50 = check_positive(p50, "p50")
    p75 = check_positive(p75, "p75")
    if not p25 <= p50 <= p75:
        raise DPInputError("need p25 <= p50 <= p75")
    gen = as_generator(rng)
    return _two_piece(
        np.full(n, p25), np.full(n, p50), np.full(n, p75), gen, np.zeros(n, dtype=np.int64), np.array([n])
    )


def _two_piece(p25, p50, p75, gen, cell, sizes) -> np.ndarray:
    # stratified uniforms within each cell
    total = cell.size
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pos = np.arange(total) - offsets[cell]
    perm_key = gen.random(total)
    order = np.lexsort((perm_key, cell))  # random order within each cell
    rank_in_cell = np.empty(total, dtype=np.int64)
    rank_in_cell[order] = pos
    u = (rank_in_cell + gen.random(total)) / sizes[cell]
    z = special.ndtri(np.clip(u, 1e-12, 1 - 1e-12))
    s_lo = np.log(p50 / p25) / _Z75
    s_hi = np.log(p75 / p50) / _Z75
    return np.exp(np.log(p50) + np.where(z < 0, s_lo, s_hi) * z)


def synthesize_cells(cells, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Earnings for every cell of a :func:`load_pseo_cells` frame: (values, cell index), vectorised."""
    n = cells["n"].to_numpy().astype(np.int64)
    if np.any(n < 1):
        raise DPInputError("every cell needs at least one person")
    cell = np.repeat(np.arange(n.size), n)
    gen = as_generator(rng)
    vals = _two_piece(
        cells["p25"].to_numpy()[cell], cells["p50"].to_numpy()[cell], cells["p75"].to_numpy()[cell], gen, cell, n
    )
    return vals, cell


# ---------------------------------------------------------------------------------------------
# Accuracy experiments (Section 5, Figures 1-3)
# ---------------------------------------------------------------------------------------------

CELL_SIZE_BREAKS = (2, 30, 60, 120, 300, 1000, math.inf)
CELL_SIZE_LABELS = ("2-29", "30-59", "60-119", "120-299", "300-999", "1000+")


def size_category(n: Any) -> np.ndarray:
    """Cell-size class labels (Figure 2): 2-29, 30-59, 60-119, 120-299, 300-999, 1000+."""
    n = np.asarray(n)
    idx = np.searchsorted(np.asarray(CELL_SIZE_BREAKS[1:-1]), n, side="right")
    return np.asarray(CELL_SIZE_LABELS, dtype=object)[idx]


@dataclass(frozen=True)
class CellPanel:
    """Earnings of many cells (planning data) with their true percentiles x_(M)."""

    values: np.ndarray  # all earnings, grouped by cell (cell index non-decreasing)
    cell: np.ndarray  # cell index of each value
    n: np.ndarray  # cell sizes
    q: np.ndarray
    true: np.ndarray  # (cells, len(q)) order statistics x_(M), M = ceil(q n / 100)

    @property
    def n_cells(self) -> int:
        return int(self.n.size)

    def cell_values(self, i: int) -> np.ndarray:
        start = int(self.n[:i].sum())
        return self.values[start : start + int(self.n[i])]


def make_cell_panel(values: Any, cell: Any, q: Any = (25, 50, 75)) -> CellPanel:
    """Group earnings by cell (cells numbered 0..C-1, each with >= 2 people) and compute true percentiles."""
    x = np.asarray(values, dtype=float)
    c = np.asarray(cell)
    if x.shape != c.shape or x.ndim != 1:
        raise DPInputError("values and cell must be 1-D arrays of the same length")
    if x.size == 0:
        raise DPInputError("no cells: the panel is empty")
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        raise DPInputError("earnings must be finite and >= 0")
    qa = check_q(q)
    order = np.lexsort((x, c))
    x, c = x[order], c[order].astype(np.int64)
    n = np.bincount(c)
    if np.any(n < 2):
        raise DPInputError(f"every cell needs at least 2 people; {int(np.sum(n < 2))} cell(s) have fewer")
    starts = np.concatenate([[0], np.cumsum(n)[:-1]])
    ranks = np.ceil(np.round(qa[None, :] * n[:, None] / 100.0, 9)).astype(np.int64).clip(1, n[:, None])
    true = x[starts[:, None] + ranks - 1]
    return CellPanel(x, c, n, qa, true)


def _progress(cb, frac: float, text: str) -> None:
    if cb is not None:
        cb(min(max(frac, 0.0), 1.0), text)


def simulate_accuracy(
    panel: CellPanel,
    *,
    epsilons: Sequence[float],
    q: float = 50,
    bin_counts: Sequence[int] = (20,),
    schemes: Sequence[str] = ("lognormal", "even"),
    rivals: Sequence[str] = ("smooth_paper", "smooth_tight", "em"),
    n_draws: int = 20,
    relation: str = "replace",
    rival_percentiles: int = 3,
    rng=None,
    progress=None,
):
    """Mean relative accuracy (eq. 5.1) of the q-th percentile per cell, method, bin count and epsilon.

    Histogram schemes ("lognormal", "even", "pseo") are run for every bin count ("pseo" has 21);
    the rivals ("smooth_paper", "smooth_tight", "em") do not depend on bins. ``n_draws`` noise draws
    per setting (the paper used 20). Rivals spend epsilon / ``rival_percentiles`` on this percentile
    (3 = the fair comparison: the histogram releases all three percentiles for epsilon; 1 = the
    paper's figures, where each smooth-sensitivity percentile was a separate query). Returns a
    pandas DataFrame with columns method, n_bins, epsilon, cell, n, size, rel_accuracy, l1_error.
    ``progress(frac, text)`` is called as the work advances.
    """
    import pandas as pd

    eps_arr = np.array([check_epsilon(e) for e in epsilons], dtype=float)
    if eps_arr.size == 0:
        raise DPInputError("give at least one epsilon")
    qv = float(check_q([q])[0])
    n_draws = check_int(n_draws, "noise draws", minimum=1, maximum=100_000)
    rival_percentiles = check_int(rival_percentiles, "percentiles sharing the rivals' budget", minimum=1)
    check_relation(relation)
    gen = as_generator(rng)
    if qv not in panel.q:
        raise DPInputError(f"the panel has no true {qv:g}th percentile; build it with q including {qv:g}")
    true = panel.true[:, int(np.flatnonzero(panel.q == qv)[0])]
    cells = np.arange(panel.n_cells)
    sizes = size_category(panel.n)
    frames: list = []
    jobs = [(s, b) for s in schemes for b in ((21,) if s == "pseo" else bin_counts)]
    total_steps = (
        len(jobs) * eps_arr.size
        + len(rivals) * eps_arr.size
        + (panel.n_cells if any(r.startswith("smooth") for r in rivals) else 0)
    )
    step: float = 0

    def add(method, n_bins, eps, est):  # est: (n_draws, cells)
        acc = relative_accuracy(est, true[None, :]).mean(axis=0)
        l1 = np.abs(est - true[None, :]).mean(axis=0)
        frames.append((method, n_bins, eps, acc, l1))

    for scheme, m in jobs:
        edges = bin_edges(scheme, m)
        counts = cell_bin_counts(panel.values, panel.cell, panel.n_cells, edges)
        for eps in eps_arr:
            est = simulate_histogram_percentiles(
                counts, edges, epsilon=eps, q=[qv], n_draws=n_draws, rng=gen, relation=relation
            )[:, :, 0]
            add(scheme, edges.size - 1, eps, est)
            step += 1
            _progress(progress, step / total_steps, f"{scheme} bins, {edges.size - 1} bins, epsilon {eps:g}")
    eps_q = eps_arr / rival_percentiles
    smooth_modes = [r for r in rivals if r.startswith("smooth")]
    if smooth_modes:
        cals = {
            mode: [noise.smooth_noise_calibration(float(e), 4.0, mode=mode.split("_")[1]) for e in eps_q]
            for mode in smooth_modes
        }
        betas = np.unique(np.concatenate([[c.beta for c in cs] for cs in cals.values()]))
        s_all = np.empty((panel.n_cells, betas.size))
        starts = np.concatenate([[0], np.cumsum(panel.n)[:-1]])
        for i in range(panel.n_cells):
            xs = np.clip(panel.values[starts[i] : starts[i] + panel.n[i]], PSEO_LOWER, PSEO_TOP)
            rank = percentile_rank(int(panel.n[i]), qv)
            s_all[i] = smooth_from_profile(xs, rank, PSEO_LOWER, PSEO_TOP, betas)[0]
            step += 1
            if i % 50 == 0:
                _progress(progress, step / total_steps, f"smooth sensitivity of cell {i + 1} of {panel.n_cells}")
        h = noise.GeneralizedCauchy(4.0)
        clipped_true = np.clip(true, PSEO_LOWER, PSEO_TOP)
        for mode in smooth_modes:
            for eps, cal in zip(eps_arr, cals[mode], strict=True):
                s = s_all[:, int(np.searchsorted(betas, cal.beta))]
                z = h.rvs((n_draws, panel.n_cells), rng=gen)
                add(mode, 0, eps, clipped_true[None, :] + (s / cal.alpha)[None, :] * z)
                step += 1
                _progress(
                    progress,
                    step / total_steps,
                    f"smooth sensitivity ({mode.split('_')[1]} constants), epsilon {eps:g}",
                )
    if "em" in rivals:
        starts = np.concatenate([[0], np.cumsum(panel.n)[:-1]])
        est = np.empty((eps_arr.size, n_draws, panel.n_cells))
        for i in range(panel.n_cells):
            xs = panel.values[starts[i] : starts[i] + panel.n[i]]
            est[:, :, i] = _em_draws_many_eps(xs, eps_q, qv, n_draws, gen)
            step += 1 / max(1, panel.n_cells) * eps_arr.size
            if i % 50 == 0:
                _progress(progress, step / total_steps, f"exponential mechanism, cell {i + 1} of {panel.n_cells}")
        for k, eps in enumerate(eps_arr):
            add("em", 0, eps, est[k])
    _progress(progress, 1.0, "done")
    k = len(frames)
    c = panel.n_cells
    return pd.DataFrame(
        {
            "method": pd.Categorical(np.repeat([f[0] for f in frames], c)),
            "n_bins": np.repeat([f[1] for f in frames], c),
            "epsilon": np.repeat([f[2] for f in frames], c),
            "cell": np.tile(cells, k),
            "n": np.tile(panel.n, k),
            "size": pd.Categorical(np.tile(sizes, k), categories=CELL_SIZE_LABELS, ordered=True),
            "rel_accuracy": np.concatenate([f[3] for f in frames]) if k else np.empty(0),
            "l1_error": np.concatenate([f[4] for f in frames]) if k else np.empty(0),
        }
    )


def _em_draws_many_eps(x: np.ndarray, eps_q: np.ndarray, q: float, n_draws: int, gen) -> np.ndarray:
    """Exponential-mechanism draws for several epsilons at once: shape (len(eps_q), n_draws)."""
    xs = np.sort(np.clip(x, PSEO_LOWER, PSEO_TOP))
    n = xs.size
    pts = np.concatenate([[PSEO_LOWER], xs, [PSEO_TOP]])
    lengths = np.diff(pts)
    utility = -np.abs(np.arange(n + 1) - q * n / 100.0)
    with np.errstate(divide="ignore"):
        logw = np.log(lengths)[None, :] + 0.5 * eps_q[:, None] * utility[None, :]
    logw -= logw.max(axis=1, keepdims=True)
    cdf = np.cumsum(np.exp(logw), axis=1)
    r = gen.random((eps_q.size, n_draws)) * cdf[:, -1:]
    idx = np.empty((eps_q.size, n_draws), dtype=np.int64)
    for k in range(eps_q.size):
        idx[k] = np.searchsorted(cdf[k], r[k], side="right")
    idx = np.minimum(idx, n)
    return pts[idx] + gen.random((eps_q.size, n_draws)) * lengths[idx]


# ---------------------------------------------------------------------------------------------
# The percentile page's views: settings + data -> frozen result with .to_dict()
# ---------------------------------------------------------------------------------------------


def pseo_cells(agg_level: int | None = 48):
    """Published first-year cells of the real PSEO table (``../shared/data`` or the bundled copy), or
    None when neither is on this machine. ``agg_level=48``: the finest, disjoint cells."""
    from ..data import real_data_path

    path = real_data_path(PSEO_FILE)
    return None if path is None else load_pseo_cells(path, agg_level=agg_level)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    out = frame.copy()
    for column in out.columns:
        if isinstance(out[column].dtype, pd.CategoricalDtype) or out[column].dtype == object:
            out[column] = out[column].astype(str)
    return out.to_dict(orient="records")


def _floats(values: Any) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=float)]


@dataclass(frozen=True, eq=False)
class CellView:
    """One cell step by step: its histogram, the noisy release, the percentiles read off it, their
    credible intervals and the two rivals (smooth sensitivity, exponential mechanism). Planning:
    ``true`` and the true counts describe the confidential cell."""

    source: str
    n: int
    epsilon: float
    relation: str
    calibration: str
    q: np.ndarray
    edges: np.ndarray
    true_counts: np.ndarray
    confidential_n_below: int
    confidential_n_above: int
    confidential_n_dropped: int
    noisy_counts: np.ndarray
    epsilon_per_bin: float
    fallback: bool
    histogram: np.ndarray
    true: np.ndarray
    read_off_without_noise: np.ndarray
    interval_histogram: tuple[np.ndarray, np.ndarray]
    interval_true: tuple[np.ndarray, np.ndarray]
    smooth: np.ndarray
    smooth_noise_scale: np.ndarray
    exponential_mechanism: np.ndarray
    cell_info: dict = field(default_factory=dict)

    def accuracy_table(self) -> pd.DataFrame:
        """Relative accuracy (eq. 5.1) per percentile and summed L1 error of the three methods."""
        methods = (self.histogram, self.smooth, self.exponential_mechanism)
        return pd.DataFrame(
            {
                "method": ["Histogram (this bin scheme)", "Smooth sensitivity", "Exponential mechanism"],
                **{
                    f"relative accuracy P{qi:g}": [float(relative_accuracy(r[i], self.true[i])) for r in methods]
                    for i, qi in enumerate(self.q)
                },
                "summed L1 error ($)": [float(percentile_mechanisms.summed_l1_error(r, self.true)) for r in methods],
            }
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "q": _floats(self.q),
            "edges": _floats(self.edges),
            "true": _floats(self.true),
            "read_off_without_noise": _floats(self.read_off_without_noise),
            "noisy_counts": [int(c) for c in self.noisy_counts],
            "epsilon_per_bin": self.epsilon_per_bin,
            "histogram": _floats(self.histogram),
            "interval_histogram_lower": _floats(self.interval_histogram[0]),
            "interval_histogram_upper": _floats(self.interval_histogram[1]),
            "interval_true_lower": _floats(self.interval_true[0]),
            "interval_true_upper": _floats(self.interval_true[1]),
            "smooth_sensitivity": _floats(self.smooth),
            "smooth_noise_scale": _floats(self.smooth_noise_scale),
            "exponential_mechanism": _floats(self.exponential_mechanism),
        }


def _cell_values(values: Any, source: str, n: int, cell_number: int) -> tuple[np.ndarray, int, dict]:
    n = check_int(n, "cell size", minimum=1)  # 2.5 is refused, never truncated
    if source == "synthetic":
        return synthesize_cell_earnings(*SYNTH_QUARTILES, n, rng=DATA_SEED), 0, {}
    if source == "pseo":
        cells = pseo_cells(48)
        if cells is None:
            raise DPInputError("the real PSEO table is not on this machine (../shared/data or dpcore/examples)")
        order = cells.sort_values("n", ascending=False).reset_index(drop=True)
        cell_number = check_int(cell_number, "cell number", minimum=1, maximum=len(order))
        row = order.iloc[cell_number - 1]
        info = {
            "institution": str(row.institution),
            "degree_level": str(row.degree_level),
            "cipcode": str(row.cipcode),
            "n": int(row.n),
            "p25": float(row.p25),
            "p50": float(row.p50),
            "p75": float(row.p75),
            "cells": int(len(order)),
        }
        return (
            synthesize_cell_earnings(float(row.p25), float(row.p50), float(row.p75), int(row.n), rng=DATA_SEED),
            0,
            info,
        )
    if source == "sidebar":
        if values is None:
            raise DPInputError("this cell source needs the sidebar's earnings")
        # NaN/inf refused as on upload (never dropped silently with the non-positive incomes)
        x = as_finite_array(values, "the sidebar's earnings")
        positive = x[x > 0]
        take = (
            positive if n >= positive.size else np.random.default_rng(DATA_SEED).choice(positive, size=n, replace=False)
        )
        return take, int(x.size - positive.size), {}
    raise DPInputError(f"cell source must be one of {CELL_SOURCES}, got {source!r}")


def _cell_curves(cell: np.ndarray, *, q: float, n_bins: int, relation: str, seed: int) -> pd.DataFrame:
    """Mean relative accuracy of the q-th percentile against epsilon, 200 noise draws per epsilon: the three
    bin schemes (seed) and the two rivals spending the whole epsilon on this percentile (seed + 1)."""
    panel = make_cell_panel(cell, np.zeros(cell.size, dtype=int), q=[q])
    hist = simulate_accuracy(
        panel,
        epsilons=CURVE_EPSILONS,
        q=q,
        bin_counts=(n_bins,),
        schemes=("pseo", "lognormal", "even"),
        rivals=(),
        n_draws=200,
        relation=relation,
        rng=seed,
    )
    rivals = simulate_accuracy(
        panel, epsilons=CURVE_EPSILONS, q=q, schemes=(), n_draws=200, rival_percentiles=1, rng=seed + 1
    )
    frames = [
        df.groupby(["method", "epsilon"], observed=True, sort=False).rel_accuracy.mean().reset_index()
        for df in (hist, rivals)
    ]
    return pd.concat(frames, ignore_index=True)


def cell_view(
    values: Any = None,
    *,
    source: str = "synthetic",
    n: int = 200,
    cell_number: int = 100,
    epsilon: float = 1.0,
    scheme: str = "pseo",
    n_bins: int = 20,
    custom_edges: Sequence[float] | None = None,
    q: Sequence[float] = (25, 50, 75),
    relation: str = "replace",
    calibration: str = "tight",
    seed: int = 2026,
) -> CellView:
    """The page's one-cell view. The cell: ``source="synthetic"`` (n earnings with the average published
    PSEO quartiles), ``"pseo"`` (earnings matching published cell number ``cell_number``, 1 = largest) or
    ``"sidebar"`` (a random subset of n positive ``values``); planning data use their own seed (20190).

    Releases (Section 4, eq. 4.2): the noisy histogram with ``scheme`` bins (``custom_edges`` when
    ``scheme="custom"``) and ``relation`` neighbours (seed + 1), 90% credible intervals for the read-off
    and for the true percentile (seed + 2), the smooth-sensitivity rival with ``calibration`` constants
    (seed + 3) and the exponential mechanism (seed + 4), both splitting epsilon over the percentiles.
    Accuracy against epsilon is :func:`cell_curves_view` (it does not depend on epsilon).
    """
    epsilon = check_epsilon(epsilon)
    relation = check_relation(relation)
    seed = check_int(seed, "seed", minimum=0)
    qa = check_q(q)
    n = check_int(n, "cell size", minimum=1)
    cell, dropped, info = _cell_values(values, source, n, cell_number)
    if scheme == "custom":
        if custom_edges is None:
            raise DPInputError("custom bins need their edges")
        edges = percentile_mechanisms.check_edges(custom_edges, "custom bin edges")
    else:
        edges = bin_edges(scheme, n_bins)
    binned = percentile_mechanisms.histogram_counts(cell, edges)
    rel = percentile_mechanisms.release_percentiles(
        cell, epsilon=epsilon, edges=edges, q=qa, rng=np.random.default_rng(seed + 1), relation=relation
    )
    intervals = [
        percentile_mechanisms.percentile_credible_intervals(
            rel.noisy_counts,
            edges,
            epsilon_bin=rel.epsilon_per_bin,
            q=qa,
            level=0.9,
            n_samples=2000,
            rng=np.random.default_rng(seed + 2),
            target=target,
        )
        for target in ("histogram", "data")
    ]
    smooth = percentile_mechanisms.release_percentiles_smooth(
        cell, epsilon=epsilon, q=qa, rng=np.random.default_rng(seed + 3), calibration=calibration
    )
    em = percentile_mechanisms.release_percentiles_em(cell, epsilon=epsilon, q=qa, rng=np.random.default_rng(seed + 4))
    return CellView(
        source=source,
        n=int(cell.size),
        epsilon=epsilon,
        relation=relation,
        calibration=calibration,
        q=rel.q,
        edges=edges,
        true_counts=binned.counts,
        confidential_n_below=int(binned.n_below),
        confidential_n_above=int(binned.n_above),
        confidential_n_dropped=dropped,
        noisy_counts=rel.noisy_counts,
        epsilon_per_bin=float(rel.epsilon_per_bin),
        fallback=bool(rel.fallback),
        histogram=rel.values,
        true=percentile_mechanisms.empirical_percentile(cell, qa),
        read_off_without_noise=percentile_mechanisms.percentiles_from_histogram(binned.counts, edges, qa),
        interval_histogram=(intervals[0].lower, intervals[0].upper),
        interval_true=(intervals[1].lower, intervals[1].upper),
        smooth=smooth.values,
        smooth_noise_scale=smooth.confidential_noise_scale,
        exponential_mechanism=em.values,
        cell_info=info,
    )


@dataclass(frozen=True, eq=False)
class CellCurvesView:
    """Mean relative accuracy of one percentile of a cell against epsilon (200 noise draws per epsilon):
    PSEO, log-normal and even bins, and the two rivals spending the whole epsilon on this percentile."""

    q: float
    n_bins: int
    relation: str
    curves: pd.DataFrame

    def to_dict(self) -> dict[str, Any]:
        return {"q": self.q, "n_bins": self.n_bins, "relation": self.relation, "curves": _records(self.curves)}


def cell_curves_view(
    values: Any = None,
    *,
    source: str = "synthetic",
    n: int = 200,
    cell_number: int = 100,
    q: float = 50.0,
    n_bins: int = 20,
    relation: str = "replace",
    seed: int = 2026,
) -> CellCurvesView:
    """Accuracy against epsilon (:data:`CURVE_EPSILONS`) for percentile ``q`` of the cell that
    :func:`cell_view` builds from the same ``values``/``source``/``n``/``cell_number``: the bin schemes with
    ``n_bins`` bins and ``relation`` (noise from ``seed``) and the rivals (``seed + 1``)."""
    relation = check_relation(relation)
    seed = check_int(seed, "seed", minimum=0)
    q = float(check_q([q])[0])
    cell, _, _ = _cell_values(values, source, check_int(n, "cell size", minimum=1), cell_number)
    return CellCurvesView(
        q, int(n_bins), relation, _cell_curves(cell, q=q, n_bins=n_bins, relation=relation, seed=seed)
    )


def cell_answer_statistic(
    values: Any = None,
    *,
    source: str = "synthetic",
    n: int = 200,
    cell_number: int = 100,
    relation: str = "replace",
    n_sims: int = 2000,
    seed: int = 0,
):
    """The planner statistic of :func:`percentile_cell_answer` (the same
    construction): the median of the cell that :func:`cell_view` uses, released by the PSEO noisy
    histogram (Foote et al. 2019, eq. 4.2), Monte Carlo with ``n_sims`` common random draws from
    ``seed``. It does not depend on epsilon: the page builds it once per cell.
    Neighbouring: replace one person within the cell (or ``relation="add_remove"``)."""
    from .. import planner as planner_lib

    n_sims = check_int(n_sims, "simulated releases n_sims", minimum=1)
    seed = check_int(seed, "seed", minimum=0)  # 1.5 is refused, never truncated
    cell, _, _ = _cell_values(values, source, n, cell_number)
    cell = check_earnings(cell, "the cell's earnings")  # a one-person cell refused, as in cell_view
    return planner_lib.PercentilesStatistic(
        (np.maximum(cell, 0.0),),
        q=(50.0,),
        relation=relation,
        n_sims=n_sims,
        seed=seed,
        name="Median of the cell (PSEO histogram)",
    )


def cell_answer_at_epsilon(statistic: Any, *, epsilon: float):
    """The sentence half of :func:`percentile_cell_answer` for a statistic from
    :func:`cell_answer_statistic` (the same numbers and sentence), without its epsilon recommendation,
    which does not depend on ``epsilon`` (the page computes that once per target, this per epsilon)."""
    return answer_experiments.statistic_answer(
        statistic, epsilon=epsilon, noun="median of this cell", unit_format="${:,.0f}", truth_noun="median"
    )


def _panel(n_cells: int, agg_level: int = 48, q: Any = (25, 50, 75)) -> CellPanel:
    """Earnings for a random sample of ``n_cells`` published cells (sample and earnings from DATA_SEED)."""
    cells = pseo_cells(agg_level)
    if cells is None:
        raise DPInputError("the real PSEO table is not on this machine (../shared/data or dpcore/examples)")
    n_cells = check_int(n_cells, "cells used", minimum=1)
    sub = cells.sample(min(n_cells, len(cells)), random_state=DATA_SEED) if n_cells < len(cells) else cells
    values, cell = synthesize_cells(sub.reset_index(drop=True), rng=DATA_SEED)
    return make_cell_panel(values, cell, q=q)


@dataclass(frozen=True, eq=False)
class ManyCellsView:
    """The median of every sampled cell released 20 times per bin scheme: per-cell mean relative accuracy
    (``per_cell``: method, n, size, rel_accuracy) and its mean by cell-size class (``by_size``)."""

    n_cells: int
    epsilon: float
    n_bins: int
    relation: str
    per_cell: pd.DataFrame
    by_size: pd.DataFrame

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_cells": self.n_cells,
            "epsilon": self.epsilon,
            "n_bins": self.n_bins,
            "mean_rel_accuracy": {
                str(k): float(v) for k, v in self.per_cell.groupby("method", observed=True).rel_accuracy.mean().items()
            },
            "by_size": _records(self.by_size),
        }


def many_cells_view(
    *,
    n_cells: int = 300,
    epsilon: float = 1.0,
    n_bins: int = 20,
    relation: str = "replace",
    seed: int = 2026,
    agg_level: int = 48,
) -> ManyCellsView:
    """A whole PSEO table: ``n_cells`` published cells (finest level, disjoint: epsilon once by parallel
    composition), earnings simulated to match them, the median released 20 times per cell with log-normal,
    even (``n_bins`` bins) and PSEO bins (noise from ``seed``)."""
    epsilon = check_epsilon(epsilon)
    relation = check_relation(relation)
    panel = _panel(n_cells, agg_level)
    true = panel.true[:, 1]  # the panel holds p25, p50, p75
    gen = np.random.default_rng(check_int(seed, "seed", minimum=0))
    frames = []
    for scheme in ("lognormal", "even", "pseo"):
        edges = bin_edges(scheme, n_bins)
        counts = cell_bin_counts(panel.values, panel.cell, panel.n_cells, edges)
        est = simulate_histogram_percentiles(
            counts, edges, epsilon=epsilon, q=[50], n_draws=20, rng=gen, relation=relation
        )[:, :, 0]
        frames.append(
            pd.DataFrame(
                {
                    "method": scheme,
                    "n": panel.n,
                    "size": size_category(panel.n),
                    "rel_accuracy": relative_accuracy(est, true[None, :]).mean(axis=0),
                }
            )
        )
    per_cell = pd.concat(frames, ignore_index=True)
    per_cell["size"] = pd.Categorical(per_cell["size"], categories=CELL_SIZE_LABELS, ordered=True)
    by_size = per_cell.groupby(["method", "size"], observed=True).rel_accuracy.mean().reset_index()
    return ManyCellsView(panel.n_cells, epsilon, int(n_bins), relation, per_cell, by_size)


@dataclass(frozen=True, eq=False)
class FiguresView:
    """The paper's Figures 1-3 (mean relative accuracy of the median over PSEO-like cells):
    ``figure1`` by method and bins against epsilon, ``figure2`` by cell size (20 bins),
    ``figure3`` against the number of bins at one epsilon, ``figure3_rivals`` the rivals at that epsilon."""

    params: dict
    figure1: pd.DataFrame
    figure2: pd.DataFrame
    figure3: pd.DataFrame
    figure3_rivals: pd.DataFrame

    def to_dict(self) -> dict[str, Any]:
        return {
            "params": dict(self.params),
            "figure1": _records(self.figure1),
            "figure2": _records(self.figure2),
            "figure3": _records(self.figure3),
            "figure3_rivals": _records(self.figure3_rivals),
        }


def figures_view(
    *,
    n_cells: int = 300,
    n_draws: int = 20,
    rival_split: int = 3,
    figure3_epsilon: float = 1.0,
    relation: str = "replace",
    seed: int = 2026,
    progress: Callable[[float, str], object] | None = None,
) -> FiguresView:
    """Figures 1-3 of the paper on ``n_cells`` PSEO-like cells: epsilon 0.1..3 (step 0.1) with 10, 15, 20, 25
    bins and the rivals spending epsilon / ``rival_split`` on the median (seed + 10); Figure 3: 10..30 bins at
    ``figure3_epsilon`` (seed + 11). ``n_draws`` noise draws per setting (the paper used 20)."""
    figure3_epsilon = check_epsilon(figure3_epsilon, "epsilon for Figure 3")
    seed = check_int(seed, "seed", minimum=0)
    panel = _panel(n_cells, 48, q=[50])
    main = simulate_accuracy(
        panel,
        epsilons=FIGURE_EPSILONS,
        q=50,
        bin_counts=(10, 15, 20, 25),
        n_draws=n_draws,
        relation=relation,
        rival_percentiles=rival_split,
        rng=seed + 10,
        progress=None if progress is None else (lambda f, t: progress(0.85 * f, f"Figures 1-2: {t}")),
    )
    fig3 = simulate_accuracy(
        panel,
        epsilons=[figure3_epsilon],
        q=50,
        bin_counts=tuple(range(10, 31)),
        rivals=(),
        n_draws=n_draws,
        relation=relation,
        rng=seed + 11,
        progress=None if progress is None else (lambda f, t: progress(0.85 + 0.15 * f, f"Figure 3: {t}")),
    )
    mean = "rel_accuracy"
    figure1 = main.groupby(["method", "n_bins", "epsilon"], observed=True, sort=False)[mean].mean().reset_index()
    figure2 = (
        main[(main.n_bins == 20) | (main.n_bins == 0)]
        .groupby(["method", "size", "epsilon"], observed=True, sort=False)[mean]
        .mean()
        .reset_index()
    )
    figure3 = fig3.groupby(["method", "n_bins"], observed=True, sort=False)[mean].mean().reset_index()
    near = main[(main.n_bins == 0) & np.isclose(main.epsilon, figure3_epsilon)]
    rivals = near.groupby("method", observed=True)[mean].mean().reset_index()
    params = dict(
        n_cells=panel.n_cells,
        n_draws=int(n_draws),
        rival_split=int(rival_split),
        figure3_epsilon=figure3_epsilon,
        relation=relation,
        seed=seed,
    )
    return FiguresView(params, figure1, figure2, figure3, rivals)


def percentile_cell_answer(
    values: Any = None,
    *,
    source: str = "synthetic",
    n: int = 200,
    cell_number: int = 100,
    epsilon: float = 1.0,
    relation: str = "replace",
    target_error: float = 2_000.0,
    confidence: float = defaults.ANSWER_CONFIDENCE,
    n_sims: int = 2000,
    seed: int = 0,
    max_epsilon: float | None = None,
) -> tuple[Any, Any]:
    """The percentiles page's answer for its one cell (the cell ``cell_view`` uses: same ``source``,
    ``n``, ``cell_number``): the median released by the PSEO noisy histogram over the 21 PSEO bins
    (Foote et al. 2019, eq. 4.2; the planner's percentiles statistic, Monte Carlo with ``n_sims``
    draws, seed ``seed``), the error sentence at ``epsilon`` in dollars and the ε for ±``target_error``
    dollars (up to ``max_epsilon``, the page's largest ε). Neighbouring: replace one person within the cell
    (or ``relation="add_remove"``)."""
    # one construction (and one set of argument checks) with the page's per-cell statistic
    stat = cell_answer_statistic(
        values, source=source, n=n, cell_number=cell_number, relation=relation, n_sims=n_sims, seed=seed
    )
    return (
        cell_answer_at_epsilon(stat, epsilon=epsilon),
        answer_experiments.statistic_recommendation(
            stat,
            target_error=target_error,
            confidence=confidence,
            noun="median of this cell",
            unit_format="${:,.0f}",
            truth_noun="median",
            max_epsilon=max_epsilon,
        ),
    )


@dataclass(frozen=True, eq=False)
class ExponentialCellView:
    """The page's one cell released by the exponential mechanism on the "pseo-fine" candidates (one level ``q``),
    beside the PSEO histogram's read-off of the same level at the same epsilon. ``released``: one seeded
    simulated draw; ``probabilities``: the exact law of the choice over the candidates; the median absolute
    errors come from ``n_draws`` simulated releases of each method. ``true`` and the errors describe the
    confidential cell (planning, not releases)."""

    source: str
    n: int
    epsilon: float
    q: float
    candidates: np.ndarray
    probabilities: np.ndarray
    released: float
    histogram_released: float
    true: float
    exponential_mae: float
    histogram_mae: float
    n_draws: int
    cell_info: dict = field(default_factory=dict)
    confidential_n_dropped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "epsilon": self.epsilon,
            "q": self.q,
            "released": self.released,
            "histogram_released": self.histogram_released,
            "true": self.true,
            "exponential_median_abs_error": self.exponential_mae,
            "histogram_median_abs_error": self.histogram_mae,
            "n_draws": self.n_draws,
            "candidates": len(self.candidates),
        }


def exponential_cell_view(
    values: Any = None,
    *,
    source: str = "synthetic",
    n: int = 200,
    cell_number: int = 100,
    epsilon: float = 1.0,
    q: float = 50.0,
    n_draws: int = 2000,
    seed: int = 2026,
) -> ExponentialCellView:
    """The page's one cell (the cell of :func:`cell_view`) with ``method = "exponential"``: the level ``q`` chosen
    among the "pseo-fine" candidates by :class:`dpcore.mechanisms.ExponentialQuantileMechanism` (replace one
    person, cell size public; seed + 4) and read off the PSEO noisy histogram (21 bins, seed + 1), both at
    ``epsilon``; the median absolute error of each over ``n_draws`` simulated releases (seeds + 5, + 6)."""
    epsilon = check_epsilon(epsilon)
    seed = check_int(seed, "seed", minimum=0)
    n_draws = check_int(n_draws, "n_draws", minimum=10, maximum=20_000)
    cell, dropped, info = _cell_values(values, source, check_int(n, "cell size", minimum=1), cell_number)
    em = ExponentialQuantileMechanism(epsilon, q=(q,))
    hist = HistogramMechanism(epsilon, q=(q,))
    grid_counts = percentile_mechanisms.histogram_counts(cell, em.candidates, min_size=1).counts[None, :]
    bin_counts = percentile_mechanisms.histogram_counts(cell, hist.edges, min_size=1).counts[None, :]
    true = float(percentile_mechanisms.empirical_percentile(cell, [q])[0])
    em_draws = em.simulate(grid_counts, n_draws, rng=seed + 5)[:, 0, 0]
    hist_draws = hist.simulate(bin_counts, n_draws, rng=seed + 6)[:, 0, 0]
    return ExponentialCellView(
        source=source,
        n=int(cell.size),
        epsilon=epsilon,
        q=em.q[0],
        candidates=np.asarray(em.candidates),
        probabilities=em.selection_probabilities(grid_counts)[0, 0],
        released=float(em.draw(grid_counts, rng=seed + 4).percentiles[0, 0]),
        histogram_released=float(hist.draw(bin_counts, rng=seed + 1).percentiles[0, 0]),
        true=true,
        exponential_mae=float(np.median(np.abs(em_draws - true))),
        histogram_mae=float(np.median(np.abs(hist_draws - true))),
        n_draws=n_draws,
        cell_info=info,
        confidential_n_dropped=dropped,
    )
