"""The bad upload files, shared by the dpcore, sidebar and browser tests.

Each entry: file name -> (bytes, what must happen). ``column``/``values``: the upload must load
with that income column and those values; ``error``: a DPInputError / st.error naming the problem.
"""

from __future__ import annotations

import io

import pandas as pd


def xlsx_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_excel(buffer, index=False)  # openpyxl
    return buffer.getvalue()


def bad_files() -> dict[str, tuple[bytes, dict]]:
    return {
        # quoted thousands separators: the old code dropped 'income' from the numeric columns and
        # silently used 'hours' instead
        "thousands.csv": (
            b'hours,income,region\n40,"45,527",N\n38,"1,234,567",S\n20,"31,000",N\n10,"12,500",S\n',
            {"column": "income", "values": [45527, 1234567, 31000, 12500]},
        ),
        # decimal commas with ';': the old code said "no numeric column" with no hint
        "decimal_comma.csv": (
            b"region;income\nN;1.234,56\nS;45,5\nN;31000\nS;2.000,00\n",
            {"column": "income", "values": [1234.56, 45.5, 31000, 2000]},
        ),
        # UTF-16 with a BOM (Excel's "Unicode text"): the old code refused it
        "utf16.csv": (
            "region\tincome\nNord\t1200\nSüd\t3400\nNord\t560\n".encode("utf-16"),
            {"column": "income", "values": [1200, 3400, 560]},
        ),
        "utf8_bom.csv": (
            "\ufeffincome,region\n1200,Nord\n3400,Süd\n".encode("utf-8"),
            {"column": "income", "values": [1200, 3400]},
        ),
        # a real workbook: the old code refused it (and Streamlit's type filter showed a MIME error)
        "incomes.xlsx": (
            xlsx_bytes(pd.DataFrame({"income": [1200.5, 3400, 560], "region": list("NSN")})),
            {"column": "income", "values": [1200.5, 3400, 560]},
        ),
        # ';' file where '45,527' could be a thousand-separated 45527 or a decimal 45.527: refused,
        # with what to change (never another column in its place)
        "ambiguous.csv": (b"hours;income\n40;45,527\n38;31,000\n", {"error": "could be a thousands separator"}),
        # an old .xls workbook: says to save it as CSV or .xlsx
        "old.xls": (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, {"error": "save the sheet as CSV"}),
    }
