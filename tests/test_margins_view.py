"""What margins cost and give (dpcore.views.margins), its renderer (ui.margins) and its place on the Percentiles
page: each level's bin error alone at the whole epsilon, measured at its share, and after consistency."""

from __future__ import annotations

import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from support import assert_clean, open_page, page_text

from dpcore import consistency
from dpcore.validation import DPInputError
from dpcore.views import margins as margins_views
from ui.percentiles import sections

#: 3 groups of 4 cells and the total
TREE = consistency.Hierarchy((12, 3, 1), (np.repeat(np.arange(3), 4), np.zeros(3, dtype=np.int64)))


def test_view_gives_each_level_alone_measured_and_consistent():
    view = margins_views.margins_view(TREE, 1.0, labels=("cells", "groups", "total"))
    assert view.nodes == (12, 3, 1) and sum(view.shares) == pytest.approx(1.0)
    assert view.shares == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    sigma = math.sqrt(consistency.discrete_laplace_variance(2.0 / (1 / 3)))
    assert view.measured == pytest.approx((sigma, sigma, sigma))  # each level at its share: scale 6
    assert view.alone == pytest.approx(math.sqrt(consistency.discrete_laplace_variance(2.0)))
    exact = consistency.level_errors(TREE, [6.0, 6.0, 6.0]).least_squares
    assert view.consistent == pytest.approx(exact)
    assert all(g <= 1.0 + 1e-12 for g in view.gain)  # consistency never loses (Gauss-Markov)
    assert all(c > 1.05 for c in view.cost)  # sharing epsilon costs every level more than 1.05x (the proof)
    rows = view.rows()
    assert [r["level"] for r in rows] == ["cells", "groups", "total"]
    assert rows[1]["consistent ÷ measured"] == pytest.approx(view.gain[1])
    assert "add up" in view.sentence and "x as much" in view.sentence
    assert view.to_dict()["levels"] == rows


def test_balanced_split_is_no_worse_on_the_worst_level():
    even = margins_views.margins_view(TREE, 1.0, split="even")
    balanced = margins_views.margins_view(TREE, 1.0, split="balanced")
    assert max(balanced.cost) <= max(even.cost) + 1e-9 and sum(balanced.shares) == pytest.approx(1.0)
    # the split as a plan writes it, and the plan reads it back as the same shares
    from dpcore.plan import parse_plan

    plan = parse_plan(
        'version = 1\ndataset = "x"\nincome = "y"\ncap_epsilon = 1.0\ncell_sizes = "public"\n[[statistics]]\n'
        'kind = "percentiles"\nby = ["g", "c"]\nepsilon = 1.0\nmargins = [["g"], []]\n' + balanced.plan_line
    )
    assert plan.statistics[0].level_epsilons() == pytest.approx(balanced.shares, rel=1e-3)


def test_rows_per_person_scales_the_noise():
    one = margins_views.margins_view(TREE, 1.0)
    two = margins_views.margins_view(TREE, 1.0, rows_per_person=2)
    assert two.alone > one.alone and two.cost == pytest.approx(one.cost, rel=0.05)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"epsilon": 0.0}, DPInputError),
        ({"split": "lopsided"}, DPInputError),
        ({"labels": ("a", "b")}, DPInputError),
        ({"rows_per_person": 0}, DPInputError),
        ({"hierarchy": "a tree"}, TypeError),
    ],
)
def test_bad_arguments_are_refused(kwargs, error):
    args = {"hierarchy": TREE, "epsilon": 1.0, **kwargs}
    with pytest.raises(error):
        margins_views.margins_view(args.pop("hierarchy"), args.pop("epsilon"), **args)


def test_pseo_view_is_the_real_tables_state_tree(pseo_path):
    view = margins_views.pseo_margins_view(1.0)
    assert view is not None and view.labels[1:] == ("state", "nation") and view.nodes[1:] == (4, 1)
    assert view.nodes[0] == 458
    assert 2.5 < max(view.cost) < 3.5  # the even split over three levels (docs/benchmarks.md: 3.01)


def _renderer_app():
    import numpy as np

    from dpcore import consistency
    from dpcore.views import margins as margins_views
    from ui import margins

    tree = consistency.Hierarchy((12, 3, 1), (np.repeat(np.arange(3), 4), np.zeros(3, dtype=np.int64)))
    margins.margins_table(margins_views.margins_view(tree, 0.5, labels=("cells", "groups", "total")), key="t_dl")


def test_renderer_shows_the_sentence_and_one_row_per_level():
    at = AppTest.from_function(_renderer_app, default_timeout=60)
    at.run()
    assert not at.exception
    assert any("add up" in m.value and "ε = 0.5" in m.value for m in at.markdown)
    table = at.dataframe[0].value
    assert list(table["level"]) == ["cells", "groups", "total"]
    assert {"alone (whole ε)", "measured (its share)", "consistent"} <= set(table.columns)


def test_percentiles_page_shows_what_margins_cost_and_give(pseo_path):
    at = open_page("app_pages/percentiles.py")
    at.radio(key="perc_view").set_value(sections.MANY_CELLS.heading).run()
    assert_clean(at)
    text = page_text(at)
    assert "Tables that add up" in text and "add up, with non-negative whole counts" in text
    at.radio(key="perc_margins_split").set_value("Balanced (the worst level's error smallest)").run()
    assert_clean(at)
    assert "balanced split" in page_text(at)


def test_planner_budget_view_shows_what_margins_cost_at_the_percentiles_epsilon(pseo_path):
    from ui.planner import sections as planner_sections

    budget = planner_sections.VIEWS[1]
    at = open_page("app_pages/planner.py", timeout=240, planner_view=budget)
    assert_clean(at)
    eps = at.slider(key="planner_eps_percentiles").value
    assert any("Tables that add up" in m.value for m in at.markdown)
    assert any(f"ε = {eps:g} (even split)" in m.value for m in at.markdown)
