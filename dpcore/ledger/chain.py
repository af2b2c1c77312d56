"""The hash chain: each entry's hash covers the previous entry's and its own content; each result's, its entry's.

An edited, reordered or deleted entry (or a cap changed with the triggers dropped) no longer matches the chain,
which :func:`dpcore.ledger.verify.verify_ledger` recomputes. Accounts enter the chain by their keyed public id
(:func:`public_id_of`), never by their dataset id: the hashes may be exported, and a hash over a fingerprint of the
data would let an export holder confirm a guessed file.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

__all__ = ["CHAIN_GENESIS"]

#: prev_hash of the first entry of a ledger
CHAIN_GENESIS = hashlib.sha256(b"dpcore-ledger-chain-v1").hexdigest()


def _sha(parts: list[Any]) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, separators=(",", ":")).encode("utf-8")).hexdigest()


def entry_hash(
    prev_hash: str,
    public_id: str,
    account: tuple,
    label: str,
    cost_json: str,
    epsilon: float,
    delta: float,
    stamp: str,
    record_json: str,
) -> str:
    """SHA-256 over the previous entry's hash, the account (by its keyed public id, never the fingerprint:
    the hash may be exported, and a hash over the fingerprint would let an export holder confirm a
    guessed file), the account's label, cap and creation time, and the entry's own content. Floats are
    hashed by ``repr`` (exact round trip through SQLite REAL and PostgreSQL DOUBLE PRECISION)."""
    acct_label, cap_eps, cap_delta, created = account
    return _sha(
        [
            "dpcore-entry-v1",
            prev_hash,
            public_id,
            acct_label,
            repr(float(cap_eps)),
            repr(float(cap_delta)),
            created,
            label,
            cost_json,
            repr(float(epsilon)),
            repr(float(delta)),
            stamp,
            record_json,
        ]
    )


def hashed_accounts(conn: Any) -> dict[str, tuple[str, float, float, str]]:
    """What an entry's hash covers of each account (label, cap epsilon, cap delta, creation time), by dataset id."""
    return {
        r[0]: (r[1], float(r[2]), float(r[3]), r[4])
        for r in conn.execute(
            "SELECT dataset_id, label, cap_epsilon, cap_delta, created FROM dpcore_accounts"
        ).fetchall()
    }


def result_hash(entry_hash: str, stamp: str, result_json: str) -> str:
    """SHA-256 over the entry's hash and the result's content."""
    return _sha(["dpcore-result-v1", entry_hash, stamp, result_json])


def looks_like_fingerprint(dataset_id: str) -> bool:
    """A 64-hex id is a file fingerprint (kept out of messages and listings); anything else is a name."""
    return len(dataset_id) == 64 and all(c in "0123456789abcdef" for c in dataset_id.lower())


def public_id_of(key: str, dataset_id: str) -> str:
    """An account's public id: HMAC-SHA-256 of its dataset id under the ledger's key, first 32 hex digits."""
    return hmac.new(key.encode(), dataset_id.encode("utf-8"), hashlib.sha256).hexdigest()[:32]
