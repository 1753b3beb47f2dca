"""CSV files in and out: the encoding (glm1m.encoding), the delimiter and the header row found,
streaming chunks with every row checked against the header, the column to translate, and an
Excel-safe export. Rows are split by Python's csv module (pandas guessed an index column when a
row was one field longer than the header, and renamed empty and repeated header cells); chunks
are pandas frames. Nothing here imports Chainlit."""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from glm1m.encoding import detect_encoding as find_encoding, encoding_name
from glm1m.errors import CsvError

CHUNK_ROWS = 5_000
# Excel and LibreOffice run a cell starting with one of these as a formula: OWASP's CSV-injection
# list (=, +, -, @, TAB, CR), and NUL from OWASP ASVS 5.0 (requirement 1.2.10).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\0")
NUMBER = re.compile(r"[+-]?(\d{1,3}(,\d{3})+(\.\d*)?|\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?%?")
# A date or a time as spreadsheets write them (2024-01-05, 2024/1/5 9:30, 2024年1月5日, 05.01.2024,
# 9:30:00): like a number, nothing to translate, so such a column is not offered.
DATE = re.compile(r"(\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})"
                  r"([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?|\d{1,2}:\d{2}(:\d{2})?")
SAVE_AS_UTF8 = "Save it again as 'CSV UTF-8' from your spreadsheet."
DELIMITERS = ",;\t|"
DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "'|'"}
LAYOUT_CHARS = 1 << 16  # read to find the delimiter and the header
TITLE_ROWS = 20  # rows above the header that may be a title or comments
# Python's csv refuses a field over 128 KB by default; a cell of 300,000 Chinese characters is
# real (a whole contract in one cell), and the upload limit (GLM1M_CSV_MAX_MB) bounds it anyway.
FIELD_LIMIT = 1 << 30


@dataclass(frozen=True)
class CsvSource:
    path: Path
    encoding: str
    columns: tuple[str, ...]
    column: str  # the one to translate (the first, when several are)
    name: str = ""  # as the user knows the file (an upload is stored under another name)
    targets: tuple[str, ...] = ()  # every column to translate, when more than `column`
    delimiter: str = ","
    header_row: int = 1  # the rows above it (a title, comments) are not read

    @property
    def positions(self) -> list[int]:
        """Where the chosen columns are in each row (a name may repeat; the first is meant)."""
        return [self.columns.index(c) for c in self.chosen]

    @property
    def layout_words(self) -> str:
        """The delimiter and the header's row, when they are not a comma and the first row."""
        words = [] if self.delimiter == "," else [f"{DELIMITER_NAMES[self.delimiter]}-separated"]
        if self.header_row > 1:
            above = self.header_row - 1
            words.append(f"the header is row {self.header_row}; the {above} row"
                         f"{'s' if above > 1 else ''} above it (a title, comments) left out")
        return f" ({'; '.join(words)})" if words else ""

    @property
    def chosen(self) -> tuple[str, ...]:
        return self.targets if self.targets and self.targets[0] == self.column else (self.column,)

    @property
    def shown_name(self) -> str:
        return self.name or self.path.name

    @property
    def encoding_name(self) -> str:
        return encoding_name(self.encoding)


def detect_encoding(path: Path, name: str | None = None) -> str:
    """UTF-8 (with or without a BOM), UTF-16 or UTF-32 (with a BOM or without), else what
    charset-normalizer finds (GB18030 for GBK files, Windows-1252 for Western ones, ...): see
    glm1m.encoding. The whole file is decoded with the result, so a bad byte deep in it, or a
    last character cut short, gets the sentence."""
    return find_encoding(path, name or path.name, CsvError, SAVE_AS_UTF8)


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
        raise CsvError(f"{name} has no header row and no data.")
    return Layout(delimiter, first[0], tuple(first[1]))


def _rows(path: Path, encoding: str, layout: Layout, name: str) -> Iterator[list[str]]:
    """The data rows below the header, each with as many cells as the header: a shorter row
    ends in empty cells (as spreadsheets read it), a longer one may only have empty cells past
    the header's (Excel writes those); any other is refused naming its row."""
    width = len(layout.header)
    csv.field_size_limit(FIELD_LIMIT)
    with path.open(encoding=encoding, newline="") as f:
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
                    raise CsvError(
                        f"{name} row {number} has {len(fields)} fields but its header (row "
                        f"{layout.header_row}) has {width}: fix that row (a cell holding a "
                        f"{DELIMITER_NAMES[layout.delimiter]} needs quotes around it) or save the "
                        f"file again from your spreadsheet.")
                yield fields[:width] + [""] * (width - len(fields))
        except csv.Error as error:
            raise CsvError(f"{name} row {number + 1} cannot be read as CSV ({error}); fix that row "
                           f"or save the file again from your spreadsheet.") from error


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
        raise CsvError(f"{source.shown_name} no longer reads as {source.encoding_name}: it was "
                       f"changed while being translated. Run the translation again.") from error


def open_source(path: Path, column: str | None = None, name: str | None = None,
                columns: Sequence[str] = ()) -> CsvSource:
    """Check the file and choose the column: the named one (or `columns`, several), else the
    first text column. `name` is the file's name in messages (default: the path's). Every row
    is read once here, so a row that does not fit the header is refused before any is sent."""
    name = name or path.name
    if not path.exists() or path.stat().st_size == 0:
        raise CsvError(f"{name} is empty: there is nothing to translate.")
    encoding = detect_encoding(path, name)
    layout = find_layout(_text_sample(path, encoding), name)
    rows = _rows(path, encoding, layout, name)
    first = next(_frames(itertools.islice(rows, CHUNK_ROWS), layout.header), None)
    for _ in rows:  # the rest, for their field counts
        pass
    if first is None:
        raise CsvError(f"{name} has a header but no rows: there is nothing to translate.")
    header = layout.header
    wanted = tuple(dict.fromkeys(columns or ([column] if column is not None else [])))
    for each in wanted:
        if each not in header:
            raise CsvError(f"{name} has no column named {each!r}; its columns are "
                           f"{', '.join(header)}.")
    chosen = wanted[0] if wanted else first_text_column(first)
    return CsvSource(path, encoding, header, chosen, name, wanted if len(wanted) > 1 else (),
                     layout.delimiter, layout.header_row)


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


def neutralise(cell: str) -> str:
    """Prefix a quote to cells a spreadsheet would run as a formula; plain numbers stay numbers."""
    if cell.startswith(FORMULA_START) and not NUMBER.fullmatch(cell.strip()):
        return "'" + cell
    return cell


def write_chunk(frame: pd.DataFrame, out: Path, first: bool) -> None:
    r"""Append a chunk; the first one writes the header and a UTF-8 BOM so Excel shows Chinese.
    Header and cells are neutralised. Every field is quoted: QUOTE_MINIMAL quotes only fields
    with the line terminator ("\n"), a comma or a quote, so a cell's bare "\r" (a line break to
    Excel, LibreOffice and Python's csv) split its row in two, and readers that also break lines
    at \x0b, \x0c, \x1c-\x1e, \x85, U+2028 or U+2029 (like str.splitlines) could do the same."""
    safe = frame.map(lambda v: neutralise(v) if isinstance(v, str) else v)
    safe.columns = [neutralise(str(c)) for c in frame.columns]
    safe.to_csv(out, mode="w" if first else "a", header=first, index=False,
                encoding="utf-8-sig" if first else "utf-8", quoting=csv.QUOTE_ALL)


def is_finished_output(path: Path) -> bool:
    """Whether `path` is an output of this module with rows, every one of them translated."""
    rows = 0
    try:
        for chunk in pd.read_csv(path, encoding="utf-8-sig", dtype=str, keep_default_na=False,
                                 usecols=["translation_error"], chunksize=CHUNK_ROWS):
            if (chunk["translation_error"] != "").any():
                return False
            rows += len(chunk)
    except (OSError, ValueError):  # missing, not a CSV, no such column, not UTF-8
        return False
    return rows > 0


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
        raise CsvError(f"The glossary {name} is not a two-column CSV ({error}).") from error
    if max(len(r) for r in rows) < 2:
        raise CsvError(f"The glossary {name} needs two columns: term, translation.")
    pairs = [(r[0].strip(), (r[1] if len(r) > 1 else "").strip()) for r in rows if r[0].strip()]
    if pairs and pairs[0][0].lower() in ("term", "source", "术语", "原文"):
        pairs = pairs[1:]  # a header row
    return tuple(pairs)


def translation_columns(existing: Sequence[str], chosen: Sequence[str], language: str) -> list[str]:
    """"<column> (<language>)" for each chosen column, numbered where a name is already taken."""
    taken, headers = set(existing), []
    for column in chosen:
        header, n = f"{column} ({language})", 2
        while header in taken:
            header, n = f"{column} ({language}) {n}", n + 1
        taken.add(header)
        headers.append(header)
    return headers
