"""Each page's sections are listed once, in ui/<page>/sections.py: the lists are well formed, and no other file
of the app spells out a numbered heading or cites a section by a number of its own (a renumbered section would
leave that copy behind)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from ui.sections import Section, by_heading

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("gini", "percentiles", "stratified", "ratios", "planner")


def _lists(page: str) -> list[tuple[Section, ...]]:
    module = importlib.import_module(f"ui.{page}.sections")
    return [
        value
        for value in vars(module).values()
        if isinstance(value, tuple) and value and all(isinstance(s, Section) for s in value)
    ]


def _number_key(number: str) -> tuple[int, str]:
    digits = re.match(r"\d+", number)
    assert digits, number
    return int(digits.group()), number[digits.end() :]


@pytest.mark.parametrize("page", PAGES)
def test_each_list_is_in_page_order_with_distinct_keys_and_headings(page):
    lists = _lists(page)
    assert lists
    for sections in lists:
        assert len({s.key for s in sections}) == len(sections)
        assert len({s.heading for s in sections}) == len(sections)
        numbers = [s.number for s in sections]
        assert all(numbers) or not any(numbers), numbers  # a list is numbered throughout or not at all
        if all(numbers):
            assert [_number_key(n) for n in numbers] == sorted(_number_key(n) for n in numbers), numbers
        for section in sections:
            assert by_heading(sections, section.heading) is section


def test_a_heading_is_its_number_and_title_and_a_citation_names_the_number():
    section = Section("noise", "4b", "Lighter tails")
    assert section.heading == "4b · Lighter tails" and section.cited == "section 4b"
    assert Section("cdf", "2", "The CDF", ". ").heading == "2. The CDF"
    assert Section("view", "", "Intervals").heading == "Intervals"
    with pytest.raises(KeyError, match="Nowhere"):
        by_heading((section,), "Nowhere")


def _string_constants(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_no_numbered_heading_is_spelled_out_outside_its_list():
    headings = {(page, s.heading) for page in PAGES for sections in _lists(page) for s in sections if s.number}
    files = [
        p for p in sorted(ROOT.glob("app_pages/*.py")) + sorted(ROOT.glob("ui/**/*.py")) if p.name != "sections.py"
    ]
    found = sorted(
        (page, str(path.relative_to(ROOT)), heading)
        for path in files
        for text in _string_constants(path)
        for page, heading in headings
        if heading in text
    )
    assert not found, f"headings spelled out outside ui/<page>/sections.py: {found}"


def test_texts_cite_a_section_through_its_list():
    """ "section 3" in a text is ``POSTERIOR.cited``; a paper's section ("Section 4.4", "section 5.2.1") is not
    a page's and may be written out."""
    citation = re.compile(r"\bsection \d+[a-z]?\b(?![.\d])")
    files = [
        p for p in sorted(ROOT.glob("app_pages/*.py")) + sorted(ROOT.glob("ui/**/*.py")) if p.name != "sections.py"
    ]
    found = [
        (str(path.relative_to(ROOT)), match)
        for path in files
        for text in _string_constants(path)
        for match in citation.findall(text)
    ]
    assert not found, f"sections cited by a number written out: {found}"
