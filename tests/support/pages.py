"""AppTest and subprocess helpers shared by the page tests (see ``tests/support/__init__.py``)."""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
APP = REPO_ROOT / "app.py"
_VENV_PYTHON = REPO_ROOT / ".venv" / "bin" / "python"
#: The interpreter that runs generated scripts: the project's venv when present, else this one.
PYTHON = str(_VENV_PYTHON) if _VENV_PYTHON.is_file() else sys.executable


def open_page(path: str, *, timeout: float = 120, **query: Any):
    """AppTest of app.py, URL query parameters ``query`` set before the first run, switched to ``path``
    (e.g. ``"app_pages/gini.py"``) and run once.

    AppTest re-executes only the page after the first run of an ``st.navigation`` app, so sidebar
    choices (data source, seed) must come through ``query`` here, as they would from a shared link.
    """
    from streamlit.testing.v1 import AppTest

    scan_components_once()
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    for key, value in query.items():
        at.query_params[key] = value if isinstance(value, (list, tuple)) else str(value)
    at.run()
    at.switch_page(path)
    at.run()
    return at


# Every AppTest, at its first run, scans the metadata of every installed distribution for Streamlit components
# (streamlit.testing.v1.app_test: BidiComponentManager.discover_and_register_components): about 60 ms of CPU
# each on a quiet machine, a quarter of the CPU of the test files that use AppTest (those 35 files alone: 79.4
# and 77.1 core-s with a scan per AppTest, 368 scans; 55.8 with one scan per process). What is installed does not
# change while the tests run: each test process scans once and gives every AppTest that answer (the same
# components registered), as a real server does (its Runtime scans once, at start). tests/conftest.py installs it
# when a test module imports Streamlit; open_page installs it for the modules that reach Streamlit only through it
# (test_hostile_inputs.py: 11 AppTests, 3.1 s of scans under cProfile before).
def scan_components_once() -> None:
    """Make Streamlit's component-manifest scan run once in this process and answer every later call from memory."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # a Streamlit without v2 components scans nothing
        return
    scan = manifest_scanner.scan_component_manifests
    if getattr(scan, "scans_once", False):
        return

    @functools.cache
    def found() -> tuple:
        return tuple(scan())

    def scan_once(max_workers: int | None = None) -> list:  # the scan's own signature
        return list(found())

    scan_once.scans_once = True  # type: ignore[attr-defined]
    manifest_scanner.scan_component_manifests = scan_once


def page_text(at) -> str:
    """Everything a reader sees as text: titles, headers, markdown, captions, info/warning/success/error boxes."""
    parts: list[str] = []
    for group in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "success", "error"):
        try:
            elements = getattr(at, group)
        except Exception:  # an element type the page does not use
            continue
        parts += [str(getattr(e, "value", "")) for e in elements]
    return "\n".join(parts)


def assert_clean(at, *, expected_error: str | None = None) -> None:
    """No exception on the page; no ``st.error`` either, unless ``expected_error`` is given, in which case
    there must be an error box containing that text (and still no exception)."""
    assert not at.exception, [str(e.value)[:1000] for e in at.exception]
    errors = [str(e.value) for e in at.error]
    if expected_error is None:
        assert not errors, errors
    else:
        assert any(expected_error in e for e in errors), (expected_error, errors)


def assert_page_intro(at, title: str) -> str:
    """A method page opened cleanly with ``title`` and the standard privacy note (neighbouring relation,
    what is public); returns :func:`page_text` for further checks."""
    assert_clean(at)
    assert at.title[0].value == title, at.title[0].value
    text = page_text(at)
    assert "Neighbouring datasets" in text and "Public (not protected)" in text
    return text


def metrics(at) -> dict[str, str]:
    """The page's ``st.metric`` values by label."""
    return {m.label: m.value for m in at.metric}


def query_param(at, key: str) -> str | None:
    """One URL query parameter of the current view (a single string). A setting at its default is in the
    URL only when the link that opened the page named it (ui.common.write_url_value): see :func:`link_param`."""
    value = at.query_params.get(key)
    return value[0] if isinstance(value, list) else value


def link_param(at, key: str) -> str | None:
    """One query parameter of the page's share link (``ui.repro.current_link``: every setting, defaults
    included), or None when the page shows no share link or the link lacks it."""
    from urllib.parse import parse_qs, urlsplit

    links = [str(c.value) for c in at.code if str(c.value).startswith("http") and "?" in str(c.value)]
    if not links:
        return None
    return parse_qs(urlsplit(links[0]).query).get(key, [None])[0]


def page_script(at, marker: str = "Reproduces the view") -> str:
    """The generated reproduction script shown on the page (exactly one ``st.code`` block contains ``marker``),
    after opening its "Show the script" expander (drawn only when opened: ``ui.lazy``) if need be."""
    scripts = [str(c.value) for c in at.code if marker in str(c.value)]
    if not scripts and open_expanders(at, "Show the script"):
        scripts = [str(c.value) for c in at.code if marker in str(c.value)]
    assert len(scripts) == 1, f"expected one generated script on the page, found {len(scripts)}"
    return scripts[0]


def open_expanders(at, label: str) -> int:
    """Open the page's closed expanders labelled ``label`` whose content is drawn only when open
    (``ui.lazy.lazy_expander``: their open state is session state under their key) and rerun; returns how many."""
    keys = [e.proto.id.split("-", 2)[2] for e in at.expander if e.label == label and e.proto.id.count("-") >= 2]
    for key in keys:
        at.session_state[key] = True
    if keys:
        at.run()
    return len(keys)


_RUN_ALL = """
import contextlib, io, json, sys
outputs = []
for source in json.load(open(sys.argv[1], encoding="utf-8")):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(source, "view_script.py", "exec"), {"__name__": "__main__"})
    outputs.append(buffer.getvalue())
print(json.dumps(outputs))
"""


def _parsed(printed: str) -> Any:
    """What a script printed: parsed as JSON, else as a Python literal, else the raw text."""
    out = printed.strip()
    try:
        return json.loads(out)
    except ValueError:
        pass
    try:
        return ast.literal_eval(out)
    except (ValueError, SyntaxError):
        return printed


def run_scripts(codes: list[str], *, timeout: float = 300) -> list[Any]:
    """Several generated scripts run one after the other in ONE subprocess (each with fresh globals, as
    ``python script.py``), so the interpreter starts and imports dpcore/scipy once: what each printed,
    parsed as :func:`run_script` does. A script that raises fails the test with the traceback."""
    with tempfile.TemporaryDirectory() as tmp:
        sources = Path(tmp) / "scripts.json"
        sources.write_text(json.dumps(list(codes)), encoding="utf-8")
        proc = subprocess.run(
            [PYTHON, "-c", _RUN_ALL, str(sources)], cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=timeout
        )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return [_parsed(out) for out in json.loads(proc.stdout)]


def outside_event_loop(function, *args, **kwargs) -> Any:
    """``function(*args, **kwargs)`` in a fresh thread, for code that calls ``asyncio.run`` (the benchmarks'
    WebSocket client): Playwright's sync API keeps an event loop running in the main thread while a
    Chromium is open (conftest's session-wide ``chromium`` may be, after a browser test of this process),
    and ``asyncio.run`` refuses to start inside a running loop."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(function, *args, **kwargs).result()


def run_script(code: str, *, timeout: float = 300, name: str = "view_script.py") -> Any:
    """Run ``code`` with the project's Python in a subprocess from the repository root.

    Returns the printed output parsed as JSON, else as a Python literal (``print(result.to_dict())``),
    else the raw stdout string. A non-zero exit fails the test with the script's stderr.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text(code, encoding="utf-8")
        proc = subprocess.run([PYTHON, str(path)], cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return _parsed(proc.stdout)
