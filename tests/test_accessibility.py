"""WCAG 2.1 AA without a browser: the theme's and the charts' colours meet the contrast ratios, every control has a
visible label, and docs/accessibility.md (the conformance report, VPAT 2.x) covers every WCAG 2.1 A and AA
criterion and stays true to what tests/test_browser_accessibility.py checks."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import tomllib
from quality_support import discover_pages

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "docs" / "accessibility.md"

#: Streamlit's light theme where .streamlit/config.toml sets nothing (``streamlit config show``, 1.67).
STREAMLIT_LIGHT = {"textColor": "#2f2d2b", "borderColor": "#dcd8d4", "primaryColor": "#c53948"}
WHITE, SIDEBAR, FIELD = "#ffffff", "#f8f8f7", "#f1f0ee"  # page, sidebar, widget backgrounds of the light theme


def _channels(colour: str) -> tuple[int, int, int]:
    colour = colour.lstrip("#")
    return int(colour[0:2], 16), int(colour[2:4], 16), int(colour[4:6], 16)


def luminance(colour: str) -> float:
    """WCAG 2.1 relative luminance of an sRGB colour "#rrggbb"."""

    def linear(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = map(linear, _channels(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def blend(colour: str, background: str, alpha: float) -> str:
    """``colour`` at opacity ``alpha`` over ``background`` (how Streamlit's faded text looks)."""
    return "#" + "".join(
        f"{round(alpha * c + (1 - alpha) * b):02x}"
        for c, b in zip(_channels(colour), _channels(background), strict=True)
    )


def test_contrast_matches_wcag_reference_values():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # the lightest grey text passing AA


def _theme() -> dict[str, str]:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    return {**STREAMLIT_LIGHT, **config.get("theme", {})}


@pytest.mark.parametrize("background", [WHITE, SIDEBAR, FIELD])
def test_the_themes_text_and_its_faded_text_are_4_5_to_1(background):
    """Streamlit draws captions, help and other secondary text in the text colour at 60% (``fadedText60``): it must
    still be 4.5:1 (1.4.3). With Streamlit's own text colour it was 3.9:1 on white."""
    text = _theme()["textColor"]
    assert contrast(text, background) >= 4.5
    assert contrast(blend(text, background, 0.6), background) >= 4.5, blend(text, background, 0.6)


@pytest.mark.parametrize("background", [WHITE, SIDEBAR, FIELD])
def test_field_borders_and_the_focus_ring_are_3_to_1(background):
    """1.4.11: the border is what shows where a field is; 2.4.7: the focus ring drawn on links (ui.common)."""
    from ui.common import FOCUS_STYLE

    assert contrast(_theme()["borderColor"], background) >= 3.0
    ring = re.search(r"outline: 2px solid (#[0-9a-f]{6})", FOCUS_STYLE).group(1)
    assert ring == _theme()["primaryColor"] and contrast(ring, background) >= 3.0


@pytest.mark.parametrize("background", [WHITE, SIDEBAR])
def test_a_disabled_controls_label_is_4_5_to_1(background):
    """A disabled control's label says why it is off ("δ (Gaussian only)"): drawn in ui.common's grey, not in
    Streamlit's text colour at 40% (2.7:1), and lighter than the text so the control still reads as off."""
    from ui.common import DISABLED_LABEL_COLOR, DISABLED_LABEL_STYLE

    assert DISABLED_LABEL_COLOR in DISABLED_LABEL_STYLE
    assert contrast(DISABLED_LABEL_COLOR, background) >= 4.5
    assert contrast(blend(_theme()["textColor"], background, 0.4), background) < 4.5  # why the style is needed
    assert contrast(DISABLED_LABEL_COLOR, background) < contrast(_theme()["textColor"], background)


def test_the_colours_the_app_gives_chart_text_are_4_5_to_1():
    """Axis text (over Streamlit's grey), the Gini page's "your ε" label, the planner's white values in its bars."""
    from ui.common import CHART_AXIS_TEXT_COLOR
    from ui.gini.plots import YOUR_EPSILON_COLOR
    from ui.planner.plots import EPSILON_BAR_COLOR

    assert contrast(CHART_AXIS_TEXT_COLOR, WHITE) >= 4.5
    assert contrast(YOUR_EPSILON_COLOR, WHITE) >= 4.5
    assert contrast("#ffffff", EPSILON_BAR_COLOR) >= 4.5


def test_readable_axes_colours_text_the_figure_left_to_the_theme_and_keeps_the_shared_spec():
    from ui.common import CHART_AXIS_TEXT_COLOR, readable_axes

    spec = {"data": [], "layout": {"xaxis2": {"title": "k"}, "yaxis": {"tickfont": {"color": "#000000"}}}}
    shown = readable_axes(spec)
    assert shown["layout"]["font"] == {"color": CHART_AXIS_TEXT_COLOR}
    assert shown["layout"]["xaxis"]["tickfont"] == {"color": CHART_AXIS_TEXT_COLOR}
    assert shown["layout"]["xaxis2"]["title"] == {"text": "k", "font": {"color": CHART_AXIS_TEXT_COLOR}}
    assert shown["layout"]["yaxis"]["tickfont"] == {"color": "#000000"}  # the figure's own colour wins
    assert spec == {"data": [], "layout": {"xaxis2": {"title": "k"}, "yaxis": {"tickfont": {"color": "#000000"}}}}


#: Streamlit's widget functions (a call ``st.<name>(label, ...)`` or ``<container>.<name>(...)``) and the app's
#: URL-backed ones (ui.common.qp_*, whose first argument is the label too).
WIDGETS = {
    "button", "download_button", "checkbox", "toggle", "radio", "selectbox", "multiselect", "slider",
    "select_slider", "text_input", "number_input", "text_area", "date_input", "time_input", "file_uploader",
    "color_picker", "data_editor", "segmented_control", "pills", "feedback", "link_button", "page_link",
    "qp_slider", "qp_select_slider", "qp_selectbox", "qp_radio", "qp_number", "qp_toggle",
}  # fmt: skip


def _widget_calls():
    for path in sorted([*(ROOT / "ui").rglob("*.py"), *(ROOT / "app_pages").glob("*.py"), ROOT / "app.py"]):
        for call in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(call, ast.Call):
                name = getattr(call.func, "attr", getattr(call.func, "id", ""))
                if name in WIDGETS:
                    yield f"{path.relative_to(ROOT)}:{call.lineno} {name}", call


def test_every_control_has_a_visible_label():
    """3.3.2 and 2.4.6: no widget hides its label (``label_visibility="collapsed"`` or ``"hidden"``: a screen reader
    still hears it, a sighted user sees no label) or has an empty one."""
    calls = list(_widget_calls())
    assert len(calls) > 50  # the scan sees the app's widgets
    for where, call in calls:
        hidden = [k for k in call.keywords if k.arg == "label_visibility"]
        assert not hidden or getattr(hidden[0].value, "value", "visible") == "visible", where
        label = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "label"), None)
        if isinstance(label, ast.Constant):
            assert isinstance(label.value, str) and label.value.strip(), f"{where}: an empty label"


# ---------------------------------------------------------------------------------------------
# The conformance report
# ---------------------------------------------------------------------------------------------

#: WCAG 2.1's success criteria of levels A (30) and AA (20), https://www.w3.org/TR/WCAG21/.
WCAG_21_A = (
    "1.1.1 Non-text Content", "1.2.1 Audio-only and Video-only (Prerecorded)", "1.2.2 Captions (Prerecorded)",
    "1.2.3 Audio Description or Media Alternative (Prerecorded)", "1.3.1 Info and Relationships",
    "1.3.2 Meaningful Sequence", "1.3.3 Sensory Characteristics", "1.4.1 Use of Color", "1.4.2 Audio Control",
    "2.1.1 Keyboard", "2.1.2 No Keyboard Trap", "2.1.4 Character Key Shortcuts", "2.2.1 Timing Adjustable",
    "2.2.2 Pause, Stop, Hide", "2.3.1 Three Flashes or Below Threshold", "2.4.1 Bypass Blocks", "2.4.2 Page Titled",
    "2.4.3 Focus Order", "2.4.4 Link Purpose (In Context)", "2.5.1 Pointer Gestures", "2.5.2 Pointer Cancellation",
    "2.5.3 Label in Name", "2.5.4 Motion Actuation", "3.1.1 Language of Page", "3.2.1 On Focus", "3.2.2 On Input",
    "3.3.1 Error Identification", "3.3.2 Labels or Instructions", "4.1.1 Parsing", "4.1.2 Name, Role, Value",
)  # fmt: skip
WCAG_21_AA = (
    "1.2.4 Captions (Live)", "1.2.5 Audio Description (Prerecorded)", "1.3.4 Orientation",
    "1.3.5 Identify Input Purpose", "1.4.3 Contrast (Minimum)", "1.4.4 Resize text", "1.4.5 Images of Text",
    "1.4.10 Reflow", "1.4.11 Non-text Contrast", "1.4.12 Text Spacing", "1.4.13 Content on Hover or Focus",
    "2.4.5 Multiple Ways", "2.4.6 Headings and Labels", "2.4.7 Focus Visible", "3.1.2 Language of Parts",
    "3.2.3 Consistent Navigation", "3.2.4 Consistent Identification", "3.3.3 Error Suggestion",
    "3.3.4 Error Prevention (Legal, Financial, Data)", "4.1.3 Status Messages",
)  # fmt: skip
#: The VPAT 2.x conformance terms (Not Evaluated is for level AAA only).
LEVELS = ("Supports", "Partially Supports", "Does Not Support", "Not Applicable")


def _report_rows() -> dict[str, tuple[str, str, str]]:
    """criterion number -> (name, conformance level, remarks) from the report's tables."""
    rows = {}
    for line in REPORT.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\|\s*(\d\.\d\.\d+) ([^|]+?)\s*\(Level A{1,2}\)\s*\|\s*([^|]+?)\s*\|\s*(.*?)\s*\|$", line)
        if match:
            number, name, level, remarks = match.groups()
            assert number not in rows, f"criterion {number} twice in the report"
            rows[number] = (name, level, remarks)
    return rows


def test_the_report_rates_every_wcag_21_a_and_aa_criterion_once():
    rows = _report_rows()
    expected = {c.split(" ", 1)[0]: c.split(" ", 1)[1] for c in WCAG_21_A + WCAG_21_AA}
    assert len(expected) == 50
    assert sorted(rows) == sorted(expected), set(rows) ^ set(expected)
    for number, (name, level, remarks) in rows.items():
        assert name == expected[number], (number, name)
        assert level in LEVELS, (number, level)
        assert remarks, f"{number} has no remarks"
        if level in ("Partially Supports", "Does Not Support"):
            assert "Known issue" in remarks or "cannot" in remarks, f"{number}: say what is missing and why"


def test_the_report_names_what_the_browser_tests_run():
    """The axe-core version (the one bundled with the pinned axe-playwright-python), its rule tags, the pages, the
    window sizes, and the tests it cites exist."""
    import axe_playwright_python
    from test_browser_accessibility import DESKTOP, PHONE, WCAG_21_AA_TAGS

    text = REPORT.read_text(encoding="utf-8")
    bundled = (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text(encoding="utf-8")[:200]
    version = re.search(r"axe v(\d+\.\d+\.\d+)", bundled).group(1)
    assert f"axe-core {version}" in text
    pinned = re.search(r"axe-playwright-python==([\d.]+)", (ROOT / "requirements-dev.txt").read_text()).group(1)
    assert f"axe-playwright-python {pinned}" in text
    assert all(f"`{tag}`" in text for tag in WCAG_21_AA_TAGS)
    for size in (DESKTOP, PHONE):
        assert f"{size['width']}x{size['height']}" in text
    for page in discover_pages():
        assert page.title in text, f"the report does not list the page {page.title!r}"
    for path, name in re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", text):
        assert (ROOT / path).is_file(), path
        assert re.search(rf"^def {name}\(", (ROOT / path).read_text(encoding="utf-8"), re.M), f"{path}::{name}"
    assert "tests/test_browser_accessibility.py::test_no_wcag_21_aa_violation_on_the_page" in text
