"""A small thread-safe least-recently-used cache of built objects, and a digest of an array's records.

Used where an object built from data is shared by every session of the process (Streamlit runs
sessions in threads): the Gini's exact smooth-sensitivity profiles (:func:`dpcore.gini.shared_exact_profile`),
the group-means page's prepared tables and figures (``ui.stratified.views``), the Gini page's cache keys
(``ui.gini.views.data_digest``). What is kept is as confidential as the data it was built from; it never
leaves the process.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np


def array_digest(array: np.ndarray) -> str:
    """A 160-bit BLAKE2b digest of the array's bytes (C order), in hex: equal arrays of one dtype, equal
    digests. Any array (empty, NaN, inf included): it names data, it does not check them."""
    return hashlib.blake2b(np.ascontiguousarray(array).tobytes(), digest_size=20).hexdigest()


class BoundedCache:
    """``get_or_build(key, build)``: the object kept under ``key``, or ``build()`` kept there (the
    ``max_entries`` most recently used are kept). ``build`` runs outside the lock, so two threads may
    build the same key at once; the first one stored wins and both get it."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = int(max_entries)
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_build(self, key: Hashable, build: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        built = build()
        with self._lock:
            kept = self._items.setdefault(key, built)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)
        return kept

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
