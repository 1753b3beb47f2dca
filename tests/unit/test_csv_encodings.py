"""Which encoding a CSV is read in, the name the user is shown for it, and the one sentence an
unreadable file gets (for the data file and the glossary alike). Every file is written here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glm1m.errors import TableError
from glm1m.translation.table import open_source, read_glossary
from tests.support.tables import cells, csv_bytes

WESTERN = [["name", "city", "note"], ["Müller", "Straße", "café"], ["José", "São Paulo", "crème brûlée"],
           ["Øresund", "Zürich", "“quoted” € 5,00"]]


CHINESE = {
    "two rows": [["标题", "内容"], ["1", "你好，世界"], ["2", "合同条款"]],
    "one short cell": [["id", "text"], ["1", "你好"]],
    "names": [["姓名", "城市"], ["张伟", "北京"], ["王芳", "上海"]],
    # What Chinese Excel writes for the app test: charset-normalizer alone calls this EUC-JIS-2004.
    "120 rows": [["编号", "内容"], *[[str(i), f"第{i}行。 row {i}"] for i in range(120)]],
    "mixed with Latin": [["id", "text"], *[[str(i), f"第{i}行：合同第{i}条。GPU 加速"] for i in range(5)]],
    "a 300,000-character cell": [["id", "text"], ["1", "合同条款，" * 60_000], ["2", "x"]],
}


@pytest.mark.parametrize("rows", CHINESE.values(), ids=CHINESE.keys())
def test_gbk_chinese_is_read_as_gb18030(tmp_path: Path, rows: list[list[str]]) -> None:
    path = tmp_path / "in.csv"
    path.write_bytes(csv_bytes(rows, "gbk"))
    assert open_source(path).encoding_name == "GB18030 (GBK)"
    assert cells(path) == rows


@pytest.mark.parametrize("encoding", ["cp1252", "latin-1"])
def test_western_excel_files_are_read_as_windows_1252_not_as_gbk(tmp_path: Path, encoding: str) -> None:
    rows = WESTERN if encoding == "cp1252" else WESTERN[:3]  # Latin-1 has no € or curly quotes
    path = tmp_path / "in.csv"
    path.write_bytes(csv_bytes(rows, encoding))
    source = open_source(path)
    assert (source.encoding, source.encoding_name) == ("cp1252", "Windows-1252")
    assert cells(path) == rows  # "Müller", not "M黮ler", in every column


@pytest.mark.parametrize("text", ["Müller; Straße; café", "São Paulo", "naïve", "Gödel"])
def test_one_accented_word_is_enough(tmp_path: Path, text: str) -> None:
    path = tmp_path / "in.csv"
    path.write_bytes(csv_bytes([["id", "text"], ["1", text]], "cp1252"))
    assert open_source(path).encoding_name == "Windows-1252"
    assert cells(path)[1] == ["1", text]


@pytest.mark.parametrize(("encoding", "name"), [("big5", "Big5"), ("shift_jis", "Shift_JIS (Windows-31J)"),
                                                ("cp1251", "Windows-1251")])
def test_other_encodings_are_still_found(tmp_path: Path, encoding: str, name: str) -> None:
    texts = {"big5": "本合約自簽署之日起生效，甲方應按時付款。",
             "shift_jis": "本契約は署名の日から効力を生じます。",
             "cp1251": "Договор вступает в силу с момента подписания."}
    rows = [["id", "text"], *[[str(i), texts[encoding]] for i in range(20)]]
    path = tmp_path / "in.csv"
    path.write_bytes(csv_bytes(rows, encoding))
    assert open_source(path).encoding_name == name
    assert cells(path) == rows


def test_utf8_stays_utf8(tmp_path: Path) -> None:
    rows = [["id", "text"], ["1", "Müller 你好 café"]]
    path = tmp_path / "in.csv"
    path.write_bytes(csv_bytes(rows, "utf-8"))
    assert open_source(path).encoding_name == "UTF-8" and cells(path) == rows


@pytest.mark.parametrize(("data", "says"), [
    ("id,text\n1,你好\n2,合同".encode()[:-1], "is UTF-8 text cut short inside its last character"),
    ("id,text\n1,你好\n2,合同".encode("gbk")[:-1],
     "is GB18030 (GBK) text cut short inside its last character"),
    (b"\xef\xbb\xbf" + "id,text\n1,你好\n2,合同".encode()[:-1], "is UTF-8 text cut short"),
    (b"\xef\xbb\xbfid,text\n1,ok\n2,\xff\xfe\n", "byte 18 is not UTF-8"),
    (b"id,text\n1," + bytes(range(128, 256)) * 50, "neither UTF-8 nor GBK/GB18030 text, nor in any other"),
])
def test_unreadable_files_get_one_sentence(tmp_path: Path, data: bytes, says: str) -> None:
    for name, read in (("in.csv", open_source), ("glossary.csv", read_glossary)):
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(TableError, match=re.escape(says)) as raised:
            read(path)
        assert str(raised.value).startswith(name)


def test_a_windows_1252_glossary_is_read_right(tmp_path: Path) -> None:
    path = tmp_path / "glossary.csv"
    rows = [["term", "translation"], ["Müller", "Mueller"], ["Straße", "street"]]
    path.write_bytes(csv_bytes(rows, "cp1252"))
    assert read_glossary(path) == (("Müller", "Mueller"), ("Straße", "street"))
