"""`bash run.sh app`: ``streamlit run app.py`` in this process, with the modules every page needs imported meanwhile.

A first visit after a server start paid for its imports (numpy, pandas, pyarrow, scipy, plotly, dpcore's views:
about 1 s of CPU) after the browser had connected. Streamlit offers no hook at its start, so this launcher
imports them itself, then runs Streamlit's own command line in the main thread. numpy and pandas first, in this
thread: plotly looks them up in ``sys.modules`` without importing them (``get_module(..., should_load=False)``),
and Streamlit's start-up draws plotly's theme, so a pandas half-imported by another thread broke the start
(measured: "partially initialized module 'pandas' has no attribute 'Series'"). The others in a background
thread, while Streamlit starts and the browser loads the frontend; a page's script that needs one still imports
it (the import system makes it wait for the thread's import of the same module).
"""

from __future__ import annotations

import importlib
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Imported before Streamlit starts: modules other code looks up in ``sys.modules`` without importing them
PRELOAD_FIRST = ("numpy", "pandas")
#: Then, in a background thread, the rest of what the data pages import on a first run (a failed import here is
#: left to the page, which shows it)
PRELOAD = (
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
    "opendp.prelude",
)


def preload(modules: tuple[str, ...] | None = None) -> None:
    for name in PRELOAD if modules is None else modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S112 - the page that needs it imports it again and reports the error
            continue


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))  # dpcore and ui, as `streamlit run app.py` puts the script's folder first
    preload(PRELOAD_FIRST)
    threading.Thread(target=preload, name="preload-imports", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *argv]
    return cli.main(prog_name="streamlit")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
