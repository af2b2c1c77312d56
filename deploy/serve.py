#!/usr/bin/env python3
"""Serve the app to a class: N Streamlit processes behind nginx (sticky sessions, WebSocket upgrade).

    bash run.sh serve [--port 8501] [--workers N] [--address localhost] [-- streamlit options]

What it does, as the current user, in a fresh runtime directory (removed on exit):
  1. starts N ``streamlit run app.py`` processes on free ports of 127.0.0.1 (N defaults to the number
     of CPU cores: one Python process uses one core, so a single process saturates at ~1 core);
  2. waits until every one answers ``/_stcore/health``, then opens every page once in every process
     over the WebSocket protocol (warm-up: imports and default-settings caches; ``--no-warmup``);
  3. writes an nginx config from ``deploy/nginx.conf.in`` (``-p`` prefix, pid/log/temp paths in the
     runtime directory, ``daemon off``) and starts Debian's nginx (``/usr/sbin/nginx``) on
     ``--address:--port``, balancing over the N processes with a sticky cookie;
  4. checks ``/_stcore/health`` through nginx, then prints the URL;
  5. on Ctrl-C / SIGTERM stops nginx (fast shutdown: open WebSockets are closed, not waited for) and
     the workers at the same time, and removes the runtime directory. A worker that dies is restarted
     on its port, so one crash does not take the class down; a worker that dies more than
     ``--max-restarts`` times (5) within ``--restart-window`` seconds (300) is taken out of nginx's
     upstream (the config is rewritten and nginx reloaded) and the others keep serving; only when
     no worker is left does the server stop.

Every child (nginx, the workers) is started with PR_SET_PDEATHSIG (Linux prctl): if this process is
killed (kill -9, OOM killer), the kernel sends the children SIGTERM, so no nginx or worker is left
answering on the port. The children run in their own process groups (a Ctrl-C in the terminal
reaches only this process, which stops them in order).

nginx is required (``apt-get install nginx``): without it the command exits with code 3 and says
how to install it, or how to run one process instead (``bash run.sh app``). We chose not to fall
back silently: a teacher who asked for several processes should not get one without noticing.

The budget ledger: every process reads ``DPCORE_LEDGER_URL`` from the environment (passed through
unchanged). On one machine the default SQLite file is one file for all processes (dpcore.ledger locks
it); across machines point it at PostgreSQL, so that every process charges one shared budget.
Caches (``st.cache_data``) stay per process.

This file uses only the Python standard library (no dpcore, no streamlit import), so it starts fast.
``--print-config`` prints the nginx config it would use (for a fixed list of ``--backend host:port``)
and exits: docs/serving.md uses it for the multi-machine / compose examples.
"""

from __future__ import annotations

import argparse
import collections
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).resolve().parent / "nginx.conf.in"
NGINX_CANDIDATES = ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx")
INSTALL_HINT = (
    "nginx is not installed, and `run.sh serve` needs it as the reverse proxy in front of the app\n"
    "processes. Install it with:\n"
    "    sudo apt-get install nginx        (Debian/Ubuntu; other systems: the 'nginx' package)\n"
    "The Debian package also starts a system-wide nginx on port 80; `run.sh serve` does not use it\n"
    "(stop it with `sudo systemctl disable --now nginx` if you do not want it).\n"
    "To serve with one process and no proxy instead, run:  bash run.sh app"
)
MAX_RESTARTS = 5
#: Seconds over which a worker's restarts are counted: more than MAX_RESTARTS deaths in this window
#: means the worker cannot stay up (a bad build, a file that crashes it on load), fewer means
#: occasional crashes over a class of several hours, each worth a restart.
RESTART_WINDOW = 300.0
#: Seconds SIGTERM'd children get to exit before SIGKILL, at shutdown. nginx stops fast (SIGTERM
#: closes the WebSockets; a graceful SIGQUIT waited for them: 10.5 s with 10 open sessions) and
#: Streamlit closes its sessions on SIGTERM in well under a second.
STOP_GRACE = 3.0
PR_SET_PDEATHSIG = 1


def log(msg: str) -> None:
    print(f"[serve] {msg}", file=sys.stderr, flush=True)


def die_with_parent(parent_pid: int):
    """A ``preexec_fn`` that asks the kernel to SIGTERM the child when ``parent_pid`` (this launcher)
    dies, whatever kills it (PR_SET_PDEATHSIG; Linux). If the parent died between fork and prctl,
    the child exits at once. Elsewhere (no prctl) it does nothing. libc's prctl is looked up here, in
    the parent: between fork and exec the child only calls it (no import, no allocation to speak of)."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        prctl = None

    def preexec() -> None:
        if prctl is None:
            return
        prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(1)

    return preexec


def find_nginx(explicit: str | None = None) -> str | None:
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    found = shutil.which("nginx")
    if found:
        return found
    for path in NGINX_CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    return None


def usable_cores() -> int:
    """CPU cores this process may run on (respects taskset/cgroup CPU sets, unlike os.cpu_count())."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_is_free(address: str, port: int) -> bool:
    host = "0.0.0.0" if address in ("0.0.0.0", "*", "") else ("127.0.0.1" if address == "localhost" else address)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def listen_lines(address: str, port: int) -> list[str]:
    """nginx ``listen`` directives. 'localhost' binds the loopback interfaces only (the default)."""
    if address == "localhost":
        lines = [f"listen 127.0.0.1:{port};"]
        if socket.has_ipv6 and _ipv6_loopback_works():
            lines.append(f"listen [::1]:{port};")
        return lines
    if address in ("0.0.0.0", "*", ""):
        return [f"listen {port};"]
    if ":" in address and not address.startswith("["):
        return [f"listen [{address}]:{port};"]
    return [f"listen {address}:{port};"]


def _ipv6_loopback_works() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def render_nginx_config(
    *,
    runtime: Path,
    backends: list[str],
    listen: list[str],
    max_body_mb: int = 50,
    daemon: bool = False,
    access_log: bool = False,
    nginx_workers: str = "1",
    user_line: str | None = None,
) -> str:
    """The nginx config for ``backends`` ("host:port"), with every path inside ``runtime``."""
    if user_line is None:
        # nginx started by root drops its workers to an unprivileged user; as any other user it
        # simply runs as that user (the `user` directive is then ignored, so we leave it out).
        user_line = "user nobody nogroup;" if os.geteuid() == 0 else "# (runs as the current user)"
    text = TEMPLATE.read_text(encoding="utf-8")
    values = {
        "@USER_LINE@": user_line,
        "@NGINX_WORKERS@": nginx_workers,
        "@DAEMON@": "on" if daemon else "off",
        "@RUNTIME@": str(runtime),
        "@ACCESS_LOG@": f"{runtime}/nginx-access.log" if access_log else "off",
        "@MAX_BODY@": f"{int(max_body_mb) + 1}m",
        "@SERVERS@": "\n".join(f"        server {b} max_fails=0;" for b in backends),
        "@LISTEN@": "\n".join(f"        {line}" for line in listen),
    }
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def describe_ledger(url: str | None) -> str:
    """Where the app processes charge the privacy budget (password hidden)."""
    if not url:
        return (
            "the default SQLite file (~/.local/share/dpcore/ledger.db), one file shared by every process on "
            "this machine; for several machines set DPCORE_LEDGER_URL=postgresql://... (docs/serving.md)"
        )
    if "://" in url and "@" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        url = f"{scheme}://{creds.split(':', 1)[0]}:***@{host}" if ":" in creds else url
    shared = "shared by every process" + ("" if url.startswith(("postgresql:", "postgres:")) else " on this machine")
    return f"DPCORE_LEDGER_URL={url} ({shared})"


def http_ok(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


class Worker:
    def __init__(self, index: int, python: str, runtime: Path, streamlit_args: list[str], cookie_secret: str):
        self.index = index
        self.python = python
        self.runtime = runtime
        self.streamlit_args = streamlit_args
        self.cookie_secret = cookie_secret
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.restart_times: collections.deque[float] = collections.deque()
        self.retired = False  # taken out of nginx's upstream: it kept dying
        self.log_path = runtime / f"worker-{index}.log"
        self.app_script = ROOT / "app.py"

    def restarts_within(self, window: float, now: float) -> int:
        """Restarts in the last ``window`` seconds (older ones are forgotten)."""
        while self.restart_times and self.restart_times[0] < now - window:
            self.restart_times.popleft()
        return len(self.restart_times)

    def start(self) -> None:
        cmd = [
            self.python,
            "-m",
            "streamlit",
            "run",
            str(self.app_script),
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(self.port),
            "--server.headless",
            "true",
            "--server.fileWatcherType",
            "none",
            "--server.runOnSave",
            "false",
            "--browser.gatherUsageStats",
            "false",
            *self.streamlit_args,
        ]
        # one secret for every process, so signed cookies are valid whichever process answers
        # (Streamlit refuses this option on the command line; the environment is allowed)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", self.cookie_secret)
        logf = open(self.log_path, "ab")  # owned by the child from now on
        self.proc = subprocess.Popen(
            cmd,
            cwd=str(ROOT),
            stdout=logf,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=die_with_parent(os.getpid()),
        )
        logf.close()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def healthy(self) -> bool:
        return http_ok(f"http://{self.address}/_stcore/health")

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def stop_all(procs: list[subprocess.Popen | None], grace: float = STOP_GRACE) -> list[int]:
    """SIGTERM every process's group at once, wait up to ``grace`` seconds for all of them together,
    then SIGKILL what is left. Returns the pids that had to be killed. (Stopping them one after the
    other with a graceful nginx stop first took 10.5 s with 10 open WebSocket sessions.)"""
    live = [p for p in procs if p is not None and p.poll() is None]
    for proc in live:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    killed = []
    for proc in live:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            killed.append(proc.pid)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
            proc.wait(timeout=5)
    return killed


def remove_leftover_runtimes(parent: Path) -> list[Path]:
    """Runtime directories (``dp-serve-*``, this user's) of launchers that were killed (kill -9, power
    loss) and so could not remove them: their ``serve.pid`` names a process that no longer exists.
    Their children died with them (PR_SET_PDEATHSIG); only the files are left."""
    removed = []
    for path in parent.glob("dp-serve-*"):
        try:
            if path.stat().st_uid != os.geteuid():
                continue
            pid = int((path / "serve.pid").read_text().strip())
        except (OSError, ValueError):
            continue
        try:
            os.kill(pid, 0)
            continue  # its launcher is running
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def wait_healthy(workers: list[Worker], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    pending = list(workers)
    while pending:
        for w in list(pending):
            if w.proc is not None and w.proc.poll() is not None:
                raise RuntimeError(f"app process {w.index} exited with code {w.proc.returncode}:\n{w.log_tail()}")
            if w.healthy():
                pending.remove(w)
        if not pending:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"app process(es) {[w.index for w in pending]} not healthy after {timeout:.0f} s:\n"
                + pending[0].log_tail()
            )
        time.sleep(0.2)


def app_page_paths() -> list[str]:
    """The url paths of app.py's pages ('' = the default page), read from app.py's source."""
    import re

    text = (ROOT / "app.py").read_text(encoding="utf-8")
    return ["", *re.findall(r'url_path="([^"]+)"', text)]


def warm_up(addresses: list[str], pages: list[str], timeout: float = 120.0) -> tuple[int, list[str]]:
    """Open every page once in every app process over Streamlit's WebSocket protocol, as a browser
    would, so that the class's first page loads do not pay the imports and the default-settings
    computations (each process has its own caches). Returns (page runs done, problems)."""
    import asyncio

    import websockets  # installed with streamlit
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    async def one(address: str, page: str) -> str | None:
        try:
            async with websockets.connect(
                f"ws://{address}/_stcore/stream", subprotocols=["streamlit"], max_size=None, open_timeout=timeout
            ) as conn:
                msg = BackMsg()
                msg.rerun_script.page_name = page
                msg.rerun_script.query_string = ""
                await conn.send(msg.SerializeToString())
                while True:
                    fm = ForwardMsg()
                    fm.ParseFromString(await asyncio.wait_for(conn.recv(), timeout=timeout))
                    kind = fm.WhichOneof("type")
                    if (
                        kind == "delta"
                        and fm.delta.WhichOneof("type") == "new_element"
                        and fm.delta.new_element.WhichOneof("type") == "exception"
                    ):
                        return f"{address} page {page or '(default)'}: exception while warming up"
                    if kind == "page_not_found":
                        return f"{address} page {page!r} not found"
                    if kind == "script_finished":
                        return None
        except Exception as exc:  # reported, the server still starts
            return f"{address} page {page or '(default)'}: {type(exc).__name__}: {exc}"

    async def worker_pages(address: str) -> list[str | None]:
        # one process's pages one after the other (they share one interpreter); processes in parallel
        return [await one(address, page) for page in pages]

    async def run_all() -> list[str | None]:
        results = await asyncio.gather(*(worker_pages(a) for a in addresses))
        return [r for rs in results for r in rs]

    results = asyncio.run(run_all())
    return sum(r is None for r in results), [r for r in results if r]


class _Stop(Exception):
    pass


def _raise_stop(signum, frame):  # signal handler signature
    raise _Stop(signum)


# complexity above the cap: the start-up sequence in order: each step's failure is reported where it happens
def serve(args: argparse.Namespace, streamlit_args: list[str]) -> int:  # noqa: C901
    for leftover in remove_leftover_runtimes(Path(args.runtime_dir or tempfile.gettempdir())):
        log(f"removed {leftover}, left by a launcher that was killed")
    nginx = find_nginx(args.nginx)
    if nginx is None:
        log(INSTALL_HINT)
        return 3
    if args.workers < 1:
        log("--workers must be at least 1")
        return 2
    if not port_is_free(args.address, args.port):
        log(f"port {args.port} on {args.address} is already in use; choose another with --port")
        return 2
    log(f"budget ledger: {describe_ledger(os.environ.get('DPCORE_LEDGER_URL'))}")

    runtime = Path(tempfile.mkdtemp(prefix="dp-serve-", dir=args.runtime_dir))
    (runtime / "serve.pid").write_text(f"{os.getpid()}\n", encoding="utf-8")
    if os.geteuid() == 0:
        runtime.chmod(0o711)  # nginx's unprivileged workers must reach their temp dirs inside
    signal.signal(signal.SIGTERM, _raise_stop)
    signal.signal(signal.SIGHUP, _raise_stop)
    cookie_secret = secrets.token_hex(32)
    workers = [Worker(i, args.python, runtime, streamlit_args, cookie_secret) for i in range(args.workers)]
    for w in workers:
        w.app_script = Path(args.app_script)
    nginx_proc: subprocess.Popen | None = None
    code = 0
    try:
        t0 = time.perf_counter()
        log(f"starting {args.workers} app process(es) (runtime dir {runtime})")
        for w in workers:
            w.start()
        wait_healthy(workers, args.timeout)
        if not args.no_warmup:
            t1 = time.perf_counter()
            pages = app_page_paths()
            done, problems = warm_up([w.address for w in workers], pages, timeout=args.timeout)
            for problem in problems:
                log(f"warm-up: {problem}")
            log(f"warmed up {done}/{len(pages) * len(workers)} page runs in {time.perf_counter() - t1:.1f} s")
        conf = runtime / "nginx.conf"

        def write_config(serving: list[Worker]) -> None:
            """Render the config for the workers still serving and check it with ``nginx -t``."""
            conf.write_text(
                render_nginx_config(
                    runtime=runtime,
                    backends=[w.address for w in serving],
                    listen=listen_lines(args.address, args.port),
                    max_body_mb=args.max_upload_mb,
                    access_log=args.access_log,
                ),
                encoding="utf-8",
            )
            test = subprocess.run(
                [nginx, "-t", "-q", "-p", str(runtime), "-c", str(conf)], capture_output=True, text=True
            )
            if test.returncode != 0:
                raise RuntimeError(f"nginx rejected the generated config {conf}:\n{test.stderr}")

        write_config(workers)
        nginx_log = open(runtime / "nginx-stderr.log", "ab")
        nginx_proc = subprocess.Popen(
            [nginx, "-p", str(runtime), "-c", str(conf)],
            stdout=nginx_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent(os.getpid()),
        )
        nginx_log.close()
        host = "localhost" if args.address in ("localhost", "127.0.0.1") else args.address
        probe_host = "127.0.0.1" if args.address in ("localhost", "0.0.0.0", "*", "") else args.address
        if ":" in probe_host and not probe_host.startswith("["):
            probe_host = f"[{probe_host}]"
        deadline = time.monotonic() + 20
        while not http_ok(f"http://{probe_host}:{args.port}/_stcore/health"):
            if nginx_proc.poll() is not None or time.monotonic() > deadline:
                err = (
                    (runtime / "nginx-error.log").read_text(errors="replace")
                    if (runtime / "nginx-error.log").exists()
                    else ""
                )
                raise RuntimeError(f"nginx did not come up on port {args.port}:\n{err[-2000:]}")
            time.sleep(0.1)
        log(
            f"ready in {time.perf_counter() - t0:.1f} s: {args.workers} app process(es) on "
            f"{', '.join(str(w.port) for w in workers)} behind nginx"
        )
        print(f"\n  Serving the app at:  http://{host}:{args.port}\n", flush=True)
        if args.address not in ("localhost", "127.0.0.1", "::1"):
            log(
                "WARNING: listening beyond this machine. Anyone who can reach this port can use the app and "
                "upload files; put it behind TLS and a login (docs/serving.md) before opening it to a network."
            )
        if args.ready_file:
            Path(args.ready_file).write_text(f"http://{probe_host}:{args.port}\n", encoding="utf-8")
        while True:
            time.sleep(0.5)
            if nginx_proc.poll() is not None:
                raise RuntimeError(f"nginx exited with code {nginx_proc.returncode}")
            for w in workers:
                if w.retired or w.proc is None or w.proc.poll() is None:
                    continue
                now = time.monotonic()
                if w.restarts_within(args.restart_window, now) < args.max_restarts:
                    w.restart_times.append(now)
                    log(
                        f"app process {w.index} exited with code {w.proc.returncode}; restarting on the same port "
                        f"({len(w.restart_times)} restart(s) in the last {args.restart_window:g} s, at most "
                        f"{args.max_restarts})"
                    )
                    w.start()
                    continue
                w.retired = True
                serving = [v for v in workers if not v.retired]
                if not serving:
                    raise RuntimeError(
                        f"every app process keeps dying; the last one, {w.index}, died "
                        f"{args.max_restarts + 1} times in {args.restart_window:g} s:\n{w.log_tail()}"
                    )
                write_config(serving)
                os.kill(nginx_proc.pid, signal.SIGHUP)  # reload: new connections go to the others only
                log(
                    f"app process {w.index} died {args.max_restarts + 1} times in {args.restart_window:g} s: taken "
                    f"out of nginx's upstream; {len(serving)} app process(es) keep serving "
                    f"(ports {', '.join(str(v.port) for v in serving)}). Its log ({w.log_path.name}) ends:\n"
                    f"{w.log_tail(1200)}"
                )
    except (KeyboardInterrupt, _Stop):
        log("stopping")
    except RuntimeError as exc:
        log(f"error: {exc}")
        code = 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        # nginx and the workers together: nginx's fast stop (SIGTERM) closes the open WebSockets at once
        t_stop = time.monotonic()
        procs = [nginx_proc, *(w.proc for w in workers)]
        running = sum(p is not None and p.poll() is None for p in procs)
        killed = stop_all(procs)
        log(
            f"stopped {running} process(es) in {time.monotonic() - t_stop:.1f} s"
            + (
                f"; {len(killed)} did not stop within {STOP_GRACE:g} s and were killed"
                if killed
                else " (each ended on SIGTERM)"
            )
        )
        if args.keep_runtime:
            log(f"kept {runtime}")
        else:
            shutil.rmtree(runtime, ignore_errors=True)
    return code


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" in argv:
        cut = argv.index("--")
        argv, streamlit_args = argv[:cut], argv[cut + 1 :]
    else:
        streamlit_args = []
    ap = argparse.ArgumentParser(
        prog="run.sh serve",
        description=__doc__.splitlines()[0],
        epilog="Arguments after `--` are passed on to every `streamlit run`.",
    )
    ap.add_argument("--port", type=int, default=8501, help="port nginx listens on (default 8501)")
    ap.add_argument(
        "--workers",
        type=int,
        default=usable_cores(),
        help=f"number of app processes (default: the CPU cores this process may use, here {usable_cores()})",
    )
    ap.add_argument(
        "--address",
        default="localhost",
        help="address nginx binds: localhost (default, this machine only) or 0.0.0.0 for every "
        "interface (read the security note in docs/serving.md first)",
    )
    ap.add_argument("--python", default=sys.executable, help="Python that runs streamlit (default: this one)")
    ap.add_argument("--nginx", default=None, help="path of the nginx binary (default: PATH, then /usr/sbin/nginx)")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for the app processes")
    ap.add_argument("--max-upload-mb", type=int, default=50, help="largest request body nginx accepts")
    ap.add_argument(
        "--max-restarts",
        type=int,
        default=MAX_RESTARTS,
        help=f"restarts of one app process allowed within --restart-window (default {MAX_RESTARTS}); "
        "one more death takes it out of the proxy",
    )
    ap.add_argument(
        "--restart-window",
        type=float,
        default=RESTART_WINDOW,
        help=f"seconds over which restarts are counted (default {RESTART_WINDOW:g})",
    )
    ap.add_argument("--app-script", default=str(ROOT / "app.py"), help=argparse.SUPPRESS)  # tests: a tiny app
    ap.add_argument("--runtime-dir", default=None, help="parent of the temporary runtime directory")
    ap.add_argument(
        "--no-warmup",
        action="store_true",
        help="skip opening every page once in every process before announcing the URL",
    )
    ap.add_argument("--access-log", action="store_true", help="write nginx's access log to the runtime dir")
    ap.add_argument("--keep-runtime", action="store_true", help="keep the runtime dir (configs, logs) on exit")
    ap.add_argument("--ready-file", default=None, help="write the URL to this file once healthy (for scripts)")
    ap.add_argument(
        "--print-config",
        action="store_true",
        help="print the nginx config for --backend host:port (repeatable) and exit",
    )
    ap.add_argument("--backend", action="append", default=[], help="backend host:port for --print-config")
    ap.add_argument("--runtime", default="/tmp/dp-serve", help="runtime dir written into --print-config output")
    return ap.parse_args(argv), streamlit_args


def main(argv: list[str] | None = None) -> int:
    args, streamlit_args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.print_config:
        backends = args.backend or [f"127.0.0.1:{8600 + i}" for i in range(args.workers)]
        sys.stdout.write(
            render_nginx_config(
                runtime=Path(args.runtime),
                backends=backends,
                listen=listen_lines(args.address, args.port),
                daemon=False,
                access_log=args.access_log,
                nginx_workers="auto",
                user_line="# user: see docs/serving.md",
            )
        )
        return 0
    return serve(args, streamlit_args)


if __name__ == "__main__":
    sys.exit(main())
