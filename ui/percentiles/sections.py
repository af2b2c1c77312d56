"""The earnings-percentiles page's views (its view selector) and the numbered steps of the one-cell view, in
page order: defined here only (the page, its renderers, the landing page and the texts citing "section 1"
read them from here)."""

from __future__ import annotations

from ui.sections import Section, headings

ONE_CELL = Section("one_cell", "", "One cell, step by step")
MANY_CELLS = Section("many_cells", "", "Many cells (real PSEO table)")
FIGURES = Section("figures", "", "The paper's Figures 1–3")
SECTIONS = (ONE_CELL, MANY_CELLS, FIGURES)
VIEWS = headings(SECTIONS)

# the one-cell view's steps ("1. The histogram: ..."), numbered with a full stop
HISTOGRAM = Section("histogram", "1", "The histogram: true and noisy counts", ". ")
CDF = Section("cdf", "2", "The noisy CDF and the percentile read-off (eq. 4.2)", ". ")
RELEASED = Section("released", "3", "Released percentiles and how wrong they are", ". ")
ACCURACY = Section("accuracy", "4", "Accuracy against ε for this cell", ". ")
ONE_CELL_STEPS = (HISTOGRAM, CDF, RELEASED, ACCURACY)
