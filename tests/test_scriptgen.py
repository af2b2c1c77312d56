"""Tests of ui.scriptgen: generated scripts run as is (subprocess) and reproduce the numbers.

A view's script is the page's own view call with literal arguments (``view_script``); the data
part rebuilds the sidebar's dataset with ``dpcore.data.build_dataset``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from support import REPO_ROOT, run_script

from dpcore.data import lognormal_incomes, pareto_mixture_incomes, two_point_incomes
from dpcore.validation import DPInputError
from dpcore.views import gini as gini_experiments
from ui import scriptgen


def test_dataset_code_rebuilds_each_synthetic_source():
    for key, expected in [
        (("lognormal", 500, 0.9, 3), lognormal_incomes(500, sigma=0.9, rng=3)),
        (("pareto", 400, 0.5, 2.5, 4), pareto_mixture_incomes(400, gini=0.5, tail_index=2.5, median=30_000.0, rng=4)),
        (
            ("lookalike", 300, 0.4, 25_000.0, 9),
            pareto_mixture_incomes(300, gini=0.4, tail_index=2.5, median=25_000.0, rng=9),
        ),
        (("two_point", 200, 0.5, None, 5), two_point_incomes(200, 0.5, None, mean=30_000.0, rng=5).values),
    ]:
        ns: dict = {}
        exec(scriptgen.dataset_code(key), ns)
        np.testing.assert_array_equal(ns["values"], expected)


def test_dataset_code_example_default_and_none():
    ns: dict = {}
    exec(scriptgen.dataset_code(("example", "engel")), ns)
    assert ns["values"].size == 235
    ns = {}
    exec(scriptgen.dataset_code(None), ns)
    np.testing.assert_array_equal(ns["values"], lognormal_incomes(10_000, sigma=0.9, rng=2026))
    ns = {}
    exec(scriptgen.dataset_code(("none",)), ns)
    assert ns["values"] is None and ns["frame"] is None


def test_upload_is_never_embedded_and_a_file_name_cannot_inject_code():
    code = scriptgen.dataset_code(("upload", "abc123", "secret.csv", "INCOME", "drop"))
    assert "'path': 'secret.csv'" in code and "not embedded" in code
    hostile = scriptgen.dataset_code(("upload", "abc", "x.csv\nimport os; os.system('echo pwned')\n", "INCOME", "drop"))
    tree = ast.parse(hostile)
    assert not any(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) for node in tree.body)
    assert [type(node).__name__ for node in tree.body] == ["ImportFrom", "Assign", "Assign"]


def test_call_code_writes_literals_and_refuses_names_that_are_not_identifiers():
    code = scriptgen.call_code(
        "dpcore.views.gini",
        "gini_view",
        (),
        {"epsilon": 0.5, "prior": ("beta", 6.0, 7.0)},
        target="result",
        arg_names=("values",),
    )
    assert code == (
        "from dpcore.views.gini import gini_view\nresult = gini_view(values, epsilon=0.5, prior=('beta', 6.0, 7.0))\n"
    )
    for bad in ("os; import os", "a b", ""):
        with pytest.raises(DPInputError):
            scriptgen.call_code(bad, "f", target="x")
        with pytest.raises(DPInputError):
            scriptgen.call_code("m", "f", (), {bad: 1}, target="x")


def test_view_script_is_the_view_call_and_prints_the_view():
    settings = {"epsilon": 0.5, "gamma": 2.0, "lower": 0.0, "upper": 500_000.0, "n": 800, "seed": 3}
    text = scriptgen.view_script(
        gini_experiments.__name__, "gini_view", settings, ("lognormal", 1000, 0.9, 4), title="Gini index"
    )
    assert "gini_view(" in text and "smooth_sensitivity" not in text  # the call, not a copy of the pipeline
    out = run_script(text)
    expected = gini_experiments.gini_view(lognormal_incomes(1000, sigma=0.9, rng=4), **settings).to_dict()
    assert set(out) == set(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(out[key], value, rtol=1e-12, err_msg=key)
    with pytest.raises(DPInputError):
        scriptgen.view_script("m", "f", ["not a dict"], None, title="x")
    with pytest.raises(DPInputError):
        scriptgen.view_script("m", "f", {"x": object()}, None, title="x")


def test_literal_refuses_objects_and_roundtrips():
    data = {"a": [1, 2.5, None, True, "x'y"], "b": (1,), "c": float("inf")}
    assert eval(scriptgen.literal(data), {"float": float}) == data
    with pytest.raises(DPInputError):
        scriptgen.literal(object())
    with pytest.raises(DPInputError):
        scriptgen.dataset_code(("nonsense",))


def test_scriptgen_lives_in_ui_only():
    """Script generation is app code: no dpcore.scriptgen any more (ui.scriptgen imports no streamlit)."""
    import importlib.util

    assert importlib.util.find_spec("dpcore.scriptgen") is None
    tree = ast.parse((Path(REPO_ROOT) / "ui" / "scriptgen.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not any(name and name.split(".")[0] == "streamlit" for name in imported)


MY_APP_FILES = (
    "app_pages/gini.py",
    "app_pages/percentiles.py",
    "app_pages/about.py",
    "ui/gini/views.py",
    "ui/percentiles/views.py",
    "ui/scriptgen.py",
    "ui/repro.py",
    "ui/notebook.py",
)


@pytest.mark.parametrize("name", MY_APP_FILES)
def test_no_string_constant_holds_dpcore_code(name):
    """Scripts are built from a function name + literal arguments, never from a template of page logic."""
    path = Path(REPO_ROOT) / name
    if not path.is_file():
        pytest.skip(f"{name} does not exist")
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            lines = [line.strip() for line in node.value.splitlines()]
            assert not any(line.startswith(("from dpcore", "import dpcore")) for line in lines), (
                name,
                node.value[:200],
            )
