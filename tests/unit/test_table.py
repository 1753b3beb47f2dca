"""Reading and writing CSV files for translation: encodings, edge cases, formula safety."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd
import pytest

from glm1m.translation.csv_output import neutralise, write_chunk
from glm1m.translation.table import CHUNK_ROWS, TableError, open_source, read_chunks, read_glossary

CHINESE = "标题,内容\n1,你好，世界\n2,合同条款\n"


@pytest.mark.parametrize(("encoding", "data", "name"), [
    ("utf-8", CHINESE.encode("utf-8"), "UTF-8"),
    ("utf-8-sig", CHINESE.encode("utf-8-sig"), "UTF-8 with BOM"),
    ("gb18030", CHINESE.encode("gbk"), "GB18030 (GBK)"),
])
def test_encodings_are_detected_and_named(tmp_path: Path, encoding: str, data: bytes, name: str) -> None:
    path = tmp_path / "in.csv"
    path.write_bytes(data)
    source = open_source(path)
    assert (source.encoding, source.encoding_name) == (encoding, name)
    assert source.columns == ("标题", "内容")
    assert list(next(read_chunks(source))["内容"]) == ["你好，世界", "合同条款"]


def test_first_text_column_skips_numbers(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("id,price,text\n1,9.99,hello\n2,-3,world\n", encoding="utf-8")
    assert open_source(path).column == "text"


@pytest.mark.parametrize(("content", "sentence"), [
    ("", "is empty"),
    ("id,text\n", "has a header but no rows"),
])
def test_empty_inputs_get_a_sentence(tmp_path: Path, content: str, sentence: str) -> None:
    path = tmp_path / "in.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TableError, match=sentence):
        open_source(path)


def test_unknown_column_lists_the_real_ones(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("a,b\n1,x\n", encoding="utf-8")
    with pytest.raises(TableError, match="no column named 'c'; its columns are 'a', 'b'"):
        open_source(path, "c")


def test_quoted_newlines_and_empty_cells_survive(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text('id,text\n1,"line one\nline two"\n2,\n', encoding="utf-8")
    assert list(next(read_chunks(open_source(path)))["text"]) == ["line one\nline two", ""]


def test_undecodable_bytes_get_a_sentence(tmp_path: Path) -> None:
    # Bytes no text encoding makes sense of (b"\xff\xfe\xff" alone is "ÿþÿ" in Windows-1252).
    path = tmp_path / "in.csv"
    path.write_bytes(b"id,text\n1," + bytes(range(128, 256)) * 50)
    with pytest.raises(TableError, match="neither UTF-8 nor GBK"):
        open_source(path)


@pytest.mark.parametrize(("cell", "safe"), [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1+2", "'+1+2"), ("@SUM(A1)", "'@SUM(A1)"),
    ("-2+3", "'-2+3"), ("-5", "-5"), ("+86", "+86"), ("1.5", "1.5"), ("hello", "hello"), ("", ""),
])
def test_formula_cells_are_neutralised_numbers_are_not(cell: str, safe: str) -> None:
    assert neutralise(cell) == safe


def test_export_has_bom_and_neutralised_cells(tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    write_chunk(pd.DataFrame({"text": ["=1+1", "你好"]}), out, first=True)
    write_chunk(pd.DataFrame({"text": ["@x"]}), out, first=False)
    data = out.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\xef\xbb\xbf") == 1
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    assert rows == [["text"], ["'=1+1"], ["你好"], ["'@x"]]


def test_glossary_with_or_without_header(tmp_path: Path) -> None:
    path = tmp_path / "g.csv"
    path.write_text("term,translation\n合同,contract\n甲方,Party A\n", encoding="utf-8")
    assert read_glossary(path) == (("合同", "contract"), ("甲方", "Party A"))


def test_a_hundred_thousand_rows_are_read_in_bounded_chunks_in_order(tmp_path) -> None:
    from glm1m.translation.job import count_rows

    path = tmp_path / "big.csv"
    path.write_text("id,text\n" + "".join(f"{i},第{i}行 row {i}\n" for i in range(100_000)), encoding="utf-8")
    source = open_source(path)
    assert source.column == "text" and count_rows(source) == 100_000
    sizes, last = [], None
    for chunk in read_chunks(source):
        sizes.append(len(chunk))
        last = chunk
    assert max(sizes) <= CHUNK_ROWS and sum(sizes) == 100_000
    assert len(sizes) == -(-100_000 // CHUNK_ROWS) > 1  # read in pieces, not all at once
    texts = [t for chunk in read_chunks(source) for t in chunk["text"]]
    assert texts == [f"第{i}行 row {i}" for i in range(100_000)]
    assert last["text"].iloc[-1] == "第99999行 row 99999"
