"""The bytes of a user's file (bytes, a path or a binary file object, within the size limit), gzip within the limit,
the decoding of CSV text, its delimiter, and how sizes and values are shown in messages."""

from __future__ import annotations

import csv
import zlib
from pathlib import Path
from typing import Any

from ...validation import DPInputError

#: The upload limit in megabytes, as `.streamlit/config.toml` sets ``server.maxUploadSize``.
MAX_UPLOAD_MB = 50
#: Default cap on the size of a file (bytes, after gzip decompression). One limit in bytes
#: everywhere: Streamlit's uploader turns ``maxUploadSize`` into bytes with 1 MB = 10**6 bytes
#: (1024**2 only in a browser on Windows; frontend ``utils``), its server with 1024**2
#: (``starlette_routes``: ``maxUploadSize * 1024 * 1024``), nginx (`run.sh serve`) with 1024**2 + 1 MiB.
#: The smallest, 50,000,000 bytes, is the limit the browser states and shows ("50MB"), so it is
#: the one dpcore enforces and names in its messages (with the exact number of bytes).
DEFAULT_MAX_BYTES = MAX_UPLOAD_MB * 1_000_000
#: Default cap on the number of data rows.
DEFAULT_MAX_ROWS = 2_000_000
#: Longest text shown from a bad cell in an error message.
_SHOW_CHARS = 40


def shown(value: Any) -> str:
    """A value as it can be shown in a message: repr, cut to a few dozen characters."""
    text = str(value)
    if len(text) > _SHOW_CHARS:
        text = text[:_SHOW_CHARS] + f"... ({len(text):,} characters)"
    return repr(text) if not text.endswith("characters)") else "'" + text + "'"


def format_bytes(n: int) -> str:
    """A size in the units the browser's uploader uses (1 MB = 10**6 bytes, see DEFAULT_MAX_BYTES)."""
    if n >= 1_000_000_000:
        return f"{n / 1_000_000_000:.1f} GB"
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    if n >= 1000:
        return f"{n / 1000:.1f} KB"
    return f"{n} bytes"


def format_limit(n: int) -> str:
    """A limit in exact bytes, with its size in MB when it is a whole number of them: "50 MB
    (50,000,000 bytes)" (the browser's uploader says "50MB" for the same limit)."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000} MB ({n:,} bytes)"
    return f"{n:,} bytes"


def read_source(source: Any, max_bytes: int) -> tuple[bytes, str]:
    """The raw bytes of ``source`` (bytes, path or binary file object) and a display name."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        label = "the uploaded file"
    elif isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise DPInputError(f"file not found: {path}")
        size = path.stat().st_size
        if size > max_bytes:
            raise DPInputError(
                f"the file {path.name} is {format_bytes(size)}, larger than the {format_limit(max_bytes)} "
                "limit; use a smaller extract (a sample of rows or fewer columns)"
            )
        data = path.read_bytes()
        label = path.name
    elif hasattr(source, "read"):
        data = source.read(max_bytes + 1)
        if isinstance(data, str):
            raise TypeError("open the file in binary mode ('rb') or pass its bytes")
        label = getattr(source, "name", "the uploaded file")
    else:
        raise TypeError(f"source must be bytes, a path or a binary file object, got {type(source).__name__}")
    if len(data) > max_bytes:
        shown = "more than " + format_bytes(max_bytes) if hasattr(source, "read") else format_bytes(len(data))
        raise DPInputError(
            f"{label} is {shown}, larger than the {format_limit(max_bytes)} limit; use a smaller extract "
            "(a sample of rows or fewer columns)"
        )
    return data, str(label)


def gunzip(data: bytes, max_bytes: int, label: str) -> bytes:
    """Decompress gzip data without ever holding more than ``max_bytes`` of output (zip bombs)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data, max_bytes + 1)
    except zlib.error as exc:
        raise DPInputError(f"{label} looks gzip-compressed but cannot be decompressed ({exc})") from None
    if len(out) > max_bytes or d.unconsumed_tail:
        raise DPInputError(
            f"{label} decompresses to more than the {format_limit(max_bytes)} limit; use a smaller extract"
        )
    return out


def _utf16_without_bom(head: bytes) -> str | None:
    """ "utf-16-le" / "utf-16-be" when ``head`` looks like UTF-16 text without a BOM (ASCII letters
    alternating with NUL bytes), else None."""
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) >= 0.9 * len(odd) and even.count(0) <= 0.1 * len(even):
        return "utf-16-le"
    if even.count(0) >= 0.9 * len(even) and odd.count(0) <= 0.1 * len(odd):
        return "utf-16-be"
    return None


def decode_text(data: bytes, label: str) -> tuple[str, str | None]:
    """Decode CSV bytes: UTF-16 (with a BOM, or plainly alternating NUL bytes), UTF-8 (with or
    without BOM), else Latin-1; refuse binary files."""
    bom = data[:2] in (b"\xff\xfe", b"\xfe\xff")
    without_bom = None if bom else _utf16_without_bom(data[:4096])
    if bom or without_bom:
        encoding = without_bom or "utf-16"
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as exc:
            raise DPInputError(
                f"{label} starts like UTF-16 text but cannot be decoded as UTF-16 "
                f"(byte {exc.start}); save it as CSV (UTF-8) and upload that"
            ) from None
        if "\x00" in text[:65536]:
            raise DPInputError(
                f"{label} is not a text file (it contains NUL characters after UTF-16 "
                "decoding); save it as CSV (UTF-8) or Parquet"
            )
        return text.lstrip("\ufeff"), "the file is UTF-16 text; it was decoded as such"
    head = data[:65536]
    if b"\x00" in head:
        raise DPInputError(
            f"{label} is not a text file (it contains NUL bytes): it may be a spreadsheet, an "
            "archive or UTF-16 text. Save it as CSV (UTF-8) or Parquet and upload that"
        )
    # Share of control characters other than tab / newline / carriage return / form feed.
    ctrl = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13))
    if head and ctrl / len(head) > 0.01:
        raise DPInputError(
            f"{label} does not look like CSV text ({ctrl} control characters in the first "
            f"{len(head):,} bytes); save it as CSV (UTF-8) or Parquet and upload that"
        )
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
        raise DPInputError(f"{label} is neither UTF-8 nor Latin-1 text; save it as CSV (UTF-8)") from None
    return text, "the file is not valid UTF-8; it was read as Latin-1 (Western European)"


def sniff_delimiter(text: str) -> str:
    sample = text[:65536]
    # the header line decides when it has a clear delimiter
    first = sample.split("\n", 1)[0]
    counts = {d: first.count(d) for d in (",", ";", "\t", "|")}
    best = max(counts, key=lambda d: counts[d])
    if counts[best] > 0:
        return best
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","  # one column: any delimiter works
