"""`bash run.sh app` starts the app through deploy/run_app.py: Streamlit's own command line on app.py, with the
modules the pages need imported first, in the launcher's thread, so that the server listens once they are loaded
(a first visit after a start did those imports after the browser connected)."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))

import run_app
from quality_support import free_port, python_executable


def test_run_sh_app_goes_through_the_launcher():
    assert 'exec "$VENV/bin/python" deploy/run_app.py "$@"' in (ROOT / "run.sh").read_text(encoding="utf-8")


def test_every_preloaded_module_exists_and_a_missing_one_is_left_to_the_page():
    assert all(importlib.util.find_spec(name) is not None for name in run_app.PRELOAD)
    run_app.preload(("json", "no_such_module_of_this_app"))  # no exception: the page would report it


def test_the_launcher_runs_streamlit_on_app_py_with_the_arguments_given(monkeypatch):
    import streamlit.web.cli as cli

    seen = {}

    def fake_main(prog_name):
        seen["argv"], seen["prog_name"] = list(sys.argv), prog_name
        return 0

    monkeypatch.setattr(cli, "main", fake_main)
    monkeypatch.setattr(run_app, "PRELOAD", ())
    monkeypatch.setattr(run_app, "warm", lambda: None)
    monkeypatch.setattr(run_app, "start_page_warm_up", lambda: None)
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    assert run_app.main(["--server.port", "8765"]) == 0
    assert seen == {
        "argv": ["streamlit", "run", str(ROOT / "app.py"), "--server.port", "8765"],
        "prog_name": "streamlit",
    }


def test_the_pages_modules_are_imported_before_streamlit_starts_in_the_launchers_thread(monkeypatch):
    import streamlit.web.cli as cli

    imported: list[tuple[str, str]] = []  # (module, thread) in the order of the imports
    real_import = importlib.import_module

    def recording_import(name, *args, **kwargs):
        imported.append((name, threading.current_thread().name))
        return real_import(name, *args, **kwargs)

    def fake_main(prog_name):
        imported.append(("streamlit's command line", threading.current_thread().name))
        return 0

    monkeypatch.setattr(run_app, "importlib", types.SimpleNamespace(import_module=recording_import))
    monkeypatch.setattr(
        run_app, "warm", lambda: imported.append(("the Gini's calibrations", threading.current_thread().name))
    )
    monkeypatch.setattr(
        run_app, "start_page_warm_up", lambda: imported.append(("the pages' warm-up", threading.current_thread().name))
    )
    monkeypatch.setattr(cli, "main", fake_main)
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    assert run_app.main([]) == 0
    me = threading.current_thread().name
    assert imported == [
        *((name, me) for name in run_app.PRELOAD),
        ("the Gini's calibrations", me),
        ("the pages' warm-up", me),  # a thread that waits for the server: started before Streamlit's start
        ("streamlit's command line", me),
    ]


def test_opendp_is_left_to_a_release():
    # only a real release needs it (0.5-0.7 s of import); the release imports it itself
    assert not any(name.split(".")[0] == "opendp" for name in run_app.PRELOAD)


def test_the_gini_pages_default_calibrations_are_ready_after_the_warm_up():
    from dpcore import defaults
    from dpcore.noise import certificates
    from dpcore.views import gini

    certificates._tight.cache_clear()
    run_app.warm()
    before = certificates._tight.cache_info()
    gini.calibrate_epsilons(defaults.GINI_EPSILON_STEPS, gamma=defaults.GINI_GAMMA, calibration="tight")
    after = certificates._tight.cache_info()
    assert after.misses == before.misses  # every ε of the page's slider found calibrated
    assert after.hits - before.hits == len(defaults.GINI_EPSILON_STEPS)


def test_the_warm_up_opens_the_computing_pages_on_this_servers_address(monkeypatch):
    import serve

    seen = {}

    def fake_warm_up(addresses, pages, timeout):
        seen["addresses"], seen["pages"] = addresses, pages
        return len(pages), []

    monkeypatch.setattr(run_app, "_server_address", lambda timeout: "127.0.0.1:8765")
    monkeypatch.setattr(serve, "warm_up", fake_warm_up)
    assert run_app.warm_pages() == (3, [])
    assert seen == {"addresses": ["127.0.0.1:8765"], "pages": ["percentiles", "gini", "planner"]}
    assert set(run_app.WARM_PAGES) <= set(serve.app_page_paths())  # every one is a page of app.py


def test_a_server_that_never_answers_leaves_the_pages_cold_and_says_so(monkeypatch):
    monkeypatch.setattr(run_app, "_server_address", lambda timeout: None)
    done, problems = run_app.warm_pages()
    assert done == 0 and "did not answer" in problems[0]


PLANNER_SPINNER = "Solving for the smallest"  # app_pages/planner.py's _accuracy: shown on a cache miss only


def _visit(address: str, page: str) -> str:
    """Every message of one page run (a new session, as a browser's first visit), as text."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    async def run() -> str:
        texts = []
        async with websockets.connect(
            f"ws://{address}/_stcore/stream", subprotocols=["streamlit"], max_size=None
        ) as conn:
            msg = BackMsg()
            msg.rerun_script.page_name = page
            await conn.send(msg.SerializeToString())
            while True:
                fm = ForwardMsg()
                fm.ParseFromString(await asyncio.wait_for(conn.recv(), timeout=240))
                texts.append(str(fm))
                if fm.WhichOneof("type") == "script_finished":
                    return "\n".join(texts)

    # in a thread of its own: a test run earlier in this worker may leave an event loop running in the main
    # thread (Playwright's sync API keeps one for its session-wide browser), where asyncio.run() is refused
    result: list[str] = []
    worker = threading.Thread(target=lambda: result.append(asyncio.run(run())))
    worker.start()
    worker.join()
    assert result, "the page run did not finish (the thread's exception is printed above)"
    return result[0]


def test_after_the_warm_up_a_first_visitor_reads_the_planners_plan_from_the_cache(tmp_path):
    # The planner's default plan (app_pages/planner.py's _accuracy, st.cache_data) shows its spinner only when it
    # computes (a cold server's first visit computes it for 2-3 s and shows it): a visitor after the launcher's
    # warm-up must not see it.
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                python_executable(),
                str(ROOT / "deploy" / "run_app.py"),
                "--server.port",
                str(port),
                "--server.headless",
                "true",
            ],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 300
        while "warm-up: 3 of 3 pages opened" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.2)
        first_visit = _visit(f"127.0.0.1:{port}", "planner")
        assert "Choose" in first_visit and PLANNER_SPINNER not in first_visit
    finally:
        proc.terminate()
        proc.wait(timeout=30)
