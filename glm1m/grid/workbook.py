"""The grid written out: one row a document, one column a question, each cell the answer and its
citations as the model wrote them ("42 days [p. 12]"); a marked cell begins with "⚠ ".

XLSX: three sheets, "grid", "passages" (each cited location: document, location, its words) and
"problems" (each marked cell or unread document: document, question, why). CSV holds one table a
file: OUT.csv the grid, OUT.passages.csv and OUT.problems.csv beside it. Every cell is text as the
translation writers keep it (translation/xlsx_output.put, csv_output.neutralise): an answer
beginning "=" is never a formula.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from glm1m.catalog import render
from glm1m.grid.cells import Row, mark, unread_cell
from glm1m.grid.questions import Question

SHEETS = ("grid", "passages", "problems")


def tables(rows: Sequence[Row], questions: Sequence[Question], lang: str
           ) -> dict[str, list[list[str]]]:
    """Each sheet's rows, its header first."""
    document = render(lang, "grid_sheet_document")
    grid = [[document, *(q.name for q in questions)]]
    passages = [[document, render(lang, "grid_sheet_question"), render(lang, "grid_sheet_location"),
                 render(lang, "grid_sheet_words")]]
    problems = [[document, render(lang, "grid_sheet_question"), render(lang, "grid_sheet_problem")]]
    for row in rows:
        if row.problem is not None:
            grid.append([row.document, *(unread_cell(lang) for _ in questions)])
            problems.append([row.document, "", row.problem])
            continue
        grid.append([row.document, *(mark(cell) for cell in row.cells)])
        for question, cell in zip(questions, row.cells, strict=True):
            passages += [[p.document, question.name, p.location, p.words] for p in cell.passages]
            problems += [[row.document, question.name, problem] for problem in cell.problems]
    return {"grid": grid, "passages": passages, "problems": problems}


def write_grid(rows: Sequence[Row], questions: Sequence[Question], output: Path, lang: str) -> None:
    """Write the grid to `output` (.xlsx, or .csv with its two companions), replacing it whole
    (written beside it, then moved over it: a stop while writing leaves the last one)."""
    writer = writer_of(output)
    assert writer is not None, output  # the CLI checked it (writer_of) before asking anything
    writer(tables(rows, questions, lang), output)


Writer = Callable[[dict[str, list[list[str]]], Path], None]


def writer_of(output: Path) -> Writer | None:
    """How a grid is written in the table format `output`'s name says (the tables' registry,
    translation/formats.py); None when it names none."""
    from glm1m.translation import table, xlsx
    from glm1m.translation.formats import named

    writers: dict[object, Writer] = {table.FORMAT: write_csvs, xlsx.FORMAT: write_xlsx}
    return writers.get(named(output.name))


def write_csvs(sheets: dict[str, list[list[str]]], output: Path) -> None:
    for name, table in sheets.items():
        write_csv(table, csv_path(output, name))


def csv_path(output: Path, sheet: str) -> Path:
    """OUT.csv for the grid, OUT.passages.csv and OUT.problems.csv for the others."""
    return output if sheet == "grid" else output.with_name(f"{output.stem}.{sheet}{output.suffix}")


def write_csv(table: list[list[str]], path: Path) -> None:
    from glm1m.translation.csv_output import neutralise
    partial = path.with_name(path.name + ".part")
    with partial.open("w", encoding="utf-8-sig", newline="") as f:  # BOM: Excel reads it as UTF-8
        csv.writer(f).writerows([[neutralise(cell) for cell in row] for row in table])
    partial.replace(path)


def write_xlsx(sheets: dict[str, list[list[str]]], output: Path) -> None:
    from openpyxl import Workbook  # type: ignore[import-untyped]
    from openpyxl.styles import Alignment, Font  # type: ignore[import-untyped]

    from glm1m.translation.xlsx_output import put

    book = Workbook()
    book.remove(book.active)
    for name, table in sheets.items():
        sheet = book.create_sheet(name)
        for r, values in enumerate(table, start=1):
            for c, value in enumerate(values, start=1):
                put(sheet.cell(r, c), value, None)
                sheet.cell(r, c).alignment = Alignment(wrap_text=True, vertical="top")
        for cell in sheet[1]:
            cell.font = Font(bold=True)
        sheet.freeze_panes = "B2" if name == "grid" else "A2"
        for letter, width in zip("ABCD", widths(table), strict=False):
            sheet.column_dimensions[letter].width = width
    partial = output.with_name(output.name + ".part")
    book.save(partial)
    partial.replace(output)


def widths(table: list[list[str]]) -> Iterator[int]:
    """Columns wide enough for their longest line, within 12 to 60 characters."""
    for column in zip(*table, strict=False):
        yield max(12, min(60, max((len(line) for v in column for line in v.splitlines() or [""]),
                                  default=12)))
