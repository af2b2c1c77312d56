"""AppTest for app_pages/about.py: opens, explains epsilon with correct numbers, sliders work, URL state."""

from __future__ import annotations

import base64
import math
import re

import pytest
from support import assert_clean, metrics, open_page, page_text

from ui import svg_charts
from ui.about import views as about_views


def _about(**query):
    at = open_page("app_pages/about.py", **query)
    assert_clean(at)
    return at


def _chart_svg(at) -> str:
    (image,) = at.get("image")
    url = image.proto.imgs[0].url
    assert url.startswith("data:image/svg+xml;base64,")
    return base64.b64decode(url.split(",", 1)[1]).decode("utf-8")


def _metric(at, label: str) -> str:
    """A number of the example's headline, e.g. "**e^ε (largest change in odds): 2.72×** · ...": one line of
    text, not three st.metric elements (cold start)."""
    assert not metrics(at)
    (line,) = [m.value.split("\n\n")[0] for m in at.markdown if m.value.startswith("**e^ε")]
    numbers = dict(part.strip().strip("*").split(": ") for part in line.split(" · "))
    return next(value for name, value in numbers.items() if name.startswith(label))


def test_opens_with_defaults_and_explains():
    at = _about()
    assert not at.error
    assert at.title[0].value.startswith("What differential privacy does")
    text = page_text(at)
    for phrase in (
        "Epsilon",
        "Neighbouring datasets",
        "one person's record is replaced",
        "n itself is",
        "What is public",
        "Smooth sensitivity",
        "Planning is not release",
        "What each page is for",
        "Gini index",
        "Earnings percentiles",
        "Group means",
        "Relative risk",
        "planner",
    ):
        assert phrase in text, phrase
    # e^1 = 2.72: from 50% an attacker ends at most at e/(1+e) = 73.1%
    assert _metric(at, "e^ε") == "2.72×"
    assert _metric(at, "At most") == f"{100 * math.e / (1 + math.e):.1f}%" == "73.1%"
    caption = " ".join(c.value for c in at.caption)
    assert "Neighbouring datasets" in caption and "Public" in caption
    # the chart is an SVG image (no plotly on the landing page: cold start), with its numbers
    assert not at.get("plotly_chart") and not at.get("arrow_data_frame")
    svg = _chart_svg(at)
    assert "your example: (50, 73.1)" in svg and "ε = 1 release" in svg
    table = next(m.value for m in at.markdown if m.value.startswith("| ε | e^ε"))
    assert "| 1 | 2.72 | 73.1% | 23.2% |" in table  # 0.1 e / (0.9 + 0.1 e) = 23.2%
    assert "| 0.1 | 1.11 | 52.5% | 10.9% |" in table


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
    assert f"your example: ({prior}, {100 * post:.1f})" in _chart_svg(at)


def test_url_state_reproduces_view():
    at = _about(about_eps="2.0", about_prior="20")
    assert at.slider(key="about_eps").value == 2.0 and at.slider(key="about_prior").value == 20
    assert _metric(at, "At most") == f"{100 * 0.2 * math.exp(2) / (0.8 + 0.2 * math.exp(2)):.1f}%"


def test_bad_url_values_are_made_allowed_with_a_notice():
    """Out of range: the nearest allowed value; unreadable: the default; each said, never silently."""
    from streamlit.testing.v1 import AppTest
    from support.pages import APP

    at = AppTest.from_file(str(APP), default_timeout=90)  # the landing page, as the link opens it (one run)
    at.query_params.update(about_eps="-3", about_prior="abc")
    at.run()
    assert not at.exception
    assert at.slider(key="about_eps").value == 0.05 and at.slider(key="about_prior").value == 50
    assert not at.error
    notices = " ".join(w.value for w in at.main.warning)
    assert "“Epsilon (ε)” = -3; the smallest allowed is 0.05, used instead." in notices, notices
    assert "= abc, which is not a number; 50 (the default) is used instead." in notices, notices


def test_what_each_page_is_for_names_every_page_of_the_app():
    """The list once stopped at the planner: the attacker game and the Lessons page were missing."""
    import ast
    from pathlib import Path

    app = ast.parse((Path(__file__).resolve().parents[1] / "app.py").read_text())
    titles = [
        keyword.value.value
        for node in ast.walk(app)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page"
        for keyword in node.keywords
        if keyword.arg == "title"
    ]
    assert len(titles) >= 8, titles
    section = next(m.value for m in _about().markdown if m.value.startswith("## What each page is for"))
    for title in titles:
        short = "About" if title.startswith("About") else title
        assert f"**{short}**" in section, (title, section)


def _polyline_points(svg: str) -> list[list[tuple[float, float]]]:
    return [
        [tuple(map(float, pair.split(","))) for pair in points.split()]
        for points in re.findall(r'<polyline points="([^"]+)"', svg)
    ]


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_chart_curve_is_the_largest_posterior(eps):
    """The drawn curve is p e^eps / (1 - p + p e^eps) in the plot's coordinates: map the pixels back
    (x0 = 64 px, y0 = bottom of the plot, both axes 0..100%) and compare with the formula."""
    svg = about_views.posterior_chart_svg(eps, 50, 0.5)
    diagonal, curve = _polyline_points(svg)
    (x_left, y_bottom), (x_right, y_top) = diagonal[0], diagonal[-1]
    assert len(curve) == 101 and x_left == 64
    for (px, py), i in zip(curve, range(101), strict=True):
        p = i / 100
        prior = 100 * (px - x_left) / (x_right - x_left)
        after = 100 * (y_bottom - py) / (y_bottom - y_top)
        assert prior == pytest.approx(100 * p, abs=0.2)
        assert after == pytest.approx(100 * p * math.exp(eps) / (1 - p + p * math.exp(eps)), abs=0.3)


def test_curve_csv_matches_the_formula():
    priors, posteriors = about_views.posterior_curve(2.0)
    lines = about_views.curve_csv(priors, posteriors).decode().splitlines()
    assert lines[0] == "prior,largest_posterior" and len(lines) == 102
    p, q = map(float, lines[21].split(","))
    assert p == 0.2 and q == pytest.approx(0.2 * math.exp(2) / (0.8 + 0.2 * math.exp(2)), rel=1e-12)


def test_svg_chart_escapes_text_and_checks_its_input():
    svg = svg_charts.line_chart_svg(
        [svg_charts.SvgLine("a < b & c", (0.0, 1.0), (0.0, 2.0))],
        x_range=(0, 1),
        y_range=(0, 2),
        x_label="x",
        y_label="y",
        title="<t>",
    )
    assert "a &lt; b &amp; c" in svg and "<title>&lt;t&gt;</title>" in svg and "<t>" not in svg
    with pytest.raises(ValueError, match="2 x values but 1 y values"):
        svg_charts.line_chart_svg(
            [svg_charts.SvgLine("bad", (0.0, 1.0), (0.0,))],
            x_range=(0, 1),
            y_range=(0, 1),
            x_label="x",
            y_label="y",
            title="t",
        )
    with pytest.raises(ValueError, match="empty chart range"):
        svg_charts.line_chart_svg([], x_range=(1, 1), y_range=(0, 1), x_label="x", y_label="y", title="t")


def test_the_landing_page_does_not_say_the_app_runs_on_the_readers_computer():
    """Served to a class, the app runs on the teacher's or the university's server, not on each student's."""
    text = page_text(open_page("app_pages/about.py"))
    assert "runs on your computer" not in text
    assert "runs on the server that shows you this page" in text
