"""Income data, one module per concern; every public name is importable from ``dpcore.data``.

All data reach the pages as :class:`IncomeData`:

* :mod:`dpcore.data.io`: **uploaded files** (CSV, Parquet or Excel .xlsx as bytes, a path or a binary
  file object) parsed in memory within size limits (:func:`read_table`), their number formats
  (:func:`detect_number_format`), the income column validated (:func:`clean_income_column`,
  :func:`load_income_file`); every problem raises :class:`DPInputError` naming what to do.
* :mod:`dpcore.data.catalogue`: **real data**, the bundled public-domain examples (:func:`load_example`)
  and the real survey files of ``../shared/data`` (:data:`SHARED_DATASETS`, :func:`load_shared`; the ACS and
  PSEO files fall back to the bundled copies), the ACS frame and poverty counts of the ratio page.
* :mod:`dpcore.data.synthetic`: **synthetic generators** (all take ``rng``): :func:`lognormal_incomes`,
  :func:`pareto_mixture_incomes` and :func:`two_point_incomes` (Proposition 5.1 of Lan & Reiter).
* :mod:`dpcore.data.recipes`: **recipes**, :func:`build_dataset` turns a plain-dict recipe into an
  :class:`IncomeData`; the sidebar and the generated scripts both call it.

The sample Gini is :func:`dpcore.gini.gini` (the package has one). Importing this package imports neither
pandas nor scipy (:mod:`dpcore.lazy`): the app's sidebar reads the catalogue on a cold start.
A module-level setting (a limit, a directory) is read from the module that defines it: patch it there.

Privacy assumptions: none of these functions releases anything. An uploaded file is marked
``confidential=True`` because *planning on confidential data is itself not private* (design.md
section 2). The neighbouring relation the methods use is "replace one record, n public", so a record
must be one unit of privacy (one person or one household), which holds for every dataset offered here
except the PSEO table, whose rows are published cell statistics, not persons.
"""

from .catalogue import (
    ACS_PAGE_COLUMNS,
    EXAMPLES,
    EXAMPLES_DIR,
    POVERTY_GROUPINGS,
    REPO_ROOT,
    SHARED_DATA_DIR,
    SHARED_DATASETS,
    SharedDataset,
    acs_frame,
    available_shared,
    example_path,
    load_acs,
    load_cps,
    load_example,
    load_pseo,
    load_shared,
    poverty_counts,
    real_data_path,
    shared_data_path,
)
from .io import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ROWS,
    MAX_CSV_COLUMNS,
    MAX_CSV_HEADER_BYTES,
    MAX_CSV_ROW_BYTES,
    MAX_SHEET_XML_BYTES,
    MAX_TABLE_CELLS,
    MAX_UPLOAD_MB,
    NEGATIVE_POLICIES,
    WORKBOOK_MEMORY_BYTES,
    WORKBOOK_SECONDS,
    IncomeData,
    NumberFormat,
    clean_income_column,
    count_outside_quotes,
    csv_header_too_long,
    csv_row_too_long,
    csv_too_many_columns,
    detect_number_format,
    explain_column,
    guess_income_column,
    income_like_column,
    load_income_file,
    numeric_columns,
    parse_numbers,
    read_table,
)
from .recipes import DEFAULT_RECIPE, RECIPE_KINDS, build_dataset, check_recipe, describe_recipe, recipe_from_key
from .synthetic import (
    ParetoTailMixture,
    TwoPointData,
    lognormal_incomes,
    min_iq_for_gini,
    pareto_mixture_incomes,
    two_point_incomes,
)

__all__ = [
    # io
    "IncomeData",
    "NEGATIVE_POLICIES",
    "MAX_UPLOAD_MB",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ROWS",
    "MAX_SHEET_XML_BYTES",
    "MAX_TABLE_CELLS",
    "MAX_CSV_HEADER_BYTES",
    "MAX_CSV_COLUMNS",
    "MAX_CSV_ROW_BYTES",
    "count_outside_quotes",
    "csv_header_too_long",
    "csv_too_many_columns",
    "csv_row_too_long",
    "WORKBOOK_SECONDS",
    "WORKBOOK_MEMORY_BYTES",
    "read_table",
    "numeric_columns",
    "guess_income_column",
    "income_like_column",
    "explain_column",
    "NumberFormat",
    "detect_number_format",
    "parse_numbers",
    "clean_income_column",
    "load_income_file",
    # catalogue
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
    # synthetic
    "lognormal_incomes",
    "ParetoTailMixture",
    "pareto_mixture_incomes",
    "TwoPointData",
    "min_iq_for_gini",
    "two_point_incomes",
    # recipes
    "RECIPE_KINDS",
    "DEFAULT_RECIPE",
    "check_recipe",
    "build_dataset",
    "recipe_from_key",
    "describe_recipe",
]
