"""A class of users on a real server, over Streamlit's WebSocket protocol (prints a table).

Each simulated user behaves like a browser tab:
  1. GET the page's URL over HTTP (through nginx this sets the sticky-session cookie; Streamlit sets
     its XSRF cookie), then open ``/_stcore/stream`` (subprotocol ``streamlit``) with those cookies;
  2. send ``BackMsg.rerun_script`` (page name, the URL's query string — empty at first, then what the
     server last set with ``page_info_changed``, as the browser's address bar —, time-zone context) and read
     ``ForwardMsg``s until ``script_finished``: that is the *first load*;
  3. after an exponential think time (mean ``--think`` s) move the page's main ε slider (the first
     main-area slider whose label mentions ε/epsilon, else the first main-area slider) to a random
     value, send the widget states of everything it moved so far (as the browser does) — with the
     slider's ``fragment_id`` when it sits in an ``st.fragment``, so only that fragment reruns —
     and the hashes of the messages it has cached (so the server sends references instead of
     resending unchanged elements, as for a browser); the time to ``script_finished`` is a
     *slider rerun*; repeat until ``--seconds`` are over.
Counted as errors: exception elements, ``page_not_found``, sessions that cannot connect or run, a
slider that never appears. Static JS/CSS bundles are not fetched (the browser caches them).

Servers: ``--url`` loads a running app; ``--start app`` starts ``bash run.sh app`` on a free port,
``--start serve`` starts ``bash run.sh serve --workers N`` (nginx + N processes) — each fresh
per (users, page) cell unless ``--warm`` (then one server per mode; caches stay warm).

    .venv/bin/python benchmarks/bench_load.py --start serve --users 10,20,30,50 --pages all
    .venv/bin/python benchmarks/bench_load.py --url ws://localhost:8501/_stcore/stream --users 30 --pages gini

The full grid (4 user counts x 6 pages x 2 modes x --seconds) takes ~30 min: on a shared machine
run the cells you need. Results are also written as JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = Path(__file__).resolve().parent.parent


def app_pages() -> list[str]:
    """The url paths of app.py's pages ('' = the default page), read from app.py's source."""
    text = (ROOT / "app.py").read_text(encoding="utf-8")
    paths = re.findall(r'url_path="([^"]+)"', text)
    return ["", *paths]


# ---------------------------------------------------------------------------------------------
# One user
# ---------------------------------------------------------------------------------------------


@dataclass
class Slider:
    widget_id: str
    label: str
    in_main: bool
    minimum: float
    maximum: float
    step: float
    options: list[str]
    fragment_id: str


@dataclass
class Tally:
    first_loads: list[float] = field(default_factory=list)
    reruns: list[float] = field(default_factory=list)
    exceptions: int = 0
    failed_sessions: int = 0
    messages: list[str] = field(default_factory=list)

    def fail(self, why: str) -> None:
        self.failed_sessions += 1
        if len(self.messages) < 5:
            self.messages.append(why)


class Session:
    """A browser tab's WebSocket session with a Streamlit server."""

    def __init__(self, http_base: str, ws_url: str, page: str):
        self.http_base = http_base
        self.ws_url = ws_url
        self.page = page
        self.cache: dict[str, ForwardMsg] = {}  # the browser's ForwardMsg cache (hash -> message)
        self.states: dict[str, WidgetState] = {}
        self.query_string = ""  # the URL's query string, as the server last set it (page_info_changed)
        self.conn = None

    def _cookies(self) -> str:
        jar = CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        with opener.open(f"{self.http_base}/{self.page}", timeout=30) as resp:
            resp.read()
        return "; ".join(f"{c.name}={c.value}" for c in jar)

    async def open(self) -> None:
        cookie = await asyncio.get_running_loop().run_in_executor(None, self._cookies)
        headers = {"Cookie": cookie} if cookie else None
        self.conn = await websockets.connect(
            self.ws_url, subprotocols=["streamlit"], max_size=None, additional_headers=headers, open_timeout=60
        )

    async def close(self) -> None:
        if self.conn is not None:
            await self.conn.close()

    async def rerun(self, fragment_id: str = "") -> tuple[float, list[Slider], int]:
        msg = BackMsg()
        rs = msg.rerun_script
        rs.page_name = self.page
        rs.query_string = self.query_string  # a browser sends its current URL's query string back
        rs.context_info.timezone = "UTC"
        rs.context_info.timezone_offset = 0
        rs.context_info.locale = "en-US"
        rs.context_info.url = f"{self.http_base}/{self.page}"
        if fragment_id:
            rs.fragment_id = fragment_id
        for state in self.states.values():
            rs.widget_states.widgets.add().CopyFrom(state)
        rs.cached_message_hashes.extend(self.cache.keys())
        t0 = time.perf_counter()
        await self.conn.send(msg.SerializeToString())
        sliders: list[Slider] = []
        exceptions = 0
        while True:
            fm = ForwardMsg()
            fm.ParseFromString(await asyncio.wait_for(self.conn.recv(), timeout=300))
            kind = fm.WhichOneof("type")
            if kind == "ref_hash":
                cached = self.cache.get(fm.ref_hash)
                if cached is None:
                    raise RuntimeError("server referenced a message this session never received")
                metadata = fm.metadata
                fm = ForwardMsg()
                fm.CopyFrom(cached)
                fm.metadata.CopyFrom(metadata)
                kind = fm.WhichOneof("type")
            elif fm.metadata.cacheable and fm.hash:
                self.cache[fm.hash] = fm
            if kind == "page_info_changed":
                self.query_string = fm.page_info_changed.query_string
            if kind == "page_not_found":
                raise RuntimeError(f"page not found: {self.page!r}")
            if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                element = fm.delta.new_element
                etype = element.WhichOneof("type")
                if etype == "exception":
                    exceptions += 1
                elif etype == "slider":
                    s = element.slider
                    sliders.append(
                        Slider(
                            s.id,
                            s.label,
                            list(fm.metadata.delta_path[:1]) == [0],
                            s.min,
                            s.max,
                            s.step,
                            list(s.options),
                            fm.delta.fragment_id,
                        )
                    )
            if kind == "script_finished":
                return time.perf_counter() - t0, sliders, exceptions

    def move(self, slider: Slider) -> None:
        state = WidgetState(id=slider.widget_id)
        if slider.options:
            state.string_array_value.data.append(random.choice(slider.options))
        else:
            steps = int(round((slider.maximum - slider.minimum) / slider.step)) if slider.step > 0 else 0
            value = (
                slider.minimum + slider.step * random.randint(0, steps)
                if steps > 0
                else random.uniform(slider.minimum, slider.maximum)
            )
            state.double_array_value.data.append(min(slider.maximum, value))
        self.states[slider.widget_id] = state


def pick_slider(sliders: list[Slider]) -> Slider | None:
    main = [s for s in sliders if s.in_main] or sliders
    eps = [s for s in main if "ε" in s.label or "epsilon" in s.label.lower()]
    return (eps or main or [None])[0]


async def one_user(
    http_base: str, ws_url: str, page: str, think: float, stop: float, tally: Tally, max_reruns: int | None = None
) -> None:
    await asyncio.sleep(random.random() * think)
    session = Session(http_base, ws_url, page)
    try:
        t0 = time.perf_counter()
        await session.open()
        _, sliders, exc = await session.rerun()
        tally.first_loads.append(time.perf_counter() - t0)
        tally.exceptions += exc
        slider = pick_slider(sliders)
        if slider is None:
            tally.fail(f"no slider on page {page!r}")
            return
        done = 0
        while time.time() < stop and (max_reruns is None or done < max_reruns):
            done += 1
            await asyncio.sleep(random.expovariate(1 / think) if think > 0 else 0)
            session.move(slider)
            dt, sliders, exc = await session.rerun(slider.fragment_id)
            tally.reruns.append(dt)
            tally.exceptions += exc
            slider = next((s for s in sliders if s.widget_id == slider.widget_id), slider)
    except Exception as exc:  # a session that cannot run is an error, counted
        tally.fail(f"{type(exc).__name__}: {exc}")
    finally:
        with contextlib.suppress(Exception):
            await session.close()


async def load(
    http_base: str, ws_url: str, page: str, users: int, think: float, seconds: float, max_reruns: int | None = None
) -> Tally:
    tally = Tally()
    stop = time.time() + seconds
    await asyncio.gather(*(one_user(http_base, ws_url, page, think, stop, tally, max_reruns) for _ in range(users)))
    return tally


def run_load(
    url: str,
    page: str,
    users: int,
    think: float = 2.0,
    seconds: float = 30.0,
    seed: int = 1,
    max_reruns: int | None = None,
) -> Tally:
    """Load ``url`` (http://host:port or ws://host:port/_stcore/stream) with ``users`` sessions on ``page``.

    Each user stops after ``seconds`` or after ``max_reruns`` slider moves, whichever comes first."""
    random.seed(seed)
    base = re.sub(r"^ws", "http", url).split("/_stcore")[0].rstrip("/")
    ws_url = re.sub(r"^http", "ws", base) + "/_stcore/stream"
    return asyncio.run(load(base, ws_url, page, users, think, seconds, max_reruns))


# ---------------------------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class StartedServer:
    url: str
    proc: subprocess.Popen
    runtime: Path

    def pids(self) -> list[int]:
        """The server's Python processes (the app processes under `serve`, the one under `app`)."""
        out = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", str(self.proc.pid)], capture_output=True, text=True)
        kids = [int(line.split()[0]) for line in out.stdout.splitlines() if "streamlit" in line]
        return kids or [self.proc.pid]


@contextlib.contextmanager
def start_server(mode: str, workers: int | None = None, timeout: float = 180) -> Iterator[StartedServer]:
    """``bash run.sh app`` or ``bash run.sh serve`` on a free localhost port, stopped afterwards."""
    port = free_port()
    runtime = Path(tempfile.mkdtemp(prefix=f"bench_load_{mode}_"))
    ready = runtime / "ready"
    if mode == "app":
        cmd = [
            "bash",
            "run.sh",
            "app",
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--server.fileWatcherType",
            "none",
        ]
    elif mode == "serve":
        cmd = ["bash", "run.sh", "serve", "--port", str(port), "--ready-file", str(ready)]
        if workers:
            cmd += ["--workers", str(workers)]
    else:
        raise ValueError(f"mode must be 'app' or 'serve', not {mode!r}")
    logf = open(runtime / "server.log", "wb")
    proc = subprocess.Popen(cmd, cwd=str(ROOT), stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"{' '.join(cmd)} exited with {proc.returncode}:\n"
                    + (runtime / "server.log").read_text(errors="replace")[-3000:]
                )
            healthy = ready.exists() if mode == "serve" else _health(port)
            if healthy:
                break
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start:\n" + (runtime / "server.log").read_text(errors="replace"))
            time.sleep(0.2)
        yield StartedServer(f"http://127.0.0.1:{port}", proc, runtime)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        logf.close()


def _health(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def rss_mb(pids: list[int]) -> list[float]:
    out = []
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    out.append(int(line.split()[1]) / 1024)
        except OSError:
            pass
    return out


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def quantile(xs: list[float], p: int) -> float:
    if not xs:
        return float("nan")
    if len(xs) < 3:
        return max(xs)
    return statistics.quantiles(xs, n=100, method="inclusive")[p - 1]


def row(mode: str, page: str, users: int, tally: Tally, load_avg: float, rss: list[float]) -> dict:
    return {
        "mode": mode,
        "page": page or "(default)",
        "users": users,
        "first_p50": statistics.median(tally.first_loads) if tally.first_loads else float("nan"),
        "first_p95": quantile(tally.first_loads, 95),
        "first_max": max(tally.first_loads, default=float("nan")),
        "reruns": len(tally.reruns),
        "rerun_p50": statistics.median(tally.reruns) if tally.reruns else float("nan"),
        "rerun_p95": quantile(tally.reruns, 95),
        "rerun_max": max(tally.reruns, default=float("nan")),
        "exceptions": tally.exceptions,
        "failed_sessions": tally.failed_sessions,
        "errors": tally.messages,
        "load_avg_1min": load_avg,
        "rss_mb": [round(r) for r in rss],
    }


def print_rows(rows: list[dict]) -> None:
    print(
        "| mode | page | users | first load p50 / p95 / max s | reruns | slider p50 / p95 / max s | "
        "exceptions | failed | load avg | RSS MB per process |"
    )
    print("| --- | --- | ---: | --- | ---: | --- | ---: | ---: | ---: | --- |")
    for r in rows:
        print(
            f"| {r['mode']} | {r['page']} | {r['users']} | {r['first_p50']:.2f} / {r['first_p95']:.2f} / "
            f"{r['first_max']:.2f} | {r['reruns']} | {r['rerun_p50']:.2f} / {r['rerun_p95']:.2f} / "
            f"{r['rerun_max']:.2f} | {r['exceptions']} | {r['failed_sessions']} | {r['load_avg_1min']:.2f} | "
            f"{', '.join(str(x) for x in r['rss_mb'])} |"
        )
        for m in r["errors"]:
            print(f"|   error: {m}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="a running server (ws://host:port/_stcore/stream or http://host:port)")
    where.add_argument("--start", help="start the server(s) ourselves: app, serve or app,serve")
    ap.add_argument("--workers", type=int, default=None, help="--workers for run.sh serve (default: cores)")
    ap.add_argument("--users", default="10,20,30,50", help="comma-separated user counts")
    ap.add_argument("--pages", default="all", help="comma-separated url paths ('' = default page) or 'all'")
    ap.add_argument("--think", type=float, default=2.0, help="mean think time between slider moves (s)")
    ap.add_argument("--seconds", type=float, default=30.0, help="duration of each cell (s)")
    ap.add_argument("--warm", action="store_true", help="one server per mode for all cells (warm caches)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    args = ap.parse_args()
    users = [int(u) for u in args.users.split(",") if u.strip()]
    pages = app_pages() if args.pages == "all" else [p.strip() for p in args.pages.split(",")]
    rows: list[dict] = []

    def cell(mode: str, url: str, page: str, n: int, pids: list[int]) -> None:
        tally = run_load(url, page, n, args.think, args.seconds, args.seed)
        rows.append(row(mode, page, n, tally, os.getloadavg()[0], rss_mb(pids)))
        print_rows(rows[-1:])
        sys.stdout.flush()

    if args.url:
        for page in pages:
            for n in users:
                cell("url", args.url, page, n, [])
    else:
        for mode in args.start.split(","):
            if args.warm:
                with start_server(mode, args.workers) as srv:
                    for page in pages:
                        for n in users:
                            cell(mode, srv.url, page, n, srv.pids())
            else:
                for page in pages:
                    for n in users:
                        with start_server(mode, args.workers) as srv:
                            cell(mode, srv.url, page, n, srv.pids())
    print(
        "\nSummary (think %.1f s, %.0f s per cell, %s):"
        % (args.think, args.seconds, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    )
    print_rows(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 1 if any(r["exceptions"] or r["failed_sessions"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
