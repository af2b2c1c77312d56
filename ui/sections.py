"""The sections (or views) of a page, listed once per page in ``ui/<page>/sections.py``.

A page shows a section's heading, and texts elsewhere cite it ("section 4b"). Both read the number and the
title from the page's list, so renumbering a page is one edit, not a hunt through the page, its renderers
and the pages that link to it. Streamlit derives a heading's anchor from its text, so the heading also fixes
the anchor. Plain data: the landing page imports these lists, and it stays light (no numpy, pandas, plotly).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    """One section of a page: ``key`` names it in code; ``number`` is what the page shows and other texts cite
    ("4b"; empty for an unnumbered view of a view selector); ``title`` is the heading's words; ``separator``
    sits between number and title (" · " on most pages)."""

    key: str
    number: str
    title: str
    separator: str = " · "

    @property
    def heading(self) -> str:
        """The heading as the page shows it ("4b · Lighter tails: ..."; the title alone when unnumbered)."""
        return f"{self.number}{self.separator}{self.title}" if self.number else self.title

    @property
    def cited(self) -> str:
        """How a text refers to the section ("section 4b")."""
        return f"section {self.number}"


def headings(sections: tuple[Section, ...]) -> tuple[str, ...]:
    """The headings in page order (a view selector's options)."""
    return tuple(section.heading for section in sections)


def by_heading(sections: tuple[Section, ...], heading: str) -> Section:
    """The section a view selector's option (its heading) names."""
    for section in sections:
        if section.heading == heading:
            return section
    raise KeyError(f"no section is headed {heading!r}")
