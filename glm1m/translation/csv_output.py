"""CSV files out: the input's lines unchanged (a title or comment above the header too), the
translations and translation_error beside the header's columns, written chunk by chunk as the input
is read again (never whole), every cell a spreadsheet would run as a formula neutralised. Reading is
in table.py, which hands the chunks in."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from glm1m.errors import TableError
from glm1m.translation.cells import FIELD_LIMIT, NUMBER
from glm1m.translation.fanout import Result

if TYPE_CHECKING:  # only named: table.py hands the source and its chunks in, and imports this lazily
    from glm1m.translation.table import CsvSource

# Excel and LibreOffice run a cell starting with one of these as a formula: OWASP's CSV-injection
# list (=, +, -, @, TAB, CR), and NUL from OWASP ASVS 5.0 (requirement 1.2.10).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\0")
# A sign alone is no formula: Excel and LibreOffice keep a cell of "-" or "+" as text (a dash
# for "none" is common in real tables), so it is written as it came.
LONE_SIGNS = ("-", "+")
CsvWriter = Callable[[pd.DataFrame, Path, bool], None]


def csv_headers(source: CsvSource, language: str) -> list[str]:
    """One column: "translation" (as ever); several: "<column> (<language>)" for each."""
    if len(source.chosen) == 1:
        return ["translation"]
    return translation_columns(source.columns, source.chosen, language)


def write_csv(source: CsvSource, chunks: Iterable[pd.DataFrame], results: Mapping[int, Result],
              into: Path, language: str, not_reached: str) -> None:
    """The input's columns unchanged plus the translations and translation_error, beside each of
    `chunks` (the input read again: table.read_chunks). The chunk writer is looked up here as it
    runs: a test fills the disk through it."""
    headers, count, index = csv_headers(source, language), len(source.chosen), 0
    above = rows_above(source)  # a title, comments: lines of the output as they were of the input
    for n, chunk in enumerate(chunks):
        translations: list[list[str]] = [[] for _ in headers]
        errors = []
        for _ in range(len(chunk)):
            row_errors = []
            for j in range(count):
                result = results.get(index)
                error = not_reached if result is None else result.error
                translations[j].append((result.translation or "") if result and error is None else "")
                if error is not None:
                    row_errors.append(f"{source.chosen[j]!r}: {error}" if count > 1 else error)
                index += 1
            errors.append("; ".join(row_errors))
        columns: dict[str, object] = dict(zip(headers, translations, strict=True))
        chunk = chunk.assign(**columns, translation_error=errors)
        write_chunk(pd.DataFrame(chunk), into, n == 0, above if n == 0 else ())


def rows_above(source: CsvSource) -> list[list[str]]:
    """The records above the header (a title, comments, blank lines), as the reader split them:
    at most TITLE_ROWS of them."""
    if source.header_row <= 1:
        return []
    csv.field_size_limit(FIELD_LIMIT)
    try:
        with source.path.open(encoding=source.encoding, newline="") as f:
            return list(islice(csv.reader(f, delimiter=source.delimiter), source.header_row - 1))
    except UnicodeDecodeError as error:  # detect_encoding read it all: it changed since
        raise TableError(key="csv_changed", name=source.shown_name,
                       encoding=source.encoding_name) from error


def neutralise(cell: str) -> str:
    """Prefix a quote to cells a spreadsheet would run as a formula; plain numbers (a negative
    one too) and a sign alone stay as they are."""
    if cell.startswith(FORMULA_START) and not NUMBER.fullmatch(cell.strip()) and cell not in LONE_SIGNS:
        return "'" + cell
    return cell


def write_chunk(frame: pd.DataFrame, out: Path, first: bool,
                above: Sequence[Sequence[str]] = ()) -> None:
    r"""Append a chunk; the first one writes a UTF-8 BOM (so Excel shows Chinese), the records
    `above` the header (a title, comments, blank lines: each the line it was, not widened), and
    the header. Every cell is neutralised. Every field is quoted: QUOTE_MINIMAL quotes only fields
    with the line terminator ("\n"), a comma or a quote, so a cell's bare "\r" (a line break to
    Excel, LibreOffice and Python's csv) split its row in two, and readers that also break lines
    at \x0b, \x0c, \x1c-\x1e, \x85, U+2028 or U+2029 (like str.splitlines) could do the same."""
    safe = frame.map(lambda v: neutralise(v) if isinstance(v, str) else v)
    safe.columns = [neutralise(str(c)) for c in frame.columns]
    with out.open("w" if first else "a", encoding="utf-8-sig" if first else "utf-8", newline="") as f:
        if first:
            csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(
                [neutralise(cell) for cell in record] for record in above)
        safe.to_csv(f, header=first, index=False, quoting=csv.QUOTE_ALL, lineterminator="\n")



def is_finished_output(path: Path, header_row: int = 1) -> bool:
    """Whether `path` is an output of this module with rows, every one of them translated; its
    header is record `header_row` (the records above it are the input's title and comments),
    counted by the csv module as table.py counted the input's (a title's quoted cell may hold a
    line break)."""
    csv.field_size_limit(FIELD_LIMIT)
    rows = 0
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            records = csv.reader(f)
            header = next(islice(records, header_row - 1, None), None)
            if header is None or "translation_error" not in header:
                return False
            column = len(header) - 1 - header[::-1].index("translation_error")
            for record in records:
                if column < len(record) and record[column] != "":
                    return False
                rows += 1
    except (OSError, ValueError, csv.Error):  # missing, not a CSV, not UTF-8
        return False
    return rows > 0



def translation_columns(existing: Sequence[str], chosen: Sequence[str], language: str) -> list[str]:
    """"<column> (<language>)" for each chosen column, numbered where a name is already taken."""
    taken, headers = set(existing), []
    for column in chosen:
        header, n = f"{column} ({language})", 2
        while header in taken:
            header, n = f"{column} ({language}) {n}", n + 1
        taken.add(header)
        headers.append(header)
    return headers
