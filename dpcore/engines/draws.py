"""The noise of a plan's release: each statistic's mechanisms, built from the plan's public parameters
(:func:`statistic_mechanisms`), and its draw on the engine's frozen aggregates (:class:`Deferred`), through the
release's :class:`dpcore.mechanisms.Drawer`; a real release draws beside the source's fingerprint
(:class:`DrawAhead`), and nothing drawn is used before the charge. The mechanisms and the neighbouring relation:
:mod:`dpcore.engines.execute`'s docstring.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..mechanisms import Drawer
from ..plan import ReleasePlan, StatisticSpec
from ..published import published_table

__all__ = [
    "gini_mechanism",
    "StatisticMechanisms",
    "statistic_mechanisms",
    "Deferred",
    "DrawAhead",
    "released_table",
]


def gini_mechanism(spec: StatisticSpec, m: int, level: float = 0.95):
    """The :class:`dpcore.mechanisms.GiniIntervalMechanism` of a plan's Gini: the value by
    :class:`dpcore.mechanisms.GiniMechanism` (the mechanism every released Gini is drawn by) and a DP upper bound on its
    smooth sensitivity, so that the published interval needs nothing confidential; epsilon/m per cell (split
    between value and bound), and for "laplace" delta / (m e^{(m-1) epsilon/m}) per cell, so group privacy over
    the m rows of one person gives back the plan's (epsilon, delta)."""
    from ..mechanisms import GiniIntervalMechanism

    # the plan parser sets the bounds, the noise and the calibration of every Gini
    assert spec.lower is not None and spec.upper is not None and spec.noise is not None
    assert spec.calibration is not None
    return GiniIntervalMechanism(
        spec.epsilon,
        spec.lower,
        spec.upper,
        noise=spec.noise,
        gamma=2.0 if spec.gamma is None else spec.gamma,
        calibration=spec.calibration,
        delta=spec.delta if spec.noise != "cauchy" else None,
        rows_per_person=m,
        level=level,
    )


@dataclass(frozen=True)
class StatisticMechanisms:
    """The mechanisms one statistic of a plan draws with, from public parameters only: its values' (``value``) and,
    when its cell sizes are protected, its cells' (``cells``: noisy sizes, and the DP selection without [keys])."""

    value: Any
    cells: Any = None
    #: a statistic with margins: the margins' mechanisms (``value`` measures the cells), each with its share
    margins: tuple[Any, ...] = ()

    def all(self) -> tuple[Any, ...]:
        return ((self.value,) if self.cells is None else (self.cells, self.value)) + self.margins

    def levels(self) -> tuple[Any, ...]:
        """The mechanism of every level, cells first."""
        return (self.value, *self.margins)


def statistic_mechanisms(plan: ReleasePlan, spec: StatisticSpec) -> StatisticMechanisms:
    """The mechanisms of a plan's statistic (module docstring): m = rows one person can change; with protected cell
    sizes the rows may move between cells, which the histogram-on-candidates and the mean's sensitivities say."""
    from ..mechanisms import (
        CellSizesMechanism,
        ExponentialQuantileMechanism,
        HistogramMechanism,
        MeanMechanism,
        RelativeRiskMechanism,
    )

    m = plan.rows_per_person
    private = plan.cells_private(spec)
    value: Any
    margins: tuple[Any, ...] = ()
    if spec.kind == "percentiles" and spec.method == "exponential":
        value = ExponentialQuantileMechanism(spec.epsilon, spec.bins, spec.q, rows_per_person=m, cells_move=private)
    elif spec.kind == "percentiles" and spec.margins is not None:  # each level with its share (dpcore.engines.margins)
        value, *rest = (HistogramMechanism(e, spec.bins, spec.q, rows_per_person=m) for e in spec.level_epsilons())
        margins = tuple(rest)
    elif spec.kind == "percentiles":
        value = HistogramMechanism(spec.epsilon, spec.bins, spec.q, rows_per_person=m)
    elif spec.kind == "mean":
        assert spec.lower is not None and spec.upper is not None  # the plan parser requires both for a mean
        value = MeanMechanism(spec.epsilon, spec.lower, spec.upper, rows_per_person=m, cells_move=private)
    elif spec.kind == "gini":
        value = gini_mechanism(spec, m, plan.level)
    else:
        value = RelativeRiskMechanism(spec.epsilon, rows_per_person=m)
    if not private:
        return StatisticMechanisms(value, margins=margins)
    select = bool(spec.by) and not plan.keys_declared(spec)
    return StatisticMechanisms(
        value,
        CellSizesMechanism(plan.n_epsilon, m, select=select, selection_delta=plan.selection_delta),
        margins,
    )


def _q_label(q: float) -> str:
    return "p" + (f"{q:g}".replace(".", "_"))


def _percentiles(engine, spec: StatisticSpec, mech: Any, drawer: Drawer) -> tuple[pd.DataFrame, dict]:
    """Every cell's histogram through :class:`dpcore.mechanisms.HistogramMechanism` (module docstring), or with
    ``method = "exponential"`` its histogram on the candidate grid through
    :class:`dpcore.mechanisms.ExponentialQuantileMechanism` (score sensitivity m, 2m when the cell sizes are
    protected: rows may move between cells)."""
    from ..mechanisms import HistogramDraw, HistogramMechanism
    from .margins import cell_histograms

    n_bins = len(mech.edges) - 1 if isinstance(mech, HistogramMechanism) else len(mech.candidates) - 1
    cells, counts = cell_histograms(engine, spec, n_bins)
    table = cells.copy()
    table["n"] = counts.sum(axis=1).astype(np.int64)
    d = drawer(mech, counts)
    info: dict[str, Any] = {
        **mech.record(),
        "measurement": d.measurement,
        "privacy_map": d.privacy_map,
        "map_epsilon": d.map_epsilon,
    }
    assert spec.q is not None  # the plan parser sets the levels of every percentiles statistic
    for j, q in enumerate(spec.q):
        table[_q_label(q)] = d.percentiles[:, j].astype(float)
    if isinstance(mech, HistogramMechanism):  # the noisy histogram is a DP output: its intervals need it
        from ..published import NOISY_BIN_PREFIX

        assert isinstance(d, HistogramDraw)  # what HistogramMechanism.draw returns

        for j in range(n_bins):
            table[f"{NOISY_BIN_PREFIX}{j + 1:02d}"] = np.asarray(d.noisy_counts)[:, j].astype(np.int64)
    return table, info


def _mean(engine, spec: StatisticSpec, mech: Any, drawer: Drawer) -> tuple[pd.DataFrame, dict]:
    """Clipped sums through :class:`dpcore.mechanisms.MeanMechanism`. With protected cell sizes (``cells_move``),
    one person's rows may move between cells (a wider sensitivity) and the n divided by is the noisy one."""
    by = list(spec.by)
    assert spec.lower is not None and spec.upper is not None  # the plan parser requires both for a mean
    sums = engine.sums(by, spec.lower, spec.upper)
    table = sums[by].copy() if by else pd.DataFrame(index=range(len(sums)))
    table["n"] = sums["n"].to_numpy(dtype=np.int64)
    d = drawer(mech, sums["sum_cents"].to_numpy(dtype=np.float64), sums["n"].to_numpy(dtype=float))
    info: dict[str, Any] = {
        **mech.record(),
        "measurement": d.measurement,
        "privacy_map": d.privacy_map,
        "map_epsilon": d.map_epsilon,
    }
    table["mean"] = d.means
    return table, info


def _gini(engine, spec: StatisticSpec, mech: Any, drawer: Drawer) -> tuple[pd.DataFrame, dict]:
    """Per cell: :meth:`dpcore.mechanisms.GiniIntervalMechanism.draw` (module docstring): the value and the DP upper
    bound on its smooth sensitivity that the published interval is computed from. A cell with n <= 1 releases 0
    (the Gini is 0 for every data set of that size, public: nothing to protect) and no bound."""
    by = list(spec.by)
    m = mech.rows_per_person
    inputs = engine.gini_inputs(by, spec.lower, spec.upper, mech.smoothness)
    table = inputs[by].copy() if by else pd.DataFrame(index=range(len(inputs)))
    table["n"] = inputs["n"].to_numpy(dtype=np.int64)
    values, bounds = [], []
    measurement = privacy_map = bound_measurement = None
    for g, s in zip(
        inputs["confidential_gini"].to_numpy(float),
        inputs["confidential_smooth_sensitivity"].to_numpy(float),
        strict=True,
    ):
        draw = drawer(mech, float(g), float(s))
        if s > 0:
            measurement, privacy_map = measurement or draw.measurement, privacy_map or draw.privacy_map
            bound_measurement = bound_measurement or draw.bound_measurement
        values.append(draw.value)
        bounds.append(draw.smooth_sensitivity_upper)
    table["gini"] = np.array(values, dtype=float)
    table["smooth_sensitivity_bound"] = np.array(bounds, dtype=float)
    info = {
        **mech.record(),
        "noise": (
            f"per cell: Gini + (S_beta(X)/alpha) Z by dpcore.mechanisms.GiniMechanism (noise {spec.noise!r}, "
            f"epsilon_value/m = {mech.plan.epsilon_value!r} per cell; group privacy over m = {m} rows), and "
            f"a DP upper bound on S_beta(X) at epsilon_bound/m = {mech.plan.epsilon_bound!r} per cell "
            "(published: smooth_sensitivity_bound); S_beta(X) itself and the noise scale depend on the data "
            "and are not published"
        ),
        "measurement": measurement,
        "privacy_map": privacy_map,
        "bound_measurement": bound_measurement,
    }
    return table, info


def _relative_risk(engine, spec: StatisticSpec, mech: Any, drawer: Drawer) -> tuple[pd.DataFrame, dict]:
    """Both case counts of every cell through :class:`dpcore.mechanisms.RelativeRiskMechanism` (module docstring)."""
    by = list(spec.by)
    counts = engine.outcomes(by, spec)
    table = counts[by].copy() if by else pd.DataFrame(index=range(len(counts)))
    nx = counts["n_exposed"].to_numpy(dtype=np.int64)
    ny = counts["n_reference"].to_numpy(dtype=np.int64)
    table["n_exposed"], table["n_reference"] = nx, ny
    d = drawer(mech, counts["cases_exposed"].to_numpy(np.int64), counts["cases_reference"].to_numpy(np.int64), nx, ny)
    info: dict[str, Any] = {
        **mech.record(),
        "measurement": d.measurement,
        "privacy_map": d.privacy_map,
        "map_epsilon": d.map_epsilon,
    }
    table["cases_exposed"], table["cases_reference"] = d.cases_exposed, d.cases_reference
    table["relative_risk"] = d.relative_risk
    return table, info


def released_table(
    plan: ReleasePlan, s: StatisticSpec, deferred: Deferred, drawer: Drawer
) -> tuple[pd.DataFrame, dict]:
    """One statistic's noisy table and its record entry: the mechanisms' draws on the aggregates (through the
    release's drawer), then every released value with its interval and honest digits (computed from the published
    numbers only)."""
    table, info = deferred.release(drawer)
    if s.kind == "percentiles" and s.margins is not None:  # every level: intervals from the least squares
        from .margins import MARGIN_TABLES

        level_tables = {
            name: published_table("percentiles_consistent", t, info, plan.level)
            for name, t in info[MARGIN_TABLES].items()
        }
        table = published_table("percentiles_consistent", table, info, plan.level)
        return table, {**info, MARGIN_TABLES: level_tables, "interval_level": plan.level}
    if s.kind != "percentiles" or getattr(s, "method", "histogram") != "exponential":
        table = published_table(s.kind, table, info, plan.level)
        info = {**info, "interval_level": plan.level}
    return table, info


class DrawAhead:
    """The noisy tables of a real release, drawn in a thread while the source is fingerprinted.

    The fingerprint does not use all of two cores (its worker and this process take turns with the reader) and
    the OpenDP draws release the GIL: the 10M-row PSEO-like histogram's release took 8.3 s instead of 8.9 s
    (median of three, alternating); the two still compete for the CPU. Why this is the same release:

    * the draw is the one that followed the charge (:func:`released_table`, the same mechanisms and
      measurements, on the same frozen aggregates): only its start moved;
    * nothing noisy leaves the thread before the charge: :meth:`result` is called only after it, a refusal
      before it drops the tables unseen (the thread is a daemon: a refused run does not wait for it);
    * a failure of the draw is stored and raised by :meth:`result`, after the charge, where it was raised
      before; a refusal that depends on the draw would tell neighbouring data apart without a charge.
    """

    def __init__(self, plan: ReleasePlan, aggregates: dict[str, Deferred], drawer: Drawer, times: Any) -> None:
        self._work = [(s, aggregates[s.name]) for s in plan.statistics]
        self._plan, self._drawer, self._times = plan, drawer, times
        self._tables: dict[str, tuple[pd.DataFrame, dict]] = {}
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._draw, name="dpcore-noise-ahead", daemon=True)
        self._thread.start()

    def _draw(self) -> None:
        t0 = time.perf_counter()
        try:
            while self._work:
                s, deferred = self._work.pop(0)  # the thread holds the only reference: freed once drawn
                self._tables[s.name] = released_table(self._plan, s, deferred, self._drawer)
                del deferred
        except BaseException as exc:  # raised by result(), after the charge
            self._error = exc
        finally:
            self._times.overlapped["noise"] = time.perf_counter() - t0

    def result(self) -> dict[str, tuple[pd.DataFrame, dict]]:
        """The drawn tables (waits for the thread); call only after the charge."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._tables


class Deferred:
    """The aggregates of one statistic (computed by the engine) and the noise step (later, after the charge)."""

    def __init__(self, spec: StatisticSpec, engine, plan: ReleasePlan, mechanisms: StatisticMechanisms) -> None:
        self.spec, self.engine, self.plan, self.mechanisms = spec, engine, plan, mechanisms
        self._frozen: _FrozenEngine | None = None
        self._cell_counts: tuple[pd.DataFrame, tuple[list[tuple[str, ...]], np.ndarray]] | None = None

    def compute(self) -> None:
        self._frozen = frozen = _FrozenEngine(self.engine, self.spec, self.mechanisms.value)
        if not self.spec.by and self.spec.kind != "percentiles":
            name = next(iter(frozen.frames))
            frozen.frames[name] = _whole_table_row(frozen.frames[name])
        if self.plan.keys_declared(self.spec):
            # declared cells only, each present (absent ones as zeros): the listed cells are public
            from ..cell_keys import restrict_to_declared

            by = list(self.spec.by)
            name = next(iter(frozen.frames))
            frozen.frames[name] = restrict_to_declared(frozen.frames[name], by, self.plan.keys.cells(by))

    @property
    def _frames(self) -> dict[str, pd.DataFrame]:
        """The frozen aggregate frames (:meth:`compute` runs first, while the engine is open)."""
        if self._frozen is None:
            raise RuntimeError("the aggregates are used before compute() froze them")
        return self._frozen.frames

    def _noisy_cells(self, drawer: Drawer) -> tuple[dict, dict]:
        """Noisy cell sizes (and, without declared keys, the DP-selected cells) of a statistic whose cell sizes
        are protected; the aggregate frame is cut to the released cells and carries the noisy n from here on
        (the mean divides by it, the relative risk by its noisy group sizes)."""
        from .. import cell_keys

        s, by = self.spec, list(self.spec.by)
        mech = self.mechanisms.cells
        assert mech is not None  # only statistics with private cell sizes get here
        name = next(iter(self._frames))
        frame = self._frames[name]
        keys, counts = self.cell_counts()
        drawn = drawer(mech, keys, counts)
        noisy = {k: max(int(v), 0) for k, v in drawn.counts.items()}  # a count below 0 shown as 0: post-processing
        if s.kind == "relative_risk":  # a cell is listed when both its groups are
            cells = {k[:-1] for k in noisy if k[:-1] + ("exposed",) in noisy and k[:-1] + ("reference",) in noisy}
        else:
            cells = set(noisy)
        if mech.select:
            frame = cell_keys.restrict_to_cells(frame, by, cells)
        frame = frame.copy()
        frame_keys = cell_keys.keys_of(frame, by) if by else [()] * len(frame)
        if s.kind == "mean":
            frame["n"] = np.array([noisy[k] for k in frame_keys], dtype=np.int64)
        elif s.kind == "relative_risk":
            frame["n_exposed"] = np.array([noisy[k + ("exposed",)] for k in frame_keys], dtype=np.int64)
            frame["n_reference"] = np.array([noisy[k + ("reference",)] for k in frame_keys], dtype=np.int64)
        self._frames[name] = frame
        return noisy, {**drawn.info, "n": "noisy (cell_sizes = \"noisy\")"}

    def aggregate_frame(self) -> pd.DataFrame:
        """The one aggregate frame of this statistic (histogram, sums, Gini inputs or outcome counts)."""
        return next(iter(self._frames.values()))

    def cell_counts(self) -> tuple[list[tuple[str, ...]], np.ndarray]:
        """(cell keys, rows per cell) of the aggregate frame (:func:`dpcore.cell_keys.cell_counts`), computed once
        per frame: the checks before the charge and the noisy cell sizes read them (0.37 s a call for the 600,600
        rows of the PSEO-like histogram)."""
        from .. import cell_keys

        frame = self.aggregate_frame()
        if self._cell_counts is None or self._cell_counts[0] is not frame:
            self._cell_counts = (frame, cell_keys.cell_counts(frame, self.spec.kind, list(self.spec.by)))
        return self._cell_counts[1]

    def release(self, drawer: Drawer) -> tuple[pd.DataFrame, dict]:
        table, info = self._release_values(drawer)
        if self.spec.has_cells:
            info = {**info, "cells": self._cells_info}
        return table, info

    def _release_values(self, drawer: Drawer) -> tuple[pd.DataFrame, dict]:
        plan, s, eng, value = self.plan, self.spec, self._frozen, self.mechanisms.value
        private = self.mechanisms.cells is not None
        noisy: dict = {}
        if private:
            noisy, self._cells_info = self._noisy_cells(drawer)
        else:
            self._cells_info = {
                "cells": (
                    "declared in the plan's [keys]" if plan.keys_declared(s) else "the cells present in the data"
                ),
                "n": "exact (cell_sizes = \"public\": the PSEO assumption)",
            }
        if s.kind == "percentiles" and s.margins is not None:
            from ..cell_keys import keys_of
            from .margins import release_hierarchy

            def noisy_n(cells: pd.DataFrame) -> np.ndarray:
                return np.array([noisy[k] for k in keys_of(cells, list(s.by))], dtype=np.int64)

            table, info = release_hierarchy(eng, s, self.mechanisms.levels(), drawer, noisy_n if private else None)
            if private:
                info["n_noise_scale"] = self.mechanisms.cells.noise_scale
            return table, info
        if s.kind == "percentiles":
            table, info = _percentiles(eng, s, value, drawer)
            if private:  # the histogram's exact row counts replaced by the noisy cell sizes
                from ..cell_keys import keys_of

                table["n"] = np.array([noisy[k] for k in keys_of(table, list(s.by))], dtype=np.int64)
                info["n_noise_scale"] = self.mechanisms.cells.noise_scale  # the published n is a noisy count
            return table, info
        if s.kind == "mean":
            table, info = _mean(eng, s, value, drawer)
            if private:
                info["n_noise_scale"] = self.mechanisms.cells.noise_scale
            return table, info
        if s.kind == "gini":
            return _gini(eng, s, value, drawer)
        return _relative_risk(eng, s, value, drawer)


def _whole_table_row(frame: pd.DataFrame) -> pd.DataFrame:
    """The aggregate of a statistic without ``by`` as exactly one row, zeros for an input with no row in it (the
    engines give no row, or one, for an empty aggregate: the pandas engine none for outcomes, DuckDB one). The whole
    table is one cell for every data set, so whether it is listed never depends on the data."""
    if len(frame):
        return frame
    return pd.DataFrame({c: np.zeros(1, dtype=frame[c].dtype if frame[c].dtype != object else np.int64) for c in frame})


class _FrozenEngine:
    """The one aggregate a statistic needs, computed now (while the engine is open) and replayed later."""

    def __init__(self, engine, spec: StatisticSpec, mechanism: Any) -> None:
        by = list(spec.by)
        self.frames: dict[str, pd.DataFrame] = {}
        if spec.kind == "percentiles":
            self.frames["histogram"] = engine.histogram(by, spec.bins)
        elif spec.kind == "mean":
            self.frames["sums"] = engine.sums(by, spec.lower, spec.upper)
        elif spec.kind == "gini":
            self.frames["gini_inputs"] = engine.gini_inputs(by, spec.lower, spec.upper, mechanism.smoothness)
        else:
            self.frames["outcomes"] = engine.outcomes(by, spec)

    def histogram(self, *args: Any) -> pd.DataFrame:
        return self.frames["histogram"]

    def sums(self, *args: Any) -> pd.DataFrame:
        return self.frames["sums"]

    def gini_inputs(self, *args: Any) -> pd.DataFrame:
        return self.frames["gini_inputs"]

    def outcomes(self, *args: Any) -> pd.DataFrame:
        return self.frames["outcomes"]
