"""The release card in a real Chromium, offline: a release's release_card.html opens from file:// with every
network request blocked (and none attempted), draws its tables, and the numbers it shows equal the tables'
(after the card's honest rounding). Uses only the shared ``chromium`` fixture (no app server).

Two page loads: the card a simulated release wrote (no intervals yet) and a card of the same tables with
interval columns (values rounded to the interval's grid, intervals outwards)."""

from __future__ import annotations

import re

import pytest
from quality_support import chromium_available
from support.cards import expected_text, interval, number, plain, simulated_release, with_intervals

from dpcore import release_card

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not chromium_available(),
        reason="needs /usr/bin/chromium and playwright (apt-get install chromium; .ci/run does it)",
    ),
]

#: every value and interval cell the page draws, with the statistic of its table, as the browser renders them
_CELLS_JS = """() => Array.from(document.querySelectorAll('table[data-statistic] td[data-column]')).map(td => ({
    statistic: td.closest('table').dataset.statistic, column: td.dataset.column,
    interval: td.classList.contains('interval'), row: td.parentElement.rowIndex - 1, text: td.innerText.trim(),
    visible: td.getBoundingClientRect().width > 0}))"""


def _open_offline(chromium, path):
    """The card in a fresh offline context; returns (cells, requests other than the file, console errors)."""
    context = chromium.new_context(offline=True, java_script_enabled=True)
    requests, errors = [], []
    try:
        page = context.new_page()
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        def block(route):
            if route.request.url != path.as_uri():
                requests.append(route.request.url)
                route.abort()
            else:
                route.continue_()

        page.route("**/*", block)
        page.goto(path.as_uri())
        page.wait_for_selector("table[data-statistic]")
        assert page.title().startswith("Release card: card-test")
        return page.evaluate(_CELLS_JS), requests, errors
    finally:
        context.close()


def _assert_numbers_equal(cells, record, tables):
    published = {s["name"] for s in record["statistics"] if "interval_level" in s}
    seen = 0
    for cell in cells:
        assert cell["visible"], cell
        table = tables[cell["statistic"]]
        c, i = cell["column"], cell["row"]
        lo, hi = (
            (table[f"{c}_lower"].iloc[i], table[f"{c}_upper"].iloc[i])
            if f"{c}_lower" in table.columns
            else (None, None)
        )
        value, ends = expected_text(
            table[c].iloc[i], lo, hi, integer=c.startswith("n"), published=cell["statistic"] in published
        )
        if cell["interval"]:
            assert interval(cell["text"]) == ends, cell
        else:
            assert number(cell["text"]) == value, cell
        seen += 1
    cells_per_row = {
        s["name"]: len(
            [
                c
                for c in tables[s["name"]].columns
                if c not in s["by"]
                and c != "simulation"
                and not c.endswith("_lower")
                and not re.match("noisy_bin_|smooth_sens", c)
            ]
        )
        for s in record["statistics"]
    }
    assert seen == sum(len(tables[name]) * k for name, k in cells_per_row.items())


def test_the_card_opens_offline_and_shows_the_tables_numbers(chromium, tmp_path):
    result = simulated_release(tmp_path / "release")
    card = result.out_dir / release_card.card_file_names(result.record)[0]
    cells, requests, errors = _open_offline(chromium, card)
    assert requests == [] and errors == []
    _assert_numbers_equal(cells, result.record, result.tables)

    record, tables = plain(result.record, result.tables)
    tables = with_intervals(tables)
    folder = tmp_path / "with_intervals"
    folder.mkdir()
    release_card.write_release_card(folder, record, tables)
    cells, requests, errors = _open_offline(chromium, folder / release_card.card_file_names(record)[0])
    assert requests == [] and errors == []
    assert any(c["interval"] for c in cells)
    _assert_numbers_equal(cells, record, tables)
