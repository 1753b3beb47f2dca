"""An .xlsx translation in the real app: attach a two-sheet workbook, choose the sheet and two
columns, and get the workbook back with the other sheet intact."""

from __future__ import annotations

import io

import openpyxl
import pytest
from openpyxl.styles import Font

from tests.support.chainlit_client import ChainlitSession

pytestmark = pytest.mark.app
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def make_book(path, rows: int) -> tuple[list[str], list[str]]:
    book = openpyxl.Workbook()
    first = book.active
    first.title = "封面"  # the sheet Excel opens on: not the one chosen
    first["A1"], first["B1"] = "季度报告", "=1+2"
    first["A1"].font = Font(bold=True, size=16)
    ws = book.create_sheet("条款")
    ws.append(["编号", "内容", "备注"])
    texts = [f"第{i}行。 row {i}" for i in range(rows)]
    notes = [f"备注{i}" for i in range(rows)]
    for i in range(rows):
        ws.append([i, texts[i], notes[i]])
    book.save(path)
    return texts, notes


def chooser(sheet: str, steps: list[str]):
    """Answer the sheet question with `sheet`, then the column questions with `steps` in turn
    ("several", a column's header, "start")."""
    plan = iter(steps)

    def choose(actions: list[dict]) -> dict:
        if "sheet" in actions[0]["payload"]:
            return next(a for a in actions if a["payload"]["sheet"] == sheet)
        want = next(plan)
        return next(a for a in actions if a["payload"].get(want) is True
                    or a["payload"].get("column") == want)

    return choose


async def test_a_chosen_sheet_comes_back_as_xlsx_with_the_other_sheet_intact(
        tmp_path, chat: ChainlitSession) -> None:
    texts, notes = make_book(tmp_path / "报告.xlsx", 12)
    ref = await chat.upload(tmp_path / "报告.xlsx", mime=XLSX)
    chat.choose_action = chooser("条款", ["several", "内容", "备注", "start"])
    start = chat.mark()
    await chat.send("", file_refs=[ref])
    done = await chat.wait_for(lambda e: e.name == "new_message"
                               and "24 of 24 cells translated" in (e.data.get("output") or ""), 300, start)
    asks = [e for e in chat.events[start:] if e.name == "ask"]
    assert len(asks) == 5  # the sheet, "several", two columns, start
    element = await chat.wait_for(lambda e: e.name == "element" and e.data.get("type") == "file"
                                  and e.data.get("name") == "报告.translated.xlsx", 60, start)
    assert element.data.get("forId") == done.data["id"]
    book = openpyxl.load_workbook(io.BytesIO(await chat.download(element.data)))
    assert book.sheetnames == ["封面", "条款"]
    cover = book["封面"]
    assert (cover["A1"].value, cover["B1"].value, cover["A1"].font.b, cover["A1"].font.sz) == (
        "季度报告", "=1+2", True, 16)
    ws = book["条款"]
    headers = [c.value for c in ws[1]]
    assert headers[:3] == ["编号", "内容", "备注"] and headers[5] == "translation_error"
    language = headers[3].removeprefix("内容 (").removesuffix(")")  # the session's target language
    assert language and headers[3:5] == [f"内容 ({language})", f"备注 ({language})"]
    rows = [[c.value for c in r] for r in ws.iter_rows(min_row=2)]
    assert [r[:3] for r in rows] == [[i, texts[i], notes[i]] for i in range(12)]
    assert all(r[3] and r[4] and r[5] is None for r in rows)


async def test_a_workbook_with_one_sheet_asks_only_the_column(tmp_path, chat: ChainlitSession) -> None:
    book = openpyxl.Workbook()
    book.active.append(["id", "text", "note"])  # two text columns: the id is not offered
    book.active.append([1, "你好", "备注"])
    book.save(tmp_path / "one.xlsx")
    chat.choose_action = chooser("-", ["text"])
    start = chat.mark()
    await chat.send("", file_refs=[await chat.upload(tmp_path / "one.xlsx", mime=XLSX)])
    await chat.wait_for(lambda e: e.name == "element" and e.data.get("name") == "one.translated.xlsx",
                        120, start)
    assert len([e for e in chat.events[start:] if e.name == "ask"]) == 1


async def test_a_password_protected_workbook_gets_its_sentence(tmp_path, chat: ChainlitSession) -> None:
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504 + "EncryptedPackage".encode("utf-16-le")
    (tmp_path / "secret.xlsx").write_bytes(ole + b"\0" * 4096)
    start = await chat.ask("", file_refs=[await chat.upload(tmp_path / "secret.xlsx", mime=XLSX)])
    errors = [m["output"] for m in chat.messages(start) if m.get("isError")]
    assert any("secret.xlsx is protected with a password" in e for e in errors), errors
    assert not any("Traceback" in (m.get("output") or "") for m in chat.messages(start))
