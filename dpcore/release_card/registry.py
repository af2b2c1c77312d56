"""The release as an entry of the OpenDP Differential Privacy Deployments Registry (YAML, with a tiny emitter)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..errors import DPInputError
from .content import METHODS, Card, build_card, check_record, plain_number, software_line, unit_sentence, visible

#: the marker of a registry field only the publishing agency can fill
REGISTRY_PLACEHOLDER = "FILL IN"


def _yaml_scalar(v: Any) -> str:
    if isinstance(v, (Mapping, list)):  # only empty ones get here
        return "{}" if isinstance(v, Mapping) else "[]"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return ".nan"
        if math.isinf(v):
            return ".inf" if v > 0 else "-.inf"
        text = repr(v)
        if "e" in text and "." not in text.split("e")[0]:  # YAML 1.1 reads 1e-06 as text; 1.0e-06 as a number
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    return json.dumps(visible(str(v)), ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def _yaml_lines(obj: Any, indent: int) -> list[str]:
    pad = "  " * indent
    lines: list[str] = []
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            if isinstance(v, (Mapping, list)) and v:
                lines.append(f"{pad}{k}:")
                lines += _yaml_lines(v, indent + 1)
            else:
                lines.append(f"{pad}{k}: {_yaml_scalar(v)}")
        return lines
    for item in obj:
        if isinstance(item, (Mapping, list)):
            raise DPInputError("the registry emitter writes lists of scalars only")
        lines.append(f"{pad}- {_yaml_scalar(item)}")
    return lines


def to_yaml(doc: Mapping[str, Any]) -> str:
    """A tiny YAML emitter for nested mappings, lists of scalars and scalars (every string double-quoted with
    JSON escapes, which YAML reads the same), enough for a registry entry without a YAML dependency."""
    return "\n".join(_yaml_lines(doc, 0)) + "\n"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:80] or "release"


def _fill(what: str) -> str:
    return f"{REGISTRY_PLACEHOLDER}: {what}"


def _privacy_parameters(eps: float, delta: float) -> dict[str, Any]:
    return {"epsilon": float(eps), "delta": float(delta)}


def _registry_basic(record: Mapping[str, Any], card: Card) -> dict[str, Any]:
    plan = record.get("plan") or {}
    date = card.created[:10] if re.fullmatch(r"\d{4}-\d{2}-\d{2}", card.created[:10]) else _fill("YYYY-MM-DD")
    kinds = ", ".join(sorted({METHODS.get(s.method, (s.kind,))[0] for s in card.statistics}))
    description = str(
        plan.get("description")
        or f"Differentially private {kinds} of the data set {card.title!r}, released by cell with dpcore."
    )
    return {
        "name": card.title,
        "data_curators": [_fill("the agency publishing this release")],
        "description": description,
        "intended_use": _fill("what the statistics are published for"),
        "data_product_type": "Summary statistics",
        "data_product_region": _fill("the region the data describe, or whose laws apply"),
        "publication_date": date,
        "data_product_sector": "Government",
    }


def _registry_privacy(record: Mapping[str, Any], card: Card) -> tuple[dict[str, Any], dict[str, Any]]:
    privacy = record.get("privacy") or {}
    plan = record.get("plan") or {}
    variant = {
        "variant_name": "Pure DP" if card.delta == 0 else "Approximate DP",
        "data_domain": (
            f"tables of rows with an income column {plan.get('income', 'income')!r} and the "
            f"cell columns of the statistics ({', '.join(sorted({b for s in card.statistics for b in s.by})) or 'none'})"
        ),
        "unprotected_quantities": str(privacy.get("public") or "; ".join(card.public)),
    }
    unit = (
        f"person (column {plan['privacy_unit']!r}, at most {plan.get('max_rows_per_person', 1)} rows each)"
        if plan.get("privacy_unit")
        else "record (one row)"
    )
    per = "; ".join(f"{s.name}: epsilon {s.epsilon:g}, delta {s.delta:.3g}" for s in card.statistics)
    loss = {
        "privacy_unit": unit,
        "privacy_unit_details": ". ".join(
            str(privacy[k]) for k in ("neighbouring", "what_one_person_can_change") if privacy.get(k)
        )
        or unit_sentence(record),
        "privacy_parameters": _privacy_parameters(card.epsilon, card.delta),
        "privacy_parameters_details": f"per statistic (they add up): {per}",
    }
    return variant, loss


def _registry_model(record: Mapping[str, Any]) -> dict[str, Any]:
    ledger = record.get("ledger") or {}
    budget = (
        ""
        if ledger.get("entry_id") is None
        else f" This release was charged to the budget account {ledger.get('account')!r} of a durable ledger "
        f"(entry {ledger['entry_id']}), whose cap is epsilon = {plain_number(ledger.get('cap_epsilon'))}; epsilon spent "
        f"on it after this release: {plain_number(ledger.get('spent_epsilon_after'))}."
    )
    return {
        "model_name": "Central",
        "model_name_details": "The curator runs dpcore on the confidential data and publishes only the noisy "
        "tables, the plan and the release record.",
        "actors": _fill("who holds the confidential data, who runs the release, who reads the tables"),
        "release_type": "One release",
        "release_type_details": "One release of the plan's statistics." + budget,
        "data_source_type": "Static",
        "access_type": "Non-interactive",
    }


def _registry_implementation(record: Mapping[str, Any], card: Card) -> dict[str, Any]:
    missing = record.get("missing_values") or {}
    mechanisms = " ".join(
        f"{s.name} ({s.kind}): " + ". ".join(t for t in (s.noise, s.measurement) if t) + "." for s in card.statistics
    )
    papers = "; ".join(p for _, _, p in card.methods)
    return {
        "preprocessing_and_hyperparameter_tuning": (
            f"Missing incomes: {missing.get('income', 'see the record')}. "
            + _fill("how the plan's epsilon, bounds and bins were chosen, and whether that used the data")
        ),
        "mechanisms": f"{mechanisms} Papers: {papers}. Software: {software_line(card)}.",
        "justification": _fill("why these choices (epsilon, bounds, cells)"),
    }


def opendp_registry_entry(record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame] | None = None) -> str:
    """The release as an entry of the OpenDP Differential Privacy Deployments Registry, in YAML.

    The field names, nesting, enumerations and required keys are those of the registry's schema
    ``schemas/deployments-schema.yaml`` and its template ``tests/good_deployments/template.yaml`` in
    github.com/opendp/deployments-registry-data (commit 3e9c812; the registry is shown at
    registry.opendp.org): required ``url_slug``, ``status``, ``tier``, ``deployment.basic`` (``name``,
    ``data_curators``, ``description``, ``intended_use``, ``data_product_type``, ``data_product_region``,
    ``publication_date``) and ``deployment.administrative.registry_authors``; no key outside the schema (it
    sets ``additionalProperties: False`` at every level).

    Mapping: a tier-3 ``Draft`` entry; the name is the record's dataset, the publication date its ``created``
    day, the description the plan's (else a sentence naming the statistics); ``dp_variant`` pure or approximate
    DP from the total delta, the unprotected quantities the record's public statement; ``privacy_loss`` the
    unit, the relation and the total (epsilon, delta), per statistic in the details; a central, non-interactive,
    static, one-release deployment (with the ledger account and its cap when charged); composition and
    post-processing as the record states them; the mechanisms as recorded with their papers and the software.
    What only the agency knows (curator, intended use, region, actors, how epsilon was chosen, the sources and
    the registry's authors) is left as ``"FILL IN: ..."``. ``tables`` is accepted for symmetry with the card
    and used only to count cells (the entry holds no released value)."""
    check_record(record)
    return registry_yaml(record, build_card(record, tables if tables is not None else _empty_tables(record)))


def registry_yaml(record: Mapping[str, Any], card: Card) -> str:
    variant, loss = _registry_privacy(record, card)
    privacy = record.get("privacy") or {}
    doc = {
        "url_slug": _slug(f"{card.title}_{card.created[:10]}"),
        "status": "Draft",
        "tier": 3,
        "deployment": {
            "basic": _registry_basic(record, card),
            "dp_variant": variant,
            "privacy_loss": loss,
            "deployment_model": _registry_model(record),
            "accounting": {
                "post_processing": (
                    "Released values are clamped to their possible range and rounded to public grids; percentiles "
                    "are read off the noisy histograms; intervals are computed from the published numbers only."
                ),
                "composition": str(privacy.get("composition") or "sequential composition of the statistics"),
            },
            "implementation": _registry_implementation(record, card),
            "administrative": {
                "sources": _fill("a link to the published tables and release card"),
                "notes": (
                    f"Exported by {card.software} from release_record.json (plan SHA-256 "
                    f"{record.get('plan_sha256', 'not recorded')})."
                ),
                "registry_authors": [_fill("who fills in this entry")],
            },
        },
    }
    header = (
        "# An entry for the OpenDP Differential Privacy Deployments Registry (schema: "
        "opendp/deployments-registry-data, schemas/deployments-schema.yaml).\n"
        f"# Replace every \"{REGISTRY_PLACEHOLDER}: ...\" before submitting it.\n"
    )
    return header + to_yaml(doc)


def _empty_tables(record: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    return {str(s.get("name")): pd.DataFrame(columns=list(s.get("by", []))) for s in record.get("statistics", [])}
