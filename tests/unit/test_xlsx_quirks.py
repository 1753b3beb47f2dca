"""Workbooks as other programs write them, each met in real files (calamine's test workbooks):
no calculation properties, a shared string of plain text then formatted runs, styled empty cells
out to the last column, a declared size smaller than the sheet."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import openpyxl
import pytest
from openpyxl.styles import Font

from glm1m.translation.fanout import Job
from glm1m.translation.formats import open_table
from glm1m.translation.job import run_job
from tests.support.scripted_llm import ScriptedLlm

pytestmark = pytest.mark.timeout(20)
JOB = Job("en", concurrency=2, retries=0)


def rewrite(path: Path, part: str, change) -> None:
    with zipfile.ZipFile(path) as z:
        parts = {name: z.read(name) for name in z.namelist()}
    parts[part] = change(parts[part].decode()).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in parts.items():
            z.writestr(name, body)


def simple(path: Path) -> Path:
    book = openpyxl.Workbook()
    book.active.append(["text", "n"])
    book.active.append(["tval", 1])
    book.active.append(["other", 2])
    book.save(path)
    return path


async def translate(path: Path) -> openpyxl.worksheet.worksheet.Worksheet:
    summary = await run_job(open_table(path), JOB, ScriptedLlm(), path.with_name("out.xlsx"))
    assert summary.complete
    return openpyxl.load_workbook(path.with_name("out.xlsx"), rich_text=True).active


async def test_a_workbook_without_calculation_properties(tmp_path: Path) -> None:
    path = simple(tmp_path / "in.xlsx")
    rewrite(path, "xl/workbook.xml", lambda xml: re.sub(r"<calcPr[^>]*/>", "", xml))
    with zipfile.ZipFile(path) as z:
        assert b"calcPr" not in z.read("xl/workbook.xml")
    ws = await translate(path)
    assert ws["C2"].value == "TVAL" and ws.parent.calculation.fullCalcOnLoad


async def test_plain_text_followed_by_formatted_runs_keeps_all_its_text(tmp_path: Path) -> None:
    path = simple(tmp_path / "in.xlsx")  # openpyxl writes its strings inline in the sheet
    # Valid OOXML that openpyxl's rich_text=True reads as "tval" alone.
    rewrite(path, "xl/worksheets/sheet1.xml", lambda xml: xml.replace(
        "<t>tval</t>", "<t>tval</t><r><rPr><b/></rPr><t>rval1</t></r><r><t>rval2</t></r>"))
    assert str(openpyxl.load_workbook(path, rich_text=True).active["A2"].value) == "tval"
    ws = await translate(path)
    assert str(ws["A2"].value) == "tvalrval1rval2" and ws["C2"].value == "TVALRVAL1RVAL2"


async def test_styled_empty_cells_do_not_push_the_translations_away(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    ws = book.active
    ws.append(["text", "n"])
    ws.append(["a", 1])
    for col in range(3, 200):  # formatting painted across the row, as some programs save it
        ws.cell(1, col).font = Font(bold=True)
    ws.merge_cells("D2:E2")
    book.save(tmp_path / "in.xlsx")
    out = await translate(tmp_path / "in.xlsx")
    assert [c.value for c in out[1]][:7] == ["text", "n", None, None, None, "text (en)", "translation_error"]
    assert out["F2"].value == "A"  # right of the merged D2:E2, not of the 199 styled cells
