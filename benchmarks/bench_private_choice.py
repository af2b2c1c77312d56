"""What the method pages' "plan privately" choice costs a visitor without an upload (prints one line).

Every run of the Gini, percentiles and group-means pages calls ``ui.private_source.page_data`` (on data that are
not a confidential upload: no widget, no ledger, only the download mark stored) and every download button reads
the mark (``ui.common.marked_download``). Both are timed here, N calls each, inside a real Streamlit script run
(AppTest), so the session state and the script-run context are the page's. Compare with a page run's CPU time
(``bench_page_load.py``: about 0.25 s of server CPU per load of these pages).

Run: .venv/bin/python benchmarks/bench_private_choice.py [--calls 20000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import sys, time
sys.path.insert(0, {root!r})
import numpy as np
import streamlit as st
from dpcore.data import IncomeData
from ui import private_source
from ui.common import marked_download

ds = IncomeData(values=np.ones(10), name="public data", source="synthetic")
n = {calls}
t = time.perf_counter()
for _ in range(n):
    private_source.page_data(ds, "gini")
choice = (time.perf_counter() - t) / n * 1e6
t = time.perf_counter()
for _ in range(n):
    marked_download("Download (CSV)", "x.csv")
mark = (time.perf_counter() - t) / n * 1e6
st.write(f"page_data without an upload: {{choice:.1f}} µs per run; marked_download: {{mark:.1f}} µs per button")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=20_000)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(SCRIPT.format(root=str(ROOT), calls=args.calls), default_timeout=300).run()
    if at.exception:
        raise SystemExit(str(at.exception[0].value))
    print(at.markdown[0].value)


if __name__ == "__main__":
    main()
