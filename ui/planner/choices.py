"""What a release would use: one function for Release mode and the downloaded plan (:func:`release_choices`,
:func:`release_plan`): ε per statistic (dpcore's rule: an ε solved on confidential data never starts one), the
cap, the declared groups and their sizes; and the plan they make."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from dpcore import planner as planner_lib
from dpcore.kinds import grouped_kinds
from dpcore.planner import release_epsilons as release_epsilons_lib
from ui.common import PAGE_VALUES
from ui.planner.plan_state import (
    PLAN_KEY,
    TOTAL_KEY,
    TOTAL_RANGE,
    TOTAL_START,
    allocation,
    app_negative_incomes,
    plan_solved_on_confidential,
)

__all__ = [
    "RANDOM_GROUPS_REFUSAL",
    "EPS_FIELD_MIN",
    "EPS_FIELD_MAX",
    "CAP_FIELD_MIN",
    "CAP_FIELD_MAX",
    "GROUP_KINDS",
    "LARGE_EPSILON",
    "CAP_KEY",
    "round_up",
    "eps_key",
    "ReleaseChoices",
    "typed_value",
    "range_problem",
    "large_epsilon_warning",
    "field_value",
    "planned_epsilons",
    "plan_cap_default",
    "release_allocation",
    "release_choices",
    "release_plan",
    "plan_differences",
    "UNDECLARED_GROUPS",
    "parse_declared_labels",
    "LABELS_PUBLIC_KEY",
    "LABELS_KEY",
    "SIZES_PUBLIC_KEY",
    "DECLARATION_KEYS",
    "DECLARED_FOR",
    "MAX_DEFAULT_LABELS",
    "GroupDeclaration",
    "declaration_defaults",
    "group_declaration",
    "release_cells",
]


RANDOM_GROUPS_REFUSAL = (
    "A real release cannot use **random groups A/B/C**: they are a planning device drawn with the sidebar seed, "
    "not groups of your data, so numbers released by them describe nobody and would still spend budget. Choose a "
    "group column of your file under *Groups / cells*, or release only statistics without groups "
    "(Gini, mean, count)."
)


#: bounds of the release's ε fields and of the cap field (the fields and release_choices use the same)
EPS_FIELD_MIN, EPS_FIELD_MAX = 0.0001, 100.0
CAP_FIELD_MIN, CAP_FIELD_MAX = 0.001, 100.0

GROUP_KINDS = grouped_kinds()


#: from this total ε on, the panel and the plan say that the release protects almost nothing (e^10 = 22,026)
LARGE_EPSILON = 10.0


CAP_KEY = "planner_cap"


def round_up(value: float) -> float:
    """ε rounded *up* to 4 decimals (the field's precision), so the release never has less ε than planned."""
    return release_epsilons_lib.round_up(value)


def eps_key(kind: str) -> str:
    return f"planner_rel_eps_{kind}"


@dataclass(frozen=True)
class ReleaseChoices:
    """What Release mode will release: ε per statistic, the cap, the cells, and where they come from.

    ``epsilons``: kind -> ε (the panel's field: the user's value, else the accuracy-first plan rounded
    up to the field's 4 decimals when it was solved on public or synthetic data, else the budget-first
    split); ``starts``: kind -> the value the field starts from (the same without the user's value);
    ``cap``: the account's fixed cap, else the cap field (``cap_start``: the release's cost rounded up to
    0.1, at least 2); ``cap_fixed``: the account exists; ``planned``: kind -> the unrounded
    accuracy-first ε (empty without a plan); ``planned_confidential``: that plan was solved on the
    confidential file, so it started nothing (an ε computed from the records is not a DP output).
    ``keys``: {group column: the group labels declared public} or None; ``cell_sizes``: "public" when the
    groups' sizes are declared public too (the release then uses them exactly), else "noisy" (only the
    command line releases noisy cell sizes); ``groups_refusal``: why Release mode cannot release the group
    statistics (None when there are none or they can be released); ``noisy_cell_epsilon``: what the noisy
    cell sizes add to the plan file's cost (``dpcore.plan``: n_epsilon per statistic with cells)."""

    epsilons: dict[str, float]
    cap: float
    cap_fixed: bool
    planned: dict[str, float]
    planned_confidential: bool = False
    starts: dict[str, float] = dataclasses.field(default_factory=dict)
    cap_start: float = 2.0
    keys: dict[str, list[str]] | None = None
    cell_sizes: str = "noisy"
    groups_refusal: str | None = None
    noisy_cell_epsilon: float = 0.0
    #: fields whose value is out of range, in words (nothing is released or written while there is one)
    problems: tuple[str, ...] = ()

    @property
    def total(self) -> float:
        return math.fsum(self.epsilons.values())

    @property
    def declared_labels(self) -> list[str] | None:
        """The group labels declared public (the groups a release lists), or None."""
        return None if not self.keys else next(iter(self.keys.values()))


def typed_value(key: str, default: float) -> float:
    """The value the number field ``key`` holds or will start with, as ``ui.common.qp_number`` starts it, as typed
    (this session's value, else the link's, else the value it showed on the page's last visit when not its default
    (``ui.common.PAGE_VALUES``), else ``default``); not clamped: a value out of range is said in words
    (:func:`range_problem`)."""
    if key in st.session_state:
        return float(st.session_state[key])
    raw = st.query_params.get(key)
    if raw is None:
        return float(st.session_state.get(PAGE_VALUES, {}).get(key, default))
    try:
        return float(raw)
    except ValueError:
        return float(default)


def range_problem(what: str, value: float, low: float, high: float) -> str | None:
    """Why a field's value cannot be used, in words (the field itself only turned red, "between 0.00 and 100.00"
    while 0 was refused), or None."""
    if math.isfinite(value) and low <= value <= high:
        return None
    return f"{what} must be between {low:g} and {high:g} (it is {value:g}): nothing is released with it."


def large_epsilon_warning(total: float) -> str | None:
    """The warning for a release whose ε protects almost nothing (from :data:`LARGE_EPSILON` on), or None."""
    if not total >= LARGE_EPSILON:
        return None
    return (
        f"**ε = {total:g} protects almost nothing:** one person's record may change the probability of any result "
        f"by a factor e^ε = {math.exp(min(total, 700)):.2g}, so the release says nearly as much about each person "
        "as the exact numbers would. Typical releases use ε of about 0.1 to 5."
    )


def field_value(key: str, default: float, low: float, high: float) -> float:
    """The value the number field ``key`` holds or will start with (as ``ui.common.qp_number``: this
    session's value, else the link's value clamped to [low, high], else the value it showed on the page's last
    visit when not its default (``ui.common.PAGE_VALUES``), else ``default``)."""
    if key in st.session_state:
        return float(st.session_state[key])
    raw = st.query_params.get(key)
    if raw is None:
        return float(st.session_state.get(PAGE_VALUES, {}).get(key, default))
    try:
        number = float(raw)
    except ValueError:
        return float(default)
    if number != number:
        return float(default)
    return float(min(max(number, low), high))


def planned_epsilons(kinds: Sequence[str]) -> dict[str, float]:
    """The accuracy-first plan of this session (kind -> smallest ε), for the chosen kinds."""
    return {k: float(v) for k, v in (st.session_state.get(PLAN_KEY) or {}).items() if k in kinds}


def plan_cap_default(plan_total: float) -> float:
    """The cap field's starting value: at least the release's total (rounded up to 0.1), at least 2."""
    return max(2.0, math.ceil(plan_total * 10 - 1e-9) / 10) if plan_total > 0 else 2.0


def release_allocation(kinds: Sequence[str]) -> dict[str, float]:
    """The budget-first split the ε fields start from without an accuracy-first plan: the split of the total-ε
    slider's value (kept in the session or the link while Release mode hides the slider), in both modes."""

    return allocation(list(kinds), field_value(TOTAL_KEY, TOTAL_START, *TOTAL_RANGE))


def release_choices(
    kinds: Sequence[str],
    allocation: dict[str, float],
    account: Any = None,
    *,
    ds: Any = None,
    group_column: str | None = None,
) -> ReleaseChoices:
    """Everything Release mode uses: ε per statistic, the cap, the declared cells (``account``: the data's ledger
    account, if any; ``ds``, ``group_column``: the data and the group column of the group statistics, None for
    random groups). The panel draws its fields from it and releases what it says after they are drawn; the
    plan file of Plan mode is written from it: the downloaded plan is the release."""
    from dpcore.cell_keys import DEFAULT_N_EPSILON

    planned = planned_epsilons(kinds)
    confidential = bool(planned) and plan_solved_on_confidential()
    # an ε solved on the confidential file never starts a field (dpcore's rule)
    starts = release_epsilons_lib.release_epsilons(
        kinds, planned, allocation, planned_on_confidential=confidential if planned else False
    )
    epsilons = {kind: typed_value(eps_key(kind), starts[kind]) for kind in kinds}
    problems = [
        range_problem(f"ε for {planner_lib.STAT_KINDS[kind]}", eps, EPS_FIELD_MIN, EPS_FIELD_MAX)
        for kind, eps in epsilons.items()
    ]
    grouped = [kind for kind in kinds if kind in GROUP_KINDS]
    declaration = group_declaration(ds, group_column) if grouped and ds is not None and group_column else None
    keys, cell_sizes, refusal = release_cells(declaration, group_column, grouped)
    noisy = DEFAULT_N_EPSILON * len(grouped) if group_column and cell_sizes == "noisy" else 0.0
    with_cells = functools.partial(
        ReleaseChoices, keys=keys, cell_sizes=cell_sizes, groups_refusal=refusal, noisy_cell_epsilon=noisy
    )
    if account is not None:
        cap = float(account.cap_epsilon)
        said = tuple(p for p in problems if p)
        return with_cells(epsilons, cap, True, planned, confidential, starts, cap, problems=said)
    cap_start = plan_cap_default(math.fsum(e for e in epsilons.values() if math.isfinite(e) and e > 0) + noisy)
    cap = typed_value(CAP_KEY, cap_start)
    problems.append(range_problem("The ε cap", cap, CAP_FIELD_MIN, CAP_FIELD_MAX))
    said = tuple(p for p in problems if p)
    return with_cells(epsilons, cap, False, planned, confidential, starts, cap_start, problems=said)


def release_plan(
    choices: ReleaseChoices,
    kinds: Sequence[str],
    statistic_for: Callable[[str], Any],
    params_for: Callable[[str], Any] | None,
    ds: Any,
    group_column: str | None,
) -> tuple[Any, list[str]]:
    """``(plan, left_out)``: the release ``choices`` says as a ``dpcore.plan.ReleasePlan``
    (:func:`dpcore.plan.plan_from_planner_choices`), the plan file of Plan mode and the ``plan.toml`` of a release's
    zip; ``left_out``: the statistics a plan cannot hold, named."""
    from dpcore.plan import plan_from_planner_choices

    return plan_from_planner_choices(
        list(kinds),
        statistic_for,
        choices.epsilons,
        dataset=ds.name,
        income=ds.column,
        cap_epsilon=choices.cap,
        group_column=group_column,
        params_for=params_for,
        negative_incomes=app_negative_incomes(ds),
        keys=choices.keys,
        cell_sizes=choices.cell_sizes,
    )


def plan_differences(plan: dict[str, float], chosen: dict[str, float], cap: float) -> list[str]:
    """Sentences for every way the release differs from the plan (ε per statistic, total above the cap)."""
    out = []
    for kind, eps in chosen.items():
        planned = plan.get(kind)
        if planned is not None and abs(eps - round_up(planned)) > 1e-9:
            effect = "less accurate than planned" if eps < planned else "more accurate than planned, and costs more"
            out.append(
                f"{planner_lib.STAT_KINDS[kind]}: ε = {eps:.4g} instead of the planned {planned:.4g} ({effect})."
            )
        elif planned is None and plan:
            out.append(
                f"{planner_lib.STAT_KINDS[kind]} was not in the plan (ε = {eps:.4g}, its accuracy was not checked)."
            )
    total = sum(chosen.values())
    if total > cap * (1 + 1e-12):
        out.append(f"The release's total ε = {total:.4g} is above the cap ε = {cap:.4g}: the ledger will refuse it.")
    return out


UNDECLARED_GROUPS = (
    "**Group statistics need public groups.** Listing the groups found in your file, each with its exact size, "
    "would publish a one-person group (and whether someone is in it). Declare the group labels public (a list "
    "fixed without looking at who is in the file: states, sexes...) and, if they are published anyway, the group "
    "sizes (the PSEO assumption). Groups selected with DP and noisy group sizes are made by the command line "
    "(`python -m dpcore release`, a plan without `[keys]`); the app does not make them yet."
)


def parse_declared_labels(text: str) -> list[str]:
    """The declared group labels: comma-separated text, stripped, in the order typed, no repeats."""
    return list(dict.fromkeys(p.strip() for p in str(text or "").split(",") if p.strip()))


#: session keys of the group declaration (``persist_state``: kept while Plan mode hides the fields)
LABELS_PUBLIC_KEY = "planner_labels_public"


LABELS_KEY = "planner_public_labels"


SIZES_PUBLIC_KEY = "planner_sizes_public"


DECLARATION_KEYS = (LABELS_PUBLIC_KEY, LABELS_KEY, SIZES_PUBLIC_KEY)


DECLARED_FOR = "_planner_declared_for"


#: most labels the fields start with (a public file's groups); above it nothing is declared for the user
MAX_DEFAULT_LABELS = 1000


@dataclass(frozen=True)
class GroupDeclaration:
    """The data owner's declaration of the groups: the labels are public (and which), the sizes are public."""

    labels_public: bool
    labels: tuple[str, ...]
    sizes_public: bool


def declaration_defaults(ds: Any, group_column: str | None) -> GroupDeclaration:
    """What the declaration starts as. A public file (a bundled example or a shared real file): its labels are
    public, listed from the file; its group sizes are public only when its catalogue entry publishes them
    (``IncomeData.public_cell_sizes``: the PSEO table), never because of a name. An upload or synthetic data:
    nothing declared (their labels are confidential or invented)."""
    from dpcore.cell_keys import cell_text

    nothing = GroupDeclaration(False, (), False)
    frame = getattr(ds, "frame", None)
    if (
        getattr(ds, "source", None) not in ("example", "shared")
        or getattr(ds, "confidential", True)
        or not group_column
        or frame is None
        or group_column not in frame.columns
    ):
        return nothing
    labels = sorted({cell_text(v) for v in frame[group_column].tolist()} - {""})
    if not 0 < len(labels) <= MAX_DEFAULT_LABELS or any("," in label for label in labels):
        return nothing  # not typed for the user: a label with a comma cannot be listed in the field
    return GroupDeclaration(True, tuple(labels), bool(getattr(ds, "public_cell_sizes", False)))


def group_declaration(ds: Any, group_column: str | None) -> GroupDeclaration:
    """The declaration the fields hold (or will start with): the same in Plan and Release mode. A new data set
    or group column starts from :func:`declaration_defaults` again (labels declared for other groups never
    carry over)."""
    from ui.sidebar import current_dataset_key

    state = st.session_state
    declared_for = (tuple(current_dataset_key()), group_column)
    if state.get(DECLARED_FOR) != declared_for:
        for key in DECLARATION_KEYS:
            state.pop(key, None)
        state[DECLARED_FOR] = declared_for
    start = declaration_defaults(ds, group_column)
    return GroupDeclaration(
        bool(state.get(LABELS_PUBLIC_KEY, start.labels_public)),
        tuple(parse_declared_labels(state.get(LABELS_KEY, ", ".join(start.labels)))),
        bool(state.get(SIZES_PUBLIC_KEY, start.sizes_public)),
    )


def release_cells(
    declaration: GroupDeclaration | None, group_column: str | None, grouped: Sequence[str]
) -> tuple[dict[str, list[str]] | None, str, str | None]:
    """``(keys, cell_sizes, refusal)`` of a declaration: the declared labels as ``[keys]`` of the group column,
    "public" cell sizes when they are declared public too (else "noisy"), and why Release mode cannot release
    the group statistics ``grouped`` (None: none, or they can be released). ``declaration`` None: no group
    column (random groups) or no group statistic."""
    if not grouped:
        refusal = None
    elif group_column is None or declaration is None:
        refusal = RANDOM_GROUPS_REFUSAL
    elif not declaration.labels_public:
        refusal = UNDECLARED_GROUPS
    elif not declaration.labels:
        refusal = "Type the public group labels (separated by commas) before releasing group statistics."
    elif not declaration.sizes_public:
        refusal = UNDECLARED_GROUPS
    else:
        refusal = None
    if declaration is None or not group_column or not declaration.labels_public or not declaration.labels:
        return None, "noisy", refusal
    keys = {group_column: list(declaration.labels)}
    return keys, "public" if declaration.sizes_public else "noisy", refusal
