"""The group-means page's views in page order (its view selector): their titles are defined here only (the page
and the tests read them from here)."""

from __future__ import annotations

from ui.sections import Section, headings

GROUP_MEANS = Section("group_means", "", "Group means")
TRENDS = Section("trends", "", "Trends (paper figures)")
THEORY = Section("theory", "", "Theory: cost of stratifying")
ACCOUNTING = Section("accounting", "", "Privacy accounting")
SYNTHETIC = Section("synthetic", "", "Synthetic data (illustration)")

SECTIONS = (GROUP_MEANS, TRENDS, THEORY, ACCOUNTING, SYNTHETIC)
VIEWS = headings(SECTIONS)
