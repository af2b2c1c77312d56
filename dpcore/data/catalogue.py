"""The real data: the public-domain examples bundled in ``dpcore/examples`` and the real survey files in
``../shared/data``.

:func:`load_example` reads a bundled example (Engel's 1857 Belgian households, the ACS 2019 PUMS excerpt
of NIST and the Census PSEO earnings table, see ``dpcore/examples/README.md``); :func:`load_shared` reads a
survey file of :data:`SHARED_DATASETS` from ``../shared/data``, falling back to the bundled copies of the
ACS and PSEO files, so only the CPS extract, which is never bundled (IPUMS terms), can be missing.
:func:`real_data_path` gives the file to read; :func:`available_shared` lists what this machine has.
Importing this module reads no file and imports no pandas (the app's sidebar lists the sources on a cold
start); the loaders read the files when called.

Privacy assumptions: these are public data; nothing here releases anything. Every record is one person or
one household (the unit of the "replace one record, n public" relation) except in the PSEO table, whose
rows are published cell statistics, not persons.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..lazy import LazyModule
from ..validation import DPInputError, check_finite
from .io import NEGATIVE_POLICIES, IncomeData, clean_income_column, read_table

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyModule("pandas")  # imported when a file is first read (cold start: see dpcore.lazy)

__all__ = [
    "REPO_ROOT",
    "SHARED_DATA_DIR",
    "EXAMPLES_DIR",
    "shared_data_path",
    "EXAMPLES",
    "example_path",
    "real_data_path",
    "load_example",
    "SHARED_DATASETS",
    "SharedDataset",
    "available_shared",
    "load_shared",
    "load_cps",
    "load_acs",
    "load_pseo",
    "ACS_PAGE_COLUMNS",
    "acs_frame",
    "POVERTY_GROUPINGS",
    "poverty_counts",
]

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
SHARED_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "examples"


def shared_data_path(file_name: str) -> Path | None:
    """Path of a file in ../shared/data next to the repository, or None when it is absent."""
    path = SHARED_DATA_DIR / file_name
    return path if path.is_file() else None


#: Bundled real examples: key -> (file in dpcore/examples, income column, display name).
#: "acs" and "pseo" are byte-identical copies of the ../shared/data files (public domain, see
#: dpcore/examples/README.md), so the app shows real American incomes on a machine without
#: ../shared. The CPS IPUMS extract is never bundled (IPUMS terms: no redistribution).
EXAMPLES: dict[str, tuple[str, str, str]] = {
    "engel": (
        "engel1857_belgium.csv",
        "income",
        "Engel 1857: Belgian household incomes (real, 235 households, francs)",
    ),
    "acs": (
        "acs2019_nist_excerpt_national.csv.gz",
        "PINCP",
        "ACS 2019 PUMS, NIST excerpt (20 PUMAs): personal income (real)",
    ),
    "pseo": (
        "pseo_earnings_co_tx.csv.gz",
        "y1_p50_earnings",
        "PSEO 2019 release: median earnings 1 year after graduation, per published cell (real)",
    ),
}


def example_path(key: str) -> Path:
    """Path of a bundled example file in dpcore/examples (``"engel"``, ``"acs"``, ``"pseo"``)."""
    if key not in EXAMPLES:
        raise DPInputError(f"unknown example {key!r}; choose one of {', '.join(EXAMPLES)}")
    return EXAMPLES_DIR / EXAMPLES[key][0]


def real_data_path(file_name: str) -> Path | None:
    """Where to read a real public file: ../shared/data/<file_name> when present, else the copy
    bundled in dpcore/examples (the ACS excerpt and the PSEO table), else None (the CPS extract,
    which is only in ../shared). Pages read the ACS and PSEO files through this, so they show real
    data on a fresh machine."""
    path = shared_data_path(file_name)
    if path is not None:
        return path
    bundled = EXAMPLES_DIR / str(file_name)
    if any(spec[0] == file_name for key, spec in EXAMPLES.items() if key in _BUNDLED_SHARED):
        return bundled if bundled.is_file() else None
    return None


@dataclass(frozen=True)
class SharedDataset:
    """A real survey file: which column is the income and what else it offers."""

    key: str
    file_name: str
    column: str
    label: str
    weight: str | None
    groups: tuple[str, ...]
    description: str
    filter_column: str | None = None  # keep rows where this column == filter_value
    filter_value: Any = None
    #: the cell sizes of the file's group columns are published (IncomeData.public_cell_sizes)
    public_cell_sizes: bool = False


SHARED_DATASETS: dict[str, SharedDataset] = {
    "cps": SharedDataset(
        "cps",
        "cps_asec2016_ipums_midwest.csv.gz",
        "INCTOT",
        "CPS ASEC 2016, 5 Midwest states: total personal income 2015 (real)",
        "ASECWT",
        ("STATEFIP", "AGE", "EDUC"),
        "IPUMS-CPS person records; INCTOT is missing for persons under 15 (dropped).",
    ),
    "acs": SharedDataset(
        "acs",
        "acs2019_nist_excerpt_national.csv.gz",
        "PINCP",
        "ACS 2019 PUMS, NIST excerpt (20 PUMAs): personal income (real)",
        "PWGTP",
        ("SEX", "RAC1P", "AGEP", "POVPIP", "HISP", "EDU", "ST", "PUMA"),
        "ACS person records; PINCP is missing under age 15 (dropped).",
    ),
    "pseo": SharedDataset(
        "pseo",
        "pseo_earnings_co_tx.csv.gz",
        "y1_p50_earnings",
        "PSEO 2019 release: median earnings 1 year after graduation, per published cell (real)",
        None,
        ("institution", "degree_level", "cipcode", "institution_state"),
        "Rows are published cells (institution x degree x field x cohort), not persons; only cells "
        "with status_y1_earnings == 1 (published) are kept.",
        filter_column="status_y1_earnings",
        filter_value=1,
        public_cell_sizes=True,  # the Census Bureau publishes the table's cells: their sizes are public
    ),
}
#: Shared files that also ship in dpcore/examples (load_shared falls back to them).
_BUNDLED_SHARED = ("acs", "pseo")


def available_shared() -> list[str]:
    """Keys of the real survey files loadable on this machine: the ../shared/data files present,
    plus the bundled ACS and PSEO copies (always)."""
    return [k for k, d in SHARED_DATASETS.items() if real_data_path(d.file_name) is not None]


def _load_spec(
    spec: SharedDataset,
    path: Path,
    *,
    source: str,
    negative: str,
    columns: Sequence[str] | None = None,
    extra_notes: tuple[str, ...] = (),
) -> IncomeData:
    """Read one real survey file (filtered to its published rows, income column cleaned)."""
    usecols = None
    if columns is not None:
        columns = [str(c) for c in columns]
        usecols = list(dict.fromkeys([spec.column, *columns, *([spec.filter_column] if spec.filter_column else [])]))
    try:
        frame = pd.read_csv(path, low_memory=False, usecols=usecols, dtype={"PUMA": str} if spec.key == "acs" else None)
    except ValueError as exc:  # usecols naming a column the file lacks
        raise DPInputError(f"{spec.file_name}: {exc}") from None
    if spec.filter_column is not None:
        frame = frame.loc[frame[spec.filter_column] == spec.filter_value].reset_index(drop=True)
    cleaned, notes = clean_income_column(frame, spec.column, negative=negative)
    if columns is not None:
        cleaned = cleaned[list(dict.fromkeys([spec.column, *columns]))]
    return IncomeData(
        values=cleaned[spec.column].to_numpy(dtype=float),
        name=spec.label,
        source=source,
        column=spec.column,
        confidential=False,
        frame=cleaned,
        notes=(spec.description,) + extra_notes + notes,
        public_cell_sizes=spec.public_cell_sizes,
    )


def load_example(key: str = "engel", *, negative: str = "drop", columns: Sequence[str] | None = None) -> IncomeData:
    """A bundled real public-domain example (see ``dpcore/examples/README.md`` for provenance).

    ``"engel"``: Engel's 1857 Belgian households (no negatives: ``negative`` is ignored).
    ``"acs"`` / ``"pseo"``: the bundled copies of the ACS 2019 NIST excerpt (PINCP; persons under
    15 dropped, negative incomes dropped by default) and of the PSEO table (published y1 medians).
    ``columns`` keeps only those columns (plus the income column) in ``frame``.
    """
    path = example_path(key)
    if key in SHARED_DATASETS:
        return _load_spec(SHARED_DATASETS[key], path, source="example", negative=negative, columns=columns)
    _, column, label = EXAMPLES[key]
    frame, _ = read_table(path)
    cleaned, notes = clean_income_column(frame, column, negative="refuse")
    if columns is not None:
        missing = [c for c in columns if c not in cleaned.columns]
        if missing:
            raise DPInputError(f"the example {key!r} has no column(s) {missing}")
        cleaned = cleaned[list(dict.fromkeys([column, *columns]))]
    return IncomeData(
        values=cleaned[column].to_numpy(dtype=float),
        name=label,
        source="example",
        column=column,
        confidential=False,
        frame=cleaned,
        notes=notes,
    )


def load_shared(key: str, *, negative: str = "drop", columns: Sequence[str] | None = None) -> IncomeData | None:
    """Load a real survey file as IncomeData (full frame, rows aligned), or None if it is absent.

    Reads ../shared/data; for ``"acs"`` and ``"pseo"`` it falls back to the copies bundled in
    dpcore/examples (identical files, with a note saying so), so only ``"cps"`` can give None.
    The income column is cleaned with :func:`clean_income_column`: missing incomes (persons
    under 15) are dropped; negative incomes are dropped by default, as in the data README's
    figures (pass ``negative="clip"`` to keep those persons at 0). ``frame`` keeps every column
    (groups such as SEX, RAC1P, AGEP, POVPIP, PWGTP for ACS; STATEFIP, AGE, EDUC, ASECWT for CPS)
    unless ``columns`` names the ones to keep.
    """
    if key not in SHARED_DATASETS:
        raise DPInputError(f"unknown shared dataset {key!r}; choose one of {', '.join(SHARED_DATASETS)}")
    if negative not in NEGATIVE_POLICIES:
        raise DPInputError(f"negative must be one of {', '.join(NEGATIVE_POLICIES)}, got {negative!r}")
    spec = SHARED_DATASETS[key]
    path = shared_data_path(spec.file_name)
    notes: tuple[str, ...] = ()
    if path is None:
        path = real_data_path(spec.file_name)
        if path is None:
            return None
        notes = ("read from the copy bundled in dpcore/examples (../shared/data is not on this machine)",)
    return _load_spec(spec, path, source="shared", negative=negative, columns=columns, extra_notes=notes)


def load_cps(*, negative: str = "drop") -> IncomeData | None:
    """CPS ASEC 2016 (5 Midwest states), INCTOT; None when ../shared/data is absent (never bundled)."""
    return load_shared("cps", negative=negative)


def load_acs(*, negative: str = "drop") -> IncomeData | None:
    """ACS 2019 NIST excerpt, PINCP (../shared/data, else the bundled copy)."""
    return load_shared("acs", negative=negative)


def load_pseo(*, negative: str = "drop") -> IncomeData | None:
    """PSEO earnings cells, published y1 medians (../shared/data, else the bundled copy)."""
    return load_shared("pseo", negative=negative)


#: Columns of the ACS excerpt used by the group-means and ratio pages (person income, age, sex,
#: race, Hispanic origin, education, marital status, income-to-poverty ratio).
ACS_PAGE_COLUMNS = ("PINCP", "AGEP", "SEX", "RAC1P", "HISP", "EDU", "MSP", "POVPIP")


@functools.lru_cache(maxsize=2)
def _acs_columns(columns: tuple[str, ...]) -> pd.DataFrame | None:
    path = real_data_path(SHARED_DATASETS["acs"].file_name)
    if path is None:
        return None
    return pd.read_csv(path, usecols=list(columns))


def acs_frame(columns: Sequence[str] = ACS_PAGE_COLUMNS) -> pd.DataFrame | None:
    """The ACS 2019 excerpt (NIST, 20 PUMAs; public domain) as a DataFrame with ``columns``, all rows,
    unfiltered (missing values kept): ../shared/data when present, else the bundled copy; None when
    neither exists. Read once per process (a fresh copy is returned, so callers may modify it)."""
    cols = tuple(str(c) for c in columns)
    unknown = [c for c in cols if c not in ACS_PAGE_COLUMNS]
    if unknown or not cols:
        raise DPInputError(f"acs_frame reads the columns {', '.join(ACS_PAGE_COLUMNS)}; got {list(cols)}")
    full = _acs_columns(ACS_PAGE_COLUMNS)
    return None if full is None else full.loc[:, list(cols)].copy()


#: Group codes of the ACS excerpt's SEX, RAC1P and HISP columns (PUMS data dictionary 2019) for the
#: poverty example of the ratio page.
POVERTY_GROUPINGS: dict[str, dict[int, str]] = {
    "SEX": {1: "Male", 2: "Female"},
    "RAC1P": {
        1: "White alone",
        2: "Black alone",
        3: "American Indian alone",
        4: "Alaska Native alone",
        5: "AIAN tribes specified",
        6: "Asian alone",
        7: "NHPI alone",
        8: "Some other race alone",
        9: "Two or more races",
    },
    "HISP": {0: "Not Hispanic", 1: "Mexican", 2: "Puerto Rican", 3: "Cuban", 4: "Other Hispanic"},
}


def poverty_counts(
    frame: Any, column: str, group_x: Any, group_y: Any, *, threshold: float = 100.0
) -> tuple[int, int, int, int]:
    """(x, n_x, y, n_y): people with POVPIP < threshold and with POVPIP known, in two groups of ``column``.

    Rows with missing POVPIP (poverty status not determined) are dropped. Raises DPInputError for an
    unknown column, identical groups, or an empty group. These are the confidential counts that the
    ratio page's poverty example then releases with noise (dpcore.ratio).
    """
    if column not in getattr(frame, "columns", ()):
        raise DPInputError(f"the data has no column {column!r}")
    if "POVPIP" not in frame.columns:
        raise DPInputError("the data has no POVPIP column (income-to-poverty ratio)")
    if group_x == group_y:
        raise DPInputError("choose two different groups")
    threshold = check_finite(threshold, "threshold")
    known = frame[frame["POVPIP"].notna()]
    if (known["POVPIP"] < 0).any():
        raise DPInputError("POVPIP has negative values; it is a ratio in percent (0..501)")
    out = []
    for g in (group_x, group_y):
        sel = known[known[column] == g]
        if len(sel) == 0:
            raise DPInputError(f"group {column} = {g} is empty (no one with a known poverty ratio)")
        out.append((int((sel["POVPIP"] < threshold).sum()), int(len(sel))))
    return out[0][0], out[0][1], out[1][0], out[1][1]
