"""The card's three files: their names (a simulation's start with ``SIMULATION_``), writing them, and an estimate
of their size for the free-space check before a release."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import DPInputError
from .content import MAX_CARD_ROWS, build_card, check_record
from .registry import registry_yaml
from .render import render_html, render_markdown

CARD_HTML = "release_card.html"
CARD_MARKDOWN = "release_card.md"
REGISTRY_YAML = "opendp_registry.yaml"
CARD_FILES = (CARD_HTML, CARD_MARKDOWN, REGISTRY_YAML)
#: a simulation's card files start with this, as its tables' files do: nothing of a simulation passes for a release
SIMULATION_FILE_PREFIX = "SIMULATION_"


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------


def card_file_names(record: Mapping[str, Any]) -> tuple[str, str, str]:
    """The names of the card's three files: :data:`CARD_FILES`, each starting with ``SIMULATION_`` when the
    record is a simulation's."""
    check_record(record)
    prefix = "" if str(record.get("mode", "release")) == "release" else SIMULATION_FILE_PREFIX
    html_name, markdown_name, yaml_name = (prefix + name for name in CARD_FILES)
    return html_name, markdown_name, yaml_name


def write_release_card(
    out_dir: str | Path, record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]
) -> list[Path]:
    """Write release_card.html, release_card.md and opendp_registry.yaml (:func:`card_file_names`) into
    ``out_dir``; return their paths (the caller lists them in the record's files with their SHA-256). All three
    texts are made before anything is written; a failure while writing removes what was written."""
    out = Path(out_dir)
    if not out.is_dir():
        raise DPInputError(f"the release card's folder {str(out)!r} does not exist")
    card = build_card(record, tables)
    texts = (render_html(card), render_markdown(card), registry_yaml(record, card))
    paths = [out / name for name in card_file_names(record)]
    try:
        for path, text in zip(paths, texts, strict=True):
            path.write_text(text, encoding="utf-8")
    except BaseException:
        for path in paths:
            path.unlink(missing_ok=True)
        raise
    return paths


#: bytes of the card files (HTML + Markdown + YAML): a fixed part and a part per shown row; measured 22 KB for the
#: 8 cells of a 4-statistic plan and 1.30 MB for 4 x 1,000 shown rows (about 320 bytes a row), so the estimate
#: is 1.1 to 1.3 x what is written
_CARD_FIXED_BYTES = 24_000
_CARD_BYTES_PER_ROW = 400


def card_bytes_estimate(rows_per_statistic: Sequence[int]) -> int:
    """About the bytes of the three card files for statistics of these many cells (at most
    :data:`MAX_CARD_ROWS` shown each), for the free-space check before a release."""
    rows = []
    for r in rows_per_statistic:
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r) or r < 0:
            raise DPInputError(f"rows per statistic must be whole numbers >= 0, got {r!r}")
        rows.append(min(int(r), MAX_CARD_ROWS))
    return _CARD_FIXED_BYTES + _CARD_BYTES_PER_ROW * sum(rows)
