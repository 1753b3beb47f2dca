"""CSV files in and out: encoding detection, streaming chunks, the column to translate, and an
Excel-safe export. Plain pandas; nothing here imports Chainlit."""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from glm1m.errors import CsvError

CHUNK_ROWS = 5_000
# Excel and LibreOffice run a cell starting with one of these as a formula (OWASP CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?%?")
ENCODING_NAMES = {"utf-8-sig": "UTF-8 with BOM", "utf-8": "UTF-8", "gb18030": "GB18030 (GBK)"}



@dataclass(frozen=True)
class CsvSource:
    path: Path
    encoding: str
    columns: tuple[str, ...]
    column: str  # the one to translate
    name: str = ""  # as the user knows the file (an upload is stored under another name)

    @property
    def shown_name(self) -> str:
        return self.name or self.path.name

    @property
    def encoding_name(self) -> str:
        return ENCODING_NAMES.get(self.encoding, self.encoding)


def detect_encoding(path: Path, name: str | None = None) -> str:
    """UTF-8 with BOM, UTF-8, else GB18030 (a superset of GBK and GB2312, which Chinese Excel
    writes). Decodes the whole file incrementally, so a bad byte deep in it is not missed."""
    with path.open("rb") as f:
        if f.read(3) == codecs.BOM_UTF8:
            return "utf-8-sig"
    decoder: codecs.IncrementalDecoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with path.open("rb") as f:
            while block := f.read(1 << 20):
                decoder.decode(block)
        decoder.decode(b"", final=True)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        with path.open("rb") as f:
            decoder = codecs.getincrementaldecoder("gb18030")()
            while block := f.read(1 << 20):
                decoder.decode(block)
            decoder.decode(b"", final=True)  # a file cut inside its last character
        return "gb18030"
    except UnicodeDecodeError as error:
        raise CsvError(f"{name or path.name} is neither UTF-8 nor GBK/GB18030 text (byte {error.start} "
                       f"cannot be read). Save it again as 'CSV UTF-8' from your spreadsheet.") from error


def _reader(path: Path, encoding: str, **kw) -> Iterator[pd.DataFrame]:
    # dtype=str and keep_default_na=False: cells stay exactly as written ("NA", "001", "").
    return pd.read_csv(path, encoding=encoding, dtype=str, keep_default_na=False,
                       chunksize=CHUNK_ROWS, **kw)


def read_chunks(source: CsvSource) -> Iterator[pd.DataFrame]:
    """The file in chunks of CHUNK_ROWS rows, so 100k rows never sit in memory at once."""
    try:
        yield from _reader(source.path, source.encoding)
    except pd.errors.ParserError as error:
        raise CsvError(f"{source.shown_name} has a malformed row ({error}). Fix that row, or save "
                       f"the file again from your spreadsheet.") from error


def open_source(path: Path, column: str | None = None, name: str | None = None) -> CsvSource:
    """Check the file and choose the column: the named one, else the first text column.
    `name` is the file's name in messages (default: the path's)."""
    name = name or path.name
    if not path.exists() or path.stat().st_size == 0:
        raise CsvError(f"{name} is empty: there is nothing to translate.")
    encoding = detect_encoding(path, name)
    try:
        first = next(_reader(path, encoding), None)
    except pd.errors.EmptyDataError as error:
        raise CsvError(f"{name} has no header row and no data.") from error
    except pd.errors.ParserError as error:
        raise CsvError(f"{name} is not a readable CSV ({error}).") from error
    if first is None or first.empty:
        raise CsvError(f"{name} has a header but no rows: there is nothing to translate.")
    columns = tuple(str(c) for c in first.columns)
    if column is not None and column not in columns:
        raise CsvError(f"{name} has no column named {column!r}; its columns are "
                       f"{', '.join(columns)}.")
    return CsvSource(path, encoding, columns, column or first_text_column(first), name)


def first_text_column(frame: pd.DataFrame) -> str:
    """The first column with a non-empty cell that is not a number (ids and prices are skipped)."""
    for name in frame.columns:
        values = frame[name].astype(str)
        if any(v.strip() and not NUMBER.fullmatch(v.strip()) for v in values):
            return str(name)
    return str(frame.columns[0])


def neutralise(cell: str) -> str:
    """Prefix a quote to cells a spreadsheet would run as a formula; plain numbers stay numbers."""
    if cell.startswith(FORMULA_START) and not NUMBER.fullmatch(cell.strip()):
        return "'" + cell
    return cell


def write_chunk(frame: pd.DataFrame, out: Path, first: bool) -> None:
    """Append a chunk; the first one writes the header and a UTF-8 BOM so Excel shows Chinese."""
    safe = frame.map(lambda v: neutralise(v) if isinstance(v, str) else v)
    safe.to_csv(out, mode="w" if first else "a", header=first, index=False,
                encoding="utf-8-sig" if first else "utf-8", quoting=csv.QUOTE_MINIMAL)


def read_glossary(path: Path, name: str | None = None) -> tuple[tuple[str, str], ...]:
    """A two-column CSV of term → translation (a header row is optional)."""
    name = name or path.name
    encoding = detect_encoding(path, name)
    try:
        frame = pd.read_csv(path, encoding=encoding, dtype=str, keep_default_na=False, header=None)
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as error:
        raise CsvError(f"The glossary {name} is not a two-column CSV ({error}).") from error
    if frame.shape[1] < 2:
        raise CsvError(f"The glossary {name} needs two columns: term, translation.")
    pairs = [(str(a).strip(), str(b).strip()) for a, b in zip(frame[0], frame[1], strict=True)
             if str(a).strip()]
    if pairs and pairs[0][0].lower() in ("term", "source", "术语", "原文"):
        pairs = pairs[1:]  # a header row
    return tuple(pairs)
