"""Workbooks glm1m cannot translate as asked each get one sentence, from the library and from
`glm1m translate` (exit 2, no traceback): password-protected, old .xls, damaged, a zip bomb, too
many rows, an empty sheet, a sheet or column that does not exist. The files are built here."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
import zipfile
from pathlib import Path

import openpyxl
import pytest

from glm1m.errors import TableError
from glm1m.settings import Settings
from glm1m.translation.formats import open_table
from tests.conftest import ROOT

OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
SETTINGS = Settings(_env_file=None)


def book(path: Path, rows: int = 3, sheets: tuple[str, ...] = ("Data",)) -> Path:
    wb = openpyxl.Workbook()
    wb.active.title = sheets[0]
    wb.active.append(["id", "text"])
    for i in range(rows):
        wb.active.append([i, f"row {i}"])
    for name in sheets[1:]:
        wb.create_sheet(name)
    wb.save(path)
    return path


def refused(path: Path, settings: Settings = SETTINGS, **kw) -> str:
    with pytest.raises(TableError) as caught:
        open_table(path, settings=settings, **kw)
    return str(caught.value)


def test_a_password_protected_workbook(tmp_path: Path) -> None:
    # What Excel writes for a password: an OLE compound file with an EncryptedPackage stream.
    entry = "EncryptedPackage".encode("utf-16-le").ljust(64, b"\0")
    (tmp_path / "secret.xlsx").write_bytes(OLE + b"\0" * 504 + entry + b"\0" * 4096)
    assert "is protected with a password" in refused(tmp_path / "secret.xlsx")


def test_an_old_xls_workbook(tmp_path: Path) -> None:
    (tmp_path / "old.xls").write_bytes(OLE + b"\0" * 504 + "Workbook".encode("utf-16-le") + b"\0" * 4096)
    assert "Excel 97-2003 workbook (.xls)" in refused(tmp_path / "old.xls")


def test_damaged_workbooks(tmp_path: Path) -> None:
    whole = book(tmp_path / "whole.xlsx").read_bytes()
    (tmp_path / "cut.xlsx").write_bytes(whole[: len(whole) // 2])
    assert "is not a readable .xlsx workbook" in refused(tmp_path / "cut.xlsx")
    (tmp_path / "text.xlsx").write_text("id,text\n1,a\n")
    assert "is not a readable .xlsx workbook" in refused(tmp_path / "text.xlsx")
    with zipfile.ZipFile(tmp_path / "plain.zip.xlsx", "w") as z:
        z.writestr("readme.txt", "hello")
    assert "not an Excel workbook (no xl/workbook.xml)" in refused(tmp_path / "plain.zip.xlsx")
    with zipfile.ZipFile(tmp_path / "whole.xlsx") as source, \
            zipfile.ZipFile(tmp_path / "broken.xlsx", "w") as z:
        for name in source.namelist():
            body = source.read(name)
            z.writestr(name, body[:40] if name == "xl/workbook.xml" else body)
    assert "is damaged" in refused(tmp_path / "broken.xlsx")


def test_a_zip_bomb_is_refused_from_its_directory(tmp_path: Path) -> None:
    with zipfile.ZipFile(book(tmp_path / "ok.xlsx")) as source, \
            zipfile.ZipFile(tmp_path / "bomb.xlsx", "w", zipfile.ZIP_DEFLATED) as z:
        for name in source.namelist():
            z.writestr(name, source.read(name))
        z.writestr("xl/worksheets/sheet2.xml", b"<x>" + b" " * (3 * 1024 * 1024) + b"</x>")
    assert (tmp_path / "bomb.xlsx").stat().st_size < 64 * 1024
    small = Settings(xlsx_max_unpacked_mb=2, _env_file=None)
    assert "unpacks to 3 MB, more than the 2 MB" in refused(tmp_path / "bomb.xlsx", small)


def declaring(source_path: Path, out: Path, dimension: bytes) -> None:
    """A copy of a 60-row workbook whose sheet declares another size than it holds."""
    with zipfile.ZipFile(source_path) as source, zipfile.ZipFile(out, "w") as z:
        for name in source.namelist():
            body = source.read(name)
            if name.endswith("sheet1.xml"):
                body = body.replace(b'<dimension ref="A1:B61" />', b'<dimension ref="' + dimension + b'" />')
            z.writestr(name, body)


def test_too_many_rows_gets_the_limit_sentence(tmp_path: Path) -> None:
    book(tmp_path / "big.xlsx", rows=60)
    small = Settings(xlsx_max_rows=50, _env_file=None)
    assert "Sheet 'Data' of big.xlsx has more than 50 rows" in refused(tmp_path / "big.xlsx", small)
    # A sheet that declares a smaller size than it has is counted as it is read.
    declaring(tmp_path / "big.xlsx", tmp_path / "lying.xlsx", b"A1:B2")
    source = open_table(tmp_path / "lying.xlsx", settings=small)
    with pytest.raises(TableError, match="has more than 50 rows, the most glm1m translates"):
        sum(len(chunk) for chunk in source.cell_chunks())
    # Within the limit, every row is read, not only the two declared; a sheet that declares a
    # million rows (as Gnumeric does) for the few it holds is not refused.
    assert sum(len(c) for c in open_table(tmp_path / "lying.xlsx", settings=SETTINGS).cell_chunks()) == 60
    declaring(tmp_path / "big.xlsx", tmp_path / "gnumeric.xlsx", b"A1:XFD1048576")
    limit = Settings(xlsx_max_rows=100, _env_file=None)
    assert open_table(tmp_path / "gnumeric.xlsx", settings=limit).column == "text"


def test_cells_are_read_streaming(tmp_path: Path) -> None:
    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("S")
    ws.append(["id", "text"])
    for i in range(30_000):
        ws.append([i, f"第{i}行 a longer line of text to translate, number {i}"])
    wb.save(tmp_path / "rows.xlsx")
    source = open_table(tmp_path / "rows.xlsx", settings=SETTINGS)
    tracemalloc.start()
    count = sum(len(chunk) for chunk in source.cell_chunks())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # The texts alone are ~4 MB; loading the sheet whole took ~60 MB (openpyxl cells).
    assert count == 30_000 and peak < 8 * 1024 * 1024, peak


def test_empty_sheet_missing_sheet_and_missing_column(tmp_path: Path) -> None:
    book(tmp_path / "b.xlsx", sheets=("Data", "Empty"))
    assert refused(tmp_path / "b.xlsx", sheet="Empty") == (
        "Sheet 'Empty' of b.xlsx is empty: there is nothing to translate; choose another sheet ('Data').")
    assert refused(tmp_path / "b.xlsx", sheet="Notes") == (
        "b.xlsx has no sheet named 'Notes'; its sheets are 'Data', 'Empty'.")
    assert refused(tmp_path / "b.xlsx", columns=("text", "price")) == (
        "Sheet 'Data' of b.xlsx has no column 'price'; its columns are 'id' (A), 'text' (B).")
    header_only = book(tmp_path / "h.xlsx", rows=0)
    assert "has a header row but no rows below it" in refused(header_only)


def test_the_cli_says_one_sentence_and_exits_2(tmp_path: Path) -> None:
    book(tmp_path / "b.xlsx")
    (tmp_path / "secret.xlsx").write_bytes(OLE + b"\0" * 504 + "EncryptedPackage".encode("utf-16-le"))
    for args, said in ((["b.xlsx", "--sheet", "Nope"], "has no sheet named 'Nope'; its sheets are 'Data'"),
                       (["b.xlsx", "--column", "zzz"], "has no column 'zzz'"),
                       (["secret.xlsx"], "is protected with a password")):
        done = subprocess.run([sys.executable, "-m", "glm1m.cli", "translate", *args, "--to", "en"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        assert done.returncode == 2 and said in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_a_missing_table_is_said_to_be_missing_not_empty(tmp_path: Path, suffix: str) -> None:
    with pytest.raises(TableError) as refused_error:
        open_table(tmp_path / f"nope{suffix}", settings=SETTINGS)
    assert str(refused_error.value) == f"nope{suffix} is not a file that can be read (check the path)."
    (tmp_path / f"empty{suffix}").write_bytes(b"")
    with pytest.raises(TableError, match="is empty: there is nothing to translate"):
        open_table(tmp_path / f"empty{suffix}", settings=SETTINGS)
