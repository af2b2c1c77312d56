"""What the planner plans on when the sidebar's file is a confidential upload: privately, on synthetic data drawn
from a DP snapshot of the file (:mod:`dpcore.snapshot`: charged ``planning_epsilon`` once to the population the
records belong to, stored with its ledger entry and reused on every later visit), so that every chart, memo,
plan and script is post-processing and publishable; or on the raw file, for a data owner exploring on their own
machine, where every number and download is confidential.

The snapshot's cells are the group labels the user declares public (typed, never read from the file: the labels
present in a confidential column are themselves data); records of other labels are left out of it, as a release
leaves out undeclared cells. Its bins span [0, SNAPSHOT_UPPER]; a later visit reuses the
newest snapshot of these records (a new one would cost again)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from dpcore import ledger as ledger_lib
from dpcore import planner as planner_lib
from dpcore import snapshot as snapshot_lib
from dpcore.mechanisms.snapshot import DEFAULT_PLANNING_EPSILON, SnapshotSchema
from ui.common import guard, qp_radio
from ui.planner.accounts import (
    NoLedgerYet,
    dataset_identity,
    find_account,
    ledger_or_ask,
    ledger_place,
    population_for_release,
    upload_fingerprints,
)

__all__ = ["PRIVATE", "RAW", "SOURCE_KEY", "PlanningSource", "source_choice", "planning_source", "newest_snapshot"]

PRIVATE = "Plan privately on a DP snapshot of the file (publishable)"
RAW = "Explore the raw file (not private: everything is confidential)"
SOURCE_KEY = "planner_source"
#: the snapshot's public upper bound (incomes above it count in its top bin): the planner's largest default bound
SNAPSHOT_UPPER = 1_000_000.0
#: said beside every private plan: what the numbers on the page are
PUBLISHABLE_NOTE = (
    "**Planning on a DP snapshot of your file** (ε = {eps:g}, drawn {created}, charged once to the population "
    "*{population}*). Every chart, ε, memo, plan file and script below is computed from the snapshot only "
    "(post-processing of a DP release): **publishable**, and re-planning costs nothing more."
)
RAW_NOTE = (
    "**You are exploring the raw confidential file.** Every number on this page is computed from the real records, "
    "so every chart, memo, plan file and script is **confidential** (for the data owner on their own machine). To "
    "publish how you chose ε, plan privately on a DP snapshot instead."
)


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


def _declared_labels(group_column: str | None) -> tuple[str, ...]:
    if group_column is None:
        return ()
    text = st.text_input(
        f"Public labels of {group_column!r} (the snapshot's cells; comma-separated)",
        key="planner_snapshot_cells",
        help="Typed, never read from the file: which labels exist in a confidential column is itself data. "
        "Records with other labels are left out of the snapshot, as a release leaves out undeclared cells.",
        max_chars=2000,
    )
    return tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))


def source_choice(ds: Any) -> str | None:
    """On a confidential upload, how to plan on it (:data:`RAW` or :data:`PRIVATE`, asked first: the page shows
    nothing read off the records once the private plan is chosen); None for any other data."""
    if not ds.confidential:
        return None
    # the raw file first: the page as the data owner knew it (nothing charged without a choice), the private plan
    # one click away and said at the top
    return str(qp_radio("How to plan on this confidential file", SOURCE_KEY, [RAW, PRIVATE], RAW, horizontal=True))


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
    """The data to plan on (module docstring); None when the page must stop here (no ledger, or the snapshot not
    taken yet: the confirmation is shown)."""
    raw = PlanningSource(values, groups, token, bool(ds.confidential), labels, summary)
    if choice is None:
        return raw
    if choice == RAW:
        st.warning(RAW_NOTE)
        return raw
    url = ledger_lib.default_url()
    db = ledger_or_ask(url)
    if db is None or isinstance(db, NoLedgerYet):
        return None
    acct = None
    with guard(f"the budget account (ledger {ledger_place(url)})"):
        dataset_id, default_label = dataset_identity(ds)
        acct = find_account(db, ds, dataset_id) or False
    if acct is None:  # the guard said what went wrong
        return None
    snap = newest_snapshot(acct, dataset_id) if acct else None
    if snap is None:
        declared = _declared_labels(group_column)
        if group_column is not None and not declared:
            st.info("Type the public labels of the groups to plan by, or choose random groups.")
            return None
        eps = DEFAULT_PLANNING_EPSILON
        name = default_label
        if not acct:
            name = st.text_input(
                "Population: the people these data describe (one budget in the ledger)",
                value=default_label,
                key="planner_snapshot_population",
                max_chars=200,
            )
            cap = float(st.number_input("Total privacy budget of this population (ε cap)", 0.1, 100.0, 3.0, 0.1))
        st.info(
            f"**Planning privately costs ε = {eps:g} of the population's budget, once.** A DP snapshot of the file "
            f"(noisy counts of incomes on public bins, per declared group) is released and charged to *{name}* in "
            "the ledger; synthetic planning data are drawn from it, and every later plan on these records reuses "
            "it for free."
        )
        if not st.button(f"Take the DP snapshot (spend ε = {eps:g})", key="planner_take_snapshot", type="primary"):
            return None
        with guard("the DP snapshot"):
            if not acct:
                acct = population_for_release(db, upload_fingerprints(db, dataset_id), name, cap, 0.0)
            schema = SnapshotSchema(upper=SNAPSHOT_UPPER, cells=declared, planning_epsilon=eps)
            cells = None if group_column is None else ds.frame[group_column].astype(str).to_numpy()
            if cells is not None and cells.size != values.size:
                raise ledger_lib.DPInputError("the group column and the incomes differ in length")
            snap = snapshot_lib.take_snapshot(values, schema, cells=cells, account=acct, source=dataset_id)
        if snap is None:
            return None
    # the page's views plan on the synthetic records alone: no further draws from the snapshot's law (each costs
    # one fit; `dpcore plan` averages a percentile's width over them)
    syn = snapshot_lib.synthetic_data(snap, seed=0, draws=0)
    st.success(
        PUBLISHABLE_NOTE.format(eps=snap.epsilon, created=snap.created, population=getattr(acct, "label", "") or "")
    )
    syn_labels = list(syn.labels)
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
