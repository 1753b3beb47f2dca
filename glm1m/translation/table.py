"""CSV files in, the CSV TableSource (source.py) and its FORMAT: the encoding (glm1m.encoding),
the delimiter and the header row found, streaming chunks with every row checked against the
header, the columns to translate, glossaries. The Excel-safe export is csv_output.py, handed the
chunks read again (it names CsvSource only for mypy; what both take of a cell is cells.py). Rows
are split by Python's csv module (pandas guessed an index column when a row was one field longer
than the header, and renamed empty and repeated header cells); chunks are pandas frames. Nothing
here imports Chainlit."""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pandas as pd

from glm1m.catalog import Said, said
from glm1m.encoding import detect_encoding as find_encoding, encoding_name
from glm1m.errors import TableError
from glm1m.translation.cells import FIELD_LIMIT, NUMBER
from glm1m.translation.source import Reading, TableFormat, TableSource, stamp

if TYPE_CHECKING:
    from glm1m.translation.fanout import Result

CHUNK_ROWS = 5_000
# A date or a time as spreadsheets write them (2024-01-05, 2024/1/5 9:30, 2024年1月5日, 05.01.2024,
# 9:30:00): like a number, nothing to translate, so such a column is not offered.
DATE = re.compile(r"(\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})"
                  r"([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?|\d{1,2}:\d{2}(:\d{2})?")
SAVE_AS_UTF8 = "advice_csv_utf8"  # what to do about an encoding, a catalog id
DELIMITERS = ",;\t|"
DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "'|'"}
LAYOUT_CHARS = 1 << 16  # read to find the delimiter and the header
TITLE_ROWS = 20  # rows above the header that may be a title or comments


@dataclass(frozen=True)
class CsvSource(TableSource):
    path: Path
    encoding: str
    columns: tuple[str, ...]
    chosen: tuple[str, ...]  # the columns to translate, in the order asked
    name: str = ""  # as the user knows the file (an upload is stored under another name)
    delimiter: str = ","
    header_row: int = 1  # the rows above it (a title, comments) are not translated, kept as they are
    row_count: int = 0  # the data rows, counted as the file was checked
    texts: tuple[str, ...] = ()  # the columns with text in the first chunk
    opened: tuple[tuple[int, int], Any] | None = field(default=None, compare=False, repr=False)

    @property
    def positions(self) -> list[int]:
        """Where the chosen columns are in each row (a name may repeat; the first is meant)."""
        return [self.columns.index(c) for c in self.chosen]

    @property
    def layout(self) -> Said | str:
        """The delimiter and the header's row, when they are not a comma and the first row."""
        words = [] if self.delimiter == "," else [said(
            "layout_delimited", delimiter=said(f"delimiter_{DELIMITER_NAMES[self.delimiter]}"))]
        if self.header_row > 1:
            words.append(said("layout_header_row", row=self.header_row, count=self.header_row - 1))
        if len(words) == 2:
            return said("layout_two", one=words[0], other=words[1])
        return said("layout_one", one=words[0]) if words else ""

    @property
    def encoding_name(self) -> str:
        return encoding_name(self.encoding)

    def read_as_said(self) -> Said:
        return said("read_as_text", name=self.shown_name, encoding=self.encoding_name, layout=self.layout)

    @property
    def reading(self) -> Reading:
        return Reading(None, self.encoding_name, self.delimiter, self.header_row, self.layout)

    def with_columns(self, columns: Sequence[str]) -> CsvSource:
        return replace(self, chosen=tuple(dict.fromkeys(columns)))

    def text_columns(self) -> tuple[str, ...]:
        return self.texts

    def data_rows(self) -> int:
        return self.row_count

    def opened_digest(self) -> tuple[tuple[int, int], Any] | None:
        return self.opened

    def cell_chunks(self) -> Iterator[list[str]]:
        positions = self.positions  # by place: a header may name two columns alike, or none
        for chunk in read_chunks(self):
            frame = chunk.iloc[:, positions]
            yield [str(v) for row in frame.itertuples(index=False, name=None) for v in row]

    def key_settings(self) -> dict[str, object]:
        """One column: the key earlier versions used, so their checkpoints still resume."""
        if len(self.chosen) == 1:
            return {"column": self.column}
        return {"columns": list(self.chosen)}

    def write_output(self, results: Mapping[int, Result], into: Path, language: str,
                     not_reached: str) -> None:
        from glm1m.translation.csv_output import write_csv

        write_csv(self, read_chunks(self), results, into, language, not_reached)

    def is_finished(self, output: Path) -> bool:
        from glm1m.translation.csv_output import is_finished_output

        return is_finished_output(output, self.header_row)


def detect_encoding(path: Path, name: str | None = None) -> str:
    """UTF-8 (with or without a BOM), UTF-16 or UTF-32 (with a BOM or without), else what
    charset-normalizer finds (GB18030 for GBK files, Windows-1252 for Western ones, ...): see
    glm1m.encoding. The whole file is decoded with the result, so a bad byte deep in it, or a
    last character cut short, gets the sentence."""
    return find_encoding(path, name or path.name, TableError, SAVE_AS_UTF8)


@dataclass(frozen=True)
class Layout:
    """How the rows are written: the delimiter, and the row (1-based, as a spreadsheet numbers
    rows) that holds the header; the rows above it are a title or comments."""
    delimiter: str
    header_row: int
    header: tuple[str, ...]


def _text_sample(path: Path, encoding: str) -> str:
    """The file's first LAYOUT_CHARS characters, cut after their last newline."""
    with path.open(encoding=encoding, newline="") as f:
        text = f.read(LAYOUT_CHARS)
        whole = not f.read(1)
    end = max(text.rfind("\n"), text.rfind("\r"))
    return text if whole or end < 0 else text[:end + 1]


def _records(text: str, delimiter: str) -> list[list[str]]:
    try:
        return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error:
        return []


def _width(records: list[list[str]]) -> tuple[int, float]:
    """The field count most rows have (the larger on a tie), and the share of rows that have it."""
    counts = Counter(len(r) for r in records if r)
    if not counts:
        return 0, 0.0
    width, rows = max(counts.items(), key=lambda item: (item[1], item[0]))
    return width, rows / sum(counts.values())


def find_layout(text: str, name: str) -> Layout:
    """The delimiter (of , ; tab |) that splits the most rows into the same number of fields, two
    or more (a comma when none does), and the header: the first row with two values or more, as
    for workbooks; blank rows, and rows of one value or a '#' comment above it, are skipped.
    csv.Sniffer was tried first: it raises on a one-column file, and it picks whatever character
    stands next to a quote, so a quoted cell ending in ';' made a comma file ';'-separated."""
    scored = []
    for delimiter in DELIMITERS:
        records = _records(text, delimiter)
        width, share = _width(records)
        scored.append(((width > 1, share, width), delimiter, records, width))
    best = max(scored, key=lambda s: s[0])
    _, delimiter, records, width = best if best[0][0] else scored[0]
    first = None
    for number, fields in enumerate(records[:TITLE_ROWS], start=1):
        if not fields:
            continue
        first = first or (number, fields)
        filled = sum(1 for cell in fields if cell.strip())
        if width > 1 and (filled <= 1 or (fields[0].startswith("#") and len(fields) < width)):
            continue
        return Layout(delimiter, number, tuple(fields))
    if first is None:
        raise TableError(key="table_no_header", name=name)
    return Layout(delimiter, first[0], tuple(first[1]))


def _rows(path: Path, encoding: str, layout: Layout, name: str, digest: Any = None
          ) -> Iterator[list[str]]:
    """The data rows below the header, each with as many cells as the header: a shorter row
    ends in empty cells (as spreadsheets read it), a longer one may only have empty cells past
    the header's (Excel writes those); any other is refused naming its row. `digest`, a hashlib
    object, is fed the file's bytes as they are read."""
    width = len(layout.header)
    csv.field_size_limit(FIELD_LIMIT)
    with _text_file(path, encoding, digest) as f:
        reader = csv.reader(f, delimiter=layout.delimiter)
        number = 0
        try:
            for number, fields in enumerate(reader, start=1):
                if len(fields) == width and number > layout.header_row:
                    yield fields
                    continue
                if number <= layout.header_row or not fields:
                    continue
                if len(fields) > width and any(fields[width:]):
                    raise TableError(key="table_row_width", name=name, row=number, fields=len(fields),
                                   header=layout.header_row, width=width,
                                   delimiter=said(f"delimiter_{DELIMITER_NAMES[layout.delimiter]}"))
                yield fields[:width] + [""] * (width - len(fields))
        except csv.Error as error:
            raise TableError(key="csv_row_unreadable", name=name, row=number + 1, error=error) from error


def _frames(rows: Iterator[list[str]], header: Sequence[str]) -> Iterator[pd.DataFrame]:
    chunk: list[list[str]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == CHUNK_ROWS:
            yield pd.DataFrame(chunk, columns=list(header), dtype=str)
            chunk = []
    if chunk:
        yield pd.DataFrame(chunk, columns=list(header), dtype=str)


def read_chunks(source: CsvSource) -> Iterator[pd.DataFrame]:
    """The data rows in chunks of CHUNK_ROWS rows, so 100k rows never sit in memory at once. The
    frames' columns are the header as written: empty or repeated names stay so (select by place:
    CsvSource.positions)."""
    layout = Layout(source.delimiter, source.header_row, source.columns)
    try:
        yield from _frames(_rows(source.path, source.encoding, layout, source.shown_name),
                           source.columns)
    except UnicodeDecodeError as error:  # detect_encoding read it all: it changed since
        raise TableError(key="csv_changed", name=source.shown_name,
                       encoding=source.encoding_name) from error


def open_source(path: Path, column: str | None = None, name: str | None = None,
                columns: Sequence[str] = ()) -> CsvSource:
    """Check the file and choose the column: the named one (or `columns`, several), else the
    first text column. `name` is the file's name in messages (default: the path's). Every row
    is read once here (after the encoding's check), so a row that does not fit the header is
    refused before any is sent; the same pass counts the rows and hashes the bytes for the job's
    key, so neither reads the file again."""
    name = name or path.name
    if not path.is_file():  # "is empty" for a mistyped path sent users looking in the file
        raise TableError(key="doc_not_a_file", path=name)
    if path.stat().st_size == 0:
        raise TableError(key="table_empty", name=name)
    encoding = detect_encoding(path, name)
    layout = find_layout(_text_sample(path, encoding), name)
    before, digest = stamp(path), hashlib.sha256()
    rows = _rows(path, encoding, layout, name, digest)
    first = next(_frames(itertools.islice(rows, CHUNK_ROWS), layout.header), None)
    count = 0 if first is None else len(first) + sum(1 for _ in rows)  # the rest, for their fields
    if first is None:
        raise TableError(key="table_header_only", name=name)
    header = layout.header
    wanted = tuple(dict.fromkeys(columns or ([column] if column is not None else [])))
    for each in wanted:
        if each not in header:
            raise TableError(key="csv_no_column", name=name, column=repr(each),
                           columns=[repr(c) for c in header])  # a name may hold a comma
    opened = (before, digest) if stamp(path) == before else None  # changed while read: hash again
    return CsvSource(path, encoding, header, wanted or (first_text_column(first),), name,
                     layout.delimiter, layout.header_row, count, tuple(text_columns(first)), opened)


class _Hashing(io.RawIOBase):
    """A binary file that feeds every byte read from it to a hashlib object."""

    def __init__(self, path: Path, digest: Any) -> None:
        self._file, self._digest = path.open("rb", buffering=0), digest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._file.readinto(buffer)
        if n:
            self._digest.update(memoryview(buffer)[:n])
        return n or 0

    def close(self) -> None:
        self._file.close()
        super().close()


def _text_file(path: Path, encoding: str, digest: Any) -> IO[str]:
    if digest is None:
        return path.open(encoding=encoding, newline="")
    return io.TextIOWrapper(io.BufferedReader(_Hashing(path, digest)), encoding=encoding, newline="")


def first_text_column(frame: pd.DataFrame) -> str:
    """The first column with text (ids, prices and dates are skipped)."""
    return (text_columns(frame) or [str(frame.columns[0])])[0]


def text_columns(frame: pd.DataFrame) -> list[str]:
    """The columns with a cell of text, in order, each name once: what there is to translate."""
    names = [str(name) for place, name in enumerate(frame.columns)
             if any(is_text(v) for v in frame.iloc[:, place].astype(str))]
    return list(dict.fromkeys(names))


def is_text(value: str) -> bool:
    """A cell worth translating: not empty, not a number, not a date or a time."""
    value = value.strip()
    return bool(value) and not NUMBER.fullmatch(value) and not DATE.fullmatch(value)


def read_glossary(path: Path, name: str | None = None) -> tuple[tuple[str, str], ...]:
    """A two-column CSV of term → translation (a header row is optional)."""
    name = name or path.name
    encoding = detect_encoding(path, name)
    csv.field_size_limit(FIELD_LIMIT)
    delimiter = find_layout(_text_sample(path, encoding), name).delimiter
    try:
        with path.open(encoding=encoding, newline="") as f:
            rows = [r for r in csv.reader(f, delimiter=delimiter) if r]
    except (csv.Error, UnicodeDecodeError) as error:
        raise TableError(key="glossary_not_csv", name=name, error=error) from error
    if max(len(r) for r in rows) < 2:
        raise TableError(key="glossary_two_columns", name=name)
    pairs = [(r[0].strip(), (r[1] if len(r) > 1 else "").strip()) for r in rows if r[0].strip()]
    if pairs and pairs[0][0].lower() in ("term", "source", "术语", "原文"):
        pairs = pairs[1:]  # a header row
    return tuple(pairs)


def _open(path: Path, name: str, sheet: str | None, columns: Sequence[str],
          settings: object = None) -> CsvSource:
    if sheet is not None:
        raise TableError(key="csv_no_sheets", name=name)
    return open_source(path, None, name, columns=columns)


FORMAT = TableFormat("CSV", (".csv",), ("text/csv", "application/csv"), "csv_max_mb",
                     "use_translate_column", _open, lambda path, name: (), lambda name, head: False)
CsvSource.format = FORMAT
