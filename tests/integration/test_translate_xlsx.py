"""`glm1m translate book.xlsx --sheet S --column A --column B` through the real vLLM demo server.

The fault proxy records which answer the server gave to which cell, so every translation can be
checked against its source cell although the demo model's answers are noise.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import openpyxl
import pytest
from openpyxl.styles import Font

from glm1m.translation.job import checkpoint_path
from tests.conftest import ROOT
from tests.support.service import Service

pytestmark = pytest.mark.server


def make_book(path: Path, rows: int) -> tuple[list[str], list[str]]:
    book = openpyxl.Workbook()
    intro = book.active
    intro.title = "说明"
    intro["A1"] = "This workbook lists clauses; the sheet 条款 is translated."
    intro["A1"].font = Font(bold=True)
    ws = book.create_sheet("条款")
    ws.append(["id", "text", "count", "note"])
    texts = [f"第{i}行：合同第{i}条。" if i % 2 else f"row {i}: the clause number {i}." for i in range(rows)]
    notes = [f"备注 {i}: 甲方 signs." for i in range(rows)]
    for i in range(rows):
        ws.append([i, texts[i], i * 3, notes[i]])
    ws.cell(rows + 2, 3, f"=SUM(C2:C{rows + 1})")
    intro["A2"] = f"='条款'!C{rows + 2}"
    book.save(path)
    return texts, notes


def translate_cli(args: list[str], log_dir: Path, name: str) -> Service:
    return Service(name, [sys.executable, "-m", "glm1m.cli", "translate", *args],
                   ready=r"translating column", log_dir=log_dir, cwd=str(ROOT))


def test_two_columns_of_one_sheet_come_back_in_the_workbook(tmp_path, healthy_proxy) -> None:
    texts, notes = make_book(tmp_path / "book.xlsx", 40)
    cli = translate_cli([str(tmp_path / "book.xlsx"), "--sheet", "条款", "--column", "text",
                         "--column", "D", "--to", "en", "--max-tokens", "6",
                         "--base-url", f"{healthy_proxy.url}/v1"], tmp_path, "xlsx")
    try:
        assert cli.wait_exit(300) == 0
    finally:
        cli.stop()
    assert "reading sheet '条款' of book.xlsx; translating columns 'text', 'note'" in cli.output()
    assert "80 of 80 cells translated" in cli.output()
    out = tmp_path / "book.translated.xlsx"  # the default output, in the input's format
    book = openpyxl.load_workbook(out)
    assert book.sheetnames == ["说明", "条款"]
    intro = book["说明"]
    assert intro["A1"].value.startswith("This workbook") and intro["A1"].font.b
    assert intro["A2"].value == "='条款'!C42"
    ws = book["条款"]
    assert [c.value for c in ws[1]] == ["id", "text", "count", "note", "text (en)", "note (en)",
                                        "translation_error"]
    assert ws["C42"].value == "=SUM(C2:C41)"
    answers = healthy_proxy.answers_by_prompt()
    for i in range(40):
        row = [c.value for c in ws[i + 2]]
        assert row[:4] == [i, texts[i], i * 3, notes[i]]
        assert row[4] == answers[texts[i]][0].strip() and row[5] == answers[notes[i]][0].strip()
        assert row[6] is None
    assert not checkpoint_path(out).exists()


def test_ctrl_c_keeps_finished_cells_and_the_same_command_continues(tmp_path, healthy_proxy) -> None:
    texts, _ = make_book(tmp_path / "book.xlsx", 300)
    args = [str(tmp_path / "book.xlsx"), "--sheet", "条款", "--column", "B", "--to", "en",
            "--max-tokens", "24", "--concurrency", "4", "--base-url", f"{healthy_proxy.url}/v1"]
    first = translate_cli(args, tmp_path, "xlsx-first")
    try:
        assert healthy_proxy.completions_reached(30).wait(120)
        first.proc.send_signal(signal.SIGINT)
        assert first.wait_exit(60) == 130
    finally:
        first.stop()
    assert "Finished rows are in" in first.output() and "Traceback" not in first.output()
    out = tmp_path / "book.translated.xlsx"
    stopped = openpyxl.load_workbook(out)["条款"]
    done = [r for r in range(2, 302) if stopped.cell(r, 5).value]
    # 30 answers had gone through the proxy; up to --concurrency (4) of them were still on their way
    # back when Ctrl-C came, and those cells are marked not reached (seen: 29 in a CI run).
    assert 30 - 4 <= len(done) < 300 and [stopped.cell(r, 2).value for r in range(2, 302)] == texts
    assert all("job stopped before this row" in stopped.cell(r, 6).value
               for r in range(2, 302) if r not in done)
    healthy_proxy.reset()
    second = translate_cli(args, tmp_path, "xlsx-second")
    try:
        assert second.wait_exit(300) == 0
    finally:
        second.stop()
    again = set(healthy_proxy.answers_by_prompt())
    assert not again & {texts[r - 2] for r in done}  # finished cells were not sent again
    ws = openpyxl.load_workbook(out)["条款"]
    assert all(ws.cell(r, 5).value and ws.cell(r, 6).value is None for r in range(2, 302))
