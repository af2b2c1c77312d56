"""What the planner's renderers share: the answer box, the privacy cost, the interval-width column, the remembered
figures and tables.

The accuracy-first and half-width plans open with the same answer (:func:`render_answer`: the total ε, what it means
for a person, whether it fits the budget); every table of ε per statistic carries the expected width of the published
interval (:func:`interval_text`, :data:`INTERVAL_COLUMN`); figures and tables drawn from a frozen view are built
once per view in this process (:func:`remembered`, :func:`figure`), so a rerun that does not change the view builds
nothing. Figures come from :mod:`ui.planner.plots`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from dpcore.views.planner import AccuracyFirstView, HalfWidthView, IntervalWidth
from ui.planner import plots as plots_planner


def percent_text(share: float) -> str:
    """A probability in percent with one decimal, or as many more as it takes not to read 100.0% (or 0.0%) for a
    probability that is not 1 (or 0): 99.75% was shown as "100.0%"."""
    share = float(share)
    for digits in range(1, 7):
        text = f"{100 * share:.{digits}f}"
        if (share >= 1 or float(text) < 100) and (share <= 0 or float(text) > 0):
            return f"{text}%"
    return "more than 99.9999%" if share > 0.5 else "less than 0.0001%"


_FIGURES: dict[tuple, tuple[Any, Any]] = {}


def remembered(name: str, source: Any, build: Callable[[], Any], *extra: Any) -> Any:
    """``build()`` remembered per frozen view ``source`` (and small ``extra`` keys) in this process: the
    key is the view's hash, a hit is checked by equality, so nothing is reused for other numbers. Used
    for figures and the tables drawn from a view, so a rerun that does not change the view (e.g. a
    move of the total-ε slider) builds nothing. The results are shared: never change one."""
    key = (name, hash(source), *extra)
    hit = _FIGURES.get(key)
    if hit is not None and hit[0] == source:
        return hit[1]
    if len(_FIGURES) >= 128:
        _FIGURES.clear()
    value = build()
    _FIGURES[key] = (source, value)
    return value


def figure(builder: str, source: Any, *args: Any) -> Any:
    """``plots_planner.<builder>(*args)``, remembered by the frozen view ``source`` the arguments come
    from (plotly validation is slow, and hashing the chart frames for st.cache costs as much)."""
    return remembered(
        builder,
        source,
        lambda: getattr(plots_planner, builder)(*args),
        *(a for a in args if isinstance(a, (str, int, float))),
    )


def show_failures(failures: tuple[tuple[str, str], ...]) -> None:
    """One error per statistic the view could not compute (the others are still drawn)."""
    for label, message in failures:
        st.error(f"Cannot compute {label}: {message}")


#: the column of the expected width of each statistic's published interval (accuracy-first and budget-first tables)
INTERVAL_COLUMN = "expected width of the published 95% interval"


def amount_text(value: float, unit: str) -> str:
    """A width or half-width in its statistic's unit (dpcore.views.planner.INTERVAL_UNITS), as the tables show it."""
    if value == float("inf"):
        return "open-ended (top bin)"
    if unit == "Gini points":
        return f"{value:.4f} Gini points"
    if unit == "relative-risk units":
        return f"{value:.3g}"
    return f"{value:,.0f}" + (" people" if unit == "people" else "")


def interval_text(width: IntervalWidth | None) -> str:
    """The expected width of a statistic's published interval in words: the width in its unit (the widest over
    several released numbers), or why there is none."""
    if width is None:
        return ""
    widest = width.widest
    if widest is None:
        return f"none: {width.note}"
    text = amount_text(widest, width.unit)
    if len(width.widths) > 1:
        text = f"up to {text} (widest of {len(width.widths)})"
    return text + (f" ({width.note})" if width.note else "")


def widths_by_statistic(widths: tuple[IntervalWidth, ...]) -> dict[str, IntervalWidth]:
    """A view's expected interval widths by statistic label (the rows of its table)."""
    return {w.statistic: w for w in widths}


#: said above the tables: what the interval column answers, before any budget is spent
INTERVAL_NOTE = (
    "**How wide will our intervals be?** Every released value is published with a 95% interval that "
    "anyone computes from the published numbers alone; the last column is its expected width at the ε "
    "shown (means: exact; percentiles: simulated noisy histograms; relative risk: at the expected "
    "counts; Gini: the release's planning model, public inputs only)."
)


#: under a narrow screen's tables, which scroll sideways without a sign of it: a cue that only such screens show
SIDEWAYS_CUE = (
    '<span class="dp-sideways-cue">↔ The table below is wider than this screen: swipe it sideways to see every '
    "column.</span>"
)
_SIDEWAYS_STYLE = (
    "<style>.dp-sideways-cue{display:none}"
    "@media (max-width: 640px){.dp-sideways-cue{display:block;font-weight:600;margin-top:.5em}}</style>"
)


def sideways_cue() -> str:
    """The cue's HTML, to end the text drawn just above a wide table (its style is sent with it: a style-only
    element takes no room on the page)."""
    st.html(_SIDEWAYS_STYLE)
    return SIDEWAYS_CUE


def render_cost(cost: Any) -> None:
    """The plan's privacy cost when it is not pure ε: its currency and how it was composed."""
    if cost is None or cost.kind == "pure":
        return
    st.metric("Privacy cost of the plan (sequential composition)", cost.text.split(":")[0])
    if cost.explicit_conversion:
        st.caption(
            f"The zCDP part was converted to (ε, δ) at δ = {cost.conversion_delta:g} before it was added "
            "to the (ε, δ) parts (zCDP and (ε, δ) do not compose otherwise)."
        )
    elif cost.kind == "zcdp":
        st.caption(
            "The Gini's Laplace log-normal noise is ρ-zCDP: ρ adds up in zCDP (a pure ε counts as ε²/2); the "
            f"plan's total ε is its (ε, δ) at δ = {cost.conversion_delta:g}, the noise's δ — the smaller of "
            "converting the total ρ, or adding the pure ε to the converted ρ of the Gini (both valid)."
        )
    else:
        st.caption(
            "The Gini's Laplace noise is (ε, δ)-DP: the plan's ε and δ add up over the statistics "
            "(basic composition), so the plan's total ε comes with this δ."
        )


ANSWER_LABEL = "Total ε of the plan"


def render_answer(
    view: AccuracyFirstView | HalfWidthView, budget: float, relax: str = "lower probability, larger error"
) -> None:
    """The plan's total ε, what it means for a person, whether it fits the budget, and its cost when not pure ε."""
    c1, c2, c3 = st.columns(3)
    c1.metric(
        ANSWER_LABEL,
        f"{view.total_epsilon:.4g}",
        help="The smallest ε of each statistic, added up (sequential composition: the statistics are "
        "computed on the same people).",
    )
    c2.metric(
        "Largest belief from a 1% prior",
        percent_text(view.belief_from_1pct),
        help="An attacker 1% sure of a fact about one person is at most this sure after the whole release.",
    )
    fits = view.total_epsilon <= budget * (1 + 1e-12)
    c3.metric(
        "Your total ε (slider above)", f"{budget:.4g}", help=f"The plan {'fits' if fits else 'exceeds'} this budget."
    )
    if not fits:
        st.warning(
            f"The plan needs ε = {view.total_epsilon:.4g} in total, more than the ε = {budget:.4g} you can "
            f"afford: relax a target ({relax}) or raise the total."
        )
    render_cost(view.cost)
