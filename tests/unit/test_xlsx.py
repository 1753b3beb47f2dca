"""XLSX translation against a scripted model client: the output is the input workbook with the
translations appended, every other sheet, cell, formula and style kept; several columns; stop and
resume; formulas and merged cells in the text column; model output that looks like a formula."""

from __future__ import annotations

import asyncio
import re
import zipfile
from pathlib import Path

import openpyxl
import pytest
from openpyxl.styles import Font

from glm1m.translation.fanout import Job
from glm1m.translation.formats import open_table
from glm1m.translation.job import NOT_REACHED, checkpoint_path, run_job
from tests.support.scripted_llm import ScriptedLlm

pytestmark = pytest.mark.timeout(20)
JOB = Job("en", concurrency=3, retries=0)
ROWS = 6


def make_book(path: Path, rows: int = ROWS) -> Path:
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "合同"
    ws.append(["id", "text", "price", "note"])
    for i in range(rows):
        ws.append([i, f"第{i}条 clause {i}", 10.5 * i, f"备注 {i}"])
    ws["A1"].font = Font(bold=True)
    ws["B1"].font = Font(bold=True, color="FF0000")
    for row in range(2, rows + 2):
        ws.cell(row, 3).number_format = "#,##0.00"
    ws.cell(rows + 2, 3, f"=SUM(C2:C{rows + 1})")
    ws.column_dimensions["B"].width = 40
    other = book.create_sheet("Summary")
    other["A1"] = "total"
    other["B1"] = f"='合同'!C{rows + 2}"
    other["B1"].font = Font(italic=True)
    other["A2"] = "checked by 法务"
    book.save(path)
    return path


def with_cached_value(path: Path, ref: str, value: str) -> None:
    """Give a formula cell the cached result Excel would have saved (openpyxl writes none)."""
    with zipfile.ZipFile(path) as z:
        parts = {name: z.read(name) for name in z.namelist()}
    sheet = parts["xl/worksheets/sheet1.xml"].decode()
    sheet, n = re.subn(rf'<c r="{ref}"([^>]*)><f>(.*?)</f><v\s*/?>(</v>)?',
                       rf'<c r="{ref}"\1 t="str"><f>\2</f><v>{value}</v>', sheet)
    assert n == 1, sheet
    parts["xl/worksheets/sheet1.xml"] = sheet.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in parts.items():
            z.writestr(name, body)


def style(cell) -> tuple:
    font = cell.font
    return (font.b, font.i, font.color.rgb if font.color else None, cell.number_format,
            cell.fill.fgColor.rgb, cell.alignment.wrap_text)


async def translate(path: Path, llm: ScriptedLlm, columns: tuple[str, ...] = ("text",),
                    sheet: str | None = None, out: Path | None = None):
    source = open_table(path, sheet=sheet, columns=columns)
    return await run_job(source, JOB, llm, out or path.with_name("out.xlsx"))


async def test_round_trip_keeps_every_other_sheet_cell_formula_and_style(tmp_path: Path) -> None:
    make_book(tmp_path / "in.xlsx")
    summary = await translate(tmp_path / "in.xlsx", ScriptedLlm())
    assert summary.complete and summary.line().startswith(f"{ROWS} of {ROWS} rows translated")
    before = openpyxl.load_workbook(tmp_path / "in.xlsx")
    after = openpyxl.load_workbook(tmp_path / "out.xlsx")
    assert after.sheetnames == ["合同", "Summary"]
    ws, old = after["合同"], before["合同"]
    # Every cell of the input is where it was, with its value or formula and its style.
    for row in old.iter_rows():
        for cell in row:
            new = ws[cell.coordinate]
            assert (new.value, style(new)) == (cell.value, style(cell))
    assert ws["A1"].font.b and ws["C2"].number_format == "#,##0.00"
    assert ws[f"C{ROWS + 2}"].value == f"=SUM(C2:C{ROWS + 1})"
    assert after["Summary"]["B1"].value == f"='合同'!C{ROWS + 2}" and after["Summary"]["B1"].font.i
    # The translations sit in a new column after the last used one, headed like their source.
    assert [c.value for c in ws[1]] == ["id", "text", "price", "note", "text (en)", "translation_error"]
    assert [ws.cell(r, 5).value for r in range(2, ROWS + 2)] == [f"第{i}条 CLAUSE {i}" for i in range(ROWS)]
    assert style(ws["E1"]) == style(ws["B1"]) and ws.column_dimensions["E"].width == 40
    assert all(ws.cell(r, 6).value is None for r in range(2, ROWS + 3))
    assert after.calculation.fullCalcOnLoad  # Excel recomputes the formulas openpyxl kept
    assert not checkpoint_path(tmp_path / "out.xlsx").exists()


async def test_several_columns_each_get_their_own_translation_column(tmp_path: Path) -> None:
    make_book(tmp_path / "in.xlsx")
    summary = await translate(tmp_path / "in.xlsx", ScriptedLlm(), columns=("note", "B"))
    assert summary.complete and (summary.total, summary.unit) == (2 * ROWS, "cells")
    ws = openpyxl.load_workbook(tmp_path / "out.xlsx")["合同"]
    assert [c.value for c in ws[1]][4:] == ["note (en)", "text (en)", "translation_error"]
    assert [ws.cell(r, 5).value for r in range(2, ROWS + 2)] == [f"备注 {i}" for i in range(ROWS)]
    assert [ws.cell(r, 6).value for r in range(2, ROWS + 2)] == [f"第{i}条 CLAUSE {i}" for i in range(ROWS)]


async def test_a_stopped_workbook_job_keeps_finished_rows_and_resumes(tmp_path: Path) -> None:
    make_book(tmp_path / "in.xlsx")
    first_three = {f"第{i}条 clause {i}" for i in range(3)}
    llm = ScriptedLlm(hold=lambda text: text not in first_three)
    task = asyncio.create_task(translate(tmp_path / "in.xlsx", llm))
    await llm.wait_finished(3)
    await llm.wait_started(6)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    ws = openpyxl.load_workbook(tmp_path / "out.xlsx")["合同"]  # written although stopped
    assert [ws.cell(r, 5).value for r in range(2, 5)] == [f"第{i}条 CLAUSE {i}" for i in range(3)]
    assert [ws.cell(r, 6).value for r in range(5, ROWS + 2)] == [NOT_REACHED] * (ROWS - 3)
    assert checkpoint_path(tmp_path / "out.xlsx").exists()
    again = ScriptedLlm()
    summary = await translate(tmp_path / "in.xlsx", again)
    assert summary.complete and sorted(c.text for c in again.calls) == sorted(
        f"第{i}条 clause {i}" for i in range(3, ROWS))
    ws = openpyxl.load_workbook(tmp_path / "out.xlsx")["合同"]
    assert [ws.cell(r, 5).value for r in range(2, ROWS + 2)] == [f"第{i}条 CLAUSE {i}" for i in range(ROWS)]
    assert all(ws.cell(r, 6).value is None for r in range(2, ROWS + 2))


async def test_formulas_translate_their_cached_text_and_stay_formulas(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    ws = book.active
    ws.append(["text", "n"])
    ws.append(["plain", 1])
    ws.append(['=A2&" more"', 2])  # a formula in the text column, cached by "Excel" below
    ws.append(["=1+1", 3])  # a formula without a cached result: nothing shown, nothing sent
    ws.append([42, 4])  # a number is not text
    book.save(tmp_path / "in.xlsx")
    with_cached_value(tmp_path / "in.xlsx", "A3", "plain more")
    llm = ScriptedLlm()
    summary = await translate(tmp_path / "in.xlsx", llm, columns=("text",))
    assert summary.complete and sorted(c.text for c in llm.calls) == ["plain", "plain more"]
    out = openpyxl.load_workbook(tmp_path / "out.xlsx").active
    assert [out.cell(r, 1).value for r in range(2, 6)] == ["plain", '=A2&" more"', "=1+1", 42]
    assert [out.cell(r, 3).value for r in range(2, 6)] == ["PLAIN", "PLAIN MORE", None, None]


async def test_a_title_row_and_merged_cells_in_the_text_column(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    ws = book.active
    ws["A1"] = "2024 合同清单"
    ws.merge_cells("A1:C1")  # a title across the table: not the header
    ws.append(["id", "text", "note"])
    ws.append([1, "one", "x"])
    ws.append([2, "two, over two rows", "y"])
    ws.append([3, None, "z"])
    ws.merge_cells("B4:B5")
    ws.append([4, "four", "w"])
    book.save(tmp_path / "in.xlsx")
    source = open_table(tmp_path / "in.xlsx")
    assert (source.header_row, source.columns, source.column) == (2, ("id", "text", "note"), "text")
    summary = await run_job(source, JOB, ScriptedLlm(), tmp_path / "out.xlsx")
    assert summary.total == 4 and summary.complete
    out = openpyxl.load_workbook(tmp_path / "out.xlsx").active
    assert out["A1"].value == "2024 合同清单" and "A1:C1" in {str(r) for r in out.merged_cells.ranges}
    assert [out.cell(r, 4).value for r in range(2, 7)] == [
        "text (en)", "ONE", "TWO, OVER TWO ROWS", None, "FOUR"]
    assert "D4:D5" in {str(r) for r in out.merged_cells.ranges}  # merged beside its source


async def test_a_translation_that_looks_like_a_formula_stays_text(tmp_path: Path) -> None:
    make_book(tmp_path / "in.xlsx", rows=3)
    replies = iter(['=HYPERLINK("http://evil.example","click")', "-1+2", "a\x01b"])
    await translate(tmp_path / "in.xlsx", ScriptedLlm(reply=lambda messages: next(replies)),
                    out=tmp_path / "out.xlsx")
    ws = openpyxl.load_workbook(tmp_path / "out.xlsx")["合同"]
    cells = [ws.cell(r, 5) for r in range(2, 5)]
    assert {c.value for c in cells} == {'=HYPERLINK("http://evil.example","click")', "-1+2", "a_x0001_b"}
    assert all(c.data_type == "s" for c in cells)  # text, not formulas
    assert all(c.quotePrefix for c in cells if c.value[0] in "=-")
    with zipfile.ZipFile(tmp_path / "out.xlsx") as z:
        assert "HYPERLINK" not in z.read("xl/worksheets/sheet1.xml").decode().split("<f>")[-1][:40]


async def test_the_sheet_is_chosen_by_name_and_columns_by_header_or_letter(tmp_path: Path) -> None:
    make_book(tmp_path / "in.xlsx")
    source = open_table(tmp_path / "in.xlsx", sheet="Summary", columns=("A",))
    assert (source.sheet, source.chosen, source.sheets) == ("Summary", ("total",), ("合同", "Summary"))
    default = open_table(tmp_path / "in.xlsx")
    assert (default.sheet, default.chosen) == ("合同", ("text",))  # the first text column
