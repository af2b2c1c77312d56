"""Uploads that never guess wrong: number formats, encodings, Excel, the income column.

Every file of tests/upload_files.py is a case the reader once got wrong (silently another column,
"no numeric column", UTF-16 refused, .xlsx refused).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from upload_files import bad_files

from dpcore.data import (
    detect_number_format,
    explain_column,
    income_like_column,
    load_income_file,
    numeric_columns,
    parse_numbers,
    read_table,
)
from dpcore.validation import DPInputError

FILES = bad_files()


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_issue_file_loads_right_or_says_what_to_change(name):
    content, expect = FILES[name]
    if "error" in expect:
        with pytest.raises(DPInputError, match=expect["error"]):
            load_income_file(content, name=name)
        return
    data = load_income_file(content, name=name)
    assert data.column == expect["column"]
    np.testing.assert_allclose(data.values, expect["values"])


def test_thousands_note_names_the_conversion():
    content, _ = FILES["thousands.csv"]
    frame, notes = read_table(content)
    assert frame["income"].dtype == float
    assert any("thousands separators" in n and "45,527" in n for n in notes)
    assert numeric_columns(frame) == ["hours", "income"]


@pytest.mark.parametrize(
    "cells,delimiter,style",
    [
        (["45,527", "1,234,567"], ",", "thousands_comma"),
        (["45,527", "31,000"], ",", "thousands_comma"),  # quoted in a comma file: thousands
        (["45,527", "31,000"], ";", "ambiguous"),  # ';' file: could be decimal commas
        (["45,527", "31,000"], None, "ambiguous"),  # Excel text cells / Parquet: no guess
        (["1,234.56", "12.5"], ";", "thousands_comma"),
        (["1.234,56", "45,5"], ";", "decimal_comma"),
        (["45,5", "12"], ",", "decimal_comma"),
        (["1.234", "45.000"], ";", "ambiguous"),  # a thousand in a European file?
        (["1.234", "45.000"], ",", "plain"),  # decimal points in a comma file
        (["1,234.5", "1.234,5"], ",", "mixed"),
        (["45,527", "n/a?"], ",", "text"),
        (["12", "13.5"], ",", "plain"),
    ],
)
def test_detect_number_format(cells, delimiter, style):
    assert detect_number_format(cells, delimiter=delimiter).style == style


def test_parse_numbers_and_refusals():
    fmt = detect_number_format(["1.234,56", "45,5"], delimiter=";")
    np.testing.assert_allclose(parse_numbers(pd.Series(["1.234,56", None, "45,5"]), fmt), [1234.56, np.nan, 45.5])
    with pytest.raises(DPInputError, match="mixes two number styles"):
        parse_numbers(["1,234.5", "1.234,5"], detect_number_format(["1,234.5", "1.234,5"]))


def test_semicolon_file_with_dot_thousands_is_not_read_as_decimals():
    # pandas alone reads 1.234 as 1.234 (a decimal) in a ';' file: a thousand times too small
    content = b"region;income\nN;1.234\nS;45.000\n"
    frame, _ = read_table(content)
    assert "income" not in numeric_columns(frame)
    assert "thousands separator" in explain_column(frame, "income")
    with pytest.raises(DPInputError, match="looks like the income but cannot be used"):
        load_income_file(content)


def test_income_column_is_never_switched_silently():
    # mixed styles in 'income': refused, although 'hours' is numeric
    content = b'hours,income\n40,"1,234.5"\n38,"1.234,5"\n'
    message = str(pytest.raises(DPInputError, load_income_file, content).value)
    assert "'income'" in message and "No other column is used" in message
    # an explicit column is still honoured
    assert load_income_file(content, column="hours").column == "hours"


def test_explain_column_and_income_like_column():
    frame = pd.DataFrame({"name": ["a", "b"], "wage": [1.0, 2.0], "flag": [True, False]})
    assert "not numbers" in explain_column(frame, "name") and explain_column(frame, "wage") is None
    assert "true/false" in explain_column(frame, "flag")
    assert income_like_column(["id", "Annual_Income"]) == "Annual_Income"
    assert income_like_column(["id", "hours"]) is None


def test_xlsx_sheets_note_and_text_cells():
    with pd.ExcelWriter(buffer := __import__("io").BytesIO()) as writer:
        pd.DataFrame({"income": ["45,527", "1,234,567"]}).to_excel(writer, sheet_name="2024", index=False)
        pd.DataFrame({"x": [1]}).to_excel(writer, sheet_name="notes", index=False)
    data = load_income_file(buffer.getvalue(), name="book.xlsx")
    np.testing.assert_allclose(data.values, [45527, 1234567])
    assert any("'2024'" in n and "2 sheets" in n for n in data.notes)


def test_zip_that_is_not_a_workbook():
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("incomes.csv", "income\n1\n2\n")
    with pytest.raises(DPInputError, match="unzip it"):
        load_income_file(buffer.getvalue())


def test_utf16_without_bom_and_cut_utf16():
    data = load_income_file("income,g\n10,a\n20,b\n".encode("utf-16-le"))
    np.testing.assert_allclose(data.values, [10, 20])
    with pytest.raises(DPInputError, match="UTF-16"):
        load_income_file("income\n10\n".encode("utf-16") + b"\x00")  # odd length


def test_a_text_file_named_xlsx_says_it_is_not_a_workbook():
    """A text file named .xlsx got "a header but no data rows"; now its name's format is named, and a CSV table
    named .xlsx is read with a note saying so."""
    with pytest.raises(DPInputError, match=r"notes\.xlsx is named \.xlsx but is not an Excel workbook"):
        read_table(b"my notes for the class\n", file_name="notes.xlsx")
    with pytest.raises(DPInputError, match=r"is named \.parquet but is not a Parquet file"):
        read_table(b"income\n", file_name="cells.parquet")
    frame, notes = read_table(b"income\n10\n20\n", file_name="table.xlsx")
    assert list(frame["income"]) == [10, 20] and any("named .xlsx but holds text" in n for n in notes)
    with pytest.raises(DPInputError, match="header .* but no data rows"):  # a CSV's own message is unchanged
        read_table(b"income\n", file_name="table.csv")
