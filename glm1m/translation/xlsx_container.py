"""An .xlsx workbook's container checked before openpyxl reads any of it (an empty file, a
password, an old .xls, not a zip, a zip bomb, no workbook inside), and openpyxl's loading with one
sentence for whatever it meets in a damaged file, and a sheet's rows read past the size it declares
(the reader, xlsx.py, and the writer, xlsx_output.py, both read them). No Chainlit here."""

from __future__ import annotations

import io
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from glm1m.errors import TableError
from glm1m.settings import Settings
from glm1m.sizes import MB

# An encrypted (password-protected) OOXML file is not a zip but an OLE compound file holding an
# "EncryptedPackage" stream (MS-OFFCRYPTO 2.3.4.4); an old .xls is an OLE file without one.
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")


def check_container(path: Path, name: str, settings: Settings) -> None:
    """One sentence for what openpyxl would meet with a traceback or a memory blow-up: an empty
    file, a password-protected one, an old .xls, not a zip, a zip bomb, a zip without a workbook.
    The sizes checked are the zip directory's: Python's zipfile never inflates a member past the
    size its directory declares (it stops there and fails the CRC), so a lying entry cannot pass."""
    if not path.is_file():  # "is empty" for a mistyped path sent users looking in the file
        raise TableError(key="doc_not_a_file", path=name)
    if path.stat().st_size == 0:
        raise TableError(key="table_empty", name=name)
    with path.open("rb") as f:
        head = f.read(len(OLE_MAGIC))
    if head == OLE_MAGIC:
        if _holds(path, ENCRYPTED_STREAM):
            raise TableError(key="xlsx_encrypted", name=name)
        raise TableError(key="xlsx_old", name=name)
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError) as error:
        raise TableError(key="xlsx_unreadable", name=name) from error
    unpacked = sum(m.file_size for m in members)
    limit = settings.xlsx_max_unpacked_mb
    if unpacked > limit * MB:
        raise TableError(key="xlsx_unpacks_too_large", name=name, mb=unpacked / MB, limit=limit)
    if not any(m.filename == "xl/workbook.xml" for m in members):
        raise TableError(key="xlsx_not_workbook", name=name)


def _holds(path: Path, needle: bytes) -> bool:
    tail = b""
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            if needle in tail + block:
                return True
            tail = block[-len(needle):]
    return False


def load(path: Path, name: str, **kw: Any) -> Any:
    """openpyxl's workbook, or the sentence: a damaged part raises whatever openpyxl's parser meets
    (KeyError, ValueError, ParseError, TypeError...), so any exception here means a damaged file.
    Opened as a file object: an upload is stored without its .xlsx suffix, which load_workbook's
    suffix check would refuse."""
    # Imported here: `glm1m --help` stays fast.
    from openpyxl import load_workbook  # type: ignore[import-untyped]

    from glm1m.documents.ooxml import transitional_bytes

    # A Strict OOXML workbook: openpyxl finds none of its sheets (ooxml.py says why); read the
    # same workbook made Transitional, from memory (check_container bounded its size).
    strict = transitional_bytes(path)
    handle: BinaryIO = path.open("rb") if strict is None else io.BytesIO(strict)
    try:
        with warnings.catch_warnings():  # "extension not supported": the sheet still reads
            warnings.simplefilter("ignore")
            book = load_workbook(handle, **kw)
    except MemoryError:
        handle.close()
        raise
    except Exception as error:
        handle.close()
        raise TableError(key="xlsx_openpyxl_failed", name=name, error=type(error).__name__) from error
    if not kw.get("read_only"):
        handle.close()  # a whole workbook has been read by now
        return book
    close = book.close

    def close_both() -> None:  # the file ends with the book (ZipFile leaves a file it was given open)
        close()
        handle.close()

    book.close = close_both
    return book


def all_rows(ws: Any) -> Iterator[tuple[Any, ...]]:
    """Every row's values, down to the last row the sheet holds. Read-only openpyxl stops at the
    size the sheet declares (<dimension>), and some writers declare A1 or less than they wrote:
    forgetting it reads every row (rows then end at their last cell, not at a common width)."""
    ws.reset_dimensions()
    yield from ws.iter_rows(values_only=True)
