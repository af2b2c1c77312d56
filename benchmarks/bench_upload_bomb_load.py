#!/usr/bin/env python3
"""A class on the Gini page while another session uploads a workbook bomb: do the sliders stay fast?

    .venv/bin/python benchmarks/bench_upload_bomb_load.py [--users 30] [--seconds 60] [--sheet-mb 373]
        [--no-dimension] [--app-dir .] [--upload-at 10] [--wide-csv-columns 10000000]

Starts one `streamlit run app.py` (one process: the worst case, every session shares its GIL) from
``--app-dir`` on a free port, runs ``../shared/tools/st_load.py`` (USERS users moving the Gini page's ε
slider, think time 2 s) against it, and ``--upload-at`` seconds in uploads the bomb
(benchmarks/upload_bombs.py) from a headless Chromium in another session with the upload data source;
prints st_load's line, the time from the upload to the sidebar's message, and the message.
``--app-dir`` lets the same run be made against another checkout (e.g. the code before the fix).
The fault-injection run's numbers before the fix: slider p50 6.2 s, p95 12.6 s (0.04 / 0.09 s without
the upload), the upload 206 s to a message. ``--wide-csv-columns N`` uploads a CSV of N columns instead
(upload_bombs.wide_csv; the audit's: 10,000,000 columns, 40 MB, no message in 300 s and every other session
dropped).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))

from upload_bombs import wide_csv, xlsx_bomb

ST_LOAD = ROOT.parent / "shared" / "tools" / "st_load.py"
UPLOAD_SOURCE = "Upload a CSV or Parquet file"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not become healthy")


def upload(url: str, path: Path, result: dict) -> None:
    from playwright.sync_api import sync_playwright
    from quality_support import launch_chromium

    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page()
            page.goto(f"{url}/gini?data_source={urllib.request.quote(UPLOAD_SOURCE)}")
            chooser = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
            chooser.wait_for(state="attached", timeout=120_000)
            t0 = time.monotonic()
            chooser.set_input_files(str(path))
            # the refusal names the file; a file that is read shows which column is the income
            said = re.compile(f"{re.escape(path.name)}|Income column in use")
            message = page.locator('[data-testid="stSidebar"] [data-testid="stAlert"]').filter(has_text=said)
            message.first.wait_for(timeout=600_000)
            result["seconds"] = time.monotonic() - t0
            result["message"] = message.first.inner_text()
        finally:
            browser.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--think", type=float, default=2.0)
    ap.add_argument("--sheet-mb", type=float, default=373.0)
    ap.add_argument("--no-dimension", action="store_true", help="no <dimension> element in the sheet")
    ap.add_argument("--upload-at", type=float, default=10.0)
    ap.add_argument("--app-dir", default=str(ROOT))
    ap.add_argument("--no-upload", action="store_true", help="the same load without the upload (baseline)")
    ap.add_argument("--wide-csv-columns", type=int, default=0, help="upload a CSV of this many columns instead")
    ap.add_argument(
        "--control",
        action="store_true",
        help="upload a small valid workbook instead (the browser and upload cost, without a bomb); with "
        "--wide-csv-columns, a file of as many NUL bytes (refused at once: the cost of uploading that many bytes)",
    )
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bomb-load-"))
    bomb = work / ("wide.csv" if args.wide_csv_columns else "bomb.xlsx")
    if args.control:
        args.sheet_mb = 0.01
    if args.wide_csv_columns and args.control:  # as many bytes, refused from its first 64 KB: the upload's own cost
        bomb.write_bytes(b"\0" * len(wide_csv(args.wide_csv_columns)))
    elif args.wide_csv_columns:
        bomb.write_bytes(wide_csv(args.wide_csv_columns))
    else:
        bomb.write_bytes(xlsx_bomb(args.sheet_mb, declare_dimension=not args.no_dimension))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    app_dir = Path(args.app_dir).resolve()
    server = subprocess.Popen(
        [
            str(ROOT / ".venv" / "bin" / "python"),
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--server.fileWatcherType",
            "none",
        ],
        cwd=str(app_dir),
        stdout=open(work / "server.log", "wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_healthy(url)
        load = subprocess.Popen(
            [
                sys.executable,
                str(ST_LOAD),
                "--url",
                f"ws://127.0.0.1:{port}/_stcore/stream",
                "--users",
                str(args.users),
                "--think",
                str(args.think),
                "--seconds",
                str(args.seconds),
                "--page",
                "gini",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        time.sleep(args.upload_at)
        result: dict = {}
        uploader = threading.Thread(target=upload, args=(url, bomb, result), daemon=True)
        if not args.no_upload:
            uploader.start()
        out, _ = load.communicate()
        if not args.no_upload:
            uploader.join(timeout=600)
        what = (
            f"{'NUL bytes as many as ' if args.control else ''}a CSV of {args.wide_csv_columns:,} columns"
            if args.wide_csv_columns
            else f"{args.sheet_mb:g} MB of sheet XML{'' if not args.no_dimension else ', no <dimension>'}"
        )
        print(f"bomb: {len(bomb.read_bytes()):,} bytes, {what}; app: {app_dir}")
        print(f"st_load ({args.users} users, {args.seconds:g} s): {out.strip()}")
        print(
            f"upload -> message: {result.get('seconds', float('nan')):.1f} s: {result.get('message', '(none)')[:300]}"
        )
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
