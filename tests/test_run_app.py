"""`bash run.sh app` starts the app through deploy/run_app.py: Streamlit's own command line on app.py, with the
modules the pages need imported meanwhile in a background thread (a first visit after a start did those imports
after the browser connected)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))

import run_app  # noqa: E402


def test_run_sh_app_goes_through_the_launcher():
    assert 'exec "$VENV/bin/python" deploy/run_app.py "$@"' in (ROOT / "run.sh").read_text(encoding="utf-8")


def test_every_preloaded_module_exists_and_a_missing_one_is_left_to_the_page():
    assert all(importlib.util.find_spec(name) is not None for name in run_app.PRELOAD_FIRST + run_app.PRELOAD)
    run_app.preload(("json", "no_such_module_of_this_app"))  # no exception: the page would report it


def test_the_launcher_runs_streamlit_on_app_py_with_the_arguments_given(monkeypatch):
    import streamlit.web.cli as cli

    seen = {}

    def fake_main(prog_name):
        seen["argv"], seen["prog_name"] = list(sys.argv), prog_name
        return 0

    monkeypatch.setattr(cli, "main", fake_main)
    monkeypatch.setattr(run_app, "PRELOAD", ())
    monkeypatch.setattr(run_app, "PRELOAD_FIRST", ())
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    assert run_app.main(["--server.port", "8765"]) == 0
    assert seen == {
        "argv": ["streamlit", "run", str(ROOT / "app.py"), "--server.port", "8765"],
        "prog_name": "streamlit",
    }
