"""CSV files out: the input's columns unchanged, the translations and translation_error beside
them, written chunk by chunk as the input is read again (never whole), every cell a spreadsheet
would run as a formula neutralised. Reading is in table.py."""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from glm1m.translation.fanout import Result
from glm1m.translation.table import CHUNK_ROWS, NUMBER, CsvSource, read_chunks

# Excel and LibreOffice run a cell starting with one of these as a formula: OWASP's CSV-injection
# list (=, +, -, @, TAB, CR), and NUL from OWASP ASVS 5.0 (requirement 1.2.10).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\0")
CsvWriter = Callable[[pd.DataFrame, Path, bool], None]


def csv_headers(source: CsvSource, language: str) -> list[str]:
    """One column: "translation" (as ever); several: "<column> (<language>)" for each."""
    if len(source.chosen) == 1:
        return ["translation"]
    return translation_columns(source.columns, source.chosen, language)


def write_csv(source: CsvSource, results: Mapping[int, Result], into: Path, language: str,
              not_reached: str) -> None:
    """The input's columns unchanged plus the translations and translation_error. The chunk
    writer is looked up here as it runs: a test fills the disk through it."""
    headers, count, index = csv_headers(source, language), len(source.chosen), 0
    for n, chunk in enumerate(read_chunks(source)):
        translations: list[list[str]] = [[] for _ in headers]
        errors = []
        for _ in range(len(chunk)):
            row_errors = []
            for j in range(count):
                result = results.get(index)
                error = not_reached if result is None else result.error
                translations[j].append((result.translation or "") if result and error is None else "")
                if error is not None:
                    row_errors.append(f"{source.chosen[j]}: {error}" if count > 1 else error)
                index += 1
            errors.append("; ".join(row_errors))
        columns: dict[str, object] = dict(zip(headers, translations, strict=True))
        chunk = chunk.assign(**columns, translation_error=errors)
        write_chunk(pd.DataFrame(chunk), into, n == 0)


def neutralise(cell: str) -> str:
    """Prefix a quote to cells a spreadsheet would run as a formula; plain numbers stay numbers."""
    if cell.startswith(FORMULA_START) and not NUMBER.fullmatch(cell.strip()):
        return "'" + cell
    return cell



def write_chunk(frame: pd.DataFrame, out: Path, first: bool) -> None:
    r"""Append a chunk; the first one writes the header and a UTF-8 BOM so Excel shows Chinese.
    Header and cells are neutralised. Every field is quoted: QUOTE_MINIMAL quotes only fields
    with the line terminator ("\n"), a comma or a quote, so a cell's bare "\r" (a line break to
    Excel, LibreOffice and Python's csv) split its row in two, and readers that also break lines
    at \x0b, \x0c, \x1c-\x1e, \x85, U+2028 or U+2029 (like str.splitlines) could do the same."""
    safe = frame.map(lambda v: neutralise(v) if isinstance(v, str) else v)
    safe.columns = [neutralise(str(c)) for c in frame.columns]
    safe.to_csv(out, mode="w" if first else "a", header=first, index=False,
                encoding="utf-8-sig" if first else "utf-8", quoting=csv.QUOTE_ALL)



def is_finished_output(path: Path) -> bool:
    """Whether `path` is an output of this module with rows, every one of them translated."""
    rows = 0
    try:
        for chunk in pd.read_csv(path, encoding="utf-8-sig", dtype=str, keep_default_na=False,
                                 usecols=["translation_error"], chunksize=CHUNK_ROWS):
            if (chunk["translation_error"] != "").any():
                return False
            rows += len(chunk)
    except (OSError, ValueError):  # missing, not a CSV, no such column, not UTF-8
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
