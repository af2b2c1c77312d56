"""The Gini page's live view is an st.fragment, checked on a real `run.sh app` server with the
benchmark's browser-like WebSocket client (benchmarks/bench_load.py): an ε move reruns the fragment only
(the paper experiments' section is not sent again), and a change of one of that section's inputs inside
the fragment (γ) redraws the whole page once, with no exception either way. No timing assertions.
The client sends what a browser sends with each rerun, including the page's script hash (a full rerun
requested by st.rerun() inside a fragment run keeps the page only with it)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_load import Session, Slider, start_server
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from support import outside_event_loop

from ui.gini.sections import PAPER


def _section_6(element: tuple[str, str, str]) -> bool:
    """The paper section's heading (its controls are drawn only when its expander is opened: ui.lazy)."""
    return element[0] == "markdown" and element[1].startswith(f"## {PAPER.heading}")


async def _run(session: Session, fragment_id: str = "") -> tuple[list[tuple[str, str, str]], int]:
    """Send one rerun (the session's widget states) and read until the app is idle again: a fragment run
    that ends in st.rerun() is followed by a full run. Returns (element type, label or text, fragment id)
    per new element, and the number of full runs seen; the sliders drawn are left in ``session.last_sliders``."""
    await session.conn.send(_rerun_message(session, fragment_id))
    elements: list[tuple[str, str, str]] = []
    sliders: list[Slider] = []
    full_run_ids: set[str] = set()
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        fm = ForwardMsg()
        fm.ParseFromString(await asyncio.wait_for(session.conn.recv(), timeout=240))
        if fm.WhichOneof("type") == "ref_hash":
            cached = ForwardMsg()
            cached.CopyFrom(session.cache[fm.ref_hash])
            fm = cached
        elif fm.metadata.cacheable and fm.hash:
            session.cache[fm.hash] = fm
        kind = fm.WhichOneof("type")
        if kind == "page_info_changed":
            session.query_string = fm.page_info_changed.query_string
        if kind == "navigation":  # the page in view: a browser sends its hash back with each rerun
            session.page_script_hash = fm.navigation.page_script_hash
        if kind == "new_session":
            if not fm.metadata.run.fragment_ids:  # the start of a full-app run
                full_run_ids.add(fm.metadata.run.script_run_id)
        if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
            element = fm.delta.new_element
            etype = element.WhichOneof("type")
            body = getattr(element, etype)
            text = getattr(body, "label", "") or getattr(body, "body", "")
            elements.append((etype, str(text), fm.delta.fragment_id))
            if etype == "slider":
                sliders.append(
                    Slider(
                        body.id,
                        body.label,
                        True,
                        body.min,
                        body.max,
                        body.step,
                        list(body.options),
                        fm.delta.fragment_id,
                    )
                )
        elif kind == "script_finished" and fm.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            session.last_sliders = sliders
            return elements, len(full_run_ids)
    raise AssertionError("the server did not finish the run")


def _rerun_message(session: Session, fragment_id: str) -> bytes:
    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = BackMsg()
    rs = msg.rerun_script
    rs.page_name = session.page
    rs.page_script_hash = getattr(session, "page_script_hash", "")
    rs.query_string = session.query_string
    rs.context_info.timezone = "UTC"
    rs.context_info.locale = "en-US"
    rs.context_info.url = f"{session.http_base}/{session.page}"
    if fragment_id:
        rs.fragment_id = fragment_id
    for state in session.states.values():
        rs.widget_states.widgets.add().CopyFrom(state)
    rs.cached_message_hashes.extend(session.cache.keys())
    return msg.SerializeToString()


async def _scenario(base: str) -> None:
    session = Session(base, base.replace("http", "ws", 1) + "/_stcore/stream", "gini")
    await session.open()
    try:
        # first load: a full run; the ε slider lives in the live view's fragment
        elements, _ = await _run(session)
        assert not [e for e in elements if e[0] == "exception"], elements
        assert any(_section_6(e) for e in elements)
        sliders = session.last_sliders
        eps = next(s for s in sliders if s.label.startswith("Privacy loss ε"))
        gamma = next(s for s in sliders if s.label.startswith("Noise tail γ"))
        assert eps.fragment_id and gamma.fragment_id == eps.fragment_id

        # an ε move reruns the fragment only: the answer is redrawn, the paper section is not sent again
        session.states[eps.widget_id] = _choice(eps, "0.5")
        elements, full_runs = await _run(session, eps.fragment_id)
        assert full_runs == 0
        assert not [e for e in elements if e[0] == "exception"], elements
        assert any(e[0] == "alert" and "At ε = 0.5 the published Gini" in e[1] for e in elements)
        assert not any(_section_6(e) for e in elements)

        # γ also drives the paper section (outside the fragment): the fragment run asks for one full rerun
        session.states[gamma.widget_id] = _choice(gamma, "4.0")
        elements, full_runs = await _run(session, gamma.fragment_id)
        assert full_runs == 1
        assert not [e for e in elements if e[0] == "exception"], elements
        assert any(_section_6(e) for e in elements)
        assert any(e[0] == "heading" and e[1] == "Gini index with differential privacy" for e in elements)  # same page
    finally:
        await session.close()


def _choice(slider, option: str):
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    state = WidgetState(id=slider.widget_id)
    assert option in slider.options, (option, slider.options)
    state.string_array_value.data.append(option)
    return state


def test_epsilon_moves_rerun_the_fragment_and_section_6_follows_its_inputs():
    with start_server("app") as server:
        outside_event_loop(
            asyncio.run, _scenario(server.url)
        )  # conftest's Chromium may hold the main thread's event loop
