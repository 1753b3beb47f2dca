"""The table formats a translation job reads and writes back (CSV, XLSX), behind one set of
functions: job.py, the CLI and the app know a source, never its format.

Cells are numbered row by row: cell index = data row * columns chosen + the column's place among
them, so with one column the index is the row's, as checkpoints of earlier versions recorded it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd

from glm1m.errors import CsvError
from glm1m.settings import Settings
from glm1m.translation.fanout import Result
from glm1m.translation.table import (
    CsvSource,
    is_finished_output,
    is_text,
    open_source,
    read_chunks,
    text_columns as text_column_names,
    translation_columns,
    write_chunk,
)
from glm1m.translation.xlsx import (
    OLE_MAGIC,
    SCAN_ROWS,
    XlsxSource,
    cell_chunks as xlsx_chunks,
    is_workbook_name,
    open_workbook,
    rows as xlsx_rows,
)

Source = CsvSource | XlsxSource
ZIP_MAGIC = b"PK\x03\x04"
CsvWriter = Callable[[pd.DataFrame, Path, bool], None]
XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def open_table(path: Path, name: str | None = None, sheet: str | None = None,
               columns: Sequence[str] = (), settings: Settings | None = None) -> Source:
    """A CSV or an .xlsx workbook (by its name, or its first bytes when the name says neither),
    with the sheet and columns chosen (default: the sheet Excel opens on, its first text column)."""
    name = name or path.name
    if is_workbook(path, name):
        return open_workbook(path, sheet, columns, name, settings)
    if sheet is not None:
        raise CsvError(f"{name} is a CSV file, which has no sheets: leave out the sheet.")
    return open_source(path, None, name, columns=columns)


def is_workbook(path: Path, name: str) -> bool:
    """An .xlsx or .xls by its name, or a zip or OLE file by its first bytes (a CSV is neither)."""
    head = b""
    if path.exists():
        with path.open("rb") as f:
            head = f.read(8)
    return (is_workbook_name(name) or Path(name).suffix.lower() == ".xls"
            or head.startswith((ZIP_MAGIC, OLE_MAGIC)))


def text_columns(source: Source) -> tuple[str, ...]:
    """The columns with text in their first rows (a CSV's first chunk, a sheet's first SCAN_ROWS
    rows, as the default column is found): the ones worth offering. A column of numbers, dates
    or empty cells (an id, an amount, a day) has nothing to translate."""
    if isinstance(source, XlsxSource):
        every = replace(source, chosen=source.columns)
        found: set[int] = set()
        each = xlsx_rows(every)
        for _, texts in itertools.islice(each, SCAN_ROWS):
            found.update(i for i, text in enumerate(texts) if is_text(text))
        del each  # the generator ends now, and closes the workbook it holds open
        return tuple(c for i, c in enumerate(source.columns) if i in found)
    first = next(read_chunks(source), None)
    return tuple(text_column_names(first)) if first is not None else ()


def chosen(source: Source) -> tuple[str, ...]:
    return source.chosen


def unit(source: Source) -> str:
    return "rows" if len(source.chosen) == 1 else "cells"


def output_suffix(source: Source) -> str:
    return ".xlsx" if isinstance(source, XlsxSource) else ".csv"


def mime(source: Source) -> str:
    return XLSX_MIME if isinstance(source, XlsxSource) else "text/csv"


def mime_of(output: Path) -> str:
    return XLSX_MIME if output.suffix.lower() == ".xlsx" else "text/csv"


def describe(source: Source) -> str:
    """What will be read and translated, for the line a door shows first."""
    names = ", ".join(repr(c) for c in source.chosen)
    what = f"column{'s' if len(source.chosen) > 1 else ''} {names}"
    if isinstance(source, XlsxSource):
        return f"reading sheet {source.sheet!r} of {source.shown_name}; translating {what}"
    return (f"reading {source.shown_name} as {source.encoding_name}{source.layout_words}; "
            f"translating {what}")


def key_settings(source: Source) -> dict[str, object]:
    """What of the source, besides its bytes, makes two jobs the same (one CSV column: the key
    earlier versions used, so their checkpoints still resume)."""
    if isinstance(source, XlsxSource):
        return {"sheet": source.sheet, "columns": list(source.chosen)}
    if len(source.chosen) == 1:
        return {"column": source.column}
    return {"columns": list(source.chosen)}


def cell_chunks(source: Source) -> Iterator[list[str]]:
    """Every chosen cell's text in index order, a chunk of rows at a time (never the whole file)."""
    if isinstance(source, XlsxSource):
        yield from xlsx_chunks(source)
        return
    positions = source.positions  # by place: a header may name two columns alike, or none
    for chunk in read_chunks(source):
        frame = chunk.iloc[:, positions]
        yield [str(v) for row in frame.itertuples(index=False, name=None) for v in row]


def write_output(source: Source, results: Mapping[int, Result], into: Path, language: str,
                 not_reached: str, write_csv: CsvWriter = write_chunk) -> None:
    """The output in the input's format, written into `into` (the caller moves it into place)."""
    if isinstance(source, XlsxSource):
        from glm1m.translation.xlsx_output import assemble_xlsx

        assemble_xlsx(source, results, into, language, not_reached)
        return
    _write_csv(source, results, into, language, not_reached, write_csv)


def csv_headers(source: CsvSource, language: str) -> list[str]:
    """One column: "translation" (as ever); several: "<column> (<language>)" for each."""
    if len(source.chosen) == 1:
        return ["translation"]
    return translation_columns(source.columns, source.chosen, language)


def _write_csv(source: CsvSource, results: Mapping[int, Result], into: Path, language: str,
               not_reached: str, write: CsvWriter) -> None:
    """The input's columns unchanged plus the translations and translation_error."""
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
        write(pd.DataFrame(chunk), into, n == 0)


def is_finished(source: Source, output: Path) -> bool:
    """Whether `output` holds this job's result with every cell translated."""
    if isinstance(source, XlsxSource):
        from glm1m.translation.xlsx_output import is_finished_xlsx

        return is_finished_xlsx(source, output)
    return is_finished_output(output)
