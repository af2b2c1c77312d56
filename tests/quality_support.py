"""Shared helpers for the quality gates: page discovery, slider moves, a live server.

Used by tests/test_browser.py, test_security.py, test_load.py, test_hostile_inputs.py and by the
scripts in benchmarks/. Pages are discovered from the ``PAGES`` list in app.py (parsed, not
imported, so discovery never runs Streamlit code), so every page that lands is covered without
editing the harness.
"""

from __future__ import annotations

import ast
import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]


@dataclass(frozen=True)
class PageInfo:
    """One entry of app.py's PAGES list."""

    path: str  # "app_pages/gini.py" (what AppTest.switch_page takes)
    title: str
    url_path: str  # "gini" (what the browser opens: http://host:port/gini)
    default: bool = False

    @property
    def name(self) -> str:
        return Path(self.path).stem

    @property
    def route(self) -> str:
        """The browser path: the default page lives at "/" (Streamlit ignores its url_path)."""
        return "" if self.default else self.url_path


def discover_pages(app_file: Path | None = None) -> list[PageInfo]:
    """The pages of app.py's ``PAGES = [st.Page(...), ...]`` list, in order.

    Falls back to every ``app_pages/*.py`` when the list cannot be parsed (so a refactor of app.py
    never silently turns the gates into no-ops: the fallback still covers every page file).
    """
    app_file = app_file or REPO_ROOT / "app.py"
    pages: list[PageInfo] = []
    try:
        tree = ast.parse(app_file.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        tree = None
    if tree is not None:

        def page_of(call) -> PageInfo | None:
            if not (isinstance(call, ast.Call) and getattr(call.func, "attr", getattr(call.func, "id", "")) == "Page"):
                return None
            if not call.args or not isinstance(call.args[0], ast.Constant):
                return None
            path = str(call.args[0].value)
            kw = {k.arg: k.value.value for k in call.keywords if isinstance(k.value, ast.Constant)}
            stem = Path(path).stem
            return PageInfo(
                path=path,
                title=str(kw.get("title", stem)),
                url_path=str(kw.get("url_path", stem)),
                default=bool(kw.get("default", False)),
            )

        # module-level names bound to one page (e.g. ``ABOUT = st.Page(...)``, then ``PAGES = [ABOUT, ...]``)
        named = {
            t.id: page_of(node.value)
            for node in tree.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name) and page_of(node.value) is not None
        }
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PAGES" for t in node.targets)
            ):
                continue
            elements = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            for element in elements:
                page = named.get(element.id) if isinstance(element, ast.Name) else page_of(element)
                if page is not None:
                    pages.append(page)
    if not pages:
        pages = [
            PageInfo(path=f"app_pages/{p.name}", title=p.stem, url_path=p.stem)
            for p in sorted((REPO_ROOT / "app_pages").glob("*.py"))
        ]
    return pages


# ---------------------------------------------------------------------------------------------
# AppTest helpers
# ---------------------------------------------------------------------------------------------


def app_script() -> Path:
    """The entry script AppTest runs: app.py itself.

    The pages live in ``app_pages/``, not ``pages/``: with a folder named ``pages/`` next to the
    main script, Streamlit 1.67 runs a requested page standalone (legacy multipage mode: app.py,
    its sidebar and set_page_config skipped) until st.navigation has run once, which broke cold
    deep links and made ``AppTest.switch_page`` skip app.py. ``tests/test_browser.py::
    test_cold_deep_link_runs_through_app_py`` guards against the folder coming back.
    """
    return REPO_ROOT / "app.py"


def page_arg(page: PageInfo | str) -> str:
    """What AppTest.switch_page takes for ``page`` with the script from :func:`app_script`."""
    path = page.path if isinstance(page, PageInfo) else page
    return path if app_script().parent == REPO_ROOT else str(REPO_ROOT / path)


def open_page(page: PageInfo | str, *, timeout: float = 60, query_params: dict | None = None):
    """An AppTest of the app (see :func:`app_script`) switched to ``page`` and run once
    (:func:`support.pages.open_page` with a :class:`PageInfo` and a dict of query parameters)."""
    from support.pages import open_page as open_app_page

    return open_app_page(page_arg(page), timeout=timeout, **(query_params or {}))


def main_sliders(at) -> list[Any]:
    """Sliders and select-sliders in the main area (the method's knobs), in page order."""
    out: list[Any] = []
    for kind in ("slider", "select_slider"):
        try:
            out.extend(getattr(at.main, kind))
        except Exception:  # a page without that widget type
            pass
    return out


def _is_epsilon(label: str) -> bool:
    """An epsilon slider (not e.g. "Runs per ε" or "Number of ε values")."""
    low = label.lower().strip()
    if low.startswith(("runs", "number", "how many", "n ")):
        return False
    return "ε" in label or "epsilon" in low or "privacy budget" in low


def main_slider(at):
    """The page's main knob: the first main-area slider about epsilon, else the first slider."""
    sliders = main_sliders(at)
    return next((s for s in sliders if _is_epsilon(s.label)), sliders[0] if sliders else None)


def _option_value(widget, text: str) -> Any:
    """The option value whose formatted text is ``text`` (select-sliders only keep the texts)."""
    fmt = widget.format_func
    candidates: list[Any] = [text]
    for conv in (int, float):
        try:
            candidates.append(conv(text))
        except ValueError:
            pass
    for c in candidates:
        try:
            if str(fmt(c)) == text:
                return c
        except Exception:  # a format_func that rejects the candidate
            continue
    return text


def next_value(widget) -> Any | None:
    """A different valid value for a slider / select-slider (one step up, or down at the top)."""
    if widget.type == "select_slider":
        options = list(widget.options)
        value = widget.value
        if len(options) < 2 or isinstance(value, (tuple, list)):
            return None
        try:
            i = options.index(str(widget.format_func(value)))
        except (ValueError, KeyError):
            i = 0
        j = i + 1 if i + 1 < len(options) else i - 1
        return _option_value(widget, options[j])
    value, lo, hi, step = widget.value, widget.min, widget.max, widget.step
    if isinstance(value, (tuple, list)) or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None  # range and date sliders are left alone (no page uses one as its main knob)
    step = step or 1
    up = round(value + step, 10) if isinstance(value, float) else value + step
    if up <= hi:
        return up
    down = round(value - step, 10) if isinstance(value, float) else value - step
    return down if down >= lo else None


def move_slider(widget) -> bool:
    """Set a slider to its next value; False when it cannot move (the caller then reruns)."""
    v = next_value(widget)
    if v is None:
        return False
    widget.set_value(v)
    return True


def problems(at) -> list[str]:
    """Exceptions and st.error boxes an AppTest run shows (empty list = clean run)."""
    out = [f"exception: {e.value}" for e in at.exception]
    out += [f"st.error: {e.value}" for e in at.error]
    return out


# ---------------------------------------------------------------------------------------------
# A live `streamlit run app.py` server
# ---------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    log_path: Path
    started_in: float  # seconds from Popen to a healthy /_stcore/health

    @property
    def url(self) -> str:
        return f"http://localhost:{self.port}"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""


def python_executable() -> str:
    """The project's venv Python when present, else this one (:data:`support.pages.PYTHON`)."""
    from support.pages import PYTHON

    return PYTHON


@contextlib.contextmanager
def streamlit_server(
    log_dir: Path,
    *,
    timeout: float = 60,
    extra_args: tuple[str, ...] = (),
    extra_env: dict[str, str] | None = None,
    command: tuple[str, ...] | None = None,
    cwd: Path = REPO_ROOT,
) -> Iterator[Server]:
    """Start ``streamlit run app.py --server.headless true`` on a free port; stop it afterwards.

    The server reads the repository's .streamlit/config.toml (localhost bind, XSRF on, ...);
    its stdout+stderr go to ``log_dir/streamlit.log`` so tests can inspect what it logs.
    ``extra_env`` is added to the server's environment (e.g. its own DPCORE_LEDGER_URL). ``command`` replaces
    ``python -m streamlit run app.py`` (e.g. a bare script, or ``bash run.sh app``), run in ``cwd``; the server
    options follow it.
    """
    port = free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / "streamlit.log"
    env = dict(os.environ, PYTHONUNBUFFERED="1", **(extra_env or {}))
    log = open(log_path, "wb")  # closed below
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [
            *(command or (python_executable(), "-m", "streamlit", "run", "app.py")),
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.fileWatcherType",
            "none",
            *extra_args,
        ],
        cwd=str(cwd),
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"streamlit exited with code {proc.returncode}:\n" + log_path.read_text(errors="replace")[-3000:]
                )
            try:
                with urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    "streamlit did not become healthy in time:\n" + log_path.read_text(errors="replace")[-3000:]
                )
            time.sleep(0.1)
        yield Server(proc=proc, port=port, log_path=log_path, started_in=time.perf_counter() - t0)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        log.close()


# ---------------------------------------------------------------------------------------------
# Playwright helpers
# ---------------------------------------------------------------------------------------------


def chromium_available() -> bool:
    if not os.path.exists(CHROMIUM):
        return False
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def launch_chromium(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


# One poll of wait_for_app_idle, run inside the page (no round trip to Python per poll: the old Python-side
# loop cost Chromium about a third of a core while it waited). The quiet period restarts at each call
# (``call``) and at every change of the run state seen by a MutationObserver, so a run that starts and
# ends between two polls is not mistaken for quiet.
_APP_IDLE_JS = """([quietMs, call]) => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return false;
    const now = performance.now();
    if (window.__dpIdleApp !== app) {
        window.__dpIdleApp = app;
        window.__dpStateChangedAt = now;
        new MutationObserver(() => { window.__dpStateChangedAt = performance.now(); }).observe(app,
            {attributes: true, attributeFilter: ['data-test-script-state', 'data-test-connection-state']});
    }
    if (window.__dpIdleCall !== call) { window.__dpIdleCall = call; window.__dpIdleSince = null; }
    const idle = app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-testid="stSkeleton"]');
    if (!idle) { window.__dpIdleSince = null; return false; }
    if (window.__dpIdleSince === null) window.__dpIdleSince = now;
    return now - Math.max(window.__dpIdleSince, window.__dpStateChangedAt) >= quietMs;
}"""
_idle_calls = iter(range(1, 1 << 62))


def wait_for_app_idle(page, timeout_ms: float = 30_000, *, quiet_ms: float = 400) -> None:
    """Wait until the Streamlit frontend is connected and the script has finished running.

    Uses the attributes Streamlit's own end-to-end tests wait on: stApp's
    data-test-connection-state / data-test-script-state. A settle period (``quiet_ms`` without a run
    or a skeleton) follows so a rerun triggered by the last interaction has time to start before we
    declare it idle. The polling (every 50 ms) runs inside the page.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(_APP_IDLE_JS, arg=[quiet_ms, next(_idle_calls)], polling=50, timeout=timeout_ms)
    except PlaywrightTimeout:
        raise TimeoutError("the app did not finish running within the timeout") from None


def visible_problems(page) -> list[str]:
    """Exception boxes and st.error boxes currently shown on the page."""
    out = []
    for el in page.query_selector_all('[data-testid="stException"]'):
        out.append("exception box: " + el.inner_text()[:500])
    for el in page.query_selector_all('[data-testid="stAlertContentError"]'):
        out.append("st.error: " + el.inner_text()[:500])
    return out


def find_upload_widget(at):
    """The sidebar's st.file_uploader in an AppTest, choosing an 'upload' data source first.

    The sidebar's data-source widget may change shape, so we adapt: a file uploader
    that is already shown, else a sidebar radio / selectbox option mentioning 'upload'.
    Returns None when the app offers no upload (callers skip with that reason).
    """

    def uploader():
        ups = list(at.sidebar.file_uploader) or list(at.file_uploader)
        return ups[0] if ups else None

    if uploader() is not None:
        return uploader()
    for kind in ("radio", "selectbox", "segmented_control", "pills"):
        try:
            widgets = list(getattr(at.sidebar, kind))
        except Exception:  # widget type unknown to this Streamlit
            continue
        for w in widgets:
            options = [str(o) for o in getattr(w, "options", [])]
            hit = next((o for o in options if "upload" in o.lower()), None)
            if hit is None:
                continue
            w.set_value(_choice_value(w, hit)).run()
            if uploader() is not None:
                return uploader()
    return None


def _choice_value(widget, text: str) -> Any:
    fmt = getattr(widget, "format_func", None)
    if fmt is None:
        return text
    try:
        return _option_value(widget, text)
    except Exception:
        return text
