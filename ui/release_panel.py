"""Release mode of the planner page: the real DP release, paid from the durable ledger (dpcore.ledger).

One entry point, :func:`release_panel`, called by ``app_pages/planner.py`` in Release mode.

* The budget account is keyed by the dataset's identity: for an uploaded file,
  ``dpcore.ledger.dataset_fingerprint(file bytes, income column)`` -- re-uploading the same file
  (in a reloaded tab, another session, after a restart) finds its budget. The group column is not part
  of the key: releases by any grouping of the same people spend the same budget. Synthetic / public
  data get a demonstration account keyed by their recipe.
* The cap is asked only before the first release of a dataset (that release creates the account);
  afterwards it is shown, fixed. There is no reset button.
* Spent / remaining are read from the database after the release button was handled, so they are
  never stale.
* The archive lists every past release of the account and exports it (JSON / CSV).
* A release by random groups (the planner's "(random groups A/B/C)" planning device) is refused.

The ledger database is ``dpcore.ledger.open_ledger()``: ``DPCORE_LEDGER_URL`` (``sqlite:///...`` or
``postgresql://...``) or the default SQLite file ``~/.local/share/dpcore/ledger.db``.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Sequence

import pandas as pd
import streamlit as st

from dpcore import budget as B
from dpcore import ledger as L
from dpcore import planner as P
from dpcore import release as R
from dpcore import memo as memo_lib
from ui import memo as memo_html
from ui.common import guard, qp_number
from ui.planner_views import PLAN_KEY

RANDOM_GROUPS_REFUSAL = (
    "A real release cannot use **random groups A/B/C**: they are a planning device drawn with the sidebar seed, "
    "not groups of your data, so numbers released by them describe nobody and would still spend budget. Choose a "
    "group column of your file under *Groups / cells*, or release only statistics without groups "
    "(Gini, mean, count).")
GROUP_KINDS = ("percentiles", "group_medians", "group_means", "ratio")
DELTA_CAPS = [0.0, 1e-12, 1e-10, 1e-9, 1e-8, 1e-6]
DEFAULT_DELTA_CAP = 1e-8


def _round_up(value: float) -> float:
    """ε rounded *up* to 4 decimals (the field's precision), so the release never has less ε than planned."""
    import math

    return math.ceil(float(value) * 1e4 - 1e-9) / 1e4


def release_memo(records: Sequence[Any], acct: Any, entries: Sequence[Any], plan: dict[str, float]) -> str:
    """The decision memo of a release: dataset, ε per statistic against the plan, released values."""
    doc = memo_lib.complete_record(records, acct, entries)
    rows = [{"statistic": P.STAT_KINDS.get(r.get("kind", ""), r.get("statistic")), "ε released": r.get("epsilon"),
             "ε planned": plan.get(r.get("kind", "")), "δ": r.get("delta"), "mechanism": r.get("mechanism")}
            for r in doc["this_release"]]
    released = [{"statistic": r.get("statistic"), "number": lab, "released value": float(v), "ε": r.get("epsilon")}
                for r in doc["this_release"] for lab, v in zip(r.get("labels", []), r.get("released", []))]
    total = float(sum(r.get("epsilon", 0.0) for r in doc["this_release"]))
    eps = {str(r["statistic"]): float(r["ε released"] or 0.0) for r in rows}
    return memo_html.decision_memo_html(
        title="Decision memo: differentially private release", dataset=doc["dataset"], plan_rows=rows,
        total_epsilon=total, cap_epsilon=doc["account"].get("cap_epsilon"), releases=released,
        figures=[memo_html.epsilon_figure(eps, {})],
        notes=[f"Spent on this data so far (every release): ε = {doc['epsilon_spent_in_total']:.4g}."])


def plan_cap_default(plan_total: float) -> float:
    """The cap field's starting value: at least the plan's total (rounded up to 0.1), at least 2."""
    import math

    return max(2.0, math.ceil(plan_total * 10 - 1e-9) / 10) if plan_total > 0 else 2.0


def plan_differences(plan: dict[str, float], chosen: dict[str, float], cap: float) -> list[str]:
    """Sentences for every way the release differs from the plan (ε per statistic, total above the cap)."""
    out = []
    for kind, eps in chosen.items():
        planned = plan.get(kind)
        if planned is not None and abs(eps - _round_up(planned)) > 1e-9:
            effect = "less accurate than planned" if eps < planned else "more accurate than planned, and costs more"
            out.append(f"{P.STAT_KINDS[kind]}: ε = {eps:.4g} instead of the planned {planned:.4g} ({effect}).")
        elif planned is None and plan:
            out.append(f"{P.STAT_KINDS[kind]} was not in the plan (ε = {eps:.4g}, its accuracy was not checked).")
    total = sum(chosen.values())
    if total > cap * (1 + 1e-12):
        out.append(f"The release's total ε = {total:.4g} is above the cap ε = {cap:.4g}: the ledger will refuse it.")
    return out


@st.cache_resource(show_spinner=False, max_entries=4)
def _open_ledger(url: str) -> L.LedgerDB:
    """One LedgerDB per URL (the schema set-up runs once per process)."""
    return L.open_ledger(url)


def _upload_bytes() -> bytes | None:
    uploaded = st.session_state.get("data_upload")
    if uploaded is None or not hasattr(uploaded, "getvalue"):
        return None
    return uploaded.getvalue()


def dataset_identity(ds: Any) -> tuple[str, str]:
    """(dataset id, default label) of the data in use: the file fingerprint for an upload, else a
    demonstration id from the sidebar recipe."""
    from ui.sidebar import current_dataset_key

    key = current_dataset_key()
    if ds.source == "upload":
        memo_key = ("upload", key[1] if len(key) > 1 else None, ds.column)
        memo = st.session_state.get("_release_fingerprint")
        if memo and memo[0] == memo_key:
            return memo[1], ds.name
        raw = _upload_bytes()
        if raw is None:
            raise L.DPInputError("the uploaded file's bytes are not available: upload it again in the sidebar")
        fingerprint = L.dataset_fingerprint(raw, ds.column)
        st.session_state["_release_fingerprint"] = (memo_key, fingerprint)
        return fingerprint, ds.name
    recipe = json.dumps([str(k) for k in key], separators=(",", ":"))
    return "demo:" + hashlib.sha256(recipe.encode()).hexdigest(), f"demonstration data: {ds.name}"


def _cost_text(cost: dict) -> str:
    try:
        return B.PrivacyCost(cost["kind"], epsilon=cost.get("epsilon", 0.0), delta=cost.get("delta", 0.0),
                             rho=cost.get("rho", 0.0)).describe()
    except (KeyError, TypeError, ValueError):
        return str(cost)


def _archive_frame(entries: Sequence[L.Entry]) -> pd.DataFrame:
    rows = []
    for e in entries:
        records = (e.result or {}).get("records", []) if isinstance(e.result, dict) else []
        released = "; ".join(f"{lab}: {float(v)!r}" for r in records for lab, v in zip(r.get("labels", []),
                                                                                  r.get("released", [])))
        rows.append({"entry": e.id, "time (UTC)": e.time[:19].replace("T", " "), "release": e.label,
                     "cost": e.cost.describe(),
                     "released values": released if e.result is not None else "not revealed (lost after the charge)"})
    return pd.DataFrame(rows)


def _metrics(box: Any, acct: L.Account | None, cap: float, entries: list[L.Entry]) -> None:
    c1, c2, c3 = box.columns(3)
    if acct is None:
        c1.metric("Spent so far", "ε = 0")
        c2.metric("Remaining", f"ε = {cap:.4g}")
        c3.metric("Cap (fixed at the first release)", f"ε = {cap:.4g}")
        return
    spent = acct.spent(entries)
    c1.metric("Spent so far", f"ε = {spent['epsilon']:.4g}" + (f", δ = {spent['delta']:.2g}" if spent['delta'] else ""))
    c2.metric("Remaining", f"ε = {max(0.0, acct.cap_epsilon - spent['epsilon']):.4g}")
    c3.metric("Cap (fixed)", acct.cap.describe())


def release_panel(ds: Any, kinds: Sequence[str], build_statistic: Callable[[str], P.PlannedStatistic],
                  allocation: dict[str, float], *, group_column: str | None, random_groups: bool) -> None:
    """Draw Release mode: account, cap, ε per statistic, the release button, the records, the archive.

    ds: the sidebar's IncomeData; kinds: planned statistic kinds; build_statistic(kind): the planned
    statistic on the data in use; allocation: default ε per kind (the budget-first split);
    group_column: the group column used (None with random groups); random_groups: True when the
    page's groups are the random planning groups (a release is then refused for group statistics).
    """
    st.markdown("### Make the real release")
    if not ds.confidential and _upload_bytes() is not None and st.session_state.get("data_lookalike"):
        st.warning("You are planning on the **synthetic look-alike** of your file, so a release here would be a "
                   "demonstration on synthetic data. To release from your file, switch off *Plan on a synthetic "
                   "look-alike instead* in the sidebar (the plan's ε per statistic is kept).")
    elif not ds.confidential:
        st.info("The data in use are **not confidential** (synthetic or public), so this is a demonstration of the "
                "release workflow, with its own demonstration account in the ledger. To release from your "
                "confidential file, upload it in the sidebar.")
    st.markdown("The release draws its noise from the operating system's cryptographic random generator "
                "(`os.urandom`), never from the seed in the sidebar, so it cannot be replayed or guessed. "
                "True values are never shown: only the released (noisy) numbers. The budget is charged in the "
                "ledger database **before** any noise is drawn.")
    opened = None
    with guard("the privacy-budget ledger"):
        db = _open_ledger(L.default_url())
        dataset_id, default_label = dataset_identity(ds)
        opened = (db, dataset_id, default_label, db.find_account(dataset_id))
    if opened is None:
        st.caption(f"Set `{L.ENV_VAR}` to a `sqlite:///...` file or a `postgresql://...` server.")
        return
    db, dataset_id, default_label, acct = opened
    st.session_state["planner_ledger"] = acct

    plan = {k: float(v) for k, v in (st.session_state.get(PLAN_KEY) or {}).items() if k in kinds}
    plan_total = sum(plan.values())
    if acct is None:
        st.markdown("**No release has been made from these data yet.** The first release creates their budget "
                    "account with the cap below; **the cap is then fixed for good** (no reset: a different cap "
                    "would need different data).")
        cap = float(qp_number("Total privacy budget of this data (ε cap)", "planner_cap",
                              plan_cap_default(plan_total), min_value=0.001,
                              max_value=100.0, step=0.1,
                              help="The ledger refuses any release that would bring the total spent above this. "
                                   "Fixed when the first release creates the account."))
        cap_delta = float(st.selectbox(
            "δ cap of this data", DELTA_CAPS, index=DELTA_CAPS.index(DEFAULT_DELTA_CAP), key="planner_cap_delta",
            format_func=lambda d: "0 (pure ε-DP only)" if d == 0 else f"{d:g}",
            help="Only mechanisms with a small certified failure probability (an (ε, δ) cost) spend δ; pure ε-DP "
                 "releases spend none. Fixed with the cap."))
        label = st.text_input("Name of this dataset in the ledger", value=default_label,
                              key=f"planner_account_label_{dataset_id[:16]}", max_chars=200)
    else:
        cap, cap_delta, label = acct.cap_epsilon, acct.cap_delta, acct.label
        st.markdown(f"**Budget account:** {acct.label or 'unnamed'} · created {acct.created[:19].replace('T', ' ')} "
                    f"UTC · cap {acct.cap.describe()} (fixed)")
    st.caption("The account is found by "
               + ("the SHA-256 fingerprint of the uploaded file and its income column "
                  f"`{ds.column}`: uploading the same file again finds this budget." if ds.source == "upload"
                  else "the sidebar's data recipe.")
               + (f" Release records name it by its public id `{acct.public_id}` (a keyed hash that reveals "
                  "nothing about the file)." if acct is not None else ""))
    metrics_box = st.container()

    eps_items = []
    if plan:
        st.markdown("**ε per statistic: from your plan** (Plan mode, *Accuracy first*). Change them here if you must; "
                    "any difference from the plan is shown below.")
    for kind in kinds:
        start = plan.get(kind, allocation.get(kind, 0.1))
        eps_k = qp_number(f"ε for {P.STAT_KINDS[kind]}", f"planner_rel_eps_{kind}",
                          float(_round_up(start)), min_value=0.0001, max_value=100.0, step=0.01,
                          format="%.4f")
        eps_items.append((kind, float(eps_k)))
    total_eps = sum(e for _, e in eps_items)
    st.caption(f"This release costs ε = {total_eps:.4g} in total (sequential composition).")
    differences = plan_differences(plan, dict(eps_items), cap)
    for message in differences:
        st.warning(message)
    if not plan:
        st.caption("No accuracy-first plan in this session: the ε fields start from the budget-first split. "
                   "Plan first (Plan mode) to start from the smallest ε that meets your targets.")
    grouped = [k for k in kinds if k in GROUP_KINDS]
    refused = bool(random_groups and grouped)
    if refused:
        st.error(RANDOM_GROUPS_REFUSAL + " Statistics that need groups here: "
                 + ", ".join(P.STAT_KINDS[k] for k in grouped) + ".")
    confirm = st.checkbox("I understand that this spends privacy budget that cannot be recovered.",
                          key="planner_confirm", disabled=refused)
    if st.button("Make the release", type="primary", disabled=refused or not confirm, key="planner_release"):
        with guard("the release"):
            if refused:  # never reached through the disabled button; kept for direct session-state clicks
                raise L.DPInputError(RANDOM_GROUPS_REFUSAL)
            stats = [(build_statistic(kind), eps) for kind, eps in eps_items]
            account = db.account(dataset_id, cap_epsilon=cap, label=str(label or default_label).strip(),
                                 cap_delta=cap_delta)
            identity = {"income_column": ds.column, "group_column": group_column, "n": int(ds.n),
                        "source": ds.source, "file_name": ds.name if ds.source == "upload" else None}
            records = R.make_release(stats, account, dataset=identity)
            st.session_state["planner_records"] = records
            st.session_state["planner_records_account"] = dataset_id
            st.success("Released. The numbers below are the only ones you may publish.")
        acct = db.find_account(dataset_id)  # after the release: the spent budget is read again
        st.session_state["planner_ledger"] = acct
    entries = acct.entries() if acct is not None else []  # one snapshot, read after the release
    _metrics(metrics_box, acct, cap, entries)

    records = st.session_state.get("planner_records")
    if records and st.session_state.get("planner_records_account") == dataset_id:
        rows = [{"statistic": r.statistic, "number": lab, "released value": v, "ε": r.epsilon, "δ": r.delta,
                 "mechanism": r.mechanism, "time (UTC)": r.timestamp}
                for r in records for lab, v in zip(r.labels, r.released)]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        if acct is not None:
            remaining = max(0.0, acct.cap_epsilon - acct.spent(entries)["epsilon"])
            st.warning(f"**Every further release spends more.** Spent so far on this data: {acct.describe(entries)}; "
                       f"remaining ε = {remaining:.4g}. Releasing the same statistic again and "
                       "averaging would reduce the noise, which is exactly why it costs budget again.")
        c1, c2, c3 = st.columns(3)
        c1.download_button("Download the release record (JSON)",
                           memo_lib.complete_record_json(records, acct, entries).encode(),
                           file_name="dp_release_record.json", mime="application/json", key="planner_dl_json",
                           help="This release, every earlier release of the account, the dataset identity (file "
                                "name, columns, n), mechanisms, (ε, δ), software version. Not the file's "
                                "fingerprint (a hash of confidential data stays in the ledger).")
        c2.download_button("Download the released values (CSV)", R.records_to_csv(records).encode(),
                           file_name="dp_released_values.csv", mime="text/csv", key="planner_dl_relcsv")
        c3.download_button("Download the decision memo (HTML)", release_memo(records, acct, entries, plan).encode(),
                           file_name="dp_release_memo.html", mime="text/html", key="planner_dl_memo_release")

    if acct is not None:
        if entries:
            st.markdown(f"**Archive: every release from these data** ({len(entries)}; append-only, kept in the "
                        "ledger database)")
            st.dataframe(_archive_frame(entries), hide_index=True, width="stretch")
            c1, c2 = st.columns(2)
            c1.download_button("Export the archive (JSON)", acct.export("json", entries).encode(),
                               file_name="dp_release_archive.json", mime="application/json",
                               key="planner_archive_json")
            c2.download_button("Export the archive (CSV)", acct.export("csv", entries).encode(),
                               file_name="dp_release_archive.csv", mime="text/csv", key="planner_archive_csv")
    st.caption(f"Ledger: {db.describe()} (set `{L.ENV_VAR}` to use another SQLite file or a shared PostgreSQL "
               "server). A real release is not reproducible by design (its noise is not seeded); the JSON record is "
               "its audit trail: dataset fingerprint, statistic, released values, mechanism, all public parameters, "
               "ε and δ, time, dpcore version.")
