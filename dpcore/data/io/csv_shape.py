"""The shape limits of a CSV file, the same for an upload and for the command line's engines, checked before any
parser sees the file."""

from __future__ import annotations

import numpy as np

from ...validation import DPInputError

#: The shape limits of a CSV file, the same for an upload and for the command line's engines (which read the
#: header with :func:`dpcore.engines.csv_layout` and rows in blocks of MAX_CSV_ROW_BYTES), checked before
#: any parser sees the file. Bytes of the header line: a longer "header" (a file with no line breaks, a 50 MB
#: first line) is no CSV header.
MAX_CSV_HEADER_BYTES = 1 << 20
#: Columns of a CSV file. The engines read only the columns a plan needs; pandas builds every column of an
#: upload, and millions of columns held a server process for minutes (docs/data.md, "Validation").
MAX_CSV_COLUMNS = 50_000
#: Bytes of one CSV row that every engine reads in one piece (the pandas engine parses blocks of this size; DuckDB
#: is given twice this as its ``max_line_size``); an upload's line longer than this is refused.
MAX_CSV_ROW_BYTES = 4 << 20


def count_outside_quotes(line: str, char: str) -> int:
    """How many times ``char`` occurs in ``line`` outside double quotes (a CSV header's delimiters)."""
    if '"' not in line:
        return line.count(char)
    count, quoted = 0, False
    for c in line:
        if c == '"':
            quoted = not quoted
        elif c == char and not quoted:
            count += 1
    return count


def csv_header_too_long(subject: str) -> DPInputError:
    """The refusal of a header line over :data:`MAX_CSV_HEADER_BYTES` (``subject``: "the CSV file 'x.csv'")."""
    return DPInputError(
        f"{subject} has a header line longer than {MAX_CSV_HEADER_BYTES:,} bytes (at most {MAX_CSV_COLUMNS:,} "
        "columns are read): is it a CSV file with a header?"
    )


def csv_too_many_columns(subject: str, columns: int, keep: str = "the columns the plan needs") -> DPInputError:
    return DPInputError(f"{subject} has {columns:,} columns; at most {MAX_CSV_COLUMNS:,} are read (keep {keep})")


def csv_row_too_long(subject: str) -> DPInputError:
    return DPInputError(f"{subject} has a row longer than the {MAX_CSV_ROW_BYTES:,} bytes read in one piece")


def check_csv_shape(text: str, raw: bytes, delimiter: str, label: str) -> None:
    """The command line's CSV limits on an upload, before pandas parses it: the header line's bytes, its number of
    columns (delimiters outside quotes), the longest line's bytes. ``raw``: the text's bytes in an encoding whose
    line end is the byte 10 (the file itself, or the text re-encoded as UTF-8 when it was UTF-16). Costs one
    pass over the bytes in numpy."""
    end = text.find("\n", 0, MAX_CSV_HEADER_BYTES + 1)
    header = text[: end if end >= 0 else MAX_CSV_HEADER_BYTES + 1].rstrip("\r")
    if len(header.encode("utf-8")) > MAX_CSV_HEADER_BYTES:
        raise csv_header_too_long(label)
    columns = count_outside_quotes(header, delimiter) + 1
    if columns > MAX_CSV_COLUMNS:
        raise csv_too_many_columns(label, columns, "the columns you need")
    ends = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 10)
    if len(raw) and np.diff(ends, prepend=-1, append=len(raw)).max() - 1 > MAX_CSV_ROW_BYTES:
        raise csv_row_too_long(label)
