"""A percentiles statistic with ``margins``: every level of its hierarchy measured, then made consistent.

The plan's ``margins`` (:attr:`dpcore.plan.StatisticSpec.margins`) are coarser groupings of the statistic's ``by``
columns, nested, ``[]`` for the whole table. The release:

1. **which nodes.** The hierarchy is built from the statistic's released cells (public cells, declared
   ``[keys]``, or the cells selected with DP when the cell sizes are protected) and the plan's margins: a margin's
   node is the sum of the released cells that share its columns' values. What is public per level is therefore
   what is public about the cells (their labels; their n, exact or noisy), and a margin's n is the sum of its
   cells' published n (post-processing). Rows of cells that are not released (not declared, not selected) are in
   no level: a margin is the margin of the released table, so that it can add up exactly;
2. **each level measured** through its own registered :class:`dpcore.mechanisms.HistogramMechanism`, with its
   share epsilon_l of the statistic's epsilon (:meth:`dpcore.plan.StatisticSpec.level_epsilons`): every node x
   bin count plus discrete Laplace noise of scale 2m/epsilon_l. A person's rows are in one node of every level,
   and one row moving changes two counts of each level by one (or one, when it leaves the released cells): each
   level is epsilon_l-DP with the mechanism's own sensitivity 2m, and the levels compose sequentially to
   sum_l epsilon_l = epsilon, what the plan charges (the release's :class:`dpcore.mechanisms.Drawer` declares
   the levels' mechanisms, and :func:`dpcore.pipeline.release` checks that the charge covers their sum);
3. **post-processing** (:func:`dpcore.consistency.make_consistent`, no data): the least-squares estimate of every
   node's bins from all levels, then non-negative integers that add up exactly from the cells to each margin
   to the total; the percentiles are read off the consistent integers, their intervals computed from the
   least-squares estimates and their standard deviations (published beside them:
   :func:`dpcore.published.published_table`, kind ``percentiles_consistent``).

Tables: ``<name>`` for the cells, ``<name>__<columns>`` for each margin, ``<name>__total`` for ``[]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..mechanisms import Drawer
from ..plan import StatisticSpec

__all__ = ["MARGIN_TABLES", "POST_PROCESSING", "release_hierarchy", "cell_histograms"]

#: the key of a statistic's record entry under which the margins' tables travel to the writer (removed there)
MARGIN_TABLES = "_margin_tables"

#: the record's statement of the post-processing (public text)
POST_PROCESSING = (
    "every level measured with its own share of epsilon; then (post-processing, dpcore.consistency): the "
    "weighted least-squares estimate of every node's bins from all levels (Hay et al. 2010's two passes, one "
    "noise variance per level; published as ls_bin_* with their standard deviation ls_sd), then non-negative "
    "integers that add up exactly from the cells to each margin to the total (the Census TopDown's two stages, "
    "family by family: a non-negative weighted projection onto the parent's count, then controlled rounding; "
    "published as bin_*); the percentiles are read off the integers (eq. 4.2 of Foote et al.) and their "
    "intervals computed from the least-squares estimates"
)


def cell_histograms(engine: Any, spec: StatisticSpec, n_bins: int) -> tuple[pd.DataFrame, np.ndarray]:
    """The cells (their ``by`` labels, in order of first appearance; one cell for the whole table without ``by``)
    and their (cells x bins) counts, from the engine's histogram aggregate."""
    by = list(spec.by)
    hist = engine.histogram(by, spec.bins)
    rows = np.zeros(len(hist), dtype=np.int64)
    if by and len(hist):  # cell ids in order of first appearance; ``cells`` holds each cell's first row's labels
        rows = hist.groupby(by, sort=False, dropna=False).ngroup().to_numpy()
        cells = hist[by].iloc[np.unique(rows, return_index=True)[1]].reset_index(drop=True)
    else:
        cells = hist[by].iloc[:0] if by else pd.DataFrame(index=[0])  # the whole table: one cell, for every input
    counts = np.zeros((len(cells), n_bins), dtype=np.int64)
    if len(hist):
        np.add.at(counts, (rows, hist["bin"].to_numpy()), hist["count"].to_numpy())
    return cells, counts


def _canonical_keys(cells: pd.DataFrame, by: list[str]) -> dict[str, list[Any]]:
    """The cells' labels as hashable values, a missing label as None (NaN is not equal to itself: two cells with
    a missing state would otherwise be two states)."""
    frame = cells[by].astype(object)
    return {c: [None if pd.isna(v) else v for v in frame[c].tolist()] for c in by}


def _node_of_cell(hierarchy: Any, level: int) -> np.ndarray:
    node = np.arange(hierarchy.sizes[0])
    for p in hierarchy.parents[:level]:
        node = p[node]
    return node


def _level_table(
    labels: pd.DataFrame, n: np.ndarray, spec: StatisticSpec, counts: np.ndarray, estimates: np.ndarray, sd: Any
) -> pd.DataFrame:
    """One level's table before its intervals: labels, n, the percentiles read off the consistent counts, the
    counts, the least-squares estimates and their standard deviation."""
    from ..percentiles import percentiles_from_histogram
    from ..published import CONSISTENT_BIN_PREFIX, LEAST_SQUARES_BIN_PREFIX, LEAST_SQUARES_SD

    assert spec.q is not None and spec.bins is not None  # the plan parser sets both for a percentiles statistic
    table = labels.reset_index(drop=True).copy()
    table["n"] = np.asarray(n, dtype=np.int64)
    qs = [float(q) for q in spec.q]
    values = np.zeros((len(table), len(qs)))
    if len(table):
        values = np.atleast_2d(percentiles_from_histogram(counts.astype(float), np.asarray(spec.bins), qs)).reshape(
            len(table), len(qs)
        )
    for j, q in enumerate(qs):
        table["p" + f"{q:g}".replace(".", "_")] = values[:, j]
    m = counts.shape[1]
    extra = {f"{CONSISTENT_BIN_PREFIX}{j + 1:02d}": counts[:, j].astype(np.int64) for j in range(m)}
    extra.update({f"{LEAST_SQUARES_BIN_PREFIX}{j + 1:02d}": estimates[:, j].astype(float) for j in range(m)})
    extra[LEAST_SQUARES_SD] = np.broadcast_to(np.asarray(sd, dtype=float), (len(table),)).copy()
    return pd.concat([table, pd.DataFrame(extra, index=table.index)], axis=1)


def release_hierarchy(
    engine: Any,
    spec: StatisticSpec,
    mechanisms: tuple[Any, ...],
    drawer: Drawer,
    n_of_cells: Callable[[pd.DataFrame], np.ndarray] | None = None,
) -> tuple[pd.DataFrame, dict]:
    """The cells' table and the record entry of a percentiles statistic with margins (module docstring); the
    margins' tables are in the entry under :data:`MARGIN_TABLES` (by table name). ``mechanisms``: one
    :class:`dpcore.mechanisms.HistogramMechanism` per level (cells first), drawn through ``drawer``;
    ``n_of_cells(cells)``: the cells' published n when it is not their rows' count (noisy cell sizes)."""
    from ..consistency import hierarchy_from_keys, make_consistent

    assert spec.margins is not None  # only statistics with margins come here
    by = list(spec.by)
    names, columns = spec.level_names(), spec.level_columns()
    n_bins = len(mechanisms[0].edges) - 1
    cells, counts = cell_histograms(engine, spec, n_bins)
    n_cells = counts.sum(axis=1).astype(np.int64) if n_of_cells is None else np.asarray(n_of_cells(cells))
    tables: dict[str, pd.DataFrame] = {}
    if len(cells) == 0:  # no cell released (none selected): every level is empty, each level still drawn
        draws = [drawer(mech, np.zeros((0, n_bins), dtype=np.int64)) for mech in mechanisms]
        empty = np.zeros((0, n_bins))
        for name, cols in zip(names, columns, strict=True):
            tables[name] = _level_table(cells[list(cols)], np.zeros(0), spec, empty, empty, np.zeros(0))
    else:
        hierarchy = hierarchy_from_keys(_canonical_keys(cells, by), by, spec.margins)
        true = hierarchy.aggregate(counts)
        draws = [drawer(mech, true[level]) for level, mech in enumerate(mechanisms)]
        fit = make_consistent(
            hierarchy, [np.asarray(d.noisy_counts) for d in draws], [mech.noise_scale for mech in mechanisms]
        )
        n_level = n_cells.astype(np.int64)
        for level, (name, cols) in enumerate(zip(names, columns, strict=True)):
            if level:
                n_level = hierarchy.sum_children(n_level, level)
            # each node labelled by its first cell's values of the level's columns (the cells' own dtypes)
            first = np.unique(_node_of_cell(hierarchy, level), return_index=True)[1]
            labels = cells[list(cols)].iloc[first] if cols else pd.DataFrame(index=range(1))
            tables[name] = _level_table(labels, n_level, spec, fit.counts[level], fit.estimates[level], fit.sd[level])
    info: dict[str, Any] = {
        **mechanisms[0].record(),
        "noise": (
            f"discrete Laplace on every node x bin count of every level, scale 2m/epsilon_l (the level's share); "
            f"levels: {', '.join(f'{n} {m.noise_scale!r}' for n, m in zip(names, mechanisms, strict=True))}"
        ),
        "measurement": draws[0].measurement,
        "privacy_map": draws[0].privacy_map,
        "map_epsilon": sum(float(m.certified_epsilon(d)) for m, d in zip(mechanisms, draws, strict=True)),
        "levels": [
            {
                "name": name,
                "by": list(cols),
                "epsilon": float(mech.epsilon),
                "noise_scale": float(mech.noise_scale),
                "nodes": int(len(tables[name])),
            }
            for name, cols, mech in zip(names, columns, mechanisms, strict=True)
        ],
        "post_processing": POST_PROCESSING,
        "read_off": "eq. (4.2) of Foote et al. on each level's consistent integer histogram (post-processing)",
    }
    info[MARGIN_TABLES] = {name: tables[name] for name in names[1:]}
    return tables[names[0]], info
