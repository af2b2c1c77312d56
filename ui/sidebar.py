"""The shared sidebar: data source, random seed, and the planning-versus-release note.

Data sources (choice kept in the URL as ``data_source`` plus its parameters ``data_*``):

* synthetic generators from :mod:`dpcore.data` (log-normal; Pareto-tailed mixture with a chosen
  Gini; the two-point data of the Gini paper's Proposition 5.1), drawn with their own data seed
  so that moving the sidebar seed redraws the noise, not the data;
* the bundled real example (Engel 1857, public domain) that ships with the repository;
* the real survey files: ACS 2019 and PSEO always (``../shared/data``, else the copies bundled in
  ``dpcore/examples``), the CPS extract only when ``../shared/data`` is present;
* an uploaded CSV, Excel (.xlsx) or Parquet file, with a column choice (confirmed on screen; a
  change is announced; a column that looks like the income but cannot be read is never replaced
  silently) and a policy for negative incomes.
  The upload is parsed in memory (``st.cache_data`` keyed by a SHA-256 of the bytes, computed
  once per uploaded file), never written to disk, and marked confidential: the sidebar warns that
  planning on it is itself not private and offers a synthetic look-alike instead.

Every source except an upload is built by :func:`dpcore.data.build_dataset` from the recipe of its
key (:func:`dpcore.data.recipe_from_key`), the same call a generated script makes.

The chosen data are stored as ``st.session_state["dataset"]`` (a :class:`dpcore.data.IncomeData`);
pages read it with :func:`current_dataset`. A bad file or bad parameter shows ``st.error`` in the
sidebar and the default dataset is used, so the page keeps working.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import streamlit as st

from dpcore.data import SHARED_DATASETS, IncomeData, available_shared
from ui.common import (
    DEFAULT_SEED,
    SEED_MAX,
    main_notice,
    qp_number,
    qp_radio,
    qp_select_slider,
    qp_selectbox,
    qp_slider,
    qp_toggle,
)
from ui.common import seed as random_seed

if TYPE_CHECKING:  # pandas costs ~0.6 s on a cold server; dpcore.data imports it only when data are read
    import pandas as pd

DEFAULT_N = 10_000

SRC_LOGNORMAL = "Synthetic: log-normal incomes"
SRC_PARETO = "Synthetic: Pareto-tailed incomes with a chosen Gini"
SRC_TWO_POINT = "Synthetic: two-point data (Gini paper, Prop. 5.1)"
SRC_EXAMPLE = "Real example: Engel 1857, Belgian households"
SRC_UPLOAD = "Upload a CSV or Parquet file"  # URL value kept (shared links); shown as SOURCE_SHOWN says
#: what the data-source box shows for an option whose URL value says less (the upload reads .xlsx too)
SOURCE_SHOWN = {SRC_UPLOAD: "Upload a CSV, Excel (.xlsx) or Parquet file"}
SHARED_LABELS = {
    "cps": "Real: CPS ASEC 2016, 5 Midwest states",
    "acs": "Real: ACS 2019, NIST excerpt",
    "pseo": "Real: PSEO earnings cells (CO, TX)",
}
N_OPTIONS = [100, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 1_000_000]
IQ_OPTIONS = ["minimum", 2, 3, 5, 10, 20, 50, 100]
NEGATIVE_LABELS = {"refuse": "refuse the file", "drop": "drop those rows", "clip": "clip them to 0"}
#: Accepted by the uploader; the content decides the format (dpcore.data.read_table), and .xls is
#: accepted only to say, in our words, that it must be saved as .xlsx or CSV (Streamlit's own
#: type filter would show a raw MIME-type error and leave a failed chip).
_UPLOAD_TYPES = ["csv", "txt", "tsv", "gz", "parquet", "pq", "xlsx", "xls"]


# ---------------------------------------------------------------------------------------------
# Cached loaders (each keyed by its parameters; uploads by the SHA-256 of their bytes).
# ---------------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False, max_entries=32)
def _build(key: tuple) -> IncomeData:
    """The dataset of a sidebar key, built from its recipe by :func:`dpcore.data.build_dataset`
    (the generated scripts call the same function with the same recipe)."""
    from dpcore.data import build_dataset, recipe_from_key

    return build_dataset(recipe_from_key(key))


def _synthetic(n: int, seed: int) -> IncomeData:
    """Default dataset: log-normal, sigma 0.9."""
    return _build(("lognormal", n, 0.9, seed))


@st.cache_data(show_spinner="Loading the survey file...", max_entries=8)
def _shared(key: str, negative: str) -> IncomeData | None:
    from dpcore.data import build_dataset, recipe_from_key

    return build_dataset(recipe_from_key(("shared", key, negative)))


@st.cache_data(show_spinner="Reading the file...", max_entries=4, ttl=3600)
def read_upload(digest: str, file_name: str, _raw: bytes) -> tuple[pd.DataFrame, tuple[str, ...], list[str]]:
    """Parse an upload (cache key: digest + name; the bytes themselves are not hashed again)."""
    from dpcore.data import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, numeric_columns, read_table

    frame, notes = read_table(_raw, file_name=file_name, max_bytes=DEFAULT_MAX_BYTES, max_rows=DEFAULT_MAX_ROWS)
    return frame, notes, numeric_columns(frame)


@st.cache_data(show_spinner=False, max_entries=8, ttl=3600)
def _clean_upload(
    digest: str, file_name: str, column: str, negative: str, _frame: pd.DataFrame, read_notes: tuple[str, ...]
) -> IncomeData:
    from dpcore.data import clean_income_column

    cleaned, notes = clean_income_column(_frame, column, negative=negative)
    return IncomeData(
        values=cleaned[column].to_numpy(dtype=float),
        name=file_name,
        source="upload",
        column=column,
        confidential=True,
        frame=cleaned,
        notes=tuple(read_notes) + notes,
    )


#: Recipe key of the default dataset (same form as the keys in _choose; see current_dataset_key).
DEFAULT_KEY = ("lognormal", DEFAULT_N, 0.9, DEFAULT_SEED)


def default_dataset() -> IncomeData:
    """What pages get when nothing else is chosen or a choice fails: log-normal, n = 10,000."""
    return _synthetic(DEFAULT_N, DEFAULT_SEED)


@dataclass(frozen=True)
class DeferredDataset:
    """The default dataset (DEFAULT_KEY) before it is built: what the landing page's sidebar stores
    in ``st.session_state["dataset"]`` on a plain visit, so that no data are drawn or read there
    (cold start). It says what will be used; :func:`current_dataset` builds
    the real :class:`dpcore.data.IncomeData` (:func:`default_dataset`) when a page asks for data."""

    key: tuple = DEFAULT_KEY
    n: int = DEFAULT_N
    source: str = "synthetic"
    confidential: bool = False
    name: str = f"the default synthetic data (log-normal incomes, n = {DEFAULT_N:,}, sigma 0.9)"


# ---------------------------------------------------------------------------------------------
# Sidebar
# ---------------------------------------------------------------------------------------------


class _Keyed:
    """A cached loader plus its recipe ``key`` (e.g. ("lognormal", n, sigma, data_seed)).

    Calling it uses a per-session memo: an unchanged choice returns the very same IncomeData
    without asking st.cache_data again (which would unpickle a fresh copy on every rerun).
    """

    def __init__(self, key: tuple, load: Callable[[], IncomeData | None]) -> None:
        self.key = key
        self._load = load

    def __call__(self) -> IncomeData | None:
        memo = st.session_state.get("_data_memo")
        if memo is not None and memo[0] == self.key:
            return memo[1]
        return self._load()


def _keyed(key: tuple, load: Callable[[], IncomeData | None]) -> _Keyed:
    return _Keyed(key, load)


def _source_options() -> list[str]:
    """The data sources offered: the real survey files are those of dpcore.data's catalogue on this machine
    (the ../shared/data files present, plus the bundled ACS and PSEO copies)."""
    shared = [SHARED_LABELS[k] for k in available_shared() if k in SHARED_LABELS]
    return [SRC_LOGNORMAL, SRC_PARETO, SRC_TWO_POINT, SRC_EXAMPLE, *shared, SRC_UPLOAD]


def _n_widget() -> int:
    return int(
        qp_select_slider(
            "Number of records n",
            "data_n",
            N_OPTIONS,
            DEFAULT_N,
            persistent=True,
            help="n is public: the neighbouring datasets have the same n.",
        )
    )


def _data_seed() -> int:
    return int(
        qp_number(
            "Data seed",
            "data_seed",
            DEFAULT_SEED,
            min_value=0,
            max_value=SEED_MAX,
            step=1,
            persistent=True,
            help="Draws the synthetic data. The seed below draws the privacy noise, so you "
            "can redraw the noise on the same data.",
        )
    )


def _upload_digest(uploaded: Any) -> str:
    """SHA-256 of the uploaded bytes, computed once per uploaded file (remembered by file id)."""
    file_id = getattr(uploaded, "file_id", None) or f"{uploaded.name}-{uploaded.size}"
    memo = st.session_state.get("_data_upload_digest")
    if memo and memo[0] == file_id:
        return memo[1]
    digest = hashlib.sha256(uploaded.getvalue()).hexdigest()
    st.session_state["_data_upload_digest"] = (file_id, digest)
    return digest


def _upload_source() -> _Keyed | None:
    from dpcore.data import DEFAULT_MAX_ROWS, MAX_UPLOAD_MB, explain_column, guess_income_column, income_like_column

    uploaded = st.file_uploader(
        "CSV, Excel (.xlsx) or Parquet file",
        type=_UPLOAD_TYPES,
        key="data_upload",
        help=f"One row per person or household. Up to {MAX_UPLOAD_MB} MB and "
        f"{DEFAULT_MAX_ROWS:,} rows. The file stays in this session's memory; it is never saved. "
        "Thousands separators (45,527) and decimal commas (1.234,56) are read when unambiguous.",
    )
    if uploaded is None:
        st.caption("No file yet: the pages use the default synthetic data until you upload one.")
        return None
    digest = _upload_digest(uploaded)
    if st.session_state.get("_data_upload_for") != digest:
        # a new file starts from its own guess: the column choice (or the "none chosen" of a refused
        # income column) of the previous file must not stick to it
        st.session_state.pop("data_col", None)
        st.session_state["_data_upload_for"] = digest
    frame, read_notes, candidates = read_upload(digest, uploaded.name, uploaded.getvalue())
    wanted = income_like_column(list(frame.columns))
    if not candidates:
        if wanted is not None:
            raise ValueError(f"{uploaded.name}: {explain_column(frame, wanted)}")
        cols = ", ".join(repr(str(c))[:40] for c in list(frame.columns)[:10])
        raise ValueError(f"{uploaded.name} has no numeric column (columns: {cols}); incomes must be numbers")
    guess = guess_income_column(candidates)  # a name of candidates: they are not empty
    index: int | None = candidates.index(guess) if guess is not None else None
    if wanted is not None and wanted not in candidates:
        # never use another column in its place without the user saying so
        st.error(
            f"The column `{wanted}` looks like the income but cannot be used: "
            f"{explain_column(frame, wanted)}. Fix the file, or choose the income column below."
        )
        index = None
    column_kwargs: dict[str, Any] = {"index": index}
    if "data_col" in st.session_state and st.session_state["data_col"] in (*candidates, None):
        # the choice the server holds is given to the widget on every run, so a browser that mounts it
        # anew (another page, the landing page's popover) shows it rather than the guess (ui.common)
        st.session_state["data_col"] = st.session_state["data_col"]
        column_kwargs = {}
    column = st.selectbox(
        "Income column",
        candidates,
        key="data_col",
        placeholder="Choose the income column",
        help="Only columns that hold numbers are listed.",
        **column_kwargs,
    )
    if column is None:
        st.caption("No income column chosen: the pages use the default synthetic data.")
        main_notice(
            f"Your file {uploaded.name} is not in use yet: choose its income column in the sidebar. "
            "The pages show the default synthetic data until then.",
            inline_fallback=False,
        )
        return None
    user_chose = index is None or column != candidates[index]
    _confirm_column(
        uploaded.name,
        column,
        why="your choice"
        if user_chose
        else (
            "its name says income"
            if column == wanted
            else "the only column of numbers"
            if len(candidates) == 1
            else "the first column of numbers: check it is the income"
        ),
    )
    negative = qp_radio(
        "Negative incomes (losses)",
        "data_neg",
        list(NEGATIVE_LABELS),
        "refuse",
        persistent=True,
        format_func=NEGATIVE_LABELS.get,
        help="The methods here assume incomes >= 0. Choose how to treat losses.",
    )
    return _keyed(
        ("upload", digest, uploaded.name, column, negative),
        lambda: _clean_upload(digest, uploaded.name, column, negative, frame, read_notes),
    )


def _confirm_column(file_name: str, column: str, *, why: str) -> None:
    """Say on screen which column is the income, and announce a change of it (an upload
    once switched the income column silently)."""
    last = st.session_state.get("_data_upload_column")
    change = st.session_state.get("_data_upload_change")
    if last is not None and last[1] != column:
        change = (
            f"The income column changed from `{last[1]}` ({last[0]}) to `{column}` ({file_name}).",
            file_name,
            column,
        )
        st.session_state["_data_upload_change"] = change
    st.session_state["_data_upload_column"] = (file_name, column)
    st.success(f"Income column in use: **{column}** ({why}).")
    if change is not None and change[1:] == (file_name, column):
        st.info(change[0])


def _choose() -> tuple[_Keyed | None, bool]:
    """Draw the source widgets; return (loader, offer_lookalike)."""
    source = qp_selectbox(
        "Data source",
        "data_source",
        _source_options(),
        SRC_LOGNORMAL,
        persistent=True,
        format_func=lambda option: SOURCE_SHOWN.get(option, option),
        help="Synthetic and public data are safe for planning; an uploaded file is treated as confidential.",
    )
    if source == SRC_LOGNORMAL:
        n = _n_widget()
        sigma = qp_slider(
            "Spread sigma of log income",
            "data_sigma",
            0.2,
            2.0,
            0.9,
            0.05,
            persistent=True,
            help="Population Gini = 2 Phi(sigma / sqrt 2) - 1; 0.9 gives 0.47.",
        )
        seed = _data_seed()
        key: tuple = ("lognormal", n, float(sigma), seed)
        return _keyed(key, lambda: _build(key)), False
    if source == SRC_PARETO:
        n = _n_widget()
        gini = qp_slider("Target Gini (population)", "data_gini", 0.10, 0.80, 0.45, 0.01, persistent=True)
        tail = qp_select_slider(
            "Pareto tail index of the top 10%",
            "data_tail",
            [1.5, 2.0, 2.5, 3.0, 4.0],
            2.5,
            persistent=True,
            help="Smaller = heavier tail = more very high incomes.",
        )
        seed = _data_seed()
        key = ("pareto", n, float(gini), float(tail), seed)
        return _keyed(key, lambda: _build(key)), False
    if source == SRC_TWO_POINT:
        n = _n_widget()
        gini = qp_slider("Gini", "data_gini", 0.10, 0.80, 0.45, 0.01, persistent=True)
        iq = qp_select_slider(
            "Normalized range IQ = (U - L) / mean",
            "data_iq",
            IQ_OPTIONS,
            "minimum",
            persistent=True,
            help="How wide the public bounds are, in means. 'minimum' is the smallest "
            "IQ this Gini allows (Prop. 5.1); the Gini paper varies it up to 100.",
        )
        seed = _data_seed()
        st.caption(
            "Extreme data: every record sits at one of two values, the bounds L and U (paper "
            "section 5.2.1). The smallest range that can produce this Gini."
        )
        iq_value = None if iq == "minimum" else float(iq)
        key = ("two_point", n, float(gini), iq_value, seed)
        return _keyed(key, lambda: _build(key)), False
    if source == SRC_EXAMPLE:
        st.caption(
            "235 real household incomes (Belgian francs, 1857), public domain; bundled with "
            "the app (see dpcore/examples/README.md)."
        )
        return _keyed(("example", "engel"), lambda: _build(("example", "engel"))), False
    for name, label in SHARED_LABELS.items():
        if source == label:
            spec = SHARED_DATASETS[name]
            negative = qp_radio(
                "Negative incomes (losses)",
                "data_shared_neg",
                ["drop", "clip"],
                "drop",
                persistent=True,
                format_func=NEGATIVE_LABELS.get,
            )
            st.caption(spec.description)
            return _keyed(("shared", name, negative), functools.partial(_shared, name, negative)), False
    # upload
    return _upload_source(), True


def _with_group_columns(lookalike: IncomeData, upload: IncomeData) -> IncomeData:
    """The look-alike with the upload's other columns (group labels; their sizes are public under the
    "replace one record" relation) and synthetic incomes in the same column name, so planning by
    group works on it (the look-alike lost the group column). Incomes are synthetic only;
    the synthetic values are independent draws, unrelated to the real rows."""
    import dataclasses

    if upload.frame is None or lookalike.n != upload.n or upload.frame.shape[1] < 2:
        return lookalike
    frame = upload.frame.drop(columns=[upload.column]).copy()
    frame[upload.column] = lookalike.values
    return dataclasses.replace(
        lookalike,
        frame=frame,
        column=upload.column,
        notes=lookalike.notes
        + (f"group columns kept from {upload.name}: " + ", ".join(map(str, frame.columns[:-1][:6])),),
    )


def _lookalike_widgets(n: int) -> _Keyed:
    gini = qp_slider("Look-alike Gini (from public figures)", "data_gini", 0.10, 0.80, 0.45, 0.01, persistent=True)
    median = qp_number(
        "Look-alike median income", "data_median", 40_000.0, min_value=1.0, max_value=1e9, step=1_000.0, persistent=True
    )
    seed = _data_seed()
    key = ("lookalike", n, float(gini), float(median), seed)
    return _keyed(key, lambda: _build(key))


def _data_params() -> dict[str, str]:
    """The data choices in the URL (query parameters data_*), as text."""
    return {name: str(st.query_params.get(name)) for name in st.query_params if name.startswith("data_")}


def render_sidebar(*, defer_default: bool = False, compact: bool = False, data_used: bool = True) -> None:
    """Draw the sidebar and store the chosen dataset in ``st.session_state['dataset']``.

    ``defer_default=True`` (app.py passes it on pages that never read the dataset, e.g. the landing
    page): while the choice is the default data and the URL held nothing else (a plain visit, or the
    defaults the sidebar wrote there itself), the widgets are drawn as usual but the dataset is not
    built, so a plain visit draws and reads no data (cold start): ``st.session_state["dataset"]`` is a
    :class:`DeferredDataset` until a page uses data (``current_dataset`` then builds
    :func:`default_dataset`; ``current_dataset_key`` is DEFAULT_KEY).

    ``compact=True`` (app.py passes it on the landing page): the data-source widgets and the seed sit in
    two popovers ("Choose the data", "Random seed: N"). They are created as usual (same keys, same URL
    parameters, same session state), but the browser mounts a popover's widgets only when it is opened:
    the sliders, select box and number inputs were half of the landing page's browser work on a cold
    start (benchmarks/bench_cold_start_ratio.py).

    ``data_used=False`` (pages that never read the sidebar's data, e.g. the attacker game): the sidebar
    says so and keeps the whole data section in one closed popover, "Data for the other pages"; the
    seed stays in view. The data widgets are still drawn on every run: a run that does not draw a widget
    makes Streamlit drop its state, and an uploaded file would be lost on the way back to a data page.

    The data widgets and the seed are ``persistent`` (ui.common): their values are kept in the session
    and given to the widgets on every run, so every page, reached by a card, a sidebar link, a deep
    link or a reload, shows and uses the same recipe and seed."""
    with st.sidebar:
        st.header("Data")
        if not data_used:
            st.caption("This page does not use these data. Your choice is kept for the pages that do.")
            defer_default = True
        url_before = _data_params()
        st.session_state.pop(_REFUSAL, None)
        dataset: IncomeData | None = None
        key: tuple = DEFAULT_KEY
        with contextlib.ExitStack() as data_panel:
            if not data_used:
                data_panel.enter_context(_popover("Data for the other pages", ":material/database:"))
            try:
                choice_panel = _popover("Choose the data", ":material/tune:") if compact and data_used else None
                with contextlib.nullcontext() if choice_panel is None else choice_panel:
                    loader, offer_lookalike = _choose()
                # the widgets rewrite the URL to what they show: a URL they changed held something else
                url_as_shown = url_before.items() <= _data_params().items()
                if defer_default and url_as_shown and loader is not None and loader.key == DEFAULT_KEY:
                    deferred = DeferredDataset()
                    st.session_state.pop("_data_memo", None)  # the memo only ever holds built data
                    st.session_state["dataset"] = deferred
                    st.caption(f"**In use:** {deferred.name}, made when you open a page that uses data.")
                    data_panel.close()
                    _randomness(confidential=False, compact=compact, data_used=data_used)
                    return
                if loader is not None:
                    dataset, key = loader(), loader.key
                if dataset is not None and dataset.confidential and offer_lookalike:
                    st.warning(
                        "**Planning on confidential data is itself not private.** Every simulated "
                        "release you look at here uses the real records. Plan on a synthetic "
                        "look-alike (below) and use the real file only for the one release you "
                        "count against the privacy budget."
                    )
                    if qp_toggle(
                        "Plan on a synthetic look-alike instead",
                        "data_lookalike",
                        False,
                        persistent=True,
                        help="Pareto-tailed synthetic data with the same n (n is public) and a "
                        "Gini and median you take from published figures, not from this file.",
                    ):
                        lookalike = _lookalike_widgets(dataset.n)
                        synthetic = lookalike()
                        if synthetic is None:  # never: _build generates it (None is a missing shared file)
                            raise ValueError("the synthetic look-alike could not be built")
                        dataset, key = _with_group_columns(synthetic, dataset), lookalike.key
            except (ValueError, TypeError) as exc:  # DPInputError is a ValueError
                st.error(f"Cannot use this data: {exc}")
                st.caption("The pages show the default synthetic data instead.")
                _refusal_in_main_area(str(exc))
                dataset = None
            except MemoryError:
                st.error("Cannot use this data: not enough memory; upload a smaller extract.")
                _refusal_in_main_area("not enough memory; upload a smaller extract")
                dataset = None
            if dataset is None:
                dataset, key = default_dataset(), DEFAULT_KEY
            # the memo always names the dataset in use (ui.repro reads its key to rebuild the data)
            st.session_state["_data_memo"] = (key, dataset)
            st.session_state["dataset"] = dataset
            _summary(dataset)
        _randomness(confidential=dataset.confidential, compact=compact, data_used=data_used)


#: Session-state slot: why the sidebar's data choice was refused in the last run (absent: it was not).
_REFUSAL = "_data_choice_refused"


def refused_choice() -> str | None:
    """Why the data chosen in the sidebar were refused in this run (the default data are in use), or None."""
    return st.session_state.get(_REFUSAL)


def _refusal_in_main_area(reason: str) -> None:
    """Repeat a refused data choice at the top of the main area: the pages below say they use the
    default synthetic data, and a reader looking there must learn why (the sidebar alone is easy to miss)."""
    st.session_state[_REFUSAL] = reason
    if st.session_state.get("data_source") == SRC_UPLOAD:
        main_notice(
            f"Your file was refused: {reason}. The pages show the default synthetic data instead (see the sidebar).",
            error=True,
            inline_fallback=False,
        )
    else:
        main_notice(
            f"The data chosen in the sidebar cannot be used: {reason}. The pages show the default "
            "synthetic data instead.",
            error=True,
            inline_fallback=False,
        )


def _popover(label: str, icon: str) -> Any:
    return st.popover(label, icon=icon, width="stretch")


def _randomness(*, confidential: bool, compact: bool = False, data_used: bool = True) -> None:
    st.header("Randomness")
    seed_panel = _popover(f"Random seed: {random_seed()}", ":material/casino:") if compact and data_used else None
    with contextlib.nullcontext() if seed_panel is None else seed_panel:
        qp_number(
            "Random seed",
            "seed",
            DEFAULT_SEED,
            min_value=0,
            max_value=SEED_MAX,
            step=1,
            persistent=True,
            help="Every simulated release on every page is drawn from this seed: same seed, same picture.",
        )
    if not confidential and data_used:
        st.info(
            "**Planning is not release.** Simulating releases on confidential data is itself not "
            "private: plan on synthetic or public look-alike data; use the real file only for the "
            "one release you count against the budget."
        )


def _summary(ds: IncomeData) -> None:
    kind = {
        "synthetic": "synthetic",
        "example": "real, public",
        "shared": "real, public survey file",
        "upload": "your file, confidential",
    }.get(ds.source, ds.source)
    st.caption(f"**In use:** {ds.name}  \n{ds.n:,} records ({kind}), column `{ds.column}`")
    for note in ds.notes:
        st.caption(f"- {note}")


def current_dataset() -> IncomeData:
    """The dataset chosen in the sidebar."""
    ds = st.session_state.get("dataset")
    if ds is None or isinstance(ds, DeferredDataset):
        ds = default_dataset()
    return ds


def current_dataset_key() -> tuple:
    """Recipe of the dataset in use, e.g. ("lognormal", n, sigma, data_seed), ("pareto", n, gini,
    tail_index, data_seed), ("lookalike", n, gini, median, data_seed), ("two_point", n, gini, iq,
    data_seed), ("example", "engel"), ("shared", key, negative) or ("upload", sha256, file_name,
    column, negative). Always the key of the data the pages see (DEFAULT_KEY after a fallback)."""
    memo = st.session_state.get("_data_memo")
    return tuple(memo[0]) if memo else DEFAULT_KEY


def current_dataset_recipe() -> dict | None:
    """The :func:`dpcore.data.build_dataset` recipe of the dataset in use (an upload gives a "file"
    recipe naming the file), or None when the key has no recipe."""
    from dpcore.data import recipe_from_key

    try:
        return recipe_from_key(current_dataset_key())
    except ValueError:
        return None
