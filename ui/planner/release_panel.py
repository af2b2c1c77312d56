"""Release mode of the planner page: the real DP release, paid from the durable ledger (dpcore.ledger).

One entry point, :func:`release_panel`, called by ``app_pages/planner.py`` in Release mode. What a release
would use (ε per statistic, the cap, the declared groups) is :func:`ui.planner.choices.release_choices`: the
panel's fields start from it and the plan file of Plan mode (``ui.planner.views``) is written from it, so the
downloaded plan is the release this panel makes. The ledger, the accounts and the identity of the data are
:mod:`ui.accounts`; the session state both modes share is :mod:`ui.planner.plan_state`.

* One budget per population, shared with the command line: an uploaded file is a *source* attached to
  a population (the people it describes) by the record fingerprint of its parsed records
  (``dpcore.ledger.dataset_fingerprint(frame)``: row order, line ends, quoting, encoding, file format
  and the income column do not change it). Re-uploading the same records (a re-saved, reordered or
  converted copy, another income column) finds the same population; so does the command line's
  release of the same records (same ledger: ``DPCORE_LEDGER_URL`` or the default file). The first
  release of records not attached yet names the population: an existing one (its cap applies) or a new
  one registered with the cap typed here. An upload whose bytes keyed an account of an older ledger
  (``dpcore.ledger.file_bytes_fingerprint``) joins that account's population. Synthetic / public
  data get a demonstration account keyed by their recipe; the panel says which account it shows.
* The ledger is never created silently: a missing ledger is offered once, with a button
  (``dpcore.ledger.open_ledger(create=False)``, then ``init_ledger``); a ledger fault is an ``st.error``
  naming the ledger; a wait for another release's lock is said while it lasts.
* The cap is asked only before the first release of a dataset (that release creates the account);
  afterwards it is shown, fixed. There is no reset button.
* **One click, one charge.** The button's click is a request (a callback) that is honoured only with
  the confirmation ticked *for this release*: every release moves a counter that renames the
  confirmation box (a new, unticked one) and invalidates the clicks bound to the old counter. A double
  click's second message still carries the old box ticked and the old counter (the browser sent it
  before it saw the release), so it charges nothing. The release runs at the end of the run, after
  the button was drawn disabled, then the page is drawn again from the ledger, so every status line
  reads the database after the release.
* Over the cap, the button is disabled and the reason is said before a click.
* The archive lists every past release of the account and exports it (JSON / CSV).
* A release by random groups (the planner's "(random groups A/B/C)" planning device) is refused.
* Groups are public or not released: group statistics need the group labels declared public (typed, not read
  from the file; the groups listed are the declared ones, rows of other groups left out) and the group sizes
  declared public (the PSEO assumption), because the planner's group mechanisms divide by exact group sizes.
  DP group selection with noisy sizes (``dpcore.cell_keys``) is the command line's (a plan without ``[keys]``).
* No row is left out for a missing income: the rows the sidebar's cleaning removed are put back at each
  statistic's public lower bound (``dpcore.release.with_missing_incomes``), as the command line does.

The ledger database is ``DPCORE_LEDGER_URL`` (``sqlite:///...`` or ``postgresql://...``) or the
default SQLite file ``~/.local/share/dpcore/ledger.db`` (``dpcore.ledger.default_url``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import budget as budget_lib
from dpcore import ledger as ledger_lib
from dpcore import memo as memo_lib
from dpcore import planner as planner_lib
from dpcore import release as release_lib
from dpcore import release_card
from ui import memo as memo_html
from ui.accounts import (
    WAIT_NOTE,
    NoLedgerYet,
    dataset_identity,
    find_account,
    is_source_fingerprint,
    ledger_or_ask,
    ledger_place,
    missing_income_rows,
    population_for_release,
    run_to_the_end,
    upload_bytes,
    upload_fingerprints,
    wait_for_work_in_progress,
)
from ui.common import guard, qp_number
from ui.notices import outcome_to_show
from ui.planner.choices import (
    CAP_KEY,
    GROUP_KINDS,
    LABELS_KEY,
    LABELS_PUBLIC_KEY,
    RANDOM_GROUPS_REFUSAL,
    SIZES_PUBLIC_KEY,
    eps_key,
    group_declaration,
    large_epsilon_warning,
    plan_differences,
    release_choices,
    release_plan,
    round_up,
)
from ui.planner.plan_state import (
    CONFIDENTIAL_PLAN_NOTE,
    PLAN_TARGETS_KEY,
    RELEASE_COUNTER,
    RELEASE_OUTCOME,
    RELEASE_REQUEST,
)

DELTA_CAPS = [0.0, 1e-12, 1e-10, 1e-9, 1e-8, 1e-6]
DEFAULT_DELTA_CAP = 1e-8
CONFIRM_LABEL = "I understand that this spends privacy budget that cannot be recovered."


def confirm_key(counter: int) -> str:
    """The confirmation box of release number ``counter`` of this session (a new box for every release)."""
    return "planner_confirm" if counter == 0 else f"planner_confirm_{counter}"


# ---------------------------------------------------------------------------------------------
# What a release would use: one function for the panel and the downloaded plan
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# The ledger: opened, never created silently; lock waits said
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Dataset identity, memo, archive
# ---------------------------------------------------------------------------------------------


def release_accuracy(
    kind: str,
    released: float | None,
    plan: dict[str, float],
    targets: dict[str, str],
    *,
    plan_confidential: bool = False,
) -> str:
    """What the released ε buys, in the plan's public terms: its accuracy target when the release has at
    least the planned ε (the target was met on the planning data at that ε), else what is missing. With
    ``plan_confidential`` (solved on the confidential file) the planned ε is not named."""
    planned, target = plan.get(kind), targets.get(kind)
    if planned is None or target is None:
        return "not planned: its accuracy was not checked"
    if plan_confidential:
        return (
            f"target {target}: the ε it needs was solved on the confidential file (not a DP output, not in this memo)"
        )
    if released is not None and released >= round_up(planned) - 1e-12:
        return f"{target} (the plan's target, met at ε = {planned:.4g})"
    return f"less than planned: {target} needs ε = {planned:.4g}"


def release_memo(
    records: Sequence[Any],
    acct: Any,
    entries: Sequence[Any],
    plan: dict[str, float],
    targets: dict[str, str] | None = None,
    *,
    plan_confidential: bool = False,
) -> str:
    """The decision memo of a release: dataset, ε per statistic against the plan and the accuracy it buys,
    released values. ``plan_confidential``: the plan was solved on the confidential file; its ε are
    computed from the records, so the memo shows only the released (typed) ε and says why."""
    doc = memo_lib.complete_record(records, acct, entries)
    targets = targets or {}

    def planned_cell(kind: str) -> Any:
        if plan_confidential and kind in plan:
            return "confidential (solved on the confidential file)"
        return plan.get(kind)

    rows = [
        {
            "statistic": planner_lib.STAT_KINDS.get(r.get("kind", ""), r.get("statistic")),
            "ε released": r.get("epsilon"),
            "ε planned": planned_cell(r.get("kind", "")),
            "accuracy it buys": release_accuracy(
                r.get("kind", ""), r.get("epsilon"), plan, targets, plan_confidential=plan_confidential
            ),
            "δ": r.get("delta"),
            "mechanism": r.get("mechanism"),
        }
        for r in doc["this_release"]
    ]
    released = [
        {"statistic": r.get("statistic"), "number": lab, "released value": float(v), "ε": r.get("epsilon")}
        for r in doc["this_release"]
        for lab, v in zip(r.get("labels", []), r.get("released", []), strict=True)
    ]
    total = float(sum(r.get("epsilon", 0.0) for r in doc["this_release"]))
    eps = {str(r["statistic"]): float(r["ε released"] or 0.0) for r in rows}
    return memo_html.decision_memo_html(
        title="Decision memo: differentially private release",
        dataset=doc["dataset"],
        plan_rows=rows,
        total_epsilon=total,
        cap_epsilon=doc["account"].get("cap_epsilon"),
        releases=released,
        figures=[memo_html.epsilon_figure(eps, {})],
        notes=[f"Spent on this data so far (every release): ε = {doc['epsilon_spent_in_total']:.4g}."],
    )


def _readable(value: float) -> str:
    """A released number as people read it: thousands separators for incomes (no decimals when the published value
    has none: its honest digits), 6 significant digits otherwise."""
    if abs(value) >= 1000:
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"
    return f"{value:.6g}"


def released_table(records: Sequence[Any]) -> Any:
    """The released numbers as a static table that wraps to the page (the time is in the archive and the
    record; a grid with the mechanism and time columns scrolled sideways, 1,092 px in 818)."""
    rows = []
    for r in records:
        lows = r.released_lower or (None,) * len(r.released)
        ups = r.released_upper or (None,) * len(r.released)
        level = f"{100 * r.interval_level:g}% interval" if r.interval_level else "interval"
        for lab, v, lo, hi in zip(r.labels, r.released, lows, ups, strict=True):
            if lo is not None and hi is not None and not (math.isfinite(lo) and math.isfinite(hi)):
                lo = hi = None  # a cell with no row has no interval
            shown = "—" if lo is None or hi is None else f"{_readable(lo)} to {_readable(hi)}"
            rows.append(
                {
                    "statistic": r.statistic,
                    "number": lab,
                    "released value": float(v),
                    "interval (from the release alone)": f"{shown} ({level})" if lo is not None else shown,
                    "ε": r.epsilon,
                    "δ": r.delta,
                    "mechanism": r.mechanism,
                }
            )
    frame = pd.DataFrame(rows)
    return frame.style.format({"released value": _readable, "ε": "{:.6g}", "δ": "{:.3g}"}).hide(axis="index")


def _card_downloads(records: Sequence[Any]) -> None:
    """The release card (HTML, Markdown) and the OpenDP Deployments Registry entry of this release, each built
    on click (post-processing of the released records only)."""

    def inputs() -> tuple[dict, dict]:
        return release_card.card_inputs_from_app_records([r.to_dict() for r in records])

    c1, c2, c3 = st.columns(3)
    c1.download_button(
        "Download the release card (HTML)",
        lambda: release_card.release_card_html(*inputs()).encode(),
        file_name=release_card.CARD_HTML,
        mime="text/html",
        key="planner_dl_card_html",
        help="A page to publish beside the numbers: the released values, the privacy statement in "
        "plain words, the methods and their papers, the date and the software. Opens offline.",
    )
    c2.download_button(
        "Download the release card (Markdown)",
        lambda: release_card.release_card_markdown(*inputs()).encode(),
        file_name=release_card.CARD_MARKDOWN,
        mime="text/markdown",
        key="planner_dl_card_md",
    )
    c3.download_button(
        "Download the OpenDP registry entry (YAML)",
        lambda: release_card.opendp_registry_entry(*inputs()).encode(),
        file_name=release_card.REGISTRY_YAML,
        mime="application/yaml",
        key="planner_dl_registry",
        help="This release as an entry of the OpenDP Differential Privacy Deployments Registry; "
        "fill in the fields marked FILL IN (the curator, the intended use ...) before submitting.",
    )


def release_folder_name(records: Sequence[Any]) -> str:
    """The folder a release's zip holds (and the zip's name without .zip): named by its ledger entry."""
    entry = records[0].ledger_entry_id if records else None
    return f"dp_release_{entry}" if entry is not None else "dp_release"


def release_zip(records: Sequence[Any], plan: Any, cap_epsilon: float | None) -> bytes:
    """The whole release as one zip of the folder :func:`release_folder_name`, laid out as the command line writes its ``--out``
    folder and by the command line's writer (:func:`dpcore.engines.output.write_release_folder`): each
    statistic's table (CSV, Parquet), ``plan.toml`` (``plan``: the release as a plan), ``release_record.json``
    (the record the card reads, with the app's records and every file's SHA-256) and the release card (HTML,
    Markdown) with its registry entry. Post-processing of the released records only."""
    import io
    import tempfile
    import zipfile
    from pathlib import Path

    from dpcore.engines.output import write_release_folder

    as_dicts = [r.to_dict() for r in records]
    record, tables = release_card.card_inputs_from_app_records(as_dicts)
    record["records"] = as_dicts
    record["ledger"] = {
        "account": (records[0].dataset or {}).get("ledger_account"),
        "entry_id": records[0].ledger_entry_id,
        "cap_epsilon": cap_epsilon,
    }
    name = release_folder_name(records)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / name
        write_release_folder(folder, plan, record, tables)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(folder.iterdir()):
                archive.write(path, f"{name}/{path.name}")
    return buffer.getvalue()


def _cost_text(cost: dict) -> str:
    try:
        return budget_lib.PrivacyCost(
            cost["kind"], epsilon=cost.get("epsilon", 0.0), delta=cost.get("delta", 0.0), rho=cost.get("rho", 0.0)
        ).describe()
    except (KeyError, TypeError, ValueError):
        return str(cost)


def _archive_frame(entries: Sequence[ledger_lib.Entry]) -> pd.DataFrame:
    rows = []
    for e in entries:
        records = (e.result or {}).get("records", []) if isinstance(e.result, dict) else []
        released = "; ".join(
            f"{lab}: {float(v)!r}"
            for r in records
            for lab, v in zip(r.get("labels", []), r.get("released", []), strict=True)
        )
        rows.append(
            {
                "entry": e.id,
                "time (UTC)": e.time[:19].replace("T", " "),
                "release": e.label,
                "cost": e.cost.describe(),
                "released values": released if e.result is not None else "not revealed (lost after the charge)",
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# Status: which account, what was spent (read after any release)
# ---------------------------------------------------------------------------------------------


def _account_note(ds: Any) -> None:
    """Which account the panel shows: the demonstration account of synthetic/public data, or the file's."""
    if not ds.confidential and upload_bytes() is not None and st.session_state.get("data_lookalike"):
        st.warning(
            "You are planning on the **synthetic look-alike** of your file, so a release here would be a "
            "demonstration on synthetic data, paid from the look-alike's **demonstration account**, not your "
            "file's. To release from your file, switch off *Plan on a synthetic look-alike instead* in the "
            "sidebar (the plan's ε per statistic is kept)."
        )
    elif not ds.confidential:
        st.info(
            "**Shown: the demonstration account** of the data in use (synthetic or public, not confidential), "
            "not the account of any file you uploaded. **Your file's account is kept** in the ledger with "
            "everything spent from it: a reloaded tab forgets the upload, so upload the same file again in the "
            "sidebar to see its account and release from it."
        )
    else:
        st.success(
            f"**Shown: the account of your file** `{ds.name}` (income column `{ds.column}`), kept in the "
            "ledger: uploading the same file again, in any tab or after a restart, finds it."
        )


def _metrics(acct: Any, cap: float, entries: list[ledger_lib.Entry], demonstration: bool) -> None:
    which = "demonstration account" if demonstration else "your file's account"
    c1, c2, c3 = st.columns(3)
    if acct is None:
        c1.metric("Spent so far", "ε = 0", help=f"Nothing released yet from these data ({which}).")
        c2.metric("Remaining", f"ε = {cap:.4g}", help="The cap below, until the first release.")
        c3.metric("Cap (set below)", f"ε = {cap:.4g}", help="Fixed for good by the first release.")
        return
    spent = acct.spent(entries)
    c1.metric(
        "Spent so far",
        f"ε = {spent['epsilon']:.4g}" + (f", δ = {spent['delta']:.2g}" if spent['delta'] else ""),
        help=f"Every release from these data ({which}), read from the ledger.",
    )
    c2.metric("Remaining", f"ε = {max(0.0, acct.cap_epsilon - spent['epsilon']):.4g}")
    c3.metric("Cap (fixed)", acct.cap.describe())


def _status(acct: Any, entries: list[ledger_lib.Entry], cap: float, demonstration: bool) -> None:
    if acct is None:
        st.markdown(
            "**No release has been made from these data yet.** The first release creates their budget "
            "account with the cap below; **the cap is then fixed for good** (no reset: a different cap "
            "would need different data)."
        )
    else:
        count = len(entries)
        st.markdown(
            f"**Budget account:** {acct.label or 'unnamed'} · created "
            f"{acct.created[:19].replace('T', ' ')} UTC · cap {acct.cap.describe()} (fixed) · "
            f"**{count} release{'' if count == 1 else 's'} so far** (the archive below lists "
            f"{'it' if count == 1 else 'them'})."
        )
    _metrics(acct, cap, entries, demonstration)


# ---------------------------------------------------------------------------------------------
# The release: one click, one charge
# ---------------------------------------------------------------------------------------------


def _release_delta(
    items: Sequence[tuple[str, float]], build_statistic: Callable[[str], planner_lib.PlannedStatistic]
) -> float:
    """The δ the release spends (basic composition): only a Gini with a light-tailed noise has one. 0 when
    it cannot be computed here (the release itself then says what is wrong)."""
    from dpcore.views import planner as planner_experiments

    delta = 0.0
    for kind, eps in items:
        if kind != "gini":
            continue  # every other statistic of the planner is pure ε-DP
        try:
            cost = planner_experiments.statistic_cost(build_statistic(kind), eps)
        except (ValueError, TypeError):
            return 0.0
        if cost.kind == "approx":
            delta += float(cost.delta)
    return delta


def _request_release(counter: int, dataset_id: str) -> None:
    """The button's callback (runs before the script): a request only if the click belongs to the
    current release number and its confirmation box is ticked; then the number moves on, which retires
    the box and every click still bound to the old number (a double click's second message)."""
    state = st.session_state
    if state.get(RELEASE_COUNTER, 0) != counter or not state.get(confirm_key(counter)):
        return
    state[RELEASE_COUNTER] = counter + 1
    state[RELEASE_REQUEST] = dataset_id


def _refusal_text(exc: BaseException) -> str:
    text = str(exc)
    for prefix in ("refused: ", "refused:"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    return text[:1].upper() + text[1:]


def _release(
    db: Any,
    ds: Any,
    dataset_id: str,
    default_label: str,
    label: str,
    cap: float,
    cap_delta: float,
    items: list[tuple[str, float]],
    build_statistic: Callable[[str], planner_lib.PlannedStatistic],
    group_column: str | None,
    statistic_params: Callable[[str], dict] | None = None,
    declared_labels: list[str] | None = None,
    level: float = 0.95,
    plan: Any = None,
) -> None:
    """Make the release and keep its outcome for the next run (which draws everything from the ledger);
    ``plan``: the release as a plan (:func:`release_plan`), kept with its records for the release's zip."""
    try:
        # verify's checks before anything is charged (the ledger is opened once per process, so at each release):
        # a damaged or cut history is refused with verify's own summary
        db.require_intact()
        n_missing, missing_groups = missing_income_rows(ds, group_column)
        grouped = any(kind in GROUP_KINDS for kind, _ in items)
        if grouped and not declared_labels:
            raise ledger_lib.DPInputError("group statistics need group labels declared public; nothing was charged")
        if n_missing or grouped:  # every row stays in n (missing incomes at the public lower bound)
            if statistic_params is None:
                raise ledger_lib.DPInputError("this release needs the statistics' settings; nothing was charged")
            stats = []
            for kind, eps in items:
                params = dict(statistic_params(kind))
                groups = _page_groups(ds, group_column) if kind in GROUP_KINDS else None
                values, groups = release_lib.with_missing_incomes(
                    kind, params, ds.values, groups, missing_groups, n_missing
                )
                if groups is None:
                    stats.append((planner_lib.make_statistic(kind, values, None, **params), eps))
                else:
                    stats.append((declared_group_statistic(kind, params, values, groups, declared_labels or ()), eps))
        else:
            stats = [(build_statistic(kind), eps) for kind, eps in items]
        if ds.source == "upload" and is_source_fingerprint(dataset_id):
            account = population_for_release(
                db, upload_fingerprints(db, dataset_id), str(label or default_label).strip(), cap, cap_delta
            )
        else:
            account = db.account(
                dataset_id, cap_epsilon=cap, label=str(label or default_label).strip(), cap_delta=cap_delta
            )
        identity = {
            "income_column": ds.column,
            "group_column": group_column,
            "n": int(ds.n) + n_missing,
            "source": ds.source,
            "file_name": ds.name if ds.source == "upload" else None,
            "missing_values": release_lib.MISSING_INCOME_AT_LOWER_BOUND,
        }
        if grouped:
            identity["group_labels"] = {
                "declared_public": list(declared_labels or ()),
                "rule": "the groups listed are the declared ones, whatever the data hold; "
                "rows of other groups are left out (a public rule)",
            }
            identity["group_sizes"] = "declared public by the data owner (the PSEO assumption): exact"
        records = release_lib.make_release(stats, account, dataset=identity, level=level)
    except ledger_lib.BudgetExceeded as exc:
        text = _refusal_text(exc)
        said = "nothing was charged" in text.lower()
        outcome = ("error", f"**The ledger refused this release{'' if said else '; nothing was charged'}.** {text}")
    except (ValueError, TypeError) as exc:  # DPInputError: the message says whether ε was spent
        outcome = ("error", f"**The release did not complete.** {_refusal_text(exc)}")
    except Exception as exc:  # never a traceback in front of the analyst; the ledger is the truth
        outcome = (
            "error",
            f"**The release failed unexpectedly** ({type(exc).__name__}: {exc}). If the ledger charged "
            "it, the archive below lists the charge as not revealed; nothing else was published.",
        )
    else:
        st.session_state["planner_records"] = records
        st.session_state["planner_records_account"] = dataset_id
        st.session_state["planner_records_plan"] = plan
        outcome = (
            "success",
            "Released. The numbers below are the only ones you may publish. The confirmation "
            "was used up: a further release needs a new one (and spends more).",
        )
    st.session_state[RELEASE_OUTCOME] = outcome


#: the URL key of the published intervals' level
LEVEL_KEY = "planner_rel_level"
LABELS_PUBLIC = "These group labels are public (e.g. states, sexes)"
SIZES_PUBLIC = "The size of each group is public too (the PSEO assumption: published cell counts)"


def declared_groups(grouped: Sequence[str], group_column: str | None, ds: Any = None) -> None:
    """Draw the declaration of the groups (asked only when the release has group statistics on a column of the
    file; the fields start from :func:`group_declaration`); :func:`release_choices` reads what they hold."""
    start = group_declaration(ds, group_column)
    st.markdown(
        f"**Groups of `{group_column}`** (used by " + ", ".join(planner_lib.STAT_KINDS[k] for k in grouped) + ")"
    )
    public = st.checkbox(
        LABELS_PUBLIC,
        value=start.labels_public,
        key=LABELS_PUBLIC_KEY,
        persist_state="session",
        help="The groups listed are the ones declared here, whatever the file holds: a declared "
        "group with no row is listed too, rows of undeclared groups are left out.",
    )
    if public:
        st.text_input(
            "The public group labels, separated by commas",
            value=", ".join(start.labels),
            key=LABELS_KEY,
            persist_state="session",
            max_chars=20_000,
            help="Type them from a public list (not copied from the file): this list is what the release publishes.",
        )
        st.checkbox(
            SIZES_PUBLIC,
            value=start.sizes_public,
            key=SIZES_PUBLIC_KEY,
            persist_state="session",
            help="Without it the group sizes would have to be noisy, which only the command line does.",
        )


def empty_declared_group(ds: Any, group_column: str | None, labels: Sequence[str] | None) -> str | None:
    """The first declared group with no row of the data (counting the rows a release puts back for a missing
    income), or None; asked before the release when a mean by group is released (declared public sizes)."""
    if not labels or group_column is None or getattr(ds, "frame", None) is None or group_column not in ds.frame.columns:
        return None
    present = set(ds.frame[group_column].astype(str).tolist())
    with guard("the rows with a missing income"):
        present |= set(missing_income_rows(ds, group_column)[1] or ())
    return next((label for label in labels if label not in present), None)


def declared_group_statistic(kind: str, params: dict, values: Any, groups: Any, labels: Sequence[str]) -> Any:
    """A group statistic on the declared groups only: rows of undeclared groups left out (a public rule), every
    declared group listed in the declared order (percentile cells of a declared group with no row are empty
    histograms: noise only)."""
    x, g = np.asarray(values, dtype=float), np.asarray(groups).astype(str)
    keep = np.isin(g, np.asarray(list(labels), dtype=str))
    x, g = x[keep], g[keep]
    if kind in ("percentiles", "group_medians"):
        stat = planner_lib.make_statistic(kind, x, g, **params) if x.size else None
        cells = tuple(np.maximum(x[g == lab], 0.0) for lab in labels)
        if stat is None:
            raise ledger_lib.DPInputError("no row of the file is in a declared group; nothing was charged")
        assert isinstance(stat, planner_lib.PercentilesStatistic)  # what make_statistic builds for these kinds
        return dataclasses.replace(stat, cells=cells, cell_labels=tuple(labels))
    if kind == "group_means":
        empty = [lab for lab in labels if not np.any(g == lab)]
        if empty:  # sizes are declared public, so saying which declared group is empty reveals nothing more
            raise ledger_lib.DPInputError(
                f"the declared group {empty[0][:60]!r} has no row, and a mean of no "
                "one cannot be released; remove it from the list. Nothing was charged"
            )
        return planner_lib.make_statistic(kind, x, g, **params)
    return planner_lib.make_statistic(kind, x, g, **params)


def _page_groups(ds: Any, group_column: str | None) -> Any:
    """The group label of every kept row, as the page's groups (``ui.planner.views.choose_groups``)."""
    if group_column is None or ds.frame is None:
        raise ledger_lib.DPInputError("a group statistic needs a group column of the file")
    return ds.frame[group_column].astype(str).to_numpy()


def _say_existing_population(db: Any, ds: Any, name: str) -> None:
    """Before the first release of an upload's records: when the name typed is a registered population (also
    one the command line uses), say that the release pays from it, under its cap."""
    if ds.source != "upload" or isinstance(db, NoLedgerYet) or not str(name or "").strip():
        return
    try:
        population = db.population(str(name))
    except (ValueError, TypeError):  # not a valid population name: the release says why
        return
    if population is not None:
        st.info(
            f"**{population.population}** is a registered population (cap {population.cap.describe()}, spent "
            f"ε = {population.spent_epsilon():.4g}): this release attaches these records to it and pays from its "
            "budget; the cap above is not used."
        )


# complexity above the cap: the panel's controls in display order
def release_panel(  # noqa: C901
    ds: Any,
    kinds: Sequence[str],
    build_statistic: Callable[[str], planner_lib.PlannedStatistic],
    allocation: dict[str, float],
    *,
    group_column: str | None,
    random_groups: bool,
    statistic_params: Callable[[str], dict] | None = None,
) -> None:
    """Draw Release mode: account, cap, ε per statistic, the release button, the records, the archive.

    ds: the sidebar's IncomeData; kinds: planned statistic kinds; build_statistic(kind): the planned
    statistic on the data in use; allocation: default ε per kind (the budget-first split);
    group_column: the group column used (None with random groups); random_groups: True when the
    page's groups are the random planning groups (a release is then refused for group statistics);
    statistic_params(kind): the parameters of ``dpcore.planner.make_statistic`` the page built it with (a
    release of an upload with missing incomes rebuilds each statistic with those rows put back).
    """
    st.markdown("### Make the real release")
    wait_for_work_in_progress()  # a release another run of this session is making: read after it, with its outcome
    outcome = outcome_to_show(RELEASE_OUTCOME)  # of the click of an earlier run: said at the button
    _account_note(ds)
    st.caption(
        "The release draws its noise from the operating system's cryptographic random generator "
        "(`os.urandom`), never from the seed in the sidebar, so it cannot be replayed or guessed. True values "
        "are never shown: only the released (noisy) numbers. The budget is charged in the ledger database "
        "**before** any noise is drawn."
    )
    with guard("the rows with a missing income"):
        n_missing = missing_income_rows(ds, group_column)[0]
        if n_missing:
            st.info(
                f"**{n_missing:,} row{'s' if n_missing != 1 else ''} of your file ha{'ve' if n_missing != 1 else 's'} "
                "no usable income** (missing, or negative with the sidebar's *drop* policy). Planning leaves "
                "them out; **the release keeps them in n**, counted at each statistic's public lower bound "
                "(the Gini's and the means' lower clip bound, the first histogram bin, not a case, not above "
                "a count's threshold), so whether one person's income is missing moves only noisy numbers. "
                "The record states this rule, not the number of such rows."
            )
    url = ledger_lib.default_url()
    db = ledger_or_ask(url, RELEASE_OUTCOME)
    if db is None:
        st.session_state.pop(RELEASE_REQUEST, None)  # a click cannot wait for the ledger to come back
        return
    identity = None
    with guard(f"the budget account (ledger {ledger_place(url)})"):
        dataset_id, default_label = dataset_identity(ds)
        identity = (dataset_id, default_label, find_account(db, ds, dataset_id))
    if identity is None:
        st.session_state.pop(RELEASE_REQUEST, None)
        return
    dataset_id, default_label, acct = identity
    st.session_state["planner_ledger"] = acct
    entries = []
    if acct is not None:
        with guard(f"the releases of this account (ledger {ledger_place(url)})"):
            try:
                entries = acct.entries()
            except ValueError:
                db.require_intact()  # a damaged ledger: said with verify's own summary, as a release refuses it
                raise
    demonstration = not ds.confidential
    choices = release_choices(kinds, allocation, acct, ds=ds, group_column=None if random_groups else group_column)
    status_box = st.container()

    if acct is None:
        cap = float(
            qp_number(
                "Total privacy budget of this data (ε cap)",
                CAP_KEY,
                choices.cap_start,
                step=0.1,
                format="%g",  # its bounds are said in words when a value is out of them (range_problem)
                help="The ledger refuses any release that would bring the total spent above this. "
                "Fixed when the first release creates the account.",
            )
        )
        cap_delta = float(
            cast(  # streamlit types selectbox's choice None when mypy targets 3.10 (its typing.Never is 3.11+)
                float,
                st.selectbox(
                    "δ cap of this data",
                    DELTA_CAPS,
                    index=DELTA_CAPS.index(DEFAULT_DELTA_CAP),
                    key="planner_cap_delta",
                    persist_state="session",
                    format_func=lambda d: "0 (pure ε-DP only)" if d == 0 else f"{d:g}",
                    help="Only mechanisms with a small certified failure probability (an (ε, δ) cost) spend δ; pure ε-DP "
                    "releases spend none. Fixed with the cap.",
                ),
            )
        )
        label = st.text_input(
            "Population: the people these data describe (one budget in the ledger)",
            value=default_label,
            help="A population registered before (also with 'python -m "
            "dpcore ledger population add') keeps its cap; a new name registers it with the cap "
            "above. The command line's plans name it with population = \"...\".",
            key=f"planner_account_label_{dataset_id[:16]}",
            persist_state="session",
            max_chars=200,
        )
        _say_existing_population(db, ds, label)
    else:
        cap, cap_delta, label = acct.cap_epsilon, acct.cap_delta, acct.label
    with status_box:
        _status(acct, entries, cap, demonstration)
    st.caption(
        "The account is found by "
        + (
            "a fingerprint of the uploaded file's records (whatever their order, line ends, format or "
            "income column): the same records, uploaded again or released with the command line, spend "
            "this population's budget."
            if ds.source == "upload"
            else "the sidebar's data recipe."
        )
        + (
            f" Release records name it by its public id `{acct.public_id}` (a keyed hash that reveals "
            "nothing about the file)."
            if acct is not None
            else ""
        )
    )

    plan = {} if choices.planned_confidential else choices.planned  # never compare with (or show) a confidential ε
    if choices.planned_confidential:
        st.warning(CONFIDENTIAL_PLAN_NOTE + " The fields start from the budget-first split of your total ε.")
    if plan:
        st.markdown(
            "**ε per statistic: from your plan** (Plan mode, *Accuracy first*). Change them here if you must; "
            "any difference from the plan is shown below."
        )
    eps_items = []
    for kind in kinds:
        eps_k = qp_number(
            f"ε for {planner_lib.STAT_KINDS[kind]}",
            eps_key(kind),
            choices.starts[kind],
            step=0.01,
            format="%.4f",
        )
        eps_items.append((kind, float(eps_k)))
    total_eps = math.fsum(e for _, e in eps_items)
    st.caption(f"This release costs ε = {total_eps:.4g} in total (sequential composition).")
    if large_epsilon_warning(total_eps):
        st.warning(large_epsilon_warning(total_eps))
    level = float(
        qp_number(
            "Level of the intervals published with the numbers",
            LEVEL_KEY,
            0.95,
            min_value=0.5,
            max_value=0.99,
            step=0.01,
            format="%.2f",
            help="Every released number comes with an interval anyone can recompute from the "
            "published numbers alone; it costs no extra ε (the Gini's bound is part of its ε).",
        )
    )
    for message in plan_differences(plan, dict(eps_items), cap):
        st.warning(message)
    if not plan and not choices.planned_confidential:
        st.caption(
            "No accuracy-first plan in this session: the ε fields start from the budget-first split. "
            "Plan first (Plan mode) to start from the smallest ε that meets your targets."
        )

    grouped = [k for k in kinds if k in GROUP_KINDS]
    if grouped and not random_groups:
        declared_groups(grouped, group_column, ds)
    # what is released: the one function the plan file of Plan mode is written from, now that every field is drawn
    choices = release_choices(kinds, allocation, acct, ds=ds, group_column=None if random_groups else group_column)
    eps_items, declared, total_eps, cap = (
        list(choices.epsilons.items()),
        choices.declared_labels,
        choices.total,
        choices.cap,
    )
    empty_group = empty_declared_group(ds, group_column, declared) if "group_means" in grouped else None
    blocked = None
    if random_groups and grouped:
        blocked = (
            RANDOM_GROUPS_REFUSAL
            + " Statistics that need groups here: "
            + ", ".join(planner_lib.STAT_KINDS[k] for k in grouped)
            + "."
        )
        st.error(blocked)
    elif grouped and choices.groups_refusal is not None:
        blocked = choices.groups_refusal
        st.warning(blocked)
    elif choices.problems:
        blocked = " ".join(choices.problems)
        st.error(blocked)
    elif empty_group is not None:
        blocked = (
            f"**The declared group {empty_group[:60]!r} has no row**, and a mean of no one cannot be released: "
            "remove it from the list of public labels, or leave out the mean by group. (The group sizes are "
            "declared public, so saying this reveals nothing more.)"
        )
        st.warning(blocked)
    elif isinstance(db, NoLedgerYet):
        blocked = "There is no budget ledger yet: create it above first (nothing can be charged without one)."
    else:
        remaining = cap if acct is None else max(0.0, acct.cap_epsilon - acct.spent(entries)["epsilon"])
        needed_delta = _release_delta(eps_items, build_statistic)
        remaining_delta = cap_delta if acct is None else max(0.0, acct.cap_delta - acct.spent(entries)["delta"])
        if needed_delta > remaining_delta * (1 + 1e-9):
            blocked = (
                f"**This release spends δ = {needed_delta:.3g}** (the Gini's Laplace noise is (ε, δ)-DP) **but "
                f"only δ = {remaining_delta:.3g} {'is allowed by the δ cap' if acct is None else 'remains'} of "
                "these data**, so the ledger would refuse it. "
                + (f"Choose a δ cap of at least {needed_delta:.3g} above, or " if acct is None else "")
                + "plan the Gini with the generalized Cauchy noise (pure ε, no δ)."
            )
            st.warning(blocked)
        elif total_eps > remaining * (1 + 1e-12):
            blocked = (
                f"**This release needs ε = {total_eps:.4g} but only ε = {remaining:.4g} "
                f"{'is available under the cap' if acct is None else 'remains'} of these data** "
                f"(cap ε = {cap:.4g}{'' if acct is None else ', fixed'}), so the ledger would refuse it. "
                + (
                    "Raise the cap above or lower the ε per statistic (less accuracy)."
                    if acct is None
                    else "Lower the ε per statistic (less accuracy) or release fewer statistics: the cap of these "
                    "data cannot be raised."
                )
            )
            st.warning(blocked)

    counter = int(st.session_state.get(RELEASE_COUNTER, 0))
    pending = st.session_state.get(RELEASE_REQUEST) is not None
    confirmed = st.checkbox(CONFIRM_LABEL, key=confirm_key(counter), disabled=bool(blocked) or pending)
    reason = (
        "Releasing…"
        if pending
        else "Not possible: see the message above."
        if blocked
        else None
        if confirmed
        else "Tick the confirmation above first (once per release)."
    )
    st.button(
        "Make the release",
        type="primary",
        disabled=reason is not None,
        key="planner_release",
        on_click=_request_release,
        args=(counter, dataset_id),
        help=reason,
    )
    if outcome is not None:
        (st.success if outcome[0] == "success" else st.error)(outcome[1])
    if pending:
        # The request is taken and the release made in ui.accounts.run_to_the_end: a new click (a double click's
        # second message) stops a script run at its next Streamlit call, which would leave the request taken and
        # the release cut between its steps; the button above is already drawn disabled.
        try:  # the release as a plan, for its zip (plan.toml)
            plan_of_release = release_plan(choices, kinds, build_statistic, statistic_params, ds, group_column)[0]
        except (ValueError, TypeError):  # no statistic a plan can hold: the zip is then not offered
            plan_of_release = None
        wait_slot = st.empty()

        def take_the_request_and_release() -> None:
            requested_for = st.session_state.pop(RELEASE_REQUEST, None)
            if requested_for == dataset_id and not blocked:
                WAIT_NOTE.slot, WAIT_NOTE.lines = wait_slot, []
                try:
                    _release(
                        db,
                        ds,
                        dataset_id,
                        default_label,
                        label,
                        cap,
                        cap_delta,
                        eps_items,
                        build_statistic,
                        group_column,
                        statistic_params,
                        declared,
                        level=level,
                        plan=plan_of_release,
                    )
                    if WAIT_NOTE.lines:  # the note above is redrawn away by the rerun: the outcome keeps it
                        kind, text = st.session_state[RELEASE_OUTCOME]
                        st.session_state[RELEASE_OUTCOME] = (
                            kind,
                            f"{text} (The release first waited for the ledger: {WAIT_NOTE.lines[-1]})",
                        )
                finally:
                    WAIT_NOTE.slot, WAIT_NOTE.lines = None, []
            elif requested_for is not None:
                st.session_state[RELEASE_OUTCOME] = (
                    "error",
                    "**Nothing was released or charged:** " + (blocked or "the data changed after the click."),
                )

        run_to_the_end(take_the_request_and_release)
        st.rerun()  # draw everything again from the ledger, after the release

    records = st.session_state.get("planner_records")
    if records and st.session_state.get("planner_records_account") == dataset_id:
        st.table(released_table(records), alt="The values just released")
        if acct is not None:
            remaining = max(0.0, acct.cap_epsilon - acct.spent(entries)["epsilon"])
            st.warning(
                f"**Every further release spends more.** Spent so far on this data: {acct.describe(entries)}; "
                f"remaining ε = {remaining:.4g}. Releasing the same statistic again and "
                "averaging would reduce the noise, which is exactly why it costs budget again."
            )
        plan_of_records = st.session_state.get("planner_records_plan")
        if plan_of_records is not None:
            st.download_button(
                "Download the whole release (zip)",
                lambda: release_zip(records, plan_of_records, None if acct is None else acct.cap_epsilon),
                file_name=f"{release_folder_name(records)}.zip",
                mime="application/zip",
                key="planner_dl_zip",
                type="primary",
                help="One folder, as the command line writes its --out folder: each table (CSV and Parquet, every "
                "value with its interval), plan.toml, release_record.json (with every file's SHA-256) and the "
                "release card (HTML, Markdown) that names them.",
            )
        c1, c2, c3 = st.columns(3)
        c1.download_button(
            "Download the release record (JSON)",
            memo_lib.complete_record_json(records, acct, entries).encode(),
            file_name="dp_release_record.json",
            mime="application/json",
            key="planner_dl_json",
            help="This release, every earlier release of the account, the dataset identity (file "
            "name, columns, n), mechanisms, (ε, δ), software version. Not the file's "
            "fingerprint (a hash of confidential data stays in the ledger).",
        )
        c2.download_button(
            "Download the released values (CSV)",
            release_lib.records_to_csv(records).encode(),
            file_name="dp_released_values.csv",
            mime="text/csv",
            key="planner_dl_relcsv",
        )
        targets = st.session_state.get(PLAN_TARGETS_KEY) or {}
        c3.download_button(
            "Download the decision memo (HTML)",
            release_memo(
                records, acct, entries, choices.planned, targets, plan_confidential=choices.planned_confidential
            ).encode(),
            file_name="dp_release_memo.html",
            mime="text/html",
            key="planner_dl_memo_release",
        )
        _card_downloads(records)

    if acct is not None and entries:
        st.markdown(
            f"**Archive: every release from these data** ({len(entries)}; append-only, kept in the ledger database)"
        )
        st.dataframe(_archive_frame(entries), hide_index=True, width="stretch")
        c1, c2 = st.columns(2)
        c1.download_button(
            "Export the archive (JSON)",
            acct.export("json", entries).encode(),
            file_name="dp_release_archive.json",
            mime="application/json",
            key="planner_archive_json",
        )
        c2.download_button(
            "Export the archive (CSV)",
            acct.export("csv", entries).encode(),
            file_name="dp_release_archive.csv",
            mime="text/csv",
            key="planner_archive_csv",
        )
    st.caption(
        f"Ledger: {ledger_place(url) if isinstance(db, NoLedgerYet) else db.describe()} (set `{ledger_lib.ENV_VAR}` to use another SQLite file or a shared "
        "PostgreSQL server). A real release is not reproducible by design (its noise is not seeded); the "
        "JSON record is its audit trail: dataset fingerprint, statistic, released values, mechanism, all "
        "public parameters, ε and δ, time, dpcore version."
    )
