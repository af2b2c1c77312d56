"""A cold `run.sh app` server, several sessions opening a data page at the same moment.

Found by benchmarks/bench_load.py on a fresh server: the landing page defers `dpcore.data`, so the
first data page imports it inside a script run; with several sessions starting together, one thread
saw the module half-imported by another (``partially initialized module 'dpcore.data'``: an
exception box and no slider). Each session here must finish its first load and one slider move
without an exception. Real server and the benchmarks' browser-like client; no timing assertions.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from bench_load import run_load, start_server
from support import outside_event_loop


def test_simultaneous_first_loads_on_a_cold_server_raise_nothing():
    with start_server("app") as server:
        tally = outside_event_loop(run_load, server.url, "gini", users=10, think=0.0, seconds=5, max_reruns=1)
    assert tally.exceptions == 0 and tally.failed_sessions == 0, tally.messages
    assert len(tally.first_loads) == 10
