"""AppTest tests of app_pages/planner.py: defaults, sliders and rebalancing, bad input, release mode never
shows a true value, URL state, and the generated script reproduces the page's numbers."""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore import planner as P
from dpcore.data import lognormal_incomes

REPO = Path(__file__).resolve().parent.parent
APP = str(REPO / "app.py")
RELEASE = "Release: make the real release (spends budget)"


def _open(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    at.switch_page("app_pages/planner.py")
    at.run()
    return at


def _clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _all_text(at: AppTest) -> str:
    parts: list[str] = []
    for group in (at.title, at.header, at.subheader, at.markdown, at.caption, at.info, at.warning, at.success,
                  at.error, at.code, at.text, at.json):
        parts += [str(getattr(e, "value", "")) for e in group]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    for df in at.dataframe:
        parts.append(df.value.to_csv(index=False))
    return "\n".join(parts)


NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _assert_no_true_value(at: AppTest | None, truths: list[float], text: str | None = None,
                          released: list[float] = ()) -> None:
    """No number on the page is a true value written to its own precision (4+ significant digits),
    except the released numbers themselves, which may coincide with the truth by chance."""
    if at is not None:
        text = _all_text(at)
        released = [v for r in at.session_state["planner_records"] for v in r.released]
    released = np.asarray(released, dtype=float)
    for token in NUMBER.findall(text):
        clean = token.replace(",", "")
        try:
            v = float(clean)
        except ValueError:
            continue
        mantissa = clean.lower().split("e")[0].lstrip("-")
        digits = len(mantissa.replace(".", "").lstrip("0"))
        if digits < 4 or "e" in clean.lower():
            continue
        if released.size and np.any(np.isclose(released, v, rtol=1e-12, atol=0)):
            continue
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        half_ulp = 0.5 * 10.0 ** (-decimals)
        for t in truths:
            assert abs(v - t) > half_ulp * (1 + 1e-9), f"true value {t!r} shown as {token!r}"


def _numbers_in_tables(at: AppTest) -> np.ndarray:
    vals = []
    for df in at.dataframe:
        num = df.value.select_dtypes("number").to_numpy(dtype=float).ravel()
        vals.extend(num[np.isfinite(num)].tolist())
    return np.asarray(vals)


def _default_truths() -> list[float]:
    """True values of the default statistics on the default sidebar data (what must never be shown in release)."""
    values = lognormal_incomes(10_000, sigma=0.9, rng=2026)
    groups = P.planning_groups(values.size, seed=2026)
    out: list[float] = []
    for kind, params in [("gini", {"upper": 1e6}), ("percentiles", {"n_sims": 200}),
                         ("group_means", {"upper": 5e5}), ("ratio", {"threshold": 20_000.0})]:
        out += [float(t) for t in P.make_statistic(kind, values, groups, **params).truth]
    return out


@pytest.mark.slow  # first test pays the cold caches (Gini smooth sensitivity, Monte Carlo search)
def test_opens_with_defaults_and_explains_itself():
    at = _open()
    _clean(at)
    assert at.title[0].value == "Choose ε before a release"
    text = _all_text(at)
    assert "Neighbouring datasets" in text and "Public (not protected)" in text
    metrics = {m.label: m.value for m in at.metric}
    total = float(metrics["Total ε of the plan (sequential composition)"])
    assert total > 0
    table = at.dataframe[0].value
    assert list(table["statistic"])[0] == "Gini index"
    assert table["smallest ε"].sum() == pytest.approx(total, rel=1e-3)
    assert (table["probability met at that ε"] >= np.array([0.9, 0.9, 0.95, 0.95]) - 1e-9).all()
    assert "Monte Carlo" in " ".join(table["how it was found"])
    assert at.query_params["planner_stats"] in (["gini,percentiles,group_means,ratio"], "gini,percentiles,group_means,ratio")
    assert len(at.get("plotly_chart")) >= 6


def test_main_sliders_and_rebalancing():
    at = _open()
    at.slider(key="planner_gini_tol").set_value(20).run()
    _clean(at)
    at.slider(key="planner_group_means_conf").set_value(90).run()
    _clean(at)
    at.slider(key="planner_total").set_value(4.0).run()
    _clean(at)
    alloc = at.session_state["_planner_alloc"]
    assert sum(alloc.values()) == pytest.approx(4.0)
    # lock group means, move gini: ratio and percentiles absorb the change, group means keep theirs
    at.checkbox(key="planner_lock_group_means").check().run()
    gm = alloc["group_means"]
    at.slider(key="planner_eps_gini").set_value(2.0).run()
    _clean(at)
    alloc = at.session_state["_planner_alloc"]
    assert alloc["gini"] == pytest.approx(2.0) and alloc["group_means"] == pytest.approx(gm)
    assert sum(alloc.values()) == pytest.approx(4.0)
    assert "gini:2" in str(at.query_params["planner_alloc"])
    # the smallest total, one statistic takes (almost) all: the others stay at the slider minimum
    at.slider(key="planner_total").set_value(0.05).run()
    at.checkbox(key="planner_lock_group_means").uncheck().run()
    at.slider(key="planner_eps_gini").set_value(0.05).run()
    _clean(at)
    alloc = at.session_state["_planner_alloc"]
    assert sum(alloc.values()) == pytest.approx(0.05) and min(alloc.values()) >= 0.001 - 1e-12
    at.slider(key="planner_risk_eps").set_value(3.0).run()
    _clean(at)
    metric = [m for m in at.metric if m.label.startswith("Largest belief after an ε = 3")][0]
    assert metric.value == f"{100 * math.exp(3) * 0.01 / (0.99 + 0.01 * math.exp(3)):.2f}%"


def test_bad_input_shows_error_not_exception():
    at = _open()
    at.number_input(key="planner_gini_upper").set_value(20_000.0).run()  # heavy clipping: target unreachable
    assert not at.exception
    assert at.error and any("does not reach" in e.value for e in at.error)
    at.multiselect(key="planner_stats").set_value([]).run()
    assert not at.exception and any("at least one statistic" in i.value for i in at.info)


def test_url_state_reproduces_view():
    at = _open({"planner_stats": "ratio,count", "planner_ratio_tol": "20", "planner_count_thr": "50000.0"})
    _clean(at)
    table = at.dataframe[0].value
    assert len(table) == 2 and table["target"].iloc[0].startswith("relative error at most 20%")
    assert at.slider(key="planner_ratio_tol").value == 20


def test_release_mode_never_shows_true_values_and_charges_ledger():
    at = _open()
    at.radio(key="planner_mode").set_value(RELEASE).run()
    _clean(at)
    at.number_input(key="planner_cap").set_value(3.0).run()
    at.checkbox(key="planner_confirm").check().run()
    at.button(key="planner_release").click().run()
    _clean(at)
    assert any("Released" in s.value for s in at.success)
    assert any("Every further release spends more" in w.value for w in at.warning)
    released = at.dataframe[0].value
    assert len(released) == 1 + 9 + 3 + 1  # Gini, 3 cells x 3 percentiles, 3 group means, RR
    ledger = at.session_state["planner_ledger"]
    assert ledger.spent_pure() == pytest.approx(2.0)  # the default equal split of 2.0
    _assert_no_true_value(at, _default_truths())
    # a second release would exceed the cap of 3: refused with a message, nothing charged
    at.button(key="planner_release").click().run()
    assert not at.exception
    assert any("refused" in e.value for e in at.error)
    assert at.session_state["planner_ledger"].spent_pure() == pytest.approx(2.0)


@pytest.mark.slow
def test_generated_script_reproduces_page_numbers(tmp_path):
    at = _open({"planner_stats": "gini,group_means,ratio"})
    _clean(at)
    shown = at.dataframe[0].value
    script = [c.value for c in at.code if "Reproduces the view" in str(c.value)]
    assert script, "the share tab shows the script"
    path = tmp_path / "planner_view.py"
    path.write_text(script[0])
    proc = subprocess.run([sys.executable, str(path)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    got = pd.Series([s["epsilon"] for s in out["accuracy_first"]])
    np.testing.assert_allclose(got.to_numpy(), shown["smallest ε"].to_numpy(), rtol=1e-12)
    assert out["total_epsilon_sequential"] == pytest.approx(shown["smallest ε"].sum(), rel=1e-12)


def test_changing_the_dataset_recomputes():
    at = _open({"planner_stats": "group_means,ratio"})
    _clean(at)
    before = at.dataframe[0].value["smallest ε"].to_numpy()
    small = _open({"planner_stats": "group_means,ratio", "data_n": "2000"})
    _clean(small)
    after = small.dataframe[0].value["smallest ε"].to_numpy()
    assert np.all(after > before)  # fewer people: more noise per person, a larger epsilon is needed
    engel = _open({"planner_stats": "gini,mean", "data_source": "Real example: Engel 1857, Belgian households"})
    assert not engel.exception


def test_release_from_uploaded_confidential_file_shows_no_true_value():
    """The real use: a confidential CSV uploaded in the sidebar, released in Release mode."""
    gen = np.random.default_rng(404)
    n = 3000
    income = np.round(gen.lognormal(10.6, 0.8, n), 2)
    region = gen.choice(np.array(["north", "south", "west"]), n)
    csv = pd.DataFrame({"income": income, "region": region}).to_csv(index=False).encode()
    # sidebar + planner page in one script (AppTest drops the sidebar tree after st.navigation reruns)
    harness = (f"import runpy, sys\nsys.path.insert(0, {str(REPO)!r})\n"
               "from ui.sidebar import render_sidebar\nrender_sidebar()\n"
               f"runpy.run_path({str(REPO / 'app_pages' / 'planner.py')!r})\n")
    at = AppTest.from_string(harness, default_timeout=240)
    for k, v in {"data_source": "Upload a CSV or Parquet file", "planner_mode": RELEASE,
                 "planner_stats": "gini,group_means,percentiles,mean", "planner_groupcol": "region"}.items():
        at.query_params[k] = v
    at.run()
    at.sidebar.file_uploader(key="data_upload").set_value(("confidential.csv", csv, "text/csv")).run()
    assert at.session_state["dataset"].confidential
    at.selectbox(key="planner_groupcol").set_value("region").run()
    _clean(at)
    at.checkbox(key="planner_confirm").check().run()
    at.button(key="planner_release").click().run()
    _clean(at)
    released = at.dataframe[0].value
    assert set(released["statistic"]) >= {"Gini index", "Mean income by group"}
    assert set(released.loc[released["statistic"] == "Mean income by group", "number"]) == {"north", "south", "west"}
    groups = region.astype(str)
    truths = []
    for kind, params in [("gini", {"upper": 1e6}), ("group_means", {"upper": 5e5}),
                         ("percentiles", {"n_sims": 100}), ("mean", {"upper": 5e5})]:
        truths += [float(t) for t in P.make_statistic(kind, income, groups, **params).truth]
    _assert_no_true_value(at, truths)


def test_true_value_detector_catches_a_leak():
    """The detector itself can fail: a page that prints a true value is caught."""
    cases = [("Gini 0.4753", 0.475336, True), ("Gini 0.4754", 0.475336, False),
             ("mean 54,321.12", 54321.1234, True), ("p50 29,330", 29329.4, False), ("p50 29,329", 29329.4, True)]
    for shown, truth, leak in cases:
        if leak:
            with pytest.raises(AssertionError):
                _assert_no_true_value(None, [truth], text=shown)
        else:
            _assert_no_true_value(None, [truth], text=shown)
    # a released value that happens to equal the rounded truth is allowed (it is noisy by construction)
    _assert_no_true_value(None, [0.475336], text="Gini 0.475336", released=[0.475336])
