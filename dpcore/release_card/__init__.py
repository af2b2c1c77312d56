"""The release card: what an agency publishes beside the tables, and the release as a registry entry.

Three files, all computed from the release record and the released tables alone (post-processing of DP
outputs and public parameters; nothing here sees the confidential data):

* ``release_card.html`` (:func:`release_card_html`): one self-contained page (inline CSS, no script, no
  external URL; a Content-Security-Policy of ``default-src 'none'`` forbids any fetch, so it opens offline and
  cannot run anything a label smuggled in). Every text taken from the record or the tables is escaped
  (``html.escape``): cell labels and column names come from the user's data.
* ``release_card.md`` (:func:`release_card_markdown`): the same content in Markdown (HTML-escaped and
  Markdown-escaped, so a label cannot open a link, a table cell or a tag in a renderer).
* ``opendp_registry.yaml`` (:func:`opendp_registry_entry`): the release as an entry of the OpenDP
  Differential Privacy Deployments Registry, so agencies can publish their epsilons there.

What the card shows: every released value with its interval when the table has ``<v>_lower`` / ``<v>_upper``
columns, with honest digits (:func:`card_number`: printed exactly as published when the release rounded its
tables itself, its statistics' ``interval_level`` says so; else rounded here to the step of
:func:`dpcore.intervals.honest_grid`, between 1/50 and 1/20 of the interval's width; a release's own step is cut
from a public width, at most 1/20 of it: :mod:`dpcore.published`), so no digit is finer than the noise allows;
the privacy statement in plain words (who is protected, the unit, epsilon and delta per statistic and in total, what is public); the
methods with their papers; the date and the software (dpcore and OpenDP versions, read from the record).

Neighbouring data sets give cards that differ only in the released numbers (and the intervals and rounding
steps computed from them): every other text is a function of the plan and public parameters

The package, one concern per module (this ``__init__`` imports their public names: ``dpcore.release_card.<name>``
is their public path): :mod:`~dpcore.release_card.numbers` (honest digits), :mod:`~dpcore.release_card.content`
(the card's content, once, for both renderers), :mod:`~dpcore.release_card.render` (HTML and Markdown),
:mod:`~dpcore.release_card.registry` (the OpenDP Deployments Registry entry), :mod:`~dpcore.release_card.files`
(the three files) and :mod:`~dpcore.release_card.app_records` (a card for the app's releases).
"""

from __future__ import annotations

from .app_records import card_inputs_from_app_records
from .content import MAX_CARD_ROWS, METHODS, SIMULATION_WARNING
from .content import opendp_version as opendp_version
from .files import (
    CARD_FILES,
    CARD_HTML,
    CARD_MARKDOWN,
    REGISTRY_YAML,
    SIMULATION_FILE_PREFIX,
    card_bytes_estimate,
    card_file_names,
    write_release_card,
)
from .numbers import CardNumber, card_number
from .registry import REGISTRY_PLACEHOLDER, opendp_registry_entry
from .registry import to_yaml as to_yaml
from .render import release_card_html, release_card_markdown

__all__ = [
    "CARD_HTML",
    "CARD_MARKDOWN",
    "REGISTRY_YAML",
    "CARD_FILES",
    "SIMULATION_FILE_PREFIX",
    "card_file_names",
    "MAX_CARD_ROWS",
    "CardNumber",
    "card_number",
    "release_card_html",
    "release_card_markdown",
    "opendp_registry_entry",
    "write_release_card",
    "card_inputs_from_app_records",
    "card_bytes_estimate",
    "REGISTRY_PLACEHOLDER",
    "METHODS",
    "SIMULATION_WARNING",
]
