"""Tables shaped as real ones are (csvkit's examples, data.gov exports, European Excel): a row
longer than its header, a title above the header, other delimiters, empty or repeated header
names. Each is read right or refused with one sentence naming the row; the output gives back
every cell of every row, in order, under the header as written. Every file is written here."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from glm1m.catalog import EN
from glm1m.errors import TableError
from glm1m.translation.fanout import Result
from glm1m.translation.table import open_source, read_glossary


def write(path: Path, rows: list[list[str]], delimiter: str = ",", above: str = "") -> Path:
    text = io.StringIO(newline="")
    csv.writer(text, delimiter=delimiter).writerows(rows)
    path.write_text(above + text.getvalue(), encoding="utf-8")
    return path


def translated(path: Path, **kw) -> list[list[str]]:
    """The output of a job whose every answer is the cell upper-cased."""
    source = open_source(path, **kw)
    cells = [c for chunk in source.cell_chunks() for c in chunk]
    results = {i: Result(i, c.upper(), None) for i, c in enumerate(cells)}
    out = path.with_name("out.csv")
    source.write_output(results, out, "English", "not reached")
    with out.open(encoding="utf-8-sig", newline="") as f:
        return list(csv.reader(f))


def test_a_row_with_one_field_more_than_its_header_is_refused_naming_it(tmp_path: Path) -> None:
    # pandas took the first column as the index: it vanished, every other shifted left, exit 0.
    path = tmp_path / "in.csv"
    path.write_text("id,text,note\n1,hello,a\n2,world,b,extra\n3,again,c\n", encoding="utf-8")
    with pytest.raises(TableError) as raised:
        open_source(path)
    message = str(raised.value)
    assert message.startswith("in.csv row 3 has 4 fields but its header (row 1) has 3: ")
    assert "\n" not in message and "Expected" not in message  # one sentence, not pandas' error


def test_every_data_row_longer_than_the_header_is_refused_not_shifted(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("text,note\n1,hello,a\n2,world,b\n", encoding="utf-8")
    with pytest.raises(TableError, match=r"row 2 has 3 fields but its header \(row 1\) has 2"):
        open_source(path)


def test_a_title_above_the_header_is_kept_and_said(tmp_path: Path) -> None:
    rows = [["id", "text", "note"], ["1", "hello", "a"], ["2", "world", "b"]]
    # A comment line, a title in a row of its own as Excel writes it, a blank row.
    above = '# exported by sheets, 2024\n"Quarterly report, 2024",,\n\n'
    path = write(tmp_path / "in.csv", rows, above=above)
    source = open_source(path)
    assert source.columns == ("id", "text", "note") and source.column == "text"
    assert "the header is row 4; the 3 rows above it" in source.describe_said().render(EN)
    assert translated(path) == [["# exported by sheets", " 2024"], ["Quarterly report, 2024", "", ""], [],
                                rows[0] + ["translation", "translation_error"],
                                *[r + [r[1].upper(), ""] for r in rows[1:]]]


@pytest.mark.parametrize(("delimiter", "word"), [(";", "semicolon"), ("\t", "tab"), ("|", "'|'")])
def test_other_delimiters_are_found(tmp_path: Path, delimiter: str, word: str) -> None:
    # A ';' file as European Excel writes it: decimal commas, a comma inside a cell.
    rows = [["id", "price", "text"], ["1", "2,50", "Hallo, Welt"], ["2", "3,10", "Guten Tag"]]
    path = write(tmp_path / "in.csv", rows, delimiter)
    source = open_source(path)
    assert source.columns == ("id", "price", "text")
    assert f"({word}-separated)" in source.describe_said().render(EN)
    out = translated(path)
    assert out[1] == ["1", "2,50", "Hallo, Welt", "HALLO, WELT", ""]  # written back comma-separated


def test_empty_and_repeated_header_names_come_back_as_written(tmp_path: Path) -> None:
    rows = [["", "text", "text", ""], ["1", "hello", "x", "a"], ["2", "world", "y", "b"]]
    path = write(tmp_path / "in.csv", rows)
    source = open_source(path)
    assert source.columns == ("", "text", "text", "")  # not "Unnamed: 0", not "text.1"
    out = translated(path, column="text")
    assert out == [rows[0] + ["translation", "translation_error"],
                   ["1", "hello", "x", "a", "HELLO", ""], ["2", "world", "y", "b", "WORLD", ""]]


def test_short_rows_end_in_empty_cells_and_trailing_empty_fields_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("id,text,note\n1,hello\n2,world,b,,\n\n3,again,c\n", encoding="utf-8")
    assert translated(path) == [["id", "text", "note", "translation", "translation_error"],
                                ["1", "hello", "", "HELLO", ""], ["2", "world", "b", "WORLD", ""],
                                ["3", "again", "c", "AGAIN", ""]]


def test_a_semicolon_glossary_is_read(tmp_path: Path) -> None:
    path = tmp_path / "glossary.csv"
    path.write_text("term;translation\n甲方;Party A\n合同, 协议;contract\n", encoding="utf-8")
    assert read_glossary(path) == (("甲方", "Party A"), ("合同, 协议", "contract"))


def test_the_new_sentences_read_in_chinese(tmp_path: Path) -> None:
    from glm1m.catalog import ZH

    long_row = tmp_path / "长.csv"
    long_row.write_text("id,text\n1,a,b\n", encoding="utf-8")
    mixed = tmp_path / "混.csv"
    mixed.write_bytes("id,text\n1,你好世界\n".encode() + "2,Gödel\n".encode("cp1252"))
    said = []
    for path in (long_row, mixed):
        with pytest.raises(TableError) as raised:
            open_source(path)
        said.append(raised.value.in_language(ZH))
    assert said[0].startswith("长.csv 第 2 行有 3 个字段，而表头（第 1 行）只有 2 个。")
    assert said[1].startswith("混.csv 按 UTF-8 读取，但第 ") and "混用了多种编码" in said[1]
