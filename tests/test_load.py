"""Many users: 20 concurrent sessions moving sliders at once.

Each session is an AppTest of the real app (see quality_support.app_script) running in its own
thread, spread over every page of app.py's PAGES list; each moves its page's main slider back and
forth and reruns, RERUNS_PER_SESSION times, all starting together once every session is open (a
fixed amount of work, not a fixed time: the same overlap on a loaded machine, 40 reruns). Checks: no exception in any session, every rerun returns, and
st.cache_data entries are shared between sessions (the number of entries of every cached function
does not grow with the number of sessions). The p50 / p95 / worst rerun latency is printed and
written to artifacts/load_test.txt (no timing assert: the machine is shared).

A real server shares one Runtime (and so one cache, one media-file manager) between all sessions;
AppTest gives each run a private mock Runtime and resets the global one afterwards, which races
when runs overlap. The ``shared_runtime`` fixture makes every session use one mock Runtime, like
a server does.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from unittest.mock import MagicMock

import numpy as np
import pytest
from quality_support import REPO_ROOT, discover_pages, main_slider, move_slider, open_page

N_SESSIONS = 20
RERUNS_PER_SESSION = 2  # was 8 s of reruns (~4 per session at load 2): the overlap is at the barrier


@pytest.fixture
def shared_runtime(monkeypatch):
    from streamlit.runtime import Runtime
    from streamlit.runtime.caching.storage.dummy_cache_storage import MemoryCacheStorageManager
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.testing.v1.util import patch_config_options

    runtime = MagicMock(spec=Runtime)
    runtime.media_file_mgr = MediaFileManager(MemoryMediaFileStorage("/mock/media"))
    runtime.cache_storage_manager = MemoryCacheStorageManager()
    try:
        from streamlit.components.v2.component_manager import BidiComponentManager

        runtime.bidi_component_registry = BidiComponentManager()
    except Exception:  # older/newer Streamlit without v2 components
        pass
    try:
        from streamlit.runtime.dataframe_source_manager import DataframeSourceManager

        runtime.dataframe_source_mgr = DataframeSourceManager()
    except Exception:
        pass
    monkeypatch.setattr(Runtime, "instance", classmethod(lambda cls: runtime))
    monkeypatch.setattr(Runtime, "exists", classmethod(lambda cls: True))
    with patch_config_options({"global.appTest": True}):
        yield runtime


def _cache_entries() -> tuple[Counter, Counter]:
    """st.cache_data entries per cached function: (process-wide, session-scoped)."""
    from streamlit.runtime.caching import cache_data_api

    shared, per_session = Counter(), Counter()
    registry = cache_data_api._data_caches  # no public per-entry view exists
    with registry._caches_lock:
        scoped = [(sid, c) for sid, caches in registry._function_caches.items() for c in caches.values()]
    for session_id, cache in scoped:
        for family in cache.get_stats().values():
            for stat in family:
                (shared if session_id is None else per_session)[stat.cache_name] += 1
    return shared, per_session


def _session(idx: int, page, barrier: threading.Barrier, out: dict) -> None:
    rec = {"page": page.name, "latencies": [], "errors": [], "states": set()}
    out[idx] = rec
    at = None
    try:
        at = open_page(page, timeout=120)
        if at.exception:
            rec["errors"].append(f"open: {[e.value for e in at.exception]}")
    except Exception as exc:  # reported as a session error
        rec["errors"].append(f"open: {type(exc).__name__}: {exc}")
    try:
        barrier.wait(timeout=300)  # every session is open: now they all move sliders at once
    except threading.BrokenBarrierError:
        rec["errors"].append("barrier broken (another session did not open in time)")
        return
    if rec["errors"]:
        return
    try:
        direction = 1
        for _ in range(RERUNS_PER_SESSION):
            knob = main_slider(at)
            moved = False
            if knob is not None:
                moved = move_slider(knob)
                rec["states"].add((page.name, str(knob.value)))
            t0 = time.perf_counter()
            at.run()
            rec["latencies"].append(time.perf_counter() - t0)
            if at.exception:
                rec["errors"].append(f"rerun: {[e.value for e in at.exception][:2]}")
                return
            if not moved:
                direction = -direction
    except Exception as exc:  # reported as a session error
        rec["errors"].append(f"{type(exc).__name__}: {exc}")


@pytest.mark.slow
def test_twenty_concurrent_sessions(shared_runtime):
    import streamlit as st

    pages = discover_pages()
    st.cache_data.clear()  # start cold, as a fresh server does (earlier tests share this process)
    before, _ = _cache_entries()
    out: dict[int, dict] = {}
    barrier = threading.Barrier(N_SESSIONS)
    threads = [
        threading.Thread(target=_session, args=(i, pages[i % len(pages)], barrier, out), daemon=True)
        for i in range(N_SESSIONS)
    ]
    t_start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    wall = time.perf_counter() - t_start
    assert not any(t.is_alive() for t in threads), "a session hung"

    errors = {i: r["errors"] for i, r in out.items() if r["errors"]}
    assert len(out) == N_SESSIONS
    assert not errors, f"sessions with errors: {errors}"
    lat = np.array([x for r in out.values() for x in r["latencies"]])
    assert lat.size == N_SESSIONS * RERUNS_PER_SESSION, "sessions did not get to rerun"

    # Caches are shared: per cached function, the number of entries is bounded by the number of
    # distinct states visited, never by the number of sessions.
    after, per_session = _cache_entries()
    assert not per_session, f"session-scoped caches (duplicated per user): {dict(per_session)}"
    states = set().union(*(r["states"] for r in out.values()))
    grown = {name: after[name] - before.get(name, 0) for name in after}
    assert grown, "no st.cache_data entry was created (the sidebar's dataset loader is cached)"
    limit = len(states) + len(pages) + 2
    too_many = {name: n for name, n in grown.items() if n > limit}
    assert not too_many, (
        f"cache entries grow with sessions (limit {limit} for {len(states)} distinct states): {too_many}"
    )
    data_loaders = {
        name: n for name, n in grown.items() if "sidebar" in name or "_synthetic" in name or "_lognormal" in name
    }
    assert all(n <= 1 for n in data_loaders.values()), f"the default dataset is cached per session: {data_loaders}"

    per_page = {}
    for r in out.values():
        per_page.setdefault(r["page"], []).extend(r["latencies"])
    lines = [
        f"{N_SESSIONS} concurrent AppTest sessions, {RERUNS_PER_SESSION} slider moves each after all opened, "
        f"wall {wall:.1f} s; {lat.size} reruns",
        f"all pages: p50 {np.percentile(lat, 50):.3f} s, p95 {np.percentile(lat, 95):.3f} s, worst {lat.max():.3f} s",
        f"cache entries added per function: {dict(grown)}",
    ]
    for name, xs in sorted(per_page.items()):
        xs = np.array(xs)
        lines.append(
            f"  {name:<12} n={xs.size:4d}  p50 {np.median(xs):.3f} s  p95 {np.percentile(xs, 95):.3f} s  "
            f"worst {xs.max():.3f} s"
        )
    report = "\n".join(lines)
    print("\n" + report)
    (REPO_ROOT / "artifacts").mkdir(exist_ok=True)
    (REPO_ROOT / "artifacts" / "load_test.txt").write_text(report + "\n", encoding="utf-8")
