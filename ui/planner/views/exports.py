"""What leaves Plan mode: the decision memo, the reproducible script's arguments and the release plan file.

The memo (:func:`plan_memo`, :mod:`ui.memo`) is built only when its button is clicked; the script is the page's
view call with literal arguments (:func:`script_settings`, for :func:`ui.repro.view_script_for`); the plan file for
``python -m dpcore release`` (:func:`release_plan_download`) is written from the same choices Release mode releases
(:func:`ui.planner.choices.release_choices`), so the command line and the app release the same thing. A plan solved
on a confidential file is marked so in the memo, and its ε are never written into a plan file as public.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from dpcore import planner
from dpcore.views import planner as planner_experiments
from dpcore.views.planner import AccuracyFirstView, StatisticTarget
from ui.accounts import existing_account
from ui.planner.choices import large_epsilon_warning, release_choices, release_plan
from ui.planner.plan_state import CONFIDENTIAL_PLAN_NOTE
from ui.planner.views.rendering import percent_text


def plan_memo(view: AccuracyFirstView, budget: float, dataset: dict[str, Any], *, confidential: bool = False) -> str:
    """The decision memo of an accuracy-first plan (ui.memo): data, ε per statistic and the accuracy it
    buys, total. Built only when the download button is clicked. ``confidential``: solved on a confidential
    file: the title and a note say that every number in it is computed from the records (not for publication)."""
    from ui import memo as memo_html

    rows = [
        {
            "statistic": r.statistic,
            "ε": r.epsilon,
            "accuracy it buys": f"{r.target} (probability {r.achieved:.3f} at this ε)",
            "privacy cost": r.cost,
        }
        for r in view.rows
    ]
    notes = [
        f"An attacker who was 1% sure of a fact about one person is at most "
        f"{percent_text(view.belief_from_1pct)} sure after the whole release."
    ]
    if view.cost is not None and view.cost.kind != "pure":
        notes.append(f"Privacy cost of the plan (sequential composition): {view.cost.text}.")
    title = "Decision memo: privacy budget plan"
    if confidential:
        title = "CONFIDENTIAL planning memo: computed from the confidential file (not for publication)"
        notes.insert(
            0,
            "CONFIDENTIAL: every ε and probability in this memo was computed from the confidential "
            "records (planning is not private). Do not publish them, and do not release with these "
            "exact ε: choose a round, public ε in Release mode (or plan on synthetic data).",
        )
    return memo_html.decision_memo_html(
        title=title,
        dataset=dataset,
        plan_rows=rows,
        total_epsilon=view.total_epsilon,
        cap_epsilon=budget,
        figures=[memo_html.epsilon_figure({r.statistic: r.epsilon for r in view.rows}, {})],
        notes=notes,
    )


def script_settings(
    specs: tuple[StatisticTarget, ...],
    dataset: Any,
    group_column: str | None,
    seed: int,
    alloc: dict[str, float],
    half_widths: dict[str, dict[str, Any]] | None = None,
) -> tuple[dict[str, Any], str]:
    """Keyword arguments of :func:`dpcore.views.planner.planner_view` for this view (plain
    literals), and the script's data argument (``values``, or ``frame`` when a group column is used);
    ``half_widths``: Accuracy first's half-width targets (:func:`remembered_half_widths`), if any."""
    kwargs: dict[str, Any] = {"statistics": [s.to_dict() for s in specs]}
    if group_column is not None:
        kwargs.update(income_column=dataset.column, group_column=group_column)
    kwargs.update(group_seed=int(seed), allocation=[float(alloc[s.kind]) for s in specs])
    if half_widths is not None:
        kwargs["half_widths"] = half_widths
    return kwargs, ("frame" if group_column is not None else "values")


def release_plan_download(
    kinds: list[str],
    specs: tuple[StatisticTarget, ...],
    statistic_for: Callable[[str], Any],
    alloc: dict[str, float],
    dataset: Any,
    group_column: str | None,
    total: float,
) -> None:
    """The plan file for ``python -m dpcore release`` (docs/plan_format.md): exactly the release Release
    mode makes -- the same ε per statistic, the same cap and the same cells ([keys]: the group labels declared
    public; cell_sizes: "public" when their sizes are declared public too), from one function
    (:func:`ui.planner.choices.release_choices`: the Release fields' values, else the accuracy-first ε
    rounded up to the field's 4 decimals, else the budget-first split; the account's fixed cap, else the
    cap field; the declaration of the groups) -- and what it leaves out. Where Release mode cannot release the
    group statistics (their sizes not declared public), the page says so: the file is then the command line's
    release, with noisy cell sizes, which cost more and are said.

    The Gini is written with the noise it was planned with (the plan's ``noise`` field: "cauchy" or
    "laplace" with its delta, and ``cap_delta``), so the release uses the planner's calibration; the
    Laplace log-normal noise has no floating-point-safe sampler and is left out and named
    (:func:`dpcore.plan.plan_from_planner_choices`), never written with another noise than the one planned."""
    from dpcore.plan import write_plan

    account = existing_account(dataset)
    choices = release_choices(kinds, alloc, account, ds=dataset, group_column=group_column)
    if choices.planned_confidential:  # its ε are a function of the confidential records: never written as public
        st.warning(CONFIDENTIAL_PLAN_NOTE)
        source = (
            "the Release fields, else the budget-first split (the accuracy-first ε were solved on the "
            "confidential file)"
        )
    else:
        source = (
            "your accuracy-first plan" if choices.planned else "the budget-first split (no accuracy-first plan yet)"
        )
    if choices.problems:  # a Release field out of range: said in words, no file (Release mode refuses it too)
        st.warning(" ".join(choices.problems) + " Correct it in Release mode. No plan file is offered.")
        return
    if large_epsilon_warning(choices.total):
        st.warning(large_epsilon_warning(choices.total))
    if choices.total > total * (1 + 1e-12):
        st.warning(
            f"**This plan spends ε = {choices.total:.4g}, more than your total ε = {total:.4g}** (the slider "
            "above): meeting every accuracy target costs that much. Relax a target, drop a statistic, or "
            "accept the larger ε."
        )
    params_of = {s.kind: dict(s.params) for s in specs}
    plan, left_out = release_plan(choices, kinds, statistic_for, params_of.get, dataset, group_column)
    cost = plan.total_epsilon
    st.markdown(
        f"**The release plan** (for the command line): exactly what Release mode will release — ε per "
        f"statistic from {source}, "
        + ", ".join(f"{planner.STAT_KINDS[k]} {eps:g}" for k, eps in choices.epsilons.items())
        + f"; total ε = {cost:.4g}; cap ε = {choices.cap:.4g} "
        + (
            "(the fixed cap of these data's ledger account)."
            if choices.cap_fixed
            else "(the cap field of Release mode)."
        )
        + (
            f" The groups: the labels declared public ({len(choices.declared_labels or ()):,}), "
            + ("their sizes public." if choices.cell_sizes == "public" else "their sizes noisy.")
            if choices.keys
            else ""
        )
    )
    if (
        choices.groups_refusal is not None
        and group_column
        and any(k in planner_experiments.GROUPED_KINDS for k in kinds)
    ):
        st.info(
            "**Release mode cannot release the group statistics of this plan** (it needs the group labels and "
            "their sizes declared public, in Release mode). The command line can: "
            + (
                "each group's size is then a noisy count"
                if choices.keys
                else "the groups are selected with DP and each size is a noisy count"
            )
            + f", ε = {choices.noisy_cell_epsilon:.4g} more in all, included in the total above."
        )
    available = choices.cap if account is None else max(0.0, choices.cap - account.spent_epsilon())
    if cost > available * (1 + 1e-12):
        st.warning(
            f"{'Release mode' if choices.groups_refusal is None else 'The command line'} would refuse this plan: "
            f"it needs ε = {cost:.4g} and only ε = {available:.4g} is available under the cap of these data "
            f"{'(raise the cap in Release mode)' if account is None else ''}. No plan file is offered."
        )
        return
    text = write_plan(plan)
    st.download_button(
        "Download the release plan",
        text,
        file_name="release_plan.toml",
        mime="application/toml",
        key="planner_release_plan",
        help="Run it on the full data: python -m dpcore release release_plan.toml "
        "--data FILE --out DIR (docs/release_cli.md)",
    )
    if left_out:
        st.caption("Not in the plan: " + "; ".join(left_out))
    with st.expander("What the plan file says"):
        st.code(text, language=None, wrap_lines=True)  # plain: Streamlit's syntax colours fail WCAG contrast
