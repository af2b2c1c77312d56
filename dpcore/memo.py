"""The complete release record of a budget account and the plain-data content of a
decision memo; the HTML with figures is drawn by :mod:`ui.memo` (dpcore stays free of the UI).

The record holds every release of the account (the ledger's entries: statistic, released values,
mechanism, public parameters, (ε, δ), time), the dataset identity the analyst typed or chose (file
name, income and group columns, n) and the software version. It never holds the dataset
fingerprint: that is a hash of the confidential file, not a DP output (the ledger keeps it in its
database only; records name the account by its keyed public id).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from . import __version__

#: fields of a ledger entry / account that depend on the confidential data other than through DP
#: outputs, and so never reach a record
CONFIDENTIAL_FIELDS = ("dataset_id", "fingerprint", "sha256")


def _public(value: Any) -> Any:
    """``value`` with every confidential field removed (recursively)."""
    if isinstance(value, dict):
        return {k: _public(v) for k, v in value.items() if k not in CONFIDENTIAL_FIELDS}
    if isinstance(value, (list, tuple)):
        return [_public(v) for v in value]
    return value


def complete_record(
    records: Sequence[Any], account: Any, entries: Sequence[Any], *, dataset: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The release record as plain data: this release (``records``, ``ReleaseRecord`` objects or
    dicts), every release of the account (``entries`` of :meth:`dpcore.ledger.Account.entries`), the
    account (cap, spent, public id) and the dataset identity (file name, income column, group column,
    n, source). Confidential fields (the fingerprint) are dropped."""
    this = [r.to_dict() if hasattr(r, "to_dict") else dict(r) for r in records]
    identity = dataset or next((r.get("dataset") for r in this if r.get("dataset")), None) or {}
    history = []
    for entry in entries:
        item = entry.to_dict() if hasattr(entry, "to_dict") else dict(entry)
        history.append(item)
    account_doc = account.to_dict(list(entries)) if account is not None and hasattr(account, "to_dict") else {}
    return _public(
        {
            "dpcore_version": __version__,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "dataset": identity,
            "account": account_doc,
            "this_release": this,
            "every_release_of_the_account": history,
            "epsilon_spent_in_total": float(sum(float(getattr(e, "epsilon", 0.0) or 0.0) for e in entries)),
            "delta_spent_in_total": float(sum(float(getattr(e, "delta", 0.0) or 0.0) for e in entries)),
        }
    )


def complete_record_json(records: Sequence[Any], account: Any, entries: Sequence[Any], **kwargs: Any) -> str:
    """:func:`complete_record` as indented JSON."""
    return json.dumps(complete_record(records, account, entries, **kwargs), indent=2, default=_json_default)


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    return str(obj)
