"""The translated workbook: the input workbook itself, every sheet, cell, formula and style kept,
with the translations in new columns headed "<source header> (<language>)" and a
translation_error column after them, appended right of the sheet's last used column.

Why appended, not inserted beside each source column: inserting a column moves every cell right
of it, and openpyxl does not rewrite what points at those cells (formulas on every sheet, defined
names, merged ranges, tables, conditional formats, charts), so a formula would silently read the
wrong cell. Appended columns leave every existing cell at its address, so nothing that refers to
one can break. Each new column takes its source column's width and each cell its source cell's
style; a source column's vertical merges (one text over several rows) are merged beside it too.

Translations are written as text cells whatever they start with: the model's "=HYPERLINK(...)"
stays text (openpyxl would otherwise store it as a formula), and one starting with = + - @ gets
Excel's quote prefix, so editing the cell in Excel keeps it text too (as CSV output's "'" does).
"""

from __future__ import annotations

import math
import re
import zipfile
from collections.abc import Iterable, Mapping
from copy import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glm1m.errors import TableError
from glm1m.translation.csv_output import FORMULA_START, translation_columns
from glm1m.translation.fanout import Result
from glm1m.translation.xlsx_container import all_rows, load

if TYPE_CHECKING:  # only named: xlsx.py hands the source and its rows in, and imports this lazily
    from glm1m.translation.xlsx import XlsxSource

ERROR_HEADER = "translation_error"
MAX_COLUMNS = 16_384  # Excel's last column, XFD


def translated_headers(source: XlsxSource, language: str) -> list[str]:
    return translation_columns(source.columns, source.chosen, language)


def assemble_xlsx(source: XlsxSource, rows: Iterable[tuple[int, tuple[str, ...]]],
                  results: Mapping[int, Result], into: Path, language: str, not_reached: str) -> None:
    """Write the workbook with the results (cell index = data row * columns chosen + column);
    `rows` are the source's data rows read again (xlsx.rows: sheet row number, texts)."""
    from openpyxl.utils import get_column_letter  # type: ignore[import-untyped]

    # Whole: formulas and styles kept; rich text (a word in bold) too, where openpyxl keeps its text.
    book = load(source.path, source.shown_name, rich_text=rich_text_safe(source.path))
    exact_numbers(book)
    ws = book[source.sheet]
    first_new = _first_free_column(ws)
    count = len(source.chosen)
    if first_new + count > MAX_COLUMNS:
        raise TableError(key="sheet_no_free_columns", sheet=repr(source.sheet), name=source.shown_name)
    positions = [source.position(c) + 1 for c in source.chosen]
    for j, (col, header) in enumerate(zip(positions, translated_headers(source, language),
                                          strict=True)):
        put(ws.cell(source.header_row, first_new + j), header, _existing(ws, source.header_row, col))
        width = ws.column_dimensions[get_column_letter(col)].width
        if width:
            ws.column_dimensions[get_column_letter(first_new + j)].width = width
    error_col = first_new + count
    put(ws.cell(source.header_row, error_col), ERROR_HEADER,
        _existing(ws, source.header_row, positions[0]))
    for n, (number, _) in enumerate(rows):
        errors = []
        for j, col in enumerate(positions):
            result = results.get(n * count + j)
            error = not_reached if result is None else result.error
            if error is not None:
                errors.append(f"{source.chosen[j]!r}: {error}" if count > 1 else error)
            elif result is not None and result.translation:
                put(ws.cell(number, first_new + j), result.translation, _existing(ws, number, col))
        if errors:
            put(ws.cell(number, error_col), "; ".join(errors), None)
    _merge_beside(ws, source, positions, first_new)
    if book.calculation is None:  # a workbook without calculation properties (calcPr)
        from openpyxl.workbook.properties import CalcProperties  # type: ignore[import-untyped]

        book.calculation = CalcProperties()
    book.calculation.fullCalcOnLoad = True  # openpyxl drops formulas' cached results: recompute
    try:
        book.save(into)
    except (OSError, MemoryError):
        raise  # the job's sentence for a full disk; a MemoryError is not the file's fault
    except Exception as error:  # what openpyxl read it cannot write back
        raise TableError(key="xlsx_write_failed", name=source.shown_name,
                       error=type(error).__name__) from error


# A string of plain text followed by formatted runs (<si><t>a</t><r>...</r></si>, or the same in
# a cell's inline <is>; valid OOXML): openpyxl 3.1.5 reads it with rich_text=True as its first
# text only, dropping the runs (seen on calamine's richtext-after-plain.xlsx). Such a workbook is
# read as plain text instead: its words kept, the bold or colour inside those cells lost.
PLAIN_THEN_RUNS = re.compile(rb"<(\w+:)?(si|is)>\s*<(\w+:)?t(\s[^>]*)?>[^<]*</(\w+:)?t>\s*<(\w+:)?r>")


def rich_text_safe(path: Path) -> bool:
    """Whether openpyxl keeps every string's text when it reads the rich text too. The parts are
    read whole: the workbook itself is loaded whole right after, ~10 times their size."""
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            lower = name.lower()
            if (lower == "xl/sharedstrings.xml" or lower.startswith("xl/worksheets/")) and \
                    PLAIN_THEN_RUNS.search(archive.read(name)):
                return False
    return True


def exact_numbers(book: Any) -> None:
    """Every number cell of every sheet written back as the same number. openpyxl 3.1.5 reads a
    cell's text with float() (exact) but writes it with "%.16g" (compat.strings.safe_string),
    which drops a 17th significant digit: 0.30000000000000004 came back 0.3 (issue 33 counted 34
    of 1,368 cells of calamine's strict sample). A number that "%.16g" would change gets its repr
    (the shortest text float() reads back as the same double; an int's every digit) as the cell's
    value, its type still "n": the writer passes a str through safe_string unchanged. No public
    hook writes a number's text; tests/unit/test_tables_as_they_came.py breaks when a release
    changes either side."""
    for ws in book.worksheets:
        for cell in ws._cells.values():
            value = cell._value
            if cell.data_type != "n":
                continue
            if type(value) is int and abs(value) >= 10**16:  # "%.16g" rounds it (or overflows)
                cell._value = str(value)
            elif type(value) is float and math.isfinite(value) and float(f"{value:.16g}") != value:
                cell._value = repr(value)


def _first_free_column(ws: Any) -> int:
    """Right of every value, merged range and table. Not ws.max_column: that counts cells with
    a style only, and Gnumeric writes such cells out to the last column (XFD)."""
    from openpyxl.utils import range_boundaries

    used = max((col for (_, col), cell in ws._cells.items() if cell.value is not None), default=0)
    merged = max((m.max_col for m in ws.merged_cells.ranges), default=0)
    tables = max((range_boundaries(t.ref)[2] for t in ws.tables.values()), default=0)
    return max(used, merged, tables) + 1


def _existing(ws: Any, row: int, col: int) -> Any:
    """The cell there, if the sheet has one (ws.cell would add an empty one to the output)."""
    return ws._cells.get((row, col))


def put(cell: Any, text: str, like: Any) -> None:
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE  # type: ignore[import-untyped]

    # Controls XML cannot hold, as Excel itself escapes them (it reads _x0001_ back as U+0001).
    cell.value = ILLEGAL_CHARACTERS_RE.sub(lambda m: f"_x{ord(m.group()):04X}_", text)
    cell.data_type = "s"
    if like is not None and getattr(like, "has_style", False):
        cell._style = copy(like._style)
    if text.startswith(FORMULA_START):
        cell.quotePrefix = True


def _merge_beside(ws: Any, source: XlsxSource, positions: list[int], first_new: int) -> None:
    for merged in list(ws.merged_cells.ranges):
        if merged.min_col != merged.max_col or merged.min_row <= source.header_row:
            continue
        for j, col in enumerate(positions):
            if merged.min_col == col and merged.max_row > merged.min_row:
                ws.merge_cells(start_row=merged.min_row, end_row=merged.max_row,
                               start_column=first_new + j, end_column=first_new + j)


def is_finished_xlsx(source: XlsxSource, output: Path) -> bool:
    """Whether `output` is a translation of this sheet with rows, none of them with an error."""
    if not output.exists():
        return False
    try:
        book = load(output, output.name, read_only=True, data_only=True)
    except TableError:
        return False
    try:
        if source.sheet not in book.sheetnames:
            return False
        found, column, data = False, -1, 0
        for number, values in enumerate(all_rows(book[source.sheet]), start=1):
            if number == source.header_row:
                column = max((i for i, v in enumerate(values) if v == ERROR_HEADER), default=-1)
                found = column >= 0
            elif number > source.header_row and found:
                if column < len(values) and values[column] not in (None, ""):
                    return False
                data += any(v is not None for v in values)
        return found and data > 0
    finally:
        book.close()
