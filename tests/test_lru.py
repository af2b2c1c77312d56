"""dpcore.lru: the bounded cache keeps the most recently used entries and builds each key once; the
array digest tells data sets apart."""

from __future__ import annotations

import threading

import numpy as np

from dpcore.lru import BoundedCache, array_digest


def test_least_recently_used_entry_goes_first_and_builds_happen_once_per_kept_key():
    cache, builds = BoundedCache(2), []

    def build(key):
        return lambda: builds.append(key) or f"built {key}"

    assert cache.get_or_build("a", build("a")) == "built a"
    assert cache.get_or_build("b", build("b")) == "built b"
    assert cache.get_or_build("a", build("a")) == "built a"  # kept: no build; "a" is now the most recent
    cache.get_or_build("c", build("c"))  # evicts "b", the least recently used
    assert len(cache) == 2
    cache.get_or_build("a", build("a"))
    cache.get_or_build("b", build("b"))
    assert builds == ["a", "b", "c", "b"]


def test_threads_racing_on_one_key_all_get_the_first_object_stored():
    cache, gate, got = BoundedCache(4), threading.Barrier(8), []

    def worker():
        gate.wait()
        got.append(cache.get_or_build("k", object))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(o) for o in got}) == 1 and len(cache) == 1


def test_array_digest_tells_data_apart():
    x = np.arange(10.0)
    y = x.copy()
    y[3] += 1e-9
    assert array_digest(x) == array_digest(x.copy()) == array_digest(x[::-1][::-1])
    assert array_digest(x) != array_digest(y)
