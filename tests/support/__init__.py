"""Helpers shared by tests (importable as ``support.*``: pytest puts tests/ on sys.path).

Page tests: ``from support import open_page, page_text, assert_clean, page_script, run_script``
(defined in ``support/pages.py``, re-exported here):

* :func:`open_page` - an AppTest of ``app.py`` switched to one page (URL query parameters applied
  before the first run, as a shared link would) and run.
* :func:`page_text` - the text a reader sees on the page (titles, headers, markdown, captions, alerts).
* :func:`assert_clean` - no exception, and no ``st.error`` unless an expected message is given.
* :func:`assert_page_intro` - clean, the page's title and the standard privacy note; returns the page text.
* :func:`page_script` - the generated reproduction script shown in a page's share section.
* :func:`open_expanders` - open the expanders of a label whose content is drawn only when open (``ui.lazy``).
* :func:`query_param` / :func:`link_param` - a query parameter of the address / of the page's share link (which
  names every setting, defaults included; the address names the link's and the changed ones).
* :func:`run_script` - run a generated script with the project's Python in a subprocess, from the
  repository root, and return what it printed (parsed JSON / Python literal when it is one);
  :func:`run_scripts` - several such scripts in one subprocess (one interpreter start, one import of dpcore).
* :func:`outside_event_loop` - call a function that uses ``asyncio.run`` (the benchmarks' WebSocket client) in a
  fresh thread, so it works while Playwright's sync API (a session-wide Chromium) holds the main thread's loop.

Servers: ``support.postgres`` (a throw-away PostgreSQL server), ``support.spark_cluster`` (a throw-away Spark
standalone cluster: a master and a worker from pyspark's spark-class), ``support.browser`` (the shared app
server and Chromium helpers behind the ``app_server`` / ``browser`` / ``tab`` fixtures of tests/conftest.py).
Figures: ``support.figures.assert_same_spec`` (two figure specs equal, types included).
"""

from .pages import (
    APP,
    PYTHON,
    REPO_ROOT,
    assert_clean,
    assert_page_intro,
    link_param,
    metrics,
    open_expanders,
    open_page,
    outside_event_loop,
    page_script,
    page_text,
    query_param,
    run_script,
    run_scripts,
)

__all__ = [
    "APP",
    "REPO_ROOT",
    "PYTHON",
    "assert_clean",
    "assert_page_intro",
    "link_param",
    "metrics",
    "open_expanders",
    "open_page",
    "page_script",
    "page_text",
    "outside_event_loop",
    "query_param",
    "run_script",
    "run_scripts",
]
