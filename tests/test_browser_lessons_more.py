"""The second half of the lesson links clicked in the browser (tests/test_browser_lessons.py has the first half).

A separate file so that ``pytest -n 2 --dist loadfile`` runs the two halves on different workers.
"""

from __future__ import annotations

from test_browser_lessons import BROWSER_STEPS, HALF, check_lesson_links, pytestmark  # noqa: F401 - pytestmark applies here


def test_second_half_of_lesson_links_open_without_error(app_server, tab):
    check_lesson_links(app_server, tab, BROWSER_STEPS[HALF:])
