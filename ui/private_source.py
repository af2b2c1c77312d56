"""What a page computes on when the sidebar's file is a confidential upload (the planner and the method pages: Gini,
percentiles, group means): privately, on synthetic data drawn from a DP snapshot of the file (:mod:`dpcore.snapshot`:
charged ``planning_epsilon`` once to the population the records belong to, stored with its ledger entry and reused
on every later visit of any page), so that every chart, memo, plan and download is post-processing and publishable;
or on the raw file, for a data owner exploring on their own machine, where every number and download is
confidential.

The snapshot's cells are the group labels the user declares public (typed, never read from the file: the labels
present in a confidential column are themselves data); records of other labels are left out of it, as a release
leaves out undeclared cells. Its bins span [0, SNAPSHOT_UPPER]; a later visit reuses the newest snapshot of these
records, whatever its cells (a new one would cost again), so a page finds the snapshot another page took."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import ledger as ledger_lib
from dpcore import planner as planner_lib
from dpcore import snapshot as snapshot_lib
from dpcore.data import IncomeData
from dpcore.mechanisms.snapshot import DEFAULT_PLANNING_EPSILON, SnapshotSchema
from ui.accounts import (
    NoLedgerYet,
    dataset_identity,
    find_account,
    ledger_or_ask,
    ledger_place,
    population_for_release,
    run_to_the_end,
    upload_fingerprints,
    wait_for_work_in_progress,
)
from ui.common import guard, mark_downloads, qp_radio
from ui.notices import outcome_to_show

__all__ = [
    "PRIVATE",
    "RAW",
    "SOURCE_KEY",
    "PlanningSource",
    "source_choice",
    "private_snapshot",
    "planning_source",
    "private_dataset",
    "newest_snapshot",
    "page_data",
    "is_snapshot",
    "PRIVATE_SCRIPT_NOTE",
    "UNGROUPED_NOTE",
]

PRIVATE = "Plan privately on a DP snapshot of the file (publishable)"
RAW = "Explore the raw file (not private: everything is confidential)"
#: the planner's radio; each method page has its own (``<page>_source``), so that no page is private unasked
SOURCE_KEY = "planner_source"
#: the snapshot's public upper bound (incomes above it count in its top bin): the planner's largest default bound
SNAPSHOT_UPPER = 1_000_000.0
#: the column of the declared cells in a method page's synthetic data (a stored snapshot keeps its labels, not the
#: name of the file's column they came from)
CELL_COLUMN = "declared cell (DP snapshot)"
#: said beside every private plan: what the numbers on the page are
PUBLISHABLE_NOTE = (
    "**Planning on a DP snapshot of your file** (ε = {eps:g}, drawn {created}, charged once to the population "
    "*{population}*). Every chart, ε, memo, plan file and script below is computed from the snapshot only "
    "(post-processing of a DP release): **publishable**, and re-planning costs nothing more."
)
#: the same on a method page, whose script would recompute on the file itself (so it is not offered)
PAGE_PUBLISHABLE_NOTE = (
    "**Planning on a DP snapshot of your file** (ε = {eps:g}, drawn {created}, charged once to the population "
    "*{population}*). Every chart, number and download below is computed from synthetic data drawn from the "
    "snapshot (post-processing of a DP release): **publishable**, and every page reuses it at no further cost."
)
#: said beside a private plan whose snapshot does not resolve its top bins (dpcore.snapshot.resolved_upper)
TAIL_NOTE = (
    "Above about {upper:,.0f} the snapshot's bins hold fewer people than their noise: the synthetic incomes there "
    "follow the fitted tail, not your file. A number that depends on them is known only roughly, such as the "
    "clipping bias of a clip bound above it: a relative error target may then read as unreachable here while the "
    "file itself would meet it. Plan such a target with a clip bound below it, or relax it."
)
RAW_NOTE = (
    "**You are exploring the raw confidential file.** Every number on this page is computed from the real records, "
    "so every chart, memo, plan file and script is **confidential** (for the data owner on their own machine). To "
    "publish how you chose ε, plan privately on a DP snapshot instead."
)
#: a stored snapshot taken without cells (on a page that did not group) cannot plan by a column's groups
UNGROUPED_NOTE = (
    "The stored DP snapshot of this file declared no groups, so it cannot plan by groups: its records are one cell. "
    "(A second snapshot, by groups, would cost ε again; when taking one, choose its group column.)"
)
#: the script a private method page does not offer (it would read the file itself)
PRIVATE_SCRIPT_NOTE = (
    "The reproducible script recomputes this view from the file itself, so it is offered only when exploring the "
    "raw file (confidential); the charts and downloads above are publishable."
)
#: the ``source`` of the data :func:`private_dataset` returns for a snapshot (synthetic, publishable)
SNAPSHOT_SOURCE = "snapshot"
NO_GROUPS = "(none: the whole file is one cell)"
#: kept by the snapshot's panel: what its ledger button did, said after the rerun
SNAPSHOT_OUTCOME = "_snapshot_outcome"


@dataclass(frozen=True)
class PlanningSource:
    """The data the page plans on: incomes, group labels (None without groups), the cache token, whether the
    numbers are confidential, the group labels the settings show, and the dataset summary the memos state."""

    values: np.ndarray
    groups: np.ndarray | None
    token: str
    confidential: bool
    labels: list[str]
    summary: dict[str, Any]


def newest_snapshot(acct: Any, source: str) -> snapshot_lib.Snapshot | None:
    """The newest snapshot charged to ``acct`` for the records ``source`` (any settings), or None."""
    for entry in reversed(acct.entries()):
        rec, result = entry.record, entry.result
        if (
            isinstance(rec, dict)
            and rec.get("kind") == snapshot_lib.SNAPSHOT_RECORD_KIND
            and rec.get("source") == source
            and isinstance(result, dict)
            and "snapshot" in result
        ):
            return snapshot_lib.snapshot_from_json(result["snapshot"])
    return None


def _declared_labels(group_column: str | None, key: str) -> tuple[str, ...]:
    if group_column is None:
        return ()
    text = st.text_input(
        f"Public labels of {group_column!r} (the snapshot's cells; comma-separated)",
        key=f"{key}_snapshot_cells",
        help="Typed, never read from the file: which labels exist in a confidential column is itself data. "
        "Records with other labels are left out of the snapshot, as a release leaves out undeclared cells.",
        max_chars=2000,
    )
    return tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))


def source_choice(ds: Any, key: str = SOURCE_KEY) -> str | None:
    """On a confidential upload, how to plan on it (:data:`RAW` or :data:`PRIVATE`, asked first: the page shows
    nothing read off the records once the private plan is chosen); None for any other data (no widget drawn,
    nothing read: the choice costs nothing without an upload)."""
    if not ds.confidential:
        return None
    # the raw file first: the page as the data owner knew it (nothing charged without a choice), the private plan
    # one click away and said at the top
    return str(qp_radio("How to plan on this confidential file", key, [RAW, PRIVATE], RAW, horizontal=True))


def private_snapshot(
    ds: Any, values: np.ndarray, group_column: str | None, key: str, group_choices: Sequence[str] = ()
) -> tuple[snapshot_lib.Snapshot, Any] | None:
    """(the snapshot of the upload ``ds``, its population account): the newest one stored for these records,
    else one taken now after the confirmation (its cells: the labels of ``group_column`` typed as public, or of
    the column chosen here among ``group_choices``, the file's column names); None when the page must stop here
    (no ledger, labels to type, or the confirmation not given). ``key`` prefixes the widgets' keys (one set per
    page)."""
    wait_for_work_in_progress()  # a snapshot another run of this session is taking: look for it after that
    if (outcome := outcome_to_show(SNAPSHOT_OUTCOME)) is not None:
        st.success(outcome[1])
    url = ledger_lib.default_url()
    db = ledger_or_ask(url, SNAPSHOT_OUTCOME)
    if db is None or isinstance(db, NoLedgerYet):
        return None
    acct = None
    with guard(f"the budget account (ledger {ledger_place(url)})"):
        dataset_id, default_label = dataset_identity(ds)
        acct = find_account(db, ds, dataset_id) or False
    if acct is None:  # the guard said what went wrong
        return None
    snap = newest_snapshot(acct, dataset_id) if acct else None
    if snap is not None:
        return snap, acct
    if group_column is None and group_choices:
        chosen = st.selectbox(
            "Group column of the snapshot (its cells)",
            [NO_GROUPS, *group_choices],
            key=f"{key}_snapshot_group",
            help="The snapshot's incomes are counted per declared label of this column; later pages group by it.",
        )
        group_column = None if chosen == NO_GROUPS else str(chosen)
    declared = _declared_labels(group_column, key)
    if group_column is not None and not declared:
        st.info("Type the public labels of the groups to plan by, or choose random groups.")
        return None
    eps = DEFAULT_PLANNING_EPSILON
    name = default_label
    if not acct:
        name = st.text_input(
            "Population: the people these data describe (one budget in the ledger)",
            value=default_label,
            key=f"{key}_snapshot_population",
            max_chars=200,
        )
        cap = float(
            st.number_input(
                "Total privacy budget of this population (ε cap)", 0.1, 100.0, 3.0, 0.1, key=f"{key}_snapshot_cap"
            )
        )
    st.info(
        f"**Planning privately costs ε = {eps:g} of the population's budget, once.** A DP snapshot of the file "
        f"(noisy counts of incomes on public bins, per declared group) is released and charged to *{name}* in "
        "the ledger; synthetic planning data are drawn from it, and every later plan on these records, on any "
        "page, reuses it for free."
    )
    if not st.button(f"Take the DP snapshot (spend ε = {eps:g})", key=f"{key}_take_snapshot", type="primary"):
        return None
    taken = None

    def charge_and_take() -> tuple[Any, Any]:  # to its end, whatever the user clicks meanwhile (run_to_the_end)
        account = acct or population_for_release(db, upload_fingerprints(db, dataset_id), name, cap, 0.0)
        schema = SnapshotSchema(upper=SNAPSHOT_UPPER, cells=declared, planning_epsilon=eps)
        cells = None if group_column is None else ds.frame[group_column].astype(str).to_numpy()
        if cells is not None and cells.size != values.size:
            raise ledger_lib.DPInputError("the group column and the incomes differ in length")
        return snapshot_lib.take_snapshot(values, schema, cells=cells, account=account, source=dataset_id), account

    with guard("the DP snapshot"):
        taken = run_to_the_end(charge_and_take)
    return taken


def _synthetic(snap: snapshot_lib.Snapshot) -> snapshot_lib.PlanningData:
    """The snapshot's synthetic data (seed 0: every page and rerun sees the same records), drawn once per session
    and snapshot (the histogram fit takes a while; a rerun must not redo it)."""
    memo_key = (snap.created, snap.noisy_histogram.tobytes())
    memo = st.session_state.get("_snapshot_synthetic")
    if memo is not None and memo[0] == memo_key:
        return memo[1]
    # the pages plan on the synthetic records alone: no further draws from the snapshot's law (each costs a fit;
    # `dpcore plan` averages a percentile's width over them)
    syn = snapshot_lib.synthetic_data(snap, seed=0, draws=0)
    st.session_state["_snapshot_synthetic"] = (memo_key, syn)
    return syn


def planning_source(
    ds: Any,
    choice: str | None,
    values: np.ndarray,
    groups: np.ndarray | None,
    labels: list[str],
    token: str,
    group_column: str | None,
    summary: dict[str, Any],
    seed: int,
) -> PlanningSource | None:
    """The data the planner plans on (module docstring); None when the page must stop here (no ledger, or the
    snapshot not taken yet: the confirmation is shown)."""
    raw = PlanningSource(values, groups, token, bool(ds.confidential), labels, summary)
    if choice is None:
        return raw
    if choice == RAW:
        st.warning(RAW_NOTE)
        return raw
    taken = private_snapshot(ds, values, group_column, "planner")
    if taken is None:
        return None
    snap, acct = taken
    syn = _synthetic(snap)
    st.success(
        PUBLISHABLE_NOTE.format(eps=snap.epsilon, created=snap.created, population=getattr(acct, "label", "") or "")
    )
    if syn.resolved_upper is not None:
        st.caption(TAIL_NOTE.format(upper=syn.resolved_upper))
    syn_labels = list(syn.labels)
    if group_column is not None and not snap.schema.cells:
        st.info(UNGROUPED_NOTE)
    if group_column is not None and groups is not None:  # the declared groups
        syn_groups: np.ndarray | None = syn.cells.astype(str)
    elif groups is not None:  # random planning groups, drawn on the synthetic records
        syn_groups = planner_lib.planning_groups(syn.values.size, seed=seed)
        syn_labels = sorted(set(syn_groups.tolist()))
    else:
        syn_groups = None
    n_syn = int(syn.values.size)
    private_summary = {
        "name": summary.get("name", ""),
        "income column": summary.get("income column", ""),
        "n": n_syn if math.isfinite(n_syn) else 0,
        "source": f"synthetic data from a DP snapshot of the uploaded file (ε = {snap.epsilon:g}, {snap.created})",
    }
    return PlanningSource(
        np.asarray(syn.values, dtype=float),
        syn_groups,
        f"snapshot:{snap.created}:{token}",
        False,
        syn_labels,
        private_summary,
    )


def private_dataset(ds: IncomeData, choice: str | None, key: str) -> IncomeData | None:
    """The data set a method page computes on: ``ds`` itself for any data but a confidential upload and for the
    raw file (said confidential), else the synthetic records of the upload's DP snapshot (:func:`private_snapshot`)
    as a non-confidential :class:`IncomeData` (its declared cells, if any, as the group column
    :data:`CELL_COLUMN`); None when the page must stop here. The page then needs no other change: every chart and
    download it draws from the returned data is publishable when they are the snapshot's.

    Taking the snapshot, every page offers the file's other columns as its cells (none by default), even a page
    that does not group: the snapshot is charged once and every page reuses it, so the planner and the group
    means can only plan by groups it declared."""
    if choice is None:
        return ds
    if choice == RAW:
        st.warning(RAW_NOTE)
        return ds
    columns = [] if ds.frame is None else [str(c) for c in ds.frame.columns if str(c) != ds.column]
    taken = private_snapshot(ds, ds.values, None, key, columns)
    if taken is None:
        return None
    snap, acct = taken
    syn = _synthetic(snap)
    st.success(
        PAGE_PUBLISHABLE_NOTE.format(
            eps=snap.epsilon, created=snap.created, population=getattr(acct, "label", "") or ""
        )
    )
    if syn.resolved_upper is not None:
        st.caption(TAIL_NOTE.format(upper=syn.resolved_upper))
    values = np.asarray(syn.values, dtype=float)
    frame = None
    if snap.schema.cells:  # the declared cells are public: a column to group by
        frame = pd.DataFrame({ds.column: values, CELL_COLUMN: syn.cells.astype(str)})
    return IncomeData(
        values=values,
        name=f"synthetic data from a DP snapshot of {ds.name} (ε = {snap.epsilon:g}, {snap.created})",
        source=SNAPSHOT_SOURCE,
        column=ds.column,
        confidential=False,
        frame=frame,
    )


def page_data(ds: IncomeData, page: str) -> IncomeData | None:
    """A method page's data, in one call: on a confidential upload the radio (``<page>_source``, the raw file by
    default: nothing charged without a choice), then :func:`private_dataset`; every download the page draws from
    now on marked "confidential" when the data are the upload's records (:func:`ui.common.mark_downloads`). None
    when the page must stop here (the snapshot's confirmation is shown). Without an upload: ``ds``, no widget."""
    data = private_dataset(ds, source_choice(ds, f"{page}_source"), page)
    mark_downloads("confidential" if data is not None and data.confidential else None)
    return data


def is_snapshot(data: Any) -> bool:
    """Whether a page's ``data`` are the synthetic records of an upload's DP snapshot (:func:`private_dataset`)."""
    return getattr(data, "source", None) == SNAPSHOT_SOURCE
