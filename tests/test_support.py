"""The shared page-test helpers (tests/support) do what the page tests rely on."""

from __future__ import annotations

import pytest
from support import assert_clean, open_page, page_text, query_param, run_script


def test_open_page_applies_the_query_and_reports_text():
    at = open_page("app_pages/about.py", seed=11)
    assert_clean(at)
    assert at.session_state["seed"] == 11
    assert "What differential privacy does" in page_text(at)
    assert query_param(at, "seed") == "11"


def test_assert_clean_catches_an_unexpected_error_and_accepts_an_expected_one():
    class _Box:
        def __init__(self, value):
            self.value = value

    class _Page:
        exception = []
        error = [_Box("the upper bound U must be above L")]

    with pytest.raises(AssertionError):
        assert_clean(_Page())
    assert_clean(_Page(), expected_error="must be above L")
    with pytest.raises(AssertionError):
        assert_clean(_Page(), expected_error="something else")


def test_run_script_parses_json_literals_and_fails_on_errors():
    assert run_script("import json\nprint(json.dumps({'a': 1.5}))") == {"a": 1.5}
    assert run_script("print({'a': (1, 2)})") == {"a": (1, 2)}
    assert run_script("print('hello')").strip() == "hello"
    # runs from the repository root (generated scripts put the working directory on sys.path themselves)
    assert (
        run_script("import os, sys\nsys.path.insert(0, os.getcwd())\nimport dpcore\nprint(dpcore.__name__)").strip()
        == "dpcore"
    )
    with pytest.raises(AssertionError):
        run_script("raise SystemExit(3)")


def test_discover_pages_finds_every_page_of_app_py():
    """The quality gates (browser, load, hostile uploads) visit what discover_pages() returns: every page
    file of app_pages/ must be there, with one default page (a page bound to a name first, e.g.
    ``ABOUT = st.Page(...)``, was once dropped)."""
    from quality_support import REPO_ROOT, discover_pages

    pages = discover_pages()
    files = {f"app_pages/{f.name}" for f in (REPO_ROOT / "app_pages").glob("*.py") if not f.name.startswith("_")}
    assert {p.path for p in pages} == files
    assert len(pages) == len(files) and sum(p.default for p in pages) == 1


def test_assert_same_spec_checks_values_and_types():
    from support.figures import assert_same_spec

    spec = {"data": [{"x": [1.0, 2.0], "type": "bar"}], "layout": {"title": "t"}}
    assert_same_spec(spec, {"data": [{"x": [1.0, 2.0], "type": "bar"}], "layout": {"title": "t"}})
    for other in (
        {"data": [{"x": [1, 2.0], "type": "bar"}], "layout": {"title": "t"}},  # int for float
        {"data": [{"x": [1.0, 2.5], "type": "bar"}], "layout": {"title": "t"}},  # a value
        {"data": [{"x": [1.0, 2.0], "type": "bar"}], "layout": {}},
    ):  # a key
        with pytest.raises(AssertionError):
            assert_same_spec(spec, other)


def test_every_file_on_the_shared_app_server_is_in_a_browser_group():
    """A browser file outside conftest.BROWSER_GROUPS would be handed to any free worker by ``--dist loadfile``,
    and that worker would start an app server of its own (and make its cold visit) for it."""
    import ast
    from pathlib import Path

    from conftest import BROWSER_GROUPS

    shared = {"app_server", "browser", "tab", "tabs", "page_tour"}  # the fixtures that start the shared app server
    users = set()
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef) or not shared & {arg.arg for arg in node.args.args}:
                continue
            if node.name.startswith("test_") or any("fixture" in ast.unparse(d) for d in node.decorator_list):
                users.add(path.name)  # a test or a fixture asks for one (a helper's argument named so does not)
    grouped = [name for group in BROWSER_GROUPS for name in group]
    assert len(grouped) == len(set(grouped)), "a file is in two browser groups"
    assert "test_browser.py" in users  # the scan sees the fixtures
    assert users <= set(grouped), f"not in conftest.BROWSER_GROUPS: {sorted(users - set(grouped))}"
