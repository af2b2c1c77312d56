"""Security and privacy of the deployment.

- .streamlit/config.toml: no usage statistics, bound to localhost, an upload size limit, XSRF on;
  checked in the file *and* in the configuration Streamlit actually resolves from it.
- A live server: listens on loopback only, refuses an upload without the XSRF token, and the
  page never contacts a host other than the server (no telemetry, no CDN).
- Uploaded data stays in memory: a CSV carrying a unique marker is uploaded (in-process with
  AppTest, and through a real browser when chromium is present); afterwards the marker must not
  appear in any file written under the repository, /tmp or ~/.streamlit / ~/.cache, nor in the
  server's log output or in Python's logging.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
import tomllib
from quality_support import (
    REPO_ROOT,
    chromium_available,
    find_upload_widget,
    open_page,
    python_executable,
    streamlit_server,
    wait_for_app_idle,
)

CONFIG = REPO_ROOT / ".streamlit" / "config.toml"
# Big enough for the 1,000,000-row example upload (~15 MB of CSV) and the 10 MB one-cell file of
# the hostile-input tests; small enough that a classroom of uploads fits in memory.
MAX_UPLOAD_MB = (16, 100)


# ---------------------------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def config_file() -> dict:
    assert CONFIG.is_file(), ".streamlit/config.toml is missing"
    return tomllib.loads(CONFIG.read_text(encoding="utf-8"))


def test_config_file_settings(config_file):
    assert config_file["browser"]["gatherUsageStats"] is False
    assert config_file["server"]["address"] in ("localhost", "127.0.0.1")
    assert config_file["server"]["enableXsrfProtection"] is True
    lo, hi = MAX_UPLOAD_MB
    assert lo <= config_file["server"]["maxUploadSize"] <= hi
    # XSRF protection needs CORS protection on (Streamlit silently turns XSRF off otherwise).
    assert config_file["server"].get("enableCORS", True) is True
    # No persisted caches / runOnSave surprises on a shared server.
    assert config_file.get("server", {}).get("runOnSave", False) is False


def test_streamlit_resolves_the_same_settings():
    """What Streamlit itself reads from the repo (catches typos in option names and sections)."""
    code = (
        "import json; from streamlit import config as c; c.get_config_options(force_reparse=True);"
        "print(json.dumps({k: c.get_option(k) for k in ['browser.gatherUsageStats', 'server.address',"
        "'server.maxUploadSize', 'server.enableXsrfProtection', 'server.enableCORS', 'server.headless']}))"
    )
    out = subprocess.run(
        [python_executable(), "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")},
    )
    assert out.returncode == 0, out.stderr
    opts = json.loads(out.stdout.strip().splitlines()[-1])
    assert opts["browser.gatherUsageStats"] is False
    assert opts["server.address"] in ("localhost", "127.0.0.1")
    assert opts["server.enableXsrfProtection"] is True
    assert opts["server.enableCORS"] is True
    assert MAX_UPLOAD_MB[0] <= opts["server.maxUploadSize"] <= MAX_UPLOAD_MB[1]


def test_no_disk_persisted_caches_in_code():
    """st.cache_data(persist=...) would write (possibly uploaded) data to ~/.streamlit/cache."""
    offenders = []
    for py in (
        list(REPO_ROOT.glob("*.py"))
        + list(REPO_ROOT.glob("app_pages/*.py"))
        + list(REPO_ROOT.glob("ui/**/*.py"))
        + list(REPO_ROOT.glob("dpcore/**/*.py"))
    ):
        text = py.read_text(encoding="utf-8", errors="replace")
        if "persist=" in text.replace(" ", "") and "cache_data" in text:
            offenders.append(str(py.relative_to(REPO_ROOT)))
    assert not offenders, f"disk-persisted caches in {offenders}"


# ---------------------------------------------------------------------------------------------
# A live server
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with streamlit_server(tmp_path_factory.mktemp("security_server")) as srv:
        yield srv


def _listening_addresses(port: int) -> list[str]:
    """Local addresses of the TCP sockets listening on ``port``, read from the kernel's tables.

    (No traffic to any non-loopback address: the workplace allows loopback only.)
    """
    out = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            addr_hex, port_hex = local.split(":")
            if state == "0A" and int(port_hex, 16) == port:  # 0A = LISTEN
                if width == 8:
                    out.append(socket.inet_ntop(socket.AF_INET, bytes.fromhex(addr_hex)[::-1]))
                else:
                    raw = bytes.fromhex(addr_hex)
                    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
                    out.append(socket.inet_ntop(socket.AF_INET6, words))
    return out


def test_server_listens_on_loopback_only(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=3):
        pass  # reachable from this machine
    addresses = _listening_addresses(server.port)
    if not addresses:
        pytest.skip("/proc/net/tcp is not readable here")
    assert all(a.startswith("127.") or a == "::1" for a in addresses), addresses


def test_upload_without_xsrf_token_is_refused(server):
    """A cross-site form cannot push a file into someone's session: no token, no upload."""
    boundary = "----qualitygate"
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.csv\"\r\n"
        f"Content-Type: text/csv\r\n\r\nincome\n1\n2\n\r\n--{boundary}--\r\n"
    ).encode()
    req = urllib.request.Request(
        f"{server.url}/_stcore/upload_file/{uuid.uuid4()}/{uuid.uuid4()}",
        data=body,
        method="PUT",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=10)
    assert info.value.code in (400, 401, 403), info.value.code
    assert info.value.code == 403, f"expected an XSRF refusal (403), got {info.value.code}"


def test_health_endpoint_and_no_directory_listing(server):
    with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=5) as r:
        assert r.status == 200
    # Source files and the config are not served as static files.
    for path in ("app.py", ".streamlit/config.toml", "dpcore/data/io/table.py"):
        try:
            with urllib.request.urlopen(f"{server.url}/{path}", timeout=5) as r:
                body = r.read(4000).decode("utf-8", errors="replace")
        except urllib.error.HTTPError:
            continue
        assert "import" not in body and "[server]" not in body, f"{path} is served by the app"


# ---------------------------------------------------------------------------------------------
# Uploaded data stays in memory
# ---------------------------------------------------------------------------------------------


def _marker_csv(marker: str, n: int = 400) -> bytes:
    rows = [f"income,group_{marker},note"]
    for i in range(n):
        rows.append(f"{20000 + 137 * i}.5,{'AB'[i % 2]},{marker if i % 50 == 0 else 'x'}")
    return ("\n".join(rows) + "\n").encode()


SKIP_DIRS = ("/tmp/bash_jobs", "/proc", "/sys")


def _files_containing(marker: bytes, roots: list[Path], since: float) -> list[str]:
    """Regular files under ``roots`` modified after ``since`` that contain ``marker``."""
    hits = []
    for root in roots:
        if not root.exists():
            continue
        for dirpath, dirnames, filenames in os.walk(root, onerror=lambda e: None):
            if dirpath.startswith(SKIP_DIRS) or "/.git" in dirpath or "/.venv" in dirpath:
                dirnames[:] = []
                continue
            dirnames[:] = [d for d in dirnames if d not in (".git", ".venv", "node_modules")]
            for name in filenames:
                path = os.path.join(dirpath, name)
                try:
                    st = os.lstat(path)
                    if (
                        not os.path.isfile(path)
                        or os.path.islink(path)
                        or st.st_mtime < since
                        or st.st_size > 200_000_000
                    ):
                        continue
                    with open(path, "rb") as fh:
                        if marker in fh.read():
                            hits.append(path)
                except OSError:
                    continue
    return hits


def _scan_roots() -> list[Path]:
    home = Path.home()
    return [REPO_ROOT, Path("/tmp"), home / ".streamlit", home / ".cache" / "streamlit"]


def test_marker_scan_finds_a_planted_file(tmp_path):
    """The scanner itself works (otherwise the two tests below could never fail)."""
    marker = f"QGMARK{uuid.uuid4().hex}"
    since = time.time() - 1
    planted = tmp_path / "planted.bin"
    planted.write_bytes(b"prefix " + marker.encode() + b" suffix")
    assert str(planted) in _files_containing(marker.encode(), [tmp_path], since)
    assert not _files_containing(marker.encode(), [tmp_path], time.time() + 60), "mtime filter broken"


def test_apptest_upload_is_not_written_to_disk_or_logs(caplog):
    """In-process: the sidebar upload -> dpcore.data path writes nothing and logs nothing of the data."""
    marker = f"QGMARK{uuid.uuid4().hex}"
    since = time.time() - 1
    caplog.set_level(logging.DEBUG)
    at = open_page("app_pages/about.py")
    widget = find_upload_widget(at)
    if widget is None:
        pytest.skip("the sidebar has no file upload yet")
    widget.set_value((f"upload_{marker[:6]}.csv", _marker_csv(marker), "text/csv"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert marker not in caplog.text, "uploaded data appeared in Python logging"
    hits = _files_containing(marker.encode(), _scan_roots(), since)
    assert not hits, f"uploaded data written to disk: {hits}"


@pytest.fixture(scope="module")
def browser_visit(server, chromium):
    """One visit of ``server`` in a fresh context of the shared Chromium (tests/conftest.py): every request
    the page makes is recorded from the first one, then a CSV carrying a unique marker is uploaded through
    the sidebar (the requests made while the upload runs, seconds after the page loaded, are recorded too).
    Shared by the two tests below (one page load instead of two)."""
    from support.browser import open_tab, upload

    marker = f"QGMARK{uuid.uuid4().hex}"
    since = time.time() - 1
    requests: list[str] = []
    with open_tab(chromium, timeout_ms=60_000) as watch:
        page = watch.page
        page.on("request", lambda r: requests.append(r.url))
        page.goto(server.url)
        wait_for_app_idle(page, timeout_ms=60_000)
        uploaded = upload(page, "marker.csv", _marker_csv(marker))
        exceptions = [e.inner_text()[:300] for e in page.query_selector_all('[data-testid="stException"]')]
    return {"marker": marker, "since": since, "requests": requests, "uploaded": uploaded, "exceptions": exceptions}


@pytest.mark.browser
@pytest.mark.skipif(not chromium_available(), reason="needs /usr/bin/chromium and playwright")
def test_browser_upload_is_not_written_to_disk_or_logs(server, browser_visit):
    """Through a real server and browser: the marker never reaches the disk or the server log."""
    if not browser_visit["uploaded"]:
        pytest.skip("the sidebar has no CSV upload yet")
    marker = browser_visit["marker"]
    assert not browser_visit["exceptions"], f"the upload raised an exception in the page: {browser_visit['exceptions']}"
    assert marker not in server.log_text(), "uploaded data appeared in the streamlit log output"
    # Playwright stages its own copy of the upload in its temp folders: that is the test's client
    # side, not the server; exclude it.
    hits = [
        h for h in _files_containing(marker.encode(), _scan_roots(), browser_visit["since"]) if "playwright" not in h
    ]
    assert not hits, f"uploaded data written to disk: {hits}"


@pytest.mark.browser
@pytest.mark.skipif(not chromium_available(), reason="needs /usr/bin/chromium and playwright")
def test_page_contacts_no_other_host(browser_visit, server):
    """No usage statistics, fonts or scripts from elsewhere: every request, from the first page load to the
    end of an upload's run, goes to the server."""
    requests = browser_visit["requests"]
    outside = [u for u in requests if not u.startswith((server.url, "data:", "blob:", "about:"))]
    assert requests, "no request recorded (the watcher is broken)"
    assert not outside, f"the page contacted other hosts: {outside[:5]}"
