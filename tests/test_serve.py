"""`bash run.sh serve`: several app processes behind a real nginx, loaded over WebSockets.

A short load run (3 users x 2 slider reruns, then 4 users after an app process is killed and restarted)
against `run.sh serve --workers 2`, with the benchmark's own browser-like client (benchmarks/bench_load.py):
errors only, no timing asserts.
Also: the generated nginx config passes `nginx -t`; sticky cookie set once; SIGTERM removes every
process and the runtime directory; a missing nginx gives the install command and exit code 3.
Skips with the reason when Debian's nginx is not installed (`.ci/run` installs it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "deploy"))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

import serve as serve_launcher
from quality_support import chromium_available, launch_chromium, python_executable, visible_problems, wait_for_app_idle
from support import outside_event_loop

NGINX = serve_launcher.find_nginx()
needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx not installed (apt-get install nginx; .ci/run does it)")


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


@needs_nginx
def test_generated_nginx_config_passes_nginx_t(tmp_path):
    runtime = tmp_path / "rt"
    runtime.mkdir()
    conf = runtime / "nginx.conf"
    conf.write_text(
        serve_launcher.render_nginx_config(
            runtime=runtime,
            backends=["127.0.0.1:18601", "127.0.0.1:18602"],
            listen=serve_launcher.listen_lines("localhost", serve_launcher.free_port()),
        )
    )
    text = conf.read_text()
    for needed in (
        "proxy_http_version 1.1",
        "proxy_set_header Upgrade $http_upgrade",
        "proxy_set_header Connection $connection_upgrade",
        "hash $dpserve_key consistent",
        "least_conn",
        "proxy_pass http://$dpserve_pool",
        "daemon off",
        "proxy_read_timeout 86400s",
        "listen 127.0.0.1:",
    ):
        assert needed in text, needed
    assert "@" not in text.replace("@NAME@", ""), "an unfilled @PLACEHOLDER@ is left in the config"
    res = subprocess.run([NGINX, "-t", "-p", str(runtime), "-c", str(conf)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


@needs_nginx
def test_print_config_for_other_machines_passes_nginx_t(tmp_path):
    out = subprocess.run(
        [
            python_executable(),
            str(ROOT / "deploy" / "serve.py"),
            "--print-config",
            "--address",
            "0.0.0.0",
            "--port",
            str(serve_launcher.free_port()),
            "--runtime",
            str(tmp_path),
            "--backend",
            "127.0.0.1:18601",
            "--backend",
            "127.0.0.1:18602",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "server 127.0.0.1:18602" in out
    conf = tmp_path / "nginx.conf"
    conf.write_text(out)
    res = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(conf)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_missing_nginx_says_how_to_install_it(tmp_path):
    res = subprocess.run(
        [
            python_executable(),
            str(ROOT / "deploy" / "serve.py"),
            "--nginx",
            str(tmp_path / "no-nginx"),
            "--port",
            str(serve_launcher.free_port()),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 3
    assert "apt-get install nginx" in res.stderr
    assert "bash run.sh app" in res.stderr


@contextlib.contextmanager
def _chromium(request):
    """The test process's Chromium: conftest's session-wide ``chromium`` fixture when it exists (Playwright's sync
    API cannot run twice in one thread, and the browser tests of this process may hold it), else one of our own."""
    try:
        shared = request.getfixturevalue("chromium")
    except pytest.FixtureLookupError:
        shared = None
    if shared is not None:
        yield shared
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            yield browser
        finally:
            browser.close()


def _browser_check(url: str, browser) -> None:
    context = browser.new_context(accept_downloads=True)
    try:
        page = context.new_page()
        page.goto(f"{url}/gini")
        page.wait_for_selector('[data-testid="stMain"] h1', timeout=120_000)
        wait_for_app_idle(page, timeout_ms=120_000)
        assert {"dpserve", "_streamlit_xsrf"} <= {c["name"] for c in context.cookies()}
        assert visible_problems(page) == []
        with page.expect_download(timeout=60_000) as download:
            page.get_by_role("button", name="Download the dots (CSV)").click()
        text = open(download.value.path(), encoding="utf-8").read()
        assert text.startswith("probability_level,release") and len(text.splitlines()) > 5
        wait_for_app_idle(page, timeout_ms=60_000)
        assert visible_problems(page) == []
    finally:
        context.close()


@needs_nginx
def test_run_sh_serve_under_load_then_clean_shutdown(tmp_path, request):
    from bench_load import run_load

    port = serve_launcher.free_port()
    ready = tmp_path / "ready"
    runtime_parent = tmp_path / "runtime"
    runtime_parent.mkdir()
    log = open(tmp_path / "serve.log", "wb")
    proc = subprocess.Popen(
        [
            "bash",
            "run.sh",
            "serve",
            "--port",
            str(port),
            "--workers",
            "2",
            "--ready-file",
            str(ready),
            "--runtime-dir",
            str(runtime_parent),
        ],
        cwd=str(ROOT),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 240
        while not ready.exists():
            assert proc.poll() is None, (tmp_path / "serve.log").read_text(errors="replace")
            assert time.monotonic() < deadline, "run.sh serve did not become ready"
            time.sleep(0.2)
        url = f"http://127.0.0.1:{port}"
        workers = _children(proc.pid)
        assert len([p for p in workers if "streamlit" in Path(f"/proc/{p}/cmdline").read_text()]) == 2

        # sticky-session cookie: set on the first request, not again once the client sends it
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as r:
            cookies = r.headers.get_all("Set-Cookie") or []
        sticky = [c for c in cookies if c.startswith("dpserve=")]
        assert len(sticky) == 1 and "HttpOnly" in sticky[0], cookies
        req = urllib.request.Request(f"{url}/_stcore/health", headers={"Cookie": sticky[0].split(";")[0]})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert not any(c.startswith("dpserve=") for c in r.headers.get_all("Set-Cookie") or [])

        # a real browser through nginx: the page renders, the cookies are set, a CSV download (made on
        # click, in the process that holds the session: sticky cookie) arrives
        if chromium_available():
            with _chromium(request) as browser:
                _browser_check(url, browser)

        # 3 users x 2 slider reruns through nginx's WebSocket upgrade: errors only (one page: the browser
        # check above opened the Gini page, every page was opened in both processes by the warm-up, and
        # the ratios page gets 4 users after the restart below)
        tally = outside_event_loop(run_load, url, "planner", users=3, think=0.2, seconds=300, max_reruns=2)
        assert tally.failed_sessions == 0, tally.messages
        assert tally.exceptions == 0
        assert len(tally.first_loads) == 3
        assert len(tally.reruns) == 6

        # an app process that dies is restarted on its port and the class goes on
        victim = next(p for p in workers if "streamlit" in Path(f"/proc/{p}/cmdline").read_text())
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while "restarting on the same port" not in (tmp_path / "serve.log").read_text(errors="replace"):
            assert time.monotonic() < deadline, "the killed app process was not restarted"
            time.sleep(0.2)
        tally = outside_event_loop(run_load, url, "ratios", users=4, think=0.2, seconds=300, max_reruns=1)
        assert tally.failed_sessions == 0 and tally.exceptions == 0, tally.messages
        workers = _children(proc.pid)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        finally:
            log.close()
    # SIGTERM stops nginx and every app process and removes the runtime directory
    assert proc.returncode == 0, (tmp_path / "serve.log").read_text(errors="replace")
    gone_by = time.monotonic() + 0.5  # the same 0.5 s as before, but no longer than it takes
    while [p for p in workers if _alive(p)] and time.monotonic() < gone_by:
        time.sleep(0.02)
    assert not [p for p in workers if _alive(p)]
    assert list(runtime_parent.iterdir()) == []
    log_text = (tmp_path / "serve.log").read_text(errors="replace")
    assert "stopping" in log_text
    # every page was opened once in each of the 2 processes before the URL was announced, without exception
    import re

    warmed = re.search(r"warmed up (\d+)/(\d+) page runs", log_text)
    assert warmed and warmed.group(1) == warmed.group(2), log_text
    assert int(warmed.group(2)) % 2 == 0 and int(warmed.group(2)) >= 2 * 6  # every page x 2 processes


# ---------------------------------------------------------------------------------------------
# Less work per rerun (ui.common helpers used by the pages)
# ---------------------------------------------------------------------------------------------

FIGURE_APP = '''
import sys
sys.path.insert(0, {root!r})
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from ui.common import cached_figure, download_csv, show_figure

CALLS = st.session_state.setdefault("calls", [])

def build(n, title="x"):
    CALLS.append(n)
    return go.Figure(go.Scatter(x=list(range(n)), y=[i * i for i in range(n)]), layout=dict(title=title))

n = st.slider("n", 1, 50, 10)
cached_figure(build, n, title="hello")
cached_figure(build, n + 100, cache_key=("keyed", n % 2))   # the key alone decides: n and n+2 share it
BAR = st.session_state.setdefault("bar", go.Figure(go.Bar(x=["a", "b"], y=[1, 2])))  # one memoised figure
show_figure(BAR)
download_csv(pd.DataFrame({{"a": [1, 2]}}), "Download (CSV)", "a.csv")

import types
from ui.common import CachedBuilders
PLOTS = types.ModuleType("plots_probe")
PLOTS.COLOR = "red"
def line_figure(values, title=""):
    CALLS.append(("line", len(values)))
    return go.Figure(go.Scatter(y=list(values)), layout=dict(title=title))
PLOTS.line_figure = line_figure
plots = CachedBuilders(PLOTS)
assert plots.COLOR == "red"
show_figure(plots.line_figure([1, 2, 3][: 1 + n % 3], title=plots.COLOR))
'''


def test_cached_figure_builds_once_per_input_and_sends_the_same_spec(tmp_path):
    import json

    import plotly.graph_objects as go
    import plotly.io as pio
    from streamlit.testing.v1 import AppTest

    script = tmp_path / "figure_app.py"
    script.write_text(FIGURE_APP.format(root=str(ROOT)))
    at = AppTest.from_file(str(script), default_timeout=60)
    at.run()
    assert not at.exception
    assert pio.json.config.default_engine == "orjson"  # ui.common switched plotly's JSON engine
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    expected = json.loads(
        pio.to_json(
            go.Figure(go.Scatter(x=list(range(10)), y=[i * i for i in range(10)]), layout=dict(title="hello")),
            engine="json",
        )
    )
    assert specs[0]["data"] == expected["data"]
    assert specs[0]["layout"]["title"] == expected["layout"]["title"]
    assert specs[2]["data"][0]["type"] == "bar"
    at.slider[0].set_value(20).run()
    assert len(json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]["x"]) == 20
    at.slider[0].set_value(10).run()  # back to an input seen before: served from the cache
    assert not at.exception
    calls = [c for c in at.session_state["calls"] if not isinstance(c, tuple)]
    assert calls == [10, 110, 20], calls  # keyed: 110 serves n=20 too
    # CachedBuilders: n=10 -> 2 values, n=20 -> 3 values, back to n=10: built once per distinct input
    assert [c for c in at.session_state["calls"] if isinstance(c, tuple)] == [("line", 2), ("line", 3)]
    assert json.loads(at.get("plotly_chart")[3].proto.spec)["data"][0]["y"] == [1, 2]
    assert len(json.loads(at.get("plotly_chart")[1].proto.spec)["data"][0]["x"]) == 110
    # the memoised figure's spec was made once and reused, and it is what the browser gets
    assert at.session_state["bar"]._dp_shown_spec["data"][0]["type"] == "bar"
    assert json.loads(at.get("plotly_chart")[2].proto.spec)["data"][0]["x"] == ["a", "b"]
    # the CSV is made on click, not on every rerun
    assert at.get("download_button")[0].proto.deferred_file_id


# ---------------------------------------------------------------------------------------------
# Scale-out examples (Docker/Kubernetes cannot run here: we check what can be checked)
# ---------------------------------------------------------------------------------------------


def test_compose_nginx_config_is_the_generated_one():
    out = subprocess.run(
        [
            python_executable(),
            str(ROOT / "deploy" / "serve.py"),
            "--print-config",
            "--address",
            "0.0.0.0",
            "--port",
            "8501",
            "--runtime",
            "/tmp",
            "--backend",
            "app:8501",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert (ROOT / "deploy" / "nginx.compose.conf").read_text() == out, (
        "deploy/nginx.compose.conf is stale: regenerate it with the command in docs/serving.md"
    )


@needs_nginx
def test_compose_nginx_config_passes_nginx_t(tmp_path):
    text = (ROOT / "deploy" / "nginx.compose.conf").read_text()
    port = serve_launcher.free_port()
    # `app` resolves only inside compose; the rest of the config is checked as shipped
    text = text.replace("server app:8501", "server 127.0.0.1:8501").replace("listen 8501;", f"listen 127.0.0.1:{port};")
    text = text.replace("/tmp/", f"{tmp_path}/")
    if os.geteuid() == 0:
        text = text.replace("# user: see docs/serving.md", "user nobody nogroup;")
        tmp_path.chmod(0o711)
    conf = tmp_path / "nginx.conf"
    conf.write_text(text)
    res = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(conf)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_deploy_examples_agree_with_the_app():
    # (no YAML parser among the dependencies: the files are checked as text)
    compose = (ROOT / "deploy" / "docker-compose.yml").read_text()
    for needed in (
        "  app:",
        "  proxy:",
        "  postgres:",
        'DPCORE_LEDGER_URL: "postgresql://',
        "STREAMLIT_SERVER_COOKIE_SECRET",
        "./nginx.compose.conf:/etc/nginx/dp-serve.conf",
    ):
        assert needed in compose, needed
    assert "\t" not in compose
    k8s = (ROOT / "deploy" / "kubernetes.yml").read_text()
    assert [line for line in k8s.splitlines() if line.startswith("kind:")] == [
        "kind: Deployment",
        "kind: Service",
        "kind: Ingress",
    ]
    for needed in (
        "sessionAffinity: ClientIP",
        'nginx.ingress.kubernetes.io/affinity: "cookie"',
        "path: /_stcore/health",
        "name: DPCORE_LEDGER_URL",
    ):
        assert needed in k8s, needed
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    for path in ("app.py", "app_pages", "dpcore", "ui", ".streamlit"):
        assert (ROOT / path).exists() and f"COPY {path}" in dockerfile


def test_ledger_description_hides_the_password_and_says_what_is_shared():
    text = serve_launcher.describe_ledger("postgresql://dp:s3cret@db.internal:5432/dpledger")
    assert "s3cret" not in text and "db.internal:5432/dpledger" in text and "every process" in text
    assert "SQLite" in serve_launcher.describe_ledger(None)
    assert "this machine" in serve_launcher.describe_ledger("sqlite:////srv/dp/ledger.db")


def test_freeze_long_lived_objects_acts_only_after_new_imports():
    import gc

    from ui import common

    common.freeze_long_lived_objects()
    frozen = gc.get_freeze_count()
    assert common.freeze_long_lived_objects() is False  # nothing imported since: no freeze
    import sys as _sys
    import types

    name = f"_probe_module_{id(frozen)}"
    _sys.modules[name] = types.ModuleType(name)  # a module imported since the last call
    try:
        junk = [[i] for i in range(1000)]  # objects that now exist
        assert common.freeze_long_lived_objects() is True
        assert gc.get_freeze_count() > frozen
    finally:
        del _sys.modules[name]
        gc.unfreeze()


def test_frame_token_tells_frames_apart():
    import pandas as pd

    from ui.common import _frame_token

    base = pd.DataFrame({"k": [1, 2, 3], "A": [0.1, 0.2, 0.3], "label": ["a", "b", "c"]})
    assert _frame_token(base) == _frame_token(base.copy())
    for changed in (
        base.assign(A=[0.1, 0.2, 0.30000001]),
        base.assign(label=["a", "b", "d"]),
        base.rename(columns={"A": "B"}),
        base.set_index(pd.Index([0, 1, 5])),
        base.iloc[:2],
        base.astype({"k": float}),
    ):
        assert _frame_token(changed) != _frame_token(base)
