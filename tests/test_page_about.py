"""AppTest for app_pages/about.py: opens, explains epsilon with correct numbers, sliders work, URL state."""
from __future__ import annotations

import math

import pytest

from support import assert_clean, metrics, open_page, page_text


def _about(**query):
    at = open_page("app_pages/about.py", **query)
    assert_clean(at)
    return at


def _metric(at, label: str) -> str:
    return next(value for name, value in metrics(at).items() if name.startswith(label))


def test_opens_with_defaults_and_explains():
    at = _about()
    assert not at.error
    assert at.title[0].value.startswith("What differential privacy does")
    text = page_text(at)
    for phrase in ("Epsilon", "Neighbouring datasets", "one person's record is replaced", "n itself is",
                   "What is public", "Smooth sensitivity", "Planning is not release", "What each page is for",
                   "Gini index", "Earnings percentiles", "Group means", "Relative risk", "planner"):
        assert phrase in text, phrase
    # e^1 = 2.72: from 50% an attacker ends at most at e/(1+e) = 73.1%
    assert _metric(at, "e^ε") == "2.72×"
    assert _metric(at, "At most") == f"{100 * math.e / (1 + math.e):.1f}%" == "73.1%"
    caption = " ".join(c.value for c in at.caption)
    assert "Neighbouring datasets" in caption and "Public" in caption
    assert len(at.get("plotly_chart")) == 1


@pytest.mark.parametrize("eps,prior", [(0.1, 50), (5.0, 10), (10.0, 1)])
def test_sliders_move_the_numbers(eps, prior):
    at = _about()
    at.slider(key="about_eps").set_value(eps).run()
    at.slider(key="about_prior").set_value(prior).run()
    assert not at.exception and not at.error
    p = prior / 100
    post = p * math.exp(eps) / (1 - p + p * math.exp(eps))
    assert _metric(at, "At most") == f"{100 * post:.1f}%"
    assert _metric(at, "e^ε") == f"{math.exp(eps):,.2f}×"
    assert at.query_params["about_eps"] in (str(eps), [str(eps)])


def test_url_state_reproduces_view():
    at = _about(about_eps="2.0", about_prior="20")
    assert at.slider(key="about_eps").value == 2.0 and at.slider(key="about_prior").value == 20
    assert _metric(at, "At most") == f"{100 * 0.2 * math.exp(2) / (0.8 + 0.2 * math.exp(2)):.1f}%"


def test_bad_url_values_fall_back_to_defaults():
    at = _about(about_eps="-3", about_prior="abc")
    assert at.slider(key="about_eps").value == 1.0 and at.slider(key="about_prior").value == 50
    assert not at.error
