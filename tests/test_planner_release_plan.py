"""The plan file the planner offers is the release Release mode makes: the same ε per statistic (the
accuracy-first ε rounded up to the field's 4 decimals, or the user's own field values) and the same cap,
from one function (ui.planner.release_panel.release_choices); a plan that spends more than the total ε the user
can afford says so. Before, the file held an even split of the total-ε slider (ε 0.5 x 4, cap 2) while
Release mode used the accuracy-first ε, and nothing was said when the plan totalled 6.2 next to "2"."""

from __future__ import annotations

import pytest
import tomllib
from support import assert_clean, open_page

from ui.planner import sections as planner_sections
from ui.planner.release_panel import _round_up

PAGE = "app_pages/planner.py"
SHARE = planner_sections.SHARE.heading
RELEASE = "Release: make the real release (spends budget)"
PLAN = "Plan: choose ε on planning data"


def _plan_file(at) -> dict:
    texts = [c.value for c in at.code if "cap_epsilon" in c.value]
    assert texts, "the plan file's text is not shown"
    return tomllib.loads(texts[0])


def _release_fields(at) -> tuple[dict[str, float], float]:
    epsilons = {
        w.key.removeprefix("planner_rel_eps_"): float(w.value)
        for w in at.number_input
        if w.key.startswith("planner_rel_eps_")
    }
    return epsilons, float(at.number_input(key="planner_cap").value)


def test_downloaded_plan_is_what_release_mode_releases():
    at = open_page(PAGE, timeout=240, data_n="2000", planner_stats="gini,mean", planner_total="2.0")
    assert_clean(at)
    plan = dict(at.session_state["_planner_plan"])
    assert sum(plan.values()) > 2.0  # the answer says it does not fit the total ε the user can afford
    assert any("more than the ε = 2 you can afford" in w.value for w in at.warning)
    at.radio(key="planner_view").set_value(SHARE).run()
    assert_clean(at)
    written = _plan_file(at)
    in_file = {item["kind"]: item["epsilon"] for item in written["statistics"]}
    # the accuracy-first ε (rounded up as the release fields are), not an even split of the slider's 2
    assert in_file == {kind: _round_up(eps) for kind, eps in plan.items()}
    assert in_file != {"gini": 1.0, "mean": 1.0}
    total = sum(in_file.values())
    assert total > 2.0 and any("more than your total ε = 2" in w.value for w in at.warning)

    at.radio(key="planner_mode").set_value(RELEASE).run()
    assert not at.exception
    epsilons, cap = _release_fields(at)
    assert epsilons == pytest.approx(in_file, abs=0) and cap == written["cap_epsilon"]

    # a field changed in Release mode is what the next plan file carries
    at.number_input(key="planner_rel_eps_mean").set_value(0.5).run()
    at.number_input(key="planner_cap").set_value(9.0).run()
    at.radio(key="planner_mode").set_value(PLAN).run()
    assert_clean(at)
    rewritten = _plan_file(at)
    assert {item["kind"]: item["epsilon"] for item in rewritten["statistics"]} == {**in_file, "mean": 0.5}
    assert rewritten["cap_epsilon"] == 9.0
