"""`bash run.sh app`: ``streamlit run app.py`` in this process, with the modules every page needs imported first.

A first visit after a server start paid for its imports (numpy, pandas, pyarrow, scipy, plotly, dpcore's views:
about 1 s of CPU) after the browser had connected. Streamlit offers no hook at its start, so this launcher
imports them itself, then runs Streamlit's own command line in the main thread: the server listens once they
are loaded, and its first visitor does not wait for them. They are imported here, in this thread, not in a
thread beside Streamlit: such a thread held the interpreter's lock while Streamlit started, so the server did not
listen sooner (1.5-1.9 s from the command to its first health answer either way, against 0.6 s for a bare app),
and a visit that arrived while it was still importing shared the lock with it (docs/benchmarks.md, "Page load");
and plotly, whose theme Streamlit's start-up draws, looks pandas up in ``sys.modules`` without importing it, so a
pandas half-imported by another thread broke the start ("partially initialized module 'pandas' has no attribute
'Series'"). OpenDP is not among them: only a real release needs it, and the release imports it then.

Then, still before it listens, the calibrations of the Gini page's default noise at every ε of its slider
(:func:`warm`: public inputs only, remembered by ``dpcore.noise`` for the process): the certified tight α is a
search, and they were over half of the Gini page's first run after a start. The page warms them itself too (after
it is drawn), for a server started another way.

Then, once the server answers its health check, a daemon thread opens the pages whose first run computes
(:data:`WARM_PAGES`) over Streamlit's WebSocket protocol, as ``run.sh serve`` does for its workers
(``serve.warm_up``): the page's own script fills the very caches a visitor's run reads (``st.cache_data`` is per
process, keyed by the function and its arguments), so nothing is rebuilt here. Their default views cost 0.7-1.4 s
of CPU each, 3 s together (the percentiles' curves, the Gini's recommendation, the planner's smallest ε),
more than the start may take, so they run after the server listens. A visitor who arrives while a page is being
warmed and opens it waits for the same computation (Streamlit computes one cache entry once: a lock per key)
instead of starting it again.
"""

from __future__ import annotations

import importlib
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Imported before Streamlit starts, in this order (numpy and pandas first: other code looks them up in
#: ``sys.modules``); what the data pages import on a first run. A failed import here is left to the page, which
#: shows it.
PRELOAD = (
    "numpy",
    "pandas",
    "pyarrow",
    "scipy.special",
    "scipy.optimize",
    "plotly.graph_objects",
    "plotly.io",
    "dpcore.data",
    "dpcore.views.answers",
    "dpcore.views.gini",
    "dpcore.views.percentiles",
    "dpcore.views.stratified",
    "dpcore.views.ratio",
    "dpcore.views.planner",
)


def preload(modules: tuple[str, ...] | None = None) -> None:
    for name in PRELOAD if modules is None else modules:
        try:
            importlib.import_module(name)
        except Exception:
            continue


def warm() -> None:
    """The Gini page's calibrations at its defaults (dpcore.defaults), every ε of its slider; a failure is left to
    the page, which shows it."""
    try:
        from dpcore import defaults
        from dpcore.views import gini

        gini.calibrate_epsilons(
            defaults.GINI_EPSILON_STEPS, gamma=defaults.GINI_GAMMA, calibration=defaults.GINI_CALIBRATION
        )
    except Exception:
        return


#: Opened once after the server listens, in this order: the pages whose first run computes for a second or more
#: (docs/benchmarks.md, "Page load": the percentiles' curves, the Gini's recommendation, the planner's default
#: plan). The cheapest first (server CPU about 0.7, 0.85 and 1.4 s): more pages are ready sooner, and a visit at
#: once to the percentiles or Gini page shares less CPU with the warm-up (measured against the planner first:
#: run 7 of "Page load").
WARM_PAGES = ("percentiles", "gini", "planner")


def _server_address(timeout: float) -> str | None:
    """host:port of this process's Streamlit server once its health check answers; None if it did not."""
    from streamlit import config
    from streamlit.runtime import Runtime

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Runtime.exists():  # the command line has read the configuration
            host = config.get_option("server.address") or "127.0.0.1"
            host = "127.0.0.1" if host in ("0.0.0.0", "::", "localhost") else host
            base = (config.get_option("server.baseUrlPath") or "").strip("/")
            address = f"{host}:{config.get_option('server.port')}" + (f"/{base}" if base else "")
            try:
                with urllib.request.urlopen(f"http://{address}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        return address
            except OSError:
                pass
        time.sleep(0.05)
    return None


def warm_pages(pages: tuple[str, ...] = WARM_PAGES, timeout: float = 120.0) -> tuple[int, list[str]]:
    """Open ``pages`` once on this process's server when it answers (see the module's docstring); returns
    (page runs done, problems). A problem is printed, never raised: the server serves whatever happens here."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import serve

    address = _server_address(timeout)
    if address is None:
        return 0, ["the server did not answer its health check: pages not warmed"]
    done, problems = serve.warm_up([address], list(pages), timeout=timeout)
    for problem in problems:
        print(f"warm-up: {problem}", file=sys.stderr)
    print(f"warm-up: {done} of {len(pages)} pages opened ({', '.join(pages)})", file=sys.stderr)
    return done, problems


def start_page_warm_up() -> threading.Thread:
    thread = threading.Thread(target=warm_pages, name="dp-page-warm-up", daemon=True)
    thread.start()
    return thread


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))  # dpcore and ui, as `streamlit run app.py` puts the script's folder first
    preload()
    warm()
    from streamlit.web import cli

    start_page_warm_up()  # after streamlit's import (in this thread); waits for the health answer, opens WARM_PAGES

    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *argv]
    return cli.main(prog_name="streamlit")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
