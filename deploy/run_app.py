"""`bash run.sh app`: ``streamlit run app.py`` in this process, with what the pages need made meanwhile.

A first visit after a server start paid for its imports (numpy, pandas, pyarrow, scipy, plotly, dpcore's views:
about 1 s of CPU) and, on the Gini page, for the calibrations of its slider after the browser had connected.
Streamlit offers no hook at its start, so this launcher makes them itself while Streamlit starts:

* numpy and pandas first, in this thread: plotly looks them up in ``sys.modules`` without importing them, and
  Streamlit's start-up draws plotly's theme, so a pandas half-imported by another thread broke the start
  ("partially initialized module 'pandas' has no attribute 'Series'");
* then, in a background thread, the other modules (a page's script that needs one still imports it: the import
  system makes it wait for the thread's import of the same module), and the calibrations of the Gini page's
  default noise at every ε of its slider (:func:`warm`: public inputs only, remembered by ``dpcore.noise`` for
  the process; the certified tight α is a search, and they were over half of the page's first run).

The thread, not this one, so that the server listens early: made before it listens, they delayed
the start by as much as they saved a visitor who connects at once (docs/benchmarks.md, "Page load"); a visitor
who comes a few seconds later finds them done either way. OpenDP is not preloaded: only a real release needs
it, and the release imports it then.
"""

from __future__ import annotations

import importlib
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Imported before Streamlit starts: modules other code looks up in ``sys.modules`` without importing them
PRELOAD_FIRST = ("numpy", "pandas")
#: Then, in the background thread, the rest of what the data pages import on a first run (a failed import here is
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
)


def preload(modules: tuple[str, ...] | None = None) -> None:
    for name in PRELOAD if modules is None else modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S112 - the page that needs it imports it again and reports the error
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
    except Exception:  # noqa: BLE001 - the page computes them again and reports the error
        return


def _background() -> None:
    preload()
    warm()


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))  # dpcore and ui, as `streamlit run app.py` puts the script's folder first
    preload(PRELOAD_FIRST)
    threading.Thread(target=_background, name="preload-imports", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *argv]
    return cli.main(prog_name="streamlit")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
