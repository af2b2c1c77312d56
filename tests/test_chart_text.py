"""Every chart has a text alternative (WCAG 2.1 success criterion 1.1.1): ``ui.chart_text`` turns a figure
specification into a sentence and a table, and every chart the pages draw goes through the ``ui.common`` helpers
that add it (the browser check that each drawn chart is followed by it is in tests/test_browser_accessibility.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from ui import chart_text
from ui.figure_specs import plain_spec

ROOT = Path(__file__).resolve().parents[1]


def _line_spec(n: int = 5) -> dict:
    x = list(np.linspace(0.1, 2.0, n))
    return {
        "data": [
            {"type": "scatter", "mode": "lines", "name": "smooth", "x": x, "y": [1 / v for v in x]},
            {"type": "scatter", "mode": "lines", "name": "Laplace", "x": x, "y": [3 / v for v in x]},
        ],
        "layout": {
            "title": {"text": "Error <br>against ε"},
            "xaxis": {"title": {"text": "ε"}, "type": "log"},
            "yaxis": {"title": {"text": "90% error"}},
            "annotations": [{"x": 1.0, "y": 0.5, "text": "your ε", "xref": "x"}],
        },
    }


def test_a_line_chart_in_words_and_as_one_row_per_x():
    text = chart_text.chart_text(_line_spec())
    assert text.summary.startswith("Line chart: Error; against ε, 90% error against ε (log scale).")
    assert "2 series: smooth; Laplace." in text.summary
    assert "smooth: from 10 at 0.1 to 0.5 at 2" in text.summary
    assert "Marked: your ε (at x = 1)." in text.summary
    assert text.columns == ("ε", "smooth", "Laplace")
    assert text.rows[0] == ("0.1", "10", "30") and len(text.rows) == 5
    assert text.note == ""


def test_long_series_are_thinned_evenly_and_the_table_says_so():
    text = chart_text.chart_text(_line_spec(1000))
    assert len(text.rows) == chart_text.MAX_ROWS
    assert text.rows[0][0] == "0.1" and text.rows[-1][0] == "2"  # first and last kept
    assert text.note == f"{chart_text.MAX_ROWS} of the 1,000 points, evenly spaced (first and last kept)."


def test_plotly_typed_arrays_read_as_the_lists_they_encode():
    spec = _line_spec()
    encoded = plain_spec(
        [{**t, "x": np.asarray(t["x"]), "y": np.asarray(t["y"])} for t in spec["data"]], spec["layout"]
    )
    assert isinstance(encoded["data"][0]["x"], dict) and "bdata" in encoded["data"][0]["x"]
    assert chart_text.chart_text(encoded) == chart_text.chart_text(spec)


def test_series_on_different_x_are_listed_series_by_series():
    spec = {
        "data": [
            {"type": "bar", "name": "true", "x": ["a", "b"], "y": [3, 5]},
            {"type": "bar", "name": "noisy", "x": ["a", "b", "c"], "y": [2.5, 6, 1]},
        ],
        "layout": {"xaxis": {"title": {"text": "bin"}}, "yaxis": {"title": {"text": "people"}}},
    }
    text = chart_text.chart_text(spec)
    assert text.columns == ("series", "bin", "people")
    assert ("noisy", "c", "1") in text.rows and len(text.rows) == 5
    assert "noisy: highest 6 at b, lowest 1 at c" in text.summary


def test_horizontal_bars_read_category_first():
    spec = {"data": [{"type": "bar", "orientation": "h", "x": [0.8, 0.1], "y": ["Gini", "mean"]}], "layout": {}}
    text = chart_text.chart_text(spec)
    assert text.rows == (("Gini", "0.8"), ("mean", "0.1"))


def test_boxes_from_statistics_and_from_values():
    drawn = {
        "type": "box",
        "name": "CoinPress",
        "x": ["CoinPress"],
        "q1": [-2.0],
        "median": [0.5],
        "q3": [3.0],
        "lowerfence": [-9.0],
        "upperfence": [8.0],
    }
    values = {"type": "box", "name": "Laplace", "y": list(range(1, 101))}
    text = chart_text.chart_text({"data": [drawn, values], "layout": {}})
    assert text.columns[0] == "series" and len(text.rows) == 2
    assert text.rows[0] == ("CoinPress", "not given", "-9", "-2", "0.5", "3", "8")
    assert text.rows[1] == ("Laplace", "100", "1", "25.75", "50.5", "75.25", "100")
    assert "CoinPress: median 0.5, middle half -2 to 3" in text.summary


def test_a_heat_map_is_one_row_per_cell():
    spec = {"data": [{"type": "heatmap", "x": [1, 2], "y": ["p", "q"], "z": [[0.1, 0.2], [0.3, None]]}], "layout": {}}
    text = chart_text.chart_text(spec)
    assert text.rows == (("p", "1", "0.1"), ("p", "2", "0.2"), ("q", "1", "0.3"), ("q", "2", "no value"))


@pytest.mark.parametrize(
    ("value", "said"),
    [(0.5, "0.5"), (32090.4, "32,090"), (1e-5, "1.000e-05"), (float("nan"), "no value"), (None, "no value"), (7, "7")],
)
def test_numbers_read_plainly(value, said):
    assert chart_text.number(value) == said


def test_the_html_has_a_hidden_sentence_and_a_table_with_headers_in_a_closed_details():
    html = chart_text.chart_text_html(chart_text.chart_text(_line_spec()))
    assert html.startswith(f'<div class="{chart_text.CSS_CLASS}">')
    assert re.search(r'<p style="position:absolute;[^"]*clip:rect\(0,0,0,0\)[^"]*">Chart\. Line chart', html)
    assert "<details><summary" in html and "<details open" not in html
    assert '<th scope="col">smooth</th>' in html and "<caption>Error; against ε</caption>" in html
    hostile = chart_text.ChartText(summary="<script>", columns=("<b>",), rows=(("&",),))
    assert "<script>" not in chart_text.chart_text_html(hostile) and "&amp;" in chart_text.chart_text_html(hostile)


def _source_files() -> list[Path]:
    return sorted([*(ROOT / "ui").rglob("*.py"), *(ROOT / "app_pages").glob("*.py"), ROOT / "app.py"])


def test_every_chart_goes_through_the_helpers_that_add_its_text_alternative():
    """A plotly chart is drawn only by ``ui.common`` (``show_figure``, ``show_spec``, ``cached_figure``: each adds
    the chart's text); every image has its ``alt`` text, and a file that draws a chart as an image shows its chart
    text too."""
    direct = [p.relative_to(ROOT) for p in _source_files() if "plotly_chart(" in p.read_text(encoding="utf-8")]
    assert direct == [Path("ui/common.py")], f"st.plotly_chart called outside ui/common.py: {direct}"
    for path in _source_files():
        source = path.read_text(encoding="utf-8")
        for call in ast.walk(ast.parse(source)):
            if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "image":
                where = f"{path.relative_to(ROOT)}:{call.lineno}"
                assert any(k.arg == "alt" for k in call.keywords), f"{where}: an image without alt text"
        if "svg_charts" in source and ".image(" in source:
            assert "show_chart_text(" in source, f"{path.relative_to(ROOT)} draws a chart image without its chart text"
