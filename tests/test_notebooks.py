"""The pages' notebooks (ui.notebook) run and print the page's view result.

Every view a page offers as a script (``ui.notebook.VIEWS``) is built as a notebook and executed with nbclient,
all in one kernel (one interpreter start and one import of dpcore, plotly and pandas for the lot). The notebooks of
the five method pages at their defaults are built from the script parts the pages themselves pass to their share
panel (captured while AppTest runs each page once); the views a page shows only after a choice are built from the
same parts with small literal settings. Each notebook's printed JSON must equal ``result.to_dict()`` of the view
function called here, in this process, with the arguments read back from the notebook's call (``ast``), and its
chart cell must draw at least one figure (the page's figure builders, run in the kernel).
"""

from __future__ import annotations

import ast
import importlib
import json
import os

import pytest
from support import REPO_ROOT, open_page

import ui.repro
from dpcore.data import build_dataset
from ui import notebook, scriptgen
from ui.planner import sections as planner_sections

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

#: the pages opened at their defaults, with the query parameters that keep them small
PAGES = {
    "gini": {"gini_n": "2000"},
    "percentiles": {},
    "stratified": {},
    "ratios": {},
    "planner": {"planner_view": planner_sections.SHARE.heading},
}
_PERCENTILES, _RATIO = "dpcore.views.percentiles", "dpcore.views.ratio"
_COUNTS = {"p_x": 0.3, "p_y": 0.2, "n_x": 200, "n_y": 200}
_NOISE = {"epsilon": 1.0, "mechanism": "laplace", "delta": None}
#: the views a page shows after a choice (another view, another method), with small settings
OTHER_VIEWS = [
    (
        _PERCENTILES,
        "exponential_cell_view",
        {"source": "synthetic", "n": 200, "cell_number": 100, "epsilon": 1.0, "q": 50.0, "seed": 3},
    ),
    (_PERCENTILES, "many_cells_view", {"n_cells": 100, "epsilon": 1.0, "n_bins": 20, "relation": "replace", "seed": 3}),
    (
        _PERCENTILES,
        "figures_view",
        {"n_cells": 50, "n_draws": 5, "rival_split": 3, "figure3_epsilon": 1.0, "relation": "replace", "seed": 3},
    ),
    (_RATIO, "intervals_view", {"n_x": 200, "n_y": 200, **_NOISE, "level": 0.95, "seed": 3, "p_x": 0.3, "p_y": 0.2}),
    (
        _RATIO,
        "coverage_heatmap_view",
        {
            "n_x": 200,
            "n_y": 200,
            **_NOISE,
            "level": 0.95,
            "n_sims": 500,
            "method": "Theorem 4.5 conservative",
            "seed": 3,
        },
    ),
    (_RATIO, "accuracy_view", {**_COUNTS, "alpha": 0.1}),
    (_RATIO, "bias_view", {"p_x": 0.3, "p_y": 0.2, "epsilon": 1.0}),
    (_RATIO, "odds_ratio_view", {**_COUNTS, **_NOISE, "level": 0.95, "seed": 3}),
    (_RATIO, "poverty_view", {"column": "SEX", "group_x": 2, "group_y": 1, **_NOISE, "level": 0.95, "seed": 3}),
]


def _pages_scripts(monkeypatch) -> list[scriptgen.ViewScript]:
    """The script parts each page passes to its share panel, at its defaults."""
    captured: list[scriptgen.ViewScript] = []
    share_panel = ui.repro.share_panel

    def spy(page, *, script=None, **kwargs):
        if script is not None:
            captured.append(script)
        return share_panel(page, script=script, **kwargs)

    monkeypatch.setattr(ui.repro, "share_panel", spy)
    for page, query in PAGES.items():
        at = open_page(f"app_pages/{page}.py", **query)
        assert not at.exception, [e.value for e in at.exception]
    return captured


def _call_arguments(script: scriptgen.ViewScript) -> tuple[list, dict]:
    """The view call's arguments, read back from the notebook's code: the data (rebuilt from the recipe) or
    nothing, and the literal keyword arguments."""
    call = next(node.value for node in ast.parse(script.call).body if isinstance(node, ast.Assign))
    kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    if not call.args:
        return [], kwargs
    recipes = [  # values (or the data table): rebuilt from the data cell's recipe, if it has one
        ast.literal_eval(node.value.args[0])
        for node in ast.parse(script.data).body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
    ]
    data = build_dataset(recipes[0]) if recipes else None
    if data is None:
        return [None], kwargs
    return [data.values if call.args[0].id == "values" else data.frame], kwargs


def _printed_json(cell) -> dict:
    text = "".join(out.get("text", "") for out in cell.outputs if out.get("output_type") == "stream")
    return json.loads(text)


@pytest.mark.slow
def test_every_view_notebook_runs_and_prints_the_page_view(monkeypatch):
    scripts = _pages_scripts(monkeypatch)
    assert {s.function for s in scripts} == {
        "gini_view",
        "cell_view",
        "group_means_view",
        "sampling_view",
        "planner_view",
    }
    for module, function, kwargs in OTHER_VIEWS:
        scripts.append(scriptgen.view_script_parts(module, function, kwargs, ("none",), title=function, data_arg=None))
    assert {(s.module, s.function) for s in scripts} == set(notebook.VIEWS)  # every view with a text is run
    notebooks = [nbformat.reads(notebook.view_notebook(s).decode("utf-8"), as_version=4) for s in scripts]

    client = nbclient.NotebookClient(
        notebooks[0], timeout=600, kernel_name="python3", resources={"metadata": {"path": str(REPO_ROOT)}}
    )
    monkeypatch.setenv("PLOTLY_RENDERER", "json")  # the figures as plain JSON outputs, not plotly.js pages
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    with client.setup_kernel():
        for nb in notebooks:
            client.nb = nb
            for index, cell in enumerate(nb.cells):
                if cell.cell_type == "code":
                    client.execute_cell(cell, index)

    for script, nb in zip(scripts, notebooks, strict=True):
        code = [cell for cell in nb.cells if cell.cell_type == "code"]
        printed = _printed_json(next(c for c in code if c.source.startswith("print(json.dumps(result.to_dict()")))
        args, kwargs = _call_arguments(script)
        view = getattr(importlib.import_module(script.module), script.function)(*args, **kwargs)
        assert printed == json.loads(json.dumps(view.to_dict(), default=float)), script.function
        if notebook.VIEWS[(script.module, script.function)].figures is not None:
            charts = code[-1]
            assert "figures" in charts.source, script.function
            shown = [out for out in charts.outputs if out.get("output_type") in ("display_data", "execute_result")]
            assert shown, script.function
