"""The refusals of a release before its charge, from public facts only: an input with no row, a statistic whose
public cells hold no row, public cells nearly one per row, an output the free space cannot hold; and the warnings
about small public cells. With protected cell sizes nothing one person can change decides a refusal.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from ..plan import ReleasePlan, StatisticSpec
from ..validation import DPInputError
from . import Progress
from .draws import Deferred
from .output import OutputSlot, output_bytes

__all__ = ["input_is_empty", "refuse_undeliverable"]


def _statistic_cells(deferred: Deferred) -> tuple[pd.DataFrame, int]:
    """(one row per cell with its labels, total rows) of one statistic's aggregates: both public (every cell and
    its n are released)."""
    spec = deferred.spec
    frame = deferred.aggregate_frame()
    by = list(spec.by)
    if spec.kind == "percentiles" and by and len(frame):  # one aggregate row per cell and bin
        keys, counts = deferred.cell_counts()
        rows, cells = int(counts.sum()), pd.DataFrame(keys, columns=by)
    elif spec.kind == "percentiles":  # the whole table: one cell, whatever the data
        rows = int(frame["count"].sum()) if len(frame) else 0
        cells = pd.DataFrame(index=range(1))
    else:
        columns = ["n_exposed", "n_reference"] if spec.kind == "relative_risk" else ["n"]
        rows = int(frame[columns].to_numpy().sum()) if len(frame) else 0
        cells = frame[by] if by else pd.DataFrame(index=range(len(frame)))
    return cells, rows


def input_is_empty(plan: ReleasePlan, aggregates: dict[str, Deferred], engine: Any) -> bool:
    """Whether the source has no row at all (a header-only or empty input), asked of the engine only when a
    statistic has no row in its cells. Public: a data set with no row has no neighbour but itself (there is no
    person to replace), so refusing it tells nothing about anyone."""
    if all(_statistic_cells(aggregates[s.name])[1] > 0 for s in plan.statistics):
        return False
    return not engine.has_rows()


def refuse_undeliverable(
    plan: ReleasePlan, aggregates: dict[str, Deferred], slot: OutputSlot, input_empty: bool = False
) -> list[str]:
    """Before the charge: refuse, from public facts only, an input with no row, a statistic whose public cells hold
    no row, and an output the disk cannot hold.

    * An input with no row (``input_empty``, :func:`input_is_empty`) is refused: public (it has no neighbour).
    * A statistic whose cell sizes are public (``cell_sizes = "public"``, or a whole-table statistic other than a
      relative risk: the total n is public under replace-one) and whose cells hold no row is refused: its n is
      published anyway, so the refusal reveals nothing more.
    * A statistic whose cells are protected (``cell_sizes = "noisy"`` with ``by`` or exposure groups) is never
      refused for holding no row: how many rows its cells hold depends on where one person's rows fall (one person
      leaving the only exposed row, or all rows in undeclared cells). It is released: declared cells and exposure
      groups as noisy zeros, DP-selected cells as an empty selection (Laplace threshold mechanism).

    The space estimate uses public cell counts only: the declared cells, the cells of public cell sizes, one for a
    whole table, and none for DP-selected cells (their number before the selection is confidential; a release
    whose selected cells do not fit fails after the charge and says so)."""
    if input_empty:
        raise DPInputError(
            f"the data have no row (a header-only or empty input): nothing to release from "
            f"{plan.income!r}; nothing was charged"
        )
    empty = []
    cells: dict[str, pd.DataFrame] = {}
    for s in plan.statistics:
        cells[s.name], n_rows = _statistic_cells(aggregates[s.name])
        if n_rows == 0 and not plan.cells_private(s):
            empty.append(_empty_statistic_reason(plan, s))
    if empty:
        raise DPInputError(f"{'; '.join(empty)}: nothing to release; nothing was charged")
    warnings = _check_cells(plan, aggregates, cells, slot.progress)
    space_cells = {
        s.name: cells[s.name].iloc[:0] if _cells_selected(plan, s) else cells[s.name] for s in plan.statistics
    }
    try:
        block = os.statvfs(slot.out.parent).f_frsize or 4096
    except OSError:
        block = 4096
    slot.check_space(output_bytes(plan, space_cells, block))
    return warnings


def _cells_selected(plan: ReleasePlan, spec: StatisticSpec) -> bool:
    """True when the statistic's cells are selected with DP (protected cell sizes, ``by``, no declared keys)."""
    return plan.cells_private(spec) and bool(spec.by) and not plan.keys_declared(spec)


def _empty_statistic_reason(plan: ReleasePlan, spec: StatisticSpec) -> str:
    """Why a statistic with public cell sizes has no row to release, said precisely (the input has rows)."""
    if spec.kind == "relative_risk":
        return (
            f"{spec.where} {spec.name!r}: no row of the data has {spec.group!r} = {spec.exposed!r} or "
            f"{spec.reference!r} (both exposure groups are empty)"
        )
    if plan.keys_declared(spec):
        return (
            f"{spec.where} {spec.name!r}: no row of the data is in a cell declared in [keys] (rows of undeclared "
            "cells are dropped)"
        )
    return f"{spec.where} {spec.name!r}: no row of the data is in its cells"


def _check_cells(
    plan: ReleasePlan, aggregates: dict[str, Deferred], cells: dict[str, pd.DataFrame], progress: Progress
) -> list[str]:
    """Before the charge: refuse a ``by`` whose public cells are (nearly) one per row, and warn about small public
    cells.

    Refused (``cell_sizes = "public"`` only): a statistic whose cells are not declared in ``[keys]`` and number
    more than half its rows (:func:`dpcore.cell_keys.nearly_unique_cells`, e.g. ``by = ["pid"]``): it would
    publish every person's cell and n = 1. The cells and their sizes are public there, so the refusal is a function
    of public information. With protected cell sizes the cells are selected with DP, which lists no one-person cell
    (an all-singletons table is released empty); counting the cells there would be a refusal on one person (one
    row moving to a new cell can tip the count over half the rows), so it is not done. Warned
    (``cell_sizes = "public"``): cells, or exposure groups of a relative risk, with fewer rows than the plan's public
    ``small_cell_threshold``."""
    from .. import cell_keys

    for s in plan.statistics:
        if not s.by or plan.keys_declared(s) or plan.cells_private(s):
            continue
        n_rows = _statistic_cells(aggregates[s.name])[1]
        if cell_keys.nearly_unique_cells(len(cells[s.name]), n_rows):
            raise DPInputError(
                f"{s.where} {s.name!r}: 'by' = {list(s.by)} gives nearly one cell per row (more cells "
                f"than half the rows) and cell_sizes = \"public\" would publish each with its exact n: such cells "
                "single out people; declare the public cells in [keys], choose coarser columns or protect the cell "
                "sizes (cell_sizes = \"noisy\"); nothing was charged and nothing was released"
            )
    warnings: list[str] = []
    if plan.cell_sizes != "public" or plan.small_cell_threshold <= 0:
        return warnings
    for s in plan.statistics:
        if not s.has_cells:
            continue
        _, counts = aggregates[s.name].cell_counts()
        small = int(np.count_nonzero((counts > 0) & (counts < plan.small_cell_threshold)))
        if small:
            what = "exposure groups of cells" if s.kind == "relative_risk" else "cells"
            text = (
                f"{s.where} {s.name!r}: {small} {what} with fewer than {plan.small_cell_threshold} rows are "
                "published with their exact n (cell_sizes = \"public\"); a one-person cell's value is that "
                "person's value plus noise at epsilon"
            )
            warnings.append(text)
            progress.say(f"warning: {text}")
    return warnings
