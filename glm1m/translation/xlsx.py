"""Excel workbooks (.xlsx) in: the container checked before openpyxl reads it, the sheet and the
columns to translate, the cells read in streaming mode (read_only: one row at a time, so a sheet's
size never sits in memory here). Writing the result is in xlsx_output.py. No Chainlit here.

What a cell gives to translate is what the reader sees: its text, or for a formula its cached
result when that is text (data_only). Numbers, dates, booleans and errors are not text; their
translation cell stays empty. A formula without a cached result (a file a program wrote without
computing it) reads as empty too.
"""

from __future__ import annotations

import io
import warnings
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from glm1m.errors import CsvError
from glm1m.settings import Settings, get_settings

CHUNK_ROWS = 5_000
SCAN_ROWS = 5_000  # rows looked at to find the first text column
TITLE_ROWS = 10  # rows with one value (titles, notes) looked past to find the header row
MB = 1024 * 1024
# An encrypted (password-protected) OOXML file is not a zip but an OLE compound file holding an
# "EncryptedPackage" stream (MS-OFFCRYPTO 2.3.4.4); an old .xls is an OLE file without one.
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")
SUFFIXES = (".xlsx",)


@dataclass(frozen=True)
class XlsxSource:
    path: Path
    sheet: str
    sheets: tuple[str, ...]
    header_row: int  # 1-based; the first row with a value
    columns: tuple[str, ...]  # each column's label: its header, or its letter where that is empty
    letters: tuple[str, ...]  # A, B, ... beside columns
    chosen: tuple[str, ...]  # labels of the columns to translate, in the order asked
    name: str = ""
    max_rows: int = 300_000

    @property
    def shown_name(self) -> str:
        return self.name or self.path.name

    @property
    def column(self) -> str:
        return self.chosen[0]

    @property
    def encoding_name(self) -> str:
        """How the file was read, where a CSV's line names its encoding."""
        return f"an Excel workbook, sheet {self.sheet!r}"

    def position(self, label: str) -> int:
        """0-based column index of a label."""
        return self.columns.index(label)

    def listing(self) -> str:
        return ", ".join(shown(c, letter) for c, letter in zip(self.columns, self.letters, strict=True))


def shown(label: str, letter: str) -> str:
    return label if label == letter else f"{label} ({letter})"


def is_workbook_name(name: str) -> bool:
    return Path(name).suffix.lower() in SUFFIXES


def check_container(path: Path, name: str, settings: Settings) -> None:
    """One sentence for what openpyxl would meet with a traceback or a memory blow-up: an empty
    file, a password-protected one, an old .xls, not a zip, a zip bomb, a zip without a workbook.
    The sizes checked are the zip directory's: Python's zipfile never inflates a member past the
    size its directory declares (it stops there and fails the CRC), so a lying entry cannot pass."""
    if not path.exists() or path.stat().st_size == 0:
        raise CsvError(f"{name} is empty: there is nothing to translate.")
    with path.open("rb") as f:
        head = f.read(len(OLE_MAGIC))
    if head == OLE_MAGIC:
        if _holds(path, ENCRYPTED_STREAM):
            raise CsvError(f"{name} is protected with a password (encrypted), so glm1m cannot read "
                           f"it. Open it in Excel, remove the password (File > Info > Protect "
                           f"Workbook), save, and attach it again.")
        raise CsvError(f"{name} is an old-style Excel 97-2003 workbook (.xls), which glm1m does not "
                       f"write back. Save it as .xlsx (Excel Workbook) and attach that.")
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError) as error:
        raise CsvError(f"{name} is not a readable .xlsx workbook (damaged, cut short, or another "
                       f"kind of file). Save it again from Excel as .xlsx.") from error
    unpacked = sum(m.file_size for m in members)
    limit = settings.xlsx_max_unpacked_mb
    if unpacked > limit * MB:
        raise CsvError(f"{name} unpacks to {unpacked / MB:,.0f} MB, more than the {limit:g} MB glm1m "
                       f"reads from one workbook (GLM1M_XLSX_MAX_UNPACKED_MB). Split it into smaller "
                       f"workbooks.")
    if not any(m.filename == "xl/workbook.xml" for m in members):
        raise CsvError(f"{name} is a zip file but not an Excel workbook (no xl/workbook.xml). Save it "
                       f"again from Excel as .xlsx.")


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
        raise CsvError(f"{name} could not be read as an .xlsx workbook ({type(error).__name__} in "
                       f"openpyxl): it is damaged, or holds a part glm1m cannot read. Open it in "
                       f"Excel, save it again as .xlsx, and retry.") from error
    if not kw.get("read_only"):
        handle.close()  # a whole workbook has been read by now
        return book
    close = book.close

    def close_both() -> None:  # the file ends with the book (ZipFile leaves a file it was given open)
        close()
        handle.close()

    book.close = close_both
    return book


def sheet_names(path: Path, name: str, settings: Settings | None = None) -> tuple[str, ...]:
    """The workbook's sheets with cells, in order, the one Excel opens on first (checked as
    open_workbook checks it), so a door can ask which one before any is read."""
    check_container(path, name, settings or get_settings())
    book = load(path, name, read_only=True, data_only=True)
    try:
        sheets = [ws.title for ws in book.worksheets]
        active = book.active.title if book.active is not None else None
    finally:
        book.close()
    return tuple(sorted(sheets, key=lambda s: s != active))


def open_workbook(path: Path, sheet: str | None = None, columns: Sequence[str] = (),
                  name: str | None = None, settings: Settings | None = None) -> XlsxSource:
    """Check the file, choose the sheet (the named one, else the one Excel opens on) and the
    columns (each by header or letter, else the first text column)."""
    name = name or path.name
    settings = settings or get_settings()
    check_container(path, name, settings)
    book = load(path, name, read_only=True, data_only=True)
    try:
        sheets = tuple(ws.title for ws in book.worksheets)  # chart sheets hold no cells
        if sheet is not None and sheet not in sheets:
            raise CsvError(f"{name} has no sheet named {sheet!r}; its sheets are "
                           f"{', '.join(sheets)}.")
        if not sheets:
            raise CsvError(f"{name} has no sheet with cells (only charts): there is nothing to "
                           f"translate.")
        ws = book[sheet] if sheet is not None else book.active
        if ws is None or ws.title not in sheets:  # Excel opens on a chart sheet
            ws = book[sheets[0]]
        title = ws.title
        _check_rows(ws, name, settings.xlsx_max_rows)
        header_row, header, scanned = _scan(ws)
    finally:
        book.close()
    if header_row == 0:
        raise CsvError(f"Sheet {title!r} of {name} is empty: there is nothing to translate"
                       f"{_others(sheets, title)}.")
    letters = tuple(_letter(i) for i in range(len(header)))
    labels = _labels(header, letters)
    source = XlsxSource(path, title, sheets, header_row, labels, letters, (), name,
                        settings.xlsx_max_rows)
    chosen = tuple(_find(source, c) for c in columns) or (_first_text(labels, scanned),)
    if not scanned:
        raise CsvError(f"Sheet {title!r} of {name} has a header row but no rows below it: there is "
                       f"nothing to translate{_others(sheets, title)}.")
    return XlsxSource(path, title, sheets, header_row, labels, letters,
                      tuple(dict.fromkeys(chosen)), name, settings.xlsx_max_rows)


def _others(sheets: tuple[str, ...], title: str) -> str:
    rest = [s for s in sheets if s != title]
    return f"; choose another sheet ({', '.join(rest)})" if rest else ""


def _check_rows(ws: Any, name: str, limit: int) -> None:
    """Refuse, before any work, a sheet with a value below row `limit`: writing the result loads
    the whole workbook (~550 bytes a cell measured with openpyxl 3.1.5). The size the sheet
    declares (<dimension>) is only a hint: Gnumeric declares A1:XFD1048576 for a few rows, others
    less than they hold; past the limit the rows are counted (streaming, up to the first value
    past it), and rows() counts again as the job reads them. Other sheets are bounded by
    xlsx_max_unpacked_mb."""
    if (ws.max_row or 0) <= limit:
        return
    for number, values in enumerate(all_rows(ws), start=1):
        if number > limit and any(v is not None for v in values):
            raise CsvError(too_many_rows(name, ws.title, limit))


def too_many_rows(name: str, sheet: str, limit: int) -> str:
    return (f"Sheet {sheet!r} of {name} has more than {limit:,} rows, the most glm1m translates in "
            f"one job (GLM1M_XLSX_MAX_ROWS). Split it into several workbooks, or copy the rows to "
            f"translate into a workbook of their own.")


def _scan(ws: Any) -> tuple[int, tuple[Any, ...], list[tuple[Any, ...]]]:
    """The header row, its cells, and up to SCAN_ROWS rows below it. The header is the first row
    with two values or more among the first TITLE_ROWS rows with a value (a title above the
    table, often merged across it, holds one), else the first row with a value. Rows above the
    header are kept as they are and not translated."""
    header_row, header, rows = 0, (), []
    candidates: list[tuple[int, tuple[Any, ...]]] = []
    for number, values in enumerate(all_rows(ws), start=1):
        if header_row == 0:
            if any(v is not None for v in values):
                candidates.append((number, values))
            wide = [c for c in candidates if sum(v is not None for v in c[1]) >= 2]
            if wide or len(candidates) >= TITLE_ROWS:
                header_row, first = (wide or candidates)[0]
                header = _trimmed(first)
                rows = [v for n, v in candidates if n > header_row]
            continue
        rows.append(values)
        if len(rows) >= SCAN_ROWS:
            break
    if header_row == 0 and candidates:  # fewer rows with a value than TITLE_ROWS, none wide
        header_row, header = candidates[0][0], _trimmed(candidates[0][1])
        rows = [v for n, v in candidates if n > header_row]
    width = max([len(header)] + [len(_trimmed(r)) for r in rows]) if header_row else 0
    while rows and all(v is None for v in rows[-1]):
        rows.pop()  # rows below the last value are not data
    return header_row, tuple(header) + (None,) * (width - len(header)), rows


def all_rows(ws: Any) -> Iterator[tuple[Any, ...]]:
    """Every row's values, down to the last row the sheet holds. Read-only openpyxl stops at the
    size the sheet declares (<dimension>), and some writers declare A1 or less than they wrote:
    forgetting it reads every row (rows then end at their last cell, not at a common width)."""
    ws.reset_dimensions()
    yield from ws.iter_rows(values_only=True)


def _trimmed(values: Sequence[Any]) -> tuple[Any, ...]:
    end = len(values)
    while end and values[end - 1] is None:
        end -= 1
    return tuple(values[:end])


def _letter(index: int) -> str:
    from openpyxl.utils import get_column_letter  # type: ignore[import-untyped]

    return str(get_column_letter(index + 1))


def _labels(header: tuple[Any, ...], letters: tuple[str, ...]) -> tuple[str, ...]:
    """Header texts; a column without one, or whose header repeats an earlier one, by its letter."""
    labels: list[str] = []
    for value, letter in zip(header, letters, strict=True):
        text = "" if value is None else str(value).strip()
        labels.append(text if text and text not in labels and text not in letters else letter)
    return tuple(labels)


def _find(source: XlsxSource, wanted: str) -> str:
    if wanted in source.columns:
        return wanted
    if wanted.upper() in source.letters:
        return source.columns[source.letters.index(wanted.upper())]
    raise CsvError(f"Sheet {source.sheet!r} of {source.shown_name} has no column {wanted!r}; its "
                   f"columns are {source.listing()}.")


def _first_text(labels: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    from glm1m.translation.table import is_text

    for i, label in enumerate(labels):
        if any(i < len(r) and isinstance(r[i], str) and is_text(r[i]) for r in rows):
            return label
    return labels[0]


def text_of(value: Any) -> str:
    """What is sent to translate: text only (an error result like "#N/A" is not text)."""
    return value if isinstance(value, str) and value not in ERROR_VALUES else ""


ERROR_VALUES = frozenset({"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A"})


def rows(source: XlsxSource) -> Iterator[tuple[int, tuple[str, ...]]]:
    """(sheet row number, texts of the chosen columns) for every row below the header down to the
    last row with a value; empty rows between are rows too (their cells pass through)."""
    book = load(source.path, source.shown_name, read_only=True, data_only=True)
    positions = [source.position(c) for c in source.chosen]
    blank: list[tuple[int, tuple[str, ...]]] = []  # empty rows kept until a value follows them
    try:
        for number, values in enumerate(all_rows(book[source.sheet]), start=1):
            if number <= source.header_row:
                continue
            texts = tuple(text_of(values[p]) if p < len(values) else "" for p in positions)
            if all(v is None for v in values):
                blank.append((number, texts))
                continue
            if number > source.max_rows:
                raise CsvError(too_many_rows(source.shown_name, source.sheet, source.max_rows))
            yield from blank
            blank.clear()
            yield number, texts
    finally:
        book.close()


def cell_chunks(source: XlsxSource) -> Iterator[list[str]]:
    """The chosen cells' texts, row by row, in chunks of CHUNK_ROWS rows."""
    chunk: list[str] = []
    for n, (_, texts) in enumerate(rows(source), start=1):
        chunk.extend(texts)
        if n % CHUNK_ROWS == 0:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
