"""`bash run.sh app` starts the app through deploy/run_app.py: Streamlit's own command line on app.py, with the
modules the pages need imported first, in the launcher's thread, so that the server listens once they are loaded
(a first visit after a start did those imports after the browser connected)."""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))

import run_app


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
    monkeypatch.setattr(cli, "main", fake_main)
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    assert run_app.main([]) == 0
    me = threading.current_thread().name
    assert imported == [
        *((name, me) for name in run_app.PRELOAD),
        ("the Gini's calibrations", me),
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
