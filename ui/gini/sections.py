"""The Gini page's sections in page order: their numbers and titles are defined here only (the page, its
renderers, the noise choice and the texts that cite a section read them from here)."""

from __future__ import annotations

from ui.sections import Section

RELEASES = Section("releases", "1", "Where would the published Gini land?")
SENSITIVITY = Section("sensitivity", "2", "Why this much noise? Smooth sensitivity")
POSTERIOR = Section("posterior", "3", "What can an analyst infer from one release?")
ERROR_CURVE = Section("error_curve", "4", "Error against ε for this data")
NOISE = Section("noise", "4b", "Lighter tails: choose the noise distribution")
SHARE = Section("share", "5", "Share or reproduce this view")
PAPER = Section("paper", "6", "Reproduce the paper's experiments")

SECTIONS = (RELEASES, SENSITIVITY, POSTERIOR, ERROR_CURVE, NOISE, SHARE, PAPER)
