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
"""

from __future__ import annotations

import importlib
import sys
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


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))  # dpcore and ui, as `streamlit run app.py` puts the script's folder first
    preload()
    warm()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *argv]
    return cli.main(prog_name="streamlit")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
