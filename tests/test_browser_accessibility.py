"""Accessibility (WCAG 2.1 levels A and AA) in a real Chromium: what docs/accessibility.md, the app's conformance
report, claims and these tests keep true.

* axe-core (the script bundled by ``axe-playwright-python``) with the WCAG 2.0/2.1 A and AA rules finds no violation
  on any of the 8 pages of app.py's navigation, visited by the app's own links in one tab at 1280x720 with every
  disclosure (expanders, "Chart data as a table") open (and the rules about names and contrast again with a compact
  sidebar's data popover open); then at a phone's 390x844 the rule that depends on the layout (a box that scrolls
  without keyboard access).
* Every chart drawn is followed by its text alternative (``ui.chart_text``), and every text drawn in a chart has a
  contrast of 4.5:1 with what is behind it (axe-core leaves chart text "incomplete": it cannot tell the background).
* The policy-maker's path works by keyboard alone: landing page -> skip link -> "Open the Gini page" (with a visible
  focus ring) -> the answer -> the ε slider moved with the arrow key changes the answer; the Gini page is checked
  in that state. Each page has its own title in the browser's tab; "r" alone does not rerun the page.

Skipped only where Chromium (or Playwright) is missing, like the other browser tests.
"""

from __future__ import annotations

import pytest
from quality_support import chromium_available, discover_pages
from support.page_tour import DESKTOP, KEYBOARD_PATH, PHONE, SINGLE_KEY, WCAG_21_AA_TAGS

__all__ = ["DESKTOP", "PHONE", "WCAG_21_AA_TAGS"]  # tests/test_accessibility.py reads them here

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not chromium_available(),
        reason="needs /usr/bin/chromium and playwright (apt-get install chromium; .ci/run does it)",
    ),
]

PAGES = discover_pages()


@pytest.fixture(scope="module")
def page_problems(page_tour) -> dict[str, list[str]]:
    """What the page tour (tests/support/page_tour.py, shared with tests/test_browser.py) saw as an auditor: every
    page of the navigation in one tab, in navigation order (the landing page, the Gini page reached from it by
    keyboard alone and checked after its ε slider moved, the others by their sidebar links, the last one as a
    shared link): what is wrong on each page, and on the keyboard path."""
    return page_tour.accessibility


def test_the_policy_makers_path_works_by_keyboard_alone(page_problems):
    """Landing page -> skip link -> "Open the Gini page" (a visible focus ring) -> the answer -> the ε slider by
    Tab, moved by the arrow key: the answer follows. The Gini page's own check is made in that state."""
    assert page_problems[KEYBOARD_PATH] == [], "\n".join(page_problems[KEYBOARD_PATH])


def test_no_single_key_shortcut_reruns_the_page(page_problems):
    """WCAG 2.1.4: Streamlit's "r" (rerun) is turned off by the app (ui.common.keyboard_fixes)."""
    assert page_problems[SINGLE_KEY] == []


@pytest.mark.parametrize("name", [info.name for info in PAGES])
def test_no_wcag_21_aa_violation_on_the_page(page_problems, name):
    assert page_problems[name] == [], "\n".join(page_problems[name])
