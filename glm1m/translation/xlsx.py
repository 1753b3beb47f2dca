"""Excel workbooks (.xlsx) in: the container checked before openpyxl reads it (xlsx_container.py),
the sheet and the columns to translate, the cells read in streaming mode (read_only: one row at a
time, so a sheet's size never sits in memory here). Writing the result is in xlsx_output.py. No
Chainlit here.

What a cell gives to translate is what the reader sees: its text, or for a formula its cached
result when that is text (data_only). Numbers, dates, booleans and errors are not text; their
translation cell stays empty. A formula without a cached result (a file a program wrote without
computing it) reads as empty too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glm1m.catalog import Said, said
from glm1m.errors import TableError
from glm1m.settings import Settings, get_settings
from glm1m.translation.source import Reading, TableFormat, TableSource
from glm1m.translation.xlsx_container import OLE_MAGIC, all_rows, check_container, load

if TYPE_CHECKING:
    from glm1m.translation.fanout import Result

CHUNK_ROWS = 5_000
SCAN_ROWS = 5_000  # rows looked at to find the first text column
TITLE_ROWS = 10  # rows with one value (titles, notes) looked past to find the header row
ZIP_MAGIC = b"PK\x03\x04"


@dataclass(frozen=True)
class XlsxSource(TableSource):
    path: Path
    sheet: str
    sheets: tuple[str, ...]
    header_row: int  # 1-based; the first row with a value
    columns: tuple[str, ...]  # each column's label: its header, or its letter where that is empty
    letters: tuple[str, ...]  # A, B, ... beside columns
    chosen: tuple[str, ...]  # labels of the columns to translate, in the order asked
    name: str = ""
    max_rows: int = 300_000
    texts: tuple[str, ...] = ()  # the columns with text in the first SCAN_ROWS rows
    row_count: int | None = None  # the data rows, when opening read them all (a short sheet)

    @property
    def encoding_name(self) -> str:
        """How the file was read, where a CSV's line names its encoding."""
        return f"an Excel workbook, sheet {self.sheet!r}"

    def position(self, label: str) -> int:
        """0-based column index of a label."""
        return self.columns.index(label)

    def listing(self) -> list[str]:
        """Each column as a list in a sentence names it: quoted, as a name may hold a comma."""
        return [shown(repr(c), letter) if c != letter else repr(c)
                for c, letter in zip(self.columns, self.letters, strict=True)]

    def label(self, column: str) -> str:
        return shown(column, self.letters[self.position(column)])

    def read_as_said(self) -> Said:
        return said("read_as_sheet", sheet=repr(self.sheet), name=self.shown_name)

    @property
    def reading(self) -> Reading:
        return Reading(sheet=self.sheet, header_row=self.header_row)

    def with_columns(self, columns: Sequence[str]) -> XlsxSource:
        return replace(self, chosen=tuple(dict.fromkeys(columns)))

    def text_columns(self) -> tuple[str, ...]:
        return self.texts

    def data_rows(self) -> int:
        return self.row_count if self.row_count is not None else self._counted

    @cached_property
    def _counted(self) -> int:  # once per source: the job and its earlier work both ask
        return sum(1 for _ in rows(self))

    def cell_chunks(self) -> Iterator[list[str]]:
        return cell_chunks(self)

    def key_settings(self) -> dict[str, object]:
        return {"sheet": self.sheet, "columns": list(self.chosen)}

    def write_output(self, results: Mapping[int, Result], into: Path, language: str,
                     not_reached: str) -> None:
        from glm1m.translation.xlsx_output import assemble_xlsx

        assemble_xlsx(self, rows(self), results, into, language, not_reached)

    def is_finished(self, output: Path) -> bool:
        from glm1m.translation.xlsx_output import is_finished_xlsx

        return is_finished_xlsx(self, output)


def shown(label: str, letter: str) -> str:
    return label if label == letter else f"{label} ({letter})"


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
            raise TableError(key="xlsx_no_sheet", name=name, sheet=repr(sheet),
                           sheets=[repr(s) for s in sheets])
        if not sheets:
            raise TableError(key="xlsx_only_charts", name=name)
        ws = book[sheet] if sheet is not None else book.active
        if ws is None or ws.title not in sheets:  # Excel opens on a chart sheet
            ws = book[sheets[0]]
        title = ws.title
        _check_rows(ws, name, settings.xlsx_max_rows)
        header_row, header, scanned, last = _scan(ws)
    finally:
        book.close()
    if header_row == 0:
        raise TableError(key="sheet_empty", sheet=repr(title), name=name, others=_others(sheets, title))
    letters = tuple(_letter(i) for i in range(len(header)))
    labels = _labels(header, letters)
    texts = _text_columns(labels, scanned)
    # rows() reads down to the last row with a value: known here when the scan read the sheet whole.
    counted = last - header_row if last is not None and last <= settings.xlsx_max_rows else None
    source = XlsxSource(path, title, sheets, header_row, labels, letters, (), name,
                        settings.xlsx_max_rows, texts, counted)
    chosen = tuple(_find(source, c) for c in columns) or ((texts or labels)[0],)
    if not scanned:
        raise TableError(key="sheet_header_only", sheet=repr(title), name=name,
                       others=_others(sheets, title))
    return source.with_columns(chosen)


def _others(sheets: tuple[str, ...], title: str) -> Said | str:
    rest = [s for s in sheets if s != title]
    return said("sheet_others", sheets=[repr(s) for s in rest]) if rest else ""


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
            raise too_many_rows(name, ws.title, limit)


def too_many_rows(name: str, sheet: str, limit: int) -> TableError:
    return TableError(key="sheet_too_many_rows", sheet=repr(sheet), name=name, limit=limit)


def _scan(ws: Any) -> tuple[int, tuple[Any, ...], list[tuple[Any, ...]], int | None]:
    """The header row, its cells, up to SCAN_ROWS rows below it, and the last row with a value
    when that was the whole sheet (else None). The header is the first row with two values or
    more among the first TITLE_ROWS rows with a value (a title above the table, often merged
    across it, holds one), else the first row with a value. Rows above the header are kept as
    they are and not translated."""
    header_row, header, rows, last = 0, (), [], 0
    candidates: list[tuple[int, tuple[Any, ...]]] = []
    ended: bool = False
    for number, values in enumerate(all_rows(ws), start=1):
        if any(v is not None for v in values):
            last = number
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
    else:
        ended = True
    if header_row == 0 and candidates:  # fewer rows with a value than TITLE_ROWS, none wide
        header_row, header = candidates[0][0], _trimmed(candidates[0][1])
        rows = [v for n, v in candidates if n > header_row]
    width = max([len(header)] + [len(_trimmed(r)) for r in rows]) if header_row else 0
    while rows and all(v is None for v in rows[-1]):
        rows.pop()  # rows below the last value are not data
    return header_row, tuple(header) + (None,) * (width - len(header)), rows, last if ended else None


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
    raise TableError(key="sheet_no_column", sheet=repr(source.sheet), name=source.shown_name,
                   column=repr(wanted), columns=source.listing())


def _text_columns(labels: tuple[str, ...], rows: list[tuple[Any, ...]]) -> tuple[str, ...]:
    """The columns with text (not a number, a date or an error value) in the rows scanned."""
    from glm1m.translation.table import is_text

    return tuple(label for i, label in enumerate(labels)
                 if any(i < len(r) and is_text(text_of(r[i])) for r in rows))


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
                raise too_many_rows(source.shown_name, source.sheet, source.max_rows)
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


def _sniff(name: str, head: bytes) -> bool:
    """A zip or an OLE file (an .xlsx, an encrypted one, an old .xls) by any name, or a name in
    .xls: check_container gives each its sentence."""
    return Path(name).suffix.lower() == ".xls" or head.startswith((ZIP_MAGIC, OLE_MAGIC))


def _open(path: Path, name: str, sheet: str | None, columns: Sequence[str],
          settings: Settings | None) -> XlsxSource:
    return open_workbook(path, sheet, columns, name, settings)


FORMAT = TableFormat("XLSX", (".xlsx",),
                     ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",),
                     "xlsx_max_mb", "use_translate_sheet", _open,
                     lambda path, name: sheet_names(path, name), _sniff)
XlsxSource.format = FORMAT
