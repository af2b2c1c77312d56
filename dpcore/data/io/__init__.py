"""Reading a user's file: CSV, Parquet or Excel (.xlsx) bytes into a table, and its income column into
:class:`IncomeData`, the form in which every data source reaches the pages.

:func:`read_table` parses a file given as bytes, a path or a binary file object in memory (never written
to disk or logged), within the size, row and cell limits below (gzip, Parquet and workbook bombs are
refused before they are unpacked; a workbook is parsed in a child process with CPU and memory limits);
:func:`detect_number_format` / :func:`parse_numbers` read thousands separators and decimal commas when
a column's spelling is unambiguous; :func:`numeric_columns` lists the columns that can hold incomes,
:func:`clean_income_column` validates the chosen one (missing values dropped and counted, negative values
refused / dropped / clipped to 0 as the caller decides, non-numeric text reported with an example and its
line) and :func:`load_income_file` does all three. Every problem raises :class:`DPInputError` (a
``ValueError``) whose message names the problem and what to do.

Privacy assumptions: nothing here releases anything. An uploaded file is marked ``confidential=True``
because *planning on confidential data is itself not private* (docs/CONVENTIONS.md); the pages say so
and offer synthetic look-alikes. The neighbouring relation the methods use is "replace one record,
n public", so a record must be one unit of privacy (one person or one household).

The package, one concern per module (this ``__init__`` imports their public names: ``dpcore.data.io.<name>`` is
their public path, and ``dpcore.data`` imports them again): :mod:`~dpcore.data.io.source` (the file's bytes,
gzip, text decoding), :mod:`~dpcore.data.io.csv_shape` (the CSV limits an upload shares with the command
line's engines), :mod:`~dpcore.data.io.binary` (Parquet and Excel workbooks, within their limits),
:mod:`~dpcore.data.io.table` (:func:`read_table` and the columns that can hold incomes),
:mod:`~dpcore.data.io.numbers` (number formats) and :mod:`~dpcore.data.io.income` (the income column and
:class:`IncomeData`). A limit is read from the module that defines it: patch it there.
"""

from __future__ import annotations

from .binary import MAX_SHEET_XML_BYTES, MAX_TABLE_CELLS, WORKBOOK_MEMORY_BYTES, WORKBOOK_SECONDS
from .csv_shape import (
    MAX_CSV_COLUMNS,
    MAX_CSV_HEADER_BYTES,
    MAX_CSV_ROW_BYTES,
    count_outside_quotes,
    csv_header_too_long,
    csv_row_too_long,
    csv_too_many_columns,
)
from .income import NEGATIVE_POLICIES, IncomeData, clean_income_column, explain_column, load_income_file
from .numbers import NumberFormat, detect_number_format, parse_numbers
from .source import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, MAX_UPLOAD_MB
from .table import guess_income_column, income_like_column, numeric_columns, read_table

__all__ = [
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
]
