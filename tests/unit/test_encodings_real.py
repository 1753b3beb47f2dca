"""Encodings as real files have them, each kind generated here after a file from a public test
suite (chardet's and charset-normalizer's test files, csvkit's examples) that an earlier reader
refused or read wrong: GB18030 with four-byte characters, EUC-JP and EUC-KR (which look like
GB2312), Shift_JIS as Windows writes it, UTF-16 and UTF-32 with and without a BOM, and HTML
without a charset MuPDF would read. Every file is written here; none is copied."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glm1m.documents.reflow import read_reflowing
from glm1m.documents.text import read_text_file
from glm1m.errors import DocumentError, TableError
from glm1m.translation.table import open_source
from tests.support.tables import cells, csv_bytes

# Mathematics in Chinese: ∂ ∇ ⋯ ⟨ ⟩ – and subscripts are four bytes each in GB18030 (outside GBK);
# charset-normalizer finds such text too "chaotic" at its default threshold.
MATH = ["梯度算子∇作用于标量场，得到向量场。", "偏导数记作∂f/∂x，表示函数沿坐标轴的变化率。",
        "内积⟨u, v⟩满足对称性与线性。", "序列a₁, a₂, ⋯, aₙ收敛于极限L。", "本节讨论2019–2023年的数据。",
        "合同自签署之日起生效，甲方应按时付款。"]
JAPANESE = ("本契約は、署名の日から効力を生じます。"
            "ただし、甲および乙が別途合意した場合はこの限りではありません。")
KOREAN = "본 계약은 서명한 날부터 효력이 발생합니다. 갑과 을은 성실하게 의무를 이행하여야 합니다."
CHINESE = "本合同自双方签字之日起生效，甲方应按时付款。"
TRADITIONAL = "本合約自簽署之日起生效，甲方應按時付款。"
WESTERN = "Müller zahlt für die Straße; São Paulo, crème brûlée, naïve Gödel."


def test_a_300_row_gb18030_table_with_four_byte_characters_is_read(tmp_path: Path) -> None:
    rows = [["编号", "句子"], *[[str(i), MATH[i % 6] + MATH[(i * 7) % 6]] for i in range(300)]]
    path = tmp_path / "in.csv"
    path.write_bytes(csv_bytes(rows, "gb18030"))
    assert any(len(c.encode("gb18030")) == 4 for c in "".join(MATH))
    assert open_source(path).encoding_name == "GB18030 (GBK)"
    assert cells(path) == rows


@pytest.mark.parametrize(("text", "encoding", "codecs"), [
    (JAPANESE, "euc_jp", ("euc_jp", "euc_jis_2004")),  # kana sit at the same codes in GB2312
    (KOREAN, "euc_kr", ("cp949",)),
    (JAPANESE + "①～", "cp932", ("cp932",)),  # Windows' Shift_JIS: NEC characters shift_jis lacks
], ids=["EUC-JP", "EUC-KR", "Windows Shift_JIS"])
def test_cjk_encodings_that_fit_gbk_are_not_read_as_gbk(tmp_path: Path, text: str, encoding: str,
                                                        codecs: tuple[str, ...]) -> None:
    rows = [["id", "text"], *[[str(i), text] for i in range(20)]]
    path = tmp_path / "in.csv"
    path.write_bytes(csv_bytes(rows, encoding))
    assert open_source(path).encoding in codecs
    assert cells(path) == rows


WIDE = ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "utf-32"]  # utf-32: with its BOM


@pytest.mark.parametrize("encoding", WIDE)
def test_utf16_and_utf32_tables_with_or_without_a_bom(tmp_path: Path, encoding: str) -> None:
    rows = [["id", "text"], ["1", CHINESE], ["2", WESTERN], ["3", "plain"]]
    path = tmp_path / "in.csv"
    path.write_bytes(csv_bytes(rows, encoding))
    assert cells(path) == rows


@pytest.mark.parametrize("encoding", WIDE)
def test_utf16_and_utf32_text_files_are_text_not_binary(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(f"Notes\n=====\n\n{CHINESE}\n{WESTERN}\n".encode(encoding))
    doc = read_text_file(path, "notes.txt", markdown=False)
    assert doc.pages[0].heading == "Notes" and CHINESE in doc.pages[0].text and WESTERN in doc.pages[0].text


def test_a_binary_file_is_still_refused_as_binary(tmp_path: Path) -> None:
    for data in (b"abc\0def", bytes(range(256)) * 8, b"\x89PNG\r\n\x1a\n" + bytes(1000)):
        path = tmp_path / "bin.txt"
        path.write_bytes(data)
        with pytest.raises(DocumentError, match="is not a text file|neither UTF-8"):
            read_text_file(path, "bin.txt", markdown=False)


@pytest.mark.parametrize(("text", "encoding"), [
    (CHINESE, "gb2312"), (TRADITIONAL, "big5"), (JAPANESE, "shift_jis"), (WESTERN, "cp1252"),
    (CHINESE + WESTERN, "utf-16-le"),
], ids=["GB2312", "Big5", "Shift_JIS", "Windows-1252", "UTF-16LE"])
@pytest.mark.parametrize("declared", ["", '<meta charset="{}">',
                                      '<meta http-equiv="Content-Type" content="text/html; charset={}">'],
                         ids=["undeclared", "declared", "http-equiv"])
def test_html_reads_right_without_a_charset_or_with_one(tmp_path: Path, text: str, encoding: str,
                                                       declared: str) -> None:
    head = declared.format(encoding)
    page = f"<html><head>{head}<title>t</title></head><body><h1>{text[:6]}</h1><p>{text}</p></body></html>"
    path = tmp_path / "page.html"
    path.write_bytes(page.encode(encoding))
    doc = read_reflowing(path, "html", "page.html")
    read = " ".join(p.text for p in doc.pages)
    assert "\ufffd" not in read and re.sub(r"\s+", "", text) in re.sub(r"\s+", "", read)


def test_a_utf8_page_under_an_old_iso_8859_1_header_reads_as_utf8(tmp_path: Path) -> None:
    # As libjson-c5's README.html (Debian) declares it: MuPDF took the header's charset over the
    # BOM glm1m adds, and the heading began with "ï»¿", "é" read "Ã©".
    head = '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
    path = tmp_path / "README.html"
    path.write_bytes(f"<html><head>{head}</head><body><h2>JSON-C</h2><p>Café {CHINESE}</p></body></html>"
                     .encode())
    doc = read_reflowing(path, "html", "README.html")
    assert doc.pages[0].text.startswith("JSON-C") and "Café" in doc.pages[0].text
    assert re.sub(r"\s+", "", CHINESE) in re.sub(r"\s+", "", doc.pages[0].text)


def test_a_utf8_file_with_one_foreign_byte_is_named_by_byte_and_line(tmp_path: Path) -> None:
    data = f"id,text\n1,{CHINESE}\n2,{WESTERN}\n".encode() + "3,Gödel\n".encode("cp1252")
    path = tmp_path / "in.csv"
    path.write_bytes(data)
    bad = data.index("ö".encode("cp1252"))
    with pytest.raises(TableError, match=re.escape(f"byte {bad} is not UTF-8 (line 4)")):
        open_source(path)
    text = tmp_path / "in.md"
    text.write_bytes(data)
    with pytest.raises(DocumentError, match=r"is not UTF-8 \(line 4\).*Save it again as UTF-8 text"):
        read_text_file(text, "in.md", markdown=True)
