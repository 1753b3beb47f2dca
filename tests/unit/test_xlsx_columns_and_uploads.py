"""Several columns of a CSV (the CSV side of `--column A --column B`), rich text and charts kept in
a workbook, and .xlsx uploads routed to translation."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont
from openpyxl.chart import BarChart, Reference

from glm1m.chainlit_app.uploads import sort_uploads
from glm1m.errors import TableError
from glm1m.translation.fanout import Job
from glm1m.translation.formats import open_table
from glm1m.translation.job import job_key, run_job
from glm1m.translation.table import open_source
from tests.support.scripted_llm import ScriptedLlm

pytestmark = pytest.mark.timeout(20)
JOB = Job("en", concurrency=2, retries=0)


def write_csv(path: Path) -> Path:
    path.write_text("id,text,note\n" + "".join(f"{i},row {i},note {i}\n" for i in range(5)),
                    encoding="utf-8")
    return path


async def test_several_csv_columns_each_get_a_translation_column(tmp_path: Path) -> None:
    source = open_table(write_csv(tmp_path / "in.csv"), columns=("note", "text"))
    assert source.chosen == ("note", "text") and source.column == "note"
    summary = await run_job(source, JOB, ScriptedLlm(), tmp_path / "out.csv")
    assert summary.complete and summary.line().startswith("10 of 10 cells translated")
    out = pd.read_csv(tmp_path / "out.csv", encoding="utf-8-sig", dtype=str, keep_default_na=False)
    assert list(out.columns) == ["id", "text", "note", "note (en)", "text (en)", "translation_error"]
    assert list(out["note (en)"]) == [f"NOTE {i}" for i in range(5)]
    assert list(out["text (en)"]) == [f"ROW {i}" for i in range(5)]


def test_one_csv_column_keeps_the_job_key_of_earlier_versions(tmp_path: Path) -> None:
    # A checkpoint written before several columns existed still resumes its job.
    from dataclasses import asdict

    from glm1m.translation.checkpoint import fingerprint

    path = write_csv(tmp_path / "in.csv")
    before = {k: v for k, v in asdict(JOB).items() if k != "lang"}  # Job had no `lang` then
    old = fingerprint(path, {"column": "text", **before, "concurrency": None})
    assert job_key(open_source(path, "text"), JOB) == old
    assert job_key(open_table(path, columns=("text", "note")), JOB) != old


def test_csv_refuses_a_sheet_and_an_unknown_column(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "in.csv")
    with pytest.raises(TableError, match="is a CSV file, which has no sheets"):
        open_table(path, sheet="Sheet1")
    with pytest.raises(TableError, match="no column named 'price'; its columns are 'id', 'text', 'note'"):
        open_table(path, columns=("text", "price"))


async def test_rich_text_and_a_chart_survive_the_round_trip(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    ws = book.active
    ws.append(["text", "n"])
    ws.append([CellRichText(TextBlock(InlineFont(b=True), "加粗"), " and plain"), 3])
    ws.append(["second", 5])
    chart = BarChart()
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=3), titles_from_data=True)
    ws.add_chart(chart, "E5")
    book.save(tmp_path / "in.xlsx")
    summary = await run_job(open_table(tmp_path / "in.xlsx"), JOB, ScriptedLlm(), tmp_path / "out.xlsx")
    assert summary.complete
    out = openpyxl.load_workbook(tmp_path / "out.xlsx", rich_text=True).active
    assert isinstance(out["A2"].value, CellRichText) and str(out["A2"].value) == "加粗 and plain"
    assert [out["C2"].value, out["C3"].value] == ["加粗 AND PLAIN", "SECOND"]
    assert len(out._charts) == 1


def test_xlsx_uploads_go_to_translation_and_a_glossary_is_a_csv(tmp_path: Path) -> None:
    class Element:
        def __init__(self, name: str, mime: str | None = None) -> None:
            self.name, self.path, self.mime = name, str(tmp_path / name), mime

    xlsx = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    uploads = sort_uploads([Element("报告.xlsx", xlsx), Element("glossary.csv", "text/csv")])
    assert [u.name for u in uploads.tables] == ["报告.xlsx"]
    assert [u.name for u in uploads.glossary] == ["glossary.csv"]
    uploads = sort_uploads([Element("terms.xlsx"), Element("data.csv")])
    assert [u.name for u in uploads.tables] == ["terms.xlsx", "data.csv"] and uploads.glossary == []
