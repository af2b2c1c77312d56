"""The relative-risk page's views in page order (its view selector): their titles are defined here only (the page
and the tests read them from here)."""

from __future__ import annotations

from ui.sections import Section, headings

SAMPLING = Section("sampling", "", "Sampling distribution")
INTERVALS = Section("intervals", "", "Intervals")
HEATMAPS = Section("heatmaps", "", "Coverage heatmaps")
ACCURACY = Section("accuracy", "", "Accuracy vs ε")
BIAS = Section("bias", "", "Bias vs n")
ODDS_RATIO = Section("odds_ratio", "", "Odds ratio")
POVERTY = Section("poverty", "", "Real example: poverty (ACS)")

SECTIONS = (SAMPLING, INTERVALS, HEATMAPS, ACCURACY, BIAS, ODDS_RATIO, POVERTY)
VIEWS = headings(SECTIONS)
