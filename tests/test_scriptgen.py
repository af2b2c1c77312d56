"""Tests of dpcore.scriptgen: generated scripts run as is (subprocess) and reproduce the numbers."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcore import planner as P, scriptgen as S
from dpcore.data import lognormal_incomes, pareto_mixture_incomes
from dpcore.validation import DPInputError

REPO = Path(__file__).resolve().parent.parent

CONFIG = {
    "statistics": [
        {"kind": "gini", "params": {"upper": 1_000_000.0}, "target": {"rel_error": 0.1, "confidence": 0.9}},
        {"kind": "percentiles", "params": {"n_sims": 1000, "seed": 7}, "target": {"rel_error": 0.1, "confidence": 0.9}},
        {"kind": "group_means", "params": {"upper": 500_000.0}, "target": {"rel_error": 0.05, "confidence": 0.95}},
        {"kind": "ratio", "params": {"threshold": 20_000.0}, "target": {"rel_error": 0.1, "confidence": 0.9}},
    ],
    "group_column": None,
    "group_seed": 5,
    "budget": {"allocation": [0.4, 0.2, 0.2, 0.2]},
}


def run_script(text: str, tmp_path: Path) -> dict:
    path = tmp_path / "view.py"
    path.write_text(text)
    proc = subprocess.run([sys.executable, str(path)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_planner_script_runs_and_reproduces_numbers(tmp_path):
    key = ("lognormal", 3000, 0.8, 11)
    cfg = json.loads(json.dumps(CONFIG))
    # a string a user could influence cannot inject code: it is written with repr (unused here: frame is None)
    cfg["group_column"] = "x'); import os; os.system('echo pwned'); ('"
    text = S.planner_script(key, cfg, seed=2026)
    assert "'x\\'); import os" in text or "\"x'); import os" in text
    out = run_script(text, tmp_path)
    assert "pwned" not in json.dumps(out)
    # the same computation in this process (what the page does)
    values = lognormal_incomes(3000, sigma=0.8, rng=11)
    groups = P.planning_groups(values.size, seed=5)
    for item, got in zip(CONFIG["statistics"], out["accuracy_first"]):
        stat = P.make_statistic(item["kind"], values, groups, **item["params"])
        sol = P.solve_epsilon(stat, P.AccuracyTarget(**item["target"]))
        assert got["epsilon"] == pytest.approx(sol.epsilon, rel=1e-12)
        assert got["statistic"] == stat.name
    assert out["total_epsilon_sequential"] == pytest.approx(sum(s["epsilon"] for s in out["accuracy_first"]))
    assert [b["epsilon"] for b in out["budget_first"]] == CONFIG["budget"]["allocation"]


def test_dataset_code_rebuilds_each_synthetic_source():
    for key, expected in [
        (("lognormal", 500, 0.9, 3), lognormal_incomes(500, sigma=0.9, rng=3)),
        (("pareto", 400, 0.5, 2.5, 4), pareto_mixture_incomes(400, gini=0.5, tail_index=2.5, median=30_000.0, rng=4)),
        (("lookalike", 300, 0.4, 25_000.0, 9),
         pareto_mixture_incomes(300, gini=0.4, tail_index=2.5, median=25_000.0, rng=9)),
    ]:
        ns: dict = {}
        exec(S.dataset_code(key), ns)
        np.testing.assert_array_equal(ns["values"], expected)
        assert ns["frame"] is None


def test_dataset_code_example_and_default():
    ns: dict = {}
    exec(S.dataset_code(("example", "engel")), ns)
    assert ns["values"].size > 100
    ns = {}
    exec(S.dataset_code(None), ns)
    np.testing.assert_array_equal(ns["values"], lognormal_incomes(10_000, sigma=0.9, rng=2026))


def test_upload_is_never_embedded():
    code = S.dataset_code(("upload", "abc123", "secret.csv", "INCOME", "drop"))
    assert "DATA_FILE = 'secret.csv'" in code and "load_income_file" in code
    compile(code, "x", "exec")


def test_literal_refuses_objects_and_roundtrips():
    data = {"a": [1, 2.5, None, True, "x'y"], "b": (1,), "c": float("inf")}
    assert eval(S.literal(data), {"float": float}) == {"a": [1, 2.5, None, True, "x'y"], "b": (1,), "c": float("inf")}
    with pytest.raises(DPInputError):
        S.literal(object())
    with pytest.raises(DPInputError):
        S.dataset_code(("nonsense",))
    with pytest.raises(DPInputError):
        S.planner_script(None, {"statistics": []}, 1)
