"""The landing page's "What do you want to do?" cards: each opens the right page with a
sensible preset through ``st.page_link`` query parameters (the pages' URL-backed widgets read them).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui.percentiles import sections as percentiles_sections
from ui.planner import sections as planner_sections

_ROOT = Path(__file__).resolve().parent.parent

#: (title, one line, page file, link label, material icon, preset query parameters)
CARDS: tuple[tuple[str, str, str, str, str, dict[str, str]], ...] = (
    (
        "Publish a Gini index",
        "How far off will the published inequality figure be, and which ε to choose?",
        "app_pages/gini.py",
        "Open the Gini page",
        ":material/show_chart:",
        {"gini_eps": "1.0"},
    ),
    (
        "Publish earnings percentiles",
        "The Census PSEO method: quartiles of graduates' earnings per cell.",
        "app_pages/percentiles.py",
        "Open the percentiles page",
        ":material/bar_chart:",
        {"perc_view": percentiles_sections.ONE_CELL.heading},
    ),
    (
        "Publish group means",
        "Average income by sex, race or region, and whether small groups suffer.",
        "app_pages/stratified.py",
        "Open the group-means page",
        ":material/groups:",
        {"strat_data": "ACS 2019 excerpt"},
    ),
    (
        "Publish a ratio",
        "A ratio of two counts, e.g. the poverty rate of one group over another.",
        "app_pages/ratios.py",
        "Open the ratios page",
        ":material/percent:",
        {"ratio_eps": "1.0"},
    ),
    (
        "Choose ε for a release",
        "Several statistics, one budget: the planner finds each ε, then releases.",
        "app_pages/planner.py",
        "Open the planner",
        ":material/explore:",
        {"planner_view": planner_sections.ACCURACY.heading},
    ),
    (
        "Teach differential privacy",
        "Short lessons and a game where you play the attacker.",
        "app_pages/lessons.py",
        "Open the lessons",
        ":material/school:",
        {},
    ),
)


def cards() -> list[tuple[str, str, str, str, str, dict[str, str]]]:
    """The cards whose page exists (the lessons page falls back to the essay below)."""
    out = []
    for card in CARDS:
        if (_ROOT / card[2]).is_file():
            out.append(card)
        elif card[2] == "app_pages/lessons.py":
            out.append(
                (
                    card[0],
                    "The plain-language essay below: ε, neighbours, what is public.",
                    "app_pages/about.py",
                    "Read the essay below",
                    card[4],
                    {},
                )
            )
    return out


def render_cards() -> None:
    """Draw the "What do you want to do?" cards, three per row."""
    st.header("What do you want to do?")
    items = cards()
    for start in range(0, len(items), 3):
        for column, (title, line, page, label, icon, preset) in zip(
            st.columns(3), items[start : start + 3], strict=True
        ):
            with column.container(border=True):
                st.markdown(f"**{title}**  \n{line}")
                st.page_link(page, label=label, icon=icon, query_params=preset or None)
