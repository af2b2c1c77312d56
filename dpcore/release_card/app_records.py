"""A release card for the app's releases: the card's (record, tables) from the app's release records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..errors import DPInputError

# ---------------------------------------------------------------------------------------------
# The app's releases
# ---------------------------------------------------------------------------------------------


def _app_table(r: Mapping[str, Any]) -> pd.DataFrame:
    frame = pd.DataFrame(
        {"released number": [str(x) for x in r.get("labels", [])], "value": [float(v) for v in r.get("released", [])]}
    )
    for end in ("lower", "upper"):
        ends = r.get(f"released_{end}") or r.get(end)
        if isinstance(ends, (list, tuple)) and len(ends) == len(frame):
            frame[f"value_{end}"] = [float(v) for v in ends]
    return frame


def _app_parameters(params: Mapping[str, Any]) -> dict[str, Any]:
    """The public scalars of an app statistic's parameters, its clip bounds named as the plan names them."""
    out = {k: v for k, v in params.items() if not isinstance(v, (list, dict))}
    for end in ("lower", "upper"):
        if f"clip_{end}" in out:
            out.setdefault(end, out.pop(f"clip_{end}"))
    return out


def card_inputs_from_app_records(
    records: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """(record, tables) for :func:`release_card_html` from the app's release records
    (:meth:`dpcore.release.ReleaseRecord.to_dict`): one table per statistic with its labels and released values
    (and ``value_lower`` / ``value_upper`` when the records carry intervals)."""
    recs = [dict(r) for r in records]
    if not recs:
        raise DPInputError("no release record to make a card from")
    dataset = recs[0].get("dataset") or {}
    names = [str(r.get("statistic")) for r in recs]
    simulation = any("SIMULATION" in str(r.get("sampler", "")) for r in recs)
    stats = [
        {
            "name": n,
            "kind": r.get("kind"),
            "by": ["released number"],
            "labelled": True,
            "epsilon": r.get("epsilon"),
            "noise": r.get("mechanism", ""),
            "measurement": r.get("measurement") or r.get("sampler", ""),
            # the release rounded its values with their intervals (dpcore.published): the card shows them as is
            **({"interval_level": r["interval_level"]} if r.get("interval_level") else {}),
        }
        for n, r in zip(names, recs, strict=True)
    ]
    plan_stats = [{"name": n, **_app_parameters(r.get("parameters") or {})} for n, r in zip(names, recs, strict=True)]
    relations = "; ".join(sorted({str(r.get("neighbouring")) for r in recs if r.get("neighbouring")}))
    size = f"the number of rows (n = {dataset['n']:,}), " if isinstance(dataset.get("n"), int) else ""
    public = f"{size}the bounds and thresholds of each statistic; per statistic: {relations}"
    record = {
        "record": "dpcore app release",
        "mode": "simulation, not a release" if simulation else "release",
        "created": recs[0].get("timestamp", ""),
        "software": recs[0].get("software", ""),
        "dataset": dataset.get("label") or dataset.get("source") or "the uploaded data",
        "plan": {"statistics": plan_stats},
        "privacy": {
            "neighbouring": relations,
            "public": public,
            "composition": "the statistics add up (sequential composition)",
            "cost": {
                "epsilon": sum(float(r.get("epsilon", 0.0)) for r in recs),
                "delta": sum(float(r.get("delta", 0.0)) for r in recs),
            },
            "per_statistic": [
                {"name": n, "kind": r.get("kind"), "epsilon": r.get("epsilon"), "delta": r.get("delta", 0.0)}
                for n, r in zip(names, recs, strict=True)
            ],
        },
        "statistics": stats,
    }
    return record, {n: _app_table(r) for n, r in zip(names, recs, strict=True)}
