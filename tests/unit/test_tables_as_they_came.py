"""Issue 33, item 4: a translated table is the input with the new columns. Each case is a small
file written here, shaped as the public files that showed it: a title and a comment above the
header (kept as lines), 17-digit numbers in a workbook (written back as the same numbers), a lone
'-' (no formula), a ragged record below cells holding line breaks (named by its spreadsheet row),
column names holding commas (quoted in lists), a cell longer than the served context (said as a
cell's error, in English and Chinese)."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from pathlib import Path

import openpyxl
import pytest

from glm1m.catalog import EN, ZH
from glm1m.errors import ContextTooLong, ServerBusy, TableError
from glm1m.translation.csv_output import neutralise
from glm1m.translation.fanout import Job
from glm1m.translation.formats import open_table
from glm1m.translation.job import run_job
from glm1m.translation.table import open_source
from tests.support.scripted_llm import ScriptedLlm

pytestmark = pytest.mark.timeout(20)
JOB = Job("en", concurrency=3, retries=0)


def csv_text(rows: list[list[str]], delimiter: str = ",") -> str:
    text = io.StringIO(newline="")
    csv.writer(text, delimiter=delimiter).writerows(rows)  # as a spreadsheet quotes
    return text.getvalue()


def records(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8-sig", newline="") as f:
        return list(csv.reader(f))


async def test_a_title_and_comments_above_the_header_stay_lines_of_the_csv(tmp_path: Path) -> None:
    rows = [["id", "text", "note"], ["1", "hello", "a"], ["2", "two\nlines", "-"]]
    above = '# exported by sheets, 2024\n"Quarterly report, 2024",,\n"a note\nover two lines"\n\n'
    path = tmp_path / "in.csv"
    path.write_text(above + csv_text(rows), encoding="utf-8")
    source = open_source(path)
    assert (source.header_row, source.column) == (5, "text")
    out = tmp_path / "out.csv"
    assert (await run_job(source, JOB, ScriptedLlm(), out)).complete
    assert records(out) == [["# exported by sheets", " 2024"], ["Quarterly report, 2024", "", ""],
                            ["a note\nover two lines"], [],
                            rows[0] + ["translation", "translation_error"],
                            rows[1] + ["HELLO", ""], rows[2] + ["TWO\nLINES", ""]]
    assert out.read_bytes().startswith(b'\xef\xbb\xbf"# exported by sheets"," 2024"\n')  # one BOM, first
    assert source.is_finished(out)  # found under the title: a rerun hands it back
    assert "the 4 rows above it (a title, comments) are kept as they are" in source.describe_said().render(EN)


async def test_a_semicolon_title_comes_back_as_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_bytes(("季度报告\r\n" + csv_text([["编号", "句子"], ["1", "合同"]], ";")).encode("gb18030"))
    out = tmp_path / "out.csv"
    assert (await run_job(open_source(path), JOB, ScriptedLlm(), out)).complete
    assert records(out) == [["季度报告"], ["编号", "句子", "translation", "translation_error"],
                            ["1", "合同", "合同", ""]]


def with_numbers(path: Path, sheet: str, numbers: dict[str, str]) -> None:
    """Put each number's text in a sheet's XML as Excel writes it (openpyxl would round it)."""
    with zipfile.ZipFile(path) as z:
        parts = {name: z.read(name) for name in z.namelist()}
    xml = parts[sheet].decode()
    for placeholder, text in numbers.items():
        xml, n = re.subn(rf"<v>{placeholder}</v>", f"<v>{text}</v>", xml)
        assert n == 1, xml
    parts[sheet] = xml.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in parts.items():
            z.writestr(name, body)


def number_texts(path: Path, sheet: str) -> dict[str, str]:
    """Each number cell's text in the output's XML, by its address."""
    with zipfile.ZipFile(path) as z:
        xml = z.read(sheet).decode()
    return dict(re.findall(r'<c r="([A-Z]+\d+)"[^>]*?t="n"[^>]*><v>([^<]*)</v>', xml))


async def test_seventeen_digit_numbers_come_back_as_the_same_numbers(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    ws = book.active
    ws.append(["text", "value"])
    for i, text in enumerate(["one", "two", "three", "four"], start=1):
        ws.append([text, 111110 + i])
    book.create_sheet("Other")["A1"] = 222220
    book.save(tmp_path / "in.xlsx")
    exact = {"111111": "0.30000000000000004", "111112": "1.2345678901234567E-5",
             "111113": "12345678901234567890", "111114": "2.5"}
    with_numbers(tmp_path / "in.xlsx", "xl/worksheets/sheet1.xml", exact)
    with_numbers(tmp_path / "in.xlsx", "xl/worksheets/sheet2.xml", {"222220": "0.1234567890123456789"})
    out = tmp_path / "out.xlsx"
    assert (await run_job(open_table(tmp_path / "in.xlsx"), JOB, ScriptedLlm(), out)).complete
    read = openpyxl.load_workbook(out)
    assert [read.active.cell(r, 2).value for r in range(2, 6)] == [
        0.30000000000000004, 1.2345678901234567e-05, 12345678901234567890, 2.5]
    assert read["Other"]["A1"].value == 0.12345678901234568  # the double that text reads as
    assert [read.active.cell(r, 3).value for r in range(2, 6)] == ["ONE", "TWO", "THREE", "FOUR"]
    texts = number_texts(out, "xl/worksheets/sheet1.xml")
    assert [float(texts[f"B{r}"]) for r in range(2, 6)] == [0.30000000000000004, 1.2345678901234567e-05,
                                                           1.2345678901234567e19, 2.5]
    assert texts["B4"] == "12345678901234567890"  # every digit of an integer


@pytest.mark.parametrize("cell", ["-", "+"])
def test_a_sign_alone_is_not_a_formula(cell: str) -> None:
    assert neutralise(cell) == cell


@pytest.mark.parametrize("cell", ["- item", "=", "=cmd|' /C calc'!A0", "+SUM(A1:A2)", "-2+3", "--1"])
def test_what_a_spreadsheet_runs_is_still_neutralised(cell: str) -> None:
    assert neutralise(cell) == "'" + cell


async def test_a_dash_for_none_comes_back_a_dash(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    rows = [["id", "text", "note"], ["1", "hello", "-"], ["2", "-", "+"]]
    path.write_text(csv_text(rows), encoding="utf-8")
    out = tmp_path / "out.csv"
    await run_job(open_source(path), JOB, ScriptedLlm(), out)
    assert records(out)[1:] == [["1", "hello", "-", "HELLO", ""], ["2", "-", "+", "-", ""]]


def test_a_ragged_record_below_cells_with_line_breaks_is_named_by_its_spreadsheet_row(
        tmp_path: Path) -> None:
    rows = [["id", "text", "note"]] + [[str(i), f"text {i}", "n"] for i in range(1, 11)]
    rows[3][1], rows[6][1] = "two\nlines", "two\r\nlines"
    path = tmp_path / "in.csv"
    path.write_text("Report\n" + csv_text(rows) + "11,x,y,extra\n", encoding="utf-8", newline="")
    # Row 1 the title, row 2 the header, rows 3-12 the records above: the long record is row 13
    # (a spreadsheet's row number), though it starts on the file's 15th line.
    with pytest.raises(TableError) as raised:
        open_source(path)
    assert str(raised.value).startswith("in.csv row 13 has 4 fields but its header (row 2) has 3: ")
    assert raised.value.in_language(ZH).startswith("in.csv 第 13 行有 4 个字段，而表头（第 2 行）只有 3 个。")


def test_a_csv_column_list_quotes_each_name(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text(csv_text([["Name, first", "Age", "text"], ["Ann", "3", "hi"]]), encoding="utf-8")
    with pytest.raises(TableError) as raised:
        open_source(path, "Name")
    assert str(raised.value) == ("in.csv has no column named 'Name'; "
                                 "its columns are 'Name, first', 'Age', 'text'.")
    assert raised.value.in_language(ZH).endswith("它的列是 'Name, first'、'Age'、'text'。")


async def test_a_row_error_over_several_columns_quotes_each_name(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text(csv_text([["id", "a: b; c", "text"], ["1", "bad", "bad too"]]), encoding="utf-8")
    llm = ScriptedLlm(fail=lambda text: ServerBusy(key="server_busy", status=503))
    out = tmp_path / "out.csv"
    await run_job(open_source(path, columns=["a: b; c", "text"]), JOB, llm, out)
    busy = ServerBusy(key="server_busy", status=503)
    assert records(out)[1][-1] == f"'a: b; c': {busy}; 'text': {busy}"


def test_a_sheet_column_and_sheet_list_quotes_each_name(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    book.active.title = "Data, 2024"
    book.active.append(["Name, first", None, "text"])
    book.active.append(["Ann", 3, "hi"])
    book.create_sheet("Notes")["A1"] = "x"
    book.save(tmp_path / "b.xlsx")
    with pytest.raises(TableError) as raised:
        open_table(tmp_path / "b.xlsx", columns=("Name",))
    assert str(raised.value) == ("Sheet 'Data, 2024' of b.xlsx has no column 'Name'; "
                                 "its columns are 'Name, first' (A), 'B', 'text' (C).")
    with pytest.raises(TableError) as raised:
        open_table(tmp_path / "b.xlsx", sheet="Data")
    assert str(raised.value) == "b.xlsx has no sheet named 'Data'; its sheets are 'Data, 2024', 'Notes'."


@pytest.mark.parametrize(("lang", "says", "glossary"), [
    (EN, "This cell (3,000 characters) is too long for the context the model server serves "
         "(4,096 tokens), which must hold the cell, its translation and the instructions. Split the "
         "cell into shorter cells, or start the server with a longer context (glm1m serve "
         "--max-model-len).", ()),
    (ZH, "这个单元格（3,000 个字符）超出了模型服务器提供的上下文（4,096 个词元）："
         "上下文要同时容纳单元格、译文和指令，以及术语表的 2 个术语。"
         "请把它拆成几个较短的单元格，或以更长的上下文启动服务器（glm1m serve --max-model-len）。",
     (("甲方", "Party A"), ("合同", "contract"))),
])
async def test_a_cell_longer_than_the_served_context_says_so(
        tmp_path: Path, lang: str, says: str, glossary: tuple[tuple[str, str], ...]) -> None:
    path = tmp_path / "in.csv"
    path.write_text(csv_text([["id", "text"], ["1", "short"], ["2", "长" * 3000]]), encoding="utf-8")
    # vLLM's 400 for a prompt past --max-model-len reaches the core as the client's ContextTooLong.
    llm = ScriptedLlm(context=4096, fail=lambda text: ContextTooLong(key="context_no_longer_fits")
                      if len(text) > 1000 else None)
    out = tmp_path / "out.csv"
    job = Job("en", concurrency=3, retries=0, lang=lang, glossary=glossary)
    summary = await run_job(open_source(path), job, llm, out)
    assert (summary.translated, summary.failed) == (1, 1)
    assert records(out)[2][2:] == ["", says]
    assert "new chat" not in says.lower() and "新建对话" not in says


def test_the_pages_list_of_chosen_columns_quotes_a_name_that_holds_its_separator() -> None:
    """"Chosen: City, State, Zip" was two columns or three; the CLI quoted names, the page did not."""
    from glm1m.chainlit_app.table_choice import joined

    assert joined(["City, State", "Zip"], zh=False) == "“City, State”, Zip"
    assert joined(["内容", "备注"], zh=True) == "内容、备注"  # nothing to quote: as before
    assert joined(["省、市", "邮编"], zh=True) == "“省、市”、邮编"
