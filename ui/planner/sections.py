"""The planner page's views in page order (Plan mode's view selector): their numbers and titles are defined here
only (the page, the landing page's card and the tests read them from here)."""

from __future__ import annotations

from ui.sections import Section, headings

ACCURACY = Section("accuracy", "1", "Accuracy first")
BUDGET = Section("budget", "2", "Budget first")
RISK = Section("risk", "3", "What ε means for a person")
SHARE = Section("share", "4", "Share / reproduce")

SECTIONS = (ACCURACY, BUDGET, RISK, SHARE)
VIEWS = headings(SECTIONS)
