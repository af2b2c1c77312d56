"""Number formats of text cells: thousands separators and decimal commas, read when a column's spelling is
unambiguous and never guessed silently."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...lazy import LazyModule
from ...validation import DPInputError
from .source import shown

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyModule("pandas")  # imported when a file is first read (cold start: see dpcore.lazy)


#: Cell patterns (after stripping spaces). "us": 45,527 / 1,234.56 / 1,234,567; "eu": 1.234,56 /
#: 45,5 / 1.234.567; "comma3": one comma followed by exactly three digits (45,527: thousands or
#: decimal comma?); "dot3": one dot followed by exactly three digits (1.234: decimal point or
#: thousands?); "point": a plain decimal point (12.5); "int": digits only.
NUMBER_PATTERNS: tuple[tuple[str, str], ...] = (
    ("int", r"[+-]?\d+"),
    ("comma3", r"[+-]?\d{1,3},\d{3}"),
    ("dot3", r"[+-]?\d{1,3}\.\d{3}"),
    ("us", r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?"),
    ("eu", r"[+-]?\d{1,3}(?:\.\d{3})+(?:,\d*)?|[+-]?\d*,\d+"),
    ("point", r"[+-]?\d*\.\d+(?:[eE][+-]?\d+)?|[+-]?\d+\.(?:[eE][+-]?\d+)?|[+-]?\d+[eE][+-]?\d+"),
)


@dataclass(frozen=True)
class NumberFormat:
    """How the text cells of one column are written, as :func:`detect_number_format` read them.

    style: "plain" (digits and a decimal point: pandas reads them), "thousands_comma" (45,527 and
        1,234.56: commas group thousands), "decimal_comma" (1.234,56 and 45,5: the comma is the
        decimal mark, dots group thousands), "ambiguous" (every separator could be either, e.g.
        only values like 45,527 in a ";"-separated file), "mixed" (both styles in one column) or
        "text" (some cells are not numbers in any style).
    examples: up to three cells that decided the style (or that are not numbers).
    """

    style: str
    examples: tuple[str, ...] = ()

    @property
    def parseable(self) -> bool:
        return self.style in ("plain", "thousands_comma", "decimal_comma")

    def explain(self, column: str) -> str:
        """A sentence a user can act on: what the cells look like and what to change."""
        ex = ", ".join(repr(e) for e in self.examples)
        if self.style == "ambiguous":
            first = self.examples[0] if self.examples else "45,527"
            sep = "," if "," in first else "."
            plain_thousands = first.replace(sep, "")
            as_decimal = first.replace(",", ".")
            return (
                f"column {shown(column)} has values such as {ex} where the {sep!r} could be a thousands "
                f"separator ({first} = {plain_thousands}) or a decimal mark ({first} = {as_decimal}); "
                f"no guess is made. Write the incomes without thousands separators (e.g. "
                f"{plain_thousands}) and with a decimal point, then upload the file again"
            )
        if self.style == "mixed":
            return (
                f"column {shown(column)} mixes two number styles ({ex}): some cells use a decimal "
                "comma, others a decimal point with comma thousands. Write every income the same "
                "way, without thousands separators and with a decimal point (e.g. 1234.56)"
            )
        if self.style == "text":
            return (
                f"column {shown(column)} holds cells that are not numbers, e.g. {ex}. Write incomes as "
                "plain numbers such as 31500.50 (no currency signs, units or words), or choose "
                "another column"
            )
        return f"column {shown(column)} holds numbers ({self.style.replace('_', ' ')})"


def _classify_cells(cells: pd.Series) -> pd.Series:
    """The pattern name of each (stripped, non-missing) text cell; "bad" when none fits."""
    kind = pd.Series("bad", index=cells.index, dtype=object)
    for name, pattern in reversed(NUMBER_PATTERNS):  # earlier patterns win
        kind[cells.str.fullmatch(pattern)] = name
    return kind


def detect_number_format(cells: Any, *, delimiter: str | None = None) -> NumberFormat:
    """How the non-missing text cells ``cells`` write their numbers (see :class:`NumberFormat`).

    Decision (a cell shape that fits one convention only decides; never a silent guess):

    * any cell that is not a number in any style -> "text";
    * thousands-comma shapes (1,234,567 / 1,234.56 / 12.5) and decimal-comma shapes
      (1.234,56 / 1.234.567 / 45,5) in one column -> "mixed";
    * one of them (plus cells that fit both such as 45,527 or 1.234) -> that style;
    * only cells like 45,527 -> thousands when the file is comma-separated (a comma there cannot
      be the decimal mark of a spreadsheet export: it would need quotes in every cell), else
      "ambiguous"; only cells like 1.234 -> "plain" (a decimal point) except in a
      ";"-separated file, where it is "ambiguous" (1.234 is a thousand there).

    ``delimiter``: the CSV field separator ("," ";" TAB "|"), or None for Parquet/Excel cells.
    """
    series = pd.Series(cells, dtype=object).dropna().astype(str).str.strip()
    series = series[series != ""]
    if series.empty:
        return NumberFormat("plain")
    unique = pd.Series(pd.unique(series.to_numpy()))
    head = _classify_cells(unique.head(2000))
    if (head == "bad").any():  # cheap exit for label columns (one pass over a sample)
        return NumberFormat("text", tuple(unique.head(2000)[head == "bad"].head(3)))
    kinds = _classify_cells(unique)
    found = set(kinds)

    def examples(*names: str) -> tuple[str, ...]:
        return tuple(unique[kinds.isin(names)].head(3))

    if "bad" in found:
        return NumberFormat("text", examples("bad"))
    us = {"us", "point"} & found
    eu = {"eu"} & found
    if us and eu:
        return NumberFormat("mixed", examples("us", "point")[:2] + examples("eu")[:1])
    if "us" in found or ("point" in found and "comma3" in found):
        return NumberFormat("thousands_comma", examples("us", "comma3"))
    if eu:
        return NumberFormat("decimal_comma", examples("eu", "dot3", "comma3"))
    if "comma3" in found and "dot3" in found:
        return NumberFormat("ambiguous", examples("comma3", "dot3"))
    if "comma3" in found:
        if delimiter == ",":
            return NumberFormat("thousands_comma", examples("comma3"))
        return NumberFormat("ambiguous", examples("comma3"))
    if "dot3" in found and delimiter == ";":
        return NumberFormat("ambiguous", examples("dot3"))
    return NumberFormat("plain")


def parse_numbers(cells: Any, number_format: NumberFormat) -> np.ndarray:
    """The text cells as floats under ``number_format`` (missing cells -> NaN).

    Raises DPInputError when the format is not parseable (ambiguous, mixed or text) with
    :meth:`NumberFormat.explain`'s message.
    """
    if not isinstance(number_format, NumberFormat):
        raise TypeError("number_format must be a NumberFormat (see detect_number_format)")
    series = pd.Series(cells, dtype=object)
    if not number_format.parseable:
        raise DPInputError(number_format.explain(str(getattr(cells, "name", "the column"))))
    text = series.where(series.isna(), series.astype(str).str.strip())
    if number_format.style == "thousands_comma":
        text = text.str.replace(",", "", regex=False)
    elif number_format.style == "decimal_comma":
        text = text.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
    text = text.where(text != "", None)
    return pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)


_STYLE_NOTES = {
    "thousands_comma": "commas as thousands separators",
    "decimal_comma": "a decimal comma ('.' or nothing between thousands)",
}


def normalize_number_columns(
    frame: pd.DataFrame, delimiter: str | None, label: str, text_frame: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """Convert the text columns written with thousands separators or decimal commas to floats.

    ``text_frame``: the raw text of columns pandas already parsed as numbers but that need a second
    look (a ";"-separated file, where 1.234 may be a thousand). Columns whose format is ambiguous
    or mixed stay text; their reason is kept in ``frame.attrs["number_formats"]`` for
    :func:`explain_column` and the upload page. Returns the frame and notes.
    """
    notes: list[str] = []
    problems: dict[str, str] = {}
    columns = {}
    for i, (name, dtype) in enumerate(frame.dtypes.items()):  # dtypes first: a column at a time is slow
        if text_frame is not None and name in text_frame.columns:
            col = text_frame[name]
        elif pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            col = frame.iloc[:, i]
        else:
            continue
        present = col.dropna()
        if present.empty:
            continue
        fmt = detect_number_format(present, delimiter=delimiter)
        if fmt.style in ("thousands_comma", "decimal_comma"):
            columns[name] = parse_numbers(col, fmt)
            ex = fmt.examples[0] if fmt.examples else ""
            notes.append(
                f"column {name!r} is written with {_STYLE_NOTES[fmt.style]}: read {ex!r} as "
                f"{parse_numbers(pd.Series([ex]), fmt)[0]:,.6g}"
            )
        elif fmt.style == "plain" and text_frame is not None and name in text_frame.columns:
            continue  # pandas' own parse stands
        elif fmt.style in ("ambiguous", "mixed"):
            problems[str(name)] = fmt.explain(str(name))
            if text_frame is not None and name in text_frame.columns:
                columns[name] = text_frame[name]  # keep the text: never a silent decimal point
    if columns:
        frame = frame.copy()
        for name, values in columns.items():
            frame[name] = values
    frame.attrs["number_formats"] = problems
    return frame, notes
