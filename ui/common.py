"""Small helpers every page uses: safe execution, shared state, URL-backed widgets.

Pages stay thin: widgets -> one dpcore view call -> ui renderers and ui.<page>.plots figures. Anything
heavy is cached with ``st.cache_data`` in the page module (keyed by parameters).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import streamlit as st
from streamlit.runtime.caching.cache_errors import UnhashableParamError

from dpcore.lru import BoundedCache
from ui import chart_text as chart_text_lib
from ui.notices import main_notice, open_notice_area  # noqa: F401 - re-exported for the pages and tests

DEFAULT_SEED = 2026
#: The largest seed the sidebar's number inputs take.
SEED_MAX = 2**31 - 1


#: A focus ring on links and disclosure buttons (WCAG 2.4.7, focus visible): Streamlit marks a focused page link
#: or sidebar link only by a background of 15% grey (1.05:1 against white, invisible on a projector), while its
#: buttons and fields get a ring of the theme's primary colour; this gives links the same colour as an outline
#: (#c53948: 5.2:1 on white, 4.9:1 on the sidebar). ``:focus-visible`` only: no ring after a mouse click.
FOCUS_STYLE = (
    "<style>a:focus-visible, summary:focus-visible "
    "{outline: 2px solid #c53948 !important; outline-offset: 2px; border-radius: 0.25rem}</style>"
)


#: The label of a disabled control ("δ (Gaussian only)" on the ratios page, off while Laplace is chosen) in a grey of
#: 5.4:1 on white and 4.9:1 on the sidebar, where Streamlit draws it in the text colour at 40% (2.7:1). WCAG 1.4.3
#: exempts inactive controls, but the label is what tells the reader why the control is off; axe-core counts it as a
#: contrast violation whenever it can see the label's background (after the page scrolls, e.g.).
DISABLED_LABEL_COLOR = "#6b6a68"
DISABLED_LABEL_STYLE = f'<style>[data-testid="stWidgetLabel"][disabled] p {{color: {DISABLED_LABEL_COLOR}}}</style>'


def focus_styles() -> None:
    """Draw :data:`FOCUS_STYLE` and :data:`DISABLED_LABEL_STYLE` (one ``st.html`` of style elements only: Streamlit
    applies it to the whole page and gives it no space). app.py calls it once per run."""
    st.html(FOCUS_STYLE + DISABLED_LABEL_STYLE)


#: Two keyboard fixes for what Streamlit draws, installed once per browser tab (the flag), however often the element
#: is drawn:
#: * WCAG 2.1.4 (character key shortcuts): Streamlit reruns the page when "r" alone is pressed outside a text field
#:   (a developer's shortcut, on for every viewer and without a setting), so a speech-input user or a stray key press
#:   reruns the page. A listener on the document, in the capture phase, stops a plain "r" before Streamlit's handler
#:   sees it (Streamlit's own dialogs do the same); fields still take the letter.
#: * WCAG 2.1.1 (keyboard): a table (``st.table``) wider than its column, e.g. the planner's on a 390 px phone,
#:   scrolls sideways in a box that takes no focus, so no keyboard can scroll it (axe-core's
#:   scrollable-region-focusable). Streamlit makes the box focusable only for a table of pixel width, which stops
#:   its cells from wrapping (wide tables then scroll on a desktop too). Each table box that overflows gets
#:   tabindex 0, role "region" and a name, as Streamlit gives its pixel-width tables; checked once per animation
#:   frame after the page changed or the window was resized.
KEYBOARD_FIXES = """<script>(() => {
    if (window.__dpKeyboardFixes) return;
    window.__dpKeyboardFixes = true;
    document.addEventListener('keydown', (event) => {
        if (!event.key || event.key.toLowerCase() !== 'r' || event.ctrlKey || event.metaKey || event.altKey) return;
        const target = event.target;
        if (target && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))) return;
        event.stopImmediatePropagation();
    }, true);
    const focusScrollingTables = () => {
        for (const box of document.querySelectorAll('[data-testid="stTable"] > div')) {
            if (box.hasAttribute('tabindex')) continue;
            if (box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1) {
                const table = box.querySelector('table');
                box.tabIndex = 0;
                box.setAttribute('role', 'region');
                box.setAttribute('aria-label', (table && table.getAttribute('aria-label')) || 'Scrollable table');
            }
        }
    };
    let queued = false;
    const queue = () => {
        if (queued) return;
        queued = true;
        requestAnimationFrame(() => { queued = false; focusScrollingTables(); });
    };
    new MutationObserver(queue).observe(document.body, {childList: true, subtree: true});
    window.addEventListener('resize', queue);
    queue();
})();</script>"""


def keyboard_fixes() -> None:
    """Draw :data:`KEYBOARD_FIXES`. app.py draws it last in the main area (its empty element adds its gap at the very
    bottom); the frontend keeps an unchanged element in place and does not run its script again."""
    st.html(KEYBOARD_FIXES, unsafe_allow_javascript=True)


@contextlib.contextmanager
def guard(what: str = "this view") -> Iterator[None]:
    """Run a block; turn a dpcore ValueError/TypeError into a clear ``st.error`` (never a traceback)."""
    try:
        yield
    except (ValueError, TypeError) as exc:  # DPInputError is a ValueError
        st.error(f"Cannot compute {what}: {exc}")
    except MemoryError:
        st.error(f"Cannot compute {what}: not enough memory; use a smaller sample.")


def seed() -> int:
    """The random seed chosen in the sidebar (shown to the user, so a view can be replayed). A page drawn
    before the sidebar (app.py's DATA_FREE_PAGES) gets the seed the sidebar kept (see ``persistent``
    below), or on a session's first run the one the sidebar is about to take from the link (made allowed
    as the sidebar's number input does; the sidebar says so), so a shared link replays the same draws."""
    if "seed" in st.session_state:
        return int(st.session_state["seed"])
    kept = st.session_state.get(PERSISTENT_VALUES, {})
    if "seed" in kept:
        return int(kept["seed"])
    raw = st.query_params.get("seed")
    if raw is None:
        return DEFAULT_SEED
    value, _ = _number_from_link("Random seed", raw, whole=True, default=DEFAULT_SEED, min_value=0, max_value=SEED_MAX)
    return int(value)


def rng(offset: int = 0) -> np.random.Generator:
    """A fresh generator from the sidebar seed (+ offset, so two draws on one page differ)."""
    return np.random.default_rng(seed() + offset)


# ---------------------------------------------------------------------------------------------
# Widgets whose values live in st.query_params, so that a URL reproduces a view.
#
# A value a link asks for that the widget cannot show (out of range, not one of the choices, not a
# number) is never replaced silently: the widget takes the nearest allowed value (or its default when
# there is no nearest one) and the main area says what the link asked for and what is used instead.
#
# ``persistent=True`` (the sidebar's data recipe and seed): the value is kept in one place,
# st.session_state[PERSISTENT_VALUES], and the widget is given it on every run. Streamlit forgets a
# widget's value when a run does not draw the widget (its widget cleanup), and the browser shows a
# keyed widget's own default, not the server's value, when the widget was never mounted there (the
# landing page keeps these widgets in closed popovers) or is mounted anew on another page: the server
# then computed with n = 10,000 while the sidebar showed n = 100, and the next click sent 100 back.
# A value assigned through st.session_state before the widget is drawn is sent with the widget, so
# the browser always shows (and sends back) the value the server uses.
# ---------------------------------------------------------------------------------------------

#: Session-state dict {widget key: value} of the persistent widgets (the single source of truth).
PERSISTENT_VALUES = "_qp_persistent_values"
#: Session-state dict {widget key: value} of every other URL-backed widget: the value it showed last, which it
#: starts from again when its page is shown anew without a link naming it (the sidebar's page links carry no
#: query, and Streamlit forgets a widget that a run did not draw): a page keeps its own ε across a visit elsewhere.
PAGE_VALUES = "_qp_page_values"


def _shown(value: Any, format_func: Callable[[Any], Any] | None = None) -> str:
    if format_func is not None:
        return str(format_func(value))
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:,}" if isinstance(value, int) else f"{value:,.6g}"
    return str(value)


def _link_asked(label: str, raw: str) -> str:
    return f"The link asked for “{label}” = {raw[:60]}"


def _number_from_link(
    label: str, raw: str, *, whole: bool, default: Any, min_value: Any, max_value: Any
) -> tuple[Any, str | None]:
    """A number typed in a link, parsed and clamped to [min_value, max_value] (None: no bound)."""
    asked = _link_asked(label, raw)
    try:
        number = float(raw)
    except (TypeError, ValueError):
        number = float("nan")
    if number != number:  # not a number (or NaN)
        return default, f"{asked}, which is not a number; {_shown(default)} (the default) is used instead."
    if number in (float("inf"), float("-inf")) and (max_value if number > 0 else min_value) is None:
        return default, f"{asked}, which is not a finite number; {_shown(default)} (the default) is used instead."
    note = None
    if max_value is not None and number > max_value:
        number, note = max_value, f"{asked}; the largest allowed is {_shown(max_value)}, used instead."
    elif min_value is not None and number < min_value:
        number, note = min_value, f"{asked}; the smallest allowed is {_shown(min_value)}, used instead."
    if whole:
        if number != int(number):
            rounded = int(round(number))
            return rounded, f"{asked}, which is not a whole number; {_shown(rounded)} is used instead."
        return int(number), note
    return float(number), note


def _choice_from_link(
    label: str, raw: str, options: Sequence[Any], default: Any, format_func: Callable[[Any], Any] | None = None
) -> tuple[Any, str | None]:
    """An option named in a link (matched by its text); otherwise the nearest option when the options
    are numbers, else the default, with a notice."""
    by_text = {str(o): o for o in options}
    if raw in by_text:
        return by_text[raw], None
    asked = _link_asked(label, raw)
    numeric = [o for o in options if isinstance(o, (int, float)) and not isinstance(o, bool)]
    try:
        number = float(raw)
    except (TypeError, ValueError):
        number = float("nan")
    if numeric and number == number:
        nearest = min(numeric, key=lambda o: abs(o - number))
        shown = _shown(nearest, format_func)
        if number > max(numeric):
            return nearest, f"{asked}; the largest allowed is {shown}, used instead."
        if number < min(numeric):
            return nearest, f"{asked}; the smallest allowed is {shown}, used instead."
        if number == nearest:  # "1" for the option 1.0
            return nearest, None
        return nearest, f"{asked}, which is not one of the choices; the nearest, {shown}, is used instead."
    return default, (
        f"{asked}, which is not one of the choices; {_shown(default, format_func)} (the default) is used instead."
    )


def _start_value(
    key: str,
    from_link: Callable[[str], tuple[Any, str | None]],
    default: Any,
    *,
    persistent: bool,
    valid: Callable[[Any], bool],
) -> bool:
    """Put the value the widget ``key`` starts this run with in st.session_state[key]; True when it was
    assigned in this run (the widget must then be drawn without a default value of its own).

    Order: the value the widget already holds in this session; for a persistent widget the value it
    showed last (kept when a page did not draw it); else the link's value (made allowed, with a notice);
    else, for a page's widget, the value it showed on this page's last visit (:data:`PAGE_VALUES`); else the
    default."""
    state = st.session_state
    if key in state and not persistent:
        return False
    kept = state.get(PERSISTENT_VALUES, {})
    shown_before = state.get(PAGE_VALUES, {})
    raw = st.query_params.get(key)
    if key in state and valid(state[key]):
        value = state[key]
    elif key in kept and valid(kept[key]):
        value = kept[key]
    elif raw is None and not persistent and key in shown_before and valid(shown_before[key]):
        value = shown_before[key]
    else:
        value, notice = (default, None) if raw is None else from_link(raw)
        if notice:
            main_notice(notice)
    state[key] = value
    return True


def _same(value: Any, default: Any) -> bool:
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # values that do not compare (arrays)
        return False


def _kept(key: str, value: Any, persistent: bool, default: Any = None) -> None:
    """Keep the value the widget shows: a persistent widget's always; a page's widget's only when it is not its
    default (a widget left at its default follows the default, e.g. a field that starts from a plan)."""
    if persistent:
        st.session_state.setdefault(PERSISTENT_VALUES, {})[key] = value
    elif _same(value, default):
        st.session_state.get(PAGE_VALUES, {}).pop(key, None)
    else:
        st.session_state.setdefault(PAGE_VALUES, {})[key] = value


#: Session-state {"page": page id, "values": {key: text}}: every URL-backed setting of the page shown, defaults
#: included, for the share link (:func:`link_values`), which names every setting while the address bar does not.
LINK_VALUES = "_qp_link_values"


def _page_values() -> dict[str, str]:
    """This page's entry of :data:`LINK_VALUES` (emptied when another page is shown)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    page = ctx.page_script_hash if ctx is not None else ""
    kept = st.session_state.get(LINK_VALUES)
    if kept is None or kept["page"] != page:
        kept = st.session_state[LINK_VALUES] = {"page": page, "values": {}}
    return kept["values"]


def link_values() -> dict[str, str]:
    """Every URL-backed setting this page has drawn (its value as text, defaults included), for a share link."""
    return dict(_page_values())


def link_default(key: str, text: str) -> None:
    """The default of a setting drawn below the share link, named in the link until its widget is drawn."""
    _page_values().setdefault(key, text)


def write_url_value(key: str, text: str, *, is_default: bool) -> None:
    """Keep ``key=text`` in the URL. A default value (``is_default``) is not added to a URL that lacks the
    key: a link without a setting means its default, and a page visit whose first run changes the URL
    leaves the browser an extra history entry (ui.browser_history). The share link names it anyway
    (:func:`link_values`)."""
    _page_values()[key] = text
    current = st.query_params.get(key)
    if current == text or (current is None and is_default):
        return
    st.query_params[key] = text


def _remember(key: str, value: Any, default: Any) -> None:
    write_url_value(key, str(value), is_default=_same(value, default))


def qp_slider(
    label: str,
    key: str,
    min_value: float,
    max_value: float,
    value: float,
    step: float | None = None,
    *,
    container: Any = st,
    persistent: bool = False,
    **kwargs: Any,
) -> Any:
    """``st.slider`` whose value is read from / written to the URL query parameter ``key``."""
    is_int = all(isinstance(v, int) for v in (min_value, max_value, value)) and (step is None or isinstance(step, int))

    def from_link(raw: str) -> tuple[Any, str | None]:
        return _number_from_link(label, raw, whole=is_int, default=value, min_value=min_value, max_value=max_value)

    if _start_value(key, from_link, value, persistent=persistent, valid=lambda v: min_value <= v <= max_value):
        out = container.slider(label, min_value=min_value, max_value=max_value, step=step, key=key, **kwargs)
    else:
        # The session-state value is shown either way; passing a default spares Streamlit a scan of the
        # whole session state (filtered_state) that a keyed slider without one makes on every run.
        out = container.slider(
            label, min_value=min_value, max_value=max_value, value=value, step=step, key=key, **kwargs
        )
    _kept(key, out, persistent, value)
    _remember(key, out, value)
    return out


def qp_select_slider(
    label: str,
    key: str,
    options: Sequence[Any],
    value: Any,
    *,
    container: Any = st,
    persistent: bool = False,
    **kwargs: Any,
) -> Any:
    """``st.select_slider`` backed by the URL (options are matched by their text; a number between
    the options takes the nearest one)."""
    format_func = kwargs.get("format_func")
    _start_value(
        key,
        lambda raw: _choice_from_link(label, raw, options, value, format_func),
        value,
        persistent=persistent,
        valid=lambda v: v in options,
    )
    out = container.select_slider(label, options=list(options), key=key, **kwargs)
    _kept(key, out, persistent, value)
    _remember(key, out, value)
    return out


def _qp_choice(
    widget: Callable[..., Any],
    label: str,
    key: str,
    options: Sequence[Any],
    value: Any | None,
    persistent: bool,
    **kwargs: Any,
) -> Any:
    default = options[0] if value is None else value
    format_func = kwargs.get("format_func")
    _start_value(
        key,
        lambda raw: _choice_from_link(label, raw, options, default, format_func),
        default,
        persistent=persistent,
        valid=lambda v: v in options,
    )
    out = widget(label, options=list(options), key=key, **kwargs)
    _kept(key, out, persistent, default)
    _remember(key, out, default)
    return out


def qp_selectbox(
    label: str,
    key: str,
    options: Sequence[Any],
    value: Any | None = None,
    *,
    container: Any = st,
    persistent: bool = False,
    **kwargs: Any,
) -> Any:
    """``st.selectbox`` backed by the URL (options matched by their text)."""
    return _qp_choice(container.selectbox, label, key, options, value, persistent, **kwargs)


def qp_radio(
    label: str,
    key: str,
    options: Sequence[Any],
    value: Any | None = None,
    *,
    container: Any = st,
    persistent: bool = False,
    **kwargs: Any,
) -> Any:
    """``st.radio`` backed by the URL (options matched by their text)."""
    return _qp_choice(container.radio, label, key, options, value, persistent, **kwargs)


def qp_number(
    label: str,
    key: str,
    value: float,
    *,
    min_value: float | None = None,
    max_value: float | None = None,
    container: Any = st,
    persistent: bool = False,
    **kwargs: Any,
) -> Any:
    """``st.number_input`` backed by the URL."""
    whole = isinstance(value, int) and not isinstance(value, bool)

    def valid(v: Any) -> bool:
        return (min_value is None or v >= min_value) and (max_value is None or v <= max_value)

    def from_link(raw: str) -> tuple[Any, str | None]:
        return _number_from_link(label, raw, whole=whole, default=value, min_value=min_value, max_value=max_value)

    _start_value(key, from_link, value, persistent=persistent, valid=valid)
    out = container.number_input(label, min_value=min_value, max_value=max_value, key=key, **kwargs)
    _kept(key, out, persistent, value)
    _remember(key, out, value)
    return out


_TOGGLE_TEXT = {"1": True, "true": True, "True": True, "0": False, "false": False, "False": False}


def qp_toggle(
    label: str, key: str, value: bool = False, *, container: Any = st, persistent: bool = False, **kwargs: Any
) -> bool:
    """``st.toggle`` backed by the URL ("1"/"0")."""

    def from_link(raw: str) -> tuple[bool, str | None]:
        if raw in _TOGGLE_TEXT:
            return _TOGGLE_TEXT[raw], None
        return value, (
            f"{_link_asked(label, raw)}, which is neither on (1) nor off (0); "
            f"{'on' if value else 'off'} (the default) is used instead."
        )

    _start_value(key, from_link, value, persistent=persistent, valid=lambda v: isinstance(v, bool))
    out = container.toggle(label, key=key, **kwargs)
    _kept(key, bool(out), persistent, bool(value))
    write_url_value(key, "1" if out else "0", is_default=bool(out) == bool(value))
    return bool(out)


def privacy_note(neighbouring: str, public: str) -> None:
    """The standard caption every method page shows: neighbouring relation and what is public."""
    st.caption(f"**Neighbouring datasets:** {neighbouring}  \n**Public (not protected):** {public}")


_DOWNLOAD_MARK = "_download_mark"


def _page_hash() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return None if ctx is None else str(ctx.page_script_hash)


def mark_downloads(mark: str | None) -> None:
    """Mark every download this page draws from now on (this run and its fragments' reruns) with ``mark``:
    "confidential" when the page computes on a confidential upload's records, None otherwise. The mark is kept
    with the page it was set on, so another page's downloads are never marked by it."""
    st.session_state[_DOWNLOAD_MARK] = (_page_hash(), mark)


def marked_download(label: str, file_name: str) -> tuple[str, str]:
    """(label, file name) of a download, with this page's mark (:func:`mark_downloads`): the file name starts with
    it and the button says it, so a confidential file is never saved under a name that looks publishable."""
    kept = st.session_state.get(_DOWNLOAD_MARK)
    mark = kept[1] if kept and kept[0] == _page_hash() else None
    if not mark:
        return label, file_name
    return f"{label} — {mark.upper()}", f"{mark}_{file_name}"


def download_csv(frame: Any, label: str, file_name: str, key: str | None = None) -> None:
    """A download button for a chart's data (pandas DataFrame) as CSV, marked as the page's data are
    (:func:`marked_download`).

    The CSV is made when the button is clicked (Streamlit's deferred download), not on every rerun:
    a page with six charts no longer encodes six CSV files per slider move. ``frame`` may also
    be a function returning the DataFrame, so that even the frame is built only on a click."""

    def data() -> bytes:
        return (frame() if callable(frame) else frame).to_csv(index=False).encode("utf-8")

    shown, name = marked_download(label, file_name)
    st.download_button(shown, data, file_name=name, mime="text/csv", key=key or f"dl-{file_name}")


# ---------------------------------------------------------------------------------------------
# Shared display helpers (used by the thin page scripts in app_pages/)
# ---------------------------------------------------------------------------------------------


def run_on_button(
    label: str, key: str, compute: Callable[[], Any], *, what: str, state_key: str | None = None, **button_kwargs: Any
) -> Any:
    """A button that runs ``compute()`` (inside :func:`guard`) and keeps its result in the session.

    Returns the last stored result (None until the button was pressed once and succeeded). The result
    lives in ``st.session_state[state_key]`` (default ``f"{key}_result"``), so it survives reruns
    caused by other widgets.
    """
    state_key = state_key or f"{key}_result"
    if st.button(label, key=key, **button_kwargs):
        with guard(what):
            st.session_state[state_key] = compute()
    return st.session_state.get(state_key)


def numbers_table(numbers: dict[str, float], file_name: str, *, key: str) -> None:
    """A view's numbers at full precision (quantity, value) plus a CSV download of the same table."""
    import pandas as pd

    table = pd.DataFrame({"quantity": list(numbers), "value": [float(v) for v in numbers.values()]})
    st.dataframe(table, hide_index=True, column_config={"value": st.column_config.NumberColumn(format="plain")})
    download_csv(table, "Download these numbers (CSV)", file_name, key=key)


# ---------------------------------------------------------------------------------------------
# Less work per rerun when a class uses one server
# ---------------------------------------------------------------------------------------------


def use_fast_plotly_json() -> bool:
    """Serialise plotly figures with ``orjson`` (st.plotly_chart calls ``plotly.io.to_json``, which uses
    plotly's default JSON engine): ~20x faster than the ``json`` engine on numeric arrays, same output
    (NaN/inf become null either way). Returns False, changing nothing, when orjson is missing."""
    try:
        import orjson  # noqa: F401
        import plotly.io as pio
    except ImportError:
        return False
    pio.json.config.default_engine = "orjson"
    return True


use_fast_plotly_json()


def _prebuilt_figure(spec: dict) -> Any:
    """A plotly ``BaseFigure`` whose ``to_dict()`` returns ``spec`` as is (no validation, no copy).

    ``st.plotly_chart`` rebuilds and re-validates any dict it is given (``go.Figure(**spec)``, ~10 ms)
    and deep-copies any Figure (``to_dict``); a cached, already validated spec needs neither.
    """
    return _prebuilt_class()(spec)


@functools.lru_cache(maxsize=1)
def _prebuilt_class() -> type:
    from plotly.basedatatypes import BaseFigure

    class _Prebuilt(BaseFigure):
        def __init__(self, spec: dict) -> None:  # deliberately skips BaseFigure.__init__
            self._prebuilt_spec = spec

        def to_dict(self) -> dict:
            return self._prebuilt_spec

    return _Prebuilt


@st.cache_resource(show_spinner=False, max_entries=512)
def _cached_figure_spec(builder_name: str, _builder: Callable[..., Any], args: tuple, kwargs: dict) -> dict:
    # Shared by every session of this process (read-only: nothing mutates the spec after this).
    return _builder(*args, **kwargs).to_dict()


@st.cache_resource(show_spinner=False, max_entries=512)
def _keyed_figure_spec(
    builder_name: str, cache_key: Any, _builder: Callable[..., Any], _args: tuple, _kwargs: dict
) -> dict:
    return _builder(*_args, **_kwargs).to_dict()


def cached_figure(
    builder: Callable[..., Any],
    *args: Any,
    chart: dict | None = None,
    container: Any = st,
    cache_key: Any = None,
    **kwargs: Any,
) -> Any:
    """Show ``builder(*args, **kwargs)`` (a plotly figure builder from a ``ui.<page>.plots`` module) with
    ``st.plotly_chart``, building the figure once per distinct input in this process.

    The validated figure spec is cached (``st.cache_resource``, keyed by the builder's name and the
    hashed arguments, 512 entries), so a rerun whose inputs did not change — or another user on the
    same settings — skips plotly's figure construction and validation; serialisation uses orjson.
    Hashing large DataFrames/arrays can cost more than building the figure: pass ``cache_key`` (small,
    hashable: the page inputs the figure depends on, e.g. ``(dataset_key, epsilon, seed)``) and the
    arguments are then not hashed at all — the key must determine them.
    ``chart`` holds ``st.plotly_chart`` options (default ``{"width": "stretch"}``). A builder that
    raises ``ValueError`` raises it here (wrap in :func:`guard`).
    """
    name = f"{getattr(builder, '__module__', '')}.{getattr(builder, '__qualname__', repr(builder))}"
    if cache_key is None:
        spec = _cached_figure_spec(name, builder, tuple(args), dict(kwargs))
    else:
        spec = _keyed_figure_spec(name, cache_key, builder, tuple(args), dict(kwargs))
    options = {"width": "stretch"}
    options.update(chart or {})
    return _chart_with_text(spec, container, options)


def _frame_token(frame: Any) -> tuple:
    """What identifies a DataFrame's content, fast: Streamlit's default hash of a frame
    (``pandas.util.hash_pandas_object``) costs more than building a small figure from it."""

    def column_token(values: Any) -> Any:
        values = np.asarray(values)
        return values.tobytes() if values.dtype.kind in "biufcmM" else tuple(map(str, values.tolist()))

    return (
        tuple(map(str, frame.columns)),
        tuple(map(str, frame.dtypes)),
        frame.shape,
        column_token(frame.index),
        *(column_token(frame[column].to_numpy()) for column in frame.columns),
    )


@st.cache_resource(show_spinner=False, max_entries=512, hash_funcs={"pandas.core.frame.DataFrame": _frame_token})
def _cached_figure_object(builder_name: str, _builder: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    return _builder(*args, **kwargs)


class CachedBuilders:
    """A figure-builder module (``ui.<page>.plots``) whose builders remember their figures per input.

    ``plots = CachedBuilders(plots_gini)``; ``plots.releases_figure(...)`` returns the same ``go.Figure``
    object for the same (hashed) arguments in this process, shared by every session (built once, then
    free), and :func:`show_figure` keeps that object's spec, so a rerun on seen settings neither builds
    nor copies the figure. The figures are shared: never change one after it is returned. Attributes
    that are not callables (constants such as colours) are passed through; so are names in ``uncached``.
    """

    def __init__(self, module: Any, *, uncached: Sequence[str] = ()) -> None:
        self._module = module
        self._uncached = frozenset(uncached)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        if not callable(value) or name in self._uncached or isinstance(value, type):
            return value
        qualified = f"{self._module.__name__}.{name}"

        def cached(*args: Any, **kwargs: Any) -> Any:
            try:
                return _cached_figure_object(qualified, value, tuple(args), dict(kwargs))
            except UnhashableParamError:  # an argument Streamlit cannot hash: build it every time
                return value(*args, **kwargs)

        cached.__name__ = name
        cached.__doc__ = value.__doc__
        return cached


def show_figure(fig: Any, *, container: Any = st, **options: Any) -> Any:
    """``st.plotly_chart(fig)`` for a memoised ``go.Figure`` that is shown again and again: its spec
    (``fig.to_dict()``, a deep copy) is made on the first call and kept on the figure, so later calls
    skip the copy. Only for figures that are not changed after they were first shown. A plain dict
    specification (``{"data": [...], "layout": {...}}``, as ``ui.gini.plots`` builds) is sent as is."""
    options.setdefault("width", "stretch")
    if isinstance(fig, dict):
        return _chart_with_text(fig, container, options)
    spec = getattr(fig, "_dp_shown_spec", None)
    if spec is None:
        spec = fig.to_dict()
        fig._dp_shown_spec = spec  # noqa: SLF001 - kept on the figure itself: one memo that dies with it
    return _chart_with_text(spec, container, options)


def show_spec(spec: dict, *, container: Any = st, **options: Any) -> Any:
    """``st.plotly_chart`` of a figure spec that is already plain, valid data (e.g. a ``ui.<page>.plots``
    ``*_spec`` builder, equal to a ``go.Figure``'s ``to_dict()``): neither validated nor copied again."""
    options.setdefault("width", "stretch")
    return _chart_with_text(spec, container, options)


#: Axis labels, titles and other chart text at WCAG's 4.5:1 contrast (1.4.3): Streamlit's chart theme draws them in a
#: fixed grey, #808495 (3.5:1 on white), which the theme's settings do not change; a colour set in the figure wins
#: over the theme's. This is the app's secondary text colour (the theme's text colour at 60% on white), 5.1:1.
CHART_AXIS_TEXT_COLOR = "#6e6e6d"


def readable_axes(spec: dict) -> dict:
    """``spec`` with its text (the figure's font, its axes' tick labels and titles) in :data:`CHART_AXIS_TEXT_COLOR`
    where the figure sets no colour of its own: a new top-level dict and new axis dicts (the cached spec is shared: never changed)."""
    layout = dict(spec.get("layout") or {})
    layout["font"] = {"color": CHART_AXIS_TEXT_COLOR, **(layout.get("font") or {})}  # annotations, point labels
    axes = dict.fromkeys(["xaxis", "yaxis", *(name for name in layout if name.startswith(("xaxis", "yaxis")))])
    for name in axes:
        axis = dict(layout.get(name) or {})
        axis["tickfont"] = {"color": CHART_AXIS_TEXT_COLOR, **(axis.get("tickfont") or {})}
        title = axis.get("title")
        title = {"text": title} if isinstance(title, str) else dict(title or {})
        title["font"] = {"color": CHART_AXIS_TEXT_COLOR, **(title.get("font") or {})}
        axis["title"] = title
        layout[name] = axis
    return {**spec, "layout": layout}


def _chart_with_text(spec: dict, container: Any, options: dict) -> Any:
    """``st.plotly_chart`` of ``spec`` (axis texts made readable: :func:`readable_axes`) followed by its text
    alternative (``ui.chart_text``: a sentence for screen readers and the chart's data as a table, WCAG 1.1.1);
    returns the chart's element."""
    shown = container.plotly_chart(_prebuilt_figure(readable_axes(spec)), **options)
    kept = _CHART_TEXT_HTML.get_or_build(id(spec), lambda: (spec, _chart_text_html(spec)))
    container.html(kept[1] if kept[0] is spec else _chart_text_html(spec))
    return shown


#: The text alternative of each figure spec shown lately, by the spec's identity: the pages show cached specs (the
#: same object for the same settings), and a long curve's text costs milliseconds (measured 5 ms for the Gini page's
#: posterior) on every rerun otherwise. The entry holds its spec, so an id is not reused while it is kept.
_CHART_TEXT_HTML = BoundedCache(128)


def _chart_text_html(spec: dict) -> str:
    return chart_text_lib.chart_text_html(chart_text_lib.chart_text(spec))


def show_chart_text(text: chart_text_lib.ChartText, *, container: Any = st) -> None:
    """The text alternative of a chart just shown (a plotly chart, an SVG image): ``ui.chart_text``."""
    container.html(chart_text_lib.chart_text_html(text))


_FROZEN_AT_MODULE_COUNT = 0


def freeze_long_lived_objects() -> bool:
    """``gc.freeze()`` whenever modules were imported since the last call.

    With Streamlit's post-run ``gc.collect`` switched off (``.streamlit/config.toml``), Python's own
    collector still runs full (generation 2) collections now and then, and each walked every object
    of numpy/pandas/scipy/plotly/streamlit: ~270 ms, holding the GIL (4 of them in 60 Gini reruns).
    Objects that exist once a page's imports are done live as long as the process, so they are moved to
    the permanent generation, which collections skip. Called at the end of every run (app.py); it only
    acts after a run that imported something, i.e. a handful of times per process.
    """
    global _FROZEN_AT_MODULE_COUNT
    count = len(sys.modules)
    if count == _FROZEN_AT_MODULE_COUNT:
        return False
    _FROZEN_AT_MODULE_COUNT = count
    gc.freeze()
    return True
