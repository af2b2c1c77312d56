"""The release card (dpcore.release_card): its numbers are the tables' after honest rounding, every text from
the data is escaped, the registry entry fits the OpenDP Deployments Registry's schema, neighbouring data give
cards that differ only in the released numbers, and a release writes the card beside its tables."""

from __future__ import annotations

import hashlib
import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from support.cards import (
    card_cells,
    card_data,
    expected_text,
    interval,
    number,
    plain,
    simulated_release,
    with_intervals,
)

from dpcore import planner, release, release_card
from dpcore.release_card import render as card_render
from dpcore.validation import DPInputError


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """One simulated release of every statistic kind (a public synthetic file): its record and tables."""
    result = simulated_release(tmp_path_factory.mktemp("card"))
    return result


def _value_columns(table: pd.DataFrame, by) -> list[str]:
    names = list(table.columns)
    return [
        c
        for c in names
        if c not in by
        and c != "simulation"
        and not re.search(r"_(lower|upper)$", c)
        and not c.startswith(("noisy_bin_", "smooth_sensitivity_bound"))
    ]


def _check_numbers(html_text: str, record: dict, tables: dict[str, pd.DataFrame]) -> int:
    """Every value (and interval) cell of the card equals the table's number after the same rounding; returns
    how many numbers were compared."""
    cells = card_cells(html_text)
    compared = 0
    for s in record["statistics"]:
        table = tables[s["name"]]
        for c in _value_columns(table, s["by"]):
            has = f"{c}_lower" in table.columns
            shown = cells.values[s["name"]][c]
            assert len(shown) == len(table)
            for i, text in enumerate(shown):
                lo, hi = (table[f"{c}_lower"].iloc[i], table[f"{c}_upper"].iloc[i]) if has else (None, None)
                value, ends = expected_text(
                    table[c].iloc[i], lo, hi, integer=c.startswith("n"), published="interval_level" in s
                )
                assert number(text) == value, (s["name"], c, i, text, value)
                if ends is not None:
                    assert interval(cells.intervals[s["name"]][c][i]) == ends
                compared += 1
    return compared


def test_card_numbers_equal_the_tables_as_released(released):
    html_text = release_card.release_card_html(released.record, released.tables)
    assert _check_numbers(html_text, released.record, released.tables) == 2 * (3 + 2 + 2 + 5)


def test_card_numbers_equal_the_tables_without_intervals(released):
    record, tables = plain(released.record, released.tables)
    html_text = release_card.release_card_html(record, tables)
    assert _check_numbers(html_text, record, tables) == 2 * (3 + 2 + 2 + 5)
    assert "publishes no intervals" in html_text


def test_card_numbers_equal_the_tables_with_intervals_rounded_honestly(released):
    record, tables = plain(released.record, released.tables)
    tables = with_intervals(tables)
    html_text = release_card.release_card_html(record, tables)
    assert _check_numbers(html_text, record, tables) == 2 * (3 + 2 + 2 + 5)
    assert "95% confidence interval" in html_text and "rounded here" in html_text
    # the digits follow the interval: a mean of about 45,000 with an interval about 7,000 wide is shown to the 100
    mean = card_cells(html_text).values["02_mean_by_region"]["mean"]
    assert all(number(t) % 100 == 0 for t in mean), mean
    markdown = release_card.release_card_markdown(record, tables)
    for texts in card_cells(html_text).values.values():
        for column in texts.values():
            for text in column:
                assert f"| {text} |" in markdown or f"| {text} " in markdown


def test_tables_the_release_rounded_are_shown_as_published(released):
    """A release that rounds its own tables (its statistics carry ``interval_level``): the card shows its numbers
    exactly, never on another grid, and an open top bin as "X or more"."""
    record, tables = plain(released.record, released.tables)
    tables = with_intervals(tables)
    for table in tables.values():  # published: every value and interval on the grid of its honest step
        for c in [c for c in table.columns if f"{c}_lower" in table.columns]:
            shown = [
                expected_text(v, lo, hi)
                for v, lo, hi in zip(table[c], table[f"{c}_lower"], table[f"{c}_upper"], strict=True)
            ]
            table[c] = [v for v, _ in shown]
            table[f"{c}_lower"], table[f"{c}_upper"] = [e[0] for _, e in shown], [e[1] for _, e in shown]
    risk = tables["04_relative_risk_by_region"]
    risk[["cases_exposed", "cases_reference"]] = risk[["cases_exposed", "cases_reference"]].round()  # whole counts
    mean = tables["02_mean_by_region"]
    mean["mean"] = [49_650.0, 41_450.0]  # on a grid of 50, finer than the card's own step for these intervals
    pct = tables["01_percentiles_by_region"]
    pct.loc[0, "p50_upper"] = float("nan")
    for s in record["statistics"]:
        s["interval_level"] = 0.9
    html_text = release_card.release_card_html(record, tables)
    assert _check_numbers(html_text, record, tables) == 2 * (3 + 2 + 2 + 5)
    cells = card_cells(html_text)
    assert cells.values["02_mean_by_region"]["mean"] == ["49,650", "41,450"]
    assert cells.intervals["01_percentiles_by_region"]["p50"][0].endswith(" or more")
    assert "90% confidence interval" in html_text and "as the release published them" in html_text


def test_auxiliary_published_columns_are_left_to_the_table_file(released):
    record, tables = plain(released.record, released.tables)
    tables = {k: t.copy() for k, t in tables.items()}
    for j in range(1, 22):
        tables["01_percentiles_by_region"][f"noisy_bin_{j:02d}"] = j
    tables["03_gini_by_region"]["smooth_sensitivity_bound"] = 0.01
    html_text = release_card.release_card_html(record, tables)
    cells = card_cells(html_text).values
    assert set(cells["01_percentiles_by_region"]) == {"n", "p25", "p50"} and set(cells["03_gini_by_region"]) == {
        "n",
        "gini",
    }
    assert "noisy_bin_01 to noisy_bin_21 (the noisy histogram" in html_text
    assert "smooth_sensitivity_bound (the published DP upper bound" in html_text


def test_card_number_rules():
    n = release_card.card_number(54691.12429423175, 50000.0, 59000.0)
    assert n.step == 200 and n.text == "54,600" and n.interval_text == "50,000 to 59,000"
    assert release_card.card_number(0.4338262, 0.401, 0.4789).text == "0.434"
    assert release_card.card_number(-0.0001, -0.3, 0.3).text == "0.00"  # never "-0.00"
    assert release_card.card_number(float("nan")).text == "undefined"
    assert release_card.card_number(float("inf"), 1.0, 2.0).text == "undefined"
    assert release_card.card_number(753, integer=True).text == "753"
    assert release_card.card_number(2.5, 2.5, 2.5).step is None  # a zero-width interval sets no step
    assert release_card.card_number(21333.609090909093).text == "21,333.6"


def test_hostile_labels_and_column_names_are_escaped(released):
    record = json.loads(json.dumps(released.record))
    tables = {k: v.copy() for k, v in released.tables.items()}
    hostile = '<script>alert("x")</script> | [click](http://evil.example) *bold* `code`\nnext'
    column = "<img src=x onerror=alert(1)>"
    name = "02_mean_by_region"
    tables[name]["region"] = [hostile, "south"]
    tables[name] = tables[name].rename(columns={"region": column})
    for s in record["statistics"]:
        if s["name"] == name:
            s["by"] = [column]
    html_text = release_card.release_card_html(record, tables)
    assert "<script" not in html_text.lower() and "<img" not in html_text.lower()
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html_text
    assert "&lt;img src=x onerror=alert(1)&gt;" in html_text
    assert "Content-Security-Policy" in html_text and "default-src 'none'" in html_text
    assert not re.search(r"<[^>]*\s(?:href|src|action)=", html_text)  # nothing to fetch or follow
    assert "http" not in release_card.release_card_html(released.record, released.tables).replace("http-equiv", "")
    markdown = release_card.release_card_markdown(record, tables)
    assert "<script" not in markdown.lower() and "<img" not in markdown.lower()
    row = next(line for line in markdown.splitlines() if "&lt;script&gt;alert(\"x\")" in line)
    header = next(line for line in markdown.splitlines() if line.startswith("| &lt;img"))
    bars = re.compile(r"(?<!\\)\|")
    assert len(bars.findall(row)) == len(bars.findall(header))  # the label's | is escaped: no extra cell
    assert "\\[click\\](http://evil.example) \\*bold\\* \\`code\\` next" in row


def test_control_and_bidi_characters_are_shown_as_escapes(released):
    """NUL and U+202E (the right-to-left override, which reverses what follows on screen) reached the card raw from
    a cell label, a column name and the data set's name; every such character is now written as its escape."""
    record = json.loads(json.dumps(released.record))
    tables = {k: v.copy() for k, v in released.tables.items()}
    name = "02_mean_by_region"
    label, column = "north\x00\u202e00.1 :naem", "region\u200b\u2066"
    tables[name]["region"] = [label, "south"]
    tables[name] = tables[name].rename(columns={"region": column})
    for s in record["statistics"]:
        if s["name"] == name:
            s["by"] = [column]
    record["dataset"] = "wages \u202e2024\x1b[2J"
    texts = {
        "html": release_card.release_card_html(record, tables),
        "markdown": release_card.release_card_markdown(record, tables),
        "yaml": release_card.opendp_registry_entry(record, tables),
    }
    for kind, text in texts.items():
        hidden = [hex(ord(ch)) for ch in set(text) if ch not in "\n" and not ch.isprintable()]
        assert not hidden, (kind, hidden)
    assert "north\\u0000\\u202e00.1 :naem" in texts["html"] and "region\\u200b\\u2066" in texts["html"]
    assert "wages \\u202e2024\\u001b[2J" in texts["html"]
    assert "north\\\\u0000\\\\u202e00.1 :naem" in texts["markdown"]  # its backslash escaped for Markdown


def test_simulation_card_says_so_and_release_card_does_not(released):
    html_text = release_card.release_card_html(released.record, released.tables)
    assert "SIMULATION, NOT A RELEASE" in html_text
    real = {**released.record, "mode": "release"}
    assert "SIMULATION" not in release_card.release_card_html(real, released.tables)


def test_privacy_statement_methods_and_software(released):
    markdown = release_card.release_card_markdown(released.record, released.tables)
    for words in (
        "Who is protected: the people in the data set 'card-test'",
        "unit of privacy is one record",
        "epsilon = 2.5 and delta = 0 in total",
        "e^epsilon = 12.2",
        "the clipping bounds 0 to 300,000",
        "the 21 histogram bins, edges 10,000 to 614,597",
        "the percentile levels 25, 50",
        "Lan and J. P. Reiter",
        "Foote, A. Machanavajjhala",
        "Rosenblatt, J. Stoyanovich",
        "Shoham and K. Ligett",
        "dpcore 0.1.0",
    ):
        assert card_render._m(words) in markdown, words
    assert "| 03\\_gini\\_by\\_region | gini | 0.5 | 0 |" in markdown
    exponential = json.loads(json.dumps(released.record))
    exponential["plan"]["statistics"][0]["method"] = "exponential"
    markdown = release_card.release_card_markdown(exponential, released.tables)
    assert "McSherry and K. Talwar" in markdown and "Foote" not in markdown


def test_opendp_version_is_read_from_the_record():
    record = {
        "statistics": [
            {"measurement": "OpenDP 0.16.0: opendp.measurements.make_laplace(...)"},
            {"measurement": "dpcore certified generalized-Cauchy sampler"},
        ]
    }
    assert release_card.opendp_version(record) == "0.16.0"
    assert release_card.opendp_version({"statistics": [{"measurement": "numpy simulation"}]}) is None


# ---------------------------------------------------------------------------------------------
# The registry entry
# ---------------------------------------------------------------------------------------------

#: The keys and enumerations of the registry's schema (schemas/deployments-schema.yaml of
#: opendp/deployments-registry-data, commit 3e9c812): every level sets additionalProperties: False.
REGISTRY_KEYS = {
    "": ({"url_slug", "status", "tier", "deployment"}, {"url_slug", "status", "tier", "deployment"}),
    "deployment": (
        {"basic", "dp_variant", "privacy_loss", "deployment_model", "accounting", "implementation", "administrative"},
        {"basic"},
    ),
    "deployment.basic": (
        {
            "name",
            "data_curators",
            "intended_use",
            "data_product_type",
            "data_product_region",
            "description",
            "publication_date",
            "data_product_sector",
        },
        {
            "name",
            "data_curators",
            "description",
            "intended_use",
            "data_product_type",
            "data_product_region",
            "publication_date",
        },
    ),
    "deployment.dp_variant": ({"variant_name", "data_domain", "unprotected_quantities"}, set()),
    "deployment.privacy_loss": (
        {"privacy_unit", "privacy_unit_details", "privacy_parameters", "privacy_parameters_details"},
        set(),
    ),
    "deployment.privacy_loss.privacy_parameters": ({"epsilon", "delta", "rho"}, set()),
    "deployment.deployment_model": (
        {
            "model_name",
            "model_name_details",
            "actors",
            "release_type",
            "release_type_details",
            "data_source_type",
            "data_source_type_details",
            "access_type",
            "access_type_details",
        },
        set(),
    ),
    "deployment.accounting": ({"post_processing", "composition"}, set()),
    "deployment.implementation": ({"preprocessing_and_hyperparameter_tuning", "mechanisms", "justification"}, set()),
    "deployment.administrative": ({"sources", "notes", "registry_authors"}, {"registry_authors"}),
}
REGISTRY_ENUMS = {
    "status": {
        "Converted",
        "Draft",
        "Pending",
        "Changes Required",
        "Approved",
        "Approved (Update Requested)",
        "Approved (Pending)",
    },
    "tier": {1, 2, 3},
    "deployment.basic.data_product_type": {
        "Summary statistics",
        "Machine learning model",
        "Dataset",
        "Synthetic data",
        "Interactive API",
        "SQL queries",
    },
    "deployment.basic.data_product_sector": {
        "Technology",
        "Healthcare",
        "Education",
        "Government",
        "Energy",
        "Finance",
    },
    "deployment.dp_variant.variant_name": {"Pure DP", "Approximate DP", "Zero-concentrated DP", "Renyi DP", "Custom"},
    "deployment.deployment_model.model_name": {"Local", "Central", "Shuffle", "Federated", "Varies"},
    "deployment.deployment_model.release_type": {"One release", "Many releases"},
    "deployment.deployment_model.data_source_type": {"Static", "Dynamic"},
    "deployment.deployment_model.access_type": {"Interactive", "Non-interactive"},
}


def _at(doc: dict, path: str):
    for part in filter(None, path.split(".")):
        doc = doc[part]
    return doc


def _registry(record: dict, tables: dict) -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load(release_card.opendp_registry_entry(record, tables))


def test_registry_entry_has_the_schema_keys_and_values(released):
    doc = _registry(released.record, released.tables)
    for path, (allowed, required) in REGISTRY_KEYS.items():
        keys = set(_at(doc, path))
        assert required <= keys <= allowed, (path, keys - allowed, required - keys)
    for path, values in REGISTRY_ENUMS.items():
        assert _at(doc, path) in values, path
    basic = doc["deployment"]["basic"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", basic["publication_date"])
    assert basic["publication_date"] == released.record["created"][:10] and basic["name"] == "card-test"
    assert basic["data_curators"][0].startswith(release_card.REGISTRY_PLACEHOLDER)
    assert doc["deployment"]["administrative"]["registry_authors"][0].startswith(release_card.REGISTRY_PLACEHOLDER)
    params = doc["deployment"]["privacy_loss"]["privacy_parameters"]
    assert params == {"epsilon": 2.5, "delta": 0.0}
    assert doc["deployment"]["dp_variant"]["variant_name"] == "Pure DP"
    assert "Shoham and K. Ligett" in doc["deployment"]["implementation"]["mechanisms"]
    approximate = json.loads(json.dumps(released.record))
    approximate["privacy"]["cost"]["delta"] = 1e-06
    doc = _registry(approximate, released.tables)
    assert doc["deployment"]["dp_variant"]["variant_name"] == "Approximate DP"
    assert doc["deployment"]["privacy_loss"]["privacy_parameters"]["delta"] == 1e-06


def test_the_tiny_yaml_emitter_round_trips():
    yaml = pytest.importorskip("yaml")
    doc = {
        "a": "quote \" backslash \\ colon: # hash",
        "b": "line\nbreak\ttab",
        "c": "é – ε",
        "d": 1e-06,
        "e": 2.0,
        "f": 3,
        "g": ["x: y", "- z"],
        "h": {"i": True, "j": None, "k": float("inf")},
        "l": "yes",
        "m": "0012",
        "n": "",
        "o": [],
    }
    assert yaml.safe_load(release_card.to_yaml(doc)) == doc


# ---------------------------------------------------------------------------------------------
# Neighbours, the files of a release, the app's records
# ---------------------------------------------------------------------------------------------


def _masked(html_text: str) -> str:
    """The card with the released numbers (value and interval cells) blanked."""
    return re.sub(r'(<td class="num (?:value|interval)" data-column="[^"]*">)[^<]*(</td>)', r"\1#\2", html_text)


def test_neighbouring_data_give_cards_that_differ_only_in_the_released_numbers(tmp_path):
    data = card_data()
    neighbour = data.copy()
    row = int(np.flatnonzero(neighbour["region"] == "north")[0])
    neighbour.loc[row, "earnings"] = 9_000_000.0  # replace one record's income: a far outlier (clipped)
    neighbour.loc[row, "first_gen"] = "yes" if data.loc[row, "first_gen"] == "no" else "no"
    a = simulated_release(tmp_path / "a", data)
    b = simulated_release(tmp_path / "b", neighbour)
    b.record["created"] = a.record["created"]  # the clock, not the data
    for make in (lambda r: r.tables, lambda r: with_intervals(plain(r.record, r.tables)[1])):
        card_a = release_card.release_card_html(a.record, make(a))
        card_b = release_card.release_card_html(b.record, make(b))
        assert card_a != card_b  # the released numbers differ ...
        assert _masked(card_a) == _masked(card_b)  # ... and nothing else
    assert release_card.opendp_registry_entry(a.record, a.tables) == release_card.opendp_registry_entry(
        b.record, b.tables
    )


def test_a_release_writes_the_card_and_lists_it_with_its_hash(released):
    out = released.out_dir
    record = json.loads((out / "release_record.json").read_text())
    names = release_card.card_file_names(record)
    assert names == tuple(f"SIMULATION_{name}" for name in release_card.CARD_FILES)  # as a simulation's tables
    assert release_card.card_file_names({**record, "mode": "release"}) == release_card.CARD_FILES
    for name in names:
        assert record["files"][name] == hashlib.sha256((out / name).read_bytes()).hexdigest()
    assert (out / names[0]).read_text() == release_card.release_card_html(released.record, released.tables)


def test_a_card_failure_never_loses_the_release(tmp_path, monkeypatch):
    from dpcore.engines import output

    def broken(*args, **kwargs):
        raise DPInputError("card went wrong")

    monkeypatch.setattr(output, "write_release_card", broken)
    result = simulated_release(tmp_path)
    record = json.loads((result.out_dir / "release_record.json").read_text())
    assert "card went wrong" in record["release_card"]
    assert not any(name.endswith(release_card.CARD_FILES) for name in record["files"])
    assert not any(path.name.endswith(release_card.CARD_FILES) for path in result.out_dir.iterdir())
    assert any(name.endswith(".csv") for name in record["files"])


def test_bad_inputs_are_refused(released, tmp_path):
    with pytest.raises(DPInputError, match="no table for the statistic"):
        release_card.release_card_html(released.record, {})
    with pytest.raises(DPInputError, match="release record"):
        release_card.release_card_markdown({"mode": "release"}, released.tables)
    with pytest.raises(DPInputError, match="does not exist"):
        release_card.write_release_card(tmp_path / "missing", released.record, released.tables)


def test_app_records_make_a_card(release_account):
    x = np.random.default_rng(1).lognormal(10.5, 0.8, 400)
    groups = np.array(["a", "b"] * 200)
    items = [
        (planner.make_statistic("gini", x, None, upper=500_000), 1.0),
        (planner.make_statistic("group_means", x, groups, upper=500_000), 0.5),
    ]
    records = release.make_release(items, release_account, dataset={"label": "upload.csv", "n": 400})
    record, tables = release_card.card_inputs_from_app_records([r.to_dict() for r in records])
    html_text = release_card.release_card_html(record, tables)
    shown = card_cells(html_text).values
    for r in records:
        assert [number(t) for t in shown[r.statistic]["value"]] == [expected_text(v)[0] for v in r.released]
    assert "upload.csv" in html_text and "n = 400" in html_text and "clipping bounds 0 to 500,000" in html_text
    assert "SIMULATION" not in html_text  # a real release draws from the secure samplers
    assert math.isclose(_registry(record, tables)["deployment"]["privacy_loss"]["privacy_parameters"]["epsilon"], 1.5)


def test_release_mode_offers_the_card_downloads(tmp_path, monkeypatch):
    """The planner's Release mode, after a release, offers the card (HTML, Markdown) and the registry entry,
    each built on click (a deferred download: nothing is made on a rerun)."""
    from support import assert_clean, open_page

    from dpcore import ledger

    monkeypatch.setenv(ledger.ENV_VAR, f"sqlite:///{tmp_path}/ledger.db")
    at = open_page(
        "app_pages/planner.py",
        planner_mode="Release: make the real release (spends budget)",
        planner_stats="gini",
        data_n=2000,
        data_seed=4321,
        planner_cap=50,
    )
    for button in [b for b in at.button if b.key == "planner_create_ledger"]:  # a new ledger is asked for once
        button.click().run()
    next(c for c in at.checkbox if c.key.startswith("planner_confirm")).check().run()
    at.button(key="planner_release").click().run()
    assert_clean(at)
    buttons = {b.proto.label: b.proto for b in at.get("download_button")}
    for label in (
        "Download the release card (HTML)",
        "Download the release card (Markdown)",
        "Download the OpenDP registry entry (YAML)",
    ):
        assert buttons[label].deferred_file_id, label


def test_cells_selected_with_dp_are_not_called_public(released):
    record, tables = plain(released.record, released.tables)
    record["cells"] = {**record["cells"], "cell_sizes": "noisy"}
    for s in record["statistics"]:
        if s["by"]:
            s["cells"] = {"cells": "selected with differential privacy (Laplace threshold mechanism)"}
    markdown = release_card.release_card_markdown(record, tables)
    assert "the cells (values of region) are not public: selected with differential privacy" in markdown
    assert "published rows" not in markdown
    public = release_card.release_card_markdown(*plain(released.record, released.tables))
    assert "the cells (values of region) of the 2 published rows" in public
